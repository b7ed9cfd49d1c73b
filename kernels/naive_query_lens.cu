// SPDX-License-Identifier: Apache-2.0
// naive_query_lens and compute_num_computed_tokens: one thread per request.
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/naive_query_lens.h"

namespace cattn {
namespace kernels {

__global__ void naive_query_lens_kernel(const NaiveQueryLensParams p) {
  const BlockSlice slice = whole_grid();
  for (int64_t i = slice.thread(); i < p.out.size[0]; i += slice.threads()) {
    // Unsigned arithmetic: the device cannot refuse values, and wrapping is defined.
    uint64_t v = static_cast<uint64_t>(load_index(p.query_start_loc, i + 1)) -
                 static_cast<uint64_t>(load_index(p.query_start_loc, i));
    if (p.seq_lens.data != nullptr) v = static_cast<uint64_t>(load_index(p.seq_lens, i)) - v;
    store_index(p.out, i, static_cast<int64_t>(v));
  }
}

int launch_naive_query_lens(const NaiveQueryLensParams& p, const DeviceShape& dev, void* stream) {
  return launch_elementwise(naive_query_lens_kernel, p.out.size[0], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
