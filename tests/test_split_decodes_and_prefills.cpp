// SPDX-License-Identifier: Apache-2.0
// split_decodes_and_prefills and split_decodes_prefills_and_extends on the host: conformance
// against the upstream oracle's vectors (vLLM's test table, the README examples, random and
// edge-case batches) in every layout, the failures vLLM raises as statuses, and every error
// path with nothing written.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

DLDataType dtype_named(const nlohmann::json& j) { return j == "int64" ? i64() : i32(); }

// The layouts every vector runs in: compact, strided with an offset, and the other index
// dtype where the values do not depend on the width (no wrap-around).
struct Layout {
  int64_t step, offset;
};
const Layout kLayouts[] = {{1, 0}, {3, 1}, {2, 5}};

constexpr int64_t kUnwritten = -777;

struct SplitCall {
  HostTensor qsl, isp;
  bool has_isp = false;
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  SplitCall(const nlohmann::json& c, DLDataType t, Layout l, DLDataType flag_t) {
    qsl = HostTensor::of(ints(c["query_start_loc"]), t, {}, l.step, l.offset);
    a.query_start_loc_cpu = qsl.dl();
    if (!c["is_prefilling"].is_null()) {
      isp = HostTensor::of(ints(c["is_prefilling"]), flag_t, {}, l.step, l.offset);
      a.is_prefilling_cpu = isp.dl();
    }
    a.num_reqs = c["num_reqs"];
    a.num_actual_tokens = c["num_actual_tokens"];
    a.max_query_len = c["max_query_len"];
    a.decode_threshold = c["decode_threshold"];
    a.require_uniform = c["require_uniform"];
    a.treat_short_extends_as_decodes = c["treat_short_extends_as_decodes"];
    a.num_decodes = a.num_prefills = a.num_decode_tokens = a.num_prefill_tokens = kUnwritten;
  }
  std::vector<int64_t> result() const {
    return {a.num_decodes, a.num_prefills, a.num_decode_tokens, a.num_prefill_tokens};
  }
};

struct ExtendsCall {
  HostTensor qsl, ub;
  cattn_split_decodes_prefills_and_extends_args_t a =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
  ExtendsCall(const nlohmann::json& c, DLDataType t, DLDataType ub_t, Layout l) {
    qsl = HostTensor::of(ints(c["query_start_loc"]), t, {}, l.step, l.offset);
    a.query_start_loc_cpu = qsl.dl();
    if (!c["upper_bound"].is_null()) {
      ub = HostTensor::of(ints(c["upper_bound"]), ub_t, {}, l.step, l.offset);
      a.seq_lens_cpu_upper_bound = ub.dl();
    }
    a.num_reqs = c["num_reqs"];
    a.num_actual_tokens = c["num_actual_tokens"];
    a.max_query_len = c["max_query_len"];
    a.decode_threshold = c["decode_threshold"];
    a.num_decodes = a.num_extends = a.num_prefills = kUnwritten;
    a.num_decode_tokens = a.num_extend_tokens = a.num_prefill_tokens = kUnwritten;
  }
  std::vector<int64_t> result() const {
    return {a.num_decodes,       a.num_extends,       a.num_prefills,
            a.num_decode_tokens, a.num_extend_tokens, a.num_prefill_tokens};
  }
};

// The name vLLM's failure maps to in the message.
const char* failing_arg(const std::string& error, bool split) {
  if (error == "AssertionError") return split ? "is_prefilling_cpu" : "seq_lens_cpu_upper_bound";
  return "num_reqs";
}

}  // namespace

TEST(split_decodes_and_prefills, OracleVectors) {
  const auto vec = load_vectors("split_decodes_and_prefills");
  ASSERT_GE(vec["cases"].size(), 100u);
  int64_t checked = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<DLDataType> types{dtype_named(c["dtype"])};
    // Without wrap-around the values do not depend on the width: run the other dtype too.
    if (c["dtype"] == "int32") types.push_back(i64());
    for (DLDataType t : types)
      for (Layout l : kLayouts)
        for (DLDataType flag_t : {dtype_bits(8), DLDataType{6, 8, 1}, DLDataType{kDLInt, 8, 1}}) {
          if (t.bits == 64 && c["dtype"] == "int32" && c["name"] == "int32_wrapping_length")
            continue;  // that case's result is the int32 wrap
          SplitCall call(c, t, l, flag_t);
          const cattn_status_t s = cattn_split_decodes_and_prefills(&call.a);
          if (c.contains("error")) {
            EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
            EXPECT_NE(std::string(cattn_last_error_message())
                          .find(failing_arg(c["error"], true)),
                      std::string::npos)
                << cattn_last_error_message();
            EXPECT_EQ(call.result(), std::vector<int64_t>(4, kUnwritten));
          } else {
            ASSERT_CATTN_OK(s);
            EXPECT_EQ(call.result(), ints(c["result"]));
          }
          ++checked;
        }
  }
  EXPECT_GT(checked, 1000);
}

TEST(split_decodes_prefills_and_extends, OracleVectors) {
  const auto vec = load_vectors("split_decodes_prefills_and_extends");
  ASSERT_GE(vec["cases"].size(), 80u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const bool wraps = c["name"] == "int32_tokens_past_max" || c["name"] == "int32_near_max";
    std::vector<DLDataType> types{dtype_named(c["dtype"])};
    if (c["dtype"] == "int32" && !wraps) types.push_back(i64());
    std::vector<DLDataType> ub_types{dtype_named(c["upper_bound_dtype"])};
    if (!c["upper_bound"].is_null() && all_fit_int32(ints(c["upper_bound"])))
      ub_types = {i32(), i64()};
    for (DLDataType t : types)
      for (DLDataType ub_t : ub_types)
        for (Layout l : kLayouts) {
          ExtendsCall call(c, t, ub_t, l);
          const cattn_status_t s = cattn_split_decodes_prefills_and_extends(&call.a);
          if (c.contains("error")) {
            EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
            EXPECT_NE(std::string(cattn_last_error_message())
                          .find(failing_arg(c["error"], false)),
                      std::string::npos)
                << cattn_last_error_message();
            EXPECT_EQ(call.result(), std::vector<int64_t>(6, kUnwritten));
          } else {
            ASSERT_CATTN_OK(s);
            EXPECT_EQ(call.result(), ints(c["result"]));
          }
        }
  }
}

// A broadcast query_start_loc (every entry the same) is a batch of zero-length rows.
// The wrapping query lengths of a vector's query_start_loc, as the library derives them.
int64_t longest_query(const std::vector<int64_t>& qsl, bool i64) {
  int64_t longest = 0;
  for (size_t i = 0; i + 1 < qsl.size(); ++i) {
    const int64_t len = i64 ? static_cast<int64_t>(static_cast<uint64_t>(qsl[i + 1]) -
                                                   static_cast<uint64_t>(qsl[i]))
                            : static_cast<int32_t>(static_cast<uint32_t>(qsl[i + 1]) -
                                                   static_cast<uint32_t>(qsl[i]));
    if (i == 0 || len > longest) longest = len;
  }
  return longest;
}

// The counts left at _INIT (CATTN_FROM_QUERY_START_LOC) are derived: every oracle vector whose
// T is query_start_loc[B] and whose max_query_len is the longest query gives vLLM's result
// with both left unset. Before 1.1 shipped, _INIT left 0 and a mixed batch split as
// "all decodes, 0 tokens" with CATTN_OK.
TEST(split_decodes_and_prefills, UnsetCountsAreDerivedFromQueryStartLoc) {
  int64_t derived = 0;
  for (const char* name : {"split_decodes_and_prefills", "split_decodes_prefills_and_extends"}) {
    const auto vec = load_vectors(name);
    for (const auto& c : vec["cases"]) {
      if (c.contains("error")) continue;
      const std::vector<int64_t> q = ints(c["query_start_loc"]);
      const bool i64 = c["dtype"] == "int64";
      if (c["num_actual_tokens"] != q.back() || c["max_query_len"] != longest_query(q, i64))
        continue;
      SCOPED_TRACE(c["name"].get<std::string>());
      if (std::string(name) == "split_decodes_and_prefills") {
        SplitCall call(c, dtype_named(c["dtype"]), kLayouts[0], dtype_bits(8));
        call.a.num_actual_tokens = CATTN_FROM_QUERY_START_LOC;
        call.a.max_query_len = CATTN_FROM_QUERY_START_LOC;
        ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&call.a));
        EXPECT_EQ(call.result(), ints(c["result"]));
      } else {
        ExtendsCall call(c, dtype_named(c["dtype"]), dtype_named(c["upper_bound_dtype"]),
                         kLayouts[0]);
        call.a.num_actual_tokens = CATTN_FROM_QUERY_START_LOC;
        call.a.max_query_len = CATTN_FROM_QUERY_START_LOC;
        ASSERT_CATTN_OK(cattn_split_decodes_prefills_and_extends(&call.a));
        EXPECT_EQ(call.result(), ints(c["result"]));
      }
      ++derived;
    }
  }
  EXPECT_GT(derived, 50);

  // The batch: query lengths 1 1 4 6 with every count left at _INIT.
  HostTensor q = HostTensor::of({0, 1, 2, 6, 12}, i32());
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  EXPECT_EQ(a.num_actual_tokens, CATTN_FROM_QUERY_START_LOC);
  EXPECT_EQ(a.max_query_len, CATTN_FROM_QUERY_START_LOC);
  a.query_start_loc_cpu = q.dl();
  a.num_reqs = 4;
  ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&a));
  EXPECT_EQ((std::vector<int64_t>{a.num_decodes, a.num_prefills, a.num_decode_tokens,
                                  a.num_prefill_tokens}),
            (std::vector<int64_t>{2, 2, 2, 10}));
  // Values below the sentinel are refused, naming the field.
  a.num_actual_tokens = -2;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(&a), CATTN_INVALID_ARGUMENT,
                     "args->num_actual_tokens is negative");
  a.num_actual_tokens = 12;
  a.max_query_len = -5;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(&a), CATTN_INVALID_ARGUMENT,
                     "args->max_query_len is negative");
}

TEST(split_decodes_and_prefills, BroadcastQueryStartLoc) {
  int32_t v = 5;
  int64_t shape[1] = {9}, strides[1] = {0};
  DLTensor q{&v, {kDLCPU, 0}, 1, i32(), shape, strides, 0};
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  a.query_start_loc_cpu = &q;
  a.num_reqs = 8;
  a.num_actual_tokens = 16;
  a.max_query_len = 3;  // over-estimated: step 1 does not return
  ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&a));
  EXPECT_EQ(a.num_decodes, 8);
  EXPECT_EQ(a.num_decode_tokens, 16);
  cattn_split_decodes_prefills_and_extends_args_t e =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
  e.query_start_loc_cpu = &q;
  e.seq_lens_cpu_upper_bound = nullptr;
  e.num_reqs = 8;
  e.num_actual_tokens = 16;
  e.max_query_len = 1;
  ASSERT_CATTN_OK(cattn_split_decodes_prefills_and_extends(&e));
  EXPECT_EQ(e.num_decodes, 8);
  EXPECT_EQ(e.num_decode_tokens, 16);
}

TEST(split_decodes_and_prefills, TokenOverflowIsAnError) {
  HostTensor q = HostTensor::of({0, 1, 5}, i64());
  q.set(0, INT64_MIN);
  q.set(1, INT64_MIN + 1);
  q.set(2, INT64_MIN + 9);
  cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.num_reqs = 2;
  a.num_actual_tokens = INT64_MAX;
  a.max_query_len = 8;
  a.num_decodes = kUnwritten;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(&a), CATTN_INVALID_ARGUMENT,
                     "overflows int64");
  EXPECT_EQ(a.num_decodes, kUnwritten);
}

TEST(split_decodes_and_prefills, Errors) {
  HostTensor q = HostTensor::of({0, 1, 3}, i32());
  HostTensor flags = HostTensor::of({0, 1}, dtype_bits(8));
  auto base = [&] {
    cattn_split_decodes_and_prefills_args_t a = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
    a.query_start_loc_cpu = q.dl();
    a.num_reqs = 2;
    a.num_actual_tokens = 3;
    a.max_query_len = 2;
    a.num_decodes = a.num_prefills = a.num_decode_tokens = a.num_prefill_tokens = kUnwritten;
    return a;
  };
  auto expect = [&](cattn_split_decodes_and_prefills_args_t a, cattn_status_t code,
                    const char* needle) {
    EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(&a), code, needle);
    EXPECT_EQ(a.num_decodes, kUnwritten);
    EXPECT_EQ(a.num_prefill_tokens, kUnwritten);
  };
  {
    auto ok = base();
    ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&ok));
    EXPECT_EQ(ok.num_decodes, 1);
    EXPECT_EQ(ok.num_prefill_tokens, 2);
  }
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills(nullptr), CATTN_INVALID_ARGUMENT, "args");
  auto a = base();
  a.struct_size = 8;
  expect(a, CATTN_INVALID_ARGUMENT, "struct_size");
  a = base();
  a.query_start_loc_cpu = nullptr;
  expect(a, CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  a = base();
  a.num_reqs = 3;
  expect(a, CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  a = base();
  a.num_reqs = -1;
  expect(a, CATTN_INVALID_ARGUMENT, "num_reqs");
  a = base();
  a.num_reqs = -5;
  expect(a, CATTN_INVALID_ARGUMENT, "num_reqs");
  for (int64_t n : {INT64_MIN, INT64_MAX}) {  // the fuzzer's find: no value means "any"
    a = base();
    a.num_reqs = n;
    expect(a, CATTN_INVALID_ARGUMENT, n < 0 ? "num_reqs" : "query_start_loc_cpu");
  }
  a = base();
  a.decode_threshold = -1;
  expect(a, CATTN_INVALID_ARGUMENT, "decode_threshold");
  a = base();
  a.decode_threshold = int64_t{INT32_MAX} + 1;
  expect(a, CATTN_INVALID_ARGUMENT, "decode_threshold");
  a = base();
  a.require_uniform = 2;
  expect(a, CATTN_INVALID_ARGUMENT, "require_uniform");
  a = base();
  a.treat_short_extends_as_decodes = -1;
  expect(a, CATTN_INVALID_ARGUMENT, "treat_short_extends_as_decodes");
  HostTensor qf = HostTensor::of({0, 1, 3}, f32());
  a = base();
  a.query_start_loc_cpu = qf.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  HostTensor q2 = HostTensor::of({0, 1, 3, 4, 5, 6}, i32(), {3, 2});
  a = base();
  a.query_start_loc_cpu = q2.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  HostTensor qd = HostTensor::of({0, 1, 3}, i32());
  DLTensor* qdl = qd.dl();
  qdl->device = {kDLCUDA, 0};
  a = base();
  a.query_start_loc_cpu = qdl;
  expect(a, CATTN_INVALID_ARGUMENT, "host memory");
  HostTensor short_flags = HostTensor::of({0}, dtype_bits(8));
  a = base();
  a.is_prefilling_cpu = short_flags.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "is_prefilling_cpu");
  HostTensor wide_flags = HostTensor::of({0, 1}, i32());
  a = base();
  a.is_prefilling_cpu = wide_flags.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "is_prefilling_cpu");
  a = base();
  a.treat_short_extends_as_decodes = 0;
  expect(a, CATTN_INVALID_ARGUMENT, "is_prefilling_cpu");
  a = base();
  a.treat_short_extends_as_decodes = 0;
  a.is_prefilling_cpu = flags.dl();
  ASSERT_CATTN_OK(cattn_split_decodes_and_prefills(&a));
  EXPECT_EQ(a.num_decodes, 1);
  HostTensor empty = HostTensor::of({0}, i32());
  a = base();
  a.query_start_loc_cpu = empty.dl();
  a.num_reqs = 0;
  expect(a, CATTN_INVALID_ARGUMENT, "num_reqs");
}

TEST(split_decodes_prefills_and_extends, Errors) {
  HostTensor q = HostTensor::of({0, 1, 4}, i32());
  HostTensor ub = HostTensor::of({9, 3}, i64());
  auto base = [&] {
    cattn_split_decodes_prefills_and_extends_args_t a =
        CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
    a.query_start_loc_cpu = q.dl();
    a.seq_lens_cpu_upper_bound = ub.dl();
    a.num_reqs = 2;
    a.num_actual_tokens = 4;
    a.max_query_len = 3;
    a.num_decodes = a.num_extends = a.num_prefills = kUnwritten;
    a.num_decode_tokens = a.num_extend_tokens = a.num_prefill_tokens = kUnwritten;
    return a;
  };
  auto expect = [&](cattn_split_decodes_prefills_and_extends_args_t a, cattn_status_t code,
                    const char* needle) {
    EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends(&a), code, needle);
    EXPECT_EQ(a.num_decodes, kUnwritten);
    EXPECT_EQ(a.num_prefill_tokens, kUnwritten);
  };
  {
    auto ok = base();
    ASSERT_CATTN_OK(cattn_split_decodes_prefills_and_extends(&ok));
    EXPECT_EQ(ok.num_prefills, 1);
    EXPECT_EQ(ok.num_prefill_tokens, 3);
  }
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends(nullptr), CATTN_INVALID_ARGUMENT,
                     "args");
  auto a = base();
  a.struct_size = 16;
  expect(a, CATTN_INVALID_ARGUMENT, "struct_size");
  a = base();
  a.seq_lens_cpu_upper_bound = nullptr;
  expect(a, CATTN_INVALID_ARGUMENT, "seq_lens_cpu_upper_bound");
  HostTensor ub3 = HostTensor::of({9, 3, 1}, i64());
  a = base();
  a.seq_lens_cpu_upper_bound = ub3.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "seq_lens_cpu_upper_bound");
  a = base();
  a.num_reqs = 1;
  expect(a, CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  a = base();
  a.decode_threshold = -2;
  expect(a, CATTN_INVALID_ARGUMENT, "decode_threshold");
  HostTensor ubd = HostTensor::of({9, 3}, i64());
  DLTensor* ubdl = ubd.dl();
  ubdl->device = {kDLCUDA, 0};
  a = base();
  a.seq_lens_cpu_upper_bound = ubdl;
  expect(a, CATTN_INVALID_ARGUMENT, "host memory");
  HostTensor uf = HostTensor::of({9, 3}, f32());
  a = base();
  a.seq_lens_cpu_upper_bound = uf.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "seq_lens_cpu_upper_bound");
}
