// The layout of the opaque context handle, shared by the files that read it.
#pragma once

#include <atomic>

#include "cattn.h"

struct cattn_context_s {
  // vLLM's _KV_CACHE_LAYOUT_OVERRIDE; atomic so a later override is seen by every thread.
  std::atomic<int> kv_cache_layout_override{CATTN_KV_CACHE_LAYOUT_UNSET};
};
