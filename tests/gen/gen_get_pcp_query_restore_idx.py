# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for get_pcp_query_restore_idx from the seed oracle."""
from oracle import V, rng, torch, write, tolist


def case(name, cu):
    out = V.get_pcp_query_restore_idx(torch.tensor(cu, dtype=torch.int32))
    return {"name": name, "cu_num_tokens": cu, "restore_idx": tolist(out)}


def main():
    cases = [
        case("spec_one_request", [0, 8]),
        case("spec_two_requests", [0, 8, 20]),
        case("spec_decode_only", [0, 1, 2]),
        case("empty_batch", [0]),
        case("zero_length_requests", [0, 0, 4, 4, 10, 10]),
        case("mixed_decode_prefill", [0, 1, 9, 10, 16]),
        case("nonzero_start", [6, 10, 14]),
    ]
    r = rng(1234)
    for i in range(12):
        b = int(r.integers(1, 65))
        lens = r.integers(0, 200, size=b) * 2
        lens[r.random(b) < 0.2] = 1  # decode requests
        cu = [0] + list(map(int, lens.cumsum()))
        cases.append(case("random_%d_b%d" % (i, b), cu))
    write("get_pcp_query_restore_idx", cases)


if __name__ == "__main__":
    main()
