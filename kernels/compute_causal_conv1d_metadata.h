/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the causal-conv1d launch metadata (vLLM compute_causal_conv1d_metadata).
#pragma once

#include "kernels/kernel_types.h"
#include "kernels/param_chunk.h"

namespace cattn {
namespace kernels {

// One launch covers requests [prefix.first, prefix.first + prefix.count - 1): prefix.v holds
// their program offsets (cumulative program counts), the last entry closing the range. Absent
// outputs have data == nullptr.
struct CausalConv1dParams {
  MutIndexSpan nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr;
  ParamChunk prefix;
};

// From the device query_start_loc [B + 1] (graph-replayable): nums [B], the per-program outputs
// over their own sizes (CATTN_PAD_SLOT_ID past tot) and tot [1]; absent outputs have
// data == nullptr.
struct CausalConv1dCapturableParams {
  IndexSpan query_start_loc;
  MutIndexSpan nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr;
  CountOut tot;  // [1]
  int64_t block_m = 8;
};

int launch_compute_causal_conv1d_metadata(const CausalConv1dParams& p, const DeviceShape& dev,
                                          void* stream);
int launch_compute_causal_conv1d_metadata_capturable(const CausalConv1dCapturableParams& p,
                                                     const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
