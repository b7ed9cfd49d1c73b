# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for mamba_get_block_table_tensor from the seed oracle.

A case whose gather the oracle refuses (a column past the row: torch's CPU gather raises, CUDA
reads out of bounds) is recorded with "error": true instead of an output.
"""
from oracle import V, rng, torch, write, tolist

MODES = {"none": 0, "all": 1, "align": 2}


def case(name, block_table, seq_lens, block_size, nspec, mode="align"):
    bt = torch.tensor(block_table, dtype=torch.int64).view(len(block_table), -1)
    spec = V.MambaSpec(block_size, nspec)
    c = {"name": name, "block_table": block_table, "cols": int(bt.shape[1]),
         "seq_lens": seq_lens, "block_size": block_size, "num_speculative_blocks": nspec,
         "mode": MODES[mode]}
    try:
        out = V.mamba_get_block_table_tensor(bt, torch.tensor(seq_lens, dtype=torch.int64), spec,
                                             mode)
    except RuntimeError:
        c["error"] = True
        return c
    c["shape"] = list(out.shape)
    c["out"] = tolist(out)
    return c


def arange_rows(b, m, start=0):
    return [[start + i * m + j for j in range(m)] for i in range(b)]


def main():
    spec_rows = arange_rows(3, 4)
    cases = [
        case("spec_align", spec_rows, [16, 17, 1], 16, 2),
        case("spec_all", spec_rows, [16, 17, 1], 16, 2, "all"),
        case("spec_none", spec_rows, [16, 17, 1], 16, 2, "none"),
        case("align_no_spec", spec_rows, [16, 17, 64], 16, 0),
        case("align_zero_length_padding_rows", spec_rows, [0, 0, 33], 16, 1),
        case("align_negative_seq_lens", spec_rows, [-1, -17, -100], 16, 2),
        case("align_block_boundaries", arange_rows(6, 5), [1, 16, 17, 32, 33, 64], 16, 0),
        case("align_block_size_1", arange_rows(4, 6), [1, 2, 3, 4], 1, 2),
        case("align_last_column", arange_rows(2, 4, 100), [49, 64], 16, 0),
        case("align_past_row", spec_rows, [16, 49, 1], 16, 2),
        case("align_past_row_nspec", spec_rows, [1, 1, 1], 16, 4),
        case("align_one_request", [[7, 3, 9, 11, 2]], [25], 8, 1),
        case("align_one_request_past_row", [[7, 3, 9, 11, 2]], [40], 8, 1),
        case("all_one_column", [[5], [6]], [3, 4], 16, 0, "all"),
    ]
    g = rng(99)
    for i in range(14):
        b = int(g.integers(1, 40))
        m = int(g.integers(1, 20))
        bs = int(g.choice([1, 2, 16, 64, 256]))
        nspec = int(g.integers(0, min(m, 4)))
        table = [[int(v) for v in row] for row in g.integers(0, 100000, size=(b, m))]
        # Lengths whose last block plus the speculative blocks stay inside the row, with some
        # padding rows.
        hi = (m - nspec) * bs
        lens = [int(v) for v in g.integers(-3, hi + 1, size=b)]
        mode = "align" if i % 4 else ["all", "none"][i // 4 % 2]
        cases.append(case("random_%d_%s_b%d_m%d" % (i, mode, b, m), table, lens, bs, nspec, mode))
    write("mamba_get_block_table_tensor", cases)


if __name__ == "__main__":
    main()
