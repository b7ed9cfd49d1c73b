// SPDX-License-Identifier: Apache-2.0
// get_pcp_query_restore_idx on the device (from the device cu_num_tokens), bit-exact against the
// host implementation, three ways (default stream, non-blocking stream, graph replay), with
// poisoned outputs larger than needed (the tail must become -1, the padding stay untouched).
#include <gtest/gtest.h>

#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

void check_restore(const std::vector<int64_t>& cu, DLDataType in_t, DLDataType out_t, int64_t step,
                   int64_t extra) {
  HostTensor cu_h = HostTensor::of(cu, in_t, {}, step, step > 1 ? 1 : 0);
  int64_t size = 0;
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(cu_h.dl(), &size));
  HostTensor expect({size + extra}, out_t, step), got({size + extra}, out_t, step);
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu_h.dl();
  a.restore_idx = expect.dl();
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx(&a));
  DeviceTensor cu_d(cu_h);
  PoisonedOutput out_d(got);
  run_three_ways(
      [&](cudaStream_t s) {
        a.cu_num_tokens = cu_d.dl();
        a.restore_idx = out_d.dl();
        a.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_get_pcp_query_restore_idx(&a);
      },
      {{&out_d, &expect}});
}

}  // namespace
#endif

TEST(get_pcp_query_restore_idx_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  check_restore({0, 8}, i32(), i32(), 1, 0);
  check_restore({0, 8, 20}, i64(), i32(), 1, 5);
  check_restore({0, 1, 2}, i32(), i64(), 1, 3);  // decode-only: all -1
  check_restore({0}, i32(), i32(), 1, 2);        // empty batch
  check_restore({0, 0, 4, 4, 10, 10}, i64(), i64(), 2, 1);
  std::mt19937_64 g(3);
  for (int iter = 0; iter < 30; ++iter) {
    const int b = static_cast<int>(g() % (iter < 20 ? 50 : 3000));
    std::vector<int64_t> cu{2 * static_cast<int64_t>(g() % 3)};
    for (int i = 0; i < b; ++i) {
      const int kind = static_cast<int>(g() % 4);
      cu.push_back(cu.back() + (kind == 0 ? 1 : kind == 1 ? 0 : 2 * static_cast<int64_t>(g() % 300)));
    }
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_restore(cu, g() % 2 ? i32() : i64(), g() % 2 ? i32() : i64(), 1 + g() % 2, g() % 7);
  }
#endif
}

TEST(get_pcp_query_restore_idx_gpu, OddLengthsFollowVllmOnDevice) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects odd lengths; the device cannot without a sync and gives vLLM's argsort
  // answer instead (the middle token of an odd request is dropped). Oracle numbers:
  // get_pcp_query_restore_idx([0, 5, 8]) == [0, 1, 3, 4, 2, 5].
  HostTensor cu = HostTensor::of({0, 5, 8}, i32());
  HostTensor out({8}, i64());
  DeviceTensor cu_d(cu), out_d(out);
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu_d.dl();
  a.restore_idx = out_d.dl();
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_d.download();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 3, 4, 2, 5, -1, -1}));
#endif
}
