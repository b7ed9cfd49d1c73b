// SPDX-License-Identifier: Apache-2.0
#include "device/nccl_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "common/error.h"

namespace cattn {
namespace {

constexpr const char* kDefaultLibrary = "libnccl.so.2";

struct Loaded {
  NcclApi api;
  bool ok = false;
  std::string error;  // why loading failed, without the calling function's name
};

template <class T>
bool resolve(void* lib, const char* name, T& slot, std::string& error) {
  dlerror();
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    const char* why = dlerror();
    error = std::string("symbol ") + name + " not found (" + (why ? why : "no detail") + ")";
    return false;
  }
  slot = reinterpret_cast<T>(sym);
  return true;
}

void load(Loaded& l) {
  const char* env = std::getenv(CATTN_NCCL_LIBRARY_ENV);
  const std::string name = env != nullptr && *env != '\0' ? env : kDefaultLibrary;
  const std::string where = std::string("NCCL is loaded at run time from ") + kDefaultLibrary +
                            " (or the file named by " + CATTN_NCCL_LIBRARY_ENV + "); dlopen(\"" +
                            name + "\") ";
  // RTLD_LOCAL: NCCL's symbols stay out of the global namespace, so an engine that loads a
  // different NCCL under another name is not affected. The handle is never closed:
  // communicators may live until exit.
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    l.error = where + "failed: " + (why ? why : "no detail");
    return;
  }
  NcclApi& a = l.api;
  std::string missing;
  const bool all = resolve(lib, "ncclGetVersion", a.GetVersion, missing) &&
                   resolve(lib, "ncclGetUniqueId", a.GetUniqueId, missing) &&
                   resolve(lib, "ncclCommInitRank", a.CommInitRank, missing) &&
                   resolve(lib, "ncclCommDestroy", a.CommDestroy, missing) &&
                   resolve(lib, "ncclCommCount", a.CommCount, missing) &&
                   resolve(lib, "ncclCommUserRank", a.CommUserRank, missing) &&
                   resolve(lib, "ncclCommCuDevice", a.CommCuDevice, missing) &&
                   resolve(lib, "ncclCommGetAsyncError", a.CommGetAsyncError, missing) &&
                   resolve(lib, "ncclAllGather", a.AllGather, missing) &&
                   resolve(lib, "ncclSend", a.Send, missing) &&
                   resolve(lib, "ncclRecv", a.Recv, missing) &&
                   resolve(lib, "ncclGroupStart", a.GroupStart, missing) &&
                   resolve(lib, "ncclGroupEnd", a.GroupEnd, missing) &&
                   resolve(lib, "ncclGetErrorString", a.GetErrorString, missing) &&
                   resolve(lib, "ncclGetLastError", a.GetLastError, missing);
  if (!all) {
    l.error = where + "loaded a library without the NCCL 2 API libcattn needs: " + missing;
    l.api = NcclApi{};
    dlclose(lib);
    return;
  }
  int version = 0;
  if (a.GetVersion(&version) != ncclSuccess || version < NCCL_VERSION(2, 13, 0)) {
    l.error = where + "loaded NCCL version code " + std::to_string(version) +
              ", older than 2.13 which libcattn needs";
    l.api = NcclApi{};
    return;  // keep it loaded: its constructors ran, and unloading it buys nothing
  }
  l.ok = true;
}

}  // namespace

const NcclApi& nccl(const char* fn) {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] { load(loaded); });
  if (!loaded.ok) fail(CATTN_NOT_SUPPORTED, fn, loaded.error);
  return loaded.api;
}

void check_nccl(const NcclApi& api, const char* fn, const char* call, ncclResult_t result,
                ncclComm_t comm) {
  if (result == ncclSuccess) return;
  std::string msg = std::string("NCCL error in ") + call + ": " + api.GetErrorString(result);
  // NCCL keeps the detail of its last failure (its argument is unused today, NULL allowed).
  const char* detail = api.GetLastError(comm);
  if (detail != nullptr && *detail != '\0') msg += std::string(" (") + detail + ")";
  fail(CATTN_NCCL_ERROR, fn, msg);
}

void wait_nccl_ready(const NcclApi& api, const char* fn, const char* call, ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  while (true) {
    check_nccl(api, fn, "ncclCommGetAsyncError", api.CommGetAsyncError(comm, &state), comm);
    if (state != ncclInProgress) break;
    std::this_thread::yield();
  }
  check_nccl(api, fn, call, state, comm);
}

}  // namespace cattn
