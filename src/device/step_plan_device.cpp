// SPDX-License-Identifier: Apache-2.0
// Device side of the step plan: the kernel parameters of every selected product from the
// run's checked tensors (the same builders the products' own calls use), the counts vector
// sliced among them, and the one launch. The entry point keeps what it launched in its memo;
// nothing here writes the plan.
#include "device/step_plan_device.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "device/compute_causal_conv1d_metadata_device.h"
#include "device/cuda_launch.h"
#include "device/make_local_attention_virtual_batches_device.h"
#include "device/spec_decode_device.h"
#include "device/step_inputs_device.h"
#include "kernels/step_plan.h"

namespace cattn {
namespace {

namespace k = kernels;

// Entries [first, first + n) of a count view (absent stays absent).
k::MutIndexSpan count_slice(const k::MutIndexSpan& v, int64_t first, int64_t n) {
  if (v.data == nullptr) return v;
  k::MutIndexSpan s = v;
  s.data = static_cast<char*>(v.data) + first * v.step[0] * (v.i64 ? 8 : 4);
  s.size[0] = n;
  return s;
}
k::CountOut count_slice(const k::CountOut& c, int64_t first, int64_t n) {
  return {count_slice(c.device, first, n), count_slice(c.mirror, first, n)};
}

// The view the kernel writes counts_host through: its address for the device, which must exist
// (pinned memory mapped into the device's address space).
k::MutIndexSpan mirror_view(const char* fn, const TensorArg& t) {
  k::MutIndexSpan v = index_view(t);
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, t.data());
  if (e != cudaSuccess) (void)cudaGetLastError();
  if (e != cudaSuccess || attr.type != cudaMemoryTypeHost || attr.devicePointer == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(),
             "is not pinned host memory mapped for the device",
             e != cudaSuccess ? cudaGetErrorName(e)
                              : "memory type " + std::to_string(static_cast<int>(attr.type)),
             "memory from cudaHostAlloc, cudaMallocHost or cudaHostRegister(Mapped)");
  v.data = attr.devicePointer;
  return v;
}

// The drafter products' parameters (kernels/spec_decode.h): the chain's, or the one call's a
// solo plan launches.
void draft_params(const StepPlanSpec& plan, StepRunArgs& t, StepPlanLaunch& launch) {
  const cattn_step_draft_params_t& d = plan.desc.draft;
  if (plan.has_bit(kBitDraftStep)) {
    const TensorArg& seq_in = *t[kRunSeqLens];
    const TensorArg& slots = *t[kRunOutDraftSlotMapping];
    const EagleStepTensors e{t[kRunPositions], t[kRunBlockTable], t[kRunOutDraftSeqLens],
                             t[kRunOutDraftPositions], &slots, seq_in.size(0), slots.size(0),
                             d.block_size, d.max_model_len};
    launch.eagle_step = eagle_step_params(e);
    launch.eagle_step.seq_lens_in = index_view(seq_in);
    launch.solo = StepPlanLaunch::kEagleStep;
    return;
  }
  if (plan.has_bit(kBitBatchChange)) {
    const BatchChangeTensors b{t[kRunOutCarriedNumComputedTokens],
                               t[kRunOutCarriedNumAcceptedTokens],
                               t[kRunPrevPositions],
                               t[kRunValidSampledTokenCount],
                               t[kRunPrevNumDraftTokens],
                               t[kRunCpuNumComputedTokens],
                               t[kRunPrevPositions]->size(0)};
    launch.batch_change = batch_change_params(b);
    launch.batch_change.computed_in = index_view(*t[kRunNumComputedTokens]);
    launch.batch_change.accepted_in = index_view(*t[kRunNumAcceptedTokens]);
    launch.solo = StepPlanLaunch::kBatchChange;
    return;
  }
  k::DraftChainParams& p = launch.params.draft;
  launch.params.draft_end = plan.draft_end;
  const TensorArg& qsl = *t[kRunQueryStartLoc];
  p.rows = qsl.size(0) - 1;
  p.sampled = index_view(*t[kRunSampledTokenIds]);
  p.discard = flags_of(t[kRunDiscardRequestMask]);
  p.backup = index_view(*t[kRunBackupNextTokenIds]);
  p.next_tokens = index_view(*t[kRunOutNextTokenIds]);
  p.valid_count = mut_view_of(t[kRunOutValidSampledTokensCount]);
  p.vocab_size = d.vocab_size;
  p.query_start_loc = index_view(qsl);
  p.prepare = plan.has_bit(kBitDraftPrepareInputs);
  if (p.prepare) {
    p.cu_num_draft_tokens = index_view(*t[kRunCuNumDraftTokens]);
    p.token_indices = index_view(*t[kRunOutTokenIndicesToSample]);
    p.num_rejected = mut_view_of(t[kRunOutNumRejectedTokens]);
  }
  p.expand = plan.has_bit(kBitDraftExpand);
  if (p.expand) {
    p.target_ids = index_view(*t[kRunTargetTokenIds]);
    p.target_positions = index_view(*t[kRunTargetPositions]);
    p.input_ids = index_view(*t[kRunOutDraftInputIds]);
    p.positions = index_view(*t[kRunOutDraftPositions]);
    p.rejected = mut_flags_of(t[kRunOutIsRejectedTokenMask]);
    p.masked = mut_flags_of(t[kRunOutIsMaskedTokenMask]);
    p.new_token_indices = mut_view_of(t[kRunOutNewTokenIndices]);
    p.shift = d.shift_input_ids != 0;
    if (p.shift) p.hidden_map = mut_view_of(t[kRunOutHiddenStateMapping]);
    p.pad_id = d.padding_token_id, p.parallel_id = d.parallel_drafting_token_id;
    p.slots_per_request = d.num_padding_slots_per_request;
    p.max_tokens = d.max_tokens_per_request;
    // As the call's: query_start_loc is clamped to the largest token output or target length.
    p.span = std::max({p.input_ids.size[0], p.positions.size[0], p.target_ids.size[0],
                       p.hidden_map.size[0]});
  }
  p.slot_mapping = plan.has_bit(kBitDraftSlotMapping);
  if (p.slot_mapping) {
    p.block_table = index_view(*t[kRunBlockTable]);
    p.slots = index_view(*t[kRunOutDraftSlotMapping]);
    p.block_size = d.block_size, p.max_model_len = d.max_model_len;
  }
}

}  // namespace

StepPlanLaunch step_plan_launch_params(const char* fn, const StepPlanSpec& plan, StepRunArgs& t,
                                       const TensorArg& any, const TensorArg& cu_num_tokens) {
  // The run's device is current while the parameters are built, as for the launch: the pointer
  // query of counts_host runs there.
  DeviceScope dev(fn, any);
  const cattn_step_plan_desc_t& d = plan.desc;
  const TensorArg& query_start_loc = *t[kRunQueryStartLoc];
  const TensorArg& seq_lens = *t[kRunSeqLens];
  const TensorArg& counts = *t[kRunCounts];
  const TensorArg& counts_host = *t[kRunCountsHost];
  // About 1 KiB of views: built on the stack, copied into the launch.
  StepPlanLaunch launch;
  launch.device = any.device_id();
  k::StepPlanParams& p = launch.params;
  for (int i = 0; i < k::kStepProducts; ++i) p.block_end[i] = plan.block_end[i];
  if (counts.present()) p.counts.device = index_view(counts);
  if (counts_host.present()) p.counts.mirror = mirror_view(fn, counts_host);
  if (query_start_loc.present()) p.query_start_loc = index_view(query_start_loc);

  if (plan.has(k::kStepDcpLocalSeqLens)) {
    p.dcp.seq_lens = index_view(seq_lens);
    p.dcp.out = index_view(*t[kRunDcpLocalSeqLens]);
    p.dcp.dcp_size = d.dcp.dcp_size;
    p.dcp.dcp_rank = d.dcp.dcp_rank == CATTN_DCP_ALL_RANKS ? -1 : d.dcp.dcp_rank;
    p.dcp.interleave = d.dcp.dcp_kv_cache_interleave_size;
  }
  if (plan.has(k::kStepPcpQueryRestoreIdx)) {
    p.restore.cu_num_tokens = index_view(cu_num_tokens);
    p.restore.restore_idx = index_view(*t[kRunPcpQueryRestoreIdx]);
    p.restore.size = count_slice(p.counts, k::kCountRestoreSize, 1);
  }
  if (plan.has(k::kStepMambaBlockTable)) {
    const bool align = plan.shape.mamba_columns > 0;
    p.mamba.block_table = index_view(*t[kRunBlockTable]);
    if (align) p.mamba.seq_lens = index_view(seq_lens);
    p.mamba.out = index_view(*t[kRunMambaBlockTable]);
    p.mamba.block_size = align ? d.mamba.block_size : 1;
    p.mamba.align = align;
  }
  if (plan.has(k::kStepCausalConv1d)) {
    const TensorArg none(fn, "(none)", nullptr, Use::In, true);
    p.conv1d = causal_conv1d_capturable_params(query_start_loc, d.conv1d.block_m,
                                               step_conv1d_outputs(t).outs, none);
    p.conv1d.tot = count_slice(p.counts, k::kCountConv1dPrograms, 1);
  }
  if (plan.has(k::kStepLocalAttention)) {
    p.local = local_attention_capturable_params(step_local_attention_tensors(t),
                                                d.local_attention.attn_chunk_size,
                                                d.local_attention.block_size);
    p.local.counts = count_slice(p.counts, k::kCountLocalVirtualBatches, 3);
  }
  if (plan.has(k::kStepFastPrefill)) {
    p.fast_prefill.logits_indices = index_view(*t[kRunLogitsIndices]);
    if (t[kRunNumLogitsIndices]->present())
      p.fast_prefill.num_logits_indices = index_view(*t[kRunNumLogitsIndices]);
    p.fast_prefill.query_start_loc = index_view(query_start_loc);
    p.fast_prefill.decode_query_start_loc = index_view(*t[kRunDecodeQueryStartLoc]);
    p.fast_prefill.max_and_total = count_slice(p.counts, k::kCountDecodeMaxQueryLen, 2);
  }
  if (plan.has(k::kStepExtend)) {
    p.extend.query_start_loc = index_view(query_start_loc);
    p.extend.seq_lens = index_view(seq_lens);
    p.extend.out_query_start_loc = index_view(*t[kRunExtendQueryStartLoc]);
    p.extend.out_seq_lens = index_view(*t[kRunExtendSeqLens]);
    p.extend.n = d.extend.n;
  }
  if (plan.has_draft()) draft_params(plan, t, launch);
  if (plan.has_inputs()) {
    launch.inputs = step_inputs_params(step_inputs_tensors(plan, t));
    k::StepInputsParams& in = launch.inputs;
    in.counts = p.counts;
    in.legacy_counts = !plan.has_1_1();
    in.split = plan.has_bit(kBitSplit);
    in.decode_threshold = d.inputs.decode_threshold;
    in.require_uniform = d.inputs.require_uniform != 0;
    // Counts come from the first row block: a plan with counts takes one even without row
    // outputs.
    if (in.row_blocks == 0 && (in.counts.device.data != nullptr || in.counts.mirror.data != nullptr))
      in.row_blocks = 1;
    launch.has_inputs = true;
    launch.dependent = plan.has_1_1() && dev.shape().cc_major >= 9;
    p.wait_for_inputs = launch.dependent;
    p.inputs_counts = true;
  }
  return launch;
}

StepInputsTensors step_inputs_tensors(const StepPlanSpec& plan, StepRunArgs& t) {
  const cattn_step_plan_desc_t& d = plan.desc;
  StepInputsTensors s;
  const bool inputs = plan.has_bit(kBitInputs);
  s.rows = inputs ? t[kRunNumScheduledTokens]->size(0)
                  : (t[kRunQueryStartLoc]->present() ? t[kRunQueryStartLoc]->size(0) - 1
                                                     : t[kRunIdxMapping]->size(0));
  // Rows idx_mapping may name; each group's table bounds its own rows again on the device.
  s.persistent_rows = d.max_num_persistent_reqs;
  s.num_reqs = t[kRunNumReqs];
  s.idx_mapping = t[kRunIdxMapping];
  if (inputs) {
    s.num_scheduled = t[kRunNumScheduledTokens];
    s.num_computed = t[kRunNumComputedTokens];
    s.persistent_rows = t[kRunNumComputedTokens]->size(0);
    s.qsl = t[kRunOutQueryStartLoc];
    s.seq_lens = t[kRunOutSeqLens];
    s.positions = t[kRunOutPositions];
    s.batch_num_computed = t[kRunOutNumComputedTokens];
  } else {
    s.given_qsl = t[kRunQueryStartLoc];
    s.given_positions = t[kRunPositions];
  }
  s.token_to_req = t[kRunOutTokenToReqIndices];
  const bool v1 = d.inputs.slot_mapping_contract == CATTN_SLOT_MAPPING_V1;
  s.num_groups = d.inputs.num_kv_groups;
  for (int g = 0; g < s.num_groups; ++g) {
    StepInputsGroup& grp = s.groups[g];
    grp.table = t[kRunKvBlockTables + g];
    grp.num_blocks = t[kRunKvNumBlocks + g];
    grp.gathered = t[kRunOutBlockTables + g];
    grp.slots = t[kRunOutSlotMappings + g];
    grp.block_size = d.kv_groups[g].block_size;
    grp.kernel_block_size = d.kv_groups[g].kernel_block_size;
    grp.v1 = v1;
  }
  s.dcp_size = d.inputs.dcp_size;
  s.dcp_rank = d.inputs.dcp_rank;
  s.dcp_interleave = d.inputs.dcp_kv_cache_interleave_size;
  s.logits = plan.has_bit(kBitLogitsIndices);
  s.new_sampled = d.inputs.num_new_sampled_tokens;
  s.num_draft = t[kRunNumDraftTokens];
  s.logits_indices = t[kRunOutLogitsIndices];
  s.cu_num_logits = t[kRunOutCuNumLogits];
  s.expanded_idx = t[kRunOutExpandedIdxMapping];
  s.expanded_pos = t[kRunOutExpandedLocalPos];
  return s;
}

void step_plan_launch_device(const char* fn, const StepPlanLaunch& launch, void* stream) {
  DeviceScope dev(fn, launch.device);
  if (launch.solo == StepPlanLaunch::kEagleStep) {
    check_launch(fn,
                 k::launch_eagle_step_update_slot_mapping_and_metadata(launch.eagle_step,
                                                                       dev.shape(), stream),
                 stream);
    return;
  }
  if (launch.solo == StepPlanLaunch::kBatchChange) {
    check_launch(fn,
                 k::launch_update_num_computed_tokens_for_batch_change(launch.batch_change,
                                                                        dev.shape(), stream),
                 stream);
    return;
  }
  if (launch.has_inputs)
    check_launch(fn, k::launch_step_inputs(launch.inputs, stream, launch.dependent), stream);
  check_launch(fn, k::launch_step_plan(launch.params, stream, launch.dependent), stream);
}

}  // namespace cattn
