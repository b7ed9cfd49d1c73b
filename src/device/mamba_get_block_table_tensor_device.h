/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the block-table selection for checked CUDA tensors, the copy modes too: one kernel
// on `stream`. Columns and values stay on the device, so a column past its row is written as
// CATTN_PAD_SLOT_ID and a value is stored in out's dtype unchecked. seq_lens is read only
// with `align`.
void mamba_get_block_table_tensor_device(const char* fn, const TensorArg& block_table,
                                         const TensorArg& seq_lens, int64_t block_size, bool align,
                                         const TensorArg& out, void* stream);

}  // namespace cattn
