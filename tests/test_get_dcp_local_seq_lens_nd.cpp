// SPDX-License-Identifier: Apache-2.0
// get_dcp_local_seq_lens with CATTN_DCP_SHAPE_PRESERVE (1.1): the upstream oracle's N-D vectors
// in every int32/int64 and strided layout, stride-0 inputs, transposed outputs, in place, the
// 1.0 contract kept for 1.0-sized structs and the default mode, and the new errors.
#include <gtest/gtest.h>

#include <cstddef>

#include "cattn.h"
#include "support/dcp_nd.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// vLLM's closed form, per element.
int64_t local_len(int64_t s, int64_t size, int64_t rank, int64_t interleave) {
  const int64_t base = s / interleave / size * interleave;
  const int64_t rem = s - base * size - rank * interleave;
  return base + (rem < 0 ? 0 : rem > interleave ? interleave : rem);
}

}  // namespace

TEST(get_dcp_local_seq_lens_nd, OracleVectors) {
  const auto vec = load_vectors("get_dcp_local_seq_lens_nd");
  ASSERT_GE(vec["cases"].size(), 40u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto seq = ints(c["seq_lens"]);
    const auto seq_shape = ints(c["seq_shape"]);
    const auto out_shape = ints(c["shape"]);
    const auto expect = ints(c["out"]);
    const int64_t size = c["dcp_size"], rank = c["dcp_rank"], interleave = c["interleave"];
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3}) {
          HostTensor s = laid_out(seq, seq_shape, {in_t, step, step == 1 ? 0 : 1, 0});
          HostTensor out(out_shape, out_t, step, step == 1 ? 0 : 2);
          ASSERT_CATTN_OK(run_dcp_nd(s.dl(), out.dl(), size, rank, interleave));
          EXPECT_EQ(out.values(), expect);
        }
  }
}

TEST(get_dcp_local_seq_lens_nd, SizeOneGroupKeepsRankAxis) {
  HostTensor s = HostTensor::of({4, 9, 0}, i32());
  HostTensor squeezed({3}, i32());
  EXPECT_CATTN_ERROR(run_dcp_nd(s.dl(), squeezed.dl(), 1, CATTN_DCP_ALL_RANKS, 1),
                     CATTN_INVALID_ARGUMENT, "args->out has the wrong ndim");
  HostTensor kept({3, 1}, i32());
  ASSERT_CATTN_OK(run_dcp_nd(s.dl(), kept.dl(), 1, CATTN_DCP_ALL_RANKS, 1));
  EXPECT_EQ(kept.values(), (std::vector<int64_t>{4, 9, 0}));
}

TEST(get_dcp_local_seq_lens_nd, OneZeroStructAndDefaultModeKeepTheSeedContract) {
  HostTensor s = HostTensor::of({4, 9, 0}, i64());
  HostTensor squeezed({3}, i64());
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  EXPECT_EQ(a.shape_mode, CATTN_DCP_SHAPE_SQUEEZE);
  a.seq_lens = s.dl();
  a.out = squeezed.dl();
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));  // the default mode squeezes as 1.0 did
  EXPECT_EQ(squeezed.values(), (std::vector<int64_t>{4, 9, 0}));
  // A 1.0 caller's struct ends before shape_mode: whatever lies there is not read.
  a.struct_size = offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode);
  a.shape_mode = 12345;
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  HostTensor s2 = HostTensor::of({1, 2, 3, 4}, i32(), {2, 2});
  a.seq_lens = s2.dl();
  HostTensor out2({2, 2}, i32());
  a.out = out2.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->seq_lens has the wrong ndim");
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE;
  a.shape_mode = CATTN_DCP_SHAPE_PRESERVE;
  a.dcp_rank = 0;
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  EXPECT_EQ(out2.values(), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(get_dcp_local_seq_lens_nd, StrideZeroAndTransposed) {
  // seq_lens [3, 4] broadcasting one row of 4 lengths over 3 rows (stride 0); out [3, 4, 2]
  // stored rank-major: out[i][j][r] at r * 12 + j * 3 + i.
  HostTensor row = HostTensor::of({0, 5, 17, 64}, i32());
  DLTensor seq = *row.dl();
  int64_t seq_shape[2] = {3, 4}, seq_strides[2] = {0, 1};
  seq.ndim = 2;
  seq.shape = seq_shape;
  seq.strides = seq_strides;
  HostTensor storage({24}, i64());
  DLTensor out = *storage.dl();
  int64_t out_shape[3] = {3, 4, 2}, out_strides[3] = {1, 3, 12};
  out.ndim = 3;
  out.shape = out_shape;
  out.strides = out_strides;
  ASSERT_CATTN_OK(run_dcp_nd(&seq, &out, 2, CATTN_DCP_ALL_RANKS, 4));
  const int64_t lens[4] = {0, 5, 17, 64};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t r = 0; r < 2; ++r)
        EXPECT_EQ(storage.get(r * 12 + j * 3 + i), local_len(lens[j], 2, r, 4));
}

TEST(get_dcp_local_seq_lens_nd, InPlaceOneRank) {
  HostTensor s = HostTensor::of({1, 2, 128, 129, 256, 257}, i32(), {3, 2});
  ASSERT_CATTN_OK(run_dcp_nd(s.dl(), s.dl(), 4, 1, 128));
  EXPECT_EQ(s.values(), (std::vector<int64_t>{0, 0, 0, 1, 128, 128}));
  // All ranks over the same memory would overwrite lengths not yet read.
  HostTensor t = HostTensor::of({1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0}, i32(), {16});
  const auto before = t.bytes();
  DLTensor seq = *t.dl(), over = *t.dl();
  int64_t seq_shape[2] = {2, 4}, shape[3] = {2, 4, 2};
  seq.ndim = 2;
  seq.shape = seq_shape;
  over.ndim = 3;
  over.shape = shape;
  EXPECT_CATTN_ERROR(run_dcp_nd(&seq, &over, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  EXPECT_EQ(t.bytes(), before);
}

TEST(get_dcp_local_seq_lens_nd, Errors) {
  HostTensor s = HostTensor::of({3, 9, 4, 1}, i32(), {2, 2});
  HostTensor out({2, 2, 2}, i32());
  const auto before = out.bytes();
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = s.dl();
  a.out = out.dl();
  a.dcp_size = 2;
  a.shape_mode = 2;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->shape_mode");
  a.shape_mode = -1;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->shape_mode");
  a.shape_mode = CATTN_DCP_SHAPE_PRESERVE;
  // A struct_size between the 1.0 and the 1.1 struct is no version's.
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode) - 1;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE;
  HostTensor flat({4, 2}, i32()), wrong({2, 3, 2}, i32()), small({2, 1, 2}, i32()),
      ranks({2, 2, 3}, i32());
  a.out = flat.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong ndim");
  a.out = wrong.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong size in dim 1");
  a.out = small.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INSUFFICIENT_SIZE,
                     "args->out has the wrong size in dim 1");
  a.out = ranks.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong size in dim 2");
  a.out = out.dl();
  a.dcp_rank = 1;  // one rank: out must be seq_lens' shape
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong ndim");
  a.dcp_rank = CATTN_DCP_ALL_RANKS;
  HostTensor neg = HostTensor::of({3, -1, 4, 1}, i64(), {2, 2});
  a.seq_lens = neg.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->seq_lens has a negative length");
  // An 8-D seq_lens leaves no room for the rank axis.
  HostTensor eight = HostTensor::of({1}, i32(), {1, 1, 1, 1, 1, 1, 1, 1});
  a.seq_lens = eight.dl();
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong ndim");
  EXPECT_EQ(out.bytes(), before);  // nothing written by any failure
  // For one rank an 8-D seq_lens is fine: out keeps its 8 dims (the header's limit).
  HostTensor eight_out({1, 1, 1, 1, 1, 1, 1, 1}, i64());
  cattn_dcp_local_seq_lens_args_t one = a;
  one.seq_lens = eight.dl();
  one.out = eight_out.dl();
  one.dcp_rank = 0;
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&one));
  EXPECT_EQ(eight_out.values(), (std::vector<int64_t>{1}));
  a.seq_lens = s.dl();
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{2, 1, 5, 4, 2, 2, 1, 0}));
}
