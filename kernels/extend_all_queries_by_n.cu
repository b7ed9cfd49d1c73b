// SPDX-License-Identifier: Apache-2.0
// extend_all_queries_by_n as a kernel of its own; the work is in
// extend_all_queries_by_n.cuh, which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/extend_all_queries_by_n.cuh"

namespace cattn {
namespace kernels {

__global__ void extend_all_queries_by_n_kernel(const ExtendQueriesParams p) {
  extend_all_queries_by_n_blocks(p, whole_grid());
}

int launch_extend_all_queries_by_n(const ExtendQueriesParams& p, const DeviceShape& dev,
                                   void* stream) {
  return launch_elementwise(extend_all_queries_by_n_kernel,
                            p.query_start_loc.size[0], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
