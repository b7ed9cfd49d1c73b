/* SPDX-License-Identifier: Apache-2.0 */
// Reading and writing the versioned metadata struct (cattn_common_attn_metadata_t). A 1.0
// caller's struct ends at reserved0, so no code may copy the whole struct from or to a
// caller: these helpers read what the caller's struct_size covers and write only the fields it
// holds.
#pragma once

#include "cattn.h"

namespace cattn {

// True when the caller's struct holds the 1.1 fields (positions ... max_logits_per_req).
inline bool metadata_has_1_1(const cattn_common_attn_metadata_t* md) {
  return md->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE_1_1;
}

// Checks that `md` is not NULL, a 1.0 or 1.1 (or newer) struct with reserved0 0, records it as
// an input of the call, and returns a copy of it in which the fields the caller's struct lacks
// have their _INIT values (NULL tensors, max_logits_per_req not given). struct_size keeps the
// caller's value.
cattn_common_attn_metadata_t read_metadata(const char* fn, const char* arg,
                                           const cattn_common_attn_metadata_t* md);

// Checks that an output struct is not NULL and a 1.0 or 1.1 (or newer) struct, and records it
// as an output of the call. `in`, when given, is the input struct the call has copied: out may
// be that very struct (in place), and no other overlap.
void require_metadata_out(const char* fn, const char* arg, const cattn_common_attn_metadata_t* md,
                          const cattn_common_attn_metadata_t* in = nullptr);

// The 1.1 fields of `v`, written to `out` when out's struct holds them; a 1.0 struct is left
// alone.
void write_metadata_1_1(cattn_common_attn_metadata_t* out, const cattn_common_attn_metadata_t& v);

}  // namespace cattn
