// DCP local sequence lengths: one thread per (request, rank) output element.
#include <cuda_runtime.h>

#include "kernels/get_dcp_local_seq_lens.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

__global__ void get_dcp_local_seq_lens_kernel(const DcpLocalSeqLensParams p) {
  const int64_t n = p.out.size[0] * p.out.size[1];
  for (int64_t i = grid_thread(); i < n; i += grid_threads()) {
    const int64_t b = i / p.out.size[1], c = i - b * p.out.size[1];
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
  return launch_elementwise(get_dcp_local_seq_lens_kernel,
                            p.out.size[0] * p.out.size[1], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
