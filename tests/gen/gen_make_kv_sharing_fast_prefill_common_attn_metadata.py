# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for make_kv_sharing_fast_prefill_common_attn_metadata from the seed oracle.

Each case gives the input (query_start_loc, logits_indices_padded, num_logits_indices, num_reqs,
max_query_len) and either the seed's result or, under "seed_error", the exception the seed
raises (libcattn returns CATTN_INVALID_ARGUMENT there).
"""
from oracle import V, rng, torch, write, tolist

DTYPES = {"int32": torch.int32, "int64": torch.int64}


def case(name, qsl, logits, num_logits=-1, max_query_len=None, qsl_dtype="int32",
         logits_dtype="int64"):
    """num_logits -1: all of `logits`; None: absent (with logits None)."""
    num_reqs = len(qsl) - 1
    if num_logits == -1:
        num_logits = len(logits)
    if max_query_len is None:
        max_query_len = max([qsl[i + 1] - qsl[i] for i in range(num_reqs)], default=0)
    qsl_t = torch.tensor(qsl, dtype=DTYPES[qsl_dtype])
    seq_lens = torch.tensor([qsl[i + 1] - qsl[i] + 10 for i in range(num_reqs)], dtype=torch.int32)
    m = V.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t.clone(), seq_lens=seq_lens,
        num_reqs=num_reqs, num_actual_tokens=qsl[-1] - qsl[0] if qsl else 0,
        max_query_len=max_query_len, max_seq_len=int(seq_lens.max()) if num_reqs else 0,
        block_table_tensor=torch.zeros((num_reqs, 1), dtype=torch.int32),
        slot_mapping=torch.zeros(0, dtype=torch.int64), causal=False,
        logits_indices_padded=(None if logits is None
                               else torch.tensor(logits, dtype=DTYPES[logits_dtype])),
        num_logits_indices=num_logits)
    c = {"name": name, "query_start_loc": qsl, "logits_indices_padded": logits,
         "num_logits_indices": num_logits, "num_reqs": num_reqs, "max_query_len": max_query_len,
         "dtypes": [qsl_dtype, logits_dtype]}
    try:
        r = V.make_kv_sharing_fast_prefill_common_attn_metadata(m)
    except Exception as e:  # the seed fails: libcattn reports an error instead
        c["seed_error"] = ("%s: %s" % (type(e).__name__, str(e))).splitlines()[0]
        return c
    c["passthrough"] = r is m
    c["expect"] = {"query_start_loc": tolist(r.query_start_loc),
                   "query_start_loc_cpu": tolist(r.query_start_loc_cpu),
                   "max_query_len": int(r.max_query_len),
                   "num_actual_tokens": int(r.num_actual_tokens),
                   "causal": bool(r.causal),
                   "has_logits_indices": r.logits_indices_padded is not None}
    return c


def main():
    cases = [
        case("spec_example", [0, 15, 20, 28], [14, 18, 19, 27]),
        case("spec_example_int32_logits_int64_qsl", [0, 15, 20, 28], [14, 18, 19, 27],
             qsl_dtype="int64", logits_dtype="int32"),
        case("padding_ignored", [0, 15, 20, 28], [14, 18, 19, 27, 999, -5, 0], num_logits=4),
        case("num_logits_zero", [0, 15, 20, 28], [3, 4, 5], num_logits=0),
        case("num_logits_zero_empty_tensor", [0, 4, 8], [], num_logits=0),
        case("unsorted", [0, 15, 20, 28], [27, 14, 19, 18, 0, 27]),
        case("negative_index_goes_to_request_0", [0, 15, 20, 28], [-3, -100, 14, 20]),
        case("zero_length_requests", [0, 0, 5, 5, 9, 9, 12], [0, 4, 5, 8, 11]),
        case("one_request", [0, 9], [0, 3, 8]),
        case("nonzero_first_start", [3, 10, 12], [0, 4, 10, 11]),
        case("index_on_boundaries", [0, 2, 4, 6], [0, 1, 2, 3, 4, 5]),
        case("all_in_last_request", [0, 1, 2, 100], [2, 50, 99]),
        case("decode_only_passthrough", [0, 1, 2, 3], [0, 1, 2], max_query_len=1),
        case("passthrough_without_logits", [0, 1, 2], None, num_logits=None, max_query_len=1),
        case("max_query_len_0_is_not_passthrough", [0, 0, 0], [], num_logits=0, max_query_len=0),
        case("error_index_at_end", [0, 15, 20, 28], [14, 28]),
        case("error_index_past_end", [0, 15, 20, 28], [14, 18, 1000]),
        case("error_no_requests", [0], [], num_logits=0, max_query_len=0),
        case("error_no_logits_indices", [0, 4, 8], None, num_logits=None),
    ]
    r = rng(4321)
    for i in range(14):
        b = int(r.integers(1, 100))
        qlens = r.integers(0, 30, size=b)
        qlens[r.random(b) < 0.2] = 0
        qlens[r.random(b) < 0.3] = 1
        qsl = [0] + list(map(int, qlens.cumsum()))
        total = qsl[-1]
        if total == 0:
            continue
        n = int(r.integers(0, min(total, 3 * b) + 1))
        logits = sorted(map(int, r.choice(total, size=n, replace=False)))
        if i % 3 == 2:
            logits = list(map(int, r.permutation(logits)))
        pad = [int(x) for x in r.integers(-5, total + 50, size=int(r.integers(0, 4)))]
        types = [("int32", "int64"), ("int64", "int64"), ("int32", "int32")][i % 3]
        cases.append(case("random_%d_b%d_n%d" % (i, b, n), qsl, logits + pad, num_logits=n,
                          qsl_dtype=types[0], logits_dtype=types[1]))
    write("make_kv_sharing_fast_prefill_common_attn_metadata", cases)


if __name__ == "__main__":
    main()
