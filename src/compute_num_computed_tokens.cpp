// SPDX-License-Identifier: Apache-2.0
// Computed tokens of the metadata (vLLM CommonAttentionMetadata.compute_num_computed_tokens):
// seq_lens minus the query lengths. The checks and dispatch are naive_query_lens's
// (src/naive_query_lens.cpp). vLLM caches the result in the metadata object; libcattn keeps no
// cache.
#include "common/error.h"
#include "common/query_lens_entry.h"

extern "C" {

CATTN_API cattn_status_t cattn_compute_num_computed_tokens(
    const cattn_compute_num_computed_tokens_args_t* args) {
  constexpr const char* fn = "cattn_compute_num_computed_tokens";
  return cattn::guarded(fn, [&] { cattn::run_query_lens(fn, args, true); });
}

}  // extern "C"
