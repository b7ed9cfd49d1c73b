# SPDX-License-Identifier: Apache-2.0
"""Generates the three mirrors of include/cattn.h's ABI from the header itself:

  src/abi_layout.cpp   static_asserts pinning the size and every field offset of each public
                       struct (the function table included), as the C compiler lays them out;
  bench/print_sizes.c  a program printing those sizes and offsets as JSON at run time;
  bench/cattn_abi.py   ctypes mirrors of every struct and the signature of every function,
                       for the Python benchmark runners.

After a release the committed asserts are the contract: a regenerated abi_layout.cpp must still
contain every old line unchanged (review the diff); appended fields only add lines.

Usage: python3 scripts/gen_abi_layout.py [--check] [--cc CC]
  --check  writes nothing; exits 1 and names the stale file when a mirror differs from what the
           header gives (CTest runs this, so a header change cannot leave a mirror behind).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(REPO, "include", "cattn.h")
OUTPUTS = {
    "layout": os.path.join(REPO, "src", "abi_layout.cpp"),
    "print_sizes": os.path.join(REPO, "bench", "print_sizes.c"),
    "ctypes": os.path.join(REPO, "bench", "cattn_abi.py"),
}


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def structs(text):
    """(typedef name, [(field type, field name, array length or None)]) for every
    `typedef struct ... { ... } name_t;`, in header order. Function-pointer fields get the
    type "fnptr"."""
    out = []
    for m in re.finditer(r"typedef struct (\w+) \{(.*?)\} (\w+);", strip_comments(text), re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fp = re.search(r"\(\*(\w+)\)", decl)
            if fp:
                fields.append(("fnptr", fp.group(1), None))
                continue
            f = re.match(r"(.*?)\s*\b(\w+)\s*(?:\[([^\]]*)\])?$", decl)
            fields.append((f.group(1).strip(), f.group(2), f.group(3)))
        out.append((m.group(3), fields))
    return out


def functions(text):
    """(return type, name, [parameter types]) of every CATTN_API declaration."""
    out = []
    for m in re.finditer(r"CATTN_API\s+([^;{]*?)\b(cattn_\w+)\s*\(([^;]*?)\)\s*;",
                         strip_comments(text), re.S):
        params = " ".join(m.group(3).split())
        types = []
        if params not in ("", "void"):
            for p in params.split(","):
                p = p.strip()
                # Drop the parameter's name: the last identifier, unless it is the type itself.
                t = re.sub(r"\s*\b\w+$", "", p) if re.search(r"[\s*]\w+$", p) else p
                types.append(t.strip())
        out.append((" ".join(m.group(1).split()), m.group(2), types))
    return out


SCALARS = {
    "size_t": "ctypes.c_size_t",
    "int64_t": "ctypes.c_int64",
    "int32_t": "ctypes.c_int32",
    "uint32_t": "ctypes.c_uint32",
    "uint8_t": "ctypes.c_uint8",
    "double": "ctypes.c_double",
    "void": "None",
}


def ctype(t, struct_names):
    """The ctypes expression for a C type of the header."""
    t = " ".join(t.replace("const ", "").split())
    if t == "char*":
        return "ctypes.c_char_p"
    if t in ("cattn_stream_t", "void*", "fnptr"):
        return "ctypes.c_void_p"
    if t.endswith("**"):
        return "ctypes.c_void_p"  # out-pointers to opaque handles
    if t.endswith("*"):
        base = t[:-1].strip()
        if base in ("DLTensor",) or base in struct_names:
            return f"ctypes.POINTER({base})"
        if base in SCALARS:
            return f"ctypes.POINTER({SCALARS[base]})"
        return "ctypes.c_void_p"  # opaque handles
    if t in SCALARS:
        return SCALARS[t]
    if t in struct_names:
        return t
    if t.endswith("_t") and t.startswith("cattn_"):
        return "ctypes.c_int"  # enums (cattn_status_t, layouts): int-sized on every target ABI
    raise SystemExit(f"gen_abi_layout: no ctypes mapping for C type '{t}'")


def compiler_layout(found, cc, include_dirs):
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "cattn.h"', "int main(void) {"]
    for name, fields in found:
        lines.append(f'  printf("S {name} %zu\\n", sizeof({name}));')
        for _, f, _ in fields:
            lines.append(f'  printf("F {name} {f} %zu\\n", offsetof({name}, {f}));')
    lines.append("  return 0;\n}")
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
        open(src, "w").write("\n".join(lines))
        flags = [f"-I{p}" for p in [os.path.join(REPO, "include")] + include_dirs if p]
        subprocess.run([cc, "-std=c99", *flags, src, "-o", exe], check=True)
        return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")


def gen_layout(rows):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// Pins the ABI of libcattn 1.x: the size and every field offset of each public struct",
        "// and of the function table, as released. A change that moves a released field fails",
        "// the build here. Generated by scripts/gen_abi_layout.py (at 1.0, and since then only",
        "// for appended fields: the size line changes, new lines are added, nothing else).",
        "#include <cstddef>",
        "",
        '#include "cattn.h"',
        "",
        "#if defined(__x86_64__) || defined(__aarch64__)  // LP64: the layouts below",
    ]
    for r in rows:
        p = r.split()
        if not p:
            continue
        if p[0] == "S":
            out.append(f"static_assert(sizeof({p[1]}) == {p[2]}, \"{p[1]} size changed\");")
        else:
            out.append(f"static_assert(offsetof({p[1]}, {p[2]}) == {p[3]}, "
                       f"\"{p[1]}.{p[2]} moved\");")
    out.append("#endif")
    return "\n".join(out) + "\n"


DLPACK_STRUCTS = [("DLTensor", ["data", "device", "ndim", "dtype", "shape", "strides",
                                "byte_offset"])]


def gen_print_sizes(found):
    out = [
        "/* SPDX-License-Identifier: Apache-2.0 */",
        "/* Prints, as JSON, the size of every struct that crosses libcattn's ABI and the offset of",
        " * each field, as this compiler lays them out from cattn.h. bench/cattn_ctypes.py compares",
        " * the ctypes mirror (bench/cattn_abi.py) with it before any call is made. Generated by",
        " * scripts/gen_abi_layout.py from the header; do not edit. */",
        "#include <stddef.h>",
        "#include <stdio.h>",
        "",
        '#include "cattn.h"',
        "",
        "static int first_struct = 1;",
        "static int first_field = 1;",
        "",
        "static void begin(const char* name, size_t size) {",
        '  printf("%s\\n  \\"%s\\": {\\"size\\": %zu, \\"fields\\": {", first_struct ? "" : ",", '
        "name, size);",
        "  first_struct = 0;",
        "  first_field = 1;",
        "}",
        "",
        "static void field(const char* name, size_t offset) {",
        '  printf("%s\\"%s\\": %zu", first_field ? "" : ", ", name, offset);',
        "  first_field = 0;",
        "}",
        "",
        'static void end(void) { printf("}}"); }',
        "",
        "#define BEGIN(T) begin(#T, sizeof(T))",
        "#define FIELD(T, f) field(#f, offsetof(T, f))",
        "",
        "int main(void) {",
        '  printf("{");',
    ]
    for name, fields in DLPACK_STRUCTS + [(n, [f for _, f, _ in fs]) for n, fs in found]:
        out.append(f"  BEGIN({name});")
        for f in fields:
            out.append(f"  FIELD({name}, {f});")
        out.append("  end();")
    out += ['  printf("\\n}\\n");', "  return 0;", "}"]
    return "\n".join(out) + "\n"


# Integer macros of the header (e.g. CATTN_COMM_UNIQUE_ID_BYTES) by name, for array lengths
# that name one; filled from the header in main().
ARRAY_LENGTHS = {}


def gen_ctypes(found, funcs):
    names = {n for n, _ in found}
    out = [
        "# SPDX-License-Identifier: Apache-2.0",
        '"""ctypes mirrors of include/cattn.h: every struct, field for field in header order, and',
        "every function's signature. Generated by scripts/gen_abi_layout.py from the header; do not",
        'edit (CTest fails when this file is stale). bench/cattn_ctypes.py builds on it."""',
        "import ctypes",
        "",
        "",
        "# DLPack's (Debian libdlpack-dev, layout identical to DLPack 1.x); print_sizes checks them.",
        "class DLDevice(ctypes.Structure):",
        '    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]',
        "",
        "",
        "class DLDataType(ctypes.Structure):",
        '    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), '
        '("lanes", ctypes.c_uint16)]',
        "",
        "",
        "class DLTensor(ctypes.Structure):",
        "    _fields_ = [",
        '        ("data", ctypes.c_void_p),',
        '        ("device", DLDevice),',
        '        ("ndim", ctypes.c_int),',
        '        ("dtype", DLDataType),',
        '        ("shape", ctypes.POINTER(ctypes.c_int64)),',
        '        ("strides", ctypes.POINTER(ctypes.c_int64)),',
        '        ("byte_offset", ctypes.c_uint64),',
        "    ]",
    ]
    for name, fields in found:
        out += ["", "", f"class {name}(ctypes.Structure):", "    _fields_ = ["]
        for t, f, n in fields:
            ct = ctype(t, names)
            if n:
                ct = f"{ct} * {ARRAY_LENGTHS.get(n, n)}"
            out.append(f'        ("{f}", {ct}),')
        out.append("    ]")
    out += ["", "", "STRUCTS = [DLTensor, " + ", ".join(n for n, _ in found) + "]", "",
            "# name: (restype, argtypes)", "SIGNATURES = {"]
    for ret, name, params in funcs:
        args = ", ".join(ctype(p, names) for p in params)
        out.append(f'    "{name}": ({ctype(ret, names)}, [{args}]),')
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--include", action="append", default=[],
                    help="another folder to search for headers (dlpack/dlpack.h); repeatable")
    a = ap.parse_args()
    text = open(HEADER).read()
    ARRAY_LENGTHS.update(re.findall(r"^#define\s+(CATTN_\w+)\s+\(?(\d+)u?\)?\s*$", text, re.M))
    found = structs(text)
    if "CATTN_COMM_UNIQUE_ID_BYTES 128" not in text:
        raise SystemExit("gen_abi_layout: CATTN_COMM_UNIQUE_ID_BYTES is no longer 128")
    want = {
        "layout": gen_layout(compiler_layout(found, a.cc, a.include)),
        "print_sizes": gen_print_sizes(found),
        "ctypes": gen_ctypes(found, functions(text)),
    }
    stale = []
    for key, content in want.items():
        path = OUTPUTS[key]
        have = open(path).read() if os.path.exists(path) else None
        if a.check:
            if have != content:
                stale.append(os.path.relpath(path, REPO))
        elif have != content:
            open(path, "w").write(content)
            print(f"wrote {os.path.relpath(path, REPO)}")
    if stale:
        print("gen_abi_layout: stale mirror(s) of include/cattn.h: " + ", ".join(stale) +
              " (run python3 scripts/gen_abi_layout.py and commit the result)", file=sys.stderr)
        return 1
    if a.check:
        print(f"gen_abi_layout: {len(found)} structs, {len(functions(text))} functions: "
              "every mirror is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
