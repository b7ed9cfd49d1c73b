// SPDX-License-Identifier: Apache-2.0
// get_dcp_local_seq_lens as a kernel of its own; the work is in get_dcp_local_seq_lens.cuh,
// which the step plan shares.
#include <cuda_runtime.h>

#include "kernels/get_dcp_local_seq_lens.cuh"

namespace cattn {
namespace kernels {

__global__ void get_dcp_local_seq_lens_kernel(const DcpLocalSeqLensParams p) {
  get_dcp_local_seq_lens_blocks(p, whole_grid());
}

int launch_get_dcp_local_seq_lens(const DcpLocalSeqLensParams& p, const DeviceShape& dev,
                                  void* stream) {
  return launch_elementwise(get_dcp_local_seq_lens_kernel,
                            p.out.size[0] * p.out.size[1], dev, stream, p);
}

// One thread per (element, rank column) of an N-D seq_lens.
__global__ void get_dcp_local_seq_lens_nd_kernel(const DcpLocalSeqLensNdParams p) {
  const BlockSlice slice = whole_grid();
  const int64_t n = p.numel * p.ranks;
  for (int64_t i = slice.thread(); i < n; i += slice.threads()) {
    const int64_t b = div_nonneg(i, p.ranks), c = i - b * p.ranks;
    const int64_t in_off = strided_offset(p.seq, b);
    const int32_t s = static_cast<int32_t>(
        p.seq_i64 ? static_cast<const int64_t*>(p.seq_lens)[in_off]
                  : static_cast<const int32_t*>(p.seq_lens)[in_off]);
    const int64_t v = dcp_local_len(s, p.dcp_size, p.dcp_rank < 0 ? c : p.dcp_rank, p.interleave);
    const int64_t out_off = strided_offset(p.out_rows, b) + c * p.out_col_step;
    if (p.out_i64)
      static_cast<int64_t*>(p.out)[out_off] = v;
    else
      static_cast<int32_t*>(p.out)[out_off] = static_cast<int32_t>(v);
  }
}

int launch_get_dcp_local_seq_lens_nd(const DcpLocalSeqLensNdParams& p, const DeviceShape& dev,
                                     void* stream) {
  return launch_elementwise(get_dcp_local_seq_lens_nd_kernel, p.numel * p.ranks, dev, stream, p);
}

}  // namespace kernels
}  // namespace cattn
