// SPDX-License-Identifier: Apache-2.0
// Device side of mamba_get_block_table_tensor.
#include "device/mamba_get_block_table_tensor_device.h"

#include "device/cuda_launch.h"
#include "kernels/mamba_get_block_table_tensor.h"

namespace cattn {

void mamba_get_block_table_tensor_device(const char* fn, const TensorArg& bt, const TensorArg& seq,
                                         int64_t block_size, bool align, const TensorArg& out,
                                         void* stream) {
  DeviceScope dev(fn, bt);
  kernels::MambaBlockTableParams p;
  p.block_table = index_view(bt);
  if (align) p.seq_lens = index_view(seq);
  p.out = index_view(out);
  p.block_size = align ? block_size : 1;
  p.align = align;
  check_launch(fn, kernels::launch_mamba_get_block_table_tensor(p, dev.shape(), stream), stream);
}

}  // namespace cattn
