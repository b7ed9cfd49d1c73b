// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the step plan's host side: cattn_step_plan_create with every desc field
// drawn (extremes too), its capacities checked against the documented formulas, then
// cattn_step_plan_run with the batch and outputs of a random selection of products - each
// tensor of its right shape, or of a wrong one, perturbed, on the host, aliased onto another
// tensor, or absent. The fuzz build is CPU-only, so a run never reaches a kernel: a call the
// harness builds valid must answer CATTN_NOT_SUPPORTED after every check, every other one
// must fail too, and no call may write any byte of any tensor or struct. Each run is made
// twice, and the second must answer as the first (the plan remembers a run that passed).
#include <limits>
#include <string>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// a + b and a * b for non-negative int64s, or -1 when they overflow.
int64_t add_or_neg(int64_t a, int64_t b) { return a < 0 || b < 0 || a > kI64Max - b ? -1 : a + b; }
int64_t mul_or_neg(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  return b != 0 && a > kI64Max / b ? -1 : a * b;
}

// The desc's validity and capacities as the header documents them.
struct Expected {
  bool ok = false;
  cattn_step_plan_shape_t shape = CATTN_STEP_PLAN_SHAPE_INIT;
};

Expected expect_plan(const cattn_step_plan_desc_t& d, size_t struct_size) {
  Expected e;
  auto has = [&](uint32_t bit) { return (d.products & bit) != 0; };
  bool ok = struct_size >= sizeof(cattn_step_plan_desc_t) && d.products != 0 &&
            (d.products & ~(CATTN_STEP_ALL_PRODUCTS | CATTN_STEP_INPUT_PRODUCTS |
                            CATTN_STEP_DRAFT_PRODUCTS)) == 0 &&
            d.reserved0 == 0 &&
            d.max_num_reqs >= 1 && d.max_num_tokens >= 0 &&
            d.max_num_blocks_per_req >=
                ((d.products & (CATTN_STEP_MAMBA_BLOCK_TABLE | CATTN_STEP_LOCAL_ATTENTION)) ? 1 : 0) &&
            d.max_num_logits >= 0 && add_or_neg(d.max_num_reqs, 1) >= 0;
  const int64_t B = d.max_num_reqs, T = d.max_num_tokens;
  // This target leaves the 1.2 fields at their defaults (no KV group, no persistent row), which
  // serve the step-input products that need neither; tests/fuzz/fuzz_step_inputs and the unit
  // suites cover the rest.
  // Their device path keeps its scans in shared memory: at most 8192 rows, and INT32_MAX tokens.
  if (ok && (d.products & CATTN_STEP_INPUT_PRODUCTS))
    ok = (d.products & (CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES | CATTN_STEP_SLOT_MAPPINGS)) == 0 &&
         d.max_num_reqs <= 8192 && d.max_num_tokens <= INT32_MAX;
  if (ok && has(CATTN_STEP_DCP_LOCAL_SEQ_LENS)) {
    const auto& p = d.dcp;
    ok = p.dcp_size >= 1 && p.dcp_kv_cache_interleave_size >= 1 &&
         p.dcp_kv_cache_interleave_size <= std::numeric_limits<int32_t>::max() / p.dcp_size &&
         (p.dcp_rank == CATTN_DCP_ALL_RANKS || (p.dcp_rank >= 0 && p.dcp_rank < p.dcp_size)) &&
         (p.dcp_rank != CATTN_DCP_ALL_RANKS || mul_or_neg(B, p.dcp_size) >= 0);
  }
  if (ok && has(CATTN_STEP_PCP_QUERY_RESTORE_IDX)) e.shape.restore_capacity = T;
  if (ok && has(CATTN_STEP_MAMBA_BLOCK_TABLE)) {
    const auto& p = d.mamba;
    const bool align = p.mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
    ok = (p.mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_NONE ||
          p.mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_ALL || align) &&
         p.reserved0 == 0 &&
         (!align || (p.block_size >= 1 && p.num_speculative_blocks >= 0 &&
                     p.num_speculative_blocks < kI64Max));
    e.shape.mamba_columns = ok && align ? p.num_speculative_blocks + 1 : 0;
    ok = ok && mul_or_neg(B, align ? e.shape.mamba_columns : d.max_num_blocks_per_req) >= 0;
  }
  if (ok && has(CATTN_STEP_CAUSAL_CONV1D_METADATA)) {
    ok = d.conv1d.block_m >= 1;
    if (ok) {
      e.shape.conv1d_capacity = add_or_neg(T / d.conv1d.block_m + (T % d.conv1d.block_m != 0), B);
      ok = e.shape.conv1d_capacity >= 0;
    }
  }
  if (ok && has(CATTN_STEP_LOCAL_ATTENTION)) {
    const auto& p = d.local_attention;
    ok = p.attn_chunk_size >= 1 && p.block_size >= 1 && p.attn_chunk_size % p.block_size == 0;
    if (ok) {
      const int64_t chunks = T / p.attn_chunk_size + (T % p.attn_chunk_size != 0);
      const int64_t by_chunks = add_or_neg(mul_or_neg(B, 2), chunks);
      const int64_t by_tokens = add_or_neg(T, B);
      ok = by_chunks >= 0 && by_tokens >= 0;
      e.shape.local_capacity = std::min(by_chunks, by_tokens);
      e.shape.local_pages = p.attn_chunk_size / p.block_size;
      ok = ok && mul_or_neg(e.shape.local_capacity, e.shape.local_pages) >= 0;
    }
  }
  if (ok && has(CATTN_STEP_EXTEND_QUERIES)) ok = d.extend.n >= 0;
  // The drafter products: never with the step inputs; DRAFT_STEP and BATCH_CHANGE alone; each
  // chain link with the links before it; then each selected link's parameters.
  if (ok && (d.products & CATTN_STEP_DRAFT_PRODUCTS)) {
    const uint32_t p = d.products;
    const auto& g = d.draft;
    auto alone = [&](uint32_t bit) { return !(p & bit) || p == bit; };
    auto after = [&](uint32_t bit, uint32_t before) { return !(p & bit) || (p & before); };
    ok = (p & CATTN_STEP_INPUT_PRODUCTS) == 0 && alone(CATTN_STEP_DRAFT_STEP) &&
         alone(CATTN_STEP_BATCH_CHANGE) &&
         after(CATTN_STEP_DRAFT_PREPARE_INPUTS, CATTN_STEP_DRAFT_NEXT_TOKEN) &&
         after(CATTN_STEP_DRAFT_EXPAND, CATTN_STEP_DRAFT_PREPARE_INPUTS) &&
         after(CATTN_STEP_DRAFT_SLOT_MAPPING, CATTN_STEP_DRAFT_EXPAND) && g.reserved0 == 0;
    if (ok && has(CATTN_STEP_DRAFT_NEXT_TOKEN)) ok = g.vocab_size >= 1;
    if (ok && has(CATTN_STEP_DRAFT_EXPAND)) {
      const int64_t P = g.num_padding_slots_per_request;
      ok = P >= 1 && P <= 65536 && (g.shift_input_ids == 0 || g.shift_input_ids == 1) &&
           g.max_tokens_per_request >= 0 && mul_or_neg(B, P) >= 0;
      if (ok) {
        e.shape.draft_token_capacity = add_or_neg(T, mul_or_neg(B, P - g.shift_input_ids));
        ok = e.shape.draft_token_capacity >= 0;
      }
    }
    if (ok && (p & (CATTN_STEP_DRAFT_SLOT_MAPPING | CATTN_STEP_DRAFT_STEP)))
      ok = g.block_size >= 1 && g.max_model_len >= 1 && d.max_num_blocks_per_req >= 1;
    if (ok && has(CATTN_STEP_BATCH_CHANGE)) ok = B <= 8192;
  }
  if (!ok) e.shape = CATTN_STEP_PLAN_SHAPE_INIT;
  e.ok = ok;
  return e;
}

// A desc field: small and valid mostly, sometimes an edge or an extreme.
int64_t field(FuzzedDataProvider& fdp, int64_t lo, int64_t hi) { return pick_scalar(fdp, lo, hi); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  // ---- create ----
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  // Mostly 1.1 products; sometimes any 32 bits, or drafter products (with a 1.1 one at times).
  const int pick = fdp.ConsumeIntegralInRange<int>(0, 7);
  d.products = pick == 0   ? fdp.ConsumeIntegral<uint32_t>()
               : pick == 1 ? (fdp.ConsumeIntegralInRange<uint32_t>(0, 0x3f) << 13) |
                                 (fdp.ConsumeBool() ? CATTN_STEP_EXTEND_QUERIES : 0u)
                           : fdp.ConsumeIntegralInRange<uint32_t>(1, 0x7f);
  d.reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  d.max_num_reqs = field(fdp, 1, 12);
  d.max_num_tokens = field(fdp, 0, 64);
  d.max_num_blocks_per_req = field(fdp, 1, 6);
  d.max_num_logits = field(fdp, 0, 16);
  d.dcp = {field(fdp, 1, 4), fdp.ConsumeBool() ? CATTN_DCP_ALL_RANKS : field(fdp, 0, 3),
           field(fdp, 1, 8)};
  d.mamba = {field(fdp, 1, 8), field(fdp, 0, 3),
             static_cast<int32_t>(fdp.ConsumeIntegralInRange<int>(-1, 3)),
             fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0};
  d.conv1d = {field(fdp, 1, 8)};
  const int64_t bs = field(fdp, 1, 4);
  const bool multiple = bs >= 1 && bs <= (int64_t{1} << 40) && fdp.ConsumeBool();
  d.local_attention = {
      multiple ? bs * fdp.ConsumeIntegralInRange<int64_t>(1, 4) : field(fdp, 1, 16), bs};
  d.extend = {field(fdp, 0, 3)};
  if (d.products & CATTN_STEP_DRAFT_PRODUCTS)
    d.draft = {field(fdp, 1, 50), field(fdp, 1, 4), 0, 0, field(fdp, 0, 3), field(fdp, 1, 16),
               field(fdp, 1, 64), static_cast<int32_t>(fdp.ConsumeIntegralInRange<int>(0, 2)),
               fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0};
  const size_t desc_size = pick_struct_size(fdp, CATTN_STEP_PLAN_DESC_SIZE);
  Struct<cattn_step_plan_desc_t> desc(d, desc_size);
  const bool null_desc = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const std::vector<uint8_t> desc_before = desc.snapshot();
  const Expected want = expect_plan(*desc.get(), desc_size);
  FZ_LOG("products %#x B %ld T %ld cols %ld logits %ld predicted %d\n", d.products,
         (long)d.max_num_reqs, (long)d.max_num_tokens, (long)d.max_num_blocks_per_req,
         (long)d.max_num_logits, want.ok && !null_desc);
  cattn_step_plan_t* plan = reinterpret_cast<cattn_step_plan_t*>(uintptr_t{0x5a5a});
  const cattn_status_t cs = cattn_step_plan_create(null_desc ? nullptr : desc.get(), &plan);
  check_status_valid(cs);
  check_failure_message(cs, "cattn_step_plan_create");
  FZ_CHECK(desc.unchanged(desc_before), "create wrote its desc");
  FZ_CHECK((cs == CATTN_OK) == (want.ok && !null_desc),
           "create's outcome differs from the contract");
  if (cs != CATTN_OK) {
    FZ_CHECK(plan == reinterpret_cast<cattn_step_plan_t*>(uintptr_t{0x5a5a}),
             "a refused create wrote *out");
    return 0;
  }
  cattn_step_plan_shape_t got = CATTN_STEP_PLAN_SHAPE_INIT;
  FZ_CHECK(cattn_step_plan_get_shape(plan, &got) == CATTN_OK, "get_shape failed");
  FZ_CHECK(got.restore_capacity == want.shape.restore_capacity &&
               got.conv1d_capacity == want.shape.conv1d_capacity &&
               got.local_capacity == want.shape.local_capacity &&
               got.local_pages == want.shape.local_pages &&
               got.mamba_columns == want.shape.mamba_columns &&
               got.draft_token_capacity == want.shape.draft_token_capacity,
           "the plan's capacities differ from the documented formulas");
  size_t ws = 1;
  FZ_CHECK(cattn_step_plan_workspace_size(plan, &ws) == CATTN_OK && ws == 0, "workspace size");

  // ---- run, on plans small enough to build every tensor ----
  const int64_t B = d.max_num_reqs;
  const int64_t sizes[] = {got.restore_capacity, got.conv1d_capacity, got.local_capacity,
                           got.local_capacity * got.local_pages, d.max_num_tokens, B,
                           d.max_num_logits, d.max_num_blocks_per_req};
  bool small = true;
  for (int64_t n : sizes) small = small && n <= 4096;
  // The runs below build 1.1 batches only (the drafter's run rules: tests/test_step_plan_draft).
  if (!small || (d.products & (CATTN_STEP_INPUT_PRODUCTS | CATTN_STEP_DRAFT_PRODUCTS))) {
    cattn_step_plan_destroy(plan);
    return 0;
  }
  auto has = [&](uint32_t bit) { return (d.products & bit) != 0; };
  const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(0, B);  // rows in this batch
  // A plan that reads no block table may have room for none; a table given then is too wide.
  const bool table_fits = d.max_num_blocks_per_req >= 1;
  const int64_t cols =
      table_fits ? fdp.ConsumeIntegralInRange<int64_t>(1, d.max_num_blocks_per_req) : 1;
  const int64_t logits = fdp.ConsumeIntegralInRange<int64_t>(0, d.max_num_logits);
  const bool dcp_all = d.dcp.dcp_rank == CATTN_DCP_ALL_RANKS && d.dcp.dcp_size > 1;
  const bool align = got.mamba_columns > 0;
  std::vector<Tensor> ts;
  ts.reserve(32);  // make() hands out pointers into it
  bool valid = true;   // every tensor the harness made is as the plan expects
  bool benign = true;  // no structural perturbation (those may also answer NOT_SUPPORTED)
  // One tensor: absent when not wanted; else of `shape`, sometimes bent.
  auto make = [&](bool wanted, bool required, std::vector<int64_t> shape, bool output,
                  bool min_only = false) -> DLTensor* {
    ts.emplace_back();
    Tensor& t = ts.back();
    const int mode = fdp.ConsumeIntegralInRange<int>(0, 31);
    if (!wanted ? mode != 0 : mode == 1) {  // absent
      t.exists = false;
      valid = valid && (wanted ? !required : true);
      return nullptr;
    }
    if (!wanted) valid = valid && !output;  // an unselected product's output is refused
    if (mode == 2 && !shape.empty()) {  // a wrong size; capacity outputs may be longer
      const bool shorter = shape[0] > 0 && fdp.ConsumeBool();
      shape[0] += shorter ? -1 : 1;
      valid = valid && min_only && !shorter;
    }
    if (mode == 3) {  // a wrong ndim
      shape.push_back(1);
      valid = false;
    }
    t = make_tensor(fdp, shape, fdp.ConsumeBool() ? i64() : i32(), output, {mode == 4, true});
    if (!t.usable()) valid = false;
    if (t.perturbed) benign = false;
    if (t.usable() && mode != 5) {
      set_device(t.t.device, kDLCUDA, 0);  // the plan is for the device
      t.device = true;
    }
    if (mode == 5) valid = false;  // left on the host
    return t.ptr();
  };
  const bool uses_qsl = has(CATTN_STEP_CAUSAL_CONV1D_METADATA) || has(CATTN_STEP_LOCAL_ATTENTION) ||
                        has(CATTN_STEP_FAST_PREFILL) || has(CATTN_STEP_EXTEND_QUERIES);
  const bool uses_seq = has(CATTN_STEP_DCP_LOCAL_SEQ_LENS) ||
                        (has(CATTN_STEP_MAMBA_BLOCK_TABLE) && align) ||
                        has(CATTN_STEP_LOCAL_ATTENTION) || has(CATTN_STEP_EXTEND_QUERIES);
  const bool uses_table = has(CATTN_STEP_MAMBA_BLOCK_TABLE) || has(CATTN_STEP_LOCAL_ATTENTION);
  Struct<cattn_step_batch_t> batch(CATTN_STEP_BATCH_INIT,
                                   pick_struct_size(fdp, CATTN_STEP_BATCH_SIZE));
  cattn_step_batch_t& bt = *batch.get();
  const bool restore = has(CATTN_STEP_PCP_QUERY_RESTORE_IDX);
  const bool cu_given = restore && fdp.ConsumeBool();
  // Every input is made (when present it is checked even if unread); qsl and seq_lens fix B.
  bt.query_start_loc = make(true, uses_qsl || (restore && !cu_given), {b + 1}, false);
  bt.seq_lens = make(true, uses_seq, {b}, false);
  bt.block_table = make(true, uses_table, {b, cols}, false);
  bt.cu_num_tokens = make(cu_given, false, {fdp.ConsumeIntegralInRange<int64_t>(1, B + 1)}, false);
  bt.logits_indices = make(true, has(CATTN_STEP_FAST_PREFILL), {logits}, false);
  bt.num_logits_indices = make(fdp.ConsumeBool(), false, {1}, false);
  Struct<cattn_step_outputs_t> outs(CATTN_STEP_OUTPUTS_INIT,
                                    pick_struct_size(fdp, CATTN_STEP_OUTPUTS_SIZE));
  cattn_step_outputs_t& o = *outs.get();
  o.dcp_local_seq_lens =
      make(has(CATTN_STEP_DCP_LOCAL_SEQ_LENS), true,
           dcp_all ? std::vector<int64_t>{b, d.dcp.dcp_size} : std::vector<int64_t>{b}, true);
  o.pcp_query_restore_idx = make(restore, true, {got.restore_capacity}, true, true);
  o.mamba_block_table = make(has(CATTN_STEP_MAMBA_BLOCK_TABLE), true,
                             {b, align ? got.mamba_columns : cols}, true);
  const bool conv = has(CATTN_STEP_CAUSAL_CONV1D_METADATA);
  o.conv1d_nums = make(conv, false, {b}, true);
  o.conv1d_mlist = make(conv, false, {got.conv1d_capacity}, true, true);
  o.conv1d_offsetlist = make(conv, false, {got.conv1d_capacity}, true, true);
  o.conv1d_batch_ptr = make(conv, false, {got.conv1d_capacity}, true, true);
  o.conv1d_token_chunk_offset_ptr = make(conv, false, {got.conv1d_capacity}, true, true);
  const bool local = has(CATTN_STEP_LOCAL_ATTENTION);
  o.local_query_start_loc = make(local, true, {got.local_capacity + 1}, true);
  o.local_seq_lens = make(local, true, {got.local_capacity}, true);
  o.local_num_computed_tokens = make(local, false, {got.local_capacity}, true);
  o.local_block_table = make(local, false, {got.local_capacity, got.local_pages}, true);
  o.decode_query_start_loc = make(has(CATTN_STEP_FAST_PREFILL), true, {b + 1}, true);
  o.extend_query_start_loc = make(has(CATTN_STEP_EXTEND_QUERIES), true, {b + 1}, true);
  o.extend_seq_lens = make(has(CATTN_STEP_EXTEND_QUERIES), true, {b}, true);
  o.counts = make(true, false, {CATTN_STEP_NUM_COUNTS}, true);
  // counts_host: absent, CPU-labelled (refused) or kDLCUDAHost (the fuzz build never maps it).
  ts.emplace_back();
  Tensor& mirror = ts.back();
  const int mirror_kind = fdp.ConsumeIntegralInRange<int>(0, 2);
  mirror.exists = mirror_kind != 0;
  if (mirror.exists) {
    mirror = make_tensor(fdp, {CATTN_STEP_NUM_COUNTS}, fdp.ConsumeBool() ? i64() : i32(), true,
                         {false, false});
    set_device(mirror.t.device, mirror_kind == 1 ? kDLCPU : kDLCUDAHost, 0);
    valid = valid && mirror.usable() && mirror_kind == 2;
  }
  o.counts_host = mirror.ptr();
  // The gathered local-attention table keeps the source table's dtype.
  const Tensor &src_table = ts[2], &local_table = ts[17];
  if (local && src_table.usable() && local_table.usable() &&
      !same_dtype(src_table.t.dtype, local_table.t.dtype))
    valid = false;
  // Aliasing: sometimes an output over another tensor (refused unless one of them is empty),
  // counts_host included (one address space holds host and device memory).
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) {
    Tensor& out = ts[static_cast<size_t>(fdp.ConsumeIntegralInRange<int>(6, 22))];
    Tensor& other = ts[static_cast<size_t>(fdp.ConsumeIntegralInRange<int>(0, 22))];
    if (alias_onto(fdp, out, other) && overlaps(out, other)) valid = false;
  }
  // The batch or outputs struct copied over an output's memory now and then: refused.
  const Tensor& over = ts[static_cast<size_t>(fdp.ConsumeIntegralInRange<int>(6, 22))];
  bool batch_over = false, outs_over = false;
  cattn_step_batch_t* batch_arg = maybe_struct_over_output(fdp, batch, over, &batch_over);
  cattn_step_outputs_t* outs_arg = batch_over ? outs.get() : maybe_struct_over_output(fdp, outs, over, &outs_over);
  if (batch_over || outs_over) valid = false;
  if (!table_fits && bt.block_table != nullptr) valid = false;
  // The restore index reads query_start_loc when cu_num_tokens did not come.
  if (restore && bt.cu_num_tokens == nullptr && bt.query_start_loc == nullptr) valid = false;
  if (batch.get()->struct_size < CATTN_STEP_BATCH_SIZE ||
      outs.get()->struct_size < CATTN_STEP_OUTPUTS_SIZE)
    valid = false;

  Watch w;
  for (const Tensor& t : ts) w.add(&t);
  const std::vector<uint8_t> batch_before = batch.snapshot(), outs_before = outs.snapshot();
  const cattn_status_t s = cattn_step_plan_run(plan, batch_arg, outs_arg, nullptr);
  FZ_LOG("  run: valid %d benign %d -> %s\n", valid, benign, cattn_status_string(s));
  check_status_valid(s);
  check_failure_message(s, "cattn_step_plan_run");
  FZ_CHECK(s != CATTN_OK, "a CPU-only build ran the plan");
  FZ_CHECK(w.all_unchanged(), "a refused run wrote a tensor");
  FZ_CHECK(batch.unchanged(batch_before) && outs.unchanged(outs_before), "a run wrote its structs");
  if (valid && benign)
    FZ_CHECK(s == CATTN_NOT_SUPPORTED, "a valid run was refused before the device");
  // The same run again answers the same, word for word: a run that passed the checks is
  // remembered by the plan, and the second one is answered from that memo.
  const std::string first_message = cattn_last_error_message();
  const cattn_status_t again = cattn_step_plan_run(plan, batch_arg, outs_arg, nullptr);
  FZ_CHECK(again == s, std::string("a repeated run answered ") + cattn_status_string(again) +
                           " after " + cattn_status_string(s));
  FZ_CHECK(first_message == cattn_last_error_message(), "a repeated run said something else");
  FZ_CHECK(w.all_unchanged(), "a repeated run wrote a tensor");
  cattn_step_plan_destroy(plan);
  FZ_CHECK(cattn_step_plan_get_shape(plan, &got) == CATTN_INVALID_ARGUMENT,
           "a destroyed plan was used");
  // A forged handle at an odd address: refused without reading it (UBSan would report a
  // misaligned access), and destroying it frees nothing.
  alignas(16) static unsigned char forged[64];
  auto* fake = reinterpret_cast<cattn_step_plan_t*>(forged + 1 + fdp.ConsumeIntegralInRange<int>(0, 14));
  FZ_CHECK(cattn_step_plan_get_shape(fake, &got) == CATTN_INVALID_ARGUMENT, "a forged plan was used");
  FZ_CHECK(cattn_step_plan_run(fake, batch.get(), outs.get(), nullptr) == CATTN_INVALID_ARGUMENT,
           "a forged plan was run");
  cattn_step_plan_destroy(fake);
  return 0;
}
