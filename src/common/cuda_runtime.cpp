// SPDX-License-Identifier: Apache-2.0
#include "common/cuda_runtime.h"

#include "common/error.h"

#if defined(CATTN_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace cattn {

int cuda_device_count() noexcept {
#if defined(CATTN_HAVE_CUDA)
  int n = 0;
  // Without a driver this returns an error instead of crashing; that means "no device".
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

void check_cuda(const char* fn, int cuda_error) {
#if defined(CATTN_HAVE_CUDA)
  if (cuda_error == 0) return;
  const auto e = static_cast<cudaError_t>(cuda_error);
  fail(e == cudaErrorMemoryAllocation ? CATTN_OUT_OF_MEMORY : CATTN_CUDA_ERROR, fn,
       std::string("CUDA error ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
#else
  if (cuda_error != 0) fail(CATTN_INTERNAL, fn, "CUDA error reported by a CPU-only build");
#endif
}

}  // namespace cattn
