/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the step plan: every selected product of one engine step in one kernel
// launch, each product on a range of the grid's blocks (kernels/step_plan.cu).
#pragma once

#include <cstdint>

#include "kernels/compute_causal_conv1d_metadata.h"
#include "kernels/extend_all_queries_by_n.h"
#include "kernels/get_dcp_local_seq_lens.h"
#include "kernels/get_pcp_query_restore_idx.h"
#include "kernels/kernel_types.h"
#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.h"
#include "kernels/make_local_attention_virtual_batches.h"
#include "kernels/mamba_get_block_table_tensor.h"
#include "kernels/spec_decode.h"

namespace cattn {
namespace kernels {

// The products, in the order their blocks are laid out (the CATTN_STEP_* bit of product k is
// 1 << k).
enum StepProduct : int {
  kStepDcpLocalSeqLens = 0,
  kStepPcpQueryRestoreIdx,
  kStepMambaBlockTable,
  kStepCausalConv1d,
  kStepLocalAttention,
  kStepFastPrefill,
  kStepExtend,
  kStepProducts
};

// The entries of the counts vector (CATTN_STEP_COUNT_*), and the product that writes each.
enum StepCount : int {
  kCountTokens = 0,
  kCountRestoreSize,
  kCountConv1dPrograms,
  kCountLocalVirtualBatches,
  kCountLocalMaxQueryLen,
  kCountLocalMaxSeqLen,
  kCountDecodeMaxQueryLen,
  kCountDecodeTokens,
  kStepCounts
};
// The whole counts vector of a plan with step-input products (CATTN_STEP_NUM_COUNTS).
constexpr int kStepAllCounts = 16;

struct StepPlanParams {
  // Product k owns blocks [block_end[k - 1], block_end[k]) (block_end[-1] = 0); a product that
  // is not selected owns none.
  int64_t block_end[kStepProducts] = {};
  DcpLocalSeqLensParams dcp;
  RestoreIdxParams restore;
  MambaBlockTableParams mamba;
  CausalConv1dCapturableParams conv1d;
  LocalAttentionCapturableParams local;
  FastPrefillParams fast_prefill;
  ExtendQueriesParams extend;
  // The whole counts vector: block 0 writes the token count (0 without a query_start_loc) and
  // zeroes the entries of the products not selected; the products' own counts views are
  // slices of it.
  CountOut counts;
  IndexSpan query_start_loc;
  // 1.2: the step-input kernel ran first (its outputs are this kernel's inputs): wait for it
  // (a programmatic dependent launch), and leave counts entries 8 on to it.
  bool wait_for_inputs = false;
  bool inputs_counts = false;
  // 1.2: the drafter chain owns blocks [block_end[kStepProducts - 1], draft_end).
  int64_t draft_end = 0;
  DraftChainParams draft;
};

// Threads per block of the plan's kernel.
constexpr int kStepThreads = 256;
// Grid bounds: elementwise products take a thread per output element, segment-walk products
// (restore, conv1d, local attention: every block counts the requests again) two, fast prefill
// one block; each within a fixed number of blocks, so the layout needs no device query. The
// walk bound keeps the plan of a large batch within one wave of resident blocks.
constexpr int64_t kStepMaxBlocks = 1024;
constexpr int64_t kStepMaxWalkBlocks = 128;

// The blocks product `k` takes for outputs of `elements` entries (its work's shape at the
// plan's capacities). Fixed by the capacities alone, so a captured launch keeps its grid on
// every replay.
inline int64_t step_plan_blocks(StepProduct k, int64_t elements) {
  // Capacities reach INT64_MAX, so the ceilings are taken without adding first.
  const int64_t n = elements > 0 ? elements : 1;
  switch (k) {
    case kStepFastPrefill: return 1;
    case kStepPcpQueryRestoreIdx:
    case kStepCausalConv1d:
    case kStepLocalAttention: {
      const int64_t want = n / (2 * kStepThreads) + (n % (2 * kStepThreads) != 0);
      // The block table makes local attention the largest of the three: it may take more.
      const int64_t most = k == kStepLocalAttention ? kStepMaxWalkBlocks * 3 / 2
                                                    : kStepMaxWalkBlocks;
      // conv1d and local attention count their totals in one more block.
      return (want < most ? want : most) + (k == kStepPcpQueryRestoreIdx ? 0 : 1);
    }
    default: {
      const int64_t want = n / kStepThreads + (n % kStepThreads != 0);
      return want < kStepMaxBlocks ? want : kStepMaxBlocks;
    }
  }
}

// The blocks of the drafter chain for `requests` rows: a warp per request, within the bound.
inline int64_t step_plan_draft_blocks(int64_t requests) {
  const int64_t warps = kStepThreads / 32, n = requests > 0 ? requests : 1;
  const int64_t want = n / warps + (n % warps != 0);
  return want < kStepMaxBlocks ? want : kStepMaxBlocks;
}

// Enqueues the plan's kernel on `stream` (a cudaStream_t), as a programmatic dependent launch
// when `dependent`; returns a cudaError_t as int.
int launch_step_plan(const StepPlanParams& p, void* stream, bool dependent = false);

}  // namespace kernels
}  // namespace cattn
