// SPDX-License-Identifier: Apache-2.0
// Fuzz target: inputs that change while a call reads them. The header promises that a caller
// who races with a call (another thread writing an input it reads) gets unspecified output
// values or a failure, but never a write outside the outputs or a read outside the inputs: no
// value is read twice to place a write, and every write position is bounded by the checked sizes
// again.
//
// Per input: one of conv1d, restore idx, fast prefill, fused select, local-attention create,
// mamba ALIGN and extend, with a valid call built from the fuzzer's bytes (every tensor in
// guarded memory of its own, strided outputs leaving gaps); a persistent mutator thread keeps
// storing fuzzer-chosen values (the original one, extremes, anything) into one chosen input
// element with __atomic_store_n while this thread makes the call a few times. Whether a call
// succeeds cannot be predicted; what is checked is memory safety: a valid status (with a message
// naming the function on failure), no guard byte and no byte of any buffer outside the outputs'
// elements changed (the mutated element put back first), a plan no larger than its cap, and
// whatever AddressSanitizer and UndefinedBehaviorSanitizer see. The race itself (Mutator, race())
// lives in fuzz_support.h, shared with the race modes of fuzz_step_inputs and fuzz_spec_decode;
// under TSan, which would report the race, no call is made.
#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

DLDataType index_dtype(FuzzedDataProvider& fdp) { return fdp.ConsumeBool() ? i64() : i32(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int which = fdp.ConsumeIntegralInRange<int>(0, 6);
  RaceCall call;
  // Storage for every kind of call (only one is used per input).
  Tensor a0, a1, a2, a3, o0, o1, o2, o3, o4, o5;
  cattn_causal_conv1d_metadata_args_t conv = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  cattn_pcp_query_restore_idx_args_t restore = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  cattn_fused_pcp_qkv_select_args_t select = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  cattn_mamba_block_table_args_t mamba = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  Struct<cattn_common_attn_metadata_t> meta(CATTN_COMMON_ATTN_METADATA_INIT, CATTN_COMMON_ATTN_METADATA_SIZE);
  Struct<cattn_common_attn_metadata_t> out_meta(CATTN_COMMON_ATTN_METADATA_INIT, CATTN_COMMON_ATTN_METADATA_SIZE);
  cattn_fast_prefill_metadata_args_t prefill = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  cattn_extend_all_queries_by_n_args_t extend = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  cattn_local_attention_args_t local = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  static DLTensor dummy[4] = {};
  int64_t local_cap = 0;
  cattn_common_attn_metadata_t* m = meta.get();

  // Cumulative lengths of `n` requests, each drawn by `len`.
  auto cumulative_of = [&](int64_t n, int64_t max_len, bool even) {
    std::vector<int64_t> v{fdp.ConsumeIntegralInRange<int64_t>(0, 8) * (even ? 2 : 1)};
    for (int64_t i = 0; i < n; ++i) {
      int64_t l = fdp.ConsumeIntegralInRange<int64_t>(0, max_len);
      if (even && l > 1) l &= ~int64_t{1};
      v.push_back(v.back() + l);
    }
    return v;
  };
  auto tensor_of = [&](const std::vector<int64_t>& values, DLDataType dtype) {
    Tensor t = race_tensor(fdp, {static_cast<int64_t>(values.size())}, dtype, false);
    t.fill(values);
    return t;
  };

  switch (which) {
    case 0: {  // compute_causal_conv1d_metadata
      call.fn = "cattn_compute_causal_conv1d_metadata";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 200);  // 8,016 int64 outputs at most
      const int64_t block_m = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
      const std::vector<int64_t> qsl = cumulative_of(b, 40, false);
      a0 = tensor_of(qsl, index_dtype(fdp));
      int64_t tot = 0;
      for (int64_t i = 0; i < b; ++i) tot += (qsl[i + 1] - qsl[i] + block_m - 1) / block_m;
      const int64_t cap = tot + fdp.ConsumeIntegralInRange<int64_t>(0, 16);
      o0 = race_tensor(fdp, {b}, i64(), true);
      o1 = race_tensor(fdp, {tot}, index_dtype(fdp), true);
      o2 = race_tensor(fdp, {tot}, index_dtype(fdp), true);
      o3 = race_tensor(fdp, {cap}, index_dtype(fdp), true);
      o4 = race_tensor(fdp, {cap}, index_dtype(fdp), true);
      conv.query_start_loc_cpu = a0.cptr();
      conv.block_m = block_m;
      conv.nums = fdp.ConsumeBool() ? o0.ptr() : nullptr;
      conv.mlist = o1.ptr();
      conv.offsetlist = fdp.ConsumeBool() ? o2.ptr() : nullptr;
      conv.batch_ptr = o3.ptr();
      conv.token_chunk_offset_ptr = fdp.ConsumeBool() ? o4.ptr() : nullptr;
      call.inputs = {&a0};
      call.outputs = {&o0, &o1, &o2, &o3, &o4};
      call.mutable_inputs = {{&a0, "query_start_loc_cpu"}};
      call.typical = qsl.back();
      break;
    }
    case 1: {  // get_pcp_query_restore_idx
      call.fn = "cattn_get_pcp_query_restore_idx";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 200);
      const std::vector<int64_t> cu = cumulative_of(b, 24, true);
      a0 = tensor_of(cu, index_dtype(fdp));
      int64_t total = 0;
      for (int64_t i = 0; i < b; ++i) total += (cu[i + 1] - cu[i]) / 2 * 2;
      o0 = race_tensor(fdp, {total + fdp.ConsumeIntegralInRange<int64_t>(0, 4)}, index_dtype(fdp), true);
      restore.cu_num_tokens = a0.cptr();
      restore.restore_idx = o0.ptr();
      call.inputs = {&a0};
      call.outputs = {&o0};
      call.mutable_inputs = {{&a0, "cu_num_tokens"}};
      call.typical = cu.back();
      break;
    }
    case 2: {  // make_kv_sharing_fast_prefill_common_attn_metadata
      call.fn = "cattn_make_kv_sharing_fast_prefill_common_attn_metadata";
      const int64_t r = fdp.ConsumeIntegralInRange<int64_t>(1, 200);
      const std::vector<int64_t> qsl = cumulative_of(r, 20, false);
      const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 300);
      std::vector<int64_t> logits(static_cast<size_t>(n));
      for (auto& x : logits) x = fdp.ConsumeIntegralInRange<int64_t>(qsl.front(), std::max(qsl.front(), qsl.back() - 1));
      std::sort(logits.begin(), logits.end());
      a0 = tensor_of(qsl, index_dtype(fdp));
      a1 = tensor_of(logits, index_dtype(fdp));
      o0 = race_tensor(fdp, {r + 1}, index_dtype(fdp), true);
      o1 = race_tensor(fdp, {r + 1}, index_dtype(fdp), true);
      o2 = race_tensor(fdp, {2}, index_dtype(fdp), true);
      m->query_start_loc = a0.ptr();
      m->query_start_loc_cpu = &dummy[0];
      m->seq_lens = &dummy[1];
      m->num_computed_tokens_cpu = &dummy[2];
      m->block_table_tensor = &dummy[3];
      m->logits_indices_padded = a1.ptr();
      m->num_reqs = r;
      m->num_actual_tokens = qsl.back();
      m->max_query_len = 2 + fdp.ConsumeIntegralInRange<int64_t>(0, 20);  // not the all-decode passthrough
      m->max_seq_len = 100;
      m->num_logits_indices = fdp.ConsumeIntegralInRange<int64_t>(0, n);
      out_meta.get()->query_start_loc = o0.ptr();
      out_meta.get()->query_start_loc_cpu = fdp.ConsumeBool() ? o1.ptr() : nullptr;
      prefill.metadata = m;
      prefill.out = out_meta.get();
      prefill.decode_max_and_total = fdp.ConsumeBool() ? o2.ptr() : nullptr;
      call.inputs = {&a0, &a1};
      call.outputs = {&o0, &o1, &o2};
      call.mutable_inputs = {{&a0, "query_start_loc"}, {&a1, "logits_indices_padded"}};
      call.typical = qsl.back();
      break;
    }
    case 3: {  // fused_pcp_qkv_select
      call.fn = "cattn_fused_pcp_qkv_select";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 40);
      const int64_t w = fdp.ConsumeIntegralInRange<int64_t>(1, 3), r = fdp.ConsumeIntegralInRange<int64_t>(0, w - 1);
      const int64_t h = fdp.ConsumeIntegralInRange<int64_t>(1, 2), d = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
      std::vector<int64_t> starts{0};
      for (int64_t i = 0; i < b; ++i) starts.push_back(starts.back() + 2 * fdp.ConsumeIntegralInRange<int64_t>(0, 6));
      const int64_t nq = starts.back() + 2 * fdp.ConsumeIntegralInRange<int64_t>(0, 2);
      const DLDataType dt{kDLInt, 16, 1};
      a0 = race_tensor(fdp, {nq, h, d}, dt, false);
      a1 = race_tensor(fdp, {w * starts.back(), h, d}, dt, false);
      a2 = race_tensor(fdp, {w * starts.back(), h, d}, dt, false);
      a3 = tensor_of(starts, index_dtype(fdp));
      for (Tensor* t : {&a0, &a1, &a2})
        for (size_t i = 0; i < t->mem->payload_size(); ++i) t->mem->payload()[i] = static_cast<uint8_t>(i * 37 + 1);
      // Outputs compact (the call requires it).
      auto out = [&](int64_t rows) {
        Tensor t = make_tensor_with({rows, h, d}, nullptr, dt, true);
        FZ_CHECK(t.usable(), "output");
        return t;
      };
      int64_t q_rows = 0, head_rows = 0, tail_rows = 0;
      FZ_CHECK(cattn_fused_pcp_qkv_select_size(nq, w, r, &q_rows, &head_rows, &tail_rows) == CATTN_OK,
               "size query");
      o0 = out(q_rows);
      o1 = out(head_rows);
      o2 = out(head_rows);
      o3 = out(q_rows);
      o4 = out(tail_rows);
      o5 = out(tail_rows);
      select.q = a0.cptr();
      select.k = a1.cptr();
      select.v = a2.cptr();
      select.query_start_loc = a3.cptr();
      select.pcp_world_size = w;
      select.pcp_rank = r;
      select.q_head = o0.ptr();
      select.k_head = o1.ptr();
      select.v_head = o2.ptr();
      select.q_tail = o3.ptr();
      select.k_tail = o4.ptr();
      select.v_tail = o5.ptr();
      call.inputs = {&a0, &a1, &a2, &a3};
      call.outputs = {&o0, &o1, &o2, &o3, &o4, &o5};
      call.mutable_inputs = {{&a3, "query_start_loc"}};
      call.typical = starts.back();
      break;
    }
    case 4: {  // make_local_attention_virtual_batches
      call.fn = "cattn_make_local_attention_virtual_batches";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 100);
      const int64_t chunk = fdp.ConsumeIntegralInRange<int64_t>(1, 16);
      const std::vector<int64_t> qsl = cumulative_of(b, 40, false);
      std::vector<int64_t> seq(static_cast<size_t>(b));
      for (int64_t i = 0; i < b; ++i) seq[static_cast<size_t>(i)] = qsl[i + 1] - qsl[i] + fdp.ConsumeIntegralInRange<int64_t>(0, 50);
      a0 = tensor_of(qsl, index_dtype(fdp));
      a1 = tensor_of(seq, index_dtype(fdp));
      a2 = race_tensor(fdp, {b, fdp.ConsumeIntegralInRange<int64_t>(1, 4)}, index_dtype(fdp), false);
      m->query_start_loc_cpu = a0.ptr();
      m->seq_lens_cpu = a1.ptr();
      m->block_table_tensor = a2.ptr();
      m->num_actual_tokens = qsl.back() - qsl.front();
      local.attn_chunk_size = chunk;
      local.block_size = 1;
      local.metadata = m;
      // The cap bounds the plan whatever the mirrors say by the time they are counted.
      local.max_virtual_batches = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 4 * b + qsl.back());
      local_cap = local.max_virtual_batches > 0 ? local.max_virtual_batches
                                                : 2 * b + (m->num_actual_tokens + chunk - 1) / chunk;
      call.inputs = {&a0, &a1, &a2};
      call.mutable_inputs = {{&a0, "query_start_loc_cpu"}, {&a1, "seq_lens_cpu"}};
      call.typical = qsl.back() + 50;
      break;
    }
    case 5: {  // mamba_get_block_table_tensor, ALIGN
      call.fn = "cattn_mamba_get_block_table_tensor";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 100), cols = fdp.ConsumeIntegralInRange<int64_t>(1, 12);
      const int64_t block_size = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
      const int64_t nspec = fdp.ConsumeIntegralInRange<int64_t>(0, std::min<int64_t>(3, cols - 1));
      a0 = race_tensor(fdp, {b, cols}, index_dtype(fdp), false);
      std::vector<int64_t> table(static_cast<size_t>(b * cols));
      for (auto& x : table) x = fdp.ConsumeIntegralInRange<int64_t>(0, 1000);
      a0.fill(table);
      std::vector<int64_t> lens(static_cast<size_t>(b));
      for (auto& x : lens) x = fdp.ConsumeIntegralInRange<int64_t>(0, (cols - nspec) * block_size);
      a1 = tensor_of(lens, index_dtype(fdp));
      o0 = race_tensor(fdp, {b, 1 + nspec}, index_dtype(fdp), true);
      mamba.block_table = a0.cptr();
      mamba.seq_lens = a1.cptr();
      mamba.block_size = block_size;
      mamba.num_speculative_blocks = nspec;
      mamba.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
      mamba.out = o0.ptr();
      call.inputs = {&a0, &a1};
      call.outputs = {&o0};
      call.mutable_inputs = {{&a1, "seq_lens"}, {&a0, "block_table"}};
      call.typical = cols * block_size;
      break;
    }
    default: {  // extend_all_queries_by_n (host mirrors present or not)
      call.fn = "cattn_extend_all_queries_by_n";
      const int64_t b = fdp.ConsumeIntegralInRange<int64_t>(1, 200);
      const std::vector<int64_t> qsl = cumulative_of(b, 30, false);
      std::vector<int64_t> seq(static_cast<size_t>(b));
      for (auto& x : seq) x = fdp.ConsumeIntegralInRange<int64_t>(0, 400);
      const DLDataType qt = index_dtype(fdp), st = index_dtype(fdp);
      a0 = tensor_of(qsl, qt);
      a1 = tensor_of(seq, st);
      const bool mirrors = fdp.ConsumeBool();
      if (mirrors) {
        a2 = tensor_of(qsl, qt);
        a3 = tensor_of(seq, st);
      }
      o0 = race_tensor(fdp, {b + 1}, index_dtype(fdp), true);
      o1 = race_tensor(fdp, {b}, index_dtype(fdp), true);
      o2 = race_tensor(fdp, {b + 1}, index_dtype(fdp), true);
      o3 = race_tensor(fdp, {b}, index_dtype(fdp), true);
      m->query_start_loc = a0.ptr();
      m->seq_lens = a1.ptr();
      m->query_start_loc_cpu = mirrors ? a2.ptr() : nullptr;
      m->seq_lens_cpu = mirrors ? a3.ptr() : nullptr;
      m->num_reqs = b;
      m->num_actual_tokens = qsl.back();
      m->max_query_len = 30;
      m->max_seq_len = 400;
      cattn_common_attn_metadata_t* o = out_meta.get();
      o->query_start_loc = o0.ptr();
      o->seq_lens = o1.ptr();
      o->query_start_loc_cpu = mirrors ? o2.ptr() : nullptr;
      o->seq_lens_cpu = mirrors ? o3.ptr() : nullptr;
      extend.metadata = m;
      extend.n = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
      extend.out = o;
      call.inputs = {&a0, &a1};
      if (mirrors) call.inputs = {&a0, &a1, &a2, &a3};
      call.outputs = {&o0, &o1, &o2, &o3};
      call.mutable_inputs = {{&a0, "query_start_loc"}, {&a1, "seq_lens"}};
      if (mirrors)
        call.mutable_inputs = {{&a0, "query_start_loc"}, {&a1, "seq_lens"}, {&a2, "query_start_loc_cpu"},
                               {&a3, "seq_lens_cpu"}};
      call.typical = 400;
      break;
    }
  }

  race(fdp, call, [&] {
    cattn_status_t s = CATTN_OK;
    switch (which) {
      case 0: s = cattn_compute_causal_conv1d_metadata(&conv); break;
      case 1: s = cattn_get_pcp_query_restore_idx(&restore); break;
      case 2: s = cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&prefill); break;
      case 3: s = cattn_fused_pcp_qkv_select(&select); break;
      case 4: {
        local.plan = nullptr;
        s = cattn_make_local_attention_virtual_batches(&local);
        if (s == CATTN_OK) {
          int64_t v = -1, p = -1;
          FZ_CHECK(cattn_local_attention_plan_get_shape(local.plan, &v, &p) == CATTN_OK, "get_shape of a new plan");
          FZ_CHECK(v >= 0 && v <= local_cap, "a plan of " + std::to_string(v) + " virtual batches past its cap of " +
                                                 std::to_string(local_cap));
          FZ_CHECK(p == local.attn_chunk_size / local.block_size, "pages per virtual batch");
          cattn_local_attention_plan_destroy(local.plan);
        } else {
          FZ_CHECK(local.plan == nullptr, "a failed create wrote args->plan");
        }
        break;
      }
      case 5: s = cattn_mamba_get_block_table_tensor(&mamba); break;
      default: s = cattn_extend_all_queries_by_n(&extend); break;
    }
    if (s == CATTN_OK && which == 0 && conv.mlist)
      FZ_CHECK(conv.tot >= 0 && conv.tot <= o1.numel, "tot " + std::to_string(conv.tot) + " past mlist's " +
                                                            std::to_string(o1.numel) + " entries");
    return s;
  });
  FZ_CHECK(meta.guards_intact() && out_meta.guards_intact(), std::string(call.fn) + " wrote past a metadata struct");
  return 0;
}
