// Extend every query by n tokens: one thread per request updates both tensors, so one launch
// serves query_start_loc and seq_lens (in place is fine: each element is read, then written,
// by the same thread).
#include <cuda_runtime.h>

#include "kernels/extend_all_queries_by_n.h"
#include "kernels/index_access.cuh"

namespace cattn {
namespace kernels {

__global__ void extend_all_queries_by_n_kernel(const ExtendQueriesParams p) {
  const int64_t n = p.query_start_loc.size;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    store_index(p.out_query_start_loc, i, load_index(p.query_start_loc, i) + i * p.n);
    if (i < p.seq_lens.size) store_index(p.out_seq_lens, i, load_index(p.seq_lens, i) + p.n);
  }
}

int launch_extend_all_queries_by_n(const ExtendQueriesParams& p, const DeviceShape& dev,
                                   void* stream) {
  const int64_t n = p.query_start_loc.size;
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads, cap = int64_t{dev.sm_count} * 8;
  extend_all_queries_by_n_kernel<<<static_cast<unsigned>(want < cap ? want : cap), kThreads, 0,
                                   static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
