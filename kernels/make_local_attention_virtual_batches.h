/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the local-attention plan's block-table gather (vLLM
// make_local_attention_virtual_batches' make_block_table).
#pragma once

#include "kernels/kernel_types.h"
#include "kernels/param_chunk.h"

namespace cattn {
namespace kernels {

struct LocalBlockTableParams {
  IndexMatrix block_table;  // [B, >= cols]
  MutIndexMatrix out;       // [V, pages]
  int64_t cols = 0;         // the plan's clip: column indices are capped at cols - 1
  // Per virtual batch (chunk.first + i): (batch << 32) | first block, both < 2^31.
  ParamChunk batch_and_start;
};

// The virtual batches from the device query_start_loc [B + 1] and seq_lens [B] (graph-
// replayable): cu_seqlens_q [cap + 1], seqlens_k [cap], num_computed [cap] and out_table
// [cap, pages] (the last two may be absent), counts [3] = {V, max_query_len, max_seq_len}
// (may be absent).
struct LocalAttentionCapturableParams {
  IndexSpan query_start_loc, seq_lens;
  IndexMatrix block_table;  // [B, cols]
  MutIndexSpan cu_seqlens_q, seqlens_k, num_computed;
  CountOut counts;
  MutIndexMatrix out_table;
  int64_t chunk = 1, block_size = 1, pages = 1, cols = 1;
};

int launch_make_local_attention_virtual_batches(const LocalBlockTableParams& p,
                                                const DeviceShape& dev, void* stream);
int launch_make_local_attention_virtual_batches_capturable(const LocalAttentionCapturableParams& p,
                                                           const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
