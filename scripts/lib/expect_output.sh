# SPDX-License-Identifier: Apache-2.0
# expect_output <script> <printed> <expected file> <program>: checks that the file <printed>,
# past its first line (the program's version line), is the expected file byte for byte; on a
# difference prints the diff and "<script>: <program> printed other values than <expected>"
# and returns 1. Sourced by scripts/test_rust.sh and scripts/test_go.sh, whose example programs
# print what the C and C++ examples print (examples/*.expected).
expect_output() {
  local script=$1 printed=$2 expected=$3 program=$4
  if ! tail -n +2 "$printed" | diff -u --label "$expected" --label "$program, from line 2" \
      "$expected" -; then
    echo "$script: $program printed other values than $(basename "$expected")" >&2
    return 1
  fi
}
