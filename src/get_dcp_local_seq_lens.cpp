// DCP local sequence lengths (vLLM get_dcp_local_seq_lens). Entry point: argument
// checks and dispatch; the algorithm is in host/get_dcp_local_seq_lens_host.cpp.
#include <limits>
#include <string>

#include "common/error.h"
#include "common/tensor_arg.h"
#include "device/get_dcp_local_seq_lens_device.h"
#include "host/get_dcp_local_seq_lens_host.h"

extern "C" {

CATTN_API cattn_status_t cattn_get_dcp_local_seq_lens(const cattn_dcp_local_seq_lens_args_t* args) {
  constexpr const char* fn = "cattn_get_dcp_local_seq_lens";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args, sizeof(cattn_dcp_local_seq_lens_args_t));
    const cattn::TensorArg seq(fn, "args->seq_lens", args->seq_lens);
    const cattn::TensorArg out(fn, "args->out", args->out);
    seq.expect_ndim(1).expect_index_dtype();
    out.expect_index_dtype().expect_writable();

    const int64_t size = args->dcp_size, rank = args->dcp_rank;
    const int64_t interleave = args->dcp_kv_cache_interleave_size;
    if (size < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_size", "is out of range",
                      std::to_string(size), ">= 1");
    if (interleave < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_kv_cache_interleave_size",
                      "is out of range", std::to_string(interleave), ">= 1");
    // vLLM multiplies rank offsets by the interleave size in int32; past this bound it wraps
    // and returns wrong lengths, so the product is bounded for host and device alike.
    if (interleave > std::numeric_limits<int32_t>::max() / size)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_kv_cache_interleave_size",
                      "times args->dcp_size exceeds INT32_MAX",
                      std::to_string(interleave) + " * " + std::to_string(size),
                      "a product <= 2147483647 (vLLM computes in int32)");
    if (rank != CATTN_DCP_ALL_RANKS && (rank < 0 || rank >= size))
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_rank", "is out of range",
                      std::to_string(rank),
                      "0.." + std::to_string(size - 1) + " or CATTN_DCP_ALL_RANKS (-1)");

    const int64_t batch = seq.size(0);
    const bool all = rank == CATTN_DCP_ALL_RANKS;
    // vLLM squeezes the rank dimension away when it has size 1, so a single rank, and all the
    // ranks of a size-1 group, give [B]; [B, 1] is accepted for the latter as well.
    if (all && (out.ndim() == 2 || size > 1)) {
      if (out.ndim() != 2)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->out", "has the wrong ndim",
                        std::to_string(out.ndim()) + " " + out.shape_string(),
                        "2 ([B, dcp_size] for all ranks)");
      out.expect_out_size(0, batch).expect_out_size(1, size);
    } else {
      if (out.ndim() != 1)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->out", "has the wrong ndim",
                        std::to_string(out.ndim()) + " " + out.shape_string(),
                        all ? "1 or 2 ([B] or [B, 1] when dcp_size is 1)" : "1 ([B] for one rank)");
      out.expect_out_size(0, batch);
    }

    const cattn::Where where = cattn::require_same_device(fn, {&seq, &out});
    // Element b of a [B] out depends on seq_lens[b] alone, so writing over the very same view
    // is safe (on the device one thread reads and writes it); any other overlap would clobber
    // lengths not yet read.
    if (!cattn::same_view(out, seq)) cattn::require_disjoint(fn, out, seq);
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::get_dcp_local_seq_lens_device(fn, seq, size, all ? -1 : rank, interleave, out,
                                                 args->stream);
      return;
    }
    cattn::check_dcp_seq_lens_host(fn, seq);
    cattn::get_dcp_local_seq_lens_host(seq, size, all ? 0 : rank, all ? size : 1, interleave, out);
  });
}

}  // extern "C"
