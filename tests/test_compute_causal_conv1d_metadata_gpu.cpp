// SPDX-License-Identifier: Apache-2.0
// compute_causal_conv1d_metadata with CUDA outputs (planned from the host query_start_loc_cpu),
// bit-exact against the host implementation, three ways (default stream, non-blocking stream,
// graph replay): every subset of outputs, each its own dtype and layout, poisoned and oversized
// (mlist/offsetlist past tot must stay untouched, the launch arrays become PAD), batches large
// enough to take several launches; a graph replaying the plan made at capture; and the host-side
// checks that still guard device calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

constexpr int kOutputs = 5;  // nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr

cattn_causal_conv1d_metadata_args_t make_args(const DLTensor* qsl, int64_t block_m,
                                              const std::array<DLTensor*, kOutputs>& o) {
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = qsl;
  a.block_m = block_m;
  a.nums = o[0];
  a.mlist = o[1];
  a.offsetlist = o[2];
  a.batch_ptr = o[3];
  a.token_chunk_offset_ptr = o[4];
  a.tot = -12345;
  return a;
}

}  // namespace

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

struct OutSpec {
  bool present = false;
  DLDataType t = i32();
  int64_t step = 1;
  int64_t extra = 0;  // elements past tot (ignored for nums, which is exactly [B])
};

struct Case {
  std::vector<int64_t> qsl;
  int64_t block_m = 8;
  DLDataType q_t = i64();
  int64_t q_step = 1;
  std::array<OutSpec, kOutputs> out;
};

void check_case(const Case& c) {
  HostTensor q = HostTensor::of(c.qsl, c.q_t, {}, c.q_step, c.q_step > 1 ? 1 : 0);
  int64_t tot = -1;
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), c.block_m, &tot, nullptr));
  const int64_t batch = std::max<int64_t>(static_cast<int64_t>(c.qsl.size()) - 1, 0);
  std::array<std::unique_ptr<HostTensor>, kOutputs> expect, got;
  std::array<std::unique_ptr<DeviceTensor>, kOutputs> dev;
  std::array<std::vector<uint8_t>, kOutputs> poison;
  std::array<DLTensor*, kOutputs> host_dl{}, dev_dl{};
  for (int i = 0; i < kOutputs; ++i) {
    const OutSpec& s = c.out[i];
    if (!s.present) continue;
    const int64_t n = i == 0 ? batch : tot + s.extra;
    const int64_t off = s.step > 1 ? 1 : 0;
    expect[i] = std::make_unique<HostTensor>(std::vector<int64_t>{n}, s.t, s.step, off);
    got[i] = std::make_unique<HostTensor>(std::vector<int64_t>{n}, s.t, s.step, off);
    poison[i] = got[i]->bytes();
    dev[i] = std::make_unique<DeviceTensor>(*got[i]);
    host_dl[i] = expect[i]->dl();
  }
  auto h = make_args(q.dl(), c.block_m, host_dl);
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&h));
  ASSERT_EQ(h.tot, tot);
  int64_t dev_tot = -1;
  run_three_ways(
      [&](cudaStream_t s) {
        for (int i = 0; i < kOutputs; ++i) dev_dl[i] = dev[i] ? dev[i]->dl() : nullptr;
        auto d = make_args(q.dl(), c.block_m, dev_dl);
        d.stream = reinterpret_cast<cattn_stream_t>(s);
        const cattn_status_t st = cattn_compute_causal_conv1d_metadata(&d);
        dev_tot = d.tot;
        return st;
      },
      // From the pristine poison each time, so every way has to write every element itself.
      [&] {
        dev_tot = -1;
        for (int i = 0; i < kOutputs; ++i)
          if (dev[i]) {
            got[i]->raw() = poison[i];
            dev[i]->upload();
          }
      },
      [&](const char* way) {
        EXPECT_EQ(dev_tot, tot) << way;
        for (int i = 0; i < kOutputs; ++i)
          if (dev[i]) {
            dev[i]->download();
            ASSERT_TRUE(got[i]->bytes() == expect[i]->bytes()) << way << ", output " << i;
          }
      });
}

// Lengths of `batch` requests: zero-length ones, ones shorter than a block, exact multiples of
// block_m and long ones.
std::vector<int64_t> random_qsl(std::mt19937_64& g, int64_t batch, int64_t block_m,
                                int64_t max_len) {
  std::vector<int64_t> q{static_cast<int64_t>(g() % 3) * 7};
  for (int64_t i = 0; i < batch; ++i) {
    int64_t len;
    switch (g() % 5) {
      case 0: len = 0; break;
      case 1: len = 1 + static_cast<int64_t>(g() % block_m); break;
      case 2: len = block_m * static_cast<int64_t>(1 + g() % 4); break;
      default: len = static_cast<int64_t>(g() % (max_len + 1)); break;
    }
    q.push_back(q.back() + len);
  }
  return q;
}

OutSpec random_out(std::mt19937_64& g, bool present) {
  OutSpec s;
  s.present = present;
  s.t = g() % 2 ? i32() : i64();
  s.step = 1 + static_cast<int64_t>(g() % 3);
  s.extra = g() % 3 == 0 ? 0 : static_cast<int64_t>(g() % 40);
  return s;
}

Case all_outputs(std::vector<int64_t> qsl, int64_t block_m, DLDataType t, int64_t extra) {
  Case c;
  c.qsl = std::move(qsl);
  c.block_m = block_m;
  for (auto& o : c.out) o = {true, t, 1, extra};
  return c;
}

}  // namespace
#endif

TEST(compute_causal_conv1d_metadata_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  {
    SCOPED_TRACE("small batch, vLLM's block_m");
    check_case(all_outputs({0, 10, 16, 17}, 8, i32(), 5));
    check_case(all_outputs({0, 10, 16, 17}, 8, i64(), 0));
  }
  {
    SCOPED_TRACE("empty batch");
    check_case(all_outputs({}, 8, i32(), 6));
    check_case(all_outputs({4}, 8, i64(), 3));
  }
  {
    SCOPED_TRACE("one request");
    check_case(all_outputs({3, 3 + 65}, 8, i32(), 2));
    check_case(all_outputs({0, 1}, 1, i64(), 0));
  }
  {
    SCOPED_TRACE("zero-length requests only");
    check_case(all_outputs({5, 5, 5, 5}, 8, i32(), 4));
  }
  {
    SCOPED_TRACE("vLLM's capacity");
    Case c = all_outputs({0, 100, 100, 357, 1000}, 8, i64(), 0);
    int64_t tot = 0, cap = 0;
    HostTensor q = HostTensor::of(c.qsl, i64());
    ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), 8, &tot, &cap));
    c.out[3].extra = c.out[4].extra = cap - tot;
    check_case(c);
  }
  std::mt19937_64 g(29);
  for (int iter = 0; iter < 60; ++iter) {
    Case c;
    const int64_t batch = static_cast<int64_t>(g() % (iter < 40 ? 60 : 5001));
    const int64_t bms[] = {1, 2, 3, 8, 8, 16, 64};
    c.block_m = bms[g() % 7];
    c.qsl = random_qsl(g, batch, c.block_m, batch > 1000 ? 200 : 3000);
    c.q_t = g() % 2 ? i32() : i64();
    c.q_step = 1 + static_cast<int64_t>(g() % 2);
    bool any = false;
    for (auto& o : c.out) {
      o = random_out(g, g() % 3 != 0);
      any = any || o.present;
    }
    if (!any) c.out[3].present = true;  // with no output the call never reaches the device
    SCOPED_TRACE("iter " + std::to_string(iter) + ", B " + std::to_string(batch));
    check_case(c);
  }
#endif
}

TEST(compute_causal_conv1d_metadata_gpu, SeveralLaunches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // One launch carries 3839 requests: batches on both sides of one and two launches, runs of
  // zero-length requests across a boundary (a launch with nothing but nums to write), and each
  // output alone.
  std::mt19937_64 g(31);
  for (int64_t batch : {3838, 3839, 3840, 5000, 7678, 7679, 7680}) {
    SCOPED_TRACE("B " + std::to_string(batch));
    check_case(all_outputs(random_qsl(g, batch, 8, 100), 8, i32(), 17));
    for (int only = 0; only < kOutputs; ++only) {
      Case c;
      c.qsl = random_qsl(g, batch, 4, 50);
      c.block_m = 4;
      c.out[only] = random_out(g, true);
      SCOPED_TRACE("only output " + std::to_string(only));
      check_case(c);
    }
  }
  {
    SCOPED_TRACE("second launch all zero-length");
    std::vector<int64_t> q{0};
    for (int64_t i = 0; i < 5000; ++i) q.push_back(q.back() + (i < 3839 ? 1 + i % 20 : 0));
    check_case(all_outputs(q, 8, i64(), 9));
    Case c = all_outputs(q, 8, i32(), 9);
    c.out[0].present = false;  // launch-array outputs only: the empty launch is skipped
    check_case(c);
  }
  {
    SCOPED_TRACE("first launch all zero-length");
    std::vector<int64_t> q{0};
    for (int64_t i = 0; i < 4000; ++i) q.push_back(q.back() + (i < 3839 ? 0 : 9));
    check_case(all_outputs(q, 8, i32(), 3));
  }
#endif
}

TEST(compute_causal_conv1d_metadata_gpu, GraphReplaysCapturedPlan) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The plan travels in kernel parameters, so a captured graph rewrites the values planned at
  // capture even after the host mirror has changed (and needs it no longer).
  HostTensor q = HostTensor::of({0, 10, 16, 17, 40}, i64());
  HostTensor want_m({12}, i32()), want_bp({12}, i64());
  std::array<DLTensor*, kOutputs> host_dl{nullptr, want_m.dl(), nullptr, want_bp.dl(), nullptr};
  auto h = make_args(q.dl(), 8, host_dl);
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&h));
  HostTensor m({12}, i32()), bp({12}, i64());
  const auto m_poison = m.bytes(), bp_poison = bp.bytes();
  DeviceTensor m_d(m), bp_d(bp);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  auto d = make_args(q.dl(), 8, {nullptr, m_d.dl(), nullptr, bp_d.dl(), nullptr});
  d.stream = reinterpret_cast<cattn_stream_t>(s);
  const cattn_status_t st = cattn_compute_causal_conv1d_metadata(&d);
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  ASSERT_CATTN_OK(st);
  EXPECT_EQ(d.tot, h.tot);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  q = HostTensor::of({0, 1, 2, 3, 4}, i64());  // a different batch; the graph must not see it
  for (int replay = 0; replay < 2; ++replay) {
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    m_d.download();
    bp_d.download();
    EXPECT_TRUE(m.bytes() == want_m.bytes()) << "replay " << replay;
    EXPECT_TRUE(bp.bytes() == want_bp.bytes()) << "replay " << replay;
    m.raw() = m_poison;
    bp.raw() = bp_poison;
    m_d.upload();
    bp_d.upload();
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
#endif
}

TEST(compute_causal_conv1d_metadata_gpu, DeviceCallsCheckedOnHost) {
  // Every check happens on the host before anything is launched: these calls fail before
  // touching the (fake) device memory, so this test runs without a GPU, and in CPU-only builds.
  HostTensor q = HostTensor::of({0, 10, 16, 17}, i32());  // tot 4 at block_m 8
  HostTensor nums({3}, i32()), mlist({4}, i32()), bp({8}, i64());
  const auto nums_before = nums.bytes(), mlist_before = mlist.bytes(), bp_before = bp.bytes();
  DLTensor nums_d = fake_cuda(nums), mlist_d = fake_cuda(mlist), bp_d = fake_cuda(bp);
  const std::array<DLTensor*, kOutputs> outs{&nums_d, &mlist_d, nullptr, &bp_d, nullptr};
  auto expect_error = [&](cattn_causal_conv1d_metadata_args_t a, cattn_status_t code,
                          const char* needle) {
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&a), code, needle);
    EXPECT_EQ(a.tot, -12345);
    EXPECT_EQ(nums.bytes(), nums_before);
    EXPECT_EQ(mlist.bytes(), mlist_before);
    EXPECT_EQ(bp.bytes(), bp_before);
  };
  expect_error(make_args(q.dl(), 0, outs), CATTN_INVALID_ARGUMENT, "block_m");
  HostTensor dec = HostTensor::of({0, 10, 9, 17}, i64());
  expect_error(make_args(dec.dl(), 8, outs), CATTN_INVALID_ARGUMENT, "decreases");
  // query_start_loc_cpu is a host mirror on every path.
  DLTensor q_d = fake_cuda(q);
  expect_error(make_args(&q_d, 8, outs), CATTN_INVALID_ARGUMENT, "args->query_start_loc_cpu");
  // Outputs on different devices: host and CUDA, and two GPUs.
  HostTensor host_off({4}, i32());
  expect_error(make_args(q.dl(), 8, {&nums_d, &mlist_d, host_off.dl(), &bp_d, nullptr}),
               CATTN_INVALID_ARGUMENT, "different device");
  DLTensor bp_d1 = bp_d;
  bp_d1.device.device_id = 1;
  expect_error(make_args(q.dl(), 8, {&nums_d, &mlist_d, nullptr, &bp_d1, nullptr}),
               CATTN_INVALID_ARGUMENT, "different device");
  // Sizes and value ranges, all known from the host mirror.
  HostTensor short_nums({2}, i32()), short_m({3}, i64()), long_nums({4}, i32());
  DLTensor short_nums_d = fake_cuda(short_nums), short_m_d = fake_cuda(short_m),
           long_nums_d = fake_cuda(long_nums);
  expect_error(make_args(q.dl(), 8, {&short_nums_d, &mlist_d, nullptr, &bp_d, nullptr}),
               CATTN_INSUFFICIENT_SIZE, "args->nums");
  expect_error(make_args(q.dl(), 8, {&long_nums_d, &mlist_d, nullptr, &bp_d, nullptr}),
               CATTN_INVALID_ARGUMENT, "args->nums");
  expect_error(make_args(q.dl(), 8, {&nums_d, &short_m_d, nullptr, &bp_d, nullptr}),
               CATTN_INSUFFICIENT_SIZE, "args->mlist");
  HostTensor big_q = HostTensor::of({0, int64_t{1} << 40}, i64());
  HostTensor one({1}, i32());
  DLTensor one_d = fake_cuda(one);
  expect_error(make_args(big_q.dl(), 1, {&one_d, nullptr, nullptr, nullptr, nullptr}),
               CATTN_INVALID_ARGUMENT, "args->nums");
  // A zero stride would make two programs share an element.
  int64_t zero_stride = 0;
  DLTensor bp_zero = bp_d;
  bp_zero.strides = &zero_stride;
  expect_error(make_args(q.dl(), 8, {&nums_d, &mlist_d, nullptr, &bp_zero, nullptr}),
               CATTN_INVALID_ARGUMENT, "args->batch_ptr");
}
