// SPDX-License-Identifier: Apache-2.0
#include "common/metadata.h"

#include <cstring>

#include <string>

#include "common/error.h"
#include "common/struct_arg.h"

namespace cattn {

cattn_common_attn_metadata_t read_metadata(const char* fn, const char* arg,
                                           const cattn_common_attn_metadata_t* md) {
  // A 1.0 struct or a 1.1 (or newer) one: require_struct refuses the sizes in between.
  const size_t bytes = require_struct(fn, arg, md, Use::In);
  cattn_common_attn_metadata_t v = CATTN_COMMON_ATTN_METADATA_INIT;
  std::memcpy(&v, md, bytes);
  v.struct_size = md->struct_size;
  if (v.reserved0 != 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, (std::string(arg) + "->reserved0").c_str(), "is not 0",
             std::to_string(v.reserved0), "0");
  return v;
}

void require_metadata_out(const char* fn, const char* arg, const cattn_common_attn_metadata_t* md,
                          const cattn_common_attn_metadata_t* in) {
  require_struct(fn, arg, md, Use::Out);
  if (md == in) current_call().allow_in_place(md, in, Use::In);
}

void write_metadata_1_1(cattn_common_attn_metadata_t* out, const cattn_common_attn_metadata_t& v) {
  if (!metadata_has_1_1(out)) return;
  out->positions = v.positions;
  out->is_prefilling = v.is_prefilling;
  out->causal_per_req = v.causal_per_req;
  out->dcp_local_seq_lens = v.dcp_local_seq_lens;
  out->dcp_local_seq_lens_cpu = v.dcp_local_seq_lens_cpu;
  out->seq_lens_cpu_upper_bound = v.seq_lens_cpu_upper_bound;
  out->encoder_seq_lens = v.encoder_seq_lens;
  out->encoder_seq_lens_cpu = v.encoder_seq_lens_cpu;
  out->max_logits_per_req = v.max_logits_per_req;
}

}  // namespace cattn
