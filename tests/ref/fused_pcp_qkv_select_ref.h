/* SPDX-License-Identifier: Apache-2.0 */
// Independent host reference for fused_pcp_qkv_select, for the tests only.
#pragma once

#include <cstdint>
#include <vector>

namespace cattn_test {

// A [n, h, d] view of raw bytes; strides in elements, any of them.
struct RefView3 {
  uint8_t* data;
  int64_t n, h, d;
  int64_t stride_n, stride_h, stride_d;
  int elem;  // bytes per element
};

// Writes what vLLM's Triton kernel writes into compact outputs, element by element, and
// nothing else.
void fused_pcp_qkv_select_ref(const RefView3& q, const RefView3& k, const RefView3& v,
                              const std::vector<int64_t>& query_start_loc, int64_t world_size,
                              int64_t rank, const RefView3& q_head, const RefView3& k_head,
                              const RefView3& v_head, const RefView3& q_tail,
                              const RefView3& k_tail, const RefView3& v_tail);

}  // namespace cattn_test
