// SPDX-License-Identifier: Apache-2.0
// get_dcp_local_seq_lens: conformance against the seed oracle's vectors (and SPEC's), a
// token-by-token reference on random batches, layouts (int32/int64 in and out, strided and
// transposed outputs), single rank vs all ranks, and every error path.
#include <gtest/gtest.h>

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

// Deals the tokens out one at a time, run by run, and counts what each rank receives: the
// definition of the interleaved layout rather than vLLM's closed form.
std::vector<int64_t> deal_reference(const std::vector<int64_t>& seq, int64_t size,
                                    int64_t interleave) {
  std::vector<int64_t> out(seq.size() * size, 0);
  for (size_t b = 0; b < seq.size(); ++b)
    for (int64_t t = 0; t < seq[b]; ++t) ++out[b * size + (t / interleave) % size];
  return out;
}

cattn_status_t run(HostTensor& seq, HostTensor& out, int64_t size, int64_t rank,
                   int64_t interleave) {
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq.dl();
  a.dcp_size = size;
  a.dcp_rank = rank;
  a.dcp_kv_cache_interleave_size = interleave;
  a.out = out.dl();
  return cattn_get_dcp_local_seq_lens(&a);
}

}  // namespace

TEST(get_dcp_local_seq_lens, SpecVectors) {
  const std::vector<int64_t> seq{1, 2, 128, 129, 256, 257};
  HostTensor s = HostTensor::of(seq, i32());
  HostTensor out({6, 2}, i32());
  ASSERT_CATTN_OK(run(s, out, 2, CATTN_DCP_ALL_RANKS, 1));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1, 0, 1, 1, 64, 64, 65, 64, 128, 128, 129, 128}));
  HostTensor out4({6, 4}, i64());
  ASSERT_CATTN_OK(run(s, out4, 4, CATTN_DCP_ALL_RANKS, 128));
  EXPECT_EQ(out4.values(), (std::vector<int64_t>{1,   0, 0, 0, 2,   0,   0, 0, 128, 0,   0, 0,
                                                 128, 1, 0, 0, 128, 128, 0, 0, 128, 128, 1, 0}));
}

TEST(get_dcp_local_seq_lens, OracleVectors) {
  const auto vec = load_vectors("get_dcp_local_seq_lens");
  ASSERT_GT(vec["cases"].size(), 20u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto seq = ints(c["seq_lens"]);
    const auto expect = ints(c["out"]);
    auto shape = ints(c["shape"]);
    const int64_t size = c["dcp_size"], rank = c["dcp_rank"], interleave = c["interleave"];
    std::vector<std::vector<int64_t>> shapes{shape};
    if (rank == CATTN_DCP_ALL_RANKS && size == 1) shapes.push_back({shape[0], 1});
    for (const auto& out_shape : shapes)
      for (DLDataType in_t : {i32(), i64()})
        for (DLDataType out_t : {i32(), i64()})
          for (int64_t step : {1, 3}) {
            HostTensor s = HostTensor::of(seq, in_t, {}, step, step == 1 ? 0 : 1);
            HostTensor out(out_shape, out_t, step, step == 1 ? 0 : 2);
            ASSERT_CATTN_OK(run(s, out, size, rank, interleave));
            EXPECT_EQ(out.values(), expect);
          }
  }
}

TEST(get_dcp_local_seq_lens, RandomAgainstDealing) {
  std::mt19937_64 g(11);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t b = static_cast<int64_t>(g() % 40);
    const int64_t size = 1 + static_cast<int64_t>(g() % 9);
    const int64_t interleave = 1 + static_cast<int64_t>(g() % (iter % 2 ? 5 : 300));
    std::vector<int64_t> seq(b);
    for (auto& v : seq) v = static_cast<int64_t>(g() % 3000);
    const auto expect = deal_reference(seq, size, interleave);
    HostTensor s = HostTensor::of(seq, iter % 3 ? i32() : i64());
    HostTensor all({b, size}, iter % 2 ? i32() : i64());
    ASSERT_CATTN_OK(run(s, all, size, CATTN_DCP_ALL_RANKS, interleave));
    ASSERT_EQ(all.values(), expect)
        << "b " << b << " size " << size << " interleave " << interleave;
    // Each rank on its own gives its column of the all-ranks result.
    for (int64_t r = 0; r < size; ++r) {
      HostTensor one({b}, i64(), 2);
      ASSERT_CATTN_OK(run(s, one, size, r, interleave));
      for (int64_t i = 0; i < b; ++i) ASSERT_EQ(one.get(i), expect[i * size + r]);
    }
  }
}

TEST(get_dcp_local_seq_lens, TransposedOutput) {
  // A column-major [B, W] view: rank-major storage, as a caller keeping per-rank rows would use.
  const std::vector<int64_t> seq{0, 5, 17, 64, 65};
  HostTensor storage({4, 5}, i32());
  int64_t shape[2] = {5, 4}, strides[2] = {1, 5};
  DLTensor out = *storage.dl();
  out.shape = shape;
  out.strides = strides;
  HostTensor s = HostTensor::of(seq, i64());
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = s.dl();
  a.dcp_size = 4;
  a.dcp_kv_cache_interleave_size = 4;
  a.out = &out;
  ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  const auto expect = deal_reference(seq, 4, 4);
  for (int64_t b = 0; b < 5; ++b)
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(storage.get(r * 5 + b), expect[b * 4 + r]);
}

TEST(get_dcp_local_seq_lens, InPlaceSingleRank) {
  // Reading and writing element b together makes an aliased same-layout [B] output safe.
  HostTensor s = HostTensor::of({1, 2, 128, 129, 256, 257}, i32());
  ASSERT_CATTN_OK(run(s, s, 4, 1, 128));
  EXPECT_EQ(s.values(), (std::vector<int64_t>{0, 0, 0, 1, 128, 128}));
}

TEST(get_dcp_local_seq_lens, OtherOverlapsRejected) {
  // A [B, W] out over the lengths, and a [B] out shifted by one element, would both overwrite
  // lengths before they are read.
  HostTensor s = HostTensor::of({1, 2, 128, 129, 256, 257, 0, 0, 0, 0, 0, 0}, i32());
  const auto before = s.bytes();
  DLTensor seq = *s.dl();
  int64_t seq_shape = 6;
  seq.shape = &seq_shape;
  DLTensor all = *s.dl();
  int64_t all_shape[2] = {6, 2};
  all.ndim = 2;
  all.shape = all_shape;
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = &seq;
  a.dcp_size = 2;
  a.out = &all;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  DLTensor shifted = seq;
  shifted.byte_offset = 4;
  a.out = &shifted;
  a.dcp_rank = 0;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT,
                     "args->out overlaps");
  EXPECT_EQ(s.bytes(), before);
}

TEST(get_dcp_local_seq_lens, Errors) {
  HostTensor seq = HostTensor::of({3, 9}, i32());
  HostTensor out({2, 2}, i32());

  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(nullptr), CATTN_INVALID_ARGUMENT, "args");
  cattn_dcp_local_seq_lens_args_t a = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  a.seq_lens = seq.dl();
  a.out = out.dl();
  a.dcp_size = 2;
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE + 64;  // a newer header's larger struct
  EXPECT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{2, 1, 5, 4}));
  a.struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE;

  HostTensor fresh({2, 2}, i32());
  const auto before = fresh.bytes();
  a.out = fresh.dl();
  a.seq_lens = nullptr;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->seq_lens");
  a.seq_lens = seq.dl();
  a.out = nullptr;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "args->out");
  a.out = fresh.dl();

  auto scalar_error = [&](int64_t size, int64_t rank, int64_t il, const char* needle) {
    a.dcp_size = size;
    a.dcp_rank = rank;
    a.dcp_kv_cache_interleave_size = il;
    EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, needle);
    EXPECT_EQ(fresh.bytes(), before);
  };
  scalar_error(0, CATTN_DCP_ALL_RANKS, 1, "args->dcp_size");
  scalar_error(-3, 0, 1, "args->dcp_size");
  scalar_error(2, CATTN_DCP_ALL_RANKS, 0, "args->dcp_kv_cache_interleave_size");
  scalar_error(2, CATTN_DCP_ALL_RANKS, -1, "args->dcp_kv_cache_interleave_size");
  scalar_error(2, CATTN_DCP_ALL_RANKS, int64_t{1} << 30, "INT32_MAX");
  scalar_error(int64_t{1} << 31, 0, 1, "INT32_MAX");
  scalar_error(INT64_MAX, 0, INT64_MAX, "INT32_MAX");
  scalar_error(2, 2, 1, "args->dcp_rank");
  scalar_error(2, -2, 1, "args->dcp_rank");
  scalar_error(2, INT64_MIN, 1, "args->dcp_rank");
  a.dcp_size = 2;
  a.dcp_rank = CATTN_DCP_ALL_RANKS;
  a.dcp_kv_cache_interleave_size = 1;
  // The largest accepted product.
  HostTensor big({2, 2}, i32());
  a.out = big.dl();
  a.dcp_kv_cache_interleave_size = 1073741823;
  EXPECT_CATTN_OK(cattn_get_dcp_local_seq_lens(&a));
  EXPECT_EQ(big.values(), (std::vector<int64_t>{3, 0, 9, 0}));
  a.dcp_kv_cache_interleave_size = 1;
  a.out = fresh.dl();

  // Shapes and dtypes.
  HostTensor seq2d = HostTensor::of({3, 9}, i32(), {1, 2});
  HostTensor seqf = HostTensor::of({3, 9}, f32());
  EXPECT_CATTN_ERROR(run(seq2d, fresh, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT, "ndim");
  EXPECT_CATTN_ERROR(run(seqf, fresh, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->seq_lens has the wrong dtype");
  HostTensor outf({2, 2}, f32());
  EXPECT_CATTN_ERROR(run(seq, outf, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong dtype");
  HostTensor out1d({2}, i32());
  const auto before1d = out1d.bytes();
  EXPECT_CATTN_ERROR(run(seq, out1d, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong ndim");
  EXPECT_CATTN_ERROR(run(seq, fresh, 2, 0, 1), CATTN_INVALID_ARGUMENT,
                     "args->out has the wrong ndim");
  HostTensor out3d({2, 1, 1}, i32());
  EXPECT_CATTN_ERROR(run(seq, out3d, 1, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT, "ndim");
  HostTensor short_rows({1, 2}, i32()), long_rows({3, 2}, i32()), narrow({2, 1}, i32()),
      wide({2, 3}, i32()), short1d({1}, i32()), long1d({3}, i32());
  EXPECT_CATTN_ERROR(run(seq, short_rows, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INSUFFICIENT_SIZE,
                     "args->out");
  EXPECT_CATTN_ERROR(run(seq, long_rows, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->out");
  EXPECT_CATTN_ERROR(run(seq, narrow, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INSUFFICIENT_SIZE,
                     "args->out");
  EXPECT_CATTN_ERROR(run(seq, wide, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->out");
  EXPECT_CATTN_ERROR(run(seq, short1d, 2, 1, 1), CATTN_INSUFFICIENT_SIZE, "args->out");
  EXPECT_CATTN_ERROR(run(seq, long1d, 2, 1, 1), CATTN_INVALID_ARGUMENT, "args->out");
  EXPECT_EQ(out1d.bytes(), before1d);
  HostTensor zero_stride({2, 2}, i32());
  int64_t zs[2] = {0, 1};
  DLTensor zdl = *zero_stride.dl();
  zdl.strides = zs;
  a.out = &zdl;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "zero stride");
  a.out = fresh.dl();

  // Data-dependent: lengths vLLM's int32 cast would wrap, and negative lengths.
  HostTensor neg = HostTensor::of({3, -1}, i32());
  EXPECT_CATTN_ERROR(run(neg, fresh, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "args->seq_lens has a negative length (got [1] = -1, expected >= 0)");
  HostTensor huge = HostTensor::of({3, int64_t{1} << 31}, i64());
  EXPECT_CATTN_ERROR(run(huge, fresh, 2, CATTN_DCP_ALL_RANKS, 1), CATTN_INVALID_ARGUMENT,
                     "2147483648");
  EXPECT_EQ(fresh.bytes(), before);

  // Devices.
  DLTensor cuda_seq = *seq.dl();
  cuda_seq.device = {kDLCUDA, 0};
  a.seq_lens = &cuda_seq;
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_INVALID_ARGUMENT, "different device");
  DLTensor cuda_out = *fresh.dl();
  cuda_out.device = {kDLCUDA, 0};
  a.out = &cuda_out;
  if (no_usable_gpu()) {
    const cattn_status_t s = cattn_get_dcp_local_seq_lens(&a);
    EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s);
  }
  cuda_seq.device = {kDLVulkan, 0};
  EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&a), CATTN_NOT_SUPPORTED, "args->seq_lens");
  EXPECT_EQ(fresh.bytes(), before);
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): DCP local sequence lengths

namespace {
using namespace cattn_test::refused_untouched;

struct Dcp : Base {
  HostTensor seq = in_tensor({5, 9, 0}, i32()), out = out_tensor({3, 2}, i64());
  Guarded<cattn_dcp_local_seq_lens_args_t> args{CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT};
  bool null_args = false;
  Dcp() {
    tensors = {&seq, &out};
    structs = {&args.bytes()};
    args->dcp_size = 2;
  }
  void wire() {
    args->seq_lens = seq.dl();
    args->out = out.dl();
    slots = {{"args->seq_lens", seq.dl(), [this] { args->seq_lens = nullptr; }},
             {"args->out", out.dl(), [this] { args->out = nullptr; }}};
  }
  cattn_status_t call() { return cattn_get_dcp_local_seq_lens(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, GetDcpLocalSeqLens) {
  using V = Variant<Dcp>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Dcp& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr,
       [](Dcp& s) { s.args->struct_size = offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode) - 1; }},
      {"struct_size between 1.0 and 1.1", I, "args has a struct_size that no version of the header has", nullptr,
       [](Dcp& s) { s.args->struct_size = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE - 1; }},
      {"dcp_size 0", I, "args->dcp_size is out of range", nullptr, [](Dcp& s) { s.args->dcp_size = 0; }},
      {"interleave 0", I, "args->dcp_kv_cache_interleave_size is out of range", nullptr,
       [](Dcp& s) { s.args->dcp_kv_cache_interleave_size = 0; }},
      {"size x interleave > INT32_MAX", I, "args->dcp_kv_cache_interleave_size times", nullptr,
       [](Dcp& s) { s.args->dcp_kv_cache_interleave_size = int64_t{1} << 30; }},
      {"rank = size", I, "args->dcp_rank is out of range", nullptr, [](Dcp& s) { s.args->dcp_rank = 2; }},
      {"rank -5", I, "args->dcp_rank is out of range", nullptr, [](Dcp& s) { s.args->dcp_rank = -5; }},
      {"seq_lens 2-D", I, "args->seq_lens has the wrong ndim", [](Dcp& s) { s.seq = in_tensor({5, 9, 0}, i32(), {3, 1}); }, nullptr},
      {"seq_lens float", I, "args->seq_lens has the wrong dtype", nullptr, [](Dcp& s) { s.args->seq_lens = s.seq.dl(); const_cast<DLTensor*>(s.args->seq_lens)->dtype = {kDLFloat, 32, 1}; }},
      {"out uint64", I, "args->out has the wrong dtype", nullptr, [](Dcp& s) { s.args->out->dtype = {kDLUInt, 64, 1}; }},
      {"out 1-D for all ranks", I, "args->out has the wrong ndim", [](Dcp& s) { s.out = out_tensor({3}, i64()); }, nullptr},
      {"out [3, 3]", I, "args->out has the wrong size in dim 1", [](Dcp& s) { s.out = out_tensor({3, 3}, i64()); }, nullptr},
      {"out [3, 1]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 1", [](Dcp& s) { s.out = out_tensor({3, 1}, i64()); }, nullptr},
      {"out [2, 2]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 0", [](Dcp& s) { s.out = out_tensor({2, 2}, i64()); }, nullptr},
      {"out zero stride", I, "args->out is an output with a zero stride", nullptr, [](Dcp& s) {
         s.scratch_strides = {0, 1};
         s.args->out->strides = s.scratch_strides.data();
       }},
      {"out one rank 2-D", I, "args->out has the wrong ndim", nullptr, [](Dcp& s) { s.args->dcp_rank = 1; }},
      {"negative length", I, "args->seq_lens has a negative length", [](Dcp& s) { s.seq = in_tensor({5, -1, 0}, i32()); }, nullptr},
      {"length past INT32_MAX", I, "args->seq_lens has a length outside", [](Dcp& s) { s.seq = in_tensor({5, int64_t{1} << 31, 0}, i64()); }, nullptr},
      {"out overlapping seq_lens", I, "args->out overlaps an input", nullptr, [](Dcp& s) {
         s.args->dcp_rank = 0;
         s.args->out = s.overlap_view(s.seq, 1, {3});
       }},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Dcp& s) {
                   s.args->out->device = {kDLCUDA, 0};
                   const_cast<DLTensor*>(s.args->seq_lens)->device = {kDLCUDA, 0};
                 }});
  sweep<Dcp>("cattn_get_dcp_local_seq_lens", structural<Dcp>() + v);
}

}  // namespace
