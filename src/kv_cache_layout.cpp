// SPDX-License-Identifier: Apache-2.0
// The six KV-cache layouts (vLLM's KVCacheLayout, _layout_from_name,
// get_flashinfer_layout_string) and the strides of a KV-cache view in each of them.
#include "common/kv_cache_layout.h"

#include <cassert>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"

namespace cattn::kv_layout {

const Layout kLayouts[CATTN_KV_CACHE_LAYOUT_COUNT] = {
    {CATTN_KV_CACHE_LAYOUT_LBHNC, "LBHNC", {0, 1, 2, 3, 4}, "HND"},
    {CATTN_KV_CACHE_LAYOUT_LBNHC, "LBNHC", {0, 1, 3, 2, 4}, "NHD"},
    {CATTN_KV_CACHE_LAYOUT_LHBNC, "LHBNC", {0, 2, 1, 3, 4}, nullptr},
    {CATTN_KV_CACHE_LAYOUT_BLHNC, "BLHNC", {1, 0, 2, 3, 4}, "HND"},
    {CATTN_KV_CACHE_LAYOUT_BLNHC, "BLNHC", {1, 0, 3, 2, 4}, "NHD"},
    {CATTN_KV_CACHE_LAYOUT_BHLNC, "BHLNC", {1, 2, 0, 3, 4}, "HND"},
};

const Layout* find(int value) {
  // Indexed by value: the position of each value's entry in kLayouts (-1 for UNSET).
  static constexpr int kIndex[CATTN_KV_CACHE_LAYOUT_COUNT + 1] = {-1, 1, 0, 2, 3, 4, 5};
  if (value < 1 || value > CATTN_KV_CACHE_LAYOUT_COUNT) return nullptr;
  const Layout* l = &kLayouts[kIndex[value]];
  assert(l->value == value);
  return l;
}

const Layout* parse(const char* name) {
  // The legacy names are aliases, resolved before the exact, case-sensitive lookup.
  if (std::strcmp(name, "NHD") == 0) return find(CATTN_KV_CACHE_LAYOUT_LBNHC);
  if (std::strcmp(name, "HND") == 0) return find(CATTN_KV_CACHE_LAYOUT_LBHNC);
  for (const Layout& l : kLayouts)
    if (std::strcmp(name, l.name) == 0) return &l;
  return nullptr;
}

const std::string& valid_names() {
  static const std::string names = [] {
    std::string s = "[";
    for (const Layout& l : kLayouts) s += std::string(s.size() > 1 ? ", '" : "'") + l.name + "'";
    return s + "]";
  }();
  return names;
}

const Layout& require(const char* fn, const char* arg, int value) {
  const Layout* l = find(value);
  if (l == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is not a KV-cache layout", std::to_string(value),
             "one of the six layouts (1..6)");
  return *l;
}

const Layout& require_name(const char* fn, const char* arg, const char* name) {
  if (name == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a NUL-terminated string");
  const Layout* l = parse(name);
  if (l == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is an unknown KV cache layout", quoted(name),
             "NHD, HND or one of " + valid_names());
  return *l;
}

}  // namespace cattn::kv_layout

namespace kl = cattn::kv_layout;

extern "C" {

CATTN_API cattn_status_t cattn_kv_cache_layout_from_name(const char* name,
                                                         cattn_kv_cache_layout_t* layout) {
  constexpr const char* fn = "cattn_kv_cache_layout_from_name";
  return cattn::guarded(fn, [&] {
    cattn::require_out_ptr(fn, "layout", layout);
    const kl::Layout& l = kl::require_name(fn, "name", name);
    // The parse compares with names of at most 5 characters: it reads at most 6 bytes.
    cattn::record_input("name", name, strnlen(name, 5) + 1);
    cattn::seal_arguments();
    *layout = static_cast<cattn_kv_cache_layout_t>(l.value);
  });
}

CATTN_API cattn_status_t cattn_kv_cache_layout_get_properties(
    cattn_kv_cache_layout_t layout, cattn_kv_cache_layout_properties_t* props) {
  constexpr const char* fn = "cattn_kv_cache_layout_get_properties";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "props", props, cattn::Use::Out);
    const kl::Layout& l = kl::require(fn, "layout", kl::bits(layout));
    const int32_t* v = l.stride_order;
    cattn_kv_cache_layout_properties_t p = *props;
    int k = 0;
    for (int i = 0; i < 5; ++i) {
      p.stride_order[i] = v[i];
      if (v[i] != 0) p.layer_view_order[k++] = v[i] - 1;
    }
    p.is_layer_compact = v[0] == 0;
    p.is_block_contiguous = v[2] == 2 && v[3] == 3 && v[4] == 4;
    p.is_block_compact = (v[0] == 0 && v[1] == 1) || (v[0] == 1 && v[1] == 0);
    p.is_block_outermost = v[0] == 1;
    p.order = static_cast<int32_t>(&l - kl::kLayouts);
    p.name = l.name;
    p.flashinfer_layout = l.flashinfer;
    cattn::seal_arguments();
    *props = p;
  });
}

CATTN_API cattn_status_t cattn_get_flashinfer_layout_string(cattn_kv_cache_layout_t layout,
                                                            const char** out) {
  constexpr const char* fn = "cattn_get_flashinfer_layout_string";
  return cattn::guarded(fn, [&] {
    cattn::require_out_ptr(fn, "out", out);
    const kl::Layout& l = kl::require(fn, "layout", kl::bits(layout));
    if (l.flashinfer == nullptr)
      cattn::fail_arg(CATTN_NOT_SUPPORTED, fn, "layout", "has no FlashInfer equivalent", l.name,
                      "a layout FlashInfer supports (all but LHBNC)");
    cattn::seal_arguments();
    *out = l.flashinfer;
  });
}

CATTN_API cattn_status_t cattn_kv_cache_layout_strides(cattn_kv_cache_layout_strides_args_t* args) {
  constexpr const char* fn = "cattn_kv_cache_layout_strides";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const kl::Layout& l = kl::require(fn, "args->layout", kl::bits(args->layout));
    cattn::require_reserved_zero(fn, "args->reserved0", args->reserved0);
    static const char* const kAxis[5] = {"args->sizes[0] (L)", "args->sizes[1] (B)",
                                         "args->sizes[2] (H)", "args->sizes[3] (N)",
                                         "args->sizes[4] (C)"};
    int64_t sizes[5];
    for (int i = 0; i < 5; ++i) {
      sizes[i] = args->sizes[i];
      if (sizes[i] < 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, kAxis[i], "is negative",
                        std::to_string(sizes[i]), ">= 0");
    }
    int64_t strides[5], shape[5], numel = 1;
    for (int i = 0; i < 5; ++i) numel = cattn::checked_mul(fn, "args->sizes (L*B*H*N*C)", numel, sizes[i]);
    // Innermost first: a physical position's stride is the product of the positions inside it,
    // an empty axis counting as one (torch's contiguous strides).
    int64_t stride = 1;
    for (int k = 4; k >= 0; --k) {
      const int axis = l.stride_order[k];
      shape[k] = sizes[axis];
      strides[axis] = stride;
      if (k > 0) stride = cattn::checked_mul(fn, kAxis[axis], stride, sizes[axis] > 0 ? sizes[axis] : 1);
    }
    for (int i = 0; i < 5; ++i) {
      args->strides[i] = strides[i];
      args->physical_shape[i] = shape[i];
    }
    args->numel = numel;
  });
}

}  // extern "C"
