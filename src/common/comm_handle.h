/* SPDX-License-Identifier: Apache-2.0 */
// The object behind cattn_comm_t. The NCCL communicator is kept as void* so that this header
// (and the entry points that validate a handle) compile in CPU-only builds, where no handle is
// ever created.
#pragma once

#include <cstdint>

#include "cattn.h"
#include "common/build_config.h"
#include "common/error.h"
#include "common/handle_registry.h"

struct cattn_comm_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::Comm);
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

// Fails unless `comm` is a live communicator (see common/handle_registry.h). A CPU-only build
// never creates one, so there a non-NULL pointer is left for the call's CATTN_NOT_SUPPORTED,
// which says more, and is never dereferenced.
inline void require_comm(const char* fn, const char* arg, const cattn_comm_s* comm) {
  if constexpr (kCudaBuild)
    require_live_handle(fn, arg, comm, HandleKind::Comm);
  else if (comm == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a communicator");
}

}  // namespace cattn
