/* SPDX-License-Identifier: Apache-2.0 */
// Glue between the C entry points and the kernels: views of validated tensors as kernel
// structs, the device a call runs on, and the launch-status check. CUDA builds only.
#pragma once

#include "common/tensor_arg.h"
#include "kernels/kernel_types.h"
#include "kernels/strided_nd.h"

namespace cattn {

// Makes the tensors' device current for the lifetime of the guard (restoring the caller's),
// and reads its shape (SM count etc.), cached per device.
class DeviceScope {
 public:
  DeviceScope(const char* fn, const TensorArg& any_cuda_tensor);
  DeviceScope(const char* fn, int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  const kernels::DeviceShape& shape() const { return shape_; }

 private:
  int previous_ = -1;
  int device_ = 0;
  kernels::DeviceShape shape_;
};

// The kernel view of a checked int32/int64 tensor, as the index view it is assigned to
// (kernels::IndexSpan, MutIndexSpan, IndexMatrix, MutIndexMatrix): a 1-D view walks the last
// dimension over all elements; a 2-D view of a 2-D tensor keeps both dimensions, and of a 1-D
// tensor is one column ([n, 1]). Refuses (CATTN_NOT_SUPPORTED) a tensor off its element
// alignment: kernels load index elements with naturally aligned accesses.
//   p.seq_lens = index_view(seq_lens);
class IndexViewOf {
 public:
  explicit IndexViewOf(const TensorArg& a) : a_(a) {}
  template <class Data, int Rank>
  operator kernels::IndexView<Data, Rank>() const;

 private:
  const TensorArg& a_;
};
inline IndexViewOf index_view(const TensorArg& a) { return IndexViewOf(a); }

// The N-D strided walk of a checked device tensor of any dtype; refuses (CATTN_NOT_SUPPORTED) a
// tensor off its element alignment, as index_view does.
kernels::StridedNd device_strided_nd(const TensorArg& a);

// Fails with CATTN_CUDA_ERROR (or CATTN_OUT_OF_MEMORY) naming `fn` when a launch returned an
// error. In debug builds it also synchronises the stream so a faulting kernel is reported by
// the call that launched it.
void check_launch(const char* fn, int cuda_error, void* stream);

}  // namespace cattn
