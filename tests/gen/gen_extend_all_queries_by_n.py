# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for extend_all_queries_by_n from the seed oracle.

n = 1 is the seed's extend_all_queries_by_1. For other n the expected values are the seed's
function applied n times, checked here against vLLM's later extend_all_queries_by_N formula
(query_start_loc + arange * N, seq_lens + N, num_actual_tokens + N * B, max lens + N).
"seed_seq_lens_cpu" records the mirror the seed leaves behind when the input carries one: vLLM
does not update it (libcattn does; it must equal the new seq_lens).
"""
from oracle import V, rng, torch, write, tolist


def extend(qsl, seq_lens, n, scalars):
    b = len(seq_lens)
    qsl_t = torch.tensor(qsl, dtype=torch.int64)
    sl_t = torch.tensor(seq_lens, dtype=torch.int64)
    m = V.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t.clone(), seq_lens=sl_t,
        num_reqs=b, num_actual_tokens=scalars[0], max_query_len=scalars[1],
        max_seq_len=scalars[2], block_table_tensor=torch.zeros((b, 1), dtype=torch.int32),
        slot_mapping=torch.zeros(0, dtype=torch.int64), _seq_lens_cpu=sl_t.clone())
    arange = torch.arange(b + 8, dtype=torch.int64)
    for _ in range(n):
        m = V.extend_all_queries_by_1(m, arange, torch.zeros(0, dtype=torch.int64))
    return m


def case(name, qsl, seq_lens, n, scalars=None):
    b = len(seq_lens)
    if scalars is None:
        qlens = [qsl[i + 1] - qsl[i] for i in range(b)]
        scalars = (qsl[-1] - qsl[0], max(qlens, default=0), max(seq_lens, default=0))
    m = extend(qsl, seq_lens, n, scalars)
    # vLLM's extend_all_queries_by_N, written out.
    want_qsl = [qsl[i] + i * n for i in range(b + 1)]
    want_sl = [s + n for s in seq_lens]
    assert tolist(m.query_start_loc) == want_qsl and tolist(m.query_start_loc_cpu) == want_qsl
    assert tolist(m.seq_lens) == want_sl
    assert (m.num_actual_tokens, m.max_query_len, m.max_seq_len) == \
        (scalars[0] + n * b, scalars[1] + n, scalars[2] + n)
    return {"name": name, "n": n, "source": "oracle" if n == 1 else "oracle_applied_n_times",
            "query_start_loc": qsl, "seq_lens": seq_lens, "num_reqs": b,
            "num_actual_tokens": scalars[0], "max_query_len": scalars[1],
            "max_seq_len": scalars[2],
            "expect": {"query_start_loc": tolist(m.query_start_loc),
                       "query_start_loc_cpu": tolist(m.query_start_loc_cpu),
                       "seq_lens": tolist(m.seq_lens),
                       "num_actual_tokens": int(m.num_actual_tokens),
                       "max_query_len": int(m.max_query_len),
                       "max_seq_len": int(m.max_seq_len)},
            "seed_seq_lens_cpu": tolist(m.seq_lens_cpu)}


def main():
    cases = [
        case("fast_prefill_example_n1", [0, 15, 20, 28], [41, 31, 40], 1),
        case("empty_batch", [0], [], 1),
        case("empty_batch_n5", [0], [], 5),
        case("one_request", [0, 7], [12], 1),
        case("one_request_n0", [0, 7], [12], 0),
        case("zero_length_requests", [0, 0, 3, 3, 3, 9], [0, 5, 2, 0, 9], 1),
        case("decode_only", [0, 1, 2, 3, 4], [10, 1, 33, 7], 1),
        case("decode_only_n3", [0, 1, 2, 3, 4], [10, 1, 33, 7], 3),
        case("odd_lengths_n2", [0, 3, 8, 15], [3, 9, 101], 2),
        case("nonzero_start_n1", [5, 9, 10], [4, 6], 1),
        # Scalars that disagree with the tensors (padded batches): extended as given.
        case("padded_scalars_n4", [0, 2, 4], [6, 8], 4, scalars=(64, 16, 512)),
    ]
    r = rng(77)
    for i in range(10):
        b = int(r.integers(1, 80))
        qlens = r.integers(0, 40, size=b)
        qlens[r.random(b) < 0.3] = 1
        ctx = r.integers(0, 3000, size=b)
        qsl = [0] + list(map(int, qlens.cumsum()))
        seq_lens = list(map(int, qlens + ctx))
        n = [1, 1, 1, 2, 3, 0, 1, 5, 8, 1][i]
        cases.append(case("random_%d_b%d_n%d" % (i, b, n), qsl, seq_lens, n))
    write("extend_all_queries_by_n", cases)


if __name__ == "__main__":
    main()
