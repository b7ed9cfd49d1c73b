// SPDX-License-Identifier: Apache-2.0
// Kernels around the PCP all-gather. Both are plain byte movers, so one instantiation per access
// width serves every element type (bf16, fp8, ...): the launcher picks the widest width that
// every pointer, stride and row size allows.
//  - pack: strided key[:n] / value[:n] -> compact rows in this rank's slot of the gathered
//    buffer, for the in-place all-gather;
//  - restore: out[i] = gathered[restore_idx[i]] for key and value together, one warp per output
//    row (the index is loaded once, the key and value rows are in flight together), rows
//    interleaved across warps so the grid sweeps the outputs front to back. A launch may take
//    only this rank's own rows (read from what it sent) or only the others'.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/pcp_kv_allgather_and_restore.h"

namespace cattn {
namespace kernels {
namespace {

constexpr int kThreads = kBlockThreads;

// A warp copies `n` vectors; each lane issues four loads before its stores so that enough
// memory traffic is in flight per warp.
template <int kBytes>
__device__ __forceinline__ void warp_copy(char* dst, const char* src, int64_t n, int lane,
                                          int64_t from = 0) {
  using V = typename VecOf<kBytes>::T;
  const V* s = reinterpret_cast<const V*>(src);
  V* d = reinterpret_cast<V*>(dst);
  int64_t i = from + lane;
  for (; i + 96 < n; i += 128) {
    const V a = s[i], b = s[i + 32], c = s[i + 64], e = s[i + 96];
    d[i] = a;
    d[i + 32] = b;
    d[i + 64] = c;
    d[i + 96] = e;
  }
  for (; i < n; i += 32) d[i] = s[i];
}

// Two rows at once (a key row and its value row): eight loads in flight per lane before the
// stores, twice what one row at a time keeps.
template <int kBytes>
__device__ __forceinline__ void warp_copy_pair(char* d1, const char* s1, int64_t n1, char* d2,
                                               const char* s2, int64_t n2, int lane) {
  using V = typename VecOf<kBytes>::T;
  const V* a = reinterpret_cast<const V*>(s1);
  const V* b = reinterpret_cast<const V*>(s2);
  V* x = reinterpret_cast<V*>(d1);
  V* y = reinterpret_cast<V*>(d2);
  const int64_t n = n1 < n2 ? n1 : n2;
  int64_t i = lane;
  for (; i + 96 < n; i += 128) {
    V r[8];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      r[u] = a[i + 32 * u];
      r[4 + u] = b[i + 32 * u];
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      x[i + 32 * u] = r[u];
      y[i + 32 * u] = r[4 + u];
    }
  }
  warp_copy<kBytes>(d1, s1, n1, lane, i - lane);
  warp_copy<kBytes>(d2, s2, n2, lane, i - lane);
}

template <int kBytes>
__device__ __forceinline__ void warp_zero(char* dst, int64_t n, int lane) {
  using V = typename VecOf<kBytes>::T;
  V* d = reinterpret_cast<V*>(dst);
  const V z{};
  for (int64_t i = lane; i < n; i += 32) d[i] = z;
}

template <int kBytes>
__global__ void __launch_bounds__(kThreads) pcp_kv_restore_kernel(const RestoreParams p) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * kThreads) >> 5;
  const int64_t kvec = p.key.row_bytes / kBytes;
  const int64_t vvec = p.value.row_bytes / kBytes;
  for (int64_t i = warp; i < p.restore_idx.size[0]; i += warps) {
    const int64_t g = load_index(p.restore_idx, i);
    char* kout = p.key.out + i * p.key.row_bytes;
    char* vout = p.value.out + i * p.value.row_bytes;
    if (g >= 0 && g < p.total_rows) {
      const bool mine = g / p.per_rank == p.rank;
      if (p.own == kRestoreOwnOnly) {
        if (mine) {
          const int64_t j = g - p.rank * p.per_rank;
          warp_copy_pair<kBytes>(kout, p.own_key + j * p.key.row_bytes, kvec, vout,
                                 p.own_value + j * p.value.row_bytes, vvec, lane);
        }
      } else if (!(mine && p.own == kRestoreOwnSkip)) {
        warp_copy_pair<kBytes>(kout, p.key.gathered + g * p.key.row_bytes, kvec, vout,
                               p.value.gathered + g * p.value.row_bytes, vvec, lane);
      }
    } else if (p.own != kRestoreOwnOnly) {
      // Checking the index on the host would need a sync; a zero row is the documented answer.
      warp_zero<kBytes>(kout, kvec, lane);
      warp_zero<kBytes>(vout, vvec, lane);
    }
  }
}

// Offset of run j of a pack operand (row-major multi-index over its sizes).
__device__ __forceinline__ int64_t run_offset(const PackOperand& o, int64_t j) {
  int64_t off = 0;
  for (int d = o.ndim - 1; d >= 0; --d) {
    const int64_t s = o.sizes[d];
    off += (j % s) * o.strides[d];
    j /= s;
  }
  return off;
}

// blockIdx.y picks the operand. Runs of at least a warp's worth of vectors get a warp each;
// shorter runs (a strided last dimension, tiny heads) get a thread each, so lanes do not idle.
template <int kBytes>
__global__ void __launch_bounds__(kThreads) pcp_kv_pack_kernel(const PackParams p) {
  using V = typename VecOf<kBytes>::T;
  const PackOperand& o = p.op[blockIdx.y];
  const int64_t nvec = o.run_bytes / kBytes;
  const int64_t thread = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t threads = static_cast<int64_t>(gridDim.x) * kThreads;
  if (nvec >= 32) {
    const int lane = threadIdx.x & 31;
    for (int64_t j = thread >> 5; j < o.runs; j += threads >> 5)
      warp_copy<kBytes>(o.dst + j * o.run_bytes, o.src + run_offset(o, j), nvec, lane);
  } else {
    for (int64_t j = thread; j < o.runs; j += threads) {
      const V* s = reinterpret_cast<const V*>(o.src + run_offset(o, j));
      V* d = reinterpret_cast<V*>(o.dst + j * o.run_bytes);
      for (int64_t k = 0; k < nvec; ++k) d[k] = s[k];
    }
  }
}

bool restore_allows(const RestoreParams& p, int64_t w) {
  for (const RestoreOperand* o : {&p.key, &p.value})
    if (o->row_bytes % w != 0 || !aligned_to(o->gathered, w) || !aligned_to(o->out, w))
      return false;
  return p.own != kRestoreOwnOnly || (aligned_to(p.own_key, w) && aligned_to(p.own_value, w));
}

bool pack_allows(const PackParams& p, int64_t w) {
  for (int i = 0; i < p.count; ++i) {
    const PackOperand& o = p.op[i];
    if (o.run_bytes % w != 0 || !aligned_to(o.src, w) || !aligned_to(o.dst, w)) return false;
    for (int d = 0; d < o.ndim; ++d)
      if (o.strides[d] % w != 0) return false;
  }
  return true;
}

}  // namespace

int launch_pcp_kv_pack(const PackParams& p, const DeviceShape& dev, void* stream) {
  int64_t work = 0;
  for (int i = 0; i < p.count; ++i) work += p.op[i].runs * p.op[i].run_bytes;
  if (p.count == 0 || work == 0) return cudaSuccess;
  const auto s = static_cast<cudaStream_t>(stream);
  return dispatch_widest([&](int64_t w) { return pack_allows(p, w); }, [&](auto width) {
    constexpr int kBytes = decltype(width)::value;
    int64_t most = 0;  // warps the larger operand can use
    for (int i = 0; i < p.count; ++i) {
      const int64_t nvec = p.op[i].run_bytes / kBytes;
      const int64_t warps = nvec >= 32 ? p.op[i].runs : (p.op[i].runs + 31) / 32;
      most = warps > most ? warps : most;
    }
    // One wave: a pack moves each byte once, with no order to keep.
    const dim3 grid(row_per_warp_grid<pcp_kv_pack_kernel<kBytes>>(most, dev, 1),
                    static_cast<unsigned>(p.count));
    pcp_kv_pack_kernel<kBytes><<<grid, kThreads, 0, s>>>(p);
    return cudaGetLastError();
  });
}

int launch_pcp_kv_restore(const RestoreParams& p, const DeviceShape& dev, void* stream) {
  if (p.restore_idx.size[0] == 0 || (p.key.row_bytes == 0 && p.value.row_bytes == 0))
    return cudaSuccess;
  const auto s = static_cast<cudaStream_t>(stream);
  return dispatch_widest([&](int64_t w) { return restore_allows(p, w); }, [&](auto width) {
    constexpr int kBytes = decltype(width)::value;
    // A warp per output row, up to kRowWaves waves; the side-stream launch is capped instead,
    // to leave SMs to NCCL.
    unsigned blocks =
        row_per_warp_grid<pcp_kv_restore_kernel<kBytes>>(p.restore_idx.size[0], dev, kRowWaves);
    if (p.max_blocks > 0 && blocks > static_cast<unsigned>(p.max_blocks))
      blocks = static_cast<unsigned>(p.max_blocks);
    pcp_kv_restore_kernel<kBytes><<<blocks, kThreads, 0, s>>>(p);
    return cudaGetLastError();
  });
}

}  // namespace kernels
}  // namespace cattn
