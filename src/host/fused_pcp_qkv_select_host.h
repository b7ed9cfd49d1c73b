/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// Validates the host query_start_loc against the inputs (starts >= 0, even, non-decreasing,
// qsl[B] <= Nq, K and V holding W * qsl[B] rows) and returns qsl[B]. Shapes, W and r already
// checked.
int64_t fused_pcp_qkv_select_check_host(const char* fn, const TensorArg& query_start_loc,
                                     const TensorArg& q, const TensorArg& k, const TensorArg& v,
                                     int64_t world_size);

// Copies every request's Q halves and the K/V blocks they need; everything validated, `end`
// being the checked query_start_loc[B], which bounds every row the copy touches.
void fused_pcp_qkv_select_host(const TensorArg& q, const TensorArg& k, const TensorArg& v,
                               const TensorArg& query_start_loc, int64_t end, int64_t world_size,
                               int64_t rank, const TensorArg& q_head, const TensorArg& k_head,
                               const TensorArg& v_head, const TensorArg& q_tail,
                               const TensorArg& k_tail, const TensorArg& v_tail);

}  // namespace cattn
