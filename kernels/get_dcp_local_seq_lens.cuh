// SPDX-License-Identifier: Apache-2.0
// DCP local sequence lengths: one thread per (request, rank) output element.
#pragma once

#include "kernels/get_dcp_local_seq_lens.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

// vLLM's local length of rank `rank` for a length already cast to int32, as vLLM casts it. The
// divisors are positive int32 values too (dcp_size * interleave <= INT32_MAX is checked).
__device__ __forceinline__ int64_t dcp_local_len(int32_t s, int64_t dcp_size, int64_t rank,
                                                 int64_t interleave) {
  const int64_t base =
      int64_t{floor_div32(floor_div32(s, static_cast<int32_t>(interleave)),
                          static_cast<int32_t>(dcp_size))} *
      interleave;
  int64_t rem = s - base * dcp_size - rank * interleave;
  rem = rem < 0 ? 0 : (rem > interleave ? interleave : rem);
  return base + rem;
}

__device__ __forceinline__ void get_dcp_local_seq_lens_blocks(const DcpLocalSeqLensParams& p,
                                                              const BlockSlice& slice) {
  const int64_t n = p.out.size[0] * p.out.size[1];
  for (int64_t i = slice.thread(); i < n; i += slice.threads()) {
    const int64_t b = div_nonneg(i, p.out.size[1]), c = i - b * p.out.size[1];
    // vLLM computes in int32 after seq_lens.to(torch.int32): wrap the same way.
    const int32_t s = static_cast<int32_t>(load_index(p.seq_lens, b));
    const int64_t rank = p.dcp_rank < 0 ? c : p.dcp_rank;
    store_index(p.out, b, c, dcp_local_len(s, p.dcp_size, rank, p.interleave));
  }
}

}  // namespace kernels
}  // namespace cattn
