/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the per-request length helpers of the metadata (vLLM
// CommonAttentionMetadata.naive_query_lens and compute_num_computed_tokens).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct NaiveQueryLensParams {
  IndexSpan query_start_loc;  // [B + 1]
  IndexSpan seq_lens;         // [B]; data == nullptr: the query lengths themselves
  MutIndexSpan out;           // [B]; may be seq_lens' very view
};

// out[i] = seq_lens[i] - (query_start_loc[i + 1] - query_start_loc[i]), or the query length
// when seq_lens is absent; one thread per request, arithmetic modulo 2^64.
int launch_naive_query_lens(const NaiveQueryLensParams& p, const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
