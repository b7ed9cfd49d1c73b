// SPDX-License-Identifier: Apache-2.0
// Device side of log2_lse_to_ln.
#include "device/log2_lse_to_ln_device.h"

#include "device/cuda_launch.h"

namespace cattn {

void log2_lse_to_ln_device(const char* fn, const TensorArg& lse, kernels::LseType type,
                           float half_mul, const TensorArg& out, void* stream) {
  DeviceScope dev(fn, lse);
  kernels::Log2LseToLnParams p;
  p.in = lse.data();
  p.out = out.data();
  p.in_layout = device_strided_nd(lse);
  p.out_layout = device_strided_nd(out);
  p.numel = lse.numel();
  p.elem_bytes = lse.elem_bytes();
  p.type = type;
  p.half_mul = half_mul;
  check_launch(fn, kernels::launch_log2_lse_to_ln(p, dev.shape(), stream), stream);
}

}  // namespace cattn
