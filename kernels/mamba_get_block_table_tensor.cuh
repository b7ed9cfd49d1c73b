// SPDX-License-Identifier: Apache-2.0
// Mamba block table: one thread per output element. In align mode a column past the row (vLLM reads
// out of bounds there) is written as PAD (-1) instead.
#pragma once

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/mamba_get_block_table_tensor.h"

namespace cattn {
namespace kernels {

__device__ __forceinline__ void mamba_get_block_table_tensor_blocks(const MambaBlockTableParams& p,
                                                                    const BlockSlice& slice) {
  const int64_t n = p.out.size[0] * p.out.size[1];
  batched_for<4>(
      slice.thread(), n, slice.threads(),
      [&](int64_t i) {
        const int64_t b = div_nonneg(i, p.out.size[1]), j = i - b * p.out.size[1];
        int64_t start = 0;
        if (p.align) {
          // seq_len <= 0 starts at column 0 without computing seq_len - 1 (INT64_MIN would wrap).
          const int64_t s = load_index(p.seq_lens, b);
          start = s <= 0 ? 0 : div_nonneg(s - 1, p.block_size);
        }
        // j < cols - start rather than start + j < cols: start may be near INT64_MAX.
        return j < p.block_table.size[1] - start ? load_index(p.block_table, b, start + j)
                                                 : int64_t{-1};
      },
      [&](int64_t i, int64_t v) {
        const int64_t b = div_nonneg(i, p.out.size[1]);
        store_index(p.out, b, i - b * p.out.size[1], v);
      });
}

}  // namespace kernels
}  // namespace cattn
