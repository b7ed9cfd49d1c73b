/* SPDX-License-Identifier: Apache-2.0 */
// Checks a utility's entry point and the step plan share, so both refuse the same values with
// the same messages. For the host parameters, `prefix` is how the caller's struct appears in
// the message ("args->", "desc->dcp."); each check names prefix + the field. The tensor checks
// name the tensors as their TensorArgs do.
#pragma once

#include <cstdint>
#include <string>

#include "common/tensor_arg.h"

namespace cattn {

// dcp_size >= 1, dcp_kv_cache_interleave_size >= 1 with their product <= INT32_MAX, dcp_rank in
// [0, dcp_size) or CATTN_DCP_ALL_RANKS.
void check_dcp_params(const char* fn, const char* prefix, int64_t dcp_size, int64_t dcp_rank,
                      int64_t dcp_kv_cache_interleave_size);

// A known mamba_cache_mode and reserved0 == 0; for ALIGN also block_size >= 1 and
// num_speculative_blocks >= 0. Returns the columns ALIGN selects (1 + num_speculative_blocks),
// 0 for the copy modes.
int64_t check_mamba_params(const char* fn, const char* prefix, int32_t mamba_cache_mode,
                           int32_t reserved0, int64_t block_size, int64_t num_speculative_blocks);

// A parameter at least `min` (CATTN_INVALID_ARGUMENT naming it, prefix + field, otherwise; the
// name is only formed on failure: a call that succeeds allocates nothing, promise 8).
void expect_at_least(const char* fn, const char* name, int64_t v, int64_t min);
void expect_at_least(const char* fn, const char* prefix, const char* field, int64_t v,
                     int64_t min);

// A 1-D tensor of one-byte flags (bool, uint8 or int8) of n entries (an output: at least n,
// writable).
void expect_flags(const TensorArg& t, int64_t n);
void expect_flags_output(const TensorArg& t, int64_t n);
// A slot-mapping output: 1-D int64 (slots pass 2^31), writable, at least n entries.
void expect_slot_output(const TensorArg& t, int64_t n);
// Host read of flag i (nonzero = set); an absent tensor reads as unset.
bool flag_at(const TensorArg* t, int64_t i);

// block_m >= 1.
void check_block_m(const char* fn, const char* prefix, int64_t block_m);

// attn_chunk_size >= 1, block_size >= 1 dividing it.
void check_local_attention_sizes(const char* fn, const char* prefix, int64_t attn_chunk_size,
                                 int64_t block_size);

// n >= 0.
void check_extend_n(const char* fn, const char* prefix, int64_t n);

// The lengths' output: [B] for one rank, [B, dcp_size] for all (vLLM squeezes the rank
// dimension away when it has size 1, so all the ranks of a size-1 group give [B]; [B, 1] is
// accepted for it as well).
void check_dcp_out(const TensorArg& out, int64_t batch, int64_t dcp_size, bool all_ranks);

// The device-computed causal-conv1d metadata's outputs (nums, mlist, offsetlist, batch_ptr,
// token_chunk_offset_ptr; then tot), any of them absent: 1-D int32/int64 outputs, nums of
// `batch` entries, tot of one.
void check_causal_conv1d_device_outputs(const TensorArg* const (&outs)[5], const TensorArg& tot,
                                        int64_t batch);

// The tensors of the device-computed local-attention virtual batches.
struct LocalAttentionCapturableTensors {
  const TensorArg& query_start_loc;  // [B + 1]
  const TensorArg& seq_lens;         // [B]
  const TensorArg& block_table;      // [B, cols >= 1]
  const TensorArg& query_start_loc_out;      // [capacity + 1]
  const TensorArg& seq_lens_out;             // [capacity]
  const TensorArg& num_computed_tokens_out;  // [capacity], may be absent
  const TensorArg& block_table_out;          // [capacity, pages], may be absent
};

// Shapes and dtypes of the inputs (their batch sizes agreeing) and of the outputs (one
// capacity, pages columns, block_table_out in block_table's dtype). Returns the capacity.
int64_t check_local_attention_capturable_tensors(const LocalAttentionCapturableTensors& t,
                                                 int64_t pages);

}  // namespace cattn
