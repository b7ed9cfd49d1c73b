// SPDX-License-Identifier: Apache-2.0
// Causal-conv1d metadata computed on the device from the device query_start_loc, so that a
// captured graph computes it afresh on every replay: every block of the slice writes the
// per-request counts it owns, then walks the requests (segment_walk.cuh) up to its slice of the
// per-program outputs, and writes CATTN_PAD_SLOT_ID (-1) past the programs in use. The total
// (tot) is counted by a block of its own, the last; the others learn it when their walk runs
// off the end.
#pragma once

#include "kernels/compute_causal_conv1d_metadata.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/segment_walk.cuh"

namespace cattn {
namespace kernels {

template <int kThreads>
struct CausalConv1dShared {
  SegmentScratch<kThreads> walk;
};

template <int kThreads>
__device__ __forceinline__ void compute_causal_conv1d_metadata_capturable_blocks(
    const CausalConv1dCapturableParams& p, const BlockSlice& slice,
    CausalConv1dShared<kThreads>& sh) {
  const int64_t reqs = p.query_start_loc.size[0] > 0 ? p.query_start_loc.size[0] - 1 : 0;
  auto programs = [&](int64_t i) {
    const int64_t len =
        load_index(p.query_start_loc, i + 1) - load_index(p.query_start_loc, i);
    return len > 0 ? div_nonneg(len - 1, p.block_m) + 1 : int64_t{0};
  };
  // The last block of several counts tot while the others write.
  const bool counter = slice.block == slice.blocks - 1;
  if (counter) {
    const int64_t tot = segment_total(sh.walk, reqs, programs);
    if (threadIdx.x == 0) store_count(p.tot, 0, tot);
    if (slice.blocks > 1) return;
  }
  const BlockSlice writers{slice.block, slice.blocks > 1 ? slice.blocks - 1 : 1};
  if (p.nums.data != nullptr)
    batched_for<4>(writers.thread(), p.nums.size[0], writers.threads(),
                   [&](int64_t i) { return i < reqs ? programs(i) : int64_t{0}; },
                   [&](int64_t i, int64_t n) { store_index(p.nums, i, n); });

  const MutIndexSpan* outs[4] = {&p.mlist, &p.offsetlist, &p.batch_ptr, &p.token_chunk_offset_ptr};
  int64_t n = 0;
  for (const MutIndexSpan* o : outs)
    if (o->data != nullptr && o->size[0] > n) n = o->size[0];
  int64_t k0, k1;
  block_range(n, writers, k0, k1);
  const WalkEnd end = segment_walk(
      sh.walk, reqs, k0, k1, programs, [&](int64_t k, int64_t i, int slot) {
        const int64_t chunk = k - sh.walk.prefix[slot];
        const int64_t v[4] = {i, chunk, i, chunk};
        for (int j = 0; j < 4; ++j)
          if (outs[j]->data != nullptr && k < outs[j]->size[0]) store_index(*outs[j], k, v[j]);
      });
  // Past the programs (the walk ran off the end, so it knows them all): the padding.
  if (end.complete)
    for (int64_t k = (k0 > end.running ? k0 : end.running) + threadIdx.x; k < k1; k += kThreads)
      for (const MutIndexSpan* o : outs)
        if (o->data != nullptr && k < o->size[0]) store_index(*o, k, -1);
}

}  // namespace kernels
}  // namespace cattn
