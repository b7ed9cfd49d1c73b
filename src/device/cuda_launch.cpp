// SPDX-License-Identifier: Apache-2.0
#include "device/cuda_launch.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "common/cuda_runtime.h"
#include "common/strided.h"

namespace cattn {
namespace {

constexpr int kMaxDevices = 64;
// Packed (sm_count << 40 | compute capability major << 32 | max_threads) per device, 0 = not
// read yet. Attribute reads are cheap but not free; the values never change for a device.
std::atomic<uint64_t> g_shape_cache[kMaxDevices];

kernels::DeviceShape read_shape(const char* fn, int device) {
  if (device < kMaxDevices) {
    const uint64_t packed = g_shape_cache[device].load(std::memory_order_relaxed);
    if (packed != 0)
      return {static_cast<int>(packed >> 40), static_cast<int>(packed & 0xffffffffu),
              static_cast<int>((packed >> 32) & 0xffu)};
  }
  int sms = 0, threads = 0, major = 0;
  check_cuda(fn, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  check_cuda(fn, cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  check_cuda(fn, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (device < kMaxDevices)
    g_shape_cache[device].store((static_cast<uint64_t>(sms) << 40) |
                                    (static_cast<uint64_t>(major & 0xff) << 32) |
                                    static_cast<uint32_t>(threads),
                                std::memory_order_relaxed);
  return {sms, threads, major};
}

// Kernels load index elements with typed (naturally aligned) accesses; DLPack allows any
// byte_offset, so a device index tensor off its natural alignment is refused rather than
// faulting.
void require_aligned(const TensorArg& a) {
  if (reinterpret_cast<uintptr_t>(a.data()) % a.elem_bytes() != 0)
    fail_arg(CATTN_NOT_SUPPORTED, a.fn(), a.name(),
             "is a device index tensor off its element alignment",
             "address % " + std::to_string(a.elem_bytes()) + " != 0",
             "data + byte_offset aligned to the element size");
}

}  // namespace

DeviceScope::DeviceScope(const char* fn, const TensorArg& t) : DeviceScope(fn, t.device_id()) {}

DeviceScope::DeviceScope(const char* fn, int device) : device_(device) {
  int current = 0;
  const cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    fail(CATTN_NOT_SUPPORTED, fn,
         std::string("CUDA tensors given but no usable CUDA device/driver (") +
             cudaGetErrorName(e) + ")");
  }
  if (current != device_) {
    check_cuda(fn, cudaSetDevice(device_));
    previous_ = current;
  }
  shape_ = read_shape(fn, device_);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

template <class Data, int Rank>
IndexViewOf::operator kernels::IndexView<Data, Rank>() const {
  require_aligned(a_);
  kernels::IndexView<Data, Rank> v;
  v.data = a_.data();
  v.i64 = a_.is_int64();
  if (Rank == 2 && a_.ndim() == 2) {
    v.size[0] = a_.size(0);
    v.step[0] = a_.stride(0);
    v.size[Rank - 1] = a_.size(1);
    v.step[Rank - 1] = a_.stride(1);
  } else {
    v.size[0] = a_.numel();
    v.step[0] = a_.ndim() ? a_.stride(a_.ndim() - 1) : 1;
    if (Rank == 2) {  // one column
      v.size[Rank - 1] = 1;
      v.step[Rank - 1] = 0;
    }
  }
  return v;
}

template IndexViewOf::operator kernels::IndexSpan() const;
template IndexViewOf::operator kernels::MutIndexSpan() const;
template IndexViewOf::operator kernels::IndexMatrix() const;
template IndexViewOf::operator kernels::MutIndexMatrix() const;

kernels::StridedNd device_strided_nd(const TensorArg& a) {
  require_aligned(a);
  return strided_nd(a);
}

void check_launch(const char* fn, int cuda_error, void* stream) {
  check_cuda(fn, cuda_error);
#if !defined(NDEBUG)
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capturing) == cudaSuccess &&
      capturing == cudaStreamCaptureStatusNone)
    check_cuda(fn, cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
#endif
}

}  // namespace cattn
