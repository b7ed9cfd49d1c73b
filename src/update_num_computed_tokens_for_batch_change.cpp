// SPDX-License-Identifier: Apache-2.0
// Async scheduling's computed and accepted counts across a batch change (vLLM's
// update_num_computed_tokens_for_batch_change). Entry point: argument checks and dispatch; the
// algorithm is host/spec_decode_host.cpp and kernels/spec_decode.cu.
#include "common/error.h"
#include "common/spec_decode.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/device.h"

extern "C" {

CATTN_API cattn_status_t cattn_update_num_computed_tokens_for_batch_change(
    const cattn_update_num_computed_tokens_for_batch_change_args_t* args) {
  constexpr const char* fn = "cattn_update_num_computed_tokens_for_batch_change";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    const TensorArg nct(fn, "args->num_computed_tokens", args->num_computed_tokens, Use::Out);
    const TensorArg acc(fn, "args->num_accepted_tokens", args->num_accepted_tokens, Use::Out);
    const TensorArg prev(fn, "args->prev_positions", args->prev_positions, Use::In);
    const TensorArg valid(fn, "args->valid_sampled_token_count", args->valid_sampled_token_count,
                          Use::In);
    const TensorArg drafts(fn, "args->prev_num_draft_tokens", args->prev_num_draft_tokens,
                           Use::In);
    const TensorArg cpu(fn, "args->cpu_num_computed_tokens", args->cpu_num_computed_tokens,
                        Use::In);
    prev.expect_ndim(1).expect_index_dtype();
    const int64_t n = prev.size(0);
    nct.expect_ndim(1).expect_index_dtype().expect_writable();
    if (nct.size(0) < n)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, nct.name(), "is shorter than the batch",
                      nct.shape_string(), "at least " + std::to_string(n) + " entries");
    acc.expect_ndim(1).expect_index_dtype().expect_writable().expect_size(0, n);
    valid.expect_ndim(1).expect_index_dtype();
    cattn::expect_index_vector(drafts, valid.size(0));
    cattn::expect_index_vector(cpu, n);
    const cattn::Where where =
        cattn::require_same_device(fn, {&nct, &acc, &prev, &valid, &drafts, &cpu});
    cattn::seal_arguments();
    const cattn::BatchChangeTensors t{&nct, &acc, &prev, &valid, &drafts, &cpu, n};
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::batch_change_device(fn, t, args->stream);
      return;
    }
    cattn::batch_change_host(fn, t);
  });
}

}  // extern "C"
