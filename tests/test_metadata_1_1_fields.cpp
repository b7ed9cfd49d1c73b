// SPDX-License-Identifier: Apache-2.0
// The 1.0 calls the 1.1 metadata fields update, against the upstream oracle's vectors:
// extend_all_queries_by_n (upper bound, DCP lengths, positions), fast prefill
// (max_logits_per_req) and the local-attention fill (upper bound per virtual batch); and 1.0
// structs, whose callers' memory past the 1.0 fields is never read or written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

struct ExtendBatch {
  HostTensor qsl, qsl_cpu, seq, seq_cpu, upper, dcp, dcp_cpu;
  HostTensor out_qsl, out_qsl_cpu, out_seq, out_seq_cpu, out_upper, out_dcp, out_dcp_cpu, pos;
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_extend_all_queries_by_n_args_t args = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;

  ExtendBatch(const nlohmann::json& c, DLDataType t, DLDataType out_t, int64_t step) {
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const int64_t b = static_cast<int64_t>(s.size());
    qsl = HostTensor::of(q, t, {}, step, 1);
    qsl_cpu = HostTensor::of(q, t);
    seq = HostTensor::of(s, t, {}, step);
    seq_cpu = HostTensor::of(s, t, {}, 1, 2);
    upper = HostTensor::of(ints(c["seq_lens_cpu_upper_bound"]), t, {}, step);
    dcp = HostTensor::of(std::vector<int64_t>(static_cast<size_t>(b), 77), t);
    dcp_cpu = HostTensor::of(std::vector<int64_t>(static_cast<size_t>(b), 78), t);
    out_qsl = HostTensor({b + 1}, out_t, step);
    out_qsl_cpu = HostTensor({b + 1}, out_t);
    out_seq = HostTensor({b}, out_t, step, 1);
    out_seq_cpu = HostTensor({b}, out_t);
    out_upper = HostTensor({b}, out_t, step);
    out_dcp = HostTensor({b}, out_t);
    out_dcp_cpu = HostTensor({b}, out_t, step);
    pos = HostTensor({c["positions_len"].get<int64_t>()}, out_t, step, 3);
    in.query_start_loc = qsl.dl();
    in.query_start_loc_cpu = qsl_cpu.dl();
    in.seq_lens = seq.dl();
    in.seq_lens_cpu = seq_cpu.dl();
    in.seq_lens_cpu_upper_bound = upper.dl();
    in.dcp_local_seq_lens = dcp.dl();
    in.dcp_local_seq_lens_cpu = dcp_cpu.dl();
    in.num_reqs = b;
    in.num_actual_tokens = c["num_actual_tokens"];
    in.max_query_len = c["max_query_len"];
    in.max_seq_len = c["max_seq_len"];
    in.max_logits_per_req = 3;
    out.query_start_loc = out_qsl.dl();
    out.query_start_loc_cpu = out_qsl_cpu.dl();
    out.seq_lens = out_seq.dl();
    out.seq_lens_cpu = out_seq_cpu.dl();
    out.seq_lens_cpu_upper_bound = out_upper.dl();
    out.dcp_local_seq_lens = out_dcp.dl();
    out.dcp_local_seq_lens_cpu = out_dcp_cpu.dl();
    out.positions = pos.dl();
    args.metadata = &in;
    args.out = &out;
    args.n = c["n"];
    args.dcp_size = c["dcp_size"];
    args.dcp_rank = c["dcp_rank"];
    args.dcp_kv_cache_interleave_size = c["dcp_kv_cache_interleave_size"];
  }
};

}  // namespace

TEST(metadata_1_1_fields, ExtendOracleVectors) {
  const auto vec = load_vectors("extend_all_queries_by_n_upstream");
  ASSERT_GT(vec["cases"].size(), 15u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto& e = c["expect"];
    for (DLDataType t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 2}) {
          ExtendBatch b(c, t, out_t, step);
          ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&b.args));
          EXPECT_EQ(b.out_qsl.values(), ints(e["query_start_loc"]));
          EXPECT_EQ(b.out_qsl_cpu.values(), ints(e["query_start_loc_cpu"]));
          EXPECT_EQ(b.out_seq.values(), ints(e["seq_lens"]));
          EXPECT_EQ(b.out_seq_cpu.values(), ints(e["seq_lens_cpu"]));
          EXPECT_EQ(b.out_upper.values(), ints(e["seq_lens_cpu_upper_bound"]));
          // Upstream leaves the device lengths stale and drops the mirror: libcattn's are the
          // extended batch's.
          EXPECT_EQ(b.out_dcp.values(), ints(e["dcp_local_seq_lens"]));
          EXPECT_EQ(b.out_dcp_cpu.values(), ints(e["dcp_local_seq_lens"]));
          EXPECT_EQ(b.pos.values(), ints(e["positions"]));
          EXPECT_EQ(b.out.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
          EXPECT_EQ(b.out.max_query_len, e["max_query_len"].get<int64_t>());
          EXPECT_EQ(b.out.max_seq_len, e["max_seq_len"].get<int64_t>());
          EXPECT_EQ(b.out.seq_lens_cpu_upper_bound, b.out_upper.dl());
          EXPECT_EQ(b.out.dcp_local_seq_lens, b.out_dcp.dl());
          EXPECT_EQ(b.out.positions, b.pos.dl());
          EXPECT_EQ(b.out.max_logits_per_req, 3);
        }
    // In place, the same struct: every tensor updated where it lies.
    ExtendBatch b(c, i64(), i64(), 1);
    b.in.seq_lens_cpu_upper_bound = b.upper.dl();
    cattn_common_attn_metadata_t& md = b.in;
    b.args.out = &md;
    md.positions = b.pos.dl();  // the old positions are not read: replaced by the new ones
    ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&b.args));
    EXPECT_EQ(b.qsl.values(), ints(e["query_start_loc"]));
    EXPECT_EQ(b.upper.values(), ints(e["seq_lens_cpu_upper_bound"]));
    EXPECT_EQ(b.dcp.values(), ints(e["dcp_local_seq_lens"]));
    EXPECT_EQ(b.dcp_cpu.values(), ints(e["dcp_local_seq_lens"]));
    EXPECT_EQ(b.pos.values(), ints(e["positions"]));
  }
}

TEST(metadata_1_1_fields, ExtendNewFieldErrors) {
  const auto vec = load_vectors("extend_all_queries_by_n_upstream");
  const auto& c = vec["cases"][4];
  ExtendBatch b(c, i32(), i32(), 1);
  const auto before = b.out_dcp.bytes();
  const auto pos_before = b.pos.bytes();
  auto expect = [&](cattn_status_t code, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&b.args), code, needle);
    EXPECT_EQ(b.out_dcp.bytes(), before);
    EXPECT_EQ(b.pos.bytes(), pos_before);
  };
  b.args.dcp_size = 0;
  expect(CATTN_INVALID_ARGUMENT, "args->dcp_size is not given");
  b.args.struct_size = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0;  // a 1.0 args struct
  expect(CATTN_INVALID_ARGUMENT, "args->dcp_size is not given");
  b.args.struct_size = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE;
  b.args.dcp_size = c["dcp_size"];
  b.args.dcp_rank = CATTN_DCP_ALL_RANKS;
  expect(CATTN_INVALID_ARGUMENT, "args->dcp_rank");
  b.args.dcp_rank = b.args.dcp_size;
  expect(CATTN_INVALID_ARGUMENT, "args->dcp_rank");
  b.args.dcp_rank = c["dcp_rank"];
  b.out.dcp_local_seq_lens = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->out->dcp_local_seq_lens is NULL");
  b.out.dcp_local_seq_lens = b.out_dcp.dl();
  b.out.seq_lens_cpu_upper_bound = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->out->seq_lens_cpu_upper_bound is NULL");
  b.out.seq_lens_cpu_upper_bound = b.out_upper.dl();
  b.out.positions = b.out_seq.dl();  // overlapping another output
  expect(CATTN_INVALID_ARGUMENT, "args->out->positions");
  b.out.positions = b.qsl.dl();  // overlapping an input
  expect(CATTN_INVALID_ARGUMENT, "args->out->positions");
  b.out.positions = b.pos.dl();
  HostTensor short_dcp({1}, i32());
  b.out.dcp_local_seq_lens_cpu = short_dcp.dl();
  expect(CATTN_INSUFFICIENT_SIZE, "args->out->dcp_local_seq_lens_cpu");
  b.out.dcp_local_seq_lens_cpu = b.out_dcp_cpu.dl();
  // Lengths past INT32_MAX after the extension: the DCP split is int32 (vLLM).
  HostTensor big = HostTensor::of(std::vector<int64_t>(b.seq.numel(), INT32_MAX), i64());
  b.in.seq_lens = big.dl();
  b.in.seq_lens_cpu = nullptr;
  b.out.seq_lens_cpu = nullptr;
  b.in.max_seq_len = INT32_MAX;
  expect(CATTN_INVALID_ARGUMENT, "INT32_MAX");
  // A length that is still negative after the extension says so.
  HostTensor neg = HostTensor::of(std::vector<int64_t>(b.seq.numel(), -100), i64());
  b.in.seq_lens = neg.dl();
  expect(CATTN_INVALID_ARGUMENT,
         "args->metadata->seq_lens gives a negative extended length (got [0] = -100 + ");
  EXPECT_NE(std::string(cattn_last_error_message()).find(", expected >= 0)"), std::string::npos);
  b.in.seq_lens = big.dl();
  // Without DCP fields the same call works, so the refusal above is the DCP check.
  b.in.dcp_local_seq_lens = b.in.dcp_local_seq_lens_cpu = nullptr;
  b.out.dcp_local_seq_lens = b.out.dcp_local_seq_lens_cpu = nullptr;
  HostTensor out_big({b.seq.numel()}, i64());
  b.out.seq_lens = out_big.dl();
  b.out.positions = nullptr;
  EXPECT_CATTN_OK(cattn_extend_all_queries_by_n(&b.args));
  EXPECT_EQ(b.out.positions, nullptr);  // dropped rather than stale
}

// A 1.0 caller's struct ends at reserved0: the bytes after it belong to the caller.
TEST(metadata_1_1_fields, OneZeroStructsAreNotReadOrWrittenPastTheirEnd) {
  constexpr size_t k10 = CATTN_COMMON_ATTN_METADATA_SIZE_1_0;
  static_assert(k10 == 120, "the 1.0 struct is 120 bytes");
  std::vector<uint8_t> in_mem(sizeof(cattn_common_attn_metadata_t), 0xA5);
  std::vector<uint8_t> out_mem(sizeof(cattn_common_attn_metadata_t), 0xA5);
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), seq = HostTensor::of({4, 6}, i32());
  HostTensor oq({3}, i32()), os({2}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, out = md;
  md.struct_size = out.struct_size = k10;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  md.max_query_len = 1;  // the fast-prefill passthrough copies every field it knows
  out.query_start_loc = oq.dl();
  out.seq_lens = os.dl();
  std::memcpy(in_mem.data(), &md, k10);
  std::memcpy(out_mem.data(), &out, k10);
  const auto in_tail = std::vector<uint8_t>(in_mem.begin() + k10, in_mem.end());
  auto* in_p = reinterpret_cast<cattn_common_attn_metadata_t*>(in_mem.data());
  auto* out_p = reinterpret_cast<cattn_common_attn_metadata_t*>(out_mem.data());
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = in_p;
  a.out = out_p;
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  EXPECT_EQ(oq.values(), (std::vector<int64_t>{0, 3, 7}));
  cattn_fast_prefill_metadata_args_t f = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  f.metadata = in_p;
  f.out = out_p;
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&f));
  EXPECT_EQ(f.passthrough, 1);
  for (size_t i = k10; i < out_mem.size(); ++i) ASSERT_EQ(out_mem[i], 0xA5) << "byte " << i;
  EXPECT_EQ(std::vector<uint8_t>(in_mem.begin() + k10, in_mem.end()), in_tail);
}

TEST(metadata_1_1_fields, FastPrefillOracleVectors) {
  const auto vec = load_vectors("make_kv_sharing_fast_prefill_common_attn_metadata_upstream");
  ASSERT_GT(vec["cases"].size(), 5u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), li = ints(c["logits_indices_padded"]);
    const int64_t b = static_cast<int64_t>(q.size()) - 1;
    const auto& e = c["expect"];
    for (bool given : {true, false}) {
      HostTensor qsl = HostTensor::of(q, i32()), logits = HostTensor::of(li, i64());
      HostTensor upper({b}, i64()), positions({4}, i64()), prefilling({b}, i32());
      HostTensor out_qsl({b + 1}, i64());
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
      md.query_start_loc = qsl.dl();
      md.logits_indices_padded = logits.dl();
      md.num_logits_indices = static_cast<int64_t>(li.size());
      md.num_reqs = b;
      md.max_query_len = c["max_query_len"];
      md.max_logits_per_req = given ? c["max_logits_per_req"].get<int64_t>() : CATTN_NOT_GIVEN;
      md.seq_lens_cpu_upper_bound = upper.dl();
      md.positions = positions.dl();
      md.is_prefilling = prefilling.dl();
      cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
      out.query_start_loc = out_qsl.dl();
      out.positions = positions.dl();  // set by the caller, replaced with vLLM's default
      cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
      a.metadata = &md;
      a.out = &out;
      ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
      EXPECT_EQ(out_qsl.values(), ints(e["query_start_loc"]));
      EXPECT_EQ(out.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
      const int64_t trusted = c["max_logits_per_req"];
      if (given && trusted > 0) {
        EXPECT_EQ(out.max_query_len, e["max_query_len"].get<int64_t>());
      } else {
        // Not given (or 0, read as not given): the largest decode query, as in 1.0.
        const auto dq = out_qsl.values();
        int64_t largest = 0;
        for (size_t i = 0; i + 1 < dq.size(); ++i) largest = std::max(largest, dq[i + 1] - dq[i]);
        EXPECT_EQ(out.max_query_len, largest);
      }
      EXPECT_EQ(out.seq_lens_cpu_upper_bound != nullptr, e["keeps_upper_bound"].get<bool>());
      EXPECT_EQ(out.positions != nullptr, e["keeps_positions"].get<bool>());
      EXPECT_EQ(out.is_prefilling != nullptr, e["keeps_is_prefilling"].get<bool>());
      EXPECT_EQ(out.max_logits_per_req, CATTN_NOT_GIVEN);
    }
  }
}

TEST(metadata_1_1_fields, LocalAttentionUpperBoundPerVirtualBatch) {
  const auto vec = load_vectors("make_local_attention_virtual_batches_upstream");
  ASSERT_GT(vec["cases"].size(), 5u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const int64_t b = static_cast<int64_t>(s.size()), cols = c["cols"];
    HostTensor qsl = HostTensor::of(q, i32()), seq = HostTensor::of(s, i32());
    HostTensor table({b, cols}, i32());
    cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
    md.query_start_loc_cpu = qsl.dl();
    md.seq_lens_cpu = seq.dl();
    md.block_table_tensor = table.dl();
    md.num_reqs = b;
    md.num_actual_tokens = q.back();
    cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
    a.attn_chunk_size = c["attn_chunk_size"];
    a.block_size = c["block_size"];
    a.metadata = &md;
    ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&a));
    int64_t v = 0, pages = 0;
    ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(a.plan, &v, &pages));
    const auto want = ints(c["expect"]["seq_lens_cpu_upper_bound"]);
    ASSERT_EQ(v, static_cast<int64_t>(want.size()));
    // Upstream's is the input's [B] tensor, mis-shaped for V virtual batches.
    EXPECT_EQ(ints(c["upstream"]["seq_lens_cpu_upper_bound"]).size(), s.size());
    for (int64_t step : {1, 3}) {
      HostTensor oq({v + 1}, i64()), os({v}, i64()), oc({v}, i64()), ot({v, pages}, i32());
      HostTensor upper({v}, i32(), step);
      cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
      out.query_start_loc_cpu = oq.dl();
      out.seq_lens_cpu = os.dl();
      out.num_computed_tokens_cpu = oc.dl();
      out.block_table_tensor = ot.dl();
      out.seq_lens_cpu_upper_bound = upper.dl();
      cattn_local_attention_fill_args_t f = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
      f.metadata = &md;
      f.out = &out;
      ASSERT_CATTN_OK(cattn_local_attention_plan_fill(a.plan, &f));
      EXPECT_EQ(upper.values(), want);
      EXPECT_EQ(os.values(), want);
      // A wrongly sized one is refused before anything is written.
      HostTensor wrong({b == v ? v + 1 : b}, i32());
      const auto before = wrong.bytes();
      const auto os_before = os.bytes();
      out.seq_lens_cpu_upper_bound = wrong.dl();
      EXPECT_NE(cattn_local_attention_plan_fill(a.plan, &f), CATTN_OK);
      EXPECT_EQ(wrong.bytes(), before);
      EXPECT_EQ(os.bytes(), os_before);
    }
    cattn_local_attention_plan_destroy(a.plan);
  }
}
