// SPDX-License-Identifier: Apache-2.0
// mamba_get_block_table_tensor: conformance against the seed oracle's vectors (and SPEC's), a
// literal reference on random tables, layouts (int32/int64, narrowing, column-slice views),
// aliasing rules, and every error path.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

// Whether fake device tensors (host memory marked kDLCUDA) may be passed past validation: only
// where no GPU could run a kernel on them.
static bool no_usable_gpu() {
  int32_t n = 0;
  return cattn_cuda_device_count(&n) == CATTN_OK && n == 0;
}

namespace {

// Python's floor division, spelled out so it does not share the library's shortcut.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// vLLM's ALIGN gather over plain vectors; -1 marks a column past the row.
std::vector<int64_t> align_reference(const std::vector<int64_t>& table, int64_t cols,
                                     const std::vector<int64_t>& seq, int64_t bs, int64_t nspec) {
  std::vector<int64_t> out;
  for (size_t b = 0; b < seq.size(); ++b) {
    // seq - 1 cannot overflow in these tests (seq > INT64_MIN).
    const int64_t start = std::max<int64_t>(floor_div(seq[b] - 1, bs), 0);
    for (int64_t j = 0; j <= nspec; ++j)
      out.push_back(start + j < cols ? table[b * cols + start + j] : -1);
  }
  return out;
}

std::vector<int64_t> flatten(const nlohmann::json& rows) {
  std::vector<int64_t> v;
  for (const auto& r : rows)
    for (const auto& x : r) v.push_back(x.get<int64_t>());
  return v;
}

cattn_mamba_block_table_args_t make_args(HostTensor& bt, HostTensor* seq, HostTensor& out,
                                         int32_t mode, int64_t bs = 16, int64_t nspec = 0) {
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = bt.dl();
  a.seq_lens = seq ? seq->dl() : nullptr;
  a.block_size = bs;
  a.num_speculative_blocks = nspec;
  a.mamba_cache_mode = mode;
  a.out = out.dl();
  return a;
}

}  // namespace

TEST(mamba_get_block_table_tensor, SpecVector) {
  HostTensor bt = HostTensor::of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, i32(), {3, 4});
  HostTensor seq = HostTensor::of({16, 17, 1}, i64());
  HostTensor out({3, 3}, i32());
  auto a = make_args(bt, &seq, out, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 2);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 2, 5, 6, 7, 8, 9, 10}));
}

TEST(mamba_get_block_table_tensor, OracleVectors) {
  const auto vec = load_vectors("mamba_get_block_table_tensor");
  ASSERT_GT(vec["cases"].size(), 20u);
  int errors = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto table = flatten(c["block_table"]);
    const int64_t cols = c["cols"];
    const auto seq = ints(c["seq_lens"]);
    const int64_t b = static_cast<int64_t>(seq.size());
    const int32_t mode = c["mode"];
    const bool error = c.value("error", false);
    errors += error;
    const int64_t out_cols = mode == CATTN_MAMBA_CACHE_MODE_ALIGN
                                 ? 1 + c["num_speculative_blocks"].get<int64_t>()
                                 : cols;
    for (DLDataType bt_t : {i32(), i64()})
      for (DLDataType seq_t : {i32(), i64()})
        for (DLDataType out_t : {i32(), i64()})
          for (int64_t step : {1, 2}) {
            HostTensor bt = HostTensor::of(table, bt_t, {b, cols}, step, step - 1);
            HostTensor s = HostTensor::of(seq, seq_t, {}, step, 0);
            HostTensor out({b, out_cols}, out_t, 3 - step, 1);
            const auto before = out.bytes();
            auto a = make_args(bt, &s, out, mode, c["block_size"], c["num_speculative_blocks"]);
            if (error) {
              EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                                 "past the end of a row");
              EXPECT_EQ(out.bytes(), before);
            } else {
              ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
              EXPECT_EQ(out.values(), flatten(c["out"]));
            }
          }
  }
  EXPECT_GE(errors, 3);
}

TEST(mamba_get_block_table_tensor, RandomAgainstReference) {
  std::mt19937_64 g(5);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t b = static_cast<int64_t>(g() % 30), cols = 1 + static_cast<int64_t>(g() % 12);
    const int64_t bs = 1 + static_cast<int64_t>(g() % 40);
    const int64_t nspec = static_cast<int64_t>(g() % cols);
    std::vector<int64_t> table(b * cols), seq(b);
    for (auto& v : table) v = static_cast<int64_t>(g() % 1000000);
    for (auto& v : seq)
      v = static_cast<int64_t>(g() % ((cols - nspec) * bs + 2 * bs)) - bs;  // some rows fail
    const auto expect = align_reference(table, cols, seq, bs, nspec);
    const bool fails = std::find(expect.begin(), expect.end(), -1) != expect.end();
    HostTensor bt = HostTensor::of(table, iter % 2 ? i32() : i64(), {b, cols});
    HostTensor s = HostTensor::of(seq, iter % 3 ? i64() : i32());
    HostTensor out({b, nspec + 1}, iter % 5 ? i32() : i64());
    const auto before = out.bytes();
    auto a = make_args(bt, &s, out, CATTN_MAMBA_CACHE_MODE_ALIGN, bs, nspec);
    if (fails) {
      EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                         "args->seq_lens");
      EXPECT_EQ(out.bytes(), before);
    } else {
      ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
      ASSERT_EQ(out.values(), expect);
    }
  }
}

TEST(mamba_get_block_table_tensor, ColumnSliceView) {
  // block_table[:, 2:6] of a [3, 8] table: row stride 8, byte offset of two elements.
  std::vector<int64_t> wide(24);
  for (int i = 0; i < 24; ++i) wide[i] = 100 + i;
  HostTensor storage = HostTensor::of(wide, i64(), {3, 8});
  DLTensor slice = *storage.dl();
  int64_t shape[2] = {3, 4}, strides[2] = {8, 1};
  slice.shape = shape;
  slice.strides = strides;
  slice.byte_offset = 2 * sizeof(int64_t);
  HostTensor seq = HostTensor::of({1, 17, 40}, i32());
  HostTensor out({3, 2}, i32());
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = &slice;
  a.seq_lens = seq.dl();
  a.block_size = 16;
  a.num_speculative_blocks = 1;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{102, 103, 111, 112, 120, 121}));

  HostTensor copy({3, 4}, i32(), 2);
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  a.out = copy.dl();
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(copy.values(),
            (std::vector<int64_t>{102, 103, 104, 105, 110, 111, 112, 113, 118, 119, 120, 121}));
}

TEST(mamba_get_block_table_tensor, CopyModes) {
  for (int32_t mode : {CATTN_MAMBA_CACHE_MODE_NONE, CATTN_MAMBA_CACHE_MODE_ALL}) {
    SCOPED_TRACE(mode);
    HostTensor bt = HostTensor::of({4, 5, 6, 7, 8, 9}, i64(), {2, 3});
    // seq_lens may be NULL; block_size and nspec are ignored.
    HostTensor out({2, 3}, i64());
    auto a = make_args(bt, nullptr, out, mode, 0, -5);
    ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
    EXPECT_EQ(out.values(), bt.values());
    // The very view of block_table: nothing to do, nothing written.
    const auto before = bt.bytes();
    a.out = bt.dl();
    ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
    EXPECT_EQ(bt.bytes(), before);
    // Empty batch.
    HostTensor e_bt({0, 3}, i32()), e_out({0, 3}, i64());
    auto e = make_args(e_bt, nullptr, e_out, mode);
    ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&e));
  }
}

TEST(mamba_get_block_table_tensor, EmptyBatchAlign) {
  HostTensor bt({0, 4}, i32()), seq({0}, i64()), out({0, 3}, i32());
  auto a = make_args(bt, &seq, out, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 2);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
}

TEST(mamba_get_block_table_tensor, ExtremeSeqLens) {
  HostTensor bt = HostTensor::of({1, 2, 3, 4}, i32(), {2, 2});
  HostTensor seq = HostTensor::of({INT64_MIN, 0}, i64());
  HostTensor out({2, 2}, i32());
  auto a = make_args(bt, &seq, out, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 1);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1, 2, 3, 4}));
  HostTensor seq2 = HostTensor::of({INT64_MAX, 0}, i64());
  HostTensor out2({2, 2}, i32());
  const auto before = out2.bytes();
  auto b = make_args(bt, &seq2, out2, CATTN_MAMBA_CACHE_MODE_ALIGN, 1, 1);
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&b), CATTN_INVALID_ARGUMENT,
                     "past the end of a row");
  EXPECT_EQ(out2.bytes(), before);
}

TEST(mamba_get_block_table_tensor, NarrowingOutput) {
  const int64_t big = int64_t{1} << 40;
  HostTensor bt = HostTensor::of({1, big, 3, 4}, i64(), {2, 2});
  HostTensor seq = HostTensor::of({1, 1}, i32());
  // ALIGN without speculative blocks gathers column 0 only, so the big value is never needed.
  HostTensor out({2, 1}, i32());
  auto a = make_args(bt, &seq, out, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 0);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1, 3}));
  // One speculative block gathers it: int32 cannot hold it, int64 can.
  HostTensor out2({2, 2}, i32());
  const auto before2 = out2.bytes();
  auto b = make_args(bt, &seq, out2, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 1);
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&b), CATTN_INVALID_ARGUMENT,
                     "args->out cannot hold");
  EXPECT_EQ(out2.bytes(), before2);
  HostTensor out3({2, 2}, i64());
  auto c = make_args(bt, &seq, out3, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 1);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&c));
  EXPECT_EQ(out3.values(), (std::vector<int64_t>{1, big, 3, 4}));
  // The copy modes check every value.
  HostTensor copy32({2, 2}, i32());
  const auto before32 = copy32.bytes();
  auto d = make_args(bt, nullptr, copy32, CATTN_MAMBA_CACHE_MODE_ALL);
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&d), CATTN_INVALID_ARGUMENT, "int32");
  EXPECT_EQ(copy32.bytes(), before32);
  // Negative values that fit int32 narrow fine.
  HostTensor neg = HostTensor::of({-1, INT32_MIN, INT32_MAX, 0}, i64(), {2, 2});
  HostTensor neg_out({2, 2}, i32());
  auto e = make_args(neg, nullptr, neg_out, CATTN_MAMBA_CACHE_MODE_NONE);
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&e));
  EXPECT_EQ(neg_out.values(), neg.values());
}

TEST(mamba_get_block_table_tensor, OverlapRejected) {
  HostTensor storage = HostTensor::of({1, 2, 3, 4, 5, 6, 0, 0}, i32(), {4, 2});
  const auto before = storage.bytes();
  DLTensor bt = *storage.dl();
  int64_t shape[2] = {3, 2};
  bt.shape = shape;
  DLTensor shifted = bt;
  shifted.byte_offset = 2 * sizeof(int32_t);  // rows 1..3: overlaps rows 1..2
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = &bt;
  a.out = &shifted;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  // Same first element and shape but another dtype is not the same view.
  DLTensor as64 = bt;
  as64.dtype = i64();
  a.out = &as64;
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  // ALIGN: out over block_table, and out over seq_lens.
  HostTensor seq = HostTensor::of({1, 1, 1}, i32());
  DLTensor col0 = bt;
  int64_t col_shape[2] = {3, 1}, col_strides[2] = {2, 1};
  col0.shape = col_shape;
  col0.strides = col_strides;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  a.seq_lens = seq.dl();
  a.block_size = 16;
  a.out = &col0;
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  EXPECT_EQ(storage.bytes(), before);
  const auto seq_before = seq.bytes();
  DLTensor over_seq = *seq.dl();
  over_seq.ndim = 2;
  over_seq.shape = col_shape;
  over_seq.strides = nullptr;
  a.out = &over_seq;
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  EXPECT_EQ(seq.bytes(), seq_before);
}

TEST(mamba_get_block_table_tensor, Errors) {
  HostTensor bt = HostTensor::of({0, 1, 2, 3, 4, 5, 6, 7}, i32(), {2, 4});
  HostTensor seq = HostTensor::of({16, 17}, i32());
  HostTensor out({2, 3}, i32());
  const auto before = out.bytes();
  auto a = make_args(bt, &seq, out, CATTN_MAMBA_CACHE_MODE_ALIGN, 16, 2);
  auto expect_error = [&](cattn_mamba_block_table_args_t args, cattn_status_t code,
                          const char* needle) {
    EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&args), code, needle);
    EXPECT_EQ(out.bytes(), before) << "a failed call wrote to its output";
  };
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(nullptr), CATTN_INVALID_ARGUMENT, "args");
  auto b = a;
  b.struct_size = CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE - 8;
  expect_error(b, CATTN_INVALID_ARGUMENT, "struct_size");
  for (int32_t mode : {3, -1, 100}) {
    b = a;
    b.mamba_cache_mode = mode;
    expect_error(b, CATTN_INVALID_ARGUMENT, "args->mamba_cache_mode");
  }
  b = a;
  b.reserved0 = 1;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->reserved0");
  b = a;
  b.block_table = nullptr;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->block_table");
  b = a;
  b.out = nullptr;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->out");
  b = a;
  b.seq_lens = nullptr;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->seq_lens");
  for (int64_t bs : {int64_t{0}, int64_t{-16}}) {
    b = a;
    b.block_size = bs;
    expect_error(b, CATTN_INVALID_ARGUMENT, "args->block_size");
  }
  b = a;
  b.num_speculative_blocks = -1;
  expect_error(b, CATTN_INVALID_ARGUMENT, "args->num_speculative_blocks");
  b = a;
  b.num_speculative_blocks = INT64_MAX;
  expect_error(b, CATTN_INVALID_ARGUMENT, "num_speculative_blocks");

  // Shapes and dtypes.
  HostTensor bt1d = HostTensor::of({0, 1, 2, 3}, i32());
  HostTensor btf({2, 4}, f32());
  HostTensor seq_short = HostTensor::of({16}, i32());
  HostTensor seq_2d = HostTensor::of({16, 17}, i32(), {2, 1});
  HostTensor seqf({2}, f32());
  HostTensor out1d({6}, i32()), outf({2, 3}, f32());
  HostTensor out_rows_small({1, 3}, i32()), out_rows_big({3, 3}, i32()),
      out_cols_small({2, 2}, i32()), out_cols_big({2, 4}, i32());
  auto with = [&](HostTensor* t, HostTensor* s, HostTensor* o) {
    auto c = a;
    if (t) c.block_table = t->dl();
    if (s) c.seq_lens = s->dl();
    if (o) c.out = o->dl();
    return c;
  };
  expect_error(with(&bt1d, nullptr, nullptr), CATTN_INVALID_ARGUMENT,
               "args->block_table has the wrong ndim");
  expect_error(with(&btf, nullptr, nullptr), CATTN_INVALID_ARGUMENT,
               "args->block_table has the wrong dtype");
  expect_error(with(nullptr, &seq_short, nullptr), CATTN_INVALID_ARGUMENT,
               "args->seq_lens has the wrong size");
  expect_error(with(nullptr, &seq_2d, nullptr), CATTN_INVALID_ARGUMENT,
               "args->seq_lens has the wrong ndim");
  expect_error(with(nullptr, &seqf, nullptr), CATTN_INVALID_ARGUMENT,
               "args->seq_lens has the wrong dtype");
  auto expect_out_error = [&](HostTensor& o, cattn_status_t code, const char* needle) {
    const auto o_before = o.bytes();
    auto c = with(nullptr, nullptr, &o);
    EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&c), code, needle);
    EXPECT_EQ(o.bytes(), o_before);
  };
  expect_out_error(out1d, CATTN_INVALID_ARGUMENT, "args->out has the wrong ndim");
  expect_out_error(outf, CATTN_INVALID_ARGUMENT, "args->out has the wrong dtype");
  expect_out_error(out_rows_small, CATTN_INSUFFICIENT_SIZE,
                   "args->out has the wrong size in dim 0");
  expect_out_error(out_cols_small, CATTN_INSUFFICIENT_SIZE,
                   "args->out has the wrong size in dim 1");
  expect_out_error(out_rows_big, CATTN_INVALID_ARGUMENT, "args->out has the wrong size in dim 0");
  expect_out_error(out_cols_big, CATTN_INVALID_ARGUMENT, "args->out has the wrong size in dim 1");
  // The copy modes want out shaped like block_table, and check a seq_lens that is passed.
  b = a;
  b.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  expect_error(b, CATTN_INSUFFICIENT_SIZE, "args->out");
  b = with(nullptr, &seq_short, &out_cols_big);
  b.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_NONE;
  EXPECT_CATTN_ERROR(cattn_mamba_get_block_table_tensor(&b), CATTN_INVALID_ARGUMENT,
                     "args->seq_lens");
  int64_t zs[2] = {0, 1};
  DLTensor zero_stride = *out.dl();
  zero_stride.strides = zs;
  b = a;
  b.out = &zero_stride;
  expect_error(b, CATTN_INVALID_ARGUMENT, "zero stride");

  // Devices.
  DLTensor cuda_seq = *seq.dl();
  cuda_seq.device = {kDLCUDA, 0};
  b = a;
  b.seq_lens = &cuda_seq;
  expect_error(b, CATTN_INVALID_ARGUMENT, "different device");
  DLTensor cuda_bt = *bt.dl(), cuda_out = *out.dl();
  cuda_bt.device = cuda_out.device = {kDLCUDA, 0};
  b.block_table = &cuda_bt;
  b.out = &cuda_out;
  if (no_usable_gpu()) {
    const cattn_status_t s = cattn_mamba_get_block_table_tensor(&b);
    EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s);
  }
  cuda_seq.device = {kDLCUDA, 1};
  expect_error(b, CATTN_INVALID_ARGUMENT, "different device");
  EXPECT_EQ(out.bytes(), before);

  // The good call still works after all that.
  ASSERT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 2, 5, 6, 7}));
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Mamba block table

namespace {
using namespace cattn_test::refused_untouched;

struct Mamba : Base {
  HostTensor bt = in_tensor({10, 11, 12, 13, 20, 21, 22, int64_t{1} << 40}, i64(), {2, 4});
  HostTensor seq = in_tensor({5, 0}, i32()), out = out_tensor({2, 2}, i32());
  Guarded<cattn_mamba_block_table_args_t> args{CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT};
  bool null_args = false;
  Mamba() {
    tensors = {&bt, &seq, &out};
    structs = {&args.bytes()};
    args->block_size = 2;
    args->num_speculative_blocks = 1;
    args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  }
  void wire() {
    args->block_table = bt.dl();
    args->seq_lens = seq.dl();
    args->out = out.dl();
    cattn_mamba_block_table_args_t* a = args.get();
    slots = {{"args->block_table", bt.dl(), [a] { a->block_table = nullptr; }},
             {"args->seq_lens", seq.dl(), [a] { a->seq_lens = nullptr; }},
             {"args->out", out.dl(), [a] { a->out = nullptr; }}};
  }
  cattn_status_t call() { return cattn_mamba_get_block_table_tensor(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, MambaGetBlockTableTensor) {
  using V = Variant<Mamba>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Mamba& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Mamba& s) { s.args->struct_size = 8; }},
      {"mode 3", I, "args->mamba_cache_mode is not a cache mode", nullptr, [](Mamba& s) { s.args->mamba_cache_mode = 3; }},
      {"reserved0", I, "args->reserved0 is not zero", nullptr, [](Mamba& s) { s.args->reserved0 = 1; }},
      {"block_table 1-D", I, "args->block_table has the wrong ndim", [](Mamba& s) { s.bt = in_tensor({10, 11}, i64()); }, nullptr},
      {"seq_lens 2-D", I, "args->seq_lens has the wrong ndim", [](Mamba& s) { s.seq = in_tensor({5, 0}, i32(), {2, 1}); }, nullptr},
      {"seq_lens of 3", I, "args->seq_lens has the wrong size in dim 0", [](Mamba& s) { s.seq = in_tensor({5, 0, 1}, i32()); }, nullptr},
      {"out [2, 3]", I, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 3}, i32()); }, nullptr},
      {"out [2, 1]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 1}, i32()); }, nullptr},
      {"out [1, 2]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 0", [](Mamba& s) { s.out = out_tensor({1, 2}, i32()); }, nullptr},
      {"out float", I, "args->out has the wrong dtype", nullptr, [](Mamba& s) { s.args->out->dtype = {kDLFloat, 32, 1}; }},
      {"out zero stride", I, "args->out is an output with a zero stride", nullptr, [](Mamba& s) {
         s.scratch_strides = {0, 1};
         s.args->out->strides = s.scratch_strides.data();
       }},
      {"block_size 0", I, "args->block_size is out of range", nullptr, [](Mamba& s) { s.args->block_size = 0; }},
      {"speculative -1", I, "args->num_speculative_blocks is negative (got -1, expected >= 0)", nullptr, [](Mamba& s) { s.args->num_speculative_blocks = -1; }},
      {"speculative INT64_MAX", I, "1 + args->num_speculative_blocks overflows int64", nullptr, [](Mamba& s) { s.args->num_speculative_blocks = kI64Max; }},
      {"column past the row", I, "args->seq_lens selects block-table columns past the end of a row", [](Mamba& s) { s.seq = in_tensor({9, 0}, i32()); }, nullptr},
      {"value past int32", I, "args->out cannot hold a result value", [](Mamba& s) { s.seq = in_tensor({5, 5}, i32()); }, nullptr},
      {"out overlapping block_table", I, "args->out overlaps an input", nullptr, [](Mamba& s) { s.args->out = s.overlap_view(s.bt, 1, {2, 2}); }},
      {"copy: out [2, 5]", I, "args->out has the wrong size in dim 1", [](Mamba& s) { s.out = out_tensor({2, 5}, i64()); }, [](Mamba& s) {
         s.args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
       }},
      {"copy: value past int32", I, "args->out cannot hold a result value", [](Mamba& s) { s.out = out_tensor({2, 4}, i32()); }, [](Mamba& s) {
         s.args->mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_NONE;
       }},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Mamba& s) {
                   for (Slot& x : s.slots) x.t->device = {kDLCUDA, 0};
                 }});
  sweep<Mamba>("cattn_mamba_get_block_table_tensor", structural<Mamba>() + v);
}

// An empty table may declare ~2^63 rows of no columns (valid DLPack, no element): the copy
// modes must finish at once rather than walk the rows.
TEST(refused_untouched, MambaCopyOfAnEmptyTableWithHugeRowCountReturnsAtOnce) {
  int64_t shape[2] = {kI64Max, 0};
  DLTensor bt{nullptr, {kDLCPU, 0}, 2, i64(), shape, nullptr, 0};
  DLTensor out{nullptr, {kDLCPU, 0}, 2, i32(), shape, nullptr, 0};
  cattn_mamba_block_table_args_t a = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  a.block_table = &bt;
  a.out = &out;
  a.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALL;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_CATTN_OK(cattn_mamba_get_block_table_tensor(&a));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
