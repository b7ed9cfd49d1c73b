// SPDX-License-Identifier: Apache-2.0
// get_dcp_local_seq_lens on the device, bit-exact against the host implementation, three ways
// (default stream, non-blocking stream, graph replay), with poisoned outputs whose padding must
// stay untouched; the in-place [B] form; vLLM's int32 wrap of device lengths the host rejects;
// and the host-side checks that still guard device calls.
#include <gtest/gtest.h>

#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

cattn_dcp_local_seq_lens_args_t make_args(DLTensor* seq, DLTensor* out, int64_t size,
                                          int64_t rank, int64_t interleave) {
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq;
  a.out = out;
  a.dcp_size = size;
  a.dcp_rank = rank;
  a.dcp_kv_cache_interleave_size = interleave;
  return a;
}

}  // namespace

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

struct Case {
  std::vector<int64_t> seq;
  int64_t size = 1, rank = CATTN_DCP_ALL_RANKS, interleave = 1;
  bool two_d = false;  // [B, size] (or [B, 1] when size == 1 and all ranks are asked for)
  DLDataType in_t = i32(), out_t = i32();
  int64_t step = 1;
};

void check_case(const Case& c) {
  const int64_t batch = static_cast<int64_t>(c.seq.size());
  const int64_t off = c.step > 1 ? 1 : 0;
  HostTensor seq = HostTensor::of(c.seq, c.in_t, {}, c.step, off);
  std::vector<int64_t> shape{batch};
  if (c.two_d) shape.push_back(c.rank == CATTN_DCP_ALL_RANKS ? c.size : 1);
  HostTensor expect(shape, c.out_t, c.step, 2 * off), got(shape, c.out_t, c.step, 2 * off);
  auto a = make_args(seq.dl(), expect.dl(), c.size, c.rank, c.interleave);
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  DeviceTensor seq_d(seq);
  PoisonedOutput out_d(got);
  run_three_ways(
      [&](cudaStream_t s) {
        auto d = make_args(seq_d.dl(), out_d.dl(), c.size, c.rank, c.interleave);
        d.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_get_dcp_local_seq_lens(&d);
      },
      {{&out_d, &expect}});
}

}  // namespace
#endif

TEST(get_dcp_local_seq_lens_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const std::vector<int64_t> spec{1, 2, 128, 129, 256, 257};
  {
    SCOPED_TRACE("spec, all ranks");
    check_case({spec, 2, CATTN_DCP_ALL_RANKS, 1, true, i32(), i32(), 1});
  }
  {
    SCOPED_TRACE("spec, interleave 128");
    check_case({spec, 4, CATTN_DCP_ALL_RANKS, 128, true, i32(), i64(), 1});
  }
  {
    SCOPED_TRACE("one rank");
    check_case({spec, 4, 3, 128, false, i64(), i32(), 2});
  }
  {
    SCOPED_TRACE("size 1, [B]");
    check_case({spec, 1, CATTN_DCP_ALL_RANKS, 7, false, i64(), i64(), 1});
  }
  {
    SCOPED_TRACE("size 1, [B, 1]");
    check_case({spec, 1, CATTN_DCP_ALL_RANKS, 7, true, i32(), i64(), 3});
  }
  {
    SCOPED_TRACE("empty batch");
    check_case({{}, 4, CATTN_DCP_ALL_RANKS, 2, true, i32(), i32(), 1});
    check_case({{}, 4, 1, 2, false, i64(), i32(), 2});
  }
  {
    SCOPED_TRACE("one request");
    check_case({{37}, 8, CATTN_DCP_ALL_RANKS, 4, true, i64(), i64(), 1});
  }
  {
    SCOPED_TRACE("zero lengths and INT32_MAX");
    check_case({{0, 0, 2147483647, 0, 1}, 3, CATTN_DCP_ALL_RANKS, 5, true, i64(), i32(), 2});
    check_case({{0, 2147483647}, 65536, 65535, 32767, false, i64(), i64(), 1});
  }
  std::mt19937_64 g(21);
  for (int iter = 0; iter < 60; ++iter) {
    Case c;
    const int64_t b = static_cast<int64_t>(g() % (iter < 40 ? 60 : 5000));
    c.size = 1 + static_cast<int64_t>(g() % 9);
    c.interleave = 1 + static_cast<int64_t>(g() % (iter % 2 ? 5 : 300));
    for (int64_t i = 0; i < b; ++i) {
      const int kind = static_cast<int>(g() % 5);
      c.seq.push_back(kind == 0 ? 0 : kind == 1 ? static_cast<int64_t>(g() % 4)
                                                : static_cast<int64_t>(g() % 100000));
    }
    c.rank = g() % 3 == 0 ? static_cast<int64_t>(g() % c.size) : CATTN_DCP_ALL_RANKS;
    c.two_d = c.rank == CATTN_DCP_ALL_RANKS && (c.size > 1 || g() % 2 == 0);
    c.in_t = g() % 2 ? i32() : i64();
    c.out_t = g() % 2 ? i32() : i64();
    c.step = 1 + static_cast<int64_t>(g() % 3);
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c);
  }
#endif
}

TEST(get_dcp_local_seq_lens_gpu, TransposedOutput) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // A column-major [B, W] view (rank-major storage): the kernel writes through both strides.
  HostTensor seq = HostTensor::of({0, 5, 17, 64, 65}, i64());
  int64_t shape[2] = {5, 4}, strides[2] = {1, 5};
  HostTensor expect({4, 5}, i32()), got({4, 5}, i32());
  DLTensor host_out = *expect.dl();
  host_out.shape = shape;
  host_out.strides = strides;
  auto a = make_args(seq.dl(), &host_out, 4, CATTN_DCP_ALL_RANKS, 4);
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  const auto poison = got.bytes();
  DeviceTensor seq_d(seq), out_d(got);
  run_three_ways(
      [&](cudaStream_t s) {
        DLTensor dev_out = *out_d.dl();
        dev_out.shape = shape;
        dev_out.strides = strides;
        auto d = make_args(seq_d.dl(), &dev_out, 4, CATTN_DCP_ALL_RANKS, 4);
        d.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_get_dcp_local_seq_lens(&d);
      },
      [&] {
        got.raw() = poison;
        out_d.upload();
      },
      [&](const char* way) {
        out_d.download();
        ASSERT_TRUE(got.bytes() == expect.bytes()) << way;
      });
#endif
}

TEST(get_dcp_local_seq_lens_gpu, InPlaceSingleRank) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The very view of seq_lens as a [B] out: each length is read before it is overwritten.
  for (DLDataType t : {i32(), i64()}) {
    std::vector<int64_t> lens;
    for (int64_t i = 0; i < 3000; ++i) lens.push_back((i * 7919) % 1000);
    HostTensor expect = HostTensor::of(lens, t, {}, 2, 1);
    auto a = make_args(expect.dl(), expect.dl(), 4, 1, 16);
    ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
    HostTensor got = HostTensor::of(lens, t, {}, 2, 1);
    const auto input = got.bytes();
    DeviceTensor d(got);
    run_three_ways(
        [&](cudaStream_t s) {
          auto da = make_args(d.dl(), d.dl(), 4, 1, 16);
          da.stream = reinterpret_cast<cattn_stream_t>(s);
          return cattn_get_dcp_local_seq_lens(&da);
        },
        [&] {
          got.raw() = input;
          d.upload();
        },
        [&](const char* way) {
          d.download();
          ASSERT_TRUE(got.bytes() == expect.bytes()) << way;
        });
  }
#endif
}

TEST(get_dcp_local_seq_lens_gpu, OutOfRangeLengthsWrapAsVllmOnDevice) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects lengths outside [0, INT32_MAX]; the device cannot check without a sync and
  // computes what vLLM does after seq_lens.to(torch.int32). Oracle numbers:
  // get_dcp_local_seq_lens(s, 3, None, 2), get_dcp_local_seq_lens(s, 3, 1, 2) and
  // get_dcp_local_seq_lens(s, 1, None, 5) for s below (int64).
  const std::vector<int64_t> s{(int64_t{1} << 32) + 5, -3, -(int64_t{1} << 31), int64_t{1} << 31,
                               (int64_t{1} << 33) - 1, -7, 1000};
  const std::vector<int64_t> all3{2,          2,          1,          0,          -1, -2,
                                  -715827882, -715827882, -715827884, -715827882, -715827882,
                                  -715827884, 0,          0,          -1,         -2, -2,
                                  -3,         334,        334,        332};
  const std::vector<int64_t> rank1{2, -1, -715827882, -715827882, 0, -2, 334};
  const std::vector<int64_t> size1{5, -3, -2147483648, -2147483648, -1, -7, 1000};
  struct Want {
    int64_t size, rank, interleave;
    bool two_d;
    const std::vector<int64_t>* values;
  };
  for (const Want& w : {Want{3, CATTN_DCP_ALL_RANKS, 2, true, &all3}, Want{3, 1, 2, false, &rank1},
                        Want{1, CATTN_DCP_ALL_RANKS, 5, false, &size1}})
    for (DLDataType out_t : {i32(), i64()}) {
      SCOPED_TRACE("size " + std::to_string(w.size) + " rank " + std::to_string(w.rank) +
                   " out bits " + std::to_string(out_t.bits));
      HostTensor seq = HostTensor::of(s, i64());
      std::vector<int64_t> shape{7};
      if (w.two_d) shape.push_back(w.size);
      HostTensor host_out(shape, out_t);
      const auto untouched = host_out.bytes();
      auto h = make_args(seq.dl(), host_out.dl(), w.size, w.rank, w.interleave);
      EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&h), CATTN_INVALID_ARGUMENT,
                         "args->seq_lens");
      EXPECT_EQ(host_out.bytes(), untouched);

      HostTensor out(shape, out_t);
      DeviceTensor seq_d(seq), out_d(out);
      auto d = make_args(seq_d.dl(), out_d.dl(), w.size, w.rank, w.interleave);
      ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&d));
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      out_d.download();
      EXPECT_EQ(out.values(), *w.values);
    }
#endif
}

TEST(get_dcp_local_seq_lens_gpu, DeviceCallsCheckedOnHost) {
  // Every check that needs no device data happens before anything is launched, for CUDA tensors
  // as for host ones; these calls fail before touching the (fake) device memory, so this test
  // runs without a GPU, and in CPU-only builds too.
  HostTensor seq = HostTensor::of({3, 9, 4}, i32());
  HostTensor out({3, 2}, i32());
  const auto before = out.bytes();
  DLTensor seq_d = fake_cuda(seq), out_d = fake_cuda(out);
  auto a = make_args(&seq_d, &out_d, 2, CATTN_DCP_ALL_RANKS, 1);
  a.dcp_size = 0;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->dcp_size");
  a.dcp_size = 2;
  a.dcp_kv_cache_interleave_size = int64_t{1} << 30;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "INT32_MAX");
  a.dcp_kv_cache_interleave_size = 1;
  a.dcp_rank = 2;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->dcp_rank");
  a.dcp_rank = CATTN_DCP_ALL_RANKS;
  HostTensor small({2, 2}, i32());
  DLTensor small_d = fake_cuda(small);
  a.out = &small_d;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INSUFFICIENT_SIZE, "args->out");
  a.out = &out_d;
  // Mixed devices: host lengths, device out, and device 1 against device 0.
  a.seq_lens = seq.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "different device");
  DLTensor seq_d1 = seq_d;
  seq_d1.device.device_id = 1;
  a.seq_lens = &seq_d1;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "different device");
  // An overlapping device out that is not the very view of seq_lens.
  HostTensor shared = HostTensor::of({1, 2, 3, 4, 5, 6, 7, 8}, i32());
  DLTensor lens = fake_cuda(shared), over = fake_cuda(shared);
  int64_t lens_shape = 3, over_shape[2] = {3, 2};
  lens.shape = &lens_shape;
  over.ndim = 2;
  over.shape = over_shape;
  a.seq_lens = &lens;
  a.out = &over;
  const auto shared_before = shared.bytes();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "overlaps");
  EXPECT_EQ(shared.bytes(), shared_before);
  EXPECT_EQ(out.bytes(), before);
}
