# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for the per-step input metadata ("step inputs") from the step-inputs oracle.

Run with the oracle's throw-away venv (made by shared/oracle_upstream/step_inputs/setup.sh), on
the CPU, with Triton's interpreter:

    TRITON_INTERPRET=1 /tmp/cattn-step-inputs-venv/bin/python tests/gen/gen_step_inputs.py

(CATTN_ORACLE_STEP_INPUTS_DIR moves the oracle; default ../shared/oracle_upstream/step_inputs
beside the checkout.) The oracle's functions and Triton kernels are CALLED; only the numbers they
produce are written, to tests/vectors/step_inputs.json.

One case = one engine step with model runner v2 (MRV2) semantics plus the v1 slot mapping:
  - query_start_loc [B+1] (host prep, numpy): exclusive cumsum of the live rows' scheduled
    counts; padded rows repeat the total.
  - seq_lens [B] / positions [T_cap]: vLLM's prepare_pos_seq_lens on buffers prefilled with
    SENTINEL (unwritten entries keep it).
  - block_tables: BlockTables.gather_block_tables (num_reqs_padded = B) starting from each
    group's gather_init; the persistent tables are filled through BlockTables.append_block_ids
    (overwrite) over random stale rows, so entries past num_blocks are stale.
  - slot_mappings_mrv2: BlockTables.compute_slot_mappings, the whole persistent row [T_cap].
  - slot_mappings_v1: vllm/v1 BlockTable.compute_slot_mapping on the gathered rows, with
    positions[:num_tokens_padded], buffer prefilled with SENTINEL.
  - slot_mappings_mrv2_int64 (only with "mrv2_wraps"): MRV2's semantics without the int32
    wrap of block id * kernel block size, from the v1 kernel with bpk = 1 on the gathered rows
    and positions[:total] (the two formulas coincide then; checked on every case).
  - cu_num_logits (numpy), logits_indices + input_ids: combine_sampled_and_draft_tokens.
  - expanded_idx_mapping / expanded_local_pos: expand_idx_mapping.
Groups with slot_mode 1 (SlotMappingMode.NONE, Mamba) have null slot mappings.
"""
import os
import sys

import numpy as np

from vectors_io import REPO, tolist, write

ORACLE_DIR = os.environ.get(
    "CATTN_ORACLE_STEP_INPUTS_DIR",
    os.path.join(REPO, "..", "shared", "oracle_upstream", "step_inputs"))
sys.path.insert(0, os.path.abspath(ORACLE_DIR))
os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

import _prelude_step_inputs as P  # noqa: E402
import vllm_step_inputs as V  # noqa: E402

SEED = 20261204
SENTINEL = -7777
I32, I64 = torch.int32, torch.int64
DEV = torch.device("cpu")
TOKEN_TO_KV_SLOT, NONE = 0, 1
BLOCK_ID_LIMIT = 100000
VOCAB = 32000


def cdiv(a, b):
    return -(a // -b)


def t32(x):
    return torch.tensor(np.asarray(x, dtype=np.int64), dtype=I32, device=DEV)


# ---- request rows --------------------------------------------------------------------------------
# A row is (q, nct, drafts, prefill_len). Kinds cover the token-combination branches of
# combine_sampled_and_draft_tokens: prefill (seq_len <= prefill_len: no writes), decode (sampled
# token + drafts written) and the prompt-tail guard (seq_len - n < prefill_len < seq_len: drafts
# written, the prompt token at the first logit kept).
def make_row(kind, g, maxq=256, maxnct=2048, maxd=0):
    if kind == "decode":
        d = int(g.integers(0, maxd + 1))
        nct = int(g.integers(1, maxnct + 1))
        return 1 + d, nct, d, int(g.integers(1, nct + 1))
    if kind == "chunked":  # a middle chunk of a long prompt
        nct = int(g.integers(1, maxnct + 1))
        q = int(g.integers(2, maxq + 1))
        return q, nct, 0, nct + q + int(g.integers(1, 2000))
    if kind == "final":  # the last chunk of a prompt: seq_len == prefill_len
        nct = int(g.integers(0, maxnct + 1))
        q = int(g.integers(1, maxq + 1))
        return q, nct, 0, nct + q
    if kind == "fresh":
        q = int(g.integers(1, maxq + 1))
        return q, 0, 0, q + int(g.integers(0, 1000))
    if kind == "zero":  # live row scheduled 0 tokens; prefill so that no token is written
        nct = int(g.integers(0, maxnct + 1))
        return 0, nct, 0, max(nct, 1) + int(g.integers(0, 100))
    if kind == "tail":  # first logit inside the prompt tail
        d = int(g.integers(1, max(maxd, 1) + 1))
        n = 1 + d
        q = n + int(g.integers(0, 20))
        nct = int(g.integers(0, maxnct + 1))
        s = nct + q
        return q, nct, d, int(g.integers(s - n + 1, s))
    if kind == "resumed":  # prefill done, more tokens than logits scheduled
        d = int(g.integers(0, maxd + 1))
        n = 1 + d
        q = n + int(g.integers(1, 30))
        nct = int(g.integers(0, maxnct + 1))
        return q, nct, d, int(g.integers(1, nct + q - n + 1))
    raise ValueError(kind)


def random_rows(g, n, maxq, maxnct, maxd, kinds=None):
    if kinds is None:
        kinds = ["decode"] * 5 + ["chunked", "final", "fresh", "zero"]
        if maxd > 0:
            kinds += ["tail", "resumed"]
    return [make_row(str(g.choice(kinds)), g, maxq, maxnct, maxd) for _ in range(n)]


# ---- one case ------------------------------------------------------------------------------------
def build(name, g, rows, groups, B=None, R=None, dcp=(1, 0, 1), T_cap=None,
          num_tokens_padded=None, ntp_extra=0, cap_extra=0, idx_live=None,
          block_id_range=(0, BLOCK_ID_LIMIT),
          extra_blocks=2, idx_garbage="random"):
    """rows: live rows [(q, nct, drafts, prefill_len)]; groups: [(block_size, kbs, slot_mode)]."""
    num_reqs = len(rows)
    B = num_reqs if B is None else B
    R = 2 * B + 3 if R is None else R
    S, rank, I = dcp
    assert 0 <= num_reqs <= B <= R and 0 <= rank < S
    q = np.array([r[0] for r in rows], dtype=np.int64)
    nct_live = np.array([r[1] for r in rows], dtype=np.int64)
    drafts = np.array([r[2] for r in rows], dtype=np.int64)
    pl_live = np.array([r[3] for r in rows], dtype=np.int64)
    assert all(qq >= 1 + d for qq, d in zip(q, drafts) if d > 0)  # drafts need q >= 1 + drafts
    seq = nct_live + q
    total = int(q.sum())
    if num_tokens_padded is None:
        num_tokens_padded = total + ntp_extra
    if T_cap is None:
        T_cap = num_tokens_padded + cap_extra
    assert total <= num_tokens_padded <= T_cap

    # batch rows: live part + garbage padded rows
    if idx_live is None:
        idx_live = g.choice(R, size=num_reqs, replace=False)
    idx_live = np.asarray(idx_live, dtype=np.int64)
    assert len(set(idx_live.tolist())) == num_reqs and np.all((idx_live >= 0) & (idx_live < R))
    pad = B - num_reqs
    if idx_garbage == "random":
        idx_pad = g.integers(0, R, size=pad)
    else:
        idx_pad = np.full(pad, -5)
    idx_mapping = np.concatenate([idx_live, idx_pad]).astype(np.int64)
    nst = np.concatenate([q, g.integers(0, 50, size=pad)]).astype(np.int64)
    ndraft = np.concatenate([drafts, g.integers(0, 8, size=pad)]).astype(np.int64)

    # persistent request state: live rows from `rows`, others garbage
    nct = g.integers(0, 5000, size=R)
    nct[idx_live] = nct_live
    prefill_len = g.integers(1, 5000, size=R)
    prefill_len[idx_live] = pl_live
    last_sampled = g.integers(0, VOCAB, size=R)
    max_drafts = max(1, int(drafts.max()) if num_reqs else 0) + int(g.integers(0, 2))
    draft_tokens = g.integers(0, VOCAB, size=(R, max_drafts))
    input_ids_init = g.integers(0, VOCAB, size=T_cap)

    qsl = np.zeros(B + 1, dtype=np.int64)
    qsl[1:num_reqs + 1] = np.cumsum(q)
    qsl[num_reqs + 1:] = total
    qsl_live = qsl[:num_reqs + 1]
    cu_logits = np.zeros(num_reqs + 1, dtype=np.int64)
    cu_logits[1:] = np.cumsum(1 + drafts)
    num_logits = int(cu_logits[-1])

    # ---- groups: persistent tables (kernel-block ids) through append_block_ids -------------------
    G = len(groups)
    lo, hi = block_id_range
    mgr_ids, widths, max_blocks = [], [], []
    for bs, kbs, mode in groups:
        assert bs % kbs == 0 and kbs % I == 0
        bpk = bs // kbs
        need = {int(r): cdiv(int(s), bs * S) for r, s in zip(idx_live, seq)}
        if mode == NONE:  # Mamba: one state block per request
            need = {r: 1 for r in need}
        extra = {r: int(g.integers(0, extra_blocks + 1)) for r in need}
        # width covers every live position for both formulas (also for NONE groups, whose MRV2
        # slot mapping is computed but not recorded: keeps its unmasked table loads in bounds)
        cover = max([cdiv(int(s), bs * S) for s in seq], default=1)
        mb = max([cover] + [need[r] + extra[r] for r in need]) + int(g.integers(0, 3))
        ids = []
        for r in range(R):
            n = need[r] + extra[r] if r in need else int(g.integers(0, mb + 1))
            ids.append(distinct_ids(g, n, max(lo // bpk, 0), hi // bpk))
        mgr_ids.append(ids)
        widths.append(mb * bpk)
        max_blocks.append(mb)

    bts = V.BlockTables([b for b, _, _ in groups], R, T_cap, max_blocks, DEV,
                        [k for _, k, _ in groups], cp_size=S, cp_rank=rank, cp_interleave=I)
    for gi in range(G):
        assert bts.block_tables[gi].gpu.shape == (R, widths[gi])
        bts.block_tables[gi].gpu.copy_(t32(g.integers(lo, hi, size=(R, widths[gi]))))
    for r in range(R):
        bts.append_block_ids(r, tuple(mgr_ids[gi][r] for gi in range(G)), True)
    bts.apply_staged_writes()
    tables = [bts.block_tables[gi].gpu.clone() for gi in range(G)]
    num_blocks = bts.num_blocks.np.copy()
    for gi, (bs, kbs, _) in enumerate(groups):  # the kernel-block expansion, as documented
        bpk = bs // kbs
        for r in range(R):
            exp = [b * bpk + k for b in mgr_ids[gi][r] for k in range(bpk)]
            assert num_blocks[gi, r] == len(exp) and tables[gi][r, :len(exp)].tolist() == exp

    gather_init = [g.integers(0, BLOCK_ID_LIMIT, size=(B, widths[gi])) for gi in range(G)]
    for gi in range(G):
        bts.input_block_tables[gi][:B].copy_(t32(gather_init[gi]))

    # ---- MRV2 step ---------------------------------------------------------------------------
    idx_t = t32(idx_live)
    qsl_t = t32(qsl_live)
    nct_t = t32(nct)
    positions = torch.full((T_cap,), SENTINEL, dtype=I64)
    seq_lens = torch.full((B,), SENTINEL, dtype=I32)
    V.prepare_pos_seq_lens(idx_t, qsl_t, nct_t, positions, seq_lens)

    gathered = bts.gather_block_tables(idx_t, B)
    gathered = [x.clone() for x in gathered]

    bts.slot_mappings.fill_(SENTINEL)
    ret = bts.compute_slot_mappings(idx_t, qsl_t, positions, num_tokens_padded)
    assert ret.shape == (G, num_tokens_padded)
    sm_mrv2 = bts.slot_mappings.clone()

    input_ids = t32(input_ids_init)
    cu_t = t32(cu_logits)
    logits_indices = V.combine_sampled_and_draft_tokens(
        input_ids, idx_t, t32(last_sampled), qsl_t, seq_lens[:num_reqs].clone(),
        t32(prefill_len), t32(draft_tokens), cu_t, num_logits)
    max_expand = int((1 + drafts).max()) if num_reqs else 1
    e_idx, e_pos = V.expand_idx_mapping(idx_t, num_logits, cu_t, max_expand)

    # ---- v1 slot mapping per group, and MRV2 without the int32 wrap ----------------------------
    sm_v1, sm_exact, wraps = [], [], False
    for gi, (bs, kbs, mode) in enumerate(groups):
        P.set_cp_groups(dcp=(S, rank))
        smode = V.SlotMappingMode.NONE if mode == NONE else V.SlotMappingMode.TOKEN_TO_KV_SLOT
        bt = V.BlockTable(bs, R, max_blocks[gi], T_cap, False, DEV, kbs, I, slot_mapping_mode=smode)
        assert bt.max_num_blocks_per_req == widths[gi]
        bt.block_table.np[:num_reqs] = gathered[gi][:num_reqs].numpy()
        bt.num_blocks_per_row[:num_reqs] = num_blocks[gi, idx_live]
        bt.commit_block_table(num_reqs)
        bt.slot_mapping.gpu.fill_(SENTINEL)
        bt.compute_slot_mapping(num_reqs, qsl_t, positions[:num_tokens_padded])
        if mode == NONE:
            assert bt.slot_mapping.gpu.eq(SENTINEL).all()
            sm_v1.append(None)
            sm_exact.append(None)
            P.set_cp_groups()
            continue
        sm_v1.append(bt.slot_mapping.gpu.clone())
        # same table rows, kernel block size as the manager size (bpk = 1), pad from the total
        ex = V.BlockTable(kbs, R, widths[gi], T_cap, False, DEV, kbs, I)
        ex.block_table.np[:num_reqs] = gathered[gi][:num_reqs].numpy()
        ex.commit_block_table(num_reqs)
        ex.slot_mapping.gpu.fill_(SENTINEL)
        ex.compute_slot_mapping(num_reqs, qsl_t, positions[:total])
        P.set_cp_groups()
        exact = ex.slot_mapping.gpu.clone()
        diff = exact - sm_mrv2[gi]
        assert torch.all(diff % (1 << 32) == 0), name
        wraps |= bool(diff.ne(0).any())
        sm_exact.append(exact)

    # ---- self-checks of the documented semantics -----------------------------------------------
    assert seq_lens[:num_reqs].tolist() == seq.tolist()
    assert seq_lens[num_reqs:].eq(0).all()
    for b in range(num_reqs):
        assert positions[qsl[b]:qsl[b + 1]].tolist() == list(range(nct_live[b], seq[b]))
    assert positions[total:].eq(SENTINEL).all()
    for gi in range(G):
        gt = gathered[gi]
        assert gt[num_reqs:].eq(0).all()
        for b in range(num_reqs):
            n = int(num_blocks[gi, idx_live[b]])
            assert gt[b, :n].tolist() == tables[gi][idx_live[b], :n].tolist()
            assert gt[b, n:].tolist() == gather_init[gi][b, n:].tolist()
        if sm_v1[gi] is not None:
            assert sm_mrv2[gi, total:].eq(-1).all()
            assert sm_v1[gi][total:num_tokens_padded].eq(SENTINEL).all()
            assert sm_v1[gi][num_tokens_padded:].eq(-1).all()
    assert logits_indices.tolist() == [int(qsl[b + 1]) - int(1 + drafts[b]) + j
                                       for b in range(num_reqs) for j in range(1 + drafts[b])]

    case = {
        "name": name, "B": B, "num_reqs": num_reqs, "R": R, "T_cap": T_cap,
        "num_tokens_padded": num_tokens_padded,
        "num_scheduled_tokens": tolist(nst), "idx_mapping": tolist(idx_mapping),
        "num_computed_tokens": tolist(nct), "num_draft_tokens": tolist(ndraft),
        "dcp": {"size": S, "rank": rank, "interleave": I},
        "groups": [{"block_size": bs, "kernel_block_size": kbs, "slot_mode": mode,
                    "table": tolist(tables[gi]), "num_blocks": tolist(num_blocks[gi]),
                    "gather_init": tolist(gather_init[gi])}
                   for gi, (bs, kbs, mode) in enumerate(groups)],
        "last_sampled_tokens": tolist(last_sampled), "prefill_len": tolist(prefill_len),
        "draft_tokens": tolist(draft_tokens), "input_ids_init": tolist(input_ids_init),
    }
    exp = {
        "query_start_loc": tolist(qsl), "seq_lens": tolist(seq_lens),
        "positions": tolist(positions),
        "block_tables": [tolist(x) for x in gathered],
        "slot_mappings_mrv2": [tolist(sm_mrv2[gi]) if groups[gi][2] == TOKEN_TO_KV_SLOT else None
                               for gi in range(G)],
        "slot_mappings_v1": [tolist(x) if x is not None else None for x in sm_v1],
        "cu_num_logits": tolist(cu_logits), "logits_indices": tolist(logits_indices),
        "input_ids": tolist(input_ids),
        "expanded_idx_mapping": tolist(e_idx), "expanded_local_pos": tolist(e_pos),
    }
    if wraps:
        case["mrv2_wraps"] = True
        exp["slot_mappings_mrv2_int64"] = [tolist(x) if x is not None else None for x in sm_exact]
    case["expected"] = exp
    return case


def distinct_ids(g, n, lo, hi):
    """n distinct manager block ids in [lo, hi), in random order."""
    if n == 0:
        return []
    if hi - lo > 4 * n:
        out = set()
        while len(out) < n:
            out.update(int(x) for x in g.integers(lo, hi, size=n - len(out)))
        ids = sorted(out)[:n]
    else:
        ids = sorted(int(x) for x in g.choice(np.arange(lo, hi), size=n, replace=False))
    return [int(x) for x in g.permutation(ids)]


# ---- case lists ----------------------------------------------------------------------------------
BLOCK_SIZES = [16, 32, 64, 128, 256]
TABLE_CELLS = 3000


def random_group(g, allow_none=False):
    bs = int(g.choice(BLOCK_SIZES))
    kbs = int(g.choice([k for k in BLOCK_SIZES if k <= bs]))
    if g.random() < 0.5:
        kbs = bs
    mode = NONE if allow_none and g.random() < 0.5 else TOKEN_TO_KV_SLOT
    return bs, kbs, mode


def random_case(g, i):
    B = int(g.integers(1, 65))
    if g.random() < 0.3:
        num_reqs = int(g.integers(0, B + 1))
    else:
        num_reqs = B - int(g.integers(0, min(B, 3) + 1))
    R = 2 * B + 3 if g.random() < 0.6 else B + int(g.integers(0, 40))
    S = int(g.choice([1, 1, 2, 4, 8]))
    I = int(g.choice([1, 16]))
    rank = int(g.integers(0, S))
    maxd = int(g.choice([0, 0, 1, 3, 7]))
    ng = int(g.choice([1, 1, 2, 3, 4]))
    groups = [random_group(g, allow_none=(gi == ng - 1 and ng > 1)) for gi in range(ng)]
    # keep the persistent tables (R x sum of widths ~ seq_len / (kbs * S)) near TABLE_CELLS
    per_token = R * sum(1.0 / (kbs * S) for _, kbs, _ in groups)
    maxnct = int(min(4096, max(64, TABLE_CELLS / per_token)))
    tok_budget = 4096 if g.random() < 0.2 else 1024
    maxq = max(2, min(512, tok_budget // max(num_reqs, 1)))
    rows = random_rows(g, num_reqs, maxq, maxnct, maxd)
    total = sum(r[0] for r in rows)
    ntp = total + (0 if g.random() < 0.3 else int(g.integers(1, 65)))
    if ng <= 2 and g.random() < 0.08:  # a CUDA-graph-sized token bucket
        T_cap = max(ntp, 4096)
    else:
        T_cap = ntp + (0 if g.random() < 0.2 else int(g.integers(0, 300)))
    return build("random_%d" % i, g, rows, groups, B=B, R=R, dcp=(S, rank, I), T_cap=T_cap,
                 num_tokens_padded=ntp, idx_garbage="random" if g.random() < 0.5 else "neg")


def edge_cases(g):
    c = []
    G1 = [(16, 16, TOKEN_TO_KV_SLOT)]
    c.append(build("empty_batch", g, [], G1, B=4, R=8, T_cap=32, num_tokens_padded=8))
    c.append(build("one_request", g, [(37, 100, 0, 137)], G1, R=3, T_cap=64, num_tokens_padded=40))
    c.append(build("decode_only", g, random_rows(g, 12, 1, 3000, 0, ["decode"]),
                   [(32, 32, TOKEN_TO_KV_SLOT)], T_cap=64, num_tokens_padded=16))
    c.append(build("prefill_only", g, random_rows(g, 5, 300, 0, 0, ["fresh"]),
                   [(16, 16, TOKEN_TO_KV_SLOT)], T_cap=2048))
    c.append(build("chunked_prefill", g,
                   [(512, 1024, 0, 4000), (300, 2048, 0, 2348), (1, 900, 0, 50), (3, 0, 0, 3)],
                   [(64, 64, TOKEN_TO_KV_SLOT)], B=6, T_cap=1024, num_tokens_padded=824))
    c.append(build("drafts_3", g, random_rows(g, 6, 1, 1500, 3, ["decode", "tail"])
                   + [(4, 700, 3, 2), (4, 10, 3, 12), (4, 10, 3, 14)],
                   [(16, 16, TOKEN_TO_KV_SLOT)], B=10, ntp_extra=5, cap_extra=11))
    c.append(build("zero_length_rows", g,
                   [(0, 0, 0, 5), (3, 40, 0, 20), (0, 77, 0, 80), (0, 12, 0, 12), (1, 300, 0, 1),
                    (0, 5, 0, 9)], [(16, 16, TOKEN_TO_KV_SLOT), (32, 16, TOKEN_TO_KV_SLOT)],
                   B=8, T_cap=16, num_tokens_padded=8))
    c.append(build("padding_rows", g, random_rows(g, 3, 20, 500, 1), [(32, 16, TOKEN_TO_KV_SLOT)],
                   B=16, R=20, ntp_extra=16, cap_extra=100, idx_garbage="neg"))
    for S in (2, 4, 8):
        for I in (1, 16):
            rows = random_rows(g, 6, 64, 600, 1)
            c.append(build("dcp%d_i%d" % (S, I), g, rows, [(16, 16, TOKEN_TO_KV_SLOT),
                                                          (64, 64, TOKEN_TO_KV_SLOT)],
                           dcp=(S, int(g.integers(0, S)), I), ntp_extra=3, cap_extra=40))
    c.append(build("kbs_ne_bs", g, random_rows(g, 7, 100, 800, 2),
                   [(64, 16, TOKEN_TO_KV_SLOT), (256, 64, TOKEN_TO_KV_SLOT)], cap_extra=30))
    rows = random_rows(g, 5, 80, 900, 1)
    c.append(build("kbs_ne_bs_dcp2_i16", g, rows,
                   [(64, 16, TOKEN_TO_KV_SLOT), (256, 32, TOKEN_TO_KV_SLOT)], dcp=(2, 1, 16),
                   ntp_extra=7, cap_extra=20))
    rows = random_rows(g, 5, 80, 900, 0)
    c.append(build("kbs_ne_bs_dcp4_i1", g, rows,
                   [(128, 16, TOKEN_TO_KV_SLOT)], dcp=(4, 2, 1), cap_extra=9))
    c.append(build("four_groups", g, random_rows(g, 9, 60, 700, 2),
                   [(16, 16, TOKEN_TO_KV_SLOT), (64, 16, TOKEN_TO_KV_SLOT),
                    (256, 256, TOKEN_TO_KV_SLOT), (128, 128, NONE)], B=11, ntp_extra=4,
                   cap_extra=60))
    c.append(build("idx_gaps", g, [(1, 30, 0, 7), (20, 0, 0, 25), (2, 64, 1, 10)],
                   [(16, 16, TOKEN_TO_KV_SLOT)], B=4, R=1000, idx_live=[5, 900, 17],
                   T_cap=32, num_tokens_padded=24))
    c.append(build("slots_past_2_31", g, random_rows(g, 5, 40, 300, 1),
                   [(16, 16, TOKEN_TO_KV_SLOT), (64, 16, TOKEN_TO_KV_SLOT)], ntp_extra=2,
                   cap_extra=10, block_id_range=(1 << 26, 1 << 30)))
    c.append(build("slots_past_2_31_dcp2", g, random_rows(g, 4, 40, 300, 0),
                   [(16, 16, TOKEN_TO_KV_SLOT)], dcp=(2, 0, 1), cap_extra=16,
                   block_id_range=(1 << 27, 1 << 30)))
    rows = random_rows(g, 5, 40, 300, 1)
    tot = sum(r[0] for r in rows)
    c.append(build("num_tokens_padded_gt_total", g, rows, [(16, 16, TOKEN_TO_KV_SLOT)],
                   B=8, T_cap=tot + 64, num_tokens_padded=tot + 29))
    rows = random_rows(g, 7, 40, 300, 2)
    tot = sum(r[0] for r in rows)
    c.append(build("t_cap_eq_total", g, rows, [(32, 16, TOKEN_TO_KV_SLOT), (16, 16, NONE)],
                   T_cap=tot, num_tokens_padded=tot))
    c.append(build("mamba_group", g, random_rows(g, 6, 50, 600, 0),
                   [(64, 64, TOKEN_TO_KV_SLOT), (256, 256, NONE)], B=8, ntp_extra=8, cap_extra=8))
    c.append(build("long_prefill_16k", g, [(12000, 0, 0, 12000), (3000, 5000, 0, 9000),
                                           (1, 8000, 0, 7000)],
                   [(256, 64, TOKEN_TO_KV_SLOT)], B=4, T_cap=16384, num_tokens_padded=15008))
    return c


def main():
    g = np.random.default_rng(SEED)
    cases = edge_cases(g)
    cases += [random_case(g, i) for i in range(36)]
    assert len({c["name"] for c in cases}) == len(cases)
    write("step_inputs", cases)


if __name__ == "__main__":
    main()
