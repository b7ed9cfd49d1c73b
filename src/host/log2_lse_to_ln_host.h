/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "kernels/log2_lse_to_ln.h"

namespace cattn {
// out = lse * ln 2 element by element, for checked host tensors of one dtype and shape.
void log2_lse_to_ln_host(const TensorArg& lse, kernels::LseType type, float half_mul,
                         const TensorArg& out);
}  // namespace cattn
