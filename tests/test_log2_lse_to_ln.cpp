// SPDX-License-Identifier: Apache-2.0
// log2_lse_to_ln: the upstream oracle's bit patterns for float16, bfloat16, float32 and
// float64 (every 16-bit pattern included) under both half roundings, in contiguous, strided,
// stride-0 and in-place layouts, and every error path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/lse_vectors.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

uint64_t mask(int bits) { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

cattn_status_t run(const DLTensor* in, DLTensor* out, int64_t rounding) {
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = in;
  a.out = out;
  a.half_rounding = rounding;
  return cattn_log2_lse_to_ln(&a);
}

// Every element equal bit for bit, except that a NaN matches any NaN (payloads are not
// specified). Returns the mismatches.
int64_t mismatches(HostTensor& got, const std::vector<uint64_t>& want, const DLDataType& t) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const uint64_t g = static_cast<uint64_t>(got.get(i)) & mask(t.bits);
    const uint64_t w = want[static_cast<size_t>(i)];
    if (g != w && !(lse_is_nan(w, t) && lse_is_nan(g, t))) ++bad;
  }
  return bad;
}

HostTensor filled(const std::vector<uint64_t>& v, std::vector<int64_t> shape, DLDataType t,
                  int64_t step, int64_t offset) {
  HostTensor h(std::move(shape), t, step, offset);
  for (int64_t i = 0; i < h.numel(); ++i) h.set(i, static_cast<int64_t>(v[static_cast<size_t>(i)]));
  return h;
}

}  // namespace

TEST(log2_lse_to_ln, OracleVectors) {
  const auto vec = load_vectors("log2_lse_to_ln");
  ASSERT_GE(vec["cases"].size(), 26u);
  int64_t elements = 0;
  for (const auto& c : vec["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const DLDataType t = lse_dtype_named(c["dtype"]);
    const auto shape = ints(c["shape"]);
    const auto in = lse_patterns(c["in"], t.bits);
    const auto out_torch1 = lse_patterns(c["out"], t.bits);
    const auto out_torch = lse_patterns(c["out_torch"], t.bits);
    for (const int64_t rounding : {CATTN_LSE_ROUNDING_TORCH, CATTN_LSE_ROUNDING_TORCH1_CPU}) {
      const auto& want = rounding == CATTN_LSE_ROUNDING_TORCH ? out_torch : out_torch1;
      for (int64_t step : {1, 2}) {
        HostTensor x = filled(in, shape, t, step, step == 1 ? 0 : 3);
        HostTensor y(shape, t, step == 1 ? 2 : 1, step == 1 ? 1 : 0);
        ASSERT_CATTN_OK(run(x.dl(), y.dl(), rounding));
        EXPECT_EQ(mismatches(y, want, t), 0) << "rounding " << rounding << " step " << step;
        // In place over the very same view.
        ASSERT_CATTN_OK(run(x.dl(), x.dl(), rounding));
        EXPECT_EQ(mismatches(x, want, t), 0) << "in place, rounding " << rounding;
        elements += 2 * static_cast<int64_t>(in.size());
      }
    }
  }
  EXPECT_GT(elements, 500000);
}

TEST(log2_lse_to_ln, RoundingsDifferOnlyForHalfTypes) {
  // 5 * ln 2: float16 3.46484375 (0x42EE) with ln 2 in float, 3.466796875 (0x42EF) with ln 2
  // rounded to float16 first (0x398C = 0.693359375): the two torch generations disagree.
  HostTensor x = HostTensor::of({0x4500}, {kDLFloat, 16, 1});
  HostTensor y({1}, {kDLFloat, 16, 1});
  ASSERT_CATTN_OK(run(x.dl(), y.dl(), CATTN_LSE_ROUNDING_TORCH));
  const int64_t torch2 = y.get(0) & 0xFFFF;
  ASSERT_CATTN_OK(run(x.dl(), y.dl(), CATTN_LSE_ROUNDING_TORCH1_CPU));
  const int64_t torch1 = y.get(0) & 0xFFFF;
  EXPECT_EQ(torch2, 0x42EE);
  EXPECT_EQ(torch1, 0x42EF);
  // float32 ignores the field.
  float f = 3.0f, g1 = 0, g2 = 0;
  HostTensor xf({1}, f32()), yf({1}, f32());
  std::memcpy(xf.at(0), &f, 4);
  ASSERT_CATTN_OK(run(xf.dl(), yf.dl(), CATTN_LSE_ROUNDING_TORCH));
  std::memcpy(&g1, yf.at(0), 4);
  ASSERT_CATTN_OK(run(xf.dl(), yf.dl(), CATTN_LSE_ROUNDING_TORCH1_CPU));
  std::memcpy(&g2, yf.at(0), 4);
  EXPECT_EQ(g1, g2);
  EXPECT_EQ(g1, 3.0f * static_cast<float>(M_LN2));
}

TEST(log2_lse_to_ln, StrideZeroInputAndEightDims) {
  // One float64 broadcast over [4, 3] (strides 0, 0).
  HostTensor one({1}, {kDLFloat, 64, 1});
  const double v = -2.5;
  std::memcpy(one.at(0), &v, 8);
  DLTensor in = *one.dl();
  int64_t shape[2] = {4, 3}, strides[2] = {0, 0};
  in.ndim = 2;
  in.shape = shape;
  in.strides = strides;
  HostTensor out({4, 3}, {kDLFloat, 64, 1});
  ASSERT_CATTN_OK(run(&in, out.dl(), CATTN_LSE_ROUNDING_TORCH));
  for (int64_t i = 0; i < 12; ++i) {
    double r;
    std::memcpy(&r, out.at(i), 8);
    EXPECT_EQ(r, v * M_LN2);
  }
  // An 8-D strided float32 tensor.
  std::vector<int64_t> s8{2, 1, 2, 1, 2, 1, 2, 3};
  HostTensor x8(s8, f32(), 2, 1), y8(s8, f32());
  for (int64_t i = 0; i < x8.numel(); ++i) {
    const float f = static_cast<float>(i) - 20.f;
    std::memcpy(x8.at(i), &f, 4);
  }
  ASSERT_CATTN_OK(run(x8.dl(), y8.dl(), CATTN_LSE_ROUNDING_TORCH));
  for (int64_t i = 0; i < y8.numel(); ++i) {
    float r;
    std::memcpy(&r, y8.at(i), 4);
    EXPECT_EQ(r, (static_cast<float>(i) - 20.f) * static_cast<float>(M_LN2));
  }
}

TEST(log2_lse_to_ln, Errors) {
  HostTensor x({2, 3}, f32()), y({2, 3}, f32());
  for (int64_t i = 0; i < 6; ++i) std::memset(x.at(i), 0, 4);
  const auto before = y.bytes();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(nullptr), CATTN_INVALID_ARGUMENT, "args is NULL");
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = x.dl();
  a.out = y.dl();
  a.struct_size = CATTN_LOG2_LSE_TO_LN_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_LOG2_LSE_TO_LN_ARGS_SIZE;
  a.lse = nullptr;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->lse is NULL");
  a.lse = x.dl();
  a.out = nullptr;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->out is NULL");
  a.out = y.dl();
  HostTensor xi({2, 3}, i32()), y64({2, 3}, {kDLFloat, 64, 1}), y23({3, 2}, f32()),
      y1({6}, f32());
  a.lse = xi.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->lse has the wrong dtype");
  a.lse = x.dl();
  a.out = y64.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->out has the wrong dtype");
  a.out = y23.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->out has the wrong size");
  a.out = y1.dl();
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->out has the wrong ndim");
  a.out = y.dl();
  a.half_rounding = 2;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->half_rounding");
  a.half_rounding = CATTN_LSE_ROUNDING_TORCH;
  DLTensor zero = *y.dl();
  int64_t zs[2] = {0, 1};
  zero.strides = zs;
  a.out = &zero;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "zero stride");
  // An out shifted one element into lse would overwrite elements before they are read.
  HostTensor big({8}, f32());
  DLTensor in = *big.dl(), shifted = *big.dl();
  int64_t shape[1] = {6};
  in.shape = shifted.shape = shape;
  shifted.byte_offset = 4;
  a.lse = &in;
  a.out = &shifted;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "args->out overlaps");
  a.lse = x.dl();
  a.out = y.dl();
  DLTensor dev = *y.dl();
  dev.device = {kDLCUDA, 0};
  a.out = &dev;
  EXPECT_CATTN_ERROR(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT, "device");
  EXPECT_EQ(y.bytes(), before);  // nothing written by any failure
  a.out = y.dl();
  ASSERT_CATTN_OK(cattn_log2_lse_to_ln(&a));
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): log2_lse_to_ln

namespace {
using namespace cattn_test::refused_untouched;

struct Lse : Base {
  HostTensor lse = HostTensor({2, 3}, f32(), 1, 1), out = out_tensor({2, 3}, f32());
  Guarded<cattn_log2_lse_to_ln_args_t> args{CATTN_LOG2_LSE_TO_LN_ARGS_INIT};
  bool null_args = false;
  Lse() {
    for (int64_t i = 0; i < lse.numel(); ++i) std::memset(lse.at(i), 0, 4);
    tensors = {&lse, &out};
    structs = {&args.bytes()};
  }
  void wire() {
    args->lse = lse.dl();
    args->out = out.dl();
    slots = {{"args->lse", lse.dl(), [this] { args->lse = nullptr; }},
             {"args->out", out.dl(), [this] { args->out = nullptr; }}};
  }
  cattn_status_t call() { return cattn_log2_lse_to_ln(null_args ? nullptr : args.get()); }
};

}  // namespace

TEST(refused_untouched, Log2LseToLn) {
  using V = Variant<Lse>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Lse& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr,
       [](Lse& s) { s.args->struct_size = CATTN_LOG2_LSE_TO_LN_ARGS_SIZE - 1; }},
      {"lse int32", I, "args->lse has the wrong dtype", nullptr,
       [](Lse& s) { const_cast<DLTensor*>(s.args->lse)->dtype = {kDLInt, 32, 1}; }},
      {"out float64", I, "args->out has the wrong dtype", nullptr,
       [](Lse& s) { s.args->out->dtype = {kDLFloat, 64, 1}; }},
      {"out [3, 2]", I, "args->out has the wrong size in dim 0", [](Lse& s) { s.out = out_tensor({3, 2}, f32()); }, nullptr},
      {"out 1-D", I, "args->out has the wrong ndim", [](Lse& s) { s.out = out_tensor({6}, f32()); }, nullptr},
      {"out zero stride", I, "args->out is an output with a zero stride", nullptr, [](Lse& s) {
         s.scratch_strides = {0, 1};
         s.args->out->strides = s.scratch_strides.data();
       }},
      {"half_rounding 2", I, "args->half_rounding is not a known value", nullptr,
       [](Lse& s) { s.args->half_rounding = 2; }},
      {"half_rounding INT64_MIN", I, "args->half_rounding", nullptr,
       [](Lse& s) { s.args->half_rounding = kI64Min; }},
      {"out over lse shifted", I, "args->out overlaps", nullptr, [](Lse& s) {
         s.args->out = s.overlap_view(s.lse, 1, {2, 3});
       }},
  };
  sweep<Lse>("cattn_log2_lse_to_ln", structural<Lse>() + v);
}
