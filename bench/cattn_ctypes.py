"""A ctypes mirror of include/cattn.h for the benchmark runner (bench/side_by_side.py).

Every struct below lists its fields in the header's order. check_layout() compares each mirror
with the layout the C compiler produced (the JSON printed by bench/print_sizes.c, built by
CMake as cattn_print_sizes): a size or a field offset that differs means the mirror is stale,
and calling the library with it would be undefined behaviour, so the runner refuses to start.

Tensors: HostTensor wraps a numpy array in a DLTensor that borrows the array's memory and keeps
the array (and the shape/strides arrays DLPack points at) alive as long as the wrapper lives.
"""
import ctypes
import json
import subprocess

import numpy as np

# ---- DLPack (DLPACK_VERSION 0.6+, Debian libdlpack-dev; layout identical to DLPack 1.x) ----
kDLCPU = 1
kDLCUDA = 2
kDLInt = 0
kDLUInt = 1
kDLFloat = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DLPTR = ctypes.POINTER(DLTensor)
_p = ctypes.c_void_p
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_u32 = ctypes.c_uint32
_size = ctypes.c_size_t
_enum = ctypes.c_int  # C enums are int-sized on every ABI libcattn targets

# ---- status ----
CATTN_OK = 0
CATTN_NOT_IMPLEMENTED = 7
CATTN_DCP_ALL_RANKS = -1
CATTN_MAMBA_CACHE_MODE_NONE = 0
CATTN_MAMBA_CACHE_MODE_ALL = 1
CATTN_MAMBA_CACHE_MODE_ALIGN = 2


class cattn_common_attn_metadata_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("query_start_loc", _DLPTR),
        ("query_start_loc_cpu", _DLPTR),
        ("seq_lens", _DLPTR),
        ("seq_lens_cpu", _DLPTR),
        ("num_computed_tokens_cpu", _DLPTR),
        ("block_table_tensor", _DLPTR),
        ("slot_mapping", _DLPTR),
        ("logits_indices_padded", _DLPTR),
        ("num_reqs", _i64),
        ("num_actual_tokens", _i64),
        ("max_query_len", _i64),
        ("max_seq_len", _i64),
        ("num_logits_indices", _i64),
        ("causal", _i32),
        ("reserved0", _i32),
    ]


class cattn_kv_cache_layout_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("supported_mask", _u32),
        ("read_environment", _i32),
        ("env_value", ctypes.c_char_p),
        ("connector_layout", _enum),
        ("layout", _enum),
    ]


class cattn_dcp_local_seq_lens_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("seq_lens", _DLPTR),
        ("dcp_size", _i64),
        ("dcp_rank", _i64),
        ("dcp_kv_cache_interleave_size", _i64),
        ("out", _DLPTR),
        ("stream", _p),
    ]


class cattn_pcp_query_restore_idx_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("cu_num_tokens", _DLPTR),
        ("restore_idx", _DLPTR),
        ("stream", _p),
    ]


class cattn_fused_pcp_qkv_select_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("q", _DLPTR),
        ("k", _DLPTR),
        ("v", _DLPTR),
        ("query_start_loc", _DLPTR),
        ("pcp_world_size", _i64),
        ("pcp_rank", _i64),
        ("q_head", _DLPTR),
        ("k_head", _DLPTR),
        ("v_head", _DLPTR),
        ("q_tail", _DLPTR),
        ("k_tail", _DLPTR),
        ("v_tail", _DLPTR),
        ("stream", _p),
    ]


class cattn_pcp_kv_allgather_and_restore_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("comm", _p),
        ("key", _DLPTR),
        ("value", _DLPTR),
        ("num_actual_tokens", _i64),
        ("restore_idx", _DLPTR),
        ("key_out", _DLPTR),
        ("value_out", _DLPTR),
        ("workspace", _p),
        ("workspace_size", _size),
        ("stream", _p),
    ]


class cattn_causal_conv1d_metadata_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("query_start_loc_cpu", _DLPTR),
        ("block_m", _i64),
        ("nums", _DLPTR),
        ("mlist", _DLPTR),
        ("offsetlist", _DLPTR),
        ("batch_ptr", _DLPTR),
        ("token_chunk_offset_ptr", _DLPTR),
        ("tot", _i64),
        ("stream", _p),
    ]


class cattn_extend_all_queries_by_n_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("metadata", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("n", _i64),
        ("new_slot_mapping", _DLPTR),
        ("out", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("stream", _p),
    ]


class cattn_fast_prefill_metadata_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("metadata", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("out", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("decode_max_and_total", _DLPTR),
        ("passthrough", _i32),
        ("reserved0", _i32),
        ("stream", _p),
    ]


class cattn_local_attention_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("attn_chunk_size", _i64),
        ("block_size", _i64),
        ("metadata", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("plan", _p),
    ]


class cattn_local_attention_fill_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("metadata", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("out", ctypes.POINTER(cattn_common_attn_metadata_t)),
        ("stream", _p),
    ]


class cattn_mamba_block_table_args_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("block_table", _DLPTR),
        ("seq_lens", _DLPTR),
        ("block_size", _i64),
        ("num_speculative_blocks", _i64),
        ("mamba_cache_mode", _i32),
        ("reserved0", _i32),
        ("out", _DLPTR),
        ("stream", _p),
    ]


class cattn_attention_layer_desc_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("sliding_window_left", _i64),
        ("sliding_window_right", _i64),
        ("logits_soft_cap", ctypes.c_double),
        ("scale", ctypes.c_double),
        ("has_sliding_window", _i32),
        ("has_logits_soft_cap", _i32),
        ("has_sinks", _i32),
        ("reserved0", _i32),
    ]


class cattn_per_layer_parameters_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("window_left", _i64),
        ("logits_soft_cap", ctypes.c_double),
        ("sm_scale", ctypes.c_double),
        ("has_logits_soft_cap", _i32),
        ("has_sinks", _i32),
    ]


class cattn_global_hyperparameters_t(ctypes.Structure):
    _fields_ = [
        ("struct_size", _size),
        ("window_left", _i64),
        ("logits_soft_cap", ctypes.c_double),
        ("sm_scale", ctypes.c_double),
        ("has_logits_soft_cap", _i32),
        ("has_sinks", _i32),
        ("has_same_window_lefts", _i32),
        ("has_same_all_params", _i32),
    ]


MIRRORS = [
    DLTensor,
    cattn_common_attn_metadata_t,
    cattn_kv_cache_layout_args_t,
    cattn_dcp_local_seq_lens_args_t,
    cattn_pcp_query_restore_idx_args_t,
    cattn_fused_pcp_qkv_select_args_t,
    cattn_pcp_kv_allgather_and_restore_args_t,
    cattn_causal_conv1d_metadata_args_t,
    cattn_extend_all_queries_by_n_args_t,
    cattn_fast_prefill_metadata_args_t,
    cattn_local_attention_args_t,
    cattn_local_attention_fill_args_t,
    cattn_mamba_block_table_args_t,
    cattn_attention_layer_desc_t,
    cattn_per_layer_parameters_t,
    cattn_global_hyperparameters_t,
]


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
_SIGNATURES = {
    "cattn_version": (_u32, []),
    "cattn_status_string": (ctypes.c_char_p, [_enum]),
    "cattn_last_error_message": (ctypes.c_char_p, []),
    "cattn_get_dcp_local_seq_lens": (_enum, [ctypes.POINTER(cattn_dcp_local_seq_lens_args_t)]),
    "cattn_get_pcp_query_restore_idx_size": (_enum, [_DLPTR, ctypes.POINTER(_i64)]),
    "cattn_get_pcp_query_restore_idx": (
        _enum, [ctypes.POINTER(cattn_pcp_query_restore_idx_args_t)]),
    "cattn_fused_pcp_qkv_select": (_enum, [ctypes.POINTER(cattn_fused_pcp_qkv_select_args_t)]),
    "cattn_compute_causal_conv1d_metadata_size": (
        _enum, [_DLPTR, _i64, ctypes.POINTER(_i64), ctypes.POINTER(_i64)]),
    "cattn_compute_causal_conv1d_metadata": (
        _enum, [ctypes.POINTER(cattn_causal_conv1d_metadata_args_t)]),
    "cattn_extend_all_queries_by_n": (
        _enum, [ctypes.POINTER(cattn_extend_all_queries_by_n_args_t)]),
    "cattn_make_kv_sharing_fast_prefill_common_attn_metadata": (
        _enum, [ctypes.POINTER(cattn_fast_prefill_metadata_args_t)]),
    "cattn_make_local_attention_virtual_batches": (
        _enum, [ctypes.POINTER(cattn_local_attention_args_t)]),
    "cattn_local_attention_plan_destroy": (None, [_p]),
    "cattn_local_attention_plan_get_shape": (
        _enum, [_p, ctypes.POINTER(_i64), ctypes.POINTER(_i64)]),
    "cattn_local_attention_plan_fill": (
        _enum, [_p, ctypes.POINTER(cattn_local_attention_fill_args_t)]),
    "cattn_local_attention_plan_make_block_table": (_enum, [_p, _DLPTR, _DLPTR, _p]),
    "cattn_mamba_get_block_table_tensor": (
        _enum, [ctypes.POINTER(cattn_mamba_block_table_args_t)]),
}


class CattnError(RuntimeError):
    def __init__(self, fn, status, message):
        super().__init__(f"{fn}: {status} {message}")
        self.status = status


def load(path):
    lib = ctypes.CDLL(path)
    for name, (res, args) in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


def check(lib, fn, status):
    """Raises CattnError with the library's message unless status is CATTN_OK."""
    if status != CATTN_OK:
        raise CattnError(fn, lib.cattn_status_string(status).decode(),
                         lib.cattn_last_error_message().decode())
