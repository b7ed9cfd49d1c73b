#!/usr/bin/env bash
# Builds and times each configuration of the fused select kernel (GPU machine).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p build-tune
configs=${TUNE_CONFIGS:-"4,4,0,1 4,4,1,1 4,2,1,1 4,3,0,1 4,3,1,1"}
for cfg in $configs; do
  IFS=, read -r u m s i <<<"$cfg"
  exe=build-tune/tune_u${u}_m${m}_s${s}_i${i}
  nvcc -std=c++17 -O3 -I. -arch=sm_90 -DCATTN_SELECT_UNROLL=$u -DCATTN_SELECT_MIN_BLOCKS=$m \
    -DCATTN_SELECT_STREAMING=$s -DCATTN_SELECT_INTERLEAVE=$i bench/tune_fused_select.cu -o $exe &
done
wait
for cfg in $configs; do
  IFS=, read -r u m s i <<<"$cfg"
  build-tune/tune_u${u}_m${m}_s${s}_i${i} "${COPY_GBPS:-4218}" "${TUNE_CEILING:-0}"
done
