/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues out = (seq_lens -) query lengths for checked CUDA tensors: one kernel on `stream`.
// seq_lens may be NULL (naive_query_lens).
void naive_query_lens_device(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                             const TensorArg& out, void* stream);

}  // namespace cattn
