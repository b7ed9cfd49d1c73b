# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for get_supported_kv_cache_layouts (one worker's backends combined).

Each case lists the backends' declarations (a list of layout names, or None for a backend that
declares nothing) and the oracle's answer, or "error" where it raises ValueError (an empty
intersection, or an empty declared list among differing ones, which fails to unpack). Every
declaration is a Python list: C has one sequence kind, so libcattn compares contents, as vLLM
does between sequences of one kind. The tuple-versus-list cases record, beside the answer for
lists, what vLLM answers when the first backend returns a tuple and the others lists
("mixed_kinds"); libcattn does not reproduce that one.
"""
from oracle_upstream import U, P, rng, write

L = U.KVCacheLayout
NAMES = [m.name for m in L]


def backend(layouts):
    return type("B", (P.AttentionBackend,), {
        "supported_kv_cache_layouts": classmethod(lambda cls: layouts)})


def combine(decls, first_as_tuple=False):
    backends = []
    for i, d in enumerate(decls):
        if d is None:
            backends.append(backend(None))
            continue
        seq = [L[n] for n in d]
        backends.append(backend(tuple(seq) if first_as_tuple and i == 0 else seq))
    try:
        return [m.name for m in U.get_supported_kv_cache_layouts(backends)]
    except ValueError:
        return "error"


def main():
    fixed = [
        ("empty_backend_list", []),
        ("one_none", [None]),
        ("all_none", [None, None, None]),
        ("one_backend", [["BLHNC", "LBHNC"]]),
        ("identical_keep_order", [["BLHNC", "LBHNC"], ["BLHNC", "LBHNC"], None]),
        ("readme_votes", [["BLHNC", "LBHNC"], ["LBNHC", "LBHNC", "BLHNC"]]),
        ("readme_tie_enum_order", [["BLHNC", "LBHNC"], ["LBHNC", "BLHNC"]]),
        ("empty_intersection", [["LBNHC"], ["LBHNC"]]),
        ("none_then_declared", [None, ["BHLNC", "LHBNC"], None]),
        ("one_empty_list", [[]]),
        ("all_empty_lists", [[], [], None]),
        ("empty_among_differing", [["LBNHC"], []]),
        ("empty_first_among_differing", [[], ["LBNHC"]]),
        ("duplicates_fast_path", [["LBNHC", "LBNHC", "LBHNC"], ["LBNHC", "LBNHC", "LBHNC"]]),
        ("duplicates_slow_path", [["LBNHC", "LBNHC"], ["LBNHC", "LBHNC"]]),
        ("same_set_other_order", [["BLHNC", "LBNHC", "LBHNC"], ["BLHNC", "LBHNC", "LBNHC"]]),
        ("votes_three_ways", [["BHLNC", "LBHNC", "BLHNC"], ["BLHNC", "BHLNC"], ["BLHNC", "BHLNC", "LBNHC"]]),
        ("all_six_differing", [NAMES, list(reversed(NAMES))]),
        ("prefix_differs", [["LBNHC"], ["LBNHC", "LBHNC"]]),
    ]
    cases = []
    for name, decls in fixed:
        cases.append({"name": name, "backends": decls, "layouts": combine(decls)})
    # Tuple-versus-list: the first backend's tuple never equals the others' lists in Python.
    for name, decls in [("tuple_vs_list_reorders", [["BLHNC", "LBNHC", "LBHNC"], ["BLHNC", "LBNHC", "LBHNC"]]),
                        ("tuple_vs_list_same", [["LBNHC", "LBHNC"], ["LBNHC", "LBHNC"]])]:
        cases.append({"name": name, "backends": decls, "layouts": combine(decls),
                      "mixed_kinds": combine(decls, first_as_tuple=True)})
    r = rng(15002)
    for i in range(300):
        nb = int(r.integers(0, 6))
        decls = []
        base = list(r.permutation(NAMES))
        for _ in range(nb):
            if r.random() < 0.2:
                decls.append(None)
            elif decls and r.random() < 0.3 and any(d is not None for d in decls):
                decls.append(list(next(d for d in decls if d is not None)))  # an identical copy
            else:
                k = int(r.integers(0, 7)) if r.random() < 0.05 else int(r.integers(1, 7))
                pool = base if r.random() < 0.5 else list(r.permutation(NAMES))
                decls.append([str(x) for x in pool[:k]])
        cases.append({"name": "random_%d" % i, "backends": decls, "layouts": combine(decls)})
    # Many backends (a long vote), B = 1024 as in the bench.
    big = []
    for _ in range(1024):
        k = int(r.integers(1, 7))
        big.append([str(x) for x in r.permutation(NAMES)[:k]])
    big = [d if "BLNHC" in d else d + ["BLNHC"] for d in big]
    cases.append({"name": "many_backends_1024", "backends": big, "layouts": combine(big)})
    write("get_supported_kv_cache_layouts", cases)


if __name__ == "__main__":
    main()
