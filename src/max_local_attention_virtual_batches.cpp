// SPDX-License-Identifier: Apache-2.0
// max_local_attention_virtual_batches: vLLM's upper bound on the virtual batches of a step,
// computed without overflow. Pure arithmetic, so there is no host/device split.
#include <cstdint>
#include <limits>
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t saturating_add(int64_t a, int64_t b) {  // a, b >= 0
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

void require_nonnegative(const char* fn, const char* arg, int64_t v, int64_t lowest) {
  if (v < lowest)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, v < 0 ? "is negative" : "is out of range",
                    std::to_string(v), ">= " + std::to_string(lowest));
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_max_local_attention_virtual_batches(
    cattn_max_local_attention_virtual_batches_args_t* args) {
  constexpr const char* fn = "cattn_max_local_attention_virtual_batches";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const int64_t chunk = args->attn_chunk_size, seqs = args->max_num_seqs,
                  tokens = args->max_num_batched_tokens;
    require_nonnegative(fn, "args->attn_chunk_size", chunk, 1);
    require_nonnegative(fn, "args->max_num_seqs", seqs, 0);
    require_nonnegative(fn, "args->max_num_batched_tokens", tokens, 0);
    // ceil(tokens / chunk) without forming tokens + chunk - 1. A saturated first term only ever
    // exceeds the cap it is compared with, since both results are capped by values that fit.
    const int64_t chunks = tokens / chunk + (tokens % chunk != 0 ? 1 : 0);
    const int64_t spans = saturating_add(saturating_add(seqs, seqs), chunks);
    args->bound = min64(spans, tokens);
    args->bound_with_empty_rows = min64(spans, saturating_add(tokens, seqs));
  });
}

}  // extern "C"
