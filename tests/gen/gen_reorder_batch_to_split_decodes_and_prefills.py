# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for reorder_batch_to_split_decodes_and_prefills from the upstream
oracle: per request (scheduled, computed, prompt) tokens and a threshold; vLLM's return value
("changed"), the order it leaves the batch in ("index_map": the old position of the request
now at each position), its swap_states calls in order ("swaps") and the four region counts
(from the README's region table)."""
from oracle_upstream import P, U, rng, write

I32_MAX = 2 ** 31 - 1


def region(s, c, p, thr):
    if c <= 0:
        return 3
    if s > thr:
        return 2
    return 0 if c >= p else 1


def case(name, s, c, p, thr=1):
    b = len(s)
    ids = ["r%d" % i for i in range(b)]
    batch = P.InputBatchStandIn(ids, c, p)
    sched = P.SchedulerOutputStandIn(dict(zip(ids, s)))
    changed = U.reorder_batch_to_split_decodes_and_prefills(batch, sched, thr)
    counts = [0, 0, 0, 0]
    for i in range(b):
        counts[region(s[i], c[i], p[i], thr)] += 1
    return {"name": name, "num_scheduled_tokens": s, "num_computed_tokens": c,
            "num_prompt_tokens": p, "decode_threshold": thr, "changed": int(bool(changed)),
            "index_map": [int(r[1:]) for r in batch.req_ids],
            "swaps": [[int(x), int(y)] for x, y in batch.swaps], "counts": counts}


def main():
    cases = [
        case("readme_example", [100, 1, 1, 10, 1], [0, 50, 60, 50, 0], [100, 100, 60, 100, 1]),
        case("pdpd", [5, 1, 5, 1], [0, 9, 0, 9], [5, 9, 5, 9]),
        case("empty", [], [], []),
        case("one", [3], [0], [3]),
        case("already_ordered", [1, 1, 1, 4, 6], [9, 8, 3, 2, 0], [9, 8, 9, 9, 6]),
        case("reversed", [6, 4, 1, 1], [0, 2, 3, 9], [6, 9, 9, 9]),
        case("all_decodes", [1, 1, 1], [5, 6, 7], [5, 6, 7]),
        case("all_prefills", [1, 7, 3], [0, 0, 0], [1, 7, 3]),
        case("one_token_prompt_is_prefill", [1, 1], [0, 4], [1, 4]),
        case("zero_scheduled", [0, 0, 2, 0], [0, 3, 3, 0], [1, 3, 9, 0]),
        case("threshold_4", [4, 5, 3, 1, 8, 2], [10, 10, 0, 5, 3, 7], [10, 20, 3, 9, 30, 7], 4),
        case("threshold_0", [0, 1, 0, 2], [4, 4, 0, 3], [4, 4, 1, 9], 0),
        case("long_cycle", [5, 5, 5, 1, 1, 1], [0, 0, 0, 4, 4, 4], [5, 5, 5, 4, 4, 4]),
        case("two_cycles", [1, 9, 1, 9, 1, 9], [0, 3, 2, 0, 5, 5], [1, 9, 9, 9, 5, 9]),
        case("near_int32_max", [I32_MAX, 1, 1, I32_MAX], [0, I32_MAX, I32_MAX - 1, I32_MAX],
             [I32_MAX, I32_MAX, I32_MAX, 1]),
        case("int64_scheduled", [2 ** 40, 1, 2 ** 33], [5, 7, 0], [9, 7, 3]),
        case("negative_computed", [1, 1], [-3, 4], [0, 4]),
    ]
    g = rng(1504)
    for i in range(60):
        b = int(g.integers(1, 64))
        thr = int(g.choice([1, 1, 2, 4, 8]))
        s = [int(v) for v in g.integers(1, 3 * thr + 10, size=b)]
        s = [1 if g.random() < 0.4 else v for v in s]
        c = [0 if g.random() < 0.3 else int(v) for v in g.integers(1, 200, size=b)]
        p = [int(v) for v in g.integers(1, 200, size=b)]
        cases.append(case("random_%d_b%d_t%d" % (i, b, thr), s, c, p, thr))
    write("reorder_batch_to_split_decodes_and_prefills", cases)


if __name__ == "__main__":
    main()
