# SPDX-License-Identifier: Apache-2.0
# readme_block FILE NAME: prints the fenced code block that directly follows the line
# "<!-- test_packaging: NAME -->" in the Markdown file FILE, without its fences, and fails when
# FILE has no such marker followed by a block. The marker is invisible in rendered Markdown;
# it lets a test run the very commands a README gives (scripts/test_packaging.sh does, for
# examples/README.md and bindings/go/README.md), so that the README cannot drift from what is
# tested.
readme_block() {
  awk -v marker="<!-- test_packaging: $2 -->" '
    state == 0 && $0 == marker { state = 1; next }
    state == 1 { if ($0 ~ /^```/) { state = 2; next } else exit }
    state == 2 && /^```/ { found = 1; exit }
    state == 2 { print }
    END { exit !found }' "$1" ||
    { echo "readme_block: $1 has no code block marked '$2'" >&2; return 1; }
}
