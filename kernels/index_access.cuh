// SPDX-License-Identifier: Apache-2.0
// Device-side reads and writes of the index views of kernel_types.h.
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

// The element at element offset `off` of a view, in its dtype.
template <int Rank>
__device__ __forceinline__ int64_t load_at(const IndexView<const void*, Rank>& v, int64_t off) {
  return v.i64 ? static_cast<const int64_t*>(v.data)[off]
               : static_cast<int64_t>(static_cast<const int32_t*>(v.data)[off]);
}
// Stores in the view's dtype; an int32 view keeps the low 32 bits.
template <int Rank>
__device__ __forceinline__ void store_at(const IndexView<void*, Rank>& v, int64_t off,
                                         int64_t value) {
  if (v.i64)
    static_cast<int64_t*>(v.data)[off] = value;
  else
    static_cast<int32_t*>(v.data)[off] = static_cast<int32_t>(value);
}

__device__ __forceinline__ int64_t load_index(const IndexSpan& s, int64_t i) {
  return load_at(s, i * s.step[0]);
}
__device__ __forceinline__ int64_t load_index(const IndexMatrix& m, int64_t r, int64_t c) {
  return load_at(m, r * m.step[0] + c * m.step[1]);
}
__device__ __forceinline__ void store_index(const MutIndexSpan& s, int64_t i, int64_t v) {
  store_at(s, i * s.step[0], v);
}
__device__ __forceinline__ void store_index(const MutIndexMatrix& m, int64_t r, int64_t c,
                                            int64_t v) {
  store_at(m, r * m.step[0] + c * m.step[1], v);
}

// Entry i of a count output, to each of its views that holds it.
__device__ __forceinline__ void store_count(const CountOut& c, int64_t i, int64_t v) {
  if (c.device.data != nullptr && i < c.device.size[0]) store_index(c.device, i, v);
  if (c.mirror.data != nullptr && i < c.mirror.size[0]) store_index(c.mirror, i, v);
}

// a / b for a >= 0 and b > 0, in 32 bits when both fit: a 64-bit division is a long software
// sequence on the GPU, and kernels divide for every element.
__device__ __forceinline__ int64_t div_nonneg(int64_t a, int64_t b) {
  if (((a | b) >> 31) == 0)
    return static_cast<int64_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  return a / b;
}

// The KV slot `block * block_size + offset` (block_size >= 1, 0 <= offset < block_size), or -1
// for a negative block or one whose slot passes int64: the host path refuses both, a kernel
// cannot, and -1 (CATTN_PAD_SLOT_ID) keeps the token out of the cache. Block ids below 2^32
// with block sizes up to 2^31 never overflow, so the common case is one compare.
__device__ __forceinline__ int64_t slot_of_block(int64_t block, int64_t block_size,
                                                 int64_t offset) {
  const uint64_t b = static_cast<uint64_t>(block), n = static_cast<uint64_t>(block_size);
  if (((b >> 32) | (n >> 31)) != 0) {
    if (block < 0 || __umul64hi(b, n) != 0 ||
        b * n > static_cast<uint64_t>(INT64_MAX - offset))
      return -1;
  }
  return static_cast<int64_t>(b * n) + offset;
}

// Torch/numpy floor division for a positive divisor, in 32 bits.
__device__ __forceinline__ int32_t floor_div32(int32_t a, int32_t b) {
  const int32_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace kernels
}  // namespace cattn
