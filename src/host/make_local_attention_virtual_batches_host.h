/* SPDX-License-Identifier: Apache-2.0 */
// The plan of make_local_attention_virtual_batches: everything vLLM's function returns, kept
// per virtual batch so that the metadata can be written (and a new block table gathered, the
// seed's make_block_table closure) any number of times without redoing the split.
#pragma once

#include <cstdint>
#include <vector>

#include "common/handle_registry.h"
#include "common/tensor_arg.h"

struct cattn_local_attention_plan_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::LocalAttentionPlan);
  int64_t batch = 0;            // B: the block tables gathered from have B rows
  int64_t virtual_batches = 0;  // V
  int64_t pages = 0;            // P = attn_chunk_size / block_size: pages per virtual batch
  int64_t cols = 0;             // the block table's column count at plan time: vLLM clips
                                // page indices to cols - 1
  int64_t num_actual_tokens = 0;
  int64_t max_query_len = 0;    // max over virtual batches of the query length
  int64_t max_seq_len = 0;      // max over virtual batches of the key length
  int64_t max_computed = 0;     // max of num_computed_tokens, for the output range check
  std::vector<int64_t> cu_seqlens_q;  // [V + 1]
  std::vector<int64_t> seqlens_k;     // [V]
  std::vector<int64_t> num_computed;  // [V]: seqlens_k - query length
  std::vector<int64_t> batch_index;   // [V]: the request each virtual batch belongs to
  std::vector<int64_t> block_start;   // [V]: first page column, >= 0
};

namespace cattn {

using LocalAttentionPlan = cattn_local_attention_plan_s;

// Validates the host mirrors (non-decreasing query_start_loc_cpu, seq_len >= query length,
// sums within int64) and counts the virtual batches, reading every element once and
// allocating nothing; chunk/block sizes and shapes are already checked.
int64_t count_local_attention_host(const char* fn, int64_t attn_chunk_size,
                                   const TensorArg& query_start_loc_cpu,
                                   const TensorArg& seq_lens_cpu);

// Host bytes a plan of `virtual_batches` holds: the object, its five per-virtual-batch arrays
// and its registry entry. Fails when that overflows.
int64_t local_attention_plan_bytes(const char* fn, int64_t virtual_batches);

// Builds the plan of `virtual_batches` (count_local_attention_host's answer): allocates its
// arrays, then reads the mirrors once more, validating them again, and fails
// (CATTN_INVALID_ARGUMENT) if they no longer give that count - the caller changed them during
// the call. No value is read twice to place a write.
void plan_local_attention_host(const char* fn, int64_t attn_chunk_size, int64_t block_size,
                               const TensorArg& query_start_loc_cpu,
                               const TensorArg& seq_lens_cpu, int64_t virtual_batches,
                               LocalAttentionPlan& plan);

// Writes a plan's per-virtual-batch vectors; `optional` outputs may be absent.
void write_local_attention_metadata_host(const LocalAttentionPlan& plan,
                                         const TensorArg& query_start_loc_cpu,
                                         const TensorArg& seq_lens_cpu,
                                         const TensorArg& num_computed_tokens_cpu,
                                         const TensorArg& query_start_loc_optional,
                                         const TensorArg& seq_lens_optional);

// out[v, p] = block_table[batch(v), min(start(v) + p, cols - 1)]; same dtype, validated shapes.
void gather_local_block_table_host(const LocalAttentionPlan& plan, const TensorArg& block_table,
                                   const TensorArg& out);

}  // namespace cattn
