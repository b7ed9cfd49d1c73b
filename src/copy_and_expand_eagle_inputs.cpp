// SPDX-License-Identifier: Apache-2.0
// The drafter's inputs from a verified batch, with parallel-drafting slots (vLLM's
// copy_and_expand_eagle_inputs). Entry point: argument checks and dispatch; the algorithm is
// host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include <string>

#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_copy_and_expand_eagle_inputs(
    const cattn_copy_and_expand_eagle_inputs_args_t* args) {
  constexpr const char* fn = "cattn_copy_and_expand_eagle_inputs";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::require_reserved_zero(fn, "args->reserved0", args->reserved0);
    const int64_t P = args->num_padding_slots_per_request;
    if (P < 1 || P > cattn::kMaxPaddingSlotsPerRequest)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_padding_slots_per_request",
                      "is out of range", std::to_string(P),
                      "in [1, " + std::to_string(cattn::kMaxPaddingSlotsPerRequest) + "]");
    if (args->shift_input_ids != 0 && args->shift_input_ids != 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->shift_input_ids", "is not 0 or 1",
                      std::to_string(args->shift_input_ids), "0 or 1");
    cattn::expect_at_least(fn, "args->max_tokens_per_request", args->max_tokens_per_request, 0);
    const TensorArg ids(fn, "args->target_token_ids", args->target_token_ids, Use::In);
    const TensorArg tpos(fn, "args->target_positions", args->target_positions, Use::In);
    const TensorArg next(fn, "args->next_token_ids", args->next_token_ids, Use::In);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg qel(fn, "args->query_end_loc", args->query_end_loc, Use::In);
    const TensorArg out_ids(fn, "args->out_input_ids", args->out_input_ids, Use::Out);
    const TensorArg out_pos(fn, "args->out_positions", args->out_positions, Use::Out);
    const TensorArg out_rej(fn, "args->out_is_rejected_token_mask",
                            args->out_is_rejected_token_mask, Use::Out, true);
    const TensorArg out_msk(fn, "args->out_is_masked_token_mask", args->out_is_masked_token_mask,
                            Use::Out, true);
    const TensorArg out_new(fn, "args->out_new_token_indices", args->out_new_token_indices,
                            Use::Out, true);
    const TensorArg out_hid(fn, "args->out_hidden_state_mapping",
                            args->out_hidden_state_mapping, Use::Out, true);
    ids.expect_ndim(1).expect_index_dtype();
    tpos.expect_ndim(1).expect_index_dtype();
    // B from query_start_loc (read in full, so bounded), never B + 1 from next_token_ids.
    const int64_t B = cattn::expect_query_start_loc(qsl);
    cattn::expect_index_vector(next, B);
    cattn::expect_index_vector(qel, B);
    cattn::expect_index_output(out_ids, 0);
    cattn::expect_index_output(out_pos, 0);
    if (out_rej.present()) cattn::expect_flags_output(out_rej, 0);
    if (out_msk.present()) cattn::expect_flags_output(out_msk, 0);
    if (out_new.present())
      cattn::expect_index_output(
          out_new, cattn::checked_mul(fn, "args->out_new_token_indices: B x P", B, P));
    if (out_hid.present()) cattn::expect_index_output(out_hid, 0);
    const cattn::Where where = cattn::require_same_device(
        fn, {&ids, &tpos, &next, &qsl, &qel, &out_ids, &out_pos, &out_rej, &out_msk, &out_new,
             &out_hid});
    cattn::seal_arguments();
    const cattn::CopyExpandTensors t{&ids,     &tpos,    &next,    &qsl,
                                     &qel,     &out_ids, &out_pos, &out_rej,
                                     &out_msk, &out_new, &out_hid, B,
                                     args->padding_token_id,       args->parallel_drafting_token_id,
                                     P,        args->max_tokens_per_request,
                                     args->shift_input_ids != 0};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::copy_and_expand_device(fn, t, args->stream);
      return;
    }
    cattn::copy_and_expand_host(fn, t);
  });
}

}  // extern "C"
