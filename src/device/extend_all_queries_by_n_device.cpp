// SPDX-License-Identifier: Apache-2.0
// Device side of extend_all_queries_by_n.
#include "device/extend_all_queries_by_n_device.h"

#include "device/cuda_launch.h"
#include "kernels/extend_all_queries_by_n.h"

namespace cattn {

void extend_all_queries_by_n_device(const char* fn, const TensorArg& qsl, const TensorArg& seq_lens,
                                    const TensorArg& out_qsl, const TensorArg& out_seq_lens,
                                    int64_t n, void* stream) {
  DeviceScope dev(fn, qsl);
  kernels::ExtendQueriesParams p;
  p.query_start_loc = index_view(qsl);
  p.seq_lens = index_view(seq_lens);
  p.out_query_start_loc = index_view(out_qsl);
  p.out_seq_lens = index_view(out_seq_lens);
  p.n = n;
  check_launch(fn, kernels::launch_extend_all_queries_by_n(p, dev.shape(), stream), stream);
}

}  // namespace cattn
