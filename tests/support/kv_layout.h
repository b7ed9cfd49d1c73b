/* SPDX-License-Identifier: Apache-2.0 */
// Shared by the KV-cache layout tests (1.0 and 1.1): contexts as RAII owners, a scoped
// CATTN_KV_CACHE_LAYOUT, and layouts by name or by raw int.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "cattn.h"
#include "support/status_matchers.h"

namespace cattn_test {

using Context = std::unique_ptr<cattn_context_t, void (*)(cattn_context_t*)>;

inline Context make_context() {
  cattn_context_t* ctx = nullptr;
  EXPECT_CATTN_OK(cattn_context_create(&ctx));
  return Context(ctx, cattn_context_destroy);
}

// Sets (or unsets) CATTN_KV_CACHE_LAYOUT for one scope and restores what was there before.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::optional<std::string>& value) {
    if (const char* old = std::getenv(CATTN_KV_CACHE_LAYOUT_ENV)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const std::optional<std::string>& v) {
    if (v) {
      setenv(CATTN_KV_CACHE_LAYOUT_ENV, v->c_str(), 1);
    } else {
      unsetenv(CATTN_KV_CACHE_LAYOUT_ENV);
    }
  }
  std::optional<std::string> old_;
};

// The layout a name parses to (1.1 names and aliases); a failed parse fails the test.
inline cattn_kv_cache_layout_t layout_named(const std::string& name) {
  cattn_kv_cache_layout_t l = CATTN_KV_CACHE_LAYOUT_UNSET;
  EXPECT_CATTN_OK(cattn_kv_cache_layout_from_name(name.c_str(), &l));
  return l;
}

// The canonical name of a layout, "?" for a value that is none.
inline std::string name_of(cattn_kv_cache_layout_t l) {
  cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
  if (cattn_kv_cache_layout_get_properties(l, &p) != CATTN_OK) return "?";
  return p.name;
}

// An arbitrary int as an enum argument, as a C caller may pass one. Use it only as a prvalue
// (an argument): a stored enum object outside the enum's range (0..7) is undefined to load,
// which UBSan's -fsanitize=enum reports.
inline cattn_kv_cache_layout_t raw_layout(int v) { return static_cast<cattn_kv_cache_layout_t>(v); }

// A stored sentinel that no call writes: inside the enum's range but not a layout.
constexpr cattn_kv_cache_layout_t kNoLayout = static_cast<cattn_kv_cache_layout_t>(7);

}  // namespace cattn_test
