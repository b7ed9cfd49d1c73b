/* SPDX-License-Identifier: Apache-2.0 */
// Caller memory with canary zones: a payload between two guard zones of known bytes, and
// DLTensor views placed anywhere in the payload (overlapping each other when a test wants
// aliasing). A call may write only inside the payload, and only where its outputs lie.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace cattn_test {

constexpr size_t kCanaryBytes = 64;
constexpr uint8_t kCanaryByte = 0xCB;

class CanaryBuffer {
 public:
  explicit CanaryBuffer(size_t payload, uint8_t fill = 0)
      : bytes_(payload + 2 * kCanaryBytes, kCanaryByte), payload_(payload) {
    std::memset(bytes_.data() + kCanaryBytes, fill, payload);
  }
  uint8_t* payload() { return bytes_.data() + kCanaryBytes; }
  size_t payload_size() const { return payload_; }
  bool canaries_intact() const {
    for (size_t i = 0; i < kCanaryBytes; ++i)
      if (bytes_[i] != kCanaryByte || bytes_[kCanaryBytes + payload_ + i] != kCanaryByte)
        return false;
    return true;
  }
  std::vector<uint8_t> snapshot() const { return bytes_; }
  bool unchanged(const std::vector<uint8_t>& before) const { return bytes_ == before; }
  template <class T>
  void store(size_t byte_offset, T v) {
    std::memcpy(payload() + byte_offset, &v, sizeof v);
  }
  template <class T>
  T load(size_t byte_offset) {
    T v;
    std::memcpy(&v, payload() + byte_offset, sizeof v);
    return v;
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t payload_;
};

// A DLTensor over a CanaryBuffer (or any memory), owning its shape and strides.
struct View {
  std::vector<int64_t> shape, strides;
  DLTensor t{};
  View(void* base, uint64_t byte_offset, std::vector<int64_t> shape_in, DLDataType dtype,
       std::vector<int64_t> strides_in = {})
      : shape(std::move(shape_in)), strides(std::move(strides_in)) {
    t.data = base;
    t.byte_offset = byte_offset;
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
  }
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  DLTensor* dl() { return &t; }
};

}  // namespace cattn_test
