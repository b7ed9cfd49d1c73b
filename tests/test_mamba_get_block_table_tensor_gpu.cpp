// SPDX-License-Identifier: Apache-2.0
// mamba_get_block_table_tensor on the device, bit-exact against the host implementation, three
// ways (default stream, non-blocking stream, graph replay), with poisoned outputs whose padding
// must stay untouched; the documented device behaviour where the host fails (PAD for a column
// past the row, int32 truncation of values that do not fit); and the host-side checks that still
// guard device calls.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

namespace {

cattn_mamba_block_table_args_t make_args(DLTensor* bt, DLTensor* seq, DLTensor* out, int32_t mode,
                                         int64_t bs, int64_t nspec) {
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = bt;
  a.seq_lens = seq;
  a.block_size = bs;
  a.num_speculative_blocks = nspec;
  a.mamba_cache_mode = mode;
  a.out = out;
  return a;
}

}  // namespace

#if defined(CATTN_TEST_WITH_CUDA)
namespace {


struct Case {
  std::vector<int64_t> table, seq;  // table row-major [B, cols]
  int64_t cols = 1, bs = 16, nspec = 0;
  int32_t mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  TensorLayout bt, sl, out;
};

void check_case(const Case& c) {
  const int64_t batch = c.cols > 0 ? static_cast<int64_t>(c.table.size()) / c.cols
                                   : static_cast<int64_t>(c.seq.size());
  const bool align = c.mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
  const int64_t out_cols = align ? 1 + c.nspec : c.cols;
  HostTensor bt = laid_out(c.table, {batch, c.cols}, c.bt);
  HostTensor seq = laid_out(c.seq, {static_cast<int64_t>(c.seq.size())}, c.sl);
  HostTensor expect({batch, out_cols}, c.out.t, c.out.step, c.out.offset, c.out.inner_pad);
  HostTensor got({batch, out_cols}, c.out.t, c.out.step, c.out.offset, c.out.inner_pad);
  auto h = make_args(bt.dl(), align ? seq.dl() : nullptr, expect.dl(), c.mode, c.bs, c.nspec);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&h));
  DeviceTensor bt_d(bt), seq_d(seq);
  PoisonedOutput out_d(got);
  run_three_ways(
      [&](cudaStream_t s) {
        auto d = make_args(bt_d.dl(), align ? seq_d.dl() : nullptr, out_d.dl(), c.mode, c.bs,
                           c.nspec);
        d.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_mamba_get_block_table_tensor(&d);
      },
      {{&out_d, &expect}});
}

TensorLayout random_layout(std::mt19937_64& g, bool allow_i32 = true) {
  TensorLayout l;
  l.t = allow_i32 && g() % 2 ? i32() : i64();
  switch (g() % 3) {
    case 0: break;
    case 1: l.step = 2; l.offset = 1; break;
    default: l.inner_pad = 1 + static_cast<int64_t>(g() % 3); l.offset = 2; break;
  }
  return l;
}

}  // namespace
#endif

TEST(mamba_get_block_table_tensor_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const std::vector<int64_t> spec_table{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  {
    SCOPED_TRACE("spec");
    check_case({spec_table, {16, 17, 1}, 4, 16, 2, CATTN_MAMBA_CACHE_MODE_ALIGN, {}, {i64()}, {}});
  }
  {
    SCOPED_TRACE("padding rows: seq_len <= 0 starts at column 0");
    check_case({spec_table, {0, -5, 33}, 4, 16, 1, CATTN_MAMBA_CACHE_MODE_ALIGN, {i64()}, {}, {}});
  }
  for (int32_t mode : {CATTN_MAMBA_CACHE_MODE_NONE, CATTN_MAMBA_CACHE_MODE_ALL}) {
    SCOPED_TRACE("copy mode " + std::to_string(mode));
    check_case({spec_table, {}, 4, 0, -3, mode, {i32(), 2, 1}, {}, {i64()}});
    check_case({spec_table, {}, 6, 0, 0, mode, {i64()}, {}, {i32(), 1, 2, 2}});
  }
  {
    SCOPED_TRACE("empty batch");
    check_case({{}, {}, 4, 16, 2, CATTN_MAMBA_CACHE_MODE_ALIGN, {}, {}, {}});
    check_case({{}, {}, 4, 16, 0, CATTN_MAMBA_CACHE_MODE_ALL, {}, {}, {i64()}});
  }
  {
    SCOPED_TRACE("one request");
    check_case({{7, 8, 9}, {48}, 3, 16, 0, CATTN_MAMBA_CACHE_MODE_ALIGN, {}, {}, {}});
  }
  {
    SCOPED_TRACE("int64 values");
    const int64_t big = int64_t{1} << 40;
    check_case({{big, big + 1, -big, INT64_MAX}, {1, 0}, 2, 1, 1, CATTN_MAMBA_CACHE_MODE_ALIGN,
                {i64()}, {i32()}, {i64(), 2, 1}});
    check_case({{big, big + 1, -big, INT64_MAX}, {}, 2, 1, 1, CATTN_MAMBA_CACHE_MODE_NONE,
                {i64(), 1, 0, 2}, {}, {i64(), 3, 2}});
  }
  std::mt19937_64 g(17);
  for (int iter = 0; iter < 80; ++iter) {
    Case c;
    const int64_t batch = static_cast<int64_t>(g() % (iter < 60 ? 40 : 3000));
    c.cols = 1 + static_cast<int64_t>(g() % 12);
    c.bs = 1 + static_cast<int64_t>(g() % 64);
    c.nspec = static_cast<int64_t>(g() % c.cols);
    const int kind = static_cast<int>(g() % 4);
    c.mode = kind == 0 ? CATTN_MAMBA_CACHE_MODE_NONE
                       : kind == 1 ? CATTN_MAMBA_CACHE_MODE_ALL : CATTN_MAMBA_CACHE_MODE_ALIGN;
    c.bt = random_layout(g);
    c.out = random_layout(g);
    c.sl = random_layout(g);
    const bool wide = c.bt.t.bits == 64 && c.out.t.bits == 64;
    for (int64_t i = 0; i < batch * c.cols; ++i)
      c.table.push_back(wide && g() % 4 == 0 ? static_cast<int64_t>(g() >> 1)
                                             : static_cast<int64_t>(g() % 2000000) - 1000);
    // Columns start..start+nspec stay inside the row, so the host accepts every row.
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t start = static_cast<int64_t>(g() % (c.cols - c.nspec));
      int64_t s = start * c.bs + 1 + static_cast<int64_t>(g() % c.bs);
      if (start == 0 && g() % 3 == 0) s = -static_cast<int64_t>(g() % 100);
      c.seq.push_back(s);
    }
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c);
  }
#endif
}

TEST(mamba_get_block_table_tensor_gpu, CopyOntoItselfWritesNothing) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  HostTensor bt = HostTensor::of({4, 5, 6, 7, 8, 9}, i64(), {2, 3}, 2, 1);
  const auto before = bt.bytes();
  DeviceTensor bt_d(bt);
  auto a = make_args(bt_d.dl(), nullptr, bt_d.dl(), CATTN_MAMBA_CACHE_MODE_ALL, 0, 0);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  bt_d.download();
  EXPECT_EQ(bt.bytes(), before);
#endif
}

TEST(mamba_get_block_table_tensor_gpu, ColumnPastRowIsPadOnDevice) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects a gather past the row (vLLM reads out of bounds there); the device cannot
  // check without a sync and writes CATTN_PAD_SLOT_ID for exactly those elements.
  // block_size 16, nspec 2: starts 3, 2, 6, 0 in rows of 4 columns.
  HostTensor bt = HostTensor::of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, i32(),
                                 {4, 4});
  HostTensor seq = HostTensor::of({64, 33, 100, -4}, i64());
  for (DLDataType out_t : {i32(), i64()}) {
    HostTensor host_out({4, 3}, out_t);
    const auto untouched = host_out.bytes();
    auto h = make_args(bt.dl(), seq.dl(), host_out.dl(), CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 2);
    EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&h), CATTN_INVALID_ARGUMENT,
                       "past the end of a row");
    EXPECT_EQ(host_out.bytes(), untouched);

    HostTensor out({4, 3}, out_t);
    DeviceTensor bt_d(bt), seq_d(seq), out_d(out);
    run_three_ways(
        [&](cudaStream_t s) {
          auto d = make_args(bt_d.dl(), seq_d.dl(), out_d.dl(), CATTN_MAMBA_CACHE_MODE_ALIGN, 16,
                             2);
          d.stream = reinterpret_cast<cattn_stream_t>(s);
          return cattn_mamba_get_block_table_tensor(&d);
        },
        [&] {
          out.raw() = untouched;
          out_d.upload();
        },
        [&](const char* way) {
          out_d.download();
          EXPECT_EQ(out.values(),
                    (std::vector<int64_t>{3, -1, -1, 6, 7, -1, -1, -1, -1, 12, 13, 14}))
              << way;
        });
  }
#endif
}

TEST(mamba_get_block_table_tensor_gpu, NarrowingTruncatesOnDevice) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects an int64 value an int32 out cannot hold; the device stores its low 32 bits.
  const int64_t big = (int64_t{1} << 40) + 7;
  HostTensor bt = HostTensor::of({big, -(int64_t{1} << 33) - 1, 5, int64_t{INT32_MAX} + 1}, i64(),
                                 {2, 2});
  HostTensor seq = HostTensor::of({1, 1}, i32());
  const std::vector<int64_t> low_bits{7, -1, 5, INT32_MIN};
  struct Mode {
    int32_t mode;
    int64_t nspec;
  };
  for (const Mode m : {Mode{CATTN_MAMBA_CACHE_MODE_ALL, 0}, Mode{CATTN_MAMBA_CACHE_MODE_ALIGN, 1}}) {
    SCOPED_TRACE(m.mode);
    const bool align = m.mode == CATTN_MAMBA_CACHE_MODE_ALIGN;
    HostTensor host_out({2, 2}, i32());
    const auto untouched = host_out.bytes();
    auto h = make_args(bt.dl(), align ? seq.dl() : nullptr, host_out.dl(), m.mode, 16, m.nspec);
    EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&h), CATTN_INVALID_ARGUMENT, "int32");
    EXPECT_EQ(host_out.bytes(), untouched);

    HostTensor out({2, 2}, i32());
    DeviceTensor bt_d(bt), seq_d(seq), out_d(out);
    auto d = make_args(bt_d.dl(), align ? seq_d.dl() : nullptr, out_d.dl(), m.mode, 16, m.nspec);
    ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&d));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    out_d.download();
    EXPECT_EQ(out.values(), low_bits);
  }
#endif
}

TEST(mamba_get_block_table_tensor_gpu, ExtremeSeqLensOnDevice) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The header: a seq_len <= 0 starts at column 0, INT64_MIN included (the host agrees, see
  // mamba_get_block_table_tensor.ExtremeSeqLens); a huge one selects columns past the row, which
  // the device writes as PAD. block_size 16 and nspec 1 keep start + j far from overflow.
  HostTensor bt = HostTensor::of({1, 2, 3, 4, 5, 6, 7, 8, 9}, i32(), {3, 3});
  HostTensor seq = HostTensor::of({INT64_MIN, INT64_MAX, 0}, i64());
  HostTensor out({3, 2}, i64());
  DeviceTensor bt_d(bt), seq_d(seq), out_d(out);
  auto d = make_args(bt_d.dl(), seq_d.dl(), out_d.dl(), CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 1);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&d));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_d.download();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1, 2, -1, -1, 7, 8}));

  // block_size 1 puts the start at INT64_MAX - 1, so start + j passes INT64_MAX for j = 2: the
  // bound must be checked without forming that sum. (Should it wrap, this compact int32 layout
  // keeps the stray read inside the table: INT64_MIN * 4 bytes wraps to offset 0.)
  HostTensor bt2 = HostTensor::of({1, 2, 3, 4, 5, 6}, i32(), {2, 3});
  HostTensor seq2 = HostTensor::of({INT64_MAX, INT64_MIN}, i64());
  HostTensor out2({2, 3}, i64());
  DeviceTensor bt2_d(bt2), seq2_d(seq2), out2_d(out2);
  auto e = make_args(bt2_d.dl(), seq2_d.dl(), out2_d.dl(), CATTN_MAMBA_CACHE_MODE_ALIGN, 1, 2);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&e));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out2_d.download();
  EXPECT_EQ(out2.values(), (std::vector<int64_t>{-1, -1, -1, 4, 5, 6}));
#endif
}

TEST(mamba_get_block_table_tensor_gpu, DeviceCallsCheckedOnHost) {
  // Every check that needs no device data happens before anything is launched, for CUDA tensors
  // as for host ones; these calls fail before touching the (fake) device memory, so this test
  // runs without a GPU, and in CPU-only builds too.
  HostTensor bt = HostTensor::of({0, 1, 2, 3, 4, 5, 6, 7}, i32(), {2, 4});
  HostTensor seq = HostTensor::of({16, 17}, i32());
  HostTensor out({2, 3}, i32());
  const auto before = out.bytes();
  DLTensor bt_d = fake_cuda(bt), seq_d = fake_cuda(seq), out_d = fake_cuda(out);
  auto a = make_args(&bt_d, &seq_d, &out_d, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 2);
  auto expect_error = [&](cattn_mamba_block_table_args_t args, cattn_status_t code,
                          const char* needle) {
    EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&args), code, needle);
    EXPECT_EQ(out.bytes(), before);
  };
  auto b = a;
  b.block_size = 0;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->block_size");
  b = a;
  b.num_speculative_blocks = -1;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->num_speculative_blocks");
  b = a;
  b.mamba_cache_mode = 3;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->mamba_cache_mode");
  b = a;
  b.num_speculative_blocks = 3;
  expect_error(b, CATTN_INSUFFICIENT_SIZE, "args->out");
  b = a;
  b.seq_lens = nullptr;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->seq_lens");
  b = a;
  b.seq_lens = seq.dl();
  expect_error(b, CATTN_INVALID_ARGUMENT, "different device");
  b = a;
  b.out = out.dl();
  expect_error(b, CATTN_INVALID_ARGUMENT, "different device");
  DLTensor out_d1 = out_d;
  out_d1.device.device_id = 1;
  b = a;
  b.out = &out_d1;
  expect_error(b, CATTN_INVALID_ARGUMENT, "different device");
  // Overlap with block_table (copy mode, not the very view) and with seq_lens (ALIGN).
  HostTensor storage = HostTensor::of({1, 2, 3, 4, 5, 6, 0, 0}, i32(), {4, 2});
  const auto storage_before = storage.bytes();
  DLTensor table = fake_cuda(storage);
  int64_t shape[2] = {3, 2};
  table.shape = shape;
  DLTensor shifted = table;
  shifted.byte_offset = 2 * sizeof(int32_t);
  auto c = make_args(&table, nullptr, &shifted, CATTN_MAMBA_CACHE_MODE_NONE, 0, 0);
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&c), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  DLTensor lens = fake_cuda(storage);
  int64_t lens_shape = 3;
  lens.ndim = 1;
  lens.shape = &lens_shape;
  HostTensor other({3, 4}, i32());
  DLTensor other_d = fake_cuda(other);
  DLTensor col = table;
  int64_t col_shape[2] = {3, 1};
  col.shape = col_shape;
  col.strides = nullptr;
  auto e = make_args(&other_d, &lens, &col, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 0);
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&e), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  EXPECT_EQ(storage.bytes(), storage_before);
}
