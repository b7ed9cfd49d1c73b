// SPDX-License-Identifier: Apache-2.0
// The context handle and the CUDA device query.
#include <atomic>
#include <memory>
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
    auto ctx = std::make_unique<cattn_context_s>();
    cattn::register_handle(ctx.get(), cattn::HandleKind::Context);
    *out = ctx.release();
  });
}

CATTN_API void cattn_context_destroy(cattn_context_t* ctx) {
  if (ctx == nullptr) return;
  if (!cattn::release_handle("cattn_context_destroy", ctx, cattn::HandleKind::Context)) return;
  ctx->magic = cattn::kDeadHandleMagic;
  delete ctx;
}

CATTN_API cattn_status_t cattn_cuda_device_count(int32_t* count) {
  return cattn::guarded("cattn_cuda_device_count", [&] {
    if (count == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, "cattn_cuda_device_count", "count", "is NULL",
                      "NULL", "a pointer");
    *count = cattn::cuda_device_count();
  });
}

}  // extern "C"
