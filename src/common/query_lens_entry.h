/* SPDX-License-Identifier: Apache-2.0 */
// The checks and dispatch naive_query_lens and compute_num_computed_tokens share (defined in
// src/naive_query_lens.cpp): one computes the query lengths, the other subtracts them from
// seq_lens.
#pragma once

#include "cattn.h"

namespace cattn {

// The body of both entry points; `subtract_from_seq_lens` selects compute_num_computed_tokens.
// Throws Failure; the caller wraps it in guarded().
void run_query_lens(const char* fn, const cattn_naive_query_lens_args_t* args,
                    bool subtract_from_seq_lens);

}  // namespace cattn
