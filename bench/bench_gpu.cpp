// SPDX-License-Identifier: Apache-2.0
// GPU benchmark of libcattn's CUDA paths, timed with CUDA events: the median of repeated launches
// over rotating input sets (so small cases are not served from L2), against the measured
// device-to-device copy bandwidth. Traffic is counted exactly: every byte a correct kernel must
// read once plus every byte it must write once. Fused select rows also time a cudaMemcpyAsync of
// the same traffic in the same run (its "of memcpy" column is that copy's time over the
// select's): each call alone, the two kinds of call interleaved, and calls back to back.
//
//   bench_gpu [--reps N] [--filter SUBSTRING]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_check.h"
#include "bench_tensor.h"
#include "cattn.hpp"
#include "select_shapes.h"
#include "step_plan_desc.h"

cudaError_t bench_launch_empty(cudaStream_t s);      // launch_floor.cu
cudaError_t bench_launch_empty_big(cudaStream_t s);  // launch_floor.cu: 1472 B of parameters

namespace {

int g_reps = 30;
const char* g_filter = nullptr;

// Device buffer filled with pseudo-random bytes (never zeros: they can run faster than data).
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t n) : bytes(n) {
    BENCH_CUDA_CHECK(cudaMalloc(&p, n ? n : 1));
    static std::vector<uint8_t> pattern;
    if (pattern.empty()) {
      pattern.resize(size_t{64} << 20);
      std::mt19937_64 g(1);
      for (size_t i = 0; i < pattern.size(); i += 8) {
        const uint64_t r = g();
        std::memcpy(&pattern[i], &r, 8);
      }
    }
    size_t done = 0;
    while (done < n) {
      const size_t c = std::min(pattern.size(), n - done);
      BENCH_CUDA_CHECK(cudaMemcpy(static_cast<char*>(p) + done, pattern.data(), c,
                                  cudaMemcpyHostToDevice));
      done += c;
    }
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

using bench::dl_tensor;

// A compact view of dtype `dt` over `data` on device 0.
cattn::any_cview dev_view(const void* data, const std::vector<int64_t>& shape, DLDataType dt) {
  return bench::raw_view(data, shape, dt, cattn::cuda(0));
}

// Times one call of `launch` alone (the stream idle before it) between two events, in
// microseconds.
double one_call_us(cudaStream_t s, cudaEvent_t a, cudaEvent_t b,
                   const std::function<void(int)>& launch, int i) {
  BENCH_CUDA_CHECK(cudaEventRecord(a, s));
  launch(i);
  BENCH_CUDA_CHECK(cudaEventRecord(b, s));
  BENCH_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000.0;
}

double median_of(std::vector<double> t) {
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// Median times in microseconds of `first` and `second` over g_reps runs each (after warm-up),
// every call timed alone, the two interleaved (first, second, second, first, ...) so that a
// drift of the machine's state during the run reaches both alike. `second` may be empty.
std::pair<double, double> paired_median_us(cudaStream_t s, const std::function<void(int)>& first,
                                           const std::function<void(int)>& second) {
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) {
    first(i);
    if (second) second(i);
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> t1, t2;
  for (int i = 0; i < g_reps; ++i) {
    const bool swap = second && i % 2 == 1;
    if (swap) t2.push_back(one_call_us(s, a, b, second, i));
    t1.push_back(one_call_us(s, a, b, first, i));
    if (second && !swap) t2.push_back(one_call_us(s, a, b, second, i));
  }
  BENCH_CUDA_CHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {median_of(t1), t2.empty() ? 0.0 : median_of(t2)};
}

// Median time in microseconds of `launch` over g_reps runs (after warm-up), each timed alone.
double median_us(cudaStream_t s, const std::function<void(int)>& launch) {
  return paired_median_us(s, launch, nullptr).first;
}

double copy_gbps(cudaStream_t s) {
  const size_t n = size_t{2} << 30;
  DevBuf src(n), dst(n);
  const double us = median_us(s, [&](int) {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(dst.p, src.p, n, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * n / (us * 1e3);
}

bool wanted(const std::string& name) {
  return g_filter == nullptr || name.find(g_filter) != std::string::npos;
}

// A fused select row. Each call timed alone: time, bandwidth over exact traffic, the fraction
// of the asymptotic copy bandwidth, then a cudaMemcpyAsync of the same traffic timed the same
// way, its calls interleaved with the select's, and the fraction of it (the ceiling that
// counts launch and tail effects at small sizes too). Then both timed back to back ("b2b":
// calls queued between two events, so the host's time to enqueue each one overlaps the previous
// one's work), and each one's host time per call there.
struct SelectTimes {
  double alone_us, memcpy_us, b2b_us, b2b_memcpy_us, host_us, memcpy_host_us;
};
void select_row(const std::string& name, double bytes, double copy, const SelectTimes& t) {
  const double gbps = bytes / (t.alone_us * 1e3);
  std::printf(
      "| %-70s | %9.2f | %7.1f | %6.3f | %9.2f | %9.3f | %8.2f | %8.2f | %7.3f | %7.2f | %9.2f |\n",
      name.c_str(), t.alone_us, gbps, copy > 0 ? gbps / copy : 0.0, t.memcpy_us,
      t.memcpy_us / t.alone_us, t.b2b_us, t.b2b_memcpy_us, t.b2b_memcpy_us / t.b2b_us, t.host_us,
      t.memcpy_host_us);
  std::fflush(stdout);
}

void select_header(const char* title) {
  std::printf("\n| %-70s | %9s | %7s | %6s | %9s | %9s | %8s | %8s | %7s | %7s | %9s |\n", title,
              "us", "GB/s", "copy", "memcpy us", "of memcpy", "b2b us", "b2b mcpy", "of mcpy",
              "host us", "mcpy host");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(72, '-').c_str(),
              std::string(11, '-').c_str(), std::string(9, '-').c_str(),
              std::string(8, '-').c_str(), std::string(11, '-').c_str(),
              std::string(11, '-').c_str(), std::string(10, '-').c_str(),
              std::string(10, '-').c_str(), std::string(9, '-').c_str(),
              std::string(9, '-').c_str(), std::string(11, '-').c_str());
}

// Mean time per call of `calls` calls of `launch` queued back to back between two events, the
// median of 7 such batches (after `warmup` calls); *host_us gets the host's median time per call.
double back_to_back_us(cudaStream_t s, int calls, const std::function<void(int)>& launch,
                       double* host_us = nullptr, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) launch(i);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  std::vector<double> host;
  for (int rep = 0; rep < 7; ++rep) {
    BENCH_CUDA_CHECK(cudaEventRecord(a, s));
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) launch(i);
    host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0)
                       .count() / calls);
    BENCH_CUDA_CHECK(cudaEventRecord(b, s));
    BENCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f / calls);
  }
  BENCH_CUDA_CHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  std::nth_element(host.begin(), host.begin() + host.size() / 2, host.end());
  if (host_us != nullptr) *host_us = host[host.size() / 2];
  return t[t.size() / 2];
}

// A device-to-device cudaMemcpyAsync moving `traffic` bytes (traffic / 2 read, traffic / 2
// written), its sources rotating over `sets` buffers as the select's inputs do.
struct SameSizeMemcpy {
  std::vector<std::unique_ptr<DevBuf>> src;
  std::unique_ptr<DevBuf> dst;
  size_t n;
  SameSizeMemcpy(double traffic, int sets) : n(static_cast<size_t>(traffic / 2) / 16 * 16) {
    for (int i = 0; i < sets; ++i) src.emplace_back(new DevBuf(n));
    dst.reset(new DevBuf(n));
  }
  std::function<void(int)> call(cudaStream_t s) {
    return [this, s](int i) {
      BENCH_CUDA_CHECK(
          cudaMemcpyAsync(dst->p, src[i % src.size()]->p, n, cudaMemcpyDeviceToDevice, s));
    };
  }
};

// One fused select shape over the request boundaries `qsl_h` (`label` ends the row's name).
void bench_fused_select(cudaStream_t s, double copy, const BenchSelectShape& sh,
                        const std::vector<int32_t>& qsl_h, const char* label) {
  const int64_t W = sh.world, r = sh.rank, reqs = sh.reqs, T = sh.tokens, H = sh.heads,
                dq = sh.dq, dk = sh.dk, dv = sh.dv;
  const int elem = sh.elem;
  char name[200];
  std::snprintf(name, sizeof name,
                "fused_pcp_qkv_select W%lld r%lld reqs%lld T%lld H%lld D%lld/%lld/%lld %s%s",
                (long long)W, (long long)r, (long long)reqs, (long long)T, (long long)H,
                (long long)dq, (long long)dk, (long long)dv, elem == 1 ? "fp8" : "bf16", label);
  if (!wanted(name)) return;
  const DLDataType dt{kDLUInt, static_cast<uint8_t>(elem * 8), 1};
  // The outputs' rows, from the library's size query.
  const cattn::fused_pcp_qkv_select_rows rows = cattn::fused_pcp_qkv_select_size(T, W, r);
  const size_t qb = size_t(T) * H * dq * elem, kb = size_t(W) * T * H * dk * elem,
               vb = size_t(W) * T * H * dv * elem;
  const double bytes = select_traffic_bytes(qsl_h, sh);
  // Rotate input sets until the working set is well past L2 (or memory says stop).
  const size_t per_set = qb + kb + vb;
  const int sets = static_cast<int>(std::max<size_t>(1, std::min<size_t>(8, (size_t(400) << 20) / per_set)));
  std::vector<std::unique_ptr<DevBuf>> q, k, v;
  for (int i = 0; i < sets; ++i) {
    q.emplace_back(new DevBuf(qb));
    k.emplace_back(new DevBuf(kb));
    v.emplace_back(new DevBuf(vb));
  }
  DevBuf qsl(sizeof(int32_t) * (reqs + 1));
  BENCH_CUDA_CHECK(
      cudaMemcpy(qsl.p, qsl_h.data(), sizeof(int32_t) * (reqs + 1), cudaMemcpyHostToDevice));
  auto out_bytes = [&](int64_t out_rows, int64_t d) { return size_t(out_rows) * H * d * elem; };
  DevBuf qh(out_bytes(rows.q, dq)), qt(out_bytes(rows.q, dq)), kh(out_bytes(rows.kv_head, dk)),
      kt(out_bytes(rows.kv_tail, dk)), vh(out_bytes(rows.kv_head, dv)),
      vt(out_bytes(rows.kv_tail, dv));
  dl_tensor qsl_t(dev_view(qsl.p, {reqs + 1}, {kDLInt, 32, 1}));
  dl_tensor qh_t(dev_view(qh.p, {rows.q, H, dq}, dt)), qt_t(dev_view(qt.p, {rows.q, H, dq}, dt));
  dl_tensor kh_t(dev_view(kh.p, {rows.kv_head, H, dk}, dt)),
      kt_t(dev_view(kt.p, {rows.kv_tail, H, dk}, dt));
  dl_tensor vh_t(dev_view(vh.p, {rows.kv_head, H, dv}, dt)),
      vt_t(dev_view(vt.p, {rows.kv_tail, H, dv}, dt));
  std::deque<dl_tensor> qs, ks, vs;
  for (int i = 0; i < sets; ++i) {
    qs.emplace_back(dev_view(q[i]->p, {T, H, dq}, dt));
    ks.emplace_back(dev_view(k[i]->p, {W * T, H, dk}, dt));
    vs.emplace_back(dev_view(v[i]->p, {W * T, H, dv}, dt));
  }
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.query_start_loc = qsl_t.get();
  a.pcp_world_size = W;
  a.pcp_rank = r;
  a.q_head = qh_t.get();
  a.q_tail = qt_t.get();
  a.k_head = kh_t.get();
  a.k_tail = kt_t.get();
  a.v_head = vh_t.get();
  a.v_tail = vt_t.get();
  a.stream = reinterpret_cast<cattn_stream_t>(s);
  auto call = [&](int i) {
    a.q = qs[i % sets].get();
    a.k = ks[i % sets].get();
    a.v = vs[i % sets].get();
    BENCH_CATTN_CHECK(cattn_fused_pcp_qkv_select(&a));
  };
  SameSizeMemcpy mc(bytes, sets);
  const std::function<void(int)> copy_call = mc.call(s);
  SelectTimes t{};
  std::tie(t.alone_us, t.memcpy_us) = paired_median_us(s, call, copy_call);
  // About 2 ms of work a batch, 8 to 200 calls.
  const int calls = static_cast<int>(std::max(8.0, std::min(200.0, 2000.0 / t.alone_us)));
  t.b2b_us = back_to_back_us(s, calls, call, &t.host_us);
  t.b2b_memcpy_us = back_to_back_us(s, calls, copy_call, &t.memcpy_host_us);
  select_row(name, bytes, copy, t);
}

// Host seconds spent enqueueing the last per_call_us batch, per call (host-bound when it is
// close to the event time).
double g_host_us = 0;

// Small utilities are launch-bound: time 200 back-to-back calls between two events and report
// the mean per call (median of 7 such batches). This is the rate an engine calling from C sees.
double per_call_us(cudaStream_t s, const std::function<void()>& call) {
  return back_to_back_us(s, 200, [&](int) { call(); }, &g_host_us, 20);
}

// Host time of one call into an idle stream (each call first waits for the previous one's
// work): what an engine pays once per step. 200 calls back to back (per_call_us) fill the
// launch queue whenever the kernel outlasts the call, and then the host waits for the GPU.
double idle_call_host_us(cudaStream_t s, const std::function<void()>& call) {
  std::vector<double> host;
  for (int i = 0; i < 201; ++i) {
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto h0 = std::chrono::steady_clock::now();
    call();
    host.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  std::nth_element(host.begin(), host.begin() + host.size() / 2, host.end());
  return host[host.size() / 2];
}

template <class T>
DevBuf* upload(const std::vector<T>& v) {
  auto* d = new DevBuf(v.size() * sizeof(T));
  BENCH_CUDA_CHECK(cudaMemcpy(d->p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

void small_row(const std::string& name, double us, double seed_us) {
  if (seed_us <= 0) {
    std::printf("| %-58s | %10.2f | %8.2f | %10s | %9s |\n", name.c_str(), us, g_host_us, "-",
                "-");
    std::fflush(stdout);
    return;
  }
  std::printf("| %-58s | %10.2f | %8.2f | %10.1f | %8.1fx |\n", name.c_str(), us, g_host_us,
              seed_us, seed_us / us);
  std::fflush(stdout);
}

// The small utilities at the sizes of the seed's recorded H200 run; seed_us are that run's
// numbers (vllm_seed_h200.json of the baseline set, see bench/README.md: same GPU model,
// measured with torch; bench/gpu_side_by_side.py re-measures the seed in one process).
void bench_small_utilities(cudaStream_t s) {
  std::printf("\n| %-58s | %10s | %8s | %10s | %9s |\n", "small utility (per call, C caller)",
              "us", "host us", "seed us", "ratio");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(12, '-').c_str(),
              std::string(11, '-').c_str());
  // What one launch costs with no library in between: the floor of every row below.
  if (wanted("empty kernel launch"))
    small_row("empty kernel launch <<<1, 32>>> (floor)",
              per_call_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty(s)); }), 0);
  if (wanted("empty kernel launch"))
    small_row("empty kernel launch <<<1, 32>>>, 1472 B of parameters",
              per_call_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); }), 0);
  const DLDataType i32{kDLInt, 32, 1};
  std::mt19937 g(5);
  auto cs = reinterpret_cast<cattn_stream_t>(s);
  for (auto [B, size, seed] : {std::tuple<int64_t, int64_t, double>{256, 8, 141.4},
                               {1024, 4, 211.0}}) {
    std::vector<int32_t> lens(B);
    for (auto& x : lens) x = 1 + static_cast<int32_t>(g() % 8192);
    std::unique_ptr<DevBuf> seq(upload(lens)), out(new DevBuf(B * size * 4));
    dl_tensor ts(dev_view(seq->p, {B}, i32)), to(dev_view(out->p, {B, size}, i32));
    cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
    a.seq_lens = ts.get();
    a.dcp_size = size;
    a.out = to.get();
    a.stream = cs;
    const std::string name = "get_dcp_local_seq_lens B" + std::to_string(B) + " dcp" +
                             std::to_string(size);
    if (wanted(name))
      small_row(name, per_call_us(s, [&] { BENCH_CATTN_CHECK(cattn_get_dcp_local_seq_lens(&a)); }),
                seed);
  }
  for (auto [B, T, seed] : {std::tuple<int64_t, int64_t, double>{8, 16384, 501.2},
                            {256, 65536, 2040.3}}) {
    std::vector<int32_t> cu(B + 1);
    for (int64_t i = 0; i <= B; ++i) cu[i] = static_cast<int32_t>(T / B * i / 2 * 2);
    std::unique_ptr<DevBuf> dcu(upload(cu)), out(new DevBuf(T * 4));
    dl_tensor tc(dev_view(dcu->p, {B + 1}, i32)), to(dev_view(out->p, {cu[B]}, i32));
    cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
    a.cu_num_tokens = tc.get();
    a.restore_idx = to.get();
    a.stream = cs;
    const std::string name = "get_pcp_query_restore_idx B" + std::to_string(B) + " T" +
                             std::to_string(T) + " (seed host_us)";
    if (wanted(name))
      small_row(name,
                per_call_us(s, [&] { BENCH_CATTN_CHECK(cattn_get_pcp_query_restore_idx(&a)); }),
                seed);
  }
  for (int64_t B : {256, 1024}) {
    const int64_t M = 64, bs = 16, nspec = 2;
    std::vector<int32_t> bt(B * M), lens(B);
    for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int32_t>(i);
    for (auto& x : lens) x = 1 + static_cast<int32_t>(g() % (bs * (M - nspec - 1)));
    std::unique_ptr<DevBuf> dbt(upload(bt)), dl(upload(lens)), out(new DevBuf(B * 3 * 4));
    dl_tensor tb(dev_view(dbt->p, {B, M}, i32)), tl(dev_view(dl->p, {B}, i32)),
        to(dev_view(out->p, {B, 1 + nspec}, i32));
    cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
    a.block_table = tb.get();
    a.seq_lens = tl.get();
    a.block_size = bs;
    a.num_speculative_blocks = nspec;
    a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
    a.out = to.get();
    a.stream = cs;
    const std::string name = "mamba_get_block_table_tensor align B" + std::to_string(B);
    if (wanted(name))
      small_row(name,
                per_call_us(s, [&] { BENCH_CATTN_CHECK(cattn_mamba_get_block_table_tensor(&a)); }),
                50.4);
  }
  for (int64_t B : {256, 1024}) {
    std::vector<int32_t> qsl(B + 1), lens(B, 100), logits(B);
    for (int64_t i = 0; i <= B; ++i) qsl[i] = static_cast<int32_t>(4 * i);
    for (int64_t i = 0; i < B; ++i) logits[i] = static_cast<int32_t>(4 * i + 3);
    std::unique_ptr<DevBuf> dq(upload(qsl)), ds(upload(lens)), dlg(upload(logits)),
        oq(new DevBuf((B + 1) * 4)), os(new DevBuf(B * 4)), mt(new DevBuf(8));
    dl_tensor tq(dev_view(dq->p, {B + 1}, i32)), ts(dev_view(ds->p, {B}, i32)),
        tlg(dev_view(dlg->p, {B}, i32)), toq(dev_view(oq->p, {B + 1}, i32)),
        tos(dev_view(os->p, {B}, i32)), tmt(dev_view(mt->p, {2}, i32));
    cattn_common_attn_metadata_t m = CATTN_COMMON_ATTN_METADATA_INIT;
    m.query_start_loc = tq.get();
    m.seq_lens = ts.get();
    m.logits_indices_padded = tlg.get();
    m.num_logits_indices = B;
    m.num_reqs = B;
    m.num_actual_tokens = 4 * B;
    m.max_query_len = 4;
    m.max_seq_len = 100;
    cattn_common_attn_metadata_t o = CATTN_COMMON_ATTN_METADATA_INIT;
    o.query_start_loc = toq.get();
    o.seq_lens = tos.get();
    cattn_extend_all_queries_by_n_args_t e = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
    e.metadata = &m;
    e.out = &o;
    e.stream = cs;
    std::string name = "extend_all_queries_by_n B" + std::to_string(B);
    if (wanted(name))
      small_row(name, per_call_us(s, [&] { BENCH_CATTN_CHECK(cattn_extend_all_queries_by_n(&e)); }),
                0);
    cattn_common_attn_metadata_t o2 = CATTN_COMMON_ATTN_METADATA_INIT;
    o2.query_start_loc = toq.get();
    cattn_fast_prefill_metadata_args_t f = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
    f.metadata = &m;
    f.out = &o2;
    f.decode_max_and_total = tmt.get();
    f.stream = cs;
    name = "make_kv_sharing_fast_prefill_common_attn_metadata B" + std::to_string(B);
    if (wanted(name))
      small_row(name, per_call_us(s, [&] {
                  BENCH_CATTN_CHECK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&f));
                }),
                0);
  }
}

}  // namespace

// The step plan with all seven products from a C caller, at bench/step_side_by_side.py's
// batch shapes: mixed decode/prefill, contexts up to 12k, Llama 4 chunked attention.
void bench_step_plan(cudaStream_t s, int64_t B) {
  std::mt19937 g(static_cast<uint32_t>(B));
  const int64_t prefills = B == 8 ? 3 : (B == 256 ? 16 : 24);
  const int64_t plen = B == 8 ? 4096 : (B == 256 ? 2048 : 2560);
  std::vector<int32_t> q(B, 1), qsl(B + 1, 0), seq(B), cu(B + 1, 0), logits;
  for (int64_t i = 0; i < prefills; ++i) q[static_cast<size_t>(i * (B / prefills))] = plen - g() % 64;
  for (int64_t i = 0; i < B; ++i) {
    qsl[i + 1] = qsl[i] + q[i];
    seq[i] = q[i] + static_cast<int32_t>(g() % 12288);
    cu[i + 1] = cu[i] + (q[i] > 1 ? q[i] - q[i] % 2 : q[i]);
    logits.push_back(qsl[i + 1] - 1);
  }
  const int64_t T = qsl[B], cols = 16384 / 16 + 4, L = static_cast<int64_t>(logits.size());
  std::vector<int32_t> table(B * cols);
  for (auto& x : table) x = static_cast<int32_t>(g() % (1 << 20));
  const cattn_step_plan_desc_t d = bench_step_plan_desc(B, T, cols, L);
  cattn_step_plan_t* plan = nullptr;
  BENCH_CATTN_CHECK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
  BENCH_CATTN_CHECK(cattn_step_plan_get_shape(plan, &sh));
  const DLDataType i32{kDLInt, 32, 1}, i64{kDLInt, 64, 1};
  std::vector<std::unique_ptr<DevBuf>> bufs;
  std::deque<dl_tensor> ts;
  auto dev = [&](const std::vector<int32_t>* v, std::vector<int64_t> shape, DLDataType dt) {
    int64_t n = 1;
    for (int64_t x : shape) n *= x;
    bufs.emplace_back(v ? upload(*v) : new DevBuf(static_cast<size_t>(n) * dt.bits / 8));
    return ts.emplace_back(dev_view(bufs.back()->p, shape, dt)).get();
  };
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.query_start_loc = dev(&qsl, {B + 1}, i32);
  b.seq_lens = dev(&seq, {B}, i32);
  b.block_table = dev(&table, {B, cols}, i32);
  b.cu_num_tokens = dev(&cu, {B + 1}, i32);
  b.logits_indices = dev(&logits, {L}, i32);
  cattn_step_outputs_t o = bench_step_plan_outputs(
      B, sh, [&](std::vector<int64_t> shape, DLDataType dt) { return dev(nullptr, shape, dt); });
  int64_t* pinned = nullptr;
  BENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), CATTN_STEP_NUM_COUNTS * sizeof(int64_t),
                                 cudaHostAllocMapped));
  dl_tensor mirror(
      cattn::tensor_view<int64_t>(pinned, {CATTN_STEP_NUM_COUNTS}, cattn::cuda_host()));
  const auto cs = reinterpret_cast<cattn_stream_t>(s);
  // "host us" here is one call into an idle stream (idle_call_host_us), beside the floor: an
  // empty kernel launched the same way.
  const std::string floor = "step plan floor: empty kernel, 1472 B of parameters";
  if (B == 8 && wanted(floor)) {
    const double us = per_call_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); });
    g_host_us = idle_call_host_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); });
    small_row(floor, us, 0);
  }
  // The plan remembers its last checked run: the plain rows repeat one description (what an
  // engine passes every step), the "checked every call" rows alternate the counts between two
  // buffers so that every call takes the checks, the views and the mirror's pointer query.
  DLTensor* const counts = o.counts;
  DLTensor* const other_counts = dev(nullptr, {CATTN_STEP_NUM_COUNTS}, i64);
  for (bool with_mirror : {true, false}) {
    for (bool alternate : {false, true}) {
      o.counts_host = with_mirror ? mirror.get() : nullptr;
      const std::string name = "step plan, all 7 products, B" + std::to_string(B) + " T" +
                               std::to_string(T) + (with_mirror ? " + counts_host" : "") +
                               (alternate ? ", checked every call" : "");
      if (!wanted(name)) continue;
      int call = 0;
      auto run = [&] {
        o.counts = alternate && (call++ & 1) ? other_counts : counts;
        BENCH_CATTN_CHECK(cattn_step_plan_run(plan, &b, &o, cs));
      };
      const double us = per_call_us(s, run);
      g_host_us = idle_call_host_us(s, run);
      small_row(name, us, 0);
      o.counts = counts;
    }
  }
  cattn_step_plan_destroy(plan);
  cudaFreeHost(pinned);
}

// GPU time of `call` alone: 20 calls captured in one graph, events around a replay / 20
// (median of g_reps replays).
double graph_us(cudaStream_t s, const std::function<void()>& call) {
  cudaGraph_t g;
  cudaGraphExec_t e;
  BENCH_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 20; ++i) call();
  BENCH_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  BENCH_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < g_reps + 3; ++r) {
    BENCH_CUDA_CHECK(cudaEventRecord(a, s));
    BENCH_CUDA_CHECK(cudaGraphLaunch(e, s));
    BENCH_CUDA_CHECK(cudaEventRecord(b, s));
    BENCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 3) t.push_back(ms * 1000.0 / 20);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaGraphExecDestroy(e);
  cudaGraphDestroy(g);
  return median_of(t);
}

// The host side of a step-inputs row: a step of B requests (decodes, and chunked prefills
// filling T = 65,536 tokens at B >= 256, 8,192 at B = 8) over R = 2B persistent rows, `groups`
// KV-cache groups of blocks of 16 (the third of 64), DCP `dcp`, no drafts. Every persistent
// row's num_blocks is as if it held its computed tokens plus a whole step's 65,536 (capped at
// the table's W = 2,048 columns), and the gather copies them all: far more table than
// bench/step_inputs_side_by_side.py's requests, whose num_blocks cover their own seq_len.
struct StepInputsWorkload {
  static constexpr int64_t kTokens = 65536, kCols = 2048;
  static constexpr int64_t kBlockSizes[3] = {16, 16, 64};
  int64_t B = 0, R = 0, T = 0, decodes = 0, dcp = 1;
  int groups = 1;
  std::vector<int32_t> sched, idx, nct, drafts;
  std::vector<std::vector<int32_t>> tables, nbs;  // per group: [R, kCols] and [R]
};

StepInputsWorkload make_step_inputs_workload(int64_t B, int groups, int64_t dcp) {
  StepInputsWorkload w;
  const int64_t R = 2 * B, W = w.kCols;
  w.B = B, w.R = R, w.groups = groups, w.dcp = dcp;
  std::mt19937 g(7 + static_cast<unsigned>(B));
  w.sched.resize(B), w.idx.resize(B), w.nct.resize(R), w.drafts.assign(B, 0);
  std::vector<int32_t> rows(R);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), g);
  int64_t budget = B >= 256 ? w.kTokens : 8192;
  w.decodes = B >= 256 ? B * 3 / 4 : B - 1;
  w.T = 0;
  for (int64_t b = 0; b < B; ++b) {
    w.idx[b] = rows[b];
    const int64_t left = B - b - 1;
    w.sched[b] = static_cast<int32_t>(
        b < w.decodes ? 1 : std::max<int64_t>(1, (budget - left) / (B - b)));
    budget -= w.sched[b];
    w.T += w.sched[b];
  }
  for (auto& x : w.nct) x = static_cast<int32_t>(g() % 16384);
  w.tables.resize(groups), w.nbs.resize(groups);
  for (int k = 0; k < groups; ++k) {
    w.tables[k].resize(R * W);
    w.nbs[k].resize(R);
    for (auto& x : w.tables[k]) x = static_cast<int32_t>(g() % (1 << 20));
    for (int64_t r = 0; r < R; ++r)
      w.nbs[k][r] = static_cast<int32_t>(
          std::min<int64_t>(W, (w.nct[r] + w.kTokens) / (w.kBlockSizes[k] * dcp) + 1));
  }
  return w;
}

// One line of the workload table printed under the step-input rows, in the columns
// bench/step_inputs_side_by_side.py prints for its own workloads, so that the two benches' rows
// can be set side by side (issue 39): the blocks in use per request decide the gather's
// traffic, and they are what makes these rows heavier than the side-by-side's at the same B.
std::string step_workload_row(const std::string& name, const StepInputsWorkload& w) {
  const int64_t B = w.B;
  int64_t prefill_tokens = 0, lo = w.nct[w.idx[0]], hi = lo, gathered = 0;
  for (int64_t b = w.decodes; b < B; ++b) prefill_tokens += w.sched[b];
  for (int64_t b = 1; b < B; ++b) {
    lo = std::min<int64_t>(lo, w.nct[w.idx[b]]);
    hi = std::max<int64_t>(hi, w.nct[w.idx[b]]);
  }
  std::string requests = std::to_string(w.decodes) + " x 1";
  if (B > w.decodes)
    requests += " + " + std::to_string(B - w.decodes) + " x ~" +
                std::to_string(prefill_tokens / (B - w.decodes));
  std::string sizes, blocks;
  for (int k = 0; k < w.groups; ++k) {
    int64_t sum = 0, most = 0;
    for (int64_t b = 0; b < B; ++b) {
      sum += w.nbs[k][w.idx[b]];
      most = std::max<int64_t>(most, w.nbs[k][w.idx[b]]);
    }
    gathered += sum;
    char cell[64];
    std::snprintf(cell, sizeof cell, "%s%.0f (%lld)", k ? ", " : "",
                  static_cast<double>(sum) / static_cast<double>(B), static_cast<long long>(most));
    blocks += cell;
    sizes += (k ? "," : "") + std::to_string(w.kBlockSizes[k]);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "| %s | %lld | %lld | %d | %lld | 0 | %s | %lld-%lld | [%lld, %lld] int32 | %s | "
                "%s | %.2f |",
                name.c_str(), static_cast<long long>(B), static_cast<long long>(w.T), w.groups,
                static_cast<long long>(w.dcp), requests.c_str(), static_cast<long long>(lo),
                static_cast<long long>(hi), static_cast<long long>(w.R),
                static_cast<long long>(w.kCols), sizes.c_str(), blocks.c_str(),
                static_cast<double>(gathered) * 2 * 4 / 1e6);
  return line;
}

// The workload table's lines of the rows timed, and the whole-step rows' 1.1 products (from the
// plan's shape, the same for every such row).
std::vector<std::string> g_step_workloads;
std::string g_whole_step_note;

// The 1.1 products' names, as the rows that add one of them to the step inputs print them.
const char* const kStepProductNames[] = {"DCP lengths", "PCP restore", "Mamba table",
                                         "conv1d", "local attention", "fast prefill", "extend"};

// Sets to NULL the outputs of the 1.1 products not in `products` (the plan refuses them).
void drop_unselected_outputs(cattn_step_outputs_t& o, uint32_t products) {
  auto keep = [&](uint32_t bit) { return (products & bit) != 0; };
  if (!keep(CATTN_STEP_DCP_LOCAL_SEQ_LENS)) o.dcp_local_seq_lens = nullptr;
  if (!keep(CATTN_STEP_PCP_QUERY_RESTORE_IDX)) o.pcp_query_restore_idx = nullptr;
  if (!keep(CATTN_STEP_MAMBA_BLOCK_TABLE)) o.mamba_block_table = nullptr;
  if (!keep(CATTN_STEP_CAUSAL_CONV1D_METADATA))
    o.conv1d_nums = o.conv1d_mlist = o.conv1d_offsetlist = o.conv1d_batch_ptr =
        o.conv1d_token_chunk_offset_ptr = nullptr;
  if (!keep(CATTN_STEP_LOCAL_ATTENTION))
    o.local_query_start_loc = o.local_seq_lens = o.local_num_computed_tokens =
        o.local_block_table = nullptr;
  if (!keep(CATTN_STEP_FAST_PREFILL)) o.decode_query_start_loc = nullptr;
  if (!keep(CATTN_STEP_EXTEND_QUERIES)) o.extend_query_start_loc = o.extend_seq_lens = nullptr;
}

// The step inputs (1.2) in the plan on make_step_inputs_workload's step, with the 1.1 products
// of `with_11` (a CATTN_STEP_* mask: all seven for the whole step, one to see what it adds;
// they read the computed tensors: two launches). Rows: us per run back to back, host us of one
// call into an idle stream, and the GPU time per run inside a graph.
void bench_step_inputs(cudaStream_t s, int64_t B, int groups, int64_t dcp, uint32_t with_11) {
  const bool whole = with_11 == CATTN_STEP_ALL_PRODUCTS, any_11 = with_11 != 0;
  const StepInputsWorkload w = make_step_inputs_workload(B, groups, dcp);
  const int64_t Tcap = w.kTokens, R = w.R, W = w.kCols;
  const std::vector<int32_t>&sched = w.sched, &idx = w.idx, &nct = w.nct, &drafts = w.drafts;
  const std::vector<std::vector<int32_t>>&tables = w.tables, &nbs = w.nbs;
  const int64_t* bs = w.kBlockSizes;
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  if (any_11) d = bench_step_plan_desc(B, Tcap, W, B);
  d.products = with_11 | CATTN_STEP_INPUT_PRODUCTS;
  d.max_num_reqs = B, d.max_num_tokens = Tcap, d.max_num_logits = B;
  d.max_num_persistent_reqs = R;
  d.inputs.num_kv_groups = groups;
  d.inputs.dcp_size = dcp;
  for (int k = 0; k < groups; ++k) d.kv_groups[k] = {bs[k], bs[k], W, CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  cattn_step_plan_t* plan = nullptr;
  BENCH_CATTN_CHECK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
  BENCH_CATTN_CHECK(cattn_step_plan_get_shape(plan, &sh));
  const DLDataType i32{kDLInt, 32, 1}, i64{kDLInt, 64, 1};
  std::vector<std::unique_ptr<DevBuf>> bufs;
  std::deque<dl_tensor> ts;
  auto dev = [&](const std::vector<int32_t>* v, std::vector<int64_t> shape, DLDataType dt) {
    int64_t n = 1;
    for (int64_t x : shape) n *= x;
    bufs.emplace_back(v ? upload(*v) : new DevBuf(static_cast<size_t>(n) * dt.bits / 8));
    return ts.emplace_back(dev_view(bufs.back()->p, shape, dt)).get();
  };
  const std::vector<int32_t> live{static_cast<int32_t>(B)};
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.num_reqs = dev(&live, {1}, i32);
  b.num_scheduled_tokens = dev(&sched, {B}, i32);
  b.idx_mapping = dev(&idx, {B}, i32);
  b.num_computed_tokens = dev(&nct, {R}, i32);
  b.num_draft_tokens = dev(&drafts, {B}, i32);
  for (int k = 0; k < groups; ++k) {
    b.kv_block_tables[k] = dev(&tables[k], {R, W}, i32);
    b.kv_num_blocks[k] = dev(&nbs[k], {R}, i32);
  }
  std::vector<int32_t> logits(B);
  if (with_11 & CATTN_STEP_FAST_PREFILL) b.logits_indices = dev(&logits, {B}, i32);
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  if (any_11) {
    o = bench_step_plan_outputs(
        B, sh, [&](std::vector<int64_t> shape, DLDataType dt) { return dev(nullptr, shape, dt); });
    drop_unselected_outputs(o, with_11);
  }
  o.counts = dev(nullptr, {CATTN_STEP_NUM_COUNTS}, i64);
  o.query_start_loc = dev(nullptr, {B + 1}, i32);
  o.seq_lens = dev(nullptr, {B}, i32);
  o.positions = dev(nullptr, {Tcap}, i64);
  o.token_to_req_indices = dev(nullptr, {Tcap}, i32);
  for (int k = 0; k < groups; ++k) {
    o.block_tables[k] = dev(nullptr, {B, W}, i32);
    o.slot_mappings[k] = dev(nullptr, {Tcap}, i64);
  }
  o.logits_indices = dev(nullptr, {B}, i64);
  o.cu_num_logits = dev(nullptr, {B + 1}, i32);
  const auto cs = reinterpret_cast<cattn_stream_t>(s);
  auto run = [&] { BENCH_CATTN_CHECK(cattn_step_plan_run(plan, &b, &o, cs)); };
  std::string what = "step inputs";
  if (whole) what = "whole step (7 + inputs)";
  else if (any_11)
    for (int k = 0; k < 7; ++k)
      if (with_11 == (1u << k)) what = std::string("inputs + ") + kStepProductNames[k];
  const std::string name = what +
                           ", B" + std::to_string(B) + " T" + std::to_string(w.T) +
                           " g" + std::to_string(groups) + " dcp" + std::to_string(dcp);
  if (wanted(name)) {
    const double us = per_call_us(s, run);
    g_host_us = idle_call_host_us(s, run);
    const double gpu = graph_us(s, run);
    std::printf("| %-58s | %10.2f | %8.2f | %10.2f | %9s |\n", name.c_str(), us, g_host_us, gpu,
                any_11 ? "2" : "1");
    std::fflush(stdout);
    if (!any_11 || whole) g_step_workloads.push_back(step_workload_row(name, w));
    if (whole)
      g_whole_step_note =
          "Whole-step rows: + all seven 1.1 products (CATTN_STEP_ALL_PRODUCTS as "
          "bench/step_plan_desc.h sets them: DCP lengths over 4 ranks, all of them; PCP restore "
          "index; Mamba align, blocks of 16 + 2; conv1d; local attention in chunks of 8192 over "
          "blocks of 16, a [" + std::to_string(sh.local_capacity) + ", " +
          std::to_string(sh.local_pages) + "] int32 local table; fast prefill; extend), two "
          "launches. step_inputs_side_by_side.py's (b) + 1.1 products holds two of the seven "
          "(DCP lengths, extend).";
  }
  cattn_step_plan_destroy(plan);
}

void bench_step_inputs_all(cudaStream_t s) {
  std::printf("\n| %-58s | %10s | %8s | %10s | %9s |\n", "step inputs in the plan (per run)", "us",
              "host us", "graph us", "launches");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(12, '-').c_str(),
              std::string(11, '-').c_str());
  const std::string floor = "step inputs floor: empty kernel, 1472 B of parameters";
  if (wanted(floor)) {
    const double us = per_call_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); });
    g_host_us = idle_call_host_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); });
    const double gpu = graph_us(s, [&] { BENCH_CUDA_CHECK(bench_launch_empty_big(s)); });
    std::printf("| %-58s | %10.2f | %8.2f | %10.2f | %9s |\n", floor.c_str(), us, g_host_us, gpu,
                "1");
  }
  for (int64_t B : {8, 256, 1024})
    for (int groups : {1, 3})
      for (int64_t dcp : {1, 4}) bench_step_inputs(s, B, groups, dcp, 0);
  bench_step_inputs(s, 1024, 3, 1, CATTN_STEP_ALL_PRODUCTS);
  bench_step_inputs(s, 1024, 3, 4, CATTN_STEP_ALL_PRODUCTS);
  // What each 1.1 product adds to the step inputs (its rows are not in the workload table).
  for (int k = 0; k < 7; ++k) bench_step_inputs(s, 1024, 3, 1, 1u << k);
  if (g_step_workloads.empty()) return;
  std::printf("\n| workload | B | T | groups | DCP | drafts | requests (decode + prefill) | "
              "computed tokens | persistent table per group | block sizes | blocks in use / "
              "request: mean (max) | gather MB (read + write) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& row : g_step_workloads) std::printf("%s\n", row.c_str());
  std::printf("Blocks in use: every live request's num_blocks, min(2048, (computed + 65536) / "
              "(block size x DCP) + 1), all of which the gather copies "
              "(bench/step_inputs_side_by_side.py's requests hold cdiv(seq_len, block size x "
              "DCP)).%s%s\n",
              g_whole_step_note.empty() ? "" : " ", g_whole_step_note.c_str());
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) g_filter = argv[++i];
  }
  int32_t n = 0;
  BENCH_CATTN_CHECK(cattn_cuda_device_count(&n));
  if (n == 0) {
    std::printf("bench_gpu: no CUDA device; nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop;
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double copy = copy_gbps(s);
  std::printf("device: %s, %d SMs; measured device-to-device copy: %.1f GB/s (read + write)\n",
              prop.name, prop.multiProcessorCount, copy);
  // The shapes of the seed's recorded run, then MLA and fp8; then the serving-batch class.
  select_header("fused select: goal shapes (equal requests)");
#define CATTN_BENCH_GOAL(...)                                       \
  {                                                                 \
    const BenchSelectShape sh{__VA_ARGS__};                         \
    bench_fused_select(s, copy, sh, select_equal_qsl(sh.reqs, sh.tokens), ""); \
  }
  CATTN_BENCH_SELECT_GOAL_SHAPES(CATTN_BENCH_GOAL)
#undef CATTN_BENCH_GOAL
  select_header("fused select: many requests (random even lengths)");
#define CATTN_BENCH_MANY(...)                                        \
  {                                                                  \
    const BenchSelectShape sh{__VA_ARGS__};                          \
    bench_fused_select(s, copy, sh, select_random_qsl(sh.reqs, sh.tokens), " rand"); \
  }
  CATTN_BENCH_SELECT_MANY_REQUEST_SHAPES(CATTN_BENCH_MANY)
#undef CATTN_BENCH_MANY
  bench_small_utilities(s);
  for (int64_t B : {8, 256, 1024}) bench_step_plan(s, B);
  bench_step_inputs_all(s);
  BENCH_CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}
