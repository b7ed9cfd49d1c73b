#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Translates the header's struct initialisers (`#define CATTN_<X>_INIT { ... }`) into Rust
constants of the generated structs (regenerate.sh runs this), so that the safe crate takes every
default from the header - `sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT.dcp_size` - instead of
stating it again. bindgen skips these macros: they are brace lists, not expressions.

An initialiser is translated when its first entry is a `CATTN_<Y>_SIZE` macro defined as
`((size_t)sizeof(<type>))` (that names the struct), or when it is another translated
initialiser's name (an alias). The entries are matched to the fields of the generated struct in
order, nested braces to nested structs and arrays, and missing entries are zero, as in C.
Scalars are cast to the field's type (`CATTN_NOT_GIVEN as i64`), NULL is a null pointer, a
`CATTN_<Y>_SIZE` is the struct's `size_of`. An initialiser with anything else (a value this
script cannot type) is left out, and named on stderr.

Usage: init_consts.py HEADER BINDINGS OUTPUT. BINDINGS is the formatted bindings (read only);
OUTPUT receives the constants, unformatted (regenerate.sh formats them and appends them)."""
import re
import sys

header, bindings, output = sys.argv[1], sys.argv[2], sys.argv[3]
src = open(header).read()
# Join continued lines, and drop comments so that they do not end up in a value.
joined = re.sub(r"\\\n", " ", src)
code = re.sub(r"/\*.*?\*/", " ", joined, flags=re.S)

defines = {}
for m in re.finditer(r"^\s*#\s*define\s+(CATTN_\w+)[ \t]+(.*)$", code, flags=re.M):
    defines[m.group(1)] = " ".join(m.group(2).split())

size_types = {}
for name, body in defines.items():
    m = re.fullmatch(r"\(\(size_t\)\s*sizeof\((\w+)\)\)", body)
    if m:
        size_types[name] = m.group(1)
# A SIZE macro that names another one (CATTN_X_SIZE CATTN_Y_SIZE) has its type.
for name, body in defines.items():
    if name not in size_types and body in size_types:
        size_types[name] = size_types[body]

rs = open(bindings).read()
consts = set(re.findall(r"^pub const (\w+):", rs, flags=re.M))
aliases = {n: " ".join(t.split())
           for n, t in re.findall(r"^pub type (\w+) =\s*([^;]+);", rs, flags=re.M)}
# Enum typedefs: `pub use self::cattn_x_e as cattn_x_t;`.
aliases.update({n: t for t, n in re.findall(r"^pub use self::(\w+) as (\w+);", rs, flags=re.M)})
structs = {}
for m in re.finditer(r"^pub struct (\w+) \{\n(.*?)\n\}", rs, flags=re.M | re.S):
    fields = []
    for line in m.group(2).split("\n"):
        f = re.match(r"\s*pub (\w+): (.+),$", line.rstrip())
        if f:
            fields.append((f.group(1), f.group(2)))
    structs[m.group(1)] = fields


class Untranslatable(Exception):
    pass


def resolve(ty):
    """A type with its aliases followed (cattn_stream_t -> *mut CUstream_st)."""
    seen = 0
    while ty in aliases and seen < 16:
        ty = aliases[ty].strip()
        seen += 1
    return ty


def split_list(body):
    """The top-level entries of a brace list's inside."""
    items, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def unbrace(value):
    value = value.strip()
    if not (value.startswith("{") and value.endswith("}")):
        raise Untranslatable(f"expected a brace list, got {value!r}")
    return split_list(value[1:-1])


PRIMITIVES = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize", "f32",
              "f64"}


def zero(ty):
    ty = resolve(ty)
    return translate("0", ty)


def scalar(value, ty):
    v = value.strip()
    while v.startswith("(") and v.endswith(")"):
        v = v[1:-1].strip()
    if v in size_types:
        return f"::core::mem::size_of::<{size_types[v]}>() as {ty}"
    if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?[uUlLfF]*", v):
        v = v.rstrip("uUlLfF") if "." not in v else v.rstrip("fFlL")
        if ty in ("f32", "f64") and "." not in v and "e" not in v.lower():
            v += ".0"
        return f"{v} as {ty}" if not v.startswith("-") else f"({v}) as {ty}"
    if re.fullmatch(r"CATTN_\w+", v) and v in consts:
        return f"{v} as {ty}"
    if re.fullmatch(r"CATTN_\w+", v) and v in defines and v not in size_types:
        # A macro bindgen does not translate (a cast: CATTN_NOT_GIVEN ((int64_t)-1)): its
        # value, casts dropped.
        body = re.sub(r"\(\s*u?int(8|16|32|64)_t\s*\)", "", defines[v])
        return scalar(body, ty)
    raise Untranslatable(f"the value {value!r} of a {ty}")


def translate(value, ty):
    ty = resolve(ty)
    value = value.strip()
    if ty.startswith("*const ") or ty.startswith("*mut "):
        if value not in ("NULL", "0", "{NULL}", "{0}"):
            raise Untranslatable(f"the pointer value {value!r}")
        return "::core::ptr::null()" if ty.startswith("*const ") else "::core::ptr::null_mut()"
    m = re.fullmatch(r"\[(.+); (\d+)usize\]", ty)
    if m:
        elem, n = m.group(1), int(m.group(2))
        items = unbrace(value) if value.startswith("{") else [value]
        if len(items) > n:
            raise Untranslatable(f"{len(items)} entries for {ty}")
        values = [translate(v, elem) for v in items] + [zero(elem)] * (n - len(items))
        if len(set(values)) == 1:
            return f"[{values[0]}; {n}]"
        return "[" + ", ".join(values) + "]"
    if ty in structs:
        fields = structs[ty]
        if value == "0":
            items = []
        else:
            items = unbrace(value)
        if len(items) > len(fields):
            raise Untranslatable(f"{len(items)} entries for the {len(fields)} fields of {ty}")
        parts = []
        for i, (name, fty) in enumerate(fields):
            v = translate(items[i], fty) if i < len(items) else zero(fty)
            parts.append(f"{name}: {v}")
        return ty + " { " + ", ".join(parts) + " }"
    if ty in PRIMITIVES:
        return scalar(value, ty)
    raise Untranslatable(f"the type {ty}")


def macro_doc(name):
    """The Doxygen comment right above the #define, as one line."""
    lines = src.split("\n")
    for i, line in enumerate(lines):
        if re.match(rf"\s*#\s*define\s+{name}\b", line):
            j = i - 1
            if j < 0 or not lines[j].rstrip().endswith("*/"):
                return ""
            start = j
            while start >= 0 and "/*" not in lines[start]:
                start -= 1
            text = " ".join(re.sub(r"^\s*(/\*\*<?|\*/|\*)?\s?", "", l).replace("*/", "").strip()
                            for l in lines[start:j + 1])
            return " ".join(text.split())
    return ""


def rust_str(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


out, done, skipped = [], {}, []
inits = [(n, b) for n, b in defines.items() if n.endswith("_INIT")]
for name, body in inits:
    if not body.startswith("{"):
        continue
    first = split_list(body[1:-1])[0] if body.endswith("}") else ""
    if first not in size_types:
        continue  # not a struct initialiser (CATTN_KV_CACHE_LAYOUTS_INIT: an array's)
    ty = size_types[first]
    try:
        value = translate(body, ty)
    except Untranslatable as e:
        skipped.append(f"{name}: {e}")
        continue
    done[name] = ty
    out.append((name, ty, value))
for name, body in inits:
    if body in done:
        done[name] = done[body]
        out.append((name, done[body], body))

with open(output, "w") as f:
    f.write("// The header's struct initialisers as constants (init_consts.py).\n")
    for name, ty, value in out:
        doc = macro_doc(name)
        text = f"`{name}`: " + (doc if doc else f"the header's initialiser of `{ty}`.")
        f.write(f'#[doc = " {rust_str(text)}"]\n')
        f.write(f"pub const {name}: {ty} = {value};\n")
for s in skipped:
    print(f"init_consts.py: left out {s}", file=sys.stderr)
