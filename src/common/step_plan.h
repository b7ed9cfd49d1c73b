/* SPDX-License-Identifier: Apache-2.0 */
// The step plan object behind cattn_step_plan_t: the desc it was made from and what creation
// derived - the outputs' capacities and the launch layout - and the memo of the last run that
// passed every check. The desc and what it derives never change once created; the memo is the
// one mutable part, behind its own lock, so runs on any number of threads may share a plan.
#pragma once

#include <cstdint>
#include <mutex>
#include <type_traits>

#include "cattn.h"
#include "common/handle_registry.h"
#include "kernels/step_plan.h"

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

// The run's tensors in a fixed order: the batch's six, then the outputs' seventeen.
enum StepRunTensor : int {
  kRunQueryStartLoc = 0,
  kRunSeqLens,
  kRunBlockTable,
  kRunCuNumTokens,
  kRunLogitsIndices,
  kRunNumLogitsIndices,
  kRunDcpLocalSeqLens,
  kRunPcpQueryRestoreIdx,
  kRunMambaBlockTable,
  kRunConv1dNums,
  kRunConv1dMlist,
  kRunConv1dOffsetlist,
  kRunConv1dBatchPtr,
  kRunConv1dTokenChunkOffsetPtr,
  kRunLocalQueryStartLoc,
  kRunLocalSeqLens,
  kRunLocalNumComputedTokens,
  kRunLocalBlockTable,
  kRunDecodeQueryStartLoc,
  kRunExtendQueryStartLoc,
  kRunExtendSeqLens,
  kRunCounts,
  kRunCountsHost,
  kRunTensors
};

struct StepRunKey {
  const cattn_step_batch_t* batch;
  const cattn_step_outputs_t* outputs;
  StepTensorKey t[kRunTensors];
};
static_assert(std::has_unique_object_representations_v<StepRunKey>,
              "StepRunKey is compared with memcmp");

// The name each run tensor has in messages, in StepRunTensor order.
extern const char* const kRunTensorNames[kRunTensors];

// Records where the caller keeps each present tensor's descriptor (its DLTensor struct, shape
// and strides arrays) with the current call: a keyed run checks copies of them.
void record_step_descriptors(const StepRunKey& key);

// The run's tensor pointers as the caller gave them, in StepRunTensor order.
void step_run_tensors(const cattn_step_batch_t& batch, const cattn_step_outputs_t& outputs,
                      const DLTensor* (&tensors)[kRunTensors]);

// Reads every tensor the run was given into `key`, each field once. False when some tensor is
// one a key cannot describe (ndim outside 0..2, or a NULL shape): no run accepts such a
// tensor, so that run takes the checks on the caller's tensors and fails there.
bool step_run_key(const cattn_step_batch_t& batch, const cattn_step_outputs_t& outputs,
                  StepRunKey& key);

// A DLTensor with the descriptor in `k` (its shape and strides point into `k`), or NULL for an
// absent tensor: the checks of a keyed run read these, so what they check is what the key
// holds even if the caller's tensors change meanwhile.
const DLTensor* step_run_view(const StepTensorKey& k, DLTensor& storage);

// The last run of a plan that passed every check: its key, the kernel parameters built from
// it and the device it ran on. A run with the same key launches these parameters directly.
class StepRunMemo {
 public:
  // Copies the remembered parameters and device out when `key` is the remembered run's.
  bool find(const StepRunKey& key, kernels::StepPlanParams& params, int& device) const;
  void remember(const StepRunKey& key, const kernels::StepPlanParams& params, int device);

 private:
  mutable std::mutex mutex_;
  bool valid_ = false;
  int device_ = 0;
  StepRunKey key_{};
  kernels::StepPlanParams params_{};
};

}  // namespace cattn

struct cattn_step_plan_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::StepPlan);
  cattn_step_plan_desc_t desc{};   // struct_size set to this header's size
  cattn_step_plan_shape_t shape{};
  // Blocks of each product, as kernels::StepPlanParams::block_end.
  int64_t block_end[cattn::kernels::kStepProducts] = {};
  mutable cattn::StepRunMemo memo;  // the one part a run changes

  bool has(cattn::kernels::StepProduct k) const { return (desc.products >> k) & 1u; }
};

namespace cattn {
using StepPlan = cattn_step_plan_s;
}  // namespace cattn
