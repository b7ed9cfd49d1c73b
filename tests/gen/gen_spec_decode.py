# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for vLLM's speculative-decoding metadata helpers
(vllm/v1/spec_decode/utils.py, block E of the step-inputs oracle).

Run with the oracle's throw-away venv (made by shared/oracle_upstream/step_inputs/setup.sh), on
the CPU, with Triton's interpreter:

    TRITON_INTERPRET=1 /tmp/cattn-step-inputs-venv/bin/python tests/gen/gen_spec_decode.py

(CATTN_ORACLE_STEP_INPUTS_DIR moves the oracle; default ../shared/oracle_upstream/step_inputs
beside the checkout.) The oracle's functions and Triton kernels are CALLED; only the numbers they
produce are written, to tests/vectors/spec_decode.json. Fixed seed: two runs are byte-identical.

One file, cases grouped by "function"; each case is
    {"function", "name", "inputs", "expected", "dtypes"}
with every tensor a plain (nested) int list. "dtypes" names the torch dtype of each tensor
passed to / returned by the oracle (bool tensors are written as 0/1). Output buffers that the
functions write only partly are prefilled with SENTINEL (-7777); their initial contents are
recorded in "inputs" as "<name>_init" and the whole buffer after the call in "expected", so
unwritten entries are visible. Bool output buffers cannot hold a sentinel: the call is run
twice, with the buffer prefilled all-False and all-True; entries that differ between the two
runs were not written and are recorded as SENTINEL, the others as 0/1.

Functions:
  eagle_step_update_slot_mapping_and_metadata  (README E1; public wrapper)
      inputs: positions [B] int64, block_table [B, stride] int32 of which the first
      n_blocks_per_req columns are passed (a view when n_blocks_per_req < stride), seq_lens [B]
      int32 (in place: before in inputs, after in expected), block_size, max_model_len,
      input_batch_size (grid size, >= B). expected: out_clamped_positions, out_slot_mapping
      (int64 buffers longer than written), seq_lens.
  eagle_prepare_inputs_padded  (E2; the dispatcher _eagle_prepare_inputs_padded)
      inputs: cu_num_draft_tokens [B] (INCLUSIVE cumsum), valid_sampled_tokens_count [B],
      query_start_loc [B+1], num_reqs; expected: token_indices_to_sample, num_rejected_tokens.
  eagle_prepare_next_token_padded  (E3; the dispatcher _eagle_prepare_next_token_padded)
      inputs: sampled_token_ids [B, stride] of which num_sampled_tokens_per_req columns are
      read (stride_sampled_token_ids = stride), discard_request_mask, backup_next_token_ids,
      vocab_size, num_reqs, BLOCK_SIZE_TOKENS = next_power_of_2(S);
      expected: next_token_ids, valid_sampled_tokens_count.
  compute_new_slot_mapping  (E4)
      inputs: query_start_loc [B+1] (the CommonAttentionMetadata's; naive query lens),
      block_table [B, W] int32, new_positions int64, is_rejected_token_mask, block_size,
      num_new_tokens (N), max_model_len. expected: new_slot_mapping int64, req_indices (the
      token -> request map repeat_interleave(arange(B), q+N); derived here with numpy, the
      oracle does not return it). "int32_wrap": block id * block_size is computed in int32.
  copy_and_expand_eagle_inputs  (E6; the dispatcher _copy_and_expand_eagle_inputs)
      inputs: target_token_ids, target_positions, next_token_ids, query_start_loc,
      query_end_loc, padding_token_id, parallel_drafting_token_id, total_input_tokens,
      num_padding_slots_per_request (P), shift_input_ids (0/1: vLLM passes a bool; Triton's
      interpreter needs an int, same branch), BLOCK_SIZE_TOKENS, batch_size, num_blocks, and the
      output buffers' initial contents. expected: out_input_ids, out_positions,
      out_is_rejected_token_mask, out_is_masked_token_mask, out_new_token_indices,
      out_hidden_state_mapping (whole buffers). "truncated": num_blocks * BLOCK_SIZE_TOKENS is
      smaller than some request's output length (those tokens are silently not written).
  update_num_computed_tokens_for_batch_change  (E8; torch.compile, backend eager on the CPU)
      inputs: num_computed_tokens [M] (in place; before), num_accepted_tokens [n] (in place;
      before), prev_positions [n] int64 (-1 = new request), valid_sampled_token_count [n_prev],
      prev_num_draft_tokens [n_prev], cpu_num_computed_tokens [n]; expected: both after.

Every case is also checked here against the README's formulas (numpy), so a mismatch between the
oracle and its documented semantics stops the generator.
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

SEED = 20261205
SENTINEL = -7777
I32, I64, BOOL = torch.int32, torch.int64, torch.bool
DEV = torch.device("cpu")
BLOCK_ID_LIMIT = 100000
VOCABS = [50, 1000, 32000, 151936]


def cdiv(a, b):
    return -(a // -b)


def t32(x):
    return torch.tensor(np.asarray(x, dtype=np.int64), dtype=I32, device=DEV)


def t64(x):
    return torch.tensor(np.asarray(x, dtype=np.int64), dtype=I64, device=DEV)


def tb(x):
    return torch.tensor(np.asarray(x, dtype=bool), dtype=BOOL, device=DEV)


def sentinel(n, dtype):
    return torch.full((n,), SENTINEL, dtype=dtype, device=DEV)


def L(x):
    if isinstance(x, torch.Tensor) and x.dtype == BOOL:
        return x.int().tolist()
    return tolist(x)


def wrap32(x):
    """int32 two's-complement wrap of a Python int."""
    return (int(x) + (1 << 31)) % (1 << 32) - (1 << 31)


def case(function, name, inputs, expected, dtypes, **flags):
    c = {"function": function, "name": name}
    c.update(flags)
    c.update({"inputs": inputs, "expected": expected, "dtypes": dtypes})
    return c


def rand_ids(g, shape, lo=0, hi=BLOCK_ID_LIMIT):
    return g.integers(lo, hi, size=shape)


# =================================================================================================
# E1. eagle_step_update_slot_mapping_and_metadata
# =================================================================================================
E1 = "eagle_step_update_slot_mapping_and_metadata"


def e1_build(name, positions, block_table, n_blocks, seq_lens, bs, mml, ibs, pos_extra=0,
             slot_extra=0):
    positions = np.asarray(positions, dtype=np.int64)
    bt = np.asarray(block_table, dtype=np.int64)
    seq = np.asarray(seq_lens, dtype=np.int64)
    B = len(positions)
    assert bt.shape[0] == B and 1 <= n_blocks <= bt.shape[1] and len(seq) == B and ibs >= B
    bt_t = t32(bt)
    view = bt_t[:, :n_blocks]
    seq_t = t32(seq)
    out_pos = sentinel(B + pos_extra, I64)
    out_slot = sentinel(ibs + slot_extra, I64)
    out_pos_init, out_slot_init = L(out_pos), L(out_slot)
    V.eagle_step_update_slot_mapping_and_metadata(t64(positions), view, seq_t, bs, mml, out_pos,
                                                  out_slot, ibs)
    # README E1
    e_pos, e_slot, e_seq = list(out_pos_init), list(out_slot_init), []
    wraps = False
    for i in range(B):
        p1 = int(positions[i]) + 1
        if p1 >= mml:
            e_pos[i], e_slot[i], s = 0, -1, min(1, mml)
        else:
            col = min(p1 // bs, n_blocks - 1)
            exact = int(bt[i, col]) * bs
            wraps |= exact != wrap32(exact)
            e_pos[i], e_slot[i] = p1, wrap32(exact) + p1 % bs
            s = min(int(seq[i]) + 1, mml)
        e_seq.append(s)
    for i in range(B, ibs):
        e_slot[i] = -1
    assert L(out_pos) == e_pos and L(out_slot) == e_slot and L(seq_t) == e_seq, name
    flags = {"int32_wrap": True} if wraps else {}
    return case(E1, name, {
        "positions": L(positions), "block_table": L(bt), "n_blocks_per_req": n_blocks,
        "seq_lens": L(seq), "block_size": bs, "max_model_len": mml, "input_batch_size": ibs,
        "out_clamped_positions_init": out_pos_init, "out_slot_mapping_init": out_slot_init,
    }, {
        "out_clamped_positions": L(out_pos), "out_slot_mapping": L(out_slot), "seq_lens": L(seq_t),
    }, {"positions": "int64", "block_table": "int32", "seq_lens": "int32",
        "out_clamped_positions": "int64", "out_slot_mapping": "int64"}, **flags)


def e1_random(g, i):
    bs = int(g.choice([1, 2, 4, 8, 16, 32, 64, 128, 256]))
    nfull = int(g.integers(1, 33))
    mml = int(g.integers(max(2, (nfull - 1) * bs + 1), nfull * bs + 1))  # cdiv(mml, bs) == nfull
    n_blocks = nfull if g.random() < 0.75 else int(g.integers(1, nfull + 1))
    stride = n_blocks + (0 if g.random() < 0.8 else int(g.integers(1, 4)))
    B = int(g.integers(1, 65))
    B = max(1, min(B, 1500 // stride))
    kind = g.random(B)
    pos = np.where(kind < 0.7, g.integers(0, max(mml - 1, 1), size=B),
                   mml - 3 + g.integers(0, 6, size=B))
    pos = np.maximum(pos, 0)
    seq = np.minimum(pos + 1, mml)
    odd = g.random(B) < 0.2  # seq_lens unrelated to the position (the cap still applies)
    seq[odd] = g.integers(1, mml + 1, size=int(odd.sum()))
    ibs = B + (0 if g.random() < 0.6 else int(g.integers(1, 9)))
    return e1_build("random_%d" % i, pos, rand_ids(g, (B, stride)), n_blocks, seq, bs, mml, ibs,
                    int(g.integers(0, 3)), int(g.integers(0, 3)))


def e1_cases(g):
    c = []
    # positions around max_model_len: p+1 = mml-1 (last valid), mml (exceeds), and past it
    mml, bs = 64, 16
    pos = [mml - 3, mml - 2, mml - 1, mml, mml + 5, 0, 17]
    seq = [mml - 2, mml - 1, mml, mml, mml, 1, mml]  # the last: seq_len capped at max_model_len
    c.append(e1_build("near_max_model_len", pos, rand_ids(g, (7, 4)), 4, seq, bs, mml, 7))
    # table narrower than cdiv(max_model_len, block_size): block index clamped to the last column
    c.append(e1_build("block_index_clamped", [5, 7, 8, 11, 14, 15, 3], rand_ids(g, (7, 2)), 2,
                      [6, 8, 9, 12, 15, 16, 4], 4, 16, 7))
    # view of a wider table: the clamp uses the view's width, the row step the stride
    c.append(e1_build("table_view_narrower_than_stride", [0, 9, 30, 40, 62], rand_ids(g, (5, 8)),
                      5, [1, 10, 31, 41, 63], 8, 64, 5))
    c.append(e1_build("input_batch_size_padding", [3, 100, 1000], rand_ids(g, (3, 16)), 16,
                      [4, 101, 1001], 128, 2048, 9, pos_extra=2, slot_extra=3))
    c.append(e1_build("single_request", [41], rand_ids(g, (1, 4)), 4, [42], 16, 64, 1))
    c.append(e1_build("single_request_padded", [63], rand_ids(g, (1, 4)), 4, [64], 16, 64, 4,
                      slot_extra=1))
    c.append(e1_build("block_size_1", [0, 1, 2, 5, 6, 7], rand_ids(g, (6, 8)), 8,
                      [1, 2, 3, 6, 7, 8], 1, 8, 6))
    c.append(e1_build("all_exceed", [31, 32, 40, 100], rand_ids(g, (4, 2)), 2, [32, 32, 32, 32],
                      16, 32, 4))
    c.append(e1_build("max_model_len_1", [0, 0, 5], rand_ids(g, (3, 1)), 1, [1, 1, 1], 16, 1, 3))
    c.append(e1_build("large_block_ids_int32_wrap", [0, 3, 15, 16, 20],
                      [[1 << 27, 5], [1 << 27, 5], [(1 << 31) - 1, 7], [2, (1 << 31) - 1],
                       [(1 << 27) - 1, 1 << 30]], 2, [1, 4, 16, 17, 21], 16, 32, 5))
    for i in range(14):
        c.append(e1_random(g, i))
    return c


# =================================================================================================
# E2. _eagle_prepare_inputs_padded
# =================================================================================================
E2 = "eagle_prepare_inputs_padded"


def e2_build(name, nd, valid, q, out_extra=0):
    nd, valid, q = (np.asarray(x, dtype=np.int64) for x in (nd, valid, q))
    B = len(nd)
    cu = np.cumsum(nd)
    qsl = np.concatenate([[0], np.cumsum(q)])
    out_idx = sentinel(B + out_extra, I32)
    out_rej = sentinel(B + out_extra, I32)
    idx_init, rej_init = L(out_idx), L(out_rej)
    V._eagle_prepare_inputs_padded(t32(cu), t32(valid), t32(qsl), out_idx, out_rej, B)
    e_rej = [int(nd[i] + 1 - valid[i]) if nd[i] > 0 else 0 for i in range(B)]
    e_idx = [int(qsl[i + 1]) - 1 - e_rej[i] for i in range(B)]
    assert L(out_idx) == e_idx + idx_init[B:] and L(out_rej) == e_rej + rej_init[B:], name
    return case(E2, name, {
        "cu_num_draft_tokens": L(cu), "valid_sampled_tokens_count": L(valid),
        "query_start_loc": L(qsl), "num_reqs": B,
        "token_indices_to_sample_init": idx_init, "num_rejected_tokens_init": rej_init,
    }, {"token_indices_to_sample": L(out_idx), "num_rejected_tokens": L(out_rej)},
        {k: "int32" for k in ("cu_num_draft_tokens", "valid_sampled_tokens_count",
                              "query_start_loc", "token_indices_to_sample",
                              "num_rejected_tokens")})


def e2_rows(g, B, maxd, p_prefill=0.2, p_discard=0.05):
    nd, valid, q = [], [], []
    for _ in range(B):
        if g.random() < p_prefill:  # prefill row: no drafts, any query length
            d, qq = 0, int(g.integers(1, 200))
        else:
            d = int(g.integers(0, maxd + 1))
            qq = 1 + d
        v = 0 if g.random() < p_discard else int(g.integers(1, d + 2))
        nd.append(d)
        valid.append(v)
        q.append(qq)
    return nd, valid, q


def e2_cases(g):
    c = [e2_build("readme_example", [2, 0, 3], [3, 1, 2], [3, 1, 4])]
    nd = [3, 1, 5, 2, 7]
    q = [1 + d for d in nd]
    c.append(e2_build("no_drafts", [0] * 6, [1, 1, 1, 0, 1, 1], [1, 5, 1, 30, 1, 2]))
    c.append(e2_build("all_rejected", nd, [1] * 5, q))
    c.append(e2_build("all_accepted", nd, [d + 1 for d in nd], q))
    c.append(e2_build("mixed", [4, 0, 4, 1, 0, 2, 3], [2, 1, 5, 1, 1, 3, 0],
                      [5, 17, 5, 2, 1, 3, 4]))
    c.append(e2_build("discarded_valid_zero", [2, 3, 0], [0, 0, 0], [3, 4, 9]))
    c.append(e2_build("single_request", [3], [2], [4]))
    c.append(e2_build("output_buffers_longer_than_num_reqs", [1, 2], [2, 1], [2, 3], out_extra=4))
    for i in range(14):
        B = int(g.integers(1, 65))
        nd, valid, q = e2_rows(g, B, int(g.choice([1, 3, 5, 7])))
        c.append(e2_build("random_%d" % i, nd, valid, q,
                          out_extra=0 if g.random() < 0.7 else int(g.integers(1, 5))))
    return c


# =================================================================================================
# E3. _eagle_prepare_next_token_padded
# =================================================================================================
E3 = "eagle_prepare_next_token_padded"


def e3_build(name, sampled, S, discard, backup, vocab, out_extra=0):
    sampled = np.asarray(sampled, dtype=np.int64)
    B, stride = sampled.shape
    assert 1 <= S <= stride
    s_t = t32(sampled)
    out_next = sentinel(B + out_extra, I32)
    out_valid = sentinel(B + out_extra, I32)
    next_init, valid_init = L(out_next), L(out_valid)
    bst = V.next_power_of_2(S)
    V._eagle_prepare_next_token_padded(s_t[:, :S], tb(discard), t32(backup), out_next, out_valid,
                                       vocab, S, B, s_t.stride(0), BLOCK_SIZE_TOKENS=bst)
    e_next, e_valid = [], []
    for i in range(B):
        if discard[i]:
            e_next.append(int(backup[i]))
            e_valid.append(0)
            continue
        ok = [j for j in range(S) if sampled[i, j] != -1 and sampled[i, j] < vocab]
        e_valid.append(len(ok))
        e_next.append(int(sampled[i, ok[-1]]) if ok else int(backup[i]))
    assert L(out_next) == e_next + next_init[B:], name
    assert L(out_valid) == e_valid + valid_init[B:], name
    return case(E3, name, {
        "sampled_token_ids": L(sampled), "num_sampled_tokens_per_req": S,
        "stride_sampled_token_ids": stride, "discard_request_mask": [int(bool(x)) for x in discard],
        "backup_next_token_ids": L(np.asarray(backup)), "vocab_size": vocab, "num_reqs": B,
        "BLOCK_SIZE_TOKENS": bst,
        "next_token_ids_init": next_init, "valid_sampled_tokens_count_init": valid_init,
    }, {"next_token_ids": L(out_next), "valid_sampled_tokens_count": L(out_valid)},
        {"sampled_token_ids": "int32", "discard_request_mask": "bool",
         "backup_next_token_ids": "int32", "next_token_ids": "int32",
         "valid_sampled_tokens_count": "int32"})


def e3_random(g, i):
    B = int(g.integers(1, 65))
    S = int(g.integers(1, 9))
    stride = S + (0 if g.random() < 0.85 else int(g.integers(1, 4)))
    vocab = int(g.choice(VOCABS))
    sampled = np.full((B, stride), -1, dtype=np.int64)
    for b in range(B):
        a = int(g.integers(0, S + 1))  # accepted prefix (rejection sampler layout)
        sampled[b, :a] = g.integers(0, vocab, size=a)
        if g.random() < 0.2:  # holes and out-of-vocab values
            for j in range(S):
                r = g.random()
                if r < 0.25:
                    sampled[b, j] = -1
                elif r < 0.4:
                    sampled[b, j] = vocab + int(g.integers(0, 100))
                elif r < 0.7:
                    sampled[b, j] = int(g.integers(0, vocab))
        sampled[b, S:] = g.integers(0, vocab, size=stride - S)  # never read
    discard = g.random(B) < 0.15
    backup = g.integers(0, vocab, size=B)
    return e3_build("random_%d" % i, sampled, S, discard, backup, vocab,
                    0 if g.random() < 0.7 else int(g.integers(1, 4)))


def e3_cases(g):
    c = [e3_build("readme_example", [[5, 7, -1], [-1, -1, -1], [3, 100, 4]], 3,
                  [False, False, False], [11, 12, 13], 50)]
    c.append(e3_build("all_discarded", [[5, 7, 9], [1, -1, -1], [-1, -1, -1], [2, 3, 4]], 3,
                      [True] * 4, [11, 12, 13, 14], 50))
    c.append(e3_build("row_all_minus1", [[-1] * 4, [8, 9, -1, -1], [-1] * 4], 4,
                      [False, False, False], [21, 22, 23], 1000))
    v = 1000
    c.append(e3_build("vocab_boundary",
                      [[v - 1, -1], [v, -1], [3, v], [v - 1, v - 1], [v, v], [v + 1, 0],
                       [0, v + 5]],
                      2, [False] * 7, [1, 2, 3, 4, 5, 6, 7], v))
    c.append(e3_build("noncontiguous_valid",
                      [[-1, 5, -1, 7, -1], [3, 1000, 4, -1, -1], [-1, -1, -1, -1, 9],
                       [1, -1, 2, -1, 3], [1000, 1000, 1000, 6, 1000]],
                      5, [False] * 5, [31, 32, 33, 34, 35], 1000))
    c.append(e3_build("negative_other_than_minus1_counted_valid",
                      [[-2, -1, -1], [4, -5, -1], [-1, -1, -2147483648], [-1, -1, -1]],
                      3, [False] * 4, [41, 42, 43, 44], 1000))
    c.append(e3_build("mixed_discard", [[5, 6, -1], [7, -1, -1], [8, 9, 10], [-1, -1, -1]], 3,
                      [False, True, False, True], [51, 52, 53, 54], 32000))
    c.append(e3_build("one_token_per_req", [[5], [-1], [32000], [31999]], 1, [False] * 4,
                      [1, 2, 3, 4], 32000))
    c.append(e3_build("stride_wider_than_S", [[1, 2, 3, 4, 5], [-1, -1, 9, 9, 9], [6, -1, 7, 8, 8]],
                      2, [False] * 3, [61, 62, 63], 50))
    c.append(e3_build("output_buffers_longer_than_num_reqs", [[1, 2], [3, -1]], 2, [False, False],
                      [71, 72], 50, out_extra=3))
    c.append(e3_build("S_not_power_of_2", [[1, 2, 3, 4, 5, 6, 7], [1, 2, 3, -1, -1, -1, -1],
                                           [-1, -1, -1, -1, -1, -1, 9]], 7, [False] * 3,
                      [81, 82, 83], 151936))
    for i in range(13):
        c.append(e3_random(g, i))
    return c


# =================================================================================================
# E4. compute_new_slot_mapping
# =================================================================================================
E4 = "compute_new_slot_mapping"


def e4_build(name, q, block_table, new_positions, rejected, bs, N, mml):
    q = np.asarray(q, dtype=np.int64)
    bt = np.asarray(block_table, dtype=np.int64)
    new_positions = np.asarray(new_positions, dtype=np.int64)
    rejected = np.asarray(rejected, dtype=bool)
    B, W = bt.shape
    assert len(q) == B and len(new_positions) == int((q + N).sum()) == len(rejected)
    qsl = np.concatenate([[0], np.cumsum(q)])
    T = int(qsl[-1])
    cam = P.CommonAttentionMetadata(
        query_start_loc=t32(qsl), query_start_loc_cpu=t32(qsl), seq_lens=t32(q + 100),
        num_reqs=B, num_actual_tokens=T, max_query_len=int(q.max()),
        max_seq_len=int((q + 100).max()), block_table_tensor=t32(bt),
        slot_mapping=torch.zeros(T, dtype=I64, device=DEV))
    out = V.compute_new_slot_mapping(cam, t64(new_positions), tb(rejected), bs, N, mml)
    assert out.dtype == I64
    req = np.repeat(np.arange(B), q + N)
    flat = bt.reshape(-1)
    e, wraps = [], False
    for k, p in enumerate(new_positions):
        cp = min(int(p), mml - 1)
        exact = int(flat[req[k] * W + cp // bs]) * bs
        wraps |= exact != wrap32(exact)
        e.append(-1 if (p >= mml or rejected[k]) else wrap32(exact) + cp % bs)
    assert L(out) == e, name
    flags = {"int32_wrap": True} if wraps else {}
    return case(E4, name, {
        "query_start_loc": L(qsl), "block_table": L(bt), "new_positions": L(new_positions),
        "is_rejected_token_mask": L(rejected.astype(np.int64)), "block_size": bs,
        "num_new_tokens": N, "max_model_len": mml,
    }, {"new_slot_mapping": L(out), "req_indices": L(req)},
        {"query_start_loc": "int32", "block_table": "int32", "new_positions": "int64",
         "is_rejected_token_mask": "bool", "new_slot_mapping": "int64", "req_indices": "int64"},
        **flags)


def e4_layout(g, q, N, mml, p_reject_tail=0.5):
    """Per request: consecutive positions from a start, the rejected tail (as laid out by
    copy_and_expand: position 0, masked) after valid + N slots."""
    pos, rej = [], []
    for qq in q:
        r = int(g.integers(0, qq)) if (qq > 0 and g.random() < p_reject_tail) else 0
        v = qq - r
        start = int(g.integers(0, mml)) if g.random() < 0.7 else mml - int(g.integers(0, v + N + 3))
        start = max(start, 0)
        pos += [start + j for j in range(v + N)] + [0] * r
        rej += [False] * (v + N) + [True] * r
    return pos, rej


def e4_random(g, i):
    bs = int(g.choice([1, 4, 16, 32, 64, 128]))
    W = int(g.integers(1, 33))
    mml = int(g.integers(max(1, (W - 1) * bs + 1), W * bs + 1))
    B = max(1, min(int(g.integers(1, 65)), 1500 // W))
    N = int(g.integers(0, 4))
    q = g.integers(1, 9, size=B)
    if g.random() < 0.5:
        pos, rej = e4_layout(g, q, N, mml)
    else:  # unstructured
        n = int((q + N).sum())
        pos = g.integers(0, mml + 8, size=n)
        rej = g.random(n) < 0.2
    return e4_build("random_%d" % i, q, rand_ids(g, (B, W)), pos, rej, bs, N, mml)


def e4_cases(g):
    c = []
    bt = [[3, 4, 5], [6, 7, 8]]
    c.append(e4_build("readme_example", [2, 1], bt, [8, 9, 10, 3, 4],
                      [False, True, False, False, False], 4, 1, 10))
    mml, bs = 40, 8
    pos = [mml - 3, mml - 2, mml - 1, mml, mml + 1, mml + 50, 0, 7, 8, mml - 1, mml + 50, mml - 2,
           mml - 1]
    c.append(e4_build("near_max_model_len", [3, 3, 1], rand_ids(g, (3, 5)), pos, [False] * 13,
                      bs, 2, mml))
    q = [3, 1, 4]
    n = sum(q) + 3 * 2
    pos, _ = e4_layout(g, q, 2, 64, p_reject_tail=0.0)
    c.append(e4_build("all_rejected", q, rand_ids(g, (3, 4)), pos, [True] * n, 16, 2, 64))
    pos, _ = e4_layout(g, q, 2, 64, p_reject_tail=0.0)
    c.append(e4_build("none_rejected", q, rand_ids(g, (3, 4)), pos, [False] * n, 16, 2, 64))
    pos, rej = e4_layout(g, [4, 5, 2, 3], 0, 128, p_reject_tail=1.0)
    c.append(e4_build("N_0", [4, 5, 2, 3], rand_ids(g, (4, 8)), pos, rej, 16, 0, 128))
    c.append(e4_build("zero_length_query", [0, 2, 0], rand_ids(g, (3, 2)),
                      [5, 6, 7, 8, 9, 10, 30, 31], [False] * 8, 16, 2, 32))
    c.append(e4_build("single_request", [3], rand_ids(g, (1, 4)), [60, 61, 62, 63, 64],
                      [False, False, True, False, False], 16, 2, 64))
    # table narrower than cdiv(max_model_len, bs): the flat index runs into the NEXT row
    c.append(e4_build("narrow_table_reads_next_row", [2, 1, 1], rand_ids(g, (3, 2)),
                      [3, 40, 70, 5, 33, 8, 20], [False] * 7, 16, 1, 96))
    c.append(e4_build("large_block_ids_int32_wrap", [2, 1],
                      [[1 << 27, (1 << 31) - 1], [7, 1 << 30]],
                      [3, 20, 21, 2, 17], [False] * 5, 16, 1, 32))
    for i in range(14):
        c.append(e4_random(g, i))
    return c


# =================================================================================================
# E6. _copy_and_expand_eagle_inputs
# =================================================================================================
E6 = "copy_and_expand_eagle_inputs"


def e6_build(name, q, rej, tgt_ids, tgt_pos, next_ids, P_, shift, pad_id, par_id, BLOCK,
             num_blocks=None, out_extra=0):
    q, rej = np.asarray(q, dtype=np.int64), np.asarray(rej, dtype=np.int64)
    B = len(q)
    assert np.all(rej <= q - 1) and P_ >= 1
    qsl = np.concatenate([[0], np.cumsum(q)])
    T = int(qsl[-1])
    qel = qsl[1:] - 1 - rej
    valid = qel - qsl[:-1] + (0 if shift else 1)
    tot = valid + P_ + rej
    n_out = T + B * (P_ - 1 if shift else P_)
    assert int(tot.sum()) == n_out
    if num_blocks is None:
        num_blocks = cdiv(int(tot.max()), BLOCK)
    truncated = num_blocks * BLOCK < int(tot.max())

    def run(mask_fill):
        o_ids = sentinel(n_out + out_extra, I32)
        o_pos = sentinel(n_out + out_extra, I64)
        o_rej = torch.full((n_out + out_extra,), mask_fill, dtype=BOOL, device=DEV)
        o_msk = torch.full((n_out + out_extra,), mask_fill, dtype=BOOL, device=DEV)
        o_new = sentinel(B * P_ + out_extra, I32)
        o_hid = sentinel(T + out_extra, I32)
        init = [L(x) for x in (o_ids, o_pos, o_new, o_hid)]
        V._copy_and_expand_eagle_inputs(
            t32(tgt_ids), t64(tgt_pos), t32(next_ids), o_ids, o_pos, o_rej, o_msk, o_new, o_hid,
            t32(qsl), t32(qel), pad_id, par_id, T, P_, int(shift),
            BLOCK_SIZE_TOKENS=BLOCK, batch_size=B, num_blocks=num_blocks)
        return init, [o_ids, o_pos, o_rej, o_msk, o_new, o_hid]

    init, a = run(False)
    _, b = run(True)
    for x, y in zip(a[:2] + a[4:], b[:2] + b[4:]):
        assert torch.equal(x, y), name
    masks = []
    for x, y in ((a[2], b[2]), (a[3], b[3])):
        masks.append([int(u) if u == v else SENTINEL for u, v in zip(x.tolist(), y.tolist())])

    # README E6
    e_ids, e_pos, e_new, e_hid = (list(x) for x in init)
    e_rej, e_msk = [SENTINEL] * len(e_ids), [SENTINEL] * len(e_ids)
    lim = num_blocks * BLOCK
    for i in range(B):
        s = int(qsl[i])
        ostart = s + i * (P_ - 1 if shift else P_)
        v, r = int(valid[i]), int(rej[i])
        for j in range(min(int(tot[i]), lim)):
            o = ostart + j
            if j < v:
                e_ids[o], e_pos[o] = int(tgt_ids[s + int(shift) + j]), int(tgt_pos[s]) + j
            elif j == v:
                e_ids[o], e_pos[o] = int(next_ids[i]), int(tgt_pos[s]) + j
            elif j < v + P_:
                e_ids[o], e_pos[o] = par_id, int(tgt_pos[s]) + j
            else:
                e_ids[o], e_pos[o] = pad_id, 0
            e_rej[o] = int(j >= v + P_)
            e_msk[o] = int(v < j < v + P_)
            if v <= j < v + P_:
                e_new[i * P_ + j - v] = o
        if shift:
            for j in range(min(int(q[i]), lim)):
                e_hid[s + j] = ostart + j
    got = [L(a[0]), L(a[1]), masks[0], masks[1], L(a[4]), L(a[5])]
    assert got == [e_ids, e_pos, e_rej, e_msk, e_new, e_hid], name
    if not truncated:  # everything written
        assert SENTINEL not in got[0][:n_out] + got[2][:n_out] + got[4][:B * P_], name
    flags = {"truncated": True} if truncated else {}
    return case(E6, name, {
        "target_token_ids": L(np.asarray(tgt_ids)), "target_positions": L(np.asarray(tgt_pos)),
        "next_token_ids": L(np.asarray(next_ids)), "query_start_loc": L(qsl),
        "query_end_loc": L(qel), "padding_token_id": pad_id, "parallel_drafting_token_id": par_id,
        "total_input_tokens": T, "num_padding_slots_per_request": P_, "shift_input_ids": int(shift),
        "BLOCK_SIZE_TOKENS": BLOCK, "batch_size": B, "num_blocks": num_blocks,
        "out_input_ids_init": init[0], "out_positions_init": init[1],
        "out_new_token_indices_init": init[2], "out_hidden_state_mapping_init": init[3],
        "out_mask_len": n_out + out_extra,
    }, {
        "out_input_ids": got[0], "out_positions": got[1], "out_is_rejected_token_mask": got[2],
        "out_is_masked_token_mask": got[3], "out_new_token_indices": got[4],
        "out_hidden_state_mapping": got[5],
    }, {"target_token_ids": "int32", "target_positions": "int64", "next_token_ids": "int32",
        "query_start_loc": "int32", "query_end_loc": "int32", "out_input_ids": "int32",
        "out_positions": "int64", "out_is_rejected_token_mask": "bool",
        "out_is_masked_token_mask": "bool", "out_new_token_indices": "int32",
        "out_hidden_state_mapping": "int32"}, **flags)


def e6_inputs(g, q, vocab=32000):
    T = int(np.sum(q))
    ids = g.integers(0, vocab, size=T)
    pos = np.concatenate([s + np.arange(n) for s, n in
                          zip(g.integers(0, 4000, size=len(q)), q)]) if T else np.zeros(0)
    return ids, pos.astype(np.int64), g.integers(0, vocab, size=len(q))


def e6_random(g, i):
    B = int(g.integers(1, 33))
    maxd = int(g.choice([1, 3, 5, 7]))
    q, rej = [], []
    for _ in range(B):
        if g.random() < 0.2:
            q.append(int(g.integers(1, 40)))
            rej.append(0)
        else:
            d = int(g.integers(0, maxd + 1))
            q.append(1 + d)
            rej.append(int(g.integers(0, d + 1)))
    P_ = int(g.integers(1, 4))
    shift = bool(g.random() < 0.5)
    BLOCK = int(g.choice([1, 2, 4, 8, 16, 32, 64]))
    tot_max = max(qq - rr - (1 if shift else 0) + P_ + rr for qq, rr in zip(q, rej))
    nb = cdiv(tot_max, BLOCK) + (0 if g.random() < 0.8 else 1)
    ids, pos, nxt = e6_inputs(g, q)
    pad = 0 if g.random() < 0.6 else int(g.integers(1, 32000))
    return e6_build("random_%d" % i, q, rej, ids, pos, nxt, P_, shift, pad,
                    int(g.integers(32000, 32010)), BLOCK, nb, int(g.integers(0, 3)))


def e6_cases(g):
    c = []
    # the README/selftest example, both branches
    for shift in (0, 1):
        c.append(e6_build("readme_example_shift%d" % shift, [3, 2], [0, 1], [10, 11, 12, 20, 21],
                          [4, 5, 6, 8, 9], [99, 98], 2, shift, 77, 5, 8, out_extra=2))
    # parallel drafting P in {1, 2, 3} x shift, mixed rejected tails and a prefill row
    q, rej = [4, 1, 3, 9, 2], [2, 0, 0, 0, 1]
    ids, pos, nxt = e6_inputs(g, q)
    for P_ in (1, 2, 3):
        for shift in (0, 1):
            c.append(e6_build("P%d_shift%d" % (P_, shift), q, rej, ids, pos, nxt, P_, shift, 0,
                              32000, 4, out_extra=1))
    q = [4, 3, 5]
    ids, pos, nxt = e6_inputs(g, q)
    c.append(e6_build("all_rejected_tails", q, [3, 2, 4], ids, pos, nxt, 2, 0, 151643, 151644, 8))
    c.append(e6_build("all_rejected_tails_shift", q, [3, 2, 4], ids, pos, nxt, 2, 1, 151643,
                      151644, 8))
    c.append(e6_build("no_rejected", q, [0, 0, 0], ids, pos, nxt, 3, 0, 0, 9, 2))
    ids, pos, nxt = e6_inputs(g, [1, 1, 1])
    c.append(e6_build("shift_single_token_requests", [1, 1, 1], [0, 0, 0], ids, pos, nxt, 1, 1, 0,
                      5, 1))
    ids, pos, nxt = e6_inputs(g, [6])
    c.append(e6_build("single_request", [6], [2], ids, pos, nxt, 3, 1, 0, 5, 16, out_extra=2))
    ids, pos, nxt = e6_inputs(g, [5, 12])
    c.append(e6_build("block_size_1_many_blocks", [5, 12], [1, 0], ids, pos, nxt, 2, 0, 0, 5, 1))
    c.append(e6_build("extra_blocks_masked", [5, 12], [1, 0], ids, pos, nxt, 2, 1, 0, 5, 4,
                      num_blocks=7))
    # not everything fits: tokens at j >= num_blocks * BLOCK_SIZE_TOKENS are silently not written
    c.append(e6_build("truncated_block_too_small", [5, 12], [1, 0], ids, pos, nxt, 2, 0, 3, 5, 4,
                      num_blocks=2))
    c.append(e6_build("truncated_shift", [5, 12], [1, 0], ids, pos, nxt, 3, 1, 3, 5, 8,
                      num_blocks=1))
    for i in range(10):
        c.append(e6_random(g, i))
    return c


# =================================================================================================
# E8. update_num_computed_tokens_for_batch_change
# =================================================================================================
E8 = "update_num_computed_tokens_for_batch_change"


def e8_build(name, nct, nacc, prev_pos, valid, prev_drafts, cpu):
    nct, nacc, prev_pos, valid, prev_drafts, cpu = (
        np.asarray(x, dtype=np.int64) for x in (nct, nacc, prev_pos, valid, prev_drafts, cpu))
    n = len(prev_pos)
    assert len(nacc) == n == len(cpu) and len(nct) >= n
    assert np.all(prev_pos < min(len(nct), len(valid), len(prev_drafts)))
    nct_t, nacc_t = t32(nct), t32(nacc)
    V.update_num_computed_tokens_for_batch_change(nct_t, nacc_t, t64(prev_pos), t32(valid),
                                                  t32(prev_drafts), t32(cpu))
    e_nct, e_acc = nct.tolist(), nacc.tolist()
    for k in range(n):
        gi = max(int(prev_pos[k]), 0)
        part = prev_pos[k] >= 0 and prev_drafts[gi] > 0
        e_nct[k] = int(nct[gi] + valid[gi]) if part else int(cpu[k])  # nct[gi] from BEFORE
        e_acc[k] = int(valid[gi]) if part else int(nacc[k])
    assert L(nct_t) == e_nct and L(nacc_t) == e_acc, name
    return case(E8, name, {
        "num_computed_tokens": L(nct), "num_accepted_tokens": L(nacc),
        "prev_positions": L(prev_pos), "valid_sampled_token_count": L(valid),
        "prev_num_draft_tokens": L(prev_drafts), "cpu_num_computed_tokens": L(cpu),
    }, {"num_computed_tokens": L(nct_t), "num_accepted_tokens": L(nacc_t)},
        {"num_computed_tokens": "int32", "num_accepted_tokens": "int32",
         "prev_positions": "int64", "valid_sampled_token_count": "int32",
         "prev_num_draft_tokens": "int32", "cpu_num_computed_tokens": "int32"})


def e8_random(g, i, n=None, n_prev=None, p_new=None):
    n = int(g.integers(1, 65)) if n is None else n
    n_prev = int(g.integers(1, 65)) if n_prev is None else n_prev
    M = max(n, n_prev) + int(g.integers(0, 5))
    p_new = g.random() * 0.5 if p_new is None else p_new
    carried = g.permutation(n_prev)[:n]
    prev_pos = np.full(n, -1, dtype=np.int64)
    slots = g.permutation(n)[:len(carried)]
    prev_pos[slots] = carried
    prev_pos[g.random(n) < p_new] = -1
    prev_drafts = np.where(g.random(n_prev) < 0.25, 0, g.integers(1, 8, size=n_prev))
    valid = np.array([int(g.integers(0, d + 2)) for d in prev_drafts])
    nct = g.integers(0, 5000, size=M)
    cpu = g.integers(0, 5000, size=n)
    nacc = g.integers(0, 9, size=n)
    return e8_build("random_%d" % i, nct, nacc, prev_pos, valid, prev_drafts, cpu)


def e8_cases(g):
    c = [e8_build("readme_example", [100, 200, 300, 400], [9, 9, 9], [2, -1, 0], [3, 0, 2],
                  [4, 0, 0], [7, 8, 9])]
    c.append(e8_build("all_new", [10, 20, 30, 40, 50], [1, 2, 3, 4], [-1, -1, -1, -1], [3, 2, 1, 4],
                      [2, 2, 2, 2], [11, 12, 13, 14]))
    c.append(e8_build("all_participating_identity", [100, 200, 300, 400], [1, 1, 1, 1],
                      [0, 1, 2, 3], [1, 2, 3, 4], [3, 3, 3, 3], [104, 204, 304, 404]))
    # reordering: every current row reads the PREVIOUS layout (nct gathered before the write)
    c.append(e8_build("reordering_permutation", [100, 200, 300, 400, 500], [0, 0, 0, 0, 0],
                      [4, 3, 2, 1, 0], [1, 2, 3, 4, 5], [2, 3, 4, 5, 6], [0, 0, 0, 0, 0]))
    c.append(e8_build("swap_two_rows", [1000, 2000, 77], [5, 6], [1, 0], [2, 3], [4, 4], [1, 2]))
    c.append(e8_build("prev_without_drafts_uses_cpu", [100, 200, 300], [7, 7, 7], [0, 1, 2],
                      [1, 1, 1], [0, 0, 3], [111, 222, 333]))
    c.append(e8_build("batch_shrinks", [100, 200, 300, 400, 500, 600], [0, 0], [5, 2],
                      [1, 2, 3, 4, 5, 6], [1, 1, 1, 1, 1, 1], [0, 0]))
    c.append(e8_build("batch_grows", [100, 200, 300, 400, 500, 600], [3, 3, 3, 3, 3],
                      [1, -1, 0, -1, -1], [2, 3], [1, 1], [9, 8, 7, 6, 5]))
    c.append(e8_build("single_request", [42], [1], [0], [3], [2], [99]))
    c.append(e8_build("valid_zero", [50, 60], [4, 4], [0, 1], [0, 0], [3, 3], [1, 2]))
    for i in range(12):
        c.append(e8_random(g, i))
    return c


def main():
    cases = []
    for k, fn in enumerate([e1_cases, e2_cases, e3_cases, e4_cases, e6_cases, e8_cases]):
        cases += fn(np.random.default_rng(SEED + k))
    names = [(c["function"], c["name"]) for c in cases]
    assert len(set(names)) == len(names)
    write("spec_decode", cases)


if __name__ == "__main__":
    main()
