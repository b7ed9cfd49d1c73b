/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// The checks vLLM's token_to_req_indices makes (torch.repeat_interleave refuses a negative
// repeat and a total other than its output_size; the buffer must hold max(M, T)), on host
// tensors. M is qsl_cpu[B] when the mirror is present, qsl[B] - qsl[0] otherwise. Returns M.
int64_t check_token_to_req_indices_host(const char* fn, const TensorArg& qsl,
                                        const TensorArg& qsl_cpu, int64_t num_tokens,
                                        const TensorArg& buffer);

// Writes buffer[0:M] = request indices, buffer[M:T] = 0 (checked arguments).
void token_to_req_indices_host(const TensorArg& qsl, int64_t mapped, int64_t num_tokens,
                               const TensorArg& buffer);

// Fails unless every position seq_lens[r] - q[r] + j (0 <= j < q[r] + extend_by) fits
// positions' dtype, where q comes from qsl: the positions of the batch after
// extend_all_queries_by_n(extend_by), computed from its input. Reads only.
void check_token_positions_host(const char* fn, const TensorArg& qsl, const TensorArg& seq_lens,
                                int64_t extend_by, const TensorArg& positions);

// Writes positions[t] = seq_lens[r] - q[r] + (t - (qsl[r] - qsl[0])) for token t of request r
// and 0 for every entry past the last request's tokens (checked arguments).
void token_positions_host(const TensorArg& qsl, const TensorArg& seq_lens,
                          const TensorArg& positions);

}  // namespace cattn
