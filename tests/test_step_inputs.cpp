// SPDX-License-Identifier: Apache-2.0
// The step-input calls on host tensors against vLLM's MRV2 and v1 code
// (tests/vectors/step_inputs.json), the padding contract's check, and refused arguments.
#include <gtest/gtest.h>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/step_inputs_case.h"
#include "support/vectors.h"

namespace {

using cattn_test::HostTensor;
using cattn_test::i32;
using cattn_test::i64;

cattn_test::TensorMaker host_maker() {
  return {[](HostTensor& t) { return t.dl(); }, [](HostTensor&) {}, [] {}};
}

TEST(step_inputs, VectorsOnHostInt32AndInt64) {
  const auto v = cattn_test::load_vectors("step_inputs");
  cattn_test::TensorMaker m = host_maker();
  int cases = 0, bad = 0;
  for (const auto& c : v["cases"]) {
    bad += cattn_test::run_step_inputs_case(c, i64(), m);
    if (!c.value("mrv2_wraps", false)) bad += cattn_test::run_step_inputs_case(c, i32(), m);
    ++cases;
  }
  EXPECT_GE(cases, 50);
  EXPECT_EQ(bad, 0);
}

// A padded row that is not empty, and each field the check reports.
TEST(step_inputs, BatchCheckReportsTheFirstDefect) {
  HostTensor qsl = HostTensor::of({0, 3, 4, 4, 5}, i32());
  HostTensor nreq = HostTensor::of({2}, i32());
  HostTensor seq = HostTensor::of({5, 1, 0, 0}, i32());
  HostTensor table = HostTensor::of({1, 2, 3, 4, 0, 0, 0, 7}, i32(), {4, 2});
  HostTensor slots = HostTensor::of({10, 11, 12, 13, -1, 9}, i64());
  HostTensor status({3}, i64());
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  a.query_start_loc = qsl.dl(), a.num_reqs = nreq.dl(), a.seq_lens = seq.dl();
  a.block_tables[1] = table.dl(), a.slot_mappings[2] = slots.dl(), a.status = status.dl();
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_QUERY_START_LOC, 4, 0}));
  qsl.set(4, 4);
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_BLOCK_TABLE, 3, 1}));
  table.set(7, 0);
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_SLOT_MAPPING, 5, 2}));
  slots.set(5, -1);
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
  EXPECT_EQ(status.values(), (std::vector<int64_t>{0, 0, 0}));
  seq.set(3, 2);
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_SEQ_LENS, 3, 0}));
  nreq.set(0, 5);
  ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
  EXPECT_EQ(status.values()[0], CATTN_STEP_CHECK_NUM_REQS);
}

// Host values out of range are refused, naming the argument, with nothing written.
TEST(step_inputs, HostRefusesValuesOutOfRange) {
  HostTensor sched = HostTensor::of({2, -1, 3}, i32());
  HostTensor idx = HostTensor::of({0, 1, 2}, i32());
  HostTensor nct = HostTensor::of({0, 0, 0}, i32());
  HostTensor qsl({4}, i32()), seq({3}, i32()), pos({8}, i64());
  const std::vector<uint8_t> before = qsl.bytes();
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = sched.dl(), a.idx_mapping = idx.dl(), a.num_computed_tokens = nct.dl();
  a.query_start_loc = qsl.dl(), a.seq_lens = seq.dl(), a.positions = pos.dl();
  EXPECT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("args->num_scheduled_tokens"),
            std::string::npos);
  EXPECT_EQ(qsl.bytes(), before);
  sched.set(1, 1);
  idx.set(2, 9);
  EXPECT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("args->idx_mapping"), std::string::npos);
  idx.set(2, 2);
  HostTensor small({5}, i64());
  a.positions = small.dl();
  EXPECT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_INSUFFICIENT_SIZE);
  a.positions = pos.dl();
  ASSERT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(qsl.values(), (std::vector<int64_t>{0, 2, 3, 6}));
  EXPECT_EQ(pos.values(), (std::vector<int64_t>{0, 1, 0, 0, 1, 2, 0, 0}));
}

// The statements of the padding contract about the live count and the gather's counts, on
// the host: a num_reqs outside [0, B] and a num_blocks entry outside [0, W] are refused by name
// (the device clamps both: step_inputs_gpu.HostileValuesStayInBounds).
TEST(step_inputs, HostRefusesALiveCountOrABlockCountOutOfRange) {
  HostTensor sched = HostTensor::of({2, 1}, i32()), idx = HostTensor::of({0, 1}, i32());
  HostTensor nct = HostTensor::of({0, 0}, i32()), qsl({3}, i32()), seq({2}, i32());
  for (const int64_t n : {int64_t{-1}, int64_t{3}}) {
    HostTensor nreq = HostTensor::of({n}, i32());
    cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
    a.num_scheduled_tokens = sched.dl(), a.idx_mapping = idx.dl();
    a.num_computed_tokens = nct.dl(), a.num_reqs = nreq.dl();
    a.query_start_loc = qsl.dl(), a.seq_lens = seq.dl();
    EXPECT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_INVALID_ARGUMENT) << n;
    EXPECT_NE(std::string(cattn_last_error_message()).find("args->num_reqs"), std::string::npos)
        << cattn_last_error_message();
  }
  HostTensor table = HostTensor::of({1, 2, 3, 4}, i32(), {2, 2}), out({2, 2}, i32());
  for (const int64_t n : {int64_t{-1}, int64_t{3}}) {
    HostTensor nb = HostTensor::of({2, n}, i32());
    cattn_gather_block_tables_args_t g = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
    g.idx_mapping = idx.dl(), g.block_table = table.dl(), g.num_blocks = nb.dl(), g.out = out.dl();
    EXPECT_EQ(cattn_gather_block_tables(&g), CATTN_INVALID_ARGUMENT) << n;
    EXPECT_NE(std::string(cattn_last_error_message()).find("args->num_blocks"), std::string::npos)
        << cattn_last_error_message();
  }
}

// One rule for overlaps: an output over an input, over another output, over the args struct.
TEST(step_inputs, OverlapsAreRefused) {
  HostTensor idx = HostTensor::of({0, 1}, i32());
  HostTensor table = HostTensor::of({1, 2, 3, 4}, i32(), {2, 2});
  cattn_gather_block_tables_args_t a = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  a.idx_mapping = idx.dl(), a.block_table = table.dl();
  DLTensor over = *table.dl();
  a.out = &over;
  EXPECT_EQ(cattn_gather_block_tables(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("overlaps"), std::string::npos);
  cattn_compute_slot_mappings_args_t s = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  s.block_size = 16, s.kernel_block_size = 16, s.contract = 7;
  EXPECT_EQ(cattn_compute_slot_mappings(&s), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("args->contract"), std::string::npos);
  s.contract = CATTN_SLOT_MAPPING_MRV2, s.kernel_block_size = 6;
  EXPECT_EQ(cattn_compute_slot_mappings(&s), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("kernel_block_size"), std::string::npos);
}

}  // namespace

namespace {

// Every padded row of every vector case, made malformed one field at a time, is caught: the
// check names that field and that row (or token).
TEST(step_inputs, BatchCheckCatchesEveryMalformedPaddingRow) {
  const auto v = cattn_test::load_vectors("step_inputs");
  int caught = 0, missed = 0;
  for (const auto& c : v["cases"]) {
    const int64_t B = c["B"], n = c["num_reqs"];
    const auto& e = c["expected"];
    HostTensor qsl = HostTensor::of(cattn_test::ints(e["query_start_loc"]), i64());
    HostTensor seq = HostTensor::of(
        cattn_test::unwritten_as(cattn_test::ints(e["seq_lens"]), 0), i64());
    HostTensor nreq = HostTensor::of({n}, i64());
    const int64_t W = c["groups"][0]["table"][0].size();
    HostTensor table = HostTensor::of(cattn_test::row_major(e["block_tables"][0]), i64(), {B, W});
    const bool slotted = c["groups"][0]["slot_mode"].get<int>() == 0;
    const int64_t T = c["T_cap"];
    const char* key = e.contains("slot_mappings_mrv2_int64") &&
                              !e["slot_mappings_mrv2_int64"][0].is_null()
                          ? "slot_mappings_mrv2_int64"
                          : "slot_mappings_mrv2";  // libcattn's slots do not wrap
    HostTensor slots = slotted ? HostTensor::of(cattn_test::unwritten_as(
                                                    cattn_test::ints(e[key][0]), -1),
                                                i64())
                               : HostTensor::of(std::vector<int64_t>(T, -1), i64());
    HostTensor status({3}, i64());
    cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
    a.query_start_loc = qsl.dl(), a.num_reqs = nreq.dl(), a.seq_lens = seq.dl();
    a.block_tables[0] = table.dl(), a.slot_mappings[0] = slots.dl(), a.status = status.dl();
    auto expect_report = [&](int64_t field, int64_t index) {
      ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK) << cattn_last_error_message();
      const std::vector<int64_t> got = status.values();
      if (got[0] == field && got[1] == index) ++caught;
      else {
        ++missed;
        ADD_FAILURE() << c["name"] << ": want field " << field << " at " << index << ", got "
                      << got[0] << " at " << got[1];
      }
    };
    expect_report(0, 0);  // as computed: no defect
    const int64_t total = qsl.get(n);
    for (int64_t b = n; b < B; ++b) {
      qsl.set(b + 1, total + 1);  // a padded row with a token
      expect_report(CATTN_STEP_CHECK_QUERY_START_LOC, b + 1);
      qsl.set(b + 1, total);
      seq.set(b, 1);  // a padded row with a length
      expect_report(CATTN_STEP_CHECK_SEQ_LENS, b);
      seq.set(b, 0);
      table.set(b * W + (W - 1), 7);  // a padded row with a block
      expect_report(CATTN_STEP_CHECK_BLOCK_TABLE, b);
      table.set(b * W + (W - 1), 0);
    }
    for (int64_t t = total; t < T; t += std::max<int64_t>(1, (T - total) / 7)) {
      slots.set(t, 0);  // a padded token with a slot
      expect_report(CATTN_STEP_CHECK_SLOT_MAPPING, t);
      slots.set(t, -1);
    }
  }
  EXPECT_GT(caught, 500);
  EXPECT_EQ(missed, 0);
}

}  // namespace

#include <deque>

#include "support/device_tensor.h"
#include "support/status_matchers.h"
#include "support/step_reference.h"

namespace {

// A plan of every product and eight KV-cache groups on fake device tensors, every tensor with
// explicit strides (the most ranges a run records): its checks pass, so a CPU-only build
// answers CATTN_NOT_SUPPORTED at the launch; the new products' argument rules refuse by name.
struct FakeInputsRun {
  std::deque<HostTensor> host;
  std::deque<DLTensor> dev;
  std::deque<std::vector<int64_t>> strides;
  cattn_step_plan_t* plan = nullptr;
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  DLTensor* make(std::vector<int64_t> shape, DLDataType t = i32()) {
    host.emplace_back(shape, t);
    dev.push_back(cattn_test::fake_cuda(host.back()));
    strides.emplace_back(shape.size(), 1);
    for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
      strides.back()[i] = strides.back()[i + 1] * shape[i + 1];
    dev.back().strides = strides.back().data();
    return &dev.back();
  }
  FakeInputsRun() {
    cattn_step_plan_desc_t d = cattn_test::test_step_desc(CATTN_STEP_ALL_PRODUCTS |
                                                          CATTN_STEP_INPUT_PRODUCTS);
    const int64_t B = 40, R = 64, T = d.max_num_tokens, W = 24;
    d.max_num_persistent_reqs = R;
    d.inputs.num_kv_groups = CATTN_MAX_KV_GROUPS;
    for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g)
      d.kv_groups[g] = {16, 16, W, g == 7 ? CATTN_SLOT_MODE_NONE : CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
    EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan));
    cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
    EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan, &sh));
    b.cu_num_tokens = make({B + 1});
    b.logits_indices = make({80});
    b.num_logits_indices = make({1});
    b.num_reqs = make({1}), b.num_scheduled_tokens = make({B}), b.idx_mapping = make({B});
    b.num_computed_tokens = make({R}), b.num_draft_tokens = make({B});
    for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
      b.kv_block_tables[g] = make({R, W});
      b.kv_num_blocks[g] = make({R});
      o.block_tables[g] = make({B, W});
      if (g != 7) o.slot_mappings[g] = make({T}, i64());
    }
    o.dcp_local_seq_lens = make({B, d.dcp.dcp_size});
    o.pcp_query_restore_idx = make({sh.restore_capacity});
    o.mamba_block_table = make({B, sh.mamba_columns});
    o.conv1d_nums = make({B});
    for (DLTensor** p : {&o.conv1d_mlist, &o.conv1d_offsetlist, &o.conv1d_batch_ptr,
                         &o.conv1d_token_chunk_offset_ptr})
      *p = make({sh.conv1d_capacity});
    o.local_query_start_loc = make({sh.local_capacity + 1});
    o.local_seq_lens = make({sh.local_capacity});
    o.local_num_computed_tokens = make({sh.local_capacity});
    o.local_block_table = make({sh.local_capacity, sh.local_pages});
    o.decode_query_start_loc = make({B + 1});
    o.extend_query_start_loc = make({B + 1});
    o.extend_seq_lens = make({B});
    o.counts = make({CATTN_STEP_NUM_COUNTS}, i64());
    o.query_start_loc = make({B + 1}), o.seq_lens = make({B}), o.positions = make({T}, i64());
    o.num_computed_tokens = make({B});
    o.logits_indices = make({d.max_num_logits}, i64()), o.cu_num_logits = make({B + 1});
    o.expanded_idx_mapping = make({d.max_num_logits}), o.expanded_local_pos = make({d.max_num_logits});
    o.token_to_req_indices = make({T});
  }
  ~FakeInputsRun() { cattn_step_plan_destroy(plan); }
  cattn_status_t run(const cattn_step_batch_t& bb, const cattn_step_outputs_t& oo) {
    return cattn_step_plan_run(plan, &bb, &oo, nullptr);
  }
};

// Its checks pass: a CPU-only build says so at the launch, and so does a CUDA build on a machine
// without a device. On a GPU the fake memory would be launched on; there the same plan runs on
// device memory (step_inputs_gpu.EveryProductWithEightGroupsReplays).
TEST(step_inputs_plan, EveryProductAndEightGroupsPassTheChecks) {
  int32_t gpus = 0;
  if (cattn_cuda_device_count(&gpus) == CATTN_OK && gpus > 0)
    GTEST_SKIP() << "valid arguments would launch on fake device memory; on a GPU "
                    "step_inputs_gpu.EveryProductWithEightGroupsReplays runs this plan";
  FakeInputsRun r;
  const cattn_status_t s = r.run(r.b, r.o);
  const std::string m = cattn_last_error_message();
  EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << m;
  EXPECT_TRUE(m.find("CPU-only") != std::string::npos ||
              m.find("no usable CUDA device") != std::string::npos)
      << m;
}

TEST(step_inputs_plan, NewArgumentsAreRefusedByName) {
  FakeInputsRun r;
  HostTensor h({41}, i32());
  DLTensor qsl = cattn_test::fake_cuda(h);
  HostTensor h32({1536}, i32());
  DLTensor slots32 = cattn_test::fake_cuda(h32);
  HostTensor h8({8}, i64());
  DLTensor counts8 = cattn_test::fake_cuda(h8);
  using Edit = std::function<void(cattn_step_batch_t&, cattn_step_outputs_t&)>;
  const struct {
    Edit edit;
    cattn_status_t code;
    const char* needle;
  } cases[] = {
      {[&](auto& b, auto&) { b.query_start_loc = &qsl; }, CATTN_INVALID_ARGUMENT,
       "batch->query_start_loc is set but the plan computes it"},
      {[&](auto& b, auto&) { b.num_scheduled_tokens = nullptr; }, CATTN_INVALID_ARGUMENT,
       "batch->num_scheduled_tokens is NULL"},
      {[&](auto&, auto& o) { o.slot_mappings[7] = &slots32; }, CATTN_INVALID_ARGUMENT,
       "outputs->slot_mappings[7] is set for a group or product the plan does not compute"},
      {[&](auto&, auto& o) { o.slot_mappings[2] = &slots32; }, CATTN_INVALID_ARGUMENT,
       "outputs->slot_mappings[2] has the wrong dtype"},
      {[&](auto&, auto& o) { o.block_tables[3] = nullptr; }, CATTN_INVALID_ARGUMENT,
       "outputs->block_tables[3] is NULL"},
      {[&](auto&, auto& o) { o.counts = &counts8; }, CATTN_INSUFFICIENT_SIZE, "outputs->counts"},
      {[&](auto&, auto& o) { o.query_start_loc = o.seq_lens; }, CATTN_INSUFFICIENT_SIZE,
       "outputs->query_start_loc has the wrong size"},
      {[&](auto&, auto& o) { o.positions = o.token_to_req_indices; }, CATTN_INVALID_ARGUMENT,
       "outputs->"},
  };
  for (const auto& c : cases) {
    cattn_step_batch_t b = r.b;
    cattn_step_outputs_t o = r.o;
    c.edit(b, o);
    SCOPED_TRACE(c.needle);
    EXPECT_CATTN_ERROR(r.run(b, o), c.code, c.needle);
  }
  // A 1.1-sized desc may not select a step-input product.
  cattn_step_plan_desc_t d = cattn_test::test_step_desc(CATTN_STEP_INPUTS);
  d.struct_size = CATTN_STEP_PLAN_DESC_SIZE_1_1;
  cattn_step_plan_t* p = nullptr;
  EXPECT_CATTN_ERROR(cattn_step_plan_create(&d, &p), CATTN_INVALID_ARGUMENT,
                     "selects a 1.2 product in a 1.1 desc");
}

}  // namespace

namespace {

// Fuzz defects of 1.2 now refused: a seq_len past int64, and a broadcast input the batch check
// would scan past CATTN_MAX_BROADCAST_ELEMENTS.
TEST(step_inputs, HostRefusesASeqLenPastInt64AndUnboundedBroadcasts) {
  HostTensor sched = HostTensor::of({1}, i64()), idx = HostTensor::of({0}, i64());
  HostTensor nct = HostTensor::of({INT64_MAX}, i64());
  HostTensor qsl({2}, i64()), seq({1}, i64());
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = sched.dl(), a.idx_mapping = idx.dl(), a.num_computed_tokens = nct.dl();
  a.query_start_loc = qsl.dl(), a.seq_lens = seq.dl();
  const auto before = seq.bytes();
  EXPECT_EQ(cattn_prepare_pos_seq_lens(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("args->num_computed_tokens"),
            std::string::npos);
  EXPECT_EQ(seq.bytes(), before);

  HostTensor q = HostTensor::of({0, 0}, i64()), status({3}, i64());
  int64_t huge = CATTN_MAX_BROADCAST_ELEMENTS + 1, zero = 0;
  HostTensor slot = HostTensor::of({-1}, i64());
  DLTensor wide = *slot.dl();
  wide.shape = &huge, wide.strides = &zero;
  cattn_step_batch_check_args_t c = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  c.query_start_loc = q.dl(), c.slot_mappings[0] = &wide, c.status = status.dl();
  EXPECT_EQ(cattn_step_batch_check(&c), CATTN_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cattn_last_error_message()).find("args->slot_mappings[0]"),
            std::string::npos);
}

}  // namespace
