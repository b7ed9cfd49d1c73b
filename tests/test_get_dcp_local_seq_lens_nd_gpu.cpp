// SPDX-License-Identifier: Apache-2.0
// get_dcp_local_seq_lens with CATTN_DCP_SHAPE_PRESERVE on the device: the upstream oracle's N-D
// vectors in int32/int64 and strided layouts, three ways (default stream, non-blocking stream,
// graph replay) against the host run with poisoned outputs; a stride-0 input; in place; and
// one captured graph replayed over new lengths written into the same buffers.
#include <gtest/gtest.h>

#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/dcp_nd.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

TEST(get_dcp_local_seq_lens_nd_gpu, OracleVectorsThreeWays) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const auto vec = load_vectors("get_dcp_local_seq_lens_nd");
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto seq = ints(c["seq_lens"]);
    const auto seq_shape = ints(c["seq_shape"]);
    const auto out_shape = ints(c["shape"]);
    const int64_t size = c["dcp_size"], rank = c["dcp_rank"], interleave = c["interleave"];
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 2}) {
          HostTensor s = laid_out(seq, seq_shape, {in_t, step, step - 1, 0});
          HostTensor expect(out_shape, out_t, step, 2 * (step - 1));
          HostTensor got(out_shape, out_t, step, 2 * (step - 1));
          ASSERT_CATTN_OK(run_dcp_nd(s.dl(), expect.dl(), size, rank, interleave));
          EXPECT_EQ(expect.values(), ints(c["out"]));
          DeviceTensor s_d(s);
          PoisonedOutput out_d(got);
          run_three_ways(
              [&](cudaStream_t st) {
                return run_dcp_nd(s_d.dl(), out_d.dl(), size, rank, interleave, st);
              },
              {{&out_d, &expect}});
        }
  }
#endif
}

TEST(get_dcp_local_seq_lens_nd_gpu, StrideZeroAndInPlace) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  HostTensor row = HostTensor::of({0, 5, 17, 64, 1000}, i64());
  DeviceTensor row_d(row);
  DLTensor seq = *row_d.dl();
  int64_t shape[2] = {3, 5}, strides[2] = {0, 1};
  seq.ndim = 2;
  seq.shape = shape;
  seq.strides = strides;
  DLTensor seq_h = *row.dl();
  seq_h.ndim = 2;
  seq_h.shape = shape;
  seq_h.strides = strides;
  HostTensor expect({3, 5, 4}, i32()), got({3, 5, 4}, i32());
  ASSERT_CATTN_OK(run_dcp_nd(&seq_h, expect.dl(), 4, CATTN_DCP_ALL_RANKS, 8));
  PoisonedOutput out_d(got);
  run_three_ways(
      [&](cudaStream_t st) { return run_dcp_nd(&seq, out_d.dl(), 4, CATTN_DCP_ALL_RANKS, 8, st); },
      {{&out_d, &expect}});
  // In place, one rank, a 2-D strided view.
  HostTensor lens = HostTensor::of({1, 2, 128, 129, 256, 257}, i32(), {2, 3}, 2, 1);
  DeviceTensor lens_d(lens);
  ASSERT_CATTN_OK(run_dcp_nd(lens_d.dl(), lens_d.dl(), 4, 1, 128));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  lens_d.download();
  EXPECT_EQ(lens.values(), (std::vector<int64_t>{0, 0, 0, 1, 128, 128}));
#endif
}

TEST(get_dcp_local_seq_lens_nd_gpu, GraphReplaysNewLengths) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const std::vector<int64_t> shape{6, 5, 3};
  HostTensor seq(shape, i64(), 2, 1), got({6, 5, 3, 4}, i32()), want({6, 5, 3, 4}, i32());
  DeviceTensor seq_d(seq), got_d(got);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const cattn_status_t st = run_dcp_nd(seq_d.dl(), got_d.dl(), 4, CATTN_DCP_ALL_RANKS, 16, s);
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  ASSERT_CATTN_OK(st);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(g, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 1u);
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  std::mt19937_64 rng(8);
  for (int step = 0; step < 4; ++step) {
    for (int64_t i = 0; i < seq.numel(); ++i) seq.set(i, static_cast<int64_t>(rng() % 100000));
    seq_d.upload();
    ASSERT_CATTN_OK(run_dcp_nd(seq.dl(), want.dl(), 4, CATTN_DCP_ALL_RANKS, 16));
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    got_d.download();
    EXPECT_EQ(got.values(), want.values()) << "step " << step;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
#endif
}
