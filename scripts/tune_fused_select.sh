#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and times each configuration of the fused select kernel (GPU machine). A configuration
# is "unroll,min_blocks,streaming,interleave,waves" (the CATTN_SELECT_* knobs of
# kernels/fused_pcp_qkv_select.cuh; the shipped one is 4,4,0,1,64). TUNE_CEILING=1 also prints
# the index-free copy ceilings.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p build-tune
configs=${TUNE_CONFIGS:-"4,4,0,1,64 4,4,0,1,16 4,4,0,1,0"}
exe() { echo "build-tune/tune_${1//,/_}"; }
for cfg in $configs; do
  IFS=, read -r u m s i p <<<"$cfg"
  nvcc -std=c++17 -O3 -I. -arch=sm_90 -DCATTN_SELECT_UNROLL=$u -DCATTN_SELECT_MIN_BLOCKS=$m \
    -DCATTN_SELECT_STREAMING=$s -DCATTN_SELECT_INTERLEAVE=$i -DCATTN_SELECT_WAVES=${p:-64} \
    bench/tune_fused_select.cu -o "$(exe "$cfg")" &
done
wait
for cfg in $configs; do
  "$(exe "$cfg")" "${COPY_GBPS:-4218}" "${TUNE_CEILING:-0}"
done
