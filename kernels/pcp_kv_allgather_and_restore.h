/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the two kernels around the PCP all-gather (vLLM
// pcp_kv_allgather_and_restore): packing strided key/value rows before the all-gather, and the
// fused restore gather after it.
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

// Most dimensions a packed tensor can keep after merging its contiguous dimensions.
constexpr int kPackMaxDims = 8;

// A strided tensor seen as a grid of contiguous runs: run j lies at src + sum(idx_d * strides[d])
// where idx is j's multi-index over `sizes` (row-major), and goes to dst + j * run_bytes.
struct PackOperand {
  const char* src = nullptr;
  char* dst = nullptr;  // compact
  int64_t runs = 0;     // product of sizes
  int64_t run_bytes = 0;
  int32_t ndim = 0;
  int64_t sizes[kPackMaxDims] = {};
  int64_t strides[kPackMaxDims] = {};  // bytes
};

struct PackParams {
  PackOperand op[2];
  int32_t count = 0;  // operands in use, 0..2
};

// Enqueues one kernel packing every operand on `stream` (a cudaStream_t); returns a cudaError_t
// as int.
int launch_pcp_kv_pack(const PackParams& p, const DeviceShape& dev, void* stream);

// One of key/value: the gathered rows and where the restored rows go.
struct RestoreOperand {
  const char* gathered = nullptr;  // compact [total_rows, row_bytes]
  char* out = nullptr;             // compact [rows of restore_idx, row_bytes]
  int64_t row_bytes = 0;
};

// Which of this rank's own rows a restore launch writes. They need no transfer, so a launch of
// them alone can run while the all-gather is in flight.
enum RestoreOwn : int32_t {
  kRestoreOwnGathered = 0,  // like every other row, from the gathered buffer
  kRestoreOwnOnly = 1,      // only them, from own_key / own_value (no zero rows)
  kRestoreOwnSkip = 2,      // none of them (another launch writes them)
};

// Gathered row g is row g - w * per_rank of rank w = g / per_rank.
struct RestoreParams {
  RestoreOperand key, value;
  IndexSpan restore_idx;   // [M] on the device
  int64_t total_rows = 0;  // W * n; an index outside [0, total_rows) zero-fills its row
  int64_t per_rank = 0;    // n
  int32_t rank = 0;
  int32_t own = kRestoreOwnGathered;
  const char* own_key = nullptr;  // kRestoreOwnOnly: this rank's n compact rows (what it sent)
  const char* own_value = nullptr;
  int64_t max_blocks = 0;         // > 0: at most this many CTAs (leaves SMs to NCCL)
};

// Enqueues the fused restore (key and value in one kernel) on `stream`; returns a cudaError_t as
// int.
int launch_pcp_kv_restore(const RestoreParams& p, const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
