/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// Enqueues one single-block kernel on `stream` that counts, scans and reduces on the device:
// the decode query_start_loc into out_query_start_loc, {max, total} into max_and_total, which
// stay on the device so the host never waits. The host path's data checks need the values, so
// the kernel leaves a logits index past the last request out of every count instead.
void make_kv_sharing_fast_prefill_common_attn_metadata_device(
    const char* fn, const TensorArg& query_start_loc, const TensorArg& logits_indices,
    int64_t num_logits_indices, const TensorArg& out_query_start_loc,
    const TensorArg& max_and_total, void* stream);

}  // namespace cattn
