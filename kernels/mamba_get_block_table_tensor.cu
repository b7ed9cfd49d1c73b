// Mamba block table: one thread per output element. In align mode a column past the row (vLLM
// reads out of bounds there) is written as PAD (-1) instead.
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/mamba_get_block_table_tensor.h"

namespace cattn {
namespace kernels {

__global__ void mamba_get_block_table_tensor_kernel(const MambaBlockTableParams p) {
  const int64_t n = p.out.size[0] * p.out.size[1];
  for (int64_t i = grid_thread(); i < n; i += grid_threads()) {
    const int64_t b = i / p.out.size[1], j = i - b * p.out.size[1];
    int64_t start = 0;
    if (p.align) {
      // seq_len <= 0 starts at column 0 without computing seq_len - 1 (INT64_MIN would wrap).
      const int64_t s = load_index(p.seq_lens, b);
      start = s <= 0 ? 0 : (s - 1) / p.block_size;
    }
    // j < cols - start rather than start + j < cols: start may be near INT64_MAX.
    store_index(p.out, b, j,
                j < p.block_table.size[1] - start ? load_index(p.block_table, b, start + j) : -1);
  }
}

int launch_mamba_get_block_table_tensor(const MambaBlockTableParams& p, const DeviceShape& dev,
                                        void* stream) {
  return launch_elementwise(mamba_get_block_table_tensor_kernel,
                            p.out.size[0] * p.out.size[1], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
