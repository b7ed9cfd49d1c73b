#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds libcattn and runs the C test transcript (tests/transcripts/transcript.c) on its embedded
# batch (GPU when present, CPU otherwise): every utility, its inputs, its outputs and the status
# of every call. It builds in a folder of its own (build-demo), so that it and scripts/test.sh,
# which build the tests in build/, can run in either order.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-demo -DCMAKE_BUILD_TYPE=Release -DCATTN_BUILD_TESTS=OFF \
  -DCATTN_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${CATTN_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build build-demo -j "${CATTN_JOBS:-2}" --target cattn_transcript >/dev/null
exec build-demo/tests/transcripts/cattn_transcript
