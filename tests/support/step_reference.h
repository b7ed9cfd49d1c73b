/* SPDX-License-Identifier: Apache-2.0 */
// Step-plan test support: random engine steps at a plan's capacities (padded with zero-length
// requests, as a CUDA-graph bucket is), and every product's expected outputs, computed by the
// library's host implementations and padded with the sentinels the device paths document.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

namespace cattn_test {

// The step plan the tests build on: 48 requests, 1536 tokens, 24 block-table columns, 96 logits
// indices; DCP 4 ranks (all, interleave 2), Mamba ALIGN (block 64, 2 speculative), conv1d
// block_m 8, local attention C = 32 / block 8, extend by 2.
inline cattn_step_plan_desc_t test_step_desc(uint32_t products) {
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = products;
  d.max_num_reqs = 48;
  d.max_num_tokens = 1536;
  d.max_num_blocks_per_req = 24;
  d.max_num_logits = 96;
  d.dcp = {4, CATTN_DCP_ALL_RANKS, 2};
  d.mamba = {64, 2, CATTN_MAMBA_CACHE_MODE_ALIGN, 0};
  d.conv1d = {8};
  d.local_attention = {32, 8};
  d.extend = {2};
  return d;
}

struct StepCaps {
  int64_t reqs = 1, tokens = 0, cols = 1, logits = 0;
};

// One step at capacity: B = caps.reqs rows, of which the first `live` are requests and the
// rest padding (no query, seq_len 0).
struct StepBatch {
  int64_t reqs = 0, cols = 0, live = 0, num_logits = 0;
  std::vector<int64_t> qsl, seq_lens, table, cu, logits;
};

// What a step's data must respect for the host implementations to accept it.
struct StepRules {
  int64_t max_seq_len = 1 << 20;  // mamba ALIGN: (seq_len - 1) / block_size + nspec < cols
  bool even_queries = false;      // every query 1 token or even (the restore index from qsl)
};

// The shapes a step takes, cycled through by `kind`: a random mix, decode only, every row a
// request and exactly caps.tokens tokens, all padding, one request, a few long prefills.
inline StepBatch random_step(std::mt19937_64& g, const StepCaps& caps, const StepRules& rules,
                             int kind) {
  StepBatch b;
  b.reqs = caps.reqs;
  b.cols = caps.cols;
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, std::max(lo, hi))(g);
  };
  kind %= 6;
  b.live = kind == 3 ? 0 : kind == 4 ? 1 : kind == 2 ? caps.reqs : pick(1, caps.reqs);
  if (kind == 5) b.live = std::min<int64_t>(caps.reqs, pick(1, 3));
  if (caps.tokens < b.live) b.live = caps.tokens;
  std::vector<int64_t> q(static_cast<size_t>(b.reqs), 0);
  int64_t budget = caps.tokens - b.live;  // every live request has at least one token
  for (int64_t i = 0; i < b.live; ++i) {
    int64_t extra = 0;
    if (kind != 1 && budget > 0 && (kind == 5 || pick(0, 2) == 0))
      extra = pick(0, kind == 5 ? budget
                                : std::min<int64_t>(budget, 3 * caps.tokens / caps.reqs + 8));
    extra = std::min(extra, rules.max_seq_len - 1);
    q[i] = 1 + extra;
    budget -= extra;
  }
  if (kind == 2 && b.live > 0) q[static_cast<size_t>(b.live - 1)] += budget;  // exactly at capacity
  if (rules.even_queries)
    for (int64_t& x : q)
      if (x > 1 && x % 2 != 0) --x;
  b.qsl.assign(1, 0);
  for (int64_t x : q) b.qsl.push_back(b.qsl.back() + x);
  for (int64_t i = 0; i < b.reqs; ++i) {
    const int64_t qi = q[static_cast<size_t>(i)];
    b.seq_lens.push_back(i < b.live ? std::min(rules.max_seq_len, qi + pick(0, 300)) : 0);
    if (b.seq_lens.back() < qi) b.seq_lens.back() = qi;
  }
  for (int64_t i = 0; i < b.reqs * b.cols; ++i) b.table.push_back(pick(0, 1 << 20));
  // The PCP index's own split: every request 1 token or even.
  b.cu.assign(1, 0);
  for (int64_t i = 0; i < b.reqs; ++i) {
    int64_t len = q[static_cast<size_t>(i)];
    if (len > 1 && len % 2 != 0) --len;
    b.cu.push_back(b.cu.back() + len);
  }
  // Logits: each live request's last token, sometimes a few more of its tokens, then filler.
  for (int64_t i = 0; i < b.live; ++i) {
    const int64_t end = b.qsl[static_cast<size_t>(i + 1)];
    if (end == b.qsl[static_cast<size_t>(i)]) continue;
    if (static_cast<int64_t>(b.logits.size()) < caps.logits) b.logits.push_back(end - 1);
    if (pick(0, 3) == 0 && static_cast<int64_t>(b.logits.size()) < caps.logits)
      b.logits.push_back(pick(b.qsl[static_cast<size_t>(i)], end - 1));
  }
  if (pick(0, 1) == 0) std::shuffle(b.logits.begin(), b.logits.end(), g);
  b.num_logits = static_cast<int64_t>(b.logits.size());
  while (static_cast<int64_t>(b.logits.size()) < caps.logits) b.logits.push_back(pick(0, 1 << 30));
  return b;
}

inline HostTensor host_of(const std::vector<int64_t>& v, std::vector<int64_t> shape = {}) {
  return HostTensor::of(v, i64(), std::move(shape));
}
inline std::vector<int64_t> padded(std::vector<int64_t> v, size_t n, int64_t fill) {
  if (v.size() > n) v.resize(n);
  v.resize(n, fill);
  return v;
}

inline std::vector<int64_t> expected_dcp(const StepBatch& b, const cattn_step_dcp_params_t& p) {
  HostTensor seq = host_of(b.seq_lens);
  const bool all = p.dcp_rank == CATTN_DCP_ALL_RANKS;
  const int64_t width = all ? p.dcp_size : 1;
  HostTensor out = all && width > 1 ? HostTensor({b.reqs, width}, i64())
                                    : HostTensor({b.reqs}, i64());
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq.dl();
  a.dcp_size = p.dcp_size;
  a.dcp_rank = p.dcp_rank;
  a.dcp_kv_cache_interleave_size = p.dcp_kv_cache_interleave_size;
  a.out = out.dl();
  EXPECT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  return out.values();
}

// The restore index of `cu`, -1 past its size up to `len`; *size gets the size.
inline std::vector<int64_t> expected_restore(const std::vector<int64_t>& cu, int64_t len,
                                             int64_t* size) {
  HostTensor c = host_of(cu), out({len}, i64());
  EXPECT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(c.dl(), size));
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = c.dl();
  a.restore_idx = out.dl();
  EXPECT_CATTN_OK(cattn_get_pcp_query_restore_idx(&a));
  return out.values();
}

inline std::vector<int64_t> expected_mamba(const StepBatch& b, const cattn_step_mamba_params_t& p) {
  HostTensor table = host_of(b.table, {b.reqs, b.cols}), seq = host_of(b.seq_lens);
  const bool align = p.mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
  HostTensor out({b.reqs, align ? 1 + p.num_speculative_blocks : b.cols}, i64());
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = table.dl();
  a.seq_lens = seq.dl();
  a.block_size = p.block_size;
  a.num_speculative_blocks = p.num_speculative_blocks;
  a.mamba_cache_mode = p.mamba_cache_mode;
  a.out = out.dl();
  EXPECT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  return out.values();
}

// The device-computed conv1d metadata: nums, then the four per-program outputs of `len`
// entries each (the programs, then CATTN_PAD_SLOT_ID), and tot.
struct Conv1dExpected {
  std::vector<int64_t> nums, mlist, offsetlist;  // batch_ptr = mlist, chunk offsets = offsetlist
  int64_t tot = 0;
};
inline Conv1dExpected expected_conv1d(const std::vector<int64_t>& qsl, int64_t block_m,
                                      int64_t len) {
  HostTensor q = host_of(qsl);
  int64_t tot = 0, cap = 0;
  EXPECT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), block_m, &tot, &cap));
  const int64_t reqs = static_cast<int64_t>(qsl.size()) - 1;
  HostTensor nums({reqs}, i64()), mlist({tot}, i64()), offsets({tot}, i64());
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.block_m = block_m;
  a.nums = nums.dl();
  a.mlist = mlist.dl();
  a.offsetlist = offsets.dl();
  EXPECT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&a));
  EXPECT_EQ(a.tot, tot);
  const size_t n = static_cast<size_t>(len);
  return {nums.values(), padded(mlist.values(), n, CATTN_PAD_SLOT_ID),
          padded(offsets.values(), n, CATTN_PAD_SLOT_ID), tot};
}

// The device-computed local-attention virtual batches at capacity `cap`: the plan's values,
// then the documented padding (cu_seqlens_q repeats the total, lengths 0, table rows 0).
struct LocalExpected {
  std::vector<int64_t> qsl, seq_lens, computed, table;
  int64_t virtual_batches = 0, max_query_len = 0, max_seq_len = 0;
};
inline LocalExpected expected_local(const StepBatch& b, int64_t chunk, int64_t block_size,
                                    int64_t cap) {
  HostTensor qsl = host_of(b.qsl), seq = host_of(b.seq_lens),
             table = host_of(b.table, {b.reqs, b.cols});
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc_cpu = qsl.dl();
  in.seq_lens_cpu = seq.dl();
  in.block_table_tensor = table.dl();
  in.num_reqs = b.reqs;
  in.num_actual_tokens = b.qsl.back();
  cattn_local_attention_args_t pa = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  pa.attn_chunk_size = chunk;
  pa.block_size = block_size;
  pa.metadata = &in;
  pa.max_virtual_batches = std::max<int64_t>(cap, 1);
  LocalExpected e;
  EXPECT_CATTN_OK(cattn_make_local_attention_virtual_batches(&pa));
  if (pa.plan == nullptr) return e;
  int64_t v = 0, pages = 0;
  EXPECT_CATTN_OK(cattn_local_attention_plan_get_shape(pa.plan, &v, &pages));
  HostTensor oq({v + 1}, i64()), os({v}, i64()), oc({v}, i64()), ot({v, pages}, i64());
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc_cpu = oq.dl();
  out.seq_lens_cpu = os.dl();
  out.num_computed_tokens_cpu = oc.dl();
  out.block_table_tensor = ot.dl();
  cattn_local_attention_fill_args_t fa = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  fa.metadata = &in;
  fa.out = &out;
  EXPECT_CATTN_OK(cattn_local_attention_plan_fill(pa.plan, &fa));
  cattn_local_attention_plan_destroy(pa.plan);
  const size_t n = static_cast<size_t>(cap);
  e.qsl = padded(oq.values(), n + 1, b.qsl.back() - b.qsl.front());
  e.seq_lens = padded(os.values(), n, 0);
  e.computed = padded(oc.values(), n, 0);
  e.table = padded(ot.values(), n * static_cast<size_t>(pages), 0);
  e.virtual_batches = v;
  e.max_query_len = out.max_query_len;
  e.max_seq_len = out.max_seq_len;
  return e;
}

// Fast prefill's decode query_start_loc and {max_query_len, num_actual_tokens}.
inline std::vector<int64_t> expected_fast_prefill(const StepBatch& b, int64_t max_and_total[2]) {
  HostTensor qsl = host_of(b.qsl), logits = host_of(b.logits), out({b.reqs + 1}, i64()),
             scalars({2}, i64());
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc = qsl.dl();
  in.logits_indices_padded = logits.dl();
  in.num_logits_indices = b.num_logits;
  in.num_reqs = b.reqs;
  in.max_query_len = 2;  // never the max_query_len == 1 passthrough
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = out.dl();
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in;
  a.out = &md;
  a.decode_max_and_total = scalars.dl();
  EXPECT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  max_and_total[0] = scalars.get(0);
  max_and_total[1] = scalars.get(1);
  return out.values();
}

inline void expected_extend(const StepBatch& b, int64_t n, std::vector<int64_t>& qsl_out,
                            std::vector<int64_t>& seq_out) {
  HostTensor qsl = host_of(b.qsl), seq = host_of(b.seq_lens), oq({b.reqs + 1}, i64()),
             os({b.reqs}, i64());
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc = qsl.dl();
  in.seq_lens = seq.dl();
  in.num_reqs = b.reqs;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc = oq.dl();
  out.seq_lens = os.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in;
  a.n = n;
  a.out = &out;
  EXPECT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  qsl_out = oq.values();
  seq_out = os.values();
}

}  // namespace cattn_test
