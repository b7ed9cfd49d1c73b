// SPDX-License-Identifier: Apache-2.0
// get_pcp_query_restore_idx as a kernel of its own; the work is in
// get_pcp_query_restore_idx.cuh, which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/get_pcp_query_restore_idx.cuh"

namespace cattn {
namespace kernels {

__global__ void __launch_bounds__(kBlockThreads)
    get_pcp_query_restore_idx_kernel(const RestoreIdxParams p) {
  __shared__ RestoreIdxShared<kBlockThreads> sh;
  get_pcp_query_restore_idx_blocks<kBlockThreads>(p, whole_grid(), sh);
}

int launch_get_pcp_query_restore_idx(const RestoreIdxParams& p, const DeviceShape& dev,
                                     void* stream) {
  const int64_t n = p.restore_idx.size[0];
  if (n == 0) return cudaSuccess;
  // Each block owns a contiguous slice of the output and re-scans the (short) request list.
  get_pcp_query_restore_idx_kernel<<<segment_walk_grid(n, dev), kBlockThreads, 0,
                                     static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
