// SPDX-License-Identifier: Apache-2.0
// Extend every query by n tokens: one thread per request updates both tensors, so one launch serves
// query_start_loc and seq_lens (in place is fine: each element is read, then written, by the same
// thread).
#pragma once

#include "kernels/extend_all_queries_by_n.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

__device__ __forceinline__ void extend_all_queries_by_n_blocks(const ExtendQueriesParams& p,
                                                               const BlockSlice& slice) {
  const int64_t n = p.query_start_loc.size[0];
  for (int64_t i = slice.thread(); i < n; i += slice.threads()) {
    store_index(p.out_query_start_loc, i, load_index(p.query_start_loc, i) + i * p.n);
    if (i < p.seq_lens.size[0]) store_index(p.out_seq_lens, i, load_index(p.seq_lens, i) + p.n);
  }
}

}  // namespace kernels
}  // namespace cattn
