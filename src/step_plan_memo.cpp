// SPDX-License-Identifier: Apache-2.0
// The step plan's run memo (step_plan_memo.h): the key of a run's descriptors, the views a keyed
// run is checked from, and the memo itself.
#include "step_plan_memo.h"

#include <cstring>

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

bool step_run_key(const cattn_step_batch_t& b, const cattn_step_outputs_t& o, StepRunKey& key) {
  key.batch = &b;
  key.outputs = &o;
  for (int i = 0; i < kRunTensors; ++i)
    if (!key_of(kStepRunTensors[i].of(b, o), key.t[i])) return false;
  return true;
}

void record_step_descriptors(const StepRunKey& key) {
  CallArgs& call = current_call();
  for (int i = 0; i < kRunTensors; ++i) {
    const StepTensorKey& k = key.t[i];
    if ((k.flags & StepTensorKey::kPresent) == 0) continue;
    const char* name = kStepRunTensors[i].name;
    const size_t dims = static_cast<size_t>(k.ndim) * sizeof(int64_t);
    call.add(Part::DLTensor, name, k.at, sizeof(DLTensor), Use::In, k.at);
    call.add(Part::Shape, name, k.shape_at, dims, Use::In, k.at);
    if (k.flags & StepTensorKey::kStridesRead)
      call.add(Part::Strides, name, k.strides_at, dims, Use::In, k.at);
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

bool StepRunMemo::find(const StepRunKey& key, StepPlanLaunch& launch) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!valid_ || std::memcmp(&key, &key_, sizeof key) != 0) return false;
  launch = launch_;
  return true;
}

void StepRunMemo::remember(const StepRunKey& key, const StepPlanLaunch& launch) {
  std::lock_guard<std::mutex> lock(mutex_);
  key_ = key;
  launch_ = launch;
  valid_ = true;
}

}  // namespace cattn
