// SPDX-License-Identifier: Apache-2.0
// Device side of EAGLE's speculative-decoding metadata: kernel views of the checked tensors and
// one launch per call (kernels/spec_decode.cu).
#include <algorithm>

#include "device/spec_decode_device.h"

#include "common/spec_decode.h"
#include "device/cuda_launch.h"

namespace cattn {

namespace k = kernels;

k::FlagSpan flags_of(const TensorArg* t) {
  k::FlagSpan f;
  if (!present(t)) return f;
  f.data = reinterpret_cast<const uint8_t*>(t->data());
  f.size = t->size(0), f.step = t->stride(0);
  return f;
}

k::MutFlagSpan mut_flags_of(const TensorArg* t) {
  k::MutFlagSpan f;
  if (!present(t)) return f;
  f.data = reinterpret_cast<uint8_t*>(t->data());
  f.size = t->size(0), f.step = t->stride(0);
  return f;
}

k::EagleStepParams eagle_step_params(const EagleStepTensors& t) {
  k::EagleStepParams p;
  p.positions = index_view(*t.positions);
  p.block_table = index_view(*t.table);
  p.seq_lens = index_view(*t.seq_lens);
  p.clamped = index_view(*t.clamped);
  p.slots = index_view(*t.slots);
  p.rows = t.rows, p.input_batch_size = t.input_batch_size;
  p.block_size = t.block_size, p.max_model_len = t.max_model_len;
  return p;
}

void eagle_step_device(const char* fn, const EagleStepTensors& t, void* stream) {
  DeviceScope dev(fn, *t.positions);
  check_launch(fn,
               k::launch_eagle_step_update_slot_mapping_and_metadata(eagle_step_params(t),
                                                                     dev.shape(), stream),
               stream);
}

void eagle_prepare_inputs_device(const char* fn, const EaglePrepareInputsTensors& t,
                                 void* stream) {
  DeviceScope dev(fn, *t.query_start_loc);
  k::EaglePrepareInputsParams p;
  p.cu_num_draft_tokens = index_view(*t.cu_num_draft_tokens);
  p.valid_count = index_view(*t.valid_count);
  p.query_start_loc = index_view(*t.query_start_loc);
  p.token_indices = index_view(*t.token_indices);
  p.num_rejected = index_view(*t.num_rejected);
  p.rows = t.rows;
  check_launch(fn, k::launch_eagle_prepare_inputs_padded(p, dev.shape(), stream), stream);
}

void eagle_next_token_device(const char* fn, const EagleNextTokenTensors& t, void* stream) {
  DeviceScope dev(fn, *t.backup);
  k::EagleNextTokenParams p;
  p.sampled = index_view(*t.sampled);
  p.discard = flags_of(t.discard);
  p.backup = index_view(*t.backup);
  p.next_tokens = index_view(*t.next_tokens);
  p.valid_count = index_view(*t.valid_count);
  p.rows = t.rows, p.vocab_size = t.vocab_size;
  check_launch(fn, k::launch_eagle_prepare_next_token_padded(p, dev.shape(), stream), stream);
}

void new_slot_mapping_device(const char* fn, const NewSlotMappingTensors& t, void* stream) {
  DeviceScope dev(fn, *t.query_start_loc);
  k::NewSlotMappingParams p;
  p.query_start_loc = index_view(*t.query_start_loc);
  p.block_table = index_view(*t.table);
  p.positions = index_view(*t.positions);
  p.rejected = flags_of(t.rejected);
  p.slots = index_view(*t.slots);
  p.rows = t.rows, p.block_size = t.block_size;
  p.num_new_tokens = t.num_new_tokens, p.max_model_len = t.max_model_len;
  check_launch(fn, k::launch_compute_new_slot_mapping(p, dev.shape(), stream), stream);
}

void copy_and_expand_device(const char* fn, const CopyExpandTensors& t, void* stream) {
  DeviceScope dev(fn, *t.query_start_loc);
  k::CopyExpandParams p;
  p.target_ids = index_view(*t.target_ids);
  p.target_positions = index_view(*t.target_positions);
  p.next_ids = index_view(*t.next_ids);
  p.query_start_loc = index_view(*t.query_start_loc);
  p.query_end_loc = index_view(*t.query_end_loc);
  p.input_ids = index_view(*t.input_ids);
  p.positions = index_view(*t.positions);
  p.rejected = mut_flags_of(t.rejected);
  p.masked = mut_flags_of(t.masked);
  p.new_token_indices = mut_view_of(t.new_token_indices);
  if (t.shift) p.hidden_map = mut_view_of(t.hidden_map);
  p.rows = t.rows, p.pad_id = t.pad_id, p.parallel_id = t.parallel_id;
  p.slots_per_request = t.slots_per_request, p.max_tokens = t.max_tokens, p.shift = t.shift;
  p.span = std::max({t.input_ids->size(0), t.positions->size(0), t.target_ids->size(0),
                     present(t.hidden_map) ? t.hidden_map->size(0) : int64_t{0}});
  check_launch(fn, k::launch_copy_and_expand_eagle_inputs(p, dev.shape(), stream), stream);
}

void batch_change_device(const char* fn, const BatchChangeTensors& t, void* stream) {
  if (t.rows > k::kBatchChangeMaxRows)
    fail_arg(CATTN_NOT_SUPPORTED, fn, t.prev_positions->name(),
             "has more rows than the device path takes", t.prev_positions->shape_string(),
             "at most " + std::to_string(k::kBatchChangeMaxRows) + " rows on a GPU");
  DeviceScope dev(fn, *t.prev_positions);
  check_launch(fn,
               k::launch_update_num_computed_tokens_for_batch_change(batch_change_params(t),
                                                                      dev.shape(), stream),
               stream);
}

k::BatchChangeParams batch_change_params(const BatchChangeTensors& t) {
  k::BatchChangeParams p;
  p.num_computed = index_view(*t.num_computed);
  p.num_accepted = index_view(*t.num_accepted);
  p.prev_positions = index_view(*t.prev_positions);
  p.valid_count = index_view(*t.valid_count);
  p.prev_drafts = index_view(*t.prev_drafts);
  p.cpu_num_computed = index_view(*t.cpu_num_computed);
  p.rows = t.rows;
  return p;
}

}  // namespace cattn
