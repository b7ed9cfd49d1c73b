/* SPDX-License-Identifier: Apache-2.0 */
// Reading log2_lse_to_ln's vectors (tests/vectors/log2_lse_to_ln.json): dtype names, the
// fixed-width hex strings of element bit patterns, and NaN tests on bit patterns (a NaN
// matches any NaN: payloads are not specified).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cattn_test {

inline DLDataType lse_dtype_named(const std::string& n) {
  if (n == "float16") return {kDLFloat, 16, 1};
  if (n == "bfloat16") return {kDLBfloat, 16, 1};
  if (n == "float32") return {kDLFloat, 32, 1};
  return {kDLFloat, 64, 1};
}

// The elements of a vector string, bits / 4 hex digits each.
inline std::vector<uint64_t> lse_patterns(const std::string& hex, int bits) {
  const size_t w = static_cast<size_t>(bits / 4);
  std::vector<uint64_t> out;
  for (size_t i = 0; i + w <= hex.size(); i += w)
    out.push_back(std::stoull(hex.substr(i, w), nullptr, 16));
  return out;
}

inline bool lse_is_nan(uint64_t v, const DLDataType& t) {
  if (t.bits == 64) return (v & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
  if (t.bits == 32) return (v & 0x7FFFFFFFu) > 0x7F800000u;
  if (t.code == kDLBfloat) return (v & 0x7FFFu) > 0x7F80u;
  return (v & 0x7FFFu) > 0x7C00u;
}

}  // namespace cattn_test
