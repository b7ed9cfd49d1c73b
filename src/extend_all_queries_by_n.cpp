// Extend every query by n tokens (vLLM extend_all_queries_by_1, generalised to N as
// vLLM later did). Entry point: argument checks and dispatch; the element-wise work is in
// host/extend_all_queries_by_n_host.cpp.
#include <initializer_list>
#include <string>
#include <utility>

#include "common/error.h"
#include "common/product_checks.h"
#include "common/tensor_arg.h"
#include "device/extend_all_queries_by_n_device.h"
#include "host/extend_all_queries_by_n_host.h"

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

// In place works when an output is exactly the input it replaces or that input's mirror (the
// host loop reads element i of both before writing it there). Any other overlap would feed
// written values back in, so it is refused.
void require_safe_alias(const char* fn, const cattn::TensorArg& out,
                        std::initializer_list<const cattn::TensorArg*> own,
                        std::initializer_list<const cattn::TensorArg*> others) {
  for (const cattn::TensorArg* in : own)
    if (!cattn::same_view(out, *in)) cattn::require_disjoint(fn, out, *in);
  for (const cattn::TensorArg* in : others) cattn::require_disjoint(fn, out, *in);
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_extend_all_queries_by_n(
    const cattn_extend_all_queries_by_n_args_t* args) {
  constexpr const char* fn = "cattn_extend_all_queries_by_n";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args, sizeof(cattn_extend_all_queries_by_n_args_t));
    cattn::require_struct(fn, "args->metadata", args->metadata, CATTN_COMMON_ATTN_METADATA_SIZE);
    cattn::require_struct(fn, "args->out", args->out, CATTN_COMMON_ATTN_METADATA_SIZE);
    // A snapshot of the input, because `out` may be the very same struct.
    const cattn_common_attn_metadata_t in = *args->metadata;
    cattn_common_attn_metadata_t* const out = args->out;
    const int64_t n = args->n;
    cattn::check_extend_n(fn, "args->", n);

    const cattn::TensorArg seq_lens(fn, "args->metadata->seq_lens", in.seq_lens);
    const cattn::TensorArg qsl(fn, "args->metadata->query_start_loc", in.query_start_loc);
    const cattn::TensorArg seq_lens_cpu(fn, "args->metadata->seq_lens_cpu", in.seq_lens_cpu, true);
    const cattn::TensorArg qsl_cpu(fn, "args->metadata->query_start_loc_cpu",
                                   in.query_start_loc_cpu, true);
    const cattn::TensorArg slot(fn, "args->new_slot_mapping", args->new_slot_mapping, true);
    const cattn::TensorArg out_seq_lens(fn, "args->out->seq_lens", out->seq_lens);
    const cattn::TensorArg out_qsl(fn, "args->out->query_start_loc", out->query_start_loc);
    const cattn::TensorArg out_seq_lens_cpu(fn, "args->out->seq_lens_cpu", out->seq_lens_cpu, true);
    const cattn::TensorArg out_qsl_cpu(fn, "args->out->query_start_loc_cpu",
                                       out->query_start_loc_cpu, true);

    // vLLM's batch_size() is seq_lens.shape[0]; query_start_loc has one more entry.
    seq_lens.expect_ndim(1).expect_index_dtype();
    const int64_t batch = seq_lens.size(0);
    qsl.expect_ndim(1).expect_index_dtype().expect_size(0, batch + 1);
    out_seq_lens.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, batch);
    out_qsl.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, batch + 1);
    require_mirror_pair(fn, seq_lens_cpu, out_seq_lens_cpu, batch);
    require_mirror_pair(fn, qsl_cpu, out_qsl_cpu, batch + 1);
    if (slot.present()) slot.expect_ndim(1);
    for (const cattn::TensorArg* o : {&out_qsl, &out_qsl_cpu})
      require_safe_alias(fn, *o, {&qsl, &qsl_cpu}, {&seq_lens, &seq_lens_cpu});
    for (const cattn::TensorArg* o : {&out_seq_lens, &out_seq_lens_cpu})
      require_safe_alias(fn, *o, {&seq_lens, &seq_lens_cpu}, {&qsl, &qsl_cpu});
    // Outputs of different tensors never share memory; a tensor and its mirror may be one view
    // (both receive the same values, the mirror having been checked to match).
    for (const cattn::TensorArg* o : {&out_seq_lens, &out_seq_lens_cpu})
      for (const cattn::TensorArg* other : {&out_qsl, &out_qsl_cpu})
        cattn::require_disjoint_outputs(fn, {other, o}, {});
    for (const auto& pair : {std::make_pair(&out_qsl, &out_qsl_cpu),
                             std::make_pair(&out_seq_lens, &out_seq_lens_cpu)})
      if (!cattn::same_view(*pair.first, *pair.second))
        cattn::require_disjoint_outputs(fn, {pair.first, pair.second}, {});
    const cattn::Where where =
        cattn::require_same_device(fn, {&qsl, &seq_lens, &out_qsl, &out_seq_lens, &slot});

    // n * B also bounds i * n for every index the kernel computes.
    const int64_t num_actual_tokens = cattn::checked_add(
        fn, "args->metadata->num_actual_tokens + n * B", in.num_actual_tokens,
        cattn::checked_mul(fn, "n * B", n, batch));
    const int64_t max_query_len =
        cattn::checked_add(fn, "args->metadata->max_query_len + n", in.max_query_len, n);
    const int64_t max_seq_len =
        cattn::checked_add(fn, "args->metadata->max_seq_len + n", in.max_seq_len, n);

    if (where == cattn::Where::Cuda) {
      // The mirrors are host memory: checked here as pairs of their own (on every build, so the
      // errors do not depend on it), and written after the launch so that a failed launch
      // leaves them untouched too.
      const cattn::TensorArg none(fn, "(none)", nullptr, true);
      const cattn::ExtendedPair starts{qsl_cpu, none, out_qsl_cpu, none, 0, n};
      const cattn::ExtendedPair lens{seq_lens_cpu, none, out_seq_lens_cpu, none, n, 0};
      if (qsl_cpu.present()) cattn::check_extended_pair_host(fn, starts);
      if (seq_lens_cpu.present()) cattn::check_extended_pair_host(fn, lens);
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::extend_all_queries_by_n_device(fn, qsl, seq_lens, out_qsl, out_seq_lens, n,
                                                  args->stream);
      if (qsl_cpu.present()) cattn::write_extended_pair_host(starts);
      if (seq_lens_cpu.present()) cattn::write_extended_pair_host(lens);
    } else {
      const cattn::ExtendedPair starts{qsl, qsl_cpu, out_qsl, out_qsl_cpu, 0, n};
      const cattn::ExtendedPair lens{seq_lens, seq_lens_cpu, out_seq_lens, out_seq_lens_cpu, n, 0};
      // Both sides are host memory here, so comparing a mirror with its tensor is cheap.
      cattn::check_mirror_host(fn, qsl, qsl_cpu);
      cattn::check_mirror_host(fn, seq_lens, seq_lens_cpu);
      cattn::check_extended_pair_host(fn, starts);
      cattn::check_extended_pair_host(fn, lens);
      cattn::write_extended_pair_host(starts);
      cattn::write_extended_pair_host(lens);
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
  });
}

}  // extern "C"
