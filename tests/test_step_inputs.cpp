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
