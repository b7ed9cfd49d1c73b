# SPDX-License-Identifier: Apache-2.0
"""Conformance vectors for fused_pcp_qkv_select.

The seed's Triton kernel needs a GPU, so `triton_program_emulation` replays its index
arithmetic in numpy, one Triton program (req x seq block, head, dim block) at a time, with the
kernel's masks, block sizes and the wrapper's output shapes, from the seed text. Inputs are
compact and hold their own flat element index, so every output element records which input
element landed there (-1 = never stored). The C++ test rebuilds inputs of any element width and
layout from those indices.
"""
from oracle import np, rng, write


def cdiv(a, b):
    return -(a // -b)


def triton_program_emulation(q, k, v, query_start_loc, pcp_world_size, pcp_rank):
    """q, k, v: compact int64 arrays [N, H, D]; returns the six outputs the seed's wrapper
    allocates, with -1 where no program stored anything."""
    W, r = pcp_world_size, pcp_rank
    nq = q.shape[0]
    n_head = q.shape[1]
    q_head_dim, k_head_dim, v_head_dim = q.shape[2], k.shape[2], v.shape[2]
    # The wrapper's allocations (torch.empty), flattened; -1 marks "not written".
    out = {
        "q_head": np.full(nq // 2 * n_head * q_head_dim, -1, np.int64),
        "q_tail": np.full(nq // 2 * n_head * q_head_dim, -1, np.int64),
        "k_head": np.full(nq // 2 * (r + 1) * n_head * k_head_dim, -1, np.int64),
        "v_head": np.full(nq // 2 * (r + 1) * n_head * v_head_dim, -1, np.int64),
        "k_tail": np.full(nq // 2 * (2 * W - r) * n_head * k_head_dim, -1, np.int64),
        "v_tail": np.full(nq // 2 * (2 * W - r) * n_head * v_head_dim, -1, np.int64),
    }
    q_ptr, k_ptr, v_ptr = q.reshape(-1), k.reshape(-1), v.reshape(-1)
    q_stride_B, q_stride_H = n_head * q_head_dim, q_head_dim
    k_stride_B, k_stride_H = n_head * k_head_dim, k_head_dim
    v_stride_B, v_stride_H = n_head * v_head_dim, v_head_dim
    BS = len(query_start_loc) - 1
    DIM_BLOCK_SIZE, SEQ_BLOCK_SIZE = 64, 256
    n_dim_block = (max(q_head_dim, k_head_dim, v_head_dim) + DIM_BLOCK_SIZE) // DIM_BLOCK_SIZE
    qsl = np.asarray(query_start_loc, dtype=np.int64)

    def store(name, idx, val, mask):
        out[name][idx[mask]] = val[mask]

    for pid0 in range(2 * W * BS):
        for head_id in range(n_head):
            for dim_block_id in range(n_dim_block):
                req_id = pid0 // (2 * W)
                seq_block_id = pid0 % (2 * W)
                dim_off = np.arange(DIM_BLOCK_SIZE) + dim_block_id * DIM_BLOCK_SIZE
                q_start_loc = qsl[req_id]
                q_end_loc = qsl[req_id + 1]
                q_select_len = (q_end_loc - q_start_loc) // 2

                if seq_block_id < 2:
                    block_q_start_loc = q_start_loc + seq_block_id * q_select_len
                    out_name = "q_head" if seq_block_id == 0 else "q_tail"
                    for qi in range(cdiv(q_select_len, SEQ_BLOCK_SIZE)):
                        q_offset = np.arange(SEQ_BLOCK_SIZE) + qi * SEQ_BLOCK_SIZE
                        mask = (dim_off[None, :] < q_head_dim) & (q_offset[:, None] < q_select_len)
                        q_src_idx = block_q_start_loc + q_offset[:, None]
                        q_dst_idx = q_start_loc // 2 + q_offset[:, None]
                        src = q_src_idx * q_stride_B + head_id * q_stride_H + dim_off[None, :]
                        q_val = np.where(mask, q_ptr[np.where(mask, src, 0)], 0)
                        dst = q_dst_idx * n_head * q_head_dim + head_id * q_head_dim + dim_off[None, :]
                        store(out_name, dst, q_val, mask)

                kv_start_loc = q_start_loc * W
                kv_select_len = q_select_len
                k_d_mask = dim_off[None, :] < k_head_dim
                v_d_mask = dim_off[None, :] < v_head_dim
                block_src_kv_start_loc = kv_start_loc + seq_block_id * kv_select_len
                block_dst_kv_head_start_loc = (kv_start_loc // 2 // W * (r + 1)
                                               + seq_block_id * kv_select_len)
                block_dst_kv_tail_start_loc = (kv_start_loc // 2 // W * (2 * W - r)
                                               + seq_block_id * kv_select_len)
                for ki in range(cdiv(kv_select_len, SEQ_BLOCK_SIZE)):
                    kv_offset = np.arange(SEQ_BLOCK_SIZE) + ki * SEQ_BLOCK_SIZE
                    kv_block_mask = kv_offset[:, None] < kv_select_len
                    kv_src_idx = block_src_kv_start_loc + kv_offset[:, None]
                    kv_dst_idx_head = block_dst_kv_head_start_loc + kv_offset[:, None]
                    kv_dst_idx_tail = block_dst_kv_tail_start_loc + kv_offset[:, None]
                    k_mask = k_d_mask & kv_block_mask
                    v_mask = v_d_mask & kv_block_mask
                    k_src = kv_src_idx * k_stride_B + head_id * k_stride_H + dim_off[None, :]
                    v_src = kv_src_idx * v_stride_B + head_id * v_stride_H + dim_off[None, :]
                    k_val = np.where(k_mask, k_ptr[np.where(k_mask, k_src, 0)], 0)
                    v_val = np.where(v_mask, v_ptr[np.where(v_mask, v_src, 0)], 0)
                    if seq_block_id < r + 1:
                        store("k_head", kv_dst_idx_head * n_head * k_head_dim
                              + head_id * k_head_dim + dim_off[None, :], k_val, k_mask)
                        store("v_head", kv_dst_idx_head * n_head * v_head_dim
                              + head_id * v_head_dim + dim_off[None, :], v_val, v_mask)
                    if seq_block_id < 2 * W - r:
                        store("k_tail", kv_dst_idx_tail * n_head * k_head_dim
                              + head_id * k_head_dim + dim_off[None, :], k_val, k_mask)
                        store("v_tail", kv_dst_idx_tail * n_head * v_head_dim
                              + head_id * v_head_dim + dim_off[None, :], v_val, v_mask)
    return out


def case(name, qsl, W, r, nq=None, heads=2, dims=(4, 4, 3), extra_kv=0):
    nq = qsl[-1] if nq is None else nq
    nkv = W * qsl[-1] + extra_kv
    dq, dk, dv = dims
    q = np.arange(nq * heads * dq, dtype=np.int64).reshape(nq, heads, dq)
    k = np.arange(nkv * heads * dk, dtype=np.int64).reshape(nkv, heads, dk)
    v = np.arange(nkv * heads * dv, dtype=np.int64).reshape(nkv, heads, dv)
    out = triton_program_emulation(q, k, v, qsl, W, r)
    c = {"name": name, "query_start_loc": list(qsl), "pcp_world_size": W, "pcp_rank": r,
         "q_shape": [nq, heads, dq], "k_shape": [nkv, heads, dk], "v_shape": [nkv, heads, dv]}
    for key in ("q_head", "k_head", "v_head", "q_tail", "k_tail", "v_tail"):
        c[key] = out[key].tolist()
    return c


def main():
    cases = [
        case("one_request_w1", [0, 8], 1, 0),
        case("two_requests_w2_r0", [0, 8, 20], 2, 0),
        case("two_requests_w2_r1", [0, 8, 20], 2, 1),
        case("empty_batch", [0], 2, 1, nq=6),
        case("zero_length_requests", [0, 0, 4, 4, 10, 10], 2, 0),
        case("padding_rows_in_q", [0, 6, 10], 2, 1, nq=17, extra_kv=5),
        case("nonzero_first_start", [4, 10, 14], 2, 0, nq=16),
        case("single_head", [0, 4, 12], 4, 2, heads=1, dims=(2, 3, 1)),
        case("mla_dims", [0, 6, 8], 2, 1, heads=1, dims=(192, 192, 128)),
        case("past_seq_block", [0, 520, 524], 2, 1, heads=1, dims=(1, 1, 1)),
        case("dims_one", [0, 2, 6], 2, 0, heads=3, dims=(1, 1, 1)),
    ]
    for W in (1, 2, 4):
        for r in range(W):
            cases.append(case("all_ranks_w%d_r%d" % (W, r), [0, 6, 6, 10, 12], W, r, nq=13,
                              extra_kv=3))
    for r in (0, 3, 7):
        cases.append(case("w8_r%d" % r, [0, 4, 10], 8, r, heads=1, dims=(3, 2, 2)))
    g = rng(777)
    for i in range(6):
        W = int(g.choice([1, 2, 4, 8]))
        r = int(g.integers(0, W))
        b = int(g.integers(1, 5))
        lens = g.integers(0, 7, size=b) * 2
        qsl = [0] + list(map(int, lens.cumsum()))
        heads = int(g.integers(1, 4))
        dims = tuple(int(x) for x in g.integers(1, 6, size=3))
        cases.append(case("random_%d_w%d_r%d" % (i, W, r), qsl, W, r,
                          nq=qsl[-1] + int(g.integers(0, 4)), heads=heads, dims=dims,
                          extra_kv=int(g.integers(0, 3))))
    write("fused_pcp_qkv_select", cases)


if __name__ == "__main__":
    main()
