/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"
#include "kernels/log2_lse_to_ln.h"

namespace cattn {
// Enqueues out = lse * ln 2 for checked CUDA tensors: one kernel on `stream`.
void log2_lse_to_ln_device(const char* fn, const TensorArg& lse, kernels::LseType type,
                           float half_mul, const TensorArg& out, void* stream);
}  // namespace cattn
