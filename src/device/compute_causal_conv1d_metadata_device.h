/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"
#include "host/compute_causal_conv1d_metadata_host.h"
#include "kernels/compute_causal_conv1d_metadata.h"

namespace cattn {

// Writes the device outputs from the host mirror: the program offsets are planned here from
// the checked query_start_loc_cpu and carried to the device in kernel parameters, then PAD
// fills the launch arrays past tot. outs: nums, mlist, offsetlist, batch_ptr,
// token_chunk_offset_ptr (absent ones are skipped). No device-to-host read, no host sync, no
// allocation; the launches can be captured (and replay the planned values).
void compute_causal_conv1d_metadata_device(const char* fn, const TensorArg& query_start_loc_cpu,
                                           int64_t block_m, const CausalConv1dCounts& counts,
                                           const TensorArg* const (&outs)[5], void* stream);

// The device side of cattn_compute_causal_conv1d_metadata_capturable: the kernel parameters from
// checked CUDA tensors (outs as above, absent ones and an absent tot skipped), and the one
// launch that computes everything from the device query_start_loc.
kernels::CausalConv1dCapturableParams causal_conv1d_capturable_params(
    const TensorArg& query_start_loc, int64_t block_m, const TensorArg* const (&outs)[5],
    const TensorArg& tot);
void compute_causal_conv1d_metadata_capturable(const char* fn, const TensorArg& query_start_loc,
                                               int64_t block_m, const TensorArg* const (&outs)[5],
                                               const TensorArg& tot, void* stream);

}  // namespace cattn
