/* SPDX-License-Identifier: Apache-2.0 */
// The N-D strided walk of a checked tensor (kernels/strided_nd.h), for host algorithms and
// device preparation alike.
#pragma once

#include "common/tensor_arg.h"
#include "kernels/strided_nd.h"

namespace cattn {

// Shape and element strides of `a` (at most 8 dimensions, as TensorArg admits).
inline kernels::StridedNd strided_nd(const TensorArg& a) {
  kernels::StridedNd v;
  v.ndim = a.ndim();
  for (int d = 0; d < a.ndim(); ++d) {
    v.size[d] = a.size(d);
    v.step[d] = a.stride(d);
  }
  return v;
}

}  // namespace cattn
