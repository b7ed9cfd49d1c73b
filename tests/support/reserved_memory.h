/* SPDX-License-Identifier: Apache-2.0 */
// Address space without memory behind it: an anonymous, read-only, MAP_NORESERVE mapping. A
// test that needs a tensor to really span gigabytes - to reach a size check that only such a
// tensor can trip - points it here; the check fails before any byte is read, so no page is
// ever touched, and nothing is committed.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace cattn_test {

class ReservedMemory {
 public:
  explicit ReservedMemory(size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : p;
  }
  ~ReservedMemory() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  ReservedMemory(const ReservedMemory&) = delete;
  ReservedMemory& operator=(const ReservedMemory&) = delete;
  void* data() const { return data_; }  // NULL when the mapping failed

 private:
  size_t bytes_;
  void* data_ = nullptr;
};

}  // namespace cattn_test
