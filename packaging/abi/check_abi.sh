#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ABI gate: compares libcattn's current ABI with the committed baseline
# packaging/abi/libcattn.abi.
#   packaging/abi/check_abi.sh
# Fails on any removal or incompatible change (abidiff), and on any change to an existing
# function's types other than those compatible.abignore describes (members appended to a
# cattn_* struct, status codes appended). Added functions and variables pass only when
# CHANGELOG.md's unreleased sections (those above the newest released one, which the baseline
# records) name each of them. A deliberate break (a new major) is
# recorded with packaging/abi/update_baseline.sh.
# CATTN_ABI_BUILD_DIR (default build-abi) is the build folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
baseline="$here/libcattn.abi"
build=${CATTN_ABI_BUILD_DIR:-$root/build-abi}
fail() { echo "check_abi: $*" >&2; exit 1; }
command -v abidiff >/dev/null || fail "abidiff not found (apt-get install abigail-tools)"
[[ -f "$baseline" ]] || fail "no baseline $baseline (run update_baseline.sh)"

current="$build/libcattn.abi"
report="$build/abidiff.txt"
"$here/dump_abi.sh" "$current"

set +e
abidiff --suppressions "$here/compatible.abignore" "$baseline" "$current" > "$report" 2>&1
rc=$?
set -e
cat "$report"
# abidiff's status is a bit field: 1 error, 2 usage error, 4 ABI change, 8 incompatible change.
if ((rc == 0)); then
  echo "check_abi: no ABI change against the baseline (compatible.abignore aside)"
  exit 0
fi
if ((rc & 3)); then
  echo "check_abi: abidiff failed (status $rc)" >&2
  exit 1
fi
if ((rc & 8)); then
  echo "check_abi: FAIL - incompatible ABI change against the baseline (abidiff status $rc)." >&2
  soname() { sed -n "s/^<abi-corpus .*soname='\([^']*\)'.*/\1/p" "$1"; }
  if [[ "$(soname "$baseline")" != "$(soname "$current")" ]]; then
    echo "  The SONAME changed ($(soname "$baseline") -> $(soname "$current")): after a major" >&2
    echo "  version bump, record the new ABI with packaging/abi/update_baseline.sh." >&2
    exit 1
  fi
  echo "  A removed or changed interface needs a new major version; then regenerate the" >&2
  echo "  baseline with packaging/abi/update_baseline.sh." >&2
  exit 1
fi

# Status 4: something changed. Only additions may pass.
summary_counts() {  # prints the removed and changed counts of every summary line
  sed -n 's/^.*changes summary: \([0-9]*\) Removed, \([0-9]*\) Changed.*/\1 \2/p;
          s/^.*changes summary: \([0-9]*\) Removed, [0-9]* Added.*/\1 0/p' "$report"
}
if summary_counts | awk '$1 != 0 || $2 != 0 { bad = 1 } END { exit !bad }'; then
  echo "check_abi: FAIL - existing interfaces changed (see above). Only appended struct" >&2
  echo "  members and appended status codes are compatible; anything else needs a new major" >&2
  echo "  version and a new baseline (packaging/abi/update_baseline.sh)." >&2
  exit 1
fi

# The names of added functions and variables: "[A] 'function T name(args)' {sym@@NODE}",
# "[A] 'T name'" (variables) and "[A] name@@NODE" (symbols without debug information).
added=$(sed -n "s/^ *\[A\] //p" "$report" |
  sed -e "s/^'function [^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/" \
      -e "s/^'[^']*[^A-Za-z0-9_]\([A-Za-z_][A-Za-z0-9_]*\)'.*/\1/" \
      -e "s/^\([A-Za-z_][A-Za-z0-9_]*\)@.*/\1/" | sort -u)
if [[ -z "$added" ]]; then
  echo "check_abi: FAIL - abidiff reported a change (status $rc) that is neither a removal, a" >&2
  echo "  change nor an addition this script understands; see the report above." >&2
  exit 1
fi
# Every section above the first released one ("## X.Y.Z (date)"): the baseline is that release.
section=$(awk '/^## / && !/\(unreleased\)/{exit} /^## /{n++} n >= 1' "$root/CHANGELOG.md")
# Here-strings, not pipes: head and grep -q stop reading early, and under pipefail the printf
# they leave writing dies of SIGPIPE, which ended this script silently (head) or reported a
# named symbol as missing (grep) now and then.
heading=$(grep "^## " <<<"$section" | tr '\n' ' ')
missing=()
for name in $added; do
  grep -qw -- "$name" <<<"$section" || missing+=("$name")
done
if ((${#missing[@]})); then
  echo "check_abi: FAIL - added to the ABI but not named in CHANGELOG.md's unreleased sections" >&2
  echo "  ($heading): ${missing[*]}" >&2
  exit 1
fi
echo "check_abi: compatible additions, each named in CHANGELOG.md ($heading): ${added//$'\n'/ }"
