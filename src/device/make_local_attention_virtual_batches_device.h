/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/param_checks.h"
#include "common/tensor_arg.h"
#include "device/device.h"
#include "host/make_local_attention_virtual_batches_host.h"
#include "kernels/make_local_attention_virtual_batches.h"

namespace cattn {

// The device side of plan_fill (when the optional device vectors are given) and of
// make_block_table: every value comes from the plan and travels in kernel parameters, one
// launch per kernels::kParamChunk virtual batches and per vector, so nothing is read back,
// allocated or synchronised, and the launches can be captured. query_start_loc and seq_lens
// may be NULL or absent (not written). Launches touch disjoint ranges.
void make_local_attention_virtual_batches_device(const char* fn, const LocalAttentionPlan& plan,
                                                 const TensorArg& block_table,
                                                 const TensorArg& out_table,
                                                 const TensorArg* query_start_loc,
                                                 const TensorArg* seq_lens, void* stream);

// The device side of cattn_make_local_attention_virtual_batches_capturable: the kernel parameters
// from checked CUDA tensors (counts absent), and the one launch that computes everything from
// the device query_start_loc and seq_lens.
kernels::LocalAttentionCapturableParams local_attention_capturable_params(
    const LocalAttentionCapturableTensors& t, int64_t attn_chunk_size, int64_t block_size);
void make_local_attention_virtual_batches_capturable(const char* fn,
                                                     const LocalAttentionCapturableTensors& t,
                                                     int64_t attn_chunk_size, int64_t block_size,
                                                     const TensorArg& counts, void* stream);

}  // namespace cattn
