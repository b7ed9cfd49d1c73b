// Tuning harness for the fused select kernel: one executable per configuration (the knobs are
// the CATTN_SELECT_* macros of kernels/fused_pcp_qkv_select.cuh), each timing the baseline's
// shapes straight through the launcher. scripts/tune_fused_select.sh builds and runs the grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/fused_pcp_qkv_select.cu"

using namespace cattn::kernels;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); return; } } while (0)

static void run(const char* name, int64_t W, int64_t r, int64_t reqs, int64_t T, int64_t H,
                int64_t dq, int64_t dk, int64_t dv, int elem, double copy_gbps) {
  const int64_t half = T / 2;
  const size_t qb = T * H * dq * elem, kb = W * T * H * dk * elem, vb = W * T * H * dv * elem;
  char *q, *k, *v, *qh, *qt, *kh, *kt, *vh, *vt;
  int32_t* qsl;
  CK(cudaMalloc(&q, qb)); CK(cudaMalloc(&k, kb)); CK(cudaMalloc(&v, vb));
  CK(cudaMalloc(&qh, qb / 2)); CK(cudaMalloc(&qt, qb / 2));
  CK(cudaMalloc(&kh, half * (r + 1) * H * dk * elem)); CK(cudaMalloc(&kt, half * (2 * W - r) * H * dk * elem));
  CK(cudaMalloc(&vh, half * (r + 1) * H * dv * elem)); CK(cudaMalloc(&vt, half * (2 * W - r) * H * dv * elem));
  CK(cudaMemset(q, 0x3b, qb)); CK(cudaMemset(k, 0x4c, kb)); CK(cudaMemset(v, 0x5d, vb));
  std::vector<int32_t> h(reqs + 1);
  for (int64_t i = 0; i <= reqs; ++i) h[i] = static_cast<int32_t>(T / reqs * i / 2 * 2);
  h[reqs] = static_cast<int32_t>(T);
  CK(cudaMalloc(&qsl, 4 * (reqs + 1)));
  CK(cudaMemcpy(qsl, h.data(), 4 * (reqs + 1), cudaMemcpyHostToDevice));
  FusedSelectParams p;
  auto op = [&](char* src, int64_t d, char* hd, char* tl) {
    SelectOperand o;
    o.src = src; o.src_rows = (src == q ? T : W * T); o.src_row_stride = H * d * elem;
    o.src_head_stride = d * elem; o.head_bytes = d * elem;
    o.dst_head = hd; o.dst_head_rows = src == q ? half : half * (r + 1);
    o.dst_tail = tl; o.dst_tail_rows = src == q ? half : half * (2 * W - r);
    return o;
  };
  p.q = op(q, dq, qh, qt); p.k = op(k, dk, kh, kt); p.v = op(v, dv, vh, vt);
  p.query_start_loc.data = qsl; p.query_start_loc.step = 1; p.query_start_loc.size = reqs + 1;
  p.num_reqs = reqs; p.world = W; p.rank = r; p.heads = static_cast<int32_t>(H);
  DeviceShape dev;
  cudaDeviceGetAttribute(&dev.sm_count, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a);
    launch_fused_pcp_qkv_select(p, dev, nullptr);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1000);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  const double bytes = double(qb) * 2 + double(half) * H * elem * ((4 * W + 1 - r) * (dk + dv));
  const double gbps = bytes / (t[t.size() / 2] * 1e3);
  std::printf("  %-34s %9.1f us %7.1f GB/s %.3f of copy\n", name, t[t.size() / 2], gbps,
              gbps / copy_gbps);
  for (char* x : {q, k, v, qh, qt, kh, kt, vh, vt}) cudaFree(x);
  cudaFree(qsl);
}

int main(int argc, char** argv) {
  const double copy = argc > 1 ? atof(argv[1]) : 4218.0;
  std::printf("unroll %d, min blocks %d, streaming %d, interleave %d\n", CATTN_SELECT_UNROLL,
              CATTN_SELECT_MIN_BLOCKS, CATTN_SELECT_STREAMING, CATTN_SELECT_INTERLEAVE);
  run("W2 r0 T16384 H32 D128 bf16", 2, 0, 1, 16384, 32, 128, 128, 128, 2, copy);
  run("W4 r2 T32768 H16 192/192/128 bf16", 4, 2, 8, 32768, 16, 192, 192, 128, 2, copy);
  run("W4 r1 T32768 H16 192/192/128 fp8", 4, 1, 8, 32768, 16, 192, 192, 128, 1, copy);
  run("W4 r1 T49792 H8 D128 bf16", 4, 1, 8, 49792, 8, 128, 128, 128, 2, copy);
  return 0;
}
