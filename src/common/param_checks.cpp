// SPDX-License-Identifier: Apache-2.0
#include "common/param_checks.h"

#include <limits>
#include <string>

#include "cattn.h"
#include "common/error.h"
#include "common/tensor_arg.h"

namespace cattn {
namespace {

[[noreturn]] void fail_param(const char* fn, const char* prefix, const char* field,
                             const char* problem, const std::string& got,
                             const std::string& expected) {
  const std::string name = std::string(prefix) + field;
  fail_arg(CATTN_INVALID_ARGUMENT, fn, name.c_str(), problem, got, expected);
}

}  // namespace

void check_dcp_params(const char* fn, const char* prefix, int64_t size, int64_t rank,
                      int64_t interleave) {
  if (size < 1)
    fail_param(fn, prefix, "dcp_size", "is out of range", std::to_string(size), ">= 1");
  if (interleave < 1)
    fail_param(fn, prefix, "dcp_kv_cache_interleave_size", "is out of range",
               std::to_string(interleave), ">= 1");
  // vLLM multiplies rank offsets by the interleave size in int32; past this bound it wraps
  // and returns wrong lengths, so the product is bounded for host and device alike.
  if (interleave > std::numeric_limits<int32_t>::max() / size)
    fail_param(fn, prefix, "dcp_kv_cache_interleave_size",
               (std::string("times ") + prefix + "dcp_size exceeds INT32_MAX").c_str(),
               std::to_string(interleave) + " * " + std::to_string(size),
               "a product <= 2147483647 (vLLM computes in int32)");
  if (rank != CATTN_DCP_ALL_RANKS && (rank < 0 || rank >= size))
    fail_param(fn, prefix, "dcp_rank", "is out of range", std::to_string(rank),
               "0.." + std::to_string(size - 1) + " or CATTN_DCP_ALL_RANKS (-1)");
}

int64_t check_mamba_params(const char* fn, const char* prefix, int32_t mode, int32_t reserved0,
                           int64_t block_size, int64_t num_speculative_blocks) {
  if (mode != CATTN_MAMBA_CACHE_MODE_NONE && mode != CATTN_MAMBA_CACHE_MODE_ALL &&
      mode != CATTN_MAMBA_CACHE_MODE_ALIGN)
    fail_param(fn, prefix, "mamba_cache_mode", "is not a cache mode", std::to_string(mode),
               "CATTN_MAMBA_CACHE_MODE_NONE (0), _ALL (1) or _ALIGN (2)");
  if (reserved0 != 0)
    fail_param(fn, prefix, "reserved0", "is not zero", std::to_string(reserved0), "0");
  if (mode != CATTN_MAMBA_CACHE_MODE_ALIGN) return 0;
  if (block_size < 1)
    fail_param(fn, prefix, "block_size", "is out of range", std::to_string(block_size), ">= 1");
  if (num_speculative_blocks < 0)
    fail_param(fn, prefix, "num_speculative_blocks", "is negative",
               std::to_string(num_speculative_blocks), ">= 0");
  const std::string what = std::string("1 + ") + prefix + "num_speculative_blocks";
  return checked_add(fn, what.c_str(), 1, num_speculative_blocks);
}

void check_block_m(const char* fn, const char* prefix, int64_t block_m) {
  if (block_m < 1)
    fail_param(fn, prefix, "block_m", "is out of range", std::to_string(block_m), ">= 1");
}

void check_local_attention_sizes(const char* fn, const char* prefix, int64_t chunk,
                                 int64_t block_size) {
  if (chunk < 1)
    fail_param(fn, prefix, "attn_chunk_size", "is not positive", std::to_string(chunk), ">= 1");
  if (block_size < 1)
    fail_param(fn, prefix, "block_size", "is not positive", std::to_string(block_size), ">= 1");
  if (chunk % block_size != 0)
    fail_param(fn, prefix, "block_size",
               (std::string("does not divide ") + prefix + "attn_chunk_size").c_str(),
               std::to_string(block_size) + " for a chunk of " + std::to_string(chunk),
               "a divisor of the chunk size");
}

void check_extend_n(const char* fn, const char* prefix, int64_t n) {
  if (n < 0) fail_param(fn, prefix, "n", "is negative", std::to_string(n), ">= 0");
}

void check_dcp_out(const TensorArg& out, int64_t batch, int64_t size, bool all) {
  out.expect_index_dtype().expect_writable();
  if (all && (out.ndim() == 2 || size > 1)) {
    if (out.ndim() != 2)
      fail_arg(CATTN_INVALID_ARGUMENT, out.fn(), out.name(), "has the wrong ndim",
               std::to_string(out.ndim()) + " " + out.shape_string(),
               "2 ([B, dcp_size] for all ranks)");
    out.expect_out_size(0, batch).expect_out_size(1, size);
  } else {
    if (out.ndim() != 1)
      fail_arg(CATTN_INVALID_ARGUMENT, out.fn(), out.name(), "has the wrong ndim",
               std::to_string(out.ndim()) + " " + out.shape_string(),
               all ? "1 or 2 ([B] or [B, 1] when dcp_size is 1)" : "1 ([B] for one rank)");
    out.expect_out_size(0, batch);
  }
}

void check_causal_conv1d_device_outputs(const TensorArg* const (&outs)[5], const TensorArg& tot,
                                        int64_t batch) {
  for (const TensorArg* o : outs)
    if (o->present()) o->expect_ndim(1).expect_index_dtype().expect_writable();
  if (outs[0]->present()) outs[0]->expect_out_size(0, batch);
  if (tot.present()) tot.expect_ndim(1).expect_index_dtype().expect_out_size(0, 1);
}

int64_t check_local_attention_capturable_tensors(const LocalAttentionCapturableTensors& t,
                                                 int64_t pages) {
  t.seq_lens.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
  const int64_t batch = t.seq_lens.size(0);
  t.query_start_loc.expect_ndim(1).expect_index_dtype().expect_scan_bounded().expect_size(
      0, batch + 1);
  t.block_table.expect_ndim(2).expect_index_dtype().expect_size(0, batch);
  if (t.block_table.size(1) < 1)
    fail_arg(CATTN_INVALID_ARGUMENT, t.block_table.fn(), t.block_table.name(), "has no columns",
             t.block_table.shape_string(), "at least one column");
  t.seq_lens_out.expect_ndim(1).expect_index_dtype().expect_writable();
  const int64_t cap = t.seq_lens_out.size(0);
  t.query_start_loc_out.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(
      0, cap + 1);
  if (t.num_computed_tokens_out.present())
    t.num_computed_tokens_out.expect_ndim(1).expect_index_dtype().expect_writable().expect_size(
        0, cap);
  if (t.block_table_out.present()) {
    t.block_table_out.expect_ndim(2).expect_same_dtype(t.block_table).expect_writable();
    t.block_table_out.expect_size(0, cap).expect_size(1, pages);
  }
  return cap;
}

void expect_at_least(const char* fn, const char* name, int64_t v, int64_t min) {
  if (v < min)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is out of range", std::to_string(v),
             ">= " + std::to_string(min));
}
void expect_at_least(const char* fn, const char* prefix, const char* field, int64_t v,
                     int64_t min) {
  if (v < min) expect_at_least(fn, (std::string(prefix) + field).c_str(), v, min);
}

namespace {

// DLPack's kDLBool (6), which older dlpack.h releases do not name.
constexpr uint8_t kDLBoolCode = 6;

void expect_byte_dtype(const TensorArg& t) {
  const DLDataType d = t.raw()->dtype;
  if (!(d.bits == 8 && d.lanes == 1 &&
        (d.code == kDLBoolCode || d.code == kDLUInt || d.code == kDLInt)))
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "has an unsupported dtype",
             "code " + std::to_string(d.code) + " bits " + std::to_string(d.bits) + " lanes " +
                 std::to_string(d.lanes),
             "one byte per entry (bool, uint8 or int8)");
}

}  // namespace

void expect_flags(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_size(0, n);
  expect_byte_dtype(t);
}

void expect_flags_output(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_writable().expect_capacity(n);
  expect_byte_dtype(t);
}

void expect_slot_output(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_writable().expect_capacity(n);
  const DLDataType d = t.raw()->dtype;
  if (d.code != kDLInt || d.bits != 64 || d.lanes != 1)
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "has the wrong dtype", "not int64",
             "int64 (slots pass 2^31)");
}

bool flag_at(const TensorArg* t, int64_t i) {
  return present(t) && read_flag(*t, i);
}

}  // namespace cattn
