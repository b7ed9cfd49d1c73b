/* SPDX-License-Identifier: Apache-2.0 */
// Plain reference for get_pcp_query_restore_idx, written from vLLM's definition: lay out every
// request's head-half positions, then every tail-half position, and argsort that list.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

namespace cattn_fuzz {

// nullopt when the batch is one the host path must refuse (a decrease, or an odd length above
// 1, which PCP cannot halve).
inline std::optional<std::vector<int64_t>> ref_pcp_query_restore_idx(
    const std::vector<int64_t>& cu) {
  std::vector<int64_t> concat_heads, concat_tails;
  for (size_t i = 0; i + 1 < cu.size(); ++i) {
    if (cu[i + 1] < cu[i]) return std::nullopt;
    const __int128 len = static_cast<__int128>(cu[i + 1]) - cu[i];
    if (len > 1 && len % 2 != 0) return std::nullopt;
    const int64_t half = static_cast<int64_t>(len / 2);
    if (half > (1 << 16)) return std::nullopt;  // the harness never owns outputs that large
    for (int64_t o = 0; o < half; ++o) {
      concat_heads.push_back(cu[i] + o);
      concat_tails.push_back(cu[i + 1] - half + o);
    }
  }
  std::vector<int64_t> concat = concat_heads;
  concat.insert(concat.end(), concat_tails.begin(), concat_tails.end());
  std::vector<int64_t> order(concat.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return concat[a] < concat[b]; });
  return order;
}

// The length alone, for batches too large to list (still nullopt when refused).
inline std::optional<__int128> ref_pcp_query_restore_size(const std::vector<int64_t>& cu) {
  __int128 total = 0;
  for (size_t i = 0; i + 1 < cu.size(); ++i) {
    if (cu[i + 1] < cu[i]) return std::nullopt;
    const __int128 len = static_cast<__int128>(cu[i + 1]) - cu[i];
    if (len > 1 && len % 2 != 0) return std::nullopt;
    total += len / 2 * 2;
  }
  return total;
}

}  // namespace cattn_fuzz
