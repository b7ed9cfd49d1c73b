// PCP restore index on the device, from the device cu_num_tokens: no copy to the host. Sorted
// position k of request i (2*H_i <= k < 2*H_(i+1), H = prefix of half lengths) holds H_i + o for
// its head half and T + H_i + o for its tail half (see the host algorithm's note). Positions
// past 2*T are -1. A decreasing entry counts as an empty request; an odd length keeps vLLM's
// answer (its middle token is dropped), since rejecting it would need a host sync.
#include <cuda_runtime.h>

#include "kernels/get_pcp_query_restore_idx.h"
#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/segment_walk.cuh"

namespace cattn {
namespace kernels {

constexpr int kRestoreThreads = kBlockThreads;

__global__ void __launch_bounds__(kRestoreThreads)
    get_pcp_query_restore_idx_kernel(const RestoreIdxParams p) {
  const int64_t reqs = p.cu_num_tokens.size[0] > 0 ? p.cu_num_tokens.size[0] - 1 : 0;
  auto positions = [&](int64_t i) {
    const int64_t len = load_index(p.cu_num_tokens, i + 1) - load_index(p.cu_num_tokens, i);
    return len > 0 ? len / 2 * 2 : 0;
  };
  const int64_t size = segment_total<kRestoreThreads>(reqs, positions);
  const int64_t total = size / 2;
  int64_t k0, k1;
  block_range(p.restore_idx.size[0], k0, k1);
  for (int64_t k = (k0 > size ? k0 : size) + threadIdx.x; k < k1; k += kRestoreThreads)
    store_index(p.restore_idx, k, -1);
  const int64_t hi = k1 < size ? k1 : size;
  segment_walk<kRestoreThreads>(reqs, positions, k0, hi,
                                [&](int64_t k, int64_t i, int64_t local, int64_t start) {
                                  const int64_t h = positions(i) / 2, head = start / 2;
                                  store_index(p.restore_idx, k,
                                              local < h ? head + local : total + head + local - h);
                                });
}

int launch_get_pcp_query_restore_idx(const RestoreIdxParams& p, const DeviceShape& dev,
                                     void* stream) {
  const int64_t n = p.restore_idx.size[0];
  if (n == 0) return cudaSuccess;
  // Each block owns a contiguous slice of the output and re-scans the (short) request list.
  get_pcp_query_restore_idx_kernel<<<segment_walk_grid(n, dev), kRestoreThreads, 0,
                                     static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
