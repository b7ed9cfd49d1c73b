#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the include arrows between the source layers and fails on a back arrow.

A layer may use only the layers listed as below it (docs/design.md, "Layers and files"); an
arrow to any other layer - a higher one, or a sibling - is a back arrow. For C and C++ the
arrows are the quoted #include lines, resolved as the compiler resolves them (the including
file's folder, then the library's include path); angle-bracket includes (the C++ library,
CUDA, DLPack, NCCL) and quoted ones that name no file of the tree are no arrows.

For the Go binding (bindings/go, one package, so there are no imports to follow) an arrow is
a use, in a file, of a package-level identifier (a type, function, variable or constant, not
a method or field) that another non-test file of the package declares: one arrow per use,
pointing at the declaring file. Comments (the cgo preamble included), string literals and
selectors (x.Name, C.name) are not uses. The cgo layer (capi*.go, the link_*.go build files)
must use nothing of the idiomatic layer above it.

Each rule set is one entry of RULE_SETS: the files it reads, how a file is placed in a layer
(the first layer whose prefix the path starts with), what each layer may use, and the function
that reads a file's arrows. A rule set for another language (the Go bindings' imports, say)
adds an entry with its own arrow reader (a function from a file to (line, target path)
pairs, like c_includes below) and its own layer table; nothing else changes.

Usage: scripts/check_layers.py [--root DIR] [--quiet]
  --root DIR  the tree to check (default: this script's repository), e.g. an export of an
              older commit: git archive HEAD src kernels include | tar -x -C /tmp/base
  --quiet     print only the back arrows and the summary

Prints, per rule set, the arrows between layers (how many each pair of layers has) and
every back arrow as path:line; ends with a summary line in ctest's form (one "test" per rule
set), which scripts/test.sh's ctest_counts reads. Exit status 1 when any back arrow exists.
"""

import argparse
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, Tuple, Union


@dataclass(frozen=True)
class Layer:
    name: str
    # paths (relative to the root) that start with it (or with one of them) belong to the layer
    prefix: Union[str, Tuple[str, ...]]
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


_GO_STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])+\'',
                       re.S)
_GO_IDENT = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def _go_code(path: Path) -> str:
    """The file's text with comments and string literals blanked, line breaks kept."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return _GO_STRIP.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


@functools.lru_cache(maxsize=None)
def _go_package_decls(folder: Path) -> Dict[str, Path]:
    """Package-level identifiers of the non-test .go files in `folder` -> the declaring file."""
    decls: Dict[str, Path] = {}
    for path in sorted(folder.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        group = False  # inside a parenthesised type, var or const group
        for line in _go_code(path).splitlines():
            if re.match(r"^(type|var|const)\s*\(", line):
                group = True
                continue
            if group:
                if line.startswith(")"):
                    group = False
                elif re.match(r"^\t[A-Za-z_]", line):  # one tab: a spec of the group
                    for part in line.split("=")[0].split(","):
                        words = part.split()
                        if words and re.fullmatch(r"[A-Za-z_]\w*", words[0]):
                            decls.setdefault(words[0], path)
                continue
            # func Name (not methods: func (r T) Name), type/var/const Name
            m = re.match(r"^(?:func|type|var|const)\s+([A-Za-z_]\w*)", line)
            if m:
                decls.setdefault(m.group(1), path)
    return decls


def go_uses(root: Path, path: Path) -> Iterator[Arrow]:
    """Uses of package-level identifiers declared in another non-test file of the package."""
    decls = _go_package_decls(path.parent)
    for number, line in enumerate(_go_code(path).splitlines(), 1):
        if line.startswith("package ") or line.startswith("import "):
            continue
        for m in _GO_IDENT.finditer(line):
            target = decls.get(m.group(0))
            if target is not None and target != path:
                yield number, target.relative_to(root).as_posix(), m.group(0)


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

# The Go binding, bottom to top: the cgo layer takes and returns C-shaped values only (C
# structs and scalars, unsafe pointers, DLTensor pointers); the idiomatic layer (the utility
# files, tensors, errors, handles) converts Go values to them and back.
GO_LAYERS = (
    Layer("cgo", ("bindings/go/capi", "bindings/go/link_", "bindings/go/build_requires_cgo"),
          (), "the cgo calls and C memory: C-shaped values only, nothing of the layer above"),
    Layer("go", "bindings/go/", ("cgo",),
          "the idiomatic API: Go types, defaults and conversions to and from C"),
)

RULE_SETS = (
    RuleSet(
        name="src",
        files=("include/**/*.h", "kernels/**/*.h", "kernels/**/*.cuh", "kernels/**/*.cu",
               "src/**/*.h", "src/**/*.cpp"),
        layers=SRC_LAYERS,
        arrows=c_includes(("include", "src", ".")),
    ),
    RuleSet(
        name="go",
        files=("bindings/go/*.go",),
        layers=GO_LAYERS,
        arrows=go_uses,
    ),
)


def _starts(rel: str, prefix) -> bool:
    return rel.startswith(prefix)


def layer_of(rules: RuleSet, rel: str):
    for layer in rules.layers:
        if _starts(rel, layer.prefix):
            return layer
    return None


def check(root: Path, rules: RuleSet, quiet: bool) -> int:
    """Prints the rule set's arrows and back arrows; returns the number of back arrows."""
    by_name = {layer.name: layer for layer in rules.layers}
    for layer in rules.layers:
        for used in layer.may_use:
            assert used in by_name, f"{rules.name}: {layer.name} may use unknown layer {used}"
    files = sorted({p for g in rules.files for p in root.glob(g)
                    if p.is_file() and not p.name.endswith("_test.go")})
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
            prefix = layer.prefix if isinstance(layer.prefix, str) else " ".join(layer.prefix)
            print(f"  {layer.name:8} {prefix:12} uses {uses}: {layer.why}")
        print(f"== {rules.name}: arrows (uses per pair of layers)")
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
