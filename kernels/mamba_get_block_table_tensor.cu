// SPDX-License-Identifier: Apache-2.0
// mamba_get_block_table_tensor as a kernel of its own; the work is in
// mamba_get_block_table_tensor.cuh, which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/mamba_get_block_table_tensor.cuh"

namespace cattn {
namespace kernels {

__global__ void mamba_get_block_table_tensor_kernel(const MambaBlockTableParams p) {
  mamba_get_block_table_tensor_blocks(p, whole_grid());
}

int launch_mamba_get_block_table_tensor(const MambaBlockTableParams& p, const DeviceShape& dev,
                                        void* stream) {
  return launch_elementwise(mamba_get_block_table_tensor_kernel,
                            p.out.size[0] * p.out.size[1], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
