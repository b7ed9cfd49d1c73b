/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the Mamba block table (vLLM mamba_get_block_table_tensor).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct MambaBlockTableParams {
  IndexMatrix block_table;  // [B, M]
  IndexSpan seq_lens;       // [B]; unused when align is false
  MutIndexMatrix out;       // align: [B, 1 + nspec]; copy: [B, M]
  int64_t block_size = 1;
  bool align = false;       // false: copy block_table into out
};

int launch_mamba_get_block_table_tensor(const MambaBlockTableParams& p, const DeviceShape& dev,
                                        void* stream);

}  // namespace kernels
}  // namespace cattn
