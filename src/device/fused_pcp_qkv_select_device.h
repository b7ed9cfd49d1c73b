/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the select for checked CUDA tensors: one kernel on `stream`, no host sync. The
// device query_start_loc is not read back; the kernel bounds every row it touches instead.
// outs: q_head, k_head, v_head, q_tail, k_tail, v_tail.
void fused_pcp_qkv_select_device(const char* fn, const TensorArg& q, const TensorArg& k,
                                 const TensorArg& v, const TensorArg& query_start_loc,
                                 const TensorArg* const (&outs)[6], int64_t world_size,
                                 int64_t rank, void* stream);

}  // namespace cattn
