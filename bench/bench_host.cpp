// SPDX-License-Identifier: Apache-2.0
// Google Benchmark of libcattn's host paths, one benchmark per utility, named after the seed's
// function. Batches are random but deterministic (fixed seeds) and built outside the timed
// loop; each iteration is what an engine does per step: the size query where the output size
// depends on the data, then the call into caller-owned outputs.
//
// Sizes follow the seed's recorded H200 run (vllm_seed_h200.json of the baseline set, see
// bench/README.md; B requests, T query tokens): restore
// index B8 T16384 and B256 T65536, conv1d metadata B16 T16384 and B256 T65536, virtual batches
// B64 and B256, DCP lengths B256 dcp8 and B1024 dcp4, Mamba align B256; plus B = 8 ... 1024
// throughout. A utility that fails (or is not implemented yet) is reported as skipped with the
// library's message.
//
// Tensors are cattn.hpp's host_tensor (the memory) and, for the C calls, a bench::dl_tensor of
// it (bench/bench_tensor.h).
#include <benchmark/benchmark.h>
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_tensor.h"
#include "cattn.hpp"

namespace {

using bench::dl_tensor;
using I32 = cattn::host_tensor<int32_t>;
using U16 = cattn::host_tensor<uint16_t>;  // bf16-sized elements

I32 i32_of(const std::vector<int64_t>& values, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  I32 t(std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t[i] = static_cast<int32_t>(values[i]);
  return t;
}

// B positive lengths, each a multiple of `multiple`, summing to exactly T (T / multiple >= B).
std::vector<int64_t> random_lengths(int64_t B, int64_t T, int64_t multiple, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> weight(0.1, 1.9);
  const int64_t units = T / multiple;
  std::vector<double> w(static_cast<size_t>(B));
  double sum = 0;
  for (double& x : w) sum += (x = weight(rng));
  std::vector<int64_t> lens(static_cast<size_t>(B));
  int64_t used = 0;
  for (int64_t i = 0; i < B; ++i) {
    lens[i] = 1 + static_cast<int64_t>(w[i] / sum * static_cast<double>(units - B));
    used += lens[i];
  }
  for (int64_t i = 0; used < units; i = (i + 1) % B, ++used) ++lens[i];
  for (int64_t& l : lens) l *= multiple;
  return lens;
}

std::vector<int64_t> cumsum0(const std::vector<int64_t>& lens) {
  std::vector<int64_t> cu(lens.size() + 1, 0);
  for (size_t i = 0; i < lens.size(); ++i) cu[i + 1] = cu[i] + lens[i];
  return cu;
}

// Context lengths (tokens already in the KV cache) in [0, max_context).
std::vector<int64_t> random_contexts(int64_t B, int64_t max_context, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> ctx(0, max_context - 1);
  std::vector<int64_t> c(static_cast<size_t>(B));
  for (int64_t& x : c) x = ctx(rng);
  return c;
}

// A block table [B, cols] of distinct random block ids.
I32 random_block_table(int64_t B, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(static_cast<size_t>(B * cols));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
  std::shuffle(ids.begin(), ids.end(), rng);
  return i32_of(ids, {B, cols});
}

bool ok(benchmark::State& state, cattn_status_t s) {
  if (s == CATTN_OK) return true;
  state.SkipWithError(
      (std::string(cattn_status_string(s)) + ": " + cattn_last_error_message()).c_str());
  return false;
}

// ---- 3. PCP query restore index ------------------------------------------------------------

void get_pcp_query_restore_idx(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  const I32 cu = i32_of(cumsum0(random_lengths(B, T, 2, 3)));
  I32 out({T});
  dl_tensor cu_t(cu), out_t(out);
  cattn_pcp_query_restore_idx_args_t args = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  args.cu_num_tokens = cu_t.get();
  args.restore_idx = out_t.get();
  for (auto _ : state) {
    // The size query an engine makes to size the output (its answer is T, out's size).
    int64_t size = 0;
    if (!ok(state, cattn_get_pcp_query_restore_idx_size(cu_t.get(), &size))) break;
    if (!ok(state, cattn_get_pcp_query_restore_idx(&args))) break;
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * T);
}
BENCHMARK(get_pcp_query_restore_idx)
    ->ArgNames({"B", "T"})
    ->Args({8, 16384})
    ->Args({64, 16384})
    ->Args({256, 65536})
    ->Args({1024, 65536})
    ->Unit(benchmark::kMicrosecond);

// ---- 6. Causal-conv1d metadata ---------------------------------------------------------------

void compute_causal_conv1d_metadata(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  const I32 qsl = i32_of(cumsum0(random_lengths(B, T, 1, 6)));
  dl_tensor qsl_t(qsl);
  int64_t tot = 0, capacity = 0;
  if (!ok(state, cattn_compute_causal_conv1d_metadata_size(qsl_t.get(), 8, &tot, &capacity)))
    return;
  I32 nums({B}), mlist({tot}), offsets({tot}), batch_ptr({capacity}), chunk_ptr({capacity});
  dl_tensor nums_t(nums), mlist_t(mlist), offsets_t(offsets), batch_ptr_t(batch_ptr),
      chunk_ptr_t(chunk_ptr);
  cattn_causal_conv1d_metadata_args_t args = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  args.query_start_loc_cpu = qsl_t.get();
  args.block_m = 8;
  args.nums = nums_t.get();
  args.mlist = mlist_t.get();
  args.offsetlist = offsets_t.get();
  args.batch_ptr = batch_ptr_t.get();
  args.token_chunk_offset_ptr = chunk_ptr_t.get();
  for (auto _ : state) {
    if (!ok(state,
            cattn_compute_causal_conv1d_metadata_size(qsl_t.get(), 8, &tot, &capacity)))
      break;
    if (!ok(state, cattn_compute_causal_conv1d_metadata(&args))) break;
    benchmark::DoNotOptimize(batch_ptr.data());
  }
  state.counters["programs"] = static_cast<double>(tot);
}
BENCHMARK(compute_causal_conv1d_metadata)
    ->ArgNames({"B", "T"})
    ->Args({8, 16384})
    ->Args({16, 16384})
    ->Args({64, 16384})
    ->Args({256, 65536})
    ->Args({1024, 65536})
    ->Unit(benchmark::kMicrosecond);

// ---- 9. Local-attention virtual batches ------------------------------------------------------

// Llama 4's chunked local attention: 8192-token chunks over 16-token KV blocks; contexts up to
// 16k tokens so that requests straddle chunk boundaries.
constexpr int64_t kAttnChunk = 8192;
constexpr int64_t kKvBlock = 16;

// Element-wise a + b.
std::vector<int64_t> plus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> s(a.size());
  for (size_t i = 0; i < a.size(); ++i) s[i] = a[i] + b[i];
  return s;
}

// A batch of B requests and T query tokens; neither copied nor moved (md points into it).
struct LocalBatch {
  const std::vector<int64_t> q, s;  // query lengths, sequence lengths (query + context)
  const int64_t max_s;
  I32 qsl, seq_lens, block_table;
  dl_tensor qsl_t, seq_lens_t, block_table_t;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  LocalBatch(int64_t B, int64_t T)
      : q(random_lengths(B, T, 1, 9)),
        s(plus(q, random_contexts(B, 16384, 19))),
        max_s(*std::max_element(s.begin(), s.end())),
        qsl(i32_of(cumsum0(q))),
        seq_lens(i32_of(s)),
        block_table(random_block_table(B, (max_s + kKvBlock - 1) / kKvBlock, 29)),
        qsl_t(qsl),
        seq_lens_t(seq_lens),
        block_table_t(block_table) {
    md.query_start_loc = qsl_t.get();
    md.query_start_loc_cpu = qsl_t.get();
    md.seq_lens = seq_lens_t.get();
    md.seq_lens_cpu = seq_lens_t.get();
    md.block_table_tensor = block_table_t.get();
    md.num_reqs = B;
    md.num_actual_tokens = T;
    md.max_query_len = *std::max_element(q.begin(), q.end());
    md.max_seq_len = max_s;
  }
};

void make_local_attention_virtual_batches(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  LocalBatch batch(B, T);
  cattn_local_attention_args_t args = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  args.attn_chunk_size = kAttnChunk;
  args.block_size = kKvBlock;
  args.metadata = &batch.md;
  // One plan outside the loop sizes the outputs.
  if (!ok(state, cattn_make_local_attention_virtual_batches(&args))) return;
  int64_t V = 0, P = 0;
  cattn_local_attention_plan_get_shape(args.plan, &V, &P);
  cattn_local_attention_plan_destroy(args.plan);
  I32 qsl({V + 1}), sl({V}), computed({V}), table({V, P});
  dl_tensor qsl_t(qsl), sl_t(sl), computed_t(computed), table_t(table);
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc_cpu = qsl_t.get();
  out.seq_lens_cpu = sl_t.get();
  out.num_computed_tokens_cpu = computed_t.get();
  out.block_table_tensor = table_t.get();
  cattn_local_attention_fill_args_t fill = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  fill.metadata = &batch.md;
  fill.out = &out;
  for (auto _ : state) {
    if (!ok(state, cattn_make_local_attention_virtual_batches(&args))) break;
    int64_t v = 0, p = 0;
    cattn_local_attention_plan_get_shape(args.plan, &v, &p);
    const cattn_status_t s = cattn_local_attention_plan_fill(args.plan, &fill);
    cattn_local_attention_plan_destroy(args.plan);
    if (!ok(state, s)) break;
    benchmark::DoNotOptimize(table.data());
  }
  state.counters["virtual_batches"] = static_cast<double>(V);
}
BENCHMARK(make_local_attention_virtual_batches)
    ->ArgNames({"B", "T"})
    ->Args({8, 16384})
    ->Args({64, 16384})
    ->Args({256, 65536})
    ->Args({1024, 65536})
    ->Unit(benchmark::kMicrosecond);

// The plan's make_block_table closure alone: re-gathering a new block table into [V, P].
void make_local_attention_virtual_batches_make_block_table(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  LocalBatch batch(B, T);
  cattn_local_attention_args_t args = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  args.attn_chunk_size = kAttnChunk;
  args.block_size = kKvBlock;
  args.metadata = &batch.md;
  if (!ok(state, cattn_make_local_attention_virtual_batches(&args))) return;
  int64_t V = 0, P = 0;
  cattn_local_attention_plan_get_shape(args.plan, &V, &P);
  I32 table({V, P});
  dl_tensor table_t(table);
  for (auto _ : state) {
    if (!ok(state, cattn_local_attention_plan_make_block_table(
                       args.plan, batch.block_table_t.get(), table_t.get(), nullptr)))
      break;
    benchmark::DoNotOptimize(table.data());
  }
  cattn_local_attention_plan_destroy(args.plan);
  state.counters["virtual_batches"] = static_cast<double>(V);
}
BENCHMARK(make_local_attention_virtual_batches_make_block_table)
    ->ArgNames({"B", "T"})
    ->Args({64, 16384})
    ->Args({256, 65536})
    ->Unit(benchmark::kMicrosecond);

// ---- 2. DCP local sequence lengths ----------------------------------------------------------

void get_dcp_local_seq_lens(benchmark::State& state) {
  const int64_t B = state.range(0), W = state.range(1);
  const std::vector<int64_t> ctx = random_contexts(B, 32768, 2);
  const I32 seq_lens = i32_of(ctx);
  I32 out({B, W});
  dl_tensor seq_lens_t(seq_lens), out_t(out);
  cattn_dcp_local_seq_lens_args_t args = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  args.seq_lens = seq_lens_t.get();
  args.dcp_size = W;
  args.dcp_rank = CATTN_DCP_ALL_RANKS;
  args.dcp_kv_cache_interleave_size = 1;
  args.out = out_t.get();
  for (auto _ : state) {
    if (!ok(state, cattn_get_dcp_local_seq_lens(&args))) break;
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(get_dcp_local_seq_lens)
    ->ArgNames({"B", "dcp"})
    ->Args({8, 8})
    ->Args({64, 8})
    ->Args({256, 8})
    ->Args({1024, 4})
    ->Unit(benchmark::kMicrosecond);

// ---- 10. Mamba block table (align) ----------------------------------------------------------

void mamba_get_block_table_tensor(benchmark::State& state) {
  const int64_t B = state.range(0), nspec = 2;
  const std::vector<int64_t> s = random_contexts(B, 16384, 10);
  const int64_t cols = 16384 / kKvBlock + nspec;
  const I32 seq_lens = i32_of(s);
  const I32 table = random_block_table(B, cols, 11);
  I32 out({B, 1 + nspec});
  dl_tensor seq_lens_t(seq_lens), table_t(table), out_t(out);
  cattn_mamba_block_table_args_t args = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  args.block_table = table_t.get();
  args.seq_lens = seq_lens_t.get();
  args.block_size = kKvBlock;
  args.num_speculative_blocks = nspec;
  args.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  args.out = out_t.get();
  for (auto _ : state) {
    if (!ok(state, cattn_mamba_get_block_table_tensor(&args))) break;
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(mamba_get_block_table_tensor)
    ->ArgNames({"B"})
    ->Arg(8)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond);

// ---- 8. KV-sharing fast prefill --------------------------------------------------------------

void make_kv_sharing_fast_prefill_common_attn_metadata(benchmark::State& state) {
  const int64_t B = state.range(0), T = state.range(1);
  const std::vector<int64_t> cu = cumsum0(random_lengths(B, T, 1, 8));
  // Logits at every request's last token plus, for every other request, one earlier token.
  std::vector<int64_t> logits;
  for (int64_t i = 0; i < B; ++i) {
    if (i % 2 == 1 && cu[i + 1] - cu[i] > 1) logits.push_back(cu[i + 1] - 2);
    logits.push_back(cu[i + 1] - 1);
  }
  const int64_t n_logits = static_cast<int64_t>(logits.size());
  logits.resize(logits.size() + 16, 0);  // CUDA-graph padding
  const I32 qsl = i32_of(cu), logits_padded = i32_of(logits);
  I32 out_qsl({B + 1}), out_qsl_cpu({B + 1}), max_total({2});
  dl_tensor qsl_t(qsl), logits_t(logits_padded), out_qsl_t(out_qsl), out_qsl_cpu_t(out_qsl_cpu),
      max_total_t(max_total);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl_t.get();
  md.query_start_loc_cpu = qsl_t.get();
  md.logits_indices_padded = logits_t.get();
  md.num_logits_indices = n_logits;
  md.num_reqs = B;
  md.num_actual_tokens = T;
  md.max_query_len = 2;  // anything but 1: vLLM's fast path passes decode-only batches through
  for (int64_t i = 0; i < B; ++i) md.max_query_len = std::max(md.max_query_len, cu[i + 1] - cu[i]);
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc = out_qsl_t.get();
  out.query_start_loc_cpu = out_qsl_cpu_t.get();
  cattn_fast_prefill_metadata_args_t args = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  args.metadata = &md;
  args.out = &out;
  args.decode_max_and_total = max_total_t.get();
  for (auto _ : state) {
    if (!ok(state, cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&args))) break;
    benchmark::DoNotOptimize(out_qsl.data());
  }
}
BENCHMARK(make_kv_sharing_fast_prefill_common_attn_metadata)
    ->ArgNames({"B", "T"})
    ->Args({8, 16384})
    ->Args({64, 16384})
    ->Args({256, 65536})
    ->Args({1024, 65536})
    ->Unit(benchmark::kMicrosecond);

// ---- 7. Extend queries -----------------------------------------------------------------------

void extend_all_queries_by_1(benchmark::State& state) {
  const int64_t B = state.range(0), T = 8 * B;
  const std::vector<int64_t> q = random_lengths(B, T, 1, 7);
  const std::vector<int64_t> ctx = random_contexts(B, 8192, 17);
  std::vector<int64_t> s(static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) s[i] = q[i] + ctx[i];
  const I32 qsl = i32_of(cumsum0(q)), qsl_cpu = i32_of(cumsum0(q));
  const I32 sl = i32_of(s), sl_cpu = i32_of(s);
  I32 new_slots({T + B});
  I32 o_qsl({B + 1}), o_qsl_cpu({B + 1}), o_sl({B}), o_sl_cpu({B});
  dl_tensor qsl_t(qsl), qsl_cpu_t(qsl_cpu), sl_t(sl), sl_cpu_t(sl_cpu), new_slots_t(new_slots);
  dl_tensor o_qsl_t(o_qsl), o_qsl_cpu_t(o_qsl_cpu), o_sl_t(o_sl), o_sl_cpu_t(o_sl_cpu);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl_t.get();
  md.query_start_loc_cpu = qsl_cpu_t.get();
  md.seq_lens = sl_t.get();
  md.seq_lens_cpu = sl_cpu_t.get();
  md.num_reqs = B;
  md.num_actual_tokens = T;
  md.max_query_len = *std::max_element(q.begin(), q.end());
  md.max_seq_len = *std::max_element(s.begin(), s.end());
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc = o_qsl_t.get();
  out.query_start_loc_cpu = o_qsl_cpu_t.get();
  out.seq_lens = o_sl_t.get();
  out.seq_lens_cpu = o_sl_cpu_t.get();
  cattn_extend_all_queries_by_n_args_t args = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  args.metadata = &md;
  args.n = 1;
  args.new_slot_mapping = new_slots_t.get();
  args.out = &out;
  for (auto _ : state) {
    if (!ok(state, cattn_extend_all_queries_by_n(&args))) break;
    benchmark::DoNotOptimize(o_sl.data());
  }
}
BENCHMARK(extend_all_queries_by_1)
    ->ArgNames({"B"})
    ->Arg(8)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond);

// ---- 4. Fused PCP Q/K/V select (host reference loop; small shapes only) ----------------------

// Args: B requests, Tq local query tokens, W, r, H, Dq, Dk, Dv; 2-byte elements (bf16-sized).
void fused_pcp_qkv_select(benchmark::State& state) {
  const int64_t B = state.range(0), Tq = state.range(1), W = state.range(2), r = state.range(3);
  const int64_t H = state.range(4), Dq = state.range(5), Dk = state.range(6), Dv = state.range(7);
  const I32 qsl = i32_of(cumsum0(random_lengths(B, Tq, 2, 4)));
  const U16 q({Tq, H, Dq}), k({W * Tq, H, Dk}), v({W * Tq, H, Dv});
  // The outputs' rows, from the library's size query.
  const cattn::fused_pcp_qkv_select_rows rows = cattn::fused_pcp_qkv_select_size(Tq, W, r);
  U16 qh({rows.q, H, Dq}), qt({rows.q, H, Dq});
  U16 kh({rows.kv_head, H, Dk}), vh({rows.kv_head, H, Dv});
  U16 kt({rows.kv_tail, H, Dk}), vt({rows.kv_tail, H, Dv});
  dl_tensor qsl_t(qsl), q_t(q), k_t(k), v_t(v), qh_t(qh), qt_t(qt), kh_t(kh), vh_t(vh),
      kt_t(kt), vt_t(vt);
  cattn_fused_pcp_qkv_select_args_t args = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  args.q = q_t.get();
  args.k = k_t.get();
  args.v = v_t.get();
  args.query_start_loc = qsl_t.get();
  args.pcp_world_size = W;
  args.pcp_rank = r;
  args.q_head = qh_t.get();
  args.k_head = kh_t.get();
  args.v_head = vh_t.get();
  args.q_tail = qt_t.get();
  args.k_tail = kt_t.get();
  args.v_tail = vt_t.get();
  for (auto _ : state) {
    if (!ok(state, cattn_fused_pcp_qkv_select(&args))) break;
    benchmark::DoNotOptimize(kt.data());
  }
  // Bytes written (every output row once); reads are at most as many.
  const int64_t written =
      2 * H * (2 * rows.q * Dq + (rows.kv_head + rows.kv_tail) * (Dk + Dv));
  state.SetBytesProcessed(state.iterations() * written);
}
BENCHMARK(fused_pcp_qkv_select)
    ->ArgNames({"B", "Tq", "W", "r", "H", "Dq", "Dk", "Dv"})
    ->Args({8, 1024, 2, 0, 8, 128, 128, 128})
    ->Args({4, 512, 2, 1, 16, 192, 192, 128})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
