/* SPDX-License-Identifier: Apache-2.0 */
// EAGLE's speculative-decoding metadata (cattn_eagle_* and siblings): each call's checked
// tensors as one set, shared by its entry point (src/<name>.cpp), the host algorithm
// (host/spec_decode_host.cpp) and the device side (device/spec_decode_device.cpp).
#pragma once

#include <cstdint>

#include "cattn.h"
#include "common/param_checks.h"
#include "common/tensor_arg.h"

namespace cattn {

// The largest num_padding_slots_per_request: a request's output tokens are looped over, and
// vLLM's P is the number of speculative tokens (a handful).
constexpr int64_t kMaxPaddingSlotsPerRequest = int64_t{1} << 16;


struct EagleStepTensors {
  const TensorArg *positions, *table, *seq_lens, *clamped, *slots;
  int64_t rows, input_batch_size, block_size, max_model_len;
};
struct EaglePrepareInputsTensors {
  const TensorArg *cu_num_draft_tokens, *valid_count, *query_start_loc, *token_indices,
      *num_rejected;
  int64_t rows;
};
struct EagleNextTokenTensors {
  const TensorArg *sampled, *discard, *backup, *next_tokens, *valid_count;  // discard optional
  int64_t rows, vocab_size;
};
struct NewSlotMappingTensors {
  const TensorArg *query_start_loc, *table, *positions, *rejected, *slots;  // rejected optional
  int64_t rows, block_size, num_new_tokens, max_model_len;
};
struct CopyExpandTensors {
  const TensorArg *target_ids, *target_positions, *next_ids, *query_start_loc, *query_end_loc;
  const TensorArg *input_ids, *positions;
  const TensorArg *rejected, *masked, *new_token_indices, *hidden_map;  // optional
  int64_t rows, pad_id, parallel_id, slots_per_request, max_tokens;
  bool shift;
};
struct BatchChangeTensors {
  const TensorArg *num_computed, *num_accepted, *prev_positions, *valid_count, *prev_drafts,
      *cpu_num_computed;
  int64_t rows;
};

// Host algorithms (host/spec_decode_host.cpp): each checks every value first and refuses one
// out of range (CATTN_INVALID_ARGUMENT, CATTN_INSUFFICIENT_SIZE) before writing anything.
void eagle_step_host(const char* fn, const EagleStepTensors& t);
void eagle_prepare_inputs_host(const char* fn, const EaglePrepareInputsTensors& t);
void eagle_next_token_host(const char* fn, const EagleNextTokenTensors& t);
void new_slot_mapping_host(const char* fn, const NewSlotMappingTensors& t);
void copy_and_expand_host(const char* fn, const CopyExpandTensors& t);
void batch_change_host(const char* fn, const BatchChangeTensors& t);

// Device sides (device/spec_decode_device.cpp): one kernel each on `stream`. CUDA builds only.
void eagle_step_device(const char* fn, const EagleStepTensors& t, void* stream);
void eagle_prepare_inputs_device(const char* fn, const EaglePrepareInputsTensors& t,
                                 void* stream);
void eagle_next_token_device(const char* fn, const EagleNextTokenTensors& t, void* stream);
void new_slot_mapping_device(const char* fn, const NewSlotMappingTensors& t, void* stream);
void copy_and_expand_device(const char* fn, const CopyExpandTensors& t, void* stream);
void batch_change_device(const char* fn, const BatchChangeTensors& t, void* stream);

}  // namespace cattn
