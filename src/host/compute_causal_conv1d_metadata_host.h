/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// What the outputs' sizes and value ranges depend on, from one pass over query_start_loc_cpu.
struct CausalConv1dCounts {
  int64_t batch;    // B: requests (an empty query_start_loc_cpu counts as B = 0)
  int64_t tot;      // programs in all: sum of ceil(len_i / block_m)
  int64_t max_num;  // largest per-request program count (0 when B = 0)
};

// Validates a host query_start_loc_cpu (non-decreasing, differences and total in int64) and
// counts the programs. block_m must already be >= 1.
CausalConv1dCounts compute_causal_conv1d_metadata_count_host(const char* fn,
                                                              const TensorArg& query_start_loc,
                                                              int64_t block_m);

// Writes every present output; inputs and outputs already validated against `counts`.
void compute_causal_conv1d_metadata_host(const TensorArg& query_start_loc, int64_t block_m,
                                         const CausalConv1dCounts& counts, const TensorArg& nums,
                                         const TensorArg& mlist, const TensorArg& offsetlist,
                                         const TensorArg& batch_ptr,
                                         const TensorArg& token_chunk_offset_ptr);

}  // namespace cattn
