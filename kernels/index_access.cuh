// Device-side reads and writes of the index views in kernel_types.h.
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

__device__ __forceinline__ int64_t load_index(const IndexSpan& s, int64_t i) {
  return s.i64 ? static_cast<const int64_t*>(s.data)[i * s.step]
               : static_cast<int64_t>(static_cast<const int32_t*>(s.data)[i * s.step]);
}

__device__ __forceinline__ void store_index(const MutIndexSpan& s, int64_t i, int64_t v) {
  if (s.i64)
    static_cast<int64_t*>(s.data)[i * s.step] = v;
  else
    static_cast<int32_t*>(s.data)[i * s.step] = static_cast<int32_t>(v);
}

__device__ __forceinline__ int64_t load_index(const IndexMatrix& m, int64_t r, int64_t c) {
  const int64_t off = r * m.row_step + c * m.col_step;
  return m.i64 ? static_cast<const int64_t*>(m.data)[off]
               : static_cast<int64_t>(static_cast<const int32_t*>(m.data)[off]);
}

__device__ __forceinline__ void store_index(const MutIndexMatrix& m, int64_t r, int64_t c,
                                            int64_t v) {
  const int64_t off = r * m.row_step + c * m.col_step;
  if (m.i64)
    static_cast<int64_t*>(m.data)[off] = v;
  else
    static_cast<int32_t*>(m.data)[off] = static_cast<int32_t>(v);
}

// Torch/numpy floor division for a positive divisor.
__device__ __forceinline__ int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace kernels
}  // namespace cattn
