// Communicator handles for utility 5 (the PCP all-gather): a borrowed ncclComm_t or one created
// from a unique id. NCCL comes from common/nccl_loader (dlopen on first use).
#include <cstring>
#include <memory>
#include <string>

#include "common/comm_handle.h"
#include "common/error.h"

#if defined(CATTN_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "common/cuda_runtime.h"
#include "common/nccl_loader.h"
#endif

namespace {

void require_ptr(const char* fn, const char* arg, const void* p) {
  if (p == nullptr)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a pointer");
}

#if defined(CATTN_HAVE_CUDA)
static_assert(sizeof(ncclUniqueId) == CATTN_COMM_UNIQUE_ID_BYTES,
              "cattn_comm_unique_id_t must hold an ncclUniqueId exactly");

// Makes `device` current for the guard's lifetime and restores the caller's device after:
// NCCL binds a communicator to the device current at ncclCommInitRank.
class CurrentDevice {
 public:
  CurrentDevice(const char* fn, int device) {
    cattn::check_cuda(fn, cudaGetDevice(&previous_));
    if (previous_ != device) {
      cattn::check_cuda(fn, cudaSetDevice(device));
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
  cattn::check_cuda(fn, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  h->side_stream = s;
  for (void** e : {&h->fork_event, &h->join_event}) {
    cudaEvent_t ev = nullptr;
    cattn::check_cuda(fn, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    *e = ev;
  }
}

void destroy_side_stream(cattn_comm_s* h) {
  for (void* e : {h->fork_event, h->join_event})
    if (e != nullptr) (void)cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (h->side_stream != nullptr) (void)cudaStreamDestroy(static_cast<cudaStream_t>(h->side_stream));
}

// Owns a handle under construction: frees its CUDA objects (and, for an owned communicator, the
// NCCL communicator) if creation fails part way.
// The handle is registered from the start (so that no failure after a successful NCCL call can
// leave it unregistered), and forgotten again when creation does not complete.
struct HandleUnderConstruction {
  std::unique_ptr<cattn_comm_s> h = std::make_unique<cattn_comm_s>();
  HandleUnderConstruction() { cattn::register_handle(h.get(), cattn::HandleKind::Comm); }
  ~HandleUnderConstruction() {
    if (!h) return;
    destroy_side_stream(h.get());
    cattn::unregister_handle(h.get(), cattn::HandleKind::Comm);
  }
};
#endif

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_comm_get_unique_id(cattn_comm_unique_id_t* id) {
  constexpr const char* fn = "cattn_comm_get_unique_id";
  return cattn::guarded(fn, [&] {
    require_ptr(fn, "id", id);
#if defined(CATTN_HAVE_CUDA)
    const cattn::NcclApi& api = cattn::nccl(fn);
    ncclUniqueId uid;
    cattn::check_nccl(api, fn, "ncclGetUniqueId", api.GetUniqueId(&uid));
    std::memcpy(id->bytes, &uid, sizeof uid);
#else
    cattn::fail(CATTN_NOT_SUPPORTED, fn, cattn::kNcclNeedsCudaBuild);
#endif
  });
}

CATTN_API cattn_status_t cattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                           int32_t rank, int32_t cuda_device,
                                           cattn_comm_t** out) {
  constexpr const char* fn = "cattn_comm_create";
  return cattn::guarded(fn, [&] {
    require_ptr(fn, "id", id);
    require_ptr(fn, "out", out);
    if (nranks < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "nranks", "is out of range",
                      std::to_string(nranks), ">= 1");
    if (rank < 0 || rank >= nranks)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "rank", "is out of range", std::to_string(rank),
                      "[0, " + std::to_string(nranks) + ")");
    if (cuda_device < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "cuda_device", "is negative",
                      std::to_string(cuda_device), "a device ordinal >= 0");
#if defined(CATTN_HAVE_CUDA)
    const cattn::NcclApi& api = cattn::nccl(fn);
    const int count = cattn::cuda_device_count();
    if (count == 0)
      cattn::fail(CATTN_NOT_SUPPORTED, fn,
                  "no usable CUDA device or driver on this machine; a communicator needs one");
    if (cuda_device >= count)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "cuda_device", "is not a visible device",
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
      cattn::check_nccl(api, fn, "ncclCommInitRank", api.CommInitRank(&c, nranks, uid, rank));
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
    *out = handle.release();
#else
    cattn::fail(CATTN_NOT_SUPPORTED, fn, cattn::kNcclNeedsCudaBuild);
#endif
  });
}

CATTN_API cattn_status_t cattn_comm_create_borrowed(void* nccl_comm, cattn_comm_t** out) {
  constexpr const char* fn = "cattn_comm_create_borrowed";
  return cattn::guarded(fn, [&] {
    require_ptr(fn, "nccl_comm", nccl_comm);
    require_ptr(fn, "out", out);
#if defined(CATTN_HAVE_CUDA)
    const cattn::NcclApi& api = cattn::nccl(fn);
    HandleUnderConstruction building;
    auto& handle = building.h;
    const auto c = static_cast<ncclComm_t>(nccl_comm);
    // A nonblocking communicator answers ncclInProgress until its initialisation completes.
    cattn::wait_nccl_ready(api, fn, "the communicator's initialisation", c);
    int size = 0, rank = 0, device = 0;
    cattn::check_nccl(api, fn, "ncclCommCount", api.CommCount(c, &size), c);
    cattn::check_nccl(api, fn, "ncclCommUserRank", api.CommUserRank(c, &rank), c);
    cattn::check_nccl(api, fn, "ncclCommCuDevice", api.CommCuDevice(c, &device), c);
    handle->nccl = c;
    handle->owned = false;
    handle->rank = rank;
    handle->size = size;
    handle->device = device;
    {
      CurrentDevice dev(fn, device);
      create_side_stream(fn, handle.get());
    }
    *out = handle.release();
#else
    cattn::fail(CATTN_NOT_SUPPORTED, fn, cattn::kNcclNeedsCudaBuild);
#endif
  });
}

CATTN_API void cattn_comm_destroy(cattn_comm_t* comm) {
  if (comm == nullptr) return;
  if (!cattn::release_handle("cattn_comm_destroy", comm, cattn::HandleKind::Comm)) return;
#if defined(CATTN_HAVE_CUDA)
  // destroy() reports nothing; guarded() keeps any failure (NCCL, CUDA) inside the library.
  (void)cattn::guarded("cattn_comm_destroy", [&] {
    CurrentDevice dev("cattn_comm_destroy", comm->device);
    destroy_side_stream(comm);
    if (comm->owned && comm->nccl != nullptr) {
      const cattn::NcclApi& api = cattn::nccl("cattn_comm_destroy");
      (void)api.CommDestroy(static_cast<ncclComm_t>(comm->nccl));
    }
  });
#endif
  comm->magic = cattn::kDeadHandleMagic;
  delete comm;
}

CATTN_API cattn_status_t cattn_comm_get_rank(const cattn_comm_t* comm, int32_t* rank) {
  constexpr const char* fn = "cattn_comm_get_rank";
  return cattn::guarded(fn, [&] {
    cattn::require_comm(fn, "comm", comm);
    require_ptr(fn, "rank", rank);
#if defined(CATTN_HAVE_CUDA)
    *rank = comm->rank;
#else
    cattn::fail(CATTN_NOT_SUPPORTED, fn, cattn::kNcclNeedsCudaBuild);
#endif
  });
}

CATTN_API cattn_status_t cattn_comm_get_size(const cattn_comm_t* comm, int32_t* size) {
  constexpr const char* fn = "cattn_comm_get_size";
  return cattn::guarded(fn, [&] {
    cattn::require_comm(fn, "comm", comm);
    require_ptr(fn, "size", size);
#if defined(CATTN_HAVE_CUDA)
    *size = comm->size;
#else
    cattn::fail(CATTN_NOT_SUPPORTED, fn, cattn::kNcclNeedsCudaBuild);
#endif
  });
}

}  // extern "C"
