#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the ABI baseline packaging/abi/libcattn.abi from the current tree. Run it when
# an ABI is released (e.g. at a major version bump, whose SONAME and version node change
# every symbol) and commit the result; check_abi.sh compares against it from then on.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/dump_abi.sh" "$here/libcattn.abi"
echo "update_baseline: $(grep -c '<elf-symbol ' "$here/libcattn.abi") exported symbols recorded;" \
     "review and commit packaging/abi/libcattn.abi"
