#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Times the seed's functions (vLLM's Python, CPU tensors) and libcattn's host paths side by
side, in one process, on the same inputs.

    /usr/bin/python3 bench/side_by_side.py --lib build/libcattn.so \
        --reference <oracle dir> [--module vllm_ref] [--filter restore] [--reps 100]

--reference (default: $CATTN_ORACLE_DIR) is a directory holding a module with the seed's
functions (the seed oracle's vllm_ref, or the folder of an installed vLLM's module with --module
naming it); --baseline (default: vllm_seed_h200.json in $CATTN_BASELINE_DIR, if set) the seed's
recorded H200 times, printed for reference. bench/README.md says where both come from. Every case first checks
that both sides produce the same outputs (MISMATCH and a non-zero exit otherwise), then times
each side: a few warm-up calls, then the median of repeated calls (time.perf_counter_ns).

What is timed. Seed: one call of the seed's function, which allocates its outputs. libcattn:
what an engine does per step through the C ABI, from Python via ctypes (so ~1 us of ctypes
overhead per call is included): the size query where the output size depends on the data,
then the call into caller-owned, preallocated outputs; for the virtual batches the plan, its
shape query, the fill and the plan's destruction.

The struct mirror in cattn_ctypes.py is checked against the compiler's layout (cattn_print_sizes,
built by CMake next to the library under bench/) before anything is called.
"""
import argparse
import ctypes
import importlib
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_paths as P  # noqa: E402
import cattn_ctypes as C  # noqa: E402

# The three host utilities with a goal: at least 20x faster than the seed at B = 256 requests
# and 64k tokens.
GOAL_CASES = {
    "get_pcp_query_restore_idx B256 T65536": 20.0,
    "compute_causal_conv1d_metadata B256 T65536": 20.0,
    "make_local_attention_virtual_batches B256 T65536": 20.0,
}

# Cases whose seed time was also recorded on the H200 host (--baseline, $CATTN_BASELINE_DIR).
BASELINE_KEYS = {
    "get_pcp_query_restore_idx B8 T16384": "pcp_restore_idx B8 T16384 host_us",
    "get_pcp_query_restore_idx B256 T65536": "pcp_restore_idx B256 T65536 host_us",
    "compute_causal_conv1d_metadata B16 T16384": "causal_conv1d_metadata B16 T16384 host_us",
    "compute_causal_conv1d_metadata B256 T65536": "causal_conv1d_metadata B256 T65536 host_us",
    "make_local_attention_virtual_batches B64 T16384": "local_virtual_batches B64 host_us",
    "make_local_attention_virtual_batches B256 T65536": "local_virtual_batches B256 host_us",
    "get_dcp_local_seq_lens B256 dcp8": "dcp_local_seq_lens B256 dcp8 host_us",
    "get_dcp_local_seq_lens B1024 dcp4": "dcp_local_seq_lens B1024 dcp4 host_us",
}

ATTN_CHUNK = 8192  # Llama 4's attention_chunk_size
KV_BLOCK = 16


class Mismatch(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Inputs: random but deterministic.
# ---------------------------------------------------------------------------------------------

def random_lengths(B, T, multiple, seed):
    """B positive lengths, multiples of `multiple`, summing to exactly T."""
    rng = np.random.default_rng(seed)
    units = T // multiple
    w = rng.uniform(0.1, 1.9, B)
    lens = 1 + np.floor(w / w.sum() * (units - B)).astype(np.int64)
    short = units - int(lens.sum())
    lens[np.arange(short) % B] += 1
    return lens * multiple


def poisoned(shape, dtype):
    """An output buffer filled with a value no utility writes, so unwritten entries show."""
    return np.full(shape, -7777, dtype)


def cumsum0(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def random_contexts(B, max_context, seed):
    return np.random.default_rng(seed).integers(0, max_context, B)


def random_block_table(B, cols, seed):
    ids = np.random.default_rng(seed).permutation(B * cols).astype(np.int32)
    return ids.reshape(B, cols)


# ---------------------------------------------------------------------------------------------
# Cases. Each builds its inputs once and returns (seed_fn, lib_fn, verify_fn).
# ---------------------------------------------------------------------------------------------

def equal(name, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape or not np.array_equal(got.astype(np.int64), want.astype(np.int64)):
        raise Mismatch(f"{name}: libcattn {got.shape} {got.ravel()[:12]} ... vs seed "
                       f"{want.shape} {want.ravel()[:12]} ...")


def equal_scalar(name, got, want):
    if int(got) != int(want):
        raise Mismatch(f"{name}: libcattn {int(got)} vs seed {int(want)}")


def case_restore(V, torch, lib, B, T):
    cu = cumsum0(random_lengths(B, T, 2, 3))
    cu_t = torch.from_numpy(cu)
    cu_d = C.HostTensor(cu)
    out = poisoned(T, np.int32)
    out_d = C.HostTensor(out)
    args = C.new(C.cattn_pcp_query_restore_idx_args_t, cu_num_tokens=cu_d.ptr,
                 restore_idx=out_d.ptr)
    size = ctypes.c_int64()
    size_ref, args_ref = ctypes.byref(size), ctypes.byref(args)
    size_fn, fn = lib.cattn_get_pcp_query_restore_idx_size, lib.cattn_get_pcp_query_restore_idx

    def seed():
        return V.get_pcp_query_restore_idx(cu_t)

    def ours():
        s = size_fn(cu_d.ptr, size_ref)
        if s:
            return s
        out_d.dl.shape[0] = size.value  # the caller's view of exactly `size` entries
        return fn(args_ref)

    def verify():
        C.check(lib, "cattn_get_pcp_query_restore_idx", ours())
        equal("restore_idx", out[:size.value], seed().numpy())

    return seed, ours, verify


def case_conv1d(V, torch, lib, B, T):
    qsl = cumsum0(random_lengths(B, T, 1, 6))
    qsl_t = torch.from_numpy(qsl)
    qsl_d = C.HostTensor(qsl)
    tot, cap = ctypes.c_int64(), ctypes.c_int64()
    C.check(lib, "cattn_compute_causal_conv1d_metadata_size",
            lib.cattn_compute_causal_conv1d_metadata_size(qsl_d.ptr, 8, ctypes.byref(tot),
                                                          ctypes.byref(cap)))
    outs = {"nums": poisoned(B, np.int32), "mlist": poisoned(tot.value, np.int32),
            "offsetlist": poisoned(tot.value, np.int32),
            "batch_ptr": poisoned(cap.value, np.int32),
            "token_chunk_offset_ptr": poisoned(cap.value, np.int32)}
    views = {k: C.HostTensor(v) for k, v in outs.items()}
    args = C.new(C.cattn_causal_conv1d_metadata_args_t, query_start_loc_cpu=qsl_d.ptr,
                 block_m=8, **{k: v.ptr for k, v in views.items()})
    args_ref, tot_ref, cap_ref = ctypes.byref(args), ctypes.byref(tot), ctypes.byref(cap)
    size_fn, fn = (lib.cattn_compute_causal_conv1d_metadata_size,
                   lib.cattn_compute_causal_conv1d_metadata)

    def seed():
        return V.compute_causal_conv1d_metadata(qsl_t, device="cpu")

    def ours():
        s = size_fn(qsl_d.ptr, 8, tot_ref, cap_ref)
        return s if s else fn(args_ref)

    def verify():
        C.check(lib, "cattn_compute_causal_conv1d_metadata", ours())
        d, batch_ptr, chunk_ptr = seed()
        d = d[8]
        equal_scalar("tot", args.tot, d["tot"])
        equal("nums", outs["nums"], d["nums"].numpy())
        equal("mlist", outs["mlist"], d["mlist"].numpy())
        equal("offsetlist", outs["offsetlist"], d["offsetlist"].numpy())
        equal("batch_ptr", outs["batch_ptr"], batch_ptr.numpy())
        equal("token_chunk_offset_ptr", outs["token_chunk_offset_ptr"], chunk_ptr.numpy())

    return seed, ours, verify


def local_batch(torch, B, T):
    q = random_lengths(B, T, 1, 9)
    s = (q + random_contexts(B, 16384, 19)).astype(np.int32)
    qsl = cumsum0(q)
    bt = random_block_table(B, int(-(-s.max() // KV_BLOCK)), 29)
    return q, s, qsl, bt


def case_local_attention(V, torch, lib, B, T):
    q, s, qsl, bt = local_batch(torch, B, T)
    slots = np.arange(T, dtype=np.int64)
    qsl_t, s_t, bt_t = torch.from_numpy(qsl), torch.from_numpy(s), torch.from_numpy(bt)
    cam = V.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t, seq_lens=s_t, num_reqs=B,
        num_actual_tokens=T, max_query_len=int(q.max()), max_seq_len=int(s.max()),
        block_table_tensor=bt_t, slot_mapping=torch.from_numpy(slots), _seq_lens_cpu=s_t)

    keep = [C.HostTensor(qsl), C.HostTensor(s), C.HostTensor(bt), C.HostTensor(slots)]
    md = C.new_metadata(query_start_loc=keep[0].ptr, query_start_loc_cpu=keep[0].ptr,
                        seq_lens=keep[1].ptr, seq_lens_cpu=keep[1].ptr,
                        block_table_tensor=keep[2].ptr, slot_mapping=keep[3].ptr, num_reqs=B,
                        num_actual_tokens=T, max_query_len=int(q.max()),
                        max_seq_len=int(s.max()))
    args = C.new(C.cattn_local_attention_args_t, attn_chunk_size=ATTN_CHUNK,
                 block_size=KV_BLOCK, metadata=ctypes.pointer(md))
    C.check(lib, "cattn_make_local_attention_virtual_batches",
            lib.cattn_make_local_attention_virtual_batches(ctypes.byref(args)))
    nv, npg = ctypes.c_int64(), ctypes.c_int64()
    lib.cattn_local_attention_plan_get_shape(args.plan, ctypes.byref(nv), ctypes.byref(npg))
    lib.cattn_local_attention_plan_destroy(args.plan)
    Vb, P = nv.value, npg.value
    outs = {"query_start_loc_cpu": poisoned(Vb + 1, np.int32),
            "seq_lens_cpu": poisoned(Vb, np.int32),
            "num_computed_tokens_cpu": poisoned(Vb, np.int32),
            "block_table_tensor": poisoned((Vb, P), np.int32)}
    views = {k: C.HostTensor(v) for k, v in outs.items()}
    out_md = C.new_metadata(**{k: v.ptr for k, v in views.items()})
    fill = C.new(C.cattn_local_attention_fill_args_t, metadata=ctypes.pointer(md),
                 out=ctypes.pointer(out_md))
    args_ref, fill_ref = ctypes.byref(args), ctypes.byref(fill)
    nv_ref, npg_ref = ctypes.byref(nv), ctypes.byref(npg)
    plan_fn = lib.cattn_make_local_attention_virtual_batches
    shape_fn = lib.cattn_local_attention_plan_get_shape
    fill_fn = lib.cattn_local_attention_plan_fill
    destroy_fn = lib.cattn_local_attention_plan_destroy

    def seed():
        return V.make_local_attention_virtual_batches(ATTN_CHUNK, cam, KV_BLOCK)

    def ours():
        s_ = plan_fn(args_ref)
        if s_:
            return s_
        plan = args.plan
        s_ = shape_fn(plan, nv_ref, npg_ref) or fill_fn(plan, fill_ref)
        destroy_fn(plan)
        return s_

    def verify():
        C.check(lib, "cattn_make_local_attention_virtual_batches", ours())
        m, make_block_table = seed()
        equal("query_start_loc_cpu", outs["query_start_loc_cpu"], m.query_start_loc_cpu.numpy())
        equal("seq_lens_cpu", outs["seq_lens_cpu"], m.seq_lens_cpu.numpy())
        equal("num_computed_tokens_cpu", outs["num_computed_tokens_cpu"],
              m.num_computed_tokens_cpu.numpy())
        equal("block_table_tensor", outs["block_table_tensor"], m.block_table_tensor.numpy())
        equal_scalar("num_reqs", out_md.num_reqs, m.num_reqs)
        equal_scalar("num_actual_tokens", out_md.num_actual_tokens, m.num_actual_tokens)
        equal_scalar("max_query_len", out_md.max_query_len, m.max_query_len)
        equal_scalar("max_seq_len", out_md.max_seq_len, m.max_seq_len)

    return seed, ours, verify


def case_dcp(V, torch, lib, B, W):
    s = random_contexts(B, 32768, 2).astype(np.int32)
    s_t = torch.from_numpy(s)
    s_d = C.HostTensor(s)
    out = poisoned((B, W), np.int32)
    out_d = C.HostTensor(out)
    args = C.new(C.cattn_dcp_local_seq_lens_args_t, seq_lens=s_d.ptr, dcp_size=W,
                 dcp_rank=C.CATTN_DCP_ALL_RANKS, dcp_kv_cache_interleave_size=1, out=out_d.ptr)
    args_ref, fn = ctypes.byref(args), lib.cattn_get_dcp_local_seq_lens

    def seed():
        return V.get_dcp_local_seq_lens(s_t, W, None, 1)

    def ours():
        return fn(args_ref)

    def verify():
        C.check(lib, "cattn_get_dcp_local_seq_lens", ours())
        equal("dcp_local_seq_lens", out, seed().numpy())

    return seed, ours, verify


def case_mamba(V, torch, lib, B, _):
    nspec = 2
    s = random_contexts(B, 16384, 10).astype(np.int32)
    bt = random_block_table(B, 16384 // KV_BLOCK + nspec, 11)
    s_t, bt_t = torch.from_numpy(s), torch.from_numpy(bt)
    spec = V.MambaSpec(block_size=KV_BLOCK, num_speculative_blocks=nspec)
    s_d, bt_d = C.HostTensor(s), C.HostTensor(bt)
    out = poisoned((B, 1 + nspec), np.int32)
    out_d = C.HostTensor(out)
    args = C.new(C.cattn_mamba_block_table_args_t, block_table=bt_d.ptr, seq_lens=s_d.ptr,
                 block_size=KV_BLOCK, num_speculative_blocks=nspec,
                 mamba_cache_mode=C.CATTN_MAMBA_CACHE_MODE_ALIGN, out=out_d.ptr)
    args_ref, fn = ctypes.byref(args), lib.cattn_mamba_get_block_table_tensor

    def seed():
        return V.mamba_get_block_table_tensor(bt_t, s_t, spec, "align")

    def ours():
        return fn(args_ref)

    def verify():
        C.check(lib, "cattn_mamba_get_block_table_tensor", ours())
        equal("mamba block table", out, seed().numpy())

    return seed, ours, verify


def case_fast_prefill(V, torch, lib, B, T):
    cu = cumsum0(random_lengths(B, T, 1, 8))
    logits = []
    for i in range(B):
        if i % 2 == 1 and cu[i + 1] - cu[i] > 1:
            logits.append(cu[i + 1] - 2)
        logits.append(cu[i + 1] - 1)
    n_logits = len(logits)
    logits = np.array(logits + [0] * 16, np.int32)  # CUDA-graph padding
    max_q = int(max(2, np.diff(cu).max()))
    s = (np.diff(cu) + random_contexts(B, 8192, 18)).astype(np.int32)
    cu_t, logits_t, s_t = torch.from_numpy(cu), torch.from_numpy(logits), torch.from_numpy(s)
    cam = V.CommonAttentionMetadata(
        query_start_loc=cu_t, query_start_loc_cpu=cu_t, seq_lens=s_t, num_reqs=B,
        num_actual_tokens=T, max_query_len=max_q, max_seq_len=int(s.max()),
        block_table_tensor=None, slot_mapping=None, logits_indices_padded=logits_t,
        num_logits_indices=n_logits, _seq_lens_cpu=s_t)
    keep = [C.HostTensor(cu), C.HostTensor(logits), C.HostTensor(s)]
    md = C.new_metadata(query_start_loc=keep[0].ptr, query_start_loc_cpu=keep[0].ptr,
                        seq_lens=keep[2].ptr, seq_lens_cpu=keep[2].ptr,
                        logits_indices_padded=keep[1].ptr, num_logits_indices=n_logits,
                        num_reqs=B, num_actual_tokens=T, max_query_len=max_q,
                        max_seq_len=int(s.max()))
    out_qsl, out_qsl_cpu, max_total = (poisoned(B + 1, np.int32), poisoned(B + 1, np.int32),
                                       poisoned(2, np.int32))
    views = [C.HostTensor(out_qsl), C.HostTensor(out_qsl_cpu), C.HostTensor(max_total)]
    out_md = C.new_metadata(query_start_loc=views[0].ptr, query_start_loc_cpu=views[1].ptr)
    args = C.new(C.cattn_fast_prefill_metadata_args_t, metadata=ctypes.pointer(md),
                 out=ctypes.pointer(out_md), decode_max_and_total=views[2].ptr)
    args_ref = ctypes.byref(args)
    fn = lib.cattn_make_kv_sharing_fast_prefill_common_attn_metadata

    def seed():
        return V.make_kv_sharing_fast_prefill_common_attn_metadata(cam)

    def ours():
        return fn(args_ref)

    def verify():
        C.check(lib, "cattn_make_kv_sharing_fast_prefill_common_attn_metadata", ours())
        m = seed()
        equal("query_start_loc", out_qsl, m.query_start_loc.numpy())
        equal("query_start_loc_cpu", out_qsl_cpu, m.query_start_loc_cpu.numpy())
        equal_scalar("max_query_len", out_md.max_query_len, m.max_query_len)
        equal_scalar("num_actual_tokens", out_md.num_actual_tokens, m.num_actual_tokens)
        equal("decode_max_and_total", max_total, [m.max_query_len, m.num_actual_tokens])

    return seed, ours, verify


def case_extend(V, torch, lib, B, _):
    T = 8 * B
    q = random_lengths(B, T, 1, 7)
    s = (q + random_contexts(B, 8192, 17)).astype(np.int32)
    qsl = cumsum0(q)
    new_slots = np.arange(T + B, dtype=np.int64)
    arange = torch.arange(B + 1, dtype=torch.int32)  # the runner's persistent arange buffer
    qsl_t, s_t, slots_t = torch.from_numpy(qsl), torch.from_numpy(s), torch.from_numpy(new_slots)
    cam = V.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t.clone(), seq_lens=s_t, num_reqs=B,
        num_actual_tokens=T, max_query_len=int(q.max()), max_seq_len=int(s.max()),
        block_table_tensor=None, slot_mapping=None, _seq_lens_cpu=s_t)
    keep = [C.HostTensor(qsl), C.HostTensor(qsl.copy()), C.HostTensor(s),
            C.HostTensor(s.copy()), C.HostTensor(new_slots)]
    md = C.new_metadata(query_start_loc=keep[0].ptr, query_start_loc_cpu=keep[1].ptr,
                        seq_lens=keep[2].ptr, seq_lens_cpu=keep[3].ptr, num_reqs=B,
                        num_actual_tokens=T, max_query_len=int(q.max()),
                        max_seq_len=int(s.max()))
    outs = [poisoned(B + 1, np.int32), poisoned(B + 1, np.int32), poisoned(B, np.int32),
            poisoned(B, np.int32)]
    views = [C.HostTensor(o) for o in outs]
    out_md = C.new_metadata(query_start_loc=views[0].ptr, query_start_loc_cpu=views[1].ptr,
                            seq_lens=views[2].ptr, seq_lens_cpu=views[3].ptr)
    args = C.new(C.cattn_extend_all_queries_by_n_args_t, metadata=ctypes.pointer(md), n=1,
                 new_slot_mapping=keep[4].ptr, out=ctypes.pointer(out_md))
    args_ref, fn = ctypes.byref(args), lib.cattn_extend_all_queries_by_n

    def seed():
        return V.extend_all_queries_by_1(cam, arange, slots_t)

    def ours():
        return fn(args_ref)

    def verify():
        C.check(lib, "cattn_extend_all_queries_by_n", ours())
        m = seed()
        equal("query_start_loc", outs[0], m.query_start_loc.numpy())
        equal("query_start_loc_cpu", outs[1], m.query_start_loc_cpu.numpy())
        equal("seq_lens", outs[2], m.seq_lens.numpy())
        # vLLM leaves the seq_lens_cpu mirror stale; libcattn updates it to seq_lens.
        equal("seq_lens_cpu", outs[3], m.seq_lens.numpy())
        for f in ("num_actual_tokens", "max_query_len", "max_seq_len"):
            equal_scalar(f, getattr(out_md, f), getattr(m, f))

    return seed, ours, verify


CASES = [
    ("get_pcp_query_restore_idx", case_restore, "B{} T{}",
     [(8, 16384), (64, 16384), (256, 65536), (1024, 65536)]),
    ("compute_causal_conv1d_metadata", case_conv1d, "B{} T{}",
     [(8, 16384), (16, 16384), (64, 16384), (256, 65536), (1024, 65536)]),
    ("make_local_attention_virtual_batches", case_local_attention, "B{} T{}",
     [(8, 16384), (64, 16384), (256, 65536), (1024, 65536)]),
    ("get_dcp_local_seq_lens", case_dcp, "B{} dcp{}",
     [(8, 8), (64, 8), (256, 8), (1024, 4)]),
    ("make_kv_sharing_fast_prefill_common_attn_metadata", case_fast_prefill, "B{} T{}",
     [(8, 16384), (64, 16384), (256, 65536), (1024, 65536)]),
    ("mamba_get_block_table_tensor", case_mamba, "align B{}",
     [(8, 0), (64, 0), (256, 0), (1024, 0)]),
    ("extend_all_queries_by_1", case_extend, "B{}",
     [(8, 0), (64, 0), (256, 0), (1024, 0)]),
]


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

def median_us(fn, reps, budget_s):
    """Median wall time of fn() in microseconds, after warm-up; stops early past budget_s."""
    for _ in range(3):
        fn()
    times = []
    deadline = time.perf_counter() + budget_s
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
        if len(times) >= 11 and time.perf_counter() > deadline:
            break
    return statistics.median(times) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", required=True, help="path to libcattn.so")
    ap.add_argument("--reference", default=None,
                    help=f"directory holding the seed's module (default: ${P.ORACLE_ENV})")
    ap.add_argument("--module", default="vllm_ref", help="the seed's module name")
    ap.add_argument("--print-sizes", default=None,
                    help="cattn_print_sizes executable (default: next to --lib, under bench/)")
    ap.add_argument("--baseline", default=None,
                    help=f"seed times on the H200 host, shown for reference (default: "
                         f"{P.SEED_BASELINE_FILE} in ${P.BASELINE_ENV}; neither: not shown)")
    ap.add_argument("--filter", default="", help="run only cases whose name contains this")
    ap.add_argument("--reps", type=int, default=200, help="timed calls per side and case (max)")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds per side and case (max)")
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    opts = ap.parse_args()

    sizes_exe = opts.print_sizes or os.path.join(os.path.dirname(os.path.abspath(opts.lib)),
                                                 "bench", "cattn_print_sizes")
    problems = C.check_layout_with(sizes_exe)
    if problems:
        print("ctypes mirror differs from cattn.h:\n  " + "\n  ".join(problems))
        return 2

    sys.path.insert(0, P.seed_oracle(sys.argv[0], opts.reference, opts.module))
    baseline_file = P.seed_baseline(sys.argv[0], opts.baseline)
    V = importlib.import_module(opts.module)
    import torch  # after the module: the oracle's prelude adapts torch < 2 on import
    lib = C.load(opts.lib)

    baseline = {}
    if baseline_file:
        with open(baseline_file) as f:
            baseline = json.load(f)

    print(f"libcattn {opts.lib}; seed module {V.__file__}; torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), numpy {np.__version__}; "
          f"{os.cpu_count()} CPUs")
    names = [f"{u} {fmt.format(a, b)}" for u, _, fmt, ps in CASES for a, b in ps]
    w = max(len(n) for n in names)
    head = f"{'case':<{w}} {'seed us':>10} {'libcattn us':>12} {'ratio':>8} {'H200 seed us':>13}"
    print(head)
    print("-" * len(head))
    failed = False
    results = []
    for util, make, fmt, params in CASES:
        for a, b in params:
            name = f"{util} {fmt.format(a, b)}"
            if opts.filter not in name:
                continue
            try:
                seed_fn, ours_fn, verify = make(V, torch, lib, a, b)
                verify()
            except Mismatch as e:
                print(f"{name:<{w}} MISMATCH {e}")
                failed = True
                continue
            except C.CattnError as e:
                print(f"{name:<{w}} ERROR {e}")
                failed = True
                continue
            seed_us = median_us(seed_fn, opts.reps, opts.budget)
            ours_us = median_us(ours_fn, opts.reps, opts.budget)
            ratio = seed_us / ours_us
            h200 = baseline.get(BASELINE_KEYS.get(name, ""), None)
            goal = GOAL_CASES.get(name)
            note = ""
            if goal is not None:
                note = f"  goal >= {goal:g}x: {'met' if ratio >= goal else 'NOT met'}"
            print(f"{name:<{w}} {seed_us:>10.1f} {ours_us:>12.2f} {ratio:>7.1f}x "
                  f"{(f'{h200:.1f}' if h200 else '-'):>13}{note}", flush=True)
            results.append({"case": name, "seed_us": seed_us, "libcattn_us": ours_us,
                            "ratio": ratio, "h200_seed_us": h200})
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
