// SPDX-License-Identifier: Apache-2.0
// log2_lse_to_ln: one thread per element, any strides, in place when out is lse.
#include <cuda_runtime.h>

#include "kernels/launch_common.cuh"
#include "kernels/log2_lse_to_ln.h"

namespace cattn {
namespace kernels {

__global__ void log2_lse_to_ln_kernel(const Log2LseToLnParams p) {
  const BlockSlice slice = whole_grid();
  const char* in = static_cast<const char*>(p.in);
  char* out = static_cast<char*>(p.out);
  for (int64_t i = slice.thread(); i < p.numel; i += slice.threads())
    lse_to_ln_element(p.type, p.half_mul, in + strided_offset(p.in_layout, i) * p.elem_bytes,
                      out + strided_offset(p.out_layout, i) * p.elem_bytes);
}

int launch_log2_lse_to_ln(const Log2LseToLnParams& p, const DeviceShape& dev, void* stream) {
  return launch_elementwise(log2_lse_to_ln_kernel, p.numel, dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
