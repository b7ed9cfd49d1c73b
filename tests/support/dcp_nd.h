/* SPDX-License-Identifier: Apache-2.0 */
// A call of get_dcp_local_seq_lens in CATTN_DCP_SHAPE_PRESERVE mode, for the host and device
// tests of N-D lengths.
#pragma once

#include "cattn.h"

namespace cattn_test {

inline cattn_status_t run_dcp_nd(const DLTensor* seq, DLTensor* out, int64_t size, int64_t rank,
                                 int64_t interleave, void* stream = nullptr) {
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq;
  a.dcp_size = size;
  a.dcp_rank = rank;
  a.dcp_kv_cache_interleave_size = interleave;
  a.out = out;
  a.shape_mode = CATTN_DCP_SHAPE_PRESERVE;
  a.stream = static_cast<cattn_stream_t>(stream);
  return cattn_get_dcp_local_seq_lens(&a);
}

}  // namespace cattn_test
