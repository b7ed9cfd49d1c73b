// SPDX-License-Identifier: Apache-2.0
// KV-sharing fast-prefill metadata (vLLM
// make_kv_sharing_fast_prefill_common_attn_metadata). Entry point: argument checks and
// dispatch; the algorithm is in host/make_kv_sharing_fast_prefill_common_attn_metadata_host.cpp.
#include <string>

#include "common/error.h"
#include "common/metadata.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/make_kv_sharing_fast_prefill_common_attn_metadata_device.h"
#include "host/make_kv_sharing_fast_prefill_common_attn_metadata_host.h"

namespace {

// Field by field, so that the caller's struct_size (and anything a newer header appended
// after the fields this library knows) is left alone.
void copy_known_fields(cattn_common_attn_metadata_t* out, const cattn_common_attn_metadata_t& in) {
  out->query_start_loc = in.query_start_loc;
  out->query_start_loc_cpu = in.query_start_loc_cpu;
  out->seq_lens = in.seq_lens;
  out->seq_lens_cpu = in.seq_lens_cpu;
  out->num_computed_tokens_cpu = in.num_computed_tokens_cpu;
  out->block_table_tensor = in.block_table_tensor;
  out->slot_mapping = in.slot_mapping;
  out->logits_indices_padded = in.logits_indices_padded;
  out->num_reqs = in.num_reqs;
  out->num_actual_tokens = in.num_actual_tokens;
  out->max_query_len = in.max_query_len;
  out->max_seq_len = in.max_seq_len;
  out->num_logits_indices = in.num_logits_indices;
  out->causal = in.causal;
  out->reserved0 = in.reserved0;
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_make_kv_sharing_fast_prefill_common_attn_metadata(
    cattn_fast_prefill_metadata_args_t* args) {
  constexpr const char* fn = "cattn_make_kv_sharing_fast_prefill_common_attn_metadata";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    cattn::require_reserved_zero(fn, "args->reserved0", args->reserved0);
    // A snapshot, because out may be the same struct.
    const cattn_common_attn_metadata_t in =
        cattn::read_metadata(fn, "args->metadata", args->metadata);
    cattn::require_metadata_out(fn, "args->out", args->out, args->metadata);
    cattn_common_attn_metadata_t* const out = args->out;

    // vLLM returns its input untouched for an all-decode batch; nothing is read or checked.
    if (in.max_query_len == 1) {
      cattn::seal_arguments();
      copy_known_fields(out, in);
      cattn::write_metadata_1_1(out, in);
      args->passthrough = 1;
      return;
    }

    const cattn::TensorArg logits(fn, "args->metadata->logits_indices_padded",
                                  in.logits_indices_padded, cattn::Use::In);
    const cattn::TensorArg qsl(fn, "args->metadata->query_start_loc", in.query_start_loc,
                               cattn::Use::In);
    const cattn::TensorArg out_qsl(fn, "args->out->query_start_loc", out->query_start_loc,
                                   cattn::Use::Out);
    const cattn::TensorArg out_qsl_cpu(fn, "args->out->query_start_loc_cpu",
                                       out->query_start_loc_cpu, cattn::Use::Out, true);
    const cattn::TensorArg max_and_total(fn, "args->decode_max_and_total",
                                         args->decode_max_and_total, cattn::Use::Out, true);

    logits.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    const int64_t count = in.num_logits_indices;
    if (count < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->num_logits_indices",
                      "is negative", std::to_string(count), ">= 0");
    if (count > logits.numel())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->num_logits_indices",
                      "is out of range", std::to_string(count),
                      "0.." + std::to_string(logits.numel()) +
                          " (the length of logits_indices_padded)");
    if (in.num_reqs < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->num_reqs", "is not positive",
                      std::to_string(in.num_reqs),
                      ">= 1 (vLLM fails taking the max of an empty count)");
    const int64_t num_reqs = in.num_reqs;
    qsl.expect_ndim(1).expect_index_dtype().expect_scan_bounded().expect_size(
        0, cattn::checked_add(fn, "args->metadata->num_reqs + 1", num_reqs, 1));
    out_qsl.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, num_reqs + 1);
    if (out_qsl_cpu.present())
      out_qsl_cpu.expect_ndim(1).expect_index_dtype().expect_host().expect_writable()
          .expect_out_size(0, num_reqs + 1);
    if (max_and_total.present())
      max_and_total.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, 2);
    const cattn::Where where =
        cattn::require_same_device(fn, {&qsl, &logits, &out_qsl, &max_and_total});
    cattn::seal_arguments();
    if (where == cattn::Where::Cuda) {
      if (!max_and_total.present())
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->decode_max_and_total", "is NULL",
                        "NULL", "a [2] device tensor (required with CUDA tensors)");
      // Filling a host mirror would mean waiting for the device.
      if (out_qsl_cpu.present())
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->out->query_start_loc_cpu",
                        "is set with CUDA tensors", "a host tensor",
                        "NULL (the CUDA path never reads device results back)");
    }

    // At most `count` indices are counted (on the host every one is, as checked next), so
    // `count` bounds every output value on both paths.
    cattn::require_fits(fn, out_qsl, count);
    if (out_qsl_cpu.present()) cattn::require_fits(fn, out_qsl_cpu, count);
    if (max_and_total.present()) cattn::require_fits(fn, max_and_total, count);

    int64_t largest = -1, total = -1;  // the CUDA path's "see decode_max_and_total"
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::make_kv_sharing_fast_prefill_common_attn_metadata_device(
          fn, qsl, logits, count, out_qsl, max_and_total, args->stream);
    } else {
      cattn::check_fast_prefill_host(fn, qsl, logits, count);
      largest =
          cattn::make_fast_prefill_query_start_loc_host(qsl, logits, count, out_qsl, out_qsl_cpu);
      total = count;
      if (max_and_total.present()) {
        const cattn::IndexWriter w = cattn::writer1d(max_and_total);
        w.set(0, largest);
        w.set(1, total);
      }
    }
    // vLLM's new metadata: the decode query layout, everything else shared with the input,
    // causal, and no logits indices (the fast-prefill backend re-attaches them).
    out->seq_lens = in.seq_lens;
    out->seq_lens_cpu = in.seq_lens_cpu;
    out->num_computed_tokens_cpu = in.num_computed_tokens_cpu;
    out->block_table_tensor = in.block_table_tensor;
    out->slot_mapping = in.slot_mapping;
    out->logits_indices_padded = nullptr;
    out->num_reqs = num_reqs;
    out->num_actual_tokens = total;
    // Since 1.1, a given max_logits_per_req is trusted as vLLM does (not compared with the
    // counts); decode_max_and_total still receives the computed maximum. 0 counts as not given,
    // so that a zero-initialised struct behaves as in 1.0.
    out->max_query_len = in.max_logits_per_req > 0 ? in.max_logits_per_req : largest;
    out->max_seq_len = in.max_seq_len;
    out->num_logits_indices = 0;
    out->causal = 1;
    out->reserved0 = 0;
    // vLLM keeps only the upper bound of the newer fields; the rest take their defaults.
    cattn_common_attn_metadata_t v11 = CATTN_COMMON_ATTN_METADATA_INIT;
    v11.seq_lens_cpu_upper_bound = in.seq_lens_cpu_upper_bound;
    cattn::write_metadata_1_1(out, v11);
    args->passthrough = 0;
  });
}

}  // extern "C"
