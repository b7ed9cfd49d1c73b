#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds libcattn and runs the C test transcript (tests/transcripts/transcript.c) on its embedded
# batch: every utility, its inputs, its outputs and the status of every call.
#
# It compiles CUDA only where a GPU can run it. A GPU is present when `nvidia-smi -L` lists one
# or, without nvidia-smi, when the NVIDIA driver lists one in /proc/driver/nvidia/gpus/. Then,
# with nvcc, it builds the `default` preset in build/ (CUDA, for the GPU's architecture) and the
# transcript runs on the GPU; otherwise it builds the `cpu` preset in build-cpu/ and the
# transcript runs on the host (no CUDA compilation: well under a minute of building on 2 cores,
# where the CUDA build of the same target took about 7). These are the folders scripts/test.sh
# builds too (README.md, "Build folders"), so whichever runs second reuses the first one's
# build.
#
# Environment:
#   CATTN_DEMO_CUDA=1         build with CUDA (build/) even without a GPU; fails without nvcc
#   CATTN_DEMO_CUDA=0         build CPU-only (build-cpu/) even with a GPU
#   CATTN_CUDA_ARCHITECTURES  the CUDA architectures (default: the GPU's, else 90)
#   CATTN_JOBS                build jobs (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"

# gpu_count: how many NVIDIA GPUs the driver lists (0 without a driver).
gpu_count() {
  local list
  if command -v nvidia-smi >/dev/null 2>&1; then
    list=$(nvidia-smi -L 2>/dev/null || true)
    grep -c '^GPU ' <<<"$list" || true
  elif [ -d /proc/driver/nvidia/gpus ]; then
    find /proc/driver/nvidia/gpus -mindepth 1 -maxdepth 1 | wc -l
  else
    echo 0
  fi
}

mode=${CATTN_DEMO_CUDA:-auto}
gpus=$(gpu_count)
have_nvcc=0
command -v nvcc >/dev/null 2>&1 && have_nvcc=1
case "$mode" in
  1)
    [ "$have_nvcc" = 1 ] || { echo "demo: CATTN_DEMO_CUDA=1 but no nvcc on PATH or in" \
                                   "/usr/local/cuda/bin" >&2; exit 1; }
    cuda=1 why="CATTN_DEMO_CUDA=1" ;;
  0) cuda=0 why="CATTN_DEMO_CUDA=0" ;;
  auto)
    if [ "$gpus" -gt 0 ] && [ "$have_nvcc" = 1 ]; then
      cuda=1 why="$gpus GPU(s) and nvcc found"
    elif [ "$gpus" -gt 0 ]; then
      cuda=0 why="a GPU but no nvcc found"
    else
      cuda=0 why="no GPU found (CATTN_DEMO_CUDA=1 builds CUDA anyway)"
    fi ;;
  *) echo "demo: CATTN_DEMO_CUDA is '$mode', expected 1, 0 or unset" >&2; exit 1 ;;
esac

if [ "$cuda" = 1 ]; then
  preset=default build=build
  # The GPU's architecture ("9.0" -> 90), so that the transcript's kernels run on it.
  cc=$({ nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null || true; } |
       head -n 1 | tr -d ' .')
  [[ "$cc" =~ ^[0-9]+$ ]] || cc=90
  configure=(-DCATTN_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CATTN_CUDA_ARCHITECTURES:-$cc}")
else
  preset=cpu build=build-cpu configure=()
fi
echo "demo: $why: building the '$preset' preset in $build/" >&2
# The transcript is built with the examples. A fresh folder is configured without the tests and
# benchmarks (only the transcript is built); a folder scripts/test.sh configured keeps them.
configure+=(-DCATTN_BUILD_EXAMPLES=ON)
if [ ! -f "$build/CMakeCache.txt" ]; then
  configure+=(-DCATTN_BUILD_TESTS=OFF -DCATTN_BUILD_BENCH=OFF)
fi
cmake --preset "$preset" "${configure[@]}" >/dev/null
if ! cmake --build --preset "$preset" -j "${CATTN_JOBS:-2}" --target cattn_transcript \
    >"$build/demo_build.log" 2>&1; then
  tail -n 40 "$build/demo_build.log" >&2
  echo "demo: the build failed (log: $build/demo_build.log)" >&2
  exit 1
fi
exec "$build/tests/transcripts/cattn_transcript"
