// SPDX-License-Identifier: Apache-2.0
// Device side of get_pcp_query_restore_idx.
#include "device/get_pcp_query_restore_idx_device.h"

#include "device/cuda_launch.h"
#include "kernels/get_pcp_query_restore_idx.h"

namespace cattn {

void get_pcp_query_restore_idx_device(const char* fn, const TensorArg& cu, const TensorArg& out,
                                      void* stream) {
  // int32 outputs hold indices below 2^31 by the capacity bound.
  require_fits(fn, out, out.numel());
  DeviceScope dev(fn, cu);
  kernels::RestoreIdxParams p;
  p.cu_num_tokens = index_view(cu);
  p.restore_idx = index_view(out);
  check_launch(fn, kernels::launch_get_pcp_query_restore_idx(p, dev.shape(), stream), stream);
}

}  // namespace cattn
