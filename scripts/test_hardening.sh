#!/usr/bin/env bash
# Hardening checks, all CPU-only:
#   asan  the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++)
#   tsan  the whole test suite built with ThreadSanitizer (g++), test_concurrency among it
#   fuzz  every libFuzzer target (clang, tests/fuzz) for CATTN_FUZZ_SECONDS each, starting from
#         its committed corpus (tests/fuzz/corpus/<target>); new inputs go to the build folder
#
#   scripts/test_hardening.sh [asan] [tsan] [fuzz]      (default: all three)
#
# Environment: CATTN_FUZZ_SECONDS (default 15, per target), CATTN_JOBS (default 2),
# CATTN_HARDENING_BUILD_PREFIX (default build-hardening: folders <prefix>-asan, -tsan, -fuzz),
# CATTN_TSAN_FILTER (a gtest filter for the TSan run; default: every test).
# Sanitizers stop at the first report (halt_on_error, -fno-sanitize-recover=undefined); no
# suppression file is needed. Exits non-zero when any step fails or any fuzz target crashes.
set -uo pipefail
cd "$(dirname "$0")/.."
steps=${*:-asan tsan fuzz}
jobs=${CATTN_JOBS:-2}
seconds=${CATTN_FUZZ_SECONDS:-15}
prefix=${CATTN_HARDENING_BUILD_PREFIX:-build-hardening}
has() { [[ " $steps " == *" $1 "* ]]; }
log() { echo; echo "=== $*"; }
status=0
summary=()
start=$SECONDS

# Settings shared by every sanitized run. detect_stack_use_after_return and
# check_initialization_order widen what ASan looks for; abort_on_error makes a report fail the
# process even where a test harness would catch the exit.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
common=(-DCATTN_WITH_CUDA=OFF -DCATTN_BUILD_BENCH=OFF -DCATTN_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Debug)

# configure_build <dir> <target> <cmake args...>: configures (quietly) and builds one target.
configure_build() {
  local dir=$1 target=$2
  shift 2
  mkdir -p "$dir"
  cmake -S . -B "$dir" "${common[@]}" "$@" > "$dir/configure.log" 2>&1 ||
    { tail -20 "$dir/configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs" --target "$target" > "$dir/build.log" 2>&1 ||
    { grep -E "error|Error" -A3 "$dir/build.log" | head -40; return 1; }
}

# run_suite <name> <binary> [gtest args...]: runs the suite, then the without-NCCL subset the
# way CTest does, and records a one-line result.
run_suite() {
  local name=$1 bin=$2
  shift 2
  local out="$bin.$name.log"
  "$bin" "$@" > "$out" 2>&1
  local rc=$?
  CATTN_NCCL_LIBRARY=libcattn-test-no-such-nccl.so.2 "$bin" \
    --gtest_filter='pcp_kv_allgather_and_restore_no_nccl.*' > "$out.no_nccl" 2>&1 || rc=$?
  grep -E "^\[ (concurrency|nothing_lost) \]" "$out"
  local ran passed skipped
  ran=$(grep -oE "^\[==========\] [0-9]+ tests? from" "$out" | grep -oE "[0-9]+" | tail -1)
  passed=$(grep -oE "^\[  PASSED  \] [0-9]+" "$out" | grep -oE "[0-9]+$" | tail -1)
  skipped=$(grep -oE "^\[  SKIPPED \] [0-9]+ tests?," "$out" | grep -oE "[0-9]+" | tail -1)
  if [ $rc != 0 ]; then
    grep -E -m30 "ERROR: |WARNING: ThreadSanitizer|runtime error|Failure|FAILED" "$out" "$out.no_nccl"
    echo "($name: exit $rc; logs in $out and $out.no_nccl)"
    summary+=("$name: FAILED (exit $rc)")
    status=1
  else
    echo "$name: ${ran:-?} tests ran, ${passed:-?} passed, ${skipped:-0} skipped (GPU), no sanitizer report"
    summary+=("$name: passed (${ran:-?} tests ran, ${passed:-?} passed, ${skipped:-0} skipped; 0 sanitizer reports)")
  fi
}

if has asan; then
  log "ASan + UBSan test suite (g++, CPU-only)"
  san="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
  if configure_build "$prefix-asan" cattn_tests -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
       -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san"; then
    run_suite asan+ubsan "$prefix-asan/tests/cattn_tests"
  else
    summary+=("asan+ubsan: BUILD FAILED"); status=1
  fi
fi

if has tsan; then
  log "TSan test suite (g++, CPU-only)"
  san="-O1 -g -fno-omit-frame-pointer -fsanitize=thread"
  if configure_build "$prefix-tsan" cattn_tests -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
       -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san"; then
    run_suite tsan "$prefix-tsan/tests/cattn_tests" --gtest_filter="${CATTN_TSAN_FILTER:-*}"
  else
    summary+=("tsan: BUILD FAILED"); status=1
  fi
fi

if has fuzz; then
  log "libFuzzer targets (clang, ASan + UBSan, CPU-only), ${seconds}s each"
  dir="$prefix-fuzz"
  if configure_build "$dir" cattn_fuzzers -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
       -DCATTN_BUILD_FUZZERS=ON; then
    total=0
    crashed=0
    for src in tests/fuzz/fuzz_*.cpp; do
      name=$(basename "$src" .cpp)
      bin="$dir/tests/fuzz/$name"
      corpus="tests/fuzz/corpus/$name"
      work="$dir/fuzz-work/$name"
      artifacts="$dir/fuzz-artifacts/$name"
      rm -rf "$work"
      mkdir -p "$work" "$artifacts" "$corpus"
      # New units go to the scratch folder (first); the committed corpus is only read.
      "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$work" "$corpus" > "$work.log" 2>&1
      rc=$?
      execs=$(grep -oE "stat::number_of_executed_units: [0-9]+" "$work.log" | grep -oE "[0-9]+$" | tail -1)
      execs=${execs:-0}
      total=$((total + execs))
      if [ $rc = 0 ]; then
        printf "  %-62s %10s execs, 0 crashes\n" "$name" "$execs"
      else
        crashed=$((crashed + 1))
        printf "  %-62s %10s execs, CRASHED (exit %s)\n" "$name" "$execs" "$rc"
        grep -E -m12 "check failed|ERROR: |runtime error|SUMMARY|Test unit written" "$work.log" | sed 's/^/    /'
        status=1
      fi
    done
    summary+=("fuzz: $(ls tests/fuzz/fuzz_*.cpp | wc -l) targets x ${seconds}s, $total execs, $crashed crashed")
  else
    summary+=("fuzz: BUILD FAILED"); status=1
  fi
fi

log "summary ($((SECONDS - start))s)"
for line in "${summary[@]}"; do echo "  $line"; done
[ $status = 0 ] && echo "hardening: OK" || echo "hardening: FAILED"
exit $status
