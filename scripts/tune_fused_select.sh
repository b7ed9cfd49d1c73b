#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and times each configuration of the fused select kernel (GPU machine), all in one run.
# A configuration is "unroll,min_blocks,streaming,interleave,waves[,search,prefetch,rows,narrow,
# joint,chunk,pdl]" (the CATTN_SELECT_* knobs of kernels/fused_pcp_qkv_select.cuh; the shipped
# one is 4,4,0,1,64,1,1,1,1,1,1,1; missing trailing fields take the shipped values). The default
# grid sets the request lookups of issue 17 against each other: serial binary search without and
# with the next row's lookup overlapped, the warp search likewise (the shipped one), and two or
# four rows per warp turn. TUNE_CEILING=1 also prints the index-free copy ceilings; TUNE_FILTER=TEXT
# times only the shapes whose name holds TEXT ("rand": the many-request class).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p build-tune
configs=${TUNE_CONFIGS:-"4,4,0,1,64,0,0,1 4,4,0,1,64,0,1,1 4,4,0,1,64,1,0,1 4,4,0,1,64,1,1,1 4,4,0,1,64,1,1,2 4,4,0,1,64,1,1,4"}
exe() { echo "build-tune/tune_${1//,/_}"; }
status=0
for cfg in $configs; do
  IFS=, read -r u m s i p se pf ro na jo ch pd <<<"$cfg"
  rm -f "$(exe "$cfg")"
  nvcc -std=c++17 -O3 -I. -arch=sm_90 --expt-relaxed-constexpr -DCATTN_SELECT_UNROLL=$u \
    -DCATTN_SELECT_MIN_BLOCKS=$m -DCATTN_SELECT_STREAMING=$s -DCATTN_SELECT_INTERLEAVE=$i \
    -DCATTN_SELECT_WAVES=${p:-64} -DCATTN_SELECT_SEARCH=${se:-1} -DCATTN_SELECT_PREFETCH=${pf:-1} \
    -DCATTN_SELECT_ROWS=${ro:-1} -DCATTN_SELECT_NARROW=${na:-1} \
    -DCATTN_SELECT_JOINT=${jo:-1} -DCATTN_SELECT_CHUNK=${ch:-1} -DCATTN_SELECT_PDL=${pd:-1} \
    bench/tune_fused_select.cu -o "$(exe "$cfg")" &
done
wait
for cfg in $configs; do
  if [ ! -x "$(exe "$cfg")" ]; then echo "config $cfg: build failed"; status=1; continue; fi
  "$(exe "$cfg")" "${COPY_GBPS:-4218}" "${TUNE_CEILING:-0}" ${TUNE_FILTER:+"$TUNE_FILTER"} || status=1
done
exit $status
