// SPDX-License-Identifier: Apache-2.0
// The device splits: one block walks the batch (each thread a stride of the requests), finds
// the first prefill (and for the extends split the first extend and first prefill), whether
// every row is uniform or padding, and the largest query length, with shared-memory atomics;
// thread 0 then forms vLLM's numbers exactly as the host algorithm does
// (src/host/split_decodes_and_prefills_host.cpp). One block suffices: the work is a few loads
// per request, and a single block needs no second launch or grid-wide sync to combine.
#include <cuda_runtime.h>

#include <climits>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/split_decodes_and_prefills.h"

namespace cattn {
namespace kernels {
namespace {

__device__ __forceinline__ int64_t wrapping_sub(int64_t a, int64_t b, bool i64) {
  if (i64) return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

// a - b; sets *overflow when it does not fit int64.
__device__ __forceinline__ int64_t checked_sub(int64_t a, int64_t b, bool* overflow) {
  const int64_t r = wrapping_sub(a, b, true);
  if (((a ^ b) & (a ^ r)) < 0) *overflow = true;
  return r;
}

__global__ void split_decodes_and_prefills_kernel(const SplitParams p) {
  __shared__ unsigned long long first_a, first_b;  // first prefill (or extend), first prefill
  __shared__ long long max_q;
  __shared__ int not_uniform;
  const int64_t B = p.query_start_loc.size[0] - 1;
  if (threadIdx.x == 0) {
    first_a = first_b = static_cast<unsigned long long>(B);
    max_q = B > 0 ? LLONG_MIN : 0;
    not_uniform = 0;
  }
  __syncthreads();
  const bool i64 = p.query_start_loc.i64;
  const int64_t thr = p.threshold;
  const int64_t q0 =
      B > 0 ? wrapping_sub(load_index(p.query_start_loc, 1), load_index(p.query_start_loc, 0),
                           i64)
            : 0;
  long long my_max = LLONG_MIN;
  unsigned long long my_a = static_cast<unsigned long long>(B), my_b = my_a;
  bool my_not_uniform = false;
  for (int64_t i = threadIdx.x; i < B; i += blockDim.x) {
    const int64_t q = wrapping_sub(load_index(p.query_start_loc, i + 1),
                                   load_index(p.query_start_loc, i), i64);
    if (q > my_max) my_max = q;
    const auto at = static_cast<unsigned long long>(i);
    if (p.extends) {
      if (q > thr) {
        if (at < my_a) my_a = at;
        if (at < my_b && load_index(p.upper_bound, i) == q) my_b = at;
      }
    } else {
      bool pre = p.require_uniform ? q != q0 : q > thr;
      if (q != q0 && q != 0) my_not_uniform = true;
      if (!p.treat_short_extends_as_decodes && p.is_prefilling != nullptr)
        pre = pre || p.is_prefilling[i * p.flag_step] != 0;
      if (pre && at < my_a) my_a = at;
    }
  }
  if (B > 0) atomicMax(&max_q, my_max);
  atomicMin(&first_a, my_a);
  atomicMin(&first_b, my_b);
  if (my_not_uniform) atomicOr(&not_uniform, 1);
  __syncthreads();
  if (threadIdx.x != 0) return;

  const int64_t T = p.num_tokens.data != nullptr ? load_index(p.num_tokens, 0)
                                                 : load_index(p.query_start_loc, B);
  const int64_t mql = p.max_query_len.data != nullptr ? load_index(p.max_query_len, 0) : max_q;
  const int n = p.extends ? 6 : 4;
  int64_t r[6] = {0, 0, 0, 0, 0, 0};
  bool failed = false;
  if (!p.extends) {
    if (mql <= thr && (!p.require_uniform || thr <= 1) && p.treat_short_extends_as_decodes) {
      r[0] = B, r[2] = T;
    } else if (B == 0) {
      failed = true;  // vLLM's IndexError
    } else if (q0 > thr) {
      r[1] = B, r[3] = T;
    } else if (!p.treat_short_extends_as_decodes && p.is_prefilling == nullptr) {
      failed = true;  // vLLM's assert on is_prefilling, reached only here
    } else if ((p.require_uniform && p.treat_short_extends_as_decodes && !not_uniform) ||
               first_a == static_cast<unsigned long long>(B)) {
      r[0] = B, r[2] = T;
    } else {
      const auto f = static_cast<int64_t>(first_a);
      const int64_t start = load_index(p.query_start_loc, f);
      r[0] = f, r[1] = B - f, r[2] = start, r[3] = checked_sub(T, start, &failed);
    }
  } else {
    if (mql <= thr) {
      r[0] = B, r[3] = T;
    } else if (B == 0) {
      failed = true;
    } else if (first_a == static_cast<unsigned long long>(B)) {
      r[3] = load_index(p.query_start_loc, 0);  // vLLM's argmax of no extend is 0
    } else {
      const auto e = static_cast<int64_t>(first_a);
      const int64_t e_start = load_index(p.query_start_loc, e);
      const int64_t rest = checked_sub(T, e_start, &failed);
      r[0] = e, r[3] = e_start;
      if (first_b == static_cast<unsigned long long>(B)) {
        r[1] = B - e, r[4] = rest;
      } else {
        const auto f = static_cast<int64_t>(first_b);
        const int64_t p_start = load_index(p.query_start_loc, f);
        r[1] = f - e, r[2] = B - f;
        if (i64) {
          r[5] = checked_sub(T, p_start, &failed);
          r[4] = checked_sub(rest, r[5], &failed);
        } else {  // vLLM's 0-d int32 tensors wrap
          r[5] = wrapping_sub(T, p_start, false);
          r[4] = wrapping_sub(rest, r[5], false);
        }
      }
    }
  }
  for (int k = 0; k < n; ++k) store_index(p.result, k, failed ? -1 : r[k]);
}

}  // namespace

int launch_split_decodes_and_prefills(const SplitParams& p, void* stream) {
  split_decodes_and_prefills_kernel<<<1, kBlockThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
