// SPDX-License-Identifier: Apache-2.0
// Double fetch: while one thread calls a host entry point over and over, a second thread keeps
// changing one element of an input between checked values, values the checks refuse, and
// extremes. That is the caller's data race, so results and statuses may vary, but the library
// must never turn it into a write outside its outputs or a read outside its inputs: every
// output lives in a canaried buffer (and under ASan in an instrumented heap block), and every
// status must be one the header defines.
// Each case prints a table line: the call, the input raced, B, the calls made, those that
// returned CATTN_OK, and the out-of-bounds writes seen (canary hits). Skipped under TSan,
// which reports the race itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cattn.h"
#include "support/canary.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

#if defined(__SANITIZE_THREAD__)
#define CATTN_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CATTN_TEST_UNDER_TSAN 1
#endif
#endif

using namespace cattn_test;

namespace {

// How long a case races. The window between a check and the write it guards is a few
// instructions wide on a small batch, so those cases take many short calls; at B = 2^16 one
// call takes a millisecond or more (and many under ASan), and its window spans a whole pass,
// so fewer calls over a longer time do.
struct Pace {
  int min_rounds;
  std::chrono::milliseconds time;
};
constexpr Pace kSmall{2000, std::chrono::milliseconds(300)};
constexpr Pace kLarge{50, std::chrono::milliseconds(1000)};
// A case goes on past its time, up to this long, until some call has succeeded: on a loaded
// machine the mutator can sleep through the whole race on a value every call refuses.
constexpr auto kMaxRaceTime = std::chrono::seconds(20);
// One call that runs this long has walked far past its batch (a count read again as 2^40 after
// it was checked): the race aborts, naming the call, rather than hang the suite.
constexpr auto kCallLimit = std::chrono::seconds(30);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the table line names: the call, the input raced, the batch's rows.
struct Case {
  const char* call;
  const char* input;
  int64_t rows;
  Pace pace = kSmall;
};

// Calls `call` over and over while another thread cycles the int64 at `target` through
// `values` (values.front() is the checked one the case is built with); after every call the
// canaries of `watched` must be intact and the status valid. First one call without the
// mutator must succeed: a case that fails must fail because of the library, not its batch.
void race(const Case& c, int64_t* target, std::vector<int64_t> values,
          std::vector<CanaryBuffer*> watched, const std::function<cattn_status_t()>& call) {
#if defined(CATTN_TEST_UNDER_TSAN)
  GTEST_SKIP() << "the race is the point; TSan reports it";
#endif
  ASSERT_EQ(*target, values.front()) << "the case's batch holds another value";
  const cattn_status_t first = call();
  ASSERT_EQ(first, CATTN_OK) << c.call << " refuses the unmutated batch: "
                             << cattn_last_error_message();
  for (const CanaryBuffer* b : watched) ASSERT_TRUE(b->canaries_intact()) << "unmutated call";
  std::atomic<bool> stop{false};
  std::atomic<int64_t> call_start{now_ns()};
  std::thread mutator([&] {
    const int64_t limit = std::chrono::nanoseconds(kCallLimit).count();
    for (uint32_t spins = 1; !stop.load(std::memory_order_relaxed); ++spins) {
      for (int64_t v : values) __atomic_store_n(target, v, __ATOMIC_RELAXED);
      if (spins % 1024 == 0 && now_ns() - call_start.load(std::memory_order_relaxed) > limit) {
        std::fprintf(stderr, "double_fetch: one call of %s (%s raced) has run for %lld s\n",
                     c.call, c.input, static_cast<long long>(limit / 1000000000));
        std::abort();
      }
    }
  });
  int ok = 0, rounds = 0, hits = 0;
  std::string failure;
  const auto start = std::chrono::steady_clock::now();
  auto racing = [&] {
    const auto now = std::chrono::steady_clock::now();
    return rounds < c.pace.min_rounds || now < start + c.pace.time ||
           (ok == 0 && now < start + kMaxRaceTime);
  };
  while (failure.empty() && racing()) {
    call_start.store(now_ns(), std::memory_order_relaxed);
    const cattn_status_t s = call();
    ++rounds;
    if (static_cast<int>(s) < 0 || static_cast<int>(s) >= CATTN_STATUS_COUNT_)
      failure = "status " + std::to_string(static_cast<int>(s)) + " is not a status";
    ok += s == CATTN_OK;
    bool hit = false;
    for (const CanaryBuffer* b : watched) hit = hit || !b->canaries_intact();
    if (hit) ++hits, failure = "a canary changed: a write outside the outputs";
  }
  stop = true;
  mutator.join();
  __atomic_store_n(target, values.front(), __ATOMIC_RELAXED);
  std::printf("double_fetch | %-56s | %-31s | B %6lld | %6d calls | %6d OK | %d out-of-bounds\n",
              c.call, c.input, static_cast<long long>(c.rows), rounds, ok, hits);
  std::fflush(stdout);
  EXPECT_EQ(failure, "") << "after " << rounds << " calls";
  EXPECT_GT(ok, 0) << "no call succeeded in " << rounds << ": the checks never passed";
}

// The checked value three times between every other: most calls still read one consistent
// batch (some must succeed), while every switch between it and a hostile value keeps coming.
std::vector<int64_t> around(int64_t checked, std::initializer_list<int64_t> others) {
  std::vector<int64_t> v;
  for (int64_t o : others) v.insert(v.end(), {checked, checked, checked, o});
  return v;
}

int64_t* i64_at(CanaryBuffer& b, size_t i) {
  return reinterpret_cast<int64_t*>(b.payload()) + i;
}

}  // namespace

TEST(double_fetch, ComputeCausalConv1dMetadata) {
  // query_start_loc_cpu {0, 5, 5, 20}, block_m 4: 6 programs. Entry 2 moves to 20 (request 1
  // gains 4 programs after the count), 0 (a decrease), and the extremes.
  CanaryBuffer qsl(4 * 8), nums(3 * 8), mlist(6 * 8), offsets(6 * 8), batch(10 * 8), chunk(10 * 8);
  const int64_t values[4] = {0, 5, 5, 20};
  std::memcpy(qsl.payload(), values, sizeof values);
  View q(qsl.payload(), 0, {4}, i64());
  View o0(nums.payload(), 0, {3}, i64()), o1(mlist.payload(), 0, {6}, i64()),
      o2(offsets.payload(), 0, {6}, i64()), o3(batch.payload(), 0, {10}, i64()),
      o4(chunk.payload(), 0, {10}, i64());
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.block_m = 4;
  a.nums = o0.dl();
  a.mlist = o1.dl();
  a.offsetlist = o2.dl();
  a.batch_ptr = o3.dl();
  a.token_chunk_offset_ptr = o4.dl();
  race({"cattn_compute_causal_conv1d_metadata", "query_start_loc_cpu[2]", 3}, i64_at(qsl, 2),
       {5, 20, 0, INT64_MAX, INT64_MIN, 19}, {&nums, &mlist, &offsets, &batch, &chunk},
       [&] { return cattn_compute_causal_conv1d_metadata(&a); });
}

TEST(double_fetch, GetPcpQueryRestoreIdx) {
  // cu_num_tokens {0, 4, 6, 8, 14}: 14 indices; entry 2 moves within [4, 8] (still 14), past
  // its neighbours, to an odd length and to the extremes.
  CanaryBuffer cu(5 * 8), out(14 * 8);
  const int64_t values[5] = {0, 4, 6, 8, 14};
  std::memcpy(cu.payload(), values, sizeof values);
  View c(cu.payload(), 0, {5}, i64()), r(out.payload(), 0, {14}, i64());
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = c.dl();
  a.restore_idx = r.dl();
  race({"cattn_get_pcp_query_restore_idx", "cu_num_tokens[2]", 4}, i64_at(cu, 2),
       {6, 4, 8, 14, 0, int64_t{1} << 40, -(int64_t{1} << 40), 5}, {&out},
       [&] { return cattn_get_pcp_query_restore_idx(&a); });
}

TEST(double_fetch, MakeKvSharingFastPrefillCommonAttnMetadata) {
  CanaryBuffer qsl(4 * 8), logits(4 * 8), out(4 * 8), scalars(2 * 8);
  const int64_t q[4] = {0, 3, 7, 12}, l[4] = {2, 6, 11, 0};
  std::memcpy(qsl.payload(), q, sizeof q);
  std::memcpy(logits.payload(), l, sizeof l);
  View qv(qsl.payload(), 0, {4}, i64()), lv(logits.payload(), 0, {4}, i64());
  View ov(out.payload(), 0, {4}, i64()), sv(scalars.payload(), 0, {2}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, res = md;
  md.query_start_loc = qv.dl();
  md.logits_indices_padded = lv.dl();
  md.num_logits_indices = 4;
  md.num_reqs = 3;
  md.max_query_len = 5;
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &md;
  a.out = &res;
  a.decode_max_and_total = sv.dl();
  // A logits index that moves past the last request after the check: the probe's read past
  // query_start_loc.
  race({"cattn_make_kv_sharing_fast_prefill_common_attn_metadata", "logits_indices_padded[1]", 3},
       i64_at(logits, 1), {6, 12, 1 << 30, INT64_MAX, -5, 11}, {&out, &scalars}, [&] {
    res.query_start_loc = ov.dl();
    return cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a);
  });
}

TEST(double_fetch, FusedPcpQkvSelect) {
  // W = 2, r = 1, q [8, 2, 2] int32: query_start_loc {0, 2, 8} with entry 1 moving.
  CanaryBuffer qsl(3 * 8), q(8 * 4 * 4), k(16 * 4 * 4), v(16 * 4 * 4);
  CanaryBuffer out[6] = {CanaryBuffer(4 * 16), CanaryBuffer(8 * 16), CanaryBuffer(8 * 16),
                         CanaryBuffer(4 * 16), CanaryBuffer(12 * 16), CanaryBuffer(12 * 16)};
  const int64_t starts[3] = {0, 2, 8};
  std::memcpy(qsl.payload(), starts, sizeof starts);
  View qs(qsl.payload(), 0, {3}, i64()), qv(q.payload(), 0, {8, 2, 2}, i32()),
      kv(k.payload(), 0, {16, 2, 2}, i32()), vv(v.payload(), 0, {16, 2, 2}, i32());
  const int64_t rows[6] = {4, 8, 8, 4, 12, 12};
  std::vector<std::unique_ptr<View>> ov;
  for (int i = 0; i < 6; ++i)
    ov.push_back(std::make_unique<View>(out[i].payload(), 0, std::vector<int64_t>{rows[i], 2, 2},
                                        i32()));
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.q = qv.dl();
  a.k = kv.dl();
  a.v = vv.dl();
  a.query_start_loc = qs.dl();
  a.pcp_world_size = 2;
  a.pcp_rank = 1;
  a.q_head = ov[0]->dl();
  a.k_head = ov[1]->dl();
  a.v_head = ov[2]->dl();
  a.q_tail = ov[3]->dl();
  a.k_tail = ov[4]->dl();
  a.v_tail = ov[5]->dl();
  race({"cattn_fused_pcp_qkv_select", "query_start_loc[1]", 2}, i64_at(qsl, 1),
       {2, 8, 0, 6, int64_t{1} << 40, -2, 3},
       {&out[0], &out[1], &out[2], &out[3], &out[4], &out[5]},
       [&] { return cattn_fused_pcp_qkv_select(&a); });
}

TEST(double_fetch, MakeLocalAttentionVirtualBatches) {
  CanaryBuffer qsl(3 * 8), seq(2 * 8), table(2 * 4 * 8);
  const int64_t q[3] = {0, 3, 10}, s[2] = {7, 12};
  std::memcpy(qsl.payload(), q, sizeof q);
  std::memcpy(seq.payload(), s, sizeof s);
  View qv(qsl.payload(), 0, {3}, i64()), sv(seq.payload(), 0, {2}, i64()),
      tv(table.payload(), 0, {2, 4}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc_cpu = qv.dl();
  md.seq_lens_cpu = sv.dl();
  md.block_table_tensor = tv.dl();
  md.num_actual_tokens = 10;
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  a.attn_chunk_size = 4;
  a.block_size = 2;
  a.metadata = &md;
  a.max_virtual_batches = 64;
  // The count pass sizes the plan; the fill pass must not write past it when the split point
  // query_start_loc_cpu[1] moves in between (other virtual batch counts, a query longer than
  // its sequence, a decrease).
  race({"cattn_make_local_attention_virtual_batches", "query_start_loc_cpu[1]", 2},
       i64_at(qsl, 1), {3, 0, 7, 1, 10, 11, int64_t{1} << 40, -3}, {&qsl, &seq}, [&] {
    const cattn_status_t st = cattn_make_local_attention_virtual_batches(&a);
    if (st == CATTN_OK) cattn_local_attention_plan_destroy(a.plan);
    return st;
  });
}

TEST(double_fetch, MambaGetBlockTableTensor) {
  // ALIGN, block 4, one speculative block: columns (s - 1) / 4 and the next of a 4-column row.
  CanaryBuffer table(2 * 4 * 8), seq(2 * 8), out(2 * 2 * 8);
  for (int i = 0; i < 8; ++i) *i64_at(table, static_cast<size_t>(i)) = 100 + i;
  *i64_at(seq, 0) = 5;
  *i64_at(seq, 1) = 9;
  View tv(table.payload(), 0, {2, 4}, i64()), sv(seq.payload(), 0, {2}, i64()),
      ov(out.payload(), 0, {2, 2}, i64());
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = tv.dl();
  a.seq_lens = sv.dl();
  a.out = ov.dl();
  a.block_size = 4;
  a.num_speculative_blocks = 1;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  race({"cattn_mamba_get_block_table_tensor", "seq_lens[1]", 2}, i64_at(seq, 1),
       {9, 1 << 20, 16, INT64_MAX, 0, 12}, {&out, &table},
       [&] { return cattn_mamba_get_block_table_tensor(&a); });
}

TEST(double_fetch, ExtendAllQueriesByN) {
  // Element-wise, so a changed value only changes its own result; one checked near INT64_MAX
  // must wrap rather than overflow (UBSan watches).
  CanaryBuffer qsl(3 * 8), seq(2 * 8), oq(3 * 8), os(2 * 8);
  const int64_t q[3] = {0, 3, 7}, s[2] = {5, 9};
  std::memcpy(qsl.payload(), q, sizeof q);
  std::memcpy(seq.payload(), s, sizeof s);
  View qv(qsl.payload(), 0, {3}, i64()), sv(seq.payload(), 0, {2}, i64()),
      oqv(oq.payload(), 0, {3}, i64()), osv(os.payload(), 0, {2}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, res = md;
  md.query_start_loc = qv.dl();
  md.seq_lens = sv.dl();
  res.query_start_loc = oqv.dl();
  res.seq_lens = osv.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &md;
  a.out = &res;
  a.n = 2;
  race({"cattn_extend_all_queries_by_n", "seq_lens[1]", 2}, i64_at(seq, 1),
       {9, INT64_MAX, INT64_MAX - 1, INT64_MIN, 3}, {&oq, &os},
       [&] { return cattn_extend_all_queries_by_n(&a); });
}

TEST(double_fetch, SplitPrefillChunks) {
  // Lengths {3, 5, 2, 7, 1}, workspace 8: 3 chunks counted; entry 1 moves to values that make
  // more or fewer chunks after the count, past the workspace and to the extremes.
  CanaryBuffer seq(5 * 8), out(3 * 2 * 8);
  const int64_t values[5] = {3, 5, 2, 7, 1};
  std::memcpy(seq.payload(), values, sizeof values);
  View s(seq.payload(), 0, {5}, i64()), o(out.payload(), 0, {3, 2}, i64());
  cattn_split_prefill_chunks_args_t a = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
  a.seq_lens_cpu = s.dl();
  a.workspace_size = 8;
  a.chunks = o.dl();
  race({"cattn_split_prefill_chunks", "seq_lens_cpu[1]", 5}, i64_at(seq, 1),
       {5, 0, 8, 9, INT64_MAX, INT64_MIN, -8}, {&out},
       [&] { return cattn_split_prefill_chunks(&a); });
}

TEST(double_fetch, ReorderBatchToSplitDecodesAndPrefills) {
  // A prefill, decodes and an extend; entry 2 of num_computed_tokens flips its request between
  // regions while the index map and swaps are built.
  CanaryBuffer sched(6 * 8), comp(6 * 8), prompt(6 * 8), map(6 * 8), swaps(5 * 2 * 8);
  const int64_t s[6] = {9, 1, 1, 4, 1, 1}, c[6] = {0, 5, 3, 2, 9, 0}, p[6] = {9, 5, 8, 9, 9, 1};
  std::memcpy(sched.payload(), s, sizeof s);
  std::memcpy(comp.payload(), c, sizeof c);
  std::memcpy(prompt.payload(), p, sizeof p);
  View sv(sched.payload(), 0, {6}, i64()), cv(comp.payload(), 0, {6}, i64()),
      pv(prompt.payload(), 0, {6}, i64()), mv(map.payload(), 0, {6}, i64()),
      wv(swaps.payload(), 0, {5, 2}, i64());
  cattn_reorder_batch_args_t a = CATTN_REORDER_BATCH_ARGS_INIT;
  a.num_scheduled_tokens = sv.dl();
  a.num_computed_tokens = cv.dl();
  a.num_prompt_tokens = pv.dl();
  a.index_map = mv.dl();
  a.swaps = wv.dl();
  race({"cattn_reorder_batch_to_split_decodes_and_prefills", "num_computed_tokens[2]", 6},
       i64_at(comp, 2), {3, 0, 8, -1, INT64_MAX, INT64_MIN}, {&map, &swaps},
       [&] { return cattn_reorder_batch_to_split_decodes_and_prefills(&a); });
}

TEST(double_fetch, TokenToReqIndices) {
  // The mapping is written a request at a time: a start changed after the checks may move the
  // runs, never past the buffer (each run is cut at the checked capacity).
  CanaryBuffer qsl(4 * 8), buf(9 * 4);
  const int64_t q[4] = {0, 3, 3, 7};
  std::memcpy(qsl.payload(), q, sizeof q);
  View qv(qsl.payload(), 0, {4}, i64()), bv(buf.payload(), 0, {9}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qv.dl();
  md.num_actual_tokens = 8;
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = &md;
  a.buffer = bv.dl();
  race({"cattn_token_to_req_indices", "query_start_loc[1]", 3}, i64_at(qsl, 1),
       {3, 0, 9, INT64_MAX, INT64_MIN, -1, 7, int64_t{1} << 40}, {&buf},
       [&] { return cattn_token_to_req_indices(&a); });
}

TEST(double_fetch, NaiveQueryLensAndComputedTokens) {
  CanaryBuffer qsl(3 * 8), seq(2 * 8), out(2 * 4);
  const int64_t q[3] = {0, 3, 7}, s[2] = {5, 9};
  std::memcpy(qsl.payload(), q, sizeof q);
  std::memcpy(seq.payload(), s, sizeof s);
  View qv(qsl.payload(), 0, {3}, i64()), sv(seq.payload(), 0, {2}, i64()),
      ov(out.payload(), 0, {2}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qv.dl();
  md.seq_lens = sv.dl();
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = &md;
  a.out = ov.dl();
  race({"cattn_naive_query_lens", "query_start_loc[1]", 2}, i64_at(qsl, 1),
       {3, INT64_MAX, INT64_MIN, -4, int64_t{1} << 40}, {&out},
       [&] { return cattn_naive_query_lens(&a); });
  race({"cattn_compute_num_computed_tokens", "seq_lens[1]", 2}, i64_at(seq, 1),
       {9, INT64_MAX, INT64_MIN, int64_t{1} << 40}, {&out},
       [&] { return cattn_compute_num_computed_tokens(&a); });
}

TEST(double_fetch, ExtendAllQueriesByNPositions) {
  // The positions are written from the extended outputs; a query start changed during the
  // call may move them, never past the positions buffer.
  CanaryBuffer qsl(3 * 8), seq(2 * 8), oq(3 * 8), os(2 * 8), pos(12 * 8);
  const int64_t q[3] = {0, 3, 7}, s[2] = {5, 9};
  std::memcpy(qsl.payload(), q, sizeof q);
  std::memcpy(seq.payload(), s, sizeof s);
  View qv(qsl.payload(), 0, {3}, i64()), sv(seq.payload(), 0, {2}, i64()),
      oqv(oq.payload(), 0, {3}, i64()), osv(os.payload(), 0, {2}, i64()),
      pv(pos.payload(), 0, {12}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, res = md;
  md.query_start_loc = qv.dl();
  md.seq_lens = sv.dl();
  res.query_start_loc = oqv.dl();
  res.seq_lens = osv.dl();
  res.positions = pv.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &md;
  a.out = &res;
  a.n = 2;
  race({"cattn_extend_all_queries_by_n", "query_start_loc[1] (positions)", 2},
       i64_at(qsl, 1), {3, 0, 100, INT64_MAX - 8, INT64_MIN, -3}, {&oq, &os, &pos},
       [&] { return cattn_extend_all_queries_by_n(&a); });
}

