#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hardening checks, all CPU-only:
#   asan  the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++)
#   tsan  the whole test suite built with ThreadSanitizer (g++), test_concurrency among it
#   fuzz  every libFuzzer target (clang, tests/fuzz) for CATTN_FUZZ_SECONDS each, starting from
#         its seed set (tests/fuzz/seeds/<target>.hex, unpacked into <prefix>-fuzz/seeds/<target>)
#         and its campaign corpus, <prefix>-fuzz/corpus/<target>, where its new inputs go
#   fuzz-long
#         a campaign: every target for CATTN_FUZZ_SECONDS (default 600) with CATTN_FUZZ_WORKERS
#         processes (libFuzzer -jobs/-workers; default: the number of cores; a crash ends its
#         process and is kept in <prefix>-fuzz/fuzz-artifacts/<target>/), from the same seed set
#         and campaign corpus; the workers write into a scratch folder,
#         <prefix>-fuzz/fuzz-long/<target>, whose inputs that add coverage are then merged
#         (-merge=1) into the campaign corpus. Ends with a table: target, executions (summed over
#         the workers), crashes, timeouts, out-of-memory runs, units added to the campaign
#         corpus. (CATTN_FUZZ_LONG=1 makes `fuzz` this mode.)
#   seeds re-minimizes the seed sets: for every target, the inputs of its seed file and of its
#         campaign corpus are reduced to a few that cover the same edges (libFuzzer
#         -set_cover_merge=1, then scripts/lib/fuzz_edge_cover.py) and written back to
#         tests/fuzz/seeds/<target>.hex, with a table of inputs and coverage (cov, ft) before
#         and after. The only step that writes into the source tree; never run by default.
#
#   scripts/test_hardening.sh [asan] [tsan] [fuzz | fuzz-long] [seeds]   (default: asan tsan fuzz)
#
# Campaign corpora stay out of the repository: <prefix>-fuzz/corpus/<target> persists across
# runs with the same prefix (delete it to start again from the seeds alone), and nothing of it
# reaches the tree but through the `seeds` step. To regrow the seed sets from a campaign and
# commit them (docs/fuzzing.md):
#   scripts/test_hardening.sh fuzz-long seeds      # or `seeds` alone, after earlier campaigns
#   git add tests/fuzz/seeds && git commit -m "fuzz: seeds regrown from ..." -- tests/fuzz/seeds
#
# Environment: CATTN_FUZZ_SECONDS (default 15 per target; fuzz-long: 600), CATTN_FUZZ_WORKERS
# (fuzz-long only; default: nproc), CATTN_FUZZ_TARGETS (default: every tests/fuzz/fuzz_*.cpp;
# e.g. "fuzz_concurrent_mutation fuzz_extend_all_queries_by_n"), CATTN_JOBS (default 2),
# CATTN_HARDENING_BUILD_PREFIX (default build-hardening: folders <prefix>-asan, -tsan, -fuzz),
# CATTN_TSAN_FILTER (a gtest filter for the TSan run; default: every test); fuzz-long only:
# CATTN_FUZZ_RUNS (stop a target once its workers have run this many inputs, e.g. 10000000;
# CATTN_FUZZ_SECONDS still caps it), CATTN_FUZZ_BUDGET (seconds for the whole campaign, merges
# included: each target gets an equal share of what is left when it starts, so a target that
# reaches CATTN_FUZZ_RUNS early leaves its time to the later ones); fuzz-long and seeds:
# CATTN_FUZZ_PREBUILT (a folder holding the fuzz_* binaries built elsewhere, e.g. here for the
# GPU machine, which has no clang: no build then).
# Sanitizers stop at the first report (halt_on_error, -fno-sanitize-recover=undefined); no
# suppression file is needed. Exits non-zero when any step fails or any fuzz target crashes.
# A crash of fuzz_concurrent_mutation, or of a race-mode input of fuzz_step_inputs or
# fuzz_spec_decode (first byte 0x6d), depends on timing: rerun its reproducer many times
# (<target> -runs=1000 <crash file>).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/fuzz_seeds.sh
steps=${*:-asan tsan fuzz}
if [ "${CATTN_FUZZ_LONG:-0}" = 1 ] && [[ " $steps " == *" fuzz "* ]]; then
  steps=${steps/fuzz/fuzz-long}
fi
jobs=${CATTN_JOBS:-2}
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
  grep -E "^\[ (concurrency|refused_untouched) \]" "$out"
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

# The fuzz targets: tests/fuzz/fuzz_*.cpp, or the ones CATTN_FUZZ_TARGETS names.
fuzz_targets() {
  if [ -n "${CATTN_FUZZ_TARGETS:-}" ]; then
    echo "$CATTN_FUZZ_TARGETS"
  else
    for src in tests/fuzz/fuzz_*.cpp; do basename "$src" .cpp; done
  fi
}
fuzz_build() {
  configure_build "$1" cattn_fuzzers -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCATTN_BUILD_FUZZERS=ON
}
# unpack_seeds <fuzz build folder> <target>: unpacks the target's seed file into
# <folder>/seeds/<target> (emptied first) and creates its campaign corpus <folder>/corpus/<target>.
unpack_seeds() {
  mkdir -p "$1/corpus/$2" &&
    fuzz_seeds_unpack "tests/fuzz/seeds/$2.hex" "$1/seeds/$2"
}
# coverage <fuzz binary> <folder>...: "cov ft" after libFuzzer has run every input of the
# folders once (-runs=0).
coverage() {
  local bin=$1
  shift
  "$bin" -runs=0 -timeout=10 -rss_limit_mb=2048 "$@" 2>&1 |
    sed -nE 's/.*(INITED|DONE) +cov: ([0-9]+) ft: ([0-9]+).*/\2 \3/p' | tail -1
}

if has fuzz; then
  seconds=${CATTN_FUZZ_SECONDS:-15}
  log "libFuzzer targets (clang, ASan + UBSan, CPU-only), ${seconds}s each"
  dir="$prefix-fuzz"
  if fuzz_build "$dir"; then
    total=0
    crashed=0
    count=0
    echo "  seeds: tests/fuzz/seeds/<target>.hex, unpacked into $dir/seeds/<target>;" \
      "new inputs: $dir/corpus/<target>"
    for name in $(fuzz_targets); do
      count=$((count + 1))
      bin="$dir/tests/fuzz/$name"
      seeds="$dir/seeds/$name"
      corpus="$dir/corpus/$name"
      log_file="$dir/fuzz-work/$name.log"
      artifacts="$dir/fuzz-artifacts/$name"
      mkdir -p "$dir/fuzz-work" "$artifacts"
      unpack_seeds "$dir" "$name" || { status=1; crashed=$((crashed + 1)); continue; }
      # New units go to the campaign corpus (first); the seeds are only read.
      "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$corpus" "$seeds" > "$log_file" 2>&1
      rc=$?
      execs=$(grep -oE "stat::number_of_executed_units: [0-9]+" "$log_file" | grep -oE "[0-9]+$" | tail -1)
      execs=${execs:-0}
      total=$((total + execs))
      if [ $rc = 0 ]; then
        printf "  %-62s %10s execs, 0 crashes\n" "$name" "$execs"
      else
        crashed=$((crashed + 1))
        printf "  %-62s %10s execs, CRASHED (exit %s)\n" "$name" "$execs" "$rc"
        grep -E -m12 "check failed|ERROR: |runtime error|SUMMARY|Test unit written" "$log_file" | sed 's/^/    /'
        status=1
      fi
    done
    summary+=("fuzz: $count targets x ${seconds}s, $total execs, $crashed crashed")
  else
    summary+=("fuzz: BUILD FAILED"); status=1
  fi
fi

if has fuzz-long; then
  # The campaign runs with ASan's default detect_stack_use_after_return=0: its fake stacks cost
  # 5x in executions per second (fuzz_max_local_attention_virtual_batches: 23k against 110k).
  # The ASan suite and the short fuzz pass keep it on; everything else stays as above.
  ASAN_OPTIONS=${ASAN_OPTIONS/detect_stack_use_after_return=1/detect_stack_use_after_return=0}
  seconds=${CATTN_FUZZ_SECONDS:-600}
  workers=${CATTN_FUZZ_WORKERS:-$(nproc)}
  runs=${CATTN_FUZZ_RUNS:-}
  per="${seconds}s"
  [ -n "${CATTN_FUZZ_BUDGET:-}" ] && per="a share of ${CATTN_FUZZ_BUDGET}s"
  log "libFuzzer campaign (clang, ASan + UBSan, CPU-only), $per x $workers workers" \
    "per target${runs:+, or until $runs executions}"
  dir="$prefix-fuzz"
  bins="$dir/tests/fuzz"
  [ -n "${CATTN_FUZZ_PREBUILT:-}" ] && bins=$CATTN_FUZZ_PREBUILT
  if [ -n "${CATTN_FUZZ_PREBUILT:-}" ] || fuzz_build "$dir"; then
    total=0
    total_crashes=0
    crashed=0
    count=0
    rows=()
    campaign_start=$SECONDS
    targets=($(fuzz_targets))
    for name in "${targets[@]}"; do
      count=$((count + 1))
      if [ -n "${CATTN_FUZZ_BUDGET:-}" ]; then
        left=$((CATTN_FUZZ_BUDGET - (SECONDS - campaign_start)))
        seconds=$((left / (${#targets[@]} - count + 1)))
        [ "$seconds" -ge 1 ] || seconds=1
      fi
      bin="$bins/$name"
      seeds="$dir/seeds/$name"
      corpus="$dir/corpus/$name"
      work="$dir/fuzz-long/$name"
      artifacts="$dir/fuzz-artifacts/$name"
      log_file="$dir/fuzz-long/$name.log"
      rm -rf "$work"
      mkdir -p "$work" "$artifacts"
      unpack_seeds "$dir" "$name" || { status=1; crashed=$((crashed + 1)); continue; }
      echo "  $name: fuzzing for up to ${seconds}s (log: $log_file)"
      target_start=$SECONDS
      # -jobs=N -workers=N runs N independent fuzzing processes for the whole share (each
      # -fork job restarts a process and replays part of the corpus, which cost most of the
      # time of short runs). They share the scratch folder (first), each picking up what the
      # others add, and read the campaign corpus and the seeds; each writes fuzz-<job>.log in
      # the folder it starts in and ends with -print_final_stats'
      # "stat::number_of_executed_units". A crash, timeout or OOM ends
      # its process, leaving its input in the artifacts folder: those files are the counts.
      per_job=
      [ -n "$runs" ] && per_job=$(((runs + workers - 1) / workers))
      jobs_dir="$work.jobs"
      rm -rf "$jobs_dir"
      mkdir -p "$jobs_dir"
      artifacts_before=$(find "$artifacts" -type f | sort)
      bin_abs=$(realpath -m "$bin") artifacts_abs=$(realpath -m "$artifacts") work_abs=$(realpath -m "$work")
      corpus_abs=$(realpath -m "$corpus") seeds_abs=$(realpath -m "$seeds")
      (cd "$jobs_dir" && "$bin_abs" -jobs="$workers" -workers="$workers" \
        -max_total_time="$seconds" ${per_job:+-runs=$per_job} -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts_abs/" "$work_abs" "$corpus_abs" \
        "$seeds_abs") > "$log_file" 2>&1
      rc=$?
      # One "stat::number_of_executed_units: N" per worker that finished.
      units=$(cat "$jobs_dir"/fuzz-*.log 2>/dev/null | grep -oE "stat::number_of_executed_units: [0-9]+")
      execs=$(echo "$units" | awk '{s += $2} END {print s + 0}')
      finished=$(echo "$units" | grep -c . || true)
      new_artifacts=$(comm -13 <(echo "$artifacts_before") <(find "$artifacts" -type f | sort))
      count_kind() { echo "$new_artifacts" | grep -c "/$1-" || true; }
      crashes=$(( $(count_kind crash) + $(count_kind leak) ))
      timeouts=$(count_kind timeout)
      ooms=$(count_kind oom)
      # A worker that stopped with no input kept (or a parent that failed) is counted as a crash.
      if [ "$crashes$timeouts$ooms" = 000 ] && { [ $rc != 0 ] || [ "$finished" -lt "$workers" ]; }; then
        crashes=1
      fi
      # New coverage from the scratch folder into the campaign corpus (never into the tree).
      before=$(find "$corpus" -type f | wc -l)
      "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 "$corpus" "$work" > "$work.merge.log" 2>&1 ||
        echo "    (merge failed: $work.merge.log)"
      added=$(( $(find "$corpus" -type f | wc -l) - before ))
      total=$((total + execs))
      total_crashes=$((total_crashes + crashes))
      if [ "$crashes" != 0 ]; then
        crashed=$((crashed + 1))
        status=1
        # What the (up to 20) newest reproducers fail on, grouped.
        # (A harness check names the library's message on its "last error" line.)
        for f in $(ls -t "$artifacts" 2>/dev/null | grep -E "^(crash|leak)-" | head -20); do
          "$bin" -timeout=10 "$artifacts/$f" 2>&1 |
            grep -E "check failed|runtime error|ERROR: (Address|Leak|Undefined)|last error" |
            sed -E 's/^==[0-9]+==//; s/^ +//; s/0x[0-9a-f]+/0x.../g; s/\(got .*//' | head -3 | tr '\n' ' '
          echo
        done | sort | uniq -c | sort -rn | head -6 | cut -c1-300 | sed 's/^/    /'
        echo "    reproducers: $artifacts/"
      fi
      rows+=("$(printf "%-56s %14s %8s %8s %6s %6s %6s" "$name" "$execs" "$crashes" "$timeouts" "$ooms" "$added" "$((SECONDS - target_start))")")
    done
    echo
    printf "  %-56s %14s %8s %8s %6s %6s %6s\n" target execs crashes timeouts ooms added seconds
    for row in "${rows[@]}"; do echo "  $row"; done
    summary+=("fuzz-long: $count targets x $per x $workers workers${runs:+ (or $runs execs)}, $total execs, $total_crashes crashes in $crashed targets")
  else
    summary+=("fuzz-long: BUILD FAILED"); status=1
  fi
fi

if has seeds; then
  # Each target's seed file and campaign corpus, reduced to the inputs that keep every edge.
  # -set_cover_merge=1 gives each input's full feature list in the control file (plain -merge=1
  # lists only the features new at that input), from which fuzz_edge_cover.py picks a greedy
  # edge cover. The coverage columns are libFuzzer's cov: (edges) and ft: (features) after
  # -runs=0 over the folders: all the inputs before, the new seed set after. cov: should not
  # drop (fuzz_concurrent_mutation's, and the race modes' of fuzz_step_inputs and
  # fuzz_spec_decode, vary from run to run with their threads' timing).
  log "seed sets: tests/fuzz/seeds/<target>.hex re-minimized from the seeds and $prefix-fuzz/corpus/<target>"
  dir="$prefix-fuzz"
  bins="$dir/tests/fuzz"
  [ -n "${CATTN_FUZZ_PREBUILT:-}" ] && bins=$CATTN_FUZZ_PREBUILT
  if ! command -v python3 >/dev/null; then
    echo "  python3 not found (scripts/install_deps.sh installs it)"
    summary+=("seeds: FAILED (no python3)"); status=1
  elif [ -n "${CATTN_FUZZ_PREBUILT:-}" ] || fuzz_build "$dir"; then
    rows=()
    count=0
    failed=0
    inputs_before=0
    inputs_after=0
    for name in $(fuzz_targets); do
      count=$((count + 1))
      bin="$bins/$name"
      file="tests/fuzz/seeds/$name.hex"
      seeds="$dir/seeds/$name"
      corpus="$dir/corpus/$name"
      work="$dir/reseed/$name"
      rm -rf "$work"
      mkdir -p "$work/merged"
      if ! unpack_seeds "$dir" "$name"; then
        failed=$((failed + 1)); continue
      fi
      n_seeds=$(find "$seeds" -type f | wc -l)
      n_corpus=$(find "$corpus" -type f | wc -l)
      read -r cov_before ft_before < <(coverage "$bin" "$seeds" "$corpus")
      if ! "$bin" -set_cover_merge=1 -merge_control_file="$work/control" -timeout=10 \
             -rss_limit_mb=2048 "$work/merged" "$seeds" "$corpus" > "$work/merge.log" 2>&1 ||
         ! python3 scripts/lib/fuzz_edge_cover.py "$work/control" "$work/merge.log" \
             > "$work/chosen" 2> "$work/cover.log"; then
        echo "  $name: the merge or the cover failed ($work/merge.log, $work/cover.log)"
        failed=$((failed + 1)); continue
      fi
      fuzz_seeds_pack "$name" "$file" < "$work/chosen" || { failed=$((failed + 1)); continue; }
      fuzz_seeds_unpack "$file" "$work/seeds"
      read -r cov_after ft_after < <(coverage "$bin" "$work/seeds")
      kept=$(fuzz_seeds_count "$file")
      inputs_before=$((inputs_before + n_seeds + n_corpus))
      inputs_after=$((inputs_after + kept))
      [ "${cov_after:-0}" -ge "${cov_before:-0}" ] ||
        echo "  $name: cov fell from $cov_before to $cov_after"
      rows+=("$(printf "%-56s %6s %7s %6s %6s %6s %6s %6s" "$name" "$n_seeds" "$n_corpus" "$kept" \
        "$cov_before" "$cov_after" "$ft_before" "$ft_after")")
    done
    echo
    printf "  %-56s %6s %7s %6s %6s %6s %6s %6s\n" target seeds corpus kept cov cov ft ft
    printf "  %-56s %6s %7s %6s %6s %6s %6s %6s\n" "" "" "" "" before after before after
    for row in "${rows[@]}"; do echo "  $row"; done
    echo "  (git diff --stat tests/fuzz/seeds shows what changed; commit it to keep it)"
    [ "$failed" = 0 ] || status=1
    line="seeds: $count targets, $inputs_before inputs (seeds + campaign corpora)"
    summary+=("$line -> $inputs_after in tests/fuzz/seeds, $failed failed")
  else
    summary+=("seeds: BUILD FAILED"); status=1
  fi
fi

log "summary ($((SECONDS - start))s)"
for line in "${summary[@]}"; do echo "  $line"; done
[ $status = 0 ] && echo "hardening: OK" || echo "hardening: FAILED"
exit $status
