// SPDX-License-Identifier: Apache-2.0
// The C++ benches' tensors: cattn.hpp views (shape, strides, dtype and device in one value, over
// memory a bench owns: a cattn::host_tensor, a device buffer, a fake device address) and the
// DLTensor that the C calls they time take, made by the view.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "cattn.hpp"

namespace bench {

// A view with its DLTensor, for an args struct to point at. The DLTensor points into the view
// (its shape and strides), so a dl_tensor is neither copied nor moved: hold it in a local, a
// std::deque or a std::unique_ptr for as long as anything points at it.
class dl_tensor {
 public:
  explicit dl_tensor(const cattn::any_cview& view) : view_(view), dl_(view_.dl()) {}
  dl_tensor(const dl_tensor&) = delete;
  dl_tensor& operator=(const dl_tensor&) = delete;
  DLTensor* get() noexcept { return &dl_; }

 private:
  cattn::any_cview view_;
  DLTensor dl_;
};

// A compact view of `data` with dtype `dt` (8, 16, 32 or 64 bits a lane, one lane) on
// `device`, for element types chosen at run time; bf16 and fp8 data are views of the unsigned
// integer of their width.
inline cattn::any_cview raw_view(const void* data, const std::vector<int64_t>& shape,
                                 DLDataType dt, DLDevice device) {
  switch (dt.bits) {
    case 8:
      return cattn::tensor_view<const uint8_t>(static_cast<const uint8_t*>(data), shape, device)
          .with_dtype(dt);
    case 16:
      return cattn::tensor_view<const uint16_t>(static_cast<const uint16_t*>(data), shape, device)
          .with_dtype(dt);
    case 32:
      return cattn::tensor_view<const uint32_t>(static_cast<const uint32_t*>(data), shape, device)
          .with_dtype(dt);
    default:
      return cattn::tensor_view<const uint64_t>(static_cast<const uint64_t*>(data), shape, device)
          .with_dtype(dt);
  }
}

}  // namespace bench
