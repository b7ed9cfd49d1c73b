#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds libcattn with debug information and writes its ABI, as abidw sees it, to a file:
#   packaging/abi/dump_abi.sh <output .abi file>
# Only what the exported cattn_* functions reach counts, and only types declared in the
# public headers (include/ and DLPack's, whose DLTensor is part of every signature).
# The build is CPU-only by default: the exported interface is the same with CUDA, and the
# package build's symbols check covers the CUDA library. CATTN_ABI_WITH_CUDA=ON changes that.
# CATTN_ABI_BUILD_DIR (default build-abi) is the build folder.
set -euo pipefail
out=${1:?usage: dump_abi.sh <output .abi file>}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CATTN_ABI_BUILD_DIR:-$root/build-abi}
command -v abidw >/dev/null ||
  { echo "dump_abi: abidw not found (apt-get install abigail-tools)" >&2; exit 1; }

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCATTN_WITH_CUDA="${CATTN_ABI_WITH_CUDA:-OFF}" -DCATTN_BUILD_TESTS=OFF \
  -DCATTN_BUILD_BENCH=OFF -DCATTN_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target cattn -j "${CATTN_JOBS:-2}" >/dev/null
lib=$(readlink -f "$build/libcattn.so")

# DLPack's folder as the compiler finds it (CATTN_DLPACK_INCLUDE_DIR when the build used one).
extra_inc=$(sed -n 's/^CATTN_DLPACK_INCLUDE_DIR:PATH=\(.\+\)/-I\1/p' "$build/CMakeCache.txt")
# shellcheck disable=SC2086,SC1003  # extra_inc: empty or one -I flag
dlpack_h=$(echo '#include <dlpack/dlpack.h>' | cc -M -x c - $extra_inc |
  tr -s ' \\' '\n' | grep '/dlpack/dlpack\.h$' | head -n1)
[[ -n "$dlpack_h" ]] || { echo "dump_abi: the compiler finds no dlpack/dlpack.h" >&2; exit 1; }
# Paths, the compilation folder and DT_NEEDED are left out: they differ between machines and
# builds without being part of the interface.
abidw --exported-interfaces-only --drop-private-types \
  --headers-dir "$root/include" --headers-dir "$(dirname "$dlpack_h")" \
  --no-corpus-path --no-comp-dir-path --short-locs --no-elf-needed \
  --out-file "$out" "$lib"
echo "dump_abi: $(basename "$lib") -> $out"
