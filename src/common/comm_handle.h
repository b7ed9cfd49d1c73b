// The object behind cattn_comm_t. The NCCL communicator is kept as void* so that this header
// (and the entry points that validate a handle) compile in CPU-only builds, where no handle is
// ever created.
#pragma once

#include <cstdint>

#include "cattn.h"

struct cattn_comm_s {
  void* nccl = nullptr;  // ncclComm_t
  bool owned = false;    // true: created by cattn_comm_create, destroyed with the handle
  // Fixed for the communicator's life, so they are read once at creation and calls that only
  // need them never touch NCCL.
  int32_t rank = 0;
  int32_t size = 1;
  int32_t device = 0;
  // The all-gather's second stream (cudaStream_t) and the events that fork it from the caller's
  // stream and join it back (cudaEvent_t): made with the communicator so that no call creates
  // them on its hot path or inside a capture.
  void* side_stream = nullptr;
  void* fork_event = nullptr;
  void* join_event = nullptr;
};

namespace cattn {

// The status text every NCCL-related call of a CPU-only build fails with.
constexpr const char* kNcclNeedsCudaBuild =
    "NCCL communicators need a libcattn built with CATTN_WITH_CUDA=ON; this build is CPU-only";

}  // namespace cattn
