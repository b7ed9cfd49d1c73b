/* SPDX-License-Identifier: Apache-2.0 */
// float16 and bfloat16 bit conversions, identical on the host and the device, so that both
// paths of a call give the same bits. Round to nearest, ties to even, as torch converts; a NaN
// becomes the quiet NaN 0x7E00 (float16, sign kept) or 0x7FC0 (bfloat16), as torch's CPU
// conversions give.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/strided_nd.h"

namespace cattn {
namespace kernels {

CATTN_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
CATTN_HD inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

CATTN_HD inline float bf16_to_float(uint16_t h) { return bits_float(uint32_t{h} << 16); }

CATTN_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;  // NaN
  const uint32_t lsb = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16);
}

CATTN_HD inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return bits_float(sign | 0x7F800000u | (man << 13));  // inf, NaN
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return bits_float(sign);
  // Subnormal: man * 2^-24, exact in float.
  int e = 113;
  while ((man & 0x400u) == 0) {
    man <<= 1;
    --e;
  }
  return bits_float(sign | (static_cast<uint32_t>(e) << 23) | ((man & 0x3FFu) << 13));
}

CATTN_HD inline uint16_t float_to_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to inf
  if (a < 0x38800000u) {
    // Below the smallest normal half (2^-14): a multiple of 2^-24 after rounding.
    if (a < 0x33000000u) return sign;  // below 2^-25: rounds to zero (2^-25 ties to even 0)
    const uint32_t exp = a >> 23;
    const uint32_t man = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24: result = man >> shift, rounded
    const uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    const uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias the exponent and round the mantissa's low 13 bits away; a carry rolls into
  // the exponent, which is how rounding up to the next binade (or to inf) happens.
  const uint32_t lsb = (a >> 13) & 1u;
  const uint32_t r = (a + 0xFFFu + lsb) >> 13;
  return static_cast<uint16_t>(sign | (r - (112u << 10)));
}

}  // namespace kernels
}  // namespace cattn
