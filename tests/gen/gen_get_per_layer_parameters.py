# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for get_per_layer_parameters and infer_global_hyperparameters.

The seed reads layers through vLLM's get_layers_from_vllm_config; a stand-in returns layers
whose impl carries exactly the attributes vLLM reads (sliding_window, logits_soft_cap, scale,
sinks). Every float is a distinct Python object, as it is for real layers, so NaN compares
unequal between layers (Python's identity shortcut applies only to a layer and itself).
Non-finite floats are written as the strings "nan", "inf", "-inf" (JSON has no such numbers).
"""
import math
import types

from oracle import V, rng, write


def enc(x):
    if x is None:
        return None
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def fresh(x):
    # A new float object with the same value and sign (float(x) may return x itself).
    return None if x is None else x * 1.0


def case(name, layers):
    """layers: list of (window or None, soft_cap or None, scale, has_sinks)."""
    impls = []
    for window, cap, scale, sinks in layers:
        impl = types.SimpleNamespace(scale=fresh(scale))
        # Leave None attributes out altogether half the time: vLLM reads them with getattr.
        if window is not None or len(impls) % 2:
            impl.sliding_window = window
        if cap is not None or len(impls) % 2:
            impl.logits_soft_cap = fresh(cap)
        if sinks or len(impls) % 2:
            impl.sinks = object() if sinks else None
        impls.append(impl)
    names = ["model.layers.%d.attn" % i for i in range(len(impls))]
    V.get_layers_from_vllm_config = lambda cfg, base, layer_names: {
        n: types.SimpleNamespace(impl=impls[names.index(n)]) for n in layer_names}
    per = V.get_per_layer_parameters(None, names, object)
    g = V.infer_global_hyperparameters(per)
    return {
        "name": name,
        "layers": [{"window": list(w) if w is not None else None, "soft_cap": enc(c),
                    "scale": enc(s), "sinks": bool(k)} for w, c, s, k in layers],
        "per_layer": [{"window_left": p.window_left, "logits_soft_cap": enc(p.logits_soft_cap),
                       "sm_scale": enc(p.sm_scale), "has_sinks": p.has_sinks}
                      for p in per.values()],
        "global": {"window_left": g.window_left, "logits_soft_cap": enc(g.logits_soft_cap),
                   "sm_scale": enc(g.sm_scale), "has_sinks": g.has_sinks,
                   "has_same_window_lefts": g.has_same_window_lefts,
                   "has_same_all_params": g.has_same_all_params},
    }


def main():
    s = 0.08838834764831845  # 1 / sqrt(128)
    nan = float("nan")
    cases = [
        case("one_layer_plain", [(None, None, s, False)]),
        case("uniform_model", [(None, None, s, False)] * 4),
        case("uniform_sliding_softcap", [((4095, 0), 50.0, s, False)] * 3),
        case("none_cap_vs_zero_cap", [(None, None, s, False), (None, 0.0, s, False)]),
        case("zero_cap_vs_none_cap", [(None, 0.0, s, False), (None, None, s, False)]),
        case("zero_caps", [(None, 0.0, s, False), (None, 0.0, s, False)]),
        case("different_caps", [(None, 30.0, s, False), (None, 50.0, s, False)]),
        case("gemma2_alternating_windows",
             [((4095, 0), 50.0, s, False), (None, 50.0, s, False)] * 3),
        case("same_windows_different_scale", [((127, 0), None, s, False),
                                              ((127, 0), None, 0.125, False)]),
        case("window_right_ignored", [((127, 0), None, s, False), ((127, 64), None, s, False)]),
        case("window_minus_one_equals_none", [((-1, -1), None, s, False),
                                              (None, None, s, False)]),
        case("sinks_differ", [(None, None, s, True), (None, None, s, False)]),
        case("sinks_all", [(None, None, s, True)] * 3),
        case("last_layer_differs", [(None, None, s, False)] * 5 + [((1023, 0), None, s, False)]),
        case("negative_zero_scale", [(None, None, 0.0, False), (None, None, -0.0, False)]),
        case("negative_zero_cap", [(None, -0.0, s, False), (None, 0.0, s, False)]),
        case("nan_scale_one_layer", [(None, None, nan, False)]),
        case("nan_scale_two_layers", [(None, None, nan, False), (None, None, nan, False)]),
        case("nan_scale_later_layer", [(None, None, s, False), (None, None, nan, False)]),
        case("nan_cap_one_layer", [(None, nan, s, False)]),
        case("nan_cap_two_layers", [(None, nan, s, False), (None, nan, s, False)]),
        case("inf_values", [((8, 0), float("inf"), float("-inf"), False)] * 2),
        case("large_window", [((2 ** 40, 0), None, 1.0, False), ((2 ** 40, 0), None, 1.0, False)]),
    ]
    g = rng(77)
    for i in range(8):
        n = int(g.integers(1, 12))
        win = [None, (127, 0), (4095, 0)]
        caps = [None, 0.0, 30.0, 50.0]
        scales = [s, 0.125, 1.0]
        vary = g.random(4) < 0.3  # which fields vary between layers
        base = [int(g.integers(0, 3)), int(g.integers(0, 4)), int(g.integers(0, 3)),
                bool(g.integers(0, 2))]
        layers = []
        for _ in range(n):
            w = int(g.integers(0, 3)) if vary[0] else base[0]
            c = int(g.integers(0, 4)) if vary[1] else base[1]
            sc = int(g.integers(0, 3)) if vary[2] else base[2]
            k = bool(g.integers(0, 2)) if vary[3] else base[3]
            layers.append((win[w], caps[c], scales[sc], k))
        cases.append(case("random_%d_n%d" % (i, n), layers))
    write("get_per_layer_parameters", cases)


if __name__ == "__main__":
    main()
