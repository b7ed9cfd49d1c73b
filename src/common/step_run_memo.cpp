// SPDX-License-Identifier: Apache-2.0
// The step plan's run memo: the descriptors of the last run that passed every check, and the
// kernel parameters built from them. Engines pass the same buffers every step, so a run
// usually repeats the last one's descriptors exactly; comparing about 1.7 KB of them costs a
// fraction of the checks, the parameter build and the pointer query they replace.
#include <cstring>

#include "common/step_plan.h"
#include "common/tensor_arg.h"

namespace cattn {
namespace {

bool key_of(const DLTensor* t, StepTensorKey& k) {
  std::memset(&k, 0, sizeof k);
  if (t == nullptr) return true;
  k.flags = StepTensorKey::kPresent;
  k.at = t;
  const int32_t ndim = t->ndim;
  const int64_t* shape = t->shape;
  k.shape_at = shape;
  // The checks read shape[0, ndim) only for 0 <= ndim <= 8 with a shape; every tensor of a run
  // has one or two dimensions, so a key needs no more.
  if (ndim < 0 || ndim > 2 || (ndim > 0 && shape == nullptr)) return false;
  k.data = t->data;
  k.byte_offset = t->byte_offset;
  k.device_type = device_type_of(t->device);
  k.device_id = t->device.device_id;
  k.ndim = ndim;
  static_assert(sizeof k.dtype == sizeof t->dtype, "DLDataType is 4 bytes");
  std::memcpy(&k.dtype, &t->dtype, sizeof k.dtype);
  bool nonempty = true;
  for (int i = 0; i < ndim; ++i) {
    k.shape[i] = shape[i];
    nonempty = nonempty && k.shape[i] > 0;
  }
  // As TensorArg does: strides are read only when some element exists.
  const int64_t* strides = t->strides;
  if (strides != nullptr && nonempty) {
    k.flags |= StepTensorKey::kStridesRead;
    k.strides_at = strides;
    for (int i = 0; i < ndim; ++i) k.strides[i] = strides[i];
  }
  return true;
}

}  // namespace

void step_run_tensors(const cattn_step_batch_t& b, const cattn_step_outputs_t& o,
                      const DLTensor* (&t)[kRunTensors]) {
  t[kRunQueryStartLoc] = b.query_start_loc;
  t[kRunSeqLens] = b.seq_lens;
  t[kRunBlockTable] = b.block_table;
  t[kRunCuNumTokens] = b.cu_num_tokens;
  t[kRunLogitsIndices] = b.logits_indices;
  t[kRunNumLogitsIndices] = b.num_logits_indices;
  t[kRunDcpLocalSeqLens] = o.dcp_local_seq_lens;
  t[kRunPcpQueryRestoreIdx] = o.pcp_query_restore_idx;
  t[kRunMambaBlockTable] = o.mamba_block_table;
  t[kRunConv1dNums] = o.conv1d_nums;
  t[kRunConv1dMlist] = o.conv1d_mlist;
  t[kRunConv1dOffsetlist] = o.conv1d_offsetlist;
  t[kRunConv1dBatchPtr] = o.conv1d_batch_ptr;
  t[kRunConv1dTokenChunkOffsetPtr] = o.conv1d_token_chunk_offset_ptr;
  t[kRunLocalQueryStartLoc] = o.local_query_start_loc;
  t[kRunLocalSeqLens] = o.local_seq_lens;
  t[kRunLocalNumComputedTokens] = o.local_num_computed_tokens;
  t[kRunLocalBlockTable] = o.local_block_table;
  t[kRunDecodeQueryStartLoc] = o.decode_query_start_loc;
  t[kRunExtendQueryStartLoc] = o.extend_query_start_loc;
  t[kRunExtendSeqLens] = o.extend_seq_lens;
  t[kRunCounts] = o.counts;
  t[kRunCountsHost] = o.counts_host;
}

bool step_run_key(const cattn_step_batch_t& b, const cattn_step_outputs_t& o, StepRunKey& key) {
  key.batch = &b;
  key.outputs = &o;
  const DLTensor* tensors[kRunTensors];
  step_run_tensors(b, o, tensors);
  for (int i = 0; i < kRunTensors; ++i)
    if (!key_of(tensors[i], key.t[i])) return false;
  return true;
}

const char* const kRunTensorNames[kRunTensors] = {
    "batch->query_start_loc",
    "batch->seq_lens",
    "batch->block_table",
    "batch->cu_num_tokens",
    "batch->logits_indices",
    "batch->num_logits_indices",
    "outputs->dcp_local_seq_lens",
    "outputs->pcp_query_restore_idx",
    "outputs->mamba_block_table",
    "outputs->conv1d_nums",
    "outputs->conv1d_mlist",
    "outputs->conv1d_offsetlist",
    "outputs->conv1d_batch_ptr",
    "outputs->conv1d_token_chunk_offset_ptr",
    "outputs->local_query_start_loc",
    "outputs->local_seq_lens",
    "outputs->local_num_computed_tokens",
    "outputs->local_block_table",
    "outputs->decode_query_start_loc",
    "outputs->extend_query_start_loc",
    "outputs->extend_seq_lens",
    "outputs->counts",
    "outputs->counts_host",
};

void record_step_descriptors(const StepRunKey& key) {
  CallArgs& call = current_call();
  for (int i = 0; i < kRunTensors; ++i) {
    const StepTensorKey& k = key.t[i];
    if ((k.flags & StepTensorKey::kPresent) == 0) continue;
    const size_t dims = static_cast<size_t>(k.ndim) * sizeof(int64_t);
    call.add(Part::DLTensor, kRunTensorNames[i], k.at, sizeof(DLTensor), Use::In, k.at);
    call.add(Part::Shape, kRunTensorNames[i], k.shape_at, dims, Use::In, k.at);
    if (k.flags & StepTensorKey::kStridesRead)
      call.add(Part::Strides, kRunTensorNames[i], k.strides_at, dims, Use::In, k.at);
  }
}

const DLTensor* step_run_view(const StepTensorKey& k, DLTensor& t) {
  if ((k.flags & StepTensorKey::kPresent) == 0) return nullptr;
  t.data = const_cast<void*>(k.data);
  // The device type goes back as the bytes it was read as (a caller may store any value).
  std::memcpy(&t.device.device_type, &k.device_type, sizeof k.device_type);
  t.device.device_id = k.device_id;
  t.ndim = k.ndim;
  std::memcpy(&t.dtype, &k.dtype, sizeof k.dtype);
  t.shape = const_cast<int64_t*>(k.shape);
  t.strides = (k.flags & StepTensorKey::kStridesRead) ? const_cast<int64_t*>(k.strides) : nullptr;
  t.byte_offset = k.byte_offset;
  return &t;
}

bool StepRunMemo::find(const StepRunKey& key, kernels::StepPlanParams& params,
                       int& device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!valid_ || std::memcmp(&key, &key_, sizeof key) != 0) return false;
  params = params_;
  device = device_;
  return true;
}

void StepRunMemo::remember(const StepRunKey& key, const kernels::StepPlanParams& params,
                           int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  key_ = key;
  params_ = params;
  device_ = device;
  valid_ = true;
}

}  // namespace cattn
