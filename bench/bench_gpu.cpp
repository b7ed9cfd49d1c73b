// GPU benchmark of libcattn's CUDA paths, timed with CUDA events: the median of repeated launches
// over rotating input sets (so small cases are not served from L2), against the measured
// device-to-device copy bandwidth. Traffic is counted exactly: every byte a correct kernel must
// read once plus every byte it must write once.
//
//   bench_gpu [--reps N] [--filter SUBSTRING]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cattn.h"

namespace {

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)
#define CATTN_CK(x)                                                                    \
  do {                                                                                 \
    cattn_status_t s_ = (x);                                                           \
    if (s_ != CATTN_OK) {                                                              \
      std::fprintf(stderr, "%s: %s\n", cattn_status_string(s_), cattn_last_error_message()); \
      std::exit(3);                                                                    \
    }                                                                                  \
  } while (0)

int g_reps = 30;
const char* g_filter = nullptr;

// Device buffer filled with pseudo-random bytes (never zeros: they can run faster than data).
struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t n) : bytes(n) {
    CK(cudaMalloc(&p, n ? n : 1));
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
      CK(cudaMemcpy(static_cast<char*>(p) + done, pattern.data(), c, cudaMemcpyHostToDevice));
      done += c;
    }
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

struct Tensor {
  std::vector<int64_t> shape;
  DLTensor t{};
  Tensor(void* data, std::vector<int64_t> s, DLDataType dt) : shape(std::move(s)) {
    t.data = data;
    t.device = {kDLCUDA, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dt;
    t.shape = shape.data();
  }
  Tensor(const Tensor& o) : shape(o.shape), t(o.t) { t.shape = shape.data(); }
};

// Median time in microseconds of `launch` over g_reps runs (after warm-up), each timed alone.
double median_us(cudaStream_t s, const std::function<void(int)>& launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch(i);
  std::vector<float> t;
  for (int i = 0; i < g_reps; ++i) {
    CK(cudaEventRecord(a, s));
    launch(i);
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f);
  }
  CK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

double copy_gbps(cudaStream_t s) {
  const size_t n = size_t{2} << 30;
  DevBuf src(n), dst(n);
  const double us = median_us(s, [&](int) {
    CK(cudaMemcpyAsync(dst.p, src.p, n, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * n / (us * 1e3);
}

bool wanted(const std::string& name) {
  return g_filter == nullptr || name.find(g_filter) != std::string::npos;
}

void row(const std::string& name, double us, double bytes, double copy) {
  const double gbps = bytes / (us * 1e3);
  std::printf("| %-58s | %10.2f | %8.1f | %6.3f |\n", name.c_str(), us, gbps,
              copy > 0 ? gbps / copy : 0.0);
  std::fflush(stdout);
}

// One fused select shape: W, r, requests of equal length, local tokens T, heads, dims, bytes.
void bench_fused_select(cudaStream_t s, double copy, int64_t W, int64_t r, int64_t reqs,
                        int64_t T, int64_t H, int64_t dq, int64_t dk, int64_t dv, int elem,
                        const char* dtype_name) {
  char name[160];
  std::snprintf(name, sizeof name, "fused_pcp_qkv_select W%lld r%lld reqs%lld T%lld H%lld D%lld/%lld/%lld %s",
                (long long)W, (long long)r, (long long)reqs, (long long)T, (long long)H,
                (long long)dq, (long long)dk, (long long)dv, dtype_name);
  if (!wanted(name)) return;
  const DLDataType dt{kDLUInt, static_cast<uint8_t>(elem * 8), 1};
  const int64_t half_total = T / 2;
  const size_t qb = size_t(T) * H * dq * elem, kb = size_t(W) * T * H * dk * elem,
               vb = size_t(W) * T * H * dv * elem;
  const double bytes = double(qb) * 2 + double(half_total) * H * elem *
                                            ((2 * W - r) * (dk + dv) + (2 * W + 1) * (dk + dv));
  // Rotate input sets until the working set is well past L2 (or memory says stop).
  const size_t per_set = qb + kb + vb;
  const int sets = static_cast<int>(std::max<size_t>(1, std::min<size_t>(8, (size_t(400) << 20) / per_set)));
  std::vector<std::unique_ptr<DevBuf>> q, k, v;
  for (int i = 0; i < sets; ++i) {
    q.emplace_back(new DevBuf(qb));
    k.emplace_back(new DevBuf(kb));
    v.emplace_back(new DevBuf(vb));
  }
  std::vector<int32_t> qsl_h(reqs + 1);
  for (int64_t i = 0; i <= reqs; ++i) qsl_h[i] = static_cast<int32_t>(T / reqs * i / 2 * 2);
  qsl_h[reqs] = static_cast<int32_t>(T);
  DevBuf qsl(sizeof(int32_t) * (reqs + 1));
  CK(cudaMemcpy(qsl.p, qsl_h.data(), sizeof(int32_t) * (reqs + 1), cudaMemcpyHostToDevice));
  DevBuf qh(qb / 2), qt(qb / 2), kh(size_t(half_total) * (r + 1) * H * dk * elem),
      kt(size_t(half_total) * (2 * W - r) * H * dk * elem),
      vh(size_t(half_total) * (r + 1) * H * dv * elem),
      vt(size_t(half_total) * (2 * W - r) * H * dv * elem);
  Tensor qsl_t(qsl.p, {reqs + 1}, {kDLInt, 32, 1});
  Tensor qh_t(qh.p, {half_total, H, dq}, dt), qt_t(qt.p, {half_total, H, dq}, dt);
  Tensor kh_t(kh.p, {half_total * (r + 1), H, dk}, dt), kt_t(kt.p, {half_total * (2 * W - r), H, dk}, dt);
  Tensor vh_t(vh.p, {half_total * (r + 1), H, dv}, dt), vt_t(vt.p, {half_total * (2 * W - r), H, dv}, dt);
  std::vector<Tensor> qs, ks, vs;
  for (int i = 0; i < sets; ++i) {
    qs.emplace_back(q[i]->p, std::vector<int64_t>{T, H, dq}, dt);
    ks.emplace_back(k[i]->p, std::vector<int64_t>{W * T, H, dk}, dt);
    vs.emplace_back(v[i]->p, std::vector<int64_t>{W * T, H, dv}, dt);
  }
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.query_start_loc = &qsl_t.t;
  a.pcp_world_size = W;
  a.pcp_rank = r;
  a.q_head = &qh_t.t;
  a.q_tail = &qt_t.t;
  a.k_head = &kh_t.t;
  a.k_tail = &kt_t.t;
  a.v_head = &vh_t.t;
  a.v_tail = &vt_t.t;
  a.stream = reinterpret_cast<cattn_stream_t>(s);
  const double us = median_us(s, [&](int i) {
    a.q = &qs[i % sets].t;
    a.k = &ks[i % sets].t;
    a.v = &vs[i % sets].t;
    CATTN_CK(cattn_fused_pcp_qkv_select(&a));
  });
  row(name, us, bytes, copy);
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) g_filter = argv[++i];
  }
  int32_t n = 0;
  CATTN_CK(cattn_cuda_device_count(&n));
  if (n == 0) {
    std::printf("bench_gpu: no CUDA device; nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double copy = copy_gbps(s);
  std::printf("device: %s, %d SMs; measured device-to-device copy: %.1f GB/s (read + write)\n\n",
              prop.name, prop.multiProcessorCount, copy);
  std::printf("| %-58s | %10s | %8s | %6s |\n", "case", "us", "GB/s", "copy");
  std::printf("|%s|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(8, '-').c_str());
  // The seed baseline's shapes, then MLA and fp8.
  bench_fused_select(s, copy, 2, 0, 1, 16384, 32, 128, 128, 128, 2, "bf16");
  bench_fused_select(s, copy, 2, 1, 1, 16384, 32, 128, 128, 128, 2, "bf16");
  bench_fused_select(s, copy, 4, 1, 8, 49792, 8, 128, 128, 128, 2, "bf16");
  bench_fused_select(s, copy, 8, 3, 16, 166880, 8, 128, 128, 128, 2, "bf16");
  bench_fused_select(s, copy, 4, 2, 8, 32768, 16, 192, 192, 128, 2, "bf16");
  bench_fused_select(s, copy, 4, 1, 8, 32768, 16, 192, 192, 128, 1, "fp8");
  bench_fused_select(s, copy, 4, 1, 8, 32768, 128, 192, 192, 128, 2, "bf16");
  bench_fused_select(s, copy, 8, 5, 4, 16384, 128, 192, 192, 128, 2, "bf16");
  CK(cudaStreamDestroy(s));
  return 0;
}
