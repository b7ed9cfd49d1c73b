/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "common/tensor_arg.h"

namespace cattn {

// Checks every length against the workspace (vLLM's assert) and counts the greedy chunks;
// fails naming seq_lens_cpu on a length past the workspace.
int64_t split_prefill_chunks_count_host(const char* fn, const TensorArg& seq_lens,
                                        int64_t workspace_size);

// Writes at most `num_chunks` rows {start + offset, end + offset} to chunks ([>= num_chunks, 2]).
void split_prefill_chunks_host(const TensorArg& seq_lens, int64_t workspace_size,
                               int64_t request_offset, int64_t num_chunks,
                               const TensorArg& chunks);

}  // namespace cattn
