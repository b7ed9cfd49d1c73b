// SPDX-License-Identifier: Apache-2.0
// Query lengths of the metadata (vLLM CommonAttentionMetadata.naive_query_lens), and the
// shared body of compute_num_computed_tokens. Entry point: argument checks and dispatch; the
// algorithm is in host/naive_query_lens_host.cpp.
#include "common/error.h"
#include "common/metadata.h"
#include "common/query_lens_entry.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/naive_query_lens_device.h"
#include "host/naive_query_lens_host.h"

namespace cattn {

void run_query_lens(const char* fn, const cattn_naive_query_lens_args_t* args,
                    bool subtract_from_seq_lens) {
  require_struct(fn, "args", args);
  const cattn_common_attn_metadata_t md = read_metadata(fn, "args->metadata", args->metadata);
  const TensorArg qsl(fn, "args->metadata->query_start_loc", md.query_start_loc, Use::In);
  const TensorArg seq(fn, "args->metadata->seq_lens",
                      subtract_from_seq_lens ? md.seq_lens : nullptr, Use::In,
                      !subtract_from_seq_lens);
  const TensorArg out(fn, "args->out", args->out, Use::Out);
  qsl.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
  int64_t batch;
  if (subtract_from_seq_lens) {
    // vLLM's batch is seq_lens' length, and the subtraction needs query_start_loc to match.
    seq.expect_ndim(1).expect_index_dtype();
    batch = seq.size(0);
    qsl.expect_size(0, batch + 1);
  } else {
    if (qsl.size(0) < 1)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is empty", "0 entries",
               ">= 1 entry (num_reqs + 1)");
    batch = qsl.size(0) - 1;
  }
  out.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, batch);
  const Where where = require_same_device(fn, {&qsl, &seq, &out});
  // One thread (or loop step) reads seq_lens[i] and then writes out[i]: the very view is safe.
  allow_in_place(out, seq);
  seal_arguments();
  const TensorArg* seq_ptr = seq.present() ? &seq : nullptr;
  if (where == Where::Cuda) {
    if constexpr (!kCudaBuild) fail_no_cuda_path(fn);
    else naive_query_lens_device(fn, qsl, seq_ptr, out, args->stream);
    return;
  }
  check_naive_query_lens_host(fn, qsl, seq_ptr, out);
  naive_query_lens_host(qsl, seq_ptr, out);
}

}  // namespace cattn

extern "C" {

CATTN_API cattn_status_t cattn_naive_query_lens(const cattn_naive_query_lens_args_t* args) {
  constexpr const char* fn = "cattn_naive_query_lens";
  return cattn::guarded(fn, [&] { cattn::run_query_lens(fn, args, false); });
}

}  // extern "C"
