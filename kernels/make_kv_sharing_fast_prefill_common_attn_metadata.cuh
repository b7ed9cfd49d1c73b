// SPDX-License-Identifier: Apache-2.0
// Fast-prefill metadata in one block, without reading anything back to the host: per-request
// counts (bucketize = a binary search over query_start_loc[1:], then an atomic increment) in
// shared memory, or for large batches in the output itself, then scanned into the output; the
// maximum count and the total land in max_and_total for the caller to read whenever it likes.
// A logits index at or past query_start_loc[num_reqs] (vLLM fails there) is not counted.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.h"

namespace cattn {
namespace kernels {

__device__ __forceinline__ void atomic_increment(const MutIndexSpan& s, int64_t i) {
  if (s.i64)
    atomicAdd(reinterpret_cast<unsigned long long*>(static_cast<int64_t*>(s.data) + i * s.step[0]),
              1ull);
  else
    atomicAdd(static_cast<int32_t*>(s.data) + i * s.step[0], 1);
}

template <int kThreads>
struct FastPrefillShared {
  // Batches of at most this many requests (and fewer than 2^31 logits indices) are counted in
  // shared memory: the binary searches then read query_start_loc from there.
  static constexpr int kStaged = 2047;
  static_assert((kStaged + 1) % kThreads == 0, "the scan takes (kStaged + 1) / kThreads each");
  typename cub::BlockScan<int64_t, kThreads>::TempStorage scan;
  typename cub::BlockReduce<int64_t, kThreads>::TempStorage reduce;
  int64_t qsl[kStaged + 1];
  int32_t counts[kStaged];
};

// The request of logits index x: the number of qsl[1..reqs] entries <= x
// (torch.bucketize(..., right=True)); reqs when x is past the last request.
template <class Qsl>
__device__ __forceinline__ int64_t logits_request(Qsl qsl, int64_t reqs, int64_t x) {
  int64_t lo = 0, hi = reqs;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (qsl(mid + 1) <= x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// The requests of kBatch logits indices at once, against bounds[0..n) = query_start_loc[1..]
// (n < 2^31, a staged batch): r[u] = the number of bounds <= x[u]. Each halving depends on n
// alone, so the kBatch searches run in step and their shared-memory loads are in flight
// together; every index read is below n whatever the data.
template <int kBatch>
__device__ __forceinline__ void logits_requests(const int64_t* bounds, int n,
                                                const int64_t (&x)[kBatch], int (&r)[kBatch]) {
#pragma unroll
  for (int u = 0; u < kBatch; ++u) r[u] = 0;
  if (n == 0) return;
  for (int len = n; len > 1;) {
    const int half = len >> 1;
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (bounds[r[u] + half - 1] <= x[u]) r[u] += half;
    len -= half;
  }
#pragma unroll
  for (int u = 0; u < kBatch; ++u)
    if (bounds[r[u]] <= x[u]) r[u] += 1;
}

// Scans counts(i), i < reqs, into out[i + 1] (out[0] = 0) and writes max and total.
template <int kThreads, class Counts>
__device__ __forceinline__ void fast_prefill_scan(const FastPrefillParams& p, int64_t reqs,
                                                  FastPrefillShared<kThreads>& sh, Counts counts) {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  const MutIndexSpan& out = p.decode_query_start_loc;
  int64_t running = 0, best = 0;
  for (int64_t c0 = 0; c0 < reqs; c0 += kThreads) {
    const int64_t i = c0 + threadIdx.x;
    const int64_t n = i < reqs ? counts(i) : 0;
    best = n > best ? n : best;
    int64_t incl = 0, sum = 0;
    Scan(sh.scan).InclusiveSum(n, incl, sum);
    __syncthreads();  // every count of this chunk is read before any is overwritten
    if (i < reqs) store_index(out, i + 1, running + incl);
    running += sum;
  }
  const int64_t max_count = Reduce(sh.reduce).Reduce(best, MaxOp());
  if (threadIdx.x == 0) {
    store_index(out, 0, 0);
    store_count(p.max_and_total, 0, max_count);
    store_count(p.max_and_total, 1, running);
  }
}

// The whole product in one block of kThreads threads.
template <int kThreads>
__device__ __forceinline__ void make_kv_sharing_fast_prefill_common_attn_metadata_block(
    const FastPrefillParams& p, FastPrefillShared<kThreads>& sh) {
  const int64_t reqs = p.query_start_loc.size[0] - 1;
  const MutIndexSpan& out = p.decode_query_start_loc;
  int64_t count = p.logits_indices.size[0];
  if (p.num_logits_indices.data != nullptr) {
    const int64_t n = load_index(p.num_logits_indices, 0);
    count = n < 0 ? 0 : (n < count ? n : count);
  }
  if (reqs <= FastPrefillShared<kThreads>::kStaged && count < (int64_t{1} << 31)) {
    batched_for<8>(threadIdx.x, reqs + 1, kThreads,
                   [&](int64_t i) { return load_index(p.query_start_loc, i); },
                   [&](int64_t i, int64_t x) {
                     sh.qsl[i] = x;
                     if (i < reqs) sh.counts[i] = 0;
                   });
    __syncthreads();
    constexpr int kBatch = 8;
    for (int64_t base = threadIdx.x; base < count; base += kBatch * kThreads) {
      int64_t x[kBatch];
      int r[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int64_t t = base + u * kThreads;
        x[u] = t < count ? load_index(p.logits_indices, t) : 0;
      }
      logits_requests(sh.qsl + 1, static_cast<int>(reqs), x, r);
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (base + u * kThreads < count && r[u] < reqs) atomicAdd(&sh.counts[r[u]], 1);
    }
    __syncthreads();
    // One scan over every request: kItems counts per thread, blocked.
    constexpr int kItems = (FastPrefillShared<kThreads>::kStaged + 1) / kThreads;
    int64_t n[kItems], incl[kItems], best = 0, total = 0;
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int64_t i = threadIdx.x * kItems + u;
      n[u] = i < reqs ? sh.counts[i] : 0;
      best = n[u] > best ? n[u] : best;
    }
    cub::BlockScan<int64_t, kThreads>(sh.scan).InclusiveSum(n, incl, total);
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int64_t i = threadIdx.x * kItems + u;
      if (i < reqs) store_index(out, i + 1, incl[u]);
    }
    const int64_t max_count = cub::BlockReduce<int64_t, kThreads>(sh.reduce).Reduce(best, MaxOp());
    if (threadIdx.x == 0) {
      store_index(out, 0, 0);
      store_count(p.max_and_total, 0, max_count);
      store_count(p.max_and_total, 1, total);
    }
    return;
  }
  // Larger batches count in the output itself (out[i + 1] holds request i's count), then scan
  // it in place.
  for (int64_t i = threadIdx.x; i <= reqs; i += kThreads) store_index(out, i, 0);
  __syncthreads();
  for (int64_t t = threadIdx.x; t < count; t += kThreads) {
    const int64_t r = logits_request([&](int64_t i) { return load_index(p.query_start_loc, i); },
                                     reqs, load_index(p.logits_indices, t));
    if (r < reqs) atomic_increment(out, r + 1);
  }
  __syncthreads();
  const IndexSpan counts{out.data, {out.size[0]}, {out.step[0]}, out.i64};
  fast_prefill_scan(p, reqs, sh, [&](int64_t i) { return load_index(counts, i + 1); });
}

}  // namespace kernels
}  // namespace cattn
