// The context handle and the CUDA device query.
#include <atomic>
#include <new>

#include "common/cuda_runtime.h"
#include "common/error.h"
#include "common/context.h"

extern "C" {

CATTN_API cattn_status_t cattn_context_create(cattn_context_t** out) {
  return cattn::guarded("cattn_context_create", [&] {
    if (out == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, "cattn_context_create", "out", "is NULL", "NULL",
                      "a pointer to receive the handle");
    *out = new cattn_context_s();
  });
}

CATTN_API void cattn_context_destroy(cattn_context_t* ctx) { delete ctx; }

CATTN_API cattn_status_t cattn_cuda_device_count(int32_t* count) {
  return cattn::guarded("cattn_cuda_device_count", [&] {
    if (count == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, "cattn_cuda_device_count", "count", "is NULL",
                      "NULL", "a pointer");
    *count = cattn::cuda_device_count();
  });
}

}  // extern "C"
