# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors, from the upstream oracle, for the 1.0 calls the 1.1 metadata fields update:
extend_all_queries_by_n (vLLM's extend_all_queries_by_N with the upper bound, the DCP lengths
and the positions), make_kv_sharing_fast_prefill_common_attn_metadata (max_logits_per_req)
and make_local_attention_virtual_batches (seq_lens_cpu_upper_bound per virtual batch).

Where upstream leaves a field stale or mis-shaped, "expect" holds the value libcattn writes and
"upstream" what vLLM leaves, so the difference is on record:
- extend: upstream's dcp_local_seq_lens keeps the old lengths and its mirror becomes None;
  libcattn's are get_dcp_local_seq_lens(seq_lens + N) (computed with the oracle). Upstream keeps
  the old positions; libcattn writes the extended batch's positions into a buffer of
  "positions_len" entries (0 past the last token).
- local attention: upstream copies the [B] upper bound; libcattn writes the virtual batches'
  key lengths ([V], the oracle's seq_lens of the result).
"""
from metadata_batches import cam, edge_batches, qsl_of, random_batches
import json
import os

from oracle_upstream import U, VECTOR_DIR, rng, tolist, torch, write as write_vectors


def write(utility, cases):
    """write_vectors, naming this generator (its file stem is not the utility's)."""
    write_vectors(utility, cases)
    path = os.path.join(VECTOR_DIR, utility + ".json")
    with open(path) as f:
        data = json.load(f)
    data["generator"] = "tests/gen/gen_metadata_1_1_fields.py"
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")


def extend_case(name, q, ctx, n, dcp=(2, 1, 4), pad=0):
    b = len(q)
    qsl = qsl_of(q)
    seq = [a + c for a, c in zip(q, ctx)]
    size, rank, inter = dcp
    old_dcp = U.get_dcp_local_seq_lens(torch.tensor(seq, dtype=torch.int32), size, rank, inter)
    t = qsl[-1] + pad
    m = cam(qsl, seq, t, dtype=torch.int64,
            seq_lens_cpu_upper_bound=torch.tensor([s + 3 for s in seq], dtype=torch.int64),
            dcp_local_seq_lens=old_dcp, dcp_local_seq_lens_cpu=old_dcp.clone(),
            positions=torch.zeros(t, dtype=torch.int64))
    m._seq_lens_cpu = torch.tensor(seq, dtype=torch.int64)
    arange = torch.arange(b + 4, dtype=torch.int64)
    r = U.extend_all_queries_by_N(m, n, arange, torch.zeros(0, dtype=torch.int64))
    new_seq = tolist(r.seq_lens)
    new_qsl = tolist(r.query_start_loc)
    right_dcp = tolist(U.get_dcp_local_seq_lens(torch.tensor(new_seq, dtype=torch.int32), size,
                                                rank, inter))
    positions_len = new_qsl[-1] - new_qsl[0] + 2 + pad
    positions = []
    for i in range(b):
        ql = new_qsl[i + 1] - new_qsl[i]
        positions += [new_seq[i] - ql + j for j in range(ql)]
    positions += [0] * (positions_len - len(positions))
    return {"name": name, "n": n, "query_start_loc": qsl, "seq_lens": seq,
            "num_actual_tokens": t, "max_query_len": int(m.max_query_len),
            "max_seq_len": int(m.max_seq_len),
            "seq_lens_cpu_upper_bound": tolist(m.seq_lens_cpu_upper_bound),
            "dcp_size": size, "dcp_rank": rank, "dcp_kv_cache_interleave_size": inter,
            "positions_len": positions_len,
            "expect": {"query_start_loc": new_qsl,
                       "query_start_loc_cpu": tolist(r.query_start_loc_cpu),
                       "seq_lens": new_seq, "seq_lens_cpu": tolist(r._seq_lens_cpu),
                       "seq_lens_cpu_upper_bound": tolist(r.seq_lens_cpu_upper_bound),
                       "num_actual_tokens": int(r.num_actual_tokens),
                       "max_query_len": int(r.max_query_len), "max_seq_len": int(r.max_seq_len),
                       "dcp_local_seq_lens": right_dcp, "positions": positions},
            "upstream": {"dcp_local_seq_lens": tolist(r.dcp_local_seq_lens),
                         "dcp_local_seq_lens_cpu": r.dcp_local_seq_lens_cpu,
                         "positions_len": int(r.positions.shape[0])}}


def fast_prefill_case(name, qsl, logits, max_logits):
    b = len(qsl) - 1
    m = cam(qsl, [qsl[i + 1] - qsl[i] + 10 for i in range(b)], qsl[-1],
            logits_indices_padded=torch.tensor(logits, dtype=torch.int64),
            num_logits_indices=len(logits), max_logits_per_req=max_logits,
            seq_lens_cpu_upper_bound=torch.tensor([qsl[i + 1] - qsl[i] + 12 for i in range(b)]),
            positions=torch.zeros(qsl[-1], dtype=torch.int64),
            is_prefilling=torch.ones(b, dtype=torch.bool))
    r = U.make_kv_sharing_fast_prefill_common_attn_metadata(m)
    return {"name": name, "query_start_loc": qsl, "logits_indices_padded": logits,
            "max_logits_per_req": max_logits, "max_query_len": int(m.max_query_len),
            "expect": {"query_start_loc": tolist(r.query_start_loc),
                       "max_query_len": int(r.max_query_len),
                       "num_actual_tokens": int(r.num_actual_tokens),
                       "keeps_upper_bound": r.seq_lens_cpu_upper_bound is not None,
                       "keeps_positions": r.positions is not None,
                       "keeps_is_prefilling": r.is_prefilling is not None,
                       "max_logits_per_req": r.max_logits_per_req}}


def local_case(name, chunk, q, seq, block_size):
    b = len(q)
    qsl = qsl_of(q)
    cols = max(1, -(-max(seq) // block_size))
    m = cam(qsl, seq, qsl[-1],
            seq_lens_cpu_upper_bound=torch.tensor(seq, dtype=torch.int32))
    m.block_table_tensor = torch.arange(b * cols, dtype=torch.int32).view(b, cols)
    m._seq_lens_cpu = torch.tensor(seq, dtype=torch.int32)
    r, _ = U.make_local_attention_virtual_batches(chunk, m, block_size)
    return {"name": name, "attn_chunk_size": chunk, "block_size": block_size,
            "query_start_loc": qsl, "seq_lens": seq, "cols": cols,
            "expect": {"seq_lens_cpu_upper_bound": tolist(r.seq_lens),
                       "num_reqs": int(r.num_reqs)},
            "upstream": {"seq_lens_cpu_upper_bound": tolist(r.seq_lens_cpu_upper_bound)}}


def main():
    ext = []
    for i, (name, q, ctx, pad) in enumerate(edge_batches() + random_batches(1504, 10)):
        if name.startswith("near_int32"):
            continue  # the extended lengths leave int32, where the DCP split is defined
        dcp = [(2, 1, 4), (4, 0, 1), (1, 0, 1), (8, 7, 16)][i % 4]
        ext.append(extend_case(name, q, ctx, [1, 2, 3, 0, 5][i % 5], dcp, pad))
    write("extend_all_queries_by_n_upstream", ext)

    fp = [fast_prefill_case("spec_example_trusted", [0, 15, 20, 28], [14, 18, 19, 27], 2),
          fast_prefill_case("trusted_over_estimate", [0, 15, 20, 28], [14, 18, 19, 27], 9),
          fast_prefill_case("trusted_zero", [0, 4, 8], [3, 7], 0)]
    r = rng(1505)
    for i in range(6):
        b = int(r.integers(1, 40))
        q = [int(x) for x in r.integers(2, 30, size=b)]
        qsl = qsl_of(q)
        logits = sorted(int(x) for x in r.choice(qsl[-1], size=min(qsl[-1], b * 2),
                                                 replace=False))
        counts = [sum(1 for x in logits if qsl[j] <= x < qsl[j + 1]) for j in range(b)]
        fp.append(fast_prefill_case("random_%d_b%d" % (i, b), qsl, logits, max(counts)))
    write("make_kv_sharing_fast_prefill_common_attn_metadata_upstream", fp)

    la = [local_case("spec_example", 4, [4, 10, 5], [6, 17, 9], 2),
          local_case("one_chunk", 4, [8], [12], 2),
          local_case("decode_only", 16, [1, 1, 1, 1], [16, 32, 48, 64], 8)]
    r = rng(1506)
    for i in range(6):
        b = int(r.integers(1, 30))
        q = [int(x) for x in r.integers(1, 40, size=b)]
        seq = [x + int(c) for x, c in zip(q, r.integers(0, 200, size=b))]
        la.append(local_case("random_%d_b%d" % (i, b), [4, 8, 16, 32][i % 4], q, seq, 2))
    write("make_local_attention_virtual_batches_upstream", la)


if __name__ == "__main__":
    main()
