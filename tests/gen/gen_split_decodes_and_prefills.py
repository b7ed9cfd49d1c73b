# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for split_decodes_and_prefills from the upstream oracle.

Every case is a batch (query_start_loc, num_reqs, num_actual_tokens, max_query_len) plus the
call's flags; "result" holds vLLM's four numbers, or "error" the exception vLLM raises.
"""
from types import SimpleNamespace

from oracle_upstream import U, rng, torch, write

I32_MAX = 2 ** 31 - 1


def batch(qsl, dtype="int32", tokens=None, max_query_len=None, is_prefilling=None):
    t = torch.tensor(qsl, dtype=getattr(torch, dtype))
    q = [qsl[i + 1] - qsl[i] for i in range(len(qsl) - 1)]
    return SimpleNamespace(
        query_start_loc_cpu=t, num_reqs=len(qsl) - 1,
        num_actual_tokens=qsl[-1] - qsl[0] if tokens is None else tokens,
        max_query_len=(max(q) if q else 0) if max_query_len is None else max_query_len,
        is_prefilling=None if is_prefilling is None else torch.tensor(is_prefilling,
                                                                      dtype=torch.bool))


def case(name, cam, thr=1, uniform=False, treat=True, dtype="int32"):
    c = {"name": name, "query_start_loc": [int(v) for v in cam.query_start_loc_cpu.tolist()],
         "dtype": dtype, "num_reqs": cam.num_reqs, "num_actual_tokens": cam.num_actual_tokens,
         "max_query_len": cam.max_query_len, "decode_threshold": thr,
         "require_uniform": int(uniform), "treat_short_extends_as_decodes": int(treat),
         "is_prefilling": None if cam.is_prefilling is None else
         [int(v) for v in cam.is_prefilling.tolist()]}
    try:
        r = U.split_decodes_and_prefills(cam, thr, uniform, treat)
        c["result"] = [int(v) for v in r]
    except (AssertionError, IndexError, RuntimeError) as e:
        c["error"] = type(e).__name__
    return c


def qsl_of(q, start=0):
    out = [start]
    for v in q:
        out.append(out[-1] + v)
    return out


def mk(name, q, thr=1, uniform=False, treat=True, dtype="int32", tokens=None, mql=None,
       isp=None, start=0):
    return case(name, batch(qsl_of(q, start), dtype, tokens, mql, isp), thr, uniform, treat,
                dtype)


def main():
    cases = [
        # vLLM's own test table (README section 4).
        mk("vllm_all_decodes", [1, 2, 1, 3, 2, 1, 2], 3),
        mk("vllm_mixed", [2, 1, 3, 4, 5, 6, 7, 8], 4),
        mk("vllm_uniform_mixed", [2, 2, 1, 3, 2, 1, 2], 3, True),
        mk("vllm_uniform_prefix", [2, 2, 2, 4, 5, 6, 7, 8], 4, True),
        mk("vllm_uniform_first_only", [2, 1, 2, 4, 5, 6, 7, 8], 4, True),
        mk("vllm_uniform_padded", [2, 2, 2, 0], 3, True, tokens=8),
        mk("vllm_short_extend_prefilling", [1, 1], 1, True, False, isp=[0, 1]),
        # Edge cases.
        mk("empty_batch_step1", [], 1),
        mk("empty_batch_raises", [], 1, mql=5),
        mk("empty_batch_uniform_raises", [], 4, True),
        mk("empty_batch_no_treat_raises", [], 1, False, False, isp=[]),
        mk("one_decode", [1]),
        mk("one_prefill", [7]),
        mk("one_zero_length", [0], mql=3),
        mk("zero_lengths_decode", [0, 0, 0], 1, mql=4),
        mk("zero_then_prefill", [1, 0, 5, 0], 1),
        mk("uniform_zero_rows_prefill", [2, 2, 0, 3], 4, True),
        mk("uniform_thr1_step1", [1, 1, 1], 1, True),
        mk("uniform_all_padding", [3, 0, 0, 3], 4, True),
        mk("uniform_first_zero", [0, 2, 2], 4, True),
        mk("decode_only", [1] * 9),
        mk("prefill_only", [5, 9, 3]),
        mk("unordered", [1, 9, 1, 1, 9], 1),
        mk("odd_lengths", [3, 5, 7, 9, 11], 5),
        mk("padded_tokens", [1, 1, 4], 1, tokens=64),
        mk("over_estimated_max", [1, 1, 1], 1, mql=8),
        mk("under_estimated_max", [1, 1, 9], 1, mql=1),
        mk("threshold_zero", [0, 0, 1, 0], 0),
        mk("threshold_large", [5, 6, 7], 2 ** 20),
        mk("qsl_not_from_zero", [1, 1, 4, 2], 1, start=100),
        mk("no_treat_all_decodes", [1, 1, 1], 1, False, False, isp=[0, 0, 0]),
        mk("no_treat_prefilling_first", [1, 1, 1], 1, False, False, isp=[1, 0, 0]),
        mk("no_treat_missing_flags", [1, 1, 1], 1, False, False),
        mk("no_treat_first_prefill_no_flags", [4, 1], 1, False, False),
        mk("no_treat_uniform", [2, 2, 2, 3], 4, True, False, isp=[0, 0, 1, 0]),
        mk("int64_inputs", [1, 2, 1, 9, 9], 2, dtype="int64"),
        mk("int64_uniform", [2, 2, 2, 0], 3, True, dtype="int64", tokens=8),
        # Values near the limits: int32 differences wrap as vLLM's tensors do.
        case("int32_near_max", batch([I32_MAX - 10, I32_MAX - 9, I32_MAX], "int32", 10, 9), 1),
        case("int32_wrapping_length",
             batch([-2 ** 31, I32_MAX, I32_MAX], "int32", 5, 7), 1),
        case("int64_near_max", batch([0, 1, 2 ** 62, 2 ** 62 + 1], "int64", 2 ** 63 - 1,
                                     2 ** 62), 1, dtype="int64"),
        case("int64_large_start",
             batch([2 ** 62, 2 ** 62 + 1, 2 ** 62 + 3], "int64", 3, 2), 1, dtype="int64"),
    ]
    g = rng(1501)
    for i in range(60):
        b = int(g.integers(1, 40))
        thr = int(g.choice([1, 1, 2, 3, 4, 8]))
        uniform = bool(g.random() < 0.4)
        treat = bool(g.random() < 0.7)
        nd = int(g.integers(0, b + 1))
        if uniform and g.random() < 0.5:
            d = int(g.integers(1, thr + 1))
            dec = [d] * nd
        else:
            dec = [int(v) for v in g.integers(0 if g.random() < 0.3 else 1, thr + 1, size=nd)]
        pre = [int(v) for v in g.integers(0, 3 * thr + 20, size=b - nd)]
        q = dec + pre
        if g.random() < 0.2:
            g.shuffle(q)
        if g.random() < 0.2:
            q += [0] * int(g.integers(1, 5))
        isp = None if treat else [int(v) for v in (g.random(len(q)) < 0.15)]
        dtype = "int64" if g.random() < 0.3 else "int32"
        tokens = sum(q) + (int(g.integers(0, 32)) if g.random() < 0.3 else 0)
        mql = None if g.random() < 0.8 else int(g.integers(0, 3 * thr + 20))
        cases.append(mk("random_%d_b%d_t%d_u%d_s%d" % (i, len(q), thr, uniform, treat), q, thr,
                        uniform, treat, dtype, tokens, mql, isp))
    write("split_decodes_and_prefills", cases)


if __name__ == "__main__":
    main()
