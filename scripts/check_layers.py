#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the include arrows between the source layers and fails on a back arrow.

A layer may use only the layers listed as below it (docs/design.md, "Layers and files"); an
arrow to any other layer - a higher one, or a sibling - is a back arrow. For C and C++ the
arrows are the quoted #include lines, resolved as the compiler resolves them (the including
file's folder, then the library's include path); angle-bracket includes (the C++ library,
CUDA, DLPack, NCCL) and quoted ones that name no file of the tree are no arrows.

Each rule set is one entry of RULE_SETS: the files it reads, how a file is placed in a layer
(the first layer whose prefix the path starts with), what each layer may use, and the function
that reads a file's arrows. A rule set for another language (the Go bindings' imports, say)
adds an entry with its own arrow reader (a function from a file to (line, target path)
pairs, like c_includes below) and its own layer table; nothing else changes.

Usage: scripts/check_layers.py [--root DIR] [--quiet]
  --root DIR  the tree to check (default: this script's repository), e.g. an export of an
              older commit: git archive HEAD src kernels include | tar -x -C /tmp/base
  --quiet     print only the back arrows and the summary

Prints, per rule set, the arrows between layers (how many include lines each pair has) and
every back arrow as path:line; ends with a summary line in ctest's form (one "test" per rule
set), which scripts/test.sh's ctest_counts reads. Exit status 1 when any back arrow exists.
"""

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Tuple


@dataclass(frozen=True)
class Layer:
    name: str
    prefix: str  # paths (relative to the root) that start with it belong to the layer
    may_use: Tuple[str, ...]  # the layers below it; an arrow within the layer is always allowed
    why: str  # one line for the listing


# (line number, the target's path relative to the root, as written in the source)
Arrow = Tuple[int, str, str]


@dataclass(frozen=True)
class RuleSet:
    name: str
    files: Tuple[str, ...]  # globs relative to the root
    layers: Tuple[Layer, ...]  # the first layer whose prefix matches places a file
    arrows: Callable[[Path, Path], Iterable[Arrow]]  # (root, file) -> arrows


_C_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def c_includes(search_dirs: Tuple[str, ...]) -> Callable[[Path, Path], Iterator[Arrow]]:
    """Quoted #include lines, resolved from the file's folder, then `search_dirs` in order."""

    def read(root: Path, path: Path) -> Iterator[Arrow]:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = _C_INCLUDE.match(line)
                if not m:
                    continue
                written = m.group(1)
                for base in (path.parent, *(root / d for d in search_dirs)):
                    target = base / written
                    if target.is_file():
                        yield number, target.resolve().relative_to(root).as_posix(), written
                        break

    return read


# The C/C++ library: the public header, the kernels and src/'s layers, bottom to top. The
# search path is the library target's (CMakeLists.txt: include/, src/ and the root).
SRC_LAYERS = (
    Layer("include", "include/", (), "the public C ABI: includes nothing of the tree"),
    Layer("kernels", "kernels/", (),
          "kernels and their launchers: nothing from src/, no C-ABI types"),
    Layer("common", "src/common/", ("include", "kernels"),
          "what every layer shares (checks, errors, handles, build config)"),
    Layer("host", "src/host/", ("include", "kernels", "common"),
          "host algorithms, compiled in every build"),
    Layer("device", "src/device/", ("include", "kernels", "common", "host"),
          "kernel parameters and launches, CUDA builds only; may reuse a host planner"),
    Layer("entry", "src/", ("include", "kernels", "common", "host", "device"),
          "the C entry points (src/<utility>.cpp) and their private headers"),
)

RULE_SETS = (
    RuleSet(
        name="src",
        files=("include/**/*.h", "kernels/**/*.h", "kernels/**/*.cuh", "kernels/**/*.cu",
               "src/**/*.h", "src/**/*.cpp"),
        layers=SRC_LAYERS,
        arrows=c_includes(("include", "src", ".")),
    ),
)


def layer_of(rules: RuleSet, rel: str):
    for layer in rules.layers:
        if rel.startswith(layer.prefix):
            return layer
    return None


def check(root: Path, rules: RuleSet, quiet: bool) -> int:
    """Prints the rule set's arrows and back arrows; returns the number of back arrows."""
    by_name = {layer.name: layer for layer in rules.layers}
    for layer in rules.layers:
        for used in layer.may_use:
            assert used in by_name, f"{rules.name}: {layer.name} may use unknown layer {used}"
    files = sorted({p for g in rules.files for p in root.glob(g) if p.is_file()})
    pairs = {}
    back = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        src = layer_of(rules, rel)
        if src is None:
            continue
        for number, target, written in rules.arrows(root, path):
            dst = layer_of(rules, target)
            if dst is None:
                continue
            pairs[(src.name, dst.name)] = pairs.get((src.name, dst.name), 0) + 1
            if dst.name != src.name and dst.name not in src.may_use:
                back.append(f'{rel}:{number}: {src.name} -> {dst.name} ("{written}")')
    if not quiet:
        print(f"== {rules.name}: {len(files)} files; layers, bottom to top:")
        for layer in rules.layers:
            uses = ", ".join(layer.may_use) or "nothing"
            print(f"  {layer.name:8} {layer.prefix:12} uses {uses}: {layer.why}")
        print(f"== {rules.name}: arrows (include lines per pair of layers)")
        order = {layer.name: i for i, layer in enumerate(rules.layers)}
        for (a, b), n in sorted(pairs.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])):
            mark = "" if a == b or b in by_name[a].may_use else "  <- back arrow"
            print(f"  {a:8} -> {b:8} {n:4}{mark}")
    print(f"== {rules.name}: {len(back)} back arrow{'' if len(back) == 1 else 's'}")
    for line in back:
        print(f"  {line}")
    return len(back)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    root = args.root.resolve()
    failed = sum(1 for rules in RULE_SETS if check(root, rules, args.quiet) > 0)
    total = len(RULE_SETS)
    # ctest's summary line, for scripts/test.sh's ctest_counts.
    print(f"{100 * (total - failed) // total}% tests passed, {failed} tests failed out of {total}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
