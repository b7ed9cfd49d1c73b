// SPDX-License-Identifier: Apache-2.0
// PCP restore index on the device, from the device cu_num_tokens: no copy to the host. Sorted
// position k of request i (2*H_i <= k < 2*H_(i+1), H = prefix of half lengths) holds H_i + o for
// its head half and T + H_i + o for its tail half (see the host algorithm's note). Positions
// past 2*T are -1. A decreasing entry counts as an empty request; an odd length keeps vLLM's
// answer (its middle token is dropped), since rejecting it would need a host sync.
#pragma once

#include "kernels/get_pcp_query_restore_idx.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/segment_walk.cuh"

namespace cattn {
namespace kernels {

template <int kThreads>
struct RestoreIdxShared {
  SegmentScratch<kThreads> walk;
};

// Every block of the slice owns a contiguous slice of the output and walks the requests up to
// it; all of them first need the total (the tail halves start there).
template <int kThreads>
__device__ __forceinline__ void get_pcp_query_restore_idx_blocks(const RestoreIdxParams& p,
                                                                 const BlockSlice& slice,
                                                                 RestoreIdxShared<kThreads>& sh) {
  const int64_t reqs = p.cu_num_tokens.size[0] > 0 ? p.cu_num_tokens.size[0] - 1 : 0;
  auto positions = [&](int64_t i) {
    const int64_t len = load_index(p.cu_num_tokens, i + 1) - load_index(p.cu_num_tokens, i);
    return len > 0 ? len / 2 * 2 : int64_t{0};
  };
  const int64_t size = segment_total(sh.walk, reqs, positions);
  const int64_t total = size / 2;
  if (slice.block == 0 && threadIdx.x == 0) store_count(p.size, 0, size);
  int64_t k0, k1;
  block_range(p.restore_idx.size[0], slice, k0, k1);
  for (int64_t k = (k0 > size ? k0 : size) + threadIdx.x; k < k1; k += kThreads)
    store_index(p.restore_idx, k, -1);
  segment_walk(sh.walk, reqs, k0, k1 < size ? k1 : size, positions,
               [&](int64_t k, int64_t, int slot) {
                 const int64_t start = sh.walk.prefix[slot], local = k - start;
                 const int64_t h = (sh.walk.prefix[slot + 1] - start) / 2, head = start / 2;
                 store_index(p.restore_idx, k,
                             local < h ? head + local : total + head + local - h);
               });
}

}  // namespace kernels
}  // namespace cattn
