# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for get_dcp_local_seq_lens from the seed oracle."""
from oracle import V, rng, torch, write, tolist


def case(name, seq_lens, size, rank, interleave):
    out = V.get_dcp_local_seq_lens(torch.tensor(seq_lens, dtype=torch.int64), size, rank,
                                   interleave)
    return {"name": name, "seq_lens": seq_lens, "dcp_size": size,
            "dcp_rank": -1 if rank is None else rank, "interleave": interleave,
            "shape": list(out.shape), "out": [int(v) for v in out.flatten().tolist()]}


def main():
    spec = [1, 2, 128, 129, 256, 257]
    cases = [
        case("spec_w2_i1", spec, 2, None, 1),
        case("spec_w4_i128", spec, 4, None, 128),
    ]
    for r in range(4):
        cases.append(case("spec_w4_i128_rank%d" % r, spec, 4, r, 128))
    for r in range(2):
        cases.append(case("spec_w2_i1_rank%d" % r, spec, 2, r, 1))
    cases += [
        case("size1_all", spec, 1, None, 1),
        case("size1_rank0", spec, 1, 0, 16),
        case("empty_batch_all", [], 4, None, 16),
        case("empty_batch_size1", [], 1, None, 1),
        case("empty_batch_rank", [], 4, 2, 16),
        case("one_request", [1000], 8, None, 64),
        case("zero_lengths", [0, 0, 5, 0], 4, None, 2),
        case("interleave_larger_than_seq", [0, 1, 7, 100, 1023], 4, None, 1024),
        case("interleave_larger_than_seq_rank3", [0, 1, 7, 100, 1023, 3073], 4, 3, 1024),
        case("odd_size", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], 3, None, 2),
        case("int32_max", [2 ** 31 - 1, 2 ** 31 - 2, 2 ** 30], 8, None, 2 ** 27),
        case("int32_max_rank", [2 ** 31 - 1, 2 ** 31 - 2, 2 ** 30], 2, 1, 2 ** 30 - 1),
    ]
    g = rng(2024)
    for i in range(16):
        b = int(g.integers(1, 80))
        size = int(g.choice([1, 2, 3, 4, 5, 8, 16]))
        interleave = int(g.choice([1, 2, 3, 16, 64, 128, 256]))
        rank = None if g.random() < 0.5 else int(g.integers(0, size))
        lens = [int(v) for v in g.integers(0, 5000, size=b)]
        cases.append(case("random_%d_b%d_w%d_i%d_r%s" % (i, b, size, interleave, rank), lens,
                          size, rank, interleave))
    write("get_dcp_local_seq_lens", cases)


if __name__ == "__main__":
    main()
