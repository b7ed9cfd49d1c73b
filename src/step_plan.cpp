// SPDX-License-Identifier: Apache-2.0
// The step plan (cattn_step_plan_*): every selected product of an engine step from the batch's
// device tensors in one launch. Entry points: the desc's checks and the capacities and launch
// layout they fix (creation), the run's argument checks, the memo of the last checked run
// (step_plan_memo.h), and dispatch to device/step_plan_device.cpp.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "common/build_config.h"
#include "common/error.h"
#include "common/handle_registry.h"
#include "common/param_checks.h"
#include "common/step_inputs.h"
#include "common/step_plan.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/step_plan_device.h"
#include "kernels/step_inputs.h"
#include "step_plan_draft.h"
#include "step_plan_memo.h"

// The object behind cattn_step_plan_t: what creation fixed (never changed afterwards) and the
// memo of the last run that passed every check, the one part a run changes (behind its own
// lock, so runs on any number of threads may share a plan).
struct cattn_step_plan_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::StepPlan);
  cattn::StepPlanSpec spec;
  mutable cattn::StepRunMemo memo;
};

namespace {

using cattn::StepPlanSpec;
using cattn::TensorArg;
using StepPlan = cattn_step_plan_s;
namespace k = cattn::kernels;

void require_plan(const char* fn, const StepPlan* plan) {
  cattn::require_live_handle(fn, "plan", plan, cattn::HandleKind::StepPlan);
}

// The plan's capacities name a negative value as such (param_checks' rule says out of range).
void expect_at_least(const char* fn, const char* name, int64_t v, int64_t min) {
  if (v < min)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, name, v < 0 ? "is negative" : "is out of range",
                    std::to_string(v), ">= " + std::to_string(min));
}

int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

std::string hex(uint32_t v) { return cattn::step_plan_hex(v); }

// The step-input products' parameters (1.2 fields of the desc).
void check_inputs_desc(const char* fn, const cattn_step_plan_desc_t& d, size_t given) {
  if (given < sizeof(cattn_step_plan_desc_t))
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products",
                    "selects a 1.2 product in a 1.1 desc", hex(d.products),
                    "1.1 products only (CATTN_STEP_ALL_PRODUCTS) for struct_size " +
                        std::to_string(given));
  const uint32_t bits = d.products;
  const cattn_step_inputs_params_t& in = d.inputs;
  if (d.max_num_reqs > k::kStepInputsMaxRows)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->max_num_reqs",
                    "is too large for the step-input products", std::to_string(d.max_num_reqs),
                    "at most " + std::to_string(k::kStepInputsMaxRows));
  if (d.max_num_tokens > INT32_MAX)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->max_num_tokens",
                    "is too large for the step-input products", std::to_string(d.max_num_tokens),
                    "at most INT32_MAX (query_start_loc is int32 in vLLM)");
  const bool groups = bits & (CATTN_STEP_BLOCK_TABLES | CATTN_STEP_SLOT_MAPPINGS);
  if (groups && (in.num_kv_groups < 1 || in.num_kv_groups > CATTN_MAX_KV_GROUPS))
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->inputs.num_kv_groups", "is out of range",
                    std::to_string(in.num_kv_groups),
                    "1 to " + std::to_string(CATTN_MAX_KV_GROUPS) +
                        " with CATTN_STEP_BLOCK_TABLES or CATTN_STEP_SLOT_MAPPINGS");
  if (!groups && in.num_kv_groups != 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->inputs.num_kv_groups",
                    "is set without a product that reads the groups",
                    std::to_string(in.num_kv_groups), "0");
  const bool mrv2 = in.slot_mapping_contract == CATTN_SLOT_MAPPING_MRV2;
  if ((bits & (CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES)) ||
      ((bits & CATTN_STEP_SLOT_MAPPINGS) && mrv2))
    expect_at_least(fn, "desc->max_num_persistent_reqs", d.max_num_persistent_reqs, 1);
  static const char* const kGroup[CATTN_MAX_KV_GROUPS] = {
      "desc->kv_groups[0].", "desc->kv_groups[1].", "desc->kv_groups[2].",
      "desc->kv_groups[3].", "desc->kv_groups[4].", "desc->kv_groups[5].",
      "desc->kv_groups[6].", "desc->kv_groups[7]."};
  if (in.num_kv_groups > 0)
    cattn::check_slot_mapping_contract(fn, "desc->inputs.slot_mapping_contract",
                                       in.slot_mapping_contract);
  for (int g = 0; g < in.num_kv_groups; ++g) {
    const cattn_kv_group_params_t& kg = d.kv_groups[g];
    const std::string pre = kGroup[g];
    cattn::require_reserved_zero(fn, (pre + "reserved0").c_str(), kg.reserved0);
    if (kg.slot_mode != CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT && kg.slot_mode != CATTN_SLOT_MODE_NONE)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, (pre + "slot_mode").c_str(),
                      "is not a slot mode", std::to_string(kg.slot_mode),
                      "CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT (0) or CATTN_SLOT_MODE_NONE (1)");
    expect_at_least(fn, (pre + "max_num_blocks").c_str(), kg.max_num_blocks, 1);
    cattn::check_slot_mapping_params(fn, kGroup[g], "desc->inputs.",
                                     in.slot_mapping_contract, kg.block_size,
                                     kg.kernel_block_size, in.dcp_size, in.dcp_rank,
                                     in.dcp_kv_cache_interleave_size);
  }
  if (bits & CATTN_STEP_LOGITS_INDICES)
    cattn::check_num_new_sampled(fn, "desc->inputs.", in.num_new_sampled_tokens);
  if (bits & CATTN_STEP_SPLIT) {
    if (in.decode_threshold < 0 || in.decode_threshold > INT32_MAX)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->inputs.decode_threshold",
                      "is out of range", std::to_string(in.decode_threshold), "0 to INT32_MAX");
    if (in.require_uniform != 0 && in.require_uniform != 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->inputs.require_uniform", "is not 0 or 1",
                      std::to_string(in.require_uniform), "0 or 1");
  }
  const bool reads_table = bits & (CATTN_STEP_MAMBA_BLOCK_TABLE | CATTN_STEP_LOCAL_ATTENTION);
  if (reads_table && (bits & CATTN_STEP_BLOCK_TABLES)) {
    if (in.table_group < 0 || in.table_group >= in.num_kv_groups)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->inputs.table_group", "is out of range",
                      std::to_string(in.table_group),
                      "in [0, " + std::to_string(in.num_kv_groups) + ")");
    expect_at_least(fn, "desc->max_num_blocks_per_req", d.max_num_blocks_per_req,
                    d.kv_groups[in.table_group].max_num_blocks);
  }
}

// Checks the desc and derives the capacities and, from them, each product's blocks.
void plan_step(const char* fn, const cattn_step_plan_desc_t& d, StepPlanSpec& plan) {
  constexpr uint32_t kKnown =
      CATTN_STEP_ALL_PRODUCTS | CATTN_STEP_INPUT_PRODUCTS | CATTN_STEP_DRAFT_PRODUCTS;
  if (d.products == 0 || (d.products & ~kKnown) != 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->products", "is not a set of products",
                    hex(d.products),
                    "a nonzero OR of CATTN_STEP_* bits (CATTN_STEP_ALL_PRODUCTS = 0x7f, "
                    "CATTN_STEP_INPUT_PRODUCTS = 0x1f80, CATTN_STEP_DRAFT_PRODUCTS = 0x7e000)");
  if (d.reserved0 != 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "desc->reserved0", "is not zero",
                    std::to_string(d.reserved0), "0");
  expect_at_least(fn, "desc->max_num_reqs", d.max_num_reqs, 1);
  expect_at_least(fn, "desc->max_num_tokens", d.max_num_tokens, 0);
  // Only the products that read a block table need room for one.
  const bool reads_table = (d.products & (CATTN_STEP_MAMBA_BLOCK_TABLE | CATTN_STEP_LOCAL_ATTENTION));
  expect_at_least(fn, "desc->max_num_blocks_per_req", d.max_num_blocks_per_req,
                  reads_table ? 1 : 0);
  expect_at_least(fn, "desc->max_num_logits", d.max_num_logits, 0);
  // A 1.1 desc ends before the 1.2 fields: they read as zero (no step-input product).
  const size_t given = std::min(d.struct_size, sizeof(cattn_step_plan_desc_t));
  std::memcpy(&plan.desc, &d, given);
  if (given < sizeof(cattn_step_plan_desc_t))
    std::memset(reinterpret_cast<char*>(&plan.desc) + given, 0,
                sizeof(cattn_step_plan_desc_t) - given);
  plan.desc.struct_size = sizeof(cattn_step_plan_desc_t);
  if (plan.has_draft()) cattn::check_draft_selection(fn, plan.desc, given);
  if (plan.has_inputs()) check_inputs_desc(fn, plan.desc, given);
  const int64_t reqs = d.max_num_reqs, tokens = d.max_num_tokens;
  // Per-request outputs take B + 1 entries; every size below is a product of these and must
  // stay within int64 (checked_* name what overflowed).
  const int64_t rows = cattn::checked_add(fn, "desc->max_num_reqs + 1", reqs, 1);
  cattn_step_plan_shape_t& s = plan.shape;
  s.struct_size = sizeof(cattn_step_plan_shape_t);
  int64_t elements[k::kStepProducts] = {};
  if (plan.has(k::kStepDcpLocalSeqLens)) {
    const cattn_step_dcp_params_t& p = d.dcp;
    cattn::check_dcp_params(fn, "desc->dcp.", p.dcp_size, p.dcp_rank,
                            p.dcp_kv_cache_interleave_size);
    elements[k::kStepDcpLocalSeqLens] =
        p.dcp_rank == CATTN_DCP_ALL_RANKS
            ? cattn::checked_mul(fn, "desc->max_num_reqs * desc->dcp.dcp_size", reqs, p.dcp_size)
            : reqs;
  }
  if (plan.has(k::kStepPcpQueryRestoreIdx)) {
    s.restore_capacity = tokens;
    elements[k::kStepPcpQueryRestoreIdx] = tokens;
  }
  if (plan.has(k::kStepMambaBlockTable)) {
    const cattn_step_mamba_params_t& p = d.mamba;
    s.mamba_columns = cattn::check_mamba_params(fn, "desc->mamba.", p.mamba_cache_mode,
                                                p.reserved0, p.block_size,
                                                p.num_speculative_blocks);
    elements[k::kStepMambaBlockTable] = cattn::checked_mul(
        fn, "desc->max_num_reqs * the mamba columns", reqs,
        s.mamba_columns > 0 ? s.mamba_columns : d.max_num_blocks_per_req);
  }
  if (plan.has(k::kStepCausalConv1d)) {
    cattn::check_block_m(fn, "desc->conv1d.", d.conv1d.block_m);
    s.conv1d_capacity = cattn::checked_add(fn, "the conv1d capacity",
                                           cdiv(tokens, d.conv1d.block_m), reqs);
    elements[k::kStepCausalConv1d] = std::max(s.conv1d_capacity, reqs);
  }
  if (plan.has(k::kStepLocalAttention)) {
    const cattn_step_local_attention_params_t& p = d.local_attention;
    cattn::check_local_attention_sizes(fn, "desc->local_attention.", p.attn_chunk_size,
                                       p.block_size);
    // A request of q >= 1 query tokens makes at most min(2 + (q - 1) / C, q) virtual batches
    // and a zero-length one makes one, so B requests of T tokens make at most both bounds.
    const int64_t by_chunks = cattn::checked_add(
        fn, "the local-attention capacity",
        cattn::checked_mul(fn, "the local-attention capacity", reqs, 2),
        cdiv(tokens, p.attn_chunk_size));
    const int64_t by_tokens = cattn::checked_add(fn, "the local-attention capacity", tokens, reqs);
    s.local_capacity = std::min(by_chunks, by_tokens);
    s.local_pages = p.attn_chunk_size / p.block_size;
    elements[k::kStepLocalAttention] = cattn::checked_mul(
        fn, "the local-attention capacity * pages", s.local_capacity, s.local_pages);
  }
  if (plan.has(k::kStepFastPrefill)) elements[k::kStepFastPrefill] = 1;
  if (plan.has(k::kStepExtend)) {
    cattn::check_extend_n(fn, "desc->extend.", d.extend.n);
    elements[k::kStepExtend] = rows;
  }
  int64_t end = 0;
  for (int i = 0; i < k::kStepProducts; ++i) {
    if (plan.has(static_cast<k::StepProduct>(i)))
      end += k::step_plan_blocks(static_cast<k::StepProduct>(i), elements[i]);
    plan.block_end[i] = end;
  }
  if (plan.has_draft()) cattn::check_draft_desc(fn, plan);
}

// An output of a product: required when the plan computes it (unless optional), refused when
// it does not.
void expect_output_use(const StepPlanSpec& plan, const cattn::StepRunTensorInfo& info,
                       const TensorArg& t) {
  if ((plan.desc.products & info.products) != 0) {
    if (!t.present() && !info.optional)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "is NULL", "NULL",
                      "an output: the plan computes its product");
  } else if (t.present()) {
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(),
                    "is set for a product the plan does not compute", "a tensor",
                    "NULL (desc->products selects " + std::to_string(plan.desc.products) + ")");
  }
}

void expect_needed(const TensorArg& t, const char* why) {
  cattn::step_plan_expect_needed(t, why);
}

void expect_vector(const TensorArg& t) { t.expect_ndim(1).expect_index_dtype(); }
void expect_output(const TensorArg& t, int64_t size) {
  t.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, size);
}

void expect_within(const TensorArg& t, int64_t n, const char* what, const char* cap_name,
                   int64_t cap) {
  cattn::step_plan_expect_within(t, n, what, cap_name, cap);
}

template <class T>
const T* widen(const T* given, T& wide) {
  if (given->struct_size >= sizeof(T)) return given;
  std::memset(&wide, 0, sizeof wide);
  std::memcpy(&wide, given, given->struct_size);
  return &wide;
}

void refuse_computed(const TensorArg& t, const char* product) {
  if (t.present())
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "is set but the plan computes it",
                    "a tensor", std::string("NULL (") + product + " is selected)");
}

void expect_counts(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_index_dtype().expect_writable().expect_capacity(n);
}

// The batch tensors of the step-input products; returns B.
int64_t check_inputs_batch(const StepPlanSpec& spec, const TensorArg* const* a, int64_t reqs) {
  namespace c = cattn;
  const cattn_step_plan_desc_t& d = spec.desc;
  const bool inputs = spec.has_bit(c::kBitInputs), tables = spec.has_bit(c::kBitBlockTables);
  const bool slots = spec.has_bit(c::kBitSlotMappings);
  const bool v1 = d.inputs.slot_mapping_contract == CATTN_SLOT_MAPPING_V1;
  const TensorArg& sched = *a[c::kRunNumScheduledTokens];
  const TensorArg& qsl = *a[c::kRunQueryStartLoc];
  const TensorArg& idx = *a[c::kRunIdxMapping];
  const TensorArg& nct = *a[c::kRunNumComputedTokens];
  const TensorArg& nreq = *a[c::kRunNumReqs];
  const TensorArg& drafts = *a[c::kRunNumDraftTokens];
  const TensorArg& pos = *a[c::kRunPositions];
  if (inputs) {
    expect_needed(sched, "CATTN_STEP_INPUTS reads it");
    expect_needed(nct, "CATTN_STEP_INPUTS reads it");
  } else if (slots || spec.has_bit(c::kBitLogitsIndices) || spec.has_bit(c::kBitTokenToReq) ||
             spec.has_bit(c::kBitSplit)) {
    expect_needed(qsl, "the step-input products read it without CATTN_STEP_INPUTS");
  }
  if (inputs || tables || (slots && !v1)) expect_needed(idx, "the plan's products read it");
  if (slots && !inputs) expect_needed(pos, "the slot mappings read it without CATTN_STEP_INPUTS");
  if (sched.present()) {
    expect_vector(sched);
    if (reqs < 0) reqs = sched.size(0);
    sched.expect_size(0, reqs);
  }
  if (idx.present()) {
    expect_vector(idx);
    if (reqs < 0) reqs = idx.size(0);
    idx.expect_size(0, reqs);
  }
  if (reqs < 0) reqs = 0;
  expect_within(sched.present() ? sched : idx, reqs, "requests", "desc->max_num_reqs",
                d.max_num_reqs);
  if (nreq.present()) c::expect_index_scalar(nreq);
  if (nct.present()) {
    expect_vector(nct);
    expect_within(nct, nct.size(0), "rows", "desc->max_num_persistent_reqs",
                  d.max_num_persistent_reqs);
  }
  if (drafts.present()) drafts.expect_ndim(1).expect_index_dtype().expect_size(0, reqs);
  if (pos.present()) expect_vector(pos);
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    const TensorArg& t = *a[c::kRunKvBlockTables + g];
    const TensorArg& nb = *a[c::kRunKvNumBlocks + g];
    const bool live = g < d.inputs.num_kv_groups;
    const bool token = live && d.kv_groups[g].slot_mode == CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT;
    if (live && (tables || (slots && token))) expect_needed(t, "the plan reads the group's table");
    if (!live && (t.present() || nb.present()))
      c::fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.present() ? t.name() : nb.name(),
                  "is set past desc->inputs.num_kv_groups", "a tensor", "NULL");
    if (t.present()) {
      t.expect_ndim(2).expect_index_dtype().expect_size(1, d.kv_groups[g].max_num_blocks);
      if (slots && v1 && !tables) t.expect_size(0, reqs);
      else expect_within(t, t.size(0), "rows", "desc->max_num_persistent_reqs",
                         d.max_num_persistent_reqs);
    }
    if (nb.present()) {
      expect_vector(nb);
      nb.expect_size(0, t.present() ? t.size(0) : 0);
    }
  }
  return reqs;
}

// The step-input products' outputs: presence by product and group, then shapes.
void check_inputs_outputs(const StepPlanSpec& spec, const TensorArg* const* a, int64_t reqs) {
  namespace c = cattn;
  const cattn_step_plan_desc_t& d = spec.desc;
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    const bool live = g < d.inputs.num_kv_groups;
    const bool token = live && d.kv_groups[g].slot_mode == CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT;
    const struct {
      const TensorArg& t;
      bool wanted;
    } outs[] = {{*a[c::kRunOutBlockTables + g], live && spec.has_bit(c::kBitBlockTables)},
                {*a[c::kRunOutSlotMappings + g], token && spec.has_bit(c::kBitSlotMappings)}};
    for (const auto& o : outs) {
      if (o.wanted && !o.t.present())
        c::fail_arg(CATTN_INVALID_ARGUMENT, o.t.fn(), o.t.name(), "is NULL", "NULL",
                    "an output: the plan computes it for this group");
      if (!o.wanted && o.t.present())
        c::fail_arg(CATTN_INVALID_ARGUMENT, o.t.fn(), o.t.name(),
                    "is set for a group or product the plan does not compute", "a tensor",
                    "NULL");
    }
    const TensorArg& bt = *a[c::kRunOutBlockTables + g];
    if (bt.present())
      bt.expect_ndim(2).expect_index_dtype().expect_writable().expect_out_size(0, reqs)
          .expect_out_size(1, d.kv_groups[g].max_num_blocks);
    const TensorArg& sm = *a[c::kRunOutSlotMappings + g];
    if (sm.present()) c::expect_slot_output(sm, d.max_num_tokens);
  }
  auto exact = [&](int i, int64_t n) {
    if (a[i]->present()) expect_output(*a[i], n);
  };
  auto capacity = [&](int i, int64_t n) {
    if (a[i]->present()) c::expect_index_output(*a[i], n);
  };
  exact(c::kRunOutQueryStartLoc, reqs + 1);
  exact(c::kRunOutSeqLens, reqs);
  exact(c::kRunOutNumComputedTokens, reqs);
  capacity(c::kRunOutPositions, d.max_num_tokens);
  capacity(c::kRunOutTokenToReqIndices, d.max_num_tokens);
  capacity(c::kRunOutLogitsIndices, d.max_num_logits);
  capacity(c::kRunOutExpandedIdxMapping, d.max_num_logits);
  capacity(c::kRunOutExpandedLocalPos, d.max_num_logits);
  exact(c::kRunOutCuNumLogits, reqs + 1);
}

}  // namespace

namespace cattn {

std::string step_plan_hex(uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%x", v);
  return s;
}

void step_plan_expect_needed(const TensorArg& t, const char* why) {
  if (!t.present())
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "is NULL", "NULL",
             std::string("a tensor: ") + why);
}

void step_plan_expect_within(const TensorArg& t, int64_t n, const char* what,
                             const char* cap_name, int64_t cap) {
  if (n > cap)
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "exceeds the plan's capacity",
             std::to_string(n) + " " + what + " " + t.shape_string(),
             std::string("at most ") + cap_name + " = " + std::to_string(cap));
}

}  // namespace cattn

extern "C" {

CATTN_API cattn_status_t cattn_step_plan_create(const cattn_step_plan_desc_t* desc,
                                                cattn_step_plan_t** out) {
  constexpr const char* fn = "cattn_step_plan_create";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "desc", desc);
    cattn::require_out_ptr(fn, "out", out);
    auto plan = std::make_unique<StepPlan>();
    plan_step(fn, *desc, plan->spec);
    cattn::seal_arguments();
    cattn::register_handle(plan.get(), cattn::HandleKind::StepPlan);
    *out = plan.release();
  });
}

CATTN_API void cattn_step_plan_destroy(cattn_step_plan_t* plan) {
  if (plan == nullptr) return;
  if (!cattn::release_handle("cattn_step_plan_destroy", plan, cattn::HandleKind::StepPlan))
    return;
  plan->magic = cattn::kDeadHandleMagic;
  delete plan;
}

CATTN_API cattn_status_t cattn_step_plan_get_shape(const cattn_step_plan_t* plan,
                                                   cattn_step_plan_shape_t* shape) {
  constexpr const char* fn = "cattn_step_plan_get_shape";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    cattn::require_struct(fn, "shape", shape, cattn::Use::Out);
    cattn::seal_arguments();
    // A 1.1 shape ends before draft_token_capacity: only its fields are written.
    const size_t size = shape->struct_size;
    cattn_step_plan_shape_t s = plan->spec.shape;
    s.struct_size = size;
    std::memcpy(shape, &s, std::min(size, sizeof s));
  });
}

CATTN_API cattn_status_t cattn_step_plan_workspace_size(const cattn_step_plan_t* plan,
                                                        size_t* bytes) {
  constexpr const char* fn = "cattn_step_plan_workspace_size";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    cattn::require_out_ptr(fn, "bytes", bytes);
    cattn::seal_arguments();
    *bytes = 0;
  });
}

CATTN_API cattn_status_t cattn_step_plan_run(const cattn_step_plan_t* plan,
                                             const cattn_step_batch_t* batch,
                                             const cattn_step_outputs_t* outputs,
                                             cattn_stream_t stream) {
  constexpr const char* fn = "cattn_step_plan_run";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    cattn::require_struct(fn, "batch", batch);
    cattn::require_struct(fn, "outputs", outputs);
    // Older (1.1) structs end before the 1.2 tensors: they are read as NULL.
    cattn_step_batch_t wide_batch;
    cattn_step_outputs_t wide_outputs;
    const cattn_step_batch_t* caller_batch = batch;
    const cattn_step_outputs_t* caller_outputs = outputs;
    batch = widen(batch, wide_batch);
    outputs = widen(outputs, wide_outputs);
    // A run described exactly as the plan's last checked run gets that run's answer: its
    // kernel parameters, launched as they are. Otherwise every check runs, on the key's copy
    // of the descriptors when there is one, so that what is remembered is what was checked.
    cattn::StepRunKey key;
    const bool keyed = cattn::step_run_key(*batch, *outputs, key);
    key.batch = caller_batch;
    key.outputs = caller_outputs;
    if (keyed) {
      cattn::StepPlanLaunch remembered;
      if (plan->memo.find(key, remembered)) {
        if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
        else cattn::step_plan_launch_device(fn, remembered, stream);
        return;
      }
    }
    DLTensor views[cattn::kRunTensors];
    const DLTensor* in[cattn::kRunTensors];
    for (int i = 0; i < cattn::kRunTensors; ++i)
      in[i] = keyed ? cattn::step_run_view(key.t[i], views[i])
                    : cattn::kStepRunTensors[i].of(*batch, *outputs);
    // The run's tensors as checked arguments, in StepRunTensor order. Making one checks it, so
    // they are made a group at a time: the batch's, its checks, then the outputs'.
    std::optional<TensorArg> made[cattn::kRunTensors];
    const TensorArg* args[cattn::kRunTensors] = {};
    auto make = [&](int first, int end) {
      for (int i = first; i < end; ++i) {
        const cattn::StepRunTensorInfo& info = cattn::kStepRunTensors[i];
        args[i] = &made[i].emplace(fn, info.name, in[i], info.use(), true);
      }
    };
    const StepPlanSpec& spec = plan->spec;
    const cattn_step_plan_desc_t& d = spec.desc;
    const cattn_step_plan_shape_t& shape = spec.shape;
    const bool dcp = spec.has(k::kStepDcpLocalSeqLens);
    const bool restore = spec.has(k::kStepPcpQueryRestoreIdx);
    const bool mamba = spec.has(k::kStepMambaBlockTable);
    const bool conv1d = spec.has(k::kStepCausalConv1d);
    const bool local = spec.has(k::kStepLocalAttention);
    const bool fast = spec.has(k::kStepFastPrefill);
    const bool extend = spec.has(k::kStepExtend);
    const bool align = mamba && shape.mamba_columns > 0;

    // The batch: what the selected products read must be there; whatever is there is checked.
    make(0, cattn::kRunFirstOutput);
    const TensorArg& qsl = *args[cattn::kRunQueryStartLoc];
    const TensorArg& seq_lens = *args[cattn::kRunSeqLens];
    const TensorArg& table = *args[cattn::kRunBlockTable];
    const TensorArg& cu_given = *args[cattn::kRunCuNumTokens];
    const TensorArg& logits = *args[cattn::kRunLogitsIndices];
    const TensorArg& num_logits = *args[cattn::kRunNumLogitsIndices];
    const bool in_inputs = spec.has_bit(cattn::kBitInputs);
    const bool in_tables = spec.has_bit(cattn::kBitBlockTables);
    const bool table_computed = in_tables && (mamba || local);
    if (in_inputs) {
      refuse_computed(qsl, "CATTN_STEP_INPUTS");
      refuse_computed(seq_lens, "CATTN_STEP_INPUTS");
    }
    if (table_computed) refuse_computed(table, "CATTN_STEP_BLOCK_TABLES");
    if (!in_inputs && ((restore && !cu_given.present()) || conv1d || local || fast || extend))
      expect_needed(qsl, "the plan's products read it");
    if (!in_inputs && (dcp || align || local || extend))
      expect_needed(seq_lens, "the plan's products read it");
    if (!table_computed && (mamba || local)) expect_needed(table, "the plan's products read it");
    if (fast) expect_needed(logits, "the fast-prefill product reads it");
    int64_t reqs = -1;
    if (qsl.present()) {
      expect_vector(qsl);
      qsl.expect_scan_bounded();
      if (qsl.size(0) < 1)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is empty", qsl.shape_string(),
                        "B + 1 >= 1 entries");
      reqs = qsl.size(0) - 1;
      expect_within(qsl, reqs, "requests", "desc->max_num_reqs", d.max_num_reqs);
    }
    if (seq_lens.present()) {
      expect_vector(seq_lens);
      seq_lens.expect_scan_bounded();
      if (reqs < 0) reqs = seq_lens.size(0);
      seq_lens.expect_size(0, reqs);
      expect_within(seq_lens, reqs, "requests", "desc->max_num_reqs", d.max_num_reqs);
    }
    if (table.present()) {
      table.expect_ndim(2).expect_index_dtype();
      if (reqs < 0) reqs = table.size(0);
      table.expect_size(0, reqs);
      expect_within(table, reqs, "requests", "desc->max_num_reqs", d.max_num_reqs);
      if (table.size(1) < 1)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, table.name(), "has no columns",
                        table.shape_string(), "at least one column");
      expect_within(table, table.size(1), "columns", "desc->max_num_blocks_per_req",
                    d.max_num_blocks_per_req);
    }
    if (cu_given.present()) {
      expect_vector(cu_given);
      cu_given.expect_scan_bounded();
      if (cu_given.size(0) < 1)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, cu_given.name(), "is empty",
                        cu_given.shape_string(), "R + 1 >= 1 entries");
      expect_within(cu_given, cu_given.size(0) - 1, "requests", "desc->max_num_reqs",
                    d.max_num_reqs);
    }
    if (logits.present()) {
      expect_vector(logits);
      logits.expect_scan_bounded();
      expect_within(logits, logits.size(0), "indices", "desc->max_num_logits", d.max_num_logits);
    }
    if (num_logits.present()) {
      expect_vector(num_logits);
      num_logits.expect_size(0, 1);
    }

    if (spec.has_inputs()) reqs = check_inputs_batch(spec, args, reqs);

    // The outputs: each product's are required when the plan computes it and refused when it
    // does not; then their shapes.
    make(cattn::kRunFirstOutput, cattn::kRunTensors);
    if (spec.has_inputs()) check_inputs_outputs(spec, args, reqs);
    // The 1.1 products read what the plan computes in place of the batch's own.
    const TensorArg* use[cattn::kRunTensors];
    std::copy(args, args + cattn::kRunTensors, use);
    if (in_inputs) {
      use[cattn::kRunQueryStartLoc] = args[cattn::kRunOutQueryStartLoc];
      use[cattn::kRunSeqLens] = args[cattn::kRunOutSeqLens];
    }
    if (table_computed)
      use[cattn::kRunBlockTable] = args[cattn::kRunOutBlockTables + d.inputs.table_group];
    for (int i = cattn::kRunFirstOutput; i < cattn::kRunTensors; ++i)
      if (cattn::kStepRunTensors[i].products != cattn::StepRunTensorInfo::kNoProduct)
        expect_output_use(spec, cattn::kStepRunTensors[i], *args[i]);
    if (spec.has_draft()) reqs = cattn::check_draft_run(spec, args, reqs);
    const TensorArg& dcp_out = *args[cattn::kRunDcpLocalSeqLens];
    const TensorArg& restore_out = *args[cattn::kRunPcpQueryRestoreIdx];
    const TensorArg& mamba_out = *args[cattn::kRunMambaBlockTable];
    const TensorArg& decode_qsl = *args[cattn::kRunDecodeQueryStartLoc];
    const TensorArg& ext_qsl = *args[cattn::kRunExtendQueryStartLoc];
    const TensorArg& ext_seq = *args[cattn::kRunExtendSeqLens];
    const TensorArg& counts = *args[cattn::kRunCounts];
    const TensorArg& counts_host = *args[cattn::kRunCountsHost];
    if (dcp)
      cattn::check_dcp_out(dcp_out, reqs, d.dcp.dcp_size, d.dcp.dcp_rank == CATTN_DCP_ALL_RANKS);
    if (restore) {
      restore_out.expect_ndim(1).expect_index_dtype().expect_writable();
      restore_out.expect_capacity(shape.restore_capacity);
      // Every entry is an index below the output's length, or -1.
      cattn::require_fits(fn, restore_out, restore_out.numel());
    }
    if (mamba) {
      mamba_out.expect_ndim(2).expect_index_dtype().expect_writable();
      mamba_out.expect_out_size(0, reqs).expect_out_size(
          1, align ? shape.mamba_columns : use[cattn::kRunBlockTable]->size(1));
    }
    if (conv1d) {
      const cattn::StepConv1dOutputs c = cattn::step_conv1d_outputs(args);
      cattn::check_causal_conv1d_device_outputs(c.outs,
                                                TensorArg(fn, "", nullptr, cattn::Use::In, true),
                                                reqs);
      for (int i = 1; i < 5; ++i)
        if (c.outs[i]->present()) c.outs[i]->expect_capacity(shape.conv1d_capacity);
    }
    if (local) {
      cattn::check_local_attention_capturable_tensors(cattn::step_local_attention_tensors(use),
                                                      shape.local_pages);
      args[cattn::kRunLocalSeqLens]->expect_capacity(shape.local_capacity);
    }
    if (fast) expect_output(decode_qsl, reqs + 1);
    if (extend) {
      expect_output(ext_qsl, reqs + 1);
      expect_output(ext_seq, reqs);
    }
    // A plan with a 1.2 product writes all CATTN_STEP_NUM_COUNTS entries; a 1.1 plan the
    // first CATTN_STEP_NUM_COUNTS_1_1, and 0 to the rest of a longer vector.
    const int64_t num_counts = spec.has_1_2() ? CATTN_STEP_NUM_COUNTS : CATTN_STEP_NUM_COUNTS_1_1;
    if (counts.present()) expect_counts(counts, num_counts);
    if (counts_host.present()) {
      expect_counts(counts_host, num_counts);
      if (cattn::device_type_of(counts_host.raw()->device) != kDLCUDAHost)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, counts_host.name(),
                        "is not pinned host memory",
                        "device_type " +
                            std::to_string(cattn::device_type_of(counts_host.raw()->device)),
                        "kDLCUDAHost (pinned memory mapped for the device)");
    }
    // The products run side by side, so no output may touch an input or another output (no
    // in place here); counts_host is host memory and the rest device memory, but one address
    // space holds both. A keyed run checked copies of the descriptors: the caller's own are
    // what outputs must keep away from.
    if (keyed) cattn::record_step_descriptors(key);
    cattn::seal_arguments();
    // Every present tensor but counts_host on one device: require_same_device's rule (each
    // against the first present), a pair at a time. A plan computes at least one product, so
    // some tensor is there, and the first names the device the plan runs on.
    const TensorArg* any = nullptr;
    for (int i = 0; i < cattn::kRunTensors; ++i) {
      if (!cattn::kStepRunTensors[i].on_run_device || !args[i]->present()) continue;
      if (any == nullptr) any = args[i];
      else cattn::require_same_device(fn, {any, args[i]});
    }
    if (any->where() != cattn::Where::Cuda) any->expect_cuda("the utilities' own calls");
    // What the run launches is remembered before the launch, under the key it was checked
    // from, so that a repeated run is answered from the memo without the checks. A CPU-only
    // build remembers it too (empty parameters, never launched), so that it answers a repeated
    // run as a CUDA build does.
    cattn::StepPlanLaunch launch;
    launch.device = any->device_id();
    if constexpr (cattn::kCudaBuild)
      launch = cattn::step_plan_launch_params(fn, spec, use, *any,
                                              cu_given.present() ? cu_given : *use[cattn::kRunQueryStartLoc]);
    if (keyed) plan->memo.remember(key, launch);
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
    else cattn::step_plan_launch_device(fn, launch, stream);
  });
}

}  // extern "C"
