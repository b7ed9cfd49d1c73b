/* SPDX-License-Identifier: Apache-2.0 */
// What the step plan's entry point (src/step_plan.cpp) and its device side
// (device/step_plan_device.cpp) share: what creation fixed - the desc, the outputs' capacities
// and the launch layout - and the one table of a run's tensors. The plan object itself, with
// the memo of its last checked run, belongs to the entry point (src/step_plan.cpp,
// src/step_plan_memo.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cattn.h"
#include "common/call_args.h"
#include "common/param_checks.h"
#include "common/tensor_arg.h"
#include "kernels/step_plan.h"

namespace cattn {

// What cattn_step_plan_create derives from the desc. Never changes once created, so runs on
// any number of threads read it without a lock.
struct StepPlanSpec {
  cattn_step_plan_desc_t desc{};   // struct_size set to this header's size
  cattn_step_plan_shape_t shape{};
  // Blocks of each product, as kernels::StepPlanParams::block_end, and the drafter chain's
  // end (kernels::StepPlanParams::draft_end; 0 without it).
  int64_t block_end[kernels::kStepProducts] = {};
  int64_t draft_end = 0;

  bool has(kernels::StepProduct k) const { return (desc.products >> k) & 1u; }
  bool has_bit(int bit) const { return (desc.products >> bit) & 1u; }
  // Any 1.1 product, any step-input product, any drafter product (both 1.2).
  bool has_1_1() const { return (desc.products & CATTN_STEP_ALL_PRODUCTS) != 0; }
  bool has_inputs() const { return (desc.products & CATTN_STEP_INPUT_PRODUCTS) != 0; }
  bool has_draft() const { return (desc.products & CATTN_STEP_DRAFT_PRODUCTS) != 0; }
  // The drafter chain (NEXT_TOKEN to SLOT_MAPPING), a role of the plan's kernel.
  bool has_draft_chain() const { return (desc.products & kDraftChainBits) != 0; }
  // A 1.2 product: the desc, batch and outputs must be 1.2-sized, the counts 16 entries.
  bool has_1_2() const { return has_inputs() || has_draft(); }
  static constexpr uint32_t kDraftChainBits =
      CATTN_STEP_DRAFT_NEXT_TOKEN | CATTN_STEP_DRAFT_PREPARE_INPUTS | CATTN_STEP_DRAFT_EXPAND |
      CATTN_STEP_DRAFT_SLOT_MAPPING;
};

// The run's tensors in a fixed order: the batch's, then the outputs'. Every list of them is
// kStepRunTensors below, indexed by these.
enum StepRunTensor : int {
  kRunQueryStartLoc = 0,
  kRunSeqLens,
  kRunBlockTable,
  kRunCuNumTokens,
  kRunLogitsIndices,
  kRunNumLogitsIndices,
  kRunNumReqs,  // 1.2
  kRunNumScheduledTokens,
  kRunIdxMapping,
  kRunNumComputedTokens,
  kRunNumDraftTokens,
  kRunPositions,
  kRunKvBlockTables,  // CATTN_MAX_KV_GROUPS entries
  kRunKvNumBlocks = kRunKvBlockTables + CATTN_MAX_KV_GROUPS,
  kRunSampledTokenIds = kRunKvNumBlocks + CATTN_MAX_KV_GROUPS,  // 1.2, the drafter's
  kRunDiscardRequestMask,
  kRunBackupNextTokenIds,
  kRunCuNumDraftTokens,
  kRunTargetTokenIds,
  kRunTargetPositions,
  kRunPrevPositions,
  kRunNumAcceptedTokens,
  kRunValidSampledTokenCount,
  kRunPrevNumDraftTokens,
  kRunCpuNumComputedTokens,
  kRunDcpLocalSeqLens,  // the first output
  kRunPcpQueryRestoreIdx,
  kRunMambaBlockTable,
  kRunConv1dNums,
  kRunConv1dMlist,
  kRunConv1dOffsetlist,
  kRunConv1dBatchPtr,
  kRunConv1dTokenChunkOffsetPtr,
  kRunLocalQueryStartLoc,
  kRunLocalSeqLens,
  kRunLocalNumComputedTokens,
  kRunLocalBlockTable,
  kRunDecodeQueryStartLoc,
  kRunExtendQueryStartLoc,
  kRunExtendSeqLens,
  kRunCounts,
  kRunCountsHost,
  kRunOutQueryStartLoc,  // 1.2
  kRunOutSeqLens,
  kRunOutPositions,
  kRunOutNumComputedTokens,
  kRunOutBlockTables,  // CATTN_MAX_KV_GROUPS entries
  kRunOutSlotMappings = kRunOutBlockTables + CATTN_MAX_KV_GROUPS,
  kRunOutLogitsIndices = kRunOutSlotMappings + CATTN_MAX_KV_GROUPS,
  kRunOutCuNumLogits,
  kRunOutExpandedIdxMapping,
  kRunOutExpandedLocalPos,
  kRunOutTokenToReqIndices,
  kRunOutNextTokenIds,  // 1.2, the drafter's
  kRunOutValidSampledTokensCount,
  kRunOutTokenIndicesToSample,
  kRunOutNumRejectedTokens,
  kRunOutDraftInputIds,
  kRunOutDraftPositions,
  kRunOutIsRejectedTokenMask,
  kRunOutIsMaskedTokenMask,
  kRunOutNewTokenIndices,
  kRunOutHiddenStateMapping,
  kRunOutDraftSlotMapping,
  kRunOutDraftSeqLens,
  kRunOutCarriedNumComputedTokens,
  kRunOutCarriedNumAcceptedTokens,
  kRunTensors
};
constexpr int kRunFirstOutput = kRunDcpLocalSeqLens;

// One run tensor: where the caller passes it (the byte offset of its field in the batch or the
// outputs struct), its name in messages, for an output the product bits that write it
// (CATTN_STEP_* bits; required unless `optional` when the plan computes one of them, refused
// when it computes none), and whether it lives on the run's device (counts_host is host
// memory).
struct StepRunTensorInfo {
  StepRunTensor index;
  const char* name;
  bool in_batch;
  size_t offset;  // of the DLTensor pointer in cattn_step_batch_t or cattn_step_outputs_t
  uint32_t products;  // CATTN_STEP_* bits, or kNoProduct (the batch, the counts)
  bool optional;
  bool on_run_device;

  static constexpr uint32_t kNoProduct = 0;
  Use use() const { return in_batch ? Use::In : Use::Out; }
  // The tensor of a full-size batch and outputs (cattn_step_plan_run widens older structs).
  const DLTensor* of(const cattn_step_batch_t& b, const cattn_step_outputs_t& o) const {
    const char* base = in_batch ? reinterpret_cast<const char*>(&b)
                                : reinterpret_cast<const char*>(&o);
    const DLTensor* t;
    std::memcpy(&t, base + offset, sizeof t);
    return t;
  }
};

#define CATTN_STEP_BATCH_TENSOR(index, field) \
  {index, "batch->" #field, true, offsetof(cattn_step_batch_t, field), \
   StepRunTensorInfo::kNoProduct, true, true}
#define CATTN_STEP_PRODUCT_OUTPUT(index, field, product, optional) \
  {index, "outputs->" #field, false, offsetof(cattn_step_outputs_t, field), \
   1u << kernels::product, optional, true}
#define CATTN_STEP_BIT_OUTPUT(index, field, bit, optional) \
  {index, "outputs->" #field, false, offsetof(cattn_step_outputs_t, field), 1u << (bit), \
   optional, true}
#define CATTN_STEP_BITS_OUTPUT(index, field, bits, optional) \
  {index, "outputs->" #field, false, offsetof(cattn_step_outputs_t, field), bits, optional, true}
#define CATTN_STEP_COUNTS_OUTPUT(index, field, on_run_device) \
  {index, "outputs->" #field, false, offsetof(cattn_step_outputs_t, field), \
   StepRunTensorInfo::kNoProduct, true, on_run_device}
#define CATTN_STEP_GROUP_BATCH(index, field, g) \
  {static_cast<StepRunTensor>(index + g), "batch->" #field "[" #g "]", true, \
   offsetof(cattn_step_batch_t, field) + g * sizeof(DLTensor*), StepRunTensorInfo::kNoProduct, \
   true, true}
#define CATTN_STEP_GROUP_OUTPUT(index, field, bit, g) \
  {static_cast<StepRunTensor>(index + g), "outputs->" #field "[" #g "]", false, \
   offsetof(cattn_step_outputs_t, field) + g * sizeof(DLTensor*), 1u << (bit), true, true}
#define CATTN_STEP_GROUPS(M, index, field, ...) \
  M(index, field, __VA_ARGS__ 0), M(index, field, __VA_ARGS__ 1), M(index, field, __VA_ARGS__ 2), \
      M(index, field, __VA_ARGS__ 3), M(index, field, __VA_ARGS__ 4), \
      M(index, field, __VA_ARGS__ 5), M(index, field, __VA_ARGS__ 6), M(index, field, __VA_ARGS__ 7)
// Bit indices of the 1.2 products.
constexpr int kBitInputs = 7, kBitBlockTables = 8, kBitSlotMappings = 9, kBitLogitsIndices = 10,
              kBitTokenToReq = 11, kBitSplit = 12;
constexpr int kBitDraftNextToken = 13, kBitDraftPrepareInputs = 14, kBitDraftExpand = 15,
              kBitDraftSlotMapping = 16, kBitDraftStep = 17, kBitBatchChange = 18;
inline constexpr StepRunTensorInfo kStepRunTensors[kRunTensors] = {
    CATTN_STEP_BATCH_TENSOR(kRunQueryStartLoc, query_start_loc),
    CATTN_STEP_BATCH_TENSOR(kRunSeqLens, seq_lens),
    CATTN_STEP_BATCH_TENSOR(kRunBlockTable, block_table),
    CATTN_STEP_BATCH_TENSOR(kRunCuNumTokens, cu_num_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunLogitsIndices, logits_indices),
    CATTN_STEP_BATCH_TENSOR(kRunNumLogitsIndices, num_logits_indices),
    CATTN_STEP_BATCH_TENSOR(kRunNumReqs, num_reqs),
    CATTN_STEP_BATCH_TENSOR(kRunNumScheduledTokens, num_scheduled_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunIdxMapping, idx_mapping),
    CATTN_STEP_BATCH_TENSOR(kRunNumComputedTokens, num_computed_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunNumDraftTokens, num_draft_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunPositions, positions),
    CATTN_STEP_GROUPS(CATTN_STEP_GROUP_BATCH, kRunKvBlockTables, kv_block_tables, ),
    CATTN_STEP_GROUPS(CATTN_STEP_GROUP_BATCH, kRunKvNumBlocks, kv_num_blocks, ),
    CATTN_STEP_BATCH_TENSOR(kRunSampledTokenIds, sampled_token_ids),
    CATTN_STEP_BATCH_TENSOR(kRunDiscardRequestMask, discard_request_mask),
    CATTN_STEP_BATCH_TENSOR(kRunBackupNextTokenIds, backup_next_token_ids),
    CATTN_STEP_BATCH_TENSOR(kRunCuNumDraftTokens, cu_num_draft_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunTargetTokenIds, target_token_ids),
    CATTN_STEP_BATCH_TENSOR(kRunTargetPositions, target_positions),
    CATTN_STEP_BATCH_TENSOR(kRunPrevPositions, prev_positions),
    CATTN_STEP_BATCH_TENSOR(kRunNumAcceptedTokens, num_accepted_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunValidSampledTokenCount, valid_sampled_token_count),
    CATTN_STEP_BATCH_TENSOR(kRunPrevNumDraftTokens, prev_num_draft_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunCpuNumComputedTokens, cpu_num_computed_tokens),
    CATTN_STEP_PRODUCT_OUTPUT(kRunDcpLocalSeqLens, dcp_local_seq_lens, kStepDcpLocalSeqLens, false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunPcpQueryRestoreIdx, pcp_query_restore_idx,
                              kStepPcpQueryRestoreIdx, false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunMambaBlockTable, mamba_block_table, kStepMambaBlockTable, false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunConv1dNums, conv1d_nums, kStepCausalConv1d, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunConv1dMlist, conv1d_mlist, kStepCausalConv1d, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunConv1dOffsetlist, conv1d_offsetlist, kStepCausalConv1d, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunConv1dBatchPtr, conv1d_batch_ptr, kStepCausalConv1d, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunConv1dTokenChunkOffsetPtr, conv1d_token_chunk_offset_ptr,
                              kStepCausalConv1d, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunLocalQueryStartLoc, local_query_start_loc, kStepLocalAttention,
                              false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunLocalSeqLens, local_seq_lens, kStepLocalAttention, false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunLocalNumComputedTokens, local_num_computed_tokens,
                              kStepLocalAttention, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunLocalBlockTable, local_block_table, kStepLocalAttention, true),
    CATTN_STEP_PRODUCT_OUTPUT(kRunDecodeQueryStartLoc, decode_query_start_loc, kStepFastPrefill,
                              false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunExtendQueryStartLoc, extend_query_start_loc, kStepExtend, false),
    CATTN_STEP_PRODUCT_OUTPUT(kRunExtendSeqLens, extend_seq_lens, kStepExtend, false),
    CATTN_STEP_COUNTS_OUTPUT(kRunCounts, counts, true),
    CATTN_STEP_COUNTS_OUTPUT(kRunCountsHost, counts_host, false),
    CATTN_STEP_BIT_OUTPUT(kRunOutQueryStartLoc, query_start_loc, kBitInputs, false),
    CATTN_STEP_BIT_OUTPUT(kRunOutSeqLens, seq_lens, kBitInputs, false),
    CATTN_STEP_BIT_OUTPUT(kRunOutPositions, positions, kBitInputs, true),
    CATTN_STEP_BIT_OUTPUT(kRunOutNumComputedTokens, num_computed_tokens, kBitInputs, true),
    CATTN_STEP_GROUPS(CATTN_STEP_GROUP_OUTPUT, kRunOutBlockTables, block_tables, kBitBlockTables, ),
    CATTN_STEP_GROUPS(CATTN_STEP_GROUP_OUTPUT, kRunOutSlotMappings, slot_mappings,
                      kBitSlotMappings, ),
    CATTN_STEP_BIT_OUTPUT(kRunOutLogitsIndices, logits_indices, kBitLogitsIndices, false),
    CATTN_STEP_BIT_OUTPUT(kRunOutCuNumLogits, cu_num_logits, kBitLogitsIndices, true),
    CATTN_STEP_BIT_OUTPUT(kRunOutExpandedIdxMapping, expanded_idx_mapping, kBitLogitsIndices, true),
    CATTN_STEP_BIT_OUTPUT(kRunOutExpandedLocalPos, expanded_local_pos, kBitLogitsIndices, true),
    CATTN_STEP_BIT_OUTPUT(kRunOutTokenToReqIndices, token_to_req_indices, kBitTokenToReq, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutNextTokenIds, next_token_ids, CATTN_STEP_DRAFT_NEXT_TOKEN, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutValidSampledTokensCount, valid_sampled_tokens_count,
                           CATTN_STEP_DRAFT_NEXT_TOKEN, true),
    CATTN_STEP_BITS_OUTPUT(kRunOutTokenIndicesToSample, token_indices_to_sample,
                           CATTN_STEP_DRAFT_PREPARE_INPUTS, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutNumRejectedTokens, num_rejected_tokens,
                           CATTN_STEP_DRAFT_PREPARE_INPUTS, true),
    CATTN_STEP_BITS_OUTPUT(kRunOutDraftInputIds, draft_input_ids, CATTN_STEP_DRAFT_EXPAND, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutDraftPositions, draft_positions,
                           CATTN_STEP_DRAFT_EXPAND | CATTN_STEP_DRAFT_STEP, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutIsRejectedTokenMask, is_rejected_token_mask,
                           CATTN_STEP_DRAFT_EXPAND, true),
    CATTN_STEP_BITS_OUTPUT(kRunOutIsMaskedTokenMask, is_masked_token_mask,
                           CATTN_STEP_DRAFT_EXPAND, true),
    CATTN_STEP_BITS_OUTPUT(kRunOutNewTokenIndices, new_token_indices, CATTN_STEP_DRAFT_EXPAND,
                           true),
    CATTN_STEP_BITS_OUTPUT(kRunOutHiddenStateMapping, hidden_state_mapping,
                           CATTN_STEP_DRAFT_EXPAND, true),
    CATTN_STEP_BITS_OUTPUT(kRunOutDraftSlotMapping, draft_slot_mapping,
                           CATTN_STEP_DRAFT_SLOT_MAPPING | CATTN_STEP_DRAFT_STEP, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutDraftSeqLens, draft_seq_lens, CATTN_STEP_DRAFT_STEP, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutCarriedNumComputedTokens, carried_num_computed_tokens,
                           CATTN_STEP_BATCH_CHANGE, false),
    CATTN_STEP_BITS_OUTPUT(kRunOutCarriedNumAcceptedTokens, carried_num_accepted_tokens,
                           CATTN_STEP_BATCH_CHANGE, false),
};
#undef CATTN_STEP_BATCH_TENSOR
#undef CATTN_STEP_PRODUCT_OUTPUT
#undef CATTN_STEP_BIT_OUTPUT
#undef CATTN_STEP_BITS_OUTPUT
#undef CATTN_STEP_COUNTS_OUTPUT
#undef CATTN_STEP_GROUP_BATCH
#undef CATTN_STEP_GROUP_OUTPUT
#undef CATTN_STEP_GROUPS

constexpr bool step_run_table_in_order() {
  for (int i = 0; i < kRunTensors; ++i)
    if (kStepRunTensors[i].index != i || kStepRunTensors[i].in_batch != (i < kRunFirstOutput))
      return false;
  return true;
}
static_assert(kRunTensors * 7 + 3 <= CallArgs::kMaxRanges,
              "CallArgs holds every range a step-plan run records");
static_assert(step_run_table_in_order(),
              "kStepRunTensors lists the batch, then the outputs, in StepRunTensor order");

// A run's tensors as checked arguments, indexed by StepRunTensor (absent ones have present()
// false).
using StepRunArgs = const TensorArg* const[kRunTensors];

// The five conv1d outputs (nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr), as the
// conv1d checks and parameters take them.
struct StepConv1dOutputs {
  const TensorArg* outs[5];
};
inline StepConv1dOutputs step_conv1d_outputs(StepRunArgs& t) {
  static_assert(kRunConv1dTokenChunkOffsetPtr == kRunConv1dNums + 4, "the conv1d outputs in order");
  StepConv1dOutputs c;
  for (int i = 0; i < 5; ++i) c.outs[i] = t[kRunConv1dNums + i];
  return c;
}

// The local-attention product's tensors, as its checks and parameters take them.
inline LocalAttentionCapturableTensors step_local_attention_tensors(StepRunArgs& t) {
  return {*t[kRunQueryStartLoc],      *t[kRunSeqLens],     *t[kRunBlockTable],
          *t[kRunLocalQueryStartLoc], *t[kRunLocalSeqLens], *t[kRunLocalNumComputedTokens],
          *t[kRunLocalBlockTable]};
}

}  // namespace cattn
