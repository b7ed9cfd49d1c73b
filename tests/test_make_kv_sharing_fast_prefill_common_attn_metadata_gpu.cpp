// SPDX-License-Identifier: Apache-2.0
// make_kv_sharing_fast_prefill_common_attn_metadata on the device: one sync-free launch,
// bit-exact against the host implementation (decode query_start_loc and {max, total}), three
// ways (default stream, non-blocking stream, graph replay), with poisoned outputs whose padding
// must stay untouched; the -1 scalars of the CUDA path; the passthrough that touches nothing;
// the documented skip of logits indices past the batch; and the host-side checks that still
// guard device calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

// Stand-ins for the fields the call only copies.
DLTensor g_seq_lens{}, g_seq_lens_cpu{}, g_computed{}, g_block_table{}, g_slots{}, g_qsl_cpu{};

struct Case {
  std::vector<int64_t> q;       // query_start_loc [num_reqs + 1]
  std::vector<int64_t> logits;  // logits_indices_padded; the first `count` are used
  int64_t count = 0;
  DLDataType qt = i32(), lt = i32(), ot = i32(), mt = i32();  // qsl, logits, out, max_and_total
  int64_t step = 1;
};

cattn_common_attn_metadata_t input_struct(const Case& c, DLTensor* qsl, DLTensor* logits) {
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl;
  md.query_start_loc_cpu = &g_qsl_cpu;
  md.seq_lens = &g_seq_lens;
  md.seq_lens_cpu = &g_seq_lens_cpu;
  md.num_computed_tokens_cpu = &g_computed;
  md.block_table_tensor = &g_block_table;
  md.slot_mapping = &g_slots;
  md.logits_indices_padded = logits;
  md.num_reqs = static_cast<int64_t>(c.q.size()) - 1;
  md.num_actual_tokens = c.q.back();
  md.max_query_len = 7;
  md.max_seq_len = 4321;
  md.num_logits_indices = c.count;
  md.causal = 0;
  return md;
}

void check_case(const Case& c) {
  const int64_t reqs = static_cast<int64_t>(c.q.size()) - 1;
  const int64_t off = c.step > 1 ? 1 : 0;
  HostTensor qsl = HostTensor::of(c.q, c.qt, {}, c.step, off);
  HostTensor logits = HostTensor::of(c.logits, c.lt, {}, c.step, 2 * off);
  HostTensor want_qsl({reqs + 1}, c.ot, c.step, off), got_qsl({reqs + 1}, c.ot, c.step, off);
  HostTensor want_mt({2}, c.mt, c.step, 2 * off), got_mt({2}, c.mt, c.step, 2 * off);
  const auto poison_qsl = got_qsl.bytes(), poison_mt = got_mt.bytes();

  cattn_common_attn_metadata_t host_in = input_struct(c, qsl.dl(), logits.dl());
  cattn_common_attn_metadata_t host_out = CATTN_COMMON_ATTN_METADATA_INIT;
  host_out.query_start_loc = want_qsl.dl();
  cattn_fast_prefill_metadata_args_t h = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  h.metadata = &host_in;
  h.out = &host_out;
  h.decode_max_and_total = want_mt.dl();
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&h));
  ASSERT_EQ(h.passthrough, 0);
  ASSERT_EQ(want_mt.get(1), c.count);

  DeviceTensor qsl_d(qsl), logits_d(logits), out_d(got_qsl), mt_d(got_mt);
  const cattn_common_attn_metadata_t dev_in = input_struct(c, qsl_d.dl(), logits_d.dl());
  cattn_common_attn_metadata_t dev_out;
  cattn_fast_prefill_metadata_args_t d;
  run_three_ways(
      [&](cudaStream_t s) {
        d = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
        d.metadata = &dev_in;
        d.out = &dev_out;
        d.decode_max_and_total = mt_d.dl();
        d.passthrough = -7;
        d.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&d);
      },
      [&] {
        got_qsl.raw() = poison_qsl;
        got_mt.raw() = poison_mt;
        out_d.upload();
        mt_d.upload();
        dev_out = CATTN_COMMON_ATTN_METADATA_INIT;
        dev_out.query_start_loc = out_d.dl();
      },
      [&](const char* way) {
        out_d.download();
        mt_d.download();
        EXPECT_TRUE(got_qsl.bytes() == want_qsl.bytes()) << way;
        EXPECT_TRUE(got_mt.bytes() == want_mt.bytes()) << way;
        EXPECT_EQ(d.passthrough, 0) << way;
        // The CUDA path leaves the values on the device and says so.
        EXPECT_EQ(dev_out.max_query_len, -1) << way;
        EXPECT_EQ(dev_out.num_actual_tokens, -1) << way;
        EXPECT_EQ(dev_out.query_start_loc, out_d.dl()) << way;
        EXPECT_EQ(dev_out.query_start_loc_cpu, nullptr) << way;
        EXPECT_EQ(dev_out.num_reqs, host_out.num_reqs) << way;
        EXPECT_EQ(dev_out.max_seq_len, host_out.max_seq_len) << way;
        EXPECT_EQ(dev_out.causal, 1) << way;
        EXPECT_EQ(dev_out.reserved0, 0) << way;
        EXPECT_EQ(dev_out.logits_indices_padded, nullptr) << way;
        EXPECT_EQ(dev_out.num_logits_indices, 0) << way;
        EXPECT_EQ(dev_out.seq_lens, &g_seq_lens) << way;
        EXPECT_EQ(dev_out.seq_lens_cpu, &g_seq_lens_cpu) << way;
        EXPECT_EQ(dev_out.num_computed_tokens_cpu, &g_computed) << way;
        EXPECT_EQ(dev_out.block_table_tensor, &g_block_table) << way;
        EXPECT_EQ(dev_out.slot_mapping, &g_slots) << way;
      });
}

DLDataType random_type(std::mt19937_64& g) { return g() % 2 ? i32() : i64(); }

}  // namespace
#endif

TEST(make_kv_sharing_fast_prefill_common_attn_metadata_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  {
    SCOPED_TRACE("SPEC-like: the last token of each request");
    check_case({{0, 15, 20, 28}, {14, 19, 27}, 3});
  }
  {
    SCOPED_TRACE("several per request, padding after count, int64 everywhere, strided");
    check_case({{0, 15, 20, 28}, {13, 14, 18, 19, 27, 99, -5}, 5, i64(), i64(), i64(), i64(), 2});
  }
  {
    SCOPED_TRACE("no logits indices");
    check_case({{0, 4, 9}, {3, 8}, 0, i32(), i64(), i32(), i64()});
  }
  {
    SCOPED_TRACE("one request");
    check_case({{0, 6}, {0, 2, 5}, 3, i64(), i32(), i64(), i32()});
  }
  {
    SCOPED_TRACE("zero-length requests and requests without an index");
    check_case({{0, 0, 4, 4, 9, 9}, {1, 2, 3, 8}, 4, i32(), i32(), i64(), i32(), 3});
  }
  {
    SCOPED_TRACE("unsorted, duplicated and negative indices (negative counts for request 0)");
    check_case({{0, 3, 6, 9}, {8, -4, 2, 8, 5, 0, -1, 3}, 8, i64(), i64(), i32(), i64()});
  }
  {
    SCOPED_TRACE("int64 positions beyond int32");
    const int64_t big = int64_t{1} << 40;
    check_case({{0, big, big + 3, 2 * big}, {big - 1, big + 2, big + 3, 2 * big - 1}, 4, i64(),
                i64(), i32(), i32()});
  }
  std::mt19937_64 g(11);
  for (int iter = 0; iter < 40; ++iter) {
    Case c;
    // Past 1024 requests the kernel scans in several block-wide chunks.
    const int64_t reqs = 1 + static_cast<int64_t>(g() % (iter < 25 ? 40 : 6000));
    c.q = {0};
    for (int64_t i = 0; i < reqs; ++i) {
      const int kind = static_cast<int>(g() % 4);
      c.q.push_back(c.q.back() + (kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int64_t>(g() % 300)));
    }
    const int64_t end = c.q.back();
    if (end == 0) c.q.back() = 1;  // somewhere for the indices to land
    const int64_t count = static_cast<int64_t>(g() % (iter < 25 ? 60 : 40000));
    for (int64_t i = 0; i < count; ++i)
      c.logits.push_back(static_cast<int64_t>(g() % static_cast<uint64_t>(c.q.back())));
    if (g() % 2) std::sort(c.logits.begin(), c.logits.end());  // the common, sorted case
    c.count = count;
    for (int pad = static_cast<int>(g() % 3); pad > 0; --pad) c.logits.push_back(-1);
    c.qt = random_type(g);
    c.lt = random_type(g);
    c.ot = random_type(g);
    c.mt = random_type(g);
    c.step = 1 + static_cast<int64_t>(g() % 2);
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c);
  }
#endif
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata_gpu, PassthroughTouchesNothing) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  HostTensor qsl = HostTensor::of({0, 1, 2}, i32()), logits = HostTensor::of({0, 1}, i32());
  HostTensor out({3}, i32()), mt({2}, i64());
  const auto out_before = out.bytes(), mt_before = mt.bytes();
  DeviceTensor qsl_d(qsl), logits_d(logits), out_d(out), mt_d(mt);
  Case c{{0, 1, 2}, {0, 1}, 2};
  cattn_common_attn_metadata_t in = input_struct(c, qsl_d.dl(), logits_d.dl());
  in.max_query_len = 1;
  cattn_common_attn_metadata_t got = CATTN_COMMON_ATTN_METADATA_INIT;
  got.query_start_loc = out_d.dl();
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in;
  a.out = &got;
  a.decode_max_and_total = mt_d.dl();
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(a.passthrough, 1);
  EXPECT_EQ(got.query_start_loc, in.query_start_loc);
  EXPECT_EQ(got.logits_indices_padded, in.logits_indices_padded);
  EXPECT_EQ(got.max_query_len, 1);
  EXPECT_EQ(got.num_actual_tokens, in.num_actual_tokens);
  out_d.download();
  mt_d.download();
  EXPECT_EQ(out.bytes(), out_before);
  EXPECT_EQ(mt.bytes(), mt_before);
#endif
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata_gpu, IndicesPastTheBatchAreSkipped) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects a logits index at or past query_start_loc[num_reqs] (vLLM fails there);
  // the device cannot check without a sync and leaves such an index out of every count, so the
  // total falls short of num_logits_indices (as documented in the header).
  HostTensor qsl = HostTensor::of({0, 4, 10}, i64());
  HostTensor logits = HostTensor::of({3, 10, 9, 250, 4}, i32());
  HostTensor out({3}, i32()), mt({2}, i64());
  Case c{{0, 4, 10}, {3, 10, 9, 250, 4}, 5};
  cattn_common_attn_metadata_t in = input_struct(c, qsl.dl(), logits.dl());
  cattn_common_attn_metadata_t got = CATTN_COMMON_ATTN_METADATA_INIT;
  got.query_start_loc = out.dl();
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in;
  a.out = &got;
  a.decode_max_and_total = mt.dl();
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "past the last request");
  DeviceTensor qsl_d(qsl), logits_d(logits), out_d(out), mt_d(mt);
  in.query_start_loc = qsl_d.dl();
  in.logits_indices_padded = logits_d.dl();
  got.query_start_loc = out_d.dl();
  a.decode_max_and_total = mt_d.dl();
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_d.download();
  mt_d.download();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(mt.values(), (std::vector<int64_t>{2, 3}));
#endif
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata_gpu, HostChecksStillGuardDeviceCalls) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  HostTensor qsl = HostTensor::of({0, 15, 20, 28}, i32());
  HostTensor logits = HostTensor::of({14, 19, 27}, i64());
  HostTensor out({4}, i32()), mt({2}, i32()), mirror({4}, i32());
  const auto out_before = out.bytes(), mt_before = mt.bytes(), mirror_before = mirror.bytes();
  DeviceTensor qsl_d(qsl), logits_d(logits), out_d(out), mt_d(mt);
  Case c{{0, 15, 20, 28}, {14, 19, 27}, 3};
  cattn_common_attn_metadata_t in = input_struct(c, qsl_d.dl(), logits_d.dl());
  cattn_common_attn_metadata_t got = CATTN_COMMON_ATTN_METADATA_INIT;
  got.query_start_loc = out_d.dl();
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in;
  a.out = &got;
  a.passthrough = -7;
  // decode_max_and_total is how a CUDA caller gets the scalars: required.
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "args->decode_max_and_total is NULL");
  a.decode_max_and_total = mt_d.dl();
  // A host mirror would need the device's result on the host.
  got.query_start_loc_cpu = mirror.dl();
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "args->out->query_start_loc_cpu");
  got.query_start_loc_cpu = nullptr;
  // The output doubles as scratch: no overlap with the inputs, on the device either.
  got.query_start_loc = qsl_d.dl();
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "overlaps");
  got.query_start_loc = out_d.dl();
  // A device mix.
  a.decode_max_and_total = mt.dl();
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "different device");
  a.decode_max_and_total = mt_d.dl();
  EXPECT_EQ(a.passthrough, -7);  // never written by a failed call
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_d.download();
  mt_d.download();
  qsl_d.download();
  EXPECT_EQ(out.bytes(), out_before);
  EXPECT_EQ(mt.bytes(), mt_before);
  EXPECT_EQ(mirror.bytes(), mirror_before);
  EXPECT_EQ(qsl.values(), (std::vector<int64_t>{0, 15, 20, 28}));
  // Fixed, the call goes through.
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_d.download();
  mt_d.download();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(mt.values(), (std::vector<int64_t>{1, 3}));
#endif
}
