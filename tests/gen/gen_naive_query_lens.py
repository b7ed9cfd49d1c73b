# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for naive_query_lens and compute_num_computed_tokens from the upstream
oracle (CommonAttentionMetadata.naive_query_lens / compute_num_computed_tokens).

Each case gives query_start_loc and seq_lens with the dtype the oracle computed in, and the
two results. One file serves both calls: they read the same inputs.
"""
from metadata_batches import (I64_MAX, cam, edge_batches, qsl_of, random_batches)
from oracle_upstream import tolist, torch, write


def case(name, qsl, seq_lens, dtype="int32"):
    t = {"int32": torch.int32, "int64": torch.int64}[dtype]
    m = cam(qsl, seq_lens, 0, dtype=t)
    return {"name": name, "dtype": dtype, "query_start_loc": qsl, "seq_lens": seq_lens,
            "expect": {"naive_query_lens": tolist(m.naive_query_lens()),
                       "compute_num_computed_tokens": tolist(m.compute_num_computed_tokens())}}


def main():
    cases = []
    for name, q, ctx, _ in edge_batches() + random_batches(1501, 12):
        qsl = qsl_of(q)
        seq = [a + b for a, b in zip(q, ctx)]
        cases.append(case(name, qsl, seq))
        cases.append(case(name + "_int64", qsl, seq, "int64"))
    # Unchecked values, as upstream: a decreasing query_start_loc and a seq_len shorter than its
    # query give negative results.
    cases.append(case("decreasing_query_start_loc", [0, 5, 3, 9], [5, 1, 2]))
    cases.append(case("seq_len_below_query_len", [0, 4, 6], [1, 2]))
    cases.append(case("nonzero_start", [7, 9, 12], [10, 3]))
    cases.append(case("near_int64_limit", [0, 1, 3], [I64_MAX, I64_MAX - 5], "int64"))
    cases.append(case("large_int64_offsets", [2**40, 2**40 + 3, 2**41], [2**42, 2**41], "int64"))
    write("naive_query_lens", cases)


if __name__ == "__main__":
    main()
