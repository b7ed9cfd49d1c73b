# SPDX-License-Identifier: Apache-2.0
"""Vectors for fill_mm_prefix_query_ranges from the upstream oracle: the rows returned and
the whole staging buffer afterwards, which starts filled with SENTINEL so that rows the call
leaves alone (all of them when it returns 0, those past T otherwise) show. The dict is stored
in CSR form (range_offsets [B + 1], ranges [n, 2]); "none_input" marks vLLM's None."""
from oracle_upstream import U, np, rng, torch, write

SENTINEL = 7777
I32_MAX = 2 ** 31 - 1


def case(name, d, q, s, capacity=None):
    b = len(q)
    qsl = [0]
    for x in q:
        qsl.append(qsl[-1] + x)
    capacity = qsl[-1] + 3 if capacity is None else capacity
    out = np.full((capacity, 2), SENTINEL, dtype=np.int32)
    rows = U.fill_mm_prefix_query_ranges(out, d, torch.tensor(qsl, dtype=torch.int32),
                                         torch.tensor(s, dtype=torch.int64))
    c = {"name": name, "none_input": d is None, "query_start_loc": qsl, "seq_lens": s,
         "capacity": capacity, "rows": int(rows), "out": out.flatten().tolist()}
    if d is not None:
        offsets, ranges = [0], []
        for r in range(b):
            ranges += [list(p) for p in d.get(r, [])]
            offsets.append(len(ranges))
        c["range_offsets"], c["ranges"] = offsets, ranges
    return c


def main():
    cases = [
        case("none_input", None, [4, 2], [4, 6]),
        case("empty_batch", {}, [], []),
        case("no_tokens", {0: [(0, 5)]}, [0, 0], [3, 4]),
        case("no_ranges", {}, [5, 3], [5, 3]),
        case("inclusive_end", {0: [(2, 4)]}, [8], [8]),
        case("range_at_first_token", {0: [(0, 1)]}, [3], [3]),
        case("end_is_last_token", {0: [(1, 3)]}, [4], [4]),
        case("end_past_chunk", {0: [(2, 100)]}, [6], [6]),
        case("chunked_prefill_context", {0: [(3, 12)]}, [4], [10]),
        case("range_before_chunk", {0: [(0, 4)]}, [3], [10]),
        case("end_touches_chunk_start", {0: [(0, 6)]}, [3], [10]),
        case("range_after_chunk", {0: [(12, 20)]}, [4], [8]),
        case("degenerate_skipped", {0: [(3, 3), (5, 2)]}, [8], [8]),
        case("later_range_overwrites", {0: [(1, 6), (3, 4)]}, [8], [8]),
        case("decode_rows", {0: [(0, 3)], 1: [(0, 3)]}, [1, 1], [9, 2]),
        case("zero_length_row", {0: [(0, 2)], 1: [(0, 9)], 2: [(1, 2)]}, [3, 0, 2], [3, 5, 2]),
        case("exact_capacity", {0: [(0, 2)]}, [3, 2], [3, 2], capacity=5),
        case("multi_request", {0: [(0, 2), (4, 6)], 1: [(10, 13)], 3: [(0, 1)]},
             [7, 5, 2, 3], [7, 14, 2, 3]),
        case("int32_limit_values", {0: [(0, I32_MAX)]}, [3], [3]),
    ]
    g = rng(1519)
    for i in range(24):
        b = int(g.integers(1, 10))
        q = [int(v) for v in g.integers(0, 20, size=b)]
        s = [qi + int(g.integers(0, 30)) for qi in q]
        d = {}
        for r in range(b):
            if g.random() < 0.3:
                continue
            pairs = []
            pos = int(g.integers(0, 10))
            for _ in range(int(g.integers(0, 4))):
                a = pos + int(g.integers(0, 12))
                e = a + int(g.integers(-1, 15))
                pairs.append((a, e))
                pos = max(a, e) + int(g.integers(-3, 4))
            d[r] = pairs
        cases.append(case("random_%d_b%d" % (i, b), d, q, s))
    write("fill_mm_prefix_query_ranges", cases)


if __name__ == "__main__":
    main()
