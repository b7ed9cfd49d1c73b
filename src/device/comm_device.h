/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "cattn.h"
#include "common/comm_handle.h"
#include "device/device.h"

namespace cattn {

// The NCCL side of the communicator handles (NCCL loaded on first use, see nccl_loader.h).
// Arguments are checked by the entry points; each call throws a Failure with the status the
// header lists.

// ncclGetUniqueId into `id`.
void comm_get_unique_id_device(const char* fn, cattn_comm_unique_id_t* id);

// ncclCommInitRank on `cuda_device` (the caller's current device is restored), plus the
// handle's side stream and events; returns a registered, owning handle.
cattn_comm_s* comm_create_device(const char* fn, const cattn_comm_unique_id_t* id, int32_t nranks,
                                 int32_t rank, int32_t cuda_device);

// Reads a borrowed communicator's rank, size and device once and makes the handle's side
// stream and events; returns a registered, non-owning handle.
cattn_comm_s* comm_create_borrowed_device(const char* fn, void* nccl_comm);

// Frees the handle's CUDA objects and, when it owns one, the NCCL communicator; reports
// nothing (errors stay inside the library). The handle's memory is freed by the caller.
void comm_destroy_device(cattn_comm_s* comm) noexcept;

}  // namespace cattn
