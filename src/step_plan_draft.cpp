// SPDX-License-Identifier: Apache-2.0
// The step plan's drafter products: which may be selected together, their parameters (the
// speculative-decoding calls' own rules) and their run tensors (each call's shapes, with the
// plan's capacities). src/step_plan_draft.h.
#include "step_plan_draft.h"

#include <string>

#include "common/error.h"
#include "common/param_checks.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "kernels/spec_decode.h"
#include "kernels/step_plan.h"

namespace cattn {
namespace {

struct Bit {
  uint32_t bit;
  const char* name;
};
constexpr Bit kChain[] = {{CATTN_STEP_DRAFT_NEXT_TOKEN, "CATTN_STEP_DRAFT_NEXT_TOKEN"},
                          {CATTN_STEP_DRAFT_PREPARE_INPUTS, "CATTN_STEP_DRAFT_PREPARE_INPUTS"},
                          {CATTN_STEP_DRAFT_EXPAND, "CATTN_STEP_DRAFT_EXPAND"},
                          {CATTN_STEP_DRAFT_SLOT_MAPPING, "CATTN_STEP_DRAFT_SLOT_MAPPING"}};
constexpr Bit kSolo[] = {{CATTN_STEP_DRAFT_STEP, "CATTN_STEP_DRAFT_STEP"},
                         {CATTN_STEP_BATCH_CHANGE, "CATTN_STEP_BATCH_CHANGE"}};

std::string hex(uint32_t v) { return step_plan_hex(v); }
void needed(const TensorArg& t, const char* why) { step_plan_expect_needed(t, why); }
void within(const TensorArg& t, int64_t n, const char* what, const char* cap_name, int64_t cap) {
  step_plan_expect_within(t, n, what, cap_name, cap);
}

int64_t check_chain(const StepPlanSpec& plan, StepRunArgs& a, int64_t reqs) {
  const cattn_step_plan_desc_t& d = plan.desc;
  const cattn_step_draft_params_t& p = d.draft;
  const bool prepare = plan.has_bit(kBitDraftPrepareInputs),
             expand = plan.has_bit(kBitDraftExpand), slots = plan.has_bit(kBitDraftSlotMapping);
  const TensorArg& qsl = *a[kRunQueryStartLoc];
  needed(qsl, "the drafter products read the verified batch's");
  reqs = qsl.size(0) - 1;  // the generic checks made it a bounded vector of B + 1 <= cap + 1
  const TensorArg& sampled = *a[kRunSampledTokenIds];
  const TensorArg& discard = *a[kRunDiscardRequestMask];
  const TensorArg& backup = *a[kRunBackupNextTokenIds];
  needed(sampled, "CATTN_STEP_DRAFT_NEXT_TOKEN reads it");
  needed(backup, "CATTN_STEP_DRAFT_NEXT_TOKEN reads it");
  sampled.expect_ndim(2).expect_index_dtype().expect_size(0, reqs);
  if (discard.present()) expect_flags(discard, reqs);
  expect_index_vector(backup, reqs);
  expect_index_output(*a[kRunOutNextTokenIds], reqs);
  if (a[kRunOutValidSampledTokensCount]->present())
    expect_index_output(*a[kRunOutValidSampledTokensCount], reqs);
  if (prepare) {
    const TensorArg& cu = *a[kRunCuNumDraftTokens];
    needed(cu, "CATTN_STEP_DRAFT_PREPARE_INPUTS reads it");
    expect_index_vector(cu, reqs);
    expect_index_output(*a[kRunOutTokenIndicesToSample], reqs);
    if (a[kRunOutNumRejectedTokens]->present())
      expect_index_output(*a[kRunOutNumRejectedTokens], reqs);
  }
  if (expand) {
    const TensorArg& hid = *a[kRunOutHiddenStateMapping];
    if (hid.present() && p.shift_input_ids == 0)
      fail_arg(CATTN_INVALID_ARGUMENT, hid.fn(), hid.name(),
               "is set but desc->draft.shift_input_ids is 0", "a tensor",
               "NULL (the mapping is written with shift_input_ids only)");
    const int64_t cap = plan.shape.draft_token_capacity;
    const TensorArg& ids = *a[kRunTargetTokenIds];
    const TensorArg& tpos = *a[kRunTargetPositions];
    needed(ids, "CATTN_STEP_DRAFT_EXPAND reads it");
    needed(tpos, "CATTN_STEP_DRAFT_EXPAND reads it");
    ids.expect_ndim(1).expect_index_dtype();
    within(ids, ids.size(0), "tokens", "desc->max_num_tokens", d.max_num_tokens);
    tpos.expect_ndim(1).expect_index_dtype();
    expect_index_output(*a[kRunOutDraftInputIds], cap);
    expect_index_output(*a[kRunOutDraftPositions], cap);
    if (a[kRunOutIsRejectedTokenMask]->present())
      expect_flags_output(*a[kRunOutIsRejectedTokenMask], cap);
    if (a[kRunOutIsMaskedTokenMask]->present())
      expect_flags_output(*a[kRunOutIsMaskedTokenMask], cap);
    if (a[kRunOutNewTokenIndices]->present())
      expect_index_output(*a[kRunOutNewTokenIndices],
                          d.max_num_reqs * p.num_padding_slots_per_request);
    if (hid.present()) expect_index_output(hid, d.max_num_tokens);
  }
  if (slots) {
    // block_table [B, W]: the generic checks held it to B rows and the plan's columns.
    needed(*a[kRunBlockTable], "CATTN_STEP_DRAFT_SLOT_MAPPING reads it");
    expect_slot_output(*a[kRunOutDraftSlotMapping], plan.shape.draft_token_capacity);
  }
  return reqs;
}

int64_t check_draft_step(StepRunArgs& a, int64_t reqs) {
  const TensorArg& pos = *a[kRunPositions];
  const TensorArg& seq = *a[kRunSeqLens];
  const TensorArg& table = *a[kRunBlockTable];
  needed(pos, "CATTN_STEP_DRAFT_STEP reads it");
  needed(seq, "CATTN_STEP_DRAFT_STEP reads it");
  needed(table, "CATTN_STEP_DRAFT_STEP reads it");
  // seq_lens and block_table fixed B (the generic checks); positions must agree.
  expect_index_vector(pos, reqs);
  const TensorArg& clamped = *a[kRunOutDraftPositions];
  const TensorArg& seq_out = *a[kRunOutDraftSeqLens];
  expect_index_output(clamped, reqs);
  seq_out.expect_ndim(1).expect_index_dtype().expect_writable().expect_size(0, reqs);
  expect_slot_output(*a[kRunOutDraftSlotMapping], reqs);
  // Row i reads its position and seq_len before it writes them: the very views are safe.
  allow_in_place(clamped, pos);
  allow_in_place(seq_out, seq);
  return reqs;
}

int64_t check_batch_change(const StepPlanSpec& plan, StepRunArgs& a) {
  const TensorArg& prev = *a[kRunPrevPositions];
  const TensorArg& nct = *a[kRunNumComputedTokens];
  const TensorArg& acc = *a[kRunNumAcceptedTokens];
  const TensorArg& valid = *a[kRunValidSampledTokenCount];
  const TensorArg& drafts = *a[kRunPrevNumDraftTokens];
  const TensorArg& cpu = *a[kRunCpuNumComputedTokens];
  const char* why = "CATTN_STEP_BATCH_CHANGE reads it";
  for (const TensorArg* t : {&prev, &nct, &acc, &valid, &drafts, &cpu}) needed(*t, why);
  prev.expect_ndim(1).expect_index_dtype();
  const int64_t n = prev.size(0);
  within(prev, n, "rows", "desc->max_num_reqs", plan.desc.max_num_reqs);
  nct.expect_ndim(1).expect_index_dtype();
  if (nct.size(0) < n)
    fail_arg(CATTN_INSUFFICIENT_SIZE, nct.fn(), nct.name(), "has fewer rows than the batch",
             nct.shape_string(), "at least n = " + std::to_string(n));
  expect_index_vector(acc, n);
  expect_index_vector(cpu, n);
  valid.expect_ndim(1).expect_index_dtype();
  expect_index_vector(drafts, valid.size(0));
  const TensorArg& nct_out = *a[kRunOutCarriedNumComputedTokens];
  const TensorArg& acc_out = *a[kRunOutCarriedNumAcceptedTokens];
  expect_index_output(nct_out, n);
  acc_out.expect_ndim(1).expect_index_dtype().expect_writable().expect_size(0, n);
  // The kernel stages every new count before it writes one, and row k reads its accepted count
  // before it writes it: the very views are safe.
  allow_in_place(nct_out, nct);
  allow_in_place(acc_out, acc);
  return n;
}

}  // namespace

void check_draft_selection(const char* fn, const cattn_step_plan_desc_t& d, size_t given) {
  const uint32_t bits = d.products;
  if (given < sizeof(cattn_step_plan_desc_t))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products", "selects a 1.2 product in a 1.1 desc",
             hex(bits),
             "1.1 products only (CATTN_STEP_ALL_PRODUCTS) for struct_size " +
                 std::to_string(given));
  if (bits & CATTN_STEP_INPUT_PRODUCTS)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products",
             "selects step-input and drafter products together", hex(bits),
             "one or the other: the drafter products read the sampler's output of a step whose "
             "inputs come before it (two plans)");
  for (const Bit& b : kSolo)
    if ((bits & b.bit) && bits != b.bit)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products",
               (std::string("selects ") + b.name + " with other products").c_str(), hex(bits),
               std::string(b.name) + " alone (it runs between the steps the others belong to)");
  for (int i = 1; i < 4; ++i)
    if ((bits & kChain[i].bit) && !(bits & kChain[i - 1].bit))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products",
               (std::string("selects ") + kChain[i].name + " without " + kChain[i - 1].name)
                   .c_str(),
               hex(bits), "the drafter products before it too (it reads their values)");
}

void check_draft_desc(const char* fn, StepPlanSpec& plan) {
  const cattn_step_plan_desc_t& d = plan.desc;
  const uint32_t bits = d.products;
  const cattn_step_draft_params_t& p = d.draft;
  require_reserved_zero(fn, "desc->draft.reserved0", p.reserved0);
  if (bits & CATTN_STEP_DRAFT_NEXT_TOKEN)
    expect_at_least(fn, "desc->draft.vocab_size", p.vocab_size, 1);
  if (bits & CATTN_STEP_DRAFT_EXPAND) {
    const int64_t P = p.num_padding_slots_per_request;
    if (P < 1 || P > kMaxPaddingSlotsPerRequest)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->draft.num_padding_slots_per_request",
               "is out of range", std::to_string(P),
               "in [1, " + std::to_string(kMaxPaddingSlotsPerRequest) + "]");
    if (p.shift_input_ids != 0 && p.shift_input_ids != 1)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->draft.shift_input_ids", "is not 0 or 1",
               std::to_string(p.shift_input_ids), "0 or 1");
    expect_at_least(fn, "desc->draft.max_tokens_per_request", p.max_tokens_per_request, 0);
    checked_mul(fn, "desc->max_num_reqs * desc->draft.num_padding_slots_per_request",
                d.max_num_reqs, P);
    plan.shape.draft_token_capacity = checked_add(
        fn, "the drafter's token capacity", d.max_num_tokens,
        checked_mul(fn, "the drafter's token capacity", d.max_num_reqs, P - p.shift_input_ids));
  }
  if (bits & (CATTN_STEP_DRAFT_SLOT_MAPPING | CATTN_STEP_DRAFT_STEP)) {
    expect_at_least(fn, "desc->draft.block_size", p.block_size, 1);
    expect_at_least(fn, "desc->draft.max_model_len", p.max_model_len, 1);
    expect_at_least(fn, "desc->max_num_blocks_per_req", d.max_num_blocks_per_req, 1);
  }
  if ((bits & CATTN_STEP_BATCH_CHANGE) && d.max_num_reqs > kernels::kBatchChangeMaxRows)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->max_num_reqs",
             "is too large for CATTN_STEP_BATCH_CHANGE", std::to_string(d.max_num_reqs),
             "at most " + std::to_string(kernels::kBatchChangeMaxRows) +
                 " (one block stages every row)");
  if (plan.has_draft_chain())
    plan.draft_end = plan.block_end[kernels::kStepProducts - 1] +
                     kernels::step_plan_draft_blocks(d.max_num_reqs);
}

int64_t check_draft_run(const StepPlanSpec& plan, StepRunArgs& a, int64_t reqs) {
  const TensorArg& counts = *a[kRunCounts];
  const TensorArg& counts_host = *a[kRunCountsHost];
  const bool solo = plan.has_bit(kBitDraftStep) || plan.has_bit(kBitBatchChange);
  for (const TensorArg* t : {&counts, &counts_host})
    if (solo && t->present())
      fail_arg(CATTN_INVALID_ARGUMENT, t->fn(), t->name(), "is set for a plan that writes no counts",
               "a tensor", "NULL (CATTN_STEP_DRAFT_STEP and CATTN_STEP_BATCH_CHANGE run alone)");
  if (plan.has_bit(kBitBatchChange)) return check_batch_change(plan, a);
  if (plan.has_bit(kBitDraftStep)) return check_draft_step(a, reqs);
  return check_chain(plan, a, reqs);
}

}  // namespace cattn
