// SPDX-License-Identifier: Apache-2.0
// The slots of a batch whose requests each grew by N tokens, rejected tokens masked (vLLM's
// compute_new_slot_mapping). Entry point: argument checks and dispatch; the algorithm is
// host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_compute_new_slot_mapping(
    const cattn_compute_new_slot_mapping_args_t* args) {
  constexpr const char* fn = "cattn_compute_new_slot_mapping";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::expect_at_least(fn, "args->block_size", args->block_size, 1);
    cattn::expect_at_least(fn, "args->num_new_tokens", args->num_new_tokens, 0);
    cattn::expect_at_least(fn, "args->max_model_len", args->max_model_len, 1);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg table(fn, "args->block_table", args->block_table, Use::In);
    const TensorArg pos(fn, "args->new_positions", args->new_positions, Use::In);
    const TensorArg rej(fn, "args->is_rejected_token_mask", args->is_rejected_token_mask,
                        Use::In, true);
    const TensorArg out(fn, "args->new_slot_mapping", args->new_slot_mapping, Use::Out);
    // B from query_start_loc (read in full, so bounded), never B + 1 from the table's rows.
    const int64_t B = cattn::expect_query_start_loc(qsl);
    table.expect_ndim(2).expect_index_dtype().expect_size(0, B);
    pos.expect_ndim(1).expect_index_dtype();
    const int64_t n = pos.size(0);
    if (rej.present()) cattn::expect_flags(rej, n);
    cattn::expect_slot_output(out, n);
    const cattn::Where where = cattn::require_same_device(fn, {&qsl, &table, &pos, &rej, &out});
    cattn::seal_arguments();
    const cattn::NewSlotMappingTensors t{&qsl, &table, &pos, &rej, &out, B, args->block_size,
                                        args->num_new_tokens, args->max_model_len};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::new_slot_mapping_device(fn, t, args->stream);
      return;
    }
    cattn::new_slot_mapping_host(fn, t);
  });
}

}  // extern "C"
