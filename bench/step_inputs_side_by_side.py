# SPDX-License-Identifier: Apache-2.0
"""A step's attention inputs side by side on one GPU: vLLM's model runner v2 (MRV2) code against
libcattn's step plan, on the same persistent state, at B = 8, 256 and 1024 requests, 1 and 3
KV-cache groups (block sizes [16] and [16, 16, 64], kernel block = block size), DCP 1 and 4
(rank 0, interleave 1), decodes of 1 token (and of 1 + 3 drafts).

  (a) vLLM MRV2: its host prep (np.cumsum of the scheduled counts into query_start_loc and its
      upload, the idx_mapping upload; with drafts cu_num_logits' cumsum and upload) and its
      kernels as its Python launches them: prepare_pos_seq_lens, BlockTables.gather_block_tables,
      BlockTables.compute_slot_mappings, combine_sampled_and_draft_tokens, and with drafts
      expand_idx_mapping (without drafts MRV2 makes cu_num_logits with torch.arange and
      expanded_local_pos with torch.zeros instead). The functions and Triton kernels are vLLM's,
      imported from the step-inputs oracle (bench/step_inputs_mrv2.py drives them).
  (b) libcattn's step plan of CATTN_STEP_INPUTS | BLOCK_TABLES | SLOT_MAPPINGS | LOGITS_INDICES |
      TOKEN_TO_REQ | SPLIT: one launch; its inputs (num_scheduled_tokens, idx_mapping, drafts)
      are device tensors the engine has uploaded, so this row has no copies.
  (b) + 1.1 products: the same plus CATTN_STEP_DCP_LOCAL_SEQ_LENS and CATTN_STEP_EXTEND_QUERIES
      (two launches).
  (b) whole step: the same plus all seven 1.1 products (CATTN_STEP_ALL_PRODUCTS with
      bench/step_plan_desc.h's settings, as bench_gpu's whole-step rows; two launches).
  (b) + its uploads: (b) with the engine's uploads of its inputs (from pinned staging, copied
      into by the host each step), to set beside (a), whose row includes its uploads.
Each plain (Python issuing every step; libcattn's plan from C, bench/call_loop.c, when
<lib dir>/bench/libcattn_bench_loop.so is built, else through ctypes) and captured once into a
torch.cuda.CUDAGraph and replayed (vLLM: the host prep runs before each replay into pinned
staging that the graph's copies read; libcattn: the ctypes call on torch's current stream).

Before timing, every product is checked: libcattn's equal vLLM's on the same inputs (positions,
seq_lens, query_start_loc; each group's gathered table on the entries in use; each group's slot
mapping over all max_num_batched_tokens entries; logits_indices, cu_num_logits, expanded
idx_mapping and local positions), plainly, on the split (staged) path and after graph replays
over poisoned outputs; libcattn's products vLLM has no kernel for here (token_to_req_indices,
the split and the other counts, the batch's num_computed_tokens, DCP local lengths, extended
queries, the zeros past the step) are checked against numpy. MISMATCH and exit 1 otherwise.
Every path must capture into a graph (vLLM's too: MRV2's uploads from pinned staging and its
kernels hold no host sync); torch refusing a capture prints ERROR and exits 1, and any other
exception is raised (bench/graph_capture.py). A floor that nvcc cannot build or that fails to
run, and launches torch.profiler cannot count, fail the run too, after the table.

Columns:
  us/step    CUDA events around N steps / N, median over --reps (plain: Python issues N steps
             back to back; graph: N times the host prep + a replay).
  host us    wall time of N steps issued back to back without a sync / N, median.
  gpu us     device time alone: one graph of K steps replayed, events / K.
  launches   GPU operations (kernels and copies) a plain step enqueues, from torch.profiler;
             graph rows: one graph of that many nodes.
  vLLM/this  (a)'s us/step over the row's, plain against plain and graph against graph.
The floor rows, measured in the same run: an empty kernel <<<1, 32>>> (and one taking 1472 B of
parameters) launched from C, and a torch graph of one empty kernel replayed from Python - the
launches of bench/launch_floor.cu (bench_gpu's floor rows), built here with nvcc into a temporary
library and driven by call_loop.c's cattn_bench_call_loop.
Under the table, a workload table (one row per configuration; --device cpu prints it too):
requests, computed tokens, the persistent tables ([2B, 2048] int32 per group), block sizes, the
blocks in use per request (vLLM's num_blocks, cdiv(seq_len, block size x DCP)) and the bytes the
gather reads and writes, in the columns bench_gpu --filter step prints for its own rows, whose
tables are much fuller (every row up to 2048 blocks): set the two side by side to compare.

    python3 bench/step_inputs_side_by_side.py --lib build/libcattn.so [--oracle DIR] [--json F]

Without a GPU (checks only, the Triton kernels under Triton's interpreter, libcattn's host calls
in place of the plan, which is only created and argument-checked on fake device tensors; first
graph_capture.py's self-check of the capture helpers the GPU run uses):

    /tmp/cattn-step-inputs-venv/bin/python bench/step_inputs_side_by_side.py \\
        --lib build-cpu/libcattn.so --device cpu

--oracle (default: $CATTN_ORACLE_STEP_INPUTS_DIR, else ../shared/oracle_upstream/step_inputs
beside the checkout) is the step-inputs oracle's folder: vllm_step_inputs.py and
_prelude_step_inputs.py, with vllm_upstream.py in the folder above it.
"""
import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_paths as P  # noqa: E402
from graph_capture import CaptureFailed, capture_required  # noqa: E402

# include/cattn.h
CATTN_NOT_SUPPORTED = 5
STEP_DCP_LOCAL_SEQ_LENS, STEP_EXTEND_QUERIES = 1 << 0, 1 << 6
STEP_INPUTS, STEP_BLOCK_TABLES, STEP_SLOT_MAPPINGS = 1 << 7, 1 << 8, 1 << 9
STEP_LOGITS_INDICES, STEP_TOKEN_TO_REQ, STEP_SPLIT = 1 << 10, 1 << 11, 1 << 12
PRODUCTS_B = (STEP_INPUTS | STEP_BLOCK_TABLES | STEP_SLOT_MAPPINGS | STEP_LOGITS_INDICES |
              STEP_TOKEN_TO_REQ | STEP_SPLIT)
PRODUCTS_B11 = PRODUCTS_B | STEP_DCP_LOCAL_SEQ_LENS | STEP_EXTEND_QUERIES
STEP_ALL_PRODUCTS = 0x7F  # the seven 1.1 products
PRODUCTS_B7 = PRODUCTS_B | STEP_ALL_PRODUCTS
SLOT_MAPPING_MRV2, SLOT_MODE_TOKEN_TO_KV_SLOT = 0, 0
NUM_COUNTS = 16
POISON = -3

N_PY, N_C, K_GRAPH = 50, 100, 20  # steps per timing from Python / from C; steps in a gpu-us graph

# Filled by main() once torch, numpy, the oracle and the bench helpers are imported (the Triton
# interpreter has to be chosen before triton is imported). They are this script's own: what
# another script imports from here must not read them (graph_capture.py, bench_paths.py and
# step_inputs_mrv2.py hold the shared helpers).
torch = np = C = DevTensor = M = gpu_ops = None


# ---- libcattn ---------------------------------------------------------------------------------
def make_outputs(w, dev, with_11=False, plan=True, shape=None):
    """libcattn's output tensors, poisoned; per-group entries are lists. shape: the plan's
    cattn_step_plan_shape_t when it holds all seven 1.1 products (their outputs too)."""
    B, G, L_cap = w["B"], len(w["block_sizes"]), w["B"] * (1 + w["drafts"])
    i32 = lambda *s: torch.full(s, POISON, dtype=torch.int32, device=dev)  # noqa: E731
    i64 = lambda *s: torch.full(s, POISON, dtype=torch.int64, device=dev)  # noqa: E731
    o = dict(query_start_loc=i32(B + 1), seq_lens=i32(B), positions=i64(M.MAX_TOKENS),
             num_computed_tokens=i32(B),
             block_tables=[i32(B, M.TABLE_COLS) for _ in range(G)],
             slot_mappings=[i64(M.MAX_TOKENS) for _ in range(G)],
             logits_indices=i64(L_cap), cu_num_logits=i32(B + 1),
             expanded_idx_mapping=i32(L_cap), expanded_local_pos=i32(L_cap))
    if plan:
        o.update(token_to_req_indices=i32(M.MAX_TOKENS), counts=i64(NUM_COUNTS))
    if with_11:
        o.update(dcp_local_seq_lens=i32(B), extend_query_start_loc=i32(B + 1),
                 extend_seq_lens=i32(B))
    if shape is not None:  # as bench/step_plan_desc.h's bench_step_plan_outputs
        conv, local = shape.conv1d_capacity, shape.local_capacity
        o.update(pcp_query_restore_idx=i32(shape.restore_capacity), mamba_block_table=i32(B, 3),
                 conv1d_nums=i32(B), conv1d_mlist=i32(conv), conv1d_offsetlist=i32(conv),
                 conv1d_batch_ptr=i32(conv), conv1d_token_chunk_offset_ptr=i32(conv),
                 local_query_start_loc=i32(local + 1), local_seq_lens=i32(local),
                 local_num_computed_tokens=i32(local),
                 local_block_table=i32(local, shape.local_pages),
                 decode_query_start_loc=i32(B + 1))
    return o


def poison(o):
    for v in o.values():
        for t in (v if isinstance(v, list) else [v]):
            t.fill_(POISON)


def results(o):
    h = lambda t: t.detach().to("cpu", torch.int64).clone()  # noqa: E731
    return {k: ([h(t) for t in v] if isinstance(v, list) else h(v)) for k, v in o.items()}


class Views:
    """DLTensor views kept alive; fake_cuda marks CPU memory as device memory (the plan's
    argument checks on a CPU-only build)."""

    def __init__(self, fake_cuda=False):
        self.keep, self.fake = [], fake_cuda

    def __call__(self, t):
        d = DevTensor(t)
        if self.fake:
            d.dl.device = C.DLDevice(C.kDLCUDA, 0)
        self.keep.append(d)
        return d.ptr


class Plan:
    """libcattn's step plan over the MRV2 state's persistent tensors (the same memory vLLM's
    kernels read): num_computed_tokens, every group's table and num_blocks."""

    def __init__(self, lib, loop, w, mrv2, products, fake_cuda=False):
        self.lib, self.loop, self.w = lib, loop, w
        dev = mrv2.dev
        B, R, G, S, D = w["B"], w["R"], len(w["block_sizes"]), w["dcp"], w["drafts"]
        t = self.views = Views(fake_cuda)
        desc = C.new(C.cattn_step_plan_desc_t, products=products, max_num_reqs=B,
                     max_num_tokens=M.MAX_TOKENS, max_num_blocks_per_req=0,
                     max_num_logits=B * (1 + D), max_num_persistent_reqs=R)
        # CATTN_STEP_PLAN_DESC_INIT's values where this bench has none of its own.
        desc.dcp = C.cattn_step_dcp_params_t(S, 0, 1)
        desc.mamba = C.cattn_step_mamba_params_t(1, 0, C.CATTN_MAMBA_CACHE_MODE_NONE, 0)
        desc.conv1d = C.cattn_step_conv1d_params_t(8)
        desc.extend = C.cattn_step_extend_params_t(1)
        desc.inputs = C.cattn_step_inputs_params_t(
            num_kv_groups=G, slot_mapping_contract=SLOT_MAPPING_MRV2, dcp_size=S, dcp_rank=0,
            dcp_kv_cache_interleave_size=1, num_new_sampled_tokens=1, decode_threshold=1 + D,
            require_uniform=0, table_group=0)
        for g, bs in enumerate(w["block_sizes"]):
            desc.kv_groups[g] = C.cattn_kv_group_params_t(bs, bs, M.TABLE_COLS,
                                                          SLOT_MODE_TOKEN_TO_KV_SLOT, 0)
        whole = products & STEP_ALL_PRODUCTS == STEP_ALL_PRODUCTS
        if whole:  # bench/step_plan_desc.h's settings for the products this bench has none for
            desc.max_num_blocks_per_req = M.TABLE_COLS
            desc.mamba = C.cattn_step_mamba_params_t(16, 2, C.CATTN_MAMBA_CACHE_MODE_ALIGN, 0)
            desc.local_attention = C.cattn_step_local_attention_params_t(8192, 16)
        self.plan = ctypes.c_void_p()
        C.check(lib, "cattn_step_plan_create",
                lib.cattn_step_plan_create(ctypes.byref(desc), ctypes.addressof(self.plan)))
        shape = None
        if whole:
            shape = C.new(C.cattn_step_plan_shape_t)
            C.check(lib, "cattn_step_plan_get_shape",
                    lib.cattn_step_plan_get_shape(self.plan, ctypes.byref(shape)))
        # The step's inputs on the device, and pinned staging for "(b) + its uploads".
        pin = dev.type == "cuda"
        src = {"nst": w["num_scheduled_tokens"], "idx": w["idx_mapping"],
               "nd": w["num_draft_tokens"]}
        if not D:
            del src["nd"]
        self.src = src
        self.dev_in = {k: torch.from_numpy(v.copy()).to(dev) for k, v in src.items()}
        self.pin = {k: torch.zeros(len(v), dtype=torch.int32, pin_memory=pin)
                    for k, v in src.items()}
        self.upload_host()
        self.nreq = torch.tensor([B], dtype=torch.int32, device=dev)
        b = C.new(C.cattn_step_batch_t, num_reqs=t(self.nreq),
                  num_scheduled_tokens=t(self.dev_in["nst"]), idx_mapping=t(self.dev_in["idx"]),
                  num_computed_tokens=t(mrv2.nct))
        if D:
            b.num_draft_tokens = t(self.dev_in["nd"])
        if whole:  # fast prefill's sampled-token indices (zeros, as bench_gpu's)
            self.fast_logits = torch.zeros(B * (1 + D), dtype=torch.int32, device=dev)
            b.logits_indices = t(self.fast_logits)
        for g in range(G):
            b.kv_block_tables[g] = t(mrv2.bts.block_tables[g].gpu)
            b.kv_num_blocks[g] = t(mrv2.bts.num_blocks.gpu[g])
        self.o = make_outputs(w, dev, with_11=bool(products & STEP_EXTEND_QUERIES), shape=shape)
        out = C.new(C.cattn_step_outputs_t)
        for k, v in self.o.items():
            if isinstance(v, list):
                field = getattr(out, k)
                for g, x in enumerate(v):
                    field[g] = t(x)
            else:
                setattr(out, k, t(v))
        self.batch, self.outputs = b, out
        self.run_fn = ctypes.cast(lib.cattn_step_plan_run, ctypes.c_void_p)
        self.stream = None

    def call(self, stream):
        """One cattn_step_plan_run through ctypes: its status."""
        return self.lib.cattn_step_plan_run(self.plan, ctypes.byref(self.batch),
                                            ctypes.byref(self.outputs), stream)

    def run(self, n=1, stream=None):
        s = self.stream if stream is None else stream
        if self.loop is not None:
            status = self.loop.cattn_bench_step_plan_loop(
                self.run_fn, self.plan, ctypes.addressof(self.batch),
                ctypes.addressof(self.outputs), s, n)
        else:
            status = 0
            for _ in range(n):
                status = self.call(s)
                if status:
                    break
        C.check(self.lib, "cattn_step_plan_run", status)

    def upload_host(self):
        for k, v in self.src.items():
            self.pin[k].numpy()[:] = v

    def upload_device(self):
        for k, v in self.dev_in.items():
            v.copy_(self.pin[k], non_blocking=True)

    def destroy(self):
        if self.plan:
            self.lib.cattn_step_plan_destroy(self.plan)
            self.plan = ctypes.c_void_p()


class HostCalls:
    """libcattn's host calls on CPU tensors (the dry run: the plan needs a GPU):
    cattn_prepare_pos_seq_lens, cattn_gather_block_tables and cattn_compute_slot_mappings per
    group, cattn_combine_sampled_and_draft_tokens, into the outputs the plan would write."""

    def __init__(self, lib, w, mrv2):
        self.lib = lib
        S, D = w["dcp"], w["drafts"]
        t = self.views = Views()
        cpu = lambda a: torch.from_numpy(a).clone()  # noqa: E731
        nst, idx = cpu(w["num_scheduled_tokens"]), cpu(w["idx_mapping"])
        nd = cpu(w["num_draft_tokens"])
        o = self.o = make_outputs(w, "cpu", plan=False)
        self.calls = [("cattn_prepare_pos_seq_lens", C.new(
            C.cattn_prepare_pos_seq_lens_args_t, num_scheduled_tokens=t(nst), idx_mapping=t(idx),
            num_computed_tokens=t(mrv2.nct), query_start_loc=t(o["query_start_loc"]),
            seq_lens=t(o["seq_lens"]), positions=t(o["positions"]),
            batch_num_computed_tokens=t(o["num_computed_tokens"])))]
        for g, bs in enumerate(w["block_sizes"]):
            table = mrv2.bts.block_tables[g].gpu
            self.calls.append(("cattn_gather_block_tables", C.new(
                C.cattn_gather_block_tables_args_t, idx_mapping=t(idx), block_table=t(table),
                num_blocks=t(mrv2.bts.num_blocks.gpu[g]), out=t(o["block_tables"][g]))))
            self.calls.append(("cattn_compute_slot_mappings", C.new(
                C.cattn_compute_slot_mappings_args_t, contract=SLOT_MAPPING_MRV2, block_size=bs,
                kernel_block_size=bs, dcp_size=S, dcp_rank=0, dcp_kv_cache_interleave_size=1,
                query_start_loc=t(o["query_start_loc"]), positions=t(o["positions"]),
                idx_mapping=t(idx), block_table=t(table), slot_mapping=t(o["slot_mappings"][g]))))
        comb = C.new(C.cattn_combine_sampled_and_draft_tokens_args_t, num_new_sampled_tokens=1,
                     query_start_loc=t(o["query_start_loc"]), idx_mapping=t(idx),
                     logits_indices=t(o["logits_indices"]), cu_num_logits=t(o["cu_num_logits"]),
                     expanded_idx_mapping=t(o["expanded_idx_mapping"]),
                     expanded_local_pos=t(o["expanded_local_pos"]))
        if D:
            comb.num_draft_tokens = t(nd)
        self.calls.append(("cattn_combine_sampled_and_draft_tokens", comb))

    def run(self):
        for name, a in self.calls:
            C.check(self.lib, name, getattr(self.lib, name)(ctypes.byref(a)))

    def extras(self, w):
        """What the plan writes past vLLM's five kernels, from libcattn's own host calls on the
        host outputs above (cattn_token_to_req_indices, cattn_split_decodes_and_prefills,
        cattn_get_dcp_local_seq_lens, cattn_extend_all_queries_by_n): checks expected()'s numpy
        before the GPU run holds the plan to it."""
        B, T, S, t, o = w["B"], w["T"], w["dcp"], self.views, self.o
        i32 = lambda *s: torch.full(s, POISON, dtype=torch.int32)  # noqa: E731
        e = dict(token_to_req_indices=i32(M.MAX_TOKENS), dcp_local_seq_lens=i32(B),
                 extend_query_start_loc=i32(B + 1), extend_seq_lens=i32(B))
        qsl, seq = o["query_start_loc"], o["seq_lens"]
        meta = C.new_metadata(query_start_loc=t(qsl), seq_lens=t(seq), num_reqs=B,
                              num_actual_tokens=T)
        ext = C.new_metadata(query_start_loc=t(e["extend_query_start_loc"]),
                             seq_lens=t(e["extend_seq_lens"]))
        split = C.new(C.cattn_split_decodes_and_prefills_args_t, query_start_loc_cpu=t(qsl),
                      num_reqs=B, num_actual_tokens=-1, max_query_len=-1,
                      decode_threshold=1 + w["drafts"], require_uniform=0,
                      treat_short_extends_as_decodes=1)
        calls = [
            ("cattn_token_to_req_indices", C.new(
                C.cattn_token_to_req_indices_args_t, metadata=ctypes.pointer(meta),
                buffer=t(e["token_to_req_indices"]))),
            ("cattn_split_decodes_and_prefills", split),
            ("cattn_get_dcp_local_seq_lens", C.new(
                C.cattn_dcp_local_seq_lens_args_t, seq_lens=t(seq), dcp_size=S, dcp_rank=0,
                dcp_kv_cache_interleave_size=1, out=t(e["dcp_local_seq_lens"]))),
            ("cattn_extend_all_queries_by_n", C.new(
                C.cattn_extend_all_queries_by_n_args_t, metadata=ctypes.pointer(meta), n=1,
                out=ctypes.pointer(ext), dcp_kv_cache_interleave_size=1)),
        ]
        for name, a in calls:
            C.check(self.lib, name, getattr(self.lib, name)(ctypes.byref(a)))
        got = results(e)
        got["token_to_req_indices"] = got["token_to_req_indices"][:T]
        got["split"] = torch.tensor([split.num_decodes, split.num_prefills,
                                     split.num_decode_tokens, split.num_prefill_tokens])
        return got


# ---- the checks -------------------------------------------------------------------------------
def expected(w, with_11):
    """What libcattn writes that vLLM's five kernels do not (numpy from the scheduler's view)."""
    B, T, L, D, S = w["B"], w["T"], w["L"], w["drafts"], w["dcp"]
    q = w["num_scheduled_tokens"].astype(np.int64)
    qsl = w["query_start_loc"].astype(np.int64)
    seq = w["seq_lens"].astype(np.int64)
    thr = 1 + D
    if q.max() <= thr:
        split = [B, 0, T, 0]
    elif q[0] > thr:
        split = [0, B, 0, T]
    else:
        f = int(np.argmax(q > thr))
        split = [f, B - f, int(qsl[f]), T - int(qsl[f])]
    e = dict(num_computed_tokens=w["num_computed_tokens"][w["idx_mapping"]].astype(np.int64),
             token_to_req_indices=np.repeat(np.arange(B), q),
             counts=np.array([T, 0, 0, 0, 0, 0, 0, 0, B, L, q.max(), seq.max()] + split))
    if with_11:
        base = seq // S
        e.update(dcp_local_seq_lens=base + np.clip(seq - base * S, 0, 1),
                 extend_query_start_loc=qsl + np.arange(B + 1), extend_seq_lens=seq + 1)
    return e


def compare(ref, got, w):
    """vLLM's products (ref) against libcattn's (got), then libcattn's own against numpy and the
    padding contract's zeros past the step. Returns the differences."""
    T, L = w["T"], w["L"]
    bad = []

    def eq(what, a, b):
        a, b = torch.as_tensor(a).reshape(-1), torch.as_tensor(b).reshape(-1).to(torch.int64)
        if a.shape != b.shape:
            bad.append(f"{what}: {tuple(a.shape)} entries (vLLM / expected) against "
                       f"{tuple(b.shape)} (libcattn)")
            return
        diff = (a.to(torch.int64) != b).nonzero().reshape(-1)
        if len(diff):
            i = int(diff[0])
            bad.append(f"{what}: {len(diff)} of {a.numel()} entries differ, the first at {i}: "
                       f"want {int(a[i])}, libcattn {int(b[i])}")

    eq("query_start_loc", ref["query_start_loc"], got["query_start_loc"])
    eq("seq_lens", ref["seq_lens"], got["seq_lens"])
    eq("positions", ref["positions"], got["positions"][:T])
    for g, ids in enumerate(w["block_ids"]):
        n = torch.tensor([len(x) for x in ids])
        used = torch.arange(M.TABLE_COLS)[None, :] < n[:, None]
        eq(f"block_tables[{g}] (entries in use)", ref["block_tables"][g][used],
           got["block_tables"][g][used])
        eq(f"slot_mappings[{g}]", ref["slot_mappings"][g], got["slot_mappings"][g])
    eq("logits_indices", ref["logits_indices"], got["logits_indices"][:L])
    eq("cu_num_logits", ref["cu_num_logits"], got["cu_num_logits"])
    eq("expanded_idx_mapping", ref["expanded_idx_mapping"], got["expanded_idx_mapping"][:L])
    eq("expanded_local_pos", ref["expanded_local_pos"], got["expanded_local_pos"][:L])
    # libcattn's own, against numpy and the padding contract.
    e = expected(w, "extend_seq_lens" in got)
    eq("positions past the step (0)", torch.zeros(M.MAX_TOKENS - T), got["positions"][T:])
    for k in ("logits_indices", "expanded_idx_mapping", "expanded_local_pos"):
        eq(f"{k} past the logits (0)", torch.zeros(len(got[k]) - L), got[k][L:])
    for k, v in e.items():
        if k not in got:
            continue
        if k == "counts" and "local_seq_lens" in got:  # entries 1-7 are the five others'
            keep = [0] + list(range(8, NUM_COUNTS))
            eq("counts (tokens, step inputs)", v[keep], got[k][keep])
        elif k == "token_to_req_indices":
            eq(k, v, got[k][:T])
            eq(f"{k} past the step (0)", torch.zeros(M.MAX_TOKENS - T), got[k][T:])
        else:
            eq(k, v, got[k])
    return bad


def verify(tag, ref, got, w):
    bad = compare(ref, got, w)
    if bad:
        print(f"MISMATCH {tag}")
        for line in bad[:20]:
            print("  " + line)
        sys.exit(1)


def config_name(w):
    return (f"{w['name']} groups {len(w['block_sizes'])} dcp {w['dcp']} drafts {w['drafts']} "
            f"(B {w['B']}, T {w['T']}, logits {w['L']})")


# ---- the dry run (no GPU) ---------------------------------------------------------------------
def dry_run(V, lib, configs, seed, errors):
    plan_check = not torch.cuda.is_available()
    for wname, G, S, D in configs:
        w = M.make_workload(wname, drafts=D, dcp=S, groups=G, seed=seed)
        name = config_name(w)
        m = M.Mrv2Step(V, w, "cpu")
        host = HostCalls(lib, w, m)
        t0 = time.perf_counter()
        m.plain()
        ref = m.outputs()
        host.run()
        verify(f"{name}: vLLM plain vs libcattn host calls", ref, results(host.o), w)
        m.poison()
        poison(host.o)
        m.staged_host()
        m.staged_device()
        host.run()
        verify(f"{name}: vLLM staged (graph body) vs libcattn host calls", m.outputs(),
               results(host.o), w)
        want = expected(w, True)
        want["split"] = want["counts"][12:]
        got = host.extras(w)
        for k, v in got.items():
            if not torch.equal(torch.as_tensor(want[k]).to(torch.int64), v):
                print(f"MISMATCH {name}: libcattn's host {k} {v.tolist()[:16]} against this "
                      f"bench's numpy {list(want[k])[:16]}")
                sys.exit(1)
        note = ""
        if plan_check:
            # The plans on fake device tensors: created, and every argument of a run checked
            # (a CPU-only build answers CATTN_NOT_SUPPORTED only after the checks pass).
            accepted = []
            for key, products in (("b", PRODUCTS_B), ("b11", PRODUCTS_B11), ("b7", PRODUCTS_B7)):
                p = Plan(lib, None, w, m, products, fake_cuda=True)
                status = p.call(None)
                msg = lib.cattn_last_error_message().decode()
                p.destroy()
                if status == CATTN_NOT_SUPPORTED:
                    accepted.append(f"{products:#x}")
                else:
                    error(errors, f"{name}: {LABELS[key]} (products {products:#x}): "
                                  f"status {status}: {msg}")
            note = f"; plans {', '.join(accepted) or 'none'} accepted on fake device tensors"
        print(f"ok  {name}: every product equal ({time.perf_counter() - t0:.1f} s){note}",
              flush=True)


def error(errors, line):
    print("ERROR", line, flush=True)
    errors.append(line)


# ---- timing -----------------------------------------------------------------------------------
def events_us(fn, n, reps):
    """CUDA events around fn(n) (n steps) / n, median over reps."""
    fn(n)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(n)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / n)
    return statistics.median(times)


def host_us(fn, n, reps):
    """Wall time of fn(n) (n steps, no sync inside) / n, median over reps."""
    fn(n)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn(n)
        times.append((time.perf_counter_ns() - t0) / 1000 / n)
    torch.cuda.synchronize()
    return statistics.median(times)


def gpu_us(body, reps, what):
    """Device time of one step: a graph of K_GRAPH steps, events around a replay / K_GRAPH."""
    g = capture_required(f"{what}, {K_GRAPH} steps", lambda s: [body(s) for _ in range(K_GRAPH)])
    return events_us(lambda n: [g.replay() for _ in range(n)], 1, reps) / K_GRAPH


def repeat(step):
    return lambda n: [step() for _ in range(n)]


def timed(fn_plain, fn_graph, body, reps, n_plain, what):
    """A path's times: plain and graph steps (us/step and host us), and its device time."""
    return dict(plain=events_us(fn_plain, n_plain, reps),
                host_plain=host_us(fn_plain, n_plain, reps),
                graph=events_us(fn_graph, N_PY, reps), host_graph=host_us(fn_graph, N_PY, reps),
                gpu=gpu_us(body, reps, what))


class Floor:
    """The empty-launch floor: bench/launch_floor.cu built with nvcc into a temporary library,
    its launches driven from C by call_loop.c's cattn_bench_call_loop (fn(stream) has the
    loop's entry signature: one pointer in, a status int out, 0 for success)."""

    SYMBOLS = {"empty": "_Z18bench_launch_emptyP11CUstream_st",
               "empty_1472": "_Z22bench_launch_empty_bigP11CUstream_st"}

    def __init__(self, loop):
        self.loop, self.fns, self.note, self.failure = loop, {}, "", ""
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.path.exists(nvcc):
            self.note = "no nvcc: the floor is not measured"
            return
        major, minor = torch.cuda.get_device_capability()
        self.dir = tempfile.TemporaryDirectory(prefix="cattn_floor_")
        so = os.path.join(self.dir.name, "liblaunch_floor.so")
        cmd = [nvcc, "-O2", "-shared", "-Xcompiler", "-fPIC",
               f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}", "-o", so,
               os.path.join(HERE, "launch_floor.cu")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            self.failure = f"nvcc failed, the floor is not measured: {r.stderr.strip()[-300:]}"
            return
        self.lib = ctypes.CDLL(so)
        for k, sym in self.SYMBOLS.items():
            self.fns[k] = ctypes.cast(getattr(self.lib, sym), ctypes.c_void_p)
            if loop is None:
                f = getattr(self.lib, sym)
                f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p]
                self.fns[k] = f
        if loop is None:
            self.note = "no C loop built: the floor's launches are called through ctypes"

    def launch(self, k, n, stream):
        if self.loop is not None:
            status = self.loop.cattn_bench_call_loop(self.fns[k], stream, n)
        else:
            status = 0
            for _ in range(n):
                status = self.fns[k](stream) or status
        if status:
            raise RuntimeError(f"empty kernel launch: cudaError {status}")

    def rows(self, stream, reps):
        out = []
        for k, label in (("empty", "empty kernel <<<1, 32>>>"),
                         ("empty_1472", "empty kernel, 1472 B of parameters")):
            fn = lambda n, k=k: self.launch(k, n, stream)  # noqa: E731
            out.append(dict(path=f"floor: {label}", mode="plain, from C" if self.loop else
                            "plain, ctypes", us=events_us(fn, N_C, reps),
                            host=host_us(fn, N_C, reps), gpu=None, launches="1"))
        g = capture_required("the floor's empty kernel", lambda s: self.launch("empty", 1, s))
        fn = lambda n: [g.replay() for _ in range(n)]  # noqa: E731
        out.append(dict(path="floor: graph of one empty kernel", mode="graph replay",
                        us=events_us(fn, N_PY, reps), host=host_us(fn, N_PY, reps), gpu=None,
                        launches="1 graph of 1"))
        return out


PATHS = ["a", "b", "b11", "b7", "bu"]
LABELS = {"a": "(a) vLLM MRV2", "b": "(b) libcattn plan", "b11": "(b) + 1.1 products",
          "b7": "(b) whole step", "bu": "(b) + its uploads"}


def make_plans(lib, loop, w, m, stream, name, errors):
    """The two plans, each run once; a plan libcattn refuses is None (ERROR printed unless
    errors is None)."""
    plans = {}
    for key, products in (("b", PRODUCTS_B), ("b11", PRODUCTS_B11), ("b7", PRODUCTS_B7)):
        p = None
        try:
            p = Plan(lib, loop, w, m, products)
            p.stream = stream
            p.run()
        except C.CattnError as e:
            if errors is not None:
                error(errors, f"{name}: {LABELS[key]} (products {products:#x}): {e}")
            if p is not None:
                p.destroy()
            p = None
        plans[key] = p
    return plans


def measure(V, lib, loop, w, reps, stream, errors, timing=True):
    """Checks one configuration, then (timing) times it: {path: times} for the paths that ran."""
    name = config_name(w)
    m = M.Mrv2Step(V, w, "cuda")
    plans = make_plans(lib, loop, w, m, stream, name, errors)
    pb = plans["b"]
    live = [(k, p) for k, p in plans.items() if p is not None]
    # Plain, then the staged path, then graph replays over poisoned outputs.
    m.plain()
    for _, p in live:
        p.run()
    torch.cuda.synchronize()
    ref = m.outputs()
    for k, p in live:
        verify(f"{name}: {LABELS[k]} plain", ref, results(p.o), w)
    m.poison()
    m.staged_host()
    m.staged_device()
    torch.cuda.synchronize()
    for k, p in live:
        verify(f"{name}: vLLM staged (graph body) against {LABELS[k]}", m.outputs(),
               results(p.o), w)
    # Every path must capture: vLLM's body is MRV2's uploads from pinned staging and its kernels
    # (Triton, torch.arange / torch.zeros: no host sync), which MRV2 builds for its graphs.
    graphs = {"a": capture_required(f"{name}: {LABELS['a']}", lambda s: m.staged_device())}
    for k, p in live:
        graphs[k] = capture_required(f"{name}: {LABELS[k]}", lambda s, p=p: p.run(1, s))
    if pb is not None:
        graphs["bu"] = capture_required(f"{name}: {LABELS['bu']}",
                                        lambda s: (pb.upload_device(), pb.run(1, s)))
    m.poison()
    for _, p in live:
        poison(p.o)
    m.staged_host()
    for k in ("a", "b", "b11", "b7"):
        if k in graphs:
            graphs[k].replay()
    torch.cuda.synchronize()
    ref = m.outputs()
    for k, p in live:
        verify(f"{name}: {LABELS[k]} graph replay", ref, results(p.o), w)
    if pb is not None:
        poison(pb.o)
        for v in pb.dev_in.values():
            v.fill_(0)
        pb.upload_host()
        graphs["bu"].replay()
        torch.cuda.synchronize()
        verify(f"{name}: {LABELS['bu']} graph replay", ref, results(pb.o), w)
    print(f"ok  {name}: every product equal (plain, staged, graph replays)", flush=True)
    t = {}
    if timing:
        t["a"] = timed(repeat(m.plain), repeat(lambda: (m.staged_host(), graphs["a"].replay())),
                       lambda s: m.staged_device(), reps, N_PY, f"{name}: {LABELS['a']}")
        for k, p in live:
            t[k] = timed(p.run, repeat(graphs[k].replay), lambda s, p=p: p.run(1, s), reps, N_C,
                         f"{name}: {LABELS[k]}")
        if pb is not None:
            def uploads_plain():
                pb.upload_host()
                pb.upload_device()
                pb.run(1)
            t["bu"] = timed(repeat(uploads_plain),
                            repeat(lambda: (pb.upload_host(), graphs["bu"].replay())),
                            lambda s: (pb.upload_device(), pb.run(1, s)), reps, N_PY,
                            f"{name}: {LABELS['bu']}")
    graphs.clear()
    for _, p in live:
        p.destroy()
    return t


def count_launches(V, lib, loop, G, S, D, stream):
    """GPU operations of one plain step of each path (torch.profiler), on a small workload of
    the same structure (the counts do not depend on B or T). a_graph: the body vLLM's graph
    holds (uploads from the staging buffers)."""
    w = M.make_workload("B8-decode", drafts=D, dcp=S, groups=G)
    m = M.Mrv2Step(V, w, "cuda")
    plans = make_plans(lib, loop, w, m, stream, config_name(w), None)
    m.plain()
    m.staged_host()
    m.staged_device()
    torch.cuda.synchronize()
    n = dict(a=gpu_ops(m.plain), a_graph=gpu_ops(m.staged_device))
    for k, p in plans.items():
        if p is not None:
            n[k] = gpu_ops(p.run)
    pb = plans["b"]
    if pb is not None:
        n["bu"] = gpu_ops(lambda: (pb.upload_host(), pb.upload_device(), pb.run(1)))
    for p in plans.values():
        if p is not None:
            p.destroy()
    return n


def table_rows(w, t, launches):
    """The configuration's rows; launches: torch.profiler's counts of one plain step per path
    (a_graph: the body vLLM's graph holds), or None. A path libcattn refused reads ERROR."""
    inside = dict(a="a_graph", b="b", b11="b11", b7="b7", bu="bu")
    rows = []
    for key in PATHS:
        for mode in ("plain", "graph"):
            r = dict(workload=w["name"], B=w["B"], T=w["T"], groups=len(w["block_sizes"]),
                     dcp=w["dcp"], drafts=w["drafts"], path=LABELS[key], mode=mode)
            x = t.get(key)
            if x is None:
                rows.append(dict(r, us=None, host=None, gpu=None, launches="-", ratio=None))
                continue
            n = (launches or {}).get(key if mode == "plain" else inside[key])
            ops = "?" if n is None else (str(n) if mode == "plain" else f"1 graph of {n}")
            rows.append(dict(r, us=x[mode], host=x[f"host_{mode}"], gpu=x["gpu"], launches=ops,
                             ratio=None if key == "a" else t["a"][mode] / x[mode]))
    return rows


def workload_row(w):
    """What a configuration's rows work on, in the columns bench_gpu --filter step prints for its
    own rows: the blocks in use decide the gather's traffic, the rest is alike."""
    B, P = w["B"], w["prefills"]
    q = w["num_scheduled_tokens"].astype(np.int64)
    ctx = w["num_computed_tokens"][w["idx_mapping"]]
    blocks = [np.array([len(x) for x in ids], dtype=np.int64) for ids in w["block_ids"]]
    return dict(workload=w["name"], B=B, T=w["T"], groups=len(w["block_sizes"]), dcp=w["dcp"],
                drafts=w["drafts"], decodes=B - P, prefills=P,
                prefill_tokens=int(q[B - P:].mean()) if P else 0,
                computed=[int(ctx.min()), int(ctx.max())], persistent_rows=w["R"],
                table_cols=M.TABLE_COLS, table_dtype="int32", block_sizes=w["block_sizes"],
                blocks_mean=[float(b.mean()) for b in blocks],
                blocks_max=[int(b.max()) for b in blocks],
                gather_mb=sum(int(b.sum()) for b in blocks) * 2 * 4 / 1e6)


def print_workloads(rows):
    """The workload table (one row per configuration) and what sets it apart from bench_gpu's."""
    print("\n| workload | B | T | groups | DCP | drafts | requests (decode + prefill) | "
          "computed tokens | persistent table per group | block sizes | blocks in use / request: "
          "mean (max) | gather MB (read + write) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        pre = f" + {r['prefills']} x ~{r['prefill_tokens']}" if r["prefills"] else ""
        dec = f"{r['decodes']} x {1 + r['drafts']}"
        blocks = ", ".join(f"{m:.0f} ({x})" for m, x in zip(r["blocks_mean"], r["blocks_max"]))
        print(f"| {r['workload']} | {r['B']} | {r['T']} | {r['groups']} | {r['dcp']} | "
              f"{r['drafts']} | {dec}{pre} | {r['computed'][0]}-{r['computed'][1]} | "
              f"[{r['persistent_rows']}, {r['table_cols']}] {r['table_dtype']} | "
              f"{','.join(map(str, r['block_sizes']))} | {blocks} | {r['gather_mb']:.2f} |")
    print("Blocks in use: vLLM's num_blocks of each live request, cdiv(seq_len, block size x DCP), "
          "which the gather copies (bench_gpu's rows fill every request's table up to "
          f"min({M.TABLE_COLS}, (computed + 65536) / (block size x DCP) + 1)). (b) + 1.1 products "
          "adds DCP local lengths and extend, two of the seven 1.1 products; (b) whole step adds "
          "all seven, as bench_gpu's whole-step rows (bench/step_plan_desc.h: Mamba ALIGN blocks "
          "of 16 + 2, local attention in chunks of 8192 over blocks of 16, fast prefill); its "
          "step-input products, DCP lengths and extend are checked here, the other five by the "
          "tests against their oracles.")


def print_table(rows, floor_rows):
    f = lambda x: "ERROR" if x is None else f"{x:.2f}"  # noqa: E731
    print("\n| workload | B | T | groups | DCP | drafts | path | mode | us/step | host us | "
          "gpu us | launches | vLLM/this |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.1f}x"
        print(f"| {r['workload']} | {r['B']} | {r['T']} | {r['groups']} | {r['dcp']} | "
              f"{r['drafts']} | {r['path']} | {r['mode']} | {f(r['us'])} | {f(r['host'])} | "
              f"{f(r['gpu'])} | {r['launches']} | {ratio} |")
    for r in floor_rows:
        print(f"| - | - | - | - | - | - | {r['path']} | {r['mode']} | {r['us']:.2f} | "
              f"{r['host']:.2f} | - | {r['launches']} | - |")


# ---- main -------------------------------------------------------------------------------------
def parse_list(text, kinds=int):
    return [kinds(x) for x in text.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libcattn.so (a CUDA build; --device cpu: any)")
    ap.add_argument("--oracle", default=None,
                    help=f"the step-inputs oracle's folder (default: ${P.STEP_INPUTS_ENV}, else "
                         f"../shared/oracle_upstream/step_inputs beside the checkout)")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: the dry run (checks only; the Triton interpreter, libcattn's "
                         "host calls)")
    ap.add_argument("--dry-run", action="store_true",
                    help="checks only, no timing (implied by --device cpu)")
    ap.add_argument("--workloads", default=None,
                    help="default: B8-decode,B8-prefill,B256-mixed,B1024-mixed "
                         "(--device cpu: B8-decode,B8-prefill,B32-mixed)")
    ap.add_argument("--groups", default="1,3", help="KV-cache groups: 1 ([16]), 3 ([16,16,64])")
    ap.add_argument("--dcp", default="1,4", help="DCP world sizes (rank 0, interleave 1)")
    ap.add_argument("--drafts", default="0,3", help="drafts per decode row")
    ap.add_argument("--drafts-everywhere", action="store_true",
                    help="drafts > 0 at every groups/DCP pair (default: only the first of each; "
                         "--device cpu: everywhere)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()

    oracle = P.step_inputs_oracle(sys.argv[0], args.oracle)
    cpu = args.device == "cpu"
    if cpu:  # before torch and triton are imported
        os.environ["TRITON_INTERPRET"] = "1"
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    global torch, np, C, DevTensor, M, gpu_ops
    import numpy as np  # noqa: F811
    import torch  # noqa: F811
    sys.path.insert(0, oracle)
    import vllm_step_inputs as V
    import cattn_ctypes as C  # noqa: F811
    import step_inputs_mrv2 as M  # noqa: F811
    from gpu_side_by_side import DevTensor  # noqa: F811
    from step_side_by_side import gpu_ops  # noqa: F811
    if not cpu and not torch.cuda.is_available():
        sys.exit("step_inputs_side_by_side.py: no CUDA device (--device cpu runs the checks "
                 "without one)")
    lib = C.load(args.lib)
    print_sizes = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                               "cattn_print_sizes")
    if os.path.exists(print_sizes):
        problems = C.check_layout_with(print_sizes)
        if problems:
            sys.exit("the ctypes mirror differs from the header:\n  " + "\n  ".join(problems))

    workloads = parse_list(args.workloads or ("B8-decode,B8-prefill,B32-mixed" if cpu else
                                              "B8-decode,B8-prefill,B256-mixed,B1024-mixed"), str)
    for name in workloads:
        if name not in M.WORKLOADS:
            sys.exit(f"unknown workload {name!r}: one of {', '.join(M.WORKLOADS)}")
    groups, dcps, drafts = parse_list(args.groups), parse_list(args.dcp), parse_list(args.drafts)
    everywhere = args.drafts_everywhere or cpu
    configs = [(wn, G, S, D) for wn in workloads for D in drafts for G in groups for S in dcps
               if D == 0 or everywhere or (G == groups[0] and S == dcps[0])]
    print(f"torch {torch.__version__}, device "
          f"{'cpu (Triton interpreter)' if cpu else torch.cuda.get_device_name()}; "
          f"oracle {oracle}; libcattn {os.path.abspath(args.lib)}; {len(configs)} configurations",
          flush=True)
    errors = []
    if cpu:
        # The GPU run's capture helpers, as far as they go without a device.
        import graph_capture
        print(graph_capture.self_check(torch), flush=True)
        dry_run(V, lib, configs, args.seed, errors)
        print_workloads([workload_row(M.make_workload(wn, drafts=D, dcp=S, groups=G,
                                                      seed=args.seed))
                         for wn, G, S, D in configs])
        print(f"dry run: every configuration checked, {len(errors)} libcattn error(s); nothing "
              f"timed (no GPU)")
        sys.exit(1 if errors else 0)

    loop_path = os.path.join(os.path.dirname(os.path.abspath(args.lib)), "bench",
                             "libcattn_bench_loop.so")
    loop = None
    if os.path.exists(loop_path):
        loop = ctypes.CDLL(loop_path)
        for f in ("cattn_bench_call_loop", "cattn_bench_step_plan_loop"):
            getattr(loop, f).restype = ctypes.c_int32
        loop.cattn_bench_call_loop.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32]
        loop.cattn_bench_step_plan_loop.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int32]
    else:
        print(f"note: {loop_path} is not built: libcattn's plain runs go through ctypes")
    # One non-blocking stream for everything (the legacy default stream synchronises).
    side = torch.cuda.Stream()
    torch.cuda.set_stream(side)
    stream = side.cuda_stream
    rows_by_config = []
    for wn, G, S, D in configs:
        w = M.make_workload(wn, drafts=D, dcp=S, groups=G, seed=args.seed)
        try:
            t = measure(V, lib, loop, w, args.reps, stream, errors, timing=not args.dry_run)
        except CaptureFailed as e:
            print(f"ERROR {e}")
            sys.exit(1)
        rows_by_config.append((w, t))
        torch.cuda.empty_cache()
    if args.dry_run:
        print(f"dry run: every configuration checked on the GPU, {len(errors)} libcattn "
              f"error(s); nothing timed")
        sys.exit(1 if errors else 0)
    # From here on a failure still prints the table, and then fails the run.
    floor = Floor(loop)
    floor_rows = []
    if floor.failure:
        error(errors, floor.failure)
    if floor.fns:
        try:
            floor_rows = floor.rows(stream, args.reps)
        except (RuntimeError, CaptureFailed) as e:  # a failed launch or capture, not a bug here
            error(errors, f"the floor could not be measured: {e}")
    # Launch counts last: the profiler leaves hooks behind that slow later launches.
    launches = {}
    for G, S, D in sorted({(G, S, D) for _, G, S, D in configs}):
        launches[(G, S, D)] = n = count_launches(V, lib, loop, G, S, D, stream)
        for k, v in n.items():
            if v is None:  # gpu_ops printed why
                what = LABELS.get(k, "(a) vLLM MRV2, its graph body")
                error(errors, f"groups {G} dcp {S} drafts {D}: the launches of {what} could not "
                              f"be counted")
    rows = []
    for w, t in rows_by_config:
        rows += table_rows(w, t, launches.get((len(w["block_sizes"]), w["dcp"], w["drafts"])))
    print_table(rows, floor_rows)
    print("\n(a) uploads query_start_loc and idx_mapping (and with drafts cu_num_logits) each "
          "step; (b) and (b) + 1.1 read device inputs an engine uploads, as (b) + its uploads "
          "does. Graph rows: vLLM's host prep runs before each replay.")
    workloads = [workload_row(w) for w, _ in rows_by_config]
    print_workloads(workloads)
    if floor.note:
        print("note:", floor.note)
    if errors:
        print(f"{len(errors)} error(s) (a path libcattn refused reads ERROR):")
        for line in errors:
            print("  " + line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           rows=rows, workloads=workloads, floor=floor_rows,
                           floor_note=floor.note, c_loop=loop is not None, errors=errors), f,
                      indent=1)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
