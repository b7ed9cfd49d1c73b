// SPDX-License-Identifier: Apache-2.0
// Host algorithm of log2_lse_to_ln: the element product of kernels/log2_lse_to_ln.h over an
// N-D strided walk of both views. In place is safe because element i is read just before it
// is written and no other element shares its bytes.
#include "host/log2_lse_to_ln_host.h"

#include "common/strided.h"

namespace cattn {

void log2_lse_to_ln_host(const TensorArg& lse, kernels::LseType type, float half_mul,
                         const TensorArg& out) {
  const kernels::StridedNd in_v = strided_nd(lse), out_v = strided_nd(out);
  const int64_t e = lse.elem_bytes();
  for (int64_t i = 0; i < lse.numel(); ++i)
    kernels::lse_to_ln_element(type, half_mul, lse.data() + kernels::strided_offset(in_v, i) * e,
                               out.data() + kernels::strided_offset(out_v, i) * e);
}

}  // namespace cattn
