/* SPDX-License-Identifier: Apache-2.0 */
// Plain reference for compute_causal_conv1d_metadata, as vLLM's loop states it: request i gets
// one program per started block of block_m tokens; mlist repeats the request index per program,
// offsetlist counts the programs of each request from 0.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace cattn_fuzz {

struct Conv1dRef {
  std::vector<int64_t> nums, mlist, offsetlist;
  __int128 tot = 0;
  int64_t max_num = 0;
};

// nullopt when the library must refuse the batch (a decrease, a length past int64, or a total
// past INT64_MAX / 2: the launch arrays' capacity 2 * tot must fit int64). Programs are listed
// only while the total stays small (`list_limit`); counts are always exact.
inline std::optional<Conv1dRef> ref_causal_conv1d(const std::vector<int64_t>& qsl, int64_t block_m,
                                                  int64_t list_limit) {
  Conv1dRef r;
  for (size_t i = 0; i + 1 < qsl.size(); ++i) {
    if (qsl[i + 1] < qsl[i]) return std::nullopt;
    const __int128 len = static_cast<__int128>(qsl[i + 1]) - qsl[i];
    if (len > INT64_MAX) return std::nullopt;
    const __int128 n = (len + block_m - 1) / block_m;
    r.tot += n;
    if (r.tot > INT64_MAX) return std::nullopt;
    r.nums.push_back(static_cast<int64_t>(n));
    if (n > r.max_num) r.max_num = static_cast<int64_t>(n);
    for (int64_t o = 0; o < n && r.tot <= list_limit; ++o) {
      r.mlist.push_back(static_cast<int64_t>(i));
      r.offsetlist.push_back(o);
    }
  }
  if (r.tot > INT64_MAX / 2) return std::nullopt;
  return r;
}

}  // namespace cattn_fuzz
