/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of extend_all_queries_by_n (vLLM extend_all_queries_by_1, general N).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct ExtendQueriesParams {
  IndexSpan query_start_loc;        // [B + 1]
  IndexSpan seq_lens;               // [B]
  MutIndexSpan out_query_start_loc; // [B + 1], may alias query_start_loc
  MutIndexSpan out_seq_lens;        // [B], may alias seq_lens
  int64_t n = 1;
};

int launch_extend_all_queries_by_n(const ExtendQueriesParams& p, const DeviceShape& dev,
                                   void* stream);

}  // namespace kernels
}  // namespace cattn
