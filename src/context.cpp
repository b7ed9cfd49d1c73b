// SPDX-License-Identifier: Apache-2.0
// The context handle and the CUDA device query.
#include <atomic>
#include <memory>
#include <new>

#include "common/cuda_runtime.h"
#include "common/error.h"
#include "common/context.h"
#include "common/struct_arg.h"

extern "C" {

CATTN_API cattn_status_t cattn_context_create(cattn_context_t** out) {
  return cattn::guarded("cattn_context_create", [&] {
    cattn::require_out_ptr("cattn_context_create", "out", out);
    cattn::seal_arguments();
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
    cattn::require_out_ptr("cattn_cuda_device_count", "count", count);
    cattn::seal_arguments();
    *count = cattn::cuda_device_count();
  });
}

}  // extern "C"
