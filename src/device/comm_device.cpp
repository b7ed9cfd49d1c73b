// SPDX-License-Identifier: Apache-2.0
// The NCCL side of the communicator handles: creation (owned or borrowed), the side stream and
// events each handle owns, and destruction. NCCL comes from nccl_loader (dlopen on first use).
#include "device/comm_device.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <string>

#include "common/cuda_runtime.h"
#include "common/error.h"
#include "device/nccl_loader.h"

namespace cattn {
namespace {

static_assert(sizeof(ncclUniqueId) == CATTN_COMM_UNIQUE_ID_BYTES,
              "cattn_comm_unique_id_t must hold an ncclUniqueId exactly");

// Makes `device` current for the guard's lifetime and restores the caller's device after:
// NCCL binds a communicator to the device current at ncclCommInitRank.
class CurrentDevice {
 public:
  CurrentDevice(const char* fn, int device) {
    check_cuda(fn, cudaGetDevice(&previous_));
    if (previous_ != device) {
      check_cuda(fn, cudaSetDevice(device));
      restore_ = true;
    }
  }
  ~CurrentDevice() {
    if (restore_) (void)cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// Creates the side stream and its events on the communicator's device (current on entry).
void create_side_stream(const char* fn, cattn_comm_s* h) {
  cudaStream_t s = nullptr;
  check_cuda(fn, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  h->side_stream = s;
  for (void** e : {&h->fork_event, &h->join_event}) {
    cudaEvent_t ev = nullptr;
    check_cuda(fn, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    *e = ev;
  }
}

void destroy_side_stream(cattn_comm_s* h) {
  for (void* e : {h->fork_event, h->join_event})
    if (e != nullptr) (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (h->side_stream != nullptr) (void)cudaStreamDestroy(static_cast<cudaStream_t>(h->side_stream));
}

// Owns a handle under construction: frees its CUDA objects if creation fails part way. The
// handle is registered from the start (so that no failure after a successful NCCL call can
// leave it unregistered), and forgotten again when creation does not complete.
struct HandleUnderConstruction {
  std::unique_ptr<cattn_comm_s> h = std::make_unique<cattn_comm_s>();
  HandleUnderConstruction() { register_handle(h.get(), HandleKind::Comm); }
  ~HandleUnderConstruction() {
    if (!h) return;
    destroy_side_stream(h.get());
    unregister_handle(h.get(), HandleKind::Comm);
  }
};

}  // namespace

void comm_get_unique_id_device(const char* fn, cattn_comm_unique_id_t* id) {
  const NcclApi& api = nccl(fn);
  ncclUniqueId uid;
  check_nccl(api, fn, "ncclGetUniqueId", api.GetUniqueId(&uid));
  std::memcpy(id->bytes, &uid, sizeof uid);
}

cattn_comm_s* comm_create_device(const char* fn, const cattn_comm_unique_id_t* id, int32_t nranks,
                               int32_t rank, int32_t cuda_device) {
  const NcclApi& api = nccl(fn);
  const int count = cuda_device_count();
  if (count == 0)
    fail(CATTN_NOT_SUPPORTED, fn,
         "no usable CUDA device or driver on this machine; a communicator needs one");
  if (cuda_device >= count)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "cuda_device", "is not a visible device",
             std::to_string(cuda_device), "[0, " + std::to_string(count) + ")");
  // Allocated before NCCL is asked for anything, so that no failure after a successful
  // ncclCommInitRank can leak the communicator.
  HandleUnderConstruction building;
  auto& handle = building.h;
  ncclUniqueId uid;
  std::memcpy(&uid, id->bytes, sizeof uid);
  ncclComm_t c = nullptr;
  {
    CurrentDevice dev(fn, cuda_device);
    check_nccl(api, fn, "ncclCommInitRank", api.CommInitRank(&c, nranks, uid, rank));
    handle->nccl = c;
    handle->owned = true;
    handle->device = cuda_device;
    try {
      create_side_stream(fn, handle.get());
    } catch (...) {
      (void)api.CommDestroy(c);
      throw;
    }
  }
  handle->owned = true;
  handle->rank = rank;
  handle->size = nranks;
  handle->device = cuda_device;
  return handle.release();
}

cattn_comm_s* comm_create_borrowed_device(const char* fn, void* nccl_comm) {
  const NcclApi& api = nccl(fn);
  HandleUnderConstruction building;
  auto& handle = building.h;
  const auto c = static_cast<ncclComm_t>(nccl_comm);
  // A nonblocking communicator answers ncclInProgress until its initialisation completes.
  wait_nccl_ready(api, fn, "the communicator's initialisation", c);
  int size = 0, rank = 0, device = 0;
  check_nccl(api, fn, "ncclCommCount", api.CommCount(c, &size), c);
  check_nccl(api, fn, "ncclCommUserRank", api.CommUserRank(c, &rank), c);
  check_nccl(api, fn, "ncclCommCuDevice", api.CommCuDevice(c, &device), c);
  handle->nccl = c;
  handle->owned = false;
  handle->rank = rank;
  handle->size = size;
  handle->device = device;
  {
    CurrentDevice dev(fn, device);
    create_side_stream(fn, handle.get());
  }
  return handle.release();
}

void comm_destroy_device(cattn_comm_s* comm) noexcept {
  // destroy() reports nothing; guarded() keeps any failure (NCCL, CUDA) inside the library.
  (void)guarded("cattn_comm_destroy", [&] {
    CurrentDevice dev("cattn_comm_destroy", comm->device);
    destroy_side_stream(comm);
    if (comm->owned && comm->nccl != nullptr) {
      const NcclApi& api = nccl("cattn_comm_destroy");
      (void)api.CommDestroy(static_cast<ncclComm_t>(comm->nccl));
    }
  });
}

}  // namespace cattn
