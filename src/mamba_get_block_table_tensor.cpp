// SPDX-License-Identifier: Apache-2.0
// Mamba block table (vLLM mamba_get_block_table_tensor). Entry point: argument
// checks and dispatch; the algorithm is in host/mamba_get_block_table_tensor_host.cpp.
#include <string>

#include "common/error.h"
#include "common/param_checks.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/mamba_get_block_table_tensor_device.h"
#include "host/mamba_get_block_table_tensor_host.h"

extern "C" {

CATTN_API cattn_status_t
cattn_mamba_get_block_table_tensor(const cattn_mamba_block_table_args_t* args) {
  constexpr const char* fn = "cattn_mamba_get_block_table_tensor";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const int64_t align_cols =
        cattn::check_mamba_params(fn, "args->", args->mamba_cache_mode, args->reserved0,
                                  args->block_size, args->num_speculative_blocks);
    const bool align = args->mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
    const cattn::TensorArg bt(fn, "args->block_table", args->block_table, cattn::Use::In);
    const cattn::TensorArg seq(fn, "args->seq_lens", args->seq_lens, cattn::Use::In,
                               /*optional=*/!align);
    const cattn::TensorArg out(fn, "args->out", args->out, cattn::Use::Out);
    bt.expect_ndim(2).expect_index_dtype();
    out.expect_ndim(2).expect_index_dtype().expect_writable();
    const int64_t batch = bt.size(0);
    // seq_lens is only read by ALIGN, but a tensor that is passed must still be a sane one.
    if (seq.present()) seq.expect_ndim(1).expect_index_dtype().expect_size(0, batch);

    const int64_t num_cols = align ? align_cols : bt.size(1);
    out.expect_out_size(0, batch).expect_out_size(1, num_cols);

    const cattn::Where where = cattn::require_same_device(fn, {&bt, &seq, &out});

    // vLLM returns block_table itself without ALIGN; an out that is that very view already
    // holds it. ALIGN reads rows of block_table while it writes out, so no overlap there.
    if (!align) cattn::allow_in_place(out, bt);
    cattn::seal_arguments();
    if (!align && cattn::same_view(out, bt)) return;
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::mamba_get_block_table_tensor_device(fn, bt, seq, args->block_size, align, out,
                                                       args->stream);
      return;
    }

    if (!align) {
      cattn::check_mamba_copy_host(fn, bt, out);
      cattn::mamba_copy_host(bt, out);
      return;
    }
    cattn::check_mamba_align_host(fn, bt, seq, args->block_size, num_cols, out);
    cattn::mamba_align_host(bt, seq, args->block_size, num_cols, out);
  });
}

}  // extern "C"
