// Copy-kernel ceilings on the device: how close plain SM copy kernels of several shapes come to
// cudaMemcpy, at the sizes the fused select moves. A tuning aid (built by hand with nvcc), not a
// benchmark of libcattn.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

// Warp per 8 KiB row, rows interleaved across warps, 4 vectors in flight per lane.
template <int kUnroll>
__global__ void __launch_bounds__(256) rows_kernel(const uint4* __restrict__ s, uint4* d,
                                                   int64_t rows) {
  constexpr int kVec = 8192 / 16;
  const int lane = threadIdx.x & 31;
  const int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) >> 5;
  const int64_t warps = (gridDim.x * int64_t{blockDim.x}) >> 5;
  for (int64_t r = warp; r < rows; r += warps)
    for (int b = lane; b < kVec; b += 32 * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = s[r * kVec + b + u * 32];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) d[r * kVec + b + u * 32] = v[u];
    }
}

// Flat grid-stride over vectors, kUnroll grid-strides in flight.
template <int kUnroll>
__global__ void flat_kernel(const uint4* __restrict__ s, uint4* d, int64_t n) {
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t T = gridDim.x * int64_t{blockDim.x};
  int64_t i = t;
  for (; i + (kUnroll - 1) * T < n; i += kUnroll * T) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = s[i + u * T];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) d[i + u * T] = v[u];
  }
  for (; i < n; i += T) d[i] = s[i];
}

// Block per contiguous 64 KiB tile, tiles interleaved across blocks.
__global__ void __launch_bounds__(512) tile_kernel(const uint4* __restrict__ s, uint4* d,
                                                   int64_t tiles) {
  constexpr int kVec = 65536 / 16;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x)
    for (int b = threadIdx.x; b < kVec; b += 512 * 4) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) v[u] = s[t * kVec + b + u * 512];
#pragma unroll
      for (int u = 0; u < 4; ++u) d[t * kVec + b + u * 512] = v[u];
    }
}

double time_us(const std::function<void()>& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 23; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1000);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t big = size_t{2} << 30;
  char *src, *dst;
  cudaMalloc(&src, big);
  cudaMalloc(&dst, big);
  cudaMemset(src, 0x5a, big);
  const double ref = 2.0 * big / (time_us([&] { cudaMemcpyAsync(dst, src, big, cudaMemcpyDeviceToDevice); }) * 1e3);
  std::printf("cudaMemcpy 2 GiB: %.1f GB/s (reference)\n", ref);
  for (size_t n : {size_t{512} << 20, size_t{2} << 30}) {
    const auto* s = reinterpret_cast<const uint4*>(src);
    auto* d = reinterpret_cast<uint4*>(dst);
    const int64_t vec = n / 16;
    auto report = [&](const char* name, double us) {
      const double g = 2.0 * n / (us * 1e3);
      std::printf("  %4zu MiB %-44s %8.1f us %7.1f GB/s %.3f\n", n >> 20, name, us, g, g / ref);
    };
    report("cudaMemcpy", time_us([&] { cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice); }));
    report("rows 8K, warp/row, unroll 4, 8 blk/SM", time_us([&] { rows_kernel<4><<<sms * 8, 256>>>(s, d, n / 8192); }));
    report("rows 8K, warp/row, unroll 4, 4 blk/SM", time_us([&] { rows_kernel<4><<<sms * 4, 256>>>(s, d, n / 8192); }));
    report("rows 8K, warp/row, unroll 8, 4 blk/SM", time_us([&] { rows_kernel<8><<<sms * 4, 256>>>(s, d, n / 8192); }));
    report("rows 8K, warp/row, unroll 2, 8 blk/SM", time_us([&] { rows_kernel<2><<<sms * 8, 256>>>(s, d, n / 8192); }));
    report("flat, unroll 4, 8x256/SM", time_us([&] { flat_kernel<4><<<sms * 8, 256>>>(s, d, vec); }));
    report("flat, unroll 2, 2x1024/SM", time_us([&] { flat_kernel<2><<<sms * 2, 1024>>>(s, d, vec); }));
    report("flat, unroll 1, one thread per vector", time_us([&] { flat_kernel<1><<<(vec + 255) / 256, 256>>>(s, d, vec); }));
    report("tile 64K per block, 512 thr, 4x/SM", time_us([&] { tile_kernel<<<sms * 4, 512>>>(s, d, n / 65536); }));
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
