#!/usr/bin/env bash
# The README's test command: builds and runs every test - the C/C++ suites (CUDA build, whose GPU
# tests skip without a GPU, and the CPU-only build), packaging (Debian packages, out-of-tree
# consumers, ABI gate), the Rust and Go bindings, and the hardening suites (sanitizers, fuzzing)
# when present. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
# Toolchains installed per user (rustup) are not on a non-interactive shell's PATH.
export PATH="/usr/local/cuda/bin:$HOME/.cargo/bin:$PATH"
jobs=${CATTN_JOBS:-2}
export CATTN_JOBS=$jobs
# Few architectures keep CI fast; the device script and the release packages build 90 and 80.
archs=${CATTN_CUDA_ARCHITECTURES:-90}
start=$SECONDS
stage() { echo; echo "== $* ($((SECONDS - start)) s)"; }

stage "C/C++: default preset (CUDA when nvcc is found, archs $archs)"
cmake --preset default -DCMAKE_CUDA_ARCHITECTURES="$archs" >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"

stage "C/C++: CPU-only preset"
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j "$jobs"
ctest --preset cpu -j "$jobs"

stage "packaging"
bash scripts/test_packaging.sh

stage "Rust bindings"
CATTN_LIB_DIR=build-cpu bash scripts/test_rust.sh

if [ -f scripts/test_go.sh ]; then
  stage "Go bindings"
  CATTN_LIB_DIR=build-cpu bash scripts/test_go.sh
fi

if [ -f scripts/test_hardening.sh ]; then
  stage "hardening: sanitizers and fuzzing"
  bash scripts/test_hardening.sh
fi
stage "all test stages passed"
