/* SPDX-License-Identifier: Apache-2.0 */
// What the step plan's entry point (src/step_plan.cpp) and its device side
// (device/step_plan_device.cpp) share: what creation fixed - the desc, the outputs' capacities
// and the launch layout - and the one table of a run's tensors. The plan object itself, with
// the memo of its last checked run, belongs to the entry point (src/step_plan.cpp,
// src/step_plan_memo.h).
#pragma once

#include <cstdint>

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
  // Blocks of each product, as kernels::StepPlanParams::block_end.
  int64_t block_end[kernels::kStepProducts] = {};

  bool has(kernels::StepProduct k) const { return (desc.products >> k) & 1u; }
};

// The run's tensors in a fixed order: the batch's six, then the outputs' seventeen. Every list
// of them is kStepRunTensors below, indexed by these.
enum StepRunTensor : int {
  kRunQueryStartLoc = 0,
  kRunSeqLens,
  kRunBlockTable,
  kRunCuNumTokens,
  kRunLogitsIndices,
  kRunNumLogitsIndices,
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
  kRunTensors
};
constexpr int kRunFirstOutput = kRunDcpLocalSeqLens;

// One run tensor: where the caller passes it (a field of the batch or of the outputs), its
// name in messages, for an output the product that writes it (required unless `optional`;
// refused when the plan does not compute that product), and whether it lives on the run's
// device (counts_host is host memory).
struct StepRunTensorInfo {
  StepRunTensor index;
  const char* name;
  const DLTensor* cattn_step_batch_t::*batch_field;  // NULL for an output
  DLTensor* cattn_step_outputs_t::*outputs_field;    // NULL for a batch tensor
  int product;  // a kernels::StepProduct, or kNoProduct (the batch, the counts)
  bool optional;
  bool on_run_device;

  static constexpr int kNoProduct = -1;
  Use use() const { return batch_field != nullptr ? Use::In : Use::Out; }
  const DLTensor* of(const cattn_step_batch_t& b, const cattn_step_outputs_t& o) const {
    return batch_field != nullptr ? b.*batch_field : o.*outputs_field;
  }
};

#define CATTN_STEP_BATCH_TENSOR(index, field) \
  {index, "batch->" #field, &cattn_step_batch_t::field, nullptr, StepRunTensorInfo::kNoProduct, \
   true, true}
#define CATTN_STEP_PRODUCT_OUTPUT(index, field, product, optional) \
  {index, "outputs->" #field, nullptr, &cattn_step_outputs_t::field, kernels::product, optional, \
   true}
#define CATTN_STEP_COUNTS_OUTPUT(index, field, on_run_device) \
  {index, "outputs->" #field, nullptr, &cattn_step_outputs_t::field, \
   StepRunTensorInfo::kNoProduct, true, on_run_device}
inline constexpr StepRunTensorInfo kStepRunTensors[kRunTensors] = {
    CATTN_STEP_BATCH_TENSOR(kRunQueryStartLoc, query_start_loc),
    CATTN_STEP_BATCH_TENSOR(kRunSeqLens, seq_lens),
    CATTN_STEP_BATCH_TENSOR(kRunBlockTable, block_table),
    CATTN_STEP_BATCH_TENSOR(kRunCuNumTokens, cu_num_tokens),
    CATTN_STEP_BATCH_TENSOR(kRunLogitsIndices, logits_indices),
    CATTN_STEP_BATCH_TENSOR(kRunNumLogitsIndices, num_logits_indices),
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
};
#undef CATTN_STEP_BATCH_TENSOR
#undef CATTN_STEP_PRODUCT_OUTPUT
#undef CATTN_STEP_COUNTS_OUTPUT

constexpr bool step_run_table_in_order() {
  for (int i = 0; i < kRunTensors; ++i)
    if (kStepRunTensors[i].index != i || (kStepRunTensors[i].batch_field != nullptr) !=
                                             (i < kRunFirstOutput))
      return false;
  return true;
}
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
