// SPDX-License-Identifier: Apache-2.0
// Host algorithm for get_dcp_local_seq_lens.
//
// The KV tokens of a request are dealt to the ranks in runs of I (the interleave size): tokens
// [k*I*W + r*I, k*I*W + (r+1)*I) belong to rank r. A sequence of s tokens therefore gives every
// rank floor(s / (I*W)) full runs, and the leftover s mod (I*W) tokens fill rank 0's run first,
// then rank 1's, and so on: rank r receives clamp(leftover - r*I, 0, I) of them. This is vLLM's
// formula (its `s // I // W * I` equals floor(s / (I*W)) * I for s >= 0); the callers have
// checked that I*W and every s fit int32, so vLLM's int32 arithmetic never wraps and the int64
// arithmetic here gives identical results.
#include "host/get_dcp_local_seq_lens_host.h"

#include <algorithm>
#include <limits>

#include "common/strided.h"

namespace cattn {

void check_dcp_seq_lens_host(const char* fn, const TensorArg& seq_lens) {
  const kernels::StridedNd v = strided_nd(seq_lens);
  const IndexReader in = reader_span(seq_lens);
  for (int64_t b = 0; b < seq_lens.numel(); ++b) {
    const int64_t s = in[kernels::strided_offset(v, b)];
    if (s < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(), "has a negative length",
               "[" + std::to_string(b) + "] = " + std::to_string(s), ">= 0");
    if (s > std::numeric_limits<int32_t>::max())
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(), "has a length outside [0, INT32_MAX]",
               "[" + std::to_string(b) + "] = " + std::to_string(s),
               "0..2147483647 (vLLM computes the lengths in int32)");
  }
}

void get_dcp_local_seq_lens_host(const TensorArg& seq_lens, int64_t dcp_size, int64_t first_rank,
                                 int64_t num_ranks, int64_t interleave, const TensorArg& out,
                                 int64_t col_step) {
  const kernels::StridedNd seq_v = strided_nd(seq_lens);
  kernels::StridedNd row_v = strided_nd(out);
  row_v.ndim = seq_lens.ndim();  // out's leading dimensions, the shape of seq_lens
  const IndexReader in = reader_span(seq_lens);
  const IndexWriter out_at = writer_span(out);
  const int64_t cycle = interleave * dcp_size;
  for (int64_t b = 0; b < seq_lens.numel(); ++b) {
    const int64_t s = in[kernels::strided_offset(seq_v, b)];
    const int64_t base = s / cycle * interleave;
    const int64_t leftover = s - base * dcp_size;
    const int64_t row = kernels::strided_offset(row_v, b);
    for (int64_t c = 0; c < num_ranks; ++c) {
      const int64_t mine = leftover - (first_rank + c) * interleave;
      out_at.set(row + c * col_step, base + std::clamp<int64_t>(mine, 0, interleave));
    }
  }
}

}  // namespace cattn
