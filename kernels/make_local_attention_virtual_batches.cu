// SPDX-License-Identifier: Apache-2.0
// Block-table gather of the local-attention plan: out[v, j] = table[batch(v), min(start(v) + j,
// cols - 1)], one thread per element; the plan's (batch, start) pairs arrive as parameters.
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/make_local_attention_virtual_batches.cuh"

namespace cattn {
namespace kernels {

__global__ void make_local_attention_virtual_batches_kernel(
    const __grid_constant__ LocalBlockTableParams p) {
  const int64_t pages = p.out.size[1];
  const int64_t n = static_cast<int64_t>(p.batch_and_start.count) * pages;
  for (int64_t e = grid_thread(); e < n; e += grid_threads()) {
    const int64_t i = e / pages, j = e - i * pages;
    const int64_t packed = p.batch_and_start.v[i];
    const int64_t batch = packed >> 32, start = packed & 0xffffffff;
    int64_t col = start + j;
    col = col < p.cols - 1 ? col : p.cols - 1;
    store_index(p.out, p.batch_and_start.first + i, j, load_index(p.block_table, batch, col));
  }
}

int launch_make_local_attention_virtual_batches(const LocalBlockTableParams& p,
                                                const DeviceShape& dev, void* stream) {
  const int64_t n = static_cast<int64_t>(p.batch_and_start.count) * p.out.size[1];
  return launch_elementwise(make_local_attention_virtual_batches_kernel, n, dev, stream, p);
}

__global__ void __launch_bounds__(kBlockThreads)
    make_local_attention_virtual_batches_capturable_kernel(const LocalAttentionCapturableParams p) {
  __shared__ LocalAttentionShared<kBlockThreads> sh;
  make_local_attention_virtual_batches_capturable_blocks<kBlockThreads>(p, whole_grid(), sh);
}

int launch_make_local_attention_virtual_batches_capturable(const LocalAttentionCapturableParams& p,
                                                           const DeviceShape& dev, void* stream) {
  const int64_t n = p.out_table.data != nullptr ? p.out_table.size[0] * p.pages
                                                : p.seqlens_k.size[0];
  // One more block than the walk takes: the one that counts the totals.
  make_local_attention_virtual_batches_capturable_kernel<<<
      segment_walk_grid(n > 0 ? n : 1, dev) + 1, kBlockThreads, 0,
      static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
