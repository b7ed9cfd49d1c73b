// SPDX-License-Identifier: Apache-2.0
// DCP local sequence lengths (vLLM get_dcp_local_seq_lens). Entry point: argument
// checks and dispatch; the algorithm is in host/get_dcp_local_seq_lens_host.cpp.
#include <cstddef>
#include <limits>
#include <string>

#include "common/error.h"
#include "common/param_checks.h"
#include "common/strided.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/get_dcp_local_seq_lens_device.h"
#include "host/get_dcp_local_seq_lens_host.h"

namespace {

// CATTN_DCP_SHAPE_PRESERVE's output: seq_lens' shape, plus a trailing [dcp_size] for all ranks.
void check_dcp_out_nd(const cattn::TensorArg& out, const cattn::TensorArg& seq, int64_t size,
                      bool all) {
  out.expect_index_dtype().expect_writable();
  const int rank_axis = all ? 1 : 0;
  if (seq.ndim() + rank_axis > 8 || out.ndim() != seq.ndim() + rank_axis)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, out.fn(), out.name(), "has the wrong ndim",
                    std::to_string(out.ndim()) + " " + out.shape_string(),
                    std::to_string(seq.ndim() + rank_axis) + " (seq_lens' shape " +
                        seq.shape_string() + (all ? " + [dcp_size])" : ")"));
  for (int d = 0; d < seq.ndim(); ++d) out.expect_out_size(d, seq.size(d));
  if (all) out.expect_out_size(seq.ndim(), size);
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_get_dcp_local_seq_lens(const cattn_dcp_local_seq_lens_args_t* args) {
  constexpr const char* fn = "cattn_get_dcp_local_seq_lens";
  return cattn::guarded(fn, [&] {
    // A 1.0 struct or a 1.1 (or newer) one; a size in between is no version's.
    cattn::require_struct(fn, "args", args);
    const bool v11 = cattn::has_newest(args);
    const int64_t mode = v11 ? args->shape_mode : int64_t{CATTN_DCP_SHAPE_SQUEEZE};
    if (mode != CATTN_DCP_SHAPE_SQUEEZE && mode != CATTN_DCP_SHAPE_PRESERVE)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->shape_mode", "is not a known value",
                      std::to_string(mode),
                      "CATTN_DCP_SHAPE_SQUEEZE (0) or CATTN_DCP_SHAPE_PRESERVE (1)");
    const bool nd = mode == CATTN_DCP_SHAPE_PRESERVE;
    const cattn::TensorArg seq(fn, "args->seq_lens", args->seq_lens, cattn::Use::In);
    const cattn::TensorArg out(fn, "args->out", args->out, cattn::Use::Out);
    if (!nd) seq.expect_ndim(1);
    seq.expect_index_dtype();
    out.expect_index_dtype().expect_writable();

    const int64_t size = args->dcp_size, rank = args->dcp_rank;
    const int64_t interleave = args->dcp_kv_cache_interleave_size;
    cattn::check_dcp_params(fn, "args->", size, rank, interleave);

    const bool all = rank == CATTN_DCP_ALL_RANKS;
    if (nd)
      check_dcp_out_nd(out, seq, size, all);
    else
      cattn::check_dcp_out(out, seq.size(0), size, all);

    const cattn::Where where = cattn::require_same_device(fn, {&seq, &out});
    // Element b of a one-rank out depends on seq_lens[b] alone, so writing over the very same
    // view is safe (on the device one thread reads and writes it); any other overlap would
    // clobber lengths not yet read.
    cattn::allow_in_place(out, seq);
    cattn::seal_arguments();
    // Every mode walks seq_lens' dimensions; out's first seq.ndim() dimensions follow them and
    // its rank column, when there is one, is the last (a 1.0 [B] out of a group of 1 has none).
    const bool column = out.ndim() > seq.ndim();
    const int64_t col_step = column ? out.stride(out.ndim() - 1) : 0;
    const int64_t ranks = all ? size : 1;
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else if (nd)
        cattn::get_dcp_local_seq_lens_nd_device(fn, seq, size, all ? -1 : rank, ranks, interleave,
                                                out, args->stream);
      else
        cattn::get_dcp_local_seq_lens_device(fn, seq, size, all ? -1 : rank, interleave, out,
                                             args->stream);
      return;
    }
    cattn::check_dcp_seq_lens_host(fn, seq);
    cattn::get_dcp_local_seq_lens_host(seq, size, all ? 0 : rank, ranks, interleave, out,
                                       col_step);
  });
}

}  // extern "C"
