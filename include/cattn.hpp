// SPDX-License-Identifier: Apache-2.0
/**
 * @file cattn.hpp
 * cattn.hpp - libcattn's C++17 layer over the C ABI of cattn.h: RAII owners for the handles,
 * typed non-owning tensor views, exceptions, and one-call helpers that allocate and return
 * their outputs.
 *
 * Header-only: every function here is inline and calls the C entry points of cattn.h, so this
 * header adds no symbol and no ABI of its own. Link libcattn as a C caller does
 * (find_package(cattn) and cattn::cattn, or pkg-config cattn). It needs C++17 and no CUDA
 * header. cattn.h states each C call's contract and `docs/api/<utility>.md` explains it (what
 * it computes, every rule and status, the parity with vLLM, examples, history); the comments
 * here say only which C call a wrapper makes, what it allocates and what it throws, and end
 * with a pointer to that page.
 *
 * Conventions (each declaration below states only what it adds):
 *
 *  1. Errors. A wrapper whose C call returns a status other than CATTN_OK throws cattn::error,
 *     which carries that status and the thread's cattn_last_error_message(), copied before
 *     anything else runs. "Throws: error" below means exactly this. Checks this layer makes
 *     itself (the shape of an input it needs to size an output) throw cattn::error with
 *     CATTN_INVALID_ARGUMENT and a message that starts with "cattn::". Allocations may throw
 *     std::bad_alloc. No destructor throws.
 *  2. Handles. context, comm, local_attention_plan and step_plan each own one C handle: they
 *     are move-only and destroy the handle in their destructor; get() lends the C handle and
 *     release() gives up ownership of it. A moved-from owner holds nothing; using it is the C
 *     call's error on a NULL handle (thrown).
 *  3. Views. tensor_view<T> is a non-owning DLTensor over memory the caller owns: a pointer, a
 *     shape of up to cattn::max_dims dimensions, optional strides (in elements), a byte offset
 *     and a device. T fixes the DLPack dtype at compile time (dtype_of<T>); tensor_view<const T>
 *     views an input, and the const is cast away only where cattn.h takes a non-const
 *     DLTensor* for a tensor it does not write. The wrappers take type-erased views:
 *     index_cview and index_view accept int32 and int64 elements only (a float index tensor
 *     does not compile), any_cview and any_view any element type that has a dtype. Each
 *     converts implicitly from a tensor_view, a std::vector, a std::array, a C array, a
 *     host_tensor and, under C++20, a std::span; the *_view (mutable) kinds only from
 *     non-const memory. A default-constructed view is absent: the C call sees NULL.
 *  4. Devices. A view is host memory (kDLCPU) unless made with a device, e.g.
 *     tensor_view<int32_t>(ptr, {n}, cattn::cuda(0)), or moved with .on(cattn::cuda(0)). The
 *     C calls dispatch on the tensors' devices: see docs/api/conventions.md.
 *  5. Streams. stream_ref takes a cudaStream_t (cattn_stream_t is the same type, so no CUDA
 *     header is needed), a void*, or nothing (NULL, the legacy default stream). Every wrapper
 *     whose C call has a stream takes one, last, and forwards it; host tensors ignore it.
 *  6. One-call helpers. Every host utility has an overload of the same name that allocates its
 *     outputs in host memory and returns them (std::vector, host_tensor or a small struct),
 *     making the C size query first where there is one. Index outputs are int64_t unless the
 *     template argument names another index type: get_pcp_query_restore_idx<int32_t>(cu).
 *     Their parameters come in the order of the C args struct's fields, as the Rust and Go
 *     helpers' do (scripts/check_helper_order.py).
 *  7. Lifetime. Views borrow: the memory must outlive the call (and, for CUDA work, the work).
 *     Nothing here keeps a view after returning, except the views inside an attn_metadata that
 *     the caller holds and unpadded() returns.
 *  8. Threads. As the C calls (see docs/api/conventions.md). The objects of this header are
 *     not synchronised: share one between threads for reading only.
 *
 * Everything in this header is Since: 1.1, except what is marked Since: 1.2 (the step inputs, the
 * speculative-decoding calls and the step plan's 1.2 fields).
 */
#ifndef CATTN_HPP
#define CATTN_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cattn.hpp needs C++17 or newer; C callers include cattn.h"
#endif

#include "cattn.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if __cplusplus >= 202002L && defined(__has_include)
#if __has_include(<span>)
#include <span>
#endif
#endif
/** Defined to 1 when tensor views convert from std::span (C++20 with the library's span).
 * @ingroup group_cpp_views */
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#define CATTN_HPP_HAVE_SPAN 1
#else
#define CATTN_HPP_HAVE_SPAN 0
#endif

/** @defgroup group_cpp C++ layer (cattn.hpp)
 * RAII owners, typed tensor views, exceptions and one-call helpers over the C calls, one
 * section of cattn.hpp per group below; cattn.hpp's file comment states the conventions
 * they share. */

/** libcattn's C++ layer: everything of cattn.hpp but the CATTN_HPP_* macros. */
namespace cattn {

/* ============================================================================================
 * Errors
 * ========================================================================================== */
/** @defgroup group_cpp_errors Errors
 * @ingroup group_cpp
 * The exception every wrapper throws (cattn::error), and check() for a caller's own C calls.
 * @{ */

/** A failed libcattn call: its status and the library's message. what() is
 * "<status name>: <message>", e.g. "CATTN_INVALID_ARGUMENT: cattn::get_dcp_local_seq_lens: ...".
 * Copying never throws. Since: 1.1
 *
 * The wrappers name the refused argument in C++ terms: the library's message
 * "<C function>: <C argument> <problem> (got X, expected Y)" comes out as
 * "cattn::<wrapper>: <C++ parameter> <problem> (got X, expected Y)", e.g.
 * "cattn_fused_pcp_qkv_select_size: pcp_world_size is out of range (...)" as
 * "cattn::fused_pcp_qkv_select_size: pcp_world_size ..." and "cattn_split_decodes_and_prefills:
 * args->decode_threshold ..." as "cattn::split_decodes_and_prefills: options.decode_threshold
 * ...". The C argument paths and their C++ names are one table, detail::arg_names; a message
 * whose argument the table does not name keeps the library's wording. c_message() is the
 * library's message as it was written.
 * See docs/api/context.md for the statuses and the message format. */
class error : public std::runtime_error {
 public:
  /** An error whose message, and library message, is `message`. */
  error(cattn_status_t status, const std::string& message)
      : std::runtime_error(std::string(cattn_status_string(status)) + ": " + message),
        status_(status),
        prefix_(std::strlen(cattn_status_string(status)) + 2) {}
  /** An error whose message is `message` and whose library message is `c_message`. */
  error(cattn_status_t status, const std::string& message, const std::string& c_message)
      : error(status, message) {
    c_message_ = std::make_shared<const std::string>(c_message);
  }
  /** The status the C call returned (CATTN_INVALID_ARGUMENT for this layer's own checks). */
  cattn_status_t status() const noexcept { return status_; }
  /** The message alone, in C++ terms: the library's message translated (see above), or this
   * layer's. */
  const char* message() const noexcept { return what() + prefix_; }
  /** The library's message as cattn_last_error_message() gave it, C names and all; for an
   * error this layer raised itself, message(). */
  const char* c_message() const noexcept { return c_message_ ? c_message_->c_str() : message(); }

 private:
  cattn_status_t status_;
  size_t prefix_;
  std::shared_ptr<const std::string> c_message_;  // shared: copying never throws
};

/** Throws error(status, cattn_last_error_message()) unless status is CATTN_OK: for callers that
 * mix this header with C calls of their own. Since: 1.1
 * See docs/api/context.md. */
inline void check(cattn_status_t status) {
  if (status != CATTN_OK) throw error(status, cattn_last_error_message());
}

namespace detail {

/** One argument the library may name in a message, in C++ terms: in a message of
 * `c_function`, the C path `c_path` (a parameter, or a field under one: "args->pcp_rank") is
 * `name` (the wrapper's parameter or the field of it that carries the value). A message's
 * path that continues past a listed one ("args->metadata->seq_lens" under "args->metadata")
 * keeps the rest with "->" written ".". */
struct arg_name {
  const char* c_function;
  const char* c_path;
  const char* name;
};

/** The C++ name of each C function whose wrapper is not cattn::<name without "cattn_">: the
 * handles' methods. */
struct function_name {
  const char* c_function;
  const char* name;
};

// The one table of the C++ layer's argument names. Positional parameters keep their C names
// where the wrapper's parameter is named the same (listed all the same, so that the table
// says what every message of a wrapped call names).
inline constexpr arg_name arg_names[] = {
    // get_dcp_local_seq_lens(seq_lens, out, dcp_size, dcp_rank, dcp_kv_cache_interleave_size,
    // stream, shape_mode)
    {"cattn_get_dcp_local_seq_lens", "args->seq_lens", "seq_lens"},
    {"cattn_get_dcp_local_seq_lens", "args->out", "out"},
    {"cattn_get_dcp_local_seq_lens", "args->dcp_size", "dcp_size"},
    {"cattn_get_dcp_local_seq_lens", "args->dcp_rank", "dcp_rank"},
    {"cattn_get_dcp_local_seq_lens", "args->dcp_kv_cache_interleave_size",
     "dcp_kv_cache_interleave_size"},
    {"cattn_get_dcp_local_seq_lens", "args->shape_mode", "shape_mode"},
    // get_pcp_query_restore_idx_size(cu_num_tokens), get_pcp_query_restore_idx(cu_num_tokens,
    // restore_idx, stream)
    {"cattn_get_pcp_query_restore_idx_size", "cu_num_tokens", "cu_num_tokens"},
    {"cattn_get_pcp_query_restore_idx", "args->cu_num_tokens", "cu_num_tokens"},
    {"cattn_get_pcp_query_restore_idx", "args->restore_idx", "restore_idx"},
    // fused_pcp_qkv_select_size(num_q_rows, pcp_world_size, pcp_rank),
    // fused_pcp_qkv_select(q, k, v, query_start_loc, pcp_world_size, pcp_rank, out, stream)
    {"cattn_fused_pcp_qkv_select_size", "num_q_rows", "num_q_rows"},
    {"cattn_fused_pcp_qkv_select_size", "pcp_world_size", "pcp_world_size"},
    {"cattn_fused_pcp_qkv_select_size", "pcp_rank", "pcp_rank"},
    {"cattn_fused_pcp_qkv_select", "args->q", "q"},
    {"cattn_fused_pcp_qkv_select", "args->k", "k"},
    {"cattn_fused_pcp_qkv_select", "args->v", "v"},
    {"cattn_fused_pcp_qkv_select", "args->query_start_loc", "query_start_loc"},
    {"cattn_fused_pcp_qkv_select", "args->pcp_world_size", "pcp_world_size"},
    {"cattn_fused_pcp_qkv_select", "args->pcp_rank", "pcp_rank"},
    {"cattn_fused_pcp_qkv_select", "args->q_head", "out.q_head"},
    {"cattn_fused_pcp_qkv_select", "args->k_head", "out.k_head"},
    {"cattn_fused_pcp_qkv_select", "args->v_head", "out.v_head"},
    {"cattn_fused_pcp_qkv_select", "args->q_tail", "out.q_tail"},
    {"cattn_fused_pcp_qkv_select", "args->k_tail", "out.k_tail"},
    {"cattn_fused_pcp_qkv_select", "args->v_tail", "out.v_tail"},
    // pcp_kv_allgather_and_restore(_workspace_size)(c, key, value, num_actual_tokens, ...)
    {"cattn_pcp_kv_allgather_and_restore_workspace_size", "args->comm", "c"},
    {"cattn_pcp_kv_allgather_and_restore_workspace_size", "args->key", "key"},
    {"cattn_pcp_kv_allgather_and_restore_workspace_size", "args->value", "value"},
    {"cattn_pcp_kv_allgather_and_restore_workspace_size", "args->num_actual_tokens",
     "num_actual_tokens"},
    {"cattn_pcp_kv_allgather_and_restore", "args->comm", "c"},
    {"cattn_pcp_kv_allgather_and_restore", "args->key", "key"},
    {"cattn_pcp_kv_allgather_and_restore", "args->value", "value"},
    {"cattn_pcp_kv_allgather_and_restore", "args->num_actual_tokens", "num_actual_tokens"},
    {"cattn_pcp_kv_allgather_and_restore", "args->restore_idx", "restore_idx"},
    {"cattn_pcp_kv_allgather_and_restore", "args->key_out", "key_out"},
    {"cattn_pcp_kv_allgather_and_restore", "args->value_out", "value_out"},
    {"cattn_pcp_kv_allgather_and_restore", "args->workspace", "workspace"},
    {"cattn_pcp_kv_allgather_and_restore", "args->workspace_size", "workspace_size"},
    // compute_causal_conv1d_metadata(_size)(query_start_loc_cpu, block_m[, out, stream]),
    // compute_causal_conv1d_metadata_capturable(query_start_loc, block_m, out, ...)
    {"cattn_compute_causal_conv1d_metadata_size", "query_start_loc_cpu", "query_start_loc_cpu"},
    {"cattn_compute_causal_conv1d_metadata_size", "block_m", "block_m"},
    {"cattn_compute_causal_conv1d_metadata", "args->query_start_loc_cpu", "query_start_loc_cpu"},
    {"cattn_compute_causal_conv1d_metadata", "args->block_m", "block_m"},
    {"cattn_compute_causal_conv1d_metadata", "args->nums", "out.nums"},
    {"cattn_compute_causal_conv1d_metadata", "args->mlist", "out.mlist"},
    {"cattn_compute_causal_conv1d_metadata", "args->offsetlist", "out.offsetlist"},
    {"cattn_compute_causal_conv1d_metadata", "args->batch_ptr", "out.batch_ptr"},
    {"cattn_compute_causal_conv1d_metadata", "args->token_chunk_offset_ptr",
     "out.token_chunk_offset_ptr"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->query_start_loc",
     "query_start_loc"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->block_m", "block_m"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->nums", "out.nums"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->mlist", "out.mlist"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->offsetlist", "out.offsetlist"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->batch_ptr", "out.batch_ptr"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->token_chunk_offset_ptr",
     "out.token_chunk_offset_ptr"},
    {"cattn_compute_causal_conv1d_metadata_capturable", "args->tot", "out.tot"},
    // mamba_get_block_table_tensor(block_table, seq_lens, block_size, num_speculative_blocks,
    // mode, out, stream)
    {"cattn_mamba_get_block_table_tensor", "args->block_table", "block_table"},
    {"cattn_mamba_get_block_table_tensor", "args->seq_lens", "seq_lens"},
    {"cattn_mamba_get_block_table_tensor", "args->block_size", "block_size"},
    {"cattn_mamba_get_block_table_tensor", "args->num_speculative_blocks",
     "num_speculative_blocks"},
    {"cattn_mamba_get_block_table_tensor", "args->mamba_cache_mode", "mode"},
    {"cattn_mamba_get_block_table_tensor", "args->out", "out"},
    // split_decodes_and_prefills(query_start_loc_cpu, options, is_prefilling_cpu) and
    // split_decodes_prefills_and_extends(query_start_loc_cpu, seq_lens_cpu_upper_bound,
    // options): num_reqs is the length of query_start_loc_cpu less one.
    {"cattn_split_decodes_and_prefills", "args->query_start_loc_cpu", "query_start_loc_cpu"},
    {"cattn_split_decodes_and_prefills", "args->is_prefilling_cpu", "is_prefilling_cpu"},
    {"cattn_split_decodes_and_prefills", "args->num_actual_tokens", "options.num_actual_tokens"},
    {"cattn_split_decodes_and_prefills", "args->max_query_len", "options.max_query_len"},
    {"cattn_split_decodes_and_prefills", "args->decode_threshold", "options.decode_threshold"},
    {"cattn_split_decodes_and_prefills_capturable", "args->query_start_loc", "query_start_loc"},
    {"cattn_split_decodes_and_prefills_capturable", "args->is_prefilling", "is_prefilling"},
    {"cattn_split_decodes_and_prefills_capturable", "args->num_actual_tokens",
     "num_actual_tokens"},
    {"cattn_split_decodes_and_prefills_capturable", "args->max_query_len", "max_query_len"},
    {"cattn_split_decodes_and_prefills_capturable", "args->decode_threshold",
     "options.decode_threshold"},
    {"cattn_split_decodes_and_prefills_capturable", "args->result", "result"},
    {"cattn_split_decodes_prefills_and_extends", "args->query_start_loc_cpu",
     "query_start_loc_cpu"},
    {"cattn_split_decodes_prefills_and_extends", "args->seq_lens_cpu_upper_bound",
     "seq_lens_cpu_upper_bound"},
    {"cattn_split_decodes_prefills_and_extends", "args->num_actual_tokens",
     "options.num_actual_tokens"},
    {"cattn_split_decodes_prefills_and_extends", "args->max_query_len", "options.max_query_len"},
    {"cattn_split_decodes_prefills_and_extends", "args->decode_threshold",
     "options.decode_threshold"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->query_start_loc",
     "query_start_loc"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->seq_lens_upper_bound",
     "seq_lens_upper_bound"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->num_actual_tokens",
     "num_actual_tokens"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->max_query_len",
     "max_query_len"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->decode_threshold",
     "decode_threshold"},
    {"cattn_split_decodes_prefills_and_extends_capturable", "args->result", "result"},
    // split_prefill_chunks(seq_lens_cpu, workspace_size, request_offset, chunks)
    {"cattn_split_prefill_chunks", "args->seq_lens_cpu", "seq_lens_cpu"},
    {"cattn_split_prefill_chunks", "args->workspace_size", "workspace_size"},
    {"cattn_split_prefill_chunks", "args->request_offset", "request_offset"},
    {"cattn_split_prefill_chunks", "args->chunks", "chunks"},
    // reorder_batch_to_split_decodes_and_prefills(num_scheduled_tokens, num_computed_tokens,
    // num_prompt_tokens, decode_threshold, index_map, swaps)
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->num_scheduled_tokens",
     "num_scheduled_tokens"},
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->num_computed_tokens",
     "num_computed_tokens"},
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->num_prompt_tokens",
     "num_prompt_tokens"},
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->decode_threshold",
     "decode_threshold"},
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->index_map", "index_map"},
    {"cattn_reorder_batch_to_split_decodes_and_prefills", "args->swaps", "swaps"},
    // naive_query_lens(query_start_loc, out, stream),
    // compute_num_computed_tokens(query_start_loc, seq_lens, out, stream): the metadata is
    // the wrapper's, made of the parameters.
    {"cattn_naive_query_lens", "args->metadata->query_start_loc", "query_start_loc"},
    {"cattn_naive_query_lens", "args->out", "out"},
    {"cattn_compute_num_computed_tokens", "args->metadata->query_start_loc", "query_start_loc"},
    {"cattn_compute_num_computed_tokens", "args->metadata->seq_lens", "seq_lens"},
    {"cattn_compute_num_computed_tokens", "args->out", "out"},
    // extend_all_queries_by_n(metadata, n, ...), unpadded(metadata, num_actual_tokens,
    // num_actual_reqs), make_kv_sharing_fast_prefill_common_attn_metadata(metadata, ...)
    {"cattn_extend_all_queries_by_n", "args->metadata", "metadata"},
    {"cattn_extend_all_queries_by_n", "args->n", "n"},
    {"cattn_extend_all_queries_by_n", "args->new_slot_mapping", "new_slot_mapping"},
    {"cattn_extend_all_queries_by_n", "args->out", "out"},
    {"cattn_unpadded", "args->metadata", "metadata"},
    {"cattn_unpadded", "args->num_actual_tokens", "num_actual_tokens"},
    {"cattn_unpadded", "args->num_actual_reqs", "num_actual_reqs"},
    {"cattn_make_kv_sharing_fast_prefill_common_attn_metadata", "args->metadata", "metadata"},
    {"cattn_make_kv_sharing_fast_prefill_common_attn_metadata", "args->decode_max_and_total",
     "decode_max_and_total"},
    // max_local_attention_virtual_batches(attn_chunk_size, max_num_seqs, max_num_batched_tokens)
    {"cattn_max_local_attention_virtual_batches", "args->attn_chunk_size", "attn_chunk_size"},
    {"cattn_max_local_attention_virtual_batches", "args->max_num_seqs", "max_num_seqs"},
    {"cattn_max_local_attention_virtual_batches", "args->max_num_batched_tokens",
     "max_num_batched_tokens"},
    // compute_mm_prefix_range_tensor(range_offsets, ranges, out),
    // fill_mm_prefix_query_ranges(range_offsets, ranges, query_start_loc_cpu, seq_lens_cpu, out)
    {"cattn_compute_mm_prefix_range_tensor", "args->range_offsets", "range_offsets"},
    {"cattn_compute_mm_prefix_range_tensor", "args->ranges", "ranges"},
    {"cattn_compute_mm_prefix_range_tensor", "args->out", "out"},
    {"cattn_fill_mm_prefix_query_ranges", "args->range_offsets", "range_offsets"},
    {"cattn_fill_mm_prefix_query_ranges", "args->ranges", "ranges"},
    {"cattn_fill_mm_prefix_query_ranges", "args->query_start_loc_cpu", "query_start_loc_cpu"},
    {"cattn_fill_mm_prefix_query_ranges", "args->seq_lens_cpu", "seq_lens_cpu"},
    {"cattn_fill_mm_prefix_query_ranges", "args->out", "out"},
    // log2_lse_to_ln(lse, out, half_rounding, stream)
    {"cattn_log2_lse_to_ln", "args->lse", "lse"},
    {"cattn_log2_lse_to_ln", "args->out", "out"},
    {"cattn_log2_lse_to_ln", "args->half_rounding", "half_rounding"},
    // The kv-cache-layout calls.
    {"cattn_is_valid_kv_cache_layout", "value", "value"},
    {"cattn_kv_cache_layout_from_name", "name", "name"},
    {"cattn_kv_cache_layout_get_properties", "layout", "layout"},
    {"cattn_get_flashinfer_layout_string", "layout", "layout"},
    {"cattn_kv_cache_layout_strides", "args->layout", "layout"},
    {"cattn_kv_cache_layout_strides", "args->sizes", "sizes"},
    {"cattn_context_set_kv_cache_layout_override", "ctx", "this context"},
    {"cattn_context_set_kv_cache_layout_override", "layout", "layout"},
    {"cattn_context_set_kv_cache_layout_preset", "ctx", "this context"},
    {"cattn_context_set_kv_cache_layout_preset", "name", "name"},
    {"cattn_record_kv_cache_layout", "ctx", "this context"},
    {"cattn_record_kv_cache_layout", "name", "name"},
    {"cattn_resolve_kv_cache_layout", "ctx", "this context"},
    {"cattn_resolve_kv_cache_layout", "args->env_value", "request.env_value"},
    {"cattn_resolve_kv_cache_layout", "args->connector_layout", "request.connector_layout"},
    {"cattn_resolve_kv_cache_layout", "args->worker_counts", "request.workers"},
    // make_local_attention_virtual_batches_size(metadata, attn_chunk_size, block_size,
    // max_virtual_batches) and local_attention_plan's constructor, fill(metadata, out, stream)
    // and make_block_table(block_table, out, stream); the capturable call.
    {"cattn_make_local_attention_virtual_batches_size", "args->metadata", "metadata"},
    {"cattn_make_local_attention_virtual_batches_size", "args->attn_chunk_size", "attn_chunk_size"},
    {"cattn_make_local_attention_virtual_batches_size", "args->block_size", "block_size"},
    {"cattn_make_local_attention_virtual_batches_size", "args->max_virtual_batches",
     "max_virtual_batches"},
    {"cattn_make_local_attention_virtual_batches", "args->metadata", "metadata"},
    {"cattn_make_local_attention_virtual_batches", "args->attn_chunk_size", "attn_chunk_size"},
    {"cattn_make_local_attention_virtual_batches", "args->block_size", "block_size"},
    {"cattn_make_local_attention_virtual_batches", "args->max_virtual_batches",
     "max_virtual_batches"},
    {"cattn_local_attention_plan_fill", "args->metadata", "metadata"},
    {"cattn_local_attention_plan_fill", "args->out", "out"},
    {"cattn_local_attention_plan_make_block_table", "block_table", "block_table"},
    {"cattn_local_attention_plan_make_block_table", "out", "out"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->attn_chunk_size",
     "attn_chunk_size"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->block_size", "block_size"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->query_start_loc",
     "query_start_loc"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->seq_lens", "seq_lens"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->block_table", "block_table"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->query_start_loc_out",
     "out.query_start_loc_out"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->seq_lens_out",
     "out.seq_lens_out"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->num_computed_tokens_out",
     "out.num_computed_tokens_out"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->block_table_out",
     "out.block_table_out"},
    {"cattn_make_local_attention_virtual_batches_capturable", "args->counts", "out.counts"},
    // prepare_pos_seq_lens(num_scheduled_tokens, idx_mapping, num_computed_tokens, num_reqs,
    // out, stream); the one-call helper takes num_reqs last, as a number.
    {"cattn_prepare_pos_seq_lens", "args->num_scheduled_tokens", "num_scheduled_tokens"},
    {"cattn_prepare_pos_seq_lens", "args->idx_mapping", "idx_mapping"},
    {"cattn_prepare_pos_seq_lens", "args->num_computed_tokens", "num_computed_tokens"},
    {"cattn_prepare_pos_seq_lens", "args->num_reqs", "num_reqs"},
    {"cattn_prepare_pos_seq_lens", "args->query_start_loc", "out.query_start_loc"},
    {"cattn_prepare_pos_seq_lens", "args->seq_lens", "out.seq_lens"},
    {"cattn_prepare_pos_seq_lens", "args->positions", "out.positions"},
    {"cattn_prepare_pos_seq_lens", "args->batch_num_computed_tokens",
     "out.batch_num_computed_tokens"},
    // gather_block_tables(idx_mapping, num_reqs, block_table, num_blocks, out, stream)
    {"cattn_gather_block_tables", "args->idx_mapping", "idx_mapping"},
    {"cattn_gather_block_tables", "args->num_reqs", "num_reqs"},
    {"cattn_gather_block_tables", "args->block_table", "block_table"},
    {"cattn_gather_block_tables", "args->num_blocks", "num_blocks"},
    {"cattn_gather_block_tables", "args->out", "out"},
    // compute_slot_mappings(params, query_start_loc, num_reqs, positions, idx_mapping,
    // block_table, slot_mapping, stream)
    {"cattn_compute_slot_mappings", "args->contract", "params.contract"},
    {"cattn_compute_slot_mappings", "args->block_size", "params.block_size"},
    {"cattn_compute_slot_mappings", "args->kernel_block_size", "params.kernel_block_size"},
    {"cattn_compute_slot_mappings", "args->dcp_size", "params.dcp_size"},
    {"cattn_compute_slot_mappings", "args->dcp_rank", "params.dcp_rank"},
    {"cattn_compute_slot_mappings", "args->dcp_kv_cache_interleave_size",
     "params.dcp_kv_cache_interleave_size"},
    {"cattn_compute_slot_mappings", "args->query_start_loc", "query_start_loc"},
    {"cattn_compute_slot_mappings", "args->num_reqs", "num_reqs"},
    {"cattn_compute_slot_mappings", "args->positions", "positions"},
    {"cattn_compute_slot_mappings", "args->idx_mapping", "idx_mapping"},
    {"cattn_compute_slot_mappings", "args->block_table", "block_table"},
    {"cattn_compute_slot_mappings", "args->slot_mapping", "slot_mapping"},
    // combine_sampled_and_draft_tokens(query_start_loc, num_reqs, num_draft_tokens, idx_mapping,
    // out, options, stream)
    {"cattn_combine_sampled_and_draft_tokens", "args->num_new_sampled_tokens",
     "options.num_new_sampled_tokens"},
    {"cattn_combine_sampled_and_draft_tokens", "args->query_start_loc", "query_start_loc"},
    {"cattn_combine_sampled_and_draft_tokens", "args->num_reqs", "num_reqs"},
    {"cattn_combine_sampled_and_draft_tokens", "args->num_draft_tokens", "num_draft_tokens"},
    {"cattn_combine_sampled_and_draft_tokens", "args->idx_mapping", "idx_mapping"},
    {"cattn_combine_sampled_and_draft_tokens", "args->seq_lens", "options.seq_lens"},
    {"cattn_combine_sampled_and_draft_tokens", "args->prefill_len", "options.prefill_len"},
    {"cattn_combine_sampled_and_draft_tokens", "args->last_sampled_tokens",
     "options.last_sampled_tokens"},
    {"cattn_combine_sampled_and_draft_tokens", "args->draft_tokens", "options.draft_tokens"},
    {"cattn_combine_sampled_and_draft_tokens", "args->logits_indices", "out.logits_indices"},
    {"cattn_combine_sampled_and_draft_tokens", "args->cu_num_logits", "out.cu_num_logits"},
    {"cattn_combine_sampled_and_draft_tokens", "args->expanded_idx_mapping",
     "out.expanded_idx_mapping"},
    {"cattn_combine_sampled_and_draft_tokens", "args->expanded_local_pos",
     "out.expanded_local_pos"},
    {"cattn_combine_sampled_and_draft_tokens", "args->input_ids", "out.input_ids"},
    // step_batch_check(batch, status, stream): the batch is a step_check_inputs.
    {"cattn_step_batch_check", "args->query_start_loc", "batch.query_start_loc"},
    {"cattn_step_batch_check", "args->num_reqs", "batch.num_reqs"},
    {"cattn_step_batch_check", "args->seq_lens", "batch.seq_lens"},
    {"cattn_step_batch_check", "args->block_tables", "batch.block_tables"},
    {"cattn_step_batch_check", "args->slot_mappings", "batch.slot_mappings"},
    {"cattn_step_batch_check", "args->status", "status"},
    // step_inputs_size(num_new_sampled_tokens, num_scheduled_tokens, query_start_loc, num_reqs,
    // num_draft_tokens); the one-call helpers that size with it report in their own names,
    // whose parameters are named the same.
    {"cattn_step_inputs_size", "args->num_new_sampled_tokens", "num_new_sampled_tokens"},
    {"cattn_step_inputs_size", "args->num_scheduled_tokens", "num_scheduled_tokens"},
    {"cattn_step_inputs_size", "args->query_start_loc", "query_start_loc"},
    {"cattn_step_inputs_size", "args->num_reqs", "num_reqs"},
    {"cattn_step_inputs_size", "args->num_draft_tokens", "num_draft_tokens"},
    // eagle_step_update_slot_mapping_and_metadata(params, positions, block_table, seq_lens, out,
    // stream)
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->block_size",
     "params.block_size"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->max_model_len",
     "params.max_model_len"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->input_batch_size",
     "params.input_batch_size"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->positions", "positions"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->block_table", "block_table"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->seq_lens", "seq_lens"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->out_clamped_positions",
     "out.clamped_positions"},
    {"cattn_eagle_step_update_slot_mapping_and_metadata", "args->out_slot_mapping",
     "out.slot_mapping"},
    // eagle_prepare_inputs_padded(cu_num_draft_tokens, valid_sampled_tokens_count,
    // query_start_loc, out, stream)
    {"cattn_eagle_prepare_inputs_padded", "args->cu_num_draft_tokens", "cu_num_draft_tokens"},
    {"cattn_eagle_prepare_inputs_padded", "args->valid_sampled_tokens_count",
     "valid_sampled_tokens_count"},
    {"cattn_eagle_prepare_inputs_padded", "args->query_start_loc", "query_start_loc"},
    {"cattn_eagle_prepare_inputs_padded", "args->token_indices_to_sample",
     "out.token_indices_to_sample"},
    {"cattn_eagle_prepare_inputs_padded", "args->num_rejected_tokens", "out.num_rejected_tokens"},
    // eagle_prepare_next_token_padded(vocab_size, sampled_token_ids, discard_request_mask,
    // backup_next_token_ids, out, stream)
    {"cattn_eagle_prepare_next_token_padded", "args->vocab_size", "vocab_size"},
    {"cattn_eagle_prepare_next_token_padded", "args->sampled_token_ids", "sampled_token_ids"},
    {"cattn_eagle_prepare_next_token_padded", "args->discard_request_mask",
     "discard_request_mask"},
    {"cattn_eagle_prepare_next_token_padded", "args->backup_next_token_ids",
     "backup_next_token_ids"},
    {"cattn_eagle_prepare_next_token_padded", "args->next_token_ids", "out.next_token_ids"},
    {"cattn_eagle_prepare_next_token_padded", "args->valid_sampled_tokens_count",
     "out.valid_sampled_tokens_count"},
    // compute_new_slot_mapping(params, query_start_loc, block_table, new_positions,
    // is_rejected_token_mask, new_slot_mapping, stream)
    {"cattn_compute_new_slot_mapping", "args->block_size", "params.block_size"},
    {"cattn_compute_new_slot_mapping", "args->num_new_tokens", "params.num_new_tokens"},
    {"cattn_compute_new_slot_mapping", "args->max_model_len", "params.max_model_len"},
    {"cattn_compute_new_slot_mapping", "args->query_start_loc", "query_start_loc"},
    {"cattn_compute_new_slot_mapping", "args->block_table", "block_table"},
    {"cattn_compute_new_slot_mapping", "args->new_positions", "new_positions"},
    {"cattn_compute_new_slot_mapping", "args->is_rejected_token_mask", "is_rejected_token_mask"},
    {"cattn_compute_new_slot_mapping", "args->new_slot_mapping", "new_slot_mapping"},
    // copy_and_expand_eagle_inputs(params, target_token_ids, target_positions, next_token_ids,
    // query_start_loc, query_end_loc, out, stream); the wrapper sets reserved0 to 0.
    {"cattn_copy_and_expand_eagle_inputs", "args->padding_token_id", "params.padding_token_id"},
    {"cattn_copy_and_expand_eagle_inputs", "args->parallel_drafting_token_id",
     "params.parallel_drafting_token_id"},
    {"cattn_copy_and_expand_eagle_inputs", "args->num_padding_slots_per_request",
     "params.num_padding_slots_per_request"},
    {"cattn_copy_and_expand_eagle_inputs", "args->max_tokens_per_request",
     "params.max_tokens_per_request"},
    {"cattn_copy_and_expand_eagle_inputs", "args->shift_input_ids", "params.shift_input_ids"},
    {"cattn_copy_and_expand_eagle_inputs", "args->target_token_ids", "target_token_ids"},
    {"cattn_copy_and_expand_eagle_inputs", "args->target_positions", "target_positions"},
    {"cattn_copy_and_expand_eagle_inputs", "args->next_token_ids", "next_token_ids"},
    {"cattn_copy_and_expand_eagle_inputs", "args->query_start_loc", "query_start_loc"},
    {"cattn_copy_and_expand_eagle_inputs", "args->query_end_loc", "query_end_loc"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_input_ids", "out.input_ids"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_positions", "out.positions"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_is_rejected_token_mask",
     "out.is_rejected_token_mask"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_is_masked_token_mask",
     "out.is_masked_token_mask"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_new_token_indices",
     "out.new_token_indices"},
    {"cattn_copy_and_expand_eagle_inputs", "args->out_hidden_state_mapping",
     "out.hidden_state_mapping"},
    // update_num_computed_tokens_for_batch_change(num_computed_tokens, num_accepted_tokens,
    // prev_positions, valid_sampled_token_count, prev_num_draft_tokens,
    // cpu_num_computed_tokens, stream)
    {"cattn_update_num_computed_tokens_for_batch_change", "args->num_computed_tokens",
     "num_computed_tokens"},
    {"cattn_update_num_computed_tokens_for_batch_change", "args->num_accepted_tokens",
     "num_accepted_tokens"},
    {"cattn_update_num_computed_tokens_for_batch_change", "args->prev_positions",
     "prev_positions"},
    {"cattn_update_num_computed_tokens_for_batch_change", "args->valid_sampled_token_count",
     "valid_sampled_token_count"},
    {"cattn_update_num_computed_tokens_for_batch_change", "args->prev_num_draft_tokens",
     "prev_num_draft_tokens"},
    {"cattn_update_num_computed_tokens_for_batch_change", "args->cpu_num_computed_tokens",
     "cpu_num_computed_tokens"},
    // step_plan(desc) (the C desc itself), step_plan::run(batch, out, stream)
    {"cattn_step_plan_create", "desc", "desc"},
    {"cattn_step_plan_run", "batch", "batch"},
    {"cattn_step_plan_run", "outputs", "out"},
    // get_per_layer_parameters(layers), infer_global_hyperparameters(params)
    {"cattn_get_per_layer_parameters", "layers", "layers"},
    {"cattn_get_per_layer_parameters", "num_layers", "layers.size()"},
    {"cattn_infer_global_hyperparameters", "params", "params"},
    {"cattn_infer_global_hyperparameters", "num_layers", "params.size()"},
    // The communicator's calls.
    {"cattn_comm_create", "nranks", "nranks"},
    {"cattn_comm_create", "rank", "rank"},
    {"cattn_comm_create", "cuda_device", "cuda_device"},
    {"cattn_comm_create_borrowed", "nccl_comm", "nccl_comm"},
};

inline constexpr function_name function_names[] = {
    {"cattn_context_create", "context::context"},
    {"cattn_context_set_kv_cache_layout_override", "context::set_kv_cache_layout_override"},
    {"cattn_context_set_kv_cache_layout_preset", "context::set_kv_cache_layout_preset"},
    {"cattn_resolve_kv_cache_layout", "context::resolve_kv_cache_layout"},
    {"cattn_record_kv_cache_layout", "context::record_kv_cache_layout"},
    {"cattn_get_resolved_kv_cache_layout", "context::get_resolved_kv_cache_layout"},
    {"cattn_comm_create", "comm::create"},
    {"cattn_comm_create_borrowed", "comm::create_borrowed"},
    {"cattn_comm_get_rank", "comm::rank"},
    {"cattn_comm_get_size", "comm::size"},
    {"cattn_local_attention_plan_get_shape", "local_attention_plan::shape"},
    {"cattn_local_attention_plan_fill", "local_attention_plan::fill"},
    {"cattn_local_attention_plan_make_block_table", "local_attention_plan::make_block_table"},
    {"cattn_step_plan_create", "step_plan::step_plan"},
    {"cattn_step_plan_get_shape", "step_plan::shape"},
    {"cattn_step_plan_workspace_size", "step_plan::workspace_size"},
    {"cattn_step_plan_run", "step_plan::run"},
};

inline bool same(const char* a, const char* b, size_t n_b) {
  return std::strlen(a) == n_b && std::strncmp(a, b, n_b) == 0;
}

/** The library's message in C++ terms (see cattn::error), or "" when arg_names does not name
 * its argument. The message's shape is fixed: "<C function>: <C path> <problem>...", the path
 * running to the first space. `as`, when given, names the wrapper instead of the C function's
 * own: a one-call helper's size query reports in the helper's name. */
inline std::string translate_message(const std::string& c_message, const char* as = nullptr) {
  const size_t colon = c_message.find(": ");
  if (colon == std::string::npos || c_message.compare(0, 6, "cattn_") != 0) return {};
  const char* fn = c_message.c_str();
  const size_t path_start = colon + 2;
  const size_t path_end = std::min(c_message.find(' ', path_start), c_message.size());
  const std::string path = c_message.substr(path_start, path_end - path_start);
  const arg_name* best = nullptr;
  size_t best_len = 0;
  for (const arg_name& a : arg_names) {
    const size_t n = std::strlen(a.c_path);
    if (!same(a.c_function, fn, colon) || n < best_len || path.compare(0, n, a.c_path) != 0)
      continue;
    // The whole path, or a prefix of it that ends where a field or an index follows.
    if (path.size() == n || path.compare(n, 2, "->") == 0 || path[n] == '.' || path[n] == '[') {
      best = &a;
      best_len = n;
    }
  }
  if (best == nullptr)
    return as != nullptr ? "cattn::" + std::string(as) + c_message.substr(colon) : std::string();
  std::string name = std::string(fn, colon).substr(6);
  for (const function_name& f : function_names)
    if (same(f.c_function, fn, colon)) name = f.name;
  if (as != nullptr) name = as;
  std::string rest;  // the path past the listed part, "->" written "."
  for (size_t i = best_len; i < path.size(); ++i) {
    if (path.compare(i, 2, "->") == 0) {
      rest += '.';
      ++i;
    } else {
      rest += path[i];
    }
  }
  return "cattn::" + name + ": " + best->name + rest + c_message.substr(path_end);
}

/** check() for this header's wrappers: throws error with the library's message in C++ terms
 * (message()) and as written (c_message()); `as` as in translate_message. */
inline void check_call(cattn_status_t status, const char* as = nullptr) {
  if (status == CATTN_OK) return;
  const std::string c_message = cattn_last_error_message();
  std::string message = translate_message(c_message, as);
  if (message.empty()) message = c_message;
  throw error(status, message, c_message);
}

}  // namespace detail

namespace detail {

[[noreturn]] inline void fail(const std::string& message) {
  throw error(CATTN_INVALID_ARGUMENT, message);
}

inline int64_t checked_mul(int64_t a, int64_t b, const char* fn) {
  if (a < 0 || b < 0) fail(std::string(fn) + ": a negative size");
  if (b != 0 && a > std::numeric_limits<int64_t>::max() / b)
    fail(std::string(fn) + ": an output size overflows int64");
  return a * b;
}

inline size_t to_size(int64_t n, const char* fn) {
  if (n < 0) fail(std::string(fn) + ": a negative size (got " + std::to_string(n) + ")");
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / 8)
    fail(std::string(fn) + ": an output size does not fit memory (got " + std::to_string(n) + ")");
  return static_cast<size_t>(n);
}

}  // namespace detail

/** @} */

/* ============================================================================================
 * Version, status, runtime
 * ========================================================================================== */
/** @defgroup group_cpp_runtime Version, status, runtime
 * @ingroup group_cpp
 * The version, the status names, the device count and the function table: version, version_string,
 * status_string, cuda_device_count, get_api.
 * @{ */

/** cattn_version(): the library's CATTN_VERSION_NUMBER. Throws nothing. Since: 1.1
 * See docs/api/context.md. */
inline uint32_t version() noexcept { return cattn_version(); }
/** cattn_version_string(): "MAJOR.MINOR.PATCH", static. Throws nothing. Since: 1.1
 * See docs/api/context.md. */
inline const char* version_string() noexcept { return cattn_version_string(); }
/** cattn_status_string(): a static name. Throws nothing. Since: 1.1
 * See docs/api/context.md. */
inline const char* status_string(cattn_status_t status) noexcept {
  return cattn_status_string(status);
}
/** cattn_cuda_device_count(): the CUDA devices the library can use. Throws: error. Since: 1.1
 * See docs/api/context.md. */
inline int32_t cuda_device_count() {
  int32_t n = 0;
  detail::check_call(cattn_cuda_device_count(&n));
  return n;
}
/** cattn_get_api(abi_major): the function table, or nullptr. Throws nothing. Since: 1.1
 * See docs/api/api_table.md. */
inline const cattn_api_t* get_api(uint32_t abi_major = CATTN_VERSION_MAJOR) noexcept {
  return cattn_get_api(abi_major);
}

/** @} */

/* ============================================================================================
 * Element types, devices, streams
 * ========================================================================================== */
/** @defgroup group_cpp_types Element types, devices, streams
 * @ingroup group_cpp
 * The dtype of an element type (dtype_traits, dtype_of), the devices host(), cuda() and
 * cuda_host(), and stream_ref.
 * @{ */

/** The DLPack dtype of element type T: specialise it for types of your own (a bfloat16 struct,
 * say). Provided: every integer type (kDLInt or kDLUInt of its width), bool (kDLUInt 8, for
 * the byte-per-request inputs), float and double. A type without a value cannot be viewed.
 * Since: 1.1
 * See docs/api/conventions.md for the dtypes each call accepts. */
template <class T, class = void>
struct dtype_traits {};
/** Every integer type but bool: kDLInt (signed) or kDLUInt (unsigned) of its width. */
template <class T>
struct dtype_traits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  /** The dtype, one lane. */
  static constexpr DLDataType value{static_cast<uint8_t>(std::is_signed_v<T> ? kDLInt : kDLUInt),
                                    static_cast<uint8_t>(sizeof(T) * 8), 1};
};
/** bool: kDLUInt of 8 bits, as the byte-per-request flag inputs take it. */
template <>
struct dtype_traits<bool> {
  static_assert(sizeof(bool) == 1, "cattn.hpp: bool must be one byte");
  /** The dtype, one lane. */
  static constexpr DLDataType value{static_cast<uint8_t>(kDLUInt), 8, 1};
};
/** float: kDLFloat of 32 bits. */
template <>
struct dtype_traits<float> {
  /** The dtype, one lane. */
  static constexpr DLDataType value{static_cast<uint8_t>(kDLFloat), 32, 1};
};
/** double: kDLFloat of 64 bits. */
template <>
struct dtype_traits<double> {
  /** The dtype, one lane. */
  static constexpr DLDataType value{static_cast<uint8_t>(kDLFloat), 64, 1};
};

/** Whether T (cv-qualifiers ignored) has a dtype. Since: 1.1 */
template <class T, class = void>
struct has_dtype : std::false_type {};
template <class T>
struct has_dtype<T, std::void_t<decltype(dtype_traits<std::remove_cv_t<T>>::value)>>
    : std::true_type {};
/** has_dtype<T>::value. Since: 1.1 */
template <class T>
inline constexpr bool has_dtype_v = has_dtype<T>::value;

/** The dtype of T, deduced at compile time. Since: 1.1 */
template <class T>
inline constexpr DLDataType dtype_of = dtype_traits<std::remove_cv_t<T>>::value;

/** Whether T can be an index or length element: a signed integer of 32 or 64 bits (int32_t,
 * int64_t, and long long where that is another type). Since: 1.1 */
template <class T>
inline constexpr bool is_index_type_v =
    std::is_integral_v<std::remove_cv_t<T>> && std::is_signed_v<std::remove_cv_t<T>> &&
    (sizeof(T) == 4 || sizeof(T) == 8);

/** Host memory (kDLCPU), the device of a view made without one. Since: 1.1
 * See docs/api/conventions.md for the devices each call accepts. */
constexpr DLDevice host() noexcept { return DLDevice{kDLCPU, 0}; }
/** Memory of CUDA device `ordinal` (kDLCUDA). Since: 1.1 */
constexpr DLDevice cuda(int32_t ordinal = 0) noexcept { return DLDevice{kDLCUDA, ordinal}; }
/** Pinned host memory (kDLCUDAHost), which the host may read. Since: 1.1 */
constexpr DLDevice cuda_host() noexcept { return DLDevice{kDLCUDAHost, 0}; }

/** A borrowed CUDA stream: a cudaStream_t / cattn_stream_t, a void* holding one, or nothing
 * (NULL: the legacy default stream). Host work ignores it. Since: 1.1
 * See docs/api/context.md for the stream rules. */
class stream_ref {
 public:
  /** The legacy default stream (NULL). */
  constexpr stream_ref() noexcept = default;
  /** The legacy default stream (NULL). */
  constexpr stream_ref(std::nullptr_t) noexcept {}
  /** Borrows `stream` (a cudaStream_t is the same type). */
  constexpr stream_ref(cattn_stream_t stream) noexcept : s_(stream) {}
  /** Only a void* itself, so that no other pointer becomes a stream by accident. */
  template <class P, std::enable_if_t<std::is_same_v<P, void*>, int> = 0>
  stream_ref(P stream) noexcept : s_(static_cast<cattn_stream_t>(stream)) {}
  /** The stream the C calls receive. */
  constexpr cattn_stream_t get() const noexcept { return s_; }

 private:
  cattn_stream_t s_ = nullptr;
};

/** @} */

/* ============================================================================================
 * Tensor views
 * ========================================================================================== */
/** @defgroup group_cpp_views Tensor views
 * @ingroup group_cpp
 * The views of caller memory: tensor_view<T>, and the type-erased index_cview, index_view,
 * any_cview and any_view that the wrappers take.
 * @{ */

/** The most dimensions a view holds (log2_lse_to_ln takes up to 8). Since: 1.1 */
inline constexpr int max_dims = 8;

template <class T>
class host_tensor;

namespace detail {

struct view_access;

/* What every view holds: a DLTensor's fields with its own shape and strides, so that views
 * copy freely. dl() makes the DLTensor, pointing into this object. */
class view_base {
 public:
  /* false for a default-constructed view: the C call gets NULL. */
  bool present() const noexcept { return present_; }
  explicit operator bool() const noexcept { return present_; }
  int32_t ndim() const noexcept { return ndim_; }
  /* Dimension i (0 <= i < ndim(); not checked). */
  int64_t shape(int i) const noexcept { return shape_[static_cast<size_t>(i)]; }
  /* The product of the shape (1 for 0-D, 0 for an absent view). */
  int64_t numel() const noexcept {
    if (!present_) return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < ndim_; ++i) n *= shape_[static_cast<size_t>(i)];
    return n;
  }
  DLDevice device() const noexcept { return device_; }
  DLDataType dtype() const noexcept { return dtype_; }
  uint64_t byte_offset() const noexcept { return byte_offset_; }
  /* kDLCPU or kDLCUDAHost: memory the host may read. */
  bool is_host() const noexcept {
    return device_.device_type == kDLCPU || device_.device_type == kDLCUDAHost;
  }
  /* The DLTensor, its shape and strides pointing into this view: valid while it lives. */
  DLTensor dl() const noexcept {
    DLTensor t{};
    t.data = data_;
    t.device = device_;
    t.ndim = ndim_;
    t.dtype = dtype_;
    t.shape = const_cast<int64_t*>(shape_.data());
    t.strides = strided_ ? const_cast<int64_t*>(strides_.data()) : nullptr;
    t.byte_offset = byte_offset_;
    return t;
  }

 protected:
  view_base() noexcept = default;
  void assign(const void* data, DLDataType dtype, const int64_t* shape, size_t ndim,
              const int64_t* strides, DLDevice device) {
    if (ndim > static_cast<size_t>(max_dims))
      fail("cattn::tensor_view: more than " + std::to_string(max_dims) + " dimensions (got " +
           std::to_string(ndim) + ")");
    data_ = const_cast<void*>(data);
    dtype_ = dtype;
    ndim_ = static_cast<int32_t>(ndim);
    for (size_t i = 0; i < ndim; ++i) shape_[i] = shape[i];
    strided_ = strides != nullptr;
    for (size_t i = 0; strided_ && i < ndim; ++i) strides_[i] = strides[i];
    device_ = device;
    byte_offset_ = 0;
    present_ = true;
  }
  // The one place the const of an input is dropped: cattn.h's tensor structs hold void* data
  // and some of its argument structs non-const DLTensor* for tensors the call only reads.
  void* data_ = nullptr;
  std::array<int64_t, max_dims> shape_{};
  std::array<int64_t, max_dims> strides_{};
  int32_t ndim_ = 0;
  bool strided_ = false;
  bool present_ = false;
  uint64_t byte_offset_ = 0;
  DLDevice device_ = DLDevice{kDLCPU, 0};
  DLDataType dtype_ = DLDataType{static_cast<uint8_t>(kDLInt), 8, 1};
  friend struct view_access;
};

struct view_access {
  // A view of a DLTensor the library made (cattn_unpadded's slices).
  static void assign_from(view_base& v, const DLTensor* t) {
    if (t == nullptr) {
      v = view_base();
      return;
    }
    v.assign(t->data, t->dtype, t->shape, static_cast<size_t>(t->ndim), t->strides, t->device);
    v.byte_offset_ = t->byte_offset;
  }
  static void set_device(view_base& v, DLDevice d) noexcept { v.device_ = d; }
  static void set_dtype(view_base& v, DLDataType d) noexcept { v.dtype_ = d; }
  static void set_byte_offset(view_base& v, uint64_t b) noexcept { v.byte_offset_ = b; }
};

// A view's DLTensor for one C call; get() is NULL for an absent view. Not copyable, so that the
// pointer never outlives the DLTensor it points at.
class tensor_arg {
 public:
  explicit tensor_arg(const view_base& v) noexcept : t_(v.dl()), present_(v.present()) {}
  tensor_arg(const tensor_arg&) = delete;
  tensor_arg& operator=(const tensor_arg&) = delete;
  DLTensor* get() noexcept { return present_ ? &t_ : nullptr; }

 private:
  DLTensor t_;
  bool present_;
};

}  // namespace detail

/** A typed, non-owning view of caller memory: row-major when no strides are given. T may be
 * const (an input). An absent view is default-constructed. Since: 1.1
 *
 * Every view (this class and the type-erased index_cview, index_view, any_cview and any_view)
 * also has these accessors: present() and explicit operator bool (false for an absent view,
 * which the C call sees as NULL); ndim(); shape(i), dimension i (0 <= i < ndim(), not
 * checked); numel(), the product of the shape (1 for 0-D, 0 for an absent view); device();
 * dtype(); byte_offset(); is_host() (kDLCPU or kDLCUDAHost: memory the host may read); and
 * dl(), the DLTensor itself, whose shape and strides point into the view (valid while the view
 * lives).
 * See docs/api/conventions.md for what the calls require of tensors. */
template <class T>
class tensor_view : public detail::view_base {
  static_assert(has_dtype_v<T>, "cattn::tensor_view<T>: T has no DLPack dtype (dtype_traits)");
  using value_type_ = std::remove_cv_t<T>;
  template <class U>
  static constexpr bool from_ = std::is_same_v<std::remove_cv_t<U>, value_type_> &&
                                std::is_convertible_v<U*, T*>;
  // std::vector<bool> packs its bits and has no data(): it cannot be viewed.
  template <class U>
  static constexpr bool from_vector_ = from_<U> && !std::is_same_v<value_type_, bool>;

 public:
  using element_type = T;           /**< T, const included. */
  using value_type = value_type_;  /**< T without const. */

  /** An absent view: the C call sees NULL. */
  tensor_view() noexcept = default;
  /** data with a compact row-major shape on `device`. */
  tensor_view(T* data, std::initializer_list<int64_t> shape, DLDevice device = host()) {
    assign(data, dtype_of<T>, shape.begin(), shape.size(), nullptr, device);
  }
  /** @overload */
  tensor_view(T* data, const std::vector<int64_t>& shape, DLDevice device = host()) {
    assign(data, dtype_of<T>, shape.data(), shape.size(), nullptr, device);
  }
  /** data with a shape and strides in elements (as many as dimensions). */
  tensor_view(T* data, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides,
              DLDevice device = host()) {
    if (strides.size() != shape.size())
      detail::fail("cattn::tensor_view: " + std::to_string(strides.size()) + " strides for " +
                   std::to_string(shape.size()) + " dimensions");
    assign(data, dtype_of<T>, shape.begin(), shape.size(), strides.begin(), device);
  }
  /** A 1-D view of a vector, or of it reshaped (the shape must hold exactly its elements). */
  template <class U, class A, std::enable_if_t<from_vector_<U>, int> = 0>
  tensor_view(std::vector<U, A>& v) : tensor_view(v.data(), {static_cast<int64_t>(v.size())}) {}
  /** @overload */
  template <class U, class A, std::enable_if_t<from_vector_<const U>, int> = 0>
  tensor_view(const std::vector<U, A>& v)
      : tensor_view(v.data(), {static_cast<int64_t>(v.size())}) {}
  /** @overload */
  template <class U, class A, std::enable_if_t<from_vector_<U>, int> = 0>
  tensor_view(std::vector<U, A>& v, std::initializer_list<int64_t> shape)
      : tensor_view(v.data(), shape) {
    expect_numel(v.size());
  }
  /** @overload */
  template <class U, class A, std::enable_if_t<from_vector_<const U>, int> = 0>
  tensor_view(const std::vector<U, A>& v, std::initializer_list<int64_t> shape)
      : tensor_view(v.data(), shape) {
    expect_numel(v.size());
  }
  /** std::array and C arrays (1-D, or 2-D for T[R][C]). */
  template <class U, size_t N, std::enable_if_t<from_<U>, int> = 0>
  tensor_view(std::array<U, N>& a) : tensor_view(a.data(), {static_cast<int64_t>(N)}) {}
  /** @overload */
  template <class U, size_t N, std::enable_if_t<from_<const U>, int> = 0>
  tensor_view(const std::array<U, N>& a) : tensor_view(a.data(), {static_cast<int64_t>(N)}) {}
  /** @overload */
  template <size_t N>
  tensor_view(T (&a)[N]) : tensor_view(a, {static_cast<int64_t>(N)}) {}
  /** @overload */
  template <size_t R, size_t C>
  tensor_view(T (&a)[R][C])
      : tensor_view(&a[0][0], {static_cast<int64_t>(R), static_cast<int64_t>(C)}) {}
#if CATTN_HPP_HAVE_SPAN
  /** A 1-D view of a span (C++20). */
  template <class U, size_t E, std::enable_if_t<from_<U>, int> = 0>
  tensor_view(std::span<U, E> s) : tensor_view(s.data(), {static_cast<int64_t>(s.size())}) {}
#endif
  /** The whole of a host_tensor, with its dtype. */
  template <class U, std::enable_if_t<from_<U>, int> = 0>
  tensor_view(host_tensor<U>& t) : tensor_view(t.view()) {}
  /** @overload */
  template <class U, std::enable_if_t<from_<const U>, int> = 0>
  tensor_view(const host_tensor<U>& t) : tensor_view(t.view()) {}
  /** A view of non-const elements is also a view of const ones. */
  template <class U, std::enable_if_t<!std::is_same_v<U, T> && from_<U>, int> = 0>
  tensor_view(const tensor_view<U>& v) noexcept : view_base(v) {}

  /** The data pointer (without byte_offset); nullptr for an absent view. */
  T* data() const noexcept { return static_cast<T*>(data_); }
  /** The same view on another device: the data pointer is that device's memory. */
  tensor_view on(DLDevice device) const noexcept {
    tensor_view v = *this;
    detail::view_access::set_device(v, device);
    return v;
  }
  /** The same view under another dtype of T's width (bfloat16 data in uint16_t, say). */
  tensor_view with_dtype(DLDataType dtype) const {
    if (static_cast<size_t>(dtype.bits) * dtype.lanes != sizeof(T) * 8)
      detail::fail("cattn::tensor_view::with_dtype: " + std::to_string(dtype.bits) + " bits x " +
                   std::to_string(dtype.lanes) + " lanes for a " +
                   std::to_string(sizeof(T) * 8) + "-bit element type");
    tensor_view v = *this;
    detail::view_access::set_dtype(v, dtype);
    return v;
  }
  /** The same view with DLTensor::byte_offset set (bytes from data() to the first element). */
  tensor_view with_byte_offset(uint64_t bytes) const noexcept {
    tensor_view v = *this;
    detail::view_access::set_byte_offset(v, bytes);
    return v;
  }

 private:
  void expect_numel(size_t n) const {
    if (static_cast<uint64_t>(numel()) != n)
      detail::fail("cattn::tensor_view: a shape of " + std::to_string(numel()) +
                   " elements over a vector of " + std::to_string(n));
  }
};

/** Deduction guide: `tensor_view(v)` of a std::vector is a tensor_view of its element type.
 * Since: 1.1 */
template <class U, class A>
tensor_view(std::vector<U, A>&) -> tensor_view<U>;
/** Deduction guide: a const std::vector gives a view of const elements (an input). Since: 1.1 */
template <class U, class A>
tensor_view(const std::vector<U, A>&) -> tensor_view<const U>;
/** Deduction guide: a std::vector reshaped. Since: 1.1 */
template <class U, class A>
tensor_view(std::vector<U, A>&, std::initializer_list<int64_t>) -> tensor_view<U>;
/** Deduction guide: a const std::vector reshaped, a view of const elements. Since: 1.1 */
template <class U, class A>
tensor_view(const std::vector<U, A>&, std::initializer_list<int64_t>) -> tensor_view<const U>;
/** Deduction guide: a std::array. Since: 1.1 */
template <class U, size_t N>
tensor_view(std::array<U, N>&) -> tensor_view<U>;
/** Deduction guide: a const std::array, a view of const elements. Since: 1.1 */
template <class U, size_t N>
tensor_view(const std::array<U, N>&) -> tensor_view<const U>;

namespace detail {

template <class T>
struct index_element : std::bool_constant<is_index_type_v<T>> {};
template <class T>
struct any_element : std::bool_constant<has_dtype_v<T>> {};

// The type-erased views the wrappers take. Accepts<T> says which element types convert;
// Mutable views take only non-const memory.
template <template <class> class Accepts, bool Mutable>
class erased_view : public view_base {
  template <class T>
  static constexpr bool ok_ = Accepts<std::remove_cv_t<T>>::value &&
                              (!Mutable || !std::is_const_v<T>);

 public:
  erased_view() noexcept = default;
  template <class T, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(const tensor_view<T>& v) noexcept : view_base(v) {}
  template <class T, class A, std::enable_if_t<ok_<T> && !std::is_same_v<T, bool>, int> = 0>
  erased_view(std::vector<T, A>& v) : view_base(tensor_view<T>(v)) {}
  template <class T, class A, std::enable_if_t<ok_<const T> && !std::is_same_v<T, bool>, int> = 0>
  erased_view(const std::vector<T, A>& v) : view_base(tensor_view<const T>(v)) {}
  template <class T, size_t N, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(std::array<T, N>& a) : view_base(tensor_view<T>(a)) {}
  template <class T, size_t N, std::enable_if_t<ok_<const T>, int> = 0>
  erased_view(const std::array<T, N>& a) : view_base(tensor_view<const T>(a)) {}
  template <class T, size_t N, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(T (&a)[N]) : view_base(tensor_view<T>(a)) {}
  template <class T, size_t R, size_t C, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(T (&a)[R][C]) : view_base(tensor_view<T>(a)) {}
  template <class T, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(host_tensor<T>& t) : view_base(t.view()) {}
  template <class T, std::enable_if_t<ok_<const T>, int> = 0>
  erased_view(const host_tensor<T>& t) : view_base(t.view()) {}
#if CATTN_HPP_HAVE_SPAN
  template <class T, size_t E, std::enable_if_t<ok_<T>, int> = 0>
  erased_view(std::span<T, E> s) : view_base(tensor_view<T>(s)) {}
#endif

 protected:
  // For the conversions between the erased kinds (mutable to const, index to any).
  void set_from(const view_base& v) noexcept { static_cast<view_base&>(*this) = v; }
};

}  // namespace detail

/** An input of int32 or int64 elements (index and length tensors). Anything else does not
 * convert, so passing float data where cattn.h takes an index fails to compile. Since: 1.1 */
class index_cview : public detail::erased_view<detail::index_element, false> {
 public:
  using erased_view::erased_view;
  index_cview() noexcept = default;
  /** An index_view is also an input. */
  index_cview(const detail::erased_view<detail::index_element, true>& v) noexcept { set_from(v); }
};
/** An output of int32 or int64 elements, in non-const memory. Since: 1.1 */
class index_view : public detail::erased_view<detail::index_element, true> {
 public:
  using erased_view::erased_view;
  index_view() noexcept = default;
};
/** An input of any element type that has a dtype (keys, values, lse, slot mappings...).
 * Since: 1.1 */
class any_cview : public detail::erased_view<detail::any_element, false> {
 public:
  using erased_view::erased_view;
  any_cview() noexcept = default;
  /** Index views and any_view are inputs of any element type too. */
  any_cview(const index_cview& v) noexcept { set_from(v); }
  /** An index_view as an input of any element type. */
  any_cview(const detail::erased_view<detail::index_element, true>& v) noexcept { set_from(v); }
  /** An any_view as an input. */
  any_cview(const detail::erased_view<detail::any_element, true>& v) noexcept { set_from(v); }
};
/** An output of any element type, in non-const memory. Since: 1.1 */
class any_view : public detail::erased_view<detail::any_element, true> {
 public:
  using erased_view::erased_view;
  any_view() noexcept = default;
  /** An index_view is an output of any element type too. */
  any_view(const index_view& v) noexcept { set_from(v); }
};

/** @} */

/* ============================================================================================
 * Owned host results
 * ========================================================================================== */
/** @defgroup group_cpp_host_results Owned host results
 * @ingroup group_cpp
 * Results the helpers allocate: host_tensor<T> for those of more than one dimension, and to_string.
 * @{ */

/** A row-major host array with a shape, as the one-call helpers return where a result has more
 * than one dimension. Zero-initialised; dtype() is T's unless made with another of T's width
 * (a helper copies its input's, e.g. bfloat16 in uint16_t). Since: 1.1 */
template <class T>
class host_tensor {
  static_assert(has_dtype_v<T> && !std::is_const_v<T>,
                "cattn::host_tensor<T>: T must be a non-const type with a DLPack dtype");

 public:
  using value_type = T;  /**< The element type. */
  /** An empty 1-D array (shape {0}). */
  host_tensor() = default;
  /** A zero-filled array of `shape`, reporting `dtype` (of T's width; T's own by default).
   * Throws: error (a negative or overflowing size). */
  explicit host_tensor(std::vector<int64_t> shape, DLDataType dtype = dtype_of<T>)
      : shape_(std::move(shape)), dtype_(dtype) {
    int64_t n = 1;
    for (int64_t d : shape_) n = detail::checked_mul(n, d, "cattn::host_tensor");
    data_.resize(detail::to_size(n, "cattn::host_tensor"));
  }
  /** The shape. */
  const std::vector<int64_t>& shape() const noexcept { return shape_; }
  /** The number of dimensions. */
  size_t ndim() const noexcept { return shape_.size(); }
  /** Dimension i. Throws std::out_of_range past the last. */
  int64_t dim(size_t i) const { return shape_.at(i); }
  /** The number of elements. */
  size_t size() const noexcept { return data_.size(); }
  /** Whether it holds no element. */
  bool empty() const noexcept { return data_.empty(); }
  /** The DLPack dtype it reports: T's, or the one it was made with. */
  DLDataType dtype() const noexcept { return dtype_; }
  /** The first element. */
  T* data() noexcept { return data_.data(); }
  /** @overload */
  const T* data() const noexcept { return data_.data(); }
  /** The elements in row-major order. */
  std::vector<T>& values() noexcept { return data_; }
  /** @overload */
  const std::vector<T>& values() const noexcept { return data_; }
  /** Element i in row-major order (not checked). */
  T& operator[](size_t i) noexcept { return data_[i]; }
  /** @overload */
  const T& operator[](size_t i) const noexcept { return data_[i]; }
  /** Element (i, j, ...): one index per dimension. */
  template <class... I>
  T& operator()(I... idx) noexcept {
    return data_[offset(idx...)];
  }
  /** @overload */
  template <class... I>
  const T& operator()(I... idx) const noexcept {
    return data_[offset(idx...)];
  }
  /** The elements in row-major order, for range-for. */
  typename std::vector<T>::iterator begin() noexcept { return data_.begin(); }
  /** @copydoc begin() */
  typename std::vector<T>::iterator end() noexcept { return data_.end(); }
  /** @copydoc begin() */
  typename std::vector<T>::const_iterator begin() const noexcept { return data_.begin(); }
  /** @copydoc begin() */
  typename std::vector<T>::const_iterator end() const noexcept { return data_.end(); }
  /** A view of the whole array (host memory, its dtype). */
  tensor_view<T> view() { return tensor_view<T>(data_.data(), shape_).with_dtype(dtype_); }
  /** A view of the whole array as an input. */
  tensor_view<const T> view() const {
    return tensor_view<const T>(data_.data(), shape_).with_dtype(dtype_);
  }

 private:
  template <class... I>
  size_t offset(I... idx) const noexcept {
    assert(sizeof...(I) == shape_.size());
    if constexpr (sizeof...(I) == 0) {
      return 0;
    } else {
      const std::array<int64_t, sizeof...(I)> ix{static_cast<int64_t>(idx)...};
      int64_t off = 0;
      for (size_t d = 0; d < ix.size(); ++d) off = off * shape_[d] + ix[d];
      return static_cast<size_t>(off);
    }
  }
  std::vector<int64_t> shape_{0};
  DLDataType dtype_ = dtype_of<T>;
  std::vector<T> data_;
};

namespace detail {

template <class T>
void append_value(std::string& s, const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    s += buf;
  } else if constexpr (std::is_same_v<T, bool>) {
    s += v ? "1" : "0";
  } else if constexpr (std::is_signed_v<T>) {
    s += std::to_string(static_cast<long long>(v));
  } else {
    s += std::to_string(static_cast<unsigned long long>(v));
  }
}

template <class T>
void append_nested(std::string& s, const host_tensor<T>& t, size_t dim, size_t& pos) {
  if (dim == t.ndim()) {
    append_value(s, t.values()[pos++]);
    return;
  }
  s += '[';
  for (int64_t i = 0; i < t.dim(dim); ++i) {
    if (i) s += ", ";
    append_nested(s, t, dim + 1, pos);
  }
  s += ']';
}

}  // namespace detail

/** "[1, 2, 3]"; nested brackets per dimension for a host_tensor; "[(0, 3), (3, 5)]" for pairs.
 * For printing and messages. Since: 1.1 */
template <class T, class A>
std::string to_string(const std::vector<T, A>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    detail::append_value(s, v[i]);
  }
  return s + "]";
}
/** "[(0, 3), (3, 5)]": a vector of pairs. Since: 1.1 */
template <class P, class Q, class A>
std::string to_string(const std::vector<std::pair<P, Q>, A>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    s += i ? ", (" : "(";
    detail::append_value(s, v[i].first);
    s += ", ";
    detail::append_value(s, v[i].second);
    s += ")";
  }
  return s + "]";
}
/** "[[1, 2], [3, 4]]": nested brackets, one level per dimension. Since: 1.1 */
template <class T>
std::string to_string(const host_tensor<T>& t) {
  std::string s;
  size_t pos = 0;
  detail::append_nested(s, t, 0, pos);
  return s;
}

namespace detail {

// Element i of a present 1-D host index view, honouring strides and byte_offset; the helpers
// read a few values (a total, a passthrough copy) to size or fill their results.
inline int64_t read_index(const view_base& v, int64_t i) {
  const DLTensor t = v.dl();
  const int64_t stride = t.strides ? t.strides[0] : 1;
  const char* p = static_cast<const char*>(t.data) + t.byte_offset +
                  static_cast<size_t>(i * stride) * (t.dtype.bits / 8);
  if (t.dtype.bits == 32) {
    int32_t x;
    std::memcpy(&x, p, sizeof x);
    return x;
  }
  int64_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

inline void require_host(const view_base& v, const char* fn, const char* name) {
  if (v.present() && !v.is_host())
    fail(std::string(fn) + ": " + name +
         " is not host memory (one-call helpers return host results; pass output views to "
         "the overload that takes them for device tensors)");
}

inline void require_1d(const view_base& v, const char* fn, const char* name) {
  if (v.present() && v.ndim() != 1)
    fail(std::string(fn) + ": " + name + " is not 1-D (got " + std::to_string(v.ndim()) +
         " dimensions)");
}

template <class Out>
std::vector<Out> read_all(const view_base& v, const char* fn, const char* name) {
  require_1d(v, fn, name);
  std::vector<Out> out(static_cast<size_t>(v.numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<Out>(read_index(v, static_cast<int64_t>(i)));
  return out;
}

// Runs fill(view) on a fresh host array of `shape` in the index dtype `dt` (int32 or int64),
// returning it as Out elements: for outputs that must have an input's dtype.
template <class Out, class F>
host_tensor<Out> in_index_dtype(DLDataType dt, std::vector<int64_t> shape, F&& fill) {
  if (dt.bits == sizeof(Out) * 8) {
    host_tensor<Out> t(std::move(shape));
    fill(index_view(t));
    return t;
  }
  auto convert = [&](auto& tmp) {
    fill(index_view(tmp));
    host_tensor<Out> t(tmp.shape());
    for (size_t i = 0; i < tmp.size(); ++i) t[i] = static_cast<Out>(tmp[i]);
    return t;
  };
  if (dt.bits == 32) {
    host_tensor<int32_t> tmp(std::move(shape));
    return convert(tmp);
  }
  host_tensor<int64_t> tmp(std::move(shape));
  return convert(tmp);
}

template <class Out>
using enable_index_t = std::enable_if_t<is_index_type_v<Out>, int>;

// tensor_arg for a fixed array of views (the per-KV-group fields): get(i) is NULL for an
// absent view. Not copyable, for the same reason.
template <size_t N>
class tensor_args {
 public:
  template <class View>
  explicit tensor_args(const std::array<View, N>& views) noexcept {
    for (size_t i = 0; i < N; ++i) {
      t_[i] = views[i].dl();
      present_[i] = views[i].present();
    }
  }
  tensor_args(const tensor_args&) = delete;
  tensor_args& operator=(const tensor_args&) = delete;
  DLTensor* get(size_t i) noexcept { return present_[i] ? &t_[i] : nullptr; }

 private:
  std::array<DLTensor, N> t_{};
  std::array<bool, N> present_{};
};

// An owner of one C handle; Traits::destroy frees it.
template <class Traits>
class unique_handle {
 public:
  using pointer = typename Traits::pointer;
  unique_handle() noexcept = default;
  explicit unique_handle(pointer p) noexcept : p_(p) {}
  unique_handle(unique_handle&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  unique_handle& operator=(unique_handle&& o) noexcept {
    if (this != &o) reset(std::exchange(o.p_, nullptr));
    return *this;
  }
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  ~unique_handle() { reset(); }
  pointer get() const noexcept { return p_; }
  pointer release() noexcept { return std::exchange(p_, nullptr); }
  void reset(pointer p = nullptr) noexcept {
    if (p_) Traits::destroy(p_);
    p_ = p;
  }

 private:
  pointer p_ = nullptr;
};

struct context_traits {
  using pointer = cattn_context_t*;
  static void destroy(pointer p) noexcept { cattn_context_destroy(p); }
};
struct comm_traits {
  using pointer = cattn_comm_t*;
  static void destroy(pointer p) noexcept { cattn_comm_destroy(p); }
};
struct local_attention_plan_traits {
  using pointer = cattn_local_attention_plan_t*;
  static void destroy(pointer p) noexcept { cattn_local_attention_plan_destroy(p); }
};
struct step_plan_traits {
  using pointer = cattn_step_plan_t*;
  static void destroy(pointer p) noexcept { cattn_step_plan_destroy(p); }
};

}  // namespace detail

/** @} */

/* ============================================================================================
 * Batch metadata (vLLM's CommonAttentionMetadata)
 * ========================================================================================== */
/** @defgroup group_cpp_metadata Batch metadata (vLLM's CommonAttentionMetadata)
 * @ingroup group_cpp
 * A batch's metadata: attn_metadata (cattn_common_attn_metadata_t with views) and metadata_scalars.
 * @{ */

/** cattn_common_attn_metadata_t with views instead of DLTensor pointers: an absent view is NULL.
 * The 1.1 fields are included. Since: 1.1
 * See docs/api/common_attn_metadata.md. */
struct attn_metadata {
  index_cview query_start_loc;         /**< [num_reqs + 1] */
  index_cview query_start_loc_cpu;     /**< host mirror */
  index_cview seq_lens;                /**< [num_reqs] */
  index_cview seq_lens_cpu;            /**< host mirror */
  index_cview num_computed_tokens_cpu; /**< [num_reqs] host */
  index_cview block_table_tensor;      /**< [num_reqs, max_blocks_per_req] */
  any_cview slot_mapping;              /**< [num_actual_tokens (+ padding)] */
  index_cview logits_indices_padded;   /**< [>= num_logits_indices] */
  int64_t num_reqs = 0;                /**< requests in the batch */
  int64_t num_actual_tokens = 0;       /**< tokens in the batch */
  int64_t max_query_len = 0;           /**< longest query */
  int64_t max_seq_len = 0;             /**< longest sequence (may be an upper bound) */
  int64_t num_logits_indices = 0;      /**< meaningful only with logits_indices_padded */
  bool causal = true;                  /**< causal attention (unless causal_per_req is set) */
  index_cview positions;               /**< the first of the 1.1 fields */
  any_cview is_prefilling;             /**< one byte per request (bool) */
  any_cview causal_per_req;            /**< one byte per request (bool) */
  index_cview dcp_local_seq_lens;      /**< [num_reqs] this DCP rank's sequence lengths */
  index_cview dcp_local_seq_lens_cpu;  /**< host mirror */
  index_cview seq_lens_cpu_upper_bound; /**< [num_reqs] host: an upper bound of seq_lens */
  index_cview encoder_seq_lens;        /**< [num_reqs] cross-attention encoder lengths */
  index_cview encoder_seq_lens_cpu;    /**< host mirror */
  int64_t max_logits_per_req = CATTN_NOT_GIVEN; /**< <= 0: not given */
};

/** The scalar fields of a metadata struct a call has written. Since: 1.1
 * See docs/api/common_attn_metadata.md. */
struct metadata_scalars {
  int64_t num_reqs = 0;            /**< requests in the batch */
  int64_t num_actual_tokens = 0;   /**< tokens in the batch */
  int64_t max_query_len = 0;       /**< longest query */
  int64_t max_seq_len = 0;         /**< longest sequence (may be an upper bound) */
  int64_t num_logits_indices = 0;  /**< logits indices in use */
  bool causal = true;              /**< causal attention */
  int64_t max_logits_per_req = CATTN_NOT_GIVEN; /**< <= 0: not given */
};

namespace detail {

// A cattn_common_attn_metadata_t whose tensor fields point at DLTensors held here. Neither
// copied nor moved: the struct points into the object.
class raw_metadata {
 public:
  raw_metadata() noexcept = default;
  explicit raw_metadata(const attn_metadata& m) noexcept {
    raw_.query_start_loc = put(m.query_start_loc);
    raw_.query_start_loc_cpu = put(m.query_start_loc_cpu);
    raw_.seq_lens = put(m.seq_lens);
    raw_.seq_lens_cpu = put(m.seq_lens_cpu);
    raw_.num_computed_tokens_cpu = put(m.num_computed_tokens_cpu);
    raw_.block_table_tensor = put(m.block_table_tensor);
    raw_.slot_mapping = put(m.slot_mapping);
    raw_.logits_indices_padded = put(m.logits_indices_padded);
    raw_.num_reqs = m.num_reqs;
    raw_.num_actual_tokens = m.num_actual_tokens;
    raw_.max_query_len = m.max_query_len;
    raw_.max_seq_len = m.max_seq_len;
    raw_.num_logits_indices = m.num_logits_indices;
    raw_.causal = m.causal ? 1 : 0;
    raw_.positions = put(m.positions);
    raw_.is_prefilling = put(m.is_prefilling);
    raw_.causal_per_req = put(m.causal_per_req);
    raw_.dcp_local_seq_lens = put(m.dcp_local_seq_lens);
    raw_.dcp_local_seq_lens_cpu = put(m.dcp_local_seq_lens_cpu);
    raw_.seq_lens_cpu_upper_bound = put(m.seq_lens_cpu_upper_bound);
    raw_.encoder_seq_lens = put(m.encoder_seq_lens);
    raw_.encoder_seq_lens_cpu = put(m.encoder_seq_lens_cpu);
    raw_.max_logits_per_req = m.max_logits_per_req;
  }
  raw_metadata(const raw_metadata&) = delete;
  raw_metadata& operator=(const raw_metadata&) = delete;
  // The DLTensor of v, held here; NULL for an absent view.
  DLTensor* put(const view_base& v) noexcept {
    if (!v.present()) return nullptr;
    assert(used_ < t_.size());
    t_[used_] = v.dl();
    return &t_[used_++];
  }
  cattn_common_attn_metadata_t* get() noexcept { return &raw_; }

 private:
  std::array<DLTensor, 20> t_{};
  size_t used_ = 0;
  cattn_common_attn_metadata_t raw_ = CATTN_COMMON_ATTN_METADATA_INIT;
};

inline metadata_scalars scalars_of(const cattn_common_attn_metadata_t& m) noexcept {
  metadata_scalars s;
  s.num_reqs = m.num_reqs;
  s.num_actual_tokens = m.num_actual_tokens;
  s.max_query_len = m.max_query_len;
  s.max_seq_len = m.max_seq_len;
  s.num_logits_indices = m.num_logits_indices;
  s.causal = m.causal != 0;
  s.max_logits_per_req = m.max_logits_per_req;
  return s;
}

}  // namespace detail

/** @} */

/* ============================================================================================
 * KV-cache layout (get_kv_cache_layout, the six layouts, the resolver) and the context
 * ========================================================================================== */
/** @defgroup group_cpp_kv_cache_layouts KV-cache layout and the context
 * @ingroup group_cpp
 * Which KV-cache layout to use: get_kv_cache_layout, the six layouts, the resolver, and context,
 * the owner of a cattn_context_t.
 * @{ */

/** The inputs of cattn_get_kv_cache_layout (cattn_kv_cache_layout_args_t). Since: 1.1
 * See docs/api/get_kv_cache_layout.md. */
struct kv_cache_layout_query {
  uint32_t supported_mask = 0; /**< CATTN_KV_CACHE_LAYOUT_BIT(...) ORed; 0 = any layout */
  /** Read CATTN_KV_CACHE_LAYOUT from the environment when env_value is nullptr. */
  bool read_environment = false;
  const char* env_value = nullptr; /**< the user's setting; nullptr = unset */
  /** The KV connector's preferred layout (UNSET, NHD or HND); UNSET = no preference. */
  cattn_kv_cache_layout_t connector_layout = CATTN_KV_CACHE_LAYOUT_UNSET;
};

/** One KV-cache spec of the resolver (num_heads, num_states, page_size_bytes; 0 = None).
 * Since: 1.1
 * See docs/api/resolve_kv_cache_layout.md. */
struct kv_cache_spec {
  int64_t num_heads = 0;        /**< the spec's num_heads */
  int64_t num_states = 0;       /**< the spec's num_states */
  int64_t page_size_bytes = 0;  /**< the spec's page_size_bytes */
};

/** The inputs of cattn_resolve_kv_cache_layout: one list of layout names per worker, the specs,
 * the user's setting and the connector's preference (nullopt = unset). Since: 1.1
 * See docs/api/resolve_kv_cache_layout.md. */
struct kv_cache_layout_resolve_request {
  /** Each worker's supported layout names (aliases allowed), most preferred first. */
  std::vector<std::vector<std::string>> workers;
  std::vector<kv_cache_spec> specs;            /**< the KV-cache specs; empty = vLLM's None */
  std::optional<std::string> env_value;        /**< the user's setting (VLLM_KV_CACHE_LAYOUT) */
  /** Read CATTN_KV_CACHE_LAYOUT from the environment when env_value is unset. */
  bool read_environment = false;
  std::optional<std::string> connector_layout; /**< the KV connector's preferred layout */
};

/** The outputs of cattn_resolve_kv_cache_layout. Since: 1.1
 * See docs/api/resolve_kv_cache_layout.md. */
struct resolved_kv_cache_layout {
  cattn_kv_cache_layout_t layout = CATTN_KV_CACHE_LAYOUT_UNSET; /**< the resolved layout */
  /** The connector's layout was not a candidate and the first candidate was used. */
  bool connector_fell_back = false;
  bool from_preset = false; /**< the context already held a layout, which won outright */
};

namespace detail {
inline cattn_kv_cache_layout_t get_kv_cache_layout(const cattn_context_t* ctx,
                                                   const kv_cache_layout_query& q) {
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.supported_mask = q.supported_mask;
  a.read_environment = q.read_environment ? 1 : 0;
  a.env_value = q.env_value;
  a.connector_layout = q.connector_layout;
  detail::check_call(cattn_get_kv_cache_layout(ctx, &a));
  return a.layout;
}
}  // namespace detail

/** Owns a cattn_context_t: the layout override, the preset and the resolved layout.
 * Move-only; destroyed with cattn_context_destroy. Since: 1.1
 * See docs/api/context.md. */
class context {
 public:
  /** Creates a context. Calls: cattn_context_create. Allocates: the context.
   * Throws: error (CATTN_OUT_OF_MEMORY). */
  context() {
    cattn_context_t* p = nullptr;
    detail::check_call(cattn_context_create(&p));
    h_.reset(p);
  }
  /** Takes ownership of a context made with cattn_context_create. Throws nothing. */
  static context adopt(cattn_context_t* raw) noexcept { return context(raw); }
  /** The C handle, still owned here; nullptr when this owner holds none. */
  cattn_context_t* get() const noexcept { return h_.get(); }
  /** Gives up ownership: returns the C handle, which the caller then destroys. */
  cattn_context_t* release() noexcept { return h_.release(); }
  /** Whether a handle is held. */
  explicit operator bool() const noexcept { return h_.get() != nullptr; }

  /** Sets or (UNSET) clears the override. Calls: cattn_context_set_kv_cache_layout_override.
   * Throws: error. */
  void set_kv_cache_layout_override(cattn_kv_cache_layout_t layout) {
    detail::check_call(cattn_context_set_kv_cache_layout_override(get(), layout));
  }
  /** The layout with this context's override. Calls: cattn_get_kv_cache_layout.
   * Throws: error. */
  cattn_kv_cache_layout_t get_kv_cache_layout(const kv_cache_layout_query& q = {}) const {
    return detail::get_kv_cache_layout(get(), q);
  }
  /** Sets (nullptr: clears) the preset name. Calls: cattn_context_set_kv_cache_layout_preset.
   * Throws: error. */
  void set_kv_cache_layout_preset(const char* name) {
    detail::check_call(cattn_context_set_kv_cache_layout_preset(get(), name));
  }
  /** @overload */
  void set_kv_cache_layout_preset(const std::string& name) {
    set_kv_cache_layout_preset(name.c_str());
  }
  /** Resolves the model's layout. Calls: cattn_resolve_kv_cache_layout. Allocates: the arrays
   * of names it passes. Throws: error. */
  resolved_kv_cache_layout resolve_kv_cache_layout(const kv_cache_layout_resolve_request& r) {
    std::vector<int64_t> counts;
    std::vector<const char*> names;
    for (const auto& w : r.workers) {
      counts.push_back(static_cast<int64_t>(w.size()));
      for (const auto& n : w) names.push_back(n.c_str());
    }
    std::vector<int64_t> heads, states, pages;
    for (const auto& s : r.specs) {
      heads.push_back(s.num_heads);
      states.push_back(s.num_states);
      pages.push_back(s.page_size_bytes);
    }
    cattn_resolve_kv_cache_layout_args_t a = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
    a.num_workers = static_cast<int64_t>(counts.size());
    a.worker_counts = counts.empty() ? nullptr : counts.data();
    a.worker_names = names.empty() ? nullptr : names.data();
    a.num_specs = static_cast<int64_t>(heads.size());
    a.spec_num_heads = heads.empty() ? nullptr : heads.data();
    a.spec_num_states = states.empty() ? nullptr : states.data();
    a.spec_page_size_bytes = pages.empty() ? nullptr : pages.data();
    a.env_value = r.env_value ? r.env_value->c_str() : nullptr;
    a.read_environment = r.read_environment ? 1 : 0;
    a.connector_layout = r.connector_layout ? r.connector_layout->c_str() : nullptr;
    detail::check_call(cattn_resolve_kv_cache_layout(get(), &a));
    resolved_kv_cache_layout out;
    out.layout = a.layout;
    out.connector_fell_back = a.connector_fell_back != 0;
    out.from_preset = a.from_preset != 0;
    return out;
  }
  /** Adopts a layout resolved elsewhere. Calls: cattn_record_kv_cache_layout. Throws: error. */
  void record_kv_cache_layout(const char* name) {
    detail::check_call(cattn_record_kv_cache_layout(get(), name));
  }
  /** @overload */
  void record_kv_cache_layout(const std::string& name) { record_kv_cache_layout(name.c_str()); }
  /** The resolved layout. Calls: cattn_get_resolved_kv_cache_layout. Throws: error. */
  cattn_kv_cache_layout_t get_resolved_kv_cache_layout() const {
    cattn_kv_cache_layout_t l = CATTN_KV_CACHE_LAYOUT_UNSET;
    detail::check_call(cattn_get_resolved_kv_cache_layout(get(), &l));
    return l;
  }

 private:
  explicit context(cattn_context_t* raw) noexcept : h_(raw) {}
  detail::unique_handle<detail::context_traits> h_;
};

/** The layout without a context (no override). Calls: cattn_get_kv_cache_layout with ctx NULL.
 * Throws: error. Since: 1.1
 * See docs/api/get_kv_cache_layout.md. */
inline cattn_kv_cache_layout_t get_kv_cache_layout(const kv_cache_layout_query& q = {}) {
  return detail::get_kv_cache_layout(nullptr, q);
}
/** Whether value is "NHD" or "HND". Calls: cattn_is_valid_kv_cache_layout. Throws: error.
 * Since: 1.1
 * See docs/api/get_kv_cache_layout.md. */
inline bool is_valid_kv_cache_layout(const char* value) {
  int32_t valid = 0;
  detail::check_call(cattn_is_valid_kv_cache_layout(value, &valid));
  return valid != 0;
}
/** @overload */
inline bool is_valid_kv_cache_layout(const std::string& value) {
  return is_valid_kv_cache_layout(value.c_str());
}
/** "NHD", "HND" or nullptr. Calls: cattn_kv_cache_layout_name. Throws nothing. Since: 1.1
 * See docs/api/kv_cache_layout.md. */
inline const char* kv_cache_layout_name(cattn_kv_cache_layout_t layout) noexcept {
  return cattn_kv_cache_layout_name(layout);
}
/** Parses a name (aliases NHD, HND). Calls: cattn_kv_cache_layout_from_name. Throws: error.
 * Since: 1.1
 * See docs/api/kv_cache_layout.md. */
inline cattn_kv_cache_layout_t kv_cache_layout_from_name(const char* name) {
  cattn_kv_cache_layout_t l = CATTN_KV_CACHE_LAYOUT_UNSET;
  detail::check_call(cattn_kv_cache_layout_from_name(name, &l));
  return l;
}
/** @overload */
inline cattn_kv_cache_layout_t kv_cache_layout_from_name(const std::string& name) {
  return kv_cache_layout_from_name(name.c_str());
}
/** A layout's properties. Calls: cattn_kv_cache_layout_get_properties. Throws: error.
 * Since: 1.1
 * See docs/api/kv_cache_layout.md. */
inline cattn_kv_cache_layout_properties_t kv_cache_layout_get_properties(
    cattn_kv_cache_layout_t layout) {
  cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
  detail::check_call(cattn_kv_cache_layout_get_properties(layout, &p));
  return p;
}
/** FlashInfer's name, static. Calls: cattn_get_flashinfer_layout_string. Throws: error.
 * Since: 1.1
 * See docs/api/kv_cache_layout.md. */
inline const char* get_flashinfer_layout_string(cattn_kv_cache_layout_t layout) {
  const char* s = nullptr;
  detail::check_call(cattn_get_flashinfer_layout_string(layout, &s));
  return s;
}

/** The outputs of cattn_kv_cache_layout_strides. Since: 1.1
 * See docs/api/kv_cache_layout.md. */
struct kv_cache_layout_strides_result {
  std::array<int64_t, 5> strides{};        /**< the element stride of each logical axis L..C */
  std::array<int64_t, 5> physical_shape{}; /**< the sizes in storage order, outermost first */
  int64_t numel = 0;                       /**< L * B * H * N * C */
};
/** Strides of the logical [L, B, H, N, C] view of a compact buffer in `layout`.
 * Calls: cattn_kv_cache_layout_strides. Throws: error. Since: 1.1
 * See docs/api/kv_cache_layout.md. */
inline kv_cache_layout_strides_result kv_cache_layout_strides(
    cattn_kv_cache_layout_t layout, const std::array<int64_t, 5>& sizes) {
  cattn_kv_cache_layout_strides_args_t a = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
  a.layout = layout;
  for (size_t i = 0; i < 5; ++i) a.sizes[i] = sizes[i];
  detail::check_call(cattn_kv_cache_layout_strides(&a));
  kv_cache_layout_strides_result r;
  for (size_t i = 0; i < 5; ++i) {
    r.strides[i] = a.strides[i];
    r.physical_shape[i] = a.physical_shape[i];
  }
  r.numel = a.numel;
  return r;
}

/** Combines one worker's backends' preferences: one entry per backend, std::nullopt for a
 * backend that declares nothing. Calls: cattn_get_supported_kv_cache_layouts. Allocates: the
 * answer (and the flattened lists). Throws: error. Since: 1.1
 * See docs/api/get_supported_kv_cache_layouts.md. */
inline std::vector<cattn_kv_cache_layout_t> get_supported_kv_cache_layouts(
    const std::vector<std::optional<std::vector<cattn_kv_cache_layout_t>>>& backends) {
  std::vector<int64_t> counts;
  std::vector<cattn_kv_cache_layout_t> flat;
  size_t longest = CATTN_KV_CACHE_LAYOUT_COUNT;
  for (const auto& b : backends) {
    counts.push_back(b ? static_cast<int64_t>(b->size()) : CATTN_KV_CACHE_LAYOUTS_NONE);
    if (b) {
      flat.insert(flat.end(), b->begin(), b->end());
      longest = std::max(longest, b->size());
    }
  }
  std::vector<cattn_kv_cache_layout_t> out(longest, CATTN_KV_CACHE_LAYOUT_UNSET);
  cattn_get_supported_kv_cache_layouts_args_t a = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
  a.num_backends = static_cast<int64_t>(counts.size());
  a.backend_counts = counts.empty() ? nullptr : counts.data();
  a.layouts = flat.empty() ? nullptr : flat.data();
  a.out = out.data();
  a.out_capacity = static_cast<int64_t>(out.size());
  detail::check_call(cattn_get_supported_kv_cache_layouts(&a));
  out.resize(static_cast<size_t>(a.num_out));
  return out;
}

/** @} */

/* ============================================================================================
 * DCP local sequence lengths (get_dcp_local_seq_lens)
 * ========================================================================================== */
/** @defgroup group_cpp_dcp DCP local sequence lengths
 * @ingroup group_cpp
 * Each decode-context-parallel rank's share of every sequence: get_dcp_local_seq_lens.
 * @{ */

/** dcp_rank for every rank's lengths (CATTN_DCP_ALL_RANKS). Since: 1.1
 * See docs/api/get_dcp_local_seq_lens.md. */
inline constexpr int64_t all_ranks = CATTN_DCP_ALL_RANKS;

/** Each rank's KV lengths into `out` (host, or CUDA on `stream`); shape_mode as cattn.h's.
 * Calls: cattn_get_dcp_local_seq_lens. Allocates: nothing. Throws: error. Since: 1.1
 * See docs/api/get_dcp_local_seq_lens.md. */
inline void get_dcp_local_seq_lens(index_cview seq_lens, index_view out, int64_t dcp_size,
                                   int64_t dcp_rank, int64_t dcp_kv_cache_interleave_size = 1,
                                   stream_ref stream = {},
                                   cattn_dcp_shape_mode_t shape_mode = CATTN_DCP_SHAPE_SQUEEZE) {
  detail::tensor_arg s(seq_lens), o(out);
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = s.get();
  a.dcp_size = dcp_size;
  a.dcp_rank = dcp_rank;
  a.dcp_kv_cache_interleave_size = dcp_kv_cache_interleave_size;
  a.out = o.get();
  a.stream = stream.get();
  a.shape_mode = shape_mode;
  detail::check_call(cattn_get_dcp_local_seq_lens(&a));
}
/** One-call: the lengths of rank dcp_rank (shape of seq_lens) or, with all_ranks, of every rank
 * (seq_lens' shape + [dcp_size]), always with CATTN_DCP_SHAPE_PRESERVE. Calls:
 * cattn_get_dcp_local_seq_lens. Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/get_dcp_local_seq_lens.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
host_tensor<Out> get_dcp_local_seq_lens(index_cview seq_lens, int64_t dcp_size, int64_t dcp_rank,
                                        int64_t dcp_kv_cache_interleave_size = 1) {
  std::vector<int64_t> shape;
  for (int32_t i = 0; i < seq_lens.ndim(); ++i) shape.push_back(seq_lens.shape(i));
  if (dcp_rank == all_ranks) shape.push_back(std::max<int64_t>(dcp_size, 1));
  host_tensor<Out> out(std::move(shape));
  get_dcp_local_seq_lens(seq_lens, out, dcp_size, dcp_rank, dcp_kv_cache_interleave_size, {},
                         CATTN_DCP_SHAPE_PRESERVE);
  return out;
}

/** @} */

/* ============================================================================================
 * PCP query restore index (get_pcp_query_restore_idx)
 * ========================================================================================== */
/** @defgroup group_cpp_pcp_restore_idx PCP query restore index
 * @ingroup group_cpp
 * The index that restores a PCP rank's row order: get_pcp_query_restore_idx and its size query.
 * @{ */

/** The restore index's exact length for a host cu_num_tokens.
 * Calls: cattn_get_pcp_query_restore_idx_size. Throws: error. Since: 1.1
 * See docs/api/get_pcp_query_restore_idx.md. */
inline int64_t get_pcp_query_restore_idx_size(index_cview cu_num_tokens) {
  detail::tensor_arg c(cu_num_tokens);
  int64_t n = 0;
  detail::check_call(cattn_get_pcp_query_restore_idx_size(c.get(), &n));
  return n;
}
/** The restore index into restore_idx (host, or CUDA on `stream`).
 * Calls: cattn_get_pcp_query_restore_idx. Allocates: nothing. Throws: error. Since: 1.1
 * See docs/api/get_pcp_query_restore_idx.md. */
inline void get_pcp_query_restore_idx(index_cview cu_num_tokens, index_view restore_idx,
                                      stream_ref stream = {}) {
  detail::tensor_arg c(cu_num_tokens), r(restore_idx);
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = c.get();
  a.restore_idx = r.get();
  a.stream = stream.get();
  detail::check_call(cattn_get_pcp_query_restore_idx(&a));
}
/** One-call: the restore index of a host cu_num_tokens. Calls: the size query, then
 * cattn_get_pcp_query_restore_idx. Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/get_pcp_query_restore_idx.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::vector<Out> get_pcp_query_restore_idx(index_cview cu_num_tokens) {
  std::vector<Out> out(detail::to_size(get_pcp_query_restore_idx_size(cu_num_tokens),
                                       "cattn::get_pcp_query_restore_idx"));
  get_pcp_query_restore_idx(cu_num_tokens, out);
  return out;
}

/** @} */

/* ============================================================================================
 * Fused PCP Q/K/V select (fused_pcp_qkv_select)
 * ========================================================================================== */
/** @defgroup group_cpp_pcp_select Fused PCP Q/K/V select
 * @ingroup group_cpp
 * A PCP rank's head and tail queries with the K/V rows they attend to: fused_pcp_qkv_select and its
 * size query.
 * @{ */

/** The outputs' row counts: q_head and q_tail, k_head and v_head, k_tail and v_tail. Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
struct fused_pcp_qkv_select_rows {
  ///@{
  /** Rows of q_head and of q_tail (q), of k_head and v_head (kv_head), of k_tail and v_tail
   * (kv_tail). */
  int64_t q = 0, kv_head = 0, kv_tail = 0;
  ///@}
};
/** The row counts of the six outputs for `num_q_rows` query rows at world size W, rank r.
 * Calls: cattn_fused_pcp_qkv_select_size. Throws: error. Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
inline fused_pcp_qkv_select_rows fused_pcp_qkv_select_size(int64_t num_q_rows,
                                                           int64_t pcp_world_size,
                                                           int64_t pcp_rank) {
  fused_pcp_qkv_select_rows r;
  detail::check_call(cattn_fused_pcp_qkv_select_size(num_q_rows, pcp_world_size, pcp_rank, &r.q,
                                                     &r.kv_head, &r.kv_tail));
  return r;
}
/** The six outputs of cattn_fused_pcp_qkv_select. Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
struct fused_pcp_qkv_select_outputs {
  ///@{
  /** The head and tail queries, and the keys and values each attends to; shapes and dtypes as
   * cattn_fused_pcp_qkv_select_args_t's fields of the same names. */
  any_view q_head, k_head, v_head, q_tail, k_tail, v_tail;
  ///@}
};
/** Head and tail halves of q and the K/V rows they attend to, into the caller's outputs (host
 * reference, or one kernel on `stream`). Calls: cattn_fused_pcp_qkv_select. Allocates:
 * nothing. Throws: error. Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
inline void fused_pcp_qkv_select(any_cview q, any_cview k, any_cview v,
                                 index_cview query_start_loc, int64_t pcp_world_size,
                                 int64_t pcp_rank, const fused_pcp_qkv_select_outputs& out,
                                 stream_ref stream = {}) {
  detail::tensor_arg tq(q), tk(k), tv(v), tl(query_start_loc), qh(out.q_head), kh(out.k_head),
      vh(out.v_head), qt(out.q_tail), kt(out.k_tail), vt(out.v_tail);
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.q = tq.get();
  a.k = tk.get();
  a.v = tv.get();
  a.query_start_loc = tl.get();
  a.pcp_world_size = pcp_world_size;
  a.pcp_rank = pcp_rank;
  a.q_head = qh.get();
  a.k_head = kh.get();
  a.v_head = vh.get();
  a.q_tail = qt.get();
  a.k_tail = kt.get();
  a.v_tail = vt.get();
  a.stream = stream.get();
  detail::check_call(cattn_fused_pcp_qkv_select(&a));
}
/** The results of the one-call fused select, each of its input's dtype. Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
template <class T>
struct fused_pcp_qkv_select_result {
  ///@{
  /** The head and tail queries, and the keys and values each attends to, sized by
   * fused_pcp_qkv_select_size. */
  host_tensor<T> q_head, k_head, v_head, q_tail, k_tail, v_tail;
  ///@}
};
/** One-call, on host q, k, v ([N, H, D] each, elements of T): allocates the six outputs at the
 * sizes cattn.h gives and runs the host path. Calls: cattn_fused_pcp_qkv_select. Allocates:
 * the outputs. Throws: error (a q, k or v that is not 3-D: this layer's, naming it).
 * Since: 1.1
 * See docs/api/fused_pcp_qkv_select.md. */
template <class T, std::enable_if_t<has_dtype_v<T>, int> = 0>
fused_pcp_qkv_select_result<std::remove_const_t<T>> fused_pcp_qkv_select(
    const tensor_view<T>& q, const tensor_view<T>& k, const tensor_view<T>& v,
    index_cview query_start_loc, int64_t pcp_world_size, int64_t pcp_rank) {
  using U = std::remove_const_t<T>;
  const char* fn = "cattn::fused_pcp_qkv_select";
  const std::pair<const char*, const detail::view_base*> inputs[] = {{"q", &q}, {"k", &k},
                                                                     {"v", &v}};
  for (const auto& in : inputs)
    if (in.second->ndim() != 3)
      detail::fail(std::string(fn) + ": " + in.first + " is not 3-D (got " +
                   std::to_string(in.second->ndim()) + " dimensions)");
  const fused_pcp_qkv_select_rows rows =
      fused_pcp_qkv_select_size(q.shape(0), pcp_world_size, pcp_rank);
  fused_pcp_qkv_select_result<U> r;
  r.q_head = host_tensor<U>({rows.q, q.shape(1), q.shape(2)}, q.dtype());
  r.q_tail = host_tensor<U>({rows.q, q.shape(1), q.shape(2)}, q.dtype());
  r.k_head = host_tensor<U>({rows.kv_head, k.shape(1), k.shape(2)}, k.dtype());
  r.k_tail = host_tensor<U>({rows.kv_tail, k.shape(1), k.shape(2)}, k.dtype());
  r.v_head = host_tensor<U>({rows.kv_head, v.shape(1), v.shape(2)}, v.dtype());
  r.v_tail = host_tensor<U>({rows.kv_tail, v.shape(1), v.shape(2)}, v.dtype());
  fused_pcp_qkv_select(q, k, v, query_start_loc, pcp_world_size, pcp_rank,
                       {r.q_head, r.k_head, r.v_head, r.q_tail, r.k_tail, r.v_tail});
  return r;
}

/** @} */

/* ============================================================================================
 * PCP all-gather + restore (pcp_kv_allgather_and_restore) and its communicator
 * ========================================================================================== */
/** @defgroup group_cpp_pcp_allgather PCP all-gather + restore and its communicator
 * @ingroup group_cpp
 * The K/V all-gather of PCP: pcp_kv_allgather_and_restore, and comm, the owner of a cattn_comm_t.
 * @{ */

/** A fresh rendezvous id for a new communicator. Calls: cattn_comm_get_unique_id. Throws: error.
 * Since: 1.1
 * See docs/api/pcp_kv_allgather_and_restore.md. */
inline cattn_comm_unique_id_t comm_get_unique_id() {
  cattn_comm_unique_id_t id{};
  detail::check_call(cattn_comm_get_unique_id(&id));
  return id;
}

/** Owns a cattn_comm_t (an NCCL communicator libcattn owns or borrows). Move-only; destroyed
 * with cattn_comm_destroy. A default-constructed comm holds nothing. Since: 1.1
 * See docs/api/pcp_kv_allgather_and_restore.md. */
class comm {
 public:
  comm() noexcept = default;
  /** Creates rank `rank` of `nranks` from an id (blocks until every rank has called).
   * Calls: cattn_comm_create. Allocates: the handle, its stream, events and NCCL's
   * communicator. Throws: error. */
  static comm create(const cattn_comm_unique_id_t& id, int32_t nranks, int32_t rank,
                     int32_t cuda_device) {
    cattn_comm_t* p = nullptr;
    detail::check_call(cattn_comm_create(&id, nranks, rank, cuda_device, &p));
    return comm(p);
  }
  /** Wraps an engine's ncclComm_t, which it keeps owning. Calls: cattn_comm_create_borrowed.
   * Allocates: the handle, its stream and events. Throws: error. */
  static comm create_borrowed(void* nccl_comm) {
    cattn_comm_t* p = nullptr;
    detail::check_call(cattn_comm_create_borrowed(nccl_comm, &p));
    return comm(p);
  }
  /** Takes ownership of a handle made by the C calls. Throws nothing. */
  static comm adopt(cattn_comm_t* raw) noexcept { return comm(raw); }
  /** The C handle, still owned here; nullptr when this owner holds none. */
  cattn_comm_t* get() const noexcept { return h_.get(); }
  /** Gives up ownership: returns the C handle, which the caller then destroys. */
  cattn_comm_t* release() noexcept { return h_.release(); }
  /** Whether a handle is held. */
  explicit operator bool() const noexcept { return h_.get() != nullptr; }
  /** Calls: cattn_comm_get_rank. Throws: error. */
  int32_t rank() const {
    int32_t r = 0;
    detail::check_call(cattn_comm_get_rank(get(), &r));
    return r;
  }
  /** Calls: cattn_comm_get_size. Throws: error. */
  int32_t size() const {
    int32_t s = 0;
    detail::check_call(cattn_comm_get_size(get(), &s));
    return s;
  }

 private:
  explicit comm(cattn_comm_t* raw) noexcept : h_(raw) {}
  detail::unique_handle<detail::comm_traits> h_;
};

/** The device workspace the all-gather + restore needs. Calls:
 * cattn_pcp_kv_allgather_and_restore_workspace_size. Throws: error. Since: 1.1
 * See docs/api/pcp_kv_allgather_and_restore.md. */
inline size_t pcp_kv_allgather_and_restore_workspace_size(const comm& c, any_cview key,
                                                          any_cview value,
                                                          int64_t num_actual_tokens) {
  detail::tensor_arg k(key), v(value);
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = c.get();
  a.key = k.get();
  a.value = v.get();
  a.num_actual_tokens = num_actual_tokens;
  size_t bytes = 0;
  detail::check_call(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &bytes));
  return bytes;
}
/** All-gathers key and value over the group and restores the token order, on `stream` (device
 * tensors only; there is no host path). Calls: cattn_pcp_kv_allgather_and_restore.
 * Allocates: nothing (the workspace is the caller's device memory). Throws: error. Since: 1.1
 * See docs/api/pcp_kv_allgather_and_restore.md. */
inline void pcp_kv_allgather_and_restore(comm& c, any_cview key, any_cview value,
                                         int64_t num_actual_tokens, index_cview restore_idx,
                                         any_view key_out, any_view value_out, void* workspace,
                                         size_t workspace_size, stream_ref stream = {}) {
  detail::tensor_arg k(key), v(value), r(restore_idx), ko(key_out), vo(value_out);
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = c.get();
  a.key = k.get();
  a.value = v.get();
  a.num_actual_tokens = num_actual_tokens;
  a.restore_idx = r.get();
  a.key_out = ko.get();
  a.value_out = vo.get();
  a.workspace = workspace;
  a.workspace_size = workspace_size;
  a.stream = stream.get();
  detail::check_call(cattn_pcp_kv_allgather_and_restore(&a));
}

/** @} */

/* ============================================================================================
 * Causal-conv1d metadata (compute_causal_conv1d_metadata)
 * ========================================================================================== */
/** @defgroup group_cpp_causal_conv1d Causal-conv1d metadata
 * @ingroup group_cpp
 * The launch metadata of Mamba's causal-conv1d kernel: compute_causal_conv1d_metadata, its size
 * query and its capturable variant.
 * @{ */

/** The outputs of cattn_compute_causal_conv1d_metadata_size. Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
struct causal_conv1d_metadata_size {
  int64_t tot = 0;      /**< programs */
  int64_t capacity = 0; /**< length of batch_ptr and token_chunk_offset_ptr */
};
/** Calls: cattn_compute_causal_conv1d_metadata_size. Throws: error. Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
inline causal_conv1d_metadata_size compute_causal_conv1d_metadata_size(
    index_cview query_start_loc_cpu, int64_t block_m = 8) {
  detail::tensor_arg q(query_start_loc_cpu);
  causal_conv1d_metadata_size s;
  detail::check_call(
      cattn_compute_causal_conv1d_metadata_size(q.get(), block_m, &s.tot, &s.capacity));
  return s;
}
/** The optional outputs of cattn_compute_causal_conv1d_metadata (absent = NULL). Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
struct causal_conv1d_metadata_outputs {
  ///@{
  /** Programs per request [B]; each program's request and chunk [at least tot]; the padded
   * launch arrays [capacity]: as cattn_causal_conv1d_metadata_args_t's fields. */
  index_view nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr;
  ///@}
};
/** Launch metadata into the caller's outputs (host, or CUDA on `stream`, planned from the host
 * mirror); returns tot. Calls: cattn_compute_causal_conv1d_metadata. Allocates: nothing.
 * Throws: error. Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
inline int64_t compute_causal_conv1d_metadata(index_cview query_start_loc_cpu, int64_t block_m,
                                              const causal_conv1d_metadata_outputs& out,
                                              stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc_cpu), n(out.nums), m(out.mlist), o(out.offsetlist),
      b(out.batch_ptr), t(out.token_chunk_offset_ptr);
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.get();
  a.block_m = block_m;
  a.nums = n.get();
  a.mlist = m.get();
  a.offsetlist = o.get();
  a.batch_ptr = b.get();
  a.token_chunk_offset_ptr = t.get();
  a.stream = stream.get();
  detail::check_call(cattn_compute_causal_conv1d_metadata(&a));
  return a.tot;
}
/** The results of the one-call conv1d metadata: nums [B], mlist and offsetlist [tot], the
 * padded batch_ptr and token_chunk_offset_ptr [capacity]. Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
template <class Out = int64_t>
struct causal_conv1d_metadata {
  ///@{
  /** nums [B], mlist and offsetlist [tot], batch_ptr and token_chunk_offset_ptr [capacity]. */
  std::vector<Out> nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr;
  ///@}
  int64_t tot = 0; /**< programs in all */
};
/** One-call, from a host query_start_loc_cpu. Calls: the size query, then
 * cattn_compute_causal_conv1d_metadata. Allocates: the five vectors. Throws: error.
 * Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
causal_conv1d_metadata<Out> compute_causal_conv1d_metadata(index_cview query_start_loc_cpu,
                                                           int64_t block_m = 8) {
  const char* fn = "cattn::compute_causal_conv1d_metadata";
  const causal_conv1d_metadata_size s = compute_causal_conv1d_metadata_size(query_start_loc_cpu,
                                                                            block_m);
  causal_conv1d_metadata<Out> r;
  r.nums.resize(detail::to_size(std::max<int64_t>(query_start_loc_cpu.numel() - 1, 0), fn));
  r.mlist.resize(detail::to_size(s.tot, fn));
  r.offsetlist.resize(detail::to_size(s.tot, fn));
  r.batch_ptr.resize(detail::to_size(s.capacity, fn));
  r.token_chunk_offset_ptr.resize(detail::to_size(s.capacity, fn));
  r.tot = compute_causal_conv1d_metadata(
      query_start_loc_cpu, block_m,
      {r.nums, r.mlist, r.offsetlist, r.batch_ptr, r.token_chunk_offset_ptr});
  return r;
}
/** The outputs of cattn_compute_causal_conv1d_metadata_capturable (absent = NULL). Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
struct causal_conv1d_metadata_capturable_outputs {
  ///@{
  /** As cattn_causal_conv1d_metadata_capturable_args_t's fields of the same names (tot: the
   * device tensor the program count is written to). */
  index_view nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr, tot;
  ///@}
};
/** Launch metadata computed on the device from the device query_start_loc, one kernel on
 * `stream`, replayable. Calls: cattn_compute_causal_conv1d_metadata_capturable. Allocates:
 * nothing. Throws: error. Since: 1.1
 * See docs/api/compute_causal_conv1d_metadata.md. */
inline void compute_causal_conv1d_metadata_capturable(
    index_cview query_start_loc, int64_t block_m,
    const causal_conv1d_metadata_capturable_outputs& out, stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), n(out.nums), m(out.mlist), o(out.offsetlist),
      b(out.batch_ptr), t(out.token_chunk_offset_ptr), c(out.tot);
  cattn_causal_conv1d_metadata_capturable_args_t a =
      CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = q.get();
  a.block_m = block_m;
  a.nums = n.get();
  a.mlist = m.get();
  a.offsetlist = o.get();
  a.batch_ptr = b.get();
  a.token_chunk_offset_ptr = t.get();
  a.tot = c.get();
  a.stream = stream.get();
  detail::check_call(cattn_compute_causal_conv1d_metadata_capturable(&a));
}

/** @} */

/* ============================================================================================
 * Extend queries (extend_all_queries_by_1, generalised to N)
 * ========================================================================================== */
/** @defgroup group_cpp_extend Extend queries
 * @ingroup group_cpp
 * Every query longer by n tokens: extend_all_queries_by_n (vLLM's extend_all_queries_by_1,
 * generalised to N).
 * @{ */

/** A DCP group (size, rank, interleave); size 0 = not given. Since: 1.1
 * See docs/api/extend_all_queries_by_n.md. */
struct dcp_group {
  int64_t size = 0;        /**< dcp_size; 0 = not given */
  int64_t rank = 0;        /**< dcp_rank, in [0, size) */
  int64_t interleave = 1;  /**< dcp_kv_cache_interleave_size, at least 1 */
};
/** The tensors cattn_extend_all_queries_by_n writes (set each one exactly as cattn.h says; any
 * may be the very view of its input). Since: 1.1
 * See docs/api/extend_all_queries_by_n.md. */
struct extend_outputs {
  ///@{
  /** The out metadata's tensors of the same names (cattn_common_attn_metadata_t's fields). */
  index_view query_start_loc, query_start_loc_cpu, seq_lens, seq_lens_cpu,
      seq_lens_cpu_upper_bound, dcp_local_seq_lens, dcp_local_seq_lens_cpu, positions;
  ///@}
};
/** Extends every request by n tokens into the caller's outputs (host, or CUDA on `stream`);
 * returns the new scalars. Calls: cattn_extend_all_queries_by_n. Allocates: nothing.
 * Throws: error. Since: 1.1
 * See docs/api/extend_all_queries_by_n.md. */
inline metadata_scalars extend_all_queries_by_n(const attn_metadata& metadata, int64_t n,
                                                const extend_outputs& out,
                                                any_cview new_slot_mapping = {},
                                                const dcp_group& dcp = {},
                                                stream_ref stream = {}) {
  detail::raw_metadata in(metadata), o;
  cattn_common_attn_metadata_t* r = o.get();
  r->query_start_loc = o.put(out.query_start_loc);
  r->query_start_loc_cpu = o.put(out.query_start_loc_cpu);
  r->seq_lens = o.put(out.seq_lens);
  r->seq_lens_cpu = o.put(out.seq_lens_cpu);
  r->seq_lens_cpu_upper_bound = o.put(out.seq_lens_cpu_upper_bound);
  r->dcp_local_seq_lens = o.put(out.dcp_local_seq_lens);
  r->dcp_local_seq_lens_cpu = o.put(out.dcp_local_seq_lens_cpu);
  r->positions = o.put(out.positions);
  detail::tensor_arg slots(new_slot_mapping);
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = in.get();
  a.n = n;
  a.new_slot_mapping = slots.get();
  a.out = r;
  a.stream = stream.get();
  a.dcp_size = dcp.size;
  a.dcp_rank = dcp.rank;
  a.dcp_kv_cache_interleave_size = dcp.interleave;
  detail::check_call(cattn_extend_all_queries_by_n(&a));
  return detail::scalars_of(*r);
}
/** The results of the one-call extend: each vector is filled when the input has that tensor
 * (positions when asked for), and query_start_loc / seq_lens also stand for their mirrors.
 * Since: 1.1
 * See docs/api/extend_all_queries_by_n.md. */
template <class Out = int64_t>
struct extended_metadata {
  ///@{
  /** The extended batch's tensors of the same names; empty where the input has none. */
  std::vector<Out> query_start_loc, seq_lens, seq_lens_cpu_upper_bound, dcp_local_seq_lens,
      dcp_local_seq_lens_cpu, positions;
  ///@}
  metadata_scalars scalars; /**< the extended batch's scalars */
};
/** One-call, on host metadata: allocates the outputs cattn.h requires for the tensors the input
 * has (a tensor and its mirror share one vector), and positions of the extended batch when
 * `positions` is true; new_slot_mapping becomes the slot mapping (not returned). Calls:
 * cattn_extend_all_queries_by_n. Allocates: the vectors. Throws: error. Since: 1.1
 * See docs/api/extend_all_queries_by_n.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
extended_metadata<Out> extend_all_queries_by_n(const attn_metadata& metadata, int64_t n,
                                               any_cview new_slot_mapping = {},
                                               const dcp_group& dcp = {},
                                               bool positions = false) {
  const char* fn = "cattn::extend_all_queries_by_n";
  extended_metadata<Out> r;
  extend_outputs o;
  auto alloc = [&](std::vector<Out>& v, const detail::view_base& like) -> index_view {
    v.resize(detail::to_size(like.numel(), fn));
    return v;
  };
  if (metadata.query_start_loc)
    o.query_start_loc = alloc(r.query_start_loc, metadata.query_start_loc);
  if (metadata.query_start_loc_cpu) {
    if (!metadata.query_start_loc) alloc(r.query_start_loc, metadata.query_start_loc_cpu);
    o.query_start_loc_cpu = r.query_start_loc;
  }
  if (metadata.seq_lens) o.seq_lens = alloc(r.seq_lens, metadata.seq_lens);
  if (metadata.seq_lens_cpu) {
    if (!metadata.seq_lens) alloc(r.seq_lens, metadata.seq_lens_cpu);
    o.seq_lens_cpu = r.seq_lens;
  }
  if (metadata.seq_lens_cpu_upper_bound)
    o.seq_lens_cpu_upper_bound =
        alloc(r.seq_lens_cpu_upper_bound, metadata.seq_lens_cpu_upper_bound);
  if (metadata.dcp_local_seq_lens)
    o.dcp_local_seq_lens = alloc(r.dcp_local_seq_lens, metadata.dcp_local_seq_lens);
  if (metadata.dcp_local_seq_lens_cpu)
    o.dcp_local_seq_lens_cpu = alloc(r.dcp_local_seq_lens_cpu, metadata.dcp_local_seq_lens_cpu);
  if (positions) {
    const int64_t added =
        detail::checked_mul(std::max<int64_t>(n, 0), metadata.seq_lens.numel(), fn);
    const int64_t tokens = std::max<int64_t>(metadata.num_actual_tokens, 0);
    if (tokens > std::numeric_limits<int64_t>::max() - added)
      detail::fail(std::string(fn) + ": the extended batch's token count overflows int64");
    r.positions.resize(detail::to_size(tokens + added, fn));
    o.positions = r.positions;
  }
  r.scalars = extend_all_queries_by_n(metadata, n, o, new_slot_mapping, dcp);
  return r;
}

/** @} */

/* ============================================================================================
 * KV-sharing fast-prefill metadata (make_kv_sharing_fast_prefill_common_attn_metadata)
 * ========================================================================================== */
/** @defgroup group_cpp_fast_prefill KV-sharing fast-prefill metadata
 * @ingroup group_cpp
 * KV-sharing fast prefill's decode batch: make_kv_sharing_fast_prefill_common_attn_metadata.
 * @{ */

/** What cattn_make_kv_sharing_fast_prefill_common_attn_metadata reports besides its tensors.
 * Since: 1.1
 * See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md. */
struct fast_prefill_result {
  /** The batch was returned as it is (vLLM's early return): nothing to drop. */
  bool passthrough = false;
  metadata_scalars scalars; /**< the decode batch's scalars */
};
/** The decode-only metadata into the caller's query_start_loc (and optional host mirror and
 * decode_max_and_total, required on CUDA); host, or one kernel on `stream`. Calls:
 * cattn_make_kv_sharing_fast_prefill_common_attn_metadata. Allocates: nothing. Throws: error.
 * Since: 1.1
 * See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md. */
inline fast_prefill_result make_kv_sharing_fast_prefill_common_attn_metadata(
    const attn_metadata& metadata, index_view query_start_loc, index_view query_start_loc_cpu = {},
    index_view decode_max_and_total = {}, stream_ref stream = {}) {
  detail::raw_metadata in(metadata), o;
  o.get()->query_start_loc = o.put(query_start_loc);
  o.get()->query_start_loc_cpu = o.put(query_start_loc_cpu);
  detail::tensor_arg d(decode_max_and_total);
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = in.get();
  a.out = o.get();
  a.decode_max_and_total = d.get();
  a.stream = stream.get();
  detail::check_call(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  fast_prefill_result r;
  r.passthrough = a.passthrough != 0;
  r.scalars = detail::scalars_of(*o.get());
  return r;
}
/** The results of the one-call fast prefill. On passthrough the metadata is the input's:
 * query_start_loc is a copy of the input's and scalars are its.
 * Since: 1.1
 * See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md. */
template <class Out = int64_t>
struct fast_prefill_metadata {
  bool passthrough = false; /**< the metadata is the input's (vLLM's early return) */
  std::vector<Out> query_start_loc; /**< [num_reqs + 1] decode query_start_loc */
  metadata_scalars scalars;         /**< max_query_len, num_actual_tokens of the decode batch */
};
/** One-call, on host metadata. Calls: cattn_make_kv_sharing_fast_prefill_common_attn_metadata.
 * Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
fast_prefill_metadata<Out> make_kv_sharing_fast_prefill_common_attn_metadata(
    const attn_metadata& metadata) {
  const char* fn = "cattn::make_kv_sharing_fast_prefill_common_attn_metadata";
  detail::require_host(metadata.query_start_loc, fn, "metadata.query_start_loc");
  fast_prefill_metadata<Out> r;
  r.query_start_loc.resize(detail::to_size(metadata.query_start_loc.numel(), fn));
  const fast_prefill_result f =
      make_kv_sharing_fast_prefill_common_attn_metadata(metadata, r.query_start_loc);
  r.passthrough = f.passthrough;
  r.scalars = f.scalars;
  if (r.passthrough)
    r.query_start_loc =
        detail::read_all<Out>(metadata.query_start_loc, fn, "metadata.query_start_loc");
  return r;
}

/** @} */

/* ============================================================================================
 * Local-attention virtual batches (make_local_attention_virtual_batches)
 * ========================================================================================== */
/** @defgroup group_cpp_local_attention Local-attention virtual batches
 * @ingroup group_cpp
 * Chunked local attention's virtual batches: make_local_attention_virtual_batches, the plan owner
 * local_attention_plan, and the capturable variant.
 * @{ */

/** A plan's sizes: virtual batches V and pages per virtual batch P. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
struct local_attention_plan_shape {
  int64_t virtual_batches = 0; /**< V */
  int64_t pages = 0;           /**< P: pages per virtual batch */
};
/** What cattn_make_local_attention_virtual_batches_size reports. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
struct local_attention_size {
  int64_t virtual_batches = 0; /**< V */
  int64_t pages = 0;           /**< P: pages per virtual batch */
  size_t plan_bytes = 0;       /**< the most host memory the plan takes */
};
/** The tensors cattn_local_attention_plan_fill writes: the four host mirrors and block table
 * are required, the device copies and seq_lens_cpu_upper_bound optional. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
struct local_attention_outputs {
  ///@{
  /** The virtual batches' metadata tensors of the same names (cattn_common_attn_metadata_t's
   * fields): [V + 1], [V], [V], [V, P], and the optional device copies and upper bound. */
  index_view query_start_loc_cpu, seq_lens_cpu, num_computed_tokens_cpu, block_table_tensor,
      query_start_loc, seq_lens, seq_lens_cpu_upper_bound;
  ///@}
};

namespace detail {
inline cattn_local_attention_args_t local_attention_args(cattn_common_attn_metadata_t* md,
                                                         int64_t attn_chunk_size,
                                                         int64_t block_size,
                                                         int64_t max_virtual_batches) {
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  a.attn_chunk_size = attn_chunk_size;
  a.block_size = block_size;
  a.metadata = md;
  a.max_virtual_batches = max_virtual_batches;
  return a;
}
}  // namespace detail

/** What the plan would hold, without allocating. Calls:
 * cattn_make_local_attention_virtual_batches_size. Throws: error. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
inline local_attention_size make_local_attention_virtual_batches_size(
    const attn_metadata& metadata, int64_t attn_chunk_size, int64_t block_size,
    int64_t max_virtual_batches = 0) {
  detail::raw_metadata md(metadata);
  const cattn_local_attention_args_t a =
      detail::local_attention_args(md.get(), attn_chunk_size, block_size, max_virtual_batches);
  local_attention_size s;
  detail::check_call(cattn_make_local_attention_virtual_batches_size(&a, &s.virtual_batches,
                                                                     &s.pages, &s.plan_bytes));
  return s;
}

/** Owns a cattn_local_attention_plan_t: the virtual batches and what make_block_table
 * needs. Move-only; destroyed with cattn_local_attention_plan_destroy. A default-constructed
 * plan holds nothing. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
class local_attention_plan {
 public:
  local_attention_plan() noexcept = default;
  /** Plans the virtual batches of host mirrors metadata.query_start_loc_cpu and seq_lens_cpu
   * (with block_table_tensor's columns and num_actual_tokens). Calls:
   * cattn_make_local_attention_virtual_batches. Allocates: the plan (at most what the size
   * query reports). Throws: error. */
  local_attention_plan(const attn_metadata& metadata, int64_t attn_chunk_size, int64_t block_size,
                       int64_t max_virtual_batches = 0) {
    detail::raw_metadata md(metadata);
    cattn_local_attention_args_t a =
        detail::local_attention_args(md.get(), attn_chunk_size, block_size, max_virtual_batches);
    detail::check_call(cattn_make_local_attention_virtual_batches(&a));
    h_.reset(a.plan);
  }
  /** Takes ownership of a plan made by the C call. Throws nothing. */
  static local_attention_plan adopt(cattn_local_attention_plan_t* raw) noexcept {
    local_attention_plan p;
    p.h_.reset(raw);
    return p;
  }
  /** The C handle, still owned here; nullptr when this owner holds none. */
  cattn_local_attention_plan_t* get() const noexcept { return h_.get(); }
  /** Gives up ownership: returns the C handle, which the caller then destroys. */
  cattn_local_attention_plan_t* release() noexcept { return h_.release(); }
  /** Whether a plan is held. */
  explicit operator bool() const noexcept { return h_.get() != nullptr; }
  /** Calls: cattn_local_attention_plan_get_shape. Throws: error. */
  local_attention_plan_shape shape() const {
    local_attention_plan_shape s;
    detail::check_call(cattn_local_attention_plan_get_shape(get(), &s.virtual_batches, &s.pages));
    return s;
  }
  /** Writes the virtual batches' metadata into `out` (host mirrors; the block table and device
   * copies on CUDA on `stream`); returns the scalars. Calls: cattn_local_attention_plan_fill.
   * Allocates: nothing. Throws: error. */
  metadata_scalars fill(const attn_metadata& metadata, const local_attention_outputs& out,
                        stream_ref stream = {}) const {
    detail::raw_metadata in(metadata), o;
    cattn_common_attn_metadata_t* r = o.get();
    r->query_start_loc_cpu = o.put(out.query_start_loc_cpu);
    r->seq_lens_cpu = o.put(out.seq_lens_cpu);
    r->num_computed_tokens_cpu = o.put(out.num_computed_tokens_cpu);
    r->block_table_tensor = o.put(out.block_table_tensor);
    r->query_start_loc = o.put(out.query_start_loc);
    r->seq_lens = o.put(out.seq_lens);
    r->seq_lens_cpu_upper_bound = o.put(out.seq_lens_cpu_upper_bound);
    cattn_local_attention_fill_args_t a = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
    a.metadata = in.get();
    a.out = r;
    a.stream = stream.get();
    detail::check_call(cattn_local_attention_plan_fill(get(), &a));
    return detail::scalars_of(*r);
  }
  /** Gathers a (new) block table into out [V, P] (host, or CUDA on `stream`). Calls:
   * cattn_local_attention_plan_make_block_table. Allocates: nothing. Throws: error. */
  void make_block_table(index_cview block_table, index_view out, stream_ref stream = {}) const {
    detail::tensor_arg b(block_table), o(out);
    detail::check_call(
        cattn_local_attention_plan_make_block_table(get(), b.get(), o.get(), stream.get()));
  }
  /** One-call: gathers a host block table into a new [V, P] array. Calls: get_shape, then
   * cattn_local_attention_plan_make_block_table. Allocates: the result. Throws: error. */
  template <class Out = int64_t, detail::enable_index_t<Out> = 0>
  host_tensor<Out> make_block_table(index_cview block_table) const {
    const local_attention_plan_shape s = shape();
    return detail::in_index_dtype<Out>(block_table.dtype(), {s.virtual_batches, s.pages},
                                       [&](index_view o) { make_block_table(block_table, o); });
  }

 private:
  detail::unique_handle<detail::local_attention_plan_traits> h_;
};

/** The plan, under vLLM's name. Calls: cattn_make_local_attention_virtual_batches.
 * Allocates: the plan. Throws: error. Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
inline local_attention_plan make_local_attention_virtual_batches(const attn_metadata& metadata,
                                                                 int64_t attn_chunk_size,
                                                                 int64_t block_size,
                                                                 int64_t max_virtual_batches = 0) {
  return local_attention_plan(metadata, attn_chunk_size, block_size, max_virtual_batches);
}

/** The results of the one-call virtual batches, and the plan that re-gathers other block
 * tables (move-only, as the plan). Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
template <class Out = int64_t>
struct local_attention_virtual_batches {
  std::vector<Out> query_start_loc; /**< [V + 1] cu_seqlens_q */
  std::vector<Out> seq_lens;        /**< [V] key lengths */
  std::vector<Out> num_computed_tokens; /**< [V] */
  host_tensor<Out> block_table;     /**< [V, P] gathered */
  metadata_scalars scalars;         /**< num_reqs = V, max_query_len, max_seq_len, ... */
  local_attention_plan plan;        /**< the plan, to fill again for another block table */
};
/** One-call, from host query_start_loc_cpu [B + 1], seq_lens_cpu [B] and block_table [B, cols],
 * the parameters in cattn_local_attention_args_t's order (the sizes, then the metadata's
 * tensors). Calls: cattn_make_local_attention_virtual_batches, get_shape,
 * cattn_local_attention_plan_fill. Allocates: the plan and the results. Throws: error.
 * Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
local_attention_virtual_batches<Out> make_local_attention_virtual_batches(
    int64_t attn_chunk_size, int64_t block_size, index_cview query_start_loc_cpu,
    index_cview seq_lens_cpu, index_cview block_table) {
  const char* fn = "cattn::make_local_attention_virtual_batches";
  detail::require_host(query_start_loc_cpu, fn, "query_start_loc_cpu");
  attn_metadata md;
  md.query_start_loc_cpu = query_start_loc_cpu;
  md.seq_lens_cpu = seq_lens_cpu;
  md.block_table_tensor = block_table;
  md.num_reqs = seq_lens_cpu.numel();
  const int64_t entries = query_start_loc_cpu.numel();
  if (query_start_loc_cpu.ndim() == 1 && entries > 0)
    md.num_actual_tokens = detail::read_index(query_start_loc_cpu, entries - 1) -
                           detail::read_index(query_start_loc_cpu, 0);
  local_attention_virtual_batches<Out> r;
  r.plan = local_attention_plan(md, attn_chunk_size, block_size);
  const local_attention_plan_shape s = r.plan.shape();
  r.query_start_loc.resize(detail::to_size(s.virtual_batches + 1, fn));
  r.seq_lens.resize(detail::to_size(s.virtual_batches, fn));
  r.num_computed_tokens.resize(detail::to_size(s.virtual_batches, fn));
  auto fill = [&](index_view table) {
    local_attention_outputs o;
    o.query_start_loc_cpu = r.query_start_loc;
    o.seq_lens_cpu = r.seq_lens;
    o.num_computed_tokens_cpu = r.num_computed_tokens;
    o.block_table_tensor = table;
    r.scalars = r.plan.fill(md, o);
  };
  r.block_table =
      detail::in_index_dtype<Out>(block_table.dtype(), {s.virtual_batches, s.pages}, fill);
  return r;
}

/** The outputs of cattn_make_local_attention_virtual_batches_capturable (capacity = their length).
 * Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
struct local_attention_capturable_outputs {
  ///@{
  /** As cattn_local_attention_capturable_args_t's fields of the same names: [capacity + 1],
   * [capacity], [capacity] (optional), [capacity, C / block_size] (optional), and counts [3]
   * (V, max_query_len, max_seq_len; optional). */
  index_view query_start_loc_out, seq_lens_out, num_computed_tokens_out, block_table_out, counts;
  ///@}
};
/** Virtual batches computed on the device, one kernel on `stream`, replayable. Calls:
 * cattn_make_local_attention_virtual_batches_capturable. Allocates: nothing. Throws: error.
 * Since: 1.1
 * See docs/api/make_local_attention_virtual_batches.md. */
inline void make_local_attention_virtual_batches_capturable(
    int64_t attn_chunk_size, int64_t block_size, index_cview query_start_loc, index_cview seq_lens,
    index_cview block_table, const local_attention_capturable_outputs& out,
    stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), s(seq_lens), b(block_table), qo(out.query_start_loc_out),
      so(out.seq_lens_out), co(out.num_computed_tokens_out), bo(out.block_table_out),
      n(out.counts);
  cattn_local_attention_capturable_args_t a = CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_INIT;
  a.attn_chunk_size = attn_chunk_size;
  a.block_size = block_size;
  a.query_start_loc = q.get();
  a.seq_lens = s.get();
  a.block_table = b.get();
  a.query_start_loc_out = qo.get();
  a.seq_lens_out = so.get();
  a.num_computed_tokens_out = co.get();
  a.block_table_out = bo.get();
  a.counts = n.get();
  a.stream = stream.get();
  detail::check_call(cattn_make_local_attention_virtual_batches_capturable(&a));
}

/** @} */

/* ============================================================================================
 * Mamba block table (mamba_get_block_table_tensor)
 * ========================================================================================== */
/** @defgroup group_cpp_mamba Mamba block table
 * @ingroup group_cpp
 * The block-table columns Mamba layers read: mamba_get_block_table_tensor.
 * @{ */

/** The Mamba block-table columns into `out` (host, or one kernel on `stream`), the parameters
 * in cattn_mamba_block_table_args_t's order. seq_lens may be absent outside ALIGN. Calls:
 * cattn_mamba_get_block_table_tensor. Allocates: nothing. Throws: error. Since: 1.1
 * See docs/api/mamba_get_block_table_tensor.md. */
inline void mamba_get_block_table_tensor(index_cview block_table, index_cview seq_lens,
                                         int64_t block_size, int64_t num_speculative_blocks,
                                         cattn_mamba_cache_mode_t mode, index_view out,
                                         stream_ref stream = {}) {
  detail::tensor_arg b(block_table), s(seq_lens), o(out);
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = b.get();
  a.seq_lens = s.get();
  a.block_size = block_size;
  a.num_speculative_blocks = num_speculative_blocks;
  a.mamba_cache_mode = static_cast<int32_t>(mode);
  a.out = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_mamba_get_block_table_tensor(&a));
}
/** One-call, on a host block_table [B, M]: [B, 1 + num_speculative_blocks] for ALIGN, a copy
 * [B, M] otherwise (where block_size and num_speculative_blocks are unused: pass 0). Calls:
 * cattn_mamba_get_block_table_tensor. Allocates: the result. Throws: error (a block_table that
 * is not 2-D: this layer's). Since: 1.1
 * See docs/api/mamba_get_block_table_tensor.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
host_tensor<Out> mamba_get_block_table_tensor(index_cview block_table, index_cview seq_lens,
                                              int64_t block_size, int64_t num_speculative_blocks,
                                              cattn_mamba_cache_mode_t mode) {
  if (block_table.ndim() != 2)
    detail::fail("cattn::mamba_get_block_table_tensor: block_table is not 2-D (got " +
                 std::to_string(block_table.ndim()) + " dimensions)");
  const int64_t cols = mode == CATTN_MAMBA_CACHE_MODE_ALIGN
                           ? 1 + std::max<int64_t>(num_speculative_blocks, 0)
                           : block_table.shape(1);
  host_tensor<Out> out({block_table.shape(0), cols});
  mamba_get_block_table_tensor(block_table, seq_lens, block_size, num_speculative_blocks, mode,
                               out);
  return out;
}

/** @} */

/* ============================================================================================
 * Per-layer parameters (get_per_layer_parameters, infer_global_hyperparameters)
 * ========================================================================================== */
/** @defgroup group_cpp_per_layer Per-layer parameters
 * @ingroup group_cpp
 * Attention hyperparameters per layer and for the model: get_per_layer_parameters,
 * infer_global_hyperparameters.
 * @{ */

/** What vLLM reads from one attention layer's impl; nullopt is Python's None. Since: 1.1
 * See docs/api/get_per_layer_parameters.md. */
struct attention_layer {
  std::optional<std::pair<int64_t, int64_t>> sliding_window; /**< (left, right) */
  std::optional<double> logits_soft_cap;                      /**< impl.logits_soft_cap */
  double scale = 1.0;                                         /**< impl.scale */
  bool has_sinks = false;                                     /**< impl.sinks is not None */
};
/** vLLM's PerLayerParameters; a missing soft cap is nullopt (not equal to 0.0). Since: 1.1
 * See docs/api/get_per_layer_parameters.md. */
struct per_layer_parameters {
  int64_t window_left = -1;              /**< -1 = no sliding window */
  std::optional<double> logits_soft_cap; /**< nullopt = None */
  double sm_scale = 1.0;                 /**< the layer's softmax scale */
  bool has_sinks = false;                /**< the layer has attention sinks */
};
/** The global parameters and vLLM's two flags. Since: 1.1
 * See docs/api/get_per_layer_parameters.md. */
struct global_hyperparameters {
  int64_t window_left = -1;              /**< the first layer's window_left */
  std::optional<double> logits_soft_cap; /**< the first layer's logits_soft_cap */
  double sm_scale = 1.0;                 /**< the first layer's sm_scale */
  bool has_sinks = false;                /**< the first layer's has_sinks */
  bool has_same_window_lefts = false;    /**< every layer's window_left equals the first's */
  bool has_same_all_params = false;      /**< every layer equals the first in all four fields */
};

namespace detail {
inline cattn_per_layer_parameters_t to_c(const per_layer_parameters& p) noexcept {
  cattn_per_layer_parameters_t c = CATTN_PER_LAYER_PARAMETERS_INIT;
  c.window_left = p.window_left;
  c.has_logits_soft_cap = p.logits_soft_cap ? 1 : 0;
  c.logits_soft_cap = p.logits_soft_cap.value_or(0.0);
  c.sm_scale = p.sm_scale;
  c.has_sinks = p.has_sinks ? 1 : 0;
  return c;
}
}  // namespace detail

/** Per-layer parameters of each layer. Calls: cattn_get_per_layer_parameters. Allocates: the
 * result and the C arrays. Throws: error. Since: 1.1
 * See docs/api/get_per_layer_parameters.md. */
inline std::vector<per_layer_parameters> get_per_layer_parameters(
    const std::vector<attention_layer>& layers) {
  std::vector<cattn_attention_layer_desc_t> in(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    cattn_attention_layer_desc_t d = CATTN_ATTENTION_LAYER_DESC_INIT;
    d.has_sliding_window = layers[i].sliding_window ? 1 : 0;
    if (layers[i].sliding_window) {
      d.sliding_window_left = layers[i].sliding_window->first;
      d.sliding_window_right = layers[i].sliding_window->second;
    }
    d.has_logits_soft_cap = layers[i].logits_soft_cap ? 1 : 0;
    d.logits_soft_cap = layers[i].logits_soft_cap.value_or(0.0);
    d.scale = layers[i].scale;
    d.has_sinks = layers[i].has_sinks ? 1 : 0;
    in[i] = d;
  }
  const cattn_per_layer_parameters_t init = CATTN_PER_LAYER_PARAMETERS_INIT;
  std::vector<cattn_per_layer_parameters_t> out(layers.size(), init);
  detail::check_call(cattn_get_per_layer_parameters(in.empty() ? nullptr : in.data(), in.size(),
                                       out.empty() ? nullptr : out.data()));
  std::vector<per_layer_parameters> r(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    r[i].window_left = out[i].window_left;
    if (out[i].has_logits_soft_cap) r[i].logits_soft_cap = out[i].logits_soft_cap;
    r[i].sm_scale = out[i].sm_scale;
    r[i].has_sinks = out[i].has_sinks != 0;
  }
  return r;
}
/** The first layer's parameters and whether every layer shares them. Calls:
 * cattn_infer_global_hyperparameters. Allocates: the C array. Throws: error. Since: 1.1
 * See docs/api/get_per_layer_parameters.md. */
inline global_hyperparameters infer_global_hyperparameters(
    const std::vector<per_layer_parameters>& params) {
  std::vector<cattn_per_layer_parameters_t> in;
  in.reserve(params.size());
  for (const auto& p : params) in.push_back(detail::to_c(p));
  cattn_global_hyperparameters_t g = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  detail::check_call(
      cattn_infer_global_hyperparameters(in.empty() ? nullptr : in.data(), in.size(), &g));
  global_hyperparameters r;
  r.window_left = g.window_left;
  if (g.has_logits_soft_cap) r.logits_soft_cap = g.logits_soft_cap;
  r.sm_scale = g.sm_scale;
  r.has_sinks = g.has_sinks != 0;
  r.has_same_window_lefts = g.has_same_window_lefts != 0;
  r.has_same_all_params = g.has_same_all_params != 0;
  return r;
}

/** @} */

/* ============================================================================================
 * Step inputs (prepare_pos_seq_lens, gather_block_tables, compute_slot_mappings,
 * combine_sampled_and_draft_tokens, step_batch_check)
 * ========================================================================================== */
/** @defgroup group_cpp_step_inputs Step inputs (1.2)
 * @ingroup group_cpp
 * A step's attention inputs from the scheduler's output: prepare_pos_seq_lens, gather_block_tables,
 * compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check.
 * @{ */

// The five calls take their arguments in the C struct's order, outputs in a struct where there
// are several, the stream last. num_reqs, the live rows of a padded batch, is a [1] tensor (an
// absent view: every row is live). The one-call helpers take host inputs in the C struct's
// order too (as the Rust and Go helpers do: scripts/check_helper_order.py), num_reqs as a
// number (std::nullopt: every row is live), and return outputs sized to the live batch by
// step_inputs_size, the library's count.

namespace detail {

// The C initialisers: the one source of the defaults below.
inline constexpr cattn_compute_slot_mappings_args_t slot_mappings_init =
    CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
inline constexpr cattn_combine_sampled_and_draft_tokens_args_t combine_init =
    CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
inline constexpr cattn_step_inputs_size_args_t step_inputs_size_init =
    CATTN_STEP_INPUTS_SIZE_ARGS_INIT;

// A one-call helper's num_reqs: the [1] host tensor the C calls read (absent for nullopt).
class live_rows {
 public:
  explicit live_rows(std::optional<int64_t> num_reqs)
      : value_(num_reqs.value_or(0)), given_(num_reqs.has_value()) {}
  live_rows(const live_rows&) = delete;
  live_rows& operator=(const live_rows&) = delete;
  index_cview view() const {
    return given_ ? index_cview(tensor_view<const int64_t>(&value_, {1})) : index_cview();
  }

 private:
  int64_t value_;
  bool given_;
};

}  // namespace detail

/** The entries a step's per-token and per-logit outputs need, as cattn_step_inputs_size counts
 * them. Since: 1.2
 * See docs/api/step_inputs.md. */
struct step_inputs_totals {
  int64_t num_tokens = 0; /**< the live rows' tokens: positions, slot mappings */
  int64_t num_logits = 0; /**< their logits: logits_indices and the expanded map */
};

namespace detail {

// cattn_step_inputs_size, its errors in the name `as` (a one-call helper's; nullptr: the
// wrapper's own).
inline step_inputs_totals step_inputs_size(const char* as, int64_t num_new_sampled_tokens,
                                           index_cview num_scheduled_tokens,
                                           index_cview query_start_loc, index_cview num_reqs,
                                           index_cview num_draft_tokens) {
  tensor_arg s(num_scheduled_tokens), q(query_start_loc), n(num_reqs), d(num_draft_tokens);
  cattn_step_inputs_size_args_t a = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  a.num_new_sampled_tokens = num_new_sampled_tokens;
  a.num_scheduled_tokens = s.get();
  a.query_start_loc = q.get();
  a.num_reqs = n.get();
  a.num_draft_tokens = d.get();
  check_call(cattn_step_inputs_size(&a), as);
  return {a.num_tokens, a.num_logits};
}

}  // namespace detail

/** The live rows' tokens and logits of a host batch given as its scheduled counts
 * (num_scheduled_tokens [B], query_start_loc absent) or its query_start_loc [B + 1]
 * (num_scheduled_tokens absent), num_reqs [1] (absent: B) and num_draft_tokens [B] (absent:
 * none): the lengths the per-token and per-logit outputs need. Calls: cattn_step_inputs_size.
 * Allocates: nothing. Throws: error. Since: 1.2
 * See docs/api/step_inputs.md. */
inline step_inputs_totals step_inputs_size(int64_t num_new_sampled_tokens,
                                           index_cview num_scheduled_tokens,
                                           index_cview query_start_loc,
                                           index_cview num_reqs = {},
                                           index_cview num_draft_tokens = {}) {
  return detail::step_inputs_size(nullptr, num_new_sampled_tokens, num_scheduled_tokens,
                                  query_start_loc, num_reqs, num_draft_tokens);
}

/** Where prepare_pos_seq_lens writes; absent = NULL (positions and batch_num_computed_tokens
 * may be). Since: 1.2
 * See docs/api/step_inputs.md. */
struct pos_seq_lens_outputs {
  index_view query_start_loc;           /**< [B + 1] */
  index_view seq_lens;                  /**< [B] */
  index_view positions;                 /**< [T_cap], at least the live total */
  index_view batch_num_computed_tokens; /**< [B] */
};
/** query_start_loc, seq_lens, positions and the batch's num_computed_tokens of a step from the
 * scheduler's counts (host, or one kernel on `stream`, capturable); padded rows per the padding
 * contract. Calls: cattn_prepare_pos_seq_lens. Allocates: nothing. Throws: error. Since: 1.2
 * See docs/api/step_inputs.md. */
inline void prepare_pos_seq_lens(index_cview num_scheduled_tokens, index_cview idx_mapping,
                                 index_cview num_computed_tokens, index_cview num_reqs,
                                 const pos_seq_lens_outputs& out, stream_ref stream = {}) {
  detail::tensor_arg s(num_scheduled_tokens), i(idx_mapping), c(num_computed_tokens),
      n(num_reqs), q(out.query_start_loc), l(out.seq_lens), p(out.positions),
      b(out.batch_num_computed_tokens);
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = s.get();
  a.idx_mapping = i.get();
  a.num_computed_tokens = c.get();
  a.num_reqs = n.get();
  a.query_start_loc = q.get();
  a.seq_lens = l.get();
  a.positions = p.get();
  a.batch_num_computed_tokens = b.get();
  a.stream = stream.get();
  detail::check_call(cattn_prepare_pos_seq_lens(&a));
}
/** The one-call results of prepare_pos_seq_lens. Since: 1.2
 * See docs/api/step_inputs.md. */
template <class Out = int64_t>
struct pos_seq_lens {
  std::vector<Out> query_start_loc;           /**< [B + 1] */
  std::vector<Out> seq_lens;                  /**< [B] */
  std::vector<Out> positions;                 /**< [the live total] */
  std::vector<Out> batch_num_computed_tokens; /**< [B] */
};
/** One-call, on host counts: B = num_scheduled_tokens' length, positions as long as the live
 * total (step_inputs_size's num_tokens). Calls: cattn_step_inputs_size,
 * cattn_prepare_pos_seq_lens. Allocates: the results. Throws: error (a num_scheduled_tokens that
 * is not 1-D or not host memory: this layer's). Since: 1.2
 * See docs/api/step_inputs.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
pos_seq_lens<Out> prepare_pos_seq_lens(index_cview num_scheduled_tokens, index_cview idx_mapping,
                                       index_cview num_computed_tokens,
                                       std::optional<int64_t> num_reqs = std::nullopt) {
  const char* fn = "cattn::prepare_pos_seq_lens";
  detail::require_host(num_scheduled_tokens, fn, "num_scheduled_tokens");
  detail::require_1d(num_scheduled_tokens, fn, "num_scheduled_tokens");
  const detail::live_rows live(num_reqs);
  // An absent num_scheduled_tokens is the C call's to refuse, in its own words.
  const int64_t tokens =
      num_scheduled_tokens.present()
          ? detail::step_inputs_size("prepare_pos_seq_lens",
                                     detail::step_inputs_size_init.num_new_sampled_tokens,
                                     num_scheduled_tokens, {}, live.view(), {})
                .num_tokens
          : 0;
  const size_t b = detail::to_size(num_scheduled_tokens.numel(), fn);
  pos_seq_lens<Out> r;
  r.query_start_loc.resize(b + 1);
  r.seq_lens.resize(b);
  r.positions.resize(detail::to_size(tokens, fn));
  r.batch_num_computed_tokens.resize(b);
  prepare_pos_seq_lens(num_scheduled_tokens, idx_mapping, num_computed_tokens, live.view(),
                       {r.query_start_loc, r.seq_lens, r.positions, r.batch_num_computed_tokens});
  return r;
}

/** Each live row's persistent block-table row into `out` [B, W] (host, or one kernel on
 * `stream`, capturable): num_blocks (absent: W) entries of each, the rest of a live row left as
 * it is, padded rows 0. Calls: cattn_gather_block_tables. Allocates: nothing. Throws: error.
 * Since: 1.2
 * See docs/api/step_inputs.md. */
inline void gather_block_tables(index_cview idx_mapping, index_cview num_reqs,
                                index_cview block_table, index_cview num_blocks, index_view out,
                                stream_ref stream = {}) {
  detail::tensor_arg i(idx_mapping), n(num_reqs), t(block_table), k(num_blocks), o(out);
  cattn_gather_block_tables_args_t a = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  a.idx_mapping = i.get();
  a.num_reqs = n.get();
  a.block_table = t.get();
  a.num_blocks = k.get();
  a.out = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_gather_block_tables(&a));
}
/** One-call, on a host block_table [R, W]: the batch's table [B, W], B = idx_mapping's length,
 * starting from zeros (so a live row's entries past its num_blocks are 0); num_reqs follows
 * idx_mapping, as in the C struct (std::nullopt: every row is live). Calls:
 * cattn_gather_block_tables. Allocates: the result. Throws: error (a block_table that is not
 * 2-D: this layer's). Since: 1.2
 * See docs/api/step_inputs.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
host_tensor<Out> gather_block_tables(index_cview idx_mapping, std::optional<int64_t> num_reqs,
                                     index_cview block_table, index_cview num_blocks = {}) {
  if (block_table.ndim() != 2)
    detail::fail("cattn::gather_block_tables: block_table is not 2-D (got " +
                 std::to_string(block_table.ndim()) + " dimensions)");
  const detail::live_rows live(num_reqs);
  host_tensor<Out> out({idx_mapping.numel(), block_table.shape(1)});
  gather_block_tables(idx_mapping, live.view(), block_table, num_blocks, out);
  return out;
}

/** One KV-cache group's slot-mapping parameters; the defaults are
 * CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT's (MRV2, one DCP rank; the block sizes must be set).
 * Since: 1.2
 * See docs/api/step_inputs.md. */
struct slot_mapping_params {
  /** Which of vLLM's slot-mapping contracts (MRV2 or V1). */
  cattn_slot_mapping_contract_t contract =
      static_cast<cattn_slot_mapping_contract_t>(detail::slot_mappings_init.contract);
  /** The group's block size, at least 1. */
  int64_t block_size = detail::slot_mappings_init.block_size;
  /** Divides block_size; the block table's block unit. */
  int64_t kernel_block_size = detail::slot_mappings_init.kernel_block_size;
  /** The DCP world, at least 1. */
  int64_t dcp_size = detail::slot_mappings_init.dcp_size;
  /** This rank, in [0, dcp_size). */
  int64_t dcp_rank = detail::slot_mappings_init.dcp_rank;
  /** At least 1; divides the contract's block. */
  int64_t dcp_kv_cache_interleave_size = detail::slot_mappings_init.dcp_kv_cache_interleave_size;
};
/** The KV-cache slot of every live token of one group into slot_mapping [T_cap] (int64; -1 past
 * the live total and for other DCP ranks' tokens), host, or one kernel on `stream`,
 * capturable. idx_mapping is absent with CATTN_SLOT_MAPPING_V1. Calls:
 * cattn_compute_slot_mappings. Allocates: nothing. Throws: error. Since: 1.2
 * See docs/api/step_inputs.md. */
inline void compute_slot_mappings(const slot_mapping_params& params, index_cview query_start_loc,
                                  index_cview num_reqs, index_cview positions,
                                  index_cview idx_mapping, index_cview block_table,
                                  index_view slot_mapping, stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), n(num_reqs), p(positions), i(idx_mapping),
      t(block_table), o(slot_mapping);
  cattn_compute_slot_mappings_args_t a = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  a.contract = static_cast<int32_t>(params.contract);
  a.block_size = params.block_size;
  a.kernel_block_size = params.kernel_block_size;
  a.dcp_size = params.dcp_size;
  a.dcp_rank = params.dcp_rank;
  a.dcp_kv_cache_interleave_size = params.dcp_kv_cache_interleave_size;
  a.query_start_loc = q.get();
  a.num_reqs = n.get();
  a.positions = p.get();
  a.idx_mapping = i.get();
  a.block_table = t.get();
  a.slot_mapping = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_compute_slot_mappings(&a));
}
/** One-call, on a host batch: the slot of each of the live total's tokens
 * (step_inputs_size's num_tokens). Calls: cattn_step_inputs_size, cattn_compute_slot_mappings.
 * Allocates: the result. Throws: error (a query_start_loc that is not host memory: this
 * layer's). Since: 1.2
 * See docs/api/step_inputs.md. */
inline std::vector<int64_t> compute_slot_mappings(const slot_mapping_params& params,
                                                  index_cview query_start_loc,
                                                  std::optional<int64_t> num_reqs,
                                                  index_cview positions, index_cview idx_mapping,
                                                  index_cview block_table) {
  const char* fn = "cattn::compute_slot_mappings";
  detail::require_host(query_start_loc, fn, "query_start_loc");
  const detail::live_rows live(num_reqs);
  // An absent query_start_loc is the C call's to refuse, in its own words.
  const int64_t tokens =
      query_start_loc.present()
          ? detail::step_inputs_size("compute_slot_mappings",
                                     detail::step_inputs_size_init.num_new_sampled_tokens, {},
                                     query_start_loc, live.view(), {})
                .num_tokens
          : 0;
  std::vector<int64_t> out(detail::to_size(tokens, fn));
  compute_slot_mappings(params, query_start_loc, live.view(), positions, idx_mapping, block_table,
                        out);
  return out;
}

/** Where combine_sampled_and_draft_tokens writes; absent = NULL (all but logits_indices may
 * be). Since: 1.2
 * See docs/api/step_inputs.md. */
struct logits_outputs {
  index_view logits_indices;       /**< [L_cap], at least the total logits */
  index_view cu_num_logits;        /**< [B + 1] */
  index_view expanded_idx_mapping; /**< [L_cap]; needs idx_mapping */
  index_view expanded_local_pos;   /**< [L_cap] */
  /** [T] token ids, in place: each decode row's sampled and draft tokens go in; needs the four
   * token inputs of combine_options and idx_mapping. */
  index_view input_ids;
};
/** The rest of combine_sampled_and_draft_tokens' arguments, at
 * CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT's defaults: the token combination's four
 * inputs go with out.input_ids (all four, or none). Since: 1.2
 * See docs/api/step_inputs.md. */
struct combine_options {
  /** Logits per row besides its drafts: 0 or 1. */
  int64_t num_new_sampled_tokens = detail::combine_init.num_new_sampled_tokens;
  index_cview seq_lens;            /**< [B] */
  index_cview prefill_len;         /**< [R] prompt length per persistent row */
  index_cview last_sampled_tokens; /**< [R] */
  index_cview draft_tokens;        /**< [R, S] */
};
/** A step's logits: each live row's last `num_new_sampled_tokens + drafts` tokens, their
 * running count, and (optional) each logit's persistent row and place, 0 past the total; with
 * out.input_ids, the sampled and draft tokens put into it (host, or one kernel on `stream`,
 * capturable). Calls: cattn_combine_sampled_and_draft_tokens. Allocates: nothing.
 * Throws: error. Since: 1.2
 * See docs/api/step_inputs.md. */
inline void combine_sampled_and_draft_tokens(index_cview query_start_loc, index_cview num_reqs,
                                             index_cview num_draft_tokens,
                                             index_cview idx_mapping, const logits_outputs& out,
                                             const combine_options& options = {},
                                             stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), n(num_reqs), d(num_draft_tokens), i(idx_mapping),
      s(options.seq_lens), p(options.prefill_len), t(options.last_sampled_tokens),
      k(options.draft_tokens), l(out.logits_indices), c(out.cu_num_logits),
      e(out.expanded_idx_mapping), x(out.expanded_local_pos), ids(out.input_ids);
  cattn_combine_sampled_and_draft_tokens_args_t a =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  a.num_new_sampled_tokens = options.num_new_sampled_tokens;
  a.query_start_loc = q.get();
  a.num_reqs = n.get();
  a.num_draft_tokens = d.get();
  a.idx_mapping = i.get();
  a.seq_lens = s.get();
  a.prefill_len = p.get();
  a.last_sampled_tokens = t.get();
  a.draft_tokens = k.get();
  a.logits_indices = l.get();
  a.cu_num_logits = c.get();
  a.expanded_idx_mapping = e.get();
  a.expanded_local_pos = x.get();
  a.input_ids = ids.get();
  a.stream = stream.get();
  detail::check_call(cattn_combine_sampled_and_draft_tokens(&a));
}
/** The one-call results of combine_sampled_and_draft_tokens: L = the total logits. Since: 1.2
 * See docs/api/step_inputs.md. */
template <class Out = int64_t>
struct step_logits {
  std::vector<Out> logits_indices;       /**< [L] */
  std::vector<Out> cu_num_logits;        /**< [B + 1] */
  std::vector<Out> expanded_idx_mapping; /**< [L]; empty without idx_mapping */
  std::vector<Out> expanded_local_pos;   /**< [L] */
};
/** One-call, on a host batch (no token combination): B = query_start_loc's length - 1, the
 * logit outputs as long as the total logits (step_inputs_size's num_logits).
 * num_new_sampled_tokens comes first, as in the C struct (vLLM's and the C initialiser's value
 * is 1). Calls:
 * cattn_step_inputs_size, cattn_combine_sampled_and_draft_tokens. Allocates: the results.
 * Throws: error (a query_start_loc or num_draft_tokens that is not host memory: this layer's).
 * Since: 1.2
 * See docs/api/step_inputs.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
step_logits<Out> combine_sampled_and_draft_tokens(int64_t num_new_sampled_tokens,
                                                  index_cview query_start_loc,
                                                  std::optional<int64_t> num_reqs = std::nullopt,
                                                  index_cview num_draft_tokens = {},
                                                  index_cview idx_mapping = {}) {
  const char* fn = "cattn::combine_sampled_and_draft_tokens";
  detail::require_host(query_start_loc, fn, "query_start_loc");
  detail::require_host(num_draft_tokens, fn, "num_draft_tokens");
  const detail::live_rows live(num_reqs);
  // An absent query_start_loc is the C call's to refuse, in its own words.
  const int64_t logits =
      query_start_loc.present()
          ? detail::step_inputs_size("combine_sampled_and_draft_tokens", num_new_sampled_tokens,
                                     {}, query_start_loc, live.view(), num_draft_tokens)
                .num_logits
          : 0;
  const size_t n = detail::to_size(logits, fn);
  step_logits<Out> r;
  r.logits_indices.resize(n);
  r.cu_num_logits.resize(detail::to_size(std::max<int64_t>(query_start_loc.numel(), 1), fn));
  if (idx_mapping.present()) r.expanded_idx_mapping.resize(n);
  r.expanded_local_pos.resize(n);
  logits_outputs out;
  out.logits_indices = r.logits_indices;
  out.cu_num_logits = r.cu_num_logits;
  if (idx_mapping.present()) out.expanded_idx_mapping = r.expanded_idx_mapping;
  out.expanded_local_pos = r.expanded_local_pos;
  combine_options options;
  options.num_new_sampled_tokens = num_new_sampled_tokens;
  combine_sampled_and_draft_tokens(query_start_loc, live.view(), num_draft_tokens, idx_mapping,
                                   out, options);
  return r;
}

/** What step_batch_check verifies; absent = NULL (all but query_start_loc may be). Since: 1.2
 * See docs/api/step_inputs.md. */
struct step_check_inputs {
  index_cview query_start_loc; /**< [B + 1] */
  index_cview num_reqs;        /**< [1]; absent: B */
  index_cview seq_lens;        /**< [B] */
  std::array<index_cview, CATTN_MAX_KV_GROUPS> block_tables{};  /**< [B, W_g] per group */
  std::array<index_cview, CATTN_MAX_KV_GROUPS> slot_mappings{}; /**< [T] per group */
};
/** cattn_step_batch_check's status: the first defect's field (a CATTN_STEP_CHECK_* value), its
 * index (a row, or a token for slot mappings) and its group. Since: 1.2
 * See docs/api/step_inputs.md. */
struct step_check_report {
  ///@{
  /** The defect's field (a CATTN_STEP_CHECK_* value), its index (a row, or a token for slot
   * mappings) and its KV-cache group; all 0 when the batch keeps the contract. */
  int64_t field = CATTN_STEP_CHECK_OK, index = 0, group = 0;
  ///@}
  /** Whether the batch keeps the padding contract ({0, 0, 0}). */
  bool ok() const noexcept { return field == CATTN_STEP_CHECK_OK && index == 0 && group == 0; }
};
/** Verifies a batch against the padding contract into status [3] (host; or one kernel on
 * `stream`, capturable: read status once the stream is done). The call's return reports its
 * arguments, never the batch's values. Calls: cattn_step_batch_check. Allocates: nothing.
 * Throws: error. Since: 1.2
 * See docs/api/step_inputs.md. */
inline void step_batch_check(const step_check_inputs& batch, index_view status,
                             stream_ref stream = {}) {
  detail::tensor_arg q(batch.query_start_loc), n(batch.num_reqs), s(batch.seq_lens),
      st(status);
  detail::tensor_args<CATTN_MAX_KV_GROUPS> bt(batch.block_tables), sm(batch.slot_mappings);
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  a.query_start_loc = q.get();
  a.num_reqs = n.get();
  a.seq_lens = s.get();
  for (size_t g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    a.block_tables[g] = bt.get(g);
    a.slot_mappings[g] = sm.get(g);
  }
  a.status = st.get();
  a.stream = stream.get();
  detail::check_call(cattn_step_batch_check(&a));
}
/** One-call, on a host batch: the report. Calls: cattn_step_batch_check. Throws: error.
 * Since: 1.2
 * See docs/api/step_inputs.md. */
inline step_check_report step_batch_check(const step_check_inputs& batch) {
  std::array<int64_t, 3> status{};
  step_batch_check(batch, status);
  step_check_report r;
  r.field = status[0];
  r.index = status[1];
  r.group = status[2];
  return r;
}

/** @} */

/* ============================================================================================
 * Speculative decoding (eagle_step_update_slot_mapping_and_metadata,
 * eagle_prepare_inputs_padded, eagle_prepare_next_token_padded, compute_new_slot_mapping,
 * copy_and_expand_eagle_inputs, update_num_computed_tokens_for_batch_change)
 * ========================================================================================== */
/** @defgroup group_cpp_spec_decode Speculative decoding (1.2)
 * @ingroup group_cpp
 * EAGLE's per-step metadata: eagle_step_update_slot_mapping_and_metadata,
 * eagle_prepare_inputs_padded, eagle_prepare_next_token_padded, compute_new_slot_mapping,
 * copy_and_expand_eagle_inputs, update_num_computed_tokens_for_batch_change.
 * @{ */

// The six calls take their arguments in the C struct's order: the scalars first (in a params
// struct where there are several), outputs in a struct where there are several, the stream last.
// Flag tensors (masks) hold one byte per entry: any_cview / any_view of bool, uint8_t or int8_t
// (std::vector<bool> has no bytes to view: use std::vector<uint8_t>). The one-call helpers take
// host inputs and return outputs sized to the batch, zero-initialised where the call leaves an
// entry as it is.

namespace detail {

// The C initialisers: the one source of the defaults below.
inline constexpr cattn_eagle_step_update_slot_mapping_and_metadata_args_t eagle_step_init =
    CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
inline constexpr cattn_compute_new_slot_mapping_args_t new_slot_mapping_init =
    CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
inline constexpr cattn_copy_and_expand_eagle_inputs_args_t eagle_inputs_init =
    CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;

// a + b for a one-call helper's output length (both non-negative).
inline int64_t checked_add(int64_t a, int64_t b, const char* fn) {
  if (a < 0 || b < 0) fail(std::string(fn) + ": a negative size");
  if (a > std::numeric_limits<int64_t>::max() - b)
    fail(std::string(fn) + ": an output size overflows int64");
  return a + b;
}

}  // namespace detail

/** eagle_step_update_slot_mapping_and_metadata's parameters; the defaults are
 * CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT's (block_size and max_model_len
 * must be set). Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_step_params {
  int64_t block_size = detail::eagle_step_init.block_size;       /**< at least 1 */
  int64_t max_model_len = detail::eagle_step_init.max_model_len; /**< at least 1 */
  /** slot_mapping entries written, the batch plus CUDA-graph padding: 0 = B, else >= B. */
  int64_t input_batch_size = detail::eagle_step_init.input_batch_size;
};
/** Where eagle_step_update_slot_mapping_and_metadata writes. Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_step_outputs {
  index_view clamped_positions; /**< [>= B]; may be positions' very view */
  index_view slot_mapping;      /**< [>= input_batch_size] int64 */
};
/** One EAGLE drafting step: each row's next position clamped to max_model_len, its KV-cache
 * slot (-1 past max_model_len and for the padding rows up to params.input_batch_size), and
 * seq_lens [B] advanced in place (host, or one kernel on `stream`, capturable). positions is
 * [B] (M-RoPE: its row 0), block_table [B, W] and may be a strided view.
 * Calls: cattn_eagle_step_update_slot_mapping_and_metadata. Allocates: nothing.
 * Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
inline void eagle_step_update_slot_mapping_and_metadata(const eagle_step_params& params,
                                                        index_cview positions,
                                                        index_cview block_table,
                                                        index_view seq_lens,
                                                        const eagle_step_outputs& out,
                                                        stream_ref stream = {}) {
  detail::tensor_arg p(positions), t(block_table), l(seq_lens), c(out.clamped_positions),
      s(out.slot_mapping);
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  a.block_size = params.block_size;
  a.max_model_len = params.max_model_len;
  a.input_batch_size = params.input_batch_size;
  a.positions = p.get();
  a.block_table = t.get();
  a.seq_lens = l.get();
  a.out_clamped_positions = c.get();
  a.out_slot_mapping = s.get();
  a.stream = stream.get();
  detail::check_call(cattn_eagle_step_update_slot_mapping_and_metadata(&a));
}
/** The one-call results of eagle_step_update_slot_mapping_and_metadata. Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_step_slots {
  std::vector<int64_t> clamped_positions; /**< [B] */
  std::vector<int64_t> slot_mapping;      /**< [input_batch_size], or [B] for 0 */
};
/** One-call, on host inputs: B = positions' length; seq_lens is still updated in place.
 * Calls: cattn_eagle_step_update_slot_mapping_and_metadata. Allocates: the results.
 * Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
inline eagle_step_slots eagle_step_update_slot_mapping_and_metadata(
    const eagle_step_params& params, index_cview positions, index_cview block_table,
    index_view seq_lens) {
  const char* fn = "cattn::eagle_step_update_slot_mapping_and_metadata";
  const int64_t b = positions.numel();
  eagle_step_slots r;
  r.clamped_positions.resize(detail::to_size(b, fn));
  // An input_batch_size below B is the C call's to refuse: the buffer only has to reach it.
  r.slot_mapping.resize(detail::to_size(std::max(params.input_batch_size, b), fn));
  eagle_step_update_slot_mapping_and_metadata(params, positions, block_table, seq_lens,
                                              {r.clamped_positions, r.slot_mapping});
  return r;
}

/** Where eagle_prepare_inputs_padded writes. Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_padded_inputs_outputs {
  index_view token_indices_to_sample; /**< [>= B] */
  index_view num_rejected_tokens;     /**< [>= B] */
};
/** Per request of a verified batch: its rejected drafts and the index of the token to sample
 * (host, or one kernel on `stream`, capturable); cu_num_draft_tokens is the INCLUSIVE running
 * sum of drafts [B], valid_sampled_tokens_count [B], query_start_loc [>= B + 1].
 * Calls: cattn_eagle_prepare_inputs_padded. Allocates: nothing. Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
inline void eagle_prepare_inputs_padded(index_cview cu_num_draft_tokens,
                                        index_cview valid_sampled_tokens_count,
                                        index_cview query_start_loc,
                                        const eagle_padded_inputs_outputs& out,
                                        stream_ref stream = {}) {
  detail::tensor_arg d(cu_num_draft_tokens), v(valid_sampled_tokens_count), q(query_start_loc),
      t(out.token_indices_to_sample), n(out.num_rejected_tokens);
  cattn_eagle_prepare_inputs_padded_args_t a = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  a.cu_num_draft_tokens = d.get();
  a.valid_sampled_tokens_count = v.get();
  a.query_start_loc = q.get();
  a.token_indices_to_sample = t.get();
  a.num_rejected_tokens = n.get();
  a.stream = stream.get();
  detail::check_call(cattn_eagle_prepare_inputs_padded(&a));
}
/** The one-call results of eagle_prepare_inputs_padded. Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t>
struct eagle_padded_inputs {
  std::vector<Out> token_indices_to_sample; /**< [B] */
  std::vector<Out> num_rejected_tokens;     /**< [B] */
};
/** One-call, on host inputs: B = cu_num_draft_tokens' length. Calls:
 * cattn_eagle_prepare_inputs_padded. Allocates: the results. Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
eagle_padded_inputs<Out> eagle_prepare_inputs_padded(index_cview cu_num_draft_tokens,
                                                     index_cview valid_sampled_tokens_count,
                                                     index_cview query_start_loc) {
  const char* fn = "cattn::eagle_prepare_inputs_padded";
  eagle_padded_inputs<Out> r;
  r.token_indices_to_sample.resize(detail::to_size(cu_num_draft_tokens.numel(), fn));
  r.num_rejected_tokens.resize(r.token_indices_to_sample.size());
  eagle_prepare_inputs_padded(cu_num_draft_tokens, valid_sampled_tokens_count, query_start_loc,
                              {r.token_indices_to_sample, r.num_rejected_tokens});
  return r;
}

/** Where eagle_prepare_next_token_padded writes. Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_next_token_outputs {
  index_view next_token_ids;             /**< [>= B] */
  index_view valid_sampled_tokens_count; /**< [>= B] */
};
/** Per request: the next token (the valid sampled one at the highest column, else the backup)
 * and the count of valid sampled tokens (host, or one kernel on `stream`, capturable).
 * sampled_token_ids is [B, S] (-1 rejected), discard_request_mask [B] flags (absent: none),
 * backup_next_token_ids [B]. Calls: cattn_eagle_prepare_next_token_padded. Allocates: nothing.
 * Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
inline void eagle_prepare_next_token_padded(int64_t vocab_size, index_cview sampled_token_ids,
                                            any_cview discard_request_mask,
                                            index_cview backup_next_token_ids,
                                            const eagle_next_token_outputs& out,
                                            stream_ref stream = {}) {
  detail::tensor_arg s(sampled_token_ids), d(discard_request_mask), b(backup_next_token_ids),
      n(out.next_token_ids), v(out.valid_sampled_tokens_count);
  cattn_eagle_prepare_next_token_padded_args_t a =
      CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  a.vocab_size = vocab_size;
  a.sampled_token_ids = s.get();
  a.discard_request_mask = d.get();
  a.backup_next_token_ids = b.get();
  a.next_token_ids = n.get();
  a.valid_sampled_tokens_count = v.get();
  a.stream = stream.get();
  detail::check_call(cattn_eagle_prepare_next_token_padded(&a));
}
/** The one-call results of eagle_prepare_next_token_padded. Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t>
struct eagle_next_tokens {
  std::vector<Out> next_token_ids;             /**< [B] */
  std::vector<Out> valid_sampled_tokens_count; /**< [B] */
};
/** One-call, on host inputs: B = sampled_token_ids' rows. Calls:
 * cattn_eagle_prepare_next_token_padded. Allocates: the results. Throws: error (a
 * sampled_token_ids that is not 2-D: this layer's). Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
eagle_next_tokens<Out> eagle_prepare_next_token_padded(int64_t vocab_size,
                                                       index_cview sampled_token_ids,
                                                       any_cview discard_request_mask,
                                                       index_cview backup_next_token_ids) {
  const char* fn = "cattn::eagle_prepare_next_token_padded";
  if (sampled_token_ids.present() && sampled_token_ids.ndim() != 2)
    detail::fail(std::string(fn) + ": sampled_token_ids is not 2-D (got " +
                 std::to_string(sampled_token_ids.ndim()) + " dimensions)");
  const int64_t b = sampled_token_ids.present() ? sampled_token_ids.shape(0) : 0;
  eagle_next_tokens<Out> r;
  r.next_token_ids.resize(detail::to_size(b, fn));
  r.valid_sampled_tokens_count.resize(r.next_token_ids.size());
  eagle_prepare_next_token_padded(vocab_size, sampled_token_ids, discard_request_mask,
                                  backup_next_token_ids,
                                  {r.next_token_ids, r.valid_sampled_tokens_count});
  return r;
}

/** compute_new_slot_mapping's parameters; the defaults are
 * CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT's (block_size and max_model_len must be set).
 * Since: 1.2
 * See docs/api/spec_decode.md. */
struct new_slot_mapping_params {
  int64_t block_size = detail::new_slot_mapping_init.block_size;         /**< at least 1 */
  int64_t num_new_tokens = detail::new_slot_mapping_init.num_new_tokens; /**< N >= 0 */
  int64_t max_model_len = detail::new_slot_mapping_init.max_model_len;   /**< at least 1 */
};
/** The slots of a batch whose requests each grew by params.num_new_tokens tokens into
 * new_slot_mapping [>= n] int64 (-1 for rejected tokens and positions past max_model_len),
 * host, or one kernel on `stream`, capturable. query_start_loc is the batch's before the
 * extension [B + 1], block_table [B, W], new_positions [n], is_rejected_token_mask [n] flags
 * (absent: none). Calls: cattn_compute_new_slot_mapping. Allocates: nothing. Throws: error.
 * Since: 1.2
 * See docs/api/spec_decode.md. */
inline void compute_new_slot_mapping(const new_slot_mapping_params& params,
                                     index_cview query_start_loc, index_cview block_table,
                                     index_cview new_positions, any_cview is_rejected_token_mask,
                                     index_view new_slot_mapping, stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), t(block_table), p(new_positions),
      m(is_rejected_token_mask), o(new_slot_mapping);
  cattn_compute_new_slot_mapping_args_t a = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  a.block_size = params.block_size;
  a.num_new_tokens = params.num_new_tokens;
  a.max_model_len = params.max_model_len;
  a.query_start_loc = q.get();
  a.block_table = t.get();
  a.new_positions = p.get();
  a.is_rejected_token_mask = m.get();
  a.new_slot_mapping = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_compute_new_slot_mapping(&a));
}
/** One-call, on host inputs: the slot of each of new_positions' n tokens. Calls:
 * cattn_compute_new_slot_mapping. Allocates: the result. Throws: error. Since: 1.2
 * See docs/api/spec_decode.md. */
inline std::vector<int64_t> compute_new_slot_mapping(const new_slot_mapping_params& params,
                                                     index_cview query_start_loc,
                                                     index_cview block_table,
                                                     index_cview new_positions,
                                                     any_cview is_rejected_token_mask = {}) {
  std::vector<int64_t> out(
      detail::to_size(new_positions.numel(), "cattn::compute_new_slot_mapping"));
  compute_new_slot_mapping(params, query_start_loc, block_table, new_positions,
                           is_rejected_token_mask, out);
  return out;
}

/** copy_and_expand_eagle_inputs' parameters; the defaults are
 * CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT's (token ids 0, P = 1, no limit, no shift).
 * Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_inputs_params {
  /** The rejected tail's token. */
  int64_t padding_token_id = detail::eagle_inputs_init.padding_token_id;
  /** The token of slots 2 to P. */
  int64_t parallel_drafting_token_id = detail::eagle_inputs_init.parallel_drafting_token_id;
  /** P >= 1: the bonus token plus the parallel drafts. */
  int64_t num_padding_slots_per_request = detail::eagle_inputs_init.num_padding_slots_per_request;
  /** A request's output tokens from this index on are not written (vLLM's num_blocks x
   * BLOCK_SIZE_TOKENS); 0 = no limit. */
  int64_t max_tokens_per_request = detail::eagle_inputs_init.max_tokens_per_request;
  /** Drop each request's first token. */
  bool shift_input_ids = detail::eagle_inputs_init.shift_input_ids != 0;
};
/** Where copy_and_expand_eagle_inputs writes, n_out = `query_start_loc[B] + B * (P - s)`;
 * absent = NULL (all but input_ids and positions may be). Since: 1.2
 * See docs/api/spec_decode.md. */
struct eagle_inputs_outputs {
  index_view input_ids;            /**< [>= n_out] */
  index_view positions;            /**< [>= n_out] */
  any_view is_rejected_token_mask; /**< [>= n_out] flags */
  any_view is_masked_token_mask;   /**< [>= n_out] flags */
  index_view new_token_indices;    /**< [>= B * P] */
  /** [>= query_start_loc[B]]; written with params.shift_input_ids only. */
  index_view hidden_state_mapping;
};
/** The drafter's inputs from a verified batch, parallel drafting included: each request's
 * valid tokens, its bonus token, P - 1 parallel-drafting tokens and its rejected tail (host, or
 * one kernel on `stream`, capturable). B = next_token_ids' length; target_token_ids [T],
 * target_positions [T'], query_start_loc [B + 1], query_end_loc [B] (each request's last valid
 * token). Calls: cattn_copy_and_expand_eagle_inputs. Allocates: nothing. Throws: error.
 * Since: 1.2
 * See docs/api/spec_decode.md. */
inline void copy_and_expand_eagle_inputs(const eagle_inputs_params& params,
                                         index_cview target_token_ids,
                                         index_cview target_positions, index_cview next_token_ids,
                                         index_cview query_start_loc, index_cview query_end_loc,
                                         const eagle_inputs_outputs& out, stream_ref stream = {}) {
  detail::tensor_arg ti(target_token_ids), tp(target_positions), n(next_token_ids),
      q(query_start_loc), e(query_end_loc), ids(out.input_ids), pos(out.positions),
      rej(out.is_rejected_token_mask), msk(out.is_masked_token_mask),
      nti(out.new_token_indices), hsm(out.hidden_state_mapping);
  cattn_copy_and_expand_eagle_inputs_args_t a = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  a.padding_token_id = params.padding_token_id;
  a.parallel_drafting_token_id = params.parallel_drafting_token_id;
  a.num_padding_slots_per_request = params.num_padding_slots_per_request;
  a.max_tokens_per_request = params.max_tokens_per_request;
  a.shift_input_ids = params.shift_input_ids ? 1 : 0;
  a.target_token_ids = ti.get();
  a.target_positions = tp.get();
  a.next_token_ids = n.get();
  a.query_start_loc = q.get();
  a.query_end_loc = e.get();
  a.out_input_ids = ids.get();
  a.out_positions = pos.get();
  a.out_is_rejected_token_mask = rej.get();
  a.out_is_masked_token_mask = msk.get();
  a.out_new_token_indices = nti.get();
  a.out_hidden_state_mapping = hsm.get();
  a.stream = stream.get();
  detail::check_call(cattn_copy_and_expand_eagle_inputs(&a));
}
/** The one-call results of copy_and_expand_eagle_inputs, n_out as above; an entry the call
 * leaves as it is (a request's tokens past params.max_tokens_per_request, those before
 * query_start_loc[0]) is 0. Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t>
struct eagle_inputs {
  std::vector<Out> input_ids;                  /**< [n_out] */
  std::vector<Out> positions;                  /**< [n_out] */
  std::vector<uint8_t> is_rejected_token_mask; /**< [n_out] flags, 0 or 1 */
  std::vector<uint8_t> is_masked_token_mask;   /**< [n_out] flags, 0 or 1 */
  std::vector<Out> new_token_indices;          /**< [B * P] */
  /** [query_start_loc[B]] with params.shift_input_ids; empty without. */
  std::vector<Out> hidden_state_mapping;
};
/** One-call, on host inputs: every output, sized from query_start_loc[B] (host memory).
 * Calls: cattn_copy_and_expand_eagle_inputs. Allocates: the results. Throws: error (a
 * query_start_loc that is not 1-D or not host memory: this layer's). Since: 1.2
 * See docs/api/spec_decode.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
eagle_inputs<Out> copy_and_expand_eagle_inputs(const eagle_inputs_params& params,
                                               index_cview target_token_ids,
                                               index_cview target_positions,
                                               index_cview next_token_ids,
                                               index_cview query_start_loc,
                                               index_cview query_end_loc) {
  const char* fn = "cattn::copy_and_expand_eagle_inputs";
  detail::require_host(query_start_loc, fn, "query_start_loc");
  if (query_start_loc.present() && query_start_loc.ndim() != 1)
    detail::fail(std::string(fn) + ": query_start_loc is not 1-D (got " +
                 std::to_string(query_start_loc.ndim()) + " dimensions)");
  const int64_t b = next_token_ids.numel();
  // A query_start_loc too short for B, or a negative total, is the C call's to refuse: the
  // buffers are only made large enough to reach it.
  const int64_t total = query_start_loc.numel() > b
                            ? std::max<int64_t>(detail::read_index(query_start_loc, b), 0)
                            : 0;
  const int64_t p = std::max<int64_t>(params.num_padding_slots_per_request, 0);
  const int64_t per_request = std::max<int64_t>(p - (params.shift_input_ids ? 1 : 0), 0);
  const size_t n_out =
      detail::to_size(detail::checked_add(total, detail::checked_mul(b, per_request, fn), fn), fn);
  eagle_inputs<Out> r;
  r.input_ids.resize(n_out);
  r.positions.resize(n_out);
  r.is_rejected_token_mask.resize(n_out);
  r.is_masked_token_mask.resize(n_out);
  r.new_token_indices.resize(detail::to_size(detail::checked_mul(b, p, fn), fn));
  if (params.shift_input_ids) r.hidden_state_mapping.resize(detail::to_size(total, fn));
  eagle_inputs_outputs out;
  out.input_ids = r.input_ids;
  out.positions = r.positions;
  out.is_rejected_token_mask = r.is_rejected_token_mask;
  out.is_masked_token_mask = r.is_masked_token_mask;
  out.new_token_indices = r.new_token_indices;
  if (params.shift_input_ids) out.hidden_state_mapping = r.hidden_state_mapping;
  copy_and_expand_eagle_inputs(params, target_token_ids, target_positions, next_token_ids,
                               query_start_loc, query_end_loc, out);
  return r;
}

/** Carries the async-scheduling counts across a batch change, in place: num_computed_tokens
 * [M >= n] ([0, n) rewritten) and num_accepted_tokens [n], from prev_positions [n] (each row's
 * previous row, negative = new), valid_sampled_token_count [n_prev], prev_num_draft_tokens
 * [n_prev] and cpu_num_computed_tokens [n] (host, or one kernel on `stream`, capturable).
 * In place only, so there is no one-call overload. Calls:
 * cattn_update_num_computed_tokens_for_batch_change. Allocates: nothing. Throws: error.
 * Since: 1.2
 * See docs/api/spec_decode.md. */
inline void update_num_computed_tokens_for_batch_change(index_view num_computed_tokens,
                                                        index_view num_accepted_tokens,
                                                        index_cview prev_positions,
                                                        index_cview valid_sampled_token_count,
                                                        index_cview prev_num_draft_tokens,
                                                        index_cview cpu_num_computed_tokens,
                                                        stream_ref stream = {}) {
  detail::tensor_arg c(num_computed_tokens), k(num_accepted_tokens), p(prev_positions),
      v(valid_sampled_token_count), d(prev_num_draft_tokens), h(cpu_num_computed_tokens);
  cattn_update_num_computed_tokens_for_batch_change_args_t a =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  a.num_computed_tokens = c.get();
  a.num_accepted_tokens = k.get();
  a.prev_positions = p.get();
  a.valid_sampled_token_count = v.get();
  a.prev_num_draft_tokens = d.get();
  a.cpu_num_computed_tokens = h.get();
  a.stream = stream.get();
  detail::check_call(cattn_update_num_computed_tokens_for_batch_change(&a));
}

/** @} */

/* ============================================================================================
 * Step plan: a whole step's metadata in one launch
 * ========================================================================================== */
/** @defgroup group_cpp_step_plan Step plan
 * @ingroup group_cpp
 * A whole step's metadata in one launch: step_plan, the owner of a cattn_step_plan_t, with
 * step_batch and step_outputs.
 * @{ */

/** A step's batch (cattn_step_batch_t), device tensors; absent = NULL. Since: 1.1; the fields
 * from num_reqs on Since: 1.2.
 * See docs/api/step_plan.md. */
struct step_batch {
  ///@{
  /** The 1.1 inputs: cattn_step_batch_t's fields of the same names. */
  index_cview query_start_loc, seq_lens, block_table, cu_num_tokens, logits_indices,
      num_logits_indices;
  ///@}
  /* 1.2: the step inputs (CATTN_STEP_INPUTS to CATTN_STEP_SPLIT). */
  index_cview num_reqs;             /**< [1] live rows; absent: B */
  index_cview num_scheduled_tokens; /**< [B] (CATTN_STEP_INPUTS: B is its length) */
  index_cview idx_mapping;          /**< [B] persistent rows */
  index_cview num_computed_tokens;  /**< [R] */
  index_cview num_draft_tokens;     /**< [B] */
  index_cview positions;            /**< [N]: slot mappings without CATTN_STEP_INPUTS */
  /** Per group: [R, W] persistent (MRV2), [B, W] batch rows (V1 slot mappings). */
  std::array<index_cview, CATTN_MAX_KV_GROUPS> kv_block_tables{};
  std::array<index_cview, CATTN_MAX_KV_GROUPS> kv_num_blocks{}; /**< Per group: [R] */
  /* 1.2: the drafter products (CATTN_STEP_DRAFT_NEXT_TOKEN to CATTN_STEP_BATCH_CHANGE). */
  index_cview sampled_token_ids;     /**< [B, S], -1 rejected */
  any_cview discard_request_mask;    /**< [B] flags; absent: none */
  index_cview backup_next_token_ids; /**< [B] */
  index_cview cu_num_draft_tokens;   /**< [B] inclusive */
  ///@{
  /** [T] and [T'] (DRAFT_EXPAND). */
  index_cview target_token_ids, target_positions;
  ///@}
  ///@{
  /** [n] (BATCH_CHANGE): each row's previous row (negative = new), its accepted tokens. */
  index_cview prev_positions, num_accepted_tokens;
  ///@}
  ///@{
  /** [n_prev] (BATCH_CHANGE). */
  index_cview valid_sampled_token_count, prev_num_draft_tokens;
  ///@}
  index_cview cpu_num_computed_tokens;  /**< [n] */
};
/** Where a run writes (cattn_step_outputs_t); absent = NULL. Since: 1.1; the fields from
 * query_start_loc on Since: 1.2.
 * See docs/api/step_plan.md. */
struct step_outputs {
  ///@{
  /** The 1.1 products and the counts: cattn_step_outputs_t's fields of the same names. */
  index_view dcp_local_seq_lens, pcp_query_restore_idx, mamba_block_table, conv1d_nums,
      conv1d_mlist, conv1d_offsetlist, conv1d_batch_ptr, conv1d_token_chunk_offset_ptr,
      local_query_start_loc, local_seq_lens, local_num_computed_tokens, local_block_table,
      decode_query_start_loc, extend_query_start_loc, extend_seq_lens, counts, counts_host;
  ///@}
  /** Device memory of cattn_step_plan_workspace_size bytes; may be nullptr when that is 0. */
  void* workspace = nullptr;
  size_t workspace_bytes = 0; /**< The size of workspace in bytes. */
  /* 1.2: the step inputs. */
  ///@{
  /** The step inputs (CATTN_STEP_INPUTS): cattn_step_outputs_t's fields of the same names. */
  index_view query_start_loc, seq_lens, positions, num_computed_tokens;
  ///@}
  std::array<index_view, CATTN_MAX_KV_GROUPS> block_tables{};  /**< [B, W_g] per group */
  std::array<index_view, CATTN_MAX_KV_GROUPS> slot_mappings{}; /**< int64, per group */
  ///@{
  /** The logits indices and the token-to-request map (CATTN_STEP_LOGITS_INDICES,
   * CATTN_STEP_TOKEN_TO_REQ): cattn_step_outputs_t's fields of the same names. */
  index_view logits_indices, cu_num_logits, expanded_idx_mapping, expanded_local_pos,
      token_to_req_indices;
  ///@}
  /* 1.2: the drafter products. */
  ///@{
  /** The drafter products' outputs: cattn_step_outputs_t's fields of the same names. */
  index_view next_token_ids, valid_sampled_tokens_count, token_indices_to_sample,
      num_rejected_tokens, draft_input_ids, draft_positions;
  ///@}
  ///@{
  /** One-byte flags per token (DRAFT_EXPAND); each may be absent. */
  any_view is_rejected_token_mask, is_masked_token_mask;
  ///@}
  ///@{
  /** The drafter products' outputs: cattn_step_outputs_t's fields of the same names. */
  index_view new_token_indices, hidden_state_mapping, draft_slot_mapping, draft_seq_lens,
      carried_num_computed_tokens, carried_num_accepted_tokens;
  ///@}
};

/** A cattn_step_plan_desc_t set to CATTN_STEP_PLAN_DESC_INIT. Since: 1.1
 * See docs/api/step_plan.md. */
inline cattn_step_plan_desc_t step_plan_desc() noexcept {
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  return d;
}

/** Owns a cattn_step_plan_t. Move-only; destroyed with cattn_step_plan_destroy. A
 * default-constructed plan holds nothing. Since: 1.1
 * See docs/api/step_plan.md. */
class step_plan {
 public:
  step_plan() noexcept = default;
  /** Calls: cattn_step_plan_create (no CUDA call). Allocates: the plan. Throws: error. */
  explicit step_plan(const cattn_step_plan_desc_t& desc) {
    cattn_step_plan_t* p = nullptr;
    detail::check_call(cattn_step_plan_create(&desc, &p));
    h_.reset(p);
  }
  /** Takes ownership of a plan made by the C call. Throws nothing. */
  static step_plan adopt(cattn_step_plan_t* raw) noexcept {
    step_plan p;
    p.h_.reset(raw);
    return p;
  }
  /** The C handle, still owned here; nullptr when this owner holds none. */
  cattn_step_plan_t* get() const noexcept { return h_.get(); }
  /** Gives up ownership: returns the C handle, which the caller then destroys. */
  cattn_step_plan_t* release() noexcept { return h_.release(); }
  /** Whether a plan is held. */
  explicit operator bool() const noexcept { return h_.get() != nullptr; }
  /** The outputs' capacities. Calls: cattn_step_plan_get_shape. Throws: error. */
  cattn_step_plan_shape_t shape() const {
    cattn_step_plan_shape_t s = CATTN_STEP_PLAN_SHAPE_INIT;
    detail::check_call(cattn_step_plan_get_shape(get(), &s));
    return s;
  }
  /** Calls: cattn_step_plan_workspace_size. Throws: error. */
  size_t workspace_size() const {
    size_t bytes = 0;
    detail::check_call(cattn_step_plan_workspace_size(get(), &bytes));
    return bytes;
  }
  /** Every product in one launch on `stream` (capturable; see cattn.h for the 1.2 plans that
   * launch two kernels). Calls: cattn_step_plan_run.
   * Allocates: nothing. Throws: error. */
  void run(const step_batch& batch, const step_outputs& out, stream_ref stream = {}) const {
    detail::tensor_arg q(batch.query_start_loc), s(batch.seq_lens), b(batch.block_table),
        c(batch.cu_num_tokens), l(batch.logits_indices), n(batch.num_logits_indices);
    cattn_step_batch_t sb = CATTN_STEP_BATCH_INIT;
    sb.query_start_loc = q.get();
    sb.seq_lens = s.get();
    sb.block_table = b.get();
    sb.cu_num_tokens = c.get();
    sb.logits_indices = l.get();
    sb.num_logits_indices = n.get();
    detail::tensor_arg nr(batch.num_reqs), ns(batch.num_scheduled_tokens), im(batch.idx_mapping),
        nc(batch.num_computed_tokens), nd(batch.num_draft_tokens), ps(batch.positions);
    detail::tensor_args<CATTN_MAX_KV_GROUPS> kt(batch.kv_block_tables), kn(batch.kv_num_blocks);
    sb.num_reqs = nr.get();
    sb.num_scheduled_tokens = ns.get();
    sb.idx_mapping = im.get();
    sb.num_computed_tokens = nc.get();
    sb.num_draft_tokens = nd.get();
    sb.positions = ps.get();
    for (size_t g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
      sb.kv_block_tables[g] = kt.get(g);
      sb.kv_num_blocks[g] = kn.get(g);
    }
    detail::tensor_arg o1(out.dcp_local_seq_lens), o2(out.pcp_query_restore_idx),
        o3(out.mamba_block_table), o4(out.conv1d_nums), o5(out.conv1d_mlist),
        o6(out.conv1d_offsetlist), o7(out.conv1d_batch_ptr),
        o8(out.conv1d_token_chunk_offset_ptr), o9(out.local_query_start_loc),
        o10(out.local_seq_lens), o11(out.local_num_computed_tokens), o12(out.local_block_table),
        o13(out.decode_query_start_loc), o14(out.extend_query_start_loc),
        o15(out.extend_seq_lens), o16(out.counts), o17(out.counts_host);
    cattn_step_outputs_t so = CATTN_STEP_OUTPUTS_INIT;
    so.dcp_local_seq_lens = o1.get();
    so.pcp_query_restore_idx = o2.get();
    so.mamba_block_table = o3.get();
    so.conv1d_nums = o4.get();
    so.conv1d_mlist = o5.get();
    so.conv1d_offsetlist = o6.get();
    so.conv1d_batch_ptr = o7.get();
    so.conv1d_token_chunk_offset_ptr = o8.get();
    so.local_query_start_loc = o9.get();
    so.local_seq_lens = o10.get();
    so.local_num_computed_tokens = o11.get();
    so.local_block_table = o12.get();
    so.decode_query_start_loc = o13.get();
    so.extend_query_start_loc = o14.get();
    so.extend_seq_lens = o15.get();
    so.counts = o16.get();
    so.counts_host = o17.get();
    so.workspace = out.workspace;
    so.workspace_bytes = out.workspace_bytes;
    detail::tensor_arg o18(out.query_start_loc), o19(out.seq_lens), o20(out.positions),
        o21(out.num_computed_tokens), o22(out.logits_indices), o23(out.cu_num_logits),
        o24(out.expanded_idx_mapping), o25(out.expanded_local_pos), o26(out.token_to_req_indices);
    detail::tensor_args<CATTN_MAX_KV_GROUPS> bt(out.block_tables), sm(out.slot_mappings);
    so.query_start_loc = o18.get();
    so.seq_lens = o19.get();
    so.positions = o20.get();
    so.num_computed_tokens = o21.get();
    for (size_t g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
      so.block_tables[g] = bt.get(g);
      so.slot_mappings[g] = sm.get(g);
    }
    so.logits_indices = o22.get();
    so.cu_num_logits = o23.get();
    so.expanded_idx_mapping = o24.get();
    so.expanded_local_pos = o25.get();
    so.token_to_req_indices = o26.get();
    detail::tensor_arg d1(batch.sampled_token_ids), d2(batch.discard_request_mask),
        d3(batch.backup_next_token_ids), d4(batch.cu_num_draft_tokens),
        d5(batch.target_token_ids), d6(batch.target_positions), d7(batch.prev_positions),
        d8(batch.num_accepted_tokens), d9(batch.valid_sampled_token_count),
        d10(batch.prev_num_draft_tokens), d11(batch.cpu_num_computed_tokens);
    sb.sampled_token_ids = d1.get();
    sb.discard_request_mask = d2.get();
    sb.backup_next_token_ids = d3.get();
    sb.cu_num_draft_tokens = d4.get();
    sb.target_token_ids = d5.get();
    sb.target_positions = d6.get();
    sb.prev_positions = d7.get();
    sb.num_accepted_tokens = d8.get();
    sb.valid_sampled_token_count = d9.get();
    sb.prev_num_draft_tokens = d10.get();
    sb.cpu_num_computed_tokens = d11.get();
    detail::tensor_arg e1(out.next_token_ids), e2(out.valid_sampled_tokens_count),
        e3(out.token_indices_to_sample), e4(out.num_rejected_tokens), e5(out.draft_input_ids),
        e6(out.draft_positions), e7(out.is_rejected_token_mask), e8(out.is_masked_token_mask),
        e9(out.new_token_indices), e10(out.hidden_state_mapping), e11(out.draft_slot_mapping),
        e12(out.draft_seq_lens), e13(out.carried_num_computed_tokens),
        e14(out.carried_num_accepted_tokens);
    so.next_token_ids = e1.get();
    so.valid_sampled_tokens_count = e2.get();
    so.token_indices_to_sample = e3.get();
    so.num_rejected_tokens = e4.get();
    so.draft_input_ids = e5.get();
    so.draft_positions = e6.get();
    so.is_rejected_token_mask = e7.get();
    so.is_masked_token_mask = e8.get();
    so.new_token_indices = e9.get();
    so.hidden_state_mapping = e10.get();
    so.draft_slot_mapping = e11.get();
    so.draft_seq_lens = e12.get();
    so.carried_num_computed_tokens = e13.get();
    so.carried_num_accepted_tokens = e14.get();
    detail::check_call(cattn_step_plan_run(get(), &sb, &so, stream.get()));
  }

 private:
  detail::unique_handle<detail::step_plan_traits> h_;
};

/** @} */

/* ============================================================================================
 * Batch splitting and reordering
 * ========================================================================================== */
/** @defgroup group_cpp_batch_split Batch splitting and reordering
 * @ingroup group_cpp
 * Where a batch's decodes, extends and prefills begin, and the order that makes each region
 * contiguous: split_decodes_and_prefills and split_decodes_prefills_and_extends (each with a
 * `_capturable` variant), split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills.
 * @{ */

/** The knobs of split_decodes_and_prefills, at vLLM's defaults. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
struct split_options {
  int64_t decode_threshold = 1;                /**< the longest query that is a decode */
  bool require_uniform = false;                /**< split_decodes_and_prefills only */
  bool treat_short_extends_as_decodes = true;  /**< split_decodes_and_prefills only */
  /** T, padding included; by default the library derives it: `query_start_loc[B]`. */
  int64_t num_actual_tokens = CATTN_FROM_QUERY_START_LOC;
  /** By default the library derives it: the largest query length. */
  int64_t max_query_len = CATTN_FROM_QUERY_START_LOC;
};
/** The four counts of cattn_split_decodes_and_prefills. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
struct decode_prefill_split {
  ///@{
  /** Leading decode requests, the prefill requests after them, and the tokens of each. */
  int64_t num_decodes = 0, num_prefills = 0, num_decode_tokens = 0, num_prefill_tokens = 0;
  ///@}
};
/** Splits an ordered host batch (num_reqs = the length of query_start_loc_cpu - 1);
 * is_prefilling_cpu holds one byte per request. Calls: cattn_split_decodes_and_prefills. Throws: error.
 * Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
inline decode_prefill_split split_decodes_and_prefills(index_cview query_start_loc_cpu,
                                                       const split_options& options = {},
                                                       any_cview is_prefilling_cpu = {}) {
  detail::tensor_arg q(query_start_loc_cpu), p(is_prefilling_cpu);
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  a.query_start_loc_cpu = q.get();
  a.is_prefilling_cpu = p.get();
  a.num_reqs = query_start_loc_cpu.numel() - 1;
  a.num_actual_tokens = options.num_actual_tokens;
  a.max_query_len = options.max_query_len;
  a.decode_threshold = options.decode_threshold;
  a.require_uniform = options.require_uniform ? 1 : 0;
  a.treat_short_extends_as_decodes = options.treat_short_extends_as_decodes ? 1 : 0;
  detail::check_call(cattn_split_decodes_and_prefills(&a));
  decode_prefill_split s;
  s.num_decodes = a.num_decodes;
  s.num_prefills = a.num_prefills;
  s.num_decode_tokens = a.num_decode_tokens;
  s.num_prefill_tokens = a.num_prefill_tokens;
  return s;
}
/** The same split of a device batch into result [4], one kernel on `stream`, replayable;
 * num_actual_tokens and max_query_len are optional device scalars. Calls:
 * cattn_split_decodes_and_prefills_capturable. Throws: error. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
inline void split_decodes_and_prefills_capturable(index_cview query_start_loc, index_view result,
                                                  const split_options& options = {},
                                                  any_cview is_prefilling = {},
                                                  index_cview num_actual_tokens = {},
                                                  index_cview max_query_len = {},
                                                  stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), r(result), p(is_prefilling), t(num_actual_tokens),
      m(max_query_len);
  cattn_split_decodes_and_prefills_capturable_args_t a =
      CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = q.get();
  a.is_prefilling = p.get();
  a.num_actual_tokens = t.get();
  a.max_query_len = m.get();
  a.decode_threshold = options.decode_threshold;
  a.require_uniform = options.require_uniform ? 1 : 0;
  a.treat_short_extends_as_decodes = options.treat_short_extends_as_decodes ? 1 : 0;
  a.result = r.get();
  a.stream = stream.get();
  detail::check_call(cattn_split_decodes_and_prefills_capturable(&a));
}

/** The six counts of cattn_split_decodes_prefills_and_extends. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
struct decode_extend_prefill_split {
  ///@{
  /** The requests of each region (decodes, then extends, then prefills) and their tokens. */
  int64_t num_decodes = 0, num_extends = 0, num_prefills = 0, num_decode_tokens = 0,
          num_extend_tokens = 0, num_prefill_tokens = 0;
  ///@}
};
/** Splits an ordered host batch into decodes, extends and prefills. Calls:
 * cattn_split_decodes_prefills_and_extends. Throws: error. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
inline decode_extend_prefill_split split_decodes_prefills_and_extends(
    index_cview query_start_loc_cpu, index_cview seq_lens_cpu_upper_bound,
    const split_options& options = {}) {
  detail::tensor_arg q(query_start_loc_cpu), u(seq_lens_cpu_upper_bound);
  cattn_split_decodes_prefills_and_extends_args_t a =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
  a.query_start_loc_cpu = q.get();
  a.seq_lens_cpu_upper_bound = u.get();
  a.num_reqs = query_start_loc_cpu.numel() - 1;
  a.num_actual_tokens = options.num_actual_tokens;
  a.max_query_len = options.max_query_len;
  a.decode_threshold = options.decode_threshold;
  detail::check_call(cattn_split_decodes_prefills_and_extends(&a));
  decode_extend_prefill_split s;
  s.num_decodes = a.num_decodes;
  s.num_extends = a.num_extends;
  s.num_prefills = a.num_prefills;
  s.num_decode_tokens = a.num_decode_tokens;
  s.num_extend_tokens = a.num_extend_tokens;
  s.num_prefill_tokens = a.num_prefill_tokens;
  return s;
}
/** The same split of a device batch into result [6], one kernel on `stream`, replayable.
 * Calls: cattn_split_decodes_prefills_and_extends_capturable. Throws: error. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
inline void split_decodes_prefills_and_extends_capturable(
    index_cview query_start_loc, index_cview seq_lens_upper_bound, index_view result,
    int64_t decode_threshold = 1, index_cview num_actual_tokens = {},
    index_cview max_query_len = {}, stream_ref stream = {}) {
  detail::tensor_arg q(query_start_loc), u(seq_lens_upper_bound), r(result),
      t(num_actual_tokens), m(max_query_len);
  cattn_split_decodes_prefills_and_extends_capturable_args_t a =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = q.get();
  a.seq_lens_upper_bound = u.get();
  a.num_actual_tokens = t.get();
  a.max_query_len = m.get();
  a.decode_threshold = decode_threshold;
  a.result = r.get();
  a.stream = stream.get();
  detail::check_call(cattn_split_decodes_prefills_and_extends_capturable(&a));
}

/** Chunks into `chunks` [capacity, 2] (absent: the size query); returns num_chunks. Calls:
 * cattn_split_prefill_chunks. Throws: error. Since: 1.1
 * See docs/api/split_prefill_chunks.md. */
inline int64_t split_prefill_chunks(index_cview seq_lens_cpu, int64_t workspace_size,
                                    int64_t request_offset, index_view chunks) {
  detail::tensor_arg s(seq_lens_cpu), c(chunks);
  cattn_split_prefill_chunks_args_t a = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
  a.seq_lens_cpu = s.get();
  a.workspace_size = workspace_size;
  a.request_offset = request_offset;
  a.chunks = c.get();
  detail::check_call(cattn_split_prefill_chunks(&a));
  return a.num_chunks;
}
/** One-call: the half-open chunk bounds [(start, end), ...]. Calls: cattn_split_prefill_chunks
 * twice (size query, then the chunks). Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/split_prefill_chunks.md. */
inline std::vector<std::pair<int64_t, int64_t>> split_prefill_chunks(index_cview seq_lens_cpu,
                                                                      int64_t workspace_size,
                                                                      int64_t request_offset = 0) {
  const int64_t n = split_prefill_chunks(seq_lens_cpu, workspace_size, request_offset, {});
  host_tensor<int64_t> c({n, 2});
  split_prefill_chunks(seq_lens_cpu, workspace_size, request_offset, c);
  std::vector<std::pair<int64_t, int64_t>> r(static_cast<size_t>(n));
  for (size_t i = 0; i < r.size(); ++i) r[i] = {c[2 * i], c[2 * i + 1]};
  return r;
}

/** What cattn_reorder_batch_to_split_decodes_and_prefills reports besides its tensors.
 * Since: 1.1
 * See docs/api/reorder_batch_to_split_decodes_and_prefills.md. */
struct reorder_counts {
  bool changed = false; /**< whether any request moves */
  ///@{
  /** The swaps written, and the requests of each region (decode, short extend, long extend,
   * prefill) in the new order. */
  int64_t num_swaps = 0, num_decodes = 0, num_short_extends = 0, num_long_extends = 0,
          num_prefills = 0;
  ///@}
};
/** Plans vLLM's reorder into index_map [B] (and swaps [>= B - 1, 2], optional). Calls:
 * cattn_reorder_batch_to_split_decodes_and_prefills. Allocates: nothing. Throws: error.
 * Since: 1.1
 * See docs/api/reorder_batch_to_split_decodes_and_prefills.md. */
inline reorder_counts reorder_batch_to_split_decodes_and_prefills(
    index_cview num_scheduled_tokens, index_cview num_computed_tokens,
    index_cview num_prompt_tokens, int64_t decode_threshold, index_view index_map,
    index_view swaps = {}) {
  detail::tensor_arg s(num_scheduled_tokens), c(num_computed_tokens), p(num_prompt_tokens),
      m(index_map), w(swaps);
  cattn_reorder_batch_args_t a = CATTN_REORDER_BATCH_ARGS_INIT;
  a.num_scheduled_tokens = s.get();
  a.num_computed_tokens = c.get();
  a.num_prompt_tokens = p.get();
  a.decode_threshold = decode_threshold;
  a.index_map = m.get();
  a.swaps = w.get();
  detail::check_call(cattn_reorder_batch_to_split_decodes_and_prefills(&a));
  reorder_counts r;
  r.changed = a.changed != 0;
  r.num_swaps = a.num_swaps;
  r.num_decodes = a.num_decodes;
  r.num_short_extends = a.num_short_extends;
  r.num_long_extends = a.num_long_extends;
  r.num_prefills = a.num_prefills;
  return r;
}
/** The results of the one-call reorder: index_map[i] = the old position of the request now at
 * i, and vLLM's swap_states calls in order. Since: 1.1
 * See docs/api/split_decodes_and_prefills.md. */
template <class Out = int64_t>
struct batch_reorder {
  bool changed = false;                           /**< whether any request moves */
  std::vector<Out> index_map;                     /**< [B] old position of each new one */
  std::vector<std::pair<int64_t, int64_t>> swaps; /**< vLLM's swap_states calls, in order */
  ///@{
  /** The requests of each region (decode, short extend, long extend, prefill). */
  int64_t num_decodes = 0, num_short_extends = 0, num_long_extends = 0, num_prefills = 0;
  ///@}
};
/** One-call, on host per-request counts. Calls:
 * cattn_reorder_batch_to_split_decodes_and_prefills. Allocates: the results. Throws: error.
 * Since: 1.1
 * See docs/api/reorder_batch_to_split_decodes_and_prefills.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
batch_reorder<Out> reorder_batch_to_split_decodes_and_prefills(index_cview num_scheduled_tokens,
                                                               index_cview num_computed_tokens,
                                                               index_cview num_prompt_tokens,
                                                               int64_t decode_threshold = 1) {
  const char* fn = "cattn::reorder_batch_to_split_decodes_and_prefills";
  const int64_t b = num_scheduled_tokens.numel();
  batch_reorder<Out> r;
  r.index_map.resize(detail::to_size(b, fn));
  host_tensor<int64_t> swaps({std::max<int64_t>(b - 1, 0), 2});
  const reorder_counts c = reorder_batch_to_split_decodes_and_prefills(
      num_scheduled_tokens, num_computed_tokens, num_prompt_tokens, decode_threshold,
      r.index_map, swaps);
  r.changed = c.changed;
  for (int64_t i = 0; i < c.num_swaps; ++i)
    r.swaps.emplace_back(swaps(i, 0), swaps(i, 1));
  r.num_decodes = c.num_decodes;
  r.num_short_extends = c.num_short_extends;
  r.num_long_extends = c.num_long_extends;
  r.num_prefills = c.num_prefills;
  return r;
}

/** @} */

/* ============================================================================================
 * Per-request metadata helpers (naive_query_lens, compute_num_computed_tokens,
 * token_to_req_indices, unpadded)
 * ========================================================================================== */
/** @defgroup group_cpp_per_request Per-request metadata helpers
 * @ingroup group_cpp
 * Per-request and per-token values of one batch: naive_query_lens, compute_num_computed_tokens,
 * token_to_req_indices, unpadded.
 * @{ */

/** Query lengths into out [B] (host, or one kernel on `stream`). Calls: cattn_naive_query_lens.
 * Throws: error. Since: 1.1
 * See docs/api/naive_query_lens.md. */
inline void naive_query_lens(index_cview query_start_loc, index_view out, stream_ref stream = {}) {
  detail::raw_metadata md;
  md.get()->query_start_loc = md.put(query_start_loc);
  detail::tensor_arg o(out);
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = md.get();
  a.out = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_naive_query_lens(&a));
}
/** One-call, on a host query_start_loc [B + 1]. Calls: cattn_naive_query_lens. Allocates: the
 * result. Throws: error. Since: 1.1
 * See docs/api/naive_query_lens.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::vector<Out> naive_query_lens(index_cview query_start_loc) {
  std::vector<Out> out(detail::to_size(std::max<int64_t>(query_start_loc.numel() - 1, 0),
                                       "cattn::naive_query_lens"));
  naive_query_lens(query_start_loc, out);
  return out;
}
/** Tokens computed before this step into out [B] (may be the very view of seq_lens). Calls:
 * cattn_compute_num_computed_tokens. Throws: error. Since: 1.1
 * See docs/api/compute_num_computed_tokens.md. */
inline void compute_num_computed_tokens(index_cview query_start_loc, index_cview seq_lens,
                                        index_view out, stream_ref stream = {}) {
  detail::raw_metadata md;
  md.get()->query_start_loc = md.put(query_start_loc);
  md.get()->seq_lens = md.put(seq_lens);
  detail::tensor_arg o(out);
  cattn_compute_num_computed_tokens_args_t a = CATTN_COMPUTE_NUM_COMPUTED_TOKENS_ARGS_INIT;
  a.metadata = md.get();
  a.out = o.get();
  a.stream = stream.get();
  detail::check_call(cattn_compute_num_computed_tokens(&a));
}
/** One-call, on host tensors. Calls: cattn_compute_num_computed_tokens. Allocates: the result.
 * Throws: error. Since: 1.1
 * See docs/api/compute_num_computed_tokens.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::vector<Out> compute_num_computed_tokens(index_cview query_start_loc, index_cview seq_lens) {
  std::vector<Out> out(detail::to_size(seq_lens.numel(), "cattn::compute_num_computed_tokens"));
  compute_num_computed_tokens(query_start_loc, seq_lens, out);
  return out;
}
/** Each token's request into buffer [>= max(M, T)] (host, or one kernel on `stream`);
 * query_start_loc_cpu is the optional host mirror. Calls: cattn_token_to_req_indices.
 * Throws: error. Since: 1.1
 * See docs/api/token_to_req_indices.md. */
inline void token_to_req_indices(index_cview query_start_loc, index_cview query_start_loc_cpu,
                                 int64_t num_actual_tokens, index_view buffer,
                                 stream_ref stream = {}) {
  detail::raw_metadata md;
  md.get()->query_start_loc = md.put(query_start_loc);
  md.get()->query_start_loc_cpu = md.put(query_start_loc_cpu);
  md.get()->num_actual_tokens = num_actual_tokens;
  detail::tensor_arg b(buffer);
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = md.get();
  a.buffer = b.get();
  a.stream = stream.get();
  detail::check_call(cattn_token_to_req_indices(&a));
}
/** One-call: the request of each of the T = num_actual_tokens tokens, from a host
 * query_start_loc. Calls: cattn_token_to_req_indices. Allocates: the result.
 * Throws: error. Since: 1.1
 * See docs/api/token_to_req_indices.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::vector<Out> token_to_req_indices(index_cview query_start_loc, int64_t num_actual_tokens) {
  const char* fn = "cattn::token_to_req_indices";
  detail::require_host(query_start_loc, fn, "query_start_loc");
  int64_t mapped = 0;
  const int64_t entries = query_start_loc.numel();
  if (query_start_loc.ndim() == 1 && entries > 0)
    mapped = detail::read_index(query_start_loc, entries - 1) -
             detail::read_index(query_start_loc, 0);
  std::vector<Out> out(
      detail::to_size(std::max<int64_t>({mapped, num_actual_tokens, int64_t{0}}), fn));
  token_to_req_indices(query_start_loc, {}, num_actual_tokens, out);
  out.resize(detail::to_size(num_actual_tokens, fn));
  return out;
}
/** The first num_actual_reqs requests and num_actual_tokens tokens of a padded batch, as views
 * into the same memory (host and device alike).
 * Calls: cattn_unpadded. Throws: error. Since: 1.1
 * See docs/api/unpadded.md. */
inline attn_metadata unpadded(const attn_metadata& metadata, int64_t num_actual_tokens,
                              int64_t num_actual_reqs) {
  detail::raw_metadata in(metadata);
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_unpadded_storage_t storage{};
  storage.struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
  a.metadata = in.get();
  a.num_actual_tokens = num_actual_tokens;
  a.num_actual_reqs = num_actual_reqs;
  a.out = &out;
  a.storage = &storage;
  detail::check_call(cattn_unpadded(&a));
  using va = detail::view_access;
  attn_metadata r;
  va::assign_from(r.query_start_loc, out.query_start_loc);
  va::assign_from(r.query_start_loc_cpu, out.query_start_loc_cpu);
  va::assign_from(r.seq_lens, out.seq_lens);
  va::assign_from(r.seq_lens_cpu, out.seq_lens_cpu);
  va::assign_from(r.num_computed_tokens_cpu, out.num_computed_tokens_cpu);
  va::assign_from(r.block_table_tensor, out.block_table_tensor);
  va::assign_from(r.slot_mapping, out.slot_mapping);
  // logits_indices_padded is the input's pointer, so the input's view stands for it.
  r.logits_indices_padded = metadata.logits_indices_padded;
  r.num_reqs = out.num_reqs;
  r.num_actual_tokens = out.num_actual_tokens;
  r.max_query_len = out.max_query_len;
  r.max_seq_len = out.max_seq_len;
  r.num_logits_indices = out.num_logits_indices;
  r.causal = out.causal != 0;
  va::assign_from(r.positions, out.positions);
  va::assign_from(r.is_prefilling, out.is_prefilling);
  va::assign_from(r.causal_per_req, out.causal_per_req);
  va::assign_from(r.dcp_local_seq_lens, out.dcp_local_seq_lens);
  va::assign_from(r.dcp_local_seq_lens_cpu, out.dcp_local_seq_lens_cpu);
  va::assign_from(r.seq_lens_cpu_upper_bound, out.seq_lens_cpu_upper_bound);
  va::assign_from(r.encoder_seq_lens, out.encoder_seq_lens);
  va::assign_from(r.encoder_seq_lens_cpu, out.encoder_seq_lens_cpu);
  r.max_logits_per_req = out.max_logits_per_req;
  return r;
}

/** @} */

/* ============================================================================================
 * Other helpers of vLLM's newest attention utils (max_local_attention_virtual_batches,
 * compute_mm_prefix_range_tensor, fill_mm_prefix_query_ranges, log2_lse_to_ln)
 * ========================================================================================== */
/** @defgroup group_cpp_other Other helpers
 * @ingroup group_cpp
 * The rest of vLLM's newest attention utils: max_local_attention_virtual_batches,
 * compute_mm_prefix_range_tensor, fill_mm_prefix_query_ranges, log2_lse_to_ln.
 * @{ */

/** The two bounds of cattn_max_local_attention_virtual_batches. Since: 1.1
 * See docs/api/max_local_attention_virtual_batches.md. */
struct local_attention_virtual_batch_bounds {
  int64_t bound = 0;                 /**< vLLM's, exactly */
  int64_t bound_with_empty_rows = 0; /**< holds with zero-length rows too */
};
/** Calls: cattn_max_local_attention_virtual_batches. Throws: error. Since: 1.1
 * See docs/api/max_local_attention_virtual_batches.md. */
inline local_attention_virtual_batch_bounds max_local_attention_virtual_batches(
    int64_t attn_chunk_size, int64_t max_num_seqs, int64_t max_num_batched_tokens) {
  cattn_max_local_attention_virtual_batches_args_t a =
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT;
  a.attn_chunk_size = attn_chunk_size;
  a.max_num_seqs = max_num_seqs;
  a.max_num_batched_tokens = max_num_batched_tokens;
  detail::check_call(cattn_max_local_attention_virtual_batches(&a));
  return {a.bound, a.bound_with_empty_rows};
}

/** What cattn_compute_mm_prefix_range_tensor reports. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
struct mm_prefix_range_shape {
  int64_t max_ranges = 0; /**< ranges per request after padding, 0 for None */
  bool is_none = false;   /**< vLLM returns None (out not written) */
};
/** The padded range tensor into out [num_seqs, max_ranges, 2] (absent: the size query); host
 * only. range_offsets absent (and ranges) is vLLM's None. Calls:
 * cattn_compute_mm_prefix_range_tensor. Throws: error. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
inline mm_prefix_range_shape compute_mm_prefix_range_tensor(index_cview range_offsets,
                                                            index_cview ranges, index_view out) {
  detail::tensor_arg o(range_offsets), r(ranges), t(out);
  cattn_mm_prefix_range_tensor_args_t a = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
  a.range_offsets = o.get();
  a.ranges = r.get();
  a.out = t.get();
  detail::check_call(cattn_compute_mm_prefix_range_tensor(&a));
  return {a.max_ranges, a.is_none != 0};
}
/** One-call, from CSR offsets [num_seqs + 1] and ranges [n, 2]: std::nullopt where vLLM returns
 * None, else [num_seqs, max_ranges, 2]. Calls: cattn_compute_mm_prefix_range_tensor twice.
 * Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::optional<host_tensor<Out>> compute_mm_prefix_range_tensor(index_cview range_offsets,
                                                               index_cview ranges) {
  const mm_prefix_range_shape s = compute_mm_prefix_range_tensor(range_offsets, ranges, {});
  if (s.is_none) return std::nullopt;
  host_tensor<Out> out({std::max<int64_t>(range_offsets.numel() - 1, 0), s.max_ranges, 2});
  compute_mm_prefix_range_tensor(range_offsets, ranges, out);
  return out;
}
/** One-call, from each request's list of (start, end) ranges (vLLM's dict in request order);
 * no request at all is None. Calls: as above. Allocates: the CSR form and the result.
 * Throws: error. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
std::optional<host_tensor<Out>> compute_mm_prefix_range_tensor(
    const std::vector<std::vector<std::pair<int64_t, int64_t>>>& ranges_per_request) {
  std::vector<int64_t> offsets{0};
  std::vector<int64_t> flat;
  for (const auto& req : ranges_per_request) {
    for (const auto& r : req) {
      flat.push_back(r.first);
      flat.push_back(r.second);
    }
    offsets.push_back(static_cast<int64_t>(flat.size() / 2));
  }
  return compute_mm_prefix_range_tensor<Out>(
      offsets, tensor_view<const int64_t>(flat.data(), {static_cast<int64_t>(flat.size() / 2), 2}));
}
/** The query rows' ranges into out [capacity >= T, 2]; returns the rows written (0: skip the
 * mask). Calls: cattn_fill_mm_prefix_query_ranges. Throws: error. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
inline int64_t fill_mm_prefix_query_ranges(index_cview range_offsets, index_cview ranges,
                                           index_cview query_start_loc_cpu,
                                           index_cview seq_lens_cpu, index_view out) {
  detail::tensor_arg o(range_offsets), r(ranges), q(query_start_loc_cpu), s(seq_lens_cpu),
      t(out);
  cattn_fill_mm_prefix_query_ranges_args_t a = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
  a.range_offsets = o.get();
  a.ranges = r.get();
  a.query_start_loc_cpu = q.get();
  a.seq_lens_cpu = s.get();
  a.out = t.get();
  detail::check_call(cattn_fill_mm_prefix_query_ranges(&a));
  return a.rows;
}
/** One-call: [rows, 2] with rows 0 (skip the mask) or T = query_start_loc_cpu[B]. Calls:
 * cattn_fill_mm_prefix_query_ranges. Allocates: the result. Throws: error. Since: 1.1
 * See docs/api/compute_mm_prefix_range_tensor.md. */
template <class Out = int64_t, detail::enable_index_t<Out> = 0>
host_tensor<Out> fill_mm_prefix_query_ranges(index_cview range_offsets, index_cview ranges,
                                             index_cview query_start_loc_cpu,
                                             index_cview seq_lens_cpu) {
  detail::require_host(query_start_loc_cpu, "cattn::fill_mm_prefix_query_ranges",
                       "query_start_loc_cpu");
  int64_t tokens = 0;
  const int64_t entries = query_start_loc_cpu.numel();
  if (query_start_loc_cpu.ndim() == 1 && entries > 0)
    tokens = std::max<int64_t>(detail::read_index(query_start_loc_cpu, entries - 1), 0);
  host_tensor<Out> out({tokens, 2});
  const int64_t rows =
      fill_mm_prefix_query_ranges(range_offsets, ranges, query_start_loc_cpu, seq_lens_cpu, out);
  if (rows != tokens) return host_tensor<Out>({rows, 2});
  return out;
}

/** out = lse * ln 2 (host, or one kernel on `stream`); out may be the very view of lse. Calls:
 * cattn_log2_lse_to_ln. Allocates: nothing. Throws: error. Since: 1.1
 * See docs/api/log2_lse_to_ln.md. */
inline void log2_lse_to_ln(any_cview lse, any_view out,
                           cattn_lse_rounding_t half_rounding = CATTN_LSE_ROUNDING_TORCH,
                           stream_ref stream = {}) {
  detail::tensor_arg l(lse), o(out);
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = l.get();
  a.out = o.get();
  a.half_rounding = static_cast<int64_t>(half_rounding);
  a.stream = stream.get();
  detail::check_call(cattn_log2_lse_to_ln(&a));
}
/** In place: lse *= ln 2. Calls: cattn_log2_lse_to_ln. Throws: error. Since: 1.1
 * See docs/api/log2_lse_to_ln.md. */
inline void log2_lse_to_ln_in_place(any_view lse,
                                    cattn_lse_rounding_t half_rounding = CATTN_LSE_ROUNDING_TORCH,
                                    stream_ref stream = {}) {
  log2_lse_to_ln(any_cview(lse), lse, half_rounding, stream);
}
/** One-call, on a host view of any shape (float, double, or 16-bit floats viewed with
 * with_dtype): a new array of its shape and dtype. Calls: cattn_log2_lse_to_ln. Allocates: the
 * result. Throws: error. Since: 1.1
 * See docs/api/log2_lse_to_ln.md. */
template <class T, std::enable_if_t<has_dtype_v<T>, int> = 0>
host_tensor<std::remove_const_t<T>> log2_lse_to_ln(
    const tensor_view<T>& lse, cattn_lse_rounding_t half_rounding = CATTN_LSE_ROUNDING_TORCH) {
  std::vector<int64_t> shape;
  for (int32_t i = 0; i < lse.ndim(); ++i) shape.push_back(lse.shape(i));
  host_tensor<std::remove_const_t<T>> out(std::move(shape), lse.dtype());
  log2_lse_to_ln(lse, out, half_rounding);
  return out;
}
/** One-call, on a vector of float or double. Calls: cattn_log2_lse_to_ln. Allocates: the
 * result. Throws: error. Since: 1.1
 * See docs/api/log2_lse_to_ln.md. */
template <class T, class A, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
std::vector<T> log2_lse_to_ln(const std::vector<T, A>& lse,
                              cattn_lse_rounding_t half_rounding = CATTN_LSE_ROUNDING_TORCH) {
  std::vector<T> out(lse.size());
  log2_lse_to_ln(lse, out, half_rounding);
  return out;
}

/** @} */

}  // namespace cattn

#endif /* CATTN_HPP */
