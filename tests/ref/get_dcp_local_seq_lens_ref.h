/* SPDX-License-Identifier: Apache-2.0 */
// Plain reference for get_dcp_local_seq_lens, from the definition: the KV tokens of a request
// are dealt to the DCP ranks in runs of `interleave` tokens, rank 0 first, so rank r owns token
// t exactly when (t / interleave) % world == r. The count is taken over whole cycles of
// world * interleave tokens plus the partial last cycle; short sequences are also counted token
// by token as a cross-check of the closed form.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cattn_fuzz {

inline int64_t ref_dcp_local_len(int64_t seq_len, int64_t world, int64_t rank, int64_t interleave) {
  const int64_t cycle = world * interleave;
  const int64_t whole = seq_len / cycle;
  const int64_t tail = seq_len - whole * cycle;
  const int64_t mine_in_tail = std::min(std::max<int64_t>(tail - rank * interleave, 0), interleave);
  const int64_t count = whole * interleave + mine_in_tail;
  if (seq_len <= 512) {
    int64_t brute = 0;
    for (int64_t t = 0; t < seq_len; ++t) brute += (t / interleave) % world == rank;
    if (brute != count) __builtin_trap();  // the reference disagrees with itself
  }
  return count;
}

}  // namespace cattn_fuzz
