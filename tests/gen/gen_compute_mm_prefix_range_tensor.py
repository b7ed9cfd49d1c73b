# SPDX-License-Identifier: Apache-2.0
"""Vectors for compute_mm_prefix_range_tensor from the upstream oracle. The dict
{request: [(start, end), ...]} is stored in the CSR form the C call takes: range_offsets
[num_seqs + 1] and ranges [n, 2]; "none" marks vLLM's None input."""
from oracle_upstream import U, rng, torch, write

I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1


def csr(d, num_seqs):
    offsets, ranges = [0], []
    for r in range(num_seqs):
        ranges += [list(p) for p in d.get(r, [])]
        offsets.append(len(ranges))
    return offsets, ranges


def case(name, d, num_seqs):
    out = U.compute_mm_prefix_range_tensor(d, num_seqs, torch.device("cpu"))
    c = {"name": name, "num_seqs": num_seqs, "none_input": d is None}
    if d is not None:
        c["range_offsets"], c["ranges"] = csr(d, num_seqs)
    if out is None:
        c.update(is_none=True, max_ranges=0, shape=[], out=[])
    else:
        c.update(is_none=False, max_ranges=int(out.shape[1]), shape=list(out.shape),
                 out=[int(v) for v in out.flatten().tolist()])
    return c


def main():
    cases = [
        case("none_input", None, 3),
        case("no_requests", {}, 0),
        case("all_empty", {0: [], 1: [], 2: []}, 3),
        case("missing_keys", {}, 4),
        case("all_zero_pairs", {0: [(0, 0)], 2: [(0, 0)]}, 3),
        case("two_zero_pairs_not_none", {1: [(0, 0), (0, 0)]}, 2),
        case("one_request_one_range", {0: [(3, 9)]}, 1),
        case("mixed_counts", {0: [(0, 4)], 1: [], 2: [(1, 2), (5, 8), (10, 30)], 3: [(0, 0)]}, 4),
        case("degenerate_kept", {0: [(5, 5), (9, 3)], 1: [(2, 4)]}, 2),
        case("negative_values", {0: [(-7, -1)], 1: [(-3, 2)]}, 2),
        case("int32_limits", {0: [(I32_MIN, I32_MAX)], 1: [(I32_MAX - 1, I32_MAX)]}, 2),
        case("tail_requests_without_ranges", {0: [(1, 3)]}, 6),
    ]
    g = rng(1517)
    for i in range(20):
        n = int(g.integers(1, 12))
        d = {}
        for r in range(n):
            if g.random() < 0.4:
                continue
            k = int(g.integers(0, 5))
            pairs = []
            pos = int(g.integers(0, 50))
            for _ in range(k):
                a = pos + int(g.integers(0, 40))
                b = a + int(g.integers(-2, 60))
                pairs.append((a, b))
                pos = max(a, b) + 1
            d[r] = pairs
        cases.append(case("random_%d_n%d" % (i, n), d, n))
    write("compute_mm_prefix_range_tensor", cases)


if __name__ == "__main__":
    main()
