// SPDX-License-Identifier: Apache-2.0
// The rules every call keeps for its arguments (cattn.h, promises 4 and 9, spans, reserved
// fields, handles), and the reproducers of the 1.1 hostile-input probe, each placed in memory
// with canaries: the status and message now, and nothing written. Each reproducer's comment
// says what libcattn did before the fix.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/canary.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

// A metadata struct of two requests (query lengths 2 and 3), host tensors.
struct TwoRequests {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32());
  HostTensor seq = HostTensor::of({4, 6}, i32());
  HostTensor slots = HostTensor::of({1, 2, 3, 4, 5}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  TwoRequests() {
    md.query_start_loc = qsl.dl();
    md.seq_lens = seq.dl();
    md.slot_mapping = slots.dl();
    md.num_reqs = 2;
    md.num_actual_tokens = 5;
  }
};

// Expects `code` and a message holding `needle`, with every byte of `buf` (canaries
// included) as it was before the call.
void expect_refused_untouched(cattn_status_t s, cattn_status_t code, const std::string& needle,
                              const CanaryBuffer& buf, const std::vector<uint8_t>& before) {
  EXPECT_EQ(s, code) << cattn_status_string(s) << ": " << cattn_last_error_message();
  EXPECT_NE(std::string(cattn_last_error_message()).find(needle), std::string::npos)
      << "message: " << cattn_last_error_message() << "\nexpected: " << needle;
  EXPECT_TRUE(buf.canaries_intact());
  EXPECT_TRUE(buf.unchanged(before)) << "a refused call wrote to the caller's memory";
}

// --- The probe's reproducers -------------------------------------------------------------

// Probe 1. Before: CATTN_OK, with the views built in storage and *out written over them:
// out->query_start_loc pointing at itself, ndim 184, shape NULL.
TEST(argument_rules, UnpaddedStorageOverOutIsRefused) {
  TwoRequests b;
  CanaryBuffer buf(sizeof(cattn_unpadded_storage_t));
  auto* storage = new (buf.payload()) cattn_unpadded_storage_t;
  storage->struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  // out at the start of storage: its struct_size is storage's, a "newer" metadata struct.
  auto* out = reinterpret_cast<cattn_common_attn_metadata_t*>(buf.payload());
  cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
  a.metadata = &b.md;
  a.out = out;
  a.storage = storage;
  a.num_actual_reqs = 1;
  a.num_actual_tokens = 2;
  const auto before = buf.snapshot();
  expect_refused_untouched(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT,
                           "args->storage overlaps another output (got memory shared with "
                           "args->out",
                           buf, before);
}

// Probe 1, storage over args. Before: CATTN_OK, the call overwriting its own args.
TEST(argument_rules, UnpaddedStorageOverArgsIsRefused) {
  TwoRequests b;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  CanaryBuffer buf(sizeof(cattn_unpadded_storage_t));
  auto* storage = new (buf.payload()) cattn_unpadded_storage_t;
  storage->struct_size = CATTN_UNPADDED_STORAGE_SIZE;
  auto* a = new (buf.payload() + 64) cattn_unpadded_args_t(CATTN_UNPADDED_ARGS_INIT);
  a->metadata = &b.md;
  a->out = &out;
  a->storage = storage;
  a->num_actual_reqs = 1;
  a->num_actual_tokens = 2;
  const auto before = buf.snapshot();
  expect_refused_untouched(cattn_unpadded(a), CATTN_INVALID_ARGUMENT,
                           "args->storage overlaps an input (got memory shared with args,",
                           buf, before);
}

// Probe 3. metadata->struct_size = SIZE_MAX ("a newer struct") wrapped md + struct_size to
// md - 1, so a storage starting inside the metadata passed the storage-over-metadata check.
// Here storage starts at md + 64: its struct_size is md->logits_indices_padded, a pointer the
// call copies without reading. Before: CATTN_OK, UBSan "addition of unsigned offset
// overflowed", and the caller's metadata overwritten by the views (num_reqs 4 -> a pointer).
TEST(argument_rules, UnpaddedStorageOverHugeMetadataIsRefused) {
  TwoRequests b;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  CanaryBuffer buf(64 + sizeof(cattn_unpadded_storage_t));
  auto* md = new (buf.payload()) cattn_common_attn_metadata_t(b.md);
  md->struct_size = SIZE_MAX;
  md->num_reqs = 4;
  md->logits_indices_padded = reinterpret_cast<DLTensor*>(CATTN_UNPADDED_STORAGE_SIZE);
  auto* storage = reinterpret_cast<cattn_unpadded_storage_t*>(buf.payload() + 64);
  ASSERT_EQ(storage->struct_size, CATTN_UNPADDED_STORAGE_SIZE);
  cattn_unpadded_args_t a = CATTN_UNPADDED_ARGS_INIT;
  a.metadata = md;
  a.out = &out;
  a.storage = storage;
  a.num_actual_reqs = 1;
  a.num_actual_tokens = 2;
  const auto before = buf.snapshot();
  expect_refused_untouched(cattn_unpadded(&a), CATTN_INVALID_ARGUMENT,
                           "args->storage overlaps an input (got memory shared with "
                           "args->metadata",
                           buf, before);
  EXPECT_EQ(md->num_reqs, 4);
}

// SIZE_MAX alone is a newer caller's struct: read as 1.1, nothing past it touched.
TEST(argument_rules, HugeStructSizeIsReadAsTheNewest) {
  TwoRequests b;
  b.md.struct_size = SIZE_MAX;
  HostTensor out({2}, i64());
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = &b.md;
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_naive_query_lens(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{2, 3}));
}

// Probe 2: extend's 1.1 input seq_lens_cpu_upper_bound was missing from its overlap check.
// Before: with out->query_start_loc (int32 [3]) 4 bytes into the bound (int64 {4, 7}),
// CATTN_OK and out->seq_lens_cpu_upper_bound = {5, 30064771076} where {5, 8} is right; 12
// placements were accepted.
TEST(argument_rules, ExtendOutputsOverTheUpperBoundAreRefused) {
  struct Placement {
    const char* out;
    int64_t byte_offset;
  };
  const char* outs[] = {"args->out->query_start_loc", "args->out->query_start_loc_cpu",
                        "args->out->seq_lens", "args->out->seq_lens_cpu"};
  for (const char* which : outs) {
    for (int64_t at : {int64_t{0}, int64_t{4}, int64_t{3}}) {
      SCOPED_TRACE(std::string(which) + " at +" + std::to_string(at) + " bytes");
      HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), qsl_cpu = HostTensor::of({0, 2, 5}, i32());
      HostTensor seq = HostTensor::of({3, 7}, i32()), seq_cpu = HostTensor::of({3, 7}, i32());
      HostTensor o_qsl({3}, i32()), o_qsl_cpu({3}, i32()), o_seq({2}, i32()),
          o_seq_cpu({2}, i32()), o_upper({2}, i64());
      CanaryBuffer buf(64);
      buf.store<int64_t>(0, 4);
      buf.store<int64_t>(8, 7);
      View upper(buf.payload(), 0, {2}, i64());
      const bool starts = std::strstr(which, "query_start_loc") != nullptr;
      View placed(buf.payload(), static_cast<uint64_t>(at), {starts ? 3 : 2}, i32());
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
      md.query_start_loc = qsl.dl();
      md.query_start_loc_cpu = qsl_cpu.dl();
      md.seq_lens = seq.dl();
      md.seq_lens_cpu = seq_cpu.dl();
      md.seq_lens_cpu_upper_bound = upper.dl();
      md.num_reqs = 2;
      cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
      out.query_start_loc = o_qsl.dl();
      out.query_start_loc_cpu = o_qsl_cpu.dl();
      out.seq_lens = o_seq.dl();
      out.seq_lens_cpu = o_seq_cpu.dl();
      out.seq_lens_cpu_upper_bound = o_upper.dl();
      DLTensor** slot = which == outs[0]   ? &out.query_start_loc
                        : which == outs[1] ? &out.query_start_loc_cpu
                        : which == outs[2] ? &out.seq_lens
                                           : &out.seq_lens_cpu;
      *slot = placed.dl();
      cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
      a.metadata = &md;
      a.out = &out;
      a.n = 1;
      const auto before = buf.snapshot();
      const auto upper_out_before = o_upper.values();
      expect_refused_untouched(
          cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
          std::string(which) +
              " overlaps an input (got memory shared with args->metadata->seq_lens_cpu_upper_bound",
          buf, before);
      EXPECT_EQ(o_upper.values(), upper_out_before);
    }
  }
}

// The same call with the bound apart extends it: {4, 7} + 1.
TEST(argument_rules, ExtendUpperBoundApartIsExtended) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), seq = HostTensor::of({3, 7}, i32());
  HostTensor upper = HostTensor::of({4, 7}, i64());
  HostTensor o_qsl({3}, i32()), o_seq({2}, i32()), o_upper({2}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  md.seq_lens_cpu_upper_bound = upper.dl();
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc = o_qsl.dl();
  out.seq_lens = o_seq.dl();
  out.seq_lens_cpu_upper_bound = o_upper.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &md;
  a.out = &out;
  a.n = 1;
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  EXPECT_EQ(o_upper.values(), (std::vector<int64_t>{5, 8}));
  // In place (the very same view) stays allowed.
  out.seq_lens_cpu_upper_bound = upper.dl();
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  EXPECT_EQ(upper.values(), (std::vector<int64_t>{5, 8}));
}

// Minor: extend's outputs over its input DCP lengths, which it does not read, were accepted
// (41 placements). Now only the DCP output exactly over its own input (in place) is.
TEST(argument_rules, ExtendOutputsOverInputDcpLengths) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), seq = HostTensor::of({3, 7}, i32());
  HostTensor o_qsl({3}, i32()), o_seq({2}, i32()), o_dcp({2}, i32());
  CanaryBuffer buf(32);
  View dcp(buf.payload(), 0, {2}, i32());
  View over_dcp(buf.payload(), 4, {3}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  md.dcp_local_seq_lens = dcp.dl();
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc = over_dcp.dl();
  out.seq_lens = o_seq.dl();
  out.dcp_local_seq_lens = o_dcp.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &md;
  a.out = &out;
  a.n = 1;
  a.dcp_size = 2;
  a.dcp_rank = 0;
  a.dcp_kv_cache_interleave_size = 1;
  const auto before = buf.snapshot();
  expect_refused_untouched(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                           "args->out->query_start_loc overlaps an input (got memory shared "
                           "with args->metadata->dcp_local_seq_lens",
                           buf, before);
  out.query_start_loc = o_qsl.dl();
  out.dcp_local_seq_lens = dcp.dl();  // in place
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  // seq_lens {4, 8} split over 2 ranks, rank 0, interleave 1: {2, 4}.
  EXPECT_EQ(buf.load<int32_t>(0), 2);
  EXPECT_EQ(buf.load<int32_t>(4), 4);
  EXPECT_TRUE(buf.canaries_intact());
}

// Probe 4: a 1-byte is_prefilling_cpu view with stride 2^61 claims 3 * 2^61 + 1 bytes, which
// fits int64, so the span check passed and the read faulted. Before: SEGV in
// FlagReader::operator[] (wider dtypes with the stride got "overflows int64"). Now every
// dtype gets one message.
TEST(argument_rules, HugeStrideViewsAreRefusedForEveryDtype) {
  HostTensor qsl = HostTensor::of({0, 1, 2, 3, 4}, i32());
  CanaryBuffer buf(16);
  for (int bits : {8, 16, 32, 64}) {
    SCOPED_TRACE(bits);
    View flags(buf.payload(), 0, {4}, dtype_bits(bits), {int64_t{1} << 61});
    cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
    a.query_start_loc_cpu = qsl.dl();
    a.is_prefilling_cpu = flags.dl();
    a.num_reqs = 4;
    a.num_actual_tokens = 4;
    a.max_query_len = 1;
    a.treat_short_extends_as_decodes = 0;  // so the flags are read
    const auto before = buf.snapshot();
    expect_refused_untouched(cattn_split_decodes_and_prefills(&a), CATTN_INVALID_ARGUMENT,
                             "args->is_prefilling_cpu spans more bytes than an address space "
                             "holds (got shape [4], strides [2305843009213693952], " +
                                 std::to_string(bits / 8) + "-byte elements",
                             buf, before);
  }
}

// The span limit is 2^57 bytes: one byte more is refused, whatever the layout.
TEST(argument_rules, SpanLimitIsTwoToThe57) {
  HostTensor qsl = HostTensor::of({0, 1, 2}, i32());
  CanaryBuffer buf(16);
  View flags(buf.payload(), 0, {2}, dtype_bits(8), {int64_t{1} << 57});  // 2^57 + 1 bytes
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  a.query_start_loc_cpu = qsl.dl();
  a.is_prefilling_cpu = flags.dl();
  a.num_reqs = 2;
  a.num_actual_tokens = 2;
  a.max_query_len = 1;
  a.treat_short_extends_as_decodes = 0;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(&a), CATTN_INVALID_ARGUMENT,
                     "args->is_prefilling_cpu spans more bytes");
}

// Probe 5: the handle checks formed &plan->magic / &ctx->magic before the registry vouched
// for the pointer. Before: the right status, with UBSan's "member access within misaligned
// address" on a forged handle (this suite runs under UBSan in CI).
TEST(argument_rules, ForgedHandlesAtOddAddressesAreRefusedUnread) {
  alignas(16) unsigned char forged[64];
  std::memset(forged, 0xAB, sizeof forged);
  void* odd = forged + 1;
  cattn_step_plan_shape_t shape = CATTN_STEP_PLAN_SHAPE_INIT;
  EXPECT_CATTN_ERROR(cattn_step_plan_get_shape(static_cast<cattn_step_plan_t*>(odd), &shape),
                     CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  size_t bytes = 0;
  EXPECT_CATTN_ERROR(
      cattn_step_plan_workspace_size(static_cast<cattn_step_plan_t*>(odd), &bytes),
      CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  int64_t v = 0, p = 0;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_get_shape(
                         static_cast<cattn_local_attention_plan_t*>(odd), &v, &p),
                     CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(
                         static_cast<cattn_context_t*>(odd), CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx is not a live handle");
  cattn_kv_cache_layout_t layout;
  EXPECT_CATTN_ERROR(
      cattn_get_resolved_kv_cache_layout(static_cast<cattn_context_t*>(odd), &layout),
      CATTN_INVALID_ARGUMENT, "ctx is not a live handle");
  int32_t rank = 0;
  const cattn_status_t s = cattn_comm_get_rank(static_cast<cattn_comm_t*>(odd), &rank);
  EXPECT_TRUE(s == CATTN_INVALID_ARGUMENT || s == CATTN_NOT_SUPPORTED)
      << cattn_status_string(s) << ": " << cattn_last_error_message();
  cattn_step_plan_destroy(static_cast<cattn_step_plan_t*>(odd));
  cattn_local_attention_plan_destroy(static_cast<cattn_local_attention_plan_t*>(odd));
  cattn_context_destroy(static_cast<cattn_context_t*>(odd));
  for (unsigned char c : forged) ASSERT_EQ(c, 0xAB) << "a forged handle's memory was written";
}

// --- One overlap rule: the args and metadata structs are arguments too -------------------

// Outputs over the call's own args struct were accepted by several calls (nothing broke,
// because they snapshot what they read). Now every call refuses them.
TEST(argument_rules, OutputsOverTheArgsStructAreRefused) {
  {  // split_prefill_chunks: chunks over args.
    HostTensor seq = HostTensor::of({3, 5}, i64());
    CanaryBuffer buf(sizeof(cattn_split_prefill_chunks_args_t) + 64);
    auto* a = new (buf.payload()) cattn_split_prefill_chunks_args_t(
        CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT);
    View chunks(buf.payload(), 16, {2, 2}, i32());
    a->seq_lens_cpu = seq.dl();
    a->workspace_size = 8;
    a->chunks = chunks.dl();
    const auto before = buf.snapshot();
    expect_refused_untouched(cattn_split_prefill_chunks(a), CATTN_INVALID_ARGUMENT,
                             "args->chunks overlaps an input (got memory shared with args,",
                             buf, before);
  }
  {  // reorder: index_map over args.
    HostTensor s = HostTensor::of({1, 4}, i64()), c = HostTensor::of({3, 0}, i64()),
               p = HostTensor::of({3, 9}, i64());
    CanaryBuffer buf(sizeof(cattn_reorder_batch_args_t) + 64);
    auto* a = new (buf.payload()) cattn_reorder_batch_args_t(CATTN_REORDER_BATCH_ARGS_INIT);
    View map(buf.payload(), 8, {2}, i64());
    a->num_scheduled_tokens = s.dl();
    a->num_computed_tokens = c.dl();
    a->num_prompt_tokens = p.dl();
    a->index_map = map.dl();
    const auto before = buf.snapshot();
    expect_refused_untouched(cattn_reorder_batch_to_split_decodes_and_prefills(a),
                             CATTN_INVALID_ARGUMENT,
                             "args->index_map overlaps an input (got memory shared with args,",
                             buf, before);
  }
  {  // compute_mm_prefix_range_tensor: out over args.
    HostTensor offsets = HostTensor::of({0, 1}, i64()), ranges = HostTensor::of({0, 2}, i64(), {1, 2});
    CanaryBuffer buf(sizeof(cattn_mm_prefix_range_tensor_args_t) + 64);
    auto* a = new (buf.payload())
        cattn_mm_prefix_range_tensor_args_t(CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT);
    View out(buf.payload(), 8, {1, 1, 2}, i64());
    a->range_offsets = offsets.dl();
    a->ranges = ranges.dl();
    a->out = out.dl();
    const auto before = buf.snapshot();
    expect_refused_untouched(cattn_compute_mm_prefix_range_tensor(a), CATTN_INVALID_ARGUMENT,
                             "args->out overlaps an input (got memory shared with args,", buf,
                             before);
  }
  {  // fill_mm_prefix_query_ranges: out over args.
    HostTensor qsl = HostTensor::of({0, 2}, i64()), seq = HostTensor::of({2}, i64());
    CanaryBuffer buf(sizeof(cattn_fill_mm_prefix_query_ranges_args_t) + 64);
    auto* a = new (buf.payload()) cattn_fill_mm_prefix_query_ranges_args_t(
        CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT);
    View out(buf.payload(), 0, {2, 2}, i64());
    a->query_start_loc_cpu = qsl.dl();
    a->seq_lens_cpu = seq.dl();
    a->out = out.dl();
    const auto before = buf.snapshot();
    expect_refused_untouched(cattn_fill_mm_prefix_query_ranges(a), CATTN_INVALID_ARGUMENT,
                             "args->out overlaps an input (got memory shared with args,", buf,
                             before);
  }
}

// token_to_req_indices' buffer over the input metadata struct was accepted.
TEST(argument_rules, OutputsOverTheMetadataStructAreRefused) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32());
  CanaryBuffer buf(sizeof(cattn_common_attn_metadata_t) + 64);
  auto* md = new (buf.payload()) cattn_common_attn_metadata_t(CATTN_COMMON_ATTN_METADATA_INIT);
  md->query_start_loc = qsl.dl();
  md->num_actual_tokens = 5;
  View out(buf.payload(), 72, {5}, i32());
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = md;
  a.buffer = out.dl();
  const auto before = buf.snapshot();
  expect_refused_untouched(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT,
                           "args->buffer overlaps an input (got memory shared with "
                           "args->metadata,",
                           buf, before);
}

// An output's elements over an input's DLTensor struct, or over its own shape, would change
// what the call reads of them: refused like any other overlap.
TEST(argument_rules, OutputsOverDescriptorsAreRefused) {
  CanaryBuffer buf(256);
  auto* lse_dl = new (buf.payload()) DLTensor{};
  HostTensor lse = HostTensor::of({0, 0, 0, 0}, f32());
  *lse_dl = *lse.dl();
  View out(buf.payload(), 8, {4}, f32());  // over lse's DLTensor struct
  cattn_log2_lse_to_ln_args_t a = CATTN_LOG2_LSE_TO_LN_ARGS_INIT;
  a.lse = lse_dl;
  a.out = out.dl();
  auto before = buf.snapshot();
  expect_refused_untouched(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT,
                           "args->out overlaps an input (got memory shared with args->lse's "
                           "DLTensor struct",
                           buf, before);
  // Over its own shape array.
  CanaryBuffer shape_buf(64);
  shape_buf.store<int64_t>(0, 4);
  HostTensor real_out({4}, f32());
  DLTensor self = *real_out.dl();
  self.shape = reinterpret_cast<int64_t*>(shape_buf.payload());
  self.data = shape_buf.payload();
  self.byte_offset = 0;
  a.lse = lse.dl();
  a.out = &self;
  before = shape_buf.snapshot();
  expect_refused_untouched(cattn_log2_lse_to_ln(&a), CATTN_INVALID_ARGUMENT,
                           "args->out overlaps an input (got memory shared with args->out's "
                           "shape array",
                           shape_buf, before);
}

// --- One struct_size rule ----------------------------------------------------------------

// A size between two versions was read as 1.0 by the metadata, extend and local-attention
// args, and refused by get_dcp_local_seq_lens. Now every versioned struct refuses it.
TEST(argument_rules, StructSizesBetweenVersionsAreRefused) {
  const char* between = "has a struct_size that no version of the header has";
  TwoRequests b;
  HostTensor out({2}, i64());
  cattn_naive_query_lens_args_t nq = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  nq.metadata = &b.md;
  nq.out = out.dl();
  for (size_t size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0 + 1;
       size < CATTN_COMMON_ATTN_METADATA_SIZE_1_1; ++size) {
    b.md.struct_size = size;
    EXPECT_CATTN_ERROR(cattn_naive_query_lens(&nq), CATTN_INVALID_ARGUMENT,
                       std::string("args->metadata ") + between);
  }
  b.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0 - 1;
  EXPECT_CATTN_ERROR(cattn_naive_query_lens(&nq), CATTN_INVALID_ARGUMENT,
                     "args->metadata has struct_size too small");
  for (size_t size : {CATTN_COMMON_ATTN_METADATA_SIZE_1_0, CATTN_COMMON_ATTN_METADATA_SIZE_1_1,
                      CATTN_COMMON_ATTN_METADATA_SIZE_1_1 + 8, SIZE_MAX}) {
    b.md.struct_size = size;
    EXPECT_CATTN_OK(cattn_naive_query_lens(&nq));
  }
  b.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;

  HostTensor o_qsl({3}, i32()), o_seq({2}, i32());
  cattn_common_attn_metadata_t eo = CATTN_COMMON_ATTN_METADATA_INIT;
  eo.query_start_loc = o_qsl.dl();
  eo.seq_lens = o_seq.dl();
  cattn_extend_all_queries_by_n_args_t ea = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  ea.metadata = &b.md;
  ea.out = &eo;
  ea.n = 1;
  ea.struct_size = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0 + 8;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&ea), CATTN_INVALID_ARGUMENT,
                     std::string("args ") + between);
  ea.struct_size = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0;
  EXPECT_CATTN_OK(cattn_extend_all_queries_by_n(&ea));

  HostTensor qsl_cpu = HostTensor::of({0, 2, 5}, i64()), seq_cpu = HostTensor::of({4, 6}, i64());
  HostTensor table = HostTensor::of({0, 1, 2, 3}, i32(), {2, 2});
  cattn_common_attn_metadata_t lmd = CATTN_COMMON_ATTN_METADATA_INIT;
  lmd.query_start_loc_cpu = qsl_cpu.dl();
  lmd.seq_lens_cpu = seq_cpu.dl();
  lmd.block_table_tensor = table.dl();
  lmd.num_actual_tokens = 5;
  cattn_local_attention_args_t la = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  la.attn_chunk_size = 4;
  la.block_size = 2;
  la.metadata = &lmd;
  la.struct_size = CATTN_LOCAL_ATTENTION_ARGS_SIZE - 1;
  int64_t vb = 0;
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches_size(&la, &vb, nullptr, nullptr),
                     CATTN_INVALID_ARGUMENT, std::string("args ") + between);
  la.struct_size = CATTN_LOCAL_ATTENTION_ARGS_SIZE;
  EXPECT_CATTN_OK(cattn_make_local_attention_virtual_batches_size(&la, &vb, nullptr, nullptr));
}

// --- Reserved fields ---------------------------------------------------------------------

TEST(argument_rules, NonzeroReservedFieldsAreRefused) {
  cattn_kv_cache_layout_strides_args_t s = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
  s.layout = CATTN_KV_CACHE_LAYOUT_LBNHC;
  for (int i = 0; i < 5; ++i) s.sizes[i] = 2;
  ASSERT_CATTN_OK(cattn_kv_cache_layout_strides(&s));
  s.reserved0 = 1;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&s), CATTN_INVALID_ARGUMENT,
                     "args->reserved0 is not 0");

  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  const int64_t counts[1] = {1};
  const char* names[1] = {"NHD"};
  cattn_resolve_kv_cache_layout_args_t r = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
  r.num_workers = 1;
  r.worker_counts = counts;
  r.worker_names = names;
  r.reserved0 = 1;
  EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(ctx, &r), CATTN_INVALID_ARGUMENT,
                     "args->reserved0 is not 0");
  r.reserved0 = 0;
  r.reserved1 = 2;
  EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(ctx, &r), CATTN_INVALID_ARGUMENT,
                     "args->reserved1 is not 0");
  r.reserved1 = 0;
  EXPECT_CATTN_OK(cattn_resolve_kv_cache_layout(ctx, &r));
  cattn_context_destroy(ctx);

  TwoRequests b;
  b.md.reserved0 = 3;
  HostTensor out({2}, i64());
  cattn_naive_query_lens_args_t nq = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  nq.metadata = &b.md;
  nq.out = out.dl();
  EXPECT_CATTN_ERROR(cattn_naive_query_lens(&nq), CATTN_INVALID_ARGUMENT,
                     "args->metadata->reserved0 is not 0");

  b.md.reserved0 = 0;
  b.md.max_query_len = 1;
  cattn_common_attn_metadata_t fo = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_fast_prefill_metadata_args_t f = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  f.metadata = &b.md;
  f.out = &fo;
  f.reserved0 = 5;
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&f),
                     CATTN_INVALID_ARGUMENT, "args->reserved0 is not 0");
  f.reserved0 = 0;
  EXPECT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&f));
}

}  // namespace
