#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/upload_index.h"

namespace cattn {
namespace kernels {

__global__ void upload_index_kernel(const MutIndexSpan out, const __grid_constant__ ParamChunk c) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < c.count; i += gridDim.x * blockDim.x)
    store_index(out, c.first + i, c.v[i]);
}

__global__ void fill_index_kernel(const MutIndexSpan out, int64_t begin, int64_t end,
                                  int64_t value) {
  for (int64_t i = begin + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < end;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    store_index(out, i, value);
}

int launch_upload_index(const MutIndexSpan& out, const ParamChunk& chunk, void* stream) {
  if (chunk.count <= 0) return cudaSuccess;
  const int blocks = (chunk.count + 255) / 256;
  upload_index_kernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(out, chunk);
  return cudaGetLastError();
}

int launch_fill_index(const MutIndexSpan& out, int64_t begin, int64_t end, int64_t value,
                      const DeviceShape& dev, void* stream) {
  if (end <= begin) return cudaSuccess;
  const int64_t want = (end - begin + 255) / 256, cap = int64_t{dev.sm_count} * 4;
  fill_index_kernel<<<static_cast<unsigned>(want < cap ? want : cap), 256, 0,
                      static_cast<cudaStream_t>(stream)>>>(out, begin, end, value);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
