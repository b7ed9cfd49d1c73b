// SPDX-License-Identifier: Apache-2.0
#include "common/metadata.h"

#include <cstring>

#include "common/error.h"

namespace cattn {

cattn_common_attn_metadata_t read_metadata(const char* fn, const char* arg,
                                           const cattn_common_attn_metadata_t* md) {
  require_struct(fn, arg, md, CATTN_COMMON_ATTN_METADATA_SIZE_1_0);
  cattn_common_attn_metadata_t v = CATTN_COMMON_ATTN_METADATA_INIT;
  // A struct of a size between the two versions holds only whole 1.0 fields that are known to
  // be there; the 1.1 fields are read all together or not at all.
  std::memcpy(&v, md, metadata_has_1_1(md) ? sizeof v : CATTN_COMMON_ATTN_METADATA_SIZE_1_0);
  v.struct_size = md->struct_size;
  return v;
}

void require_metadata_out(const char* fn, const char* arg, const cattn_common_attn_metadata_t* md) {
  require_struct(fn, arg, md, CATTN_COMMON_ATTN_METADATA_SIZE_1_0);
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
