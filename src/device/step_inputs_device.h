/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/step_inputs.h"
#include "device/device.h"
#include "kernels/step_inputs.h"

namespace cattn {

// The kernel parameters of the products in `t` (checked tensors on one GPU), with the role
// layout their capacities fix. Launches nothing.
kernels::StepInputsParams step_inputs_params(const StepInputsTensors& t);

// Runs the step-inputs kernel for `t` on its device, on `stream`.
void step_inputs_device(const char* fn, const StepInputsTensors& t, const TensorArg& any,
                        void* stream);

// Runs the padding-contract check on the device.
void step_batch_check_device(const char* fn, const StepBatchCheckTensors& t, void* stream);

}  // namespace cattn
