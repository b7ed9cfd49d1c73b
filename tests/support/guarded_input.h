/* SPDX-License-Identifier: Apache-2.0 */
// Input memory that ends at a page boundary, the next page inaccessible: a read past the end
// faults in any build. A canary only sees writes, and ASan only sees heap blocks, so an
// out-of-bounds read in a Release run would otherwise go unnoticed.
#pragma once

#include <dlpack/dlpack.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "support/canary.h"

namespace cattn_test {

template <class T>
class GuardedInput {
 public:
  // `values` row-major in `shape` (1-D when empty), as a tensor of `dtype` (T's size).
  GuardedInput(const std::vector<int64_t>& values, DLDataType dtype,
               std::vector<int64_t> shape = {})
      : n_(values.size()), page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    body_ = (n_ * sizeof(T) + page_ - 1) / page_ * page_;
    void* p = mmap(nullptr, body_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<uint8_t*>(p);
    if (mprotect(base_ + body_, page_, PROT_NONE) != 0) throw std::bad_alloc();
    data_ = reinterpret_cast<T*>(base_ + body_) - n_;
    std::transform(values.begin(), values.end(), data_,
                   [](int64_t v) { return static_cast<T>(v); });
    if (shape.empty()) shape = {static_cast<int64_t>(n_)};
    view_ = std::make_unique<View>(data_, 0, std::move(shape), dtype);
  }
  ~GuardedInput() { munmap(base_, body_ + page_); }
  GuardedInput(const GuardedInput&) = delete;
  GuardedInput& operator=(const GuardedInput&) = delete;

  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  DLTensor* dl() { return view_->dl(); }

 private:
  size_t n_, page_, body_ = 0;
  uint8_t* base_ = nullptr;
  T* data_ = nullptr;
  std::unique_ptr<View> view_;
};

}  // namespace cattn_test
