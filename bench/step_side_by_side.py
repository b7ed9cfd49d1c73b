# SPDX-License-Identifier: Apache-2.0
"""A whole engine step's metadata side by side, in one process on one GPU: the seed's own code
for the seven step-plan products, libcattn's separate calls for them, and libcattn's step plan,
each plain and inside a captured CUDA graph, at B = 8, 256 and 1024 requests.

Every product is checked first: the plan's outputs equal the separate calls', and the separate
calls' equal the seed's (MISMATCH and exit 1 otherwise). Then:
  step us    N back-to-back steps followed by one sync, wall time / N (median of --reps): the
             rate a caller sustains. The seed's host-planned products sync inside, so its steps
             run one after another anyway. libcattn is driven from C (bench/call_loop.c).
  launches   GPU operations (kernels, copies, fills) the step enqueues, counted by
             torch.profiler; in graph mode, graph launches + what still runs outside the graph.
  gpu us     CUDA events around a graph of 20 steps / 20: device time alone (libcattn).
  host us    N plan runs back to back without a sync, wall time / N: one run call's cost to the
             caller's thread (argument checks and the launch).
Graph mode: libcattn captures the whole step. The seed captures what it can (DCP lengths, the
Mamba table, extend); the restore index, conv1d metadata, local-attention batches and the
fast-prefill metadata plan on the host or read results back (.cpu(), .item(), numpy), so they
run plainly next to the replay, as an engine running the seed has to.

    python3 bench/step_side_by_side.py --reference <oracle dir> --lib build/libcattn.so

--reference (default: $CATTN_ORACLE_DIR) is the seed oracle's folder (bench/README.md).
"""
import argparse
import ctypes
import importlib
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_paths as P  # noqa: E402
import cattn_ctypes as C  # noqa: E402
from gpu_side_by_side import DevTensor  # noqa: E402

# N_DRAFT: the Mamba table's num_speculative_blocks.
DCP_SIZE, MAMBA_BLOCK, N_DRAFT, CHUNK, KV_BLOCK, BLOCK_M = 4, 16, 2, 8192, 16, 8
ALL = 0x7F
PRODUCTS = ["dcp", "restore", "mamba", "conv1d", "local", "fast_prefill", "extend"]
PRODUCT_OUTPUTS = [
    ["dcp_local_seq_lens"], ["pcp_query_restore_idx"], ["mamba_block_table"],
    ["conv1d_nums", "conv1d_mlist", "conv1d_offsetlist", "conv1d_batch_ptr",
     "conv1d_token_chunk_offset_ptr"],
    ["local_query_start_loc", "local_seq_lens", "local_num_computed_tokens", "local_block_table"],
    ["decode_query_start_loc"], ["extend_query_start_loc", "extend_seq_lens"]]


def workload(B, seed=0):
    """B requests, mixed: a few long prefills, the rest decodes (1 token); contexts up to 12k."""
    g = torch.Generator().manual_seed(seed + B)
    prefills = {8: 3, 256: 16, 1024: 24}[B]
    plen = {8: 4096, 256: 2048, 1024: 2560}[B]
    q = torch.ones(B, dtype=torch.int64)
    q[:prefills] = plen - torch.randint(0, 64, (prefills,), generator=g)
    q = q[torch.randperm(B, generator=g)]
    ctx = torch.randint(0, 12288, (B,), generator=g)
    seq = q + ctx
    qsl = torch.cat([torch.zeros(1, dtype=torch.int64), q.cumsum(0)])
    even = torch.where(q > 1, q - q % 2, q)
    cu = torch.cat([torch.zeros(1, dtype=torch.int64), even.cumsum(0)])
    cols = (int(seq.max()) - 1) // MAMBA_BLOCK + N_DRAFT + 2
    table = torch.randint(0, 1 << 20, (B, cols), generator=g, dtype=torch.int64)
    logits = [int(qsl[i + 1]) - 1 for i in range(B)]
    logits += [int(qsl[i]) + int(torch.randint(0, int(q[i]), (1,), generator=g))
               for i in range(0, B, 2)]
    i32 = lambda t: t.to(torch.int32)  # noqa: E731
    return dict(B=B, T=int(qsl[-1]), cols=cols, qsl=i32(qsl), seq=i32(seq), cu=i32(cu),
                table=i32(table), logits=torch.tensor(sorted(logits), dtype=torch.int32))


class Seed:
    """The seed's seven functions on the workload's tensors."""

    def __init__(self, V, w):
        d = "cuda"
        self.V, self.w = V, w
        self.qsl_d, self.seq_d, self.cu_d = w["qsl"].to(d), w["seq"].to(d), w["cu"].to(d)
        self.table_d, self.logits_d = w["table"].to(d), w["logits"].to(d)
        self.arange = torch.arange(w["B"] + 1, dtype=torch.int32, device=d)
        self.slots = torch.zeros(w["T"] + w["B"], dtype=torch.int64, device=d)
        q = w["qsl"][1:] - w["qsl"][:-1]
        self.cad = V.CommonAttentionMetadata(
            query_start_loc=self.qsl_d, query_start_loc_cpu=w["qsl"], seq_lens=self.seq_d,
            num_reqs=w["B"], num_actual_tokens=w["T"], max_query_len=int(q.max()),
            max_seq_len=int(w["seq"].max()), block_table_tensor=self.table_d,
            slot_mapping=self.slots[:w["T"]], logits_indices_padded=self.logits_d,
            num_logits_indices=len(w["logits"]), _seq_lens_cpu=w["seq"])
        self.spec = V.MambaSpec(block_size=MAMBA_BLOCK, num_speculative_blocks=N_DRAFT)

    def captured(self):
        V = self.V
        return (V.get_dcp_local_seq_lens(self.seq_d, DCP_SIZE, None, 1),
                V.mamba_get_block_table_tensor(self.table_d, self.seq_d, self.spec, "align"),
                V.extend_all_queries_by_1(self.cad, self.arange, self.slots))

    def host_planned(self):
        V = self.V
        return (V.get_pcp_query_restore_idx(self.cu_d),
                V.compute_causal_conv1d_metadata(self.w["qsl"], device=torch.device("cuda")),
                V.make_local_attention_virtual_batches(CHUNK, self.cad, KV_BLOCK),
                V.make_kv_sharing_fast_prefill_common_attn_metadata(self.cad))

    def step(self):
        return self.captured() + self.host_planned()


class Cattn:
    """libcattn's separate calls and the step plan on the same inputs, outputs preallocated."""

    def __init__(self, lib, loop, seed, products=ALL):
        self.lib, self.loop, s = lib, loop, seed
        w = s.w
        B, T, dev = w["B"], w["T"], "cuda"
        self.keep = []

        def t(x):
            d = DevTensor(x)
            self.keep.append(d)
            return d.ptr

        e = lambda *shape, dt=torch.int32: torch.empty(*shape, dtype=dt, device=dev)  # noqa
        desc = C.new(C.cattn_step_plan_desc_t, products=products, max_num_reqs=B, max_num_tokens=T,
                     max_num_blocks_per_req=w["cols"], max_num_logits=len(w["logits"]))
        desc.dcp = C.cattn_step_dcp_params_t(DCP_SIZE, C.CATTN_DCP_ALL_RANKS, 1)
        desc.mamba = C.cattn_step_mamba_params_t(MAMBA_BLOCK, N_DRAFT, C.CATTN_MAMBA_CACHE_MODE_ALIGN, 0)
        desc.conv1d = C.cattn_step_conv1d_params_t(BLOCK_M)
        desc.local_attention = C.cattn_step_local_attention_params_t(CHUNK, KV_BLOCK)
        desc.extend = C.cattn_step_extend_params_t(1)
        self.plan = ctypes.c_void_p()
        C.check(lib, "create", lib.cattn_step_plan_create(ctypes.byref(desc), ctypes.addressof(self.plan)))
        shape = C.new(C.cattn_step_plan_shape_t)
        C.check(lib, "shape", lib.cattn_step_plan_get_shape(self.plan, ctypes.byref(shape)))
        self.shape = shape
        pages, vcap, pcap = shape.local_pages, shape.local_capacity, shape.conv1d_capacity

        def outs():
            return dict(dcp=e(B, DCP_SIZE), restore=e(shape.restore_capacity),
                        mamba=e(B, 1 + N_DRAFT), nums=e(B), mlist=e(pcap), offsets=e(pcap),
                        batch_ptr=e(pcap), chunk_ptr=e(pcap), lq=e(vcap + 1), ls=e(vcap),
                        lc=e(vcap), lt=e(vcap, pages), dq=e(B + 1), eq=e(B + 1), es=e(B),
                        counts=e(8, dt=torch.int64), tot=e(1), lcounts=e(3), mt=e(2))

        self.sep, self.pl = outs(), outs()
        self.counts_host = torch.zeros(8, dtype=torch.int64, pin_memory=True)
        # The plan.
        b = C.new(C.cattn_step_batch_t, query_start_loc=t(s.qsl_d), seq_lens=t(s.seq_d),
                  block_table=t(s.table_d), cu_num_tokens=t(s.cu_d), logits_indices=t(s.logits_d))
        p = self.pl
        ch = DevTensor(self.counts_host)
        ch.dl.device = C.DLDevice(3, 0)  # kDLCUDAHost
        self.keep.append(ch)
        o = C.new(C.cattn_step_outputs_t, dcp_local_seq_lens=t(p["dcp"]),
                  pcp_query_restore_idx=t(p["restore"]), mamba_block_table=t(p["mamba"]),
                  conv1d_nums=t(p["nums"]), conv1d_mlist=t(p["mlist"]),
                  conv1d_offsetlist=t(p["offsets"]), conv1d_batch_ptr=t(p["batch_ptr"]),
                  conv1d_token_chunk_offset_ptr=t(p["chunk_ptr"]), local_query_start_loc=t(p["lq"]),
                  local_seq_lens=t(p["ls"]), local_num_computed_tokens=t(p["lc"]),
                  local_block_table=t(p["lt"]), decode_query_start_loc=t(p["dq"]),
                  extend_query_start_loc=t(p["eq"]), extend_seq_lens=t(p["es"]),
                  counts=t(p["counts"]), counts_host=ch.ptr)
        for bit, fields in enumerate(PRODUCT_OUTPUTS):
            if not products & (1 << bit):
                for f in fields:
                    setattr(o, f, None)
        self.batch, self.outputs = b, o
        # The separate calls.
        q = self.sep
        self.args = [
            ("cattn_get_dcp_local_seq_lens", C.new(
                C.cattn_dcp_local_seq_lens_args_t, seq_lens=t(s.seq_d), dcp_size=DCP_SIZE,
                dcp_rank=C.CATTN_DCP_ALL_RANKS, dcp_kv_cache_interleave_size=1, out=t(q["dcp"]))),
            ("cattn_get_pcp_query_restore_idx", C.new(
                C.cattn_pcp_query_restore_idx_args_t, cu_num_tokens=t(s.cu_d),
                restore_idx=t(q["restore"]))),
            ("cattn_mamba_get_block_table_tensor", C.new(
                C.cattn_mamba_block_table_args_t, block_table=t(s.table_d), seq_lens=t(s.seq_d),
                block_size=MAMBA_BLOCK, num_speculative_blocks=N_DRAFT,
                mamba_cache_mode=C.CATTN_MAMBA_CACHE_MODE_ALIGN, out=t(q["mamba"]))),
            ("cattn_compute_causal_conv1d_metadata_capturable", C.new(
                C.cattn_causal_conv1d_metadata_capturable_args_t, query_start_loc=t(s.qsl_d),
                block_m=BLOCK_M, nums=t(q["nums"]), mlist=t(q["mlist"]),
                offsetlist=t(q["offsets"]), batch_ptr=t(q["batch_ptr"]),
                token_chunk_offset_ptr=t(q["chunk_ptr"]), tot=t(q["tot"]))),
            ("cattn_make_local_attention_virtual_batches_capturable", C.new(
                C.cattn_local_attention_capturable_args_t, attn_chunk_size=CHUNK, block_size=KV_BLOCK,
                query_start_loc=t(s.qsl_d), seq_lens=t(s.seq_d), block_table=t(s.table_d),
                query_start_loc_out=t(q["lq"]), seq_lens_out=t(q["ls"]),
                num_computed_tokens_out=t(q["lc"]), block_table_out=t(q["lt"]),
                counts=t(q["lcounts"]))),
        ]
        m = C.new_metadata(query_start_loc=t(s.qsl_d), logits_indices_padded=t(s.logits_d),
                           num_reqs=B, num_logits_indices=len(w["logits"]), max_query_len=2,
                           max_seq_len=1, num_actual_tokens=T)
        mo = C.new_metadata(query_start_loc=t(q["dq"]))
        me = C.new_metadata(query_start_loc=t(s.qsl_d), seq_lens=t(s.seq_d), num_reqs=B)
        meo = C.new_metadata(query_start_loc=t(q["eq"]), seq_lens=t(q["es"]))
        self.keep += [m, mo, me, meo]
        self.args += [
            ("cattn_make_kv_sharing_fast_prefill_common_attn_metadata", C.new(
                C.cattn_fast_prefill_metadata_args_t, metadata=ctypes.pointer(m),
                out=ctypes.pointer(mo), decode_max_and_total=t(q["mt"]))),
            ("cattn_extend_all_queries_by_n", C.new(
                C.cattn_extend_all_queries_by_n_args_t, metadata=ctypes.pointer(me), n=1,
                out=ctypes.pointer(meo))),
        ]
        n = len(self.args)
        self.fns = (ctypes.c_void_p * n)(*[ctypes.cast(getattr(lib, f), ctypes.c_void_p).value
                                          for f, _ in self.args])
        self.ptrs = (ctypes.c_void_p * n)(*[ctypes.addressof(a) for _, a in self.args])
        self.run_fn = ctypes.cast(lib.cattn_step_plan_run, ctypes.c_void_p)
        self.stream = None

    def set_stream(self, s):
        self.stream = s
        for _, a in self.args:
            a.stream = s

    def separate(self, n=1):
        C.check(self.lib, "separate calls",
                self.loop.cattn_bench_call_list(ctypes.addressof(self.fns),
                                                ctypes.addressof(self.ptrs), len(self.args), n))

    def plan_run(self, n=1):
        C.check(self.lib, "cattn_step_plan_run", self.loop.cattn_bench_step_plan_loop(
            self.run_fn, self.plan, ctypes.addressof(self.batch), ctypes.addressof(self.outputs),
            self.stream, n))


def fail(what):
    print("MISMATCH", what)
    sys.exit(1)


def check(seed, c):
    c.separate()
    c.plan_run()
    torch.cuda.synchronize()
    sep, pl = c.sep, c.pl
    for k in sep:
        if k in ("counts", "tot", "lcounts", "mt"):
            continue
        if not torch.equal(sep[k], pl[k]):
            fail(f"plan {k} != separate call")
    dcp, mamba, ext, restore, conv, local, fast = seed.step()
    torch.cuda.synchronize()
    if not torch.equal(sep["dcp"], dcp) or not torch.equal(sep["mamba"], mamba):
        fail("dcp or mamba vs seed")
    if not torch.equal(sep["eq"], ext.query_start_loc) or not torch.equal(sep["es"], ext.seq_lens):
        fail("extend vs seed")
    size = restore.numel()
    if not torch.equal(sep["restore"][:size].cpu(), restore.cpu().to(torch.int32)):
        fail("restore vs seed")
    nd, bp, tp = conv
    tot = nd[BLOCK_M]["tot"]
    if not (torch.equal(sep["batch_ptr"][:tot], bp[:tot]) and
            torch.equal(sep["chunk_ptr"][:tot], tp[:tot]) and int(sep["tot"][0]) == tot):
        fail("conv1d vs seed")
    lm, _ = local
    v = lm.num_reqs
    if not (torch.equal(sep["lq"][:v + 1].cpu(), lm.query_start_loc_cpu.to(torch.int32)) and
            torch.equal(sep["ls"][:v].cpu(), lm.seq_lens_cpu.to(torch.int32)) and
            torch.equal(sep["lt"][:v], lm.block_table_tensor.to(torch.int32)) and
            sep["lcounts"].tolist() == [v, int(lm.max_query_len), int(lm.max_seq_len)]):
        fail("local attention vs seed")
    if not (torch.equal(sep["dq"], fast.query_start_loc) and
            sep["mt"].tolist() == [fast.max_query_len, fast.num_actual_tokens]):
        fail("fast prefill vs seed")
    want = [seed.w["T"], size, tot, v, int(lm.max_query_len), int(lm.max_seq_len),
            fast.max_query_len, fast.num_actual_tokens]
    if pl["counts"].tolist() != want or c.counts_host.tolist() != want:
        fail(f"plan counts {pl['counts'].tolist()} / host {c.counts_host.tolist()} != {want}")


def wall_us(fn, n, reps):
    fn(n)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn(n)
        torch.cuda.synchronize()
        times.append((time.perf_counter_ns() - t0) / 1000 / n)
    return statistics.median(times)


def host_only_us(fn, n, reps):
    """Host time of one call into an idle stream (n calls back to back would fill the launch
    queue once the kernels outlast the calls, and then time the GPU instead)."""
    times = []
    for _ in range(reps * n):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn(1)
        times.append((time.perf_counter_ns() - t0) / 1000)
    torch.cuda.synchronize()
    return statistics.median(times)


def capture(c, fn, k=1):
    g = torch.cuda.CUDAGraph()
    plain = c.stream
    with torch.cuda.graph(g):
        c.set_stream(torch.cuda.current_stream().cuda_stream)
        fn(k)
    c.set_stream(plain)
    return g


def events_us(g, k, reps):
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / k)
    return statistics.median(times)


def gpu_ops(fn):
    """GPU operations one call of fn enqueues, from torch.profiler; None if it cannot count."""
    try:
        from torch.profiler import ProfilerActivity, profile
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception as e:  # noqa: BLE001
        print(f"note: cannot count launches ({e})")
        return None


def fmt_ops(n):
    return "?" if n is None else str(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", default=None,
                    help=f"the seed oracle's folder (default: ${P.ORACLE_ENV})")
    ap.add_argument("--module", default="vllm_ref")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--batches", default="8,256,1024")
    ap.add_argument("--only", choices=PRODUCTS + ["all"],
                    help="just run a plan of this product (or all) a few times, for a profiler")
    ap.add_argument("--per-product", action="store_true",
                    help="also time a plan of each product alone (gpu us)")
    args = ap.parse_args()
    sys.path.insert(0, P.seed_oracle(sys.argv[0], args.reference, args.module))
    V = importlib.import_module(args.module)
    lib = C.load(args.lib)
    loop_path = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                             "libcattn_bench_loop.so")
    loop = ctypes.CDLL(loop_path)
    for f in ("cattn_bench_call_list", "cattn_bench_step_plan_loop"):
        getattr(loop, f).restype = ctypes.c_int32
    loop.cattn_bench_call_list.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                           ctypes.c_int32]
    loop.cattn_bench_step_plan_loop.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int32]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    N, K = 100, 20
    # Everything runs on one non-blocking stream (the legacy default stream costs every launch
    # an implicit synchronisation with the other streams).
    side = torch.cuda.Stream()
    torch.cuda.set_stream(side)
    batches = [int(x) for x in args.batches.split(",")]
    timed, extra = {}, []
    for B in batches:
        w = workload(B)
        seed = Seed(V, w)
        if args.only:
            mask = ALL if args.only == "all" else 1 << PRODUCTS.index(args.only)
            one = Cattn(lib, loop, seed, mask)
            one.set_stream(side.cuda_stream)
            one.plan_run(3)
            torch.cuda.synchronize()
            continue
        c = Cattn(lib, loop, seed)
        c.set_stream(side.cuda_stream)
        check(seed, c)
        t = dict(T=w["T"])
        reps_seed = max(5, args.reps // 3)
        # Plain.
        t["seed"] = wall_us(lambda n: [seed.step() for _ in range(n)], 3, reps_seed)
        t["sep"] = wall_us(c.separate, N, args.reps)
        t["plan"] = wall_us(c.plan_run, N, args.reps)
        # Graphs: the seed captures its device-only products; libcattn the whole step.
        sg = torch.cuda.CUDAGraph()
        with torch.cuda.graph(sg):
            seed.captured()
        t["g_seed"] = wall_us(lambda n: [(sg.replay(), seed.host_planned()) for _ in range(n)],
                              3, reps_seed)
        gsep, gplan = capture(c, c.separate), capture(c, c.plan_run)
        t["g_sep"] = wall_us(lambda n: [gsep.replay() for _ in range(n)], N, args.reps)
        t["g_plan"] = wall_us(lambda n: [gplan.replay() for _ in range(n)], N, args.reps)
        # Device time alone, and a call's host cost.
        t["gpu_sep"] = events_us(capture(c, c.separate, K), K, args.reps)
        t["gpu_plan"] = events_us(capture(c, c.plan_run, K), K, args.reps)
        t["host_plan"] = host_only_us(c.plan_run, 10, args.reps)
        t["host_sep"] = host_only_us(c.separate, 10, args.reps)
        mirror = c.outputs.counts_host
        c.outputs.counts_host = None
        t["host_bare"] = host_only_us(c.plan_run, 10, args.reps)
        c.outputs.counts_host = mirror
        lib.cattn_step_plan_destroy(c.plan)
        if args.per_product:
            times = []
            for bit, name in enumerate(PRODUCTS):
                one = Cattn(lib, loop, seed, 1 << bit)
                one.set_stream(side.cuda_stream)
                g_us = events_us(capture(one, one.plan_run, K), K, args.reps)
                h_us = host_only_us(one.plan_run, 10, args.reps)
                times.append(f"{name} {g_us:.2f} (host {h_us:.2f})")
                lib.cattn_step_plan_destroy(one.plan)
            extra.append(f"| {B} | {', '.join(times)} |")
        timed[B] = t
        del seed, c
        torch.cuda.empty_cache()
    if args.only:
        return
    # Launch counts last: the profiler leaves tracing hooks behind that slow later launches.
    for B in batches:
        seed = Seed(V, workload(B))
        c = Cattn(lib, loop, seed)
        c.set_stream(side.cuda_stream)
        timed[B].update(ops_seed=gpu_ops(seed.step), ops_host_planned=gpu_ops(seed.host_planned),
                        ops_sep=gpu_ops(c.separate), ops_plan=gpu_ops(c.plan_run))
        lib.cattn_step_plan_destroy(c.plan)
    print("| B | tokens | mode | seed us | launches | separate us | launches | plan us | "
          "launches | seed/plan | separate/plan |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for B in batches:
        t = timed[B]
        o = {k: fmt_ops(t[k]) for k in ("ops_seed", "ops_host_planned", "ops_sep", "ops_plan")}
        print(f"| {B} | {t['T']} | plain | {t['seed']:.1f} | {o['ops_seed']} | {t['sep']:.2f} | "
              f"{o['ops_sep']} | {t['plan']:.2f} | {o['ops_plan']} | "
              f"{t['seed'] / t['plan']:.0f}x | {t['sep'] / t['plan']:.2f}x |")
        print(f"| {B} | {t['T']} | graph | {t['g_seed']:.1f} | 1 graph + {o['ops_host_planned']} | "
              f"{t['g_sep']:.2f} | 1 graph of {o['ops_sep']} | {t['g_plan']:.2f} | "
              f"1 graph of {o['ops_plan']} | {t['g_seed'] / t['g_plan']:.0f}x | "
              f"{t['g_sep'] / t['g_plan']:.2f}x |")
    print("\n| B | separate calls gpu us | plan gpu us | separate calls host us | plan run host us |"
          " plan run host us without counts_host |")
    print("|---|---|---|---|---|---|")
    for B in batches:
        t = timed[B]
        print(f"| {B} | {t['gpu_sep']:.2f} | {t['gpu_plan']:.2f} | {t['host_sep']:.2f} | "
              f"{t['host_plan']:.2f} | {t['host_bare']:.2f} |")
    if extra:
        print("\n| B | a plan of one product: gpu us (host us) |")
        print("|---|---|")
        for line in extra:
            print(line)


if __name__ == "__main__":
    main()
