/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {
// First block-table column of a request in ALIGN mode: max((seq_len - 1) // block_size, 0).
inline int64_t mamba_align_start(int64_t seq_len, int64_t block_size) {
  // For seq_len >= 1 the dividend is >= 0 and C++ division is floor division; for
  // seq_len <= 0 (CUDA-graph padding rows, or nonsense) the floor quotient is negative and
  // the clamp makes it 0, so no negative division is needed.
  return seq_len <= 0 ? 0 : (seq_len - 1) / block_size;
}
// NONE/ALL: fails unless every block_table value fits out's dtype.
void check_mamba_copy_host(const char* fn, const TensorArg& block_table, const TensorArg& out);
// NONE/ALL: out = block_table (shapes checked, memory disjoint).
void mamba_copy_host(const TensorArg& block_table, const TensorArg& out);
// ALIGN: fails unless every gathered column lies inside its row and every gathered value fits
// out's dtype.
void check_mamba_align_host(const char* fn, const TensorArg& block_table, const TensorArg& seq_lens,
                            int64_t block_size, int64_t num_cols, const TensorArg& out);
// ALIGN: out[b, j] = block_table[b, mamba_align_start(seq_lens[b]) + j], j < num_cols.
void mamba_align_host(const TensorArg& block_table, const TensorArg& seq_lens, int64_t block_size,
                      int64_t num_cols, const TensorArg& out);
}  // namespace cattn
