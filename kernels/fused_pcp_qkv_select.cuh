// SPDX-License-Identifier: Apache-2.0
// Fused PCP Q/K/V select: a byte-copying kernel, so one instantiation per access width serves
// every dtype (fp8 to fp64).
//
// Work is a flat list of output rows: the Nq/2 query rows (each writes q_head and q_tail), then
// the K tail rows, then the V tail rows. Every K/V row that any output needs is some tail row
// (r < W implies r + 1 <= 2W - r), so walking the tail rows reads each needed input row exactly
// once and writes it to the tail and, for the first r + 1 blocks, also to the head. A warp takes
// one row (or, past the launcher's wave cap, rows far apart in increasing order) and finds its
// request by binary search over query_start_loc, skipped while consecutive rows stay in one
// request; lanes stride over a row's 16-byte vectors so accesses are coalesced. Row indices
// are 64-bit throughout.
#pragma once

#include <cstdint>

#include "kernels/fused_pcp_qkv_select.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

#ifndef CATTN_SELECT_UNROLL
#define CATTN_SELECT_UNROLL 4
#endif
#ifndef CATTN_SELECT_MIN_BLOCKS
#define CATTN_SELECT_MIN_BLOCKS 4
#endif
#ifndef CATTN_SELECT_STREAMING
#define CATTN_SELECT_STREAMING 0
#endif
#ifndef CATTN_SELECT_INTERLEAVE
#define CATTN_SELECT_INTERLEAVE 1
#endif
#ifndef CATTN_SELECT_WAVES
#define CATTN_SELECT_WAVES 64  // kernels::kRowWaves
#endif

namespace cattn {
namespace kernels {

constexpr int kSelectThreads = kBlockThreads;

// Tuning knobs (bench/tune_fused_select.cu sets them; docs/performance.md has the choices):
// vectors in flight per lane, resident blocks the register budget must allow, and evict-first
// cache hints for data that is touched exactly once.
struct SelectTuning {
  static constexpr int kUnroll = CATTN_SELECT_UNROLL;
  static constexpr int kMinBlocks = CATTN_SELECT_MIN_BLOCKS;
  static constexpr bool kStreaming = CATTN_SELECT_STREAMING;
  // 1: warp w takes rows w, w + warps, ... so the whole grid sweeps memory front to back
  // together; 0: each warp takes one contiguous run of rows.
  static constexpr bool kInterleave = CATTN_SELECT_INTERLEAVE;
  // Most waves of resident blocks the grid holds (kRowWaves; 0: no cap, one warp per row).
  static constexpr int kWaves = CATTN_SELECT_WAVES;
};

template <class Vec>
__device__ __forceinline__ Vec select_load(const Vec* p) {
  if constexpr (SelectTuning::kStreaming) return __ldcs(p);
  else return __ldg(p);
}
template <class Vec>
__device__ __forceinline__ void select_store(Vec* p, const Vec& v) {
  if constexpr (SelectTuning::kStreaming) __stcs(p, v);
  else *p = v;
}

// Copies one token row (heads x head_bytes) from `src` to `dst1` and, when non-null, `dst2`.
template <int kBytes>
__device__ __forceinline__ void fused_pcp_qkv_select_copy_row(
    const char* __restrict__ src, int64_t head_stride, int64_t head_bytes, int32_t heads,
    char* __restrict__ dst1, char* __restrict__ dst2, int lane) {
  using Vec = typename VecOf<kBytes>::T;
  const int32_t per_head = static_cast<int32_t>(head_bytes / kBytes);
  const int32_t total = per_head * heads;
  const bool contiguous = head_stride == head_bytes;
  constexpr int kUnroll = SelectTuning::kUnroll;
  for (int32_t base = lane; base < total; base += 32 * kUnroll) {
    Vec val[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int32_t i = base + u * 32;
      if (i < total) {
        const int64_t off = contiguous ? static_cast<int64_t>(i) * kBytes
                                       : static_cast<int64_t>(i / per_head) * head_stride +
                                             static_cast<int64_t>(i % per_head) * kBytes;
        val[u] = select_load(reinterpret_cast<const Vec*>(src + off));
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int32_t i = base + u * 32;
      if (i < total) {
        select_store(reinterpret_cast<Vec*>(dst1) + i, val[u]);
        if (dst2 != nullptr) select_store(reinterpret_cast<Vec*>(dst2) + i, val[u]);
      }
    }
  }
}

// The request whose key range [key(i), key(i+1)) holds a row, with key(i) = qsl[i] / 2 * mult.
struct RequestCursor {
  int64_t lo = 1, hi = 0;  // empty: forces the first lookup
  int64_t start = 0;       // query_start_loc[i]
  int64_t half = 0;        // (query_start_loc[i+1] - query_start_loc[i]) / 2
  bool valid = false;
};

__device__ __forceinline__ void fused_pcp_qkv_select_find_request(const IndexSpan& qsl,
                                                                  int64_t num_reqs, int64_t mult,
                                                                  int64_t row, RequestCursor& c) {
  if (row >= c.lo && row < c.hi) return;
  // Largest i in [0, num_reqs) with key(i) <= row; keys are non-decreasing for valid input, and
  // for invalid input the bounds checks at the copy keep every access in range anyway.
  int64_t lo = 0, hi = num_reqs - 1;
  if (num_reqs <= 0 || load_index(qsl, 0) / 2 * mult > row) {
    c.valid = false;
    c.lo = row;
    c.hi = row + 1;
    return;
  }
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (load_index(qsl, mid) / 2 * mult <= row)
      lo = mid;
    else
      hi = mid - 1;
  }
  c.start = load_index(qsl, lo);
  const int64_t end = load_index(qsl, lo + 1);
  c.half = (end - c.start) / 2;
  c.lo = c.start / 2 * mult;
  c.hi = end / 2 * mult;
  c.valid = row < c.hi && c.half > 0;
  if (!c.valid) {
    c.lo = row;
    c.hi = row + 1;
  }
}

template <int kBytes>
__global__ void __launch_bounds__(kSelectThreads, SelectTuning::kMinBlocks)
    fused_pcp_qkv_select_kernel(const FusedSelectParams p) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int64_t q_rows = p.q.dst_head_rows;
  const int64_t k_rows = p.k.dst_tail_rows;
  const int64_t total = q_rows + k_rows + p.v.dst_tail_rows;
  const int64_t per_warp = (total + warps - 1) / warps;
  const int64_t first = SelectTuning::kInterleave ? warp : warp * per_warp;
  const int64_t last = SelectTuning::kInterleave ? total : min(first + per_warp, total);
  const int64_t step = SelectTuning::kInterleave ? warps : 1;
  const int64_t tail_blocks = 2 * p.world - p.rank;
  RequestCursor cur;
  int phase = -1;
  for (int64_t row = first; row < last; row += step) {
    if (row < q_rows) {
      if (phase != 0) { phase = 0; cur = RequestCursor(); }
      fused_pcp_qkv_select_find_request(p.query_start_loc, p.num_reqs, 1, row, cur);
      if (!cur.valid) continue;
      const int64_t o = row - cur.lo;
      const int64_t src_head = cur.start + o, src_tail = cur.start + cur.half + o;
      if (o >= cur.half || src_tail >= p.q.src_rows || row >= p.q.dst_tail_rows) continue;
      const int64_t dst = row * p.heads * p.q.head_bytes;
      fused_pcp_qkv_select_copy_row<kBytes>(p.q.src + src_head * p.q.src_row_stride,
                                            p.q.src_head_stride, p.q.head_bytes, p.heads,
                                            p.q.dst_head + dst, nullptr, lane);
      fused_pcp_qkv_select_copy_row<kBytes>(p.q.src + src_tail * p.q.src_row_stride,
                                            p.q.src_head_stride, p.q.head_bytes, p.heads,
                                            p.q.dst_tail + dst, nullptr, lane);
    } else {
      const bool is_k = row < q_rows + k_rows;
      const int new_phase = is_k ? 1 : 2;
      if (phase != new_phase) { phase = new_phase; cur = RequestCursor(); }
      const SelectOperand& op = is_k ? p.k : p.v;
      const int64_t t = row - (is_k ? q_rows : q_rows + k_rows);
      fused_pcp_qkv_select_find_request(p.query_start_loc, p.num_reqs, tail_blocks, t, cur);
      if (!cur.valid) continue;
      const int64_t local = t - cur.lo;
      // 32-bit division when it is exact (the common case): 64-bit division is a long
      // instruction sequence, paid per row.
      const int64_t s = (local | cur.half) < (int64_t{1} << 32)
                            ? static_cast<int64_t>(static_cast<uint32_t>(local) /
                                                   static_cast<uint32_t>(cur.half))
                            : local / cur.half;
      const int64_t o = local - s * cur.half;
      const int64_t src = p.world * cur.start + local;
      if (src >= op.src_rows || s >= tail_blocks) continue;
      char* head = nullptr;
      if (s < p.rank + 1) {
        const int64_t dst_head = cur.start / 2 * (p.rank + 1) + s * cur.half + o;
        if (dst_head < op.dst_head_rows) head = op.dst_head + dst_head * p.heads * op.head_bytes;
      }
      fused_pcp_qkv_select_copy_row<kBytes>(op.src + src * op.src_row_stride, op.src_head_stride,
                                            op.head_bytes, p.heads,
                                            op.dst_tail + t * p.heads * op.head_bytes, head, lane);
    }
  }
}

inline bool fused_pcp_qkv_select_operand_allows(const SelectOperand& o, int64_t bytes) {
  return aligned_to(o.src, bytes) && aligned_to(o.dst_head, bytes) &&
         aligned_to(o.dst_tail, bytes) && o.src_row_stride % bytes == 0 &&
         o.src_head_stride % bytes == 0 && o.head_bytes % bytes == 0;
}

// The launcher: the widest access every operand allows, and a warp per row up to
// SelectTuning::kWaves waves of resident blocks (then warps loop over rows). Here rather than in
// the .cu so that bench/tune_fused_select.cu builds the same launcher with other knobs.
inline cudaError_t launch_fused_pcp_qkv_select_kernel(const FusedSelectParams& p,
                                                      const DeviceShape& dev, cudaStream_t s) {
  const int64_t rows = p.q.dst_head_rows + p.k.dst_tail_rows + p.v.dst_tail_rows;
  if (rows == 0 || p.heads == 0) return cudaSuccess;
  auto allows = [&](int64_t w) {
    return fused_pcp_qkv_select_operand_allows(p.q, w) &&
           fused_pcp_qkv_select_operand_allows(p.k, w) &&
           fused_pcp_qkv_select_operand_allows(p.v, w);
  };
  return dispatch_widest(allows, [&](auto width) {
    constexpr int kBytes = decltype(width)::value;
    const unsigned blocks =
        row_per_warp_grid<fused_pcp_qkv_select_kernel<kBytes>>(rows, dev, SelectTuning::kWaves);
    fused_pcp_qkv_select_kernel<kBytes><<<blocks, kSelectThreads, 0, s>>>(p);
    return cudaGetLastError();
  });
}

}  // namespace kernels
}  // namespace cattn
