// SPDX-License-Identifier: Apache-2.0
// Device side of get_dcp_local_seq_lens.
#include "device/get_dcp_local_seq_lens_device.h"

#include "device/cuda_launch.h"
#include "kernels/get_dcp_local_seq_lens.h"

namespace cattn {

void get_dcp_local_seq_lens_device(const char* fn, const TensorArg& seq, int64_t dcp_size,
                                   int64_t dcp_rank, int64_t interleave, const TensorArg& out,
                                   void* stream) {
  DeviceScope dev(fn, seq);
  kernels::DcpLocalSeqLensParams p;
  p.seq_lens = index_view(seq);
  p.out = index_view(out);  // a [B] out is one column
  p.dcp_size = dcp_size;
  p.dcp_rank = dcp_rank;
  p.interleave = interleave;
  check_launch(fn, kernels::launch_get_dcp_local_seq_lens(p, dev.shape(), stream), stream);
}

void get_dcp_local_seq_lens_nd_device(const char* fn, const TensorArg& seq, int64_t dcp_size,
                                      int64_t dcp_rank, int64_t ranks, int64_t interleave,
                                      const TensorArg& out, void* stream) {
  DeviceScope dev(fn, seq);
  kernels::DcpLocalSeqLensNdParams p;
  p.seq_lens = seq.data();
  p.out = out.data();
  p.seq = device_strided_nd(seq);
  p.out_rows = device_strided_nd(out);
  p.out_rows.ndim = seq.ndim();
  p.numel = seq.numel();
  p.ranks = ranks;
  p.out_col_step = out.ndim() > seq.ndim() ? out.stride(out.ndim() - 1) : 0;
  p.seq_i64 = seq.is_int64();
  p.out_i64 = out.is_int64();
  p.dcp_size = dcp_size;
  p.dcp_rank = dcp_rank;
  p.interleave = interleave;
  check_launch(fn, kernels::launch_get_dcp_local_seq_lens_nd(p, dev.shape(), stream), stream);
}

}  // namespace cattn
