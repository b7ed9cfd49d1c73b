/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the KV-sharing fast-prefill metadata
// (vLLM make_kv_sharing_fast_prefill_common_attn_metadata).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct FastPrefillParams {
  IndexSpan logits_indices;          // the first num_logits_indices entries
  IndexSpan query_start_loc;         // [num_reqs + 1]
  MutIndexSpan decode_query_start_loc; // [num_reqs + 1]; also the counting scratch
  CountOut max_and_total;            // [2]
  // [1] on the device: how many of logits_indices to read (clamped to [0, its size]); absent
  // (data == nullptr): all of them.
  IndexSpan num_logits_indices;
};

int launch_make_kv_sharing_fast_prefill_common_attn_metadata(const FastPrefillParams& p,
                                                             void* stream);

}  // namespace kernels
}  // namespace cattn
