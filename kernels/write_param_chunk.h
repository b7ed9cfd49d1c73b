/* SPDX-License-Identifier: Apache-2.0 */
// Launcher interface of the parameter-chunk writes: writes host-computed index values to a device
// index tensor (see param_chunk.h), and fills ranges with a constant.
#pragma once

#include "kernels/kernel_types.h"
#include "kernels/param_chunk.h"

namespace cattn {
namespace kernels {

// out[chunk.first + i] = chunk.v[i] for i < chunk.count.
int launch_write_param_chunk(const MutIndexSpan& out, const ParamChunk& chunk, void* stream);
// out[i] = value for i in [begin, end).
int launch_fill_index(const MutIndexSpan& out, int64_t begin, int64_t end, int64_t value,
                      const DeviceShape& dev, void* stream);

}  // namespace kernels
}  // namespace cattn
