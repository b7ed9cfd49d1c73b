/* SPDX-License-Identifier: Apache-2.0 */
// Kernel views of the speculative-decoding calls' checked tensors, shared by the calls' device
// sides (device/spec_decode_device.cpp) and the step plan's drafter products
// (device/step_plan_device.cpp).
#pragma once

#include "common/spec_decode.h"
#include "common/tensor_arg.h"
#include "device/cuda_launch.h"
#include "kernels/spec_decode.h"

namespace cattn {

// Flag views (absent for an absent tensor) and a mutable index view that may be absent.
kernels::FlagSpan flags_of(const TensorArg* t);
kernels::MutFlagSpan mut_flags_of(const TensorArg* t);
inline kernels::MutIndexSpan mut_view_of(const TensorArg* t) {
  return present(t) ? static_cast<kernels::MutIndexSpan>(index_view(*t)) : kernels::MutIndexSpan{};
}

// The parameters of a call's kernel from its checked tensors.
kernels::EagleStepParams eagle_step_params(const EagleStepTensors& t);
kernels::BatchChangeParams batch_change_params(const BatchChangeTensors& t);

}  // namespace cattn
