// SPDX-License-Identifier: Apache-2.0
// cattn_step_inputs_size: the live rows' tokens and logits as the step-input calls count them
// (outputs of exactly that size are accepted, one entry fewer refused), from scheduled counts
// or a query_start_loc, and its refusals by name.
#include <gtest/gtest.h>

#include <string>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

namespace {

using cattn_test::HostTensor;
using cattn_test::i32;
using cattn_test::i64;

TEST(step_inputs_size, CountsTheLiveRowsAsTheCallsDo) {
  HostTensor sched = HostTensor::of({3, 1, 4, 9}, i32()), nreq = HostTensor::of({3}, i64());
  HostTensor drafts = HostTensor::of({2, 0, 3, 7}, i32());
  cattn_step_inputs_size_args_t a = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  a.num_scheduled_tokens = sched.dl(), a.num_reqs = nreq.dl(), a.num_draft_tokens = drafts.dl();
  ASSERT_CATTN_OK(cattn_step_inputs_size(&a));
  EXPECT_EQ(a.num_tokens, 8);       // rows 0 to 2 live: 3 + 1 + 4
  EXPECT_EQ(a.num_logits, 3 + 5);   // one sampled token a row plus 2 + 0 + 3 drafts
  a.num_new_sampled_tokens = 0, a.num_reqs = nullptr;
  ASSERT_CATTN_OK(cattn_step_inputs_size(&a));
  EXPECT_EQ(a.num_tokens, 17);
  EXPECT_EQ(a.num_logits, 12);
  // From a query_start_loc: the same totals.
  HostTensor qsl = HostTensor::of({0, 3, 4, 8, 17}, i64());
  cattn_step_inputs_size_args_t q = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  q.query_start_loc = qsl.dl(), q.num_reqs = nreq.dl(), q.num_draft_tokens = drafts.dl();
  ASSERT_CATTN_OK(cattn_step_inputs_size(&q));
  EXPECT_EQ(q.num_tokens, 8);
  EXPECT_EQ(q.num_logits, 8);

  // The calls accept outputs of exactly those sizes, and refuse one entry fewer.
  HostTensor idx = HostTensor::of({0, 1, 2, 3}, i32()), nct = HostTensor::of({1, 2, 3, 4}, i32());
  HostTensor oq({5}, i32()), os({4}, i32());
  for (const int64_t n : {a.num_tokens, a.num_tokens - 1}) {
    HostTensor pos({n}, i64());
    cattn_prepare_pos_seq_lens_args_t p = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
    p.num_scheduled_tokens = sched.dl(), p.idx_mapping = idx.dl(), p.num_computed_tokens = nct.dl();
    p.query_start_loc = oq.dl(), p.seq_lens = os.dl(), p.positions = pos.dl();
    EXPECT_EQ(cattn_prepare_pos_seq_lens(&p), n == 17 ? CATTN_OK : CATTN_INSUFFICIENT_SIZE)
        << cattn_last_error_message();
  }
  for (const int64_t n : {q.num_logits, q.num_logits - 1}) {
    HostTensor li({n}, i64());
    cattn_combine_sampled_and_draft_tokens_args_t c =
        CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
    c.query_start_loc = qsl.dl(), c.num_reqs = nreq.dl(), c.num_draft_tokens = drafts.dl();
    c.logits_indices = li.dl();
    EXPECT_EQ(cattn_combine_sampled_and_draft_tokens(&c),
              n == 8 ? CATTN_OK : CATTN_INSUFFICIENT_SIZE)
        << cattn_last_error_message();
  }
}

TEST(step_inputs_size, RefusesByName) {
  HostTensor sched = HostTensor::of({3, -1}, i32()), qsl = HostTensor::of({0, 3, 2}, i32());
  HostTensor big = HostTensor::of({3}, i32()), drafts = HostTensor::of({1}, i32());
  DLTensor on_gpu = cattn_test::fake_cuda(big);
  struct Case {
    const DLTensor *sched, *qsl, *nreq, *drafts;
    int64_t new_sampled;
    const char* needle;
  } cases[] = {
      {nullptr, nullptr, nullptr, nullptr, 1, "args->num_scheduled_tokens is NULL and so is"},
      {sched.dl(), qsl.dl(), nullptr, nullptr, 1, "is given with args->query_start_loc"},
      {sched.dl(), nullptr, nullptr, nullptr, 1, "args->num_scheduled_tokens"},
      {nullptr, qsl.dl(), nullptr, nullptr, 1, "args->query_start_loc"},
      {nullptr, qsl.dl(), big.dl(), nullptr, 1, "args->num_reqs"},
      {nullptr, qsl.dl(), nullptr, drafts.dl(), 1, "args->num_draft_tokens"},
      {nullptr, qsl.dl(), nullptr, nullptr, 2, "args->num_new_sampled_tokens"},
      {&on_gpu, nullptr, nullptr, nullptr, 1, "args->num_scheduled_tokens"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    cattn_step_inputs_size_args_t a = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
    a.num_scheduled_tokens = c.sched, a.query_start_loc = c.qsl, a.num_reqs = c.nreq;
    a.num_draft_tokens = c.drafts, a.num_new_sampled_tokens = c.new_sampled;
    a.num_tokens = a.num_logits = -5;
    EXPECT_CATTN_ERROR(cattn_step_inputs_size(&a), CATTN_INVALID_ARGUMENT, c.needle);
    EXPECT_EQ(a.num_tokens, -5);  // written on success only
    EXPECT_EQ(a.num_logits, -5);
  }
  EXPECT_CATTN_ERROR(cattn_step_inputs_size(nullptr), CATTN_INVALID_ARGUMENT, "args");
}

}  // namespace
