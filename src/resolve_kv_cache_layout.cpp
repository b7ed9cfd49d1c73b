// SPDX-License-Identifier: Apache-2.0
// resolve_kv_cache_layout, record_kv_cache_layout and CacheConfig.get_resolved_kv_cache_layout:
// the engine-wide layout decision and the resolved name it leaves in the context (vLLM keeps
// it in cache_config.kv_cache_layout).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/context.h"
#include "common/error.h"
#include "common/kv_cache_layout.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"

namespace {

namespace kl = cattn::kv_layout;
constexpr const char* kResolve = "cattn_resolve_kv_cache_layout";

// Bits (1 << value) of the block-compact layouts: LBHNC, LBNHC, BLHNC, BLNHC.
constexpr uint32_t kBlockCompact =
    (1u << CATTN_KV_CACHE_LAYOUT_LBHNC) | (1u << CATTN_KV_CACHE_LAYOUT_LBNHC) |
    (1u << CATTN_KV_CACHE_LAYOUT_BLHNC) | (1u << CATTN_KV_CACHE_LAYOUT_BLNHC);

std::string element(const char* arg, int64_t i) {
  return std::string(arg) + "[" + std::to_string(i) + "]";
}

// The context's stored name parsed; fails naming `fn` when it is not a layout (a preset may
// hold any name, as vLLM's cache_config.kv_cache_layout).
const kl::Layout& stored(const char* fn, const cattn_context_s* ctx) {
  const kl::Layout* l = kl::parse(ctx->kv_cache_layout);
  if (l == nullptr)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "ctx's preset layout",
                    "is an unknown KV cache layout", cattn::quoted(ctx->kv_cache_layout),
                    "NHD, HND or one of " + kl::valid_names());
  return *l;
}

void store(cattn_context_s* ctx, const char* name) {
  const size_t n = std::strlen(name);
  std::memcpy(ctx->kv_cache_layout, name, n + 1);
  ctx->has_kv_cache_layout = true;
}

// The first worker's list after the HNC filter, as vLLM prints candidates: ['LBNHC', ...].
std::string candidate_names(const char* const* names, int64_t count, uint32_t allowed) {
  std::string s = "[";
  for (int64_t i = 0; i < count && s.size() < cattn::kMaxMessagePart; ++i) {
    const char* name = names[i];
    const kl::Layout* l = name ? kl::parse(name) : nullptr;
    if (l == nullptr || !(allowed & (1u << l->value))) continue;
    s += std::string(s.size() > 1 ? ", '" : "'") + l->name + "'";
  }
  return s + "]";
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_preset(cattn_context_t* ctx,
                                                                  const char* name) {
  constexpr const char* fn = "cattn_context_set_kv_cache_layout_preset";
  return cattn::guarded(fn, [&] {
    cattn::require_context(fn, "ctx", ctx);
    if (name != nullptr && strnlen(name, CATTN_KV_CACHE_LAYOUT_NAME_MAX + 1) >
                               CATTN_KV_CACHE_LAYOUT_NAME_MAX)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "name", "is too long to be a layout name",
                      cattn::quoted(name),
                      "at most " + std::to_string(CATTN_KV_CACHE_LAYOUT_NAME_MAX) + " bytes");
    std::lock_guard<std::mutex> lock(ctx->kv_cache_layout_mutex);
    if (name == nullptr) {
      ctx->has_kv_cache_layout = false;
      ctx->kv_cache_layout[0] = '\0';
    } else {
      // Copied from a local so that a name changed by another thread cannot grow past the
      // checked length.
      char copy[CATTN_KV_CACHE_LAYOUT_NAME_MAX + 1] = {};
      std::memcpy(copy, name, strnlen(name, CATTN_KV_CACHE_LAYOUT_NAME_MAX));
      store(ctx, copy);
    }
  });
}

CATTN_API cattn_status_t cattn_resolve_kv_cache_layout(
    cattn_context_t* ctx, cattn_resolve_kv_cache_layout_args_t* args) {
  return cattn::guarded(kResolve, [&] {
    cattn::require_context(kResolve, "ctx", ctx);
    cattn::require_struct(kResolve, "args", args);
    cattn::require_reserved_zero(kResolve, "args->reserved0", args->reserved0);
    cattn::require_reserved_zero(kResolve, "args->reserved1", args->reserved1);
    std::lock_guard<std::mutex> lock(ctx->kv_cache_layout_mutex);

    // 1. A layout the context holds wins, checked against nothing.
    if (ctx->has_kv_cache_layout) {
      const kl::Layout& l = stored(kResolve, ctx);
      args->layout = static_cast<cattn_kv_cache_layout_t>(l.value);
      args->connector_fell_back = 0;
      args->from_preset = 1;
      return;
    }

    // 2. At least one worker, none with an empty list (vLLM asserts both).
    const int64_t workers = args->num_workers;
    if (workers <= 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->num_workers",
                      "reports no worker's supported KV cache layouts", std::to_string(workers),
                      ">= 1");
    const int64_t* counts = args->worker_counts;
    if (counts == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->worker_counts", "is NULL", "NULL",
                      "an array of " + std::to_string(workers) + " counts");
    int64_t total = 0;
    for (int64_t w = 0; w < workers; ++w) {
      const int64_t c = counts[w];
      if (c <= 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve,
                        element("args->worker_counts", w).c_str(),
                        c == 0 ? "is 0: a worker reported no supported KV cache layouts"
                               : "is negative",
                        std::to_string(c), ">= 1");
      total = cattn::checked_add(kResolve, "the sum of args->worker_counts", total, c);
    }
    const char* const* names = args->worker_names;
    if (names == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->worker_names", "is NULL", "NULL",
                      "an array of " + std::to_string(total) + " names");
    const int64_t first_count = counts[0];
    if (first_count <= 0 || first_count > total)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->worker_counts",
                      "changed during the call", std::to_string(first_count), "stable counts");
    for (int64_t i = 0; i < total; ++i)
      if (names[i] == nullptr)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve,
                        element("args->worker_names", i).c_str(), "is NULL", "NULL",
                        "a NUL-terminated layout name");

    // 3. Every worker's list equals the first's, name by name. Counts are read again here;
    // each is bounded by what is left of the checked total.
    int64_t at = first_count;
    for (int64_t w = 1; w < workers; ++w) {
      const int64_t c = counts[w];
      if (c <= 0 || c > total - at)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->worker_counts",
                        "changed during the call", std::to_string(c), "stable counts");
      bool same = c == first_count;
      for (int64_t i = 0; same && i < c; ++i) same = std::strcmp(names[at + i], names[i]) == 0;
      if (!same)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve,
                        ("args->worker_names (worker " + std::to_string(w) + ")").c_str(),
                        "disagree with worker 0's supported KV cache layouts",
                        "worker " + std::to_string(w) + "'s list",
                        "the same names in the same order as worker 0's");
      at += c;
    }

    // 4. The candidates: the first list parsed. Only its set, its first entry and its first
    // block-compact entry matter, so nothing is copied.
    uint32_t candidates = 0;
    int first = 0, first_compact = 0;
    for (int64_t i = 0; i < first_count; ++i) {
      const kl::Layout& l =
          kl::require_name(kResolve, element("args->worker_names", i).c_str(), names[i]);
      candidates |= 1u << l.value;
      if (first == 0) first = l.value;
      if (first_compact == 0 && (kBlockCompact & (1u << l.value))) first_compact = l.value;
    }

    // 5. Specs of more than one (num_heads, num_states, page_size_bytes) need block-compact.
    const int64_t specs = args->num_specs;
    if (specs < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->num_specs", "is negative",
                      std::to_string(specs), ">= 0");
    const int64_t* heads = args->spec_num_heads;
    const int64_t* states = args->spec_num_states;
    const int64_t* pages = args->spec_page_size_bytes;
    if (specs > 0) {
      const char* missing = heads == nullptr    ? "args->spec_num_heads"
                            : states == nullptr ? "args->spec_num_states"
                            : pages == nullptr  ? "args->spec_page_size_bytes"
                                                : nullptr;
      if (missing != nullptr)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, missing, "is NULL", "NULL",
                        "an array of " + std::to_string(specs) + " values");
    }
    bool mixed = false;
    for (int64_t s = 1; s < specs && !mixed; ++s)
      mixed = heads[s] != heads[0] || states[s] != states[0] || pages[s] != pages[0];
    uint32_t allowed = 0x3fu << 1;
    if (mixed) {
      allowed = kBlockCompact;
      candidates &= kBlockCompact;
      first = first_compact;
      if (candidates == 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->worker_names",
                        "hold no block-compact layout, which specs with mixed HNC shapes need",
                        candidate_names(names, first_count, 0x3fu << 1),
                        "one of LBHNC, LBNHC, BLHNC, BLNHC");
    }

    // 6.-8. The user's setting, else the connector's preference, else the first candidate.
    const char* user = args->env_value;
    const char* user_arg = "args->env_value";
    // getenv is only read, never written, by the library.
    if (user == nullptr && args->read_environment) {
      user = std::getenv(CATTN_KV_CACHE_LAYOUT_ENV);
      user_arg = CATTN_KV_CACHE_LAYOUT_ENV;
    }
    int chosen = first;
    int32_t fell_back = 0;
    if (user != nullptr) {
      const kl::Layout& l = kl::require_name(kResolve, user_arg, user);
      if (!(candidates & (1u << l.value)))
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, user_arg,
                        "does not satisfy every supported set", cattn::quoted(user),
                        "one of " + candidate_names(names, first_count, allowed));
      chosen = l.value;
    } else if (args->connector_layout != nullptr) {
      const kl::Layout& l =
          kl::require_name(kResolve, "args->connector_layout", args->connector_layout);
      if (candidates & (1u << l.value)) {
        chosen = l.value;
      } else {
        fell_back = 1;
      }
    }

    store(ctx, kl::find(chosen)->name);
    args->layout = static_cast<cattn_kv_cache_layout_t>(chosen);
    args->connector_fell_back = fell_back;
    args->from_preset = 0;
  });
}

CATTN_API cattn_status_t cattn_record_kv_cache_layout(cattn_context_t* ctx, const char* name) {
  constexpr const char* fn = "cattn_record_kv_cache_layout";
  return cattn::guarded(fn, [&] {
    cattn::require_context(fn, "ctx", ctx);
    const kl::Layout& l = kl::require_name(fn, "name", name);
    std::lock_guard<std::mutex> lock(ctx->kv_cache_layout_mutex);
    // vLLM compares the stored string, not the layouts: a preset "NHD" conflicts with LBNHC.
    if (ctx->has_kv_cache_layout && std::strcmp(ctx->kv_cache_layout, l.name) != 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "name",
                      ("names another layout than the one ctx is already resolved to, " +
                       cattn::quoted(ctx->kv_cache_layout))
                          .c_str(),
                      l.name, ctx->kv_cache_layout);
    store(ctx, l.name);
  });
}

CATTN_API cattn_status_t cattn_get_resolved_kv_cache_layout(const cattn_context_t* ctx,
                                                            cattn_kv_cache_layout_t* layout) {
  constexpr const char* fn = "cattn_get_resolved_kv_cache_layout";
  return cattn::guarded(fn, [&] {
    cattn::require_context(fn, "ctx", ctx);
    cattn::require_out_ptr(fn, "layout", layout);
    std::lock_guard<std::mutex> lock(ctx->kv_cache_layout_mutex);
    if (!ctx->has_kv_cache_layout)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "ctx",
                      "has no KV cache layout resolved yet (resolve_kv_cache_layout resolves "
                      "it once unless a preset is set)",
                      "unresolved", "a resolved or preset layout");
    const int value = stored(fn, ctx).value;
    cattn::seal_arguments();
    *layout = static_cast<cattn_kv_cache_layout_t>(value);
  });
}

}  // extern "C"
