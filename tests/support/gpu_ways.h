/* SPDX-License-Identifier: Apache-2.0 */
// Runs one device call three ways - on the legacy default stream, on a non-blocking stream, and
// captured into a CUDA graph that is replayed - resetting the (poisoned) outputs before each and
// checking them after each. A call that synchronised the host or allocated would fail capture.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

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

// A device output whose storage is set back to the host tensor's bytes at construction (its
// poison) before every way, and compared byte for byte, padding included, after each: every way
// has to write every element itself.
class PoisonedOutput {
 public:
  explicit PoisonedOutput(HostTensor& got) : got_(&got), poison_(got.bytes()), dev_(got) {}
  DLTensor* dl() { return dev_.dl(); }
  void reset() {
    got_->raw() = poison_;
    dev_.upload();
  }
  bool equals(const HostTensor& want) {
    dev_.download();
    return got_->bytes() == want.bytes();
  }

 private:
  HostTensor* got_;
  std::vector<uint8_t> poison_;
  DeviceTensor dev_;
};

// run_three_ways for calls whose only outputs are device tensors: each output is reset to its
// poison before every way and must equal its host run's tensor after each.
inline void run_three_ways(const std::function<cattn_status_t(cudaStream_t)>& call,
                           std::initializer_list<std::pair<PoisonedOutput*, const HostTensor*>> outs) {
  run_three_ways(
      call, [&] { for (const auto& o : outs) o.first->reset(); },
      [&](const char* way) {
        for (const auto& o : outs) EXPECT_TRUE(o.first->equals(*o.second)) << way;
      });
}

}  // namespace cattn_test
#endif
