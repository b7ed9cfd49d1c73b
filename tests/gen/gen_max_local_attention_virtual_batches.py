# SPDX-License-Identifier: Apache-2.0
"""Vectors for max_local_attention_virtual_batches from the upstream oracle.

Besides vLLM's bound, each case records the number of virtual batches that
make_local_attention_virtual_batches really produces for a batch drawn within the limits (when
the case has one), so the tests can show where the bound holds and where zero-length rows
break it.
"""
import math

from oracle_upstream import U, np, rng, torch, write

I64 = 2 ** 63 - 1


def vb_count(chunk, q, s):
    """Virtual batches the upstream make_local_attention_virtual_batches makes of one batch."""
    b = len(q)
    bs = math.gcd(chunk, 16)
    qsl = torch.zeros(b + 1, dtype=torch.int32)
    qsl[1:] = torch.tensor(np.cumsum(q), dtype=torch.int32)
    seq = torch.tensor(s, dtype=torch.int32)
    cols = max(1, -(-max(s) // bs))
    ntok = int(sum(q))
    cam = U.CommonAttentionMetadata(
        query_start_loc=qsl, query_start_loc_cpu=qsl.clone(), seq_lens=seq, num_reqs=b,
        num_actual_tokens=ntok, max_query_len=max(q), max_seq_len=max(s),
        block_table_tensor=torch.arange(b * cols, dtype=torch.int32).view(b, cols),
        slot_mapping=torch.arange(ntok, dtype=torch.int64), causal=True,
        seq_lens_cpu_upper_bound=seq.clone(), _seq_lens_cpu=seq.clone())
    res, _ = U.make_local_attention_virtual_batches(chunk, cam, bs)
    return int(res.num_reqs)


def case(name, chunk, seqs, tokens, batch=None):
    c = {"name": name, "attn_chunk_size": chunk, "max_num_seqs": seqs,
         "max_num_batched_tokens": tokens,
         "bound": int(U.max_local_attention_virtual_batches(chunk, seqs, tokens))}
    if batch is not None:
        q, s = batch
        c["query_lens"] = q
        c["seq_lens"] = s
        c["virtual_batches"] = vb_count(chunk, q, s)
    return c


def main():
    cases = [
        # vLLM's test: q [1,1,1,1], s [16,32,48,64], C 16, 4 seqs.
        case("vllm_test_decode", 16, 4, 4, ([1, 1, 1, 1], [16, 32, 48, 64])),
        case("empty_step", 16, 0, 0),
        case("zero_tokens_one_padding_row", 16, 1, 0, ([0], [5])),
        case("padding_rows_break_cap", 4, 3, 1, ([1, 0, 0], [9, 4, 7])),
        case("chunk_1", 1, 8, 100),
        case("one_request_long", 8, 1, 1000, ([1000], [1003])),
        case("seq_term_wins", 1024, 2, 10000),
        case("token_cap_wins", 1, 1000, 10),
        case("int32_limits", 2, 2 ** 31 - 1, 2 ** 31 - 1),
        case("int64_tokens", 1, 0, I64),
        case("int64_seqs", 7, I64 // 2, I64 - 5),
        case("int64_all", 1, I64, I64),
        case("int64_chunk", I64, 3, I64),
    ]
    g = rng(1515)
    for i in range(24):
        chunk = int(g.choice([1, 2, 4, 16, 64, 256, 1024, 8192]))
        b = int(g.integers(1, 40))
        q = [int(v) for v in g.integers(1, 600, size=b)]
        s = [qi + int(g.integers(0, 5000)) for qi in q]
        cases.append(case("random_%d_c%d_b%d" % (i, chunk, b), chunk, b + int(g.integers(0, 8)),
                          sum(q), (q, s)))
    write("max_local_attention_virtual_batches", cases)


if __name__ == "__main__":
    main()
