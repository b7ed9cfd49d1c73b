#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One call on the GPU machine: build (sm_90 + sm_80), run every test, run the GPU tests under
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck), then the GPU benchmarks.
# Logs go to $OUT (or ./device-out).
#   scripts/device_check.sh [build|test|sanitize|bench|side|step|inputs|spec|transcript|nccl|
#                            profile]...
#   (default: all but profile; `demo` is the old name of `transcript`)
# Expects .deps/include (dlpack/dlpack.h, nlohmann/json.hpp) carried with the call, and the seed
# oracle for the side-by-side runs in $CATTN_ORACLE_DIR (default: .oracle/, carried), and for
# `inputs` and `spec` the step-inputs oracle in $CATTN_ORACLE_STEP_INPUTS_DIR (default:
# .oracle/upstream/step_inputs: shared/oracle_upstream copied to .oracle/upstream/, carried).
# When device time is short, build here and carry the binaries instead: leave out the build
# step and set CATTN_DEVICE_BUILD_DIR to a folder holding libcattn.so.1 and tests/cattn_tests
# (bench/bench_gpu for bench); the test step then runs cattn_tests whole instead of ctest.
# CATTN_SANITIZE_FILTER narrows the sanitized GPU tests (a gtest filter). The two cases sized
# past the kernels' 32-bit ranges (PastTwoToThe31*, RowsPastTheInt32Bound) run in the test step
# only: under the tools they take too long.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
steps=${*:-build test sanitize bench side step inputs spec transcript nccl}
steps=" $steps "
steps=${steps// demo / transcript }
export PATH="/usr/local/cuda/bin:$PATH"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=${CATTN_DEVICE_BUILD_DIR:-build-device}
export LD_LIBRARY_PATH="$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CATTN_TEST_VECTOR_DIR="$PWD/tests/vectors"
export CATTN_ORACLE_DIR=${CATTN_ORACLE_DIR:-$PWD/.oracle}
export CATTN_ORACLE_STEP_INPUTS_DIR=${CATTN_ORACLE_STEP_INPUTS_DIR:-$PWD/.oracle/upstream/step_inputs}
status=0
has() { [[ " $steps " == *" $1 "* ]]; }
log() { echo; echo "=== $*"; }

log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nvcc --version | tail -1

if has build; then
  log "build (sm_90, sm_80)"
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="90;80" \
    -DCATTN_EXTRA_INCLUDE_DIR="$PWD/.deps/include" > "$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build $B -j "$(nproc)" > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
  grep -E "registers|spill" "$OUT/build.log" | sort | uniq -c | head -20 || true
  echo "build ok"
fi

if has test; then
  if [ -f $B/CTestTestfile.cmake ]; then
    log "ctest (all tests, GPU included)"
    (cd $B && ctest -j 8 --no-tests=error --output-on-failure > "$OUT/ctest.log" 2>&1); rc=$?
    tail -5 "$OUT/ctest.log"; grep -E "Failed|\*\*\*" "$OUT/ctest.log" | head -20
  else
    log "cattn_tests (all tests, GPU included; carried binaries, no ctest)"
    $B/tests/cattn_tests > "$OUT/all_tests.log" 2>&1; rc=$?
    grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" "$OUT/all_tests.log" | head -20
  fi
  [ $rc = 0 ] || status=1
  log "GPU tests (gtest summary)"
  $B/tests/cattn_tests --gtest_filter='*gpu*' > "$OUT/gpu_tests.log" 2>&1; rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests ran|FAILED  \]" "$OUT/gpu_tests.log" | head -30
  [ $rc = 0 ] || status=1
fi

if has sanitize; then
  # compute-sanitizer ships with the CUDA toolkit; without it this step cannot pass.
  if ! command -v compute-sanitizer > /dev/null; then
    log "compute-sanitizer"
    echo "FAILED: compute-sanitizer not found (PATH has /usr/local/cuda/bin; install the CUDA" \
         "toolkit's compute-sanitizer to run the sanitize step)"
    status=1
  else
    # memcheck: out-of-bounds and misaligned accesses; racecheck: shared-memory hazards;
    # initcheck: device reads of memory never written; synccheck: invalid barrier use.
    # The NCCL tests run apart under memcheck with API-error reports off: ncclCommInitRank
    # probes its own kernels with cudaFuncGetAttributes and gets cudaErrorNoKernelImageForDevice
    # for those libnccl does not ship for this GPU (20 such reports, every one inside
    # libnccl.so.2); memory errors are still reported there, and every other test keeps API
    # errors on.
    # The four tools run side by side (one GPU, many cores); each has its own log.
    run_sanitizer() {  # tool, log name, gtest filter, extra options...
      local tool=$1 name=$2 filter=$3
      shift 3
      timeout "${CATTN_SANITIZE_TIMEOUT:-1800}" compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 "$@" \
        $B/tests/cattn_tests --gtest_filter="$filter" > "$OUT/sanitize_$name.log" 2>&1
      echo $? > "$OUT/sanitize_$name.rc"
    }
    gpu="${CATTN_SANITIZE_FILTER:-*gpu*}:-*PastTwoToThe31*:*RowsPastTheInt32Bound*:*TwoGpus*"
    run_sanitizer memcheck memcheck "$gpu:pcp_kv_allgather_and_restore_gpu.*" &
    run_sanitizer memcheck memcheck_nccl 'pcp_kv_allgather_and_restore_gpu.*:-*TwoGpus*' \
      --report-api-errors no &
    for tool in racecheck initcheck synccheck; do run_sanitizer $tool $tool "$gpu" & done
    wait
    for name in memcheck memcheck_nccl racecheck initcheck synccheck; do
      log "compute-sanitizer $name"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED|FAILED" "$OUT/sanitize_$name.log" | tail -4
      [ "$(cat "$OUT/sanitize_$name.rc")" = 0 ] || { status=1; grep -m20 -E "Invalid|Race|Error|Uninitialized|Barrier" "$OUT/sanitize_$name.log"; }
    done
  fi
fi

if has bench; then
  log "bench_gpu"
  $B/bench/bench_gpu | tee "$OUT/bench_gpu.txt" || status=1
fi

if has side; then
  log "side by side with the seed (Triton kernel, torch chains)"
  PYTHONUNBUFFERED=1 python3 bench/gpu_side_by_side.py --lib $B/libcattn.so \
    | tee "$OUT/side_by_side_gpu.txt" || status=1
fi
if has step; then
  log "step plan side by side with the seed (B = 8, 256, 1024)"
  PYTHONUNBUFFERED=1 python3 bench/step_side_by_side.py --lib $B/libcattn.so \
    | tee "$OUT/step_side_by_side.txt" || status=1
fi
if has inputs; then
  log "step inputs side by side with vLLM's MRV2 (B = 8, 256, 1024; 1 and 3 KV groups; DCP 1 and 4)"
  PYTHONUNBUFFERED=1 python3 bench/step_inputs_side_by_side.py --lib $B/libcattn.so \
    --json "$OUT/step_inputs_side_by_side.json" | tee "$OUT/step_inputs_side_by_side.txt" || status=1
fi
if has spec; then
  log "speculative decoding side by side with vLLM's six helpers (B = 1 to 256; 1, 3, 7 drafts)"
  PYTHONUNBUFFERED=1 python3 bench/spec_decode_side_by_side.py --lib $B/libcattn.so \
    --out "$OUT/spec_decode_side_by_side.md" --json "$OUT/spec_decode_side_by_side.json" \
    | tee "$OUT/spec_decode_side_by_side.txt" || status=1
fi
if has transcript; then
  log "C test transcript (GPU when present)"
  $B/tests/transcripts/cattn_transcript > "$OUT/transcript.txt" 2>&1 || status=1
  head -3 "$OUT/transcript.txt"; sed -n '/== 5\./,/== 6\./p' "$OUT/transcript.txt" | head -30
  sed -n '/== Summary/,$p' "$OUT/transcript.txt"
  log "examples/cuda_graph_step (a step plan captured once, replayed per batch)"
  $B/examples/cattn_cuda_graph_step > "$OUT/cuda_graph_step.txt" 2>&1 || status=1
  grep -E "GPU|replays|cuda_graph_step" "$OUT/cuda_graph_step.txt"
fi

if has profile; then
  # Nsight Compute on the whole step's kernels (bench_gpu's B = 1024, T = 65,536, 3-group row,
  # DCP 1): where its GPU time goes (waves, occupancy, stalls, memory throughput). Needs ncu
  # (CUDA toolkit); the report's text pages go to $OUT.
  log "profile: ncu on bench_gpu's whole step (B1024 T65536 g3 dcp1)"
  if ! command -v ncu > /dev/null; then
    echo "FAILED: ncu not found (the CUDA toolkit's Nsight Compute)"; status=1
  else
    row=${CATTN_PROFILE_ROW:-"whole step (7 + inputs), B1024 T65536 g3 dcp1"}
    timeout 500 ncu --set full --kernel-name regex:'step_inputs_kernel|step_plan_kernel' \
      --launch-skip 4 --launch-count 2 --export "$OUT/whole_step" --force-overwrite \
      $B/bench/bench_gpu --reps 1 --filter "$row" > "$OUT/profile_run.txt" 2>&1 || status=1
    for page in details raw; do
      ncu --import "$OUT/whole_step.ncu-rep" --page $page > "$OUT/profile_$page.txt" 2>&1 || true
    done
    grep -E "step_inputs_kernel|step_plan_kernel|Duration|Waves Per SM|Achieved Occupancy|\
Theoretical Occupancy|Registers Per Thread|DRAM Throughput|Compute \(SM\) Throughput|\
Block Limit Registers" "$OUT/profile_details.txt" | head -40
  fi
fi

if has nccl; then
  gpus=$(nvidia-smi -L | wc -l)
  if [ "$gpus" -ge 2 ]; then
    log "all-gather + restore on $gpus GPUs: libcattn and bare NCCL, then the seed's way"
    timeout 300 $B/bench/bench_allgather | tee "$OUT/bench_allgather.txt" || status=1
    timeout 300 torchrun --nproc-per-node 2 bench/allgather_seed.py 2>&1 \
      | grep -v "^W1\|^\*\*\*" | tee "$OUT/allgather_seed.txt" || status=1
  else
    log "all-gather benchmarks skipped: $gpus GPU(s), need 2 (nvidia-h200-x2)"
  fi
fi
exit $status
