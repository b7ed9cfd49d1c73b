// DCP local sequence lengths (vLLM get_dcp_local_seq_lens). Entry point: argument
// checks and dispatch; the algorithm is in host/get_dcp_local_seq_lens_host.cpp.
#include <limits>
#include <string>

#include "common/error.h"
#include "common/product_checks.h"
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
    cattn::check_dcp_params(fn, "args->", size, rank, interleave);

    const int64_t batch = seq.size(0);
    const bool all = rank == CATTN_DCP_ALL_RANKS;
    cattn::check_dcp_out(out, batch, size, all);

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
