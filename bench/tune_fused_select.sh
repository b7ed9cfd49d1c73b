#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times the fused select kernel under tuning policies (GPU machine): builds the target
# tune_fused_select_variants (bench/tune_fused_select.cu with every policy of
# bench/tune_fused_select_policies.cu), then runs it once per policy, each in a process of its
# own, every shape checked byte for byte against the host.
#
#   bench/tune_fused_select.sh [POLICY...]     bench/tune_fused_select.sh --list
#
# Policies: the arguments, else $TUNE_POLICIES, else the lookup grid of issue 17 (serial search
# without and with the next lookup overlapped, the warp search likewise - the shipped policy -
# and two and four turns a warp). --list prints every policy, what it changes and its values.
# A policy is a type (kernels/fused_pcp_qkv_select_tuning.cuh): to time a new value, add a
# struct and a line to bench/tune_fused_select_policies.cu.
#
# TUNE_BUILD_DIR  the build folder (default build-tune, configured here for sm_$TUNE_ARCH, 90 by
#                 default, when it has no CMake cache; any CUDA build folder works)
# TUNE_NO_BUILD=1 run $TUNE_BUILD_DIR/bench/tune_fused_select_variants as it is (built on
#                 another machine and carried here)
# TUNE_FILTER     only the shapes whose name holds this text ("rand": the many-request class)
# TUNE_CEILING=1  also print the index-free copy ceilings
# TUNE_PASSES=2   run the list twice, the second time in reverse order
# COPY_GBPS       the copy bandwidth the "of copy" column divides by (default 4218)
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
B=${TUNE_BUILD_DIR:-build-tune}
exe="$B/bench/tune_fused_select_variants"
if [ "${TUNE_NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$B/CMakeCache.txt" ]; then
    mkdir -p "$B"
    extra=()
    [ -d .deps/include ] && extra+=("-DCATTN_EXTRA_INCLUDE_DIR=$PWD/.deps/include")
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${TUNE_ARCH:-90}" \
      -DCATTN_BUILD_TESTS=OFF -DCATTN_BUILD_EXAMPLES=OFF -DCATTN_BUILD_BENCH=ON "${extra[@]}" \
      > "$B/tune-configure.log" 2>&1 || { tail -20 "$B/tune-configure.log"; exit 1; }
  fi
  cmake --build "$B" --target tune_fused_select_variants -j "$(nproc)" > "$B/tune-build.log" 2>&1 ||
    { grep -E "error" -A3 "$B/tune-build.log" | head -40; exit 1; }
fi
if [ ! -x "$exe" ]; then echo "$exe: not built"; exit 1; fi
if [ "${1:-}" = --list ]; then exec "$exe" --list; fi
policies=${*:-${TUNE_POLICIES:-"serial_search serial_search_prefetch no_prefetch shipped rows2 rows4"}}
order=$policies
if [ "${TUNE_PASSES:-1}" = 2 ]; then
  order="$policies $(echo "$policies" | tr ' ' '\n' | tac | tr '\n' ' ')"
fi
args=(--copy-gbps "${COPY_GBPS:-4218}")
[ -n "${TUNE_FILTER:-}" ] && args+=(--filter "$TUNE_FILTER")
ceiling=()
[ "${TUNE_CEILING:-0}" = 1 ] && ceiling=(--ceiling)  # once, before the first policy
status=0
for p in $order; do
  "$exe" --policy "$p" "${args[@]}" "${ceiling[@]}" || status=1
  ceiling=()
done
exit $status
