/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the request index of every token (seq_lens NULL) or its position (seq_lens set)
// into `out` for checked CUDA tensors: one kernel on `stream`, which reads the mapped-token
// count from query_start_loc on the device and writes entries [0, max(M, num_tokens)) within
// out's length.
void token_to_req_indices_device(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                                 int64_t num_tokens, const TensorArg& out, void* stream);

}  // namespace cattn
