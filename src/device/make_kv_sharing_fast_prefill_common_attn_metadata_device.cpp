// SPDX-License-Identifier: Apache-2.0
// Device side of make_kv_sharing_fast_prefill_common_attn_metadata.
#include "device/make_kv_sharing_fast_prefill_common_attn_metadata_device.h"

#include "device/cuda_launch.h"
#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.h"

namespace cattn {

void make_kv_sharing_fast_prefill_common_attn_metadata_device(
    const char* fn, const TensorArg& qsl, const TensorArg& logits, int64_t count,
    const TensorArg& out_qsl, const TensorArg& max_and_total, void* stream) {
  DeviceScope dev(fn, qsl);
  kernels::FastPrefillParams p;
  p.logits_indices = index_view(logits);
  p.logits_indices.size[0] = count;
  p.query_start_loc = index_view(qsl);
  p.decode_query_start_loc = index_view(out_qsl);
  p.max_and_total.device = index_view(max_and_total);
  check_launch(fn,
               kernels::launch_make_kv_sharing_fast_prefill_common_attn_metadata(p, stream),
               stream);
}

}  // namespace cattn
