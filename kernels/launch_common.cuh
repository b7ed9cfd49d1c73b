// SPDX-License-Identifier: Apache-2.0
// Launch helpers every kernel shares: the block size, the access-width table and the dispatch
// to the widest width a copy allows, grid-stride indexing, and the grid sizes - each cap with
// its reason. Kernels and launchers take these from here, never their own copies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

// Threads per block of every kernel but the single-block ones. 8 warps: a row-per-warp block
// covers 8 rows, and 8 such blocks (2048 threads, the most an SM holds on sm_80 and sm_90) fill
// an SM when registers allow.
constexpr int kBlockThreads = 256;
constexpr int kBlockWarps = kBlockThreads / 32;

// Waves of resident blocks a row-per-warp copy may launch before its warps loop over rows.
// Blocks are issued in order as earlier ones retire, so short-lived blocks keep the rows in
// flight in one compact window sweeping memory, while one wave of long-lived warps drifts
// apart; 64 waves is where the fused select and the restore reach their copy-bandwidth
// fraction (docs/performance-history.md has the measurements).
constexpr int kRowWaves = 64;

// The unsigned integer type of each access width: copy kernels move bytes, so one
// instantiation per width serves every element type (fp8 to fp64).
template <int kBytes> struct VecOf;
template <> struct VecOf<16> { using T = uint4; };
template <> struct VecOf<8> { using T = uint2; };
template <> struct VecOf<4> { using T = uint32_t; };
template <> struct VecOf<2> { using T = uint16_t; };
template <> struct VecOf<1> { using T = uint8_t; };

inline bool aligned_to(const void* p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) == 0;
}

// Calls launch(std::integral_constant<int, W>()) with the widest W of 16, 8, 4, 2, 1 bytes for
// which allows(W) holds (every pointer, stride and row size of the copy a multiple of W);
// width 1 always serves.
template <class Allows, class Launch>
cudaError_t dispatch_widest(Allows allows, Launch launch) {
  if (allows(16)) return launch(std::integral_constant<int, 16>());
  if (allows(8)) return launch(std::integral_constant<int, 8>());
  if (allows(4)) return launch(std::integral_constant<int, 4>());
  if (allows(2)) return launch(std::integral_constant<int, 2>());
  return launch(std::integral_constant<int, 1>());
}

// Grid-stride indexing: this thread's first index and the distance to its next.
__device__ __forceinline__ int64_t grid_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Runs over i = first, first + stride, ... < n in rounds of kBatch: gather(i) for the whole
// round, its loads in flight together, then scatter(i, gathered). A loop that loads and stores
// in each iteration otherwise waits out every load's latency in turn, since the compiler cannot
// move a load above an earlier store through a pointer that may alias it.
template <int kBatch, class Gather, class Scatter>
__device__ __forceinline__ void batched_for(int64_t first, int64_t n, int64_t stride,
                                            Gather gather, Scatter scatter) {
  using V = decltype(gather(first));
  for (int64_t base = first; base < n; base += kBatch * stride) {
    V v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (base + u * stride < n) v[u] = gather(base + u * stride);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (base + u * stride < n) scatter(base + u * stride, v[u]);
  }
}

// The blocks that work on one product: block `block` of `blocks`. A kernel of its own hands its
// whole grid to the product; the step plan's kernel hands each product a range of its blocks.
struct BlockSlice {
  int64_t block = 0, blocks = 1;
  __device__ int64_t thread() const { return block * blockDim.x + threadIdx.x; }
  __device__ int64_t threads() const { return blocks * blockDim.x; }
};
__device__ __forceinline__ BlockSlice whole_grid() { return {blockIdx.x, gridDim.x}; }

// Programmatic dependent launch (sm_90). A kernel launched with `dependent` set may be
// scheduled while the previous kernel on its stream finishes; it must call
// wait_for_prior_grids() before it touches global memory (the call returns once that kernel
// has completed and its writes are visible), and it calls allow_dependent_grids() to let the
// next such kernel be scheduled once every one of its own blocks has made that call (or
// exited). Both are no-ops before sm_90 and in a launch without the attribute.
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches `kernel(params)` with `blocks` blocks of kBlockThreads on `stream`, as a dependent
// launch when `dependent` (the caller checks the device is sm_90 or newer).
template <class Params>
cudaError_t launch_row_kernel(void (*kernel)(Params), unsigned blocks, cudaStream_t stream,
                              bool dependent, const Params& params) {
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(kBlockThreads);
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, params);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The reduction operator of a block-wide maximum (cub::BlockReduce).
struct MaxOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};

inline unsigned grid_size(int64_t blocks) {
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 0x7fffffff ? 0x7fffffff : blocks));
}

// Elementwise kernels (a thread per element, grid-stride loop): at most one wave of resident
// blocks. More would only queue behind the first wave, and their work is a few loads each.
inline unsigned elementwise_grid(int64_t n, const DeviceShape& dev) {
  const int64_t per_sm = dev.max_threads_per_sm / kBlockThreads > 0
                             ? dev.max_threads_per_sm / kBlockThreads
                             : 1;
  const int64_t wave = static_cast<int64_t>(dev.sm_count) * per_sm;
  const int64_t want = ceil_div(n, kBlockThreads);
  return grid_size(want < wave ? want : wave);
}

// Launches an elementwise kernel over n elements on `stream` (a cudaStream_t); nothing for
// n <= 0.
template <class Params>
cudaError_t launch_elementwise(void (*kernel)(Params), int64_t n, const DeviceShape& dev,
                               void* stream, const Params& p) {
  if (n <= 0) return cudaSuccess;
  kernel<<<elementwise_grid(n, dev), kBlockThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

// Segment-walk kernels (segment_walk.cuh): every block re-scans the segment lengths, so a
// block takes at least 4 outputs per thread and the grid at most half a wave, which keeps the
// re-scans a small share of the work.
inline unsigned segment_walk_grid(int64_t n, const DeviceShape& dev) {
  const int64_t per_sm = dev.max_threads_per_sm / kBlockThreads > 0
                             ? dev.max_threads_per_sm / kBlockThreads
                             : 1;
  const int64_t half_wave = static_cast<int64_t>(dev.sm_count) * per_sm / 2;
  const int64_t want = ceil_div(n, 4 * kBlockThreads);
  return grid_size(want < half_wave ? want : half_wave);
}

// Blocks of `kKernel` (launched with kBlockThreads threads) that fit on one SM at once, asked
// of the runtime once per kernel: it depends on the kernel's registers and the architecture,
// the same for every device of one build target.
template <auto kKernel>
int resident_blocks_per_sm() {
  static const int n = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kKernel, kBlockThreads, 0) !=
            cudaSuccess ||
        b < 1) {
      (void)cudaGetLastError();
      b = 1;
    }
    return b;
  }();
  return n;
}

// Row-per-warp kernels: a warp per row, up to `waves` waves of resident blocks of `kKernel`
// (kRowWaves for the copies; the warps loop over the rows past that; 0 = no cap, a tuning
// setting only).
template <auto kKernel>
unsigned row_per_warp_grid(int64_t rows, const DeviceShape& dev, int64_t waves) {
  const int64_t want = ceil_div(rows, kBlockWarps);
  if (waves <= 0) return grid_size(want);
  const int64_t cap =
      static_cast<int64_t>(dev.sm_count) * resident_blocks_per_sm<kKernel>() * waves;
  return grid_size(want < cap ? want : cap);
}

}  // namespace kernels
}  // namespace cattn
