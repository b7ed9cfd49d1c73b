#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds libcattn and runs the demo on its embedded batch (GPU when present, CPU otherwise). It
# builds in a folder of its own (build-demo), so that it and scripts/test.sh, which build the
# tests in build/, can run in either order.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release -DCATTN_BUILD_TESTS=OFF \
  -DCATTN_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${CATTN_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build build-demo -j "${CATTN_JOBS:-2}" --target cattn_demo >/dev/null
exec build-demo/examples/cattn_demo
