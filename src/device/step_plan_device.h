/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/step_inputs.h"
#include "common/step_plan.h"
#include "common/tensor_arg.h"
#include "device/device.h"
#include "kernels/step_inputs.h"
#include "kernels/spec_decode.h"
#include "kernels/step_plan.h"

namespace cattn {

// What a run launches: the plan's kernel parameters and the device they were built on. The
// entry point keeps the last checked run's in its memo and launches them again for a run with
// the same descriptors.
struct StepPlanLaunch {
  kernels::StepPlanParams params;
  kernels::StepInputsParams inputs;  // launched first when has_inputs
  bool has_inputs = false;
  // A plan of CATTN_STEP_DRAFT_STEP or CATTN_STEP_BATCH_CHANGE launches that call's kernel
  // instead of the plan's.
  enum Solo : int { kNone, kEagleStep, kBatchChange } solo = kNone;
  kernels::EagleStepParams eagle_step;
  kernels::BatchChangeParams batch_change;
  bool dependent = false;  // the 1.1 kernel follows as a programmatic dependent launch (sm_90)
  int device = 0;
};

// Builds the kernel parameters of a run whose tensors `t` the entry point has checked, on the
// device of `any` (the first tensor present). Launches nothing. counts_host, when present, must
// be pinned host memory mapped for the device (refused with CATTN_INVALID_ARGUMENT otherwise):
// the kernel writes it through its device address. `cu_num_tokens` is what the restore index
// reads (batch->cu_num_tokens when given, else query_start_loc).
StepPlanLaunch step_plan_launch_params(const char* fn, const StepPlanSpec& plan, StepRunArgs& t,
                                       const TensorArg& any, const TensorArg& cu_num_tokens);

// The step-input products' tensors of a checked run (the plan's parameters, its tensors).
StepInputsTensors step_inputs_tensors(const StepPlanSpec& plan, StepRunArgs& t);

// Enqueues the plan's kernel with `launch`'s parameters on its device, on `stream`.
void step_plan_launch_device(const char* fn, const StepPlanLaunch& launch, void* stream);

}  // namespace cattn
