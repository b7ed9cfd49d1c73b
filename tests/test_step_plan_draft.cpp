// SPDX-License-Identifier: Apache-2.0
// The step plan's drafter products (CATTN_STEP_DRAFT_* and CATTN_STEP_BATCH_CHANGE) on fake
// device tensors: which products a desc may select together and their parameters, the shape's
// drafter capacity (a 1.1-sized shape keeps its size), a run's tensors refused by name, and the
// very views the in-place products accept. Their values are tested on the GPU
// (test_step_plan_draft_gpu.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

namespace {

using cattn_test::HostTensor;
using cattn_test::i32;
using cattn_test::i64;

constexpr uint32_t kChain = CATTN_STEP_DRAFT_NEXT_TOKEN | CATTN_STEP_DRAFT_PREPARE_INPUTS |
                            CATTN_STEP_DRAFT_EXPAND | CATTN_STEP_DRAFT_SLOT_MAPPING;

// A drafter plan: 48 requests, 512 target tokens, 8 table columns, P = 3 with the shift.
cattn_step_plan_desc_t draft_desc(uint32_t products) {
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = products;
  d.max_num_reqs = 48;
  d.max_num_tokens = 512;
  d.max_num_blocks_per_req = 8;
  d.draft.vocab_size = 1000;
  d.draft.num_padding_slots_per_request = 3;
  d.draft.padding_token_id = 7;
  d.draft.parallel_drafting_token_id = 9;
  d.draft.block_size = 16;
  d.draft.max_model_len = 4096;
  d.draft.shift_input_ids = 1;
  return d;
}

// A run whose checks pass ends at the launch: CPU-only builds and machines without a device
// say so. On a GPU the fake memory would be launched on, so the caller skips there.
void expect_checks_pass(cattn_status_t s) {
  const std::string m = cattn_last_error_message();
  EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << m;
  EXPECT_TRUE(m.find("CPU-only") != std::string::npos ||
              m.find("no usable CUDA device") != std::string::npos)
      << m;
}
bool gpu_present() {
  int32_t n = 0;
  return cattn_cuda_device_count(&n) == CATTN_OK && n > 0;
}
#define SKIP_ON_A_GPU()                                                                   \
  do {                                                                                    \
    if (gpu_present())                                                                    \
      GTEST_SKIP() << "valid arguments would launch on fake device memory; the GPU tests " \
                      "(test_step_plan_draft_gpu.cpp) run these plans on device memory";  \
  } while (0)

TEST(step_plan_draft, CreateRefusesByName) {
  using Edit = std::function<void(cattn_step_plan_desc_t&)>;
  const struct {
    Edit edit;
    const char* needle;
  } cases[] = {
      {[](auto& d) { d.products |= CATTN_STEP_INPUTS; },
       "selects step-input and drafter products together"},
      {[](auto& d) { d.products = CATTN_STEP_DRAFT_STEP | CATTN_STEP_DRAFT_NEXT_TOKEN; },
       "selects CATTN_STEP_DRAFT_STEP with other products"},
      {[](auto& d) { d.products = CATTN_STEP_BATCH_CHANGE | CATTN_STEP_EXTEND_QUERIES; },
       "selects CATTN_STEP_BATCH_CHANGE with other products"},
      {[](auto& d) { d.products = CATTN_STEP_DRAFT_PREPARE_INPUTS; },
       "selects CATTN_STEP_DRAFT_PREPARE_INPUTS without CATTN_STEP_DRAFT_NEXT_TOKEN"},
      {[](auto& d) { d.products &= ~CATTN_STEP_DRAFT_EXPAND; },
       "selects CATTN_STEP_DRAFT_SLOT_MAPPING without CATTN_STEP_DRAFT_EXPAND"},
      {[](auto& d) { d.products = 1u << 19; }, "desc->products is not a set of products"},
      {[](auto& d) { d.draft.reserved0 = 1; }, "desc->draft.reserved0"},
      {[](auto& d) { d.draft.vocab_size = 0; }, "desc->draft.vocab_size"},
      {[](auto& d) { d.draft.num_padding_slots_per_request = 0; },
       "desc->draft.num_padding_slots_per_request"},
      {[](auto& d) { d.draft.num_padding_slots_per_request = 65537; },
       "desc->draft.num_padding_slots_per_request"},
      {[](auto& d) { d.draft.shift_input_ids = 2; }, "desc->draft.shift_input_ids"},
      {[](auto& d) { d.draft.max_tokens_per_request = -1; },
       "desc->draft.max_tokens_per_request"},
      {[](auto& d) { d.draft.block_size = 0; }, "desc->draft.block_size"},
      {[](auto& d) { d.draft.max_model_len = 0; }, "desc->draft.max_model_len"},
      {[](auto& d) { d.max_num_blocks_per_req = 0; }, "desc->max_num_blocks_per_req"},
      {[](auto& d) { d.max_num_reqs = INT64_MAX / 2; }, "overflows int64"},
      {[](auto& d) { d.products = CATTN_STEP_BATCH_CHANGE, d.max_num_reqs = 8193; },
       "desc->max_num_reqs is too large for CATTN_STEP_BATCH_CHANGE"},
      {[](auto& d) { d.struct_size = CATTN_STEP_PLAN_DESC_SIZE_1_1; },
       "selects a 1.2 product in a 1.1 desc"},
  };
  for (const auto& c : cases) {
    cattn_step_plan_desc_t d = draft_desc(kChain);
    c.edit(d);
    SCOPED_TRACE(c.needle);
    cattn_step_plan_t* plan = nullptr;
    EXPECT_CATTN_ERROR(cattn_step_plan_create(&d, &plan), CATTN_INVALID_ARGUMENT, c.needle);
    EXPECT_EQ(plan, nullptr);
  }
  // A parameter of a product not selected is not read.
  cattn_step_plan_desc_t d = draft_desc(CATTN_STEP_DRAFT_NEXT_TOKEN);
  d.draft.block_size = 0, d.draft.num_padding_slots_per_request = 0;
  cattn_step_plan_t* plan = nullptr;
  EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_destroy(plan);
}

TEST(step_plan_draft, ShapeReportsTheDrafterCapacity) {
  cattn_step_plan_desc_t d = draft_desc(kChain);
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_shape_t s = CATTN_STEP_PLAN_SHAPE_INIT;
  EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan, &s));
  EXPECT_EQ(s.draft_token_capacity, 512 + 48 * (3 - 1));
  // A 1.1 caller's shape ends before the field: nothing past its struct_size is written.
  struct {
    cattn_step_plan_shape_t shape;
    unsigned char canary[16];
  } old;
  std::memset(&old, 0xab, sizeof old);
  old.shape.struct_size = CATTN_STEP_PLAN_SHAPE_SIZE_1_1;
  EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan, &old.shape));
  const auto* tail = reinterpret_cast<const unsigned char*>(&old.shape) +
                     CATTN_STEP_PLAN_SHAPE_SIZE_1_1;
  for (size_t i = 0; i < sizeof old - CATTN_STEP_PLAN_SHAPE_SIZE_1_1; ++i)
    ASSERT_EQ(tail[i], 0xab) << "byte " << i << " past a 1.1 shape";
  EXPECT_EQ(old.shape.struct_size, CATTN_STEP_PLAN_SHAPE_SIZE_1_1);
  cattn_step_plan_destroy(plan);
}

// Fake device tensors of a drafter plan's run.
struct FakeRun {
  std::deque<HostTensor> host;
  std::deque<DLTensor> dev;
  cattn_step_plan_t* plan = nullptr;
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  cattn_step_plan_shape_t shape = CATTN_STEP_PLAN_SHAPE_INIT;
  DLTensor* make(std::vector<int64_t> shape_, DLDataType t = i32()) {
    host.emplace_back(shape_, t);
    dev.push_back(cattn_test::fake_cuda(host.back()));
    return &dev.back();
  }
  explicit FakeRun(uint32_t products) {
    const cattn_step_plan_desc_t d = draft_desc(products);
    EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan));
    EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan, &shape));
  }
  ~FakeRun() { cattn_step_plan_destroy(plan); }
  cattn_status_t run() { return cattn_step_plan_run(plan, &b, &o, nullptr); }
};

const DLDataType kBool{6, 8, 1};  // kDLBool

// A run edited one way: refused with `code` and a message holding `needle`.
struct Refusal {
  std::function<void(cattn_step_batch_t&, cattn_step_outputs_t&)> edit;
  cattn_status_t code;
  const char* needle;
};
void expect_refusals(const FakeRun& r, const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    cattn_step_batch_t b = r.b;
    cattn_step_outputs_t o = r.o;
    c.edit(b, o);
    SCOPED_TRACE(c.needle);
    EXPECT_CATTN_ERROR(cattn_step_plan_run(r.plan, &b, &o, nullptr), c.code, c.needle);
  }
}

// The whole chain, every optional output given, B = 40 of 48.
struct FakeChain : FakeRun {
  FakeChain() : FakeRun(kChain) {
    const int64_t B = 40, cap = shape.draft_token_capacity;
    b.query_start_loc = make({B + 1});
    b.block_table = make({B, 8});
    b.sampled_token_ids = make({B, 4});
    b.discard_request_mask = make({B}, kBool);
    b.backup_next_token_ids = make({B});
    b.cu_num_draft_tokens = make({B});
    b.target_token_ids = make({500});
    b.target_positions = make({500}, i64());
    o.next_token_ids = make({B}), o.valid_sampled_tokens_count = make({48});
    o.token_indices_to_sample = make({B}), o.num_rejected_tokens = make({B});
    o.draft_input_ids = make({cap}), o.draft_positions = make({cap}, i64());
    o.is_rejected_token_mask = make({cap}, kBool), o.is_masked_token_mask = make({cap}, kBool);
    o.new_token_indices = make({48 * 3});
    o.hidden_state_mapping = make({512});
    o.draft_slot_mapping = make({cap}, i64());
    o.counts = make({CATTN_STEP_NUM_COUNTS}, i64());
  }
};

TEST(step_plan_draft, ChainPassesTheChecks) {
  SKIP_ON_A_GPU();
  FakeChain r;
  expect_checks_pass(r.run());
  // The optional outputs may be left out.
  r.o.valid_sampled_tokens_count = r.o.num_rejected_tokens = nullptr;
  r.o.is_rejected_token_mask = r.o.is_masked_token_mask = nullptr;
  r.o.new_token_indices = r.o.hidden_state_mapping = nullptr;
  r.b.discard_request_mask = nullptr;
  expect_checks_pass(r.run());
}

TEST(step_plan_draft, ChainRefusesByName) {
  FakeChain r;
  HostTensor h({600}, i32());
  DLTensor small = cattn_test::fake_cuda(h);
  HostTensor h64({4}, i64());
  DLTensor counts8 = cattn_test::fake_cuda(h64);
  expect_refusals(r, {
      {[](auto& b, auto&) { b.query_start_loc = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->query_start_loc is NULL"},
      {[](auto& b, auto&) { b.sampled_token_ids = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->sampled_token_ids is NULL"},
      {[](auto& b, auto&) { b.backup_next_token_ids = b.cu_num_draft_tokens = nullptr; },
       CATTN_INVALID_ARGUMENT, "batch->backup_next_token_ids is NULL"},
      {[](auto& b, auto&) { b.cu_num_draft_tokens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->cu_num_draft_tokens is NULL"},
      {[](auto& b, auto&) { b.target_positions = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->target_positions is NULL"},
      {[&](auto& b, auto&) { b.target_token_ids = &small; }, CATTN_INVALID_ARGUMENT,
       "batch->target_token_ids exceeds the plan's capacity"},
      {[](auto& b, auto&) { b.block_table = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->block_table is NULL"},
      {[](auto& b, auto&) { b.discard_request_mask = b.backup_next_token_ids; },
       CATTN_INVALID_ARGUMENT, "batch->discard_request_mask"},
      {[](auto& b, auto&) { b.sampled_token_ids = b.backup_next_token_ids; },
       CATTN_INVALID_ARGUMENT, "batch->sampled_token_ids"},
      {[](auto&, auto& o) { o.next_token_ids = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->next_token_ids is NULL"},
      {[](auto&, auto& o) { o.draft_slot_mapping = o.draft_input_ids; }, CATTN_INVALID_ARGUMENT,
       "outputs->draft_slot_mapping has the wrong dtype"},
      {[&](auto&, auto& o) { o.draft_input_ids = &small; }, CATTN_INSUFFICIENT_SIZE,
       "outputs->draft_input_ids"},
      {[](auto&, auto& o) { o.draft_seq_lens = o.next_token_ids; }, CATTN_INVALID_ARGUMENT,
       "outputs->draft_seq_lens is set for a product the plan does not compute"},
      {[](auto&, auto& o) { o.carried_num_accepted_tokens = o.next_token_ids; },
       CATTN_INVALID_ARGUMENT, "outputs->carried_num_accepted_tokens is set"},
      {[](auto&, auto& o) { o.token_indices_to_sample = o.next_token_ids; },
       CATTN_INVALID_ARGUMENT, "outputs->"},
      {[](auto& b, auto& o) { o.next_token_ids = const_cast<DLTensor*>(b.backup_next_token_ids); },
       CATTN_INVALID_ARGUMENT, "outputs->next_token_ids"},
      {[&](auto&, auto& o) { o.counts = &counts8; }, CATTN_INSUFFICIENT_SIZE, "outputs->counts"},
  });
  // Without the shift there is no hidden-state mapping.
  cattn_step_plan_desc_t d = draft_desc(kChain);
  d.draft.shift_input_ids = 0;
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_shape_t s = CATTN_STEP_PLAN_SHAPE_INIT;
  ASSERT_CATTN_OK(cattn_step_plan_get_shape(plan, &s));
  EXPECT_EQ(s.draft_token_capacity, 512 + 48 * 3);
  EXPECT_CATTN_ERROR(cattn_step_plan_run(plan, &r.b, &r.o, nullptr), CATTN_INVALID_ARGUMENT,
                     "outputs->hidden_state_mapping is set but desc->draft.shift_input_ids is 0");
  cattn_step_plan_destroy(plan);
}

// CATTN_STEP_DRAFT_STEP: in place on positions and seq_lens (the very views) or apart.
struct FakeDraftStep : FakeRun {
  FakeDraftStep() : FakeRun(CATTN_STEP_DRAFT_STEP) {
    const int64_t B = 32;
    b.positions = make({B}, i64());
    b.block_table = make({B, 8});
    b.seq_lens = make({B});
    o.draft_positions = make({B}, i64());
    o.draft_seq_lens = make({B});
    o.draft_slot_mapping = make({48}, i64());
  }
};

TEST(step_plan_draft, DraftStepInPlaceOrApart) {
  SKIP_ON_A_GPU();
  FakeDraftStep r;
  expect_checks_pass(r.run());
  cattn_step_outputs_t o = r.o;
  o.draft_positions = const_cast<DLTensor*>(r.b.positions);
  o.draft_seq_lens = const_cast<DLTensor*>(r.b.seq_lens);
  expect_checks_pass(cattn_step_plan_run(r.plan, &r.b, &o, nullptr));
}

TEST(step_plan_draft, DraftStepRefusesByName) {
  FakeDraftStep r;
  HostTensor h({16}, i64());
  DLTensor part = cattn_test::fake_cuda(h);
  // A view over part of seq_lens is an overlap, not the very view.
  DLTensor half = *r.b.seq_lens;
  int64_t half_shape[1] = {16};
  half.shape = half_shape;
  expect_refusals(r, {
      {[](auto& b, auto&) { b.positions = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->positions is NULL"},
      {[](auto& b, auto&) { b.seq_lens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->seq_lens is NULL"},
      {[&](auto& b, auto&) { b.positions = &part; }, CATTN_INVALID_ARGUMENT, "batch->positions"},
      {[&](auto&, auto& o) { o.draft_slot_mapping = &part; }, CATTN_INSUFFICIENT_SIZE,
       "outputs->draft_slot_mapping"},
      {[](auto&, auto& o) { o.draft_seq_lens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->draft_seq_lens is NULL"},
      {[](auto&, auto& o) { o.next_token_ids = o.draft_seq_lens; }, CATTN_INVALID_ARGUMENT,
       "outputs->next_token_ids is set for a product the plan does not compute"},
      {[](auto&, auto& o) { o.draft_seq_lens = o.draft_slot_mapping; }, CATTN_INVALID_ARGUMENT,
       "outputs->draft_seq_lens"},
      {[&](auto& b, auto&) { b.seq_lens = &half; }, CATTN_INVALID_ARGUMENT, "batch->"},
  });
  // A solo plan writes no counts.
  HostTensor hc({CATTN_STEP_NUM_COUNTS}, i64());
  DLTensor counts = cattn_test::fake_cuda(hc);
  cattn_step_outputs_t o = r.o;
  o.counts = &counts;
  EXPECT_CATTN_ERROR(cattn_step_plan_run(r.plan, &r.b, &o, nullptr), CATTN_INVALID_ARGUMENT,
                     "outputs->counts is set for a plan that writes no counts");
}

// CATTN_STEP_BATCH_CHANGE: n = 24 rows of M = 64 counts, 30 previous rows.
struct FakeBatchChange : FakeRun {
  FakeBatchChange() : FakeRun(CATTN_STEP_BATCH_CHANGE) {
    const int64_t n = 24;
    b.prev_positions = make({n}, i64());
    b.num_computed_tokens = make({64});
    b.num_accepted_tokens = make({n});
    b.valid_sampled_token_count = make({30});
    b.prev_num_draft_tokens = make({30});
    b.cpu_num_computed_tokens = make({n});
    o.carried_num_computed_tokens = make({n});
    o.carried_num_accepted_tokens = make({n});
  }
};

TEST(step_plan_draft, BatchChangeInPlaceOrApart) {
  SKIP_ON_A_GPU();
  FakeBatchChange r;
  expect_checks_pass(r.run());
  cattn_step_outputs_t o = r.o;
  o.carried_num_computed_tokens = const_cast<DLTensor*>(r.b.num_computed_tokens);
  o.carried_num_accepted_tokens = const_cast<DLTensor*>(r.b.num_accepted_tokens);
  expect_checks_pass(cattn_step_plan_run(r.plan, &r.b, &o, nullptr));
}

TEST(step_plan_draft, BatchChangeRefusesByName) {
  FakeBatchChange r;
  HostTensor h({10}, i32());
  DLTensor short_t = cattn_test::fake_cuda(h);
  expect_refusals(r, {
      {[](auto& b, auto&) { b.prev_positions = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->prev_positions is NULL"},
      {[](auto& b, auto&) { b.num_computed_tokens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->num_computed_tokens is NULL"},
      {[&](auto& b, auto&) { b.num_computed_tokens = &short_t; }, CATTN_INSUFFICIENT_SIZE,
       "batch->num_computed_tokens has fewer rows than the batch"},
      {[&](auto& b, auto&) { b.prev_num_draft_tokens = &short_t; }, CATTN_INVALID_ARGUMENT,
       "batch->prev_num_draft_tokens"},
      {[&](auto& b, auto&) { b.cpu_num_computed_tokens = &short_t; }, CATTN_INVALID_ARGUMENT,
       "batch->cpu_num_computed_tokens"},
      {[&](auto&, auto& o) { o.carried_num_computed_tokens = &short_t; },
       CATTN_INSUFFICIENT_SIZE, "outputs->carried_num_computed_tokens"},
      {[](auto&, auto& o) { o.carried_num_accepted_tokens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->carried_num_accepted_tokens is NULL"},
      {[](auto& b, auto& o) {
         o.carried_num_accepted_tokens = const_cast<DLTensor*>(b.cpu_num_computed_tokens);
       },
       CATTN_INVALID_ARGUMENT, "outputs->carried_num_accepted_tokens"},
  });
}

}  // namespace
