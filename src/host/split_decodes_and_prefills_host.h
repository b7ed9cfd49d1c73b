/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "cattn.h"

#include "common/tensor_arg.h"

namespace cattn {

// The batch as split_decodes_and_prefills and split_decodes_prefills_and_extends read it:
// query_start_loc of B + 1 entries and the metadata's scalars, already checked.
struct SplitBatch {
  IndexReader qsl;
  bool qsl_i64 = false;  // q[i] wraps in query_start_loc's dtype, as vLLM's tensors do
  int64_t num_reqs = 0;
  int64_t num_tokens = 0;
  int64_t max_query_len = 0;
  int64_t threshold = 1;
};

// One byte per request, nonzero = still prefilling (absent: p == nullptr).
struct FlagReader {
  const char* p = nullptr;
  int64_t step = 0;
  bool operator[](int64_t i) const { return p[i * step] != 0; }
};

// Replaces a num_tokens of CATTN_FROM_QUERY_START_LOC with query_start_loc[B], and such a
// max_query_len with the largest query length (in the tensor's width; 0 when B = 0).
void derive_unset_split_counts(SplitBatch& b);

// vLLM's split_decodes_and_prefills: {num_decodes, num_prefills, num_decode_tokens,
// num_prefill_tokens}. Fails where vLLM raises (B = 0 past the first step, is_prefilling
// absent when it is read) and on an int64 overflow.
void split_decodes_and_prefills_host(const char* fn, const SplitBatch& b, bool require_uniform,
                                     bool treat_short_extends_as_decodes,
                                     const FlagReader& is_prefilling, int64_t out[4]);

// vLLM's split_decodes_prefills_and_extends: {num_decodes, num_extends, num_prefills,
// num_decode_tokens, num_extend_tokens, num_prefill_tokens}. `upper_bound` absent
// (upper_bound_present false) fails past the first step, as vLLM's assert.
void split_decodes_prefills_and_extends_host(const char* fn, const SplitBatch& b,
                                             const IndexReader& upper_bound,
                                             bool upper_bound_present, int64_t out[6]);

}  // namespace cattn
