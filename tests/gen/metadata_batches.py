# SPDX-License-Identifier: Apache-2.0
"""Batches shared by the 1.1 metadata generators (gen_naive_query_lens.py and the others): the
edge cases the issue names and random batches, as plain lists, plus a builder of the upstream
oracle's CommonAttentionMetadata from them.
"""
from oracle_upstream import U, rng, torch

I32_MAX = 2**31 - 1
I64_MAX = 2**63 - 1


def edge_batches():
    """(name, query_lens, context_lens, extra_padding_tokens)."""
    return [
        ("empty_batch", [], [], 0),
        ("empty_batch_padded", [], [], 5),
        ("one_request", [7], [5], 0),
        ("one_request_decode", [1], [99], 0),
        ("zero_length_rows", [0, 3, 0, 0, 4, 0], [0, 2, 9, 0, 1, 0], 0),
        ("zero_length_rows_padded", [3, 0, 0], [5, 0, 0], 6),
        ("decode_only", [1, 1, 1, 1, 1], [10, 1, 33, 7, 0], 0),
        ("decode_only_padded", [1, 1, 1], [4, 8, 15], 13),
        ("odd_lengths", [3, 5, 7, 9, 11], [1, 2, 3, 4, 5], 1),
        ("spec_decode_uniform", [4, 4, 4, 4], [100, 200, 300, 400], 0),
        ("near_int32_limit", [2, 1, 3], [I32_MAX - 2, I32_MAX - 1, I32_MAX - 3], 0),
    ]


def random_batches(seed, count):
    r = rng(seed)
    out = []
    for i in range(count):
        b = int(r.integers(1, 120))
        q = r.integers(0, 48, size=b)
        q[r.random(b) < 0.35] = 1
        q[r.random(b) < 0.1] = 0
        ctx = r.integers(0, 5000, size=b)
        pad = int(r.integers(0, 3)) * int(r.integers(0, 40))
        out.append(("random_%d_b%d" % (i, b), [int(x) for x in q], [int(x) for x in ctx], pad))
    return out


def qsl_of(query_lens):
    qsl = [0]
    for x in query_lens:
        qsl.append(qsl[-1] + x)
    return qsl


def cam(qsl, seq_lens, num_actual_tokens, dtype=torch.int32, **kw):
    """The upstream oracle's CommonAttentionMetadata of a batch (tensors on the CPU)."""
    b = len(seq_lens)
    qsl_t = torch.tensor(qsl, dtype=dtype)
    sl = torch.tensor(seq_lens, dtype=dtype)
    return U.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t.clone(), seq_lens=sl, num_reqs=b,
        num_actual_tokens=num_actual_tokens,
        max_query_len=max([qsl[i + 1] - qsl[i] for i in range(b)], default=0),
        max_seq_len=max(seq_lens, default=0),
        block_table_tensor=torch.zeros((b, 1), dtype=torch.int32),
        slot_mapping=torch.zeros(num_actual_tokens, dtype=torch.int64), **kw)
