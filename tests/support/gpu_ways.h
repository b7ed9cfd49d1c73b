// Runs one device call three ways - on the legacy default stream, on a non-blocking stream, and
// captured into a CUDA graph that is replayed - resetting the (poisoned) outputs before each and
// checking them after each. A call that synchronised the host or allocated would fail capture.
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "support/device_tensor.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace cattn_test {

inline void run_three_ways(const std::function<cattn_status_t(cudaStream_t)>& call,
                           const std::function<void()>& reset,
                           const std::function<void(const char*)>& check) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  reset();
  ASSERT_CATTN_OK(call(nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  check("default stream");
  reset();
  ASSERT_CATTN_OK(call(s));
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  check("non-blocking stream");
  reset();
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const cattn_status_t st = call(s);
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  ASSERT_CATTN_OK(st);
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  check("graph replay");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace cattn_test
#endif
