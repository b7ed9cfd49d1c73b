/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/call_args.h"
#include "common/error.h"
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

// The five entry points' last step: seals the call's arguments and runs `t` where its tensors
// live, the kernel on `stream` (`any` naming the device; at most kStepInputsMaxRows rows) or
// the host algorithm. A CPU-only build answers CUDA tensors with CATTN_NOT_SUPPORTED.
inline void run_step_inputs(const char* fn, Where where, const StepInputsTensors& t,
                            const TensorArg& any, void* stream) {
  seal_arguments();
  if (where != Where::Cuda) return step_inputs_host(fn, t);
  expect_device_rows(fn, any, t.rows);
  if constexpr (!kCudaBuild) fail_no_cuda_path(fn);
  else step_inputs_device(fn, t, any, stream);
}

}  // namespace cattn
