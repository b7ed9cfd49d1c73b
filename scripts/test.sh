#!/usr/bin/env bash
# Builds and runs every test: the CUDA-enabled build (GPU tests skip without a GPU), then the
# CPU-only build. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
jobs=${CATTN_JOBS:-2}
# Few architectures keep CI fast; the device script builds sm_90 and sm_80.
archs=${CATTN_CUDA_ARCHITECTURES:-90}

echo "== build: default preset (CUDA when nvcc is found, archs $archs)"
cmake --preset default -DCMAKE_CUDA_ARCHITECTURES="$archs" >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"

echo "== build: CPU-only preset"
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j "$jobs"
ctest --preset cpu -j "$jobs"
