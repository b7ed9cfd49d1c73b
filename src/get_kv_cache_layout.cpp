// SPDX-License-Identifier: Apache-2.0
// KV-cache layout resolution (vLLM get_kv_cache_layout, is_valid_kv_cache_layout).
// vLLM caches the answer with functools.lru_cache, so an override set after the first call is
// silently ignored; here every call resolves afresh from its explicit inputs.
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/context.h"
#include "common/error.h"
#include "common/kv_cache_layout.h"
#include "common/struct_arg.h"

namespace {

constexpr const char* kResolve = "cattn_get_kv_cache_layout";

cattn_kv_cache_layout_t parse_layout(const char* s) {
  if (std::strcmp(s, "NHD") == 0) return CATTN_KV_CACHE_LAYOUT_NHD;
  if (std::strcmp(s, "HND") == 0) return CATTN_KV_CACHE_LAYOUT_HND;
  return CATTN_KV_CACHE_LAYOUT_UNSET;
}

bool in_range(int layout) {
  return layout >= CATTN_KV_CACHE_LAYOUT_UNSET && layout <= CATTN_KV_CACHE_LAYOUT_HND;
}

int layout_bits(const cattn_kv_cache_layout_t& layout) { return cattn::kv_layout::bits(layout); }

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_is_valid_kv_cache_layout(const char* value, int32_t* valid) {
  return cattn::guarded("cattn_is_valid_kv_cache_layout", [&] {
    if (value == nullptr)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, "cattn_is_valid_kv_cache_layout", "value",
                      "is NULL", "NULL", "a NUL-terminated string");
    cattn::require_out_ptr("cattn_is_valid_kv_cache_layout", "valid", valid);
    // The parse compares with "NHD" and "HND": it reads at most 4 bytes.
    cattn::record_input("value", value, strnlen(value, 3) + 1);
    cattn::seal_arguments();
    *valid = parse_layout(value) != CATTN_KV_CACHE_LAYOUT_UNSET;
  });
}

CATTN_API const char* cattn_kv_cache_layout_name(cattn_kv_cache_layout_t layout) {
  switch (layout_bits(layout)) {
    case CATTN_KV_CACHE_LAYOUT_NHD: return "NHD";
    case CATTN_KV_CACHE_LAYOUT_HND: return "HND";
    default: return nullptr;
  }
}

CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_override(
    cattn_context_t* ctx, cattn_kv_cache_layout_t layout) {
  constexpr const char* fn = "cattn_context_set_kv_cache_layout_override";
  return cattn::guarded(fn, [&] {
    cattn::require_context(fn, "ctx", ctx);
    const int value = layout_bits(layout);
    if (!in_range(value))
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "layout", "is not a layout",
                      std::to_string(value), "UNSET, NHD or HND");
    ctx->kv_cache_layout_override.store(value, std::memory_order_release);
  });
}

CATTN_API cattn_status_t cattn_get_kv_cache_layout(const cattn_context_t* ctx,
                                                   cattn_kv_cache_layout_args_t* args) {
  return cattn::guarded(kResolve, [&] {
    cattn::require_struct(kResolve, "args", args);
    const int connector = layout_bits(args->connector_layout);
    if (!in_range(connector))
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->connector_layout",
                      "is not a layout", std::to_string(connector), "UNSET, NHD or HND");
    const uint32_t all = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD) |
                         CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_HND);
    if (args->supported_mask & ~all)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve, "args->supported_mask",
                      "has bits that name no layout", std::to_string(args->supported_mask),
                      "bits of CATTN_KV_CACHE_LAYOUT_BIT(NHD/HND)");

    cattn_kv_cache_layout_t layout = CATTN_KV_CACHE_LAYOUT_UNSET;
    if (ctx != nullptr) cattn::require_context(kResolve, "ctx", ctx);
    if (ctx != nullptr)
      layout = static_cast<cattn_kv_cache_layout_t>(
          ctx->kv_cache_layout_override.load(std::memory_order_acquire));
    if (layout == CATTN_KV_CACHE_LAYOUT_UNSET) {
      const char* user = args->env_value;
      // getenv is only read, never written, by the library.
      if (user == nullptr && args->read_environment) user = std::getenv(CATTN_KV_CACHE_LAYOUT_ENV);
      if (user != nullptr) {
        layout = parse_layout(user);
        if (layout == CATTN_KV_CACHE_LAYOUT_UNSET)
          cattn::fail_arg(CATTN_INVALID_ARGUMENT, kResolve,
                          args->env_value ? "args->env_value" : CATTN_KV_CACHE_LAYOUT_ENV,
                          "is not a valid KV-cache layout", cattn::quoted(user),
                          "\"NHD\" or \"HND\"");
      }
    }
    if (layout == CATTN_KV_CACHE_LAYOUT_UNSET)
      layout = static_cast<cattn_kv_cache_layout_t>(connector);
    if (layout == CATTN_KV_CACHE_LAYOUT_UNSET) layout = CATTN_KV_CACHE_LAYOUT_NHD;

    if (args->supported_mask != 0 && !(args->supported_mask & CATTN_KV_CACHE_LAYOUT_BIT(layout)))
      cattn::fail_arg(CATTN_NOT_SUPPORTED, kResolve, "the resolved layout",
                      "is not supported by the backend", cattn_kv_cache_layout_name(layout),
                      "a layout in args->supported_mask (" +
                          std::to_string(args->supported_mask) + ")");
    args->layout = layout;
  });
}

}  // extern "C"
