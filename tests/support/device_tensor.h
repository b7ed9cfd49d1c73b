/* SPDX-License-Identifier: Apache-2.0 */
// GPU test support: a device copy of a HostTensor's whole storage (padding included, so poison
// outside the view travels too), and the skip for machines without a GPU.
#pragma once

#include <gtest/gtest.h>

#include "cattn.h"
#include "support/host_tensor.h"

namespace cattn_test {

// A CUDA-labelled view of host memory, for calls that must fail on the host before the device
// is touched (so these checks run on machines without a GPU too).
inline DLTensor fake_cuda(HostTensor& t) {
  DLTensor d = *t.dl();
  d.device = {kDLCUDA, 0};
  return d;
}

}  // namespace cattn_test

#if defined(CATTN_TEST_WITH_CUDA)
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

namespace cattn_test {

inline int gpu_count() {
  int32_t n = 0;
  return cattn_cuda_device_count(&n) == CATTN_OK ? n : 0;
}

#define CATTN_CUDA_OK(expr)                                                     \
  do {                                                                          \
    const cudaError_t e_ = (expr);                                              \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_);      \
  } while (0)

class DeviceTensor {
 public:
  explicit DeviceTensor(HostTensor& host) : host_(&host) {
    bytes_ = host.bytes().size();
    if (cudaMalloc(&ptr_, bytes_) != cudaSuccess) throw std::bad_alloc();
    upload();
  }
  ~DeviceTensor() { cudaFree(ptr_); }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  // Waits for the whole copy: a pageable-memory cudaMemcpy may return before its DMA lands, and
  // a kernel on a non-blocking stream would then race with it.
  void upload() {
    cudaMemcpy(ptr_, host_->bytes().data(), bytes_, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  // Copies the device storage back over the host tensor's storage.
  void download() { cudaMemcpy(host_->raw().data(), ptr_, bytes_, cudaMemcpyDeviceToHost); }
  DLTensor* dl() {
    dl_ = *host_->dl();
    dl_.data = ptr_;
    dl_.device = {kDLCUDA, 0};
    return &dl_;
  }
  void* ptr() { return ptr_; }

 private:
  HostTensor* host_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  DLTensor dl_{};
};

// A tensor the device and the host calls each get a copy of: set() writes the host copy,
// upload() sends it to the device copy (whose storage, poison included, mirrors it).
struct Twin {
  HostTensor host, stage;
  std::unique_ptr<DeviceTensor> dev;
  Twin(std::vector<int64_t> shape, DLDataType dt) : host(shape, dt), stage(shape, dt) {
    dev = std::make_unique<DeviceTensor>(stage);
  }
  void fill(const std::vector<int64_t>& v) {
    for (int64_t i = 0; i < host.numel(); ++i) host.set(i, v[static_cast<size_t>(i)]);
  }
  void upload() {
    stage.raw() = host.raw();
    dev->upload();
  }
  std::vector<int64_t> device_values() {
    dev->download();
    return stage.values();
  }
  DLTensor* d() { return dev->dl(); }
  DLTensor* h() { return host.dl(); }
};

}  // namespace cattn_test

#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    if (cattn_test::gpu_count() == 0) GTEST_SKIP() << "no CUDA device on this machine"; \
  } while (0)

#else
#define SKIP_WITHOUT_GPU() GTEST_SKIP() << "built without CUDA (CATTN_WITH_CUDA=OFF)"
#endif
