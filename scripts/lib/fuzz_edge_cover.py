#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Picks a small set of fuzz inputs that covers every edge the whole set covers.

    fuzz_edge_cover.py <merge control file> <merge log>

Reads what a libFuzzer `-set_cover_merge=1 -merge_control_file=<file>` run left (clang 14's
libFuzzer): the control file names every input and, in set-cover mode, gives each input's FT
line with all of its features, not only the new ones. The merge log gives the number of inline
8-bit counters N ("Loaded 1 modules (N inline 8-bit counters)"). A feature f < 8 * N is counter
f // 8 seen with some hit count, and counter i is edge i (one module, one counter per edge); the
features above are libFuzzer's own (stack depth). Prints the paths of the chosen inputs, one a
line, and on standard error the edge count and how many inputs were kept.

The choice is the greedy set cover over edges: repeatedly the input that adds the most edges
not yet covered (ties: more features, then fewer bytes), then a pass that drops any input whose
edges the others cover. The union of edges, libFuzzer's `cov:`, is kept exactly; the hit-count
features (`ft:`) are kept only where they come with a new edge, which a fuzzing run regains in
seconds. scripts/test_hardening.sh's `seeds` step runs it.
"""
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    control, log = sys.argv[1], sys.argv[2]
    counters = re.search(r"\((\d+) inline 8-bit counters\)", open(log, errors="replace").read())
    if not counters:
        sys.exit(f"fuzz_edge_cover: no 'inline 8-bit counters' line in {log}")
    limit = 8 * int(counters.group(1))

    lines = open(control, errors="replace").read().split("\n")
    count = int(lines[0])
    files = lines[2:2 + count]
    size, edges, features = {}, {}, {}
    for line in lines[2 + count:]:
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "STARTED":
            size[int(fields[1])] = int(fields[2])
        elif fields[0] == "FT":
            index, feats = int(fields[1]), [int(f) for f in fields[2:]]
            features[index] = len(feats)
            edges[index] = {f // 8 for f in feats if f < limit}
    if not edges:
        print(f"fuzz_edge_cover: 0 edges, 0 of {count} inputs kept", file=sys.stderr)
        return

    universe = set().union(*edges.values())
    left, chosen = set(universe), []
    while left:
        best = max(edges, key=lambda i: (len(edges[i] & left), features[i], -size.get(i, 0)))
        chosen.append(best)
        left -= edges[best]
    for index in list(chosen):
        others = [edges[j] for j in chosen if j != index]
        if others and edges[index] <= set().union(*others):
            chosen.remove(index)
    assert set().union(*(edges[i] for i in chosen)) == universe
    for index in chosen:
        print(files[index])
    print(f"fuzz_edge_cover: {len(universe)} edges, {len(chosen)} of {count} inputs kept",
          file=sys.stderr)


if __name__ == "__main__":
    main()
