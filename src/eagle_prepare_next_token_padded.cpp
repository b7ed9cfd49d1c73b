// SPDX-License-Identifier: Apache-2.0
// The next tokens and valid counts after rejection sampling (vLLM's
// eagle_prepare_next_token_padded). Entry point: argument checks and dispatch; the algorithm is
// host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_eagle_prepare_next_token_padded(
    const cattn_eagle_prepare_next_token_padded_args_t* args) {
  constexpr const char* fn = "cattn_eagle_prepare_next_token_padded";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::expect_at_least(fn, "args->vocab_size", args->vocab_size, 1);
    const TensorArg sampled(fn, "args->sampled_token_ids", args->sampled_token_ids, Use::In);
    const TensorArg discard(fn, "args->discard_request_mask", args->discard_request_mask,
                            Use::In, true);
    const TensorArg backup(fn, "args->backup_next_token_ids", args->backup_next_token_ids,
                           Use::In);
    const TensorArg next(fn, "args->next_token_ids", args->next_token_ids, Use::Out);
    const TensorArg valid(fn, "args->valid_sampled_tokens_count",
                          args->valid_sampled_tokens_count, Use::Out);
    // Every column of a row is read where one value per row is written: a broadcast view is
    // bounded.
    sampled.expect_ndim(2).expect_index_dtype().expect_scan_bounded();
    const int64_t B = sampled.size(0);
    if (discard.present()) cattn::expect_flags(discard, B);
    cattn::expect_index_vector(backup, B);
    cattn::expect_index_output(next, B);
    cattn::expect_index_output(valid, B);
    const cattn::Where where =
        cattn::require_same_device(fn, {&sampled, &discard, &backup, &next, &valid});
    cattn::seal_arguments();
    const cattn::EagleNextTokenTensors t{&sampled, &discard, &backup, &next, &valid, B,
                                         args->vocab_size};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::eagle_next_token_device(fn, t, args->stream);
      return;
    }
    cattn::eagle_next_token_host(fn, t);
  });
}

}  // extern "C"
