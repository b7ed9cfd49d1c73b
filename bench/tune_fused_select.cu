// SPDX-License-Identifier: Apache-2.0
// Tuning harness for the fused select kernel: times the benchmark's shapes (bench/select_shapes.h:
// the goal shapes, then the many-request class) straight through the kernel's launcher, once per
// policy (kernels/fused_pcp_qkv_select_tuning.cuh; the list linked in: tune_fused_select.cuh),
// next to a cudaMemcpyAsync of the same traffic timed in the same run, after the ceiling an
// index-free copy kernel reaches at the same read/write mixes. Every shape of up to 1 GiB is
// checked byte for byte against a host computation of the select after each policy has run, so
// a policy that is fast but wrong shows up as such. The output buffers are sized by the
// library's size query (cattn_fused_pcp_qkv_select_size).
//
//   tune_fused_select[_variants] [--policy NAME[,NAME...]] [--filter TEXT] [--copy-gbps G]
//                                [--ceiling] [--list]
// --policy   the policies to time, in this order (default: every one in the list)
// --filter   only the shapes whose name holds TEXT ("rand": the many-request class)
// --copy-gbps  the device-to-device copy bandwidth the "of copy" column divides by (4218)
// --ceiling  first print the index-free copy ceilings
// --list     print the policies and what each one changes, then exit
// bench/tune_fused_select.sh builds the variants and runs one process per policy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_check.h"
#include "bench/select_shapes.h"
#include "bench/tune_fused_select.cuh"
#include "cattn.hpp"

using namespace cattn::kernels;

// The stream every launch and event of the harness uses (a dependent launch needs a stream
// that holds only the harness's work).
static cudaStream_t g_stream = nullptr;

// Median of 22 timed runs (after 3 warm-up runs) of `launch`, each alone, in microseconds.
template <class Launch>
static double median_us(Launch launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a, g_stream);
    launch();
    cudaEventRecord(b, g_stream);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1000);
  }
  cudaEventDestroy(a); cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Mean time per launch of 20 launches queued back to back between two events, the median of 7
// such batches (after 3 warm-up launches), in microseconds.
template <class Launch>
static double back_to_back_us(Launch launch) {
  constexpr int kCalls = 20;
  for (int i = 0; i < 3; ++i) launch();
  cudaStreamSynchronize(g_stream);
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int rep = 0; rep < 7; ++rep) {
    cudaEventRecord(a, g_stream);
    for (int i = 0; i < kCalls; ++i) launch();
    cudaEventRecord(b, g_stream);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000 / kCalls);
  }
  cudaEventDestroy(a); cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Compares the six outputs with the select computed on the host from the same inputs (all
// compact): per request, q's two halves and the first (r + 1) and (2W - r) blocks of its K/V
// segment. Returns the name of the first output that differs, or nullptr.
static const char* check_outputs(const BenchSelectShape& s, const std::vector<int32_t>& qsl,
                                 char* const* in, const size_t* in_b, char* const* out,
                                 const size_t* out_b) {
  std::vector<char> h_in[3], got, want;
  for (int i = 0; i < 3; ++i) {
    h_in[i].resize(in_b[i]);
    if (cudaMemcpy(h_in[i].data(), in[i], in_b[i], cudaMemcpyDeviceToHost)) return "download";
  }
  const char* names[6] = {"q_head", "q_tail", "k_head", "k_tail", "v_head", "v_tail"};
  const int64_t d[3] = {s.dq, s.dk, s.dv};
  for (int o = 0; o < 6; ++o) {
    const int src = o / 2;
    const bool tail = o % 2 == 1;
    const size_t row = size_t(s.heads) * d[src] * s.elem;
    want.assign(out_b[o], static_cast<char>(0xee));
    for (size_t i = 0; i + 1 < qsl.size(); ++i) {
      const int64_t start = qsl[i], half = (qsl[i + 1] - qsl[i]) / 2;
      int64_t from, to, rows;
      if (src == 0) {
        from = start + (tail ? half : 0), to = start / 2, rows = half;
      } else {
        const int64_t blocks = tail ? 2 * s.world - s.rank : s.rank + 1;
        from = s.world * start, to = start / 2 * blocks, rows = blocks * half;
      }
      std::memcpy(want.data() + to * row, h_in[src].data() + from * row, rows * row);
    }
    got.resize(out_b[o]);
    if (cudaMemcpy(got.data(), out[o], out_b[o], cudaMemcpyDeviceToHost)) return "download";
    if (got != want) return names[o];
  }
  return nullptr;
}

// A device allocation, freed when it goes out of scope.
struct DeviceBytes {
  char* p = nullptr;
  DeviceBytes() = default;
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  ~DeviceBytes() { cudaFree(p); }
};

// One shape under each of `policies`, a row each, after a cudaMemcpyAsync of the same traffic
// (half read, half written) timed in the same run. Returns false when a CUDA call or a launch
// failed or a checked output differed.
static bool run(const char* name, const BenchSelectShape& s, const std::vector<int32_t>& h,
                double copy_gbps, const std::vector<const TunePolicy*>& policies) {
  const int64_t W = s.world, r = s.rank, reqs = s.reqs, T = s.tokens, H = s.heads, dq = s.dq,
                dk = s.dk, dv = s.dv;
  const int elem = s.elem;
  const cattn::fused_pcp_qkv_select_rows rows = cattn::fused_pcp_qkv_select_size(T, W, r);
  const size_t qb = T * H * dq * elem, kb = W * T * H * dk * elem, vb = W * T * H * dv * elem;
  // q_head, q_tail, k_head, k_tail, v_head, v_tail.
  const int64_t out_rows[6] = {rows.q, rows.q, rows.kv_head, rows.kv_tail, rows.kv_head,
                               rows.kv_tail};
  const int64_t out_d[6] = {dq, dq, dk, dk, dv, dv};
  size_t out_b[6];
  for (int i = 0; i < 6; ++i) out_b[i] = size_t(out_rows[i]) * H * out_d[i] * elem;
  DeviceBytes q, k, v, out[6], qsl;
  BENCH_CUDA_TRY(cudaMalloc(&q.p, qb));
  BENCH_CUDA_TRY(cudaMalloc(&k.p, kb));
  BENCH_CUDA_TRY(cudaMalloc(&v.p, vb));
  for (int i = 0; i < 6; ++i) BENCH_CUDA_TRY(cudaMalloc(&out[i].p, out_b[i]));
  // Distinct bytes per position so that a misplaced row cannot compare equal.
  {
    std::vector<uint32_t> pat(size_t{16} << 20);
    for (size_t i = 0; i < pat.size(); ++i) pat[i] = static_cast<uint32_t>(i * 2654435761u);
    for (char* base : {q.p, k.p, v.p}) {
      const size_t n = base == q.p ? qb : base == k.p ? kb : vb;
      for (size_t done = 0; done < n;) {
        const size_t c = std::min(n - done, pat.size() * 4);
        BENCH_CUDA_TRY(cudaMemcpy(base + done, pat.data(), c, cudaMemcpyHostToDevice));
        pat[0] += 7;
        done += c;
      }
    }
  }
  BENCH_CUDA_TRY(cudaMalloc(&qsl.p, 4 * (reqs + 1)));
  BENCH_CUDA_TRY(cudaMemcpy(qsl.p, h.data(), 4 * (reqs + 1), cudaMemcpyHostToDevice));
  FusedSelectParams p;
  auto op = [&](const char* src, int64_t d, char* hd, char* tl) {
    SelectOperand x;
    x.src = src;
    x.src_rows = src == q.p ? T : W * T;
    x.src_row_stride = H * d * elem;
    x.src_head_stride = d * elem;
    x.head_bytes = d * elem;
    x.dst_head = hd;
    x.dst_head_rows = src == q.p ? rows.q : rows.kv_head;
    x.dst_tail = tl;
    x.dst_tail_rows = src == q.p ? rows.q : rows.kv_tail;
    return x;
  };
  p.q = op(q.p, dq, out[0].p, out[1].p);
  p.k = op(k.p, dk, out[2].p, out[3].p);
  p.v = op(v.p, dv, out[4].p, out[5].p);
  p.query_start_loc.data = qsl.p;
  p.query_start_loc.step[0] = 1;
  p.query_start_loc.size[0] = reqs + 1;
  p.num_reqs = reqs;
  p.world = W;
  p.rank = r;
  p.heads = static_cast<int32_t>(H);
  DeviceShape dev;
  cudaDeviceGetAttribute(&dev.sm_count, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&dev.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0);
  cudaDeviceGetAttribute(&dev.cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  const double bytes = select_traffic_bytes(h, s);
  const size_t all_b = qb + kb + vb + out_b[0] + out_b[1] + out_b[2] + out_b[3] + out_b[4] +
                       out_b[5];
  double memcpy_us = 0, b2b_memcpy_us = 0;
  {
    const size_t n = static_cast<size_t>(bytes / 2) / 16 * 16;
    DeviceBytes a, b;
    BENCH_CUDA_TRY(cudaMalloc(&a.p, n));
    BENCH_CUDA_TRY(cudaMalloc(&b.p, n));
    BENCH_CUDA_TRY(cudaMemset(a.p, 0x5a, n));
    auto copy = [&] { cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice, g_stream); };
    memcpy_us = median_us(copy);
    b2b_memcpy_us = back_to_back_us(copy);
    BENCH_CUDA_TRY(cudaGetLastError());
  }
  bool all_ok = true;
  for (const TunePolicy* pol : policies) {
    for (int i = 0; i < 6; ++i) BENCH_CUDA_TRY(cudaMemset(out[i].p, 0xee, out_b[i]));
    cudaError_t launched = cudaSuccess;
    auto select = [&] {
      const cudaError_t e = pol->launch(p, dev, g_stream);
      if (e != cudaSuccess) launched = e;
    };
    const double us = median_us(select);
    const double b2b_us = back_to_back_us(select);
    BENCH_CUDA_TRY(launched);
    BENCH_CUDA_TRY(cudaGetLastError());
    BENCH_CUDA_TRY(cudaDeviceSynchronize());
    const char* verdict = "unchecked";
    if (all_b <= (size_t{1} << 30)) {
      char* in[3] = {q.p, k.p, v.p};
      char* outs[6];
      for (int i = 0; i < 6; ++i) outs[i] = out[i].p;
      const size_t in_b[3] = {qb, kb, vb};
      const char* bad = check_outputs(s, h, in, in_b, outs, out_b);
      verdict = bad == nullptr ? "ok" : bad;
    }
    const bool ok = verdict[0] == 'o' || verdict[0] == 'u';
    all_ok &= ok;
    const double gbps = bytes / (us * 1e3);
    std::printf("  %-32s %-44s %9.2f us %7.1f GB/s %.3f of copy | memcpy %9.2f us, %.3f of it | "
                "b2b %9.2f us, memcpy %9.2f us, %.3f | %s%s\n",
                pol->name, name, us, gbps, gbps / copy_gbps, memcpy_us, memcpy_us / us, b2b_us,
                b2b_memcpy_us, b2b_memcpy_us / b2b_us, ok ? "" : "MISMATCH in ", verdict);
    std::fflush(stdout);
  }
  return all_ok;
}

// The ceiling at a given read/write mix: rows of 8 KiB copied front to back with 16-byte
// vectors, each row to dst1 and, when (row % den) < num, also to dst2 - no index arithmetic.
// num/den = 0/1 is a plain copy; 2/4 has the write share of W2 r1 (reads 40 %), 1/4 of W4 r1.
__global__ void __launch_bounds__(256) mix_copy(const uint4* __restrict__ src, uint4* dst1,
                                                uint4* dst2, int64_t rows, int num, int den) {
  constexpr int kVec = 8192 / 16;
  const int lane = threadIdx.x & 31;
  const int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) >> 5;
  const int64_t warps = (gridDim.x * int64_t{blockDim.x}) >> 5;
  for (int64_t r = warp; r < rows; r += warps) {
    const bool dup = (r % den) < num;
    for (int base = lane; base < kVec; base += 128) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = src[r * kVec + base + u * 32];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        dst1[r * kVec + base + u * 32] = v[u];
        if (dup) dst2[r * kVec + base + u * 32] = v[u];
      }
    }
  }
}

static void mix_ceiling(double copy_gbps) {
  const int64_t rows = 65536;  // 512 MiB read
  const size_t bytes = size_t(rows) * 8192;
  char *src, *d1, *d2;
  if (cudaMalloc(&src, bytes) || cudaMalloc(&d1, bytes) || cudaMalloc(&d2, bytes)) return;
  cudaMemset(src, 0x5a, bytes);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int mixes[][2] = {{0, 1}, {1, 4}, {2, 4}, {1, 1}};
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (auto& m : mixes) {
    std::vector<float> t;
    for (int i = 0; i < 15; ++i) {
      cudaEventRecord(a);
      mix_copy<<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(d1),
                                 reinterpret_cast<uint4*>(d2), rows, m[0], m[1]);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      if (i >= 3) t.push_back(ms * 1000);
    }
    std::sort(t.begin(), t.end());
    const double traffic = double(bytes) * (2.0 + double(m[0]) / m[1]);
    const double gbps = traffic / (t[t.size() / 2] * 1e3);
    std::printf("  ideal copy, reads %4.1f %% of traffic     %9.1f us %7.1f GB/s %.3f of copy\n",
                100.0 / (2.0 + double(m[0]) / m[1]), t[t.size() / 2], gbps, gbps / copy_gbps);
  }
  cudaFree(src); cudaFree(d1); cudaFree(d2);
}

int main(int argc, char** argv) {
  double copy = 4218.0;
  bool ceiling = false, list = false;
  const char* filter = nullptr;
  std::string wanted;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--policy") && i + 1 < argc) wanted = argv[++i];
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!std::strcmp(argv[i], "--copy-gbps") && i + 1 < argc) copy = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--ceiling")) ceiling = true;
    else if (!std::strcmp(argv[i], "--list")) list = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--policy NAME[,NAME...]] [--filter TEXT] [--copy-gbps G] "
                   "[--ceiling] [--list]\n",
                   argv[0]);
      return 2;
    }
  }
  const std::vector<TunePolicy>& all = tune_policies();
  if (list) {
    for (const TunePolicy& t : all)
      std::printf("%-32s %s\n  %s\n", t.name, t.what, t.values.c_str());
    return 0;
  }
  std::vector<const TunePolicy*> policies;
  if (wanted.empty()) {
    for (const TunePolicy& t : all) policies.push_back(&t);
  } else {
    for (size_t at = 0; at <= wanted.size();) {
      const size_t end = std::min(wanted.find(',', at), wanted.size());
      const std::string one = wanted.substr(at, end - at);
      at = end + 1;
      const auto hit = std::find_if(all.begin(), all.end(),
                                    [&](const TunePolicy& t) { return one == t.name; });
      if (hit == all.end()) {
        std::fprintf(stderr, "%s: no policy '%s' in this build (--list names them%s)\n", argv[0],
                     one.c_str(),
                     all.size() == 1 ? "; the variants are in tune_fused_select_variants" : "");
        return 2;
      }
      policies.push_back(&*hit);
    }
  }
  if (const cudaError_t e = cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking)) {
    std::fprintf(stderr, "%s: no CUDA stream (%s); it runs on a GPU\n", argv[0],
                 cudaGetErrorString(e));
    return 2;
  }
  for (const TunePolicy* t : policies) std::printf("policy %s: %s\n", t->name, t->values.c_str());
  if (ceiling) mix_ceiling(copy);
  bool all_ok = true;
  auto one = [&](const BenchSelectShape& s, bool random) {
    char name[96];
    std::snprintf(name, sizeof name, "W%lld r%lld reqs%lld T%lld H%lld %lld/%lld/%lld %s%s",
                  (long long)s.world, (long long)s.rank, (long long)s.reqs, (long long)s.tokens,
                  (long long)s.heads, (long long)s.dq, (long long)s.dk, (long long)s.dv,
                  s.elem == 1 ? "fp8" : "bf16", random ? " rand" : "");
    if (filter != nullptr && std::strstr(name, filter) == nullptr) return;
    all_ok &= run(name, s,
                  random ? select_random_qsl(s.reqs, s.tokens) : select_equal_qsl(s.reqs, s.tokens),
                  copy, policies);
  };
#define CATTN_TUNE_GOAL(...) one(BenchSelectShape{__VA_ARGS__}, false);
#define CATTN_TUNE_MANY(...) one(BenchSelectShape{__VA_ARGS__}, true);
  CATTN_BENCH_SELECT_GOAL_SHAPES(CATTN_TUNE_GOAL)
  CATTN_BENCH_SELECT_MANY_REQUEST_SHAPES(CATTN_TUNE_MANY)
#undef CATTN_TUNE_GOAL
#undef CATTN_TUNE_MANY
  return all_ok ? 0 : 1;
}
