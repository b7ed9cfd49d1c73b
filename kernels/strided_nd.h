/* SPDX-License-Identifier: Apache-2.0 */
// N-dimensional strided walks shared by host algorithms (src/host) and kernels: the element
// offset of the i-th element (row-major order) of a view of up to 8 dimensions. Plain C++
// that nvcc and the host compiler both read; no CUDA syntax beyond the CATTN_HD qualifier.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CATTN_HD __host__ __device__
#else
#define CATTN_HD
#endif

namespace cattn {
namespace kernels {

constexpr int kMaxStridedDims = 8;

// A view's shape and its strides in elements; ndim 0 is one element.
struct StridedNd {
  int ndim = 0;
  int64_t size[kMaxStridedDims] = {};
  int64_t step[kMaxStridedDims] = {};
};

// Offset in elements of the element with row-major linear index i (0 <= i < numel): peels the
// dimensions off from the last. Sizes are >= 1 whenever an element exists.
CATTN_HD inline int64_t strided_offset(const StridedNd& v, int64_t i) {
  int64_t off = 0;
  for (int d = v.ndim - 1; d >= 0; --d) {
    const int64_t n = v.size[d];
    const int64_t q = i / n;
    off += (i - q * n) * v.step[d];
    i = q;
  }
  return off;
}

}  // namespace kernels
}  // namespace cattn
