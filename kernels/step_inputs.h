/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the step inputs (cattn_prepare_pos_seq_lens, cattn_gather_block_tables,
// cattn_compute_slot_mappings, cattn_combine_sampled_and_draft_tokens, and the step plan's
// CATTN_STEP_INPUTS .. CATTN_STEP_SPLIT): one kernel whose blocks take four roles - tokens,
// rows, logits and gathered tables - the first three forming the batch's query_start_loc in
// shared memory first, so no product waits for another (kernels/step_inputs.cu).
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

constexpr int kMaxKvGroups = 8;

// One KV-cache group: where its table is read and where its products go. Absent views have
// data == nullptr.
struct KvGroupView {
  IndexMatrix table;        // MRV2: persistent rows [R, W]; v1: batch rows [B, W]
  IndexSpan num_blocks;     // [R] entries in use per persistent row (gather); absent = W
  MutIndexMatrix gathered;  // [B, W'] the batch's table
  MutIndexSpan slots;       // [T] int64 slot mapping
  int64_t block_size = 1;   // the group's block size (v1's virtual block)
  int64_t kernel_block_size = 1;
  bool v1 = false;          // v1 contract: table row = batch row, v1's block arithmetic
};

// The counts the step inputs write (CATTN_STEP_COUNT_NUM_REQS ... _SPLIT_PREFILL_TOKENS), at
// their places in the plan's counts vector (entries 0 to 7 are the 1.1 products').
enum StepInputsCount : int {
  kInCountNumReqs = 8,
  kInCountNumLogits,
  kInCountMaxQueryLen,
  kInCountMaxSeqLen,
  kInCountSplit,  // four entries
  kInCounts = kInCountSplit + 4
};

struct StepInputsParams {
  int64_t rows = 0;          // B
  IndexSpan num_reqs;        // [1] live rows, clamped to [0, B]; absent = B
  // The batch: scheduled counts (query_start_loc computed) or a given query_start_loc.
  IndexSpan num_scheduled;   // [B]
  IndexSpan given_qsl;       // [B + 1], when num_scheduled is absent
  IndexSpan idx_mapping;     // [B]
  IndexSpan num_computed;    // [R] persistent
  int64_t persistent_rows = 0;  // R: rows idx_mapping may name (tables, num_computed)
  IndexSpan given_positions; // [N]: slot mappings' positions when they are not computed
  // Per-token outputs; tokens run over [0, token_cap).
  int64_t token_cap = 0;
  MutIndexSpan positions, token_to_req;
  // Per-row outputs.
  MutIndexSpan qsl, seq_lens, batch_num_computed;
  int num_groups = 0;
  KvGroupView groups[kMaxKvGroups];
  int64_t dcp_size = 1, dcp_rank = 0, dcp_interleave = 1;
  // Logits: row b owns new_sampled + drafts[b] of its last tokens.
  bool logits = false;
  IndexSpan num_draft;       // [B], absent = 0 drafts
  int64_t new_sampled = 1;
  int64_t logit_cap = 0;
  MutIndexSpan cu_num_logits, logits_indices, expanded_idx, expanded_pos;
  // The token combination (input_ids): seq_lens, prefill_len [R], last_sampled [R], drafts.
  IndexSpan comb_seq_lens, prefill_len, last_sampled;
  IndexMatrix draft_tokens;
  MutIndexSpan input_ids;
  // Counts (the plan's whole vector, absent = none) and the split's knobs. legacy_counts: no
  // 1.1 kernel runs, so this one writes entries 0 to 7 too (the tokens, then zeros).
  CountOut counts;
  bool legacy_counts = false;
  bool split = false;
  int64_t decode_threshold = 1;
  bool require_uniform = false;
  // Grid layout: [0, token_blocks) tokens, then row_blocks, logit_blocks, gather_blocks.
  int64_t token_blocks = 0, row_blocks = 0, logit_blocks = 0, gather_blocks = 0;
  bool needs_qsl = false;   // some role reads query_start_loc
  bool dependent = false;   // launched as a programmatic dependent launch's primary
};

// The blocks each role takes for its work at the capacities (fixed, so a captured launch keeps
// its grid on every replay).
int64_t step_inputs_token_blocks(int64_t tokens);
int64_t step_inputs_row_blocks(int64_t rows);
int64_t step_inputs_logit_blocks(int64_t logits);
int64_t step_inputs_gather_blocks(int64_t rows, int groups);
// Shared memory a launch needs: two int32 scans of B + 1 entries.
int64_t step_inputs_shared_bytes(int64_t rows);
// The most rows a launch handles (its scans live in shared memory).
constexpr int64_t kStepInputsMaxRows = 8192;

// Enqueues the step-inputs kernel; `allow_dependents` lets a following dependent launch start
// early. Returns a cudaError_t as int.
int launch_step_inputs(const StepInputsParams& p, void* stream, bool allow_dependents);

// The padding-contract check (cattn_step_batch_check): one block.
struct StepBatchCheckParams {
  IndexSpan query_start_loc, num_reqs, seq_lens;
  IndexMatrix tables[kMaxKvGroups];
  IndexSpan slots[kMaxKvGroups];
  MutIndexSpan status;  // [3]
};
int launch_step_batch_check(const StepBatchCheckParams& p, void* stream);

}  // namespace kernels
}  // namespace cattn
