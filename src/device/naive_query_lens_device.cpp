// SPDX-License-Identifier: Apache-2.0
// Device side of naive_query_lens and compute_num_computed_tokens.
#include "device/naive_query_lens_device.h"

#include "device/cuda_launch.h"
#include "kernels/naive_query_lens.h"

namespace cattn {

void naive_query_lens_device(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                             const TensorArg& out, void* stream) {
  DeviceScope dev(fn, qsl);
  kernels::NaiveQueryLensParams p;
  p.query_start_loc = index_view(qsl);
  if (seq_lens != nullptr) p.seq_lens = index_view(*seq_lens);
  p.out = index_view(out);
  check_launch(fn, kernels::launch_naive_query_lens(p, dev.shape(), stream), stream);
}

}  // namespace cattn
