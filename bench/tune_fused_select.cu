// SPDX-License-Identifier: Apache-2.0
// Tuning harness for the fused select kernel: one executable per configuration (the knobs are
// the CATTN_SELECT_* macros of kernels/fused_pcp_qkv_select.cuh), each timing the benchmark's
// shapes (bench/select_shapes.h: the goal shapes, then the many-request class) straight through
// the launcher, next to a cudaMemcpyAsync of the same traffic timed in the same run, after the
// ceiling an index-free copy kernel reaches at the same read/write mixes. Every shape of up to
// 1 GiB is checked byte for byte against a host computation of the select, so a configuration
// that is fast but wrong shows up as such. CMake builds it with the shipped knobs (target
// tune_fused_select); scripts/tune_fused_select.sh builds and runs a grid of others.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/select_shapes.h"
#include "kernels/fused_pcp_qkv_select.cuh"

using namespace cattn::kernels;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); return false; } } while (0)

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

static bool run(const char* name, const BenchSelectShape& s, const std::vector<int32_t>& h,
                double copy_gbps) {
  const int64_t W = s.world, r = s.rank, reqs = s.reqs, T = s.tokens, H = s.heads, dq = s.dq,
                dk = s.dk, dv = s.dv;
  const int elem = s.elem;
  const int64_t half = T / 2;
  const size_t qb = T * H * dq * elem, kb = W * T * H * dk * elem, vb = W * T * H * dv * elem;
  const size_t out_b[6] = {qb / 2, qb / 2, size_t(half * (r + 1) * H * dk * elem),
                           size_t(half * (2 * W - r) * H * dk * elem),
                           size_t(half * (r + 1) * H * dv * elem),
                           size_t(half * (2 * W - r) * H * dv * elem)};
  char *q, *k, *v, *out[6];
  int32_t* qsl;
  CK(cudaMalloc(&q, qb)); CK(cudaMalloc(&k, kb)); CK(cudaMalloc(&v, vb));
  for (int i = 0; i < 6; ++i) {
    CK(cudaMalloc(&out[i], out_b[i]));
    CK(cudaMemset(out[i], 0xee, out_b[i]));
  }
  // Distinct bytes per position so that a misplaced row cannot compare equal.
  {
    std::vector<uint32_t> pat(size_t{16} << 20);
    for (size_t i = 0; i < pat.size(); ++i) pat[i] = static_cast<uint32_t>(i * 2654435761u);
    for (char* base : {q, k, v}) {
      const size_t n = base == q ? qb : base == k ? kb : vb;
      for (size_t done = 0; done < n;) {
        const size_t c = std::min(n - done, pat.size() * 4);
        CK(cudaMemcpy(base + done, pat.data(), c, cudaMemcpyHostToDevice));
        pat[0] += 7;
        done += c;
      }
    }
  }
  CK(cudaMalloc(&qsl, 4 * (reqs + 1)));
  CK(cudaMemcpy(qsl, h.data(), 4 * (reqs + 1), cudaMemcpyHostToDevice));
  auto params = [&](char* const* o) {
    FusedSelectParams p;
    auto op = [&](char* src, int64_t d, char* hd, char* tl) {
      SelectOperand x;
      x.src = src; x.src_rows = (src == q ? T : W * T); x.src_row_stride = H * d * elem;
      x.src_head_stride = d * elem; x.head_bytes = d * elem;
      x.dst_head = hd; x.dst_head_rows = src == q ? half : half * (r + 1);
      x.dst_tail = tl; x.dst_tail_rows = src == q ? half : half * (2 * W - r);
      return x;
    };
    p.q = op(q, dq, o[0], o[1]); p.k = op(k, dk, o[2], o[3]); p.v = op(v, dv, o[4], o[5]);
    p.query_start_loc.data = qsl; p.query_start_loc.step[0] = 1; p.query_start_loc.size[0] = reqs + 1;
    p.num_reqs = reqs; p.world = W; p.rank = r; p.heads = static_cast<int32_t>(H);
    return p;
  };
  const FusedSelectParams p = params(out);
  DeviceShape dev;
  cudaDeviceGetAttribute(&dev.sm_count, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&dev.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0);
  cudaDeviceGetAttribute(&dev.cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  auto select = [&] { launch_fused_pcp_qkv_select_kernel(p, dev, g_stream); };
  const double us = median_us(select);
  const double b2b_us = back_to_back_us(select);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const double bytes = select_traffic_bytes(h, s);
  const char* verdict = "unchecked";
  const size_t all_b = qb + kb + vb + out_b[0] + out_b[1] + out_b[2] + out_b[3] + out_b[4] + out_b[5];
  if (all_b <= (size_t{1} << 30)) {
    char* in[3] = {q, k, v};
    const size_t in_b[3] = {qb, kb, vb};
    const char* bad = check_outputs(s, h, in, in_b, out, out_b);
    verdict = bad == nullptr ? "ok" : bad;
  }
  for (char* x : {q, k, v}) cudaFree(x);
  for (int i = 0; i < 6; ++i) cudaFree(out[i]);
  cudaFree(qsl);
  // The same traffic moved by cudaMemcpyAsync (half read, half written), in the same run.
  const size_t n = static_cast<size_t>(bytes / 2) / 16 * 16;
  char *a, *b;
  CK(cudaMalloc(&a, n)); CK(cudaMalloc(&b, n));
  CK(cudaMemset(a, 0x5a, n));
  auto copy = [&] { cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, g_stream); };
  const double memcpy_us = median_us(copy);
  const double b2b_memcpy_us = back_to_back_us(copy);
  CK(cudaGetLastError());
  cudaFree(a); cudaFree(b);
  const double gbps = bytes / (us * 1e3);
  std::printf("  %-44s %9.2f us %7.1f GB/s %.3f of copy | memcpy %9.2f us, %.3f of it | "
              "b2b %9.2f us, memcpy %9.2f us, %.3f | %s%s\n",
              name, us, gbps, gbps / copy_gbps, memcpy_us, memcpy_us / us, b2b_us, b2b_memcpy_us,
              b2b_memcpy_us / b2b_us, verdict[0] == 'o' || verdict[0] == 'u' ? "" : "MISMATCH in ", verdict);
  return verdict[0] == 'o' || verdict[0] == 'u';
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
  const double copy = argc > 1 ? atof(argv[1]) : 4218.0;
  if (cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking) != cudaSuccess) return 2;
  std::printf("unroll %d, min blocks %d, streaming %d, interleave %d, waves %d, search %d, "
              "prefetch %d, rows %d, narrow %d, joint %d, chunk %d, pdl %d\n",
              CATTN_SELECT_UNROLL, CATTN_SELECT_MIN_BLOCKS, CATTN_SELECT_STREAMING,
              CATTN_SELECT_INTERLEAVE, CATTN_SELECT_WAVES, CATTN_SELECT_SEARCH,
              CATTN_SELECT_PREFETCH, CATTN_SELECT_ROWS, CATTN_SELECT_NARROW,
              CATTN_SELECT_JOINT, CATTN_SELECT_CHUNK, CATTN_SELECT_PDL);
  if (argc > 2 && atoi(argv[2]) != 0) mix_ceiling(copy);
  // argv[3]: a substring the shape's name must hold (e.g. "rand" for the many-request class).
  const char* filter = argc > 3 ? argv[3] : nullptr;
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
                  copy);
  };
#define CATTN_TUNE_GOAL(...) one(BenchSelectShape{__VA_ARGS__}, false);
#define CATTN_TUNE_MANY(...) one(BenchSelectShape{__VA_ARGS__}, true);
  CATTN_BENCH_SELECT_GOAL_SHAPES(CATTN_TUNE_GOAL)
  CATTN_BENCH_SELECT_MANY_REQUEST_SHAPES(CATTN_TUNE_MANY)
#undef CATTN_TUNE_GOAL
#undef CATTN_TUNE_MANY
  return all_ok ? 0 : 1;
}
