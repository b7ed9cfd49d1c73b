// Extend every query by n tokens: one thread per request updates both tensors, so one launch
// serves query_start_loc and seq_lens (in place is fine: each element is read, then written,
// by the same thread).
#include <cuda_runtime.h>

#include "kernels/extend_all_queries_by_n.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

__global__ void extend_all_queries_by_n_kernel(const ExtendQueriesParams p) {
  const int64_t n = p.query_start_loc.size[0];
  for (int64_t i = grid_thread(); i < n; i += grid_threads()) {
    store_index(p.out_query_start_loc, i, load_index(p.query_start_loc, i) + i * p.n);
    if (i < p.seq_lens.size[0]) store_index(p.out_seq_lens, i, load_index(p.seq_lens, i) + p.n);
  }
}

int launch_extend_all_queries_by_n(const ExtendQueriesParams& p, const DeviceShape& dev,
                                   void* stream) {
  return launch_elementwise(extend_all_queries_by_n_kernel,
                            p.query_start_loc.size[0], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
