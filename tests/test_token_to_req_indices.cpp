// SPDX-License-Identifier: Apache-2.0
// token_to_req_indices: conformance against the upstream oracle's vectors (buffer[0:max(M, T)]
// exactly, the rest untouched), int32/int64 and strided layouts, no mirror, 1.0 structs, the
// errors upstream raises, and nothing written on failure.
#include <gtest/gtest.h>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

cattn_status_t run(const cattn_common_attn_metadata_t* md, DLTensor* buffer) {
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = md;
  a.buffer = buffer;
  return cattn_token_to_req_indices(&a);
}

}  // namespace

TEST(token_to_req_indices, OracleVectors) {
  const auto vec = load_vectors("token_to_req_indices");
  ASSERT_GT(vec["cases"].size(), 30u);
  size_t ok = 0, errors = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), q_cpu = ints(c["query_start_loc_cpu"]);
    const int64_t len = c["buffer_len"], sentinel = c["sentinel"];
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType buf_t : {i32(), i64()})
        for (int64_t step : {1, 2})
          for (bool mirror : {true, false}) {
            // Without the mirror M is query_start_loc's own total; skip the cases whose
            // mirror is the point.
            if (!mirror && q_cpu != q) continue;
            HostTensor qsl = HostTensor::of(q, in_t, {}, step, 1);
            HostTensor qsl_cpu = HostTensor::of(q_cpu, in_t);
            HostTensor buf = HostTensor::of(std::vector<int64_t>(static_cast<size_t>(len),
                                                                 sentinel),
                                            buf_t, {}, step, 3);
            cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
            md.query_start_loc = qsl.dl();
            md.query_start_loc_cpu = mirror ? qsl_cpu.dl() : nullptr;
            md.num_actual_tokens = c["num_actual_tokens"];
            md.struct_size = step == 2 ? CATTN_COMMON_ATTN_METADATA_SIZE_1_0
                                       : CATTN_COMMON_ATTN_METADATA_SIZE;
            const auto before = buf.bytes();
            if (c.contains("error")) {
              const cattn_status_t s = run(&md, buf.dl());
              EXPECT_TRUE(s == CATTN_INVALID_ARGUMENT || s == CATTN_INSUFFICIENT_SIZE)
                  << cattn_last_error_message();
              if (c["error"] == "AssertionError") EXPECT_EQ(s, CATTN_INSUFFICIENT_SIZE);
              EXPECT_EQ(buf.bytes(), before);
              ++errors;
              continue;
            }
            ASSERT_CATTN_OK(run(&md, buf.dl()));
            auto want = ints(c["expect"]);
            want.resize(static_cast<size_t>(len), sentinel);  // the rest is not written
            EXPECT_EQ(buf.values(), want);
            const auto result = ints(c["result"]);
            EXPECT_TRUE(std::equal(result.begin(), result.end(), want.begin()));
            ++ok;
          }
  }
  EXPECT_GT(ok, 150u);
  EXPECT_GT(errors, 10u);
}

TEST(token_to_req_indices, RecomputesEveryCall) {
  // vLLM caches the first mapping in the metadata object; libcattn keeps none, so a changed
  // batch maps afresh into the same buffer.
  HostTensor qsl = HostTensor::of({0, 2, 3}, i32());
  HostTensor buf({6}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.num_actual_tokens = 4;
  ASSERT_CATTN_OK(run(&md, buf.dl()));
  std::vector<int64_t> got = buf.values();
  EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + 4), (std::vector<int64_t>{0, 0, 1, 0}));
  qsl.set(1, 1);
  qsl.set(2, 4);
  md.num_actual_tokens = 5;
  ASSERT_CATTN_OK(run(&md, buf.dl()));
  got = buf.values();
  EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + 5),
            (std::vector<int64_t>{0, 1, 1, 1, 0}));
}

TEST(token_to_req_indices, Errors) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32());
  HostTensor buf({8}, i32());
  const auto untouched = buf.bytes();
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.query_start_loc_cpu = qsl.dl();
  md.num_actual_tokens = 6;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(nullptr), CATTN_INVALID_ARGUMENT, "args");
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = &md;
  a.buffer = buf.dl();
  a.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE;
  a.buffer = nullptr;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "args->buffer");
  a.buffer = buf.dl();
  md.num_actual_tokens = -1;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->num_actual_tokens");
  md.num_actual_tokens = 9;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INSUFFICIENT_SIZE, "args->buffer");
  md.num_actual_tokens = 6;
  HostTensor empty({0}, i32());
  md.query_start_loc = empty.dl();
  md.query_start_loc_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "is empty");
  md.query_start_loc = qsl.dl();
  HostTensor short_mirror = HostTensor::of({0, 2}, i32());
  md.query_start_loc_cpu = short_mirror.dl();
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu");
  md.query_start_loc_cpu = nullptr;
  // The buffer may not overlap query_start_loc.
  a.buffer = qsl.dl();
  md.num_actual_tokens = 0;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "args->buffer");
  a.buffer = buf.dl();
  // A stride-0 buffer.
  DLTensor zero = *buf.dl();
  int64_t stride = 0;
  zero.strides = &stride;
  a.buffer = &zero;
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "args->buffer");
  a.buffer = buf.dl();
  // Decreasing starts: repeat_interleave refuses a negative repeat.
  HostTensor bad = HostTensor::of({0, 3, 2}, i64());
  md.query_start_loc = bad.dl();
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT,
                     "negative query length");
  // Values near the int64 limits are refused without overflow.
  HostTensor huge = HostTensor::of({INT64_MIN, 0, INT64_MAX}, i64());
  md.query_start_loc = huge.dl();
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT, "overflows int64");
  HostTensor sum = HostTensor::of({-10, INT64_MAX - 20, INT64_MAX}, i64());
  md.query_start_loc = sum.dl();
  EXPECT_CATTN_ERROR(cattn_token_to_req_indices(&a), CATTN_INVALID_ARGUMENT,
                     "token count that overflows int64");
  EXPECT_EQ(buf.bytes(), untouched);
}
