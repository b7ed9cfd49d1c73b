# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for make_local_attention_virtual_batches from the seed oracle.

Each case: attn_chunk_size, block_size, query_start_loc_cpu, seq_lens_cpu, block_table and the
seed's virtual batches. One deliberate difference: a zero-length request with seq_len 0 makes
the seed index its block-table row at negative columns (torch wraps them to the row's end);
libcattn starts that virtual batch at column 0. For such cases "seed_block_table" keeps the
seed's table, "block_table" holds libcattn's, and "differs_from_seed_rows" lists the virtual
batches where they differ (only those of seq_len-0 requests).
"""
from oracle import V, rng, torch, write, tolist


def cdiv(a, b):
    return -(a // -b)


def run_seed(chunk, qsl, seq_lens, block_size, table):
    b = len(seq_lens)
    qsl_t = torch.tensor(qsl, dtype=torch.int32)
    sl_t = torch.tensor(seq_lens, dtype=torch.int32)
    m = V.CommonAttentionMetadata(
        query_start_loc=qsl_t, query_start_loc_cpu=qsl_t, seq_lens=sl_t, num_reqs=b,
        num_actual_tokens=qsl[-1] - qsl[0], max_query_len=0, max_seq_len=max(seq_lens),
        block_table_tensor=torch.tensor(table, dtype=torch.int32).view(b, -1),
        slot_mapping=torch.zeros(0, dtype=torch.int64), _seq_lens_cpu=sl_t)
    return V.make_local_attention_virtual_batches(chunk, m, block_size)


def case(name, chunk, qlens, seq_lens, block_size, table=None, start=0):
    b = len(seq_lens)
    qsl = [start]
    for q in qlens:
        qsl.append(qsl[-1] + q)
    if table is None:  # the SPEC's table: arange(B * cdiv(max s, bs)).view(B, -1)
        cols = cdiv(max(seq_lens), block_size)
        table = [[i * cols + j for j in range(cols)] for i in range(b)]
    md, make_block_table = run_seed(chunk, qsl, seq_lens, block_size, table)
    pages = chunk // block_size
    nv = int(md.num_reqs)
    seed_table = tolist(md.block_table_tensor)
    assert tolist(make_block_table(torch.tensor(table, dtype=torch.int32))) == seed_table
    ours = [list(r) for r in seed_table]
    differs = []
    if any(s == 0 for s in seq_lens):
        # Virtual batch index of request i = the seed's virtual batch count of requests < i.
        first = 0
        cols = len(table[0])
        for i in range(b):
            if seq_lens[i] == 0:
                row = [table[i][min(p, cols - 1)] for p in range(pages)]
                if row != ours[first]:
                    differs.append(first)
                ours[first] = row
            one, _ = run_seed(chunk, [0, qlens[i]], [seq_lens[i]], block_size, [table[i]])
            first += int(one.num_reqs)
        assert first == nv
    c = {"name": name, "attn_chunk_size": chunk, "block_size": block_size,
         "query_start_loc": qsl, "seq_lens": seq_lens, "block_table": table,
         "num_actual_tokens": qsl[-1] - qsl[0],
         "expect": {"num_reqs": nv, "pages": pages,
                    "query_start_loc": tolist(md.query_start_loc_cpu),
                    "seq_lens": tolist(md.seq_lens_cpu),
                    "num_computed_tokens": tolist(md.num_computed_tokens_cpu),
                    "block_table": ours,
                    "max_query_len": int(md.max_query_len),
                    "max_seq_len": int(md.max_seq_len),
                    "num_actual_tokens": int(md.num_actual_tokens)}}
    if differs:
        c["seed_block_table"] = seed_table
        c["differs_from_seed_rows"] = differs
    return c


def random_table(r, b, cols):
    return [list(map(int, r.integers(0, 100000, size=cols))) for _ in range(b)]


def main():
    cases = [
        case("spec_three_requests", 4, [4, 10, 5], [6, 17, 9], 2),
        case("spec_one_request_two_chunks", 4, [8], [12], 2),
        case("spec_clipped_columns", 10, [4], [6], 2),
        case("spec_single_decode", 4, [1], [5], 2),
        case("decode_only", 8, [1, 1, 1, 1], [1, 8, 9, 23], 4),
        case("chunk_equals_block", 4, [5, 3], [9, 3], 4),
        case("block_size_1", 3, [7, 2], [10, 2], 1),
        case("chunk_1", 1, [3, 1], [5, 1], 1),
        case("zero_length_request_with_context", 4, [0, 3], [5, 8], 2),
        case("nonzero_start", 4, [3, 2], [7, 2], 2, start=5),
        case("wider_table", 4, [6], [10], 2, table=[list(range(100, 112))]),
        case("narrower_table_clips", 8, [9], [17], 2, table=[[7, 8, 9]]),
        case("whole_chunks", 4, [8, 4], [8, 12], 2),
        # seq_len 0: the seed wraps to the end of the row; libcattn starts at column 0.
        case("zero_seq_len_differs_from_seed", 4, [0, 3], [0, 8], 2),
        case("zero_seq_len_in_the_middle", 4, [2, 0, 0, 5], [6, 0, 0, 5], 2,
             table=[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]),
        case("zero_seq_len_single_page", 4, [0], [0], 4, table=[[42, 43]]),
    ]
    r = rng(2024)
    for i in range(16):
        b = int(r.integers(1, 40))
        block_size = int([1, 2, 4, 16, 16, 32][i % 6])
        chunk = block_size * int(r.integers(1, 9))
        qlens = r.integers(0, 3 * chunk + 5, size=b)
        qlens[r.random(b) < 0.3] = 1
        ctx = r.integers(0, 5 * chunk, size=b)
        seq_lens = list(map(int, qlens + ctx))
        cols = cdiv(max(seq_lens), block_size) + int(r.integers(0, 3))
        cases.append(case("random_%d_b%d_c%d_bs%d" % (i, b, chunk, block_size), chunk,
                          list(map(int, qlens)), seq_lens, block_size,
                          table=random_table(r, b, cols)))
    write("make_local_attention_virtual_batches", cases)


if __name__ == "__main__":
    main()
