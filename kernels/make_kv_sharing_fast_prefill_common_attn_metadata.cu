// Fast-prefill metadata in one block, without reading anything back to the host: the output
// query_start_loc first holds per-request counts (bucketize = a binary search over
// query_start_loc[1:], then an atomic increment), then is scanned in place; the maximum count
// and the total land in max_and_total for the caller to read whenever it likes. A logits index
// at or past query_start_loc[num_reqs] (vLLM fails there) is not counted.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/index_access.cuh"
#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.h"

namespace cattn {
namespace kernels {

constexpr int kFastPrefillThreads = 1024;

struct MaxOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};

__device__ __forceinline__ void atomic_increment(const MutIndexSpan& s, int64_t i) {
  if (s.i64)
    atomicAdd(reinterpret_cast<unsigned long long*>(static_cast<int64_t*>(s.data) + i * s.step[0]),
              1ull);
  else
    atomicAdd(static_cast<int32_t*>(s.data) + i * s.step[0], 1);
}

__global__ void __launch_bounds__(kFastPrefillThreads)
    make_kv_sharing_fast_prefill_common_attn_metadata_kernel(const FastPrefillParams p) {
  const int64_t reqs = p.query_start_loc.size[0] - 1;
  const MutIndexSpan& out = p.decode_query_start_loc;
  for (int64_t i = threadIdx.x; i <= reqs; i += kFastPrefillThreads) store_index(out, i, 0);
  __syncthreads();
  for (int64_t t = threadIdx.x; t < p.logits_indices.size[0]; t += kFastPrefillThreads) {
    const int64_t x = load_index(p.logits_indices, t);
    // Number of query_start_loc[1:] entries <= x (torch.bucketize(..., right=True)).
    int64_t lo = 0, hi = reqs;
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      if (load_index(p.query_start_loc, mid + 1) <= x) lo = mid + 1; else hi = mid;
    }
    if (lo < reqs) atomic_increment(out, lo + 1);
  }
  __syncthreads();
  using Scan = cub::BlockScan<int64_t, kFastPrefillThreads>;
  using Reduce = cub::BlockReduce<int64_t, kFastPrefillThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ typename Reduce::TempStorage reduce_tmp;
  int64_t running = 0, best = 0;
  for (int64_t c0 = 1; c0 <= reqs; c0 += kFastPrefillThreads) {
    const int64_t i = c0 + threadIdx.x;
    const IndexSpan counts{out.data, {out.size[0]}, {out.step[0]}, out.i64};
    const int64_t n = i <= reqs ? load_index(counts, i) : 0;
    best = n > best ? n : best;
    int64_t incl = 0, sum = 0;
    Scan(scan_tmp).InclusiveSum(n, incl, sum);
    __syncthreads();  // every count of this chunk is read before any is overwritten
    if (i <= reqs) store_index(out, i, running + incl);
    running += sum;
  }
  const int64_t max_count = Reduce(reduce_tmp).Reduce(best, MaxOp());
  if (threadIdx.x == 0 && p.max_and_total.size[0] >= 2) {
    store_index(p.max_and_total, 0, max_count);
    store_index(p.max_and_total, 1, running);
  }
}

int launch_make_kv_sharing_fast_prefill_common_attn_metadata(const FastPrefillParams& p,
                                                             void* stream) {
  // One block by design: the count, the scan and the maximum need the whole batch.
  const auto s = static_cast<cudaStream_t>(stream);
  make_kv_sharing_fast_prefill_common_attn_metadata_kernel<<<1, kFastPrefillThreads, 0, s>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
