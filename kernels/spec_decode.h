/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of EAGLE's speculative-decoding metadata (vLLM's spec_decode/utils.py):
// one small kernel per call (kernels/spec_decode.cu). The kernels never read or write out of
// bounds whatever the values; what they write instead is the header's and
// docs/api/spec_decode.md's "device" wording.
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

// A strided view of one-byte flags (bool, uint8 or int8): nonzero is set. Absent: data null.
struct FlagSpan {
  const uint8_t* data = nullptr;
  int64_t size = 0, step = 1;
};
struct MutFlagSpan {
  uint8_t* data = nullptr;
  int64_t size = 0, step = 1;
};

// cattn_eagle_step_update_slot_mapping_and_metadata: one thread per slot-mapping entry.
struct EagleStepParams {
  IndexSpan positions;        // [B]
  IndexMatrix block_table;    // [B, W], W >= 1
  MutIndexSpan seq_lens;      // [B], in place unless seq_lens_in is present
  IndexSpan seq_lens_in;      // [B] or absent (the step plan's separate input)
  MutIndexSpan clamped;       // [>= B]
  MutIndexSpan slots;         // [>= input_batch_size] int64
  int64_t rows = 0;           // B
  int64_t input_batch_size = 0;
  int64_t block_size = 1, max_model_len = 1;
};
int launch_eagle_step_update_slot_mapping_and_metadata(const EagleStepParams& p,
                                                       const DeviceShape& dev, void* stream);

// cattn_eagle_prepare_inputs_padded: one thread per request.
struct EaglePrepareInputsParams {
  IndexSpan cu_num_draft_tokens;  // [B] inclusive
  IndexSpan valid_count;          // [B]
  IndexSpan query_start_loc;      // [>= B + 1]
  MutIndexSpan token_indices;     // [>= B]
  MutIndexSpan num_rejected;      // [>= B]
  int64_t rows = 0;
};
int launch_eagle_prepare_inputs_padded(const EaglePrepareInputsParams& p, const DeviceShape& dev,
                                       void* stream);

// cattn_eagle_prepare_next_token_padded: one thread per request.
struct EagleNextTokenParams {
  IndexMatrix sampled;        // [B, S]
  FlagSpan discard;           // [B] or absent
  IndexSpan backup;           // [B]
  MutIndexSpan next_tokens;   // [>= B]
  MutIndexSpan valid_count;   // [>= B]
  int64_t rows = 0;
  int64_t vocab_size = 0;
};
int launch_eagle_prepare_next_token_padded(const EagleNextTokenParams& p, const DeviceShape& dev,
                                           void* stream);

// cattn_compute_new_slot_mapping: one thread per token; its request by a binary search over
// the extended starts `qsl[r] - qsl[0] + r * N`.
struct NewSlotMappingParams {
  IndexSpan query_start_loc;  // [B + 1]
  IndexMatrix block_table;    // [B, W]
  IndexSpan positions;        // [n]
  FlagSpan rejected;          // [n] or absent
  MutIndexSpan slots;         // [>= n] int64; [0, n) written
  int64_t rows = 0;           // B
  int64_t block_size = 1, num_new_tokens = 0, max_model_len = 1;
};
int launch_compute_new_slot_mapping(const NewSlotMappingParams& p, const DeviceShape& dev,
                                    void* stream);

// cattn_copy_and_expand_eagle_inputs: a warp per request, its lanes over the request's output
// tokens.
struct CopyExpandParams {
  IndexSpan target_ids;       // [T]
  IndexSpan target_positions; // [T']
  IndexSpan next_ids;         // [B]
  IndexSpan query_start_loc;  // [B + 1]
  IndexSpan query_end_loc;    // [B]
  MutIndexSpan input_ids, positions;  // [>= n_out]
  MutFlagSpan rejected, masked;       // [>= n_out] or absent
  MutIndexSpan new_token_indices;     // [>= B * P] or absent
  MutIndexSpan hidden_map;            // [>= qsl[B]] or absent
  int64_t rows = 0;           // B
  int64_t pad_id = 0, parallel_id = 0;
  int64_t slots_per_request = 1;  // P
  int64_t max_tokens = 0;     // 0: no limit
  int64_t span = 0;           // the largest output or target length: query_start_loc's cap
  bool shift = false;
};
int launch_copy_and_expand_eagle_inputs(const CopyExpandParams& p, const DeviceShape& dev,
                                        void* stream);

// cattn_update_num_computed_tokens_for_batch_change: one block; the new counts are staged in
// shared memory, so a row reads every other row's count before any is rewritten.
constexpr int64_t kBatchChangeMaxRows = 8192;
struct BatchChangeParams {
  MutIndexSpan num_computed;  // [M], in place unless computed_in is present ([0, n) written)
  MutIndexSpan num_accepted;  // [n], in place unless accepted_in is present
  IndexSpan computed_in;      // [M] or absent (the step plan's separate inputs)
  IndexSpan accepted_in;      // [n] or absent
  IndexSpan prev_positions;   // [n]
  IndexSpan valid_count;      // [n_prev]
  IndexSpan prev_drafts;      // [n_prev]
  IndexSpan cpu_num_computed; // [n]
  int64_t rows = 0;           // n <= kBatchChangeMaxRows
};
int launch_update_num_computed_tokens_for_batch_change(const BatchChangeParams& p,
                                                       const DeviceShape& dev, void* stream);

// The drafter chain of the step plan (CATTN_STEP_DRAFT_NEXT_TOKEN to
// CATTN_STEP_DRAFT_SLOT_MAPPING): a warp per request of the verified batch computes its next
// token and valid count, then (prepare) its rejected count and token to sample, then (expand)
// its drafter tokens, then (slot_mapping) their slots, each from the link before it, so the
// requests never wait for one another. A link not selected leaves its outputs absent.
struct DraftChainParams {
  // Next token (cattn_eagle_prepare_next_token_padded).
  IndexMatrix sampled;         // [B, S]
  FlagSpan discard;            // [B] or absent
  IndexSpan backup;            // [B]
  MutIndexSpan next_tokens;    // [>= B]
  MutIndexSpan valid_count;    // [>= B] or absent
  // Prepare inputs (cattn_eagle_prepare_inputs_padded).
  IndexSpan cu_num_draft_tokens;  // [B]
  IndexSpan query_start_loc;      // [B + 1]
  MutIndexSpan token_indices;     // [>= B]
  MutIndexSpan num_rejected;      // [>= B] or absent
  // Expand (cattn_copy_and_expand_eagle_inputs, query_end_loc = qsl[i + 1] - 1 - rejected).
  IndexSpan target_ids, target_positions;
  MutIndexSpan input_ids, positions;  // tokens
  MutFlagSpan rejected, masked;       // tokens, or absent
  MutIndexSpan new_token_indices;     // [>= B * P] or absent
  MutIndexSpan hidden_map;            // [>= qsl[B]] or absent
  // Slot mapping (cattn_compute_new_slot_mapping, N = P - shift).
  IndexMatrix block_table;  // [B, W]
  MutIndexSpan slots;       // tokens, int64
  int64_t rows = 0;         // B
  int64_t vocab_size = 1;
  int64_t pad_id = 0, parallel_id = 0, slots_per_request = 1, max_tokens = 0;
  int64_t span = 0;  // query_start_loc's clamp: the largest token output or target length
  int64_t block_size = 1, max_model_len = 1;
  bool shift = false;
  bool prepare = false, expand = false, slot_mapping = false;
};

}  // namespace kernels
}  // namespace cattn
