/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {
// Fails unless every host seq_len lies in [0, INT32_MAX], the range in which vLLM's int32
// arithmetic is exact. seq_lens may have any shape.
void check_dcp_seq_lens_host(const char* fn, const TensorArg& seq_lens);
// Writes the local lengths of ranks [first_rank, first_rank + num_ranks) into out: out's first
// seq_lens.ndim() dimensions follow seq_lens (any shape), and rank c of an element lies
// c * col_step elements further (col_step 0 when a single rank is written). Inputs already
// validated.
void get_dcp_local_seq_lens_host(const TensorArg& seq_lens, int64_t dcp_size, int64_t first_rank,
                                 int64_t num_ranks, int64_t interleave, const TensorArg& out,
                                 int64_t col_step);
}  // namespace cattn
