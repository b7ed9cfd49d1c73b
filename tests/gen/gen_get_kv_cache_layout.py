# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for get_kv_cache_layout and is_valid_kv_cache_layout.

Every combination of the override, the user's setting (VLLM_KV_CACHE_LAYOUT) and the KV
connector's preference is resolved by the seed; its lru_cache is cleared before each call (the
library has no cache). "no connector" resolves like a connector preferring NHD, which is what
vLLM's get_kv_connector_cache_layout returns without one. A user setting the seed asserts on
is recorded as "error".
"""
from oracle import V, write

SETTINGS = [None, "NHD", "HND", "nhd", "hnd", "", "XYZ", "NHD "]


def resolve(override, env, connector):
    V._KV_CACHE_LAYOUT_OVERRIDE = override
    V.envs.VLLM_KV_CACHE_LAYOUT = env
    V.get_kv_connector_cache_layout = lambda: connector or "NHD"
    V.get_kv_cache_layout.cache_clear()
    try:
        return V.get_kv_cache_layout()
    except AssertionError:
        return "error"


def main():
    cases = []
    for override in [None, "NHD", "HND"]:
        for env in SETTINGS:
            for connector in [None, "NHD", "HND"]:
                name = "override_%s_env_%r_connector_%s" % (override, env, connector)
                cases.append({"name": name,
                              "override": override, "env": env, "connector": connector,
                              "layout": resolve(override, env, connector)})
    for value in SETTINGS[1:] + ["HND\n", "N"]:
        cases.append({"name": "is_valid_%r" % value, "is_valid": value,
                      "valid": V.is_valid_kv_cache_layout(value)})
    write("get_kv_cache_layout", cases)


if __name__ == "__main__":
    main()
