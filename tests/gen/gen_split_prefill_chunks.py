# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for split_prefill_chunks from the upstream oracle: lengths, workspace
and offset; "chunks" holds vLLM's [start, end) pairs, or "error" the exception it raises."""
from oracle_upstream import U, rng, torch, write


def case(name, seq, ws, off=0, dtype="int32"):
    c = {"name": name, "seq_lens": seq, "dtype": dtype, "workspace_size": ws,
         "request_offset": off}
    try:
        r = U.split_prefill_chunks(torch.tensor(seq, dtype=getattr(torch, dtype)), ws, off)
        c["chunks"] = [[int(a), int(b)] for a, b in r]
    except AssertionError as e:
        c["error"] = type(e).__name__
    return c


def main():
    cases = [
        case("readme_example", [3, 5, 2, 7, 1], 8),
        case("empty", [], 8),
        case("empty_workspace_zero", [], 0),
        case("one", [4], 4),
        case("each_alone", [4, 4, 4], 4),
        case("all_in_one", [1, 2, 3], 100),
        case("offset", [3, 5, 2, 7, 1], 8, 10),
        case("negative_offset", [3, 5, 2], 5, -7),
        case("zero_lengths", [0, 0, 3, 0, 5, 0], 5),
        case("workspace_zero_zeros", [0, 0, 0], 0),
        case("too_long_asserts", [3, 9, 1], 8),
        case("int64_lengths", [2 ** 40, 2 ** 40, 1], 2 ** 41, 0, "int64"),
        case("int64_offset", [1, 2, 3], 3, 2 ** 62, "int64"),
        case("int32_max_lengths", [2 ** 31 - 1, 2 ** 31 - 1, 1], 2 ** 31 - 1),
        case("odd", [1, 3, 5, 7, 9, 11], 12),
    ]
    g = rng(1503)
    for i in range(40):
        n = int(g.integers(1, 60))
        ws = int(g.integers(1, 200))
        seq = [int(v) for v in g.integers(0, ws + 1, size=n)]
        off = int(g.integers(0, 50)) if g.random() < 0.5 else 0
        dtype = "int64" if g.random() < 0.3 else "int32"
        cases.append(case("random_%d_n%d_ws%d" % (i, n, ws), seq, ws, off, dtype))
    write("split_prefill_chunks", cases)


if __name__ == "__main__":
    main()
