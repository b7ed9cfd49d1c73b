// SPDX-License-Identifier: Apache-2.0
// Prefill chunks that fit a workspace (vLLM split_prefill_chunks). Entry point: argument
// checks and dispatch; the algorithm is in host/split_prefill_chunks_host.cpp.
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "host/split_prefill_chunks_host.h"

extern "C" {

CATTN_API cattn_status_t cattn_split_prefill_chunks(cattn_split_prefill_chunks_args_t* args) {
  constexpr const char* fn = "cattn_split_prefill_chunks";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg seq(fn, "args->seq_lens_cpu", args->seq_lens_cpu, cattn::Use::In);
    const cattn::TensorArg chunks(fn, "args->chunks", args->chunks, cattn::Use::Out, true);
    seq.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
    if (chunks.present()) {
      chunks.expect_ndim(2).expect_size(1, 2).expect_index_dtype().expect_host()
          .expect_writable();
    }
    if (args->workspace_size < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->workspace_size", "is negative",
                      std::to_string(args->workspace_size), ">= 0");
    const int64_t n = seq.numel(), off = args->request_offset;
    const int64_t last = cattn::checked_add(fn, "args->request_offset + the batch size", off, n);
    const int64_t count = cattn::split_prefill_chunks_count_host(fn, seq, args->workspace_size);
    if (chunks.present()) {
      if (chunks.size(0) < count)
        cattn::fail_arg(CATTN_INSUFFICIENT_SIZE, fn, "args->chunks", "has too few rows",
                        chunks.shape_string(), ">= " + std::to_string(count) + " rows");
      if (count > 0) {
        cattn::require_fits(fn, chunks, off);
        cattn::require_fits(fn, chunks, last);
      }
    }
    cattn::seal_arguments();
    if (chunks.present())
      cattn::split_prefill_chunks_host(seq, args->workspace_size, off, count, chunks);
    args->num_chunks = count;
  });
}

}  // extern "C"
