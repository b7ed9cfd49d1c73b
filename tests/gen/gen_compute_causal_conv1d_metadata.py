# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for compute_causal_conv1d_metadata from the seed oracle.

The seed only ever uses BLOCK_M = 8 (`for BLOCK_M in [8]`). For other block sizes the generator
runs the seed's own function text with that list changed, so every number still comes from the
seed's formulas; a direct numpy computation that mirrors the seed line by line cross-checks it.
"""
import inspect

from oracle import V, np, rng, torch, write, tolist

PAD = V.PAD_SLOT_ID


def seed_with_block_m(block_m):
    """The seed's compute_causal_conv1d_metadata with its BLOCK_M list set to [block_m]."""
    if block_m == 8:
        return V.compute_causal_conv1d_metadata
    src = inspect.getsource(V.compute_causal_conv1d_metadata)
    assert src.count("for BLOCK_M in [8]:") == 1
    src = src.replace("for BLOCK_M in [8]:", "for BLOCK_M in [%d]:" % block_m)
    ns = dict(vars(V))
    exec(compile(src, "<seed compute_causal_conv1d_metadata, BLOCK_M=%d>" % block_m, "exec"), ns)
    return ns["compute_causal_conv1d_metadata"]


def numpy_mirror(qsl, block_m):
    """The seed's steps in plain numpy, for the cross-check."""
    seqlens = np.diff(np.asarray(qsl, dtype=np.int64))
    nums = -(-seqlens // block_m)
    tot = int(nums.sum())
    mlist = np.repeat(np.arange(len(nums)), nums)
    offsetlist = []
    for num in nums:
        offsetlist.extend(range(num))
    capacity = max(1024, len(mlist)) * 2
    batch_ptr = np.full(capacity, PAD)
    batch_ptr[:len(mlist)] = mlist
    chunk_ptr = np.full(capacity, PAD)
    chunk_ptr[:len(mlist)] = offsetlist
    return nums, tot, mlist, np.asarray(offsetlist, dtype=np.int64), batch_ptr, chunk_ptr


def split_padded(name, t, tot):
    """A launch array as its first tot entries plus the single value that fills the rest."""
    t = t.numpy()
    tail = np.unique(t[tot:])
    assert len(tail) <= 1, name
    return tolist(t[:tot]), (int(tail[0]) if len(tail) else None), len(t)


def case(name, qsl, block_m=8, dtype=torch.int32):
    d, batch_ptr, chunk_ptr = seed_with_block_m(block_m)(
        torch.tensor(qsl, dtype=dtype), device="cpu")
    e = d[block_m]
    tot = int(e["tot"])
    bp_head, bp_fill, bp_len = split_padded(name, batch_ptr, tot)
    cp_head, cp_fill, cp_len = split_padded(name, chunk_ptr, tot)
    assert bp_len == cp_len

    m = numpy_mirror(qsl, block_m)
    assert tolist(e["nums"]) == tolist(m[0]) and tot == m[1], name
    assert tolist(e["mlist"]) == tolist(m[2]) and tolist(e["offsetlist"]) == tolist(m[3]), name
    assert tolist(batch_ptr) == tolist(m[4]) and tolist(chunk_ptr) == tolist(m[5]), name

    return {"name": name, "query_start_loc_cpu": list(qsl), "block_m": block_m,
            "nums": tolist(e["nums"]), "tot": tot, "mlist": tolist(e["mlist"]),
            "offsetlist": tolist(e["offsetlist"]), "capacity": bp_len,
            "batch_ptr_head": bp_head, "batch_ptr_fill": bp_fill,
            "token_chunk_offset_ptr_head": cp_head, "token_chunk_offset_ptr_fill": cp_fill}


def random_qsl(r, b, max_len, start=0, p_zero=0.1, p_decode=0.2):
    lens = r.integers(0, max_len + 1, size=b)
    lens[r.random(b) < p_decode] = 1
    lens[r.random(b) < p_zero] = 0
    return [start] + [start + int(x) for x in lens.cumsum()]


def main():
    cases = [
        case("spec", [0, 10, 16, 17]),
        case("empty_batch", [0]),
        case("empty_tensor", []),
        case("one_request", [0, 37]),
        case("one_token", [0, 1]),
        case("zero_length_requests", [0, 0, 9, 9, 9, 16, 16]),
        case("all_zero_length", [3, 3, 3, 3]),
        case("decode_only", [0, 1, 2, 3, 4, 5]),
        case("block_boundaries", [0, 7, 15, 24, 32, 41]),
        case("nonzero_start", [100, 110, 116, 117]),
        case("int64_input", [0, 10, 16, 17], dtype=torch.int64),
        case("over_1024_programs", [0, 8 * 700, 8 * 1400 + 3]),
        case("exactly_1024_programs", [0, 8 * 1024]),
        case("block_m_1", [0, 10, 16, 17], block_m=1),
        case("block_m_1_over_1024", [0, 1500, 1500, 2100], block_m=1),
        case("block_m_3", [0, 10, 16, 17, 17, 29], block_m=3),
        case("block_m_16", [0, 10, 16, 17, 50, 64], block_m=16),
        case("block_m_larger_than_lengths", [0, 10, 16, 17], block_m=1000),
        case("block_m_7_zero_len", [0, 0, 7, 14, 15, 15], block_m=7),
    ]
    r = rng(4321)
    for i, bm in enumerate([8, 8, 8, 1, 2, 4, 5, 16, 32, 64, 128]):
        b = int(r.integers(1, 129))
        cases.append(case("random_%d_b%d_bm%d" % (i, b, bm), random_qsl(r, b, 200), block_m=bm))
    # Large batches like vLLM's hot path: B up to 1024 and 64k tokens.
    lens = r.multinomial(65536, np.full(1024, 1.0 / 1024))
    cases.append(case("large_b1024_64k_bm8", [0] + list(map(int, lens.cumsum()))))
    lens = r.multinomial(65536, np.full(256, 1.0 / 256))
    cases.append(case("large_b256_64k_bm8", [0] + list(map(int, lens.cumsum())),
                      dtype=torch.int64))
    cases.append(case("large_b1024_bm64", random_qsl(r, 1024, 120), block_m=64))
    write("compute_causal_conv1d_metadata", cases)


if __name__ == "__main__":
    main()
