/* SPDX-License-Identifier: Apache-2.0 */
// The layout of the opaque context handle, shared by the files that read it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "cattn.h"
#include "common/handle_registry.h"

struct cattn_context_s {
  uint64_t magic = static_cast<uint64_t>(cattn::HandleKind::Context);
  // vLLM's _KV_CACHE_LAYOUT_OVERRIDE; atomic so a later override is seen by every thread.
  std::atomic<int> kv_cache_layout_override{CATTN_KV_CACHE_LAYOUT_UNSET};
  // vLLM's cache_config.kv_cache_layout (1.1): the resolved (or preset) layout name as
  // written, empty when has_kv_cache_layout is false. Guarded by kv_cache_layout_mutex.
  mutable std::mutex kv_cache_layout_mutex;
  bool has_kv_cache_layout = false;
  char kv_cache_layout[CATTN_KV_CACHE_LAYOUT_NAME_MAX + 1] = {};
};

namespace cattn {
// Fails unless `ctx` is a live context (see common/handle_registry.h).
inline void require_context(const char* fn, const char* arg, const cattn_context_s* ctx) {
  require_live_handle(fn, arg, ctx, HandleKind::Context);
}
}  // namespace cattn
