// SPDX-License-Identifier: Apache-2.0
// Hostile input on the 1.2 host paths, one regression per defect the probe of the 1.2 calls
// found: wrong slots returned with OK (an interleave that does not divide the block, a block id
// whose slot wraps or is negative, a negative position or count), a short slot mapping the
// batch check missed, allocation as large as an output's capacity, a view at the top of the
// address space, and a negative rejected count. Every refused call leaves its canaried outputs
// as they were.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cattn.h"
#include "support/canary.h"
#include "support/count_allocations.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/step_reference.h"

namespace {

using cattn_test::CanaryBuffer;
using cattn_test::HostTensor;
using cattn_test::i32;
using cattn_test::i64;
using cattn_test::View;

// One request of `tokens` positions (from `first`), MRV2, persistent row 0 with `blocks`.
struct SlotCall {
  HostTensor qsl, pos, idx, table;
  CanaryBuffer out_mem;
  View out;
  cattn_compute_slot_mappings_args_t a = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  SlotCall(int64_t first, int64_t tokens, const std::vector<int64_t>& blocks)
      : qsl(HostTensor::of({0, tokens}, i64())), pos({tokens}, i64()),
        idx(HostTensor::of({0}, i64())),
        table(HostTensor::of(blocks, i64(), {1, static_cast<int64_t>(blocks.size())})),
        out_mem(static_cast<size_t>(tokens) * 8, 0x77), out(out_mem.payload(), 0, {tokens}, i64()) {
    for (int64_t i = 0; i < tokens; ++i) pos.set(i, first + i);
    a.block_size = 16, a.kernel_block_size = 16;
    a.query_start_loc = qsl.dl(), a.positions = pos.dl(), a.idx_mapping = idx.dl();
    a.block_table = table.dl(), a.slot_mapping = out.dl();
  }
  // The refused call wrote nothing: every payload byte is still 0x77, the canaries intact.
  bool untouched() const {
    const auto* p = const_cast<CanaryBuffer&>(out_mem).payload();
    for (size_t i = 0; i < out_mem.payload_size(); ++i)
      if (p[i] != 0x77) return false;
    return out_mem.canaries_intact();
  }
};

TEST(step_inputs_hostile, InterleaveMustDivideTheBlock) {
  // The probe: DCP 2, interleave 3, block 16, position 31. 31 = virtual block 0, offset 31: run
  // 10 (tokens 30..32) is rank 0's, slot (31 / 6) * 3 + 31 % 3 = 16: one past block 0, i.e. in
  // the next block's range, with OK.
  SlotCall c(31, 1, {100, 200});
  c.a.dcp_size = 2, c.a.dcp_rank = 0, c.a.dcp_kv_cache_interleave_size = 3;
  EXPECT_CATTN_ERROR(cattn_compute_slot_mappings(&c.a), CATTN_INVALID_ARGUMENT,
                     "args->dcp_kv_cache_interleave_size does not divide the block (got 3, "
                     "expected a divisor of kernel_block_size (16))");
  EXPECT_TRUE(c.untouched());
  // V1 divides its block_size (the kernel blocks split it further).
  c.a.contract = CATTN_SLOT_MAPPING_V1, c.a.idx_mapping = nullptr, c.a.kernel_block_size = 8;
  EXPECT_CATTN_ERROR(cattn_compute_slot_mappings(&c.a), CATTN_INVALID_ARGUMENT,
                     "expected a divisor of block_size (16)");
  EXPECT_TRUE(c.untouched());
  c.a.dcp_kv_cache_interleave_size = 16;  // divides block_size 16, not kernel_block_size 8
  ASSERT_CATTN_OK(cattn_compute_slot_mappings(&c.a));
  // Rank 0 holds tokens 0..15 of each 32-token virtual block: 31 is rank 1's.
  EXPECT_EQ(c.out_mem.load<int64_t>(0), -1);

  // The step plan checks the same rule, naming its own field.
  cattn_step_plan_desc_t d = cattn_test::test_step_desc(CATTN_STEP_SLOT_MAPPINGS);
  d.max_num_persistent_reqs = 4;
  d.inputs.num_kv_groups = 1;
  d.inputs.dcp_size = 2, d.inputs.dcp_kv_cache_interleave_size = 3;
  d.kv_groups[0].block_size = 16, d.kv_groups[0].kernel_block_size = 16;
  d.kv_groups[0].max_num_blocks = 4;
  cattn_step_plan_t* p = nullptr;
  EXPECT_CATTN_ERROR(cattn_step_plan_create(&d, &p), CATTN_INVALID_ARGUMENT,
                     "desc->inputs.dcp_kv_cache_interleave_size does not divide the block");
  EXPECT_EQ(p, nullptr);
  d.inputs.slot_mapping_contract = 9;
  EXPECT_CATTN_ERROR(cattn_step_plan_create(&d, &p), CATTN_INVALID_ARGUMENT,
                     "desc->inputs.slot_mapping_contract is not a slot-mapping contract");
}

TEST(step_inputs_hostile, SlotsThatCannotBeFormedAreRefused) {
  // Block 2^60 x 16 wraps to a small slot in 64 bits (the probe got slot 5 with OK).
  SlotCall wrap(5, 1, {int64_t{1} << 60});
  EXPECT_CATTN_ERROR(cattn_compute_slot_mappings(&wrap.a), CATTN_INVALID_ARGUMENT,
                     "args->block_table holds a block without a slot (got [0, 0] = "
                     "1152921504606846976 for token 0");
  EXPECT_TRUE(wrap.untouched());
  // The largest block whose slot fits still works: (2^63 - 1 - 5) / 16 x 16 + 5.
  const int64_t top = (INT64_MAX - 5) / 16;
  SlotCall fits(5, 1, {top});
  ASSERT_CATTN_OK(cattn_compute_slot_mappings(&fits.a));
  EXPECT_EQ(fits.out_mem.load<int64_t>(0), top * 16 + 5);
  SlotCall negative(5, 1, {-3});
  EXPECT_CATTN_ERROR(cattn_compute_slot_mappings(&negative.a), CATTN_INVALID_ARGUMENT,
                     "args->block_table holds a block without a slot");
  EXPECT_TRUE(negative.untouched());
  // A negative position: vLLM computes a slot from the wrong block; the probe got -1 with OK.
  SlotCall before(0, 2, {100});
  before.pos.set(1, -1);
  EXPECT_CATTN_ERROR(cattn_compute_slot_mappings(&before.a), CATTN_INVALID_ARGUMENT,
                     "args->positions is negative (got [1] = -1");
  EXPECT_TRUE(before.untouched());
}

TEST(step_inputs_hostile, NegativeComputedCountIsRefused) {
  HostTensor sched = HostTensor::of({2, 1}, i64()), idx = HostTensor::of({1, 0}, i64());
  HostTensor nct = HostTensor::of({4, -6}, i64());
  CanaryBuffer mem(3 * 8 + 2 * 8 + 3 * 8, 0x77);
  View qsl(mem.payload(), 0, {3}, i64()), seq(mem.payload(), 24, {2}, i64()),
      pos(mem.payload(), 40, {3}, i64());
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = sched.dl(), a.idx_mapping = idx.dl(), a.num_computed_tokens = nct.dl();
  a.query_start_loc = qsl.dl(), a.seq_lens = seq.dl(), a.positions = pos.dl();
  const std::vector<uint8_t> before = mem.snapshot();
  EXPECT_CATTN_ERROR(cattn_prepare_pos_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->num_computed_tokens is negative (got [1] = -6");
  EXPECT_TRUE(mem.unchanged(before));
  nct.set(1, 6);
  ASSERT_CATTN_OK(cattn_prepare_pos_seq_lens(&a));
  EXPECT_EQ(mem.load<int64_t>(40), 6);  // row 0 reads persistent row 1
  EXPECT_TRUE(mem.canaries_intact());
}

TEST(step_inputs_hostile, BatchCheckReportsAShortSlotMapping) {
  HostTensor qsl = HostTensor::of({0, 3, 5}, i64()), status({3}, i64());
  HostTensor slots = HostTensor::of({10, 11, 12, 13}, i64());
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  a.query_start_loc = qsl.dl(), a.slot_mappings[1] = slots.dl(), a.status = status.dl();
  ASSERT_CATTN_OK(cattn_step_batch_check(&a));
  // Token 4 has no slot: the first defect is at index 4 (the mapping's length), group 1.
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_SLOT_MAPPING, 4, 1}));
  HostTensor full = HostTensor::of({10, 11, 12, 13, 14, -1}, i64());
  a.slot_mappings[1] = full.dl();
  ASSERT_CATTN_OK(cattn_step_batch_check(&a));
  EXPECT_EQ(status.values(), (std::vector<int64_t>{0, 0, 0}));
}

// The step-input host paths compute in place: a one-token batch with outputs of 2^20 entries
// allocates nothing (the probe saw 129 MiB and 256 MiB staged for one live token).
TEST(step_inputs_hostile, HostPathsAllocateNothing) {
  SKIP_UNLESS_ALLOCATIONS_COUNTED();
  constexpr int64_t kCap = int64_t{1} << 20;
  HostTensor sched = HostTensor::of({1, 0}, i64()), idx = HostTensor::of({0, 1}, i64());
  HostTensor nct = HostTensor::of({7, 0}, i64()), nreq = HostTensor::of({1}, i64());
  HostTensor qsl({3}, i64()), seq({2}, i64()), bnct({2}, i64()), pos({kCap}, i64());
  cattn_prepare_pos_seq_lens_args_t p = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  p.num_scheduled_tokens = sched.dl(), p.idx_mapping = idx.dl(), p.num_computed_tokens = nct.dl();
  p.num_reqs = nreq.dl(), p.query_start_loc = qsl.dl(), p.seq_lens = seq.dl();
  p.positions = pos.dl(), p.batch_num_computed_tokens = bnct.dl();
  HostTensor table = HostTensor::of({5, 6, 7, 8}, i64(), {2, 2}), gathered({2, 2}, i32());
  cattn_gather_block_tables_args_t g = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  g.idx_mapping = idx.dl(), g.num_reqs = nreq.dl(), g.block_table = table.dl();
  g.out = gathered.dl();
  // One batch row for the two calls that take query_start_loc.
  HostTensor given = HostTensor::of({0, 1}, i64()), tpos = HostTensor::of({7}, i64());
  HostTensor idx1 = HostTensor::of({0}, i64()), slots({kCap}, i64());
  cattn_compute_slot_mappings_args_t s = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  s.block_size = 16, s.kernel_block_size = 16, s.query_start_loc = given.dl();
  s.positions = tpos.dl(), s.idx_mapping = idx1.dl(), s.block_table = table.dl();
  s.num_reqs = nreq.dl(), s.slot_mapping = slots.dl();
  HostTensor li({kCap}, i64()), ei({kCap}, i64()), ep({kCap}, i64()), cu({2}, i64());
  HostTensor sl = HostTensor::of({8}, i64()), pl = HostTensor::of({3, 3}, i64());
  HostTensor last = HostTensor::of({42, 43}, i64()), drafts = HostTensor::of({0, 0}, i64(), {2, 1});
  HostTensor ids({kCap}, i64());
  cattn_combine_sampled_and_draft_tokens_args_t c =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  c.query_start_loc = given.dl(), c.num_reqs = nreq.dl(), c.idx_mapping = idx1.dl();
  c.seq_lens = sl.dl(), c.prefill_len = pl.dl(), c.last_sampled_tokens = last.dl();
  c.draft_tokens = drafts.dl(), c.logits_indices = li.dl(), c.cu_num_logits = cu.dl();
  c.expanded_idx_mapping = ei.dl(), c.expanded_local_pos = ep.dl(), c.input_ids = ids.dl();
  using cattn_test::expect_allocates_nothing;
  expect_allocates_nothing("prepare_pos_seq_lens", [&] { return cattn_prepare_pos_seq_lens(&p); });
  expect_allocates_nothing("gather_block_tables", [&] { return cattn_gather_block_tables(&g); });
  expect_allocates_nothing("compute_slot_mappings",
                           [&] { return cattn_compute_slot_mappings(&s); });
  expect_allocates_nothing("combine_sampled_and_draft_tokens",
                           [&] { return cattn_combine_sampled_and_draft_tokens(&c); });
  EXPECT_EQ(pos.get(0), 7);
  EXPECT_EQ(pos.get(kCap - 1), 0);
  EXPECT_EQ(slots.get(0), 5 * 16 + 7);
  EXPECT_EQ(slots.get(kCap - 1), -1);
  EXPECT_EQ(li.get(0), 0);
  EXPECT_EQ(ids.get(0), 42);
}

// A view at the top of the address space is refused before any byte is read, whatever its
// element size, as is one whose data + byte_offset wraps.
TEST(step_inputs_hostile, ViewsAtTheTopOfMemoryAreRefused) {
  HostTensor sampled = HostTensor::of({3, -1}, i64(), {2, 1});
  HostTensor backup = HostTensor::of({9, 9}, i64());
  HostTensor next({2}, i64()), valid({2}, i64());
  int64_t two = 2;
  DLTensor mask{};
  mask.data = reinterpret_cast<void*>(UINTPTR_MAX - 3);
  mask.device = {kDLCPU, 0};
  mask.ndim = 1;
  mask.shape = &two;
  mask.dtype = {kDLUInt, 8, 1};
  cattn_eagle_prepare_next_token_padded_args_t a = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  a.vocab_size = 100, a.sampled_token_ids = sampled.dl(), a.backup_next_token_ids = backup.dl();
  a.discard_request_mask = &mask, a.next_token_ids = next.dl();
  a.valid_sampled_tokens_count = valid.dl();
  EXPECT_CATTN_ERROR(cattn_eagle_prepare_next_token_padded(&a), CATTN_INVALID_ARGUMENT,
                     "args->discard_request_mask addresses past the end of memory");
  // The probe's pointer with one element, and a real buffer whose byte_offset wraps past 0.
  int64_t one = 1;
  mask.shape = &one;
  EXPECT_CATTN_ERROR(cattn_eagle_prepare_next_token_padded(&a), CATTN_INVALID_ARGUMENT,
                     "args->discard_request_mask addresses past the end of memory");
  uint8_t flags[2] = {0, 0};
  mask.shape = &two;
  mask.data = flags;
  mask.byte_offset = UINT64_MAX - reinterpret_cast<uintptr_t>(flags) + 1;  // data + offset = 0
  EXPECT_CATTN_ERROR(cattn_eagle_prepare_next_token_padded(&a), CATTN_INVALID_ARGUMENT,
                     "args->discard_request_mask addresses past the end of memory");
  mask.byte_offset = 0;
  ASSERT_CATTN_OK(cattn_eagle_prepare_next_token_padded(&a));
  EXPECT_EQ(next.get(0), 3);
}

}  // namespace
