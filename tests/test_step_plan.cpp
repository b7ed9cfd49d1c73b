// SPDX-License-Identifier: Apache-2.0
// Step plan, host side: creation refuses every bad desc field by name, the capacities follow the
// documented formulas, handles are checked, and a run checks every argument on the host before
// anything is launched - these tests use CUDA-labelled host memory, so they run without a GPU
// and in CPU-only builds, and check that a refused run wrote nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/step_reference.h"

namespace {

using namespace cattn_test;

struct PlanPtr {
  cattn_step_plan_t* p = nullptr;
  ~PlanPtr() { cattn_step_plan_destroy(p); }
};

void expect_create_error(const cattn_step_plan_desc_t& d, cattn_status_t code,
                         const char* needle) {
  cattn_step_plan_t* const sentinel = reinterpret_cast<cattn_step_plan_t*>(0x1);
  cattn_step_plan_t* plan = sentinel;
  EXPECT_CATTN_ERROR(cattn_step_plan_create(&d, &plan), code, needle);
  EXPECT_EQ(plan, sentinel);  // a failed call writes nothing
}

}  // namespace

TEST(step_plan, CreateRefusesEveryBadField) {
  cattn_step_plan_t* plan = nullptr;
  EXPECT_CATTN_ERROR(cattn_step_plan_create(nullptr, &plan), CATTN_INVALID_ARGUMENT, "desc");
  const cattn_step_plan_desc_t good = test_step_desc(CATTN_STEP_ALL_PRODUCTS);
  EXPECT_CATTN_ERROR(cattn_step_plan_create(&good, nullptr), CATTN_INVALID_ARGUMENT, "out");
  using Edit = std::function<void(cattn_step_plan_desc_t&)>;
  const struct {
    Edit edit;
    const char* needle;
  } cases[] = {
      {[](auto& d) { d.struct_size = 8; }, "desc has struct_size"},
      {[](auto& d) { d.products = 0; }, "desc->products"},
      {[](auto& d) { d.products = 0x80000; },
       "desc->products is not a set of products (got 0x80000, expected a nonzero OR of "
       "CATTN_STEP_* bits (CATTN_STEP_ALL_PRODUCTS = 0x7f, CATTN_STEP_INPUT_PRODUCTS = 0x1f80, "
       "CATTN_STEP_DRAFT_PRODUCTS = 0x7e000))"},
      {[](auto& d) { d.reserved0 = 1; }, "desc->reserved0"},
      {[](auto& d) { d.max_num_reqs = 0; }, "desc->max_num_reqs"},
      {[](auto& d) { d.max_num_tokens = -1; }, "desc->max_num_tokens is negative (got -1,"},
      {[](auto& d) { d.max_num_blocks_per_req = 0; }, "desc->max_num_blocks_per_req"},
      {[](auto& d) { d.max_num_logits = -1; }, "desc->max_num_logits is negative (got -1,"},
      {[](auto& d) { d.dcp.dcp_size = 0; }, "desc->dcp.dcp_size"},
      {[](auto& d) { d.dcp.dcp_rank = 4; }, "desc->dcp.dcp_rank"},
      {[](auto& d) { d.dcp.dcp_rank = -2; }, "desc->dcp.dcp_rank"},
      {[](auto& d) { d.dcp.dcp_kv_cache_interleave_size = 0; },
       "desc->dcp.dcp_kv_cache_interleave_size"},
      {[](auto& d) { d.dcp.dcp_kv_cache_interleave_size = INT32_MAX / 2; },
       "times desc->dcp.dcp_size exceeds INT32_MAX"},
      {[](auto& d) { d.mamba.mamba_cache_mode = 7; }, "desc->mamba.mamba_cache_mode"},
      {[](auto& d) { d.mamba.reserved0 = 1; }, "desc->mamba.reserved0"},
      {[](auto& d) { d.mamba.block_size = 0; }, "desc->mamba.block_size"},
      {[](auto& d) { d.mamba.num_speculative_blocks = -1; }, "desc->mamba.num_speculative_blocks is negative"},
      {[](auto& d) { d.mamba.num_speculative_blocks = INT64_MAX; },
       "1 + desc->mamba.num_speculative_blocks"},
      {[](auto& d) { d.conv1d.block_m = 0; }, "desc->conv1d.block_m"},
      {[](auto& d) { d.local_attention.attn_chunk_size = 0; },
       "desc->local_attention.attn_chunk_size"},
      {[](auto& d) { d.local_attention.block_size = 0; }, "desc->local_attention.block_size"},
      {[](auto& d) { d.local_attention.block_size = 5; }, "does not divide"},
      {[](auto& d) { d.extend.n = -1; }, "desc->extend.n"},
      {[](auto& d) { d.max_num_reqs = INT64_MAX; }, "desc->max_num_reqs + 1"},
      {[](auto& d) { d.max_num_reqs = INT64_MAX / 3; }, "overflow"},
      {[](auto& d) { d.max_num_tokens = INT64_MAX; }, "overflow"},
  };
  for (const auto& c : cases) {
    cattn_step_plan_desc_t d = good;
    c.edit(d);
    SCOPED_TRACE(c.needle);
    expect_create_error(d, CATTN_INVALID_ARGUMENT, c.needle);
  }
  // A product's parameters matter only when it is selected.
  cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_EXTEND_QUERIES);
  d.dcp.dcp_size = 0;
  d.mamba.mamba_cache_mode = 9;
  d.conv1d.block_m = -3;
  d.local_attention.attn_chunk_size = 0;
  PlanPtr p;
  EXPECT_CATTN_OK(cattn_step_plan_create(&d, &p.p));
}

TEST(step_plan, ShapeFollowsTheCapacities) {
  PlanPtr p;
  const cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_ALL_PRODUCTS);
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &p.p));
  cattn_step_plan_shape_t s = CATTN_STEP_PLAN_SHAPE_INIT;
  ASSERT_CATTN_OK(cattn_step_plan_get_shape(p.p, &s));
  EXPECT_EQ(s.struct_size, CATTN_STEP_PLAN_SHAPE_SIZE);
  EXPECT_EQ(s.restore_capacity, 1536);
  EXPECT_EQ(s.conv1d_capacity, 1536 / 8 + 48);
  EXPECT_EQ(s.local_capacity, 2 * 48 + 1536 / 32);  // below 1536 + 48
  EXPECT_EQ(s.local_pages, 32 / 8);
  EXPECT_EQ(s.mamba_columns, 3);
  size_t bytes = 1;
  ASSERT_CATTN_OK(cattn_step_plan_workspace_size(p.p, &bytes));
  EXPECT_EQ(bytes, 0u);

  // Few tokens: the token bound is the smaller one (a zero-length row is one virtual batch).
  cattn_step_plan_desc_t few = d;
  few.max_num_tokens = 10;
  few.mamba.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  PlanPtr q;
  ASSERT_CATTN_OK(cattn_step_plan_create(&few, &q.p));
  ASSERT_CATTN_OK(cattn_step_plan_get_shape(q.p, &s));
  EXPECT_EQ(s.local_capacity, 10 + 48);
  EXPECT_EQ(s.conv1d_capacity, 2 + 48);
  EXPECT_EQ(s.mamba_columns, 0);

  // A shape struct from an older header: only what it holds is written.
  struct {
    cattn_step_plan_shape_t s;
    int64_t tail;
  } old{};
  old.s.struct_size = offsetof(cattn_step_plan_shape_t, local_capacity);
  old.tail = 77;
  EXPECT_CATTN_ERROR(cattn_step_plan_get_shape(p.p, &old.s), CATTN_INVALID_ARGUMENT, "shape");
  EXPECT_CATTN_ERROR(cattn_step_plan_get_shape(p.p, nullptr), CATTN_INVALID_ARGUMENT, "shape");
  EXPECT_CATTN_ERROR(cattn_step_plan_workspace_size(p.p, nullptr), CATTN_INVALID_ARGUMENT,
                     "bytes");
}

TEST(step_plan, HandlesAreChecked) {
  cattn_step_plan_t* plan = nullptr;
  const cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_EXTEND_QUERIES);
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_destroy(plan);
  cattn_step_plan_shape_t s = CATTN_STEP_PLAN_SHAPE_INIT;
  size_t bytes = 0;
  EXPECT_CATTN_ERROR(cattn_step_plan_get_shape(plan, &s), CATTN_INVALID_ARGUMENT, "plan");
  EXPECT_CATTN_ERROR(cattn_step_plan_workspace_size(plan, &bytes), CATTN_INVALID_ARGUMENT, "plan");
  const cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  const cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  EXPECT_CATTN_ERROR(cattn_step_plan_run(plan, &b, &o, nullptr), CATTN_INVALID_ARGUMENT, "plan");
  cattn_step_plan_destroy(plan);  // twice: left alone, with a message
  EXPECT_NE(std::string(cattn_last_error_message()).find("cattn_step_plan_destroy"),
            std::string::npos);
  EXPECT_CATTN_ERROR(cattn_step_plan_run(nullptr, &b, &o, nullptr), CATTN_INVALID_ARGUMENT, "plan");
  // A handle of another kind.
  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  EXPECT_CATTN_ERROR(cattn_step_plan_get_shape(reinterpret_cast<cattn_step_plan_t*>(ctx), &s),
                     CATTN_INVALID_ARGUMENT, "plan");
  cattn_context_destroy(ctx);
}

namespace {

// One CUDA-labelled host tensor, its bytes kept to check that a refused run wrote nothing.
struct Fake {
  HostTensor h;
  DLTensor d{};
  Fake(std::vector<int64_t> shape, DLDataType t = i32()) : h(std::move(shape), t) {
    d = fake_cuda(h);
  }
  DLTensor* dl() { return &d; }
};
using FakePtr = std::unique_ptr<Fake>;

// A complete, valid run of an all-products plan on fake device memory.
struct FakeRun {
  PlanPtr plan;
  cattn_step_plan_shape_t shape = CATTN_STEP_PLAN_SHAPE_INIT;
  std::vector<FakePtr> tensors;
  cattn_step_batch_t batch = CATTN_STEP_BATCH_INIT;
  cattn_step_outputs_t out = CATTN_STEP_OUTPUTS_INIT;

  DLTensor* make(std::vector<int64_t> shape, DLDataType t = i32()) {
    tensors.push_back(std::make_unique<Fake>(std::move(shape), t));
    return tensors.back()->dl();
  }
  explicit FakeRun(const cattn_step_plan_desc_t& d) {
    EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan.p));
    EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan.p, &shape));
    const int64_t b = 40;  // fewer rows than the capacity
    batch.query_start_loc = make({b + 1});
    batch.seq_lens = make({b});
    batch.block_table = make({b, 20});
    batch.cu_num_tokens = make({b + 1});
    batch.logits_indices = make({80});
    batch.num_logits_indices = make({1});
    out.dcp_local_seq_lens = make({b, d.dcp.dcp_size});
    out.pcp_query_restore_idx = make({shape.restore_capacity});
    out.mamba_block_table = make({b, shape.mamba_columns});
    out.conv1d_nums = make({b});
    out.conv1d_mlist = make({shape.conv1d_capacity});
    out.conv1d_offsetlist = make({shape.conv1d_capacity});
    out.conv1d_batch_ptr = make({shape.conv1d_capacity + 5});
    out.conv1d_token_chunk_offset_ptr = make({shape.conv1d_capacity});
    out.local_query_start_loc = make({shape.local_capacity + 1});
    out.local_seq_lens = make({shape.local_capacity});
    out.local_num_computed_tokens = make({shape.local_capacity});
    out.local_block_table = make({shape.local_capacity, shape.local_pages});
    out.decode_query_start_loc = make({b + 1});
    out.extend_query_start_loc = make({b + 1});
    out.extend_seq_lens = make({b});
    out.counts = make({CATTN_STEP_NUM_COUNTS}, i64());
  }
  cattn_status_t run(const cattn_step_batch_t& bb, const cattn_step_outputs_t& oo) {
    return cattn_step_plan_run(plan.p, &bb, &oo, nullptr);
  }
  std::vector<std::vector<uint8_t>> snapshot() {
    std::vector<std::vector<uint8_t>> s;
    for (auto& t : tensors) s.push_back(t->h.bytes());
    return s;
  }
};

}  // namespace

TEST(step_plan, RunChecksEveryArgumentOnTheHost) {
  // Each case edits a fresh valid run, `r`; the overlap cases point at r's other tensors.
  std::unique_ptr<FakeRun> cur = std::make_unique<FakeRun>(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
  FakeRun* r_ptr = cur.get();
  const cattn_step_plan_shape_t shape = r_ptr->shape;
  using Edit = std::function<void(cattn_step_batch_t&, cattn_step_outputs_t&)>;
  HostTensor host_qsl({41}, i32());
  Fake counts_cpu({CATTN_STEP_NUM_COUNTS}, i64());
  counts_cpu.d.device = {kDLCPU, 0};
  Fake counts_pinned({CATTN_STEP_NUM_COUNTS}, i64());
  counts_pinned.d.device = {kDLCUDAHost, 0};
  Fake big_qsl({50});
  Fake wide_table({40, 25});
  Fake many_logits({97});
  Fake two_counts({2});
  Fake short_restore({shape.restore_capacity - 1});
  Fake short_mlist({shape.conv1d_capacity - 1});
  Fake short_local({shape.local_capacity - 1});
  Fake short_local_qsl({shape.local_capacity});
  Fake bad_pages({shape.local_capacity, shape.local_pages + 1});
  Fake i64_table({shape.local_capacity, shape.local_pages}, i64());
  Fake mamba_cols({40, 4});
  Fake dcp_flat({40});
  Fake other_gpu({41});
  other_gpu.d.device.device_id = 1;
  int64_t zero_stride[1] = {0};
  int64_t huge[1] = {int64_t{CATTN_MAX_BROADCAST_ELEMENTS} + 1};
  const struct {
    Edit edit;
    cattn_status_t code;
    const char* needle;
  } cases[] = {
      {[](auto& b, auto&) { b.struct_size = 8; }, CATTN_INVALID_ARGUMENT, "batch"},
      {[](auto&, auto& o) { o.struct_size = 8; }, CATTN_INVALID_ARGUMENT, "outputs"},
      {[](auto& b, auto&) { b.query_start_loc = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->query_start_loc"},
      {[](auto& b, auto&) { b.seq_lens = nullptr; }, CATTN_INVALID_ARGUMENT, "batch->seq_lens"},
      {[](auto& b, auto&) { b.block_table = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->block_table"},
      {[](auto& b, auto&) { b.logits_indices = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->logits_indices"},
      {[&](auto& b, auto&) { b.query_start_loc = big_qsl.dl(); }, CATTN_INVALID_ARGUMENT,
       "batch->query_start_loc exceeds the plan's capacity"},
      {[&](auto& b, auto&) { b.seq_lens = wide_table.dl(); }, CATTN_INVALID_ARGUMENT,
       "batch->seq_lens has the wrong ndim"},
      {[&](auto& b, auto&) { b.block_table = wide_table.dl(); }, CATTN_INVALID_ARGUMENT,
       "max_num_blocks_per_req"},
      {[&](auto& b, auto&) { b.logits_indices = many_logits.dl(); }, CATTN_INVALID_ARGUMENT,
       "desc->max_num_logits"},
      {[&](auto& b, auto&) { b.num_logits_indices = two_counts.dl(); }, CATTN_INVALID_ARGUMENT,
       "batch->num_logits_indices"},
      {[&](auto& b, auto&) { b.query_start_loc = host_qsl.dl(); }, CATTN_INVALID_ARGUMENT,
       "different device"},
      {[&](auto& b, auto&) { b.query_start_loc = other_gpu.dl(); }, CATTN_INVALID_ARGUMENT,
       "different device"},
      {[&](auto& b, auto&) {
         DLTensor* q = r_ptr->tensors[0]->dl();  // batch->query_start_loc
         q->shape = huge;
         q->strides = zero_stride;
         b.query_start_loc = q;
       },
       CATTN_INVALID_ARGUMENT, "broadcast"},
      {[](auto&, auto& o) { o.extend_seq_lens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->extend_seq_lens is NULL"},
      {[](auto&, auto& o) { o.local_seq_lens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->local_seq_lens"},
      {[&](auto&, auto& o) { o.pcp_query_restore_idx = short_restore.dl(); },
       CATTN_INSUFFICIENT_SIZE, "outputs->pcp_query_restore_idx"},
      {[&](auto&, auto& o) { o.conv1d_mlist = short_mlist.dl(); }, CATTN_INSUFFICIENT_SIZE,
       "outputs->conv1d_mlist"},
      {[&](auto&, auto& o) {
         o.local_seq_lens = short_local.dl();
         o.local_query_start_loc = short_local_qsl.dl();
         o.local_num_computed_tokens = nullptr;
         o.local_block_table = nullptr;
       },
       CATTN_INSUFFICIENT_SIZE, "outputs->local_seq_lens"},
      {[&](auto&, auto& o) { o.local_block_table = bad_pages.dl(); }, CATTN_INVALID_ARGUMENT,
       "outputs->local_block_table"},
      {[&](auto&, auto& o) { o.local_block_table = i64_table.dl(); }, CATTN_INVALID_ARGUMENT,
       "outputs->local_block_table"},
      {[&](auto&, auto& o) { o.mamba_block_table = mamba_cols.dl(); }, CATTN_INVALID_ARGUMENT,
       "outputs->mamba_block_table"},
      {[&](auto&, auto& o) { o.dcp_local_seq_lens = dcp_flat.dl(); }, CATTN_INVALID_ARGUMENT,
       "outputs->dcp_local_seq_lens"},
      {[&](auto&, auto& o) { o.counts = two_counts.dl(); }, CATTN_INSUFFICIENT_SIZE,
       "outputs->counts"},
      {[&](auto&, auto& o) { o.counts_host = counts_cpu.dl(); }, CATTN_INVALID_ARGUMENT,
       "outputs->counts_host is not pinned host memory"},
      {[&](auto& b, auto&) { b.query_start_loc = r_ptr->out.extend_query_start_loc; },
       CATTN_INVALID_ARGUMENT, "overlaps an input"},
      {[&](auto&, auto& o) { o.decode_query_start_loc = o.extend_query_start_loc; },
       CATTN_INVALID_ARGUMENT, "overlaps another output"},
      {[&](auto&, auto& o) {
         counts_pinned.d.data = r_ptr->batch.seq_lens->data;
         o.counts_host = counts_pinned.dl();
       },
       CATTN_INVALID_ARGUMENT, "outputs->counts_host overlaps"},
      {[&](auto&, auto& o) { o.conv1d_batch_ptr->strides = zero_stride; },
       CATTN_INVALID_ARGUMENT, "outputs->conv1d_batch_ptr"},
  };
  for (const auto& c : cases) {
    FakeRun& r = *r_ptr;
    cattn_step_batch_t b = r.batch;
    cattn_step_outputs_t o = r.out;
    c.edit(b, o);
    SCOPED_TRACE(c.needle);
    const auto before = r.snapshot();
    EXPECT_CATTN_ERROR(r.run(b, o), c.code, c.needle);
    EXPECT_EQ(r.snapshot(), before) << "a refused run wrote";
    // The next case starts again from a valid run (some edits changed r's tensors).
    cur = std::make_unique<FakeRun>(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
    r_ptr = cur.get();
  }
}

TEST(step_plan, RunRefusesOutputsOfProductsNotSelected) {
  FakeRun r(test_step_desc(CATTN_STEP_EXTEND_QUERIES | CATTN_STEP_FAST_PREFILL));
  cattn_step_outputs_t o = r.out;
  // Everything else FakeRun made is for products this plan does not compute.
  EXPECT_CATTN_ERROR(r.run(r.batch, o), CATTN_INVALID_ARGUMENT,
                     "outputs->dcp_local_seq_lens is set for a product the plan does not compute");
  cattn_step_outputs_t only = CATTN_STEP_OUTPUTS_INIT;
  only.decode_query_start_loc = o.decode_query_start_loc;
  only.extend_query_start_loc = o.extend_query_start_loc;
  only.extend_seq_lens = o.extend_seq_lens;
  only.local_seq_lens = o.local_seq_lens;
  EXPECT_CATTN_ERROR(r.run(r.batch, only), CATTN_INVALID_ARGUMENT, "outputs->local_seq_lens");
  only.local_seq_lens = nullptr;
  // Inputs the products do not read may be NULL.
  cattn_step_batch_t b = r.batch;
  b.block_table = nullptr;
  b.cu_num_tokens = nullptr;
#if defined(CATTN_TEST_WITH_CUDA)
  (void)b;  // valid arguments would launch on the fake memory
#else
  EXPECT_CATTN_ERROR(r.run(b, only), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
#endif
}

TEST(step_plan, ValidRunReachesTheDeviceOnly) {
#if defined(CATTN_TEST_WITH_CUDA)
  GTEST_SKIP() << "valid arguments would launch on fake device memory in a CUDA build";
#else
  FakeRun r(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
  const auto before = r.snapshot();
  EXPECT_CATTN_ERROR(r.run(r.batch, r.out), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
  EXPECT_EQ(r.snapshot(), before);
  // Host tensors throughout: the plan is for the device.
  FakeRun h(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
  for (auto& t : h.tensors) t->d.device = {kDLCPU, 0};
  EXPECT_CATTN_ERROR(h.run(h.batch, h.out), CATTN_INVALID_ARGUMENT, "is not device memory");
#endif
}

TEST(step_plan, RunNamesTheOnlyTensorsGiven) {
  // A restore-index plan fed by cu_num_tokens alone, on the host: the refusal names it (the
  // first version read the absent block_table here).
  cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_PCP_QUERY_RESTORE_IDX);
  d.max_num_blocks_per_req = 0;  // no product of this plan reads a block table
  PlanPtr p;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &p.p));
  HostTensor cu = HostTensor::of({0, 2, 4}, i32()), out({d.max_num_tokens}, i32());
  const auto before = out.bytes();
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.cu_num_tokens = cu.dl();
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  o.pcp_query_restore_idx = out.dl();
  EXPECT_CATTN_ERROR(cattn_step_plan_run(p.p, &b, &o, nullptr), CATTN_INVALID_ARGUMENT,
                     "batch->cu_num_tokens is not device memory");
  EXPECT_EQ(out.bytes(), before);
  // A block table given to this plan has no room.
  HostTensor table({2, 1}, i32());
  DLTensor table_d = fake_cuda(table);
  b.block_table = &table_d;
  EXPECT_CATTN_ERROR(cattn_step_plan_run(p.p, &b, &o, nullptr), CATTN_INVALID_ARGUMENT,
                     "desc->max_num_blocks_per_req");
}

TEST(step_plan, RunRechecksEveryChangeSinceTheLastCheckedRun) {
  // A run described as the plan's last checked run skips the checks, so each edit below comes
  // after a valid run of the same plan, and most change the caller's DLTensors in place (the
  // same pointers, new fields or shape and stride values): each must still be refused, and
  // the valid run answer as before once the edit is undone. Valid runs answer
  // CATTN_NOT_SUPPORTED only in a CPU-only build; a CUDA build would launch on fake memory.
#if defined(CATTN_TEST_WITH_CUDA)
  GTEST_SKIP() << "valid arguments would launch on fake device memory in a CUDA build";
#else
  using Edit = std::function<void(FakeRun&, cattn_step_batch_t&, cattn_step_outputs_t&)>;
  int64_t table_strides[2] = {0, 1};
  int64_t three_dims[3] = {CATTN_STEP_NUM_COUNTS, 1, 1};
  const struct {
    const char* what;
    Edit edit, undo;
    cattn_status_t code;
    const char* needle;
  } cases[] = {
      {"a shape value", [](auto& r, auto&, auto&) { r.out.extend_seq_lens->shape[0] -= 1; },
       [](auto& r, auto&, auto&) { r.out.extend_seq_lens->shape[0] += 1; },
       CATTN_INSUFFICIENT_SIZE, "outputs->extend_seq_lens"},
      {"ndim", [](auto& r, auto&, auto&) { r.tensors[2]->d.ndim = 1; },
       [](auto& r, auto&, auto&) { r.tensors[2]->d.ndim = 2; }, CATTN_INVALID_ARGUMENT,
       "batch->block_table has the wrong ndim"},
      {"dtype", [](auto& r, auto&, auto&) { r.out.counts->dtype = {kDLFloat, 64, 1}; },
       [](auto& r, auto&, auto&) { r.out.counts->dtype = i64(); }, CATTN_INVALID_ARGUMENT,
       "outputs->counts has the wrong dtype"},
      {"data",
       [](auto& r, auto&, auto&) {
         r.out.decode_query_start_loc->data = r.out.extend_query_start_loc->data;
       },
       [](auto& r, auto&, auto&) {
         r.out.decode_query_start_loc->data = r.tensors[18]->h.dl()->data;
       },
       CATTN_INVALID_ARGUMENT, "overlaps another output"},
      {"byte_offset",
       [](auto& r, auto&, auto&) {
         // The lower of two outputs moved onto the other by its byte_offset alone.
         DLTensor *lo = r.out.extend_seq_lens, *hi = r.out.extend_query_start_loc;
         if (lo->data > hi->data) std::swap(lo, hi);
         lo->byte_offset = static_cast<uint64_t>(static_cast<char*>(hi->data) -
                                                 static_cast<char*>(lo->data));
       },
       [](auto& r, auto&, auto&) {
         r.out.extend_seq_lens->byte_offset = 0;
         r.out.extend_query_start_loc->byte_offset = 0;
       },
       CATTN_INVALID_ARGUMENT, "overlaps another output"},
      {"device_id", [](auto& r, auto&, auto&) { r.tensors[0]->d.device.device_id = 1; },
       [](auto& r, auto&, auto&) { r.tensors[0]->d.device.device_id = 0; },
       CATTN_INVALID_ARGUMENT, "different device"},
      {"device_type", [](auto& r, auto&, auto&) { r.tensors[1]->d.device = {kDLCPU, 0}; },
       [](auto& r, auto&, auto&) { r.tensors[1]->d.device = {kDLCUDA, 0}; },
       CATTN_INVALID_ARGUMENT, "different device"},
      {"a stride value", [&](auto&, auto&, auto&) { table_strides[1] = 0; },
       [&](auto&, auto&, auto&) { table_strides[1] = 1; }, CATTN_INVALID_ARGUMENT,
       "outputs->local_block_table is an output with a zero stride"},
      {"an ndim no key holds",
       [&](auto& r, auto&, auto&) {
         r.out.counts->shape = three_dims;
         r.out.counts->ndim = 3;
       },
       [](auto& r, auto&, auto&) {
         r.out.counts->shape = r.tensors[21]->h.dl()->shape;
         r.out.counts->ndim = 1;
       },
       CATTN_INVALID_ARGUMENT, "outputs->counts has the wrong ndim"},
      {"a required tensor gone", [](auto&, auto&, auto& o) { o.extend_seq_lens = nullptr; },
       [](auto&, auto&, auto&) {}, CATTN_INVALID_ARGUMENT, "outputs->extend_seq_lens is NULL"},
      {"the mirror's device type",
       [](auto&, auto&, auto& o) { o.counts_host->device = {kDLCPU, 0}; },
       [](auto&, auto&, auto& o) { o.counts_host->device = {kDLCUDAHost, 0}; },
       CATTN_INVALID_ARGUMENT, "outputs->counts_host is not pinned host memory"},
      {"the mirror's shape value",
       [](auto&, auto&, auto& o) { o.counts_host->shape[0] = CATTN_STEP_NUM_COUNTS_1_1 - 1; },
       [](auto&, auto&, auto& o) { o.counts_host->shape[0] = CATTN_STEP_NUM_COUNTS; },
       CATTN_INSUFFICIENT_SIZE, "outputs->counts_host"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    FakeRun r(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
    Fake mirror({CATTN_STEP_NUM_COUNTS}, i64());
    mirror.d.device = {kDLCUDAHost, 0};
    r.out.counts_host = mirror.dl();
    table_strides[0] = r.shape.local_pages;
    table_strides[1] = 1;
    r.out.local_block_table->strides = table_strides;
    cattn_step_batch_t b = r.batch;
    cattn_step_outputs_t o = r.out;
    const auto before = r.snapshot();
    EXPECT_CATTN_ERROR(r.run(b, o), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
    EXPECT_CATTN_ERROR(r.run(b, o), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
    c.edit(r, b, o);
    EXPECT_CATTN_ERROR(r.run(b, o), c.code, c.needle);
    EXPECT_CATTN_ERROR(r.run(b, o), c.code, c.needle);  // a refused run is not remembered
    c.undo(r, b, o);
    b = r.batch;
    o = r.out;
    EXPECT_CATTN_ERROR(r.run(b, o), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
    // The same descriptors in other DLTensor structs are the same run.
    std::vector<DLTensor> copies;
    copies.reserve(2);
    copies.push_back(*o.counts);
    copies.push_back(*b.query_start_loc);
    o.counts = &copies[0];
    b.query_start_loc = &copies[1];
    EXPECT_CATTN_ERROR(r.run(b, o), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
    EXPECT_EQ(r.snapshot(), before) << "a run wrote";
  }
#endif
}

TEST(step_plan, RunRemembersPerPlan) {
  // What one plan accepted says nothing to another: the same tensors go through every check
  // of a plan that computes other products.
#if defined(CATTN_TEST_WITH_CUDA)
  GTEST_SKIP() << "valid arguments would launch on fake device memory in a CUDA build";
#else
  FakeRun r(test_step_desc(CATTN_STEP_ALL_PRODUCTS));
  EXPECT_CATTN_ERROR(r.run(r.batch, r.out), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
  PlanPtr other;
  const cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_EXTEND_QUERIES);
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &other.p));
  EXPECT_CATTN_ERROR(cattn_step_plan_run(other.p, &r.batch, &r.out, nullptr),
                     CATTN_INVALID_ARGUMENT,
                     "outputs->dcp_local_seq_lens is set for a product the plan does not compute");
  EXPECT_CATTN_ERROR(r.run(r.batch, r.out), CATTN_NOT_SUPPORTED, "cattn_step_plan_run");
#endif
}

TEST(step_plan, RunsOnSeveralThreadsShareOneMemo) {
  // Threads run one plan with their own tensors, valid and refused in turn, so the remembered
  // run keeps changing under them: each call must still get its own answer.
#if defined(CATTN_TEST_WITH_CUDA)
  GTEST_SKIP() << "valid arguments would launch on fake device memory in a CUDA build";
#else
  PlanPtr shared;
  const cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_ALL_PRODUCTS);
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &shared.p));
  constexpr int kThreads = 4, kCalls = 400;
  std::vector<std::unique_ptr<FakeRun>> runs;
  for (int i = 0; i < kThreads; ++i) runs.push_back(std::make_unique<FakeRun>(d));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      FakeRun& r = *runs[static_cast<size_t>(i)];
      cattn_step_outputs_t bad = r.out;
      bad.extend_seq_lens = nullptr;
      for (int c = 0; c < kCalls; ++c) {
        const bool valid = (c + i) % 3 != 0;
        const cattn_status_t s =
            cattn_step_plan_run(shared.p, &r.batch, valid ? &r.out : &bad, nullptr);
        if (s != (valid ? CATTN_NOT_SUPPORTED : CATTN_INVALID_ARGUMENT)) ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
#endif
}
