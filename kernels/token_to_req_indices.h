/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the per-token walks over query_start_loc: the request of every token
// (vLLM CommonAttentionMetadata.token_to_req_indices) and, sharing the search, the position of
// every token (written by extend_all_queries_by_n).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct TokenToReqIndicesParams {
  IndexSpan query_start_loc;  // [B + 1], B >= 0
  // Positions instead of request indices: [B] sequence lengths; data == nullptr: indices.
  IndexSpan seq_lens;
  MutIndexSpan out;           // [capacity]
  // Entries [0, max(M, num_tokens)) of out are written, M = query_start_loc[B] -
  // query_start_loc[0] read on the device, never past out's length.
  int64_t num_tokens = 0;
};

// One launch over out's capacity: token t < M gets its request r (the last r with
// query_start_loc[r] - query_start_loc[0] <= t, by binary search) or, with seq_lens, its
// position seq_lens[r] - query_start_loc[r + 1] + query_start_loc[0] + t; later entries get 0.
int launch_token_to_req_indices(const TokenToReqIndicesParams& p, const DeviceShape& dev,
                                void* stream);

}  // namespace kernels
}  // namespace cattn
