// SPDX-License-Identifier: Apache-2.0
// Fuzz target for cattn_log2_lse_to_ln: float16, bfloat16, float32 and float64 tensors of 0 to
// 4 dimensions in any layout (strided, transposed, broadcast inputs, misaligned offsets) with
// structural mutations, outputs of other shapes or dtypes, in place on the very view or placed
// over lse's memory, both half roundings and unknown ones; every outcome is predicted and a
// success compared with a reference built from libm (ldexp, nearbyint) rather than bit
// manipulation: the float32 product, then round to nearest even into the 16-bit type.
#include <cmath>
#include <cstring>
#include <limits>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

enum Kind { F16, BF16, F32, F64, Other };

Kind kind_of(DLDataType d) {
  if (d.lanes != 1) return Other;
  if (d.code == kDLFloat && d.bits == 16) return F16;
  if (d.code == kDLBfloat && d.bits == 16) return BF16;
  if (d.code == kDLFloat && d.bits == 32) return F32;
  if (d.code == kDLFloat && d.bits == 64) return F64;
  return Other;
}

// A 16-bit float with `man` mantissa bits and exponent bias `bias` (float16: 10, 15; bfloat16:
// 7, 127), decoded and encoded through doubles.
double decode16(uint16_t h, int man, int bias) {
  const int exp_bits = 15 - man;
  const int e = (h >> man) & ((1 << exp_bits) - 1);
  const int m = h & ((1 << man) - 1);
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == (1 << exp_bits) - 1) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, 1 - bias - man);
  return sign * std::ldexp(m + (1 << man), e - bias - man);
}

uint16_t encode16(double v, int man, int bias) {
  const int exp_bits = 15 - man;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const uint16_t inf = static_cast<uint16_t>(((1 << exp_bits) - 1) << man);
  if (std::isnan(v)) return 0x7FFF;  // any NaN: compared loosely
  // frexp leaves the exponent of an infinity unspecified: answer it before the rounding below.
  if (std::isinf(v)) return static_cast<uint16_t>(sign | inf);
  const double a = std::fabs(v);
  const int emin = 1 - bias;
  if (a < std::ldexp(1.0, emin)) {  // subnormal range: multiples of 2^(emin - man)
    const double q = std::nearbyint(std::ldexp(a, man - emin));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(q));
  }
  int ex = 0;
  std::frexp(a, &ex);
  int e = ex - 1;
  double q = std::nearbyint(std::ldexp(a, man - e));
  if (q >= std::ldexp(1.0, man + 1)) {
    q /= 2;
    ++e;
  }
  if (e + bias >= (1 << exp_bits) - 1) return static_cast<uint16_t>(sign | inf);
  return static_cast<uint16_t>(sign | ((e + bias) << man) | (static_cast<int>(q) - (1 << man)));
}

// The expected bits of one element.
uint64_t expect_bits(Kind k, uint64_t in, bool torch1) {
  const double ln2 = 0.693147180559945309417232121458176568;
  switch (k) {
    case F32: {
      float x;
      uint32_t b = static_cast<uint32_t>(in);
      std::memcpy(&x, &b, 4);
      const float y = x * static_cast<float>(ln2);
      std::memcpy(&b, &y, 4);
      return b;
    }
    case F64: {
      double x;
      std::memcpy(&x, &in, 8);
      const double y = x * ln2;
      uint64_t b;
      std::memcpy(&b, &y, 8);
      return b;
    }
    default: {
      const int man = k == F16 ? 10 : 7, bias = k == F16 ? 15 : 127;
      float mul = static_cast<float>(ln2);
      if (torch1) mul = static_cast<float>(decode16(encode16(mul, man, bias), man, bias));
      const float x = static_cast<float>(decode16(static_cast<uint16_t>(in), man, bias));
      return encode16(static_cast<double>(x * mul), man, bias);
    }
  }
}

bool nan_bits(Kind k, uint64_t v) {
  switch (k) {
    case F16: return (v & 0x7FFF) > 0x7C00;
    case BF16: return (v & 0x7FFF) > 0x7F80;
    case F32: return (v & 0x7FFFFFFF) > 0x7F800000;
    default: return (v & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const char* fn = "cattn_log2_lse_to_ln";
  static const DLDataType kTypes[4] = {{kDLFloat, 16, 1}, {kDLBfloat, 16, 1}, {kDLFloat, 32, 1}, {kDLFloat, 64, 1}};
  const DLDataType dtype = kTypes[fdp.ConsumeIntegralInRange<int>(0, 3)];
  std::vector<int64_t> shape(static_cast<size_t>(fdp.ConsumeIntegralInRange<int>(0, 4)));
  for (auto& d : shape) d = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  Tensor lse = make_tensor(fdp, shape, dtype, false);
  // Random bit patterns: every class of value (subnormals, infinities, NaNs) turns up.
  if (lse.usable() && lse.t.data && lse.elem > 0)
    for (int64_t i = 0; i < lse.numel; ++i) {
      const uint64_t v = fdp.ConsumeIntegral<uint64_t>();
      std::memcpy(lse.flat(i), &v, static_cast<size_t>(lse.elem));
    }
  const int out_kind = fdp.ConsumeIntegralInRange<int>(0, 15);
  const bool in_place = out_kind == 0;
  const bool as_view = out_kind == 1;
  const DLDataType out_dtype = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? kTypes[fdp.ConsumeIntegralInRange<int>(0, 3)] : dtype;
  Tensor out = in_place ? Tensor() : as_view ? view_of(fdp, lse, true) : make_tensor(fdp, shape, out_dtype, true);
  if (!in_place && !as_view) maybe_alias(fdp, out, {&lse});
  if (in_place) lse.output = true;
  const Tensor& o = in_place ? lse : out;
  const int rpick = fdp.ConsumeIntegralInRange<int>(0, 31);
  const int64_t rounding = rpick < 15 ? CATTN_LSE_ROUNDING_TORCH : rpick < 30 ? CATTN_LSE_ROUNDING_TORCH1_CPU : rpick == 30 ? 2 : -1;

  const size_t struct_size = pick_struct_size(fdp, CATTN_LOG2_LSE_TO_LN_ARGS_SIZE);
  Struct<cattn_log2_lse_to_ln_args_t> args(CATTN_LOG2_LSE_TO_LN_ARGS_INIT, struct_size);
  args.get()->lse = lse.cptr();
  args.get()->out = in_place ? lse.ptr() : out.ptr();
  args.get()->half_rounding = rounding;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const std::vector<uint8_t> args_before = args.snapshot();

  const Kind k = lse.usable() ? kind_of(lse.t.dtype) : Other;
  bool ok = !null_args && struct_size >= CATTN_LOG2_LSE_TO_LN_ARGS_SIZE;
  ok = ok && lse.usable() && !lse.device && k != Other;
  ok = ok && o.usable() && !o.device && same_dtype(o.t.dtype, lse.t.dtype) && o.ndim() == lse.ndim();
  for (int d = 0; ok && d < lse.ndim(); ++d) ok = o.dim(d) == lse.dim(d);
  ok = ok && writable(o) && (rounding == 0 || rounding == 1);
  if (ok && !in_place) ok = same_view(out, lse) || !overlaps(out, lse);
  std::vector<uint64_t> seen;
  if (ok)
    for (int64_t i = 0; i < lse.numel; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, lse.flat(i), static_cast<size_t>(lse.elem));
      seen.push_back(v);
    }
  FZ_LOG("dtype %d/%d ndim %d in_place %d rounding %ld predicted %d\n  lse %s\n  out %s\n",
         lse.t.dtype.code, lse.t.dtype.bits, lse.ndim(), in_place, (long)rounding, ok,
         describe(lse).c_str(), describe(o).c_str());
  Watch w;
  w.add(&lse);
  if (!in_place) w.add(&out);
  const cattn_status_t s = cattn_log2_lse_to_ln(null_args ? nullptr : args.get());
  FZ_CHECK(args.unchanged(args_before), "the call wrote its args struct");
  if (!check_outcome(s, fn, ok, w)) return 0;
  for (int64_t i = 0; i < static_cast<int64_t>(seen.size()); ++i) {
    uint64_t got = 0;
    std::memcpy(&got, o.flat(i), static_cast<size_t>(o.elem));
    const uint64_t want = expect_bits(k, seen[static_cast<size_t>(i)], rounding == 1);
    FZ_CHECK(got == want || (nan_bits(k, got) && nan_bits(k, want)),
             std::string(fn) + ": element " + std::to_string(i) + " differs from the reference");
  }
  return 0;
}
