/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include "common/tensor_arg.h"

namespace cattn {

// Fails unless every value out[i] = (seq_lens[i] -) (qsl[i + 1] - qsl[i]) is computable in
// int64 and fits out's dtype; seq_lens may be NULL. Reads only.
void check_naive_query_lens_host(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                                 const TensorArg& out);

// Writes those values; out may be seq_lens' very view (element i is read before it is written).
void naive_query_lens_host(const TensorArg& qsl, const TensorArg* seq_lens, const TensorArg& out);

}  // namespace cattn
