// SPDX-License-Identifier: Apache-2.0
// Device functions of EAGLE's speculative-decoding metadata shared by the calls' own kernels
// (kernels/spec_decode.cu) and the step plan's drafter chain (kernels/step_plan.cu). Values are
// the caller's: every read is bounded by its view and every write by its output, so a hostile
// value changes what is written, never where.
#pragma once

#include <cstdint>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/spec_decode.h"

namespace cattn {
namespace kernels {
namespace spec {

// Unsigned arithmetic: the device cannot refuse values, and wrapping is defined.
__device__ __forceinline__ int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
__device__ __forceinline__ int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
__device__ __forceinline__ int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Element i of an in-place tensor (an output the call also reads).
__device__ __forceinline__ int64_t load_inout(const MutIndexSpan& s, int64_t i) {
  IndexSpan r;
  r.data = s.data, r.size[0] = s.size[0], r.step[0] = s.step[0], r.i64 = s.i64;
  return load_index(r, i);
}
__device__ __forceinline__ bool flag_at(const FlagSpan& f, int64_t i) {
  return f.data != nullptr && i < f.size && f.data[i * f.step] != 0;
}
__device__ __forceinline__ void store_flag(const MutFlagSpan& f, int64_t i, bool v) {
  if (f.data != nullptr && i >= 0 && i < f.size) f.data[i * f.step] = v ? 1 : 0;
}
// A store whose index comes from the caller's values: dropped outside the output.
__device__ __forceinline__ void store_bounded(const MutIndexSpan& s, int64_t i, int64_t v) {
  if (s.data != nullptr && i >= 0 && i < s.size[0]) store_index(s, i, v);
}
// A read whose index comes from the caller's values: clamped into the view (0 when empty), as
// vLLM clamps its token reads.
__device__ __forceinline__ int64_t load_clamped(const IndexSpan& s, int64_t i) {
  if (s.size[0] <= 0) return 0;
  return load_index(s, i < 0 ? 0 : (i >= s.size[0] ? s.size[0] - 1 : i));
}
__device__ __forceinline__ int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// The slot of position `pos` (>= 0) in block `block`: vLLM's block * block_size + offset, or
// -1 where it has none (slot_of_block).
__device__ __forceinline__ int64_t slot_in(int64_t block, int64_t pos, int64_t block_size) {
  const int64_t col = div_nonneg(pos, block_size);
  return slot_of_block(block, block_size, pos - col * block_size);
}

// compute_new_slot_mapping's slot of a token of request r at `pos`: -1 when rejected or
// outside [0, max_model_len); vLLM indexes the flattened [B, W] table, so a column past the
// row reads the next row, and one past the table has no slot.
__device__ __forceinline__ int64_t new_slot(const IndexMatrix& table, int64_t rows, int64_t r,
                                            int64_t pos, bool rejected, int64_t block_size,
                                            int64_t max_model_len) {
  const int64_t W = table.size[1];
  if (rejected || pos < 0 || pos >= max_model_len || W <= 0) return -1;
  const int64_t col = div_nonneg(pos, block_size);
  if (col >= rows * W || r > (rows * W - 1 - col) / W) return -1;
  const int64_t f = r * W + col;
  return slot_in(load_index(table, f / W, f % W), pos, block_size);
}

// One request's drafter tokens (copy_and_expand_eagle_inputs), its lanes over the tokens.
// `s`/`e`: its query_start_loc entries clamped into [0, span]; `end_loc` its query_end_loc.
// With `slots` present, each token's slot too (compute_new_slot_mapping of the request).
struct ExpandRequest {
  int64_t i, s, e, end_loc, bonus;
};
__device__ __forceinline__ void expand_request(const ExpandRequest& r, const IndexSpan& target_ids,
                                               const IndexSpan& target_positions,
                                               const MutIndexSpan& input_ids,
                                               const MutIndexSpan& positions,
                                               const MutFlagSpan& rejected_mask,
                                               const MutFlagSpan& masked_mask,
                                               const MutIndexSpan& new_token_indices,
                                               const MutIndexSpan& hidden_map, int64_t P,
                                               bool shift_ids, int64_t max_tokens, int64_t pad_id,
                                               int64_t parallel_id, const DraftChainParams* slot_p,
                                               int lane) {
  const int64_t shift = shift_ids ? 1 : 0;
  const int64_t q = r.e - r.s;
  // The rejected tail, kept inside the request (vLLM: qsl[i + 1] - query_end_loc - 1).
  const int64_t rejected = q > 0 ? clamp64(wrap_sub(wrap_sub(r.e, 1), r.end_loc), 0, q - 1) : 0;
  const int64_t valid = q > 0 ? q - rejected - shift : 0;
  int64_t total = q + P - shift;  // the request's output tokens
  if (max_tokens > 0 && total > max_tokens) total = max_tokens;
  const int64_t out_start = r.s + r.i * (P - shift);
  const int64_t first_pos = load_clamped(target_positions, r.s);
  for (int64_t j = lane; j < total; j += 32) {
    const int64_t o = out_start + j;
    int64_t id, pos = wrap_add(first_pos, j);
    if (j < valid) id = load_clamped(target_ids, r.s + shift + j);
    else if (j == valid) id = r.bonus;
    else if (j < valid + P) id = parallel_id;
    else id = pad_id, pos = 0;
    const bool is_rejected = j >= valid + P;
    store_bounded(input_ids, o, id);
    store_bounded(positions, o, pos);
    store_flag(rejected_mask, o, is_rejected);
    store_flag(masked_mask, o, j > valid && j < valid + P);
    if (j >= valid && j < valid + P) store_bounded(new_token_indices, r.i * P + (j - valid), o);
    if (shift && j < q) store_bounded(hidden_map, r.s + j, o);
    if (slot_p != nullptr)
      store_bounded(slot_p->slots, o,
                    new_slot(slot_p->block_table, slot_p->rows, r.i, pos, is_rejected,
                             slot_p->block_size, slot_p->max_model_len));
  }
}

}  // namespace spec

// The drafter chain on a slice of the plan's blocks: a warp per request, then every token
// output's entries past the step's tokens get their sentinels.
__device__ __forceinline__ void draft_chain_blocks(const DraftChainParams& p,
                                                   const BlockSlice& slice) {
  using namespace spec;
  const int lane = threadIdx.x % 32;
  const int64_t warps = slice.blocks * kBlockWarps;
  const int64_t S = p.sampled.size[1], P = p.slots_per_request, shift = p.shift ? 1 : 0;
  for (int64_t i = slice.block * kBlockWarps + threadIdx.x / 32; i < p.rows; i += warps) {
    // Next token: the valid sampled tokens (not -1, below vocab_size) counted a row of 32
    // columns at a time; the next token is the valid one at the highest column.
    int64_t valid = 0, next = 0;
    bool found = false;
    if (!flag_at(p.discard, i)) {
      for (int64_t j0 = 0; j0 < S; j0 += 32) {
        const int64_t j = j0 + lane;
        const int64_t t = j < S ? load_index(p.sampled, i, j) : -1;
        const unsigned ok = __ballot_sync(0xffffffffu, j < S && t != -1 && t < p.vocab_size);
        if (ok != 0) {
          next = __shfl_sync(0xffffffffu, t, 31 - __clz(static_cast<int>(ok)));
          found = true;
        }
        valid += __popc(ok);
      }
    }
    const int64_t bonus = found ? next : load_index(p.backup, i);
    if (lane == 0) {
      store_index(p.next_tokens, i, bonus);
      if (p.valid_count.data != nullptr) store_index(p.valid_count, i, valid);
    }
    if (!p.prepare) continue;
    // Prepare inputs: the rejected drafts and the token to sample.
    const int64_t cu = load_index(p.cu_num_draft_tokens, i);
    const int64_t drafts = i == 0 ? cu : wrap_sub(cu, load_index(p.cu_num_draft_tokens, i - 1));
    const int64_t rejected = drafts > 0 ? wrap_sub(wrap_add(drafts, 1), valid) : 0;
    const int64_t next_start = load_index(p.query_start_loc, i + 1);
    const int64_t last = wrap_sub(next_start, 1);
    if (lane == 0) {
      store_index(p.token_indices, i, wrap_sub(last, rejected));
      if (p.num_rejected.data != nullptr) store_index(p.num_rejected, i, rejected);
    }
    if (!p.expand) continue;
    // Expand, with vLLM's query_end_loc = query_start_loc[i + 1] - 1 - rejected.
    ExpandRequest r;
    r.i = i;
    r.s = clamp64(load_index(p.query_start_loc, i), 0, p.span);
    r.e = clamp64(next_start, r.s, p.span);
    r.end_loc = wrap_sub(last, rejected);
    r.bonus = bonus;
    expand_request(r, p.target_ids, p.target_positions, p.input_ids, p.positions, p.rejected,
                   p.masked, p.new_token_indices, p.hidden_map, P, p.shift, p.max_tokens,
                   p.pad_id, p.parallel_id, p.slot_mapping ? &p : nullptr, lane);
  }
  if (!p.expand) return;
  // Past the step's tokens: padding, position 0, rejected, not masked, no slot.
  const int64_t B = p.rows;
  const int64_t qsl_end = B > 0 ? clamp64(load_index(p.query_start_loc, B), 0, p.span) : 0;
  const int64_t tokens = qsl_end + B * (P - shift);
  int64_t n = p.input_ids.size[0];
  if (p.positions.size[0] > n) n = p.positions.size[0];
  if (p.rejected.size > n) n = p.rejected.size;
  if (p.masked.size > n) n = p.masked.size;
  if (p.slot_mapping && p.slots.size[0] > n) n = p.slots.size[0];
  for (int64_t o = tokens + slice.thread(); o < n; o += slice.threads()) {
    store_bounded(p.input_ids, o, p.pad_id);
    store_bounded(p.positions, o, 0);
    store_flag(p.rejected, o, true);
    store_flag(p.masked, o, false);
    if (p.slot_mapping) store_bounded(p.slots, o, -1);
  }
  for (int64_t o = B * P + slice.thread(); o < p.new_token_indices.size[0]; o += slice.threads())
    store_index(p.new_token_indices, o, -1);
  for (int64_t o = qsl_end + slice.thread(); o < p.hidden_map.size[0]; o += slice.threads())
    store_index(p.hidden_map, o, -1);
}

}  // namespace kernels
}  // namespace cattn
