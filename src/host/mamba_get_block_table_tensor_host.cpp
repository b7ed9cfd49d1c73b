// SPDX-License-Identifier: Apache-2.0
// Host algorithm for mamba_get_block_table_tensor.
//
// NONE/ALL hand the block table over unchanged (vLLM returns the same tensor), so the host
// path is a copy into the caller's output: one memcpy when both are compact and of one dtype,
// an element loop otherwise. ALIGN gathers 1 + num_speculative_blocks consecutive columns per
// row starting at the block that holds the request's last token; the check pass bounds every
// column by the row length first, which is where vLLM's gather reads out of bounds.
#include "host/mamba_get_block_table_tensor_host.h"

#include <cstring>

namespace cattn {

void check_mamba_copy_host(const char* fn, const TensorArg& bt, const TensorArg& out) {
  if (!bt.is_int64() || out.is_int64()) return;  // every value fits a type at least as wide
  // An empty table may still declare ~2^63 rows of zero columns: never walk them.
  if (bt.numel() == 0) return;
  for (int64_t b = 0; b < bt.size(0); ++b) {
    const IndexReader row = reader_row(bt, b);
    for (int64_t j = 0; j < bt.size(1); ++j) require_fits(fn, out, row[j]);
  }
}

void mamba_copy_host(const TensorArg& bt, const TensorArg& out) {
  if (bt.numel() == 0) return;  // nothing to copy, however many empty rows are declared
  if (bt.elem_bytes() == out.elem_bytes() && bt.is_contiguous() && out.is_contiguous()) {
    if (bt.numel() > 0)
      std::memcpy(out.data(), bt.data(), static_cast<size_t>(bt.numel() * bt.elem_bytes()));
    return;
  }
  for (int64_t b = 0; b < bt.size(0); ++b) {
    const IndexReader src = reader_row(bt, b);
    const IndexWriter dst = writer_row(out, b);
    for (int64_t j = 0; j < bt.size(1); ++j) dst.set(j, src[j]);
  }
}

void check_mamba_align_host(const char* fn, const TensorArg& bt, const TensorArg& seq_lens,
                            int64_t block_size, int64_t num_cols, const TensorArg& out) {
  const IndexReader seq = reader1d(seq_lens);
  const int64_t cols = bt.size(1);
  const bool narrowing = bt.is_int64() && !out.is_int64();
  for (int64_t b = 0; b < bt.size(0); ++b) {
    const int64_t s = seq[b];
    const int64_t start = mamba_align_start(s, block_size);
    // start + num_cols <= cols without overflow: num_cols >= 1 and cols >= 0.
    if (start > cols - num_cols)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(),
               "selects block-table columns past the end of a row",
               "[" + std::to_string(b) + "] = " + std::to_string(s) + " -> columns " +
                   std::to_string(start) + ".." + std::to_string(start) + "+" +
                   std::to_string(num_cols - 1),
               "columns < " + std::to_string(cols) +
                   " (args->block_table's width; vLLM reads out of bounds here)");
    if (narrowing) {
      const IndexReader row = reader_row(bt, b);
      for (int64_t j = 0; j < num_cols; ++j) require_fits(fn, out, row[start + j]);
    }
  }
}

void mamba_align_host(const TensorArg& bt, const TensorArg& seq_lens, int64_t block_size,
                      int64_t num_cols, const TensorArg& out) {
  const IndexReader seq = reader1d(seq_lens);
  const int64_t cols = bt.size(1);
  for (int64_t b = 0; b < bt.size(0); ++b) {
    const int64_t start = mamba_align_start(seq[b], block_size);
    const IndexReader src = reader_row(bt, b);
    const IndexWriter dst = writer_row(out, b);
    // The check pass bounded every start; a length the caller changed since is not read past
    // its row but padded, as on the device.
    for (int64_t j = 0; j < num_cols; ++j)
      dst.set(j, start <= cols - num_cols ? src[start + j] : CATTN_PAD_SLOT_ID);
  }
}

}  // namespace cattn
