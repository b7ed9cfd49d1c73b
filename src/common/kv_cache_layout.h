/* SPDX-License-Identifier: Apache-2.0 */
// The six KV-cache layouts (vLLM's KVCacheLayout) as one table, shared by the layout calls:
// names, stride orders and FlashInfer names, in vLLM's iteration order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "cattn.h"

namespace cattn::kv_layout {

struct Layout {
  int value;               // the cattn_kv_cache_layout_t value
  const char* name;        // canonical name
  int32_t stride_order[5]; // logical axis at each physical position
  const char* flashinfer;  // "NHD"/"HND", or nullptr (LHBNC)
};

// In vLLM's iteration order (LBHNC first); the index is cattn_kv_cache_layout_properties.order.
extern const Layout kLayouts[CATTN_KV_CACHE_LAYOUT_COUNT];

// A C caller may store any int in an enum-typed field, but loading an enum object whose value
// lies outside the enum's range is undefined in C++, so such values are read as int first.
inline int bits(const cattn_kv_cache_layout_t& layout) {
  int v;
  static_assert(sizeof v == sizeof layout, "cattn_kv_cache_layout_t is int-sized");
  std::memcpy(&v, &layout, sizeof v);
  return v;
}

// The layout with value `value`, or nullptr when it is not one of the six.
const Layout* find(int value);

// The layout named `name` (the aliases NHD and HND accepted), or nullptr.
const Layout* parse(const char* name);

// "['LBHNC', 'LBNHC', 'LHBNC', 'BLHNC', 'BLNHC', 'BHLNC']", as vLLM lists them in messages.
const std::string& valid_names();

// Fails (CATTN_INVALID_ARGUMENT) unless `value` is one of the six; returns its entry.
const Layout& require(const char* fn, const char* arg, int value);

// Fails (CATTN_INVALID_ARGUMENT) unless `name` is a non-NULL layout name; returns its entry.
const Layout& require_name(const char* fn, const char* arg, const char* name);

}  // namespace cattn::kv_layout
