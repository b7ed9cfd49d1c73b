#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fuzz seed files, tests/fuzz/seeds/<target>.hex: each holds one fuzz target's seed inputs,
# one input a line in lowercase hex, sorted, after '#' comment lines. One text file per target
# instead of one file per input keeps the repository small (21 files, not thousands), diffs
# readable and nothing binary in git; libFuzzer reads folders, so the inputs are unpacked into
# a build folder before a run. docs/fuzzing.md describes the whole cycle.
#
# Sourced by scripts/test_hardening.sh, or run by hand:
#   scripts/lib/fuzz_seeds.sh unpack tests/fuzz/seeds/<target>.hex <folder>
#   scripts/lib/fuzz_seeds.sh pack <target> tests/fuzz/seeds/<target>.hex < <list of input files>
# Pure bash and coreutils (od), so that it runs wherever the fuzz binaries do.

# fuzz_seeds_unpack <seed file> <folder>: empties <folder> and writes each input of the seed
# file into it as seed-<n>. A missing seed file gives an empty folder. Fails on a line that is
# not hex.
fuzz_seeds_unpack() {
  local file=$1 dir=$2 hex esc i n=0
  rm -rf "$dir"
  mkdir -p "$dir" || return 1
  [ -f "$file" ] || return 0
  while IFS= read -r hex || [ -n "$hex" ]; do
    case $hex in '' | '#'*) continue ;; esac
    if ! [[ $hex =~ ^([0-9a-f][0-9a-f])+$ ]]; then
      echo "fuzz_seeds: $file: line $((n + 1)) of inputs is not hex" >&2
      return 1
    fi
    n=$((n + 1))
    # Every byte as a \xHH escape of printf's format (bash's printf writes NUL bytes too).
    esc=
    for ((i = 0; i < ${#hex}; i += 2)); do esc+="\\x${hex:i:2}"; done
    # shellcheck disable=SC2059
    printf "$esc" >"$dir/seed-$n" || return 1
  done <"$file"
}

# fuzz_seeds_pack <target> <seed file>: writes the input files named on standard input (one
# path a line) into <seed file>, one hex line each, sorted and without duplicates, after a
# header. An empty input is left out: libFuzzer runs the empty input on its own.
fuzz_seeds_pack() {
  local target=$1 file=$2 f
  mkdir -p "$(dirname "$file")" || return 1
  {
    echo "# Seed inputs of the libFuzzer target tests/fuzz/$target.cpp: one input a line, in hex."
    echo "# scripts/test_hardening.sh unpacks them; docs/fuzzing.md says how to regrow them."
    while IFS= read -r f; do
      [ -n "$f" ] || continue
      od -An -v -tx1 "$f" | tr -d ' \n' || return 1
      echo
    done | { grep . || true; } | LC_ALL=C sort -u
  } >"$file.tmp" && mv "$file.tmp" "$file"
}

# fuzz_seeds_count <seed file>: the number of inputs in it (0 when it does not exist).
fuzz_seeds_count() {
  [ -f "$1" ] || { echo 0; return; }
  grep -cvE '^(#|$)' "$1" || true
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case ${1:-} in
    unpack) [ $# = 3 ] || { echo "usage: $0 unpack <seed file> <folder>" >&2; exit 2; }
            fuzz_seeds_unpack "$2" "$3"
            echo "$(find "$3" -type f | wc -l) inputs in $3" ;;
    pack) [ $# = 3 ] || { echo "usage: $0 pack <target> <seed file> < <input list>" >&2; exit 2; }
          fuzz_seeds_pack "$2" "$3"
          echo "$(fuzz_seeds_count "$3") inputs in $3" ;;
    *) echo "usage: $0 unpack <seed file> <folder> | pack <target> <seed file> < <input list>" >&2
       exit 2 ;;
  esac
fi
