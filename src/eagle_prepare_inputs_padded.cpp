// SPDX-License-Identifier: Apache-2.0
// The tokens to sample and the rejected counts of a verified batch (vLLM's
// eagle_prepare_inputs_padded). Entry point: argument checks and dispatch; the algorithm is
// host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_eagle_prepare_inputs_padded(
    const cattn_eagle_prepare_inputs_padded_args_t* args) {
  constexpr const char* fn = "cattn_eagle_prepare_inputs_padded";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    const TensorArg cu(fn, "args->cu_num_draft_tokens", args->cu_num_draft_tokens, Use::In);
    const TensorArg valid(fn, "args->valid_sampled_tokens_count",
                          args->valid_sampled_tokens_count, Use::In);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg idx(fn, "args->token_indices_to_sample", args->token_indices_to_sample,
                        Use::Out);
    const TensorArg rej(fn, "args->num_rejected_tokens", args->num_rejected_tokens, Use::Out);
    cu.expect_ndim(1).expect_index_dtype();
    const int64_t B = cu.size(0);
    cattn::expect_index_vector(valid, B);
    qsl.expect_ndim(1).expect_index_dtype();
    if (qsl.size(0) - 1 < B)  // (B + 1 could overflow for a broadcast cu_num_draft_tokens)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is shorter than the batch",
                      qsl.shape_string(), "at least B + 1 entries, B = " + std::to_string(B));
    cattn::expect_index_output(idx, B);
    cattn::expect_index_output(rej, B);
    const cattn::Where where = cattn::require_same_device(fn, {&cu, &valid, &qsl, &idx, &rej});
    cattn::seal_arguments();
    const cattn::EaglePrepareInputsTensors t{&cu, &valid, &qsl, &idx, &rej, B};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::eagle_prepare_inputs_device(fn, t, args->stream);
      return;
    }
    cattn::eagle_prepare_inputs_host(fn, t);
  });
}

}  // extern "C"
