// SPDX-License-Identifier: Apache-2.0
// The reorder of a persistent batch into decode -> short extend -> long extend -> prefill
// (vLLM reorder_batch_to_split_decodes_and_prefills), returned as a plan the engine applies.
// Entry point: argument checks and dispatch; the algorithm is in
// host/reorder_batch_to_split_decodes_and_prefills_host.cpp.
#include <climits>
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "host/reorder_batch_to_split_decodes_and_prefills_host.h"

extern "C" {

CATTN_API cattn_status_t cattn_reorder_batch_to_split_decodes_and_prefills(
    cattn_reorder_batch_args_t* args) {
  constexpr const char* fn = "cattn_reorder_batch_to_split_decodes_and_prefills";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg s(fn, "args->num_scheduled_tokens", args->num_scheduled_tokens,
                             cattn::Use::In);
    const cattn::TensorArg c(fn, "args->num_computed_tokens", args->num_computed_tokens,
                             cattn::Use::In);
    const cattn::TensorArg p(fn, "args->num_prompt_tokens", args->num_prompt_tokens,
                             cattn::Use::In);
    const cattn::TensorArg map(fn, "args->index_map", args->index_map, cattn::Use::Out);
    const cattn::TensorArg swaps(fn, "args->swaps", args->swaps, cattn::Use::Out, true);
    s.expect_ndim(1).expect_index_dtype().expect_host();
    const int64_t B = s.size(0);
    c.expect_ndim(1).expect_size(0, B).expect_index_dtype().expect_host();
    p.expect_ndim(1).expect_size(0, B).expect_index_dtype().expect_host();
    map.expect_ndim(1).expect_index_dtype().expect_host().expect_writable().expect_out_size(0, B);
    if (!map.is_int64() && B > (int64_t{1} << 28))
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->index_map",
                      "is int32 for a batch too large for its working values",
                      std::to_string(B) + " requests", "int64, or at most 268435456 requests");
    const int64_t max_swaps = B > 0 ? B - 1 : 0;
    if (swaps.present()) {
      swaps.expect_ndim(2).expect_size(1, 2).expect_index_dtype().expect_host()
          .expect_writable();
      if (swaps.size(0) < max_swaps)
        cattn::fail_arg(CATTN_INSUFFICIENT_SIZE, fn, "args->swaps", "has too few rows",
                        swaps.shape_string(), ">= " + std::to_string(max_swaps) + " rows");
    }
    if (args->decode_threshold < 0 || args->decode_threshold > INT32_MAX)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->decode_threshold", "is out of range",
                      std::to_string(args->decode_threshold), "0..2147483647");
    if (args->reserved0 != 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->reserved0", "is not 0",
                      std::to_string(args->reserved0), "0");
    // The index map is read back while it is written, and swaps after it: neither may share
    // memory with an input or with the other.
    cattn::seal_arguments();
    const cattn::ReorderResult r = cattn::reorder_batch_to_split_decodes_and_prefills_host(
        s, c, p, args->decode_threshold, map, swaps);
    args->changed = r.changed ? 1 : 0;
    args->num_swaps = r.num_swaps;
    args->num_decodes = r.counts[0];
    args->num_short_extends = r.counts[1];
    args->num_long_extends = r.counts[2];
    args->num_prefills = r.counts[3];
  });
}

}  // extern "C"
