/* SPDX-License-Identifier: Apache-2.0 */
// The fused select's six output row counts, from the library's size query (the one place the
// formula lives): q_head, k_head, v_head, q_tail, k_tail, v_tail. Where the query refuses W or
// r (tests that build outputs for a call they expect to be refused), every count is 0.
#pragma once

#include <array>
#include <cstdint>

#include "cattn.h"

namespace cattn_test {

inline std::array<int64_t, 6> select_rows(int64_t nq, int64_t world, int64_t rank) {
  int64_t q = 0, head = 0, tail = 0;
  if (cattn_fused_pcp_qkv_select_size(nq, world, rank, &q, &head, &tail) != CATTN_OK)
    return {0, 0, 0, 0, 0, 0};
  return {q, head, head, q, tail, tail};
}

}  // namespace cattn_test
