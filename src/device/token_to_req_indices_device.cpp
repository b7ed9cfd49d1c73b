// SPDX-License-Identifier: Apache-2.0
// Device side of token_to_req_indices (and of extend_all_queries_by_n's positions).
#include "device/token_to_req_indices_device.h"

#include "device/cuda_launch.h"
#include "kernels/token_to_req_indices.h"

namespace cattn {

void token_to_req_indices_device(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                                 int64_t num_tokens, const TensorArg& out, void* stream) {
  DeviceScope dev(fn, qsl);
  kernels::TokenToReqIndicesParams p;
  p.query_start_loc = index_view(qsl);
  if (seq_lens != nullptr) p.seq_lens = index_view(*seq_lens);
  p.out = index_view(out);
  p.num_tokens = num_tokens;
  check_launch(fn, kernels::launch_token_to_req_indices(p, dev.shape(), stream), stream);
}

}  // namespace cattn
