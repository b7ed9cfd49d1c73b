/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the fused PCP Q/K/V select (vLLM fused_pcp_qkv_select).
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

// One of q, k, v: where its rows come from and go to. Sizes and strides are in bytes.
struct SelectOperand {
  const char* src = nullptr;
  int64_t src_rows = 0;
  int64_t src_row_stride = 0;   // bytes between tokens
  int64_t src_head_stride = 0;  // bytes between heads
  int64_t head_bytes = 0;       // D * element size; a head's D elements are contiguous
  char* dst_head = nullptr;     // compact [dst_head_rows, H, D]
  int64_t dst_head_rows = 0;
  char* dst_tail = nullptr;     // compact [dst_tail_rows, H, D]
  int64_t dst_tail_rows = 0;
};

struct FusedSelectParams {
  SelectOperand q, k, v;
  IndexSpan query_start_loc;  // [B + 1] on the device
  int64_t num_reqs = 0;
  int64_t world = 1;
  int64_t rank = 0;
  int32_t heads = 0;
  // Chunks each row of q, K and V is split into (the launcher sets them; 1: whole rows).
  int32_t q_chunks = 1, k_chunks = 1, v_chunks = 1;
};

// Enqueues the select on `stream` (a cudaStream_t); returns a cudaError_t as int.
int launch_fused_pcp_qkv_select(const FusedSelectParams& p, const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
