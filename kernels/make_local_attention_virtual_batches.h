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

int launch_make_local_attention_virtual_batches(const LocalBlockTableParams& p,
                                                const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
