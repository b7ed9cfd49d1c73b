/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "common/tensor_arg.h"

namespace cattn {

struct ReorderResult {
  bool changed = false;
  int64_t num_swaps = 0;
  int64_t counts[4] = {0, 0, 0, 0};  // requests per region, in region order
};

// vLLM's reorder_batch_to_split_decodes_and_prefills as a plan: writes the index map (new
// position -> old position) and, when `swaps` is present, the swaps in vLLM's order. Inputs
// checked: three [B] index tensors, index_map [B] (int32 only for B <= 2^28), swaps
// [>= B - 1, 2] or absent.
ReorderResult reorder_batch_to_split_decodes_and_prefills_host(
    const TensorArg& scheduled, const TensorArg& computed, const TensorArg& prompt,
    int64_t threshold, const TensorArg& index_map, const TensorArg& swaps);

}  // namespace cattn
