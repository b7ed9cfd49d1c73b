// SPDX-License-Identifier: Apache-2.0
// The unpadded metadata of a padded batch (vLLM CommonAttentionMetadata.unpadded): views of
// the first B' requests and T' tokens, made in caller storage. No tensor data is touched, so
// there is no host or device algorithm: this entry point is the whole utility.
#include <cstring>
#include <new>
#include <string>

#include "common/error.h"
#include "common/metadata.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"

namespace {

using cattn::TensorArg;

// Every DLTensor field of the metadata struct but logits_indices_padded, which is kept whole.
constexpr int kMaxTensors = 15;

// The layout of the caller's opaque storage.
struct Views {
  DLTensor tensors[kMaxTensors];
  int64_t shapes[kMaxTensors][CATTN_UNPADDED_MAX_DIMS];
  int64_t strides[kMaxTensors][CATTN_UNPADDED_MAX_DIMS];
};
static_assert(sizeof(Views) <= sizeof(int64_t) * CATTN_UNPADDED_STORAGE_WORDS,
              "cattn_unpadded_storage_t is too small");
static_assert(alignof(Views) <= alignof(int64_t), "cattn_unpadded_storage_t is misaligned");

// Builds the views one by one in `storage`, checking each before anything is written.
class Slicer {
 public:
  Slicer(const char* fn, cattn_unpadded_storage_t* storage) : fn_(fn), storage_(storage) {}

  // Starts the views' lifetime in the caller's storage; after every check has passed.
  void begin() { views_ = new (static_cast<void*>(storage_->opaque)) Views; }

  // Checks `t` (NULL allowed) for a cut of its first dimension to `n` entries and reserves a
  // slot; returns the slot, or -1 for a NULL tensor.
  int plan(const char* name, const DLTensor* t, int64_t n) {
    const TensorArg a(fn_, name, t, cattn::Use::In, true);
    if (!a.present()) return -1;
    if (a.ndim() < 1 || a.ndim() > CATTN_UNPADDED_MAX_DIMS)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn_, name, "has an unsupported rank",
                      std::to_string(a.ndim()) + " dimensions",
                      "1.." + std::to_string(CATTN_UNPADDED_MAX_DIMS));
    if (a.size(0) < n)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn_, name, "is shorter than the cut",
                      std::to_string(a.size(0)) + " entries",
                      ">= " + std::to_string(n) + " (vLLM's slice would come out shorter)");
    const int slot = used_++;
    src_[slot] = t;
    len_[slot] = n;
    return slot;
  }

  // Writes the reserved views; only after every plan() succeeded.
  DLTensor* make(int slot) {
    if (slot < 0) return nullptr;
    DLTensor& v = views_->tensors[slot];
    const DLTensor& s = *src_[slot];
    v = s;
    for (int d = 0; d < s.ndim; ++d) views_->shapes[slot][d] = s.shape[d];
    views_->shapes[slot][0] = len_[slot];
    v.shape = views_->shapes[slot];
    if (s.strides != nullptr) {
      for (int d = 0; d < s.ndim; ++d) views_->strides[slot][d] = s.strides[d];
      v.strides = views_->strides[slot];
    }
    return &v;
  }

 private:
  const char* fn_;
  cattn_unpadded_storage_t* storage_;
  Views* views_ = nullptr;
  const DLTensor* src_[kMaxTensors] = {};
  int64_t len_[kMaxTensors] = {};
  int used_ = 0;
};

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_unpadded(const cattn_unpadded_args_t* args) {
  constexpr const char* fn = "cattn_unpadded";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn_common_attn_metadata_t in =
        cattn::read_metadata(fn, "args->metadata", args->metadata);
    // The views are built in storage and *out written last: neither may share memory with
    // the other or with anything the call reads (args, the metadata, its DLTensor structs and
    // their shapes and strides) - the one overlap rule, applied by seal_arguments below.
    cattn::require_metadata_out(fn, "args->out", args->out);
    cattn::require_struct(fn, "args->storage", args->storage, cattn::Use::Out);
    cattn_common_attn_metadata_t* const out = args->out;
    const int64_t tokens = args->num_actual_tokens, reqs = args->num_actual_reqs;
    if (reqs < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_actual_reqs", "is negative",
                      std::to_string(reqs), ">= 0");
    if (tokens < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_actual_tokens", "is negative",
                      std::to_string(tokens), ">= 0");
    Slicer s(fn, args->storage);
    const int64_t reqs1 = cattn::checked_add(fn, "args->num_actual_reqs + 1", reqs, 1);
    const int qsl = s.plan("args->metadata->query_start_loc", in.query_start_loc, reqs1);
    const int qsl_cpu =
        s.plan("args->metadata->query_start_loc_cpu", in.query_start_loc_cpu, reqs1);
    const int seq = s.plan("args->metadata->seq_lens", in.seq_lens, reqs);
    const int seq_cpu = s.plan("args->metadata->seq_lens_cpu", in.seq_lens_cpu, reqs);
    const int computed =
        s.plan("args->metadata->num_computed_tokens_cpu", in.num_computed_tokens_cpu, reqs);
    const int table = s.plan("args->metadata->block_table_tensor", in.block_table_tensor, reqs);
    const int slots = s.plan("args->metadata->slot_mapping", in.slot_mapping, tokens);
    const int positions = s.plan("args->metadata->positions", in.positions, tokens);
    const int prefilling = s.plan("args->metadata->is_prefilling", in.is_prefilling, reqs);
    const int causal = s.plan("args->metadata->causal_per_req", in.causal_per_req, reqs);
    const int dcp = s.plan("args->metadata->dcp_local_seq_lens", in.dcp_local_seq_lens, reqs);
    const int dcp_cpu =
        s.plan("args->metadata->dcp_local_seq_lens_cpu", in.dcp_local_seq_lens_cpu, reqs);
    const int upper =
        s.plan("args->metadata->seq_lens_cpu_upper_bound", in.seq_lens_cpu_upper_bound, reqs);
    const int enc = s.plan("args->metadata->encoder_seq_lens", in.encoder_seq_lens, reqs);
    const int enc_cpu =
        s.plan("args->metadata->encoder_seq_lens_cpu", in.encoder_seq_lens_cpu, reqs);

    cattn::seal_arguments();
    s.begin();
    out->query_start_loc = s.make(qsl);
    out->query_start_loc_cpu = s.make(qsl_cpu);
    out->seq_lens = s.make(seq);
    out->seq_lens_cpu = s.make(seq_cpu);
    out->num_computed_tokens_cpu = s.make(computed);
    out->block_table_tensor = s.make(table);
    out->slot_mapping = s.make(slots);
    out->logits_indices_padded = in.logits_indices_padded;
    out->num_reqs = reqs;
    out->num_actual_tokens = tokens;
    out->max_query_len = in.max_query_len;
    out->max_seq_len = in.max_seq_len;
    out->num_logits_indices = in.num_logits_indices;
    out->causal = in.causal;
    out->reserved0 = 0;
    cattn_common_attn_metadata_t v11 = in;
    v11.positions = s.make(positions);
    v11.is_prefilling = s.make(prefilling);
    v11.causal_per_req = s.make(causal);
    v11.dcp_local_seq_lens = s.make(dcp);
    v11.dcp_local_seq_lens_cpu = s.make(dcp_cpu);
    v11.seq_lens_cpu_upper_bound = s.make(upper);
    v11.encoder_seq_lens = s.make(enc);
    v11.encoder_seq_lens_cpu = s.make(enc_cpu);
    cattn::write_metadata_1_1(out, v11);
  });
}

}  // extern "C"
