// SPDX-License-Identifier: Apache-2.0
// make_kv_sharing_fast_prefill_common_attn_metadata as a kernel of its own; the work is in
// make_kv_sharing_fast_prefill_common_attn_metadata.cuh, which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/make_kv_sharing_fast_prefill_common_attn_metadata.cuh"

namespace cattn {
namespace kernels {

constexpr int kFastPrefillThreads = 1024;

__global__ void __launch_bounds__(kFastPrefillThreads)
    make_kv_sharing_fast_prefill_common_attn_metadata_kernel(const FastPrefillParams p) {
  __shared__ FastPrefillShared<kFastPrefillThreads> sh;
  make_kv_sharing_fast_prefill_common_attn_metadata_block<kFastPrefillThreads>(p, sh);
}

int launch_make_kv_sharing_fast_prefill_common_attn_metadata(const FastPrefillParams& p,
                                                             void* stream) {
  // One block by design: the count, the scan and the maximum need the whole batch.
  const auto s = static_cast<cudaStream_t>(stream);
  make_kv_sharing_fast_prefill_common_attn_metadata_kernel<<<1, kFastPrefillThreads, 0, s>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
