// SPDX-License-Identifier: Apache-2.0
// Per-layer attention parameters (vLLM get_per_layer_parameters,
// infer_global_hyperparameters). Host-only and small, so checks and algorithm share this file.
//
// Both calls take caller arrays of versioned structs. The stride of such an array is the
// struct_size its elements carry (a caller built against a newer header has larger elements),
// so every element must carry the same one. Elements are copied in and out with memcpy of the
// known size: no alignment is assumed and fields a newer header appended are left untouched.
#include <cstdint>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"

namespace {

// A validated array of versioned structs: base address, stride in bytes, element count.
struct StructArray {
  char* base;
  size_t stride;
  size_t count;

  template <class T>
  T get(size_t i) const {
    T v;
    std::memcpy(&v, base + i * stride, sizeof v);
    return v;
  }
  template <class T>
  void put(size_t i, const T& v) const {
    std::memcpy(base + i * stride, &v, sizeof v);
  }
};

std::string element(const char* arg, size_t i, const char* field) {
  return std::string(arg) + "[" + std::to_string(i) + "]." + field;
}

// Checks that `count` elements of at least `known` bytes each, strided by element 0's
// struct_size, fit the address space and all carry that same struct_size.
StructArray check_array(const char* fn, const char* arg, const void* p, size_t count,
                        size_t known) {
  if (p == nullptr)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL",
                    "an array of " + std::to_string(count) + " structs");
  StructArray a{static_cast<char*>(const_cast<void*>(p)), 0, count};
  a.stride = a.get<size_t>(0);
  if (a.stride < known)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, element(arg, 0, "struct_size").c_str(),
                    "is too small", std::to_string(a.stride), ">= " + std::to_string(known));
  if (count > (UINTPTR_MAX - reinterpret_cast<uintptr_t>(p)) / a.stride)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "addresses past the end of memory",
                    std::to_string(count) + " elements of " + std::to_string(a.stride) + " bytes",
                    "an array that fits the address space");
  for (size_t i = 1; i < count; ++i) {
    const size_t s = a.get<size_t>(i);
    if (s != a.stride)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, element(arg, i, "struct_size").c_str(),
                      "differs from element 0's (it is the array's stride)", std::to_string(s),
                      std::to_string(a.stride));
  }
  return a;
}

// Records an array with the call: its whole span (check_array bounded count * stride).
void record_array(const char* arg, const StructArray& a, cattn::Use use) {
  cattn::current_call().add(cattn::Part::Data, arg, a.base, a.count * a.stride, use, a.base);
}

void check_flag(const char* fn, const char* arg, size_t i, const char* field, int32_t v) {
  if (v != 0 && v != 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, element(arg, i, field).c_str(), "is not a boolean",
                    std::to_string(v), "0 or 1");
}

// vLLM compares two PerLayerParameters with the dataclass ==, field by field in declaration
// order: ints and floats with ==, so NaN != NaN and -0.0 == 0.0, and None equal only to None.
bool same_params(const cattn_per_layer_parameters_t& a, const cattn_per_layer_parameters_t& b) {
  const bool cap = a.has_logits_soft_cap == b.has_logits_soft_cap &&
                   (!a.has_logits_soft_cap || a.logits_soft_cap == b.logits_soft_cap);
  return a.window_left == b.window_left && cap && a.sm_scale == b.sm_scale &&
         a.has_sinks == b.has_sinks;
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_get_per_layer_parameters(const cattn_attention_layer_desc_t* layers,
                                                        size_t num_layers,
                                                        cattn_per_layer_parameters_t* out) {
  constexpr const char* fn = "cattn_get_per_layer_parameters";
  return cattn::guarded(fn, [&] {
    if (num_layers == 0) return;  // an empty model: nothing to read or write
    const StructArray in =
        check_array(fn, "layers", layers, num_layers, sizeof(cattn_attention_layer_desc_t));
    const StructArray dst =
        check_array(fn, "out", out, num_layers, sizeof(cattn_per_layer_parameters_t));
    // The output is written while the input is still being read.
    record_array("layers", in, cattn::Use::In);
    record_array("out", dst, cattn::Use::Out);
    for (size_t i = 0; i < num_layers; ++i) {
      const auto d = in.get<cattn_attention_layer_desc_t>(i);
      check_flag(fn, "layers", i, "has_sliding_window", d.has_sliding_window);
      check_flag(fn, "layers", i, "has_logits_soft_cap", d.has_logits_soft_cap);
      check_flag(fn, "layers", i, "has_sinks", d.has_sinks);
      if (d.reserved0 != 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, element("layers", i, "reserved0").c_str(),
                        "is not zero", std::to_string(d.reserved0), "0");
    }
    // Separate pass: every check above precedes the first write.
    cattn::seal_arguments();
    for (size_t i = 0; i < num_layers; ++i) {
      const auto d = in.get<cattn_attention_layer_desc_t>(i);
      cattn_per_layer_parameters_t p{};
      p.struct_size = dst.stride;
      p.window_left = d.has_sliding_window ? d.sliding_window_left : -1;
      p.has_logits_soft_cap = d.has_logits_soft_cap;
      p.logits_soft_cap = d.has_logits_soft_cap ? d.logits_soft_cap : 0.0;
      p.sm_scale = d.scale;
      p.has_sinks = d.has_sinks;
      dst.put(i, p);
    }
  });
}

CATTN_API cattn_status_t
cattn_infer_global_hyperparameters(const cattn_per_layer_parameters_t* params, size_t num_layers,
                                   cattn_global_hyperparameters_t* out) {
  constexpr const char* fn = "cattn_infer_global_hyperparameters";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "out", out, cattn::Use::Out);
    if (num_layers == 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "num_layers", "is zero", "0",
                      ">= 1 (vLLM asserts \"No attention layers found in the model.\")");
    const StructArray in =
        check_array(fn, "params", params, num_layers, sizeof(cattn_per_layer_parameters_t));
    record_array("params", in, cattn::Use::In);
    for (size_t i = 0; i < num_layers; ++i) {
      const auto p = in.get<cattn_per_layer_parameters_t>(i);
      check_flag(fn, "params", i, "has_logits_soft_cap", p.has_logits_soft_cap);
      check_flag(fn, "params", i, "has_sinks", p.has_sinks);
    }
    const auto first = in.get<cattn_per_layer_parameters_t>(0);
    bool same_window = true, same_all = true;
    // Element 0 is not compared: vLLM compares that object with itself, which Python's ==
    // reports equal before looking at any field, even a NaN one.
    for (size_t i = 1; i < num_layers; ++i) {
      const auto p = in.get<cattn_per_layer_parameters_t>(i);
      same_window = same_window && p.window_left == first.window_left;
      same_all = same_all && same_params(p, first);
    }
    cattn_global_hyperparameters_t g{};
    g.struct_size = out->struct_size;
    g.window_left = first.window_left;
    g.logits_soft_cap = first.has_logits_soft_cap ? first.logits_soft_cap : 0.0;
    g.sm_scale = first.sm_scale;
    g.has_logits_soft_cap = first.has_logits_soft_cap;
    g.has_sinks = first.has_sinks;
    g.has_same_window_lefts = same_window;
    g.has_same_all_params = same_all;
    cattn::seal_arguments();
    std::memcpy(static_cast<void*>(out), &g, sizeof g);
  });
}

}  // extern "C"
