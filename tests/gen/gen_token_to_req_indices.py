# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for token_to_req_indices from the upstream oracle
(CommonAttentionMetadata.token_to_req_indices(buffer)).

Each case gives query_start_loc (device tensor and, as "query_start_loc_cpu", the mirror vLLM
reads M from), num_actual_tokens T and the buffer's length; "expect" holds buffer[0:max(M, T)]
after the call (the rest of the buffer is untouched) and "result" the returned buffer[0:T].
"error" names the exception upstream raises instead (libcattn returns a status).
"""
from metadata_batches import cam, edge_batches, qsl_of, random_batches
from oracle_upstream import tolist, torch, write

SENTINEL = -7


def case(name, qsl, num_tokens, buffer_len=None, qsl_cpu=None):
    b = len(qsl) - 1
    m = cam(qsl, [qsl[i + 1] - qsl[i] for i in range(b)], num_tokens)
    if qsl_cpu is not None:
        m.query_start_loc_cpu = torch.tensor(qsl_cpu, dtype=torch.int32)
    mapped = int(m.query_start_loc_cpu[-1])
    if buffer_len is None:
        buffer_len = max(mapped, num_tokens) + 3
    buf = torch.full((buffer_len,), SENTINEL, dtype=torch.int32)
    c = {"name": name, "query_start_loc": qsl, "query_start_loc_cpu": tolist(m.query_start_loc_cpu),
         "num_actual_tokens": num_tokens, "buffer_len": buffer_len, "sentinel": SENTINEL}
    try:
        res = m.token_to_req_indices(buf)
    except (AssertionError, RuntimeError) as e:
        c["error"] = type(e).__name__
        return c
    # The cache upstream keeps answers a second call with the same result (libcattn keeps none).
    assert tolist(m.token_to_req_indices(buf)) == tolist(res)
    c["expect"] = tolist(buf[:max(mapped, num_tokens)])
    c["result"] = tolist(res)
    return c


def main():
    cases = []
    for name, q, _, pad in edge_batches() + random_batches(1502, 14):
        qsl = qsl_of(q)
        cases.append(case(name, qsl, qsl[-1] + pad))
    cases += [
        case("padding_maps_to_request_0", [0, 2, 5], 9),
        case("t_below_mapped", [0, 4, 6], 3),  # T < M: buffer[0:M] written, T returned
        case("buffer_exactly_max", [0, 4, 6], 8, buffer_len=8),
        case("buffer_too_short", [0, 4, 6], 8, buffer_len=7),
        case("buffer_too_short_for_mapped", [0, 4, 6], 2, buffer_len=5),
        case("negative_query_len", [0, 4, 3], 4),
        case("mirror_total_disagrees", [0, 4, 6], 6, qsl_cpu=[0, 4, 7]),
        case("mirror_boundaries_differ", [0, 4, 6], 6, qsl_cpu=[0, 1, 6]),
    ]
    write("token_to_req_indices", cases)


if __name__ == "__main__":
    main()
