// SPDX-License-Identifier: Apache-2.0
// The step plan the benches time: all seven products, DCP over 4 ranks (all of them), Mamba
// blocks of 16 with 2 speculative (ALIGN), local attention in chunks of 8192 over blocks of 16,
// at the capacities of the case being timed.
#pragma once

#include <cstdint>

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
