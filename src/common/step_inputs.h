/* SPDX-License-Identifier: Apache-2.0 */
// The step inputs' tensors as one checked set, shared by the five entry points
// (src/prepare_pos_seq_lens.cpp and its siblings), the step plan, the host algorithm
// (host/step_inputs_host.cpp) and the device side (device/step_inputs_device.cpp). An entry
// point fills what its call takes and leaves the rest absent.
#pragma once

#include <cstdint>

#include "cattn.h"
#include "common/tensor_arg.h"

namespace cattn {

struct StepInputsGroup {
  const TensorArg* table = nullptr;       // MRV2: [R, W] persistent; v1: [B, W]
  const TensorArg* num_blocks = nullptr;  // [R]
  const TensorArg* gathered = nullptr;    // out [B, W]
  const TensorArg* slots = nullptr;       // out [T] int64
  int64_t block_size = 1, kernel_block_size = 1;
  bool v1 = false;
};

struct StepInputsTensors {
  int64_t rows = 0;             // B
  int64_t persistent_rows = 0;  // R
  const TensorArg* num_reqs = nullptr;
  const TensorArg* num_scheduled = nullptr;
  const TensorArg* given_qsl = nullptr;
  const TensorArg* idx_mapping = nullptr;
  const TensorArg* num_computed = nullptr;
  const TensorArg* given_positions = nullptr;
  const TensorArg* qsl = nullptr;
  const TensorArg* seq_lens = nullptr;
  const TensorArg* batch_num_computed = nullptr;
  const TensorArg* positions = nullptr;
  const TensorArg* token_to_req = nullptr;
  int num_groups = 0;
  StepInputsGroup groups[CATTN_MAX_KV_GROUPS];
  int64_t dcp_size = 1, dcp_rank = 0, dcp_interleave = 1;
  bool logits = false;
  int64_t new_sampled = 1;
  const TensorArg* num_draft = nullptr;
  const TensorArg* cu_num_logits = nullptr;
  const TensorArg* logits_indices = nullptr;
  const TensorArg* expanded_idx = nullptr;
  const TensorArg* expanded_pos = nullptr;
  const TensorArg* comb_seq_lens = nullptr;
  const TensorArg* prefill_len = nullptr;
  const TensorArg* last_sampled = nullptr;
  const TensorArg* draft_tokens = nullptr;
  const TensorArg* input_ids = nullptr;
};


// Parameter checks both the calls and the plan make (prefix as in common/param_checks.h): a
// known contract (named `name`); then, for a checked contract, the block sizes, named with
// `prefix`, and the DCP fields, named with `dcp_prefix` (the plan keeps them in desc->inputs, a
// group's sizes in desc->kv_groups[g]).
void check_slot_mapping_contract(const char* fn, const char* name, int32_t contract);
void check_slot_mapping_params(const char* fn, const char* prefix, const char* dcp_prefix,
                               int32_t contract, int64_t block_size, int64_t kernel_block_size,
                               int64_t dcp_size, int64_t dcp_rank, int64_t interleave);
void check_num_new_sampled(const char* fn, const char* prefix, int64_t n);

// query_start_loc: a 1-D index input of B + 1 >= 1 entries, read in full. Returns B.
int64_t expect_query_start_loc(const TensorArg& qsl);
// Shape checks: a 1-D index input of n entries; a [1] scalar; an index output of at least n.
void expect_index_vector(const TensorArg& t, int64_t n);
void expect_index_scalar(const TensorArg& t);
void expect_index_output(const TensorArg& t, int64_t n);
// The device path keeps its scans in shared memory: at most kernels::kStepInputsMaxRows rows
// (CATTN_NOT_SUPPORTED past them; the host path has no limit).
void expect_device_rows(const char* fn, const TensorArg& t, int64_t rows);

// The host algorithm of every product in `t` (host/step_inputs_host.cpp): refuses values out
// of range before writing anything.
void step_inputs_host(const char* fn, const StepInputsTensors& t);

// The live rows' tokens and logits of `t`'s counts (host tensors), as the host algorithm counts
// them and with its refusals; writes nothing.
struct StepInputsTotals {
  int64_t tokens = 0, logits = 0;
};
StepInputsTotals step_inputs_totals(const char* fn, const StepInputsTensors& t);

// The padding contract's check on the host; writes status.
struct StepBatchCheckTensors {
  const TensorArg* query_start_loc = nullptr;
  const TensorArg* num_reqs = nullptr;
  const TensorArg* seq_lens = nullptr;
  const TensorArg* tables[CATTN_MAX_KV_GROUPS] = {};
  const TensorArg* slots[CATTN_MAX_KV_GROUPS] = {};
  const TensorArg* status = nullptr;
};
void step_batch_check_host(const StepBatchCheckTensors& t);

}  // namespace cattn
