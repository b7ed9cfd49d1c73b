// SPDX-License-Identifier: Apache-2.0
// Concurrency: many threads call every host entry point at once, on shared handles (one context
// whose KV-cache layout override another thread keeps flipping, one local-attention plan that
// every thread fills from and gathers with) and on private ones, compare every result with
// values computed single-threaded before the threads start, and provoke errors of their own
// whose thread-local messages must name their own argument and value. Run under TSan by
// scripts/test_hardening.sh; the results are checked in any build.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 250;

using Bytes = std::vector<uint8_t>;

// One thread's private inputs and outputs for every utility, and the calls that fill them.
// Outputs are recorded in call order so that two runs can be compared byte for byte.
class Workload {
 public:
  Workload()
      : dcp_seq(HostTensor::of({5, 0, 17, 33, 8}, i32())),
        dcp_out({5, 4}, i64()),
        cu(HostTensor::of({0, 4, 6, 7, 13}, i64(), {}, 2)),
        restore({12}, i32()),
        q_sel({4, 2, 3}, dtype_bits(16)),
        k_sel({8, 2, 3}, dtype_bits(16)),
        v_sel({8, 2, 2}, dtype_bits(16)),
        qsl_sel(HostTensor::of({0, 2, 4}, i32())),
        sel_out{HostTensor({2, 2, 3}, dtype_bits(16)), HostTensor({2, 2, 3}, dtype_bits(16)),
                HostTensor({2, 2, 2}, dtype_bits(16)), HostTensor({2, 2, 3}, dtype_bits(16)),
                HostTensor({8, 2, 3}, dtype_bits(16)), HostTensor({8, 2, 2}, dtype_bits(16))},
        conv_qsl(HostTensor::of({0, 5, 5, 20}, i32())),
        conv_out{HostTensor({3}, i32()), HostTensor({6}, i64()), HostTensor({6}, i32()),
                 HostTensor({10}, i64()), HostTensor({10}, i32())},
        ext_qsl(HostTensor::of({0, 3, 7}, i64())),
        ext_seq(HostTensor::of({5, 9}, i32())),
        ext_qsl_cpu(HostTensor::of({0, 3, 7}, i32())),
        ext_seq_cpu(HostTensor::of({5, 9}, i64())),
        ext_out{HostTensor({3}, i64()), HostTensor({2}, i64()), HostTensor({3}, i32()),
                HostTensor({2}, i64())},
        fp_qsl(HostTensor::of({0, 3, 7, 12}, i64())),
        fp_logits(HostTensor::of({2, 6, 11, 0}, i32())),
        fp_out_qsl({4}, i32()),
        fp_max_total({2}, i64()),
        la_qsl(HostTensor::of({0, 3, 10}, i32())),
        la_seq(HostTensor::of({7, 12}, i64())),
        la_table(HostTensor::of({1, 2, 3, 4, 5, 6, 7, 8}, i32(), {2, 4})),
        la_out{HostTensor({4}, i64()), HostTensor({3}, i32()), HostTensor({3}, i64()),
               HostTensor({3, 2}, i32())},
        mb_table(HostTensor::of({10, 11, 12, 13, 20, 21, 22, 23}, i64(), {2, 4})),
        mb_seq(HostTensor::of({5, 0}, i32())),
        mb_out({2, 2}, i32()),
        shared_fill{HostTensor({0}, i64()), HostTensor({0}, i64()), HostTensor({0}, i64()),
                    HostTensor({0, 0}, i32())},
        shared_gather({0, 0}, i32()) {
    for (HostTensor* t : {&q_sel, &k_sel, &v_sel})
      for (int64_t i = 0; i < t->numel(); ++i) t->set(i, 100 * (t == &k_sel) + i);
  }

  // Sizes the outputs for the shared plan (its shape is known only once it exists).
  void size_shared(int64_t v, int64_t p) {
    shared_fill[0] = HostTensor({v + 1}, i64());
    shared_fill[1] = HostTensor({v}, i64());
    shared_fill[2] = HostTensor({v}, i64());
    shared_fill[3] = HostTensor({v, p}, i32());
    shared_gather = HostTensor({v, p}, i32());
  }

  // Runs every call once; appends each output's bytes (and scalar results) to `out`, and a
  // description of any unexpected status to `errors`. Returns the number of calls made.
  int64_t run(const cattn_local_attention_plan_t* shared_plan, const DLTensor* shared_table,
              std::vector<Bytes>& out, std::vector<std::string>& errors) {
    int64_t calls = 0;
    auto ok = [&](cattn_status_t s, const char* what) {
      ++calls;
      if (s != CATTN_OK)
        errors.push_back(std::string(what) + ": " + cattn_status_string(s) + " " +
                         cattn_last_error_message());
    };
    auto scalar = [&](int64_t v) {
      Bytes b(sizeof v);
      std::memcpy(b.data(), &v, sizeof v);
      out.push_back(b);
    };

    {
      cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
      a.seq_lens = dcp_seq.dl();
      a.dcp_size = 4;
      a.dcp_kv_cache_interleave_size = 2;
      a.out = dcp_out.dl();
      ok(cattn_get_dcp_local_seq_lens(&a), "dcp");
      out.push_back(dcp_out.bytes());
    }
    {
      int64_t size = -1;
      ok(cattn_get_pcp_query_restore_idx_size(cu.dl(), &size), "restore size");
      scalar(size);
      cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
      a.cu_num_tokens = cu.dl();
      a.restore_idx = restore.dl();
      ok(cattn_get_pcp_query_restore_idx(&a), "restore");
      out.push_back(restore.bytes());
    }
    {
      cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
      a.q = q_sel.dl();
      a.k = k_sel.dl();
      a.v = v_sel.dl();
      a.query_start_loc = qsl_sel.dl();
      a.pcp_world_size = 2;
      a.pcp_rank = 0;
      a.q_head = sel_out[0].dl();
      a.k_head = sel_out[1].dl();
      a.v_head = sel_out[2].dl();
      a.q_tail = sel_out[3].dl();
      a.k_tail = sel_out[4].dl();
      a.v_tail = sel_out[5].dl();
      ok(cattn_fused_pcp_qkv_select(&a), "fused select");
      for (HostTensor& t : sel_out) out.push_back(t.bytes());
    }
    {
      int64_t tot = -1, cap = -1;
      ok(cattn_compute_causal_conv1d_metadata_size(conv_qsl.dl(), 4, &tot, &cap), "conv1d size");
      scalar(tot);
      scalar(cap);
      cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
      a.query_start_loc_cpu = conv_qsl.dl();
      a.block_m = 4;
      a.nums = conv_out[0].dl();
      a.mlist = conv_out[1].dl();
      a.offsetlist = conv_out[2].dl();
      a.batch_ptr = conv_out[3].dl();
      a.token_chunk_offset_ptr = conv_out[4].dl();
      ok(cattn_compute_causal_conv1d_metadata(&a), "conv1d");
      scalar(a.tot);
      for (HostTensor& t : conv_out) out.push_back(t.bytes());
    }
    {
      cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, o = CATTN_COMMON_ATTN_METADATA_INIT;
      in.query_start_loc = ext_qsl.dl();
      in.seq_lens = ext_seq.dl();
      in.query_start_loc_cpu = ext_qsl_cpu.dl();
      in.seq_lens_cpu = ext_seq_cpu.dl();
      in.num_reqs = 2;
      in.num_actual_tokens = 7;
      in.max_query_len = 4;
      in.max_seq_len = 9;
      o.query_start_loc = ext_out[0].dl();
      o.seq_lens = ext_out[1].dl();
      o.query_start_loc_cpu = ext_out[2].dl();
      o.seq_lens_cpu = ext_out[3].dl();
      cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
      a.metadata = &in;
      a.n = 2;
      a.out = &o;
      ok(cattn_extend_all_queries_by_n(&a), "extend");
      for (HostTensor& t : ext_out) out.push_back(t.bytes());
      scalar(o.num_actual_tokens);
      scalar(o.max_query_len);
      scalar(o.max_seq_len);
    }
    {
      cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT, o = CATTN_COMMON_ATTN_METADATA_INIT;
      in.query_start_loc = fp_qsl.dl();
      in.logits_indices_padded = fp_logits.dl();
      in.num_logits_indices = 3;
      in.num_reqs = 3;
      in.max_query_len = 5;
      o.query_start_loc = fp_out_qsl.dl();
      cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
      a.metadata = &in;
      a.out = &o;
      a.decode_max_and_total = fp_max_total.dl();
      ok(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a), "fast prefill");
      out.push_back(fp_out_qsl.bytes());
      out.push_back(fp_max_total.bytes());
      scalar(o.max_query_len);
      scalar(a.passthrough);
    }
    {
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
      md.query_start_loc_cpu = la_qsl.dl();
      md.seq_lens_cpu = la_seq.dl();
      md.block_table_tensor = la_table.dl();
      md.num_actual_tokens = 10;
      cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
      a.attn_chunk_size = 4;
      a.block_size = 2;
      a.metadata = &md;
      ok(cattn_make_local_attention_virtual_batches(&a), "local plan");
      int64_t v = -1, p = -1;
      ok(cattn_local_attention_plan_get_shape(a.plan, &v, &p), "local shape");
      scalar(v);
      scalar(p);
      if (v == 3 && p == 2) {
        cattn_common_attn_metadata_t o = CATTN_COMMON_ATTN_METADATA_INIT;
        o.query_start_loc_cpu = la_out[0].dl();
        o.seq_lens_cpu = la_out[1].dl();
        o.num_computed_tokens_cpu = la_out[2].dl();
        o.block_table_tensor = la_out[3].dl();
        cattn_local_attention_fill_args_t f = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
        f.metadata = &md;
        f.out = &o;
        ok(cattn_local_attention_plan_fill(a.plan, &f), "local fill");
        for (HostTensor& t : la_out) out.push_back(t.bytes());
        scalar(o.max_query_len);
        scalar(o.max_seq_len);
      }
      cattn_local_attention_plan_destroy(a.plan);
    }
    {
      cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
      a.block_table = mb_table.dl();
      a.seq_lens = mb_seq.dl();
      a.block_size = 2;
      a.num_speculative_blocks = 1;
      a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
      a.out = mb_out.dl();
      ok(cattn_mamba_get_block_table_tensor(&a), "mamba");
      out.push_back(mb_out.bytes());
    }
    {
      cattn_attention_layer_desc_t layers[2] = {CATTN_ATTENTION_LAYER_DESC_INIT, CATTN_ATTENTION_LAYER_DESC_INIT};
      layers[0].has_sliding_window = 1;
      layers[0].sliding_window_left = 128;
      layers[1].has_logits_soft_cap = 1;
      layers[1].logits_soft_cap = 30.0;
      cattn_per_layer_parameters_t params[2] = {CATTN_PER_LAYER_PARAMETERS_INIT, CATTN_PER_LAYER_PARAMETERS_INIT};
      ok(cattn_get_per_layer_parameters(layers, 2, params), "per-layer");
      cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
      ok(cattn_infer_global_hyperparameters(params, 2, &g), "global");
      Bytes b(sizeof params + sizeof g);
      std::memcpy(b.data(), params, sizeof params);
      std::memcpy(b.data() + sizeof params, &g, sizeof g);
      out.push_back(b);
    }
    {
      // A private context with a fixed override, and the calls that cannot fail.
      cattn_context_t* ctx = nullptr;
      ok(cattn_context_create(&ctx), "context");
      ok(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND), "override");
      cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
      a.env_value = "NHD";
      ok(cattn_get_kv_cache_layout(ctx, &a), "layout (private)");
      scalar(a.layout);
      ok(cattn_get_kv_cache_layout(nullptr, &a), "layout (no context)");
      scalar(a.layout);
      cattn_context_destroy(ctx);
      int32_t valid = -1, devices = -1;
      ok(cattn_is_valid_kv_cache_layout("HND", &valid), "is_valid");
      ok(cattn_cuda_device_count(&devices), "device count");
      scalar(valid);
      scalar(std::string(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_NHD)) == "NHD");
      scalar(std::string(cattn_status_string(CATTN_INSUFFICIENT_SIZE)) == "CATTN_INSUFFICIENT_SIZE");
      scalar(cattn_version() == CATTN_VERSION_NUMBER && cattn_get_api(CATTN_VERSION_MAJOR) != nullptr);
      calls += 5;
    }
    if (shared_plan != nullptr) {
      // The shared plan, read by every thread at once into this thread's outputs.
      int64_t v = -1, p = -1;
      ok(cattn_local_attention_plan_get_shape(shared_plan, &v, &p), "shared shape");
      scalar(v);
      scalar(p);
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, o = CATTN_COMMON_ATTN_METADATA_INIT;
      md.block_table_tensor = const_cast<DLTensor*>(shared_table);
      o.query_start_loc_cpu = shared_fill[0].dl();
      o.seq_lens_cpu = shared_fill[1].dl();
      o.num_computed_tokens_cpu = shared_fill[2].dl();
      o.block_table_tensor = shared_fill[3].dl();
      cattn_local_attention_fill_args_t f = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
      f.metadata = &md;
      f.out = &o;
      ok(cattn_local_attention_plan_fill(shared_plan, &f), "shared fill");
      for (HostTensor& t : shared_fill) out.push_back(t.bytes());
      ok(cattn_local_attention_plan_make_block_table(shared_plan, shared_table, shared_gather.dl(), nullptr),
         "shared gather");
      out.push_back(shared_gather.bytes());
    }
    return calls;
  }

 private:
  HostTensor dcp_seq, dcp_out, cu, restore, q_sel, k_sel, v_sel, qsl_sel;
  HostTensor sel_out[6];
  HostTensor conv_qsl;
  HostTensor conv_out[5];
  HostTensor ext_qsl, ext_seq, ext_qsl_cpu, ext_seq_cpu;
  HostTensor ext_out[4];
  HostTensor fp_qsl, fp_logits, fp_out_qsl, fp_max_total;
  HostTensor la_qsl, la_seq, la_table;
  HostTensor la_out[4];
  HostTensor mb_table, mb_seq, mb_out;
  HostTensor shared_fill[4];
  HostTensor shared_gather;
};

// Errors of thread t's own: each names a different argument, and carries t in its value, so a
// message that leaked from another thread (or was overwritten by one) is recognised. Returns
// the substring the message must contain.
std::string provoke(int t, int kind, int64_t& calls) {
  ++calls;
  const int64_t mark = 1000 + 17 * t;
  switch (kind % 4) {
    case 0: {
      HostTensor q = HostTensor::of({0, 4}, i32());
      int64_t tot = 0;
      (void)cattn_compute_causal_conv1d_metadata_size(q.dl(), -mark, &tot, nullptr);
      return "block_m is out of range (got -" + std::to_string(mark) + ",";
    }
    case 1: {
      HostTensor seq = HostTensor::of({1, 2}, i32()), o({2}, i32());
      cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
      a.seq_lens = seq.dl();
      a.out = o.dl();
      a.dcp_size = 2;
      a.dcp_rank = mark;
      (void)cattn_get_dcp_local_seq_lens(&a);
      return "args->dcp_rank is out of range (got " + std::to_string(mark) + ",";
    }
    case 2: {
      cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
      a.mamba_cache_mode = static_cast<int32_t>(mark);
      (void)cattn_mamba_get_block_table_tensor(&a);
      return "args->mamba_cache_mode is not a cache mode (got " + std::to_string(mark) + ",";
    }
    default: {
      cattn_attention_layer_desc_t layer = CATTN_ATTENTION_LAYER_DESC_INIT;
      layer.reserved0 = static_cast<int32_t>(mark);
      cattn_per_layer_parameters_t p = CATTN_PER_LAYER_PARAMETERS_INIT;
      (void)cattn_get_per_layer_parameters(&layer, 1, &p);
      return "layers[0].reserved0 is not zero (got " + std::to_string(mark) + ",";
    }
  }
}

}  // namespace

TEST(concurrency, EveryHostCallFromManyThreadsOnSharedAndPrivateHandles) {
  // The shared plan: two requests split into chunk-local virtual batches.
  HostTensor qsl = HostTensor::of({0, 9, 14}, i64()), seq = HostTensor::of({12, 20}, i32());
  HostTensor table = HostTensor::of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, i32(), {2, 6});
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc_cpu = qsl.dl();
  md.seq_lens_cpu = seq.dl();
  // HostTensor::dl() refreshes the view it returns: take it once, before any thread reads it.
  DLTensor* const shared_table = table.dl();
  md.block_table_tensor = shared_table;
  md.num_actual_tokens = 14;
  cattn_local_attention_args_t la = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  la.attn_chunk_size = 4;
  la.block_size = 2;
  la.metadata = &md;
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&la));
  const std::unique_ptr<cattn_local_attention_plan_t, void (*)(cattn_local_attention_plan_t*)> owner(
      la.plan, cattn_local_attention_plan_destroy);
  const cattn_local_attention_plan_t* plan = la.plan;
  int64_t v = 0, p = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &v, &p));
  ASSERT_EQ(v, 5);  // request 0: chunks 0-2 (query tokens 3..11); 1: chunks 3-4 (15..19)
  ASSERT_EQ(p, 2);

  // Expected results: one single-threaded run, spot-checked against known values.
  std::vector<Bytes> expected;
  std::vector<std::string> errors;
  {
    Workload w;
    w.size_shared(v, p);
    const int64_t calls = w.run(plan, shared_table, expected, errors);
    ASSERT_TRUE(errors.empty()) << errors.front();
    ASSERT_GT(calls, 25);
  }
  auto as_i64 = [](const Bytes& b, size_t i) {
    int64_t x;
    std::memcpy(&x, b.data() + i * 8, 8);
    return x;
  };
  EXPECT_EQ(as_i64(expected[1], 0), 12);  // restore index size for lengths 4, 2, 1, 6
  EXPECT_EQ(as_i64(expected[0], 4 * 3 + 0), 9);  // dcp: 33 tokens, W 4, I 2: rank 0 holds 9

  // The shared context: one thread flips its override while the others resolve through it.
  cattn_context_t* shared_ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&shared_ctx));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> flips{0};
  std::thread flipper([&] {
    const cattn_kv_cache_layout_t cycle[] = {CATTN_KV_CACHE_LAYOUT_NHD, CATTN_KV_CACHE_LAYOUT_HND,
                                             CATTN_KV_CACHE_LAYOUT_UNSET};
    for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      (void)cattn_context_set_kv_cache_layout_override(shared_ctx, cycle[i % 3]);
      flips.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::yield();
    }
  });

  struct Result {
    std::vector<std::string> errors;
    int64_t calls = 0;
    int64_t layouts[3] = {0, 0, 0};
  };
  std::vector<Result> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Result& r = results[static_cast<size_t>(t)];
      Workload w;
      w.size_shared(v, p);
      for (int round = 0; round < kRounds; ++round) {
        // An error of this thread's own, then other threads' calls interleave with ours...
        const std::string needle = provoke(t, round + t, r.calls);
        std::this_thread::yield();
        std::vector<Bytes> got;
        r.calls += w.run(plan, shared_table, got, r.errors);
        if (got != expected) r.errors.push_back("round " + std::to_string(round) + ": results differ");
        // ... and the message must still be this thread's own (successful calls keep it).
        const std::string message = cattn_last_error_message();
        if (message.find(needle) == std::string::npos)
          r.errors.push_back("message \"" + message + "\" does not contain \"" + needle + "\"");
        // The shared context: NHD or HND whatever the override is at that instant (the
        // connector's HND when it is unset).
        cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
        a.connector_layout = CATTN_KV_CACHE_LAYOUT_HND;
        ++r.calls;
        if (cattn_get_kv_cache_layout(shared_ctx, &a) != CATTN_OK ||
            (a.layout != CATTN_KV_CACHE_LAYOUT_NHD && a.layout != CATTN_KV_CACHE_LAYOUT_HND))
          r.errors.push_back("shared context resolved badly");
        else
          ++r.layouts[a.layout];
      }
    });
  for (std::thread& th : threads) th.join();
  stop = true;
  flipper.join();
  cattn_context_destroy(shared_ctx);

  int64_t total = 0;
  for (int t = 0; t < kThreads; ++t) {
    const Result& r = results[static_cast<size_t>(t)];
    EXPECT_TRUE(r.errors.empty()) << "thread " << t << ": " << r.errors.front() << " (and "
                                  << r.errors.size() - 1 << " more)";
    total += r.calls;
  }
  std::printf("[ concurrency ] %d threads x %d rounds: %lld calls (%lld per thread), %lld override "
              "flips meanwhile\n",
              kThreads, kRounds, static_cast<long long>(total),
              static_cast<long long>(total / kThreads), static_cast<long long>(flips.load()));
  EXPECT_GT(total, int64_t{kThreads} * kRounds * 25);
}
