/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the lengths of ranks [first_rank, first_rank + num_ranks) for checked CUDA tensors:
// one kernel on `stream`. seq_lens stays on the device, so it is cast to int32 as vLLM does
// instead of being range-checked; a [B] out takes one rank.
void get_dcp_local_seq_lens_device(const char* fn, const TensorArg& seq_lens, int64_t dcp_size,
                                   int64_t dcp_rank, int64_t interleave, const TensorArg& out,
                                   void* stream);

// The same for seq_lens of any shape (CATTN_DCP_SHAPE_PRESERVE): out is seq_lens' shape, plus
// a trailing rank axis when ranks > 1 or dcp_rank is -1 (all ranks).
void get_dcp_local_seq_lens_nd_device(const char* fn, const TensorArg& seq_lens, int64_t dcp_size,
                                      int64_t dcp_rank, int64_t ranks, int64_t interleave,
                                      const TensorArg& out, void* stream);

}  // namespace cattn
