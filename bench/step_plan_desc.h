// SPDX-License-Identifier: Apache-2.0
// The step plan the benches time: all seven products, DCP over 4 ranks (all of them), Mamba
// blocks of 16 with 2 speculative (ALIGN), local attention in chunks of 8192 over blocks of 16,
// at the capacities of the case being timed, and its output tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "cattn.h"

inline cattn_step_plan_desc_t bench_step_plan_desc(int64_t reqs, int64_t tokens,
                                                   int64_t blocks_per_req, int64_t logits) {
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_ALL_PRODUCTS;
  d.max_num_reqs = reqs;
  d.max_num_tokens = tokens;
  d.max_num_blocks_per_req = blocks_per_req;
  d.max_num_logits = logits;
  d.dcp = {4, CATTN_DCP_ALL_RANKS, 1};
  d.mamba = {16, 2, CATTN_MAMBA_CACHE_MODE_ALIGN, 0};
  d.local_attention = {8192, 16};
  return d;
}

// The plan's outputs for B requests at its shape `sh`: every tensor from
// make(shape, dtype), int32 but for the int64 counts.
template <class Make>
cattn_step_outputs_t bench_step_plan_outputs(int64_t B, const cattn_step_plan_shape_t& sh,
                                             Make make) {
  const DLDataType i32{kDLInt, 32, 1}, i64{kDLInt, 64, 1};
  using Shape = std::vector<int64_t>;
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  o.dcp_local_seq_lens = make(Shape{B, 4}, i32);
  o.pcp_query_restore_idx = make(Shape{sh.restore_capacity}, i32);
  o.mamba_block_table = make(Shape{B, 3}, i32);
  o.conv1d_nums = make(Shape{B}, i32);
  o.conv1d_mlist = make(Shape{sh.conv1d_capacity}, i32);
  o.conv1d_offsetlist = make(Shape{sh.conv1d_capacity}, i32);
  o.conv1d_batch_ptr = make(Shape{sh.conv1d_capacity}, i32);
  o.conv1d_token_chunk_offset_ptr = make(Shape{sh.conv1d_capacity}, i32);
  o.local_query_start_loc = make(Shape{sh.local_capacity + 1}, i32);
  o.local_seq_lens = make(Shape{sh.local_capacity}, i32);
  o.local_num_computed_tokens = make(Shape{sh.local_capacity}, i32);
  o.local_block_table = make(Shape{sh.local_capacity, sh.local_pages}, i32);
  o.decode_query_start_loc = make(Shape{B + 1}, i32);
  o.extend_query_start_loc = make(Shape{B + 1}, i32);
  o.extend_seq_lens = make(Shape{B}, i32);
  o.counts = make(Shape{CATTN_STEP_NUM_COUNTS}, i64);
  return o;
}
