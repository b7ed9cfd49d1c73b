#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: builds and runs every test - the C/C++ suites (CUDA build, whose GPU
# tests skip without a GPU, and the CPU-only build), packaging (Debian packages, out-of-tree
# consumers, ABI gate), the Rust and Go bindings, the HTML reference (Doxygen, no warning
# allowed; once for cattn.h, once with cattn.hpp), and the hardening suites (sanitizers,
# fuzzing).
# Installs what it needs first. Every stage runs even when an earlier one fails; the script ends
# with one line per stage (its pass/fail/skip counts) and exits non-zero when any stage failed
# or ran no test. Logs: build-logs/<stage>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh || exit 1
# Toolchains installed per user (rustup) are not on a non-interactive shell's PATH.
export PATH="/usr/local/cuda/bin:$HOME/.cargo/bin:$PATH"
jobs=${CATTN_JOBS:-2}
export CATTN_JOBS=$jobs
# Few architectures keep CI fast; the device script and the release packages build 90 and 80.
archs=${CATTN_CUDA_ARCHITECTURES:-90}
logs=build-logs
mkdir -p "$logs"
start=$SECONDS
rows=()
failed=0

# stage <name> <counter> <command...>: runs the command with its output both shown and logged,
# then asks <counter> (a function reading the log) for "passed failed skipped".
stage() {
  local name=$1 counter=$2 log
  shift 2
  log="$logs/$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '_').log"
  echo
  echo "== $name ($((SECONDS - start)) s)"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local counts
  counts=$($counter "$log")
  read -r pass fail skip <<<"$counts"
  local verdict=ok
  if [ "$rc" != 0 ] || [ "${fail:-0}" != 0 ]; then verdict=FAILED; fi
  if [ "${pass:-0}" = 0 ] && [ "${fail:-0}" = 0 ]; then verdict="FAILED (no test ran)"; fi
  [ "$verdict" = ok ] || failed=1
  rows+=("$(printf '%-40s %7s %7s %7s  %s' "$name" "${pass:-0}" "${fail:-0}" "${skip:-0}" "$verdict")")
}

# Counters: each prints "passed failed skipped" from a stage's log.
ctest_counts() {  # "N% tests passed, F tests failed out of T" and the (Skipped) list
  local total fail skip
  total=$(grep -oE "tests failed out of [0-9]+" "$1" | grep -oE "[0-9]+$" | tail -1)
  fail=$(grep -oE "[0-9]+ tests failed out of" "$1" | grep -oE "^[0-9]+" | tail -1)
  skip=$(grep -cE "^\s*[0-9]+ - .*\(Skipped\)" "$1")
  echo "$(( ${total:-0} - ${fail:-0} - skip )) ${fail:-0} $skip"
}
cargo_counts() {  # the sum of every "test result:" line
  awk '/^test result:/ { for (i = 1; i <= NF; ++i) { if ($(i+1) ~ /^passed/) p += $i;
       if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
       END { print p + 0, f + 0, s + 0 }' "$1"
}
go_counts() {  # "== go test ...: P passed, F failed, S skipped" lines, summed
  sed -nE 's/^== go test.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/p' "$1" |
    awk '{ p += $1; f += $2; s += $3 } END { print p + 0, f + 0, s + 0 }'
}
packaging_counts() {  # "== packaging: N checks passed"
  local n
  n=$(sed -nE 's/^== packaging: ([0-9]+) checks passed.*/\1/p' "$1" | tail -1)
  echo "${n:-0} $([ -n "$n" ] && echo 0 || echo 1) 0"
}
hardening_counts() {  # the suites' "N tests ran, P passed, S skipped" and the fuzz targets
  local p f s targets crashed
  read -r p s < <(sed -nE 's/^  (asan\+ubsan|tsan): passed \(([0-9]+) tests ran, ([0-9]+) passed, ([0-9]+) skipped.*/\3 \4/p' "$1" |
                  awk '{ p += $1; s += $2 } END { print p + 0, s + 0 }')
  f=$(grep -cE "^  (asan\+ubsan|tsan): (FAILED|BUILD FAILED)" "$1")
  targets=$(sed -nE 's/^  fuzz: ([0-9]+) targets.* ([0-9]+) crashed.*/\1/p' "$1")
  crashed=$(sed -nE 's/^  fuzz: ([0-9]+) targets.* ([0-9]+) crashed.*/\2/p' "$1")
  echo "$(( p + ${targets:-0} - ${crashed:-0} )) $(( f + ${crashed:-0} )) $s"
}
docs_counts() {  # scripts/docs.sh: one check, "== docs: passed" or not
  if grep -q "^== docs: passed" "$1"; then echo "1 0 0"; else echo "0 1 0"; fi
}

build_and_ctest() {  # <preset> <extra configure args...>
  local preset=$1
  shift
  cmake --preset "$preset" -DCATTN_BUILD_TESTS=ON -DCATTN_BUILD_BENCH=ON "$@" >/dev/null &&
    cmake --build --preset "$preset" -j "$jobs" &&
    ctest --preset "$preset" -j "$jobs"
}

stage "C/C++, CUDA build (archs $archs)" ctest_counts \
  build_and_ctest default -DCMAKE_CUDA_ARCHITECTURES="$archs"
stage "C/C++, CPU-only build" ctest_counts build_and_ctest cpu
stage "include layers (scripts/check_layers.py)" ctest_counts python3 scripts/check_layers.py
stage "helper order (check_helper_order.py)" ctest_counts python3 scripts/check_helper_order.py
stage "packaging" packaging_counts bash scripts/test_packaging.sh
stage "Rust bindings" cargo_counts env CATTN_LIB_DIR=build-cpu bash scripts/test_rust.sh
stage "Go bindings" go_counts env CATTN_LIB_DIR=build-cpu bash scripts/test_go.sh
stage "docs (Doxygen reference)" docs_counts bash scripts/docs.sh
stage "docs (reference with cattn.hpp)" docs_counts env CATTN_DOCS_HPP=1 bash scripts/docs.sh
stage "hardening: sanitizers and fuzzing" hardening_counts bash scripts/test_hardening.sh

echo
echo "== summary ($((SECONDS - start)) s)"
printf '%-40s %7s %7s %7s  %s\n' "stage" "passed" "failed" "skipped" "result"
for r in "${rows[@]}"; do echo "$r"; done
if [ $failed = 0 ]; then
  echo "== all test stages passed"
else
  echo "== some test stage FAILED (logs in $logs/)"
fi
exit $failed
