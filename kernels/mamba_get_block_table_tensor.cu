// Mamba block table: one thread per output element. In align mode a column past the row (vLLM
// reads out of bounds there) is written as PAD (-1) instead.
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/mamba_get_block_table_tensor.h"

namespace cattn {
namespace kernels {

__global__ void mamba_get_block_table_tensor_kernel(const MambaBlockTableParams p) {
  const int64_t n = p.out.rows * p.out.cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / p.out.cols, j = i - b * p.out.cols;
    int64_t start = 0;
    if (p.align) {
      // seq_len <= 0 starts at column 0 without computing seq_len - 1 (INT64_MIN would wrap).
      const int64_t s = load_index(p.seq_lens, b);
      start = s <= 0 ? 0 : (s - 1) / p.block_size;
    }
    // j < cols - start rather than start + j < cols: start may be near INT64_MAX.
    store_index(p.out, b, j,
                j < p.block_table.cols - start ? load_index(p.block_table, b, start + j) : -1);
  }
}

int launch_mamba_get_block_table_tensor(const MambaBlockTableParams& p, const DeviceShape& dev,
                                        void* stream) {
  const int64_t n = p.out.rows * p.out.cols;
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads, cap = int64_t{dev.sm_count} * 8;
  mamba_get_block_table_tensor_kernel<<<static_cast<unsigned>(want < cap ? want : cap), kThreads,
                                        0, static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
