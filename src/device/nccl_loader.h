/* SPDX-License-Identifier: Apache-2.0 */
// NCCL, loaded at run time. libcattn has no link-time dependency on libnccl: the first call that
// needs it dlopen()s the library and resolves every symbol below, once per process. nccl.h is
// included for its types and enums only. CUDA builds only.
#pragma once

#include <nccl.h>

namespace cattn {

// The NCCL entry points libcattn uses. decltype keeps each pointer's type identical to the
// prototype in nccl.h without referencing the symbol itself.
struct NcclApi {
  decltype(&ncclGetVersion) GetVersion = nullptr;
  decltype(&ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&ncclCommInitRank) CommInitRank = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclCommCount) CommCount = nullptr;
  decltype(&ncclCommUserRank) CommUserRank = nullptr;
  decltype(&ncclCommCuDevice) CommCuDevice = nullptr;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclSend) Send = nullptr;
  decltype(&ncclRecv) Recv = nullptr;
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
  decltype(&ncclGetErrorString) GetErrorString = nullptr;
  decltype(&ncclGetLastError) GetLastError = nullptr;
};

// The loaded library. Throws CATTN_NOT_SUPPORTED naming `fn`, the library (libnccl.so.2 or
// $CATTN_NCCL_LIBRARY) and dlerror()'s text when it cannot be loaded or lacks a symbol; the
// outcome of the first attempt is kept for the life of the process.
const NcclApi& nccl(const char* fn);

// Throws CATTN_NCCL_ERROR naming `fn` and the NCCL call, with ncclGetErrorString's text and
// NCCL's last error detail. No-op for ncclSuccess.
void check_nccl(const NcclApi& api, const char* fn, const char* call, ncclResult_t result,
                ncclComm_t comm = nullptr);

// Waits on the host while a nonblocking communicator reports ncclInProgress, then throws like
// check_nccl if it ended in an error.
void wait_nccl_ready(const NcclApi& api, const char* fn, const char* call, ncclComm_t comm);

}  // namespace cattn
