# SPDX-License-Identifier: Apache-2.0
"""The KV-cache layout resolver side by side with vLLM's newest Python (the upstream oracle), in
one process on the host, at B = 1024:

  resolve         resolve_kv_cache_layout with 1024 KV-cache specs (B = the number of specs;
                  1023 alike and one of another HNC shape at the end, so the whole set is scanned
                  and the block-compact filter runs), 8 workers reporting the same 6 names, no
                  user setting and the connector preferring "HND" (a candidate after the filter).
                  Python: a fresh cache_config per call; libcattn: the context's layout cleared
                  before each call (cattn_context_set_kv_cache_layout_preset(ctx, NULL)).
  get_supported   get_supported_kv_cache_layouts over 1024 backends (B = the number of backends),
                  each declaring 1 to 6 layouts that all contain BLNHC, so the lists differ and
                  the vote / intersection path runs.

Both answers are checked first (MISMATCH and exit 1 otherwise). libcattn is timed two ways:
through ctypes (one Python->C call per resolution, what a Python caller pays) and from C
(bench/call_loop.c, 200 calls per loop: what a C, Rust or Go engine sees). Times are the median
of --reps runs of N calls, in microseconds per call.

    python3 bench/kv_cache_layout_side_by_side.py --oracle <upstream oracle dir> \\
        --lib build-cpu/libcattn.so

--oracle (default: $CATTN_ORACLE_UPSTREAM_DIR) is the upstream oracle's folder
(bench/README.md).
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paths as P  # noqa: E402
import cattn_ctypes as C  # noqa: E402

NAMES = ["LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC"]
LOOP_CALLS = 200


def per_call_us(fn, calls, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--oracle", default=None,
                    help=f"the upstream oracle's folder (default: ${P.UPSTREAM_ENV})")
    ap.add_argument("--lib", default="build-cpu/libcattn.so")
    ap.add_argument("--loop", default=None, help="libcattn_bench_loop.so (default: <lib dir>/bench)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("-B", type=int, default=1024)
    args = ap.parse_args()
    sys.path.insert(0, P.upstream_oracle(sys.argv[0], args.oracle, "--oracle"))
    import vllm_upstream as U  # noqa: E402
    import _prelude_upstream as P  # noqa: E402

    lib = C.load(os.path.abspath(args.lib))
    loop_path = args.loop or os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                                          "libcattn_bench_loop.so")
    loop = ctypes.CDLL(loop_path) if os.path.exists(loop_path) else None
    B = args.B
    rng = np.random.default_rng(15)
    mismatches = 0
    rows = []

    # ---- resolve ----
    workers = [list(rng.permutation(NAMES)) for _ in range(1)] * 8
    workers = [[str(n) for n in w] for w in workers]
    specs = [(8, 16, 4096)] * (B - 1) + [(4, 32, 4096)]
    spec_objs = [P.AttnSpecStandIn(*s) for s in specs]

    def py_resolve():
        cfg = P.VllmConfig(cache_config=U.CacheConfig(), kv_connector_layout="HND")
        return U.resolve_kv_cache_layout(cfg, workers, spec_objs).name

    flat = [n.encode() for w in workers for n in w]
    names_c = (ctypes.c_char_p * len(flat))(*flat)
    counts_c = (ctypes.c_int64 * len(workers))(*[len(w) for w in workers])
    heads = (ctypes.c_int64 * B)(*[s[0] for s in specs])
    states = (ctypes.c_int64 * B)(*[s[1] for s in specs])
    pages = (ctypes.c_int64 * B)(*[s[2] for s in specs])
    ra = C.new(C.cattn_resolve_kv_cache_layout_args_t, num_workers=len(workers),
               worker_counts=counts_c, worker_names=ctypes.cast(names_c, ctypes.c_void_p),
               num_specs=B, spec_num_heads=heads, spec_num_states=states,
               spec_page_size_bytes=pages, connector_layout=b"HND")
    ctx = ctypes.c_void_p()
    C.check(lib, "cattn_context_create", lib.cattn_context_create(ctypes.byref(ctx)))
    props = C.new(C.cattn_kv_cache_layout_properties_t)

    def c_resolve():
        C.check(lib, "cattn_context_set_kv_cache_layout_preset",
                lib.cattn_context_set_kv_cache_layout_preset(ctx, None))
        C.check(lib, "cattn_resolve_kv_cache_layout", lib.cattn_resolve_kv_cache_layout(ctx, ctypes.byref(ra)))
        return ra.layout

    want = py_resolve()
    C.check(lib, "props", lib.cattn_kv_cache_layout_get_properties(c_resolve(), ctypes.byref(props)))
    got = props.name.decode()
    ok = got == want and ra.connector_fell_back == 0 and ra.from_preset == 0
    mismatches += not ok
    print(f"resolve: upstream {want}, libcattn {got} (fell back {ra.connector_fell_back})"
          f"{'' if ok else '  MISMATCH'}")
    py_us = per_call_us(py_resolve, 50, args.reps)
    ct_us = per_call_us(c_resolve, 500, args.reps)
    c_us = None
    if loop is not None:
        loop.cattn_bench_resolve_loop.restype = ctypes.c_int32
        loop.cattn_bench_resolve_loop.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int32]
        preset_fn = ctypes.cast(lib.cattn_context_set_kv_cache_layout_preset, ctypes.c_void_p)
        resolve_fn = ctypes.cast(lib.cattn_resolve_kv_cache_layout, ctypes.c_void_p)

        def c_loop():
            C.check(lib, "cattn_bench_resolve_loop",
                    loop.cattn_bench_resolve_loop(preset_fn, resolve_fn, ctx, ctypes.addressof(ra),
                                                  LOOP_CALLS))
        c_us = per_call_us(c_loop, 20, args.reps) / LOOP_CALLS
    rows.append((f"resolve_kv_cache_layout, {B} specs (mixed), 8 workers", py_us, ct_us, c_us))

    # ---- get_supported ----
    decls = []
    for _ in range(B):
        k = int(rng.integers(1, 7))
        d = [str(n) for n in rng.permutation(NAMES)[:k]]
        decls.append(d if "BLNHC" in d else d + ["BLNHC"])
    L = U.KVCacheLayout
    backends = [type("B", (P.AttentionBackend,), {
        "supported_kv_cache_layouts": classmethod(lambda cls, v=[L[n] for n in d]: v)}) for d in decls]

    def py_supported():
        return [m.name for m in U.get_supported_kv_cache_layouts(backends)]

    value = {n: 0 for n in NAMES}
    for n in NAMES:
        lv = ctypes.c_int()
        C.check(lib, "from_name", lib.cattn_kv_cache_layout_from_name(n.encode(), ctypes.byref(lv)))
        value[n] = lv.value
    flat_l = [value[n] for d in decls for n in d]
    counts_s = (ctypes.c_int64 * B)(*[len(d) for d in decls])
    layouts_s = (ctypes.c_int * len(flat_l))(*flat_l)
    out = (ctypes.c_int * 8)()
    sa = C.new(C.cattn_get_supported_kv_cache_layouts_args_t, num_backends=B)
    sa.backend_counts = counts_s
    sa.layouts = ctypes.cast(layouts_s, ctypes.c_void_p)
    sa.out = ctypes.cast(out, ctypes.c_void_p)
    sa.out_capacity = 8

    def c_supported():
        C.check(lib, "cattn_get_supported_kv_cache_layouts",
                lib.cattn_get_supported_kv_cache_layouts(ctypes.byref(sa)))

    want = py_supported()
    c_supported()
    name_of = {v: k for k, v in value.items()}
    got = [name_of[out[i]] for i in range(sa.num_out)]
    ok = got == want
    mismatches += not ok
    print(f"get_supported: upstream {want}, libcattn {got}{'' if ok else '  MISMATCH'}")
    py_us = per_call_us(py_supported, 20, args.reps)
    ct_us = per_call_us(c_supported, 500, args.reps)
    c_us = None
    if loop is not None:
        loop.cattn_bench_call_loop.restype = ctypes.c_int32
        loop.cattn_bench_call_loop.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32]
        fn = ctypes.cast(lib.cattn_get_supported_kv_cache_layouts, ctypes.c_void_p)

        def c_loop2():
            C.check(lib, "cattn_bench_call_loop",
                    loop.cattn_bench_call_loop(fn, ctypes.addressof(sa), LOOP_CALLS))
        c_us = per_call_us(c_loop2, 20, args.reps) / LOOP_CALLS
    rows.append((f"get_supported_kv_cache_layouts, {B} backends", py_us, ct_us, c_us))

    print()
    print(f"| {'call (B = ' + str(B) + ')':<56} | upstream us | ctypes us | x      | C caller us | x      |")
    print(f"|{'-' * 58}|-------------|-----------|--------|-------------|--------|")
    for name, py, ct, cc in rows:
        cc_s = f"{cc:11.3f} | {py / cc:6.0f}x" if cc else f"{'n/a':>11} | {'':>6} "
        print(f"| {name:<56} | {py:11.1f} | {ct:9.2f} | {py / ct:5.0f}x | {cc_s} |")
    lib.cattn_context_destroy(ctx)
    if mismatches:
        print(f"{mismatches} MISMATCH(es)")
        sys.exit(1)


if __name__ == "__main__":
    main()
