/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the restore index from the device cu_num_tokens: one kernel on `stream`, which
// writes what fits the output's capacity and -1 after it (the size is data-dependent and the
// data stays on the device).
void get_pcp_query_restore_idx_device(const char* fn, const TensorArg& cu_num_tokens,
                                      const TensorArg& restore_idx, void* stream);

}  // namespace cattn
