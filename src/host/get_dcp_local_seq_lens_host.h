#pragma once
#include "common/tensor_arg.h"

namespace cattn {
// Fails unless every host seq_len lies in [0, INT32_MAX], the range in which vLLM's int32
// arithmetic is exact.
void check_dcp_seq_lens_host(const char* fn, const TensorArg& seq_lens);
// Writes the local lengths of ranks [first_rank, first_rank + num_ranks) into out, one row per
// request (a 1-D out holds a single rank). Inputs already validated.
void get_dcp_local_seq_lens_host(const TensorArg& seq_lens, int64_t dcp_size, int64_t first_rank,
                                 int64_t num_ranks, int64_t interleave, const TensorArg& out);
}  // namespace cattn
