// SPDX-License-Identifier: Apache-2.0
// Double fetch: while one thread calls a host entry point over and over, a second thread keeps
// changing one element of an input between checked values, values the checks refuse, and
// extremes. That is the caller's data race, so results and statuses may vary, but the library
// must never turn it into a write outside its outputs or a read outside its inputs: every
// output lives in a canaried buffer (and under ASan in an instrumented heap block), the 1.2
// cases' inputs end at an inaccessible page, and every status must be one the header defines.
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
#include "support/guarded_input.h"
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

// The 1.2 calls at B = 2^16 rows: a host call walks the batch at least twice (the checks, then
// the writes), so a value read again in the second walk is read a millisecond or more after it
// was checked. Every output is exactly as long as the call requires, in a canaried buffer, so
// the first entry written past it changes a canary; every input the cases index ends at an
// inaccessible page (new_positions aside: see there), so the first entry read past it faults.
// The last row's values are the ones moved most: its reads and writes end at those boundaries.
namespace {

constexpr int64_t kB = int64_t{1} << 16;
constexpr int64_t kBig = int64_t{1} << 40;

// An int64 input, and a flag input, that end at a guard page.
struct In : GuardedInput<int64_t> {
  explicit In(const std::vector<int64_t>& v, std::vector<int64_t> shape = {})
      : GuardedInput<int64_t>(v, i64(), std::move(shape)) {}
};
struct Flags : GuardedInput<uint8_t> {
  explicit Flags(const std::vector<int64_t>& v) : GuardedInput<uint8_t>(v, dtype_bits(8)) {}
};

// An output of exactly `shape`, between canaries.
struct Out {
  CanaryBuffer buf;
  View view;
  explicit Out(const std::vector<int64_t>& shape, DLDataType dt = i64())
      : buf(bytes(shape, dt)), view(buf.payload(), 0, shape, dt) {}
  DLTensor* dl() { return view.dl(); }
  int64_t* i64s() { return reinterpret_cast<int64_t*>(buf.payload()); }
  static size_t bytes(const std::vector<int64_t>& shape, DLDataType dt) {
    size_t n = dt.bits / 8;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

// A step of kB live rows, each a decode with drafts: row b has 1 + b % 2 drafts and 1 + drafts
// tokens, 4 more when b % 5 == 0; all but persistent rows r % 7 == 0 (whose prompt is longer)
// are past their prompt, so input_ids gets their tokens. Batch row b is persistent row
// (5b + 4) mod kB, a permutation that keeps the last row last, so the last row reads the
// persistent tensors' last entries. Tables are kW blocks of kBlock tokens, wide enough for
// every position.
constexpr int64_t kW = 8, kBlock = 16, kDraftCols = 3;
struct StepBatch {
  std::vector<int64_t> sched, drafts, idx, nct, qsl{0}, pos, seq, table, batch_table,
      num_blocks, prefill, last, draft_tokens;
  int64_t T = 0, L = 0;
  StepBatch() {
    for (int64_t r = 0; r < kB; ++r) {
      nct.push_back(16 + r % 100);
      num_blocks.push_back(r % (kW + 1));
      prefill.push_back(r % 7 == 0 ? 1000 : 10);
      last.push_back(50000 + r);
      for (int64_t c = 0; c < kW; ++c) table.push_back(r * kW + c + 1);
      for (int64_t k = 0; k < kDraftCols; ++k) draft_tokens.push_back(60000 + r * kDraftCols + k);
    }
    for (int64_t b = 0; b < kB; ++b) {
      const int64_t d = 1 + b % 2, q = 1 + d + (b % 5 == 0 ? 4 : 0), r = (5 * b + 4) % kB;
      sched.push_back(q), drafts.push_back(d), idx.push_back(r);
      for (int64_t j = 0; j < q; ++j) pos.push_back(nct[r] + j);
      qsl.push_back(qsl.back() + q);
      seq.push_back(nct[r] + q);
      for (int64_t c = 0; c < kW; ++c) batch_table.push_back(table[r * kW + c]);
      L += 1 + d;
    }
    T = qsl.back();
  }
};

std::vector<int64_t> num_reqs_values(int64_t n) {
  return around(n, {n - 1, 0, kB / 2, kB, kB + 1, -1, INT64_MAX, INT64_MIN});
}
std::vector<int64_t> row_values(int64_t r) {
  return around(r, {0, kB / 2, kB, kB + 4096, -1, kBig, INT64_MAX, INT64_MIN});
}
// The end of the last request (query_start_loc[B] or the live total): longer by thousands or
// by a few (a write past lands in the canary), shorter, decreasing, and the extremes.
std::vector<int64_t> end_values(int64_t end, int64_t before_last) {
  return around(end, {end + 4096, end + 5, end - 1, before_last - 1, -1, kBig, INT64_MAX,
                      INT64_MIN});
}
// A middle boundary: moved by one either way, past its neighbours, and the extremes.
std::vector<int64_t> middle_values(const std::vector<int64_t>& qsl, size_t i) {
  return around(qsl[i], {qsl[i] + 1, qsl[i] - 1, qsl[i + 1] + 1, qsl[i - 1] - 1, 0, -1,
                         INT64_MAX, INT64_MIN});
}

struct PreparePosSeqLens {
  StepBatch s;
  In sched{s.sched}, idx{s.idx}, nct{s.nct}, nreq{{kB}};
  Out qsl{{kB + 1}}, seq{{kB}}, pos{{s.T}}, bnct{{kB}};
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  PreparePosSeqLens() {
    a.num_scheduled_tokens = sched.dl(), a.idx_mapping = idx.dl();
    a.num_computed_tokens = nct.dl(), a.num_reqs = nreq.dl();
    a.query_start_loc = qsl.dl(), a.seq_lens = seq.dl(), a.positions = pos.dl();
    a.batch_num_computed_tokens = bnct.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_prepare_pos_seq_lens", input, kB, kLarge}, target, values,
         {&qsl.buf, &seq.buf, &pos.buf, &bnct.buf}, [&] { return cattn_prepare_pos_seq_lens(&a); });
  }
};

}  // namespace

// The scan's total sizes positions: a count read again for the writes would write past them.
TEST(double_fetch, PreparePosSeqLensNumScheduledTokens) {
  PreparePosSeqLens c;
  const int64_t q = c.s.sched.back();
  c.run("num_scheduled_tokens[B - 1]", &c.sched[kB - 1],
        around(q, {q + 4096, q + 5, q - 1, 0, -1, kBig, INT64_MAX, INT64_MIN}));
}

// num_reqs splits live rows (read, scanned) from padded ones (zeroed).
TEST(double_fetch, PreparePosSeqLensNumReqs) {
  PreparePosSeqLens c;
  c.run("num_reqs", &c.nreq[0], num_reqs_values(kB));
}

// idx_mapping picks the num_computed_tokens entry each row reads.
TEST(double_fetch, PreparePosSeqLensIdxMapping) {
  PreparePosSeqLens c;
  c.run("idx_mapping[B - 1]", &c.idx[kB - 1], row_values(kB - 1));
}

// The last row's computed count sets its seq_len and positions (and their overflow check).
TEST(double_fetch, PreparePosSeqLensNumComputedTokens) {
  PreparePosSeqLens c;
  const int64_t v = c.s.nct[kB - 1];
  c.run("num_computed_tokens[idx[B - 1]]", &c.nct[kB - 1],
        around(v, {v + 4096, 0, -1, kBig, INT64_MAX - 3, INT64_MAX, INT64_MIN}));
}

namespace {

struct GatherBlockTables {
  StepBatch s;
  In idx{s.idx}, nreq{{kB}}, table{s.table, {kB, kW}}, nb{s.num_blocks};
  Out out{{kB, kW}};
  cattn_gather_block_tables_args_t a = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  GatherBlockTables() {
    a.idx_mapping = idx.dl(), a.num_reqs = nreq.dl(), a.block_table = table.dl();
    a.num_blocks = nb.dl(), a.out = out.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_gather_block_tables", input, kB, kLarge}, target, values, {&out.buf},
         [&] { return cattn_gather_block_tables(&a); });
  }
};

}  // namespace

// num_blocks is how many entries of a row are copied: past W, the last row's copy would read
// past the table and write past out.
TEST(double_fetch, GatherBlockTablesNumBlocks) {
  GatherBlockTables c;
  const int64_t v = c.s.num_blocks[kB - 1];
  c.run("num_blocks[idx[B - 1]]", &c.nb[kB - 1],
        around(v, {kW, 0, kW + 1, kW + 4096, -1, kBig, INT64_MAX, INT64_MIN}));
}

// idx_mapping picks the table row each batch row copies.
TEST(double_fetch, GatherBlockTablesIdxMapping) {
  GatherBlockTables c;
  c.run("idx_mapping[B - 1]", &c.idx[kB - 1], row_values(kB - 1));
}

// num_reqs decides which rows are copied and which are zeroed across the width.
TEST(double_fetch, GatherBlockTablesNumReqs) {
  GatherBlockTables c;
  c.run("num_reqs", &c.nreq[0], num_reqs_values(kB));
}

namespace {

struct ComputeSlotMappings {
  bool v1;
  StepBatch s;
  In qsl{s.qsl}, nreq{{kB}}, pos{s.pos}, idx{s.idx}, table{v1 ? s.batch_table : s.table, {kB, kW}};
  Out out{{s.T}};
  cattn_compute_slot_mappings_args_t a = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  explicit ComputeSlotMappings(bool v1_contract) : v1(v1_contract) {
    a.contract = v1 ? CATTN_SLOT_MAPPING_V1 : CATTN_SLOT_MAPPING_MRV2;
    a.block_size = kBlock, a.kernel_block_size = kBlock;
    a.query_start_loc = qsl.dl(), a.num_reqs = nreq.dl(), a.positions = pos.dl();
    a.idx_mapping = v1 ? nullptr : idx.dl();
    a.block_table = table.dl(), a.slot_mapping = out.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({v1 ? "cattn_compute_slot_mappings (V1)" : "cattn_compute_slot_mappings (MRV2)", input,
          kB, kLarge},
         target, values, {&out.buf}, [&] { return cattn_compute_slot_mappings(&a); });
  }
};

}  // namespace

// The last request's end is the live total, which the slot mapping's length is checked
// against: read again for the writes, it would write past the slots and read past positions.
TEST(double_fetch, ComputeSlotMappingsMrv2QueryStartLocEnd) {
  ComputeSlotMappings c(false);
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.s.T, c.s.qsl[kB - 1]));
}

// A middle boundary moves tokens between two requests (each token's row and table row).
TEST(double_fetch, ComputeSlotMappingsMrv2QueryStartLocMiddle) {
  ComputeSlotMappings c(false);
  c.run("query_start_loc[B / 2]", &c.qsl[kB / 2], middle_values(c.s.qsl, kB / 2));
}

// A position picks the table column: the last token's, past its row, would read past the table.
TEST(double_fetch, ComputeSlotMappingsMrv2Positions) {
  ComputeSlotMappings c(false);
  const int64_t p = c.s.pos.back(), end = kW * kBlock;
  c.run("positions[T - 1]", &c.pos[c.s.T - 1],
        around(p, {end - 1, end, end + 4096, -1, kBig, INT64_MAX, INT64_MIN}));
}

// MRV2 reads the table row idx_mapping names.
TEST(double_fetch, ComputeSlotMappingsMrv2IdxMapping) {
  ComputeSlotMappings c(false);
  c.run("idx_mapping[B - 1]", &c.idx[kB - 1], row_values(kB - 1));
}

// num_reqs sets the live total, past which the slots are -1.
TEST(double_fetch, ComputeSlotMappingsMrv2NumReqs) {
  ComputeSlotMappings c(false);
  c.run("num_reqs", &c.nreq[0], num_reqs_values(kB));
}

TEST(double_fetch, ComputeSlotMappingsV1QueryStartLocEnd) {
  ComputeSlotMappings c(true);
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.s.T, c.s.qsl[kB - 1]));
}

// V1 splits positions into virtual blocks, then kernel blocks: another column formula.
TEST(double_fetch, ComputeSlotMappingsV1Positions) {
  ComputeSlotMappings c(true);
  const int64_t p = c.s.pos.back(), end = kW * kBlock;
  c.run("positions[T - 1]", &c.pos[c.s.T - 1],
        around(p, {end - 1, end, end + 4096, -1, kBig, INT64_MAX, INT64_MIN}));
}

namespace {

struct CombineSampledAndDraftTokens {
  StepBatch s;
  In qsl{s.qsl}, nreq{{kB}}, nd{s.drafts}, idx{s.idx}, seq{s.seq}, pl{s.prefill}, last{s.last},
      drafts{s.draft_tokens, {kB, kDraftCols}};
  Out li{{s.L}}, cu{{kB + 1}}, ei{{s.L}}, ep{{s.L}}, ids{{s.T}};
  cattn_combine_sampled_and_draft_tokens_args_t a =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  CombineSampledAndDraftTokens() {
    a.query_start_loc = qsl.dl(), a.num_reqs = nreq.dl(), a.num_draft_tokens = nd.dl();
    a.idx_mapping = idx.dl(), a.seq_lens = seq.dl(), a.prefill_len = pl.dl();
    a.last_sampled_tokens = last.dl(), a.draft_tokens = drafts.dl();
    a.logits_indices = li.dl(), a.cu_num_logits = cu.dl(), a.expanded_idx_mapping = ei.dl();
    a.expanded_local_pos = ep.dl(), a.input_ids = ids.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_combine_sampled_and_draft_tokens", input, kB, kLarge}, target, values,
         {&li.buf, &cu.buf, &ei.buf, &ep.buf, &ids.buf},
         [&] { return cattn_combine_sampled_and_draft_tokens(&a); });
  }
};

}  // namespace

// A row's drafts set its logits (the total the logits outputs are checked against), the
// draft_tokens columns it reads and the input_ids entries it writes.
TEST(double_fetch, CombineSampledAndDraftTokensNumDraftTokens) {
  CombineSampledAndDraftTokens c;
  const int64_t d = c.s.drafts.back();
  c.run("num_draft_tokens[B - 1]", &c.nd[kB - 1],
        around(d, {d - 1, 0, d + 1, kDraftCols + 1, d + 4096, -1, INT64_MAX, INT64_MIN}));
}

// The last request's end places its logits and its tokens in input_ids (exactly T long).
TEST(double_fetch, CombineSampledAndDraftTokensQueryStartLocEnd) {
  CombineSampledAndDraftTokens c;
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.s.T, c.s.qsl[kB - 1]));
}

TEST(double_fetch, CombineSampledAndDraftTokensQueryStartLocMiddle) {
  CombineSampledAndDraftTokens c;
  c.run("query_start_loc[B / 2]", &c.qsl[kB / 2], middle_values(c.s.qsl, kB / 2));
}

TEST(double_fetch, CombineSampledAndDraftTokensNumReqs) {
  CombineSampledAndDraftTokens c;
  c.run("num_reqs", &c.nreq[0], num_reqs_values(kB));
}

// idx_mapping picks the prefill_len, last_sampled_tokens and draft_tokens rows read.
TEST(double_fetch, CombineSampledAndDraftTokensIdxMapping) {
  CombineSampledAndDraftTokens c;
  c.run("idx_mapping[B - 1]", &c.idx[kB - 1], row_values(kB - 1));
}

// seq_lens decides whether a row is past its prompt, so whether input_ids entries are written.
TEST(double_fetch, CombineSampledAndDraftTokensSeqLens) {
  CombineSampledAndDraftTokens c;
  const int64_t v = c.s.seq.back(), prompt = c.s.prefill.back();
  c.run("seq_lens[B - 1]", &c.seq[kB - 1],
        around(v, {prompt, prompt + 1, 0, -1, INT64_MAX, INT64_MIN}));
}

namespace {

// A padded batch (16 padded rows) that keeps the contract, checked with its seq_lens, table
// and slots.
struct StepBatchCheck {
  static constexpr int64_t kLive = kB - 16;
  StepBatch s;
  std::vector<int64_t> padded_qsl = padded(s.qsl, kLive + 1, s.qsl[kLive]);
  std::vector<int64_t> padded_seq = padded(s.seq, kLive, 0);
  std::vector<int64_t> padded_table = padded(s.batch_table, kLive * kW, 0);
  std::vector<int64_t> slots = live_slots();
  In qsl{padded_qsl}, nreq{{kLive}}, seq{padded_seq}, table{padded_table, {kB, kW}},
      slot{slots};
  Out status{{3}};
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  StepBatchCheck() {
    a.query_start_loc = qsl.dl(), a.num_reqs = nreq.dl(), a.seq_lens = seq.dl();
    a.block_tables[0] = table.dl(), a.slot_mappings[0] = slot.dl(), a.status = status.dl();
  }
  static std::vector<int64_t> padded(std::vector<int64_t> v, int64_t from, int64_t fill) {
    std::fill(v.begin() + from, v.end(), fill);
    return v;
  }
  std::vector<int64_t> live_slots() const {
    std::vector<int64_t> v(static_cast<size_t>(s.T), -1);
    for (int64_t i = 0; i < s.qsl[kLive]; ++i) v[i] = i;
    return v;
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_step_batch_check", input, kB, kLarge}, target, values, {&status.buf},
         [&] { return cattn_step_batch_check(&a); });
    // The batch itself keeps the contract: the race was on a valid batch.
    ASSERT_EQ(cattn_step_batch_check(&a), CATTN_OK);
    EXPECT_EQ(std::vector<int64_t>(status.i64s(), status.i64s() + 3),
              (std::vector<int64_t>{0, 0, 0}));
  }
};

}  // namespace

// The live total decides how far the slot mappings are read as live and where -1 starts.
TEST(double_fetch, StepBatchCheckQueryStartLocEnd) {
  StepBatchCheck c;
  const int64_t n = StepBatchCheck::kLive;
  c.run("query_start_loc[num_reqs]", &c.qsl[n], end_values(c.padded_qsl[n], c.padded_qsl[n - 1]));
}

// num_reqs decides which rows are checked as padded (their table rows read).
TEST(double_fetch, StepBatchCheckNumReqs) {
  StepBatchCheck c;
  c.run("num_reqs", &c.nreq[0], num_reqs_values(StepBatchCheck::kLive));
}

namespace {

// EAGLE's drafting step: positions 100 + i % 500 of a 2^20-token model, 64-column tables of
// 16-token blocks (positions past 1024 take the last column), slots padded to B + 128.
struct EagleStepUpdate {
  static constexpr int64_t kCols = 64, kPad = 128, kMaxLen = int64_t{1} << 20;
  std::vector<int64_t> positions = make_positions(), blocks = make_blocks();
  In pos{positions}, table{blocks, {kB, kCols}};
  Out seq{{kB}}, clamped{{kB}}, slots{{kB + kPad}};
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  EagleStepUpdate() {
    for (int64_t i = 0; i < kB; ++i) seq.i64s()[i] = positions[i] + 1;
    a.block_size = kBlock, a.max_model_len = kMaxLen, a.input_batch_size = kB + kPad;
    a.positions = pos.dl(), a.block_table = table.dl(), a.seq_lens = seq.dl();
    a.out_clamped_positions = clamped.dl(), a.out_slot_mapping = slots.dl();
  }
  static std::vector<int64_t> make_positions() {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < kB; ++i) v.push_back(100 + i % 500);
    return v;
  }
  static std::vector<int64_t> make_blocks() {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < kB * kCols; ++i) v.push_back(i + 1);
    return v;
  }
};

}  // namespace

// A position picks the table column (clamped to the last) and decides whether a slot is -1.
TEST(double_fetch, EagleStepUpdateSlotMappingAndMetadataPositions) {
  EagleStepUpdate c;
  const int64_t p = c.positions.back(), end = EagleStepUpdate::kCols * kBlock;
  race({"cattn_eagle_step_update_slot_mapping_and_metadata", "positions[B - 1]", kB, kLarge},
       &c.pos[kB - 1],
       around(p, {end - 1, end, end + 4096, EagleStepUpdate::kMaxLen - 1, -1, -2, kBig,
                  INT64_MAX, INT64_MIN}),
       {&c.seq.buf, &c.clamped.buf, &c.slots.buf},
       [&] { return cattn_eagle_step_update_slot_mapping_and_metadata(&c.a); });
}

namespace {

// A verified batch: request i had i % 3 drafts (an inclusive running sum), accepted all of
// them on odd rows and none on even ones, over i % 3 + 3 tokens.
struct EaglePrepareInputsPadded {
  struct Batch {
    std::vector<int64_t> cu, valid, qsl{0};
    Batch() {
      int64_t sum = 0;
      for (int64_t i = 0; i < kB; ++i) {
        const int64_t d = i % 3;
        cu.push_back(sum += d);
        valid.push_back(i % 2 ? d + 1 : 1);
        qsl.push_back(qsl.back() + d + 3);
      }
    }
  } s;
  In cu{s.cu}, valid{s.valid}, qsl{s.qsl};
  Out idx{{kB}}, rej{{kB}};
  cattn_eagle_prepare_inputs_padded_args_t a = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  EaglePrepareInputsPadded() {
    a.cu_num_draft_tokens = cu.dl(), a.valid_sampled_tokens_count = valid.dl();
    a.query_start_loc = qsl.dl(), a.token_indices_to_sample = idx.dl();
    a.num_rejected_tokens = rej.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_eagle_prepare_inputs_padded", input, kB, kLarge}, target, values,
         {&idx.buf, &rej.buf}, [&] { return cattn_eagle_prepare_inputs_padded(&a); });
  }
};

}  // namespace

// The running sum gives each request's drafts, so its rejected count and its sample index.
TEST(double_fetch, EaglePrepareInputsPaddedCuNumDraftTokens) {
  EaglePrepareInputsPadded c;
  const int64_t v = c.s.cu[kB - 1], before = c.s.cu[kB - 2];
  c.run("cu_num_draft_tokens[B - 1]", &c.cu[kB - 1],
        around(v, {v + 4096, v - 1, before - 1, -1, kBig, INT64_MAX, INT64_MIN}));
}

TEST(double_fetch, EaglePrepareInputsPaddedQueryStartLocEnd) {
  EaglePrepareInputsPadded c;
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.s.qsl[kB], c.s.qsl[kB - 1]));
}

// The last column's token decides the request's valid count and its next token.
TEST(double_fetch, EaglePrepareNextTokenPadded) {
  constexpr int64_t kS = 4, kVocab = 1000;
  std::vector<int64_t> tokens, discard, backup;
  for (int64_t i = 0; i < kB; ++i) {
    for (int64_t j = 0; j < kS; ++j) tokens.push_back(j <= i % kS ? (7 * i + j) % kVocab : -1);
    discard.push_back(i % 7 == 0);
    backup.push_back(5 + i % kVocab);
  }
  In sampled(tokens, {kB, kS}), back(backup);
  Flags mask(discard);
  Out next({kB}), valid({kB});
  cattn_eagle_prepare_next_token_padded_args_t a = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  a.vocab_size = kVocab;
  a.sampled_token_ids = sampled.dl(), a.discard_request_mask = mask.dl();
  a.backup_next_token_ids = back.dl(), a.next_token_ids = next.dl();
  a.valid_sampled_tokens_count = valid.dl();
  const int64_t t = tokens.back();
  race({"cattn_eagle_prepare_next_token_padded", "sampled_token_ids[B - 1, S - 1]", kB, kLarge},
       &sampled[kB * kS - 1], around(t, {-1, kVocab, kVocab - 1, -2, INT64_MAX, INT64_MIN}),
       {&next.buf, &valid.buf}, [&] { return cattn_eagle_prepare_next_token_padded(&a); });
}

namespace {

// A batch of query lengths 1 + r % 3 grown by N = 2 tokens each, 8-column tables of 16-token
// blocks, a 4096-token model; the first token of every request r % 4 == 1 rejected.
// new_positions and the mask are the first n entries of longer buffers (as a caller's
// preallocated ones are), zeros past n: a read past them finds plausible tokens, so a pass
// that walks past n goes on to write past new_slot_mapping, into its canary.
struct ComputeNewSlotMapping {
  static constexpr int64_t kN = 2, kMaxLen = 4096, kSlack = 8192;
  struct Batch {
    std::vector<int64_t> qsl{0}, positions, rejected, blocks;
    Batch() {
      for (int64_t r = 0; r < kB; ++r) {
        const int64_t q = 1 + r % 3;
        qsl.push_back(qsl.back() + q);
        for (int64_t j = 0; j < q + kN; ++j) {
          positions.push_back(20 + r % 50 + j);
          rejected.push_back(r % 4 == 1 && j == 0);
        }
        for (int64_t c = 0; c < kW; ++c) blocks.push_back(r * kW + c + 3);
      }
    }
  } s;
  int64_t n = static_cast<int64_t>(s.positions.size());
  In qsl{s.qsl}, table{s.blocks, {kB, kW}};
  std::vector<int64_t> pos_mem = slack(s.positions);
  std::vector<uint8_t> mask_mem = flags(s.rejected);
  View pos{pos_mem.data(), 0, {n}, i64()}, mask{mask_mem.data(), 0, {n}, dtype_bits(8)};
  Out out{{n}};
  cattn_compute_new_slot_mapping_args_t a = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  ComputeNewSlotMapping() {
    a.block_size = kBlock, a.num_new_tokens = kN, a.max_model_len = kMaxLen;
    a.query_start_loc = qsl.dl(), a.block_table = table.dl(), a.new_positions = pos.dl();
    a.is_rejected_token_mask = mask.dl(), a.new_slot_mapping = out.dl();
  }
  static std::vector<int64_t> slack(std::vector<int64_t> v) {
    v.resize(v.size() + kSlack, 0);
    return v;
  }
  static std::vector<uint8_t> flags(const std::vector<int64_t>& v) {
    std::vector<uint8_t> f(v.begin(), v.end());
    f.resize(f.size() + kSlack, 0);
    return f;
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_compute_new_slot_mapping", input, kB, kLarge}, target, values, {&out.buf},
         [&] { return cattn_compute_new_slot_mapping(&a); });
  }
};

}  // namespace

// The last request's end sets its token count: n is checked against it, and a pass that reads
// it again walks past new_positions and writes past new_slot_mapping.
TEST(double_fetch, ComputeNewSlotMappingQueryStartLocEnd) {
  ComputeNewSlotMapping c;
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.s.qsl[kB], c.s.qsl[kB - 1]));
}

// A middle boundary moves tokens between two requests, so the table row each token reads;
// made huge or decreasing, the earlier request's count runs past n.
TEST(double_fetch, ComputeNewSlotMappingQueryStartLocMiddle) {
  ComputeNewSlotMapping c;
  c.run("query_start_loc[B / 2]", &c.qsl[kB / 2], middle_values(c.s.qsl, kB / 2));
}

// A position picks the flattened table entry: the last token's, past the last row, would read
// past the table.
TEST(double_fetch, ComputeNewSlotMappingNewPositions) {
  ComputeNewSlotMapping c;
  const int64_t p = c.s.positions.back(), end = kW * kBlock;
  c.run("new_positions[n - 1]", &c.pos_mem[c.n - 1],
        around(p, {end - 1, end, end + 4096, ComputeNewSlotMapping::kMaxLen, -1, kBig, INT64_MAX,
                   INT64_MIN}));
}

namespace {

// A verified batch of 2 + i % 3 tokens a request, odd requests with one rejected token, P = 2
// (the bonus and one parallel draft), every optional output present, every output exactly as
// long as the call requires: n_out = T + B * (P - s) tokens, B * P new-token indices, T
// hidden-state entries.
struct CopyAndExpandEagleInputs {
  static constexpr int64_t kP = 2;
  int shift;
  struct Batch {
    std::vector<int64_t> qsl{0}, qel, ids, pos, next;
    Batch() {
      for (int64_t i = 0; i < kB; ++i) {
        const int64_t e = qsl.back() + 2 + i % 3;
        qel.push_back(e - 1 - i % 2);
        qsl.push_back(e);
        next.push_back(40000 + i % 1000);
      }
      for (int64_t k = 0; k < qsl.back(); ++k) ids.push_back(1000 + k % 30000);
      for (int64_t k = 0; k < qsl.back(); ++k) pos.push_back(5 + k % 1000);
    }
  } s;
  int64_t T = s.qsl.back(), n_out = T + kB * (kP - shift);
  In target_ids{s.ids}, target_pos{s.pos}, next{s.next}, qsl{s.qsl}, qel{s.qel};
  Out out_ids{{n_out}}, out_pos{{n_out}}, out_rej{{n_out}, dtype_bits(8)},
      out_msk{{n_out}, dtype_bits(8)}, out_new{{kB * kP}}, out_hid{{T}};
  cattn_copy_and_expand_eagle_inputs_args_t a = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  explicit CopyAndExpandEagleInputs(int s) : shift(s) {
    a.padding_token_id = -9, a.parallel_drafting_token_id = 77;
    a.num_padding_slots_per_request = kP, a.shift_input_ids = shift;
    a.target_token_ids = target_ids.dl(), a.target_positions = target_pos.dl();
    a.next_token_ids = next.dl(), a.query_start_loc = qsl.dl(), a.query_end_loc = qel.dl();
    a.out_input_ids = out_ids.dl(), a.out_positions = out_pos.dl();
    a.out_is_rejected_token_mask = out_rej.dl(), a.out_is_masked_token_mask = out_msk.dl();
    a.out_new_token_indices = out_new.dl(), a.out_hidden_state_mapping = out_hid.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({shift ? "cattn_copy_and_expand_eagle_inputs (shift 1)"
                : "cattn_copy_and_expand_eagle_inputs (shift 0)",
          input, kB, kLarge},
         target, values,
         {&out_ids.buf, &out_pos.buf, &out_rej.buf, &out_msk.buf, &out_new.buf, &out_hid.buf},
         [&] { return cattn_copy_and_expand_eagle_inputs(&a); });
  }
};

}  // namespace

// The last request's end sets n_out, which every output's length is checked against; read
// again in the write pass, the request writes its longer tail past out_input_ids,
// out_positions, the masks (and, shifted, out_hidden_state_mapping).
TEST(double_fetch, CopyAndExpandEagleInputsQueryStartLocEndShift0) {
  CopyAndExpandEagleInputs c(0);
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.T, c.s.qsl[kB - 1]));
}

TEST(double_fetch, CopyAndExpandEagleInputsQueryStartLocEndShift1) {
  CopyAndExpandEagleInputs c(1);
  c.run("query_start_loc[B]", &c.qsl[kB], end_values(c.T, c.s.qsl[kB - 1]));
}

// query_end_loc sets the valid count, so how many target tokens the last request reads: past
// its request, it would read past target_token_ids.
TEST(double_fetch, CopyAndExpandEagleInputsQueryEndLocShift1) {
  CopyAndExpandEagleInputs c(1);
  const int64_t v = c.s.qel[kB - 1], a = c.s.qsl[kB - 1], e = c.s.qsl[kB];
  c.run("query_end_loc[B - 1]", &c.qel[kB - 1],
        around(v, {e - 1, a, a - 1, e, e + 4096, -1, kBig, INT64_MAX, INT64_MIN}));
}

// A middle boundary moves where two requests' outputs start and how long they are.
TEST(double_fetch, CopyAndExpandEagleInputsQueryStartLocMiddleShift0) {
  CopyAndExpandEagleInputs c(0);
  c.run("query_start_loc[B / 2]", &c.qsl[kB / 2], middle_values(c.s.qsl, kB / 2));
}

namespace {

// A batch change over B rows from a previous batch of B: row k continues previous row
// (5k + 4) mod B (the last row the last), every fourth row is new; previous rows g % 5 == 1
// had no drafts. Both counts are in and out, in canaried buffers.
struct BatchChange {
  struct Batch {
    std::vector<int64_t> prev, valid, drafts, cpu;
    Batch() {
      for (int64_t k = 0; k < kB; ++k) {
        prev.push_back(k % 4 == 2 ? -1 : (5 * k + 4) % kB);
        valid.push_back(1 + k % 3);
        drafts.push_back(k % 5 == 1 ? 0 : 2);
        cpu.push_back(500 + k);
      }
    }
  } s;
  In prev{s.prev}, valid{s.valid}, drafts{s.drafts}, cpu{s.cpu};
  Out nct{{kB}}, acc{{kB}};
  cattn_update_num_computed_tokens_for_batch_change_args_t a =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  BatchChange() {
    for (int64_t k = 0; k < kB; ++k) nct.i64s()[k] = 100 + k;
    a.num_computed_tokens = nct.dl(), a.num_accepted_tokens = acc.dl();
    a.prev_positions = prev.dl(), a.valid_sampled_token_count = valid.dl();
    a.prev_num_draft_tokens = drafts.dl(), a.cpu_num_computed_tokens = cpu.dl();
  }
  void run(const char* input, int64_t* target, const std::vector<int64_t>& values) {
    race({"cattn_update_num_computed_tokens_for_batch_change", input, kB, kLarge}, target,
         values, {&nct.buf, &acc.buf},
         [&] { return cattn_update_num_computed_tokens_for_batch_change(&a); });
  }
};

}  // namespace

// prev_positions indexes the previous batch's tensors (n_prev rows) and num_computed_tokens:
// read again after the check, an entry past them reads past their ends.
TEST(double_fetch, UpdateNumComputedTokensForBatchChangePrevPositions) {
  BatchChange c;
  c.run("prev_positions[B - 1]", &c.prev[kB - 1],
        around(kB - 1, {-1, 0, kB, kB + 4096, kBig, INT64_MAX, INT64_MIN}));
}

// A previous row's drafts decide whether the row reads the previous batch at all.
TEST(double_fetch, UpdateNumComputedTokensForBatchChangePrevNumDraftTokens) {
  BatchChange c;
  c.run("prev_num_draft_tokens[B - 1]", &c.drafts[kB - 1],
        around(2, {0, 1, -1, INT64_MAX, INT64_MIN}));
}
