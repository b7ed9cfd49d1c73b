/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the PCP query restore index (vLLM get_pcp_query_restore_idx).
#pragma once

#include "kernels/kernel_types.h"

namespace cattn {
namespace kernels {

struct RestoreIdxParams {
  IndexSpan cu_num_tokens;  // [R + 1] on the device
  MutIndexSpan restore_idx; // [capacity]
  CountOut size;            // [1], may be absent: the entries in use
};

int launch_get_pcp_query_restore_idx(const RestoreIdxParams& p, const DeviceShape& dev,
                                     void* stream);

}  // namespace kernels
}  // namespace cattn
