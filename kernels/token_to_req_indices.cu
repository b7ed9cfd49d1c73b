// SPDX-License-Identifier: Apache-2.0
// token_to_req_indices (and the positions of extend_all_queries_by_n): one thread per token.
//
// Every thread reads M from the device so that a captured graph maps each replay's batch; the
// grid covers the buffer's capacity and threads past max(M, T) return. A token finds its
// request by binary search over query_start_loc, whose entries stay in L1/L2 for the whole
// grid; a query_start_loc that decreases somewhere still gives an index in [0, B), so nothing
// is read or written out of bounds.
#include <cuda_runtime.h>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/token_to_req_indices.h"

namespace cattn {
namespace kernels {
namespace {
// a - b modulo 2^64: the device cannot refuse values near the int64 limits.
__device__ __forceinline__ int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
}  // namespace

__global__ void token_to_req_indices_kernel(const TokenToReqIndicesParams p) {
  const int64_t batch = p.query_start_loc.size[0] - 1;
  const int64_t base = load_index(p.query_start_loc, 0);
  const int64_t end = load_index(p.query_start_loc, batch);
  const int64_t span = wrapping_sub(end, base);
  const int64_t mapped = span > 0 ? span : 0;
  const int64_t limit_wanted = mapped > p.num_tokens ? mapped : p.num_tokens;
  const int64_t limit = limit_wanted < p.out.size[0] ? limit_wanted : p.out.size[0];
  const BlockSlice slice = whole_grid();
  for (int64_t t = slice.thread(); t < limit; t += slice.threads()) {
    if (t >= mapped) {
      store_index(p.out, t, 0);
      continue;
    }
    // The count of r in [1, B] with query_start_loc[r] - base <= t, clamped to B - 1.
    int64_t lo = 1, hi = batch + 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (wrapping_sub(load_index(p.query_start_loc, mid), base) <= t) lo = mid + 1;
      else hi = mid;
    }
    const int64_t r = lo - 1 < batch - 1 ? lo - 1 : batch - 1;
    if (p.seq_lens.data == nullptr) {
      store_index(p.out, t, r);
    } else {
      const uint64_t pos = static_cast<uint64_t>(load_index(p.seq_lens, r)) -
                           static_cast<uint64_t>(load_index(p.query_start_loc, r + 1)) +
                           static_cast<uint64_t>(base) + static_cast<uint64_t>(t);
      store_index(p.out, t, static_cast<int64_t>(pos));
    }
  }
}

int launch_token_to_req_indices(const TokenToReqIndicesParams& p, const DeviceShape& dev,
                                void* stream) {
  return launch_elementwise(token_to_req_indices_kernel, p.out.size[0], dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
