# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for the six KV-cache layouts: kv_cache_layout_get_properties,
kv_cache_layout_from_name, get_flashinfer_layout_string and kv_cache_layout_strides.

Properties, names and FlashInfer strings come from the upstream oracle's KVCacheLayout,
_layout_from_name and get_flashinfer_layout_string. Strides are those torch gives the logical
[L, B, H, N, C] view (permute) of a compact tensor in the layout's physical order, as the
oracle's selftest derives them: computed by the product formula and checked against torch's
meta device (no memory) wherever torch accepts the sizes ("source"); sizes whose products
overflow int64 are recorded as "overflow".
"""
from oracle_upstream import U, rng, write, torch

L = U.KVCacheLayout
INT64_MAX = 2**63 - 1

NAMES = ["LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC", "NHD", "HND",
         "nhd", "hnd", "lbhnc", "Lbhnc", "", " LBHNC", "LBHNC ", "LBHNC\n", "LBHN", "LBHNCC",
         "XYZ", "NHD ", "N", "HNDD", "BHLNC\t", "KVCacheLayout.LBHNC", "0"]


def props(m):
    try:
        fi = U.get_flashinfer_layout_string(m)
    except AssertionError:
        fi = None
    return {"name": m.name, "stride_order": list(m.stride_order),
            "layer_view_order": list(m.layer_view_order),
            "is_layer_compact": m.is_layer_compact, "is_block_contiguous": m.is_block_contiguous,
            "is_block_compact": m.is_block_compact, "is_block_outermost": m.is_block_outermost,
            "order": list(L).index(m), "flashinfer": fi}


def parse(name):
    try:
        return U._layout_from_name(name).name
    except ValueError:
        return "error"


def strides(m, sizes):
    phys = [sizes[a] for a in m.stride_order]
    # Overflow: the product of all sizes, or of the (size or 1) products torch forms.
    numel = 1
    for s in sizes:
        numel *= s
    run = 1
    for s in reversed(phys[1:]):
        run *= max(s, 1)
    if numel > INT64_MAX or run > INT64_MAX:
        return {"layout": m.name, "sizes": sizes, "error": "overflow"}
    st = [0] * 5
    run = 1
    for k in range(4, -1, -1):
        st[m.stride_order[k]] = run
        run *= max(phys[k], 1)
    inv = [list(m.stride_order).index(a) for a in range(5)]
    try:
        t = torch.empty(phys, dtype=torch.uint8, device="meta").permute(*inv)
        assert list(t.shape) == sizes and list(t.stride()) == st, (m, sizes, t.stride(), st)
        source = "torch"
    except RuntimeError:
        source = "formula"  # torch refuses the storage size (an empty axis beside huge ones)
    return {"layout": m.name, "sizes": sizes, "strides": st, "physical_shape": phys,
            "numel": numel, "source": source}


def main():
    cases = []
    for m in L:
        cases.append(dict({"kind": "properties"}, **props(m)))
    for n in NAMES:
        cases.append({"kind": "from_name", "input": n, "layout": parse(n)})
    r = rng(15001)
    size_sets = [[2, 3, 4, 5, 6], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 3, 4, 5, 6],
                 [2, 0, 4, 5, 6], [2, 3, 0, 5, 6], [2, 3, 4, 0, 6], [2, 3, 4, 5, 0],
                 [32, 4096, 8, 16, 512], [1, 1, 1, 1, 2**62], [2, 2, 2, 2, 2**59],
                 [2, 2, 2, 2, 2**60], [2**31, 2**31, 1, 1, 2], [2**31, 2**31, 1, 1, 1],
                 [INT64_MAX, 1, 1, 1, 1], [1, 1, 1, 1, INT64_MAX], [0, 1, 1, INT64_MAX, 2],
                 [0, 2**40, 2**40, 1, 1], [3, 0, 2**62, 2, 1]]
    for _ in range(40):
        size_sets.append([int(x) for x in r.integers(0, 70, size=5)])
    for sizes in size_sets:
        for m in L:
            cases.append(dict({"kind": "strides"}, **strides(m, sizes)))
    write("kv_cache_layout", cases)


if __name__ == "__main__":
    main()
