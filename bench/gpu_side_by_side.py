# SPDX-License-Identifier: Apache-2.0
"""libcattn's CUDA paths against the seed's own code on the same GPU, in one process.

The seed is imported from --reference or $CATTN_ORACLE_DIR (the seed oracle's vllm_ref.py, or
an installed vLLM module via --module; bench/README.md); libcattn is called through ctypes (bench/cattn_ctypes.py) on the same torch
tensors. Every case is checked for equal outputs before it is timed. Two clocks:
  dev_us   CUDA events around back-to-back launches (50 for small cases), median per call: the
           rate a caller sustains (no host sync inside); both sides pay Python's call overhead;
  host_us  wall time of one call followed by a stream sync, median (what a caller waits when the
           seed syncs inside, e.g. .cpu() or .item()).
The ratio column uses dev_us where neither side syncs, host_us otherwise (marked). Rows marked
"C caller" time libcattn through bench/call_loop.c (50 calls per loop from C, loaded from
<lib dir>/bench/libcattn_bench_loop.so): the rate a C, Rust or Go engine sees, without
ctypes' per-call overhead; the seed's column is the same Python measurement as the row above.
Where the seed syncs inside, its "C caller" row times it under dev_us too: back to back, its
syncs are part of what each call costs it, while libcattn needs none.

    python3 bench/gpu_side_by_side.py --reference <oracle dir> --lib build/libcattn.so
"""
import argparse
import ctypes
import importlib
import os
import re
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paths as P  # noqa: E402
import cattn_ctypes as C  # noqa: E402

_TORCH_DT = {
    torch.int32: (C.kDLInt, 32), torch.int64: (C.kDLInt, 64), torch.bfloat16: (4, 16),
    torch.float16: (C.kDLFloat, 16), torch.float32: (C.kDLFloat, 32),
    torch.float8_e4m3fn: (C.kDLUInt, 8), torch.uint8: (C.kDLUInt, 8),
}


class DevTensor:
    """A DLTensor view of a torch tensor (CUDA or CPU), strides in elements."""

    def __init__(self, t):
        self.t = t
        code, bits = _TORCH_DT[t.dtype]
        n = max(t.dim(), 1)
        self._shape = (ctypes.c_int64 * n)(*t.shape)
        self._strides = (ctypes.c_int64 * n)(*t.stride())
        self.dl = C.DLTensor()
        self.dl.data = t.data_ptr()
        self.dl.device = C.DLDevice(C.kDLCUDA if t.is_cuda else C.kDLCPU,
                                    t.device.index or 0 if t.is_cuda else 0)
        self.dl.ndim = t.dim()
        self.dl.dtype = C.DLDataType(code, bits, 1)
        self.dl.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        self.dl.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        self.dl.byte_offset = 0
        self.dl._keep = (t, self._shape, self._strides)

    @property
    def ptr(self):
        return ctypes.pointer(self.dl)


def dev_us(fn, reps, batch=None):
    """Median over `reps` of (events around `batch` back-to-back calls) / batch: the launch
    rate a caller sustains, as the baseline's dev_us (repeated launches). Large kernels take
    batch 1, so each call is timed alone."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    if batch is None:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        batch = 1 if a.elapsed_time(b) > 0.2 else 50
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / batch)
    return statistics.median(times)


def host_us(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter_ns() - t0) / 1000)
    return statistics.median(times)


ROWS = []


def row(name, seed, ours, clock, note=""):
    ROWS.append((name, seed, ours, clock, note))
    print(f"| {name:<58} | {seed:10.1f} | {ours:10.2f} | {seed / ours:8.1f}x | {clock:<7} |{note}",
          flush=True)


def call(lib, fname, *args):
    C.check(lib, fname, getattr(lib, fname)(*args))


LOOP = None  # bench/call_loop.c, loaded by main() when it was built
LOOP_CALLS = 50


def c_caller_us(lib, fname, args_ref, reps):
    """Per-call dev_us of `fname` called LOOP_CALLS times per loop from C."""
    fn = ctypes.cast(getattr(lib, fname), ctypes.c_void_p)

    def run():
        status = LOOP.cattn_bench_call_loop(fn, args_ref, LOOP_CALLS)
        C.check(lib, fname, status)

    return dev_us(run, reps, batch=1) / LOOP_CALLS


def sustained_rows(name, seed, lib, fname, args_ref, reps):
    """For a seed that syncs inside: both sides back to back under events (dev_us), the seed's
    syncs included, libcattn with none, since it needs none; from C when the loop is built."""
    if LOOP is None:
        return
    row(f"{name} (C caller)", dev_us(seed, reps), c_caller_us(lib, fname, args_ref, reps),
        "dev_us", " (seed's syncs inside)")


def c_caller_row(name, seed_us, lib, fname, args_ref, reps):
    if LOOP is not None:
        row(f"{name} (C caller)", seed_us, c_caller_us(lib, fname, args_ref, reps), "dev_us")


SHAPES_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "select_shapes.h")


def select_shapes(macro):
    """The fused select shapes of bench/select_shapes.h's list `macro` (shared with bench_gpu
    and tune_fused_select): tuples W, r, reqs, T, H, Dq, Dk, Dv, torch dtype."""
    text = open(SHAPES_H).read()
    body = text[text.index(f"#define {macro}(X)"):]
    body = body[:body.index("\n\n")]
    shapes = []
    for m in re.finditer(r"X\(([^)]*)\)", body.split("\n", 1)[1]):
        f = [int(x) for x in m.group(1).split(",")]
        shapes.append(tuple(f[:8]) + ({1: torch.float8_e4m3fn, 2: torch.bfloat16}[f[8]],))
    return shapes


def splitmix64(state):
    """bench/select_shapes.h's select_splitmix64: (new state, value)."""
    mask = (1 << 64) - 1
    state = (state + 0x9E3779B97F4A7C15) & mask
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return state, z ^ (z >> 31)


def random_qsl(reqs, T):
    """bench/select_shapes.h's select_random_qsl: random even lengths summing to T."""
    state = (reqs * 1000003 + T) & ((1 << 64) - 1)
    cuts = []
    for _ in range(1, reqs):
        state, x = splitmix64(state)
        cuts.append(x % (T // 2 + 1))
    return [0] + [2 * c for c in sorted(cuts)] + [T // 2 * 2]


def fused_select(V, lib, W, r, reqs, T, H, dq, dk, dv, dtype, reps, copy_gbps, qsl_list=None):
    """One shape, equal request lengths unless `qsl_list` gives the boundaries (the
    many-request rows, which also time a device copy of the same traffic in this run)."""
    dev = "cuda"
    mk = (lambda *s: torch.randn(*s, device=dev).to(dtype))
    q, k, v = mk(T, H, dq), mk(W * T, H, dk), mk(W * T, H, dv)
    same_size = qsl_list is not None
    if qsl_list is None:
        qsl_list = [T // reqs * i // 2 * 2 for i in range(reqs)] + [T]
    qsl = torch.tensor(qsl_list, dtype=torch.int32, device=dev)
    name = f"fused_pcp_qkv_select W{W} r{r} reqs{reqs} T{T} H{H} {dq}/{dk}/{dv} {str(dtype)[6:]}"
    if same_size:
        name += " rand"
    q_rows, kv_head_rows, kv_tail_rows = C.fused_select_rows(lib, T, W, r)
    outs = [torch.empty(q_rows, H, dq, device=dev, dtype=dtype),
            torch.empty(kv_head_rows, H, dk, device=dev, dtype=dtype),
            torch.empty(kv_head_rows, H, dv, device=dev, dtype=dtype),
            torch.empty(q_rows, H, dq, device=dev, dtype=dtype),
            torch.empty(kv_tail_rows, H, dk, device=dev, dtype=dtype),
            torch.empty(kv_tail_rows, H, dv, device=dev, dtype=dtype)]
    T_ = [DevTensor(x) for x in [q, k, v, qsl] + outs]
    a = C.new(C.cattn_fused_pcp_qkv_select_args_t, q=T_[0].ptr, k=T_[1].ptr, v=T_[2].ptr,
              query_start_loc=T_[3].ptr, pcp_world_size=W, pcp_rank=r, q_head=T_[4].ptr,
              k_head=T_[5].ptr, v_head=T_[6].ptr, q_tail=T_[7].ptr, k_tail=T_[8].ptr,
              v_tail=T_[9].ptr)
    ours = lambda: call(lib, "cattn_fused_pcp_qkv_select", ctypes.byref(a))  # noqa: E731
    ours()
    torch.cuda.synchronize()
    seed_t = None
    if k.numel() >= 2**31:
        # The seed's Triton kernel computes offsets in 32 bits and faults here (see the
        # baseline); a fault would poison this process's CUDA context, so it is not run.
        pass
    else:
        seed_out = V.fused_pcp_qkv_select(q, k, v, qsl, W, r)
        torch.cuda.synchronize()
        for s_, o_ in zip(seed_out, outs):
            if not torch.equal(s_.view(torch.uint8), o_.view(torch.uint8)):
                print("MISMATCH", name)
                sys.exit(1)
        seed_t = dev_us(lambda: V.fused_pcp_qkv_select(q, k, v, qsl, W, r), reps)
    ours_t = dev_us(ours, reps)
    e = q.element_size()
    # Exact traffic for this qsl: per request of half h, q reads and writes 2h rows, K and V
    # each read (2W - r) h rows and write (2W + 1) h.
    halves = sum((b - a) // 2 for a, b in zip(qsl_list, qsl_list[1:]))
    nbytes = halves * H * e * (4 * dq + (4 * W + 1 - r) * (dk + dv))
    frac = nbytes / (ours_t * 1e3) / copy_gbps
    note = ""
    if same_size:
        n = nbytes // 2 // 16 * 16
        x = torch.empty(n, dtype=torch.uint8, device=dev).fill_(0x5A)
        y = torch.empty_like(x)
        copy_t = dev_us(lambda: y.copy_(x), reps)
        del x, y
        note = f"; same-size copy {copy_t:.2f} us: seed {copy_t / seed_t if seed_t else 0:.3f}, " \
               f"libcattn {copy_t / ours_t:.3f}"
    if seed_t:
        seed_frac = nbytes / (seed_t * 1e3) / copy_gbps
        row(name, seed_t, ours_t, "dev_us",
            f" copy: seed {seed_frac:.3f}, libcattn {frac:.3f}{note}")
    else:
        print(f"| {name:<58} | {'faults':>10} | {ours_t:10.2f} | {'-':>9} | dev_us  | "
              f"copy: libcattn {frac:.3f}{note} (K has {k.numel():.2e} elements)", flush=True)
    del q, k, v, outs, T_
    torch.cuda.empty_cache()


def dcp(V, lib, B, size, reps):
    s = torch.randint(1, 8192, (B,), dtype=torch.int32, device="cuda")
    out = torch.empty(B, size, dtype=torch.int32, device="cuda")
    ts, to = DevTensor(s), DevTensor(out)
    a = C.new(C.cattn_dcp_local_seq_lens_args_t, seq_lens=ts.ptr, dcp_size=size,
              dcp_rank=C.CATTN_DCP_ALL_RANKS, dcp_kv_cache_interleave_size=1, out=to.ptr)
    ours = lambda: call(lib, "cattn_get_dcp_local_seq_lens", ctypes.byref(a))  # noqa: E731
    ours()
    assert torch.equal(out, V.get_dcp_local_seq_lens(s, size, None, 1)), "MISMATCH dcp"
    seed_us = dev_us(lambda: V.get_dcp_local_seq_lens(s, size, None, 1), reps)
    name = f"get_dcp_local_seq_lens B{B} dcp{size}"
    row(name, seed_us, dev_us(ours, reps), "dev_us")
    c_caller_row(name, seed_us, lib, "cattn_get_dcp_local_seq_lens", ctypes.byref(a), reps)


def restore(V, lib, B, T, reps):
    lens = torch.full((B,), T // B // 2 * 2, dtype=torch.int64)
    cu = torch.cat([torch.zeros(1, dtype=torch.int64), lens.cumsum(0)]).to(torch.int32)
    cu_d = cu.cuda()
    out = torch.empty(int(cu[-1]), dtype=torch.int32, device="cuda")
    tc, to = DevTensor(cu_d), DevTensor(out)
    a = C.new(C.cattn_pcp_query_restore_idx_args_t, cu_num_tokens=tc.ptr, restore_idx=to.ptr)
    ours = lambda: call(lib, "cattn_get_pcp_query_restore_idx", ctypes.byref(a))  # noqa: E731
    ours()
    assert torch.equal(out.cpu(), V.get_pcp_query_restore_idx(cu_d)), "MISMATCH restore"
    # The seed copies the device cu_num_tokens to the host (a sync) and sorts there.
    seed = lambda: V.get_pcp_query_restore_idx(cu_d)  # noqa: E731
    name = f"get_pcp_query_restore_idx B{B} T{T}"
    row(name, host_us(seed, reps), host_us(ours, reps), "host_us", " (seed syncs)")
    sustained_rows(name, seed, lib, "cattn_get_pcp_query_restore_idx", ctypes.byref(a), reps)


def mamba(V, lib, B, reps):
    bs, nspec, M = 16, 2, 64
    bt = torch.arange(B * M, dtype=torch.int32, device="cuda").view(B, M)
    s = torch.randint(1, bs * (M - nspec - 1), (B,), dtype=torch.int32, device="cuda")
    out = torch.empty(B, 1 + nspec, dtype=torch.int32, device="cuda")
    tb, ts, to = DevTensor(bt), DevTensor(s), DevTensor(out)
    a = C.new(C.cattn_mamba_block_table_args_t, block_table=tb.ptr, seq_lens=ts.ptr,
              block_size=bs, num_speculative_blocks=nspec,
              mamba_cache_mode=C.CATTN_MAMBA_CACHE_MODE_ALIGN, out=to.ptr)
    ours = lambda: call(lib, "cattn_mamba_get_block_table_tensor", ctypes.byref(a))  # noqa: E731
    spec = V.MambaSpec(block_size=bs, num_speculative_blocks=nspec)
    seed = lambda: V.mamba_get_block_table_tensor(bt, s, spec, "align")  # noqa: E731
    ours()
    assert torch.equal(out, seed()), "MISMATCH mamba"
    seed_us = dev_us(seed, reps)
    name = f"mamba_get_block_table_tensor align B{B}"
    row(name, seed_us, dev_us(ours, reps), "dev_us")
    c_caller_row(name, seed_us, lib, "cattn_mamba_get_block_table_tensor", ctypes.byref(a), reps)


def metadata(V, B, tokens_per_req=4):
    qsl = torch.arange(B + 1, dtype=torch.int32) * tokens_per_req
    seq = torch.full((B,), 100, dtype=torch.int32)
    return V.CommonAttentionMetadata(
        query_start_loc=qsl.cuda(), query_start_loc_cpu=qsl, seq_lens=seq.cuda(), num_reqs=B,
        num_actual_tokens=B * tokens_per_req, max_query_len=tokens_per_req, max_seq_len=100,
        block_table_tensor=torch.zeros(B, 8, dtype=torch.int32, device="cuda"),
        slot_mapping=torch.zeros(B * tokens_per_req, dtype=torch.int64, device="cuda"),
        _seq_lens_cpu=seq)


def extend(V, lib, B, reps):
    cad = metadata(V, B)
    arange = torch.arange(B + 1, dtype=torch.int32, device="cuda")
    slots = torch.zeros(B * 5, dtype=torch.int64, device="cuda")
    t = {n: DevTensor(x) for n, x in [("qsl", cad.query_start_loc), ("seq", cad.seq_lens),
                                       ("slots", slots)]}
    oq = torch.empty_like(cad.query_start_loc)
    os_ = torch.empty_like(cad.seq_lens)
    toq, tos = DevTensor(oq), DevTensor(os_)
    m = C.new_metadata(query_start_loc=t["qsl"].ptr, seq_lens=t["seq"].ptr, num_reqs=B,
                       num_actual_tokens=B * 4, max_query_len=4, max_seq_len=100)
    o = C.new_metadata(query_start_loc=toq.ptr, seq_lens=tos.ptr)
    a = C.new(C.cattn_extend_all_queries_by_n_args_t, metadata=ctypes.pointer(m), n=1,
              new_slot_mapping=t["slots"].ptr, out=ctypes.pointer(o))
    ours = lambda: call(lib, "cattn_extend_all_queries_by_n", ctypes.byref(a))  # noqa: E731
    seed = lambda: V.extend_all_queries_by_1(cad, arange, slots)  # noqa: E731
    ours()
    ref = seed()
    assert torch.equal(oq, ref.query_start_loc) and torch.equal(os_, ref.seq_lens), "MISMATCH ext"
    seed_us = dev_us(seed, reps)
    name = f"extend_all_queries_by_n B{B}"
    row(name, seed_us, dev_us(ours, reps), "dev_us")
    c_caller_row(name, seed_us, lib, "cattn_extend_all_queries_by_n", ctypes.byref(a), reps)


def fast_prefill(V, lib, B, reps):
    cad = metadata(V, B)
    logits = (torch.arange(B, dtype=torch.int32) * 4 + 3).cuda()
    cad.logits_indices_padded = logits
    cad.num_logits_indices = B
    out_q = torch.empty(B + 1, dtype=torch.int32, device="cuda")
    mt = torch.empty(2, dtype=torch.int32, device="cuda")
    tq, tl, toq, tmt = (DevTensor(cad.query_start_loc), DevTensor(logits), DevTensor(out_q),
                        DevTensor(mt))
    m = C.new_metadata(query_start_loc=tq.ptr, logits_indices_padded=tl.ptr, num_reqs=B,
                       num_logits_indices=B, max_query_len=4, max_seq_len=100,
                       num_actual_tokens=4 * B)
    o = C.new_metadata(query_start_loc=toq.ptr)
    a = C.new(C.cattn_fast_prefill_metadata_args_t, metadata=ctypes.pointer(m),
              out=ctypes.pointer(o), decode_max_and_total=tmt.ptr)
    ours = lambda: call(lib, "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",  # noqa
                        ctypes.byref(a))
    seed = lambda: V.make_kv_sharing_fast_prefill_common_attn_metadata(cad)  # noqa: E731
    ours()
    ref = seed()
    assert torch.equal(out_q, ref.query_start_loc), "MISMATCH fast prefill"
    assert mt.tolist() == [ref.max_query_len, ref.num_actual_tokens], "MISMATCH max/total"
    # The seed reads max and total back with .item() (two syncs); libcattn leaves them on the GPU.
    name = f"make_kv_sharing_fast_prefill_common_attn_metadata B{B}"
    row(name, host_us(seed, reps), host_us(ours, reps), "host_us", " (seed syncs)")
    sustained_rows(name, seed, lib, "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
                   ctypes.byref(a), reps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", default=None,
                    help=f"the seed oracle's folder (default: ${P.ORACLE_ENV})")
    ap.add_argument("--module", default="vllm_ref")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--copy-gbps", type=float, default=0.0)
    args = ap.parse_args()
    sys.path.insert(0, P.seed_oracle(sys.argv[0], args.reference, args.module))
    V = importlib.import_module(args.module)
    lib = C.load(args.lib)
    global LOOP
    loop_path = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                             "libcattn_bench_loop.so")
    if os.path.exists(loop_path):
        LOOP = ctypes.CDLL(loop_path)
        LOOP.cattn_bench_call_loop.restype = ctypes.c_int32
        LOOP.cattn_bench_call_loop.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32]
    else:
        print(f"note: {loop_path} not built; no C-caller rows")
    for extra in ["cattn_fused_pcp_qkv_select"]:
        getattr(lib, extra)
    copy = args.copy_gbps
    if copy <= 0:
        x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        y = torch.empty_like(x)
        copy = 2 * x.numel() / (dev_us(lambda: y.copy_(x), 20) * 1e3)
        del x, y
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; "
          f"copy {copy:.0f} GB/s\n")
    print(f"| {'case':<58} | {'seed us':>10} | {'cattn us':>10} | {'ratio':>9} | clock   |")
    print(f"|{'-' * 60}|{'-' * 12}|{'-' * 12}|{'-' * 11}|{'-' * 9}|")
    for shape in [(2, 0, 1, 16384, 32, 128, 128, 128, torch.bfloat16),
                  (2, 1, 1, 16384, 32, 128, 128, 128, torch.bfloat16),
                  (4, 1, 8, 49792, 8, 128, 128, 128, torch.bfloat16),
                  (4, 2, 8, 32768, 16, 192, 192, 128, torch.bfloat16),
                  (4, 1, 8, 32768, 16, 192, 192, 128, torch.float8_e4m3fn),
                  (8, 5, 4, 16384, 128, 192, 192, 128, torch.bfloat16)]:
        fused_select(V, lib, *shape, reps=args.reps, copy_gbps=copy)
    # The many-request class, bench_gpu's rows (bench/select_shapes.h), same request lengths.
    for shape in select_shapes("CATTN_BENCH_SELECT_MANY_REQUEST_SHAPES"):
        fused_select(V, lib, *shape, reps=args.reps, copy_gbps=copy,
                     qsl_list=random_qsl(shape[2], shape[3]))
    for B, size in [(256, 8), (1024, 4)]:
        dcp(V, lib, B, size, args.reps)
    for B, T in [(8, 16384), (256, 65536)]:
        restore(V, lib, B, T, args.reps)
    for B in [256, 1024]:
        mamba(V, lib, B, args.reps)
        extend(V, lib, B, args.reps)
        fast_prefill(V, lib, B, args.reps)


if __name__ == "__main__":
    main()
