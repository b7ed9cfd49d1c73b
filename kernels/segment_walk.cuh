// SPDX-License-Identifier: Apache-2.0
// Block-cooperative walk over the positions of concatenated segments whose lengths depend on
// device data (requests of a batch: their restore-index entries, conv1d programs, virtual
// batches). The block takes the segments kChunk = kThreads * kItems at a time: each thread
// counts kItems of them (their loads in flight together), cub::BlockScan turns the counts into
// the chunk's prefix in shared memory, and the positions the block owns inside the chunk find
// their segment by a binary search of it. One chunk covers a batch of up to kChunk requests, so
// a block waits out one round of loads and one scan, and no scratch memory or second launch is
// needed. The shared memory is passed in, so a kernel that runs one of several products per
// block (the step plan) overlays theirs.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

template <int kThreads, int kItems = 4>
struct SegmentScratch {
  static constexpr int kChunk = kThreads * kItems;
  typename cub::BlockScan<int64_t, kThreads>::TempStorage scan;
  typename cub::BlockReduce<int64_t, kThreads>::TempStorage reduce;
  int64_t prefix[kChunk + 1];  // the chunk's segment starts, then its end
  int64_t total;
};

// Sum of count(s) over all segments, known to every thread of the block on return.
template <int kThreads, int kItems, class Count>
__device__ int64_t segment_total(SegmentScratch<kThreads, kItems>& w, int64_t nseg, Count count) {
  int64_t mine = 0;
  batched_for<kItems>(threadIdx.x, nseg, kThreads, count, [&](int64_t, int64_t n) { mine += n; });
  const int64_t sum = cub::BlockReduce<int64_t, kThreads>(w.reduce).Sum(mine);
  if (threadIdx.x == 0) w.total = sum;
  __syncthreads();
  const int64_t t = w.total;
  __syncthreads();
  return t;
}

// The chunk slot (0 <= slot < cnt) of the segment holding position k: the last one starting at
// or before k (empty segments share their successor's start and so are never chosen).
template <int kThreads, int kItems>
__device__ __forceinline__ int segment_slot(const SegmentScratch<kThreads, kItems>& w, int cnt,
                                            int64_t k) {
  int a = 0, b = cnt - 1;
  while (a < b) {
    const int m = (a + b + 1) >> 1;
    if (w.prefix[m] <= k) a = m; else b = m - 1;
  }
  return a;
}

// Where a walk ended: `running` is the total of the segments walked, the grand total when
// `complete` (every segment walked); otherwise the walk stopped at or past its limit.
struct WalkEnd {
  int64_t running;
  bool complete;
};

// Counts the segments chunk by chunk until the positions walked reach `limit`; after each
// chunk's scan, chunk(c0, cnt) runs on the whole block: segments c0 .. c0 + cnt - 1 sit in
// slots 0 .. cnt - 1, slot t holding positions [w.prefix[t], w.prefix[t + 1]).
template <int kThreads, int kItems, class Count, class Chunk>
__device__ WalkEnd segment_chunks(SegmentScratch<kThreads, kItems>& w, int64_t nseg,
                                  int64_t limit, Count count, Chunk chunk) {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  constexpr int kChunk = SegmentScratch<kThreads, kItems>::kChunk;
  int64_t running = 0, c0 = 0;
  for (; c0 < nseg && running < limit; c0 += kChunk) {
    // Blocked: thread t counts segments c0 + t * kItems + u, as BlockScan takes them.
    const int64_t first = c0 + static_cast<int64_t>(threadIdx.x) * kItems;
    int64_t n[kItems], ex[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u) n[u] = first + u < nseg ? count(first + u) : 0;
    int64_t sum = 0;
    Scan(w.scan).ExclusiveSum(n, ex, sum);
#pragma unroll
    for (int u = 0; u < kItems; ++u) w.prefix[threadIdx.x * kItems + u] = running + ex[u];
    const int cnt = static_cast<int>(nseg - c0 < kChunk ? nseg - c0 : kChunk);
    if (threadIdx.x == 0) w.prefix[cnt] = running + sum;
    __syncthreads();  // the prefix is visible
    chunk(c0, cnt);
    running += sum;
    __syncthreads();  // the chunk is done with it before the next one is counted
  }
  return {running, c0 >= nseg};
}

// segment_chunks for positions [k0, k1): emit(k, segment, slot) for each of them.
template <int kThreads, int kItems, class Count, class Emit>
__device__ WalkEnd segment_walk(SegmentScratch<kThreads, kItems>& w, int64_t nseg, int64_t k0,
                                int64_t k1, Count count, Emit emit) {
  return segment_chunks(w, nseg, k1, count, [&](int64_t c0, int cnt) {
    const int64_t begin = w.prefix[0], end = w.prefix[cnt];
    const int64_t hi = k1 < end ? k1 : end;
    for (int64_t k = (k0 > begin ? k0 : begin) + threadIdx.x; k < hi; k += kThreads) {
      const int slot = segment_slot(w, cnt, k);
      emit(k, c0 + slot, slot);
    }
  });
}

// The contiguous range of [0, n) that block `s.block` of `s.blocks` owns.
__device__ __forceinline__ void block_range(int64_t n, const BlockSlice& s, int64_t& k0,
                                            int64_t& k1) {
  const int64_t per = (n + s.blocks - 1) / s.blocks;
  k0 = s.block * per;
  k1 = k0 + per < n ? k0 + per : n;
  if (k0 > n) k0 = n;
}

}  // namespace kernels
}  // namespace cattn
