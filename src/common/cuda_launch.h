// Glue between the C entry points and the kernels: views of validated tensors as kernel
// structs, the device a call runs on, and the launch-status check. CUDA builds only.
#pragma once

#if defined(CATTN_HAVE_CUDA)

#include "common/tensor_arg.h"
#include "kernels/kernel_types.h"

namespace cattn {

// Makes the tensors' device current for the lifetime of the guard (restoring the caller's),
// and reads its shape (SM count etc.), cached per device.
class DeviceScope {
 public:
  DeviceScope(const char* fn, const TensorArg& any_cuda_tensor);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const kernels::DeviceShape& shape() const { return shape_; }

 private:
  int previous_ = -1;
  int device_ = 0;
  kernels::DeviceShape shape_;
};

kernels::IndexSpan index_span(const TensorArg& a);
kernels::MutIndexSpan mut_index_span(const TensorArg& a);
kernels::IndexMatrix index_matrix(const TensorArg& a);
kernels::MutIndexMatrix mut_index_matrix(const TensorArg& a);

// Fails with CATTN_CUDA_ERROR (or CATTN_OUT_OF_MEMORY) naming `fn` when a launch returned an
// error. In debug builds it also synchronises the stream so a faulting kernel is reported by
// the call that launched it.
void check_launch(const char* fn, int cuda_error, void* stream);

}  // namespace cattn

#endif
