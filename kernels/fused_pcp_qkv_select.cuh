// SPDX-License-Identifier: Apache-2.0
// Fused PCP Q/K/V select: a byte-copying kernel, so one instantiation per access width (and
// index width, below) serves every dtype (fp8 to fp64).
//
// Work is a flat list of turns: the Nq/2 query rows (each reads both halves and writes q_head
// and q_tail), then the K tail rows, then the V tail rows. Every K/V row that any output needs
// is some tail row (r < W implies r + 1 <= 2W - r), so walking the tail rows reads each needed
// input row exactly once and writes it to the tail and, for the first r + 1 blocks, also to the
// head. Where two rows fit a round of loads (fp8 H8 D128 is 1 KiB), a joint turn takes K's and
// V's tail row t together, with one lookup, and q's two halves in the same round; a longer row
// is cut into chunks of one round, one turn each, so that no warp lives long enough to drift
// away from the grid's sweep through memory. A warp takes one turn (or, past the launcher's
// wave cap, turns far apart in increasing order); lanes stride over a turn's 16-byte vectors so
// accesses are coalesced. Byte offsets are 64-bit; row indices are 64-bit, or 32-bit where the
// launcher has checked that the call's rows fit (rows are chunked only then).
//
// A row's request is found from query_start_loc, skipped while consecutive rows of a warp stay
// in one request. With many short requests nearly every row needs its own lookup, and rows are
// small (H8 D128 bf16 is 2 KiB, one round of loads per lane), so the lookup's chain of
// dependent loads, not the copy, sets how long a warp lives. Two measures shorten it (the
// policy's kSearch and kPrefetch): the whole warp searches together, 32 keys per round, so 1024
// requests take two dependent loads instead of twelve; and a warp that copies several rows
// looks up the next row's request while its loads for the current row are in flight.
//
// query_start_loc on the device is never checked: each entry is held to [0, Nq] as it is read,
// and every source and destination row is checked against its tensor's rows before use, so
// negative, odd, decreasing or huge entries give wrong rows but never an out-of-range access.
//
// Every tuning choice (vectors in flight, the grid, the search, joint turns, chunks, the
// dependent launch) comes from the Policy template argument of the kernel and the launcher:
// fused_pcp_qkv_select_tuning.cuh defines the shipped SelectPolicy, which is all the library
// builds, and bench/tune_fused_select_policies.cu the variants it was measured against.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/fused_pcp_qkv_select.h"
#include "kernels/fused_pcp_qkv_select_tuning.cuh"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

constexpr int kSelectThreads = kBlockThreads;

template <class Policy, class Vec>
__device__ __forceinline__ Vec select_load(const Vec* p) {
  if constexpr (Policy::kStreaming) return __ldcs(p);
  else return __ldg(p);
}
template <class Policy, class Vec>
__device__ __forceinline__ void select_store(Vec* p, const Vec& v) {
  if constexpr (Policy::kStreaming) __stcs(p, v);
  else *p = v;
}

// One token row's copy, in vectors of kBytes: heads x per_head vectors from `src` (heads
// head_stride bytes apart) to the compact rows `dst1` and, when non-null, `dst2`. The default
// copies nothing.
template <int kBytes>
struct SelectSegment {
  const char* src = nullptr;
  char* dst1 = nullptr;
  char* dst2 = nullptr;
  int64_t head_stride = 0;
  int32_t per_head = 1;
  int32_t begin = 0;    // the first vector of the row this segment copies (a chunk's start)
  int32_t vectors = 0;  // how many from there
  bool contiguous = true;
};

template <int kBytes>
__device__ __forceinline__ SelectSegment<kBytes> select_segment(const SelectOperand& op,
                                                                int32_t heads, int64_t src_row,
                                                                char* dst1, char* dst2) {
  SelectSegment<kBytes> g;
  g.src = op.src + src_row * op.src_row_stride;
  g.dst1 = dst1;
  g.dst2 = dst2;
  g.head_stride = op.src_head_stride;
  g.per_head = static_cast<int32_t>(op.head_bytes / kBytes);
  g.vectors = g.per_head * heads;
  g.contiguous = op.src_head_stride == op.head_bytes;
  return g;
}

// Byte offset of vector j of a segment's source row.
template <int kBytes>
__device__ __forceinline__ int64_t select_offset(const SelectSegment<kBytes>& g, int32_t j) {
  if (g.contiguous) return static_cast<int64_t>(j) * kBytes;
  return static_cast<int64_t>(j / g.per_head) * g.head_stride +
         static_cast<int64_t>(j % g.per_head) * kBytes;
}

// a or b, picked field by field: selecting a reference would put both in local memory.
template <int kBytes>
__device__ __forceinline__ SelectSegment<kBytes> select_pick(bool second,
                                                             const SelectSegment<kBytes>& a,
                                                             const SelectSegment<kBytes>& b) {
  SelectSegment<kBytes> g;
  g.src = second ? b.src : a.src;
  g.dst1 = second ? b.dst1 : a.dst1;
  g.dst2 = second ? b.dst2 : a.dst2;
  g.head_stride = second ? b.head_stride : a.head_stride;
  g.per_head = second ? b.per_head : a.per_head;
  g.begin = second ? b.begin : a.begin;
  g.vectors = second ? b.vectors : a.vectors;
  g.contiguous = second ? b.contiguous : a.contiguous;
  return g;
}

// Whether an instantiation chunks its rows: only with int32 row arithmetic (in int64 the
// chunk's division spills) and never with joint turns (their rows are a round at most), so the
// others pay nothing for chunks at run time. The launcher sets the counts to match.
template <class Policy, class I, bool kJoint>
__device__ __forceinline__ constexpr bool select_chunked() {
  return kSelectChunkVectors<Policy> > 0 && sizeof(I) == 4 && !kJoint;
}

// Chunk `chunk` of a segment's row (at most kSelectChunkVectors<Policy> vectors), in the
// instantiations that chunk rows; the whole row in the others.
template <class Policy, class I, bool kJoint, int kBytes>
__device__ __forceinline__ SelectSegment<kBytes> select_chunk(SelectSegment<kBytes> g,
                                                              int32_t chunk) {
  if constexpr (select_chunked<Policy, I, kJoint>()) {
    constexpr int32_t kSpan = kSelectChunkVectors<Policy>;
    g.begin = chunk * kSpan;
    g.vectors = max(0, min(kSpan, g.vectors - g.begin));
  }
  return g;
}

// Copies segment a, then (kTwo) segment b, as one row of a.vectors + b.vectors vectors, lanes
// striding over it, so that with kTwo the loads of both are in flight before the first store.
// `between()` runs once, after the first round of loads is issued and before its stores (or at
// once when there is nothing to copy): work placed there overlaps the loads' latency. The
// round loop is warp-uniform, so `between` may use warp collectives. The vector index is
// 64-bit for one segment (a row of up to 2^31 - 1 vectors plus a round's reach passes 32
// bits) and 32-bit for two (joint turns hold at most kJointRounds rounds of vectors).
template <class Policy, int kBytes, bool kTwo, class Between>
__device__ __forceinline__ void fused_pcp_qkv_select_copy(const SelectSegment<kBytes>& a,
                                                          const SelectSegment<kBytes>& b,
                                                          int lane, Between&& between) {
  using Vec = typename VecOf<kBytes>::T;
  using Index = std::conditional_t<kTwo, int32_t, int64_t>;
  constexpr int kUnroll = Policy::kUnroll;
  const Index total = static_cast<Index>(a.vectors) + (kTwo ? b.vectors : 0);
  if (total <= 0) between();
  for (Index base = 0; base < total; base += 32 * kUnroll) {
    Vec val[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index i = base + lane + u * 32;
      if (i < total) {
        const bool in_b = kTwo && i >= a.vectors;
        const SelectSegment<kBytes> g = select_pick(in_b, a, b);
        const int32_t j = g.begin + static_cast<int32_t>(in_b ? i - a.vectors : i);
        val[u] = select_load<Policy>(reinterpret_cast<const Vec*>(g.src + select_offset(g, j)));
      }
    }
    if (base == 0) between();
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index i = base + lane + u * 32;
      if (i < total) {
        const bool in_b = kTwo && i >= a.vectors;
        const SelectSegment<kBytes> g = select_pick(in_b, a, b);
        const int32_t j = g.begin + static_cast<int32_t>(in_b ? i - a.vectors : i);
        select_store<Policy>(reinterpret_cast<Vec*>(g.dst1) + j, val[u]);
        if (g.dst2 != nullptr) select_store<Policy>(reinterpret_cast<Vec*>(g.dst2) + j, val[u]);
      }
    }
  }
}

// Row and request arithmetic is done in I: int64_t in general, int32_t when the launcher has
// checked that every row index, query_start_loc entry and key (entry / 2 * (2W - r)) of the
// call fits (fused_pcp_qkv_select_fits_int32), so the lookup and the row's bounds cost 32-bit
// instructions. Byte offsets stay 64-bit.

// a / b for a >= 0 and b > 0 in I.
template <class I>
__device__ __forceinline__ I select_div(I a, I b) {
  if constexpr (sizeof(I) == 4)
    return static_cast<I>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  else
    return div_nonneg(a, b);
}

// Entry i of query_start_loc held to [0, cap] (cap = Nq, which bounds every valid entry): the
// device data is unchecked, and the clamp keeps every row offset derived from it non-negative
// and free of overflow.
// With I = int32 the element offset i * step is 32-bit too (fused_pcp_qkv_select_fits_int32
// bounds B * |step|), and an int32 entry is clamped in 32 bits: the lookup's loads then take a
// few instructions each instead of 64-bit products and clamps.
template <class I>
__device__ __forceinline__ I fused_pcp_qkv_select_entry(const IndexSpan& qsl, I i, I cap) {
  if constexpr (sizeof(I) == 4) {
    const int32_t off = i * static_cast<int32_t>(qsl.step[0]);
    if (!qsl.i64) return min(max(__ldg(static_cast<const int32_t*>(qsl.data) + off), 0), cap);
    return static_cast<I>(min(max(__ldg(static_cast<const long long*>(qsl.data) + off), 0ll),
                              static_cast<long long>(cap)));
  } else {
    return static_cast<I>(min(max(load_index(qsl, static_cast<int64_t>(i)), int64_t{0}),
                              static_cast<int64_t>(cap)));
  }
}

// One request, as two clamped query_start_loc entries. In a row space where request i owns
// keys [key(i), key(i+1)) with key(i) = entry(i) / 2 * mult (mult 1 for query rows, 2W - r for
// K/V tail rows), it holds rows [lo(mult), hi(mult)). The default, [0, 0), holds no row.
template <class I>
struct RequestCursor {
  I start = 0, end = 0;
  __device__ I lo(I mult) const { return start / 2 * mult; }
  __device__ I hi(I mult) const { return end / 2 * mult; }
  __device__ bool holds(I t, I mult) const { return t >= lo(mult) && t < hi(mult); }
};

// Largest i in [0, num_reqs) with key(i) <= t, by one binary search every lane runs in step.
// Keys are non-decreasing for valid input; for invalid input the result is some request whose
// key is <= t, or none, and the copy's bounds checks do the rest.
template <class I>
__device__ __forceinline__ RequestCursor<I> fused_pcp_qkv_select_search_serial(
    const IndexSpan& qsl, I num_reqs, I cap, I mult, I t) {
  if (num_reqs <= 0 || fused_pcp_qkv_select_entry(qsl, I{0}, cap) / 2 * mult > t) return {};
  I lo = 0, hi = num_reqs - 1;
  while (lo < hi) {
    const I mid = lo + (hi - lo + 1) / 2;
    if (fused_pcp_qkv_select_entry(qsl, mid, cap) / 2 * mult <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return {fused_pcp_qkv_select_entry(qsl, lo, cap),
          fused_pcp_qkv_select_entry(qsl, static_cast<I>(lo + 1), cap)};
}

// The same answer found by the whole warp: while more than 32 candidates remain, lane j tests
// the first key of the j-th of 32 equal buckets and the last bucket whose key is <= t is kept;
// then each lane loads one remaining candidate's two entries and the last match is broadcast.
// Taking the last set ballot bit (not the count of set bits) keeps key(i) <= t for the result
// even when the keys are not sorted. Must be called by all 32 lanes with the same t.
template <class I>
__device__ __forceinline__ RequestCursor<I> fused_pcp_qkv_select_search_warp(
    const IndexSpan& qsl, I num_reqs, I cap, I mult, I t, int lane) {
  constexpr unsigned kAll = 0xffffffffu;
  // Bucket arithmetic in 32 bits keeps the search within the copy's register budget (in 64 bits
  // the 16-byte instantiation spills once the lookup overlaps a copy); a batch of 2^31 requests
  // or more, never a real one, takes the serial search.
  if (num_reqs > I{INT32_MAX})
    return fused_pcp_qkv_select_search_serial(qsl, num_reqs, cap, mult, t);
  I lo = 0;
  int32_t n = static_cast<int32_t>(num_reqs);  // the answer lies in [lo, lo + n)
  while (n > 32) {
    const int32_t width = (n + 31) / 32;
    const int32_t i = lane * width;
    const bool at_or_below =
        i < n && fused_pcp_qkv_select_entry(qsl, static_cast<I>(lo + i), cap) / 2 * mult <= t;
    const unsigned below = __ballot_sync(kAll, at_or_below);
    if (below == 0) return {};
    const int32_t pick = (31 - __clz(static_cast<int>(below))) * width;
    n = min(width, n - pick);
    lo += pick;
  }
  I start = 0, end = 0;
  if (lane < n) {
    start = fused_pcp_qkv_select_entry(qsl, static_cast<I>(lo + lane), cap);
    end = fused_pcp_qkv_select_entry(qsl, static_cast<I>(lo + lane + 1), cap);
  }
  const unsigned below = __ballot_sync(kAll, lane < n && start / 2 * mult <= t);
  if (below == 0) return {};
  const int from = 31 - __clz(static_cast<int>(below));
  return {__shfl_sync(kAll, start, from), __shfl_sync(kAll, end, from)};
}

// Points `c` at the request holding row t of a row space (see RequestCursor); keeps it when it
// already does. Warp-uniform.
template <class Policy, class I>
__device__ __forceinline__ void fused_pcp_qkv_select_find_request(const FusedSelectParams& p,
                                                                  I mult, I t, int lane,
                                                                  RequestCursor<I>& c) {
  if (c.holds(t, mult)) return;
  const I reqs = static_cast<I>(p.num_reqs), cap = static_cast<I>(p.q.src_rows);
  if constexpr (Policy::kSearch == SelectSearch::kWarp)
    c = fused_pcp_qkv_select_search_warp(p.query_start_loc, reqs, cap, mult, t, lane);
  else
    c = fused_pcp_qkv_select_search_serial(p.query_start_loc, reqs, cap, mult, t);
}

// Chunks per row of an operand, as this instantiation takes them.
template <class Policy, class I, bool kJoint>
__device__ __forceinline__ int32_t select_chunks(int32_t chunks) {
  return select_chunked<Policy, I, kJoint>() ? chunks : 1;
}

// The kernel's flat list of turns: the q rows, then the K/V tail rows: K's and V's row t in
// one turn when kJoint, else K's rows and then V's. Each row is its operand's chunks, in turn.
template <class Policy, class I, bool kJoint>
__device__ __forceinline__ I fused_pcp_qkv_select_turns(const FusedSelectParams& p) {
  const I q = static_cast<I>(p.q.dst_head_rows) * select_chunks<Policy, I, kJoint>(p.q_chunks);
  const I k = static_cast<I>(p.k.dst_tail_rows) * select_chunks<Policy, I, kJoint>(p.k_chunks);
  const I v = static_cast<I>(p.v.dst_tail_rows) * select_chunks<Policy, I, kJoint>(p.v_chunks);
  return kJoint ? q + max(k, v) : q + k + v;
}

// A turn of that list: the operand (0 q, 1 K, and V too when kJoint, 2 V), its row t in its
// row space, the row space's key multiplier (1 for q rows, 2W - r for K/V tail rows) and the
// chunk of the row.
template <class I>
struct SelectTurn {
  I t = 0, mult = 1;
  int32_t chunk = 0;
  int32_t what = 0;
};
template <class Policy, class I, bool kJoint>
__device__ __forceinline__ SelectTurn<I> fused_pcp_qkv_select_decode(const FusedSelectParams& p,
                                                                      I turn) {
  auto split = [](I x, int32_t chunks, I mult, int32_t what) {
    SelectTurn<I> d;
    d.mult = mult;
    d.what = what;
    if (select_chunks<Policy, I, kJoint>(chunks) == 1) {
      d.t = x;
    } else {
      d.t = select_div(x, static_cast<I>(chunks));
      d.chunk = static_cast<int32_t>(x - d.t * chunks);
    }
    return d;
  };
  const I q_turns =
      static_cast<I>(p.q.dst_head_rows) * select_chunks<Policy, I, kJoint>(p.q_chunks);
  if (turn < q_turns) return split(turn, p.q_chunks, 1, 0);
  const I tail_blocks = static_cast<I>(p.world + (p.world - p.rank));  // 2W - r, no 2W formed
  const I kv = turn - q_turns;
  const I k_turns =
      static_cast<I>(p.k.dst_tail_rows) * select_chunks<Policy, I, kJoint>(p.k_chunks);
  if (kJoint || kv < k_turns) return split(kv, p.k_chunks, tail_blocks, 1);
  return split(kv - k_turns, p.v_chunks, tail_blocks, 2);
}

// Tail row t of `op` (block s of its request, from source row src), and head row dst_head
// when block s is one of the first r + 1; nothing when a row falls outside its tensor.
template <int kBytes, class I>
__device__ __forceinline__ SelectSegment<kBytes> fused_pcp_qkv_select_tail_segment(
    const FusedSelectParams& p, const SelectOperand& op, I t, I src, I s, I dst_head) {
  if (t >= static_cast<I>(op.dst_tail_rows) || src >= static_cast<I>(op.src_rows)) return {};
  const int64_t row_bytes = static_cast<int64_t>(p.heads) * op.head_bytes;
  char* head = nullptr;
  if (s < static_cast<I>(p.rank) + 1 && dst_head < static_cast<I>(op.dst_head_rows))
    head = op.dst_head + static_cast<int64_t>(dst_head) * row_bytes;
  return select_segment<kBytes>(op, p.heads, src,
                                op.dst_tail + static_cast<int64_t>(t) * row_bytes, head);
}

// Copies turn `d` of request `c` (which the caller found for it): a chunk of a q row's two
// halves, or of a K and/or V tail row (with its head row). Skips a row that falls outside a
// request or whose source or destination falls outside its tensor. `between()` runs exactly
// once, overlapping the turn's first loads when there are any.
template <class Policy, int kBytes, class I, bool kJoint, class Between>
__device__ __forceinline__ void fused_pcp_qkv_select_turn(const FusedSelectParams& p,
                                                          const SelectTurn<I>& d,
                                                          const RequestCursor<I>& c, int lane,
                                                          Between&& between) {
  SelectSegment<kBytes> a, b;
  const I half = (c.end - c.start) / 2;
  const I t = d.t;
  if (d.what == 0) {
    const I o = t - c.lo(1);
    const I src_head = c.start + o, src_tail = c.start + half + o;
    if (c.holds(t, 1) && o < half && src_tail < static_cast<I>(p.q.src_rows) &&
        t < static_cast<I>(p.q.dst_tail_rows)) {
      const int64_t dst = static_cast<int64_t>(t) * p.heads * p.q.head_bytes;
      a = select_segment<kBytes>(p.q, p.heads, src_head, p.q.dst_head + dst, nullptr);
      b = select_segment<kBytes>(p.q, p.heads, src_tail, p.q.dst_tail + dst, nullptr);
      a = select_chunk<Policy, I, kJoint>(a, d.chunk);
      b = select_chunk<Policy, I, kJoint>(b, d.chunk);
    }
    fused_pcp_qkv_select_copy<Policy, kBytes, kJoint>(a, b, lane, between);
    if (!kJoint) fused_pcp_qkv_select_copy<Policy, kBytes, false>(b, a, lane, [] {});
    return;
  }
  const I tail_blocks = d.mult;
  if (c.holds(t, tail_blocks) && half > 0) {
    const I local = t - c.lo(tail_blocks);
    const I s = select_div(local, half);
    const I src = static_cast<I>(p.world) * c.start + local;
    const I dst_head = c.start / 2 * static_cast<I>(p.rank + 1) + local;
    if (s < tail_blocks) {
      a = fused_pcp_qkv_select_tail_segment<kBytes>(p, d.what == 1 ? p.k : p.v, t, src, s,
                                                    dst_head);
      a = select_chunk<Policy, I, kJoint>(a, d.chunk);
      if (kJoint) b = fused_pcp_qkv_select_tail_segment<kBytes>(p, p.v, t, src, s, dst_head);
    }
  }
  fused_pcp_qkv_select_copy<Policy, kBytes, kJoint>(a, b, lane, between);
}

template <class Policy, int kBytes, class I, bool kJoint>
__global__ void __launch_bounds__(kSelectThreads, Policy::kMinBlocks)
    fused_pcp_qkv_select_kernel(const FusedSelectParams p) {
  static_assert(select_policy_valid<Policy>());
  if constexpr (Policy::kDependentLaunch) {
    wait_for_prior_grids();
    allow_dependent_grids();
  }
  constexpr I kRows = Policy::kInterleave ? Policy::kRows : 1;
  const int lane = threadIdx.x & 31;
  const int64_t warp64 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps64 = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const I warp = static_cast<I>(warp64), warps = static_cast<I>(warps64);
  const I total = fused_pcp_qkv_select_turns<Policy, I, kJoint>(p);
  // Interleaved: rounds of kRows consecutive turns, warp w taking rounds w, w + warps, ...;
  // otherwise one contiguous run per warp.
  const I per_warp = (total + warps - 1) / warps;
  const I first = Policy::kInterleave ? warp * kRows : warp * per_warp;
  const I last = Policy::kInterleave ? total : min(first + per_warp, total);
  auto next_of = [&](I turn) -> I {
    if (!Policy::kInterleave || (turn + 1) % kRows != 0) return turn + 1;
    return turn + 1 + (warps - 1) * kRows;
  };
  RequestCursor<I> cur;
  SelectTurn<I> now;
  if (Policy::kPrefetch && first < last) {
    now = fused_pcp_qkv_select_decode<Policy, I, kJoint>(p, first);
    fused_pcp_qkv_select_find_request<Policy>(p, now.mult, now.t, lane, cur);
  }
  for (I turn = first; turn < last;) {
    const I next = next_of(turn);
    if constexpr (Policy::kPrefetch) {
      // The lookup for `next` writes a copy: the current turn's addresses come from `cur`.
      // `next` is decoded twice, since holding its decoding across the copy costs registers.
      RequestCursor<I> ahead = cur;
      fused_pcp_qkv_select_turn<Policy, kBytes, I, kJoint>(p, now, cur, lane, [&] {
        if (next >= last) return;
        const SelectTurn<I> d = fused_pcp_qkv_select_decode<Policy, I, kJoint>(p, next);
        fused_pcp_qkv_select_find_request<Policy>(p, d.mult, d.t, lane, ahead);
      });
      cur = ahead;
      if (next < last) now = fused_pcp_qkv_select_decode<Policy, I, kJoint>(p, next);
    } else {
      now = fused_pcp_qkv_select_decode<Policy, I, kJoint>(p, turn);
      fused_pcp_qkv_select_find_request<Policy>(p, now.mult, now.t, lane, cur);
      fused_pcp_qkv_select_turn<Policy, kBytes, I, kJoint>(p, now, cur, lane, [] {});
    }
    turn = next;
  }
}

// Whether the call's row arithmetic fits int32 (the kernel's narrow instantiation): every row
// index and query_start_loc entry (held to [0, Nq]), the keys entry / 2 * (2W - r), the source
// rows W * entry + local, the call's `turns` and the loop's turn + warps * kRows, and the
// element offsets of query_start_loc's B + 1 entries stay below 2^31.
template <class Policy>
bool fused_pcp_qkv_select_fits_int32(const FusedSelectParams& p, int64_t turns,
                                            int64_t warps) {
  const int64_t s = p.query_start_loc.step[0];
  const uint64_t step = s < 0 ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s);
  int64_t most = std::max(turns, warps * Policy::kRows);
  for (const SelectOperand* o : {&p.q, &p.k, &p.v})
    most = std::max({most, o->src_rows, o->dst_head_rows, o->dst_tail_rows});
  const int64_t limit = int64_t{INT32_MAX} / 4;
  return p.num_reqs < limit && p.world < limit && most < limit / (2 * p.world + 2) &&
         step < static_cast<uint64_t>(limit / (p.num_reqs + 1));
}

inline bool fused_pcp_qkv_select_operand_allows(const SelectOperand& o, int64_t bytes) {
  return aligned_to(o.src, bytes) && aligned_to(o.dst_head, bytes) &&
         aligned_to(o.dst_tail, bytes) && o.src_row_stride % bytes == 0 &&
         o.src_head_stride % bytes == 0 && o.head_bytes % bytes == 0;
}

// Whether the call takes joint turns (the kernel's kJoint) at access width `bytes`: two token
// rows of every operand (q's two halves, and K's and V's rows together) fit
// Policy::kJointRounds rounds of loads.
template <class Policy>
bool fused_pcp_qkv_select_joint(const FusedSelectParams& p, int64_t bytes) {
  const int64_t round = int64_t{32} * Policy::kUnroll * Policy::kJointRounds;
  const int64_t q = p.heads * (p.q.head_bytes / bytes), k = p.heads * (p.k.head_bytes / bytes),
                v = p.heads * (p.v.head_bytes / bytes);
  return 2 * q <= round && k + v <= round;
}

// Chunks per row of `o` at access width `bytes`: rows longer than kSelectChunkVectors<Policy>
// vectors are split (1 when rows are not chunked).
template <class Policy>
int32_t fused_pcp_qkv_select_chunks(const FusedSelectParams& p, const SelectOperand& o,
                                    int64_t bytes) {
  const int64_t span = kSelectChunkVectors<Policy>;
  if (span == 0) return 1;
  const int64_t vectors = p.heads * (o.head_bytes / bytes);
  return static_cast<int32_t>(std::max<int64_t>(1, ceil_div(vectors, span)));
}

// The launcher: the widest access every operand allows; joint turns when the rows are that
// small, chunked rows when they are long; a warp per Policy::kRows turns up to Policy::kWaves
// waves of resident blocks (then warps loop over turns); int32 row arithmetic when the call's
// rows fit it; on sm_90, a dependent launch when Policy::kDependentLaunch. Here rather than in
// the .cu so that bench/tune_fused_select_policies.cu builds the same launcher with other
// policies.
template <class Policy>
cudaError_t launch_fused_pcp_qkv_select_kernel(const FusedSelectParams& params,
                                               const DeviceShape& dev, cudaStream_t s) {
  static_assert(select_policy_valid<Policy>());
  const int64_t q_rows = params.q.dst_head_rows, k_rows = params.k.dst_tail_rows,
                v_rows = params.v.dst_tail_rows;
  if (q_rows + k_rows + v_rows == 0 || params.heads == 0) return cudaSuccess;
  auto allows = [&](int64_t w) {
    return fused_pcp_qkv_select_operand_allows(params.q, w) &&
           fused_pcp_qkv_select_operand_allows(params.k, w) &&
           fused_pcp_qkv_select_operand_allows(params.v, w);
  };
  const bool dependent = Policy::kDependentLaunch && dev.cc_major >= 9;
  return dispatch_widest(allows, [&](auto width) {
    constexpr int kBytes = decltype(width)::value;
    FusedSelectParams p = params;
    auto grid = [&](int64_t turns) {
      const int64_t rounds = Policy::kInterleave ? ceil_div(turns, Policy::kRows) : turns;
      return row_per_warp_grid<fused_pcp_qkv_select_kernel<Policy, kBytes, int64_t, false>>(
          rounds, dev, Policy::kWaves);
    };
    auto launch = [&](auto kernel, unsigned blocks) {
      return launch_row_kernel(kernel, blocks, s, dependent, p);
    };
    const int32_t q_chunks = fused_pcp_qkv_select_chunks<Policy>(p, p.q, kBytes),
                  k_chunks = fused_pcp_qkv_select_chunks<Policy>(p, p.k, kBytes),
                  v_chunks = fused_pcp_qkv_select_chunks<Policy>(p, p.v, kBytes);
    const int64_t turns = q_rows * q_chunks + k_rows * k_chunks + v_rows * v_chunks;
    const unsigned blocks = grid(turns);
    const int64_t warps = static_cast<int64_t>(blocks) * (kSelectThreads / 32);
    const bool narrow =
        Policy::kNarrow && fused_pcp_qkv_select_fits_int32<Policy>(p, turns, warps);
    // Joint turns only with int32 arithmetic (in int64 the 16-byte copy of two rows spills);
    // their rows are a round or less, one chunk, and their grid is smaller, so the int32 check
    // above holds for it too. Only the int32 row-by-row kernel chunks rows (select_chunked).
    if (narrow && fused_pcp_qkv_select_joint<Policy>(p, kBytes))
      return launch(fused_pcp_qkv_select_kernel<Policy, kBytes, int32_t, true>,
                    grid(q_rows + std::max(k_rows, v_rows)));
    if (narrow) {
      p.q_chunks = q_chunks;
      p.k_chunks = k_chunks;
      p.v_chunks = v_chunks;
      return launch(fused_pcp_qkv_select_kernel<Policy, kBytes, int32_t, false>, blocks);
    }
    return launch(fused_pcp_qkv_select_kernel<Policy, kBytes, int64_t, false>,
                  grid(q_rows + k_rows + v_rows));
  });
}

}  // namespace kernels
}  // namespace cattn
