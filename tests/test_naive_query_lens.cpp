// SPDX-License-Identifier: Apache-2.0
// naive_query_lens and compute_num_computed_tokens: conformance against the upstream oracle's
// vectors (int32/int64 inputs and outputs, strided, offset and stride-0 views), in place for
// compute_num_computed_tokens, 1.0 structs, and every error path with nothing written.
#include <gtest/gtest.h>

#include <climits>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

cattn_status_t run(bool computed, const cattn_common_attn_metadata_t* md, DLTensor* out) {
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = md;
  a.out = out;
  return computed ? cattn_compute_num_computed_tokens(&a) : cattn_naive_query_lens(&a);
}

const char* kKey[2] = {"naive_query_lens", "compute_num_computed_tokens"};

}  // namespace

TEST(naive_query_lens, OracleVectors) {
  const auto vec = load_vectors("naive_query_lens");
  ASSERT_GT(vec["cases"].size(), 40u);
  size_t checked = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    for (int computed = 0; computed < 2; ++computed) {
      const auto want = ints(c["expect"][kKey[computed]]);
      for (DLDataType in_t : {i32(), i64()})
        for (DLDataType out_t : {i32(), i64()})
          for (int64_t step : {1, 3}) {
            // An int32 tensor cannot hold the int64 cases' values.
            bool fits_in = true, fits_out = true;
            for (int64_t v : q) fits_in &= v >= INT32_MIN && v <= INT32_MAX;
            for (int64_t v : s) fits_in &= v >= INT32_MIN && v <= INT32_MAX;
            for (int64_t v : want) fits_out &= v >= INT32_MIN && v <= INT32_MAX;
            if (in_t.bits == 32 && !fits_in) continue;
            HostTensor qsl = HostTensor::of(q, in_t, {}, step, 1);
            HostTensor seq = HostTensor::of(s, in_t, {}, step, 2);
            HostTensor out({static_cast<int64_t>(want.size())}, out_t, step, 1);
            cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
            md.query_start_loc = qsl.dl();
            md.seq_lens = seq.dl();
            if (out_t.bits == 32 && !fits_out) {
              const auto before = out.bytes();
              EXPECT_CATTN_ERROR(run(computed, &md, out.dl()), CATTN_INVALID_ARGUMENT, "fit");
              EXPECT_EQ(out.bytes(), before);
              continue;
            }
            ASSERT_CATTN_OK(run(computed, &md, out.dl()));
            EXPECT_EQ(out.values(), want);
            EXPECT_EQ(qsl.values(), q);
            ++checked;
          }
    }
  }
  EXPECT_GT(checked, 300u);
}

TEST(naive_query_lens, ComputedTokensInPlaceOverSeqLens) {
  HostTensor qsl = HostTensor::of({0, 3, 4, 9}, i64());
  HostTensor seq = HostTensor::of({5, 1, 7}, i32(), {}, 2);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  ASSERT_CATTN_OK(run(true, &md, seq.dl()));
  EXPECT_EQ(seq.values(), (std::vector<int64_t>{2, 0, 2}));
  // naive_query_lens may not write over query_start_loc.
  HostTensor part = HostTensor::of({0, 3, 4, 9}, i64());
  md.query_start_loc = part.dl();
  DLTensor view = *part.dl();
  int64_t three = 3;
  view.shape = &three;
  EXPECT_CATTN_ERROR(run(false, &md, &view), CATTN_INVALID_ARGUMENT, "args->out");
  EXPECT_EQ(part.values(), (std::vector<int64_t>{0, 3, 4, 9}));
}

TEST(naive_query_lens, BroadcastAndOneZeroStructs) {
  // A stride-0 query_start_loc (all entries equal) gives zero lengths.
  HostTensor one = HostTensor::of({7}, i32());
  DLTensor qsl = *one.dl();
  int64_t shape = 5, stride = 0;
  qsl.shape = &shape;
  qsl.strides = &stride;
  HostTensor out({4}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = &qsl;
  md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0;  // a 1.0 caller's struct will do
  ASSERT_CATTN_OK(run(false, &md, out.dl()));
  EXPECT_EQ(out.values(), (std::vector<int64_t>(4, 0)));
  // Empty batch.
  HostTensor q0 = HostTensor::of({0}, i32());
  HostTensor s0({0}, i32()), o0({0}, i32());
  md.query_start_loc = q0.dl();
  md.seq_lens = s0.dl();
  EXPECT_CATTN_OK(run(false, &md, o0.dl()));
  EXPECT_CATTN_OK(run(true, &md, o0.dl()));
}

TEST(naive_query_lens, Errors) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32());
  HostTensor seq = HostTensor::of({4, 6}, i32());
  HostTensor out({2}, i32());
  const auto untouched = out.bytes();
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl.dl();
  md.seq_lens = seq.dl();
  for (int computed = 0; computed < 2; ++computed) {
    SCOPED_TRACE(kKey[computed]);
    auto call = [&](cattn_naive_query_lens_args_t a) {
      return computed ? cattn_compute_num_computed_tokens(&a) : cattn_naive_query_lens(&a);
    };
    EXPECT_CATTN_ERROR(computed ? cattn_compute_num_computed_tokens(nullptr)
                                : cattn_naive_query_lens(nullptr),
                       CATTN_INVALID_ARGUMENT, "args");
    cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
    a.metadata = &md;
    a.out = out.dl();
    a.struct_size = 8;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args has struct_size");
    a.struct_size = CATTN_NAIVE_QUERY_LENS_ARGS_SIZE;
    a.metadata = nullptr;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->metadata");
    a.metadata = &md;
    md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0 - 8;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->metadata has struct_size");
    md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
    a.out = nullptr;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->out");
    a.out = out.dl();
    md.query_start_loc = nullptr;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->metadata->query_start_loc");
    md.query_start_loc = qsl.dl();
    HostTensor small({1}, i32());
    a.out = small.dl();
    EXPECT_CATTN_ERROR(call(a), CATTN_INSUFFICIENT_SIZE, "args->out");
    HostTensor big({3}, i32());
    a.out = big.dl();
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->out");
    HostTensor f({2}, DLDataType{kDLFloat, 32, 1});
    a.out = f.dl();
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "args->out");
    a.out = out.dl();
    DLTensor cuda_out = *out.dl();
    cuda_out.device = {kDLCUDA, 0};
    a.out = &cuda_out;
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "device");
    a.out = out.dl();
    // Overflow of the difference (host).
    HostTensor huge = HostTensor::of({INT64_MIN, INT64_MAX, INT64_MAX}, i64());
    md.query_start_loc = huge.dl();
    EXPECT_CATTN_ERROR(call(a), CATTN_INVALID_ARGUMENT, "overflows int64");
    md.query_start_loc = qsl.dl();
    EXPECT_EQ(out.bytes(), untouched);
  }
  // compute_num_computed_tokens needs seq_lens and B + 1 starts.
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = &md;
  a.out = out.dl();
  md.seq_lens = nullptr;
  EXPECT_CATTN_ERROR(cattn_compute_num_computed_tokens(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->seq_lens");
  EXPECT_CATTN_OK(cattn_naive_query_lens(&a));  // which naive_query_lens does not read
  HostTensor three = HostTensor::of({1, 2, 3}, i32());
  md.seq_lens = three.dl();
  HostTensor out3({3}, i32());
  a.out = out3.dl();
  EXPECT_CATTN_ERROR(cattn_compute_num_computed_tokens(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc");
  // An output overlapping seq_lens other than its very view.
  HostTensor wide = HostTensor::of({4, 6, 8}, i32());
  DLTensor shifted = *wide.dl();
  int64_t two = 2;
  shifted.shape = &two;
  shifted.byte_offset = 4;
  md.seq_lens = wide.dl();
  wide.shape()[0] = 2;  // seq_lens = wide[0:2], out = wide[1:3]
  md.seq_lens = wide.dl();
  a.out = &shifted;
  EXPECT_CATTN_ERROR(cattn_compute_num_computed_tokens(&a), CATTN_INVALID_ARGUMENT, "args->out");
}
