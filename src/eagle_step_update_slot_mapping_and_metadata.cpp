// SPDX-License-Identifier: Apache-2.0
// One EAGLE drafting step's positions, slots and seq_lens (vLLM's
// eagle_step_update_slot_mapping_and_metadata). Entry point: argument checks and dispatch; the
// algorithm is host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_eagle_step_update_slot_mapping_and_metadata(
    const cattn_eagle_step_update_slot_mapping_and_metadata_args_t* args) {
  constexpr const char* fn = "cattn_eagle_step_update_slot_mapping_and_metadata";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::expect_at_least(fn, "args->block_size", args->block_size, 1);
    cattn::expect_at_least(fn, "args->max_model_len", args->max_model_len, 1);
    const TensorArg pos(fn, "args->positions", args->positions, Use::In);
    const TensorArg table(fn, "args->block_table", args->block_table, Use::In);
    const TensorArg seq(fn, "args->seq_lens", args->seq_lens, Use::Out);
    const TensorArg clamped(fn, "args->out_clamped_positions", args->out_clamped_positions,
                            Use::Out);
    const TensorArg slots(fn, "args->out_slot_mapping", args->out_slot_mapping, Use::Out);
    pos.expect_ndim(1).expect_index_dtype();
    const int64_t B = pos.size(0);
    table.expect_ndim(2).expect_index_dtype().expect_size(0, B);
    if (B > 0 && table.size(1) < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, table.name(), "has no column",
                      table.shape_string(), "[B, W >= 1]");
    seq.expect_ndim(1).expect_index_dtype().expect_writable().expect_size(0, B);
    cattn::expect_index_output(clamped, B);
    const int64_t ibs = args->input_batch_size == 0 ? B : args->input_batch_size;
    if (ibs < B)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->input_batch_size", "is below the batch",
                      std::to_string(args->input_batch_size),
                      "0 (= B) or at least B = " + std::to_string(B));
    cattn::expect_slot_output(slots, ibs);
    const cattn::Where where =
        cattn::require_same_device(fn, {&pos, &table, &seq, &clamped, &slots});
    // Row i reads positions[i] before it writes out_clamped_positions[i]: the very view is safe.
    cattn::allow_in_place(clamped, pos);
    cattn::seal_arguments();
    const cattn::EagleStepTensors t{&pos, &table, &seq, &clamped, &slots, B, ibs,
                                    args->block_size, args->max_model_len};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::eagle_step_device(fn, t, args->stream);
      return;
    }
    cattn::eagle_step_host(fn, t);
  });
}

}  // extern "C"
