# SPDX-License-Identifier: Apache-2.0
"""Vectors for get_dcp_local_seq_lens on N-D seq_lens (CATTN_DCP_SHAPE_PRESERVE), from the
upstream oracle: any input shape, the shape kept for one rank and a trailing [dcp_size] axis for
all ranks, never squeezed (dcp_size 1 included)."""
from oracle_upstream import U, rng, torch, write

I32 = 2 ** 31 - 1


def case(name, seq_lens, shape, size, rank, interleave):
    t = torch.tensor(seq_lens, dtype=torch.int64).reshape(shape)
    out = U.get_dcp_local_seq_lens(t, size, rank, interleave)
    return {"name": name, "seq_lens": seq_lens, "seq_shape": list(shape), "dcp_size": size,
            "dcp_rank": -1 if rank is None else rank, "interleave": interleave,
            "shape": list(out.shape), "out": [int(v) for v in out.flatten().tolist()]}


def main():
    spec = [1, 2, 128, 129, 256, 257]
    cases = [
        case("spec_1d_w2_i1", spec, [6], 2, None, 1),
        case("spec_2x3_w4_i128", spec, [2, 3], 4, None, 128),
        case("spec_3x2_w4_i128_rank1", spec, [3, 2], 4, 1, 128),
        case("spec_1d_size1_all_kept", spec, [6], 1, None, 1),
        case("spec_2x3_size1_all_kept", spec, [2, 3], 1, None, 7),
        case("spec_2x3_size1_rank0", spec, [2, 3], 1, 0, 16),
        case("scalar_all", [17], [], 4, None, 2),
        case("scalar_rank2", [17], [], 4, 2, 2),
        case("scalar_size1_all", [17], [], 1, None, 2),
        case("empty_1d_all", [], [0], 4, None, 16),
        case("empty_2d_all", [], [3, 0], 4, None, 16),
        case("empty_3d_rank", [], [2, 0, 5], 4, 3, 16),
        case("one_request_3d", [1000], [1, 1, 1], 8, None, 64),
        case("zero_lengths_2d", [0, 0, 5, 0, 0, 9], [2, 3], 4, None, 2),
        case("odd_size_3d", list(range(1, 25)), [2, 3, 4], 3, None, 2),
        case("odd_size_3d_rank2", list(range(1, 25)), [2, 3, 4], 3, 2, 2),
        case("rank7", list(range(0, 256, 2)), [2, 2, 2, 2, 2, 2, 2], 2, None, 3),
        case("rank7_one_rank", list(range(0, 256, 2)), [2, 2, 2, 2, 2, 2, 2], 5, 4, 3),
        case("int32_max_2d", [I32, I32 - 1, 2 ** 30, 0], [2, 2], 8, None, 2 ** 27),
        case("int32_max_rank", [I32, I32 - 1, 2 ** 30, 1], [4, 1], 2, 1, 2 ** 30 - 1),
        case("interleave_larger_than_seq_2d", [0, 1, 7, 100, 1023, 3073], [3, 2], 4, None, 1024),
    ]
    g = rng(1512)
    for i in range(20):
        ndim = int(g.integers(1, 5))
        shape = [int(v) for v in g.integers(1, 6, size=ndim)]
        n = 1
        for d in shape:
            n *= d
        size = int(g.choice([1, 2, 3, 4, 5, 8, 16]))
        interleave = int(g.choice([1, 2, 3, 16, 64, 128, 256]))
        rank = None if g.random() < 0.5 else int(g.integers(0, size))
        lens = [int(v) for v in g.integers(0, 5000, size=n)]
        cases.append(case("random_%d_%s_w%d_i%d_r%s" % (
            i, "x".join(map(str, shape)), size, interleave, rank), lens, shape, size, rank,
            interleave))
    write("get_dcp_local_seq_lens_nd", cases)


if __name__ == "__main__":
    main()
