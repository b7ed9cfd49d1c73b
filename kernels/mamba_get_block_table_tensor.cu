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
    int64_t col = j;
    if (p.align) {
      const int64_t start = floor_div(load_index(p.seq_lens, b) - 1, p.block_size);
      col = (start < 0 ? 0 : start) + j;
    }
    store_index(p.out, b, j, col < p.block_table.cols ? load_index(p.block_table, b, col) : -1);
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
