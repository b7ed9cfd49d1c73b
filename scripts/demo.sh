#!/usr/bin/env bash
# Builds libcattn and runs the demo on its embedded batch (GPU when present, CPU otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default -DCATTN_BUILD_TESTS=OFF -DCATTN_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CATTN_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build --preset default -j "${CATTN_JOBS:-2}" --target cattn_demo >/dev/null
exec build/examples/cattn_demo
