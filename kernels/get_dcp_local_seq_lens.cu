// get_dcp_local_seq_lens as a kernel of its own; the work is in get_dcp_local_seq_lens.cuh,
// which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/get_dcp_local_seq_lens.cuh"

namespace cattn {
namespace kernels {

__global__ void get_dcp_local_seq_lens_kernel(const DcpLocalSeqLensParams p) {
  get_dcp_local_seq_lens_blocks(p, whole_grid());
}

int launch_get_dcp_local_seq_lens(const DcpLocalSeqLensParams& p, const DeviceShape& dev,
                                  void* stream) {
  return launch_elementwise(get_dcp_local_seq_lens_kernel,
                            p.out.size[0] * p.out.size[1], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
