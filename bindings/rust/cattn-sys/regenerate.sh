#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates src/bindings.rs from include/cattn.h with the bindgen CLI (Debian: apt-get install
# bindgen). The flags below are the whole recipe: src/bindings.rs is never edited by hand, and
# check_bindgen_drift.sh runs this same script to prove the checked-in file is current.
#
# Usage: regenerate.sh [OUTPUT]        (default: src/bindings.rs next to this script)
# Environment:
#   CATTN_HEADER        the header to translate (default: include/cattn.h of this repository)
#   DLPACK_INCLUDE_DIR  the directory holding dlpack/dlpack.h (default: /usr/include)
#   BINDGEN             the bindgen program (default: bindgen)
#   RUSTFMT             the rustfmt program (default: rustfmt)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
header=${CATTN_HEADER:-$root/include/cattn.h}
out=${1:-$here/src/bindings.rs}
dlpack=${DLPACK_INCLUDE_DIR:-/usr/include}
bindgen=${BINDGEN:-bindgen}
rustfmt=${RUSTFMT:-rustfmt}

command -v "$bindgen" >/dev/null || {
  echo "regenerate.sh: '$bindgen' not found (Debian: apt-get install bindgen)" >&2
  exit 1
}
[ -f "$header" ] || { echo "regenerate.sh: header '$header' not found" >&2; exit 1; }
[ -f "$dlpack/dlpack/dlpack.h" ] || {
  echo "regenerate.sh: $dlpack/dlpack/dlpack.h not found (set DLPACK_INCLUDE_DIR)" >&2
  exit 1
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# Why these flags:
#  - allowlists: only libcattn's own API; the DLPack types it uses come in recursively, and the
#    two DLPack enums are named so that kDLCPU, kDLInt, ... exist for callers.
#  - enums as plain integer constants (the default "consts" style): a value from a newer
#    library is then just a number, never an invalid Rust enum.
#  - enum and size_t types fixed to u32/usize so that the output does not depend on the host's
#    C type names; no rustfmt inside bindgen, the toolchain's rustfmt formats afterwards, with
#    its defaults, so that the same toolchain always gives the same bytes.
#  - CUstream_st stays opaque: libcattn only passes the pointer on to CUDA. (The unused libc
#    typedefs __uint8_t, ... stay: blocklisting them costs DLDataType its derived Copy.)
"$bindgen" "$header" \
  --no-rustfmt-bindings \
  --allowlist-function 'cattn_.*' \
  --allowlist-type 'cattn_.*' \
  --allowlist-type 'DLDeviceType|DLDataTypeCode' \
  --allowlist-var 'CATTN_.*' \
  --opaque-type 'CUstream_st' \
  --default-enum-style consts \
  --no-prepend-enum-name \
  --translate-enum-integer-types \
  --size_t-is-usize \
  --raw-line '// SPDX-License-Identifier: Apache-2.0' \
  --raw-line '// Generated from include/cattn.h by bindings/rust/cattn-sys/regenerate.sh.' \
  --raw-line '// Do not edit: change the header and run the script again.' \
  -- -x c -std=c99 -I "$dlpack" >"$tmp"

# The header documents fields with trailing Doxygen comments (/**< ... */), which this bindgen
# carries with their marker as "< ..."; drop the marker.
sed -i -E 's/#[[:space:]]*\[[[:space:]]*doc[[:space:]]*=[[:space:]]*"< /#[doc = " /g' "$tmp"

"$rustfmt" --edition 2021 --emit stdout --quiet <"$tmp" >"$out.tmp" || {
  rm -f "$out.tmp"
  echo "regenerate.sh: rustfmt failed on bindgen's output" >&2
  exit 1
}
# bindgen copies no comment of a #define, and DLPack's and libc's items have none: add_docs.py
# gives each its text (the header's Doxygen comment, or a fixed line) so that the crate has no
# undocumented item.
python3 "$here/add_docs.py" "$header" "$out.tmp"
# bindgen skips the struct initialisers (#define CATTN_<X>_INIT { ... }): init_consts.py
# translates them into constants of the generated structs, formatted on their own and appended,
# so that the safe crate takes its defaults from the header rather than stating them again.
python3 "$here/init_consts.py" "$header" "$out.tmp" "$tmp"
"$rustfmt" --edition 2021 --emit stdout --quiet <"$tmp" >"$tmp.fmt" || {
  rm -f "$out.tmp" "$tmp.fmt"
  echo "regenerate.sh: rustfmt failed on init_consts.py's output" >&2
  exit 1
}
{ echo; cat "$tmp.fmt"; } >>"$out.tmp"
rm -f "$tmp.fmt"
mv "$out.tmp" "$out"
