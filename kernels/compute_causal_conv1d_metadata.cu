// SPDX-License-Identifier: Apache-2.0
// Causal-conv1d metadata on the device from host-planned program offsets (the lengths come from
// the host mirror query_start_loc_cpu, so nothing is read back): one thread per program writes
// its request index and chunk index into every requested output.
#include <cuda_runtime.h>

#include "kernels/compute_causal_conv1d_metadata.cuh"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"

namespace cattn {
namespace kernels {

__global__ void compute_causal_conv1d_metadata_kernel(
    const __grid_constant__ CausalConv1dParams p) {
  const int nreq = p.prefix.count - 1;
  const int64_t* pre = p.prefix.v;
  const int64_t stride = grid_threads();
  const int64_t tid = grid_thread();
  if (p.nums.data != nullptr)
    for (int64_t i = tid; i < nreq; i += stride)
      store_index(p.nums, p.prefix.first + i, pre[i + 1] - pre[i]);
  for (int64_t k = pre[0] + tid; k < pre[nreq]; k += stride) {
    int a = 0, b = nreq - 1;  // last request whose first program is at or before k
    while (a < b) {
      const int m = (a + b + 1) >> 1;
      if (pre[m] <= k) a = m; else b = m - 1;
    }
    const int64_t req = p.prefix.first + a, chunk = k - pre[a];
    if (p.mlist.data != nullptr) store_index(p.mlist, k, req);
    if (p.batch_ptr.data != nullptr) store_index(p.batch_ptr, k, req);
    if (p.offsetlist.data != nullptr) store_index(p.offsetlist, k, chunk);
    if (p.token_chunk_offset_ptr.data != nullptr) store_index(p.token_chunk_offset_ptr, k, chunk);
  }
}

int launch_compute_causal_conv1d_metadata(const CausalConv1dParams& p, const DeviceShape& dev,
                                          void* stream) {
  if (p.prefix.count < 2) return cudaSuccess;
  const int64_t work = p.prefix.v[p.prefix.count - 1] - p.prefix.v[0] + p.prefix.count;
  return launch_elementwise(compute_causal_conv1d_metadata_kernel, work, dev, stream, p);
}

__global__ void __launch_bounds__(kBlockThreads)
    compute_causal_conv1d_metadata_capturable_kernel(const CausalConv1dCapturableParams p) {
  __shared__ CausalConv1dShared<kBlockThreads> sh;
  compute_causal_conv1d_metadata_capturable_blocks<kBlockThreads>(p, whole_grid(), sh);
}

int launch_compute_causal_conv1d_metadata_capturable(const CausalConv1dCapturableParams& p,
                                                     const DeviceShape& dev, void* stream) {
  int64_t n = p.nums.data != nullptr ? p.nums.size[0] : 0;
  for (const MutIndexSpan* o : {&p.mlist, &p.offsetlist, &p.batch_ptr, &p.token_chunk_offset_ptr})
    if (o->data != nullptr && o->size[0] > n) n = o->size[0];
  // One more block than the walk takes: the one that counts the totals.
  compute_causal_conv1d_metadata_capturable_kernel<<<segment_walk_grid(n > 0 ? n : 1, dev) + 1,
                                                     kBlockThreads, 0,
                                                     static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
