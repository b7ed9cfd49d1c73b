/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the device splits (vLLM split_decodes_and_prefills and
// split_decodes_prefills_and_extends).
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct SplitParams {
  IndexSpan query_start_loc;            // [B + 1]
  const uint8_t* is_prefilling = nullptr;  // [B] bytes, element `flag_step` bytes apart, or none
  int64_t flag_step = 0;
  IndexSpan upper_bound;                // [B] (extends only)
  IndexSpan num_tokens;                 // [1], or data == nullptr: query_start_loc[B]
  IndexSpan max_query_len;              // [1], or data == nullptr: the largest q[i]
  int64_t threshold = 1;
  bool require_uniform = false;
  bool treat_short_extends_as_decodes = true;
  bool extends = false;                 // six results (extends) or four
  MutIndexSpan result;                  // [4] or [6]
};

// One block on `stream` (a cudaStream_t).
int launch_split_decodes_and_prefills(const SplitParams& p, void* stream);

}  // namespace kernels
}  // namespace cattn
