# SPDX-License-Identifier: Apache-2.0
"""The runner's side of the ctypes mirror of include/cattn.h (bench/side_by_side.py,
bench/gpu_side_by_side.py): constants, helpers that build args structs, DLTensor views of numpy
arrays, and the loaded library. The structs and signatures themselves are generated from the
header into bench/cattn_abi.py (scripts/gen_abi_layout.py); check_layout() still compares them
with the layout the C compiler produced (bench/print_sizes.c, built by CMake as
cattn_print_sizes), so a runner built against another header refuses to start.

Tensors: HostTensor wraps a numpy array in a DLTensor that borrows the array's memory and keeps
the array (and the shape/strides arrays DLPack points at) alive as long as the wrapper lives.
"""
import ctypes
import json
import subprocess

import numpy as np

from cattn_abi import *  # noqa: F401,F403 - the generated structs, STRUCTS and SIGNATURES
from cattn_abi import DLDataType, DLDevice, DLTensor, SIGNATURES, STRUCTS

kDLCPU = 1
kDLCUDA = 2
kDLInt = 0
kDLUInt = 1
kDLFloat = 2

CATTN_OK = 0
CATTN_DCP_ALL_RANKS = -1
CATTN_MAMBA_CACHE_MODE_NONE = 0
CATTN_MAMBA_CACHE_MODE_ALL = 1
CATTN_MAMBA_CACHE_MODE_ALIGN = 2

MIRRORS = STRUCTS


def new(struct_type, **fields):
    """An instance of an args struct with struct_size set, like the header's *_INIT macros."""
    s = struct_type()
    s.struct_size = ctypes.sizeof(struct_type)
    for k, v in fields.items():
        setattr(s, k, v)
    return s


def new_metadata(**fields):
    """cattn_common_attn_metadata_t as CATTN_COMMON_ATTN_METADATA_INIT (causal = 1)."""
    return new(cattn_common_attn_metadata_t, causal=1, **fields)


def check_layout(c_layout):
    """Compares every mirror with the compiler's layout (dict from print_sizes). Returns a list of
    problems; empty means the mirror is exact."""
    problems = []
    for cls in MIRRORS:
        name = cls.__name__
        if name not in c_layout:
            problems.append(f"{name}: not in print_sizes output")
            continue
        c = c_layout[name]
        if ctypes.sizeof(cls) != c["size"]:
            problems.append(f"{name}: ctypes size {ctypes.sizeof(cls)}, C size {c['size']}")
        mirror_fields = [f[0] for f in cls._fields_]
        if mirror_fields != list(c["fields"].keys()):
            problems.append(f"{name}: fields {mirror_fields}, C has {list(c['fields'].keys())}")
        for fname, off in c["fields"].items():
            if hasattr(cls, fname) and getattr(cls, fname).offset != off:
                problems.append(f"{name}.{fname}: ctypes offset {getattr(cls, fname).offset}, "
                                f"C offset {off}")
    return problems


def check_layout_with(print_sizes_exe):
    out = subprocess.run([print_sizes_exe], check=True, capture_output=True, text=True).stdout
    return check_layout(json.loads(out))


# ---- tensors ----
_DTYPES = {
    np.dtype(np.int32): (kDLInt, 32),
    np.dtype(np.int64): (kDLInt, 64),
    np.dtype(np.int16): (kDLInt, 16),
    np.dtype(np.int8): (kDLInt, 8),
    np.dtype(np.uint8): (kDLUInt, 8),
    np.dtype(np.uint16): (kDLUInt, 16),
    np.dtype(np.float32): (kDLFloat, 32),
    np.dtype(np.float64): (kDLFloat, 64),
    np.dtype(np.float16): (kDLFloat, 16),
}


class HostTensor:
    """A DLTensor view (kDLCPU) of a numpy array; strides are passed as numpy's, in elements."""

    def __init__(self, array):
        a = np.asarray(array)
        self.array = a
        code, bits = _DTYPES[a.dtype]
        self._shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        item = a.itemsize
        if a.ndim > 0 and any(s % item for s in a.strides):
            raise ValueError("strides must be multiples of the element size")
        self._strides = (ctypes.c_int64 * max(a.ndim, 1))(*[s // item for s in a.strides])
        self.dl = DLTensor()
        self.dl.data = a.ctypes.data
        self.dl.device = DLDevice(kDLCPU, 0)
        self.dl.ndim = a.ndim
        self.dl.dtype = DLDataType(code, bits, 1)
        self.dl.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        contiguous = a.flags["C_CONTIGUOUS"]
        self.dl.strides = (None if contiguous else
                           ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)))
        self.dl.byte_offset = 0
        # A struct that stores ctypes.pointer(self.dl) keeps the DLTensor alive; this keeps the
        # memory it points at alive with it, even when the HostTensor wrapper is dropped.
        self.dl._keep = (a, self._shape, self._strides)

    @property
    def ptr(self):
        return ctypes.pointer(self.dl)


# ---- the library ----
class CattnError(RuntimeError):
    def __init__(self, fn, status, message):
        super().__init__(f"{fn}: {status} {message}")
        self.status = status


def load(path):
    lib = ctypes.CDLL(path)
    for name, (res, args) in SIGNATURES.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def check(lib, fn, status):
    """Raises CattnError with the library's message unless status is CATTN_OK."""
    if status != CATTN_OK:
        raise CattnError(fn, lib.cattn_status_string(status).decode(),
                         lib.cattn_last_error_message().decode())


def fused_select_rows(lib, num_q_rows, world, rank):
    """The row counts of cattn_fused_pcp_qkv_select's outputs, from the library's size query
    (cattn_fused_pcp_qkv_select_size): (q_head and q_tail, k_head and v_head, k_tail and
    v_tail)."""
    q, head, tail = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    check(lib, "cattn_fused_pcp_qkv_select_size",
          lib.cattn_fused_pcp_qkv_select_size(num_q_rows, world, rank, ctypes.byref(q),
                                              ctypes.byref(head), ctypes.byref(tail)))
    return q.value, head.value, tail.value
