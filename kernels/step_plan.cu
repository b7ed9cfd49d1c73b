// SPDX-License-Identifier: Apache-2.0
// The step plan's kernel: one launch computes every selected product of a step. Block b belongs
// to the product whose block range holds it and runs that product's work on its slice of the
// range (the same device functions the products' own kernels run), so the products never wait
// for one another and the grid depends on the capacities only.
#include <cuda_runtime.h>

#include "kernels/compute_causal_conv1d_metadata.cuh"
#include "kernels/extend_all_queries_by_n.cuh"
#include "kernels/get_dcp_local_seq_lens.cuh"
#include "kernels/get_pcp_query_restore_idx.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.cuh"
#include "kernels/make_local_attention_virtual_batches.cuh"
#include "kernels/mamba_get_block_table_tensor.cuh"
#include "kernels/spec_decode.cuh"
#include "kernels/step_plan.h"

namespace cattn {
namespace kernels {

static_assert(kStepThreads == kBlockThreads, "the products' device functions assume kBlockThreads");

// The counts the plan writes itself: the tokens, and 0 for each product not selected.
__device__ void step_plan_counts(const StepPlanParams& p) {
  const IndexSpan& q = p.query_start_loc;
  const int64_t n = q.size[0];
  store_count(p.counts, kCountTokens,
              q.data != nullptr && n > 0 ? load_index(q, n - 1) - load_index(q, 0) : 0);
  auto selected = [&](int k) { return p.block_end[k] > (k > 0 ? p.block_end[k - 1] : 0); };
  const int owner[kStepCounts] = {-1,
                                  kStepPcpQueryRestoreIdx,
                                  kStepCausalConv1d,
                                  kStepLocalAttention,
                                  kStepLocalAttention,
                                  kStepLocalAttention,
                                  kStepFastPrefill,
                                  kStepFastPrefill};
  for (int c = 1; c < kStepCounts; ++c)
    if (!selected(owner[c])) store_count(p.counts, c, 0);
  // A 1.1 plan given a 1.2-sized vector: the step-input entries are 0.
  if (!p.inputs_counts)
    for (int c = kStepCounts; c < kStepAllCounts; ++c) store_count(p.counts, c, 0);
}

// Each block runs one product, so the products' shared memory overlays.
union StepShared {
  RestoreIdxShared<kBlockThreads> restore;
  CausalConv1dShared<kBlockThreads> conv1d;
  LocalAttentionShared<kBlockThreads> local;
  FastPrefillShared<kBlockThreads> fast_prefill;
};

// Three resident blocks per SM (at most 85 registers): the plan of a large batch (kernels/
// step_plan.h's grid bounds) then runs in one wave.
__global__ void __launch_bounds__(kBlockThreads, 3) step_plan_kernel(const StepPlanParams p) {
  __shared__ StepShared sh;
  if (p.wait_for_inputs) wait_for_prior_grids();
  const int64_t b = blockIdx.x;
  if (b == 0 && threadIdx.x == 0) step_plan_counts(p);
  int64_t begin = 0;
  int k = 0;
  while (k < kStepProducts && b >= p.block_end[k]) begin = p.block_end[k++];
  if (k == kStepProducts) {
    if (b < p.draft_end) draft_chain_blocks(p.draft, BlockSlice{b - begin, p.draft_end - begin});
    return;
  }
  const BlockSlice slice{b - begin, p.block_end[k] - begin};
  switch (k) {
    case kStepDcpLocalSeqLens: get_dcp_local_seq_lens_blocks(p.dcp, slice); break;
    case kStepPcpQueryRestoreIdx:
      get_pcp_query_restore_idx_blocks<kBlockThreads>(p.restore, slice, sh.restore);
      break;
    case kStepMambaBlockTable: mamba_get_block_table_tensor_blocks(p.mamba, slice); break;
    case kStepCausalConv1d:
      compute_causal_conv1d_metadata_capturable_blocks<kBlockThreads>(p.conv1d, slice, sh.conv1d);
      break;
    case kStepLocalAttention:
      make_local_attention_virtual_batches_capturable_blocks<kBlockThreads>(p.local, slice,
                                                                            sh.local);
      break;
    case kStepFastPrefill:
      make_kv_sharing_fast_prefill_common_attn_metadata_block<kBlockThreads>(p.fast_prefill,
                                                                             sh.fast_prefill);
      break;
    default: extend_all_queries_by_n_blocks(p.extend, slice); break;
  }
}

int launch_step_plan(const StepPlanParams& p, void* stream, bool dependent) {
  const int64_t last = p.block_end[kStepProducts - 1];
  const int64_t blocks = p.draft_end > last ? p.draft_end : last;
  if (blocks <= 0) return cudaSuccess;
  return launch_row_kernel(step_plan_kernel, grid_size(blocks),
                           static_cast<cudaStream_t>(stream), dependent, p);
}

}  // namespace kernels
}  // namespace cattn
