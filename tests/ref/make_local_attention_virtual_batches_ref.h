/* SPDX-License-Identifier: Apache-2.0 */
// Plain reference for make_local_attention_virtual_batches, from what the virtual batches
// mean rather than from vLLM's array arithmetic: request i's query tokens occupy key positions
// [s - q, s); every attention chunk [c * C, (c + 1) * C) that holds some of them is one virtual
// batch, whose queries are those tokens and whose keys run from the chunk's start to its last
// query token. A request without query tokens gets one virtual batch of no queries over the
// chunk holding its last key (all C keys before position 0 when s = 0, as vLLM counts them),
// with its pages starting at column 0 where vLLM's would be negative.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace cattn_fuzz {

struct LocalBatchRef {
  int64_t q, k, request, first_page;
};

struct LocalPlanRef {
  std::vector<LocalBatchRef> batches;
  int64_t pages = 0, max_q = 0, max_k = 0, max_computed = 0;
};

inline __int128 floor_div128(__int128 a, __int128 b) {
  const __int128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The number of virtual batches, or -1 when the library must refuse the batch (a decrease, a
// length past int64, a sequence shorter than its query, a count past int64).
inline __int128 ref_local_count(const std::vector<int64_t>& qsl, const std::vector<int64_t>& seq,
                                int64_t chunk) {
  __int128 total = 0, total_q = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (qsl[i + 1] < qsl[i]) return -1;
    const __int128 q = static_cast<__int128>(qsl[i + 1]) - qsl[i];
    if (q > INT64_MAX) return -1;
    total_q += q;
    if (total_q > INT64_MAX) return -1;
    const int64_t s = seq[i];
    if (s < q) return -1;
    total += q == 0 ? 1 : floor_div128(s - 1, chunk) - floor_div128(s - q, chunk) + 1;
    if (total > INT64_MAX) return -1;
  }
  return total;
}

// The plan itself; call only when ref_local_count is small.
inline LocalPlanRef ref_local_plan(const std::vector<int64_t>& qsl, const std::vector<int64_t>& seq,
                                   int64_t chunk, int64_t block_size) {
  LocalPlanRef r;
  r.pages = chunk / block_size;
  auto add = [&](int64_t q, int64_t k, int64_t request, __int128 first_key) {
    const int64_t page = first_key < 0 ? 0 : static_cast<int64_t>(first_key / block_size);
    r.batches.push_back({q, k, request, page});
    r.max_q = std::max(r.max_q, q);
    r.max_k = std::max(r.max_k, k);
    r.max_computed = std::max(r.max_computed, k - q);
  };
  for (size_t i = 0; i < seq.size(); ++i) {
    const __int128 q = static_cast<__int128>(qsl[i + 1]) - qsl[i], s = seq[i];
    if (q == 0) {
      const __int128 c = floor_div128(s - 1, chunk);
      add(0, static_cast<int64_t>(s - c * chunk), static_cast<int64_t>(i), c * chunk);
      continue;
    }
    for (__int128 c = floor_div128(s - q, chunk); c <= floor_div128(s - 1, chunk); ++c) {
      const __int128 lo = std::max<__int128>(s - q, c * chunk), hi = std::min<__int128>(s, (c + 1) * chunk);
      add(static_cast<int64_t>(hi - lo), static_cast<int64_t>(hi - c * chunk), static_cast<int64_t>(i), c * chunk);
    }
  }
  return r;
}

}  // namespace cattn_fuzz
