/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "common/tensor_arg.h"
#include "device/device.h"

namespace cattn {

// The checked tensors of a device split. `second` is is_prefilling (split_decodes_and_prefills,
// may be absent) or seq_lens_upper_bound (split_decodes_prefills_and_extends).
struct SplitCapturableArgs {
  const TensorArg& query_start_loc;
  const TensorArg* second;
  const TensorArg& num_actual_tokens;  // may be absent
  const TensorArg& max_query_len;      // may be absent
  int64_t threshold;
  bool require_uniform;
  bool treat_short_extends_as_decodes;
  const TensorArg& result;
};

// One kernel on `stream` writing the four (or six) counts to result.
void split_decodes_and_prefills_capturable(const char* fn, const SplitCapturableArgs& a,
                                           void* stream);
void split_decodes_prefills_and_extends_capturable(const char* fn, const SplitCapturableArgs& a,
                                                   void* stream);

}  // namespace cattn
