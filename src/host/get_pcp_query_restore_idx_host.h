/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {
// Validates a host cu_num_tokens for PCP splitting and returns the restore index length.
int64_t get_pcp_query_restore_idx_size_host(const char* fn, const TensorArg& cu_num_tokens);
// Writes the restore index (and -1 past `size`); inputs already validated.
void get_pcp_query_restore_idx_host(const TensorArg& cu_num_tokens, int64_t size,
                                    const TensorArg& restore_idx);
}  // namespace cattn
