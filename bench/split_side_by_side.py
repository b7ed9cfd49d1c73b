# SPDX-License-Identifier: Apache-2.0
"""Batch splitting and reordering on the host, side by side in one process: vLLM's newest
split_decodes_and_prefills, split_decodes_prefills_and_extends, split_prefill_chunks and
reorder_batch_to_split_decodes_and_prefills (the upstream oracle, torch on the CPU) against
libcattn's calls, at B = 1024 requests (and 64, 8192 for scale).

Every row is checked first: libcattn's numbers equal the upstream function's on the same batch
(MISMATCH and exit 1 otherwise). Then each side is timed as the median of --reps rounds of N
calls back to back, per call: the upstream function from Python, libcattn from C
(bench/call_loop.c, built next to the library as bench/libcattn_bench_loop.so), so that the time
is what a C, Rust or Go engine pays. The reorder rebuilds vLLM's batch before each upstream call
(outside the timed region), since vLLM's reorder swaps it in place; libcattn's reorder returns
the plan and leaves the inputs as they are.

    python3 bench/split_side_by_side.py --reference <upstream oracle dir> \
        --lib build-cpu/libcattn.so

--reference (default: $CATTN_ORACLE_UPSTREAM_DIR) is the upstream oracle's folder
(bench/README.md).
"""
import argparse
import ctypes
import importlib
import os
import statistics
import sys
import time
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paths as P  # noqa: E402
import cattn_ctypes as C  # noqa: E402


def batch(B, seed):
    """An ordered step of B requests: decodes (1 token), short extends, long extends (chunked
    prefills with context), then first-chunk prefills; and an unordered persistent batch of the
    same requests for the reorder."""
    g = np.random.default_rng(seed + B)
    n_long = max(1, B // 64)
    n_pre = max(1, B // 64)
    n_short = max(1, B // 128)
    n_dec = B - n_long - n_pre - n_short
    q = np.concatenate([np.ones(n_dec + n_short, np.int64),
                        g.integers(64, 2048, n_long + n_pre)])
    ctx = np.concatenate([g.integers(1, 8192, n_dec + n_short + n_long),
                          np.zeros(n_pre, np.int64)])
    qsl = np.concatenate([[0], np.cumsum(q)]).astype(np.int32)
    ub = (q + ctx).astype(np.int32)
    prompt = np.where(np.arange(B) < n_dec, ctx, ctx + 4096)
    perm = g.permutation(B)
    return SimpleNamespace(B=B, q=q, qsl=qsl, ub=ub, sched=q[perm], computed=ctx[perm].astype(np.int32),
                           prompt=prompt[perm].astype(np.int32),
                           prefill_lens=g.integers(1, 4096, B).astype(np.int32))


def per_call_us(fn, n, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(n)
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", default=None,
                    help=f"folder of vllm_upstream.py (default: ${P.UPSTREAM_ENV})")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--sizes", default="64,1024,8192")
    args = ap.parse_args()
    sys.path.insert(0, P.upstream_oracle(sys.argv[0], args.reference))
    U = importlib.import_module("vllm_upstream")
    P = importlib.import_module("_prelude_upstream")
    import torch
    lib = C.load(args.lib)
    loop_path = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                             "libcattn_bench_loop.so")
    loop = ctypes.CDLL(loop_path)
    loop.cattn_bench_call_loop.restype = ctypes.c_int32
    loop.cattn_bench_call_loop.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32]

    def c_loop(fname, args_struct):
        fn = ctypes.cast(getattr(lib, fname), ctypes.c_void_p)
        ref = ctypes.cast(ctypes.pointer(args_struct), ctypes.c_void_p)

        def run(n):
            C.check(lib, fname, loop.cattn_bench_call_loop(fn, ref, n))
        return run

    failures = 0
    print(f"{'function':<46}{'B':>6}{'upstream us':>13}{'libcattn us':>13}{'speedup':>10}")
    for B in [int(s) for s in args.sizes.split(",")]:
        w = batch(B, 15)
        n_py = max(20, 20000 // B)
        n_c = max(200, 2000000 // B)
        rows = []
        # split_decodes_and_prefills (threshold 1: the decodes are q = 1; short extends count as
        # decodes), on the metadata's host mirror.
        qt = torch.from_numpy(w.qsl)
        cam = SimpleNamespace(query_start_loc_cpu=qt, num_reqs=B,
                              num_actual_tokens=int(w.qsl[-1]) + 8,
                              max_query_len=int(w.q.max()), is_prefilling=None,
                              seq_lens_cpu_upper_bound=torch.from_numpy(w.ub))
        qh = C.HostTensor(w.qsl)
        ubh = C.HostTensor(w.ub)
        a = C.new(C.cattn_split_decodes_and_prefills_args_t, query_start_loc_cpu=qh.ptr,
                  num_reqs=B, num_actual_tokens=cam.num_actual_tokens,
                  max_query_len=cam.max_query_len, decode_threshold=1,
                  treat_short_extends_as_decodes=1)
        want = U.split_decodes_and_prefills(cam, 1)
        C.check(lib, "split", lib.cattn_split_decodes_and_prefills(ctypes.byref(a)))
        got = (a.num_decodes, a.num_prefills, a.num_decode_tokens, a.num_prefill_tokens)
        rows.append(("split_decodes_and_prefills", want, got,
                     lambda n: [U.split_decodes_and_prefills(cam, 1) for _ in range(n)],
                     c_loop("cattn_split_decodes_and_prefills", a)))
        e = C.new(C.cattn_split_decodes_prefills_and_extends_args_t, query_start_loc_cpu=qh.ptr,
                  seq_lens_cpu_upper_bound=ubh.ptr, num_reqs=B,
                  num_actual_tokens=cam.num_actual_tokens, max_query_len=cam.max_query_len,
                  decode_threshold=1)
        want = tuple(int(v) for v in U.split_decodes_prefills_and_extends(cam, 1))
        C.check(lib, "extends", lib.cattn_split_decodes_prefills_and_extends(ctypes.byref(e)))
        got = (e.num_decodes, e.num_extends, e.num_prefills, e.num_decode_tokens,
               e.num_extend_tokens, e.num_prefill_tokens)
        rows.append(("split_decodes_prefills_and_extends", want, got,
                     lambda n: [U.split_decodes_prefills_and_extends(cam, 1) for _ in range(n)],
                     c_loop("cattn_split_decodes_prefills_and_extends", e)))
        # split_prefill_chunks: B prefill lengths into a 16k-token workspace.
        st = torch.from_numpy(w.prefill_lens)
        sh = C.HostTensor(w.prefill_lens)
        chunks = np.zeros((B, 2), np.int64)
        ch = C.HostTensor(chunks)
        k = C.new(C.cattn_split_prefill_chunks_args_t, seq_lens_cpu=sh.ptr,
                  workspace_size=16384, request_offset=3, chunks=ch.ptr)
        want = U.split_prefill_chunks(st, 16384, 3)
        C.check(lib, "chunks", lib.cattn_split_prefill_chunks(ctypes.byref(k)))
        got = [tuple(int(x) for x in r) for r in chunks[:k.num_chunks]]
        rows.append(("split_prefill_chunks", want, got,
                     lambda n: [U.split_prefill_chunks(st, 16384, 3) for _ in range(n)],
                     c_loop("cattn_split_prefill_chunks", k)))
        # reorder_batch_to_split_decodes_and_prefills on the unordered persistent batch.
        ids = ["r%d" % i for i in range(B)]
        sched = P.SchedulerOutputStandIn(dict(zip(ids, w.sched.tolist())))
        s_h, c_h, p_h = C.HostTensor(w.sched), C.HostTensor(w.computed), C.HostTensor(w.prompt)
        imap = np.zeros(B, np.int64)
        sw = np.zeros((max(B - 1, 0), 2), np.int64)
        im_h, sw_h = C.HostTensor(imap), C.HostTensor(sw)
        r = C.new(C.cattn_reorder_batch_args_t, num_scheduled_tokens=s_h.ptr,
                  num_computed_tokens=c_h.ptr, num_prompt_tokens=p_h.ptr, decode_threshold=1,
                  index_map=im_h.ptr, swaps=sw_h.ptr)
        ib = P.InputBatchStandIn(ids, w.computed, w.prompt)
        changed = U.reorder_batch_to_split_decodes_and_prefills(ib, sched, 1)
        want = (bool(changed), [int(x[1:]) for x in ib.req_ids], [tuple(x) for x in ib.swaps])
        C.check(lib, "reorder", lib.cattn_reorder_batch_to_split_decodes_and_prefills(
            ctypes.byref(r)))
        got = (bool(r.changed), imap.tolist(), [tuple(int(v) for v in x) for x in sw[:r.num_swaps]])

        def upstream_reorder(n):
            batches = [P.InputBatchStandIn(ids, w.computed, w.prompt) for _ in range(n)]
            t0 = time.perf_counter()
            for b in batches:
                U.reorder_batch_to_split_decodes_and_prefills(b, sched, 1)
            return time.perf_counter() - t0

        rows.append(("reorder_batch_to_split_decodes_and_prefills", want, got, upstream_reorder,
                     c_loop("cattn_reorder_batch_to_split_decodes_and_prefills", r)))

        for name, want, got, py, cfn in rows:
            if tuple(want) != tuple(got) if not isinstance(want, list) else list(want) != got:
                print(f"MISMATCH {name} B={B}: upstream {want} libcattn {got}")
                failures += 1
                continue
            if name.startswith("reorder"):
                py_us = statistics.median(py(n_py) / n_py * 1e6 for _ in range(args.reps))
            else:
                py_us = per_call_us(py, n_py, args.reps)
            c_us = per_call_us(cfn, n_c, args.reps)
            print(f"{name:<46}{B:>6}{py_us:>13.2f}{c_us:>13.3f}{py_us / c_us:>9.0f}x")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
