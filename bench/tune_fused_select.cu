// SPDX-License-Identifier: Apache-2.0
// Tuning harness for the fused select kernel: one executable per configuration (the knobs are
// the CATTN_SELECT_* macros of kernels/fused_pcp_qkv_select.cuh), each timing the benchmark's
// shapes straight through the launcher, after the ceiling an index-free copy kernel reaches at
// the same read/write mixes. CMake builds it with the shipped knobs (target tune_fused_select);
// scripts/tune_fused_select.sh builds and runs a grid of others.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/fused_pcp_qkv_select.cuh"

using namespace cattn::kernels;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); return false; } } while (0)

static bool run(const char* name, int64_t W, int64_t r, int64_t reqs, int64_t T, int64_t H,
                int64_t dq, int64_t dk, int64_t dv, int elem, double copy_gbps) {
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
  std::vector<int32_t> h(reqs + 1);
  for (int64_t i = 0; i <= reqs; ++i) h[i] = static_cast<int32_t>(T / reqs * i / 2 * 2);
  h[reqs] = static_cast<int32_t>(T);
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
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a);
    launch_fused_pcp_qkv_select_kernel(p, dev, nullptr);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1000);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  const double bytes = double(qb) * 2 + double(half) * H * elem * ((4 * W + 1 - r) * (dk + dv));
  const double gbps = bytes / (t[t.size() / 2] * 1e3);
  std::printf("  %-38s %9.1f us %7.1f GB/s %.3f of copy\n", name, t[t.size() / 2], gbps,
              gbps / copy_gbps);
  for (char* x : {q, k, v}) cudaFree(x);
  for (int i = 0; i < 6; ++i) cudaFree(out[i]);
  cudaFree(qsl);
  return true;
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
  std::printf("unroll %d, min blocks %d, streaming %d, interleave %d, waves %d\n",
              CATTN_SELECT_UNROLL, CATTN_SELECT_MIN_BLOCKS, CATTN_SELECT_STREAMING,
              CATTN_SELECT_INTERLEAVE, CATTN_SELECT_WAVES);
  if (argc > 2 && atoi(argv[2]) != 0) mix_ceiling(copy);
  run("W2 r0 T16384 H32 D128 bf16", 2, 0, 1, 16384, 32, 128, 128, 128, 2, copy);
  run("W2 r1 T16384 H32 D128 bf16", 2, 1, 1, 16384, 32, 128, 128, 128, 2, copy);
  run("W4 r1 T49792 H8 D128 bf16", 4, 1, 8, 49792, 8, 128, 128, 128, 2, copy);
  run("W8 r3 T166880 H8 D128 bf16", 8, 3, 16, 166880, 8, 128, 128, 128, 2, copy);
  run("W4 r2 T32768 H16 192/192/128 bf16", 4, 2, 8, 32768, 16, 192, 192, 128, 2, copy);
  run("W4 r1 T32768 H16 192/192/128 fp8", 4, 1, 8, 32768, 16, 192, 192, 128, 1, copy);
  run("W4 r1 T32768 H128 192/192/128 bf16", 4, 1, 8, 32768, 128, 192, 192, 128, 2, copy);
  run("W8 r5 T16384 H128 192/192/128 bf16", 8, 5, 4, 16384, 128, 192, 192, 128, 2, copy);
  run("W4 r1 T4096 H8 D128 reqs512 bf16", 4, 1, 512, 4096, 8, 128, 128, 128, 2, copy);
  return 0;
}
