// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/write_param_chunk.h"

namespace cattn {
namespace kernels {

__global__ void write_param_chunk_kernel(const MutIndexSpan out,
                                         const __grid_constant__ ParamChunk c) {
  for (int64_t i = grid_thread(); i < c.count; i += grid_threads())
    store_index(out, c.first + i, c.v[i]);
}

__global__ void fill_index_kernel(const MutIndexSpan out, int64_t begin, int64_t end,
                                  int64_t value) {
  for (int64_t i = begin + grid_thread(); i < end; i += grid_threads())
    store_index(out, i, value);
}

int launch_write_param_chunk(const MutIndexSpan& out, const ParamChunk& chunk, void* stream) {
  if (chunk.count <= 0) return cudaSuccess;
  // At most kParamChunk / kBlockThreads = 15 blocks: less than a wave on any device.
  write_param_chunk_kernel<<<grid_size(ceil_div(chunk.count, kBlockThreads)), kBlockThreads, 0,
                             static_cast<cudaStream_t>(stream)>>>(out, chunk);
  return cudaGetLastError();
}

int launch_fill_index(const MutIndexSpan& out, int64_t begin, int64_t end, int64_t value,
                      const DeviceShape& dev, void* stream) {
  if (end <= begin) return cudaSuccess;
  fill_index_kernel<<<elementwise_grid(end - begin, dev), kBlockThreads, 0,
                      static_cast<cudaStream_t>(stream)>>>(out, begin, end, value);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
