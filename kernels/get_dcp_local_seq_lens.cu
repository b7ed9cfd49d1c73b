// DCP local sequence lengths: one thread per (request, rank) output element.
#include <cuda_runtime.h>

#include "kernels/get_dcp_local_seq_lens.h"
#include "kernels/index_access.cuh"

namespace cattn {
namespace kernels {

__global__ void get_dcp_local_seq_lens_kernel(const DcpLocalSeqLensParams p) {
  const int64_t n = p.out.rows * p.out.cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / p.out.cols, c = i - b * p.out.cols;
    // vLLM computes in int32 after seq_lens.to(torch.int32): wrap the same way.
    const int64_t s = static_cast<int32_t>(load_index(p.seq_lens, b));
    const int64_t rank = p.dcp_rank < 0 ? c : p.dcp_rank;
    const int64_t base = floor_div(floor_div(s, p.interleave), p.dcp_size) * p.interleave;
    int64_t rem = s - base * p.dcp_size - rank * p.interleave;
    rem = rem < 0 ? 0 : (rem > p.interleave ? p.interleave : rem);
    store_index(p.out, b, c, base + rem);
  }
}

int launch_get_dcp_local_seq_lens(const DcpLocalSeqLensParams& p, const DeviceShape& dev,
                                  void* stream) {
  const int64_t n = p.out.rows * p.out.cols;
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads, cap = int64_t{dev.sm_count} * 8;
  get_dcp_local_seq_lens_kernel<<<static_cast<unsigned>(want < cap ? want : cap), kThreads, 0,
                                  static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
