/* SPDX-License-Identifier: Apache-2.0 */
// Graph-replay test support: device buffers with host twins, and a driver that captures a call
// once into a CUDA graph and replays it step after step with new data written into the same
// buffers before each replay (or runs it plainly each step), checking every step.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace cattn_test {

// A device tensor and its host twin: inputs are written on the host and uploaded, outputs are
// reset to their poison and read back as int64 values.
class Buffer {
 public:
  Buffer(std::vector<int64_t> shape, const TensorLayout& l)
      : host_(std::move(shape), l.t, l.step, l.offset, l.inner_pad), poison_(host_.bytes()),
        dev_(host_) {}
  void write(const std::vector<int64_t>& v) {
    for (int64_t i = 0; i < host_.numel(); ++i) host_.set(i, v[static_cast<size_t>(i)]);
    dev_.upload();
  }
  void reset() {
    host_.raw() = poison_;
    dev_.upload();
  }
  std::vector<int64_t> read() {
    dev_.download();
    return host_.values();
  }
  DLTensor* dl() { return dev_.dl(); }

 private:
  HostTensor host_;
  std::vector<uint8_t> poison_;
  DeviceTensor dev_;
};
using BufferPtr = std::unique_ptr<Buffer>;
inline BufferPtr buffer(std::vector<int64_t> shape, const TensorLayout& l) {
  return std::make_unique<Buffer>(std::move(shape), l);
}

// Runs `steps` steps of `call` on a non-blocking stream: with `graph`, captured once before any
// step's data exists (the graph must hold one node) and replayed; otherwise called each step.
// load(step) writes the step's inputs and poisons the outputs; check(step, where) compares
// them and returns the elements it compared.
inline void run_steps(bool graph, int steps,
                      const std::function<cattn_status_t(cudaStream_t)>& call,
                      const std::function<void(int)>& load,
                      const std::function<int64_t(int, const std::string&)>& check,
                      const std::string& name) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t def = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const cattn_status_t st = call(s);
    ASSERT_EQ(cudaStreamEndCapture(s, &def), cudaSuccess);
    ASSERT_CATTN_OK(st);
    size_t nodes = 0;
    ASSERT_EQ(cudaGraphGetNodes(def, nullptr, &nodes), cudaSuccess);
    EXPECT_EQ(nodes, 1u) << name << ": one kernel launch";
    ASSERT_EQ(cudaGraphInstantiate(&exec, def, 0), cudaSuccess);
  }
  int64_t compared = 0;
  for (int step = 0; step < steps; ++step) {
    load(step);
    if (graph)
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    else
      ASSERT_CATTN_OK(call(s));
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    compared += check(step, name + (graph ? ", replay " : ", run ") + std::to_string(step));
  }
  if (graph) {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(def);
  }
  cudaStreamDestroy(s);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  if (!::testing::Test::HasFailure())
    std::printf("[  replay  ] %s, %s: %d steps, %lld elements compared, 0 mismatches\n",
                name.c_str(), graph ? "graph replays" : "plain runs", steps,
                static_cast<long long>(compared));
}

}  // namespace cattn_test
#endif
