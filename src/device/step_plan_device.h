/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/step_plan.h"
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// One run's tensors, every one checked by the entry point (absent ones have present() false).
struct StepRunTensors {
  const TensorArg& any;  // the first tensor present: its device runs the plan
  const TensorArg &query_start_loc, &seq_lens, &block_table, &cu_num_tokens, &logits_indices,
      &num_logits_indices;
  const TensorArg &dcp_local_seq_lens, &pcp_query_restore_idx, &mamba_block_table;
  const TensorArg* const (&conv1d)[5];  // nums, mlist, offsetlist, batch_ptr, chunk offsets
  const TensorArg &local_query_start_loc, &local_seq_lens, &local_num_computed_tokens,
      &local_block_table;
  const TensorArg &decode_query_start_loc, &extend_query_start_loc, &extend_seq_lens;
  const TensorArg &counts, &counts_host;
};

// Builds the kernel parameters and enqueues the plan's one kernel on `stream`. counts_host,
// when present, must be pinned host memory mapped for the device (refused with
// CATTN_INVALID_ARGUMENT otherwise): the kernel writes it through its device address. With a
// `key` (the descriptors the tensors were checked from), the parameters are remembered in the
// plan's memo under it once they are built.
void step_plan_run_device(const char* fn, const StepPlan& plan, const StepRunTensors& t,
                          const StepRunKey* key, void* stream);

// Enqueues the plan's kernel with parameters built by an earlier run, on `device`.
void step_plan_launch_device(const char* fn, int device, const kernels::StepPlanParams& p,
                             void* stream);

}  // namespace cattn
