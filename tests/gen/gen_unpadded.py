# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for unpadded from the upstream oracle
(CommonAttentionMetadata.unpadded(T', B')).

Each case gives a padded batch with every per-request and per-token field the oracle slices
(the 1.1 fields included), the cut (T', B') and the sliced values upstream returns. Upstream
drops positions and seq_lens_cpu_upper_bound ("upstream_drops"); libcattn slices them like the
other fields, so "expect" holds the slices libcattn returns for them (checked here to be the
plain slices of the input).
"""
from metadata_batches import cam, edge_batches, qsl_of, random_batches
from oracle_upstream import tolist, torch, write

PER_REQ = ["seq_lens", "block_table_tensor", "is_prefilling", "causal", "dcp_local_seq_lens",
           "dcp_local_seq_lens_cpu", "encoder_seq_lens", "encoder_seq_lens_cpu"]


def case(name, q, ctx, pad_tokens, pad_reqs, cut_reqs, cut_tokens):
    q = q + [0] * pad_reqs
    ctx = ctx + [0] * pad_reqs
    b = len(q)
    qsl = qsl_of(q)
    seq = [a + c for a, c in zip(q, ctx)]
    t = qsl[-1] + pad_tokens
    m = cam(qsl, seq, t,
            positions=torch.arange(t, dtype=torch.int64) * 3 + 1,
            is_prefilling=torch.tensor([c < 100 for c in ctx], dtype=torch.bool),
            causal=torch.tensor([i % 3 != 1 for i in range(b)], dtype=torch.bool),
            dcp_local_seq_lens=torch.tensor([s // 2 for s in seq], dtype=torch.int32),
            dcp_local_seq_lens_cpu=torch.tensor([s // 2 for s in seq], dtype=torch.int32),
            encoder_seq_lens=torch.tensor([i + 1 for i in range(b)], dtype=torch.int32),
            encoder_seq_lens_cpu=torch.tensor([i + 1 for i in range(b)], dtype=torch.int32),
            seq_lens_cpu_upper_bound=torch.tensor([s + 2 for s in seq], dtype=torch.int64),
            logits_indices_padded=torch.tensor([0, 1], dtype=torch.int64), num_logits_indices=1,
            max_logits_per_req=5)
    m.block_table_tensor = torch.arange(b * 3, dtype=torch.int32).view(b, 3)
    m.slot_mapping = torch.arange(t, dtype=torch.int64) + 100
    u = m.unpadded(cut_tokens, cut_reqs)
    assert u.positions is None and u.seq_lens_cpu_upper_bound is None
    expect = {"query_start_loc": tolist(u.query_start_loc),
              "query_start_loc_cpu": tolist(u.query_start_loc_cpu),
              "slot_mapping": tolist(u.slot_mapping), "num_reqs": u.num_reqs,
              "num_actual_tokens": u.num_actual_tokens, "max_query_len": int(u.max_query_len),
              "max_seq_len": int(u.max_seq_len), "num_logits_indices": u.num_logits_indices,
              "max_logits_per_req": u.max_logits_per_req,
              # libcattn's values where upstream drops the field.
              "positions": tolist(m.positions[:cut_tokens]),
              "seq_lens_cpu_upper_bound": tolist(m.seq_lens_cpu_upper_bound[:cut_reqs])}
    for f in PER_REQ:
        expect[f] = [int(x) for x in tolist(getattr(u, f).reshape(-1))]
    inp = {"query_start_loc": qsl, "seq_lens": seq, "num_actual_tokens": t,
           "max_query_len": int(m.max_query_len), "max_seq_len": int(m.max_seq_len),
           "positions": tolist(m.positions), "slot_mapping": tolist(m.slot_mapping),
           "seq_lens_cpu_upper_bound": tolist(m.seq_lens_cpu_upper_bound)}
    for f in PER_REQ:
        inp[f] = [int(x) for x in tolist(getattr(m, f).reshape(-1))]
    return {"name": name, "input": inp, "block_table_cols": 3, "num_actual_tokens": cut_tokens,
            "num_actual_reqs": cut_reqs, "expect": expect,
            "upstream_drops": ["positions", "seq_lens_cpu_upper_bound"]}


def main():
    cases = []
    for i, (name, q, ctx, pad) in enumerate(edge_batches() + random_batches(1503, 10)):
        real_tokens = sum(q)
        pad_reqs = [0, 2, 5][i % 3]
        cases.append(case(name, q, ctx, pad, pad_reqs, len(q), real_tokens))
    cases.append(case("cut_inside_batch", [3, 1, 4, 1, 5], [2, 7, 1, 8, 2], 4, 0, 3, 8))
    cases.append(case("cut_to_nothing", [3, 1], [2, 7], 2, 1, 0, 0))
    cases.append(case("cut_everything", [3, 1], [2, 7], 2, 1, 3, 6))
    write("unpadded", cases)


if __name__ == "__main__":
    main()
