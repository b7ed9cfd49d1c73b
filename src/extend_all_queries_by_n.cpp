// SPDX-License-Identifier: Apache-2.0
// Extend every query by n tokens (vLLM extend_all_queries_by_1, generalised to N as
// vLLM later did). Entry point: argument checks and dispatch; the element-wise work is in
// host/extend_all_queries_by_n_host.cpp.
#include <initializer_list>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/metadata.h"
#include "common/param_checks.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/extend_all_queries_by_n_device.h"
#include "device/get_dcp_local_seq_lens_device.h"
#include "device/token_to_req_indices_device.h"
#include "host/extend_all_queries_by_n_host.h"
#include "host/get_dcp_local_seq_lens_host.h"
#include "host/token_to_req_indices_host.h"

namespace {

// A host mirror in the output exactly when the input has one: updating a mirror needs its
// source, and dropping one silently would leave the caller reading stale lengths.
void require_mirror_pair(const char* fn, const cattn::TensorArg& in, const cattn::TensorArg& out,
                         int64_t size) {
  if (in.present() && !out.present())
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, out.name(), "is NULL", "NULL",
                    std::string("a host tensor of ") + std::to_string(size) +
                        " elements, because " + in.name() + " is set");
  if (!in.present() && out.present())
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, out.name(), "is set without a source", "a tensor",
                    std::string("NULL, because ") + in.name() + " is NULL");
  if (!in.present()) return;
  in.expect_ndim(1).expect_index_dtype().expect_host().expect_size(0, size);
  out.expect_ndim(1).expect_index_dtype().expect_host().expect_writable().expect_out_size(0, size);
}

// The DCP lengths in the output exactly when the input has them (as for the mirrors), [B] of
// one rank; a host mirror or a tensor on the batch's device.
void require_dcp_pair(const char* fn, const cattn::TensorArg& in, const cattn::TensorArg& out,
                      int64_t size, bool host) {
  if (in.present() != out.present())
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, out.name(),
                    in.present() ? "is NULL" : "is set without a source",
                    in.present() ? "NULL" : "a tensor",
                    std::string(in.present() ? "a tensor of " + std::to_string(size) +
                                                   " elements, because "
                                             : "NULL, because ") +
                        in.name() + (in.present() ? " is set" : " is NULL"));
  if (!in.present()) return;
  out.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, size);
  if (host) out.expect_host();
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_extend_all_queries_by_n(
    const cattn_extend_all_queries_by_n_args_t* args) {
  constexpr const char* fn = "cattn_extend_all_queries_by_n";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const bool args_1_1 = cattn::has_newest(args);
    // A snapshot of the input, because `out` may be the very same struct.
    const cattn_common_attn_metadata_t in =
        cattn::read_metadata(fn, "args->metadata", args->metadata);
    cattn::require_metadata_out(fn, "args->out", args->out, args->metadata);
    cattn_common_attn_metadata_t* const out = args->out;
    const int64_t n = args->n;
    cattn::check_extend_n(fn, "args->", n);

    const cattn::TensorArg seq_lens(fn, "args->metadata->seq_lens", in.seq_lens, cattn::Use::In);
    const cattn::TensorArg qsl(fn, "args->metadata->query_start_loc", in.query_start_loc,
                               cattn::Use::In);
    const cattn::TensorArg seq_lens_cpu(fn, "args->metadata->seq_lens_cpu", in.seq_lens_cpu,
                                        cattn::Use::In, true);
    const cattn::TensorArg qsl_cpu(fn, "args->metadata->query_start_loc_cpu",
                                   in.query_start_loc_cpu, cattn::Use::In, true);
    const cattn::TensorArg slot(fn, "args->new_slot_mapping", args->new_slot_mapping,
                                cattn::Use::In, true);
    const cattn::TensorArg out_seq_lens(fn, "args->out->seq_lens", out->seq_lens, cattn::Use::Out);
    const cattn::TensorArg out_qsl(fn, "args->out->query_start_loc", out->query_start_loc,
                                   cattn::Use::Out);
    const cattn::TensorArg out_seq_lens_cpu(fn, "args->out->seq_lens_cpu", out->seq_lens_cpu,
                                            cattn::Use::Out, true);
    const cattn::TensorArg out_qsl_cpu(fn, "args->out->query_start_loc_cpu",
                                       out->query_start_loc_cpu, cattn::Use::Out, true);

    // vLLM's batch_size() is seq_lens.shape[0]; query_start_loc has one more entry.
    seq_lens.expect_ndim(1).expect_index_dtype();
    const int64_t batch = seq_lens.size(0);
    qsl.expect_ndim(1).expect_index_dtype().expect_size(0, batch + 1);
    out_seq_lens.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, batch);
    out_qsl.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, batch + 1);
    require_mirror_pair(fn, seq_lens_cpu, out_seq_lens_cpu, batch);
    require_mirror_pair(fn, qsl_cpu, out_qsl_cpu, batch + 1);
    if (slot.present()) slot.expect_ndim(1);
    // In place: an output may be exactly the input it replaces or that input's mirror (the host
    // loop reads element i of both before writing it there), and a tensor and its mirror may be
    // one view (both receive the same values, the mirror having been checked to match). Every
    // other overlap would feed written values back in, and the seal below refuses it.
    for (const cattn::TensorArg* o : {&out_qsl, &out_qsl_cpu})
      for (const cattn::TensorArg* i : {&qsl, &qsl_cpu}) cattn::allow_in_place(*o, *i);
    for (const cattn::TensorArg* o : {&out_seq_lens, &out_seq_lens_cpu})
      for (const cattn::TensorArg* i : {&seq_lens, &seq_lens_cpu}) cattn::allow_in_place(*o, *i);
    cattn::allow_in_place(out_qsl_cpu, out_qsl);
    cattn::allow_in_place(out_seq_lens_cpu, out_seq_lens);

    // Since 1.1: the newer fields, present only in 1.1 structs (the snapshot `in` has NULLs for
    // a 1.0 input, and nothing is read from or written to a 1.0 out).
    const bool out_1_1 = cattn::metadata_has_1_1(out);
    const cattn::TensorArg upper(fn, "args->metadata->seq_lens_cpu_upper_bound",
                                 in.seq_lens_cpu_upper_bound, cattn::Use::In, true);
    const cattn::TensorArg out_upper(fn, "args->out->seq_lens_cpu_upper_bound",
                                     out_1_1 ? out->seq_lens_cpu_upper_bound : nullptr,
                                     cattn::Use::Out, true);
    const cattn::TensorArg dcp(fn, "args->metadata->dcp_local_seq_lens", in.dcp_local_seq_lens,
                               cattn::Use::In, true);
    const cattn::TensorArg out_dcp(fn, "args->out->dcp_local_seq_lens",
                                   out_1_1 ? out->dcp_local_seq_lens : nullptr, cattn::Use::Out,
                                   true);
    const cattn::TensorArg dcp_cpu(fn, "args->metadata->dcp_local_seq_lens_cpu",
                                   in.dcp_local_seq_lens_cpu, cattn::Use::In, true);
    const cattn::TensorArg out_dcp_cpu(fn, "args->out->dcp_local_seq_lens_cpu",
                                       out_1_1 ? out->dcp_local_seq_lens_cpu : nullptr,
                                       cattn::Use::Out, true);
    const cattn::TensorArg positions(fn, "args->out->positions",
                                     out_1_1 ? out->positions : nullptr, cattn::Use::Out, true);
    if (out_1_1) {
      require_mirror_pair(fn, upper, out_upper, batch);
      require_dcp_pair(fn, dcp, out_dcp, batch, false);
      require_dcp_pair(fn, dcp_cpu, out_dcp_cpu, batch, true);
    }
    const bool any_dcp = out_dcp.present() || out_dcp_cpu.present();
    if (any_dcp) {
      if (!args_1_1 || args->dcp_size == 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_size", "is not given",
                        args_1_1 ? "0" : "a 1.0 args struct",
                        ">= 1: the metadata has DCP lengths to extend");
      cattn::check_dcp_params(fn, "args->", args->dcp_size, args->dcp_rank,
                              args->dcp_kv_cache_interleave_size);
      if (args->dcp_rank < 0)
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->dcp_rank", "is not one rank",
                        std::to_string(args->dcp_rank),
                        "0.." + std::to_string(args->dcp_size - 1));
    }
    if (positions.present()) positions.expect_ndim(1).expect_index_dtype().expect_writable();
    // The upper bound is extended element by element like seq_lens; the DCP lengths are
    // computed from the extended outputs, never read from their inputs. Each may replace its
    // own input exactly; every other overlap is refused.
    cattn::allow_in_place(out_upper, upper);
    cattn::allow_in_place(out_dcp, dcp);
    cattn::allow_in_place(out_dcp_cpu, dcp_cpu);
    if (out_dcp_cpu.present() && !seq_lens_cpu.present() && seq_lens.is_cuda())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->seq_lens_cpu", "is NULL",
                      "NULL", "the host mirror of seq_lens, to extend dcp_local_seq_lens_cpu");
    const cattn::Where where = cattn::require_same_device(
        fn, {&qsl, &seq_lens, &out_qsl, &out_seq_lens, &slot, &dcp, &out_dcp, &positions});
    // The lengths the DCP split and the positions are computed from, checked before any write.
    const cattn::TensorArg& host_lens = seq_lens.is_cuda() ? seq_lens_cpu : seq_lens;
    if (any_dcp && host_lens.present())
      cattn::check_extended_dcp_lens_host(fn, host_lens, n);

    // n * B also bounds i * n for every index the kernel computes.
    const int64_t num_actual_tokens = cattn::checked_add(
        fn, "args->metadata->num_actual_tokens + n * B", in.num_actual_tokens,
        cattn::checked_mul(fn, "n * B", n, batch));
    const int64_t max_query_len =
        cattn::checked_add(fn, "args->metadata->max_query_len + n", in.max_query_len, n);
    const int64_t max_seq_len =
        cattn::checked_add(fn, "args->metadata->max_seq_len + n", in.max_seq_len, n);
    cattn::seal_arguments();

    if (where == cattn::Where::Cuda) {
      // The mirrors are host memory: checked here as pairs of their own (on every build, so the
      // errors do not depend on it), and written after the launch so that a failed launch
      // leaves them untouched too.
      const cattn::TensorArg none(fn, "(none)", nullptr, cattn::Use::In, true);
      const cattn::ExtendedPair starts{qsl_cpu, none, out_qsl_cpu, none, 0, n};
      const cattn::ExtendedPair lens{seq_lens_cpu, none, out_seq_lens_cpu, none, n, 0};
      if (qsl_cpu.present()) cattn::check_extended_pair_host(fn, starts);
      if (seq_lens_cpu.present()) cattn::check_extended_pair_host(fn, lens);
      const cattn::ExtendedPair bound{upper, none, out_upper, none, n, 0};
      if (out_upper.present()) cattn::check_extended_pair_host(fn, bound);
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else {
        cattn::extend_all_queries_by_n_device(fn, qsl, seq_lens, out_qsl, out_seq_lens, n,
                                              args->stream);
        // Both read the extended tensors the kernel above writes, in stream order.
        if (out_dcp.present())
          cattn::get_dcp_local_seq_lens_device(fn, out_seq_lens, args->dcp_size, args->dcp_rank,
                                               args->dcp_kv_cache_interleave_size, out_dcp,
                                               args->stream);
        if (positions.present())
          cattn::token_to_req_indices_device(fn, out_qsl, &out_seq_lens, positions.numel(),
                                             positions, args->stream);
      }
      if (qsl_cpu.present()) cattn::write_extended_pair_host(starts);
      if (seq_lens_cpu.present()) cattn::write_extended_pair_host(lens);
      if (out_upper.present()) cattn::write_extended_pair_host(bound);
      if (out_dcp_cpu.present())
        cattn::get_dcp_local_seq_lens_host(out_seq_lens_cpu, args->dcp_size, args->dcp_rank, 1,
                                           args->dcp_kv_cache_interleave_size, out_dcp_cpu, 0);
    } else {
      const cattn::ExtendedPair starts{qsl, qsl_cpu, out_qsl, out_qsl_cpu, 0, n};
      const cattn::ExtendedPair lens{seq_lens, seq_lens_cpu, out_seq_lens, out_seq_lens_cpu, n, 0};
      // Both sides are host memory here, so comparing a mirror with its tensor is cheap.
      cattn::check_mirror_host(fn, qsl, qsl_cpu);
      cattn::check_mirror_host(fn, seq_lens, seq_lens_cpu);
      const cattn::TensorArg none(fn, "(none)", nullptr, cattn::Use::In, true);
      const cattn::ExtendedPair bound{upper, none, out_upper, none, n, 0};
      cattn::check_extended_pair_host(fn, starts);
      cattn::check_extended_pair_host(fn, lens);
      if (out_upper.present()) cattn::check_extended_pair_host(fn, bound);
      if (positions.present()) cattn::check_token_positions_host(fn, qsl, seq_lens, n, positions);
      cattn::write_extended_pair_host(starts);
      cattn::write_extended_pair_host(lens);
      if (out_upper.present()) cattn::write_extended_pair_host(bound);
      for (const cattn::TensorArg* o : {&out_dcp, &out_dcp_cpu})
        if (o->present())
          cattn::get_dcp_local_seq_lens_host(out_seq_lens, args->dcp_size, args->dcp_rank, 1,
                                             args->dcp_kv_cache_interleave_size, *o, 0);
      if (positions.present()) cattn::token_positions_host(out_qsl, out_seq_lens, positions);
    }
    // out->query_start_loc(_cpu) and out->seq_lens(_cpu) keep the tensors the caller set.
    out->num_computed_tokens_cpu = in.num_computed_tokens_cpu;  // context lengths are unchanged
    out->block_table_tensor = in.block_table_tensor;
    out->slot_mapping = args->new_slot_mapping;
    out->logits_indices_padded = in.logits_indices_padded;
    out->num_reqs = in.num_reqs;
    out->num_actual_tokens = num_actual_tokens;
    out->max_query_len = max_query_len;
    out->max_seq_len = max_seq_len;
    out->num_logits_indices = in.num_logits_indices;
    out->causal = in.causal;
    out->reserved0 = 0;
    cattn_common_attn_metadata_t v11 = in;  // is_prefilling, causal_per_req, encoder, max logits
    v11.seq_lens_cpu_upper_bound = const_cast<DLTensor*>(out_upper.raw());
    v11.dcp_local_seq_lens = const_cast<DLTensor*>(out_dcp.raw());
    v11.dcp_local_seq_lens_cpu = const_cast<DLTensor*>(out_dcp_cpu.raw());
    v11.positions = const_cast<DLTensor*>(positions.raw());  // NULL: dropped, never stale
    cattn::write_metadata_1_1(out, v11);
  });
}

}  // extern "C"
