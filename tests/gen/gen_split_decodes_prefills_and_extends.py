# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for split_decodes_prefills_and_extends from the upstream oracle.

Every case is a batch (query_start_loc, seq_lens_cpu_upper_bound, num_reqs,
num_actual_tokens, max_query_len) and a threshold; "result" holds vLLM's six numbers (its
0-d tensors as ints), or "error" the exception vLLM raises.
"""
from types import SimpleNamespace

from oracle_upstream import U, rng, torch, write

I32_MAX = 2 ** 31 - 1


def qsl_of(q, start=0):
    out = [start]
    for v in q:
        out.append(out[-1] + v)
    return out


def case(name, qsl, ub, thr=1, dtype="int32", tokens=None, mql=None, ub_dtype="int32"):
    q = [qsl[i + 1] - qsl[i] for i in range(len(qsl) - 1)]
    cam = SimpleNamespace(
        query_start_loc_cpu=torch.tensor(qsl, dtype=getattr(torch, dtype)),
        seq_lens_cpu_upper_bound=None if ub is None else torch.tensor(
            ub, dtype=getattr(torch, ub_dtype)),
        num_reqs=len(qsl) - 1,
        num_actual_tokens=qsl[-1] - qsl[0] if tokens is None else tokens,
        max_query_len=(max(q) if q else 0) if mql is None else mql)
    c = {"name": name, "query_start_loc": qsl, "dtype": dtype, "upper_bound": ub,
         "upper_bound_dtype": ub_dtype, "num_reqs": cam.num_reqs,
         "num_actual_tokens": cam.num_actual_tokens, "max_query_len": cam.max_query_len,
         "decode_threshold": thr}
    try:
        r = U.split_decodes_prefills_and_extends(cam, thr)
        c["result"] = [int(v) for v in r]
    except (AssertionError, IndexError, RuntimeError) as e:
        c["error"] = type(e).__name__
    return c


def mk(name, q, ub, thr=1, dtype="int32", tokens=None, mql=None, start=0, ub_dtype="int32"):
    return case(name, qsl_of(q, start), ub, thr, dtype, tokens, mql, ub_dtype)


def main():
    cases = [
        mk("readme_example", [1, 1, 3, 4, 5, 6], [10, 20, 30, 40, 5, 6]),
        mk("all_decodes_step1", [1, 1, 1], [5, 6, 7]),
        mk("all_decodes_no_bound", [1, 1, 1], None),
        mk("missing_bound_asserts", [1, 4], None),
        mk("over_estimated_max_all_zeros", [1, 1, 1], [5, 6, 7], mql=6),
        mk("over_estimated_max_qsl_not_zero", [1, 1], [5, 6], mql=6, start=7),
        mk("extends_no_prefill", [1, 4, 5], [9, 10, 11]),
        mk("prefills_only", [4, 5], [4, 5]),
        mk("decodes_then_prefills", [1, 1, 4, 5], [9, 9, 4, 5]),
        mk("unordered_prefill_before_extend", [1, 4, 5, 6], [9, 4, 20, 6]),
        mk("short_extend_counts_as_decode", [1, 1, 6], [1, 9, 6]),
        mk("zero_length_rows", [0, 1, 0, 4, 0], [3, 4, 0, 4, 0]),
        mk("padded_tokens", [1, 3, 4], [8, 9, 4], tokens=40),
        mk("empty_batch_step1", [], []),
        mk("empty_batch_raises", [], [], mql=3),
        mk("empty_batch_no_bound", [], None, mql=3),
        mk("one_decode", [1], [9]),
        mk("one_prefill", [5], [5]),
        mk("one_extend", [5], [50]),
        mk("threshold_4", [2, 4, 3, 6, 8, 7], [20, 30, 40, 60, 8, 7], 4),
        mk("odd_lengths", [3, 5, 7, 9], [30, 50, 7, 9], 3),
        mk("int64_inputs", [1, 1, 3, 4], [10, 20, 30, 4], dtype="int64", ub_dtype="int64"),
        mk("int64_qsl_int32_bound", [1, 3, 4], [10, 3, 4], dtype="int64"),
        mk("qsl_not_from_zero", [1, 3, 4], [10, 30, 4], start=50),
        # int32 step-8 counts wrap as vLLM's 0-d tensors do.
        case("int32_tokens_past_max", qsl_of([1, 3, 4]), [10, 30, 4], 1, "int32",
             2 ** 31 + 100, None),
        case("int32_near_max", [I32_MAX - 20, I32_MAX - 19, I32_MAX - 10, I32_MAX],
             [5, 9, 10], 1, "int32", 20, None),
        case("int64_near_max", [0, 1, 2 ** 62, 2 ** 62 + 2], [3, 2 ** 62 + 5, 2], 1, "int64",
             2 ** 63 - 1, None, "int64"),
    ]
    g = rng(1502)
    for i in range(60):
        b = int(g.integers(1, 40))
        thr = int(g.choice([1, 1, 2, 4, 8]))
        nd = int(g.integers(0, b + 1))
        ne = int(g.integers(0, b - nd + 1))
        npf = b - nd - ne
        q = ([int(v) for v in g.integers(0, thr + 1, size=nd)] +
             [int(v) for v in g.integers(thr + 1, 4 * thr + 20, size=ne + npf)])
        ctx = ([int(v) for v in g.integers(1, 500, size=nd + ne)] + [0] * npf)
        if g.random() < 0.2:
            perm = g.permutation(b)
            q = [q[j] for j in perm]
            ctx = [ctx[j] for j in perm]
        ub = [q[j] + ctx[j] for j in range(b)]
        dtype = "int64" if g.random() < 0.3 else "int32"
        ub_dtype = "int64" if g.random() < 0.3 else "int32"
        tokens = sum(q) + (int(g.integers(0, 32)) if g.random() < 0.3 else 0)
        mql = None if g.random() < 0.8 else int(g.integers(0, 4 * thr + 20))
        cases.append(mk("random_%d_b%d_t%d" % (i, b, thr), q, ub, thr, dtype, tokens, mql,
                        0, ub_dtype))
    write("split_decodes_prefills_and_extends", cases)


if __name__ == "__main__":
    main()
