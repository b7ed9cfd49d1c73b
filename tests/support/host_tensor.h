/* SPDX-License-Identifier: Apache-2.0 */
// Test-side owner of host memory behind a DLTensor: any int/float dtype, any shape, optional
// strided layout (every stride multiplied by `step`) and byte offset, poisoned padding.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace cattn_test {

inline DLDataType i32() { return {kDLInt, 32, 1}; }
inline DLDataType i64() { return {kDLInt, 64, 1}; }
inline DLDataType f32() { return {kDLFloat, 32, 1}; }
inline DLDataType dtype_bits(int bits) { return {kDLUInt, static_cast<uint8_t>(bits), 1}; }

constexpr uint8_t kPoisonByte = 0x5A;

class HostTensor {
 public:
  HostTensor() = default;
  // Uninitialised (poisoned) tensor. step > 1 makes a strided view; offset_elems shifts the
  // first element by byte_offset.
  HostTensor(std::vector<int64_t> shape, DLDataType dtype, int64_t step = 1,
             int64_t offset_elems = 0, int64_t inner_pad = 0)
      : shape_(std::move(shape)), dtype_(dtype), step_(step), offset_elems_(offset_elems),
        inner_pad_(inner_pad) {
    // inner_pad > 0: rows of the last dimension are padded, so every dimension but the last is
    // strided while the last stays contiguous (a view of a wider buffer).
    strides_.assign(shape_.size(), 0);
    int64_t compact = 1, numel = 1, span = 1;
    for (int i = static_cast<int>(shape_.size()) - 1; i >= 0; --i) {
      const bool last = i == static_cast<int>(shape_.size()) - 1;
      strides_[i] = inner_pad_ > 0 ? compact : compact * step_;
      compact *= shape_[i] + (last ? inner_pad_ : 0);
      numel *= shape_[i];
      span += (shape_[i] - 1) * strides_[i];
    }
    numel_ = numel;
    if (numel == 0) span = 0;
    bytes_.assign(static_cast<size_t>((span + offset_elems_) * elem() + 16), kPoisonByte);
  }
  // Tensor holding `values` (converted to dtype) in row-major order.
  static HostTensor of(const std::vector<int64_t>& values, DLDataType dtype,
                       std::vector<int64_t> shape = {}, int64_t step = 1,
                       int64_t offset_elems = 0) {
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    HostTensor t(std::move(shape), dtype, step, offset_elems);
    for (int64_t i = 0; i < t.numel_; ++i) t.set(i, values[static_cast<size_t>(i)]);
    return t;
  }

  DLTensor* dl() {
    t_.data = bytes_.data();
    t_.device = {kDLCPU, 0};
    t_.ndim = static_cast<int32_t>(shape_.size());
    t_.dtype = dtype_;
    t_.shape = shape_.data();
    t_.strides = step_ == 1 && inner_pad_ == 0 ? nullptr : strides_.data();
    t_.byte_offset = static_cast<uint64_t>(offset_elems_ * elem());
    return &t_;
  }
  int64_t numel() const { return numel_; }
  int elem() const { return dtype_.bits / 8; }
  // Address of logical element i (row-major order).
  uint8_t* at(int64_t i) {
    int64_t off = offset_elems_, rem = i;
    for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
      off += (rem % shape_[d]) * strides_[d];
      rem /= shape_[d];
    }
    return bytes_.data() + off * elem();
  }
  int64_t get(int64_t i) {
    uint8_t* p = at(i);
    switch (dtype_.bits) {
      case 8: { int8_t v; std::memcpy(&v, p, 1); return v; }
      case 16: { int16_t v; std::memcpy(&v, p, 2); return v; }
      case 32: { int32_t v; std::memcpy(&v, p, 4); return v; }
      default: { int64_t v; std::memcpy(&v, p, 8); return v; }
    }
  }
  void set(int64_t i, int64_t v) {
    uint8_t* p = at(i);
    switch (dtype_.bits) {
      case 8: { int8_t w = static_cast<int8_t>(v); std::memcpy(p, &w, 1); break; }
      case 16: { int16_t w = static_cast<int16_t>(v); std::memcpy(p, &w, 2); break; }
      case 32: { int32_t w = static_cast<int32_t>(v); std::memcpy(p, &w, 4); break; }
      default: std::memcpy(p, &v, 8);
    }
  }
  std::vector<int64_t> values() {
    std::vector<int64_t> out(static_cast<size_t>(numel_));
    for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = get(i);
    return out;
  }
  // Raw storage, padding included, for "nothing was written" checks.
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& raw() { return bytes_; }
  std::vector<int64_t>& shape() { return shape_; }

 private:
  std::vector<int64_t> shape_, strides_;
  DLDataType dtype_{kDLInt, 32, 1};
  int64_t step_ = 1, offset_elems_ = 0, numel_ = 0, inner_pad_ = 0;
  std::vector<uint8_t> bytes_;
  DLTensor t_{};
};

// A tensor's dtype and layout as HostTensor's constructor takes them, for tests that draw
// layouts at random.
struct TensorLayout {
  DLDataType t = i32();
  int64_t step = 1, offset = 0, inner_pad = 0;
};

// `values` (row-major) in a tensor of `shape` laid out as `l`.
inline HostTensor laid_out(const std::vector<int64_t>& values, std::vector<int64_t> shape,
                           const TensorLayout& l) {
  HostTensor h(std::move(shape), l.t, l.step, l.offset, l.inner_pad);
  for (int64_t i = 0; i < h.numel(); ++i) h.set(i, values[static_cast<size_t>(i)]);
  return h;
}

}  // namespace cattn_test
