# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for resolve_kv_cache_layout, record_kv_cache_layout and
CacheConfig.get_resolved_kv_cache_layout.

A resolve case gives the preset (cache_config.kv_cache_layout before the call), the workers'
name lists, the specs' (num_heads, num_states, page_size_bytes) (null = kv_cache_specs None),
VLLM_KV_CACHE_LAYOUT and the connector's preference, and records the oracle's layout, what it
left in cache_config.kv_cache_layout ("stored"), whether it logged the connector fallback
warning, or the exception it raised. Record cases give the stored name before and the name
recorded; get_resolved cases a stored name.
"""
from oracle_upstream import U, P, rng, write

L = U.KVCacheLayout
NAMES = [m.name for m in L]
ALL = NAMES + ["NHD", "HND"]
BAD = ["nhd", "XYZ", "", "LBHNC ", "Hnd", "LBHN"]


def resolve(preset, workers, specs, env, connector):
    P.envs.VLLM_KV_CACHE_LAYOUT = env
    U.envs.VLLM_KV_CACHE_LAYOUT = env
    cfg = P.VllmConfig(cache_config=U.CacheConfig(kv_cache_layout=preset),
                       kv_connector_layout=connector)
    spec_objs = None if specs is None else [P.AttnSpecStandIn(*s) for s in specs]
    U._LOGGER.records.clear()
    case = {"preset": preset, "workers": workers, "specs": specs, "env": env,
            "connector": connector}
    try:
        out = U.resolve_kv_cache_layout(cfg, workers, spec_objs)
    except (AssertionError, ValueError) as e:
        case["error"] = type(e).__name__
        case["stored"] = cfg.cache_config.kv_cache_layout
        return case
    finally:
        P.envs.VLLM_KV_CACHE_LAYOUT = None
        U.envs.VLLM_KV_CACHE_LAYOUT = None
    case["layout"] = out.name
    case["stored"] = cfg.cache_config.kv_cache_layout
    case["fell_back"] = any(r[0] == "warning" for r in U._LOGGER.records)
    return case


def record(initial, name):
    cc = U.CacheConfig(kv_cache_layout=initial)
    case = {"kind": "record", "initial": initial, "input": name}
    try:
        U.record_kv_cache_layout(cc, name)
    except ValueError:
        case["error"] = "ValueError"
    case["stored"] = cc.kv_cache_layout
    return case


def get_resolved(stored):
    case = {"kind": "get_resolved", "initial": stored}
    try:
        case["layout"] = U.CacheConfig(kv_cache_layout=stored).get_resolved_kv_cache_layout().name
    except ValueError:
        case["error"] = "ValueError"
    return case


def main():
    two = [["LBNHC", "LBHNC"], ["LBNHC", "LBHNC"]]
    mixed = [[8, 16, 8 * 16 * 256], [4, 32, 8 * 16 * 256]]
    same = [[8, 16, 4096], [8, 16, 4096]]
    fixed = [
        ("default_first", dict(workers=two)),
        ("preset_wins_unchecked", dict(preset="BHLNC", workers=two)),
        ("preset_alias_kept", dict(preset="HND", workers=two)),
        ("preset_unknown", dict(preset="XYZ", workers=two)),
        ("preset_ignores_bad_everything", dict(preset="NHD", workers=[], env="XYZ", connector="XYZ")),
        ("env_alias", dict(workers=two, env="HND")),
        ("env_not_candidate", dict(workers=two, env="BLHNC")),
        ("env_unknown", dict(workers=two, env="XYZ")),
        ("env_lowercase", dict(workers=two, env="nhd")),
        ("connector_not_candidate", dict(workers=two, connector="BHLNC")),
        ("connector_candidate_alias", dict(workers=two, connector="HND")),
        ("connector_unknown", dict(workers=two, connector="XYZ")),
        ("env_beats_connector", dict(workers=two, env="NHD", connector="HND")),
        ("env_beats_unknown_connector", dict(workers=two, env="NHD", connector="XYZ")),
        ("mixed_block_compact_only", dict(workers=[["LHBNC", "BLNHC"]], specs=mixed)),
        ("same_specs_no_filter", dict(workers=[["LHBNC", "BLNHC"]], specs=same)),
        ("one_spec_no_filter", dict(workers=[["LHBNC", "BLNHC"]], specs=mixed[:1])),
        ("empty_specs_no_filter", dict(workers=[["LHBNC", "BLNHC"]], specs=[])),
        ("mixed_none_compact", dict(workers=[["LHBNC", "BHLNC"]], specs=mixed)),
        ("mixed_env_filtered_out", dict(workers=[["LHBNC", "LBNHC"]], env="LHBNC", specs=mixed)),
        ("mixed_connector_filtered_out", dict(workers=[["LHBNC", "LBNHC"]], connector="LHBNC", specs=mixed)),
        ("mixed_by_page_only", dict(workers=[["BHLNC", "BLHNC"]], specs=[[8, 16, 4096], [8, 16, 8192]])),
        ("mixed_by_states_only", dict(workers=[["BHLNC", "BLHNC"]], specs=[[8, 16, 4096], [8, 32, 4096]])),
        ("workers_disagree", dict(workers=[["LBNHC"], ["LBHNC"]])),
        ("workers_disagree_alias", dict(workers=[["NHD"], ["LBNHC"]])),
        ("workers_disagree_length", dict(workers=[["LBNHC"], ["LBNHC", "LBHNC"]])),
        ("no_worker", dict(workers=[])),
        ("empty_worker_list", dict(workers=[["LBNHC"], []])),
        ("empty_first_worker_list", dict(workers=[[], ["LBNHC"]])),
        ("empty_and_disagree", dict(workers=[["LBNHC"], ["LBHNC"], []])),
        ("unknown_name_in_list", dict(workers=[["LBNHC", "XYZ"], ["LBNHC", "XYZ"]])),
        ("unknown_name_first", dict(workers=[["nhd"]])),
        ("duplicates_in_list", dict(workers=[["HND", "LBHNC", "NHD"]], env="LBNHC")),
        ("alias_first_candidate", dict(workers=[["NHD", "HND"]])),
        ("one_worker_all_six", dict(workers=[NAMES])),
        ("big_specs_same", dict(workers=[NAMES], specs=[[2**31, 2**40, 2**62]] * 3)),
        ("big_specs_mixed", dict(workers=[["BHLNC", "LHBNC", "BLNHC"]],
                                 specs=[[2**63 - 1, 1, 1], [2**63 - 1, 1, 2]])),
    ]
    cases = []
    for name, kw in fixed:
        args = dict(preset=None, workers=None, specs=None, env=None, connector=None)
        args.update(kw)
        cases.append(dict({"kind": "resolve", "name": name}, **resolve(**args)))
    r = rng(15003)
    for i in range(400):
        pick = lambda pool: str(pool[int(r.integers(0, len(pool)))])
        k = int(r.integers(1, 5))
        base = [pick(ALL) for _ in range(k)]
        if r.random() < 0.05:
            base[int(r.integers(0, k))] = pick(BAD)
        nw = int(r.integers(0, 5)) if r.random() < 0.1 else int(r.integers(1, 5))
        workers = [list(base) for _ in range(nw)]
        if nw > 1 and r.random() < 0.1:
            workers[int(r.integers(1, nw))] = [pick(ALL) for _ in range(k)]
        if nw and r.random() < 0.03:
            workers[int(r.integers(0, nw))] = []
        specs = None
        if r.random() < 0.7:
            ns = int(r.integers(0, 6))
            specs = [[int(r.integers(1, 3)), int(r.integers(16, 18)), 4096] for _ in range(ns)]
        env = None
        if r.random() < 0.4:
            env = pick(ALL) if r.random() < 0.9 else pick(BAD)
        connector = None
        if r.random() < 0.4:
            connector = pick(ALL) if r.random() < 0.9 else pick(BAD)
        preset = None
        if r.random() < 0.08:
            preset = pick(ALL) if r.random() < 0.8 else pick(BAD)
        cases.append(dict({"kind": "resolve", "name": "random_%d" % i},
                          **resolve(preset, workers, specs, env, connector)))
    # B = 1024 specs, the bench's size: one shape, then one shape apart at the end.
    big_same = [[8, 16, 4096]] * 1024
    big_mixed = [[8, 16, 4096]] * 1023 + [[4, 32, 4096]]
    for name, specs in [("specs_1024_same", big_same), ("specs_1024_mixed", big_mixed)]:
        cases.append(dict({"kind": "resolve", "name": name},
                          **resolve(None, [["LHBNC", "BHLNC", "BLNHC", "LBNHC"]] * 4, specs,
                                    None, "HND")))
    for initial in [None, "LBNHC", "NHD", "HND", "BHLNC", "XYZ"]:
        for name in ALL + BAD[:3]:
            cases.append(record(initial, name))
    for stored in [None] + ALL + BAD:
        cases.append(get_resolved(stored))
    write("resolve_kv_cache_layout", cases)


if __name__ == "__main__":
    main()
