// SPDX-License-Identifier: Apache-2.0
// Reference for fused_pcp_qkv_select written from the kernel's description rather than from
// libcattn's implementation: every request's query is cut into a head half and a tail half, and
// its K/V segment (world_size * len rows) into 2 * world_size blocks of len / 2 rows; blocks
// 0..rank go to the head outputs and blocks 0..2W-rank-1 to the tail outputs. It copies one
// element at a time, byte by byte, so it shares no fast path with the library.
#include "ref/fused_pcp_qkv_select_ref.h"

#include <cassert>
#include <cstddef>

namespace cattn_test {
namespace {

uint8_t* element(const RefView3& t, int64_t i, int64_t j, int64_t l) {
  assert(i >= 0 && i < t.n && j >= 0 && j < t.h && l >= 0 && l < t.d);
  return t.data + (i * t.stride_n + j * t.stride_h + l * t.stride_d) * t.elem;
}

void copy_token(const RefView3& src, int64_t src_row, const RefView3& dst, int64_t dst_row) {
  for (int64_t j = 0; j < src.h; ++j)
    for (int64_t l = 0; l < src.d; ++l) {
      const uint8_t* s = element(src, src_row, j, l);
      uint8_t* d = element(dst, dst_row, j, l);
      for (int b = 0; b < src.elem; ++b) d[b] = s[b];
    }
}

}  // namespace

void fused_pcp_qkv_select_ref(const RefView3& q, const RefView3& k, const RefView3& v,
                              const std::vector<int64_t>& qsl, int64_t world_size, int64_t rank,
                              const RefView3& q_head, const RefView3& k_head,
                              const RefView3& v_head, const RefView3& q_tail,
                              const RefView3& k_tail, const RefView3& v_tail) {
  for (std::size_t i = 0; i + 1 < qsl.size(); ++i) {
    const int64_t start = qsl[i], half = (qsl[i + 1] - qsl[i]) / 2;
    for (int64_t t = 0; t < half; ++t) {
      copy_token(q, start + t, q_head, start / 2 + t);
      copy_token(q, start + half + t, q_tail, start / 2 + t);
    }
    for (int64_t block = 0; block < 2 * world_size; ++block)
      for (int64_t t = 0; t < half; ++t) {
        const int64_t src = world_size * start + block * half + t;
        if (block <= rank) {
          copy_token(k, src, k_head, start / 2 * (rank + 1) + block * half + t);
          copy_token(v, src, v_head, start / 2 * (rank + 1) + block * half + t);
        }
        if (block < 2 * world_size - rank) {
          copy_token(k, src, k_tail, start / 2 * (2 * world_size - rank) + block * half + t);
          copy_token(v, src, v_tail, start / 2 * (2 * world_size - rank) + block * half + t);
        }
      }
  }
}

}  // namespace cattn_test
