// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 10: cattn_mamba_get_block_table_tensor in all three cache modes (and
// unknown ones), with random block tables, sequence lengths (padding rows, lengths past the
// table), block sizes, speculative block counts, output dtypes that widen or narrow, and the
// copy modes' "out is block_table's very view" case (its own DLTensor or another one; nothing
// is written then), outputs over block_table's or seq_lens' memory (refused when they share a
// byte with block_table, or in ALIGN with seq_lens too), broadcast block tables and lengths of
// any size (no limit: the output bounds the work). The reference is the definition in the
// header: ALIGN gathers columns max((s - 1) // block_size, 0) + j, the copy modes copy.
#include "fuzz_support.h"

using namespace cattn_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const char* fn = "cattn_mamba_get_block_table_tensor";
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t cols = fdp.ConsumeIntegralInRange<int64_t>(0, 10);
  const int32_t mode = fdp.ConsumeIntegralInRange<int>(0, 15) == 15 ? fdp.ConsumeIntegral<int32_t>()
                                                                    : fdp.ConsumeIntegralInRange<int32_t>(0, 2);
  const bool align = mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
  const int32_t reserved = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  const int64_t block_size = pick_scalar(fdp, 1, 8);
  const int64_t nspec = pick_scalar(fdp, 0, 3);

  std::vector<int64_t> table(static_cast<size_t>(batch * cols));
  for (auto& v : table) v = pick_value(fdp, 1000);
  Tensor bt = make_tensor(fdp, {batch, cols}, fdp.ConsumeBool() ? i64() : i32(), false, {true, true, true});
  bt.fill(table);
  const bool with_seq = align || fdp.ConsumeBool();
  std::vector<int64_t> lens(static_cast<size_t>(batch));
  const int64_t typical_bs = block_size >= 1 && block_size <= 8 ? block_size : 1;
  for (auto& v : lens) v = pick_value(fdp, cols * typical_bs + 2);
  Tensor seq = with_seq ? make_tensor(fdp, {batch}, fdp.ConsumeBool() ? i64() : i32(), false, {true, true, true}) : Tensor();
  if (with_seq) seq.fill(lens);
  if (!with_seq) seq.exists = false;

  const int64_t out_cols = align ? (nspec >= 0 && nspec < 16 ? 1 + nspec : 1) : cols;
  // The copy modes accept out as the very view of block_table (nothing is written then): its
  // own DLTensor (`same`) or another one over it; any other output may lie over block_table's or
  // seq_lens' memory.
  const int out_kind = fdp.ConsumeIntegralInRange<int>(0, 15);
  const bool same = !align && out_kind == 0;
  Tensor out = same ? Tensor() : out_kind <= 2 ? view_of(fdp, bt, true)
                                               : make_tensor(fdp, {batch, out_cols}, fdp.ConsumeBool() ? i64() : i32(), true);
  if (out_kind > 2) maybe_alias(fdp, out, {&bt, &seq});
  const Tensor& o = same ? bt : out;
  if (same) bt.output = true;  // passed as the output too (and never written)

  const size_t struct_size = pick_struct_size(fdp, CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE);
  Struct<cattn_mamba_block_table_args_t> args(CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT, struct_size);
  cattn_mamba_block_table_args_t* a = args.get();
  a->block_table = bt.cptr();
  a->seq_lens = seq.cptr();
  a->block_size = block_size;
  a->num_speculative_blocks = nspec;
  a->mamba_cache_mode = mode;
  a->reserved0 = reserved;
  a->out = same ? bt.ptr() : out.ptr();
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_before = args.snapshot();

  // Device memory is refused by this CPU-only build, except where there is nothing to do: a copy
  // mode whose out is block_table's very view returns before any device work, as a CUDA build
  // does, once every tensor is on one device.
  const bool view = !align && same_view(o, bt);
  const bool one_device = where_of(bt) == where_of(o) && (!seq.exists || where_of(seq) == where_of(bt));
  const bool device_ok = one_device && (where_of(bt) == 0 || view);
  auto index_nd = [](const Tensor& t, int nd) { return t.usable() && t.ndim() == nd && t.index(); };
  bool ok = !null_args && struct_size >= CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE && mode >= 0 && mode <= 2 &&
            reserved == 0 && index_nd(bt, 2) && index_nd(o, 2) && writable(o);
  if (ok && seq.exists) ok = index_nd(seq, 1) && seq.dim(0) == bt.dim(0);
  if (ok && align) ok = seq.exists && block_size >= 1 && nspec >= 0 && nspec < INT64_MAX;
  const int64_t num_cols = align ? (ok ? 1 + nspec : 0) : (ok ? bt.dim(1) : 0);
  if (ok) ok = o.dim(0) == bt.dim(0) && o.dim(1) == num_cols && device_ok;
  // seq_lens, when given, is an argument in every mode (checked, though only ALIGN reads it):
  // out may not overlap it.
  if (ok && seq.exists) ok = !overlaps(o, seq);
  std::vector<int64_t> expect;
  if (ok && !view) {
    // Disjoint from block_table.
    ok = !overlaps(out, bt);
    // A copy of an empty table may declare ~2^63 empty rows; ALIGN's rows are seq_lens' (owned).
    const int64_t rows = !align && bt.numel == 0 ? 0 : bt.dim(0), width = bt.dim(1);
    for (int64_t b = 0; ok && b < rows; ++b)
      for (int64_t j = 0; ok && j < num_cols; ++j) {
        int64_t col = j;
        if (align) {
          const int64_t s = seq.get(b);
          const int64_t start = s <= 0 ? 0 : floor_div(s - 1, block_size);
          if (start > width - num_cols) { ok = false; break; }
          col = start + j;
        }
        const int64_t v = bt.get(b * width + col);
        ok = fits(o, v);
        expect.push_back(v);
      }
  }
  FZ_LOG("mode %d bs %ld nspec %ld same %d view %d predicted %d\n  bt %s\n  seq %s\n  out %s\n", mode,
         (long)block_size, (long)nspec, same, view, ok, describe(bt).c_str(), describe(seq).c_str(),
         describe(o).c_str());

  Watch w;
  w.add(&bt);
  if (with_seq) w.add(&seq);
  if (!same) w.add(&out);
  const cattn_status_t s = cattn_mamba_get_block_table_tensor(null_args ? nullptr : a);
  FZ_CHECK(args.unchanged(args_before), "the call wrote its args struct");
  if (!check_outcome(s, fn, ok, w)) return 0;
  if (!view)  // the very view: nothing to write
    for (int64_t i = 0; i < static_cast<int64_t>(expect.size()); ++i) w.put(out, i, expect[static_cast<size_t>(i)]);
  check_images(w, fn);
  return 0;
}
