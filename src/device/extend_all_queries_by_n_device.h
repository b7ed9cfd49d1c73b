/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues the shift of the device query_start_loc (+ i * n) and seq_lens (+ n): one kernel on
// `stream`. The values stay on the device, so nothing checks them for overflow; the views are
// exact aliases or disjoint, which is all the kernel's read-then-write needs.
void extend_all_queries_by_n_device(const char* fn, const TensorArg& query_start_loc,
                                    const TensorArg& seq_lens, const TensorArg& out_query_start_loc,
                                    const TensorArg& out_seq_lens, int64_t n, void* stream);

}  // namespace cattn
