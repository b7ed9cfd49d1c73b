/* SPDX-License-Identifier: Apache-2.0 */
// The step plan's memo of its last checked run (cattn_step_plan_run): the descriptors that run
// was checked from, as a key, and what it launched. Engines pass the same buffers every step, so
// a run usually repeats the last one's descriptors exactly; comparing about 1.7 KB of them costs
// a fraction of the checks, the parameter build and the pointer query they replace. Private to
// the entry point (src/step_plan.cpp), which alone reads and writes it.
#pragma once

#include <cstdint>
#include <mutex>
#include <type_traits>

#include "cattn.h"
#include "common/step_plan.h"
#include "device/step_plan_device.h"

namespace cattn {

// What a run's checks read of one DLTensor: the descriptor, never the data, and where the
// caller keeps it (the DLTensor struct and its shape and stride arrays, which the overlap rule
// keeps outputs away from). Two runs whose keys are equal byte for byte get the same answer
// from every check (the checks are a pure function of the descriptors, their addresses and the
// plan), so the second may reuse the first's result.
struct StepTensorKey {
  enum : uint32_t { kPresent = 1u, kStridesRead = 2u };
  const DLTensor* at;
  const int64_t* shape_at;
  const int64_t* strides_at;  // only with kStridesRead
  const void* data;
  uint64_t byte_offset;
  int64_t shape[2];
  int64_t strides[2];  // only with kStridesRead: given, and every dimension non-empty
  int32_t device_type;
  int32_t device_id;
  int32_t ndim;
  uint32_t dtype;  // code, bits and lanes as their bytes
  uint32_t flags;
  uint32_t reserved;  // always 0: the key has no padding, so memcmp compares it
};
static_assert(std::has_unique_object_representations_v<StepTensorKey>,
              "StepTensorKey is compared with memcmp");

// A run's key: the batch and outputs structs' addresses and every run tensor's key, in
// StepRunTensor order.
struct StepRunKey {
  const cattn_step_batch_t* batch;
  const cattn_step_outputs_t* outputs;
  StepTensorKey t[kRunTensors];
};
static_assert(std::has_unique_object_representations_v<StepRunKey>,
              "StepRunKey is compared with memcmp");

// Records where the caller keeps each present tensor's descriptor (its DLTensor struct, shape
// and strides arrays) with the current call: a keyed run checks copies of them.
void record_step_descriptors(const StepRunKey& key);

// Reads every tensor the run was given into `key`, each field once. False when some tensor is
// one a key cannot describe (ndim outside 0..2, or a NULL shape): no run accepts such a
// tensor, so that run takes the checks on the caller's tensors and fails there.
bool step_run_key(const cattn_step_batch_t& batch, const cattn_step_outputs_t& outputs,
                  StepRunKey& key);

// A DLTensor with the descriptor in `k` (its shape and strides point into `k`), or NULL for an
// absent tensor: the checks of a keyed run read these, so what they check is what the key
// holds even if the caller's tensors change meanwhile.
const DLTensor* step_run_view(const StepTensorKey& k, DLTensor& storage);

// The last run of a plan that passed every check: its key and what it launched (the kernel
// parameters and the device). A run with the same key launches these directly. Behind its own
// lock, so runs on any number of threads may share a plan.
class StepRunMemo {
 public:
  // Copies the remembered launch out when `key` is the remembered run's.
  bool find(const StepRunKey& key, StepPlanLaunch& launch) const;
  void remember(const StepRunKey& key, const StepPlanLaunch& launch);

 private:
  mutable std::mutex mutex_;
  bool valid_ = false;
  StepRunKey key_{};
  StepPlanLaunch launch_{};
};

}  // namespace cattn
