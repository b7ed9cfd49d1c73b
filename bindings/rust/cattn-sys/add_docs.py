#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Documents what bindgen leaves bare in the formatted bindings (regenerate.sh runs this):
the constants of the header's #defines (bindgen copies no macro comment; the text here is the
Doxygen comment above the #define, or its trailing /**< */ one, or, for a #define right below
another under one comment, that comment), and the items of the DLPack
and libc headers and opaque handle structs, from the short table below.
Usage: add_docs.py HEADER BINDINGS (rewritten in place)."""
import re
import sys

header, bindings = sys.argv[1], sys.argv[2]

FIXED = {
    "__uint8_t": "The C type `uint8_t`, as glibc names it (DLPack's types use it).",
    "__uint16_t": "The C type `uint16_t`, as glibc names it (DLPack's types use it).",
    "__int32_t": "The C type `int32_t`, as glibc names it (DLPack's types use it).",
    "__uint32_t": "The C type `uint32_t`, as glibc names it (DLPack's types use it).",
    "__int64_t": "The C type `int64_t`, as glibc names it (DLPack's types use it).",
    "__uint64_t": "The C type `uint64_t`, as glibc names it (DLPack's types use it).",
    "DLDeviceType": "DLPack's device type, an integer here (libcattn reads it as one).",
    "DLDevice": "DLPack's device: its type and ordinal.",
    "DLDevice.device_type": "The device type (`kDLCPU`, `kDLCUDA`, ...).",
    "DLDevice.device_id": "The device ordinal (0 for the host).",
    "DLDataTypeCode": "DLPack's type code, an integer here (`kDLInt`, `kDLFloat`, ...).",
    "DLDataType": "DLPack's element type: code, bits and lanes.",
    "DLDataType.code": "The type code (`kDLInt`, `kDLUInt`, `kDLFloat`, `kDLBfloat`, ...).",
    "DLDataType.bits": "Bits per lane: 8, 16, 32 or 64 for libcattn.",
    "DLDataType.lanes": "Lanes per element: libcattn takes 1 only.",
    "DLTensor": "DLPack's borrowed tensor view: data, device, shape, strides and byte offset.",
    "DLTensor.data": "The base address; element 0 is at `data + byte_offset`.",
    "DLTensor.device": "Where the memory lives.",
    "DLTensor.ndim": "The number of dimensions.",
    "DLTensor.dtype": "The element type.",
    "DLTensor.shape": "`ndim` sizes.",
    "DLTensor.strides": "`ndim` strides in elements, or NULL for compact row-major.",
    "DLTensor.byte_offset": "Bytes from `data` to element 0.",
    "CUstream_st": "CUDA's stream, opaque: `cattn_stream_t` is a pointer to it.",
    "cattn_context_s": "Opaque: the object behind `cattn_context_t`, never dereferenced.",
    "cattn_comm_s": "Opaque: the object behind `cattn_comm_t`, never dereferenced.",
    "cattn_local_attention_plan_s":
        "Opaque: the object behind `cattn_local_attention_plan_t`, never dereferenced.",
    "cattn_step_plan_s": "Opaque: the object behind `cattn_step_plan_t`, never dereferenced.",
}
DLPACK_CONSTANTS = {
    "kDLCPU": "Host memory.", "kDLCUDA": "CUDA device memory.",
    "kDLCUDAHost": "Pinned host memory (host memory for libcattn).",
    "kDLOpenCL": "OpenCL (not supported).", "kDLVulkan": "Vulkan (not supported).",
    "kDLMetal": "Metal (not supported).", "kDLVPI": "VPI (not supported).",
    "kDLROCM": "ROCm (not supported).", "kDLROCMHost": "ROCm pinned host (not supported).",
    "kDLExtDev": "Another device (not supported).",
    "kDLCUDAManaged": "CUDA managed memory (a device tensor for libcattn).",
    "kDLInt": "Signed integer.", "kDLUInt": "Unsigned integer.", "kDLFloat": "IEEE float.",
    "kDLOpaqueHandle": "Opaque handle (not supported).", "kDLBfloat": "bfloat16.",
    "kDLComplex": "Complex (not supported).",
}


def clean(lines):
    text = " ".join(re.sub(r"^\s*(/\*\*<?|\*/|\*)?\s?", "", l).replace("*/", "").strip()
                    for l in lines)
    return " ".join(text.split())


def macro_docs(src):
    docs, lines = {}, src.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"#define (CATTN_\w+)", line)
        if not m or m.group(1) in docs:
            continue
        name, trailing = m.group(1), re.search(r"/\*\*<(.*?)\*/", line)
        if trailing:
            docs[name] = clean([trailing.group(1)])
            continue
        j = i - 1
        prev = re.match(r"#define (CATTN_\w+)", lines[j]) if j >= 0 else None
        if prev and prev.group(1) in docs and not re.search(r"/\*\*<", lines[j]):
            # A run of #defines under one comment (CATTN_STEP_COUNT_SPLIT_*) shares it.
            docs[name] = docs[prev.group(1)]
            continue
        if j >= 0 and lines[j].rstrip().endswith("*/"):
            start = j
            while start >= 0 and "/**" not in lines[start] and "/*" not in lines[start]:
                start -= 1
            if start >= 0 and "/**" in lines[start]:
                docs[name] = clean(lines[start:j + 1])
    return docs


def rust_str(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


docs = macro_docs(open(header).read())
docs.update(DLPACK_CONSTANTS)
out, lines = [], open(bindings).read().split("\n")
struct = None
for i, line in enumerate(lines):
    prev = lines[i - 1].strip() if i else ""
    has_doc = prev.startswith("#[doc") or prev.startswith("#[derive") or prev.startswith("#[repr")
    m = re.match(r"(\s*)pub (const|type|struct) (\w+)", line)
    f = re.match(r"(\s*)pub (\w+):", line)
    text = None
    if m:
        kind, name = m.group(2), m.group(3)
        struct = name if kind == "struct" else None
        if not prev.startswith("#[doc"):
            text = docs.get(name) if kind == "const" else FIXED.get(name)
    elif f and struct and not prev.startswith("#[doc"):
        text = FIXED.get(struct + "." + f.group(2))
    elif line.startswith("}"):
        struct = None
    if text:
        indent = (m or f).group(1)
        # Attributes stay next to the item: the doc goes above #[repr]/#[derive] lines.
        k = len(out)
        while k and out[k - 1].strip().startswith(("#[repr", "#[derive")):
            k -= 1
        out.insert(k, f'{indent}#[doc = " {rust_str(text)}"]')
    out.append(line)
open(bindings, "w").write("\n".join(out))
