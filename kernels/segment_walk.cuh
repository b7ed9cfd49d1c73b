// Block-cooperative walk over the positions of concatenated segments: for every output position
// k in [k0, k1) it finds the segment s holding k (segments have data-dependent lengths, counted
// by `count(s)`) and calls emit(k, s, k - start(s), start(s)). Each block scans the segment
// lengths in chunks of kThreads with cub::BlockScan, keeps the chunk's prefix in shared memory
// and binary-searches it, so no scratch memory and no second launch are needed; the scan is
// repeated per block, which costs O(segments) loads per block and is cheap next to the launch.
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cstdint>

namespace cattn {
namespace kernels {

// Sum of count(s) over all segments, known to every thread of the block on return.
template <int kThreads, class Count>
__device__ int64_t segment_total(int64_t nseg, Count count) {
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ int64_t total;
  int64_t mine = 0;
  for (int64_t s = threadIdx.x; s < nseg; s += kThreads) mine += count(s);
  const int64_t sum = Reduce(tmp).Sum(mine);
  if (threadIdx.x == 0) total = sum;
  __syncthreads();
  const int64_t t = total;
  __syncthreads();
  return t;
}

template <int kThreads, class Count, class Emit>
__device__ void segment_walk(int64_t nseg, Count count, int64_t k0, int64_t k1, Emit emit) {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ int64_t prefix[kThreads];
  int64_t running = 0;
  for (int64_t c0 = 0; c0 < nseg && running < k1; c0 += kThreads) {
    const int64_t s = c0 + threadIdx.x;
    const int64_t n = s < nseg ? count(s) : 0;
    int64_t ex = 0, sum = 0;
    Scan(tmp).ExclusiveSum(n, ex, sum);
    prefix[threadIdx.x] = running + ex;
    __syncthreads();
    const int64_t lo = k0 > running ? k0 : running;
    const int64_t end = running + sum, hi = k1 < end ? k1 : end;
    const int cnt = static_cast<int>(nseg - c0 < kThreads ? nseg - c0 : kThreads);
    for (int64_t k = lo + threadIdx.x; k < hi; k += kThreads) {
      // The last segment starting at or before k; empty segments share their successor's start
      // and so are never chosen.
      int a = 0, b = cnt - 1;
      while (a < b) {
        const int m = (a + b + 1) >> 1;
        if (prefix[m] <= k) a = m; else b = m - 1;
      }
      emit(k, c0 + a, k - prefix[a], prefix[a]);
    }
    running = end;
    __syncthreads();
  }
}

// The contiguous range of [0, n) that block `blockIdx.x` of the grid owns.
__device__ __forceinline__ void block_range(int64_t n, int64_t& k0, int64_t& k1) {
  const int64_t per = (n + gridDim.x - 1) / gridDim.x;
  k0 = blockIdx.x * per;
  k1 = k0 + per < n ? k0 + per : n;
  if (k0 > n) k0 = n;
}

}  // namespace kernels
}  // namespace cattn
