// SPDX-License-Identifier: Apache-2.0
// get_per_layer_parameters and infer_global_hyperparameters: conformance against the seed
// oracle's vectors (None vs 0.0 soft caps, windows, sinks, -0.0, NaN and inf), arrays whose
// stride is a newer header's larger struct_size, and every error path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cattn.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

double num(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    ADD_FAILURE() << "bad float " << s;
  }
  return j.get<double>();
}

// Same value, same sign of zero, or both NaN.
::testing::AssertionResult same_double(double a, double b) {
  if ((std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b;
}

cattn_attention_layer_desc_t desc_of(const nlohmann::json& l) {
  cattn_attention_layer_desc_t d = CATTN_ATTENTION_LAYER_DESC_INIT;
  if (!l["window"].is_null()) {
    d.has_sliding_window = 1;
    d.sliding_window_left = l["window"][0];
    d.sliding_window_right = l["window"][1];
  } else {
    d.sliding_window_left = 12345;  // must be ignored
  }
  if (!l["soft_cap"].is_null()) {
    d.has_logits_soft_cap = 1;
    d.logits_soft_cap = num(l["soft_cap"]);
  } else {
    d.logits_soft_cap = 99.0;  // must be ignored
  }
  d.scale = num(l["scale"]);
  d.has_sinks = l["sinks"].get<bool>();
  return d;
}

// An array of versioned structs with a chosen stride (>= sizeof(T)) and byte offset from an
// 8-aligned buffer, padding poisoned, so that stride handling and "nothing written" checks are
// visible.
template <class T>
class StructBuf {
 public:
  StructBuf(size_t n, size_t stride, size_t offset = 0)
      : n_(n), stride_(stride), offset_(offset), bytes_(n * stride + offset + 8, 0xA5) {}
  T* ptr() { return reinterpret_cast<T*>(bytes_.data() + offset_); }
  T get(size_t i) const {
    T v;
    std::memcpy(&v, bytes_.data() + offset_ + i * stride_, sizeof v);
    return v;
  }
  void put(size_t i, T v) {
    v.struct_size = stride_;
    std::memcpy(bytes_.data() + offset_ + i * stride_, &v, sizeof v);
  }
  void set_size(size_t i, size_t s) {
    std::memcpy(bytes_.data() + offset_ + i * stride_, &s, sizeof s);
  }
  const std::vector<unsigned char>& bytes() const { return bytes_; }
  size_t stride() const { return stride_; }

 private:
  size_t n_, stride_, offset_;
  std::vector<unsigned char> bytes_;
};

}  // namespace

TEST(get_per_layer_parameters, OracleVectors) {
  const auto vec = load_vectors("get_per_layer_parameters");
  ASSERT_GT(vec["cases"].size(), 20u);
  const size_t kDesc = CATTN_ATTENTION_LAYER_DESC_SIZE, kParams = CATTN_PER_LAYER_PARAMETERS_SIZE;
  const size_t kGlobal = CATTN_GLOBAL_HYPERPARAMETERS_SIZE;
  // Natural strides, newer headers' larger structs, and odd strides at an odd offset.
  const size_t layouts[][3] = {
      {kDesc, kParams, 0}, {kDesc + 16, kParams + 24, 0}, {kDesc + 4, kParams + 12, 3}};
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const size_t n = c["layers"].size();
    for (const auto& lay : layouts) {
      StructBuf<cattn_attention_layer_desc_t> layers(n, lay[0], lay[2]);
      for (size_t i = 0; i < n; ++i) layers.put(i, desc_of(c["layers"][i]));
      StructBuf<cattn_per_layer_parameters_t> params(n, lay[1], lay[2]);
      for (size_t i = 0; i < n; ++i) params.set_size(i, lay[1]);
      ASSERT_CATTN_OK(cattn_get_per_layer_parameters(layers.ptr(), n, params.ptr()));
      for (size_t i = 0; i < n; ++i) {
        const auto& e = c["per_layer"][i];
        const auto p = params.get(i);
        EXPECT_EQ(p.struct_size, lay[1]);
        EXPECT_EQ(p.window_left, e["window_left"].get<int64_t>());
        EXPECT_EQ(p.has_logits_soft_cap, e["logits_soft_cap"].is_null() ? 0 : 1);
        EXPECT_TRUE(same_double(p.logits_soft_cap,
                                e["logits_soft_cap"].is_null() ? 0.0 : num(e["logits_soft_cap"])));
        EXPECT_TRUE(same_double(p.sm_scale, num(e["sm_scale"])));
        EXPECT_EQ(p.has_sinks, e["has_sinks"].get<bool>() ? 1 : 0);
        // Bytes past the known struct (a newer header's fields) are untouched.
        for (size_t b = kParams; b < lay[1]; ++b)
          ASSERT_EQ(params.bytes()[lay[2] + i * lay[1] + b], 0xA5);
      }

      StructBuf<cattn_global_hyperparameters_t> global(1, kGlobal + lay[2] * 8, 0);
      global.set_size(0, kGlobal + lay[2] * 8);
      ASSERT_CATTN_OK(cattn_infer_global_hyperparameters(params.ptr(), n, global.ptr()));
      const auto g = global.get(0);
      const auto& e = c["global"];
      EXPECT_EQ(g.window_left, e["window_left"].get<int64_t>());
      EXPECT_EQ(g.has_logits_soft_cap, e["logits_soft_cap"].is_null() ? 0 : 1);
      if (!e["logits_soft_cap"].is_null())
        EXPECT_TRUE(same_double(g.logits_soft_cap, num(e["logits_soft_cap"])));
      EXPECT_TRUE(same_double(g.sm_scale, num(e["sm_scale"])));
      EXPECT_EQ(g.has_sinks, e["has_sinks"].get<bool>() ? 1 : 0);
      EXPECT_EQ(g.has_same_window_lefts, e["has_same_window_lefts"].get<bool>() ? 1 : 0);
      EXPECT_EQ(g.has_same_all_params, e["has_same_all_params"].get<bool>() ? 1 : 0);
      for (size_t b = kGlobal; b < global.stride(); ++b) ASSERT_EQ(global.bytes()[b], 0xA5);
    }
  }
}

TEST(get_per_layer_parameters, SoftCapNoneIsNotZero) {
  // A missing cap with a stale 0.0 in the value field still differs from a real cap of 0.0,
  // and two missing caps are equal whatever their value fields hold.
  cattn_per_layer_parameters_t p[3] = {CATTN_PER_LAYER_PARAMETERS_INIT,
                                       CATTN_PER_LAYER_PARAMETERS_INIT,
                                       CATTN_PER_LAYER_PARAMETERS_INIT};
  p[1].logits_soft_cap = 7.0;
  cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  ASSERT_CATTN_OK(cattn_infer_global_hyperparameters(p, 3, &g));
  EXPECT_EQ(g.has_same_all_params, 1);
  EXPECT_EQ(g.has_logits_soft_cap, 0);
  EXPECT_EQ(g.logits_soft_cap, 0.0);
  p[2].has_logits_soft_cap = 1;
  ASSERT_CATTN_OK(cattn_infer_global_hyperparameters(p, 3, &g));
  EXPECT_EQ(g.has_same_all_params, 0);
  EXPECT_EQ(g.has_same_window_lefts, 1);
}

TEST(get_per_layer_parameters, EmptyModel) {
  // get_per_layer_parameters of no layers is a no-op (NULL arrays allowed); the global
  // parameters of no layers are vLLM's assertion, an error here.
  EXPECT_CATTN_OK(cattn_get_per_layer_parameters(nullptr, 0, nullptr));
  cattn_attention_layer_desc_t d = CATTN_ATTENTION_LAYER_DESC_INIT;
  d.struct_size = 0;  // not even looked at
  cattn_per_layer_parameters_t p = CATTN_PER_LAYER_PARAMETERS_INIT;
  const auto before = p;
  EXPECT_CATTN_OK(cattn_get_per_layer_parameters(&d, 0, &p));
  EXPECT_EQ(std::memcmp(&p, &before, sizeof p), 0);
  cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  const auto gbefore = g;
  EXPECT_CATTN_ERROR(cattn_infer_global_hyperparameters(&p, 0, &g), CATTN_INVALID_ARGUMENT,
                     "No attention layers found");
  EXPECT_CATTN_ERROR(cattn_infer_global_hyperparameters(nullptr, 0, &g), CATTN_INVALID_ARGUMENT,
                     "num_layers");
  EXPECT_EQ(std::memcmp(&g, &gbefore, sizeof g), 0);
}

TEST(get_per_layer_parameters, PerLayerErrors) {
  const size_t kDesc = CATTN_ATTENTION_LAYER_DESC_SIZE, kParams = CATTN_PER_LAYER_PARAMETERS_SIZE;
  StructBuf<cattn_attention_layer_desc_t> layers(3, kDesc);
  for (size_t i = 0; i < 3; ++i) layers.put(i, CATTN_ATTENTION_LAYER_DESC_INIT);
  StructBuf<cattn_per_layer_parameters_t> out(3, kParams);
  for (size_t i = 0; i < 3; ++i) out.set_size(i, kParams);
  const auto before = out.bytes();
  auto expect_error = [&](const cattn_attention_layer_desc_t* l, size_t n,
                          cattn_per_layer_parameters_t* o, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_get_per_layer_parameters(l, n, o), CATTN_INVALID_ARGUMENT, needle);
    EXPECT_EQ(out.bytes(), before) << "a failed call wrote to its output";
  };
  expect_error(nullptr, 3, out.ptr(), "layers is NULL");
  expect_error(layers.ptr(), 3, nullptr, "out is NULL");
  expect_error(layers.ptr(), std::numeric_limits<size_t>::max() / 16, out.ptr(),
               "layers addresses past the end of memory");

  auto with_layer = [&](size_t i, auto edit, const char* needle) {
    StructBuf<cattn_attention_layer_desc_t> l = layers;
    auto d = l.get(i);
    edit(d);
    std::memcpy(reinterpret_cast<unsigned char*>(l.ptr()) + i * kDesc, &d, sizeof d);
    expect_error(l.ptr(), 3, out.ptr(), needle);
  };
  with_layer(
      0, [](auto& d) { d.struct_size = kDesc - 8; }, "layers[0].struct_size is too small");
  with_layer(
      0, [](auto& d) { d.struct_size = 0; }, "layers[0].struct_size");
  with_layer(
      2, [](auto& d) { d.struct_size = kDesc + 8; }, "layers[2].struct_size differs");
  with_layer(
      1, [](auto& d) { d.has_sliding_window = 2; }, "layers[1].has_sliding_window");
  with_layer(
      2, [](auto& d) { d.has_logits_soft_cap = -1; }, "layers[2].has_logits_soft_cap");
  with_layer(
      2, [](auto& d) { d.has_sinks = 5; }, "layers[2].has_sinks");
  with_layer(
      1, [](auto& d) { d.reserved0 = 1; }, "layers[1].reserved0");

  StructBuf<cattn_per_layer_parameters_t> bad_out = out;
  bad_out.set_size(0, kParams - 1);
  EXPECT_CATTN_ERROR(cattn_get_per_layer_parameters(layers.ptr(), 3, bad_out.ptr()),
                     CATTN_INVALID_ARGUMENT, "out[0].struct_size is too small");
  bad_out = out;
  bad_out.set_size(2, 0);
  EXPECT_CATTN_ERROR(cattn_get_per_layer_parameters(layers.ptr(), 3, bad_out.ptr()),
                     CATTN_INVALID_ARGUMENT, "out[2].struct_size differs");
  bad_out = out;
  bad_out.set_size(1, kParams + 8);
  const auto bad_before = bad_out.bytes();
  EXPECT_CATTN_ERROR(cattn_get_per_layer_parameters(layers.ptr(), 3, bad_out.ptr()),
                     CATTN_INVALID_ARGUMENT, "out[1].struct_size");
  EXPECT_EQ(bad_out.bytes(), bad_before);

  // After all that the good call works.
  ASSERT_CATTN_OK(cattn_get_per_layer_parameters(layers.ptr(), 3, out.ptr()));
  EXPECT_EQ(out.get(2).window_left, -1);
  EXPECT_EQ(out.get(2).sm_scale, 1.0);
}

TEST(get_per_layer_parameters, GlobalErrors) {
  const size_t kParams = CATTN_PER_LAYER_PARAMETERS_SIZE;
  StructBuf<cattn_per_layer_parameters_t> params(2, kParams);
  params.put(0, CATTN_PER_LAYER_PARAMETERS_INIT);
  params.put(1, CATTN_PER_LAYER_PARAMETERS_INIT);
  cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  g.window_left = 777;
  const auto before = g;
  auto expect_error = [&](const cattn_per_layer_parameters_t* p, size_t n,
                          cattn_global_hyperparameters_t* o, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_infer_global_hyperparameters(p, n, o), CATTN_INVALID_ARGUMENT, needle);
    EXPECT_EQ(std::memcmp(&g, &before, sizeof g), 0) << "a failed call wrote to its output";
  };
  expect_error(params.ptr(), 2, nullptr, "out is NULL");
  cattn_global_hyperparameters_t small = g;
  small.struct_size = sizeof(size_t);
  EXPECT_CATTN_ERROR(cattn_infer_global_hyperparameters(params.ptr(), 2, &small),
                     CATTN_INVALID_ARGUMENT, "struct_size");
  EXPECT_EQ(small.window_left, 777);
  expect_error(nullptr, 2, &g, "params is NULL");
  expect_error(params.ptr(), std::numeric_limits<size_t>::max() / 8, &g,
               "params addresses past the end of memory");
  auto with_param = [&](size_t i, auto edit, const char* needle) {
    StructBuf<cattn_per_layer_parameters_t> p = params;
    auto v = p.get(i);
    edit(v);
    std::memcpy(reinterpret_cast<unsigned char*>(p.ptr()) + i * kParams, &v, sizeof v);
    expect_error(p.ptr(), 2, &g, needle);
  };
  with_param(
      0, [](auto& v) { v.struct_size = 8; }, "params[0].struct_size is too small");
  with_param(
      1, [](auto& v) { v.struct_size = kParams + 8; }, "params[1].struct_size differs");
  with_param(
      1, [](auto& v) { v.has_logits_soft_cap = 2; }, "params[1].has_logits_soft_cap");
  with_param(
      0, [](auto& v) { v.has_sinks = -1; }, "params[0].has_sinks");
  ASSERT_CATTN_OK(cattn_infer_global_hyperparameters(params.ptr(), 2, &g));
  EXPECT_EQ(g.window_left, -1);
  EXPECT_EQ(g.has_same_all_params, 1);
}

TEST(get_per_layer_parameters_hostile, OutputArraysMayNotOverlapTheirInput) {
  // Writing element i of an overlapping output would change layer i + 1 before it is read.
  // Five layer descriptors; the output array (stride 48, a newer caller's size) starts at
  // layer 2, so every struct_size lines up and only the overlap is wrong.
  constexpr size_t kStride = sizeof(cattn_attention_layer_desc_t);
  static_assert(kStride >= sizeof(cattn_per_layer_parameters_t), "a layer is the larger struct");
  std::vector<cattn_attention_layer_desc_t> layers(5, CATTN_ATTENTION_LAYER_DESC_INIT);
  auto* out = reinterpret_cast<cattn_per_layer_parameters_t*>(&layers[2]);
  const std::vector<cattn_attention_layer_desc_t> before = layers;
  EXPECT_CATTN_ERROR(cattn_get_per_layer_parameters(layers.data(), 3, out),
                     CATTN_INVALID_ARGUMENT, "out overlaps an input (got memory shared with layers");
  EXPECT_EQ(std::memcmp(layers.data(), before.data(), layers.size() * kStride), 0);
  // The global result over the second of two parameter structs.
  std::vector<unsigned char> mem(3 * sizeof(cattn_per_layer_parameters_t));
  auto* params = reinterpret_cast<cattn_per_layer_parameters_t*>(mem.data());
  params[0] = CATTN_PER_LAYER_PARAMETERS_INIT;
  params[1] = CATTN_PER_LAYER_PARAMETERS_INIT;
  auto* global = reinterpret_cast<cattn_global_hyperparameters_t*>(mem.data() +
                                                                   sizeof(*params) + 8);
  global->struct_size = sizeof(cattn_global_hyperparameters_t);
  EXPECT_CATTN_ERROR(cattn_infer_global_hyperparameters(params, 2, global),
                     CATTN_INVALID_ARGUMENT, "out overlaps an input (got memory shared with params");
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Per-layer parameters and global
// hyperparameters

namespace {
using namespace cattn_test::refused_untouched;

struct Layers : Base {
  Guarded<cattn_attention_layer_desc_t[2]> in;
  Guarded<cattn_per_layer_parameters_t[2]> out;
  size_t count = 2;
  bool null_in = false, null_out = false;
  Layers() {
    structs = {&in.bytes(), &out.bytes()};
    for (int i = 0; i < 2; ++i) {
      (*in.get())[i] = CATTN_ATTENTION_LAYER_DESC_INIT;
      (*out.get())[i] = CATTN_PER_LAYER_PARAMETERS_INIT;
    }
    (*in.get())[1].has_sliding_window = 1;
  }
  void wire() {}
  cattn_status_t call() {
    return cattn_get_per_layer_parameters(null_in ? nullptr : *in.get(), count, null_out ? nullptr : *out.get());
  }
};
struct Global : Base {
  Guarded<cattn_per_layer_parameters_t[2]> in;
  Guarded<cattn_global_hyperparameters_t> out{CATTN_GLOBAL_HYPERPARAMETERS_INIT};
  size_t count = 2;
  bool null_in = false, null_out = false;
  Global() {
    structs = {&in.bytes(), &out.bytes()};
    for (int i = 0; i < 2; ++i) (*in.get())[i] = CATTN_PER_LAYER_PARAMETERS_INIT;
  }
  void wire() {}
  cattn_status_t call() {
    return cattn_infer_global_hyperparameters(null_in ? nullptr : *in.get(), count, null_out ? nullptr : out.get());
  }
};

TEST(refused_untouched, GetPerLayerParameters) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<Layers>;
    auto in = [](Layers& s, int i) -> cattn_attention_layer_desc_t& { return (*s.in.get())[i]; };
    sweep<Layers>("cattn_get_per_layer_parameters", {
        {"layers NULL", I, "layers is NULL", [](Layers& s) { s.null_in = true; }, nullptr},
        {"out NULL", I, "out is NULL", [](Layers& s) { s.null_out = true; }, nullptr},
        {"layers[0] struct_size small", I, "layers[0].struct_size is too small", [in](Layers& s) { in(s, 0).struct_size = 8; }, nullptr},
        {"layers[1] struct_size differs", I, "layers[1].struct_size differs from element 0's", [in](Layers& s) { in(s, 1).struct_size += 8; }, nullptr},
        {"out[0] struct_size small", I, "out[0].struct_size is too small", [](Layers& s) { (*s.out.get())[0].struct_size = 0; }, nullptr},
        {"out[1] struct_size differs", I, "out[1].struct_size differs from element 0's", [](Layers& s) { (*s.out.get())[1].struct_size = 1; }, nullptr},
        {"has_sinks 2", I, "layers[1].has_sinks is not a boolean", [in](Layers& s) { in(s, 1).has_sinks = 2; }, nullptr},
        {"has_sliding_window -1", I, "layers[0].has_sliding_window is not a boolean", [in](Layers& s) { in(s, 0).has_sliding_window = -1; }, nullptr},
        {"has_logits_soft_cap 7", I, "layers[1].has_logits_soft_cap is not a boolean", [in](Layers& s) { in(s, 1).has_logits_soft_cap = 7; }, nullptr},
        {"reserved0", I, "layers[0].reserved0 is not zero", [in](Layers& s) { in(s, 0).reserved0 = 3; }, nullptr},
        {"count past memory", I, "layers addresses past the end of memory", [](Layers& s) { s.count = SIZE_MAX; }, nullptr},
    });
  }
  using V = Variant<Global>;
  auto in = [](Global& s, int i) -> cattn_per_layer_parameters_t& { return (*s.in.get())[i]; };
  sweep<Global>("cattn_infer_global_hyperparameters", {
      {"out NULL", I, "out is NULL", [](Global& s) { s.null_out = true; }, nullptr},
      {"out struct_size small", I, "out has struct_size too small", [](Global& s) { s.out->struct_size = 16; }, nullptr},
      {"no layers", I, "num_layers is zero", [](Global& s) { s.count = 0; }, nullptr},
      {"params NULL", I, "params is NULL", [](Global& s) { s.null_in = true; }, nullptr},
      {"params[0] struct_size small", I, "params[0].struct_size is too small", [in](Global& s) { in(s, 0).struct_size = 9; }, nullptr},
      {"params[1] struct_size differs", I, "params[1].struct_size differs from element 0's", [in](Global& s) { in(s, 1).struct_size = 4096; }, nullptr},
      {"has_logits_soft_cap 2", I, "params[1].has_logits_soft_cap is not a boolean", [in](Global& s) { in(s, 1).has_logits_soft_cap = 2; }, nullptr},
      {"has_sinks -1", I, "params[0].has_sinks is not a boolean", [in](Global& s) { in(s, 0).has_sinks = -1; }, nullptr},
      {"count past memory", I, "params addresses past the end of memory", [](Global& s) { s.count = SIZE_MAX / 2; }, nullptr},
  });
}

}  // namespace
