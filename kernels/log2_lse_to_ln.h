/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of log2_lse_to_ln (out = lse * ln 2) and the per-element product both
// paths share, so host and device give the same bits.
#pragma once

#include "kernels/half_float.h"
#include "kernels/kernel_types.h"
#include "kernels/strided_nd.h"

namespace cattn {
namespace kernels {

enum class LseType : int { F16 = 0, BF16 = 1, F32 = 2, F64 = 3 };

constexpr double kLn2 = 0.693147180559945309417232121458176568;

// The multiplier of a float16/bfloat16 product: ln 2 in float (torch >= 2), or first rounded to
// the tensor's type (torch 1.x on the CPU).
CATTN_HD inline float half_multiplier(LseType t, bool scalar_in_dtype) {
  const float ln2 = static_cast<float>(kLn2);
  if (!scalar_in_dtype) return ln2;
  return t == LseType::F16 ? half_to_float(float_to_half(ln2)) : bf16_to_float(float_to_bf16(ln2));
}

// One element: reads the element at `in`, writes the product at `out` (which may be `in`).
CATTN_HD inline void lse_to_ln_element(LseType t, float half_mul, const void* in, void* out) {
  switch (t) {
    case LseType::F16: {
      uint16_t h;
      std::memcpy(&h, in, sizeof h);
      h = float_to_half(half_to_float(h) * half_mul);
      std::memcpy(out, &h, sizeof h);
      break;
    }
    case LseType::BF16: {
      uint16_t h;
      std::memcpy(&h, in, sizeof h);
      h = float_to_bf16(bf16_to_float(h) * half_mul);
      std::memcpy(out, &h, sizeof h);
      break;
    }
    case LseType::F32: {
      float f;
      std::memcpy(&f, in, sizeof f);
      f = f * static_cast<float>(kLn2);
      std::memcpy(out, &f, sizeof f);
      break;
    }
    case LseType::F64: {
      double d;
      std::memcpy(&d, in, sizeof d);
      d = d * kLn2;
      std::memcpy(out, &d, sizeof d);
      break;
    }
  }
}

struct Log2LseToLnParams {
  const void* in = nullptr;
  void* out = nullptr;
  StridedNd in_layout, out_layout;
  int64_t numel = 0;
  int elem_bytes = 4;
  LseType type = LseType::F32;
  float half_mul = 0.f;
};

int launch_log2_lse_to_ln(const Log2LseToLnParams& p, const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
