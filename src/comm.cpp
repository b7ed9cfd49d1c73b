// SPDX-License-Identifier: Apache-2.0
// Communicator handles of pcp_kv_allgather_and_restore: a borrowed ncclComm_t or one created
// from a unique id. Entry points: argument checks and dispatch; the NCCL side is in
// device/comm_device.cpp.
#include <cstring>
#include <memory>
#include <string>

#include "common/comm_handle.h"
#include "common/error.h"
#include "common/struct_arg.h"
#include "device/comm_device.h"

namespace {

void require_ptr(const char* fn, const char* arg, const void* p, size_t bytes) {
  if (p == nullptr)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a pointer");
  cattn::record_input(arg, p, bytes);
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_comm_get_unique_id(cattn_comm_unique_id_t* id) {
  constexpr const char* fn = "cattn_comm_get_unique_id";
  return cattn::guarded(fn, [&] {
    cattn::require_out_ptr(fn, "id", id);
    cattn::seal_arguments();
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    else cattn::comm_get_unique_id_device(fn, id);
  });
}

CATTN_API cattn_status_t cattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                           int32_t rank, int32_t cuda_device,
                                           cattn_comm_t** out) {
  constexpr const char* fn = "cattn_comm_create";
  return cattn::guarded(fn, [&] {
    require_ptr(fn, "id", id, sizeof *id);
    cattn::require_out_ptr(fn, "out", out);
    if (nranks < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "nranks", "is out of range",
                      std::to_string(nranks), ">= 1");
    if (rank < 0 || rank >= nranks)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "rank", "is out of range", std::to_string(rank),
                      "[0, " + std::to_string(nranks) + ")");
    if (cuda_device < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "cuda_device", "is negative",
                      std::to_string(cuda_device), "a device ordinal >= 0");
    cattn::seal_arguments();
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    else *out = cattn::comm_create_device(fn, id, nranks, rank, cuda_device);
  });
}

CATTN_API cattn_status_t cattn_comm_create_borrowed(void* nccl_comm, cattn_comm_t** out) {
  constexpr const char* fn = "cattn_comm_create_borrowed";
  return cattn::guarded(fn, [&] {
    require_ptr(fn, "nccl_comm", nccl_comm, 0);  // NCCL's own object, never read here
    cattn::require_out_ptr(fn, "out", out);
    cattn::seal_arguments();
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    else *out = cattn::comm_create_borrowed_device(fn, nccl_comm);
  });
}

CATTN_API void cattn_comm_destroy(cattn_comm_t* comm) {
  if (comm == nullptr) return;
  if (!cattn::release_handle("cattn_comm_destroy", comm, cattn::HandleKind::Comm)) return;
  if constexpr (cattn::kCudaBuild) cattn::comm_destroy_device(comm);
  comm->magic = cattn::kDeadHandleMagic;
  delete comm;
}

CATTN_API cattn_status_t cattn_comm_get_rank(const cattn_comm_t* comm, int32_t* rank) {
  constexpr const char* fn = "cattn_comm_get_rank";
  return cattn::guarded(fn, [&] {
    cattn::require_comm(fn, "comm", comm);
    cattn::require_out_ptr(fn, "rank", rank);
    cattn::seal_arguments();
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    *rank = comm->rank;
  });
}

CATTN_API cattn_status_t cattn_comm_get_size(const cattn_comm_t* comm, int32_t* size) {
  constexpr const char* fn = "cattn_comm_get_size";
  return cattn::guarded(fn, [&] {
    cattn::require_comm(fn, "comm", comm);
    cattn::require_out_ptr(fn, "size", size);
    cattn::seal_arguments();
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    *size = comm->size;
  });
}

}  // extern "C"
