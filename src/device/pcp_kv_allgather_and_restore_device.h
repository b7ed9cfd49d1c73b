/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstddef>

#include "cattn.h"
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// The workspace the call needs: the gathered key and value, W * n rows each, every piece
// rounded up to 256 bytes. Depends on shapes and dtypes only, not on layouts.
size_t pcp_kv_allgather_and_restore_workspace_device(const char* fn, const TensorArg& key,
                                                     const TensorArg& value, int64_t n,
                                                     int64_t world_size);

// Checks what needs the communicator and the workspace, then enqueues on args->stream
//   [pack strided rows] -> one NCCL group { all-gather K, all-gather V } -> restore kernel;
// from kOverlapMinBytes of key + value per rank the group holds point-to-point sends and
// receives instead, and this rank's own rows are restored on the communicator's side stream
// alongside the transfer (events fork and join it, so the sequence stays capturable).
void pcp_kv_allgather_and_restore_device(const char* fn,
                                         const cattn_pcp_kv_allgather_and_restore_args_t* args,
                                         const TensorArg& key, const TensorArg& value,
                                         const TensorArg& restore_idx, const TensorArg& key_out,
                                         const TensorArg& value_out);

}  // namespace cattn
