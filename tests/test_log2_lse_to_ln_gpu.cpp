// SPDX-License-Identifier: Apache-2.0
// log2_lse_to_ln on the device: the upstream oracle's vectors for all four dtypes and both half
// roundings, three ways (default stream, non-blocking stream, graph replay), strided and in
// place, each bit for bit as the host gives it (a NaN matching any NaN: payloads are not
// specified); and one captured graph replayed over new values written into the same buffers.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/lse_vectors.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

uint64_t bits_at(HostTensor& h, int64_t i, const DLDataType& t) {
  uint64_t v = 0;
  std::memcpy(&v, h.at(i), static_cast<size_t>(t.bits / 8));
  return v;
}

// Elements of `got` that differ from `want` (NaN matching any NaN).
int64_t mismatches(HostTensor& got, HostTensor& want, const DLDataType& t) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const uint64_t g = bits_at(got, i, t), w = bits_at(want, i, t);
    if (g != w && !(lse_is_nan(g, t) && lse_is_nan(w, t))) ++bad;
  }
  return bad;
}

HostTensor filled(const std::vector<uint64_t>& v, const std::vector<int64_t>& shape, DLDataType t,
                  int64_t step, int64_t offset) {
  HostTensor h(shape, t, step, offset);
  for (int64_t i = 0; i < h.numel(); ++i)
    std::memcpy(h.at(i), &v[static_cast<size_t>(i)], static_cast<size_t>(t.bits / 8));
  return h;
}

cattn_status_t run(const DLTensor* in, DLTensor* out, int64_t rounding, cudaStream_t s) {
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = in;
  a.out = out;
  a.half_rounding = rounding;
  a.stream = reinterpret_cast<cattn_stream_t>(s);
  return cattn_log2_lse_to_ln(&a);
}

}  // namespace
#endif

TEST(log2_lse_to_ln_gpu, OracleVectorsThreeWays) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const auto vec = load_vectors("log2_lse_to_ln");
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const DLDataType t = lse_dtype_named(c["dtype"]);
    const auto shape = ints(c["shape"]);
    const auto in = lse_patterns(c["in"], t.bits);
    for (const int64_t rounding : {CATTN_LSE_ROUNDING_TORCH, CATTN_LSE_ROUNDING_TORCH1_CPU}) {
      const auto want_bits = lse_patterns(c[rounding == CATTN_LSE_ROUNDING_TORCH ? "out_torch" : "out"],
                                      t.bits);
      HostTensor want = filled(want_bits, shape, t, 1, 0);
      for (int64_t step : {1, 2}) {
        HostTensor x = filled(in, shape, t, step, step == 1 ? 0 : 1);
        HostTensor got(shape, t, 3 - step, 0);
        DeviceTensor x_d(x);
        DeviceTensor got_d(got);
        const auto poison = got.bytes();
        run_three_ways(
            [&](cudaStream_t s) { return run(x_d.dl(), got_d.dl(), rounding, s); },
            [&] {
              got.raw() = poison;
              got_d.upload();
            },
            [&](const char* way) {
              got_d.download();
              EXPECT_EQ(mismatches(got, want, t), 0) << way << " rounding " << rounding;
            });
        // In place on the device.
        ASSERT_CATTN_OK(run(x_d.dl(), x_d.dl(), rounding, nullptr));
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        x_d.download();
        EXPECT_EQ(mismatches(x, want, t), 0) << "in place, rounding " << rounding;
      }
    }
  }
#endif
}

TEST(log2_lse_to_ln_gpu, GraphReplaysNewValues) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  for (const DLDataType t : {DLDataType{kDLFloat, 16, 1}, DLDataType{kDLBfloat, 16, 1},
                             DLDataType{kDLFloat, 32, 1}, DLDataType{kDLFloat, 64, 1}}) {
    SCOPED_TRACE("bits " + std::to_string(t.bits) + " code " + std::to_string(t.code));
    const std::vector<int64_t> shape{33, 7, 5};
    HostTensor x(shape, t, 2, 1), got(shape, t), want(shape, t);
    DeviceTensor x_d(x), got_d(got);
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const cattn_status_t st = run(x_d.dl(), got_d.dl(), CATTN_LSE_ROUNDING_TORCH, s);
    ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    ASSERT_CATTN_OK(st);
    size_t nodes = 0;
    ASSERT_EQ(cudaGraphGetNodes(g, nullptr, &nodes), cudaSuccess);
    EXPECT_EQ(nodes, 1u);  // one launch
    ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    std::mt19937_64 rng(5);
    for (int step = 0; step < 4; ++step) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const uint64_t v = rng();
        std::memcpy(x.at(i), &v, static_cast<size_t>(t.bits / 8));
      }
      x_d.upload();
      ASSERT_CATTN_OK(run(x.dl(), want.dl(), CATTN_LSE_ROUNDING_TORCH, nullptr));  // host
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      got_d.download();
      EXPECT_EQ(mismatches(got, want, t), 0) << "step " << step;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
  }
#endif
}

TEST(log2_lse_to_ln_gpu, MixedDevicesRefused) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  HostTensor x({4}, f32()), y({4}, f32());
  DeviceTensor x_d(x);
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = x_d.dl();
  a.out = y.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "device");
  // A device tensor off its element alignment.
  DLTensor odd = *x_d.dl();
  int64_t three = 3;
  odd.shape = &three;
  odd.byte_offset = 2;
  HostTensor z({3}, f32());
  DeviceTensor z_d(z);
  a.lse = &odd;
  a.out = z_d.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_NOT_SUPPORTED, "alignment");
#endif
}
