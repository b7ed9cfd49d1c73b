// SPDX-License-Identifier: Apache-2.0
// EAGLE's speculative-decoding calls on host tensors against vLLM's spec_decode/utils.py
// (tests/vectors/spec_decode.json), and their refusals: values out of range, overlaps, shapes.
#include <gtest/gtest.h>

#include <string>

#include "cattn.h"
#include "support/count_allocations.h"
#include "support/host_tensor.h"
#include "support/spec_decode_case.h"

namespace {

using cattn_test::HostTensor;
using cattn_test::i32;
using cattn_test::i64;

cattn_test::TensorMaker host_maker() {
  return {[](HostTensor& t) { return t.dl(); }, [](HostTensor&) {}, [] {}};
}

bool names(const std::string& arg) {
  return std::string(cattn_last_error_message()).find(arg) != std::string::npos;
}

// Every function's cases, with the counts the closing note reports.
TEST(spec_decode, VectorsOnHost) {
  cattn_test::TensorMaker m = host_maker();
  const char* fns[] = {"eagle_step_update_slot_mapping_and_metadata",
                       "eagle_prepare_inputs_padded", "eagle_prepare_next_token_padded",
                       "compute_new_slot_mapping", "copy_and_expand_eagle_inputs",
                       "update_num_computed_tokens_for_batch_change"};
  int total = 0;
  for (const char* f : fns) {
    const auto [cases, bad] = cattn_test::run_spec_decode_vectors(m, f);
    EXPECT_GE(cases, 10) << f;
    EXPECT_EQ(bad, 0) << f;
    std::printf("[ spec_decode ] %-46s %3d cases, %d mismatches\n", f, cases, bad);
    total += cases;
  }
  EXPECT_EQ(total, 142);
}

// eagle_step: a position below -1 is refused on the host with nothing written; the clamped
// positions may be the positions' very view; other overlaps are refused.
TEST(spec_decode, EagleStepRefusals) {
  HostTensor pos = HostTensor::of({3, -2}, i64());
  HostTensor table = HostTensor::of({1, 2, 3, 4}, i32(), {2, 2});
  HostTensor seq = HostTensor::of({4, 1}, i32());
  HostTensor cp({2}, i64()), slots({3}, i64());
  const auto seq_before = seq.bytes(), slots_before = slots.bytes();
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  a.block_size = 4, a.max_model_len = 8, a.input_batch_size = 3;
  a.positions = pos.dl(), a.block_table = table.dl(), a.seq_lens = seq.dl();
  a.out_clamped_positions = cp.dl(), a.out_slot_mapping = slots.dl();
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->positions"));
  EXPECT_EQ(seq.bytes(), seq_before);
  EXPECT_EQ(slots.bytes(), slots_before);
  pos.set(1, 6);  // 7 < 8: last valid position
  a.out_clamped_positions = pos.dl();  // in place
  ASSERT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_OK)
      << cattn_last_error_message();
  EXPECT_EQ(pos.values(), (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(slots.values(), (std::vector<int64_t>{2 * 4 + 0, 4 * 4 + 3, -1}));
  EXPECT_EQ(seq.values(), (std::vector<int64_t>{5, 2}));
  a.out_clamped_positions = slots.dl();  // two outputs on one buffer
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->out_"));
  a.out_clamped_positions = cp.dl();
  a.input_batch_size = 1;
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->input_batch_size"));
  a.input_batch_size = 4;
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INSUFFICIENT_SIZE);
  EXPECT_TRUE(names("args->out_slot_mapping"));
  a.input_batch_size = 0, a.max_model_len = 0;
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->max_model_len"));
}

// An int32 output that cannot hold a result is refused on the host.
TEST(spec_decode, PrepareInputsRefusesResultsThatDoNotFit) {
  HostTensor cu = HostTensor::of({2}, i64()), valid = HostTensor::of({1}, i64());
  HostTensor qsl = HostTensor::of({0, int64_t{1} << 40}, i64());
  HostTensor idx({1}, i32()), rej({1}, i32());
  cattn_eagle_prepare_inputs_padded_args_t a = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  a.cu_num_draft_tokens = cu.dl(), a.valid_sampled_tokens_count = valid.dl();
  a.query_start_loc = qsl.dl(), a.token_indices_to_sample = idx.dl();
  a.num_rejected_tokens = rej.dl();
  const auto before = rej.bytes();
  EXPECT_EQ(cattn_eagle_prepare_inputs_padded(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->token_indices_to_sample"));
  EXPECT_EQ(rej.bytes(), before);
  qsl.set(1, 9);
  ASSERT_EQ(cattn_eagle_prepare_inputs_padded(&a), CATTN_OK);
  EXPECT_EQ(idx.values(), (std::vector<int64_t>{9 - 1 - 2}));
  EXPECT_EQ(rej.values(), (std::vector<int64_t>{2}));
  a.num_rejected_tokens = qsl.dl();  // an output over an input
  EXPECT_EQ(cattn_eagle_prepare_inputs_padded(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->num_rejected_tokens"));
}

// No discard mask is "none discarded"; the mask must be one byte per request.
TEST(spec_decode, NextTokenMaskOptionalAndByteSized) {
  HostTensor sampled = HostTensor::of({5, 7, -1, -1, -1, -1}, i32(), {2, 3});
  HostTensor backup = HostTensor::of({11, 12}, i32());
  HostTensor next({2}, i32()), valid({2}, i32());
  cattn_eagle_prepare_next_token_padded_args_t a =
      CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  a.vocab_size = 50, a.sampled_token_ids = sampled.dl(), a.backup_next_token_ids = backup.dl();
  a.next_token_ids = next.dl(), a.valid_sampled_tokens_count = valid.dl();
  ASSERT_EQ(cattn_eagle_prepare_next_token_padded(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(next.values(), (std::vector<int64_t>{7, 12}));
  EXPECT_EQ(valid.values(), (std::vector<int64_t>{2, 0}));
  HostTensor wide = HostTensor::of({1, 0}, i32());
  a.discard_request_mask = wide.dl();
  EXPECT_EQ(cattn_eagle_prepare_next_token_padded(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->discard_request_mask"));
  HostTensor mask = HostTensor::of({1, 0}, {kDLUInt, 8, 1});
  a.discard_request_mask = mask.dl();
  ASSERT_EQ(cattn_eagle_prepare_next_token_padded(&a), CATTN_OK);
  EXPECT_EQ(next.values(), (std::vector<int64_t>{11, 12}));
}

// compute_new_slot_mapping: the position count must match the extended batch; a block past
// the flattened table and a negative position are refused on the host.
TEST(spec_decode, NewSlotMappingRefusals) {
  HostTensor qsl = HostTensor::of({0, 2, 3}, i32());
  HostTensor table = HostTensor::of({3, 4, 6, 7}, i32(), {2, 2});
  HostTensor pos = HostTensor::of({0, 5, 9, 1, 2}, i64());
  HostTensor out({5}, i64());
  cattn_compute_new_slot_mapping_args_t a = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  a.block_size = 4, a.num_new_tokens = 1, a.max_model_len = 100;
  a.query_start_loc = qsl.dl(), a.block_table = table.dl(), a.new_positions = pos.dl();
  a.new_slot_mapping = out.dl();
  // Request 0 owns tokens 0..2, request 1 tokens 3..4; token 2 (position 9) reads flat entry
  // 0 * 2 + 2, request 1's first block: vLLM's answer.
  ASSERT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{12, 17, 25, 25, 26}));
  pos.set(3, 12);  // flat entry 1 * 2 + 3: past the table
  const auto before = out.bytes();
  EXPECT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->block_table"));
  EXPECT_EQ(out.bytes(), before);
  pos.set(3, 1);
  pos.set(4, -3);
  EXPECT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->new_positions"));
  HostTensor rej = HostTensor::of({0, 0, 0, 0, 1}, {6, 8, 1});
  a.is_rejected_token_mask = rej.dl();
  ASSERT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{12, 17, 25, 25, -1}));
  a.num_new_tokens = 2;
  EXPECT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->new_positions"));
}

// copy_and_expand: an end outside its request, a request without tokens, a short output.
TEST(spec_decode, CopyAndExpandRefusals) {
  HostTensor ids = HostTensor::of({10, 11, 12, 20, 21}, i32());
  HostTensor tpos = HostTensor::of({4, 5, 6, 8, 9}, i64());
  HostTensor next = HostTensor::of({99, 98}, i32());
  HostTensor qsl = HostTensor::of({0, 3, 5}, i32()), qel = HostTensor::of({2, 3}, i32());
  HostTensor out_ids({9}, i32()), out_pos({9}, i64()), out_new({4}, i32());
  cattn_copy_and_expand_eagle_inputs_args_t a = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  a.padding_token_id = 77, a.parallel_drafting_token_id = 5, a.num_padding_slots_per_request = 2;
  a.target_token_ids = ids.dl(), a.target_positions = tpos.dl(), a.next_token_ids = next.dl();
  a.query_start_loc = qsl.dl(), a.query_end_loc = qel.dl();
  a.out_input_ids = out_ids.dl(), a.out_positions = out_pos.dl();
  a.out_new_token_indices = out_new.dl();
  ASSERT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(out_ids.values(), (std::vector<int64_t>{10, 11, 12, 99, 5, 20, 98, 5, 77}));
  EXPECT_EQ(out_pos.values(), (std::vector<int64_t>{4, 5, 6, 7, 8, 8, 9, 10, 0}));
  EXPECT_EQ(out_new.values(), (std::vector<int64_t>{3, 4, 6, 7}));
  const auto before = out_ids.bytes();
  qel.set(1, 5);
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->query_end_loc"));
  qel.set(1, 3);
  qsl.set(1, 0);
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->query_start_loc"));
  EXPECT_EQ(out_ids.bytes(), before);
  qsl.set(1, 3);
  HostTensor short_pos({8}, i64());
  a.out_positions = short_pos.dl();
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INSUFFICIENT_SIZE);
  EXPECT_TRUE(names("args->out_positions"));
  a.out_positions = out_pos.dl();
  a.num_padding_slots_per_request = 0;
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->num_padding_slots_per_request"));
  a.num_padding_slots_per_request = 2, a.shift_input_ids = 2;
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->shift_input_ids"));
  a.shift_input_ids = 0;
  a.out_positions = out_ids.dl();  // two outputs on one buffer
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a), CATTN_INVALID_ARGUMENT);
}

// batch_change: rows read the previous layout (a swap); a previous row past the batch is
// refused with nothing written.
TEST(spec_decode, BatchChangeSwapAndRefusal) {
  HostTensor nct = HostTensor::of({1000, 2000, 77}, i32()), acc = HostTensor::of({5, 6}, i32());
  HostTensor prev = HostTensor::of({1, 0}, i64());
  HostTensor valid = HostTensor::of({2, 3}, i32()), drafts = HostTensor::of({4, 4}, i32());
  HostTensor cpu = HostTensor::of({1, 2}, i32());
  cattn_update_num_computed_tokens_for_batch_change_args_t a =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  a.num_computed_tokens = nct.dl(), a.num_accepted_tokens = acc.dl();
  a.prev_positions = prev.dl(), a.valid_sampled_token_count = valid.dl();
  a.prev_num_draft_tokens = drafts.dl(), a.cpu_num_computed_tokens = cpu.dl();
  ASSERT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_OK)
      << cattn_last_error_message();
  EXPECT_EQ(nct.values(), (std::vector<int64_t>{2003, 1002, 77}));
  EXPECT_EQ(acc.values(), (std::vector<int64_t>{3, 2}));
  prev.set(1, 2);
  const auto before = nct.bytes();
  EXPECT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->prev_positions"));
  EXPECT_EQ(nct.bytes(), before);
  prev.set(1, -1);
  a.cpu_num_computed_tokens = acc.dl();  // an input over an output
  EXPECT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_INVALID_ARGUMENT);
  // The host stages new counts in num_accepted_tokens: an int32 one cannot hold 2^31.
  HostTensor big = HostTensor::of({int64_t{1} << 31, 5, 6}, i64());
  a.cpu_num_computed_tokens = cpu.dl(), a.num_computed_tokens = big.dl();
  prev.set(0, 0), prev.set(1, 1);
  valid.set(0, 0);
  EXPECT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->num_accepted_tokens"));
  HostTensor acc64 = HostTensor::of({5, 6}, i64());
  a.num_accepted_tokens = acc64.dl();
  ASSERT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_OK);
  EXPECT_EQ(big.values(), (std::vector<int64_t>{int64_t{1} << 31, 8, 6}));
  EXPECT_EQ(acc64.values(), (std::vector<int64_t>{0, 3}));
}

// Every call refuses NULL args and a missing required tensor by name.
TEST(spec_decode, NullArguments) {
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(nullptr), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(cattn_eagle_prepare_inputs_padded(nullptr), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(cattn_eagle_prepare_next_token_padded(nullptr), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(cattn_compute_new_slot_mapping(nullptr), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(nullptr), CATTN_INVALID_ARGUMENT);
  EXPECT_EQ(cattn_update_num_computed_tokens_for_batch_change(nullptr), CATTN_INVALID_ARGUMENT);
  cattn_compute_new_slot_mapping_args_t a = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  a.block_size = 1, a.max_model_len = 1;
  EXPECT_EQ(cattn_compute_new_slot_mapping(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->query_start_loc"));
}

// A negative block id has no slot (the device writes -1): the host refuses it, as it refuses
// a slot past int64. A valid count past drafts + 1 would reject a negative number of tokens.
TEST(spec_decode, NegativeBlocksAndRejectedCountsAreRefused) {
  HostTensor pos = HostTensor::of({3, 1}, i64());
  HostTensor table = HostTensor::of({1, -2, 3, 4}, i64(), {2, 2});
  HostTensor seq = HostTensor::of({4, 1}, i64()), cp({2}, i64()), slots({2}, i64());
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  a.block_size = 4, a.max_model_len = 8;
  a.positions = pos.dl(), a.block_table = table.dl(), a.seq_lens = seq.dl();
  a.out_clamped_positions = cp.dl(), a.out_slot_mapping = slots.dl();
  const auto before = slots.bytes();
  // Row 0: position 4 is column 1, block -2.
  EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->block_table holds a negative block id"));
  EXPECT_EQ(slots.bytes(), before);
  table.set(1, 2);
  ASSERT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a), CATTN_OK);
  EXPECT_EQ(slots.values(), (std::vector<int64_t>{2 * 4, 3 * 4 + 2}));

  HostTensor cu = HostTensor::of({2, 2}, i64()), valid = HostTensor::of({4, 0}, i64());
  HostTensor qsl = HostTensor::of({0, 3, 4}, i64()), idx({2}, i64()), rej({2}, i64());
  cattn_eagle_prepare_inputs_padded_args_t p = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  p.cu_num_draft_tokens = cu.dl(), p.valid_sampled_tokens_count = valid.dl();
  p.query_start_loc = qsl.dl(), p.token_indices_to_sample = idx.dl();
  p.num_rejected_tokens = rej.dl();
  const auto rej_before = rej.bytes();
  EXPECT_EQ(cattn_eagle_prepare_inputs_padded(&p), CATTN_INVALID_ARGUMENT);
  EXPECT_TRUE(names("args->valid_sampled_tokens_count is outside the request's drafts + 1 "
                    "(got [0] = 4, expected in [0, 3])"));
  EXPECT_EQ(rej.bytes(), rej_before);
  valid.set(0, 3);  // every draft accepted; row 1 has none, its count is not read
  ASSERT_EQ(cattn_eagle_prepare_inputs_padded(&p), CATTN_OK);
  EXPECT_EQ(rej.values(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(idx.values(), (std::vector<int64_t>{2, 3}));
}

// The host paths compute in place: no call allocates (promise 8), whatever its outputs' sizes.
TEST(spec_decode, HostPathsAllocateNothing) {
  SKIP_UNLESS_ALLOCATIONS_COUNTED();
  const auto none = cattn_test::expect_allocates_nothing;
  HostTensor pos = HostTensor::of({3, 1}, i64());
  HostTensor table = HostTensor::of({1, 2, 3, 4}, i64(), {2, 2});
  HostTensor seq = HostTensor::of({4, 1}, i64()), cp({2}, i64()), slots({4096}, i64());
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t e =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  e.block_size = 4, e.max_model_len = 8, e.input_batch_size = 4096;
  e.positions = pos.dl(), e.block_table = table.dl(), e.seq_lens = seq.dl();
  e.out_clamped_positions = cp.dl(), e.out_slot_mapping = slots.dl();
  none("eagle_step_update_slot_mapping_and_metadata",
       [&] { return cattn_eagle_step_update_slot_mapping_and_metadata(&e); });

  HostTensor cu = HostTensor::of({2, 3}, i64()), valid = HostTensor::of({3, 1}, i64());
  HostTensor qsl = HostTensor::of({0, 3, 5}, i64()), idx({4096}, i64()), rej({4096}, i64());
  cattn_eagle_prepare_inputs_padded_args_t p = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  p.cu_num_draft_tokens = cu.dl(), p.valid_sampled_tokens_count = valid.dl();
  p.query_start_loc = qsl.dl(), p.token_indices_to_sample = idx.dl();
  p.num_rejected_tokens = rej.dl();
  none("eagle_prepare_inputs_padded", [&] { return cattn_eagle_prepare_inputs_padded(&p); });

  HostTensor sampled = HostTensor::of({5, -1, 7, 8}, i64(), {2, 2});
  HostTensor backup = HostTensor::of({1, 2}, i64()), next({4096}, i64()), count({4096}, i64());
  HostTensor mask = HostTensor::of({0, 1}, {kDLUInt, 8, 1});
  cattn_eagle_prepare_next_token_padded_args_t n = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  n.vocab_size = 50, n.sampled_token_ids = sampled.dl(), n.discard_request_mask = mask.dl();
  n.backup_next_token_ids = backup.dl(), n.next_token_ids = next.dl();
  n.valid_sampled_tokens_count = count.dl();
  none("eagle_prepare_next_token_padded",
       [&] { return cattn_eagle_prepare_next_token_padded(&n); });

  HostTensor npos = HostTensor::of({0, 5, 9, 1, 2, 3, 4}, i64()), nslots({4096}, i64());
  cattn_compute_new_slot_mapping_args_t m = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  m.block_size = 4, m.num_new_tokens = 1, m.max_model_len = 100;
  m.query_start_loc = qsl.dl(), m.block_table = table.dl(), m.new_positions = npos.dl();
  m.new_slot_mapping = nslots.dl();
  none("compute_new_slot_mapping", [&] { return cattn_compute_new_slot_mapping(&m); });

  HostTensor ids = HostTensor::of({10, 11, 12, 20, 21}, i64());
  HostTensor tpos = HostTensor::of({4, 5, 6, 8, 9}, i64());
  HostTensor bonus = HostTensor::of({99, 98}, i64()), qel = HostTensor::of({2, 3}, i64());
  HostTensor out_ids({4096}, i64()), out_pos({4096}, i64()), out_new({4096}, i64());
  HostTensor out_rej({4096}, {kDLUInt, 8, 1}), out_mask({4096}, {kDLUInt, 8, 1});
  HostTensor out_hid({4096}, i64());
  cattn_copy_and_expand_eagle_inputs_args_t c = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  c.num_padding_slots_per_request = 2, c.shift_input_ids = 1;
  c.target_token_ids = ids.dl(), c.target_positions = tpos.dl(), c.next_token_ids = bonus.dl();
  c.query_start_loc = qsl.dl(), c.query_end_loc = qel.dl(), c.out_input_ids = out_ids.dl();
  c.out_positions = out_pos.dl(), c.out_is_rejected_token_mask = out_rej.dl();
  c.out_is_masked_token_mask = out_mask.dl(), c.out_new_token_indices = out_new.dl();
  c.out_hidden_state_mapping = out_hid.dl();
  none("copy_and_expand_eagle_inputs", [&] { return cattn_copy_and_expand_eagle_inputs(&c); });

  HostTensor nct = HostTensor::of({1000, 2000, 77}, i64()), acc = HostTensor::of({5, 6}, i64());
  HostTensor prev = HostTensor::of({1, -1}, i64()), drafts = HostTensor::of({4, 4}, i64());
  HostTensor cpu = HostTensor::of({1, 2}, i64()), prev_valid = HostTensor::of({2, 3}, i64());
  cattn_update_num_computed_tokens_for_batch_change_args_t b =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  b.num_computed_tokens = nct.dl(), b.num_accepted_tokens = acc.dl();
  b.prev_positions = prev.dl(), b.valid_sampled_token_count = prev_valid.dl();
  b.prev_num_draft_tokens = drafts.dl(), b.cpu_num_computed_tokens = cpu.dl();
  none("update_num_computed_tokens_for_batch_change",
       [&] { return cattn_update_num_computed_tokens_for_batch_change(&b); });
}

}  // namespace
