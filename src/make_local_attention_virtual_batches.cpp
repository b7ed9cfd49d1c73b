// SPDX-License-Identifier: Apache-2.0
// Chunked local attention virtual batches (vLLM make_local_attention_virtual_batches)
// as a reusable plan: create, query its shape, write the virtual batch metadata, gather a block
// table (vLLM's make_block_table closure), destroy. Entry points: argument checks and dispatch;
// the algorithm is in host/make_local_attention_virtual_batches_host.cpp.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/metadata.h"
#include "common/param_checks.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/make_local_attention_virtual_batches_device.h"
#include "host/make_local_attention_virtual_batches_host.h"

namespace {

using cattn::LocalAttentionPlan;
using cattn::TensorArg;

void require_plan(const char* fn, const LocalAttentionPlan* plan) {
  cattn::require_live_handle(fn, "plan", plan, cattn::HandleKind::LocalAttentionPlan);
}

// What the size query and the create call both check and compute: the argument checks, the
// virtual-batch count V (one pass over the mirrors, no allocation) and the cap it must not
// exceed.
struct LocalAttentionRequest {
  int64_t chunk = 0, block_size = 0, batch = 0, cols = 0, num_actual_tokens = 0;
  int64_t virtual_batches = 0;
  // The mirrors as the checks found them in the metadata (read once).
  const DLTensor* query_start_loc_cpu = nullptr;
  const DLTensor* seq_lens_cpu = nullptr;
};

LocalAttentionRequest check_local_attention(const char* fn,
                                            const cattn_local_attention_args_t* args) {
  cattn::require_struct(fn, "args", args);
  LocalAttentionRequest r;
  r.chunk = args->attn_chunk_size;
  r.block_size = args->block_size;
  cattn::check_local_attention_sizes(fn, "args->", r.chunk, r.block_size);
  const int64_t cap_field = cattn::has_newest(args) ? args->max_virtual_batches : 0;
  if (cap_field < 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->max_virtual_batches", "is negative",
                    std::to_string(cap_field), ">= 0 (0 = derive it from num_actual_tokens)");
  const cattn_common_attn_metadata_t in =
      cattn::read_metadata(fn, "args->metadata", args->metadata);
  r.query_start_loc_cpu = in.query_start_loc_cpu;
  r.seq_lens_cpu = in.seq_lens_cpu;

  const TensorArg qsl(fn, "args->metadata->query_start_loc_cpu", in.query_start_loc_cpu,
                      cattn::Use::In);
  const TensorArg seq_lens(fn, "args->metadata->seq_lens_cpu", in.seq_lens_cpu, cattn::Use::In);
  const TensorArg table(fn, "args->metadata->block_table_tensor", in.block_table_tensor,
                        cattn::Use::In);
  seq_lens.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
  qsl.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
  r.batch = seq_lens.size(0);
  if (r.batch == 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->seq_lens_cpu",
                    "describes an empty batch", "0 requests",
                    ">= 1 request (vLLM fails on an empty batch)");
  qsl.expect_size(0, r.batch + 1);
  table.expect_ndim(2).expect_index_dtype().expect_size(0, r.batch);
  if (table.size(1) < 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->block_table_tensor",
                    "has no columns", table.shape_string(), "at least one column");
  r.cols = table.size(1);
  r.num_actual_tokens = in.num_actual_tokens;

  r.virtual_batches = cattn::count_local_attention_host(fn, r.chunk, qsl, seq_lens);
  // vLLM's bound (max_local_attention_virtual_batches): a request of q query tokens makes at
  // most 2 + (q - 1) / C virtual batches, and a request without query tokens makes one, so B
  // requests of T tokens make at most 2B + cdiv(T, C). Saturating: a cap past int64 is none.
  int64_t cap = cap_field;
  if (cap == 0) {
    const int64_t tokens = std::max<int64_t>(in.num_actual_tokens, 0);
    const int64_t chunks = tokens / r.chunk + (tokens % r.chunk != 0);
    if (__builtin_mul_overflow(r.batch, 2, &cap) || __builtin_add_overflow(cap, chunks, &cap))
      cap = INT64_MAX;
  }
  if (r.virtual_batches > cap)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn,
                    cap_field > 0 ? "args->max_virtual_batches"
                                  : "args->metadata->num_actual_tokens",
                    "caps the virtual batches below what the batch needs",
                    std::to_string(r.virtual_batches) + " virtual batches against a cap of " +
                        std::to_string(cap) +
                        (cap_field > 0 ? std::string()
                                       : " (2 * B + cdiv(num_actual_tokens, attn_chunk_size))"),
                    "a batch within the cap: set num_actual_tokens to the batch's token count, "
                    "or args->max_virtual_batches");
  return r;
}

// A block table to gather from: one row per request of the planned batch and at least the
// columns it had at plan time (vLLM's closure clips page indices to that count).
void expect_source_table(const char* fn, const LocalAttentionPlan& plan, const TensorArg& t) {
  t.expect_ndim(2).expect_index_dtype().expect_size(0, plan.batch);
  if (t.size(1) < plan.cols)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(), "has fewer columns than the plan's",
                    t.shape_string(), "at least " + std::to_string(plan.cols) + " columns");
}

void expect_gathered_table(const LocalAttentionPlan& plan, const TensorArg& out,
                           const TensorArg& source) {
  out.expect_ndim(2).expect_same_dtype(source).expect_writable();
  out.expect_out_size(0, plan.virtual_batches).expect_out_size(1, plan.pages);
}

void expect_vector_out(const TensorArg& t, int64_t size) {
  if (t.present()) t.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, size);
}

// The device gather gets each virtual batch's request and first page packed into one int64 as
// (batch << 32) | start, each below 2^31. A first page at or past cols - 1 reads column
// cols - 1 only, so it is packed clipped there and only B and cols bound what must fit. Both
// are checked before any launch, on every build, so a CPU-only build reports the same error.
void require_device_packable(const char* fn, const LocalAttentionPlan& plan, const TensorArg& t) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  if (plan.batch > kLimit)
    cattn::fail_arg(CATTN_NOT_SUPPORTED, fn, t.name(), "has too many rows for the device gather",
                    std::to_string(plan.batch) + " (the planned batch)", "<= 2^31 rows");
  if (plan.cols > kLimit)
    cattn::fail_arg(CATTN_NOT_SUPPORTED, fn, t.name(),
                    "has too many planned columns for the device gather",
                    std::to_string(plan.cols), "<= 2^31 columns");
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_size(
    const cattn_local_attention_args_t* args, int64_t* virtual_batches, int64_t* pages,
    size_t* plan_bytes) {
  constexpr const char* fn = "cattn_make_local_attention_virtual_batches_size";
  return cattn::guarded(fn, [&] {
    cattn::optional_out_ptr("virtual_batches", virtual_batches);
    cattn::optional_out_ptr("pages", pages);
    cattn::optional_out_ptr("plan_bytes", plan_bytes);
    const LocalAttentionRequest r = check_local_attention(fn, args);
    const int64_t bytes = cattn::local_attention_plan_bytes(fn, r.virtual_batches);
    cattn::seal_arguments();
    if (virtual_batches != nullptr) *virtual_batches = r.virtual_batches;
    if (pages != nullptr) *pages = r.chunk / r.block_size;
    if (plan_bytes != nullptr) *plan_bytes = static_cast<size_t>(bytes);
  });
}

CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches(
    cattn_local_attention_args_t* args) {
  constexpr const char* fn = "cattn_make_local_attention_virtual_batches";
  return cattn::guarded(fn, [&] {
    const LocalAttentionRequest r = check_local_attention(fn, args);
    // Within what the size query reports: checked, then allocated.
    (void)cattn::local_attention_plan_bytes(fn, r.virtual_batches);
    const TensorArg qsl(fn, "args->metadata->query_start_loc_cpu", r.query_start_loc_cpu,
                        cattn::Use::In);
    const TensorArg seq_lens(fn, "args->metadata->seq_lens_cpu", r.seq_lens_cpu, cattn::Use::In);
    auto plan = std::make_unique<LocalAttentionPlan>();
    plan->cols = r.cols;
    plan->num_actual_tokens = r.num_actual_tokens;
    cattn::plan_local_attention_host(fn, r.chunk, r.block_size, qsl, seq_lens, r.virtual_batches,
                                     *plan);
    cattn::register_handle(plan.get(), cattn::HandleKind::LocalAttentionPlan);
    args->plan = plan.release();
  });
}

CATTN_API void cattn_local_attention_plan_destroy(cattn_local_attention_plan_t* plan) {
  if (plan == nullptr) return;
  if (!cattn::release_handle("cattn_local_attention_plan_destroy", plan,
                             cattn::HandleKind::LocalAttentionPlan))
    return;
  plan->magic = cattn::kDeadHandleMagic;
  delete plan;
}

CATTN_API cattn_status_t cattn_local_attention_plan_get_shape(
    const cattn_local_attention_plan_t* plan, int64_t* virtual_batches, int64_t* pages) {
  constexpr const char* fn = "cattn_local_attention_plan_get_shape";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    cattn::optional_out_ptr("virtual_batches", virtual_batches);
    cattn::optional_out_ptr("pages", pages);
    cattn::seal_arguments();
    if (virtual_batches != nullptr) *virtual_batches = plan->virtual_batches;
    if (pages != nullptr) *pages = plan->pages;
  });
}

CATTN_API cattn_status_t cattn_local_attention_plan_fill(
    const cattn_local_attention_plan_t* plan, const cattn_local_attention_fill_args_t* args) {
  constexpr const char* fn = "cattn_local_attention_plan_fill";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    cattn::require_struct(fn, "args", args);
    // A snapshot, because out may be the same struct.
    const cattn_common_attn_metadata_t in =
        cattn::read_metadata(fn, "args->metadata", args->metadata);
    cattn::require_metadata_out(fn, "args->out", args->out, args->metadata);
    cattn_common_attn_metadata_t* const out = args->out;
    const int64_t v = plan->virtual_batches;

    const TensorArg table(fn, "args->metadata->block_table_tensor", in.block_table_tensor,
                          cattn::Use::In);
    const TensorArg slots(fn, "args->metadata->slot_mapping", in.slot_mapping, cattn::Use::In,
                          true);
    const TensorArg qsl_cpu(fn, "args->out->query_start_loc_cpu", out->query_start_loc_cpu,
                            cattn::Use::Out);
    const TensorArg seq_lens_cpu(fn, "args->out->seq_lens_cpu", out->seq_lens_cpu, cattn::Use::Out);
    const TensorArg computed(fn, "args->out->num_computed_tokens_cpu",
                             out->num_computed_tokens_cpu, cattn::Use::Out);
    const TensorArg out_table(fn, "args->out->block_table_tensor", out->block_table_tensor,
                              cattn::Use::Out);
    const TensorArg qsl(fn, "args->out->query_start_loc", out->query_start_loc, cattn::Use::Out,
                        true);
    const TensorArg seq_lens(fn, "args->out->seq_lens", out->seq_lens, cattn::Use::Out, true);
    // Since 1.1: the virtual batches' upper bound ([V], host), where the caller asks for it.
    const TensorArg upper(fn, "args->out->seq_lens_cpu_upper_bound",
                          cattn::metadata_has_1_1(out) ? out->seq_lens_cpu_upper_bound : nullptr,
                          cattn::Use::Out, true);

    expect_source_table(fn, *plan, table);
    expect_gathered_table(*plan, out_table, table);
    for (const TensorArg* t : {&qsl_cpu, &seq_lens_cpu, &computed}) t->expect_host();
    expect_vector_out(qsl_cpu, v + 1);
    expect_vector_out(qsl, v + 1);
    expect_vector_out(seq_lens_cpu, v);
    expect_vector_out(seq_lens, v);
    expect_vector_out(computed, v);
    if (upper.present()) upper.expect_host();
    expect_vector_out(upper, v);
    const cattn::Where where =
        cattn::require_same_device(fn, {&table, &out_table, &qsl, &seq_lens, &slots});
    cattn::seal_arguments();
    // Every value is >= 0, so the maxima decide whether each output dtype can hold them; they
    // are the plan's, so the device copies are checked here just like the host ones.
    for (const TensorArg* t : {&qsl_cpu, &qsl})
      if (t->present()) cattn::require_fits(fn, *t, plan->cu_seqlens_q.back());
    for (const TensorArg* t : {&seq_lens_cpu, &seq_lens, &upper})
      if (t->present()) cattn::require_fits(fn, *t, plan->max_seq_len);
    cattn::require_fits(fn, computed, plan->max_computed);

    const TensorArg none(fn, "(none)", nullptr, cattn::Use::In, true);
    if (where == cattn::Where::Cuda) {
      require_device_packable(fn, *plan, table);
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      // Device launches first: if one fails, the host mirrors are still untouched.
      else cattn::make_local_attention_virtual_batches_device(fn, *plan, table, out_table, &qsl,
                                                              &seq_lens, args->stream);
      cattn::write_local_attention_metadata_host(*plan, qsl_cpu, seq_lens_cpu, computed, none,
                                                 none);
      // The virtual batches' key lengths are exact, so they are their own upper bound.
      cattn::write_local_attention_metadata_host(*plan, none, upper, none, none, none);
    } else {
      cattn::write_local_attention_metadata_host(*plan, qsl_cpu, seq_lens_cpu, computed, qsl,
                                                 seq_lens);
      // The virtual batches' key lengths are exact, so they are their own upper bound.
      cattn::write_local_attention_metadata_host(*plan, none, upper, none, none, none);
      cattn::gather_local_block_table_host(*plan, table, out_table);
    }
    // vLLM's virtual-batch metadata: causal, the input's slot mapping and token count, no
    // logits indices.
    out->slot_mapping = in.slot_mapping;
    out->logits_indices_padded = nullptr;
    out->num_reqs = v;
    out->num_actual_tokens = plan->num_actual_tokens;
    out->max_query_len = plan->max_query_len;
    out->max_seq_len = plan->max_seq_len;
    out->num_logits_indices = 0;
    out->causal = 1;
    out->reserved0 = 0;
  });
}

CATTN_API cattn_status_t cattn_local_attention_plan_make_block_table(
    const cattn_local_attention_plan_t* plan, const DLTensor* block_table, DLTensor* out,
    cattn_stream_t stream) {
  constexpr const char* fn = "cattn_local_attention_plan_make_block_table";
  return cattn::guarded(fn, [&] {
    require_plan(fn, plan);
    const TensorArg table(fn, "block_table", block_table, cattn::Use::In);
    const TensorArg gathered(fn, "out", out, cattn::Use::Out);
    expect_source_table(fn, *plan, table);
    expect_gathered_table(*plan, gathered, table);
    const cattn::Where where = cattn::require_same_device(fn, {&table, &gathered});
    cattn::seal_arguments();
    const TensorArg none(fn, "(none)", nullptr, cattn::Use::In, true);
    if (where == cattn::Where::Cuda) {
      require_device_packable(fn, *plan, table);
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::make_local_attention_virtual_batches_device(fn, *plan, table, gathered, nullptr,
                                                              nullptr, stream);
      return;
    }
    cattn::gather_local_block_table_host(*plan, table, gathered);
  });
}

CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_capturable(
    const cattn_local_attention_capturable_args_t* args) {
  constexpr const char* fn = "cattn_make_local_attention_virtual_batches_capturable";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    cattn::check_local_attention_sizes(fn, "args->", args->attn_chunk_size, args->block_size);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, cattn::Use::In);
    const TensorArg seq_lens(fn, "args->seq_lens", args->seq_lens, cattn::Use::In);
    const TensorArg table(fn, "args->block_table", args->block_table, cattn::Use::In);
    const TensorArg qsl_out(fn, "args->query_start_loc_out", args->query_start_loc_out,
                            cattn::Use::Out);
    const TensorArg seq_lens_out(fn, "args->seq_lens_out", args->seq_lens_out, cattn::Use::Out);
    const TensorArg computed(fn, "args->num_computed_tokens_out", args->num_computed_tokens_out,
                             cattn::Use::Out,
                             true);
    const TensorArg table_out(fn, "args->block_table_out", args->block_table_out, cattn::Use::Out,
                              true);
    const TensorArg counts(fn, "args->counts", args->counts, cattn::Use::Out, true);
    const cattn::LocalAttentionCapturableTensors t{qsl,          seq_lens, table,    qsl_out,
                                                   seq_lens_out, computed, table_out};
    cattn::check_local_attention_capturable_tensors(t, args->attn_chunk_size / args->block_size);
    if (counts.present())
      counts.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, 3);
    // Every block reads all of the inputs while others write.
    cattn::seal_arguments();
    cattn::require_same_device(
        fn, {&qsl, &seq_lens, &table, &qsl_out, &seq_lens_out, &computed, &table_out, &counts});
    qsl.expect_cuda("cattn_make_local_attention_virtual_batches and the plan calls");
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
    else
      cattn::make_local_attention_virtual_batches_capturable(
          fn, t, args->attn_chunk_size, args->block_size, counts, args->stream);
  });
}

}  // extern "C"
