/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the DCP local sequence lengths (vLLM get_dcp_local_seq_lens).
#pragma once

#include "kernels/kernel_types.h"
#include "kernels/strided_nd.h"

namespace cattn {
namespace kernels {

struct DcpLocalSeqLensParams {
  IndexSpan seq_lens;   // [B]
  MutIndexMatrix out;   // [B, ranks]; ranks = 1 when one rank is asked for
  int64_t dcp_size = 1;
  int64_t dcp_rank = -1;  // -1: column c is rank c
  int64_t interleave = 1;
};

int launch_get_dcp_local_seq_lens(const DcpLocalSeqLensParams& p, const DeviceShape& dev,
                                  void* stream);

// The same on seq_lens of any shape (CATTN_DCP_SHAPE_PRESERVE): out's leading dimensions
// follow seq_lens and rank column c of an element lies c * out_col_step elements further.
struct DcpLocalSeqLensNdParams {
  const void* seq_lens = nullptr;
  void* out = nullptr;
  StridedNd seq, out_rows;
  int64_t numel = 0;   // elements of seq_lens
  int64_t ranks = 1;   // columns written per element
  int64_t out_col_step = 0;
  bool seq_i64 = false, out_i64 = false;
  int64_t dcp_size = 1;
  int64_t dcp_rank = -1;  // -1: column c is rank c
  int64_t interleave = 1;
};

int launch_get_dcp_local_seq_lens_nd(const DcpLocalSeqLensNdParams& p, const DeviceShape& dev,
                                     void* stream);

}  // namespace kernels
}  // namespace cattn
