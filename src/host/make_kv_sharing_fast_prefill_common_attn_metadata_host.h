/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// Checks the data of a fast-prefill call before anything is written: query_start_loc is
// non-decreasing (bucketize needs sorted boundaries) and every one of the first `count` logits
// indices lies before query_start_loc[num_reqs] (vLLM's bincount would grow a bucket for a
// request that does not exist).
void check_fast_prefill_host(const char* fn, const TensorArg& query_start_loc,
                             const TensorArg& logits_indices, int64_t count);

// Writes the decode query_start_loc ([0, cumsum of logits indices per request]) to
// `out_query_start_loc` and, when present, `out_query_start_loc_cpu`; returns the largest
// per-request count. Inputs checked by check_fast_prefill_host; outputs must not overlap them
// (the first output doubles as the counting scratch).
int64_t make_fast_prefill_query_start_loc_host(const TensorArg& query_start_loc,
                                               const TensorArg& logits_indices, int64_t count,
                                               const TensorArg& out_query_start_loc,
                                               const TensorArg& out_query_start_loc_cpu);

}  // namespace cattn
