// SPDX-License-Identifier: Apache-2.0
// compute_mm_prefix_range_tensor and fill_mm_prefix_query_ranges: the upstream oracle's
// vectors (CSR ranges in int32/int64 and strided layouts), the size query, None, the inclusive
// end, out untouched when no row is covered, and every error path with nothing written.
#include <gtest/gtest.h>

#include <limits>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

constexpr int64_t kSentinel = 7777;

// The CSR tensors of a case: ranges [n, 2] (an [0, 2] tensor when there are none).
struct Csr {
  HostTensor offsets, ranges;
  Csr(const nlohmann::json& c, const TensorLayout& l) {
    const auto off = ints(c["range_offsets"]);
    std::vector<int64_t> flat;
    for (const auto& p : c["ranges"]) {
      flat.push_back(p[0].get<int64_t>());
      flat.push_back(p[1].get<int64_t>());
    }
    offsets = laid_out(off, {static_cast<int64_t>(off.size())}, l);
    ranges = laid_out(flat, {static_cast<int64_t>(flat.size() / 2), 2}, l);
  }
};

const TensorLayout kLayouts[] = {{i32(), 1, 0, 0}, {i64(), 1, 0, 0}, {i32(), 2, 1, 0},
                                 {i64(), 3, 2, 0}};

}  // namespace

TEST(compute_mm_prefix_range_tensor, OracleVectors) {
  const auto vec = load_vectors("compute_mm_prefix_range_tensor");
  ASSERT_GE(vec["cases"].size(), 30u);
  int nones = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const bool want_none = c["is_none"];
    nones += want_none;
    for (const TensorLayout& l : kLayouts) {
      cattn_mm_prefix_range_tensor_args_t a = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
      if (c["none_input"]) {
        ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&a));
        EXPECT_EQ(a.is_none, 1);
        EXPECT_EQ(a.max_ranges, 0);
        continue;
      }
      Csr csr(c, l);
      a.range_offsets = csr.offsets.dl();
      a.ranges = csr.ranges.dl();
      ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&a));  // the size query
      EXPECT_EQ(a.is_none, want_none ? 1 : 0);
      EXPECT_EQ(a.max_ranges, c["max_ranges"].get<int64_t>());
      if (want_none) continue;
      const int64_t num_seqs = c["num_seqs"];
      for (DLDataType out_t : {i32(), i64()}) {
        HostTensor out({num_seqs, a.max_ranges, 2}, out_t, l.step, l.offset);
        a.out = out.dl();
        ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&a));
        EXPECT_EQ(out.values(), ints(c["out"]));
      }
    }
  }
  EXPECT_GE(nones, 6);
}

TEST(compute_mm_prefix_range_tensor, NoneLeavesOutAlone) {
  // Every list empty or [(0, 0)]: None even with an out given, and out is not touched.
  HostTensor off = HostTensor::of({0, 0, 1, 1}, i32()), rng = HostTensor::of({0, 0}, i32(), {1, 2});
  HostTensor out({3, 1, 2}, i32());
  const auto before = out.bytes();
  cattn_mm_prefix_range_tensor_args_t a = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
  a.range_offsets = off.dl();
  a.ranges = rng.dl();
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&a));
  EXPECT_EQ(a.is_none, 1);
  EXPECT_EQ(out.bytes(), before);
}

TEST(compute_mm_prefix_range_tensor, Errors) {
  HostTensor off = HostTensor::of({0, 2, 3}, i32());
  HostTensor rng = HostTensor::of({1, 4, 6, 9, 2, 3}, i64(), {3, 2});
  HostTensor out({2, 2, 2}, i32());
  const auto before = out.bytes();
  cattn_mm_prefix_range_tensor_args_t a = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
  auto reset = [&] {
    a = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT;
    a.range_offsets = off.dl();
    a.ranges = rng.dl();
    a.out = out.dl();
    a.max_ranges = -5;
    a.is_none = -5;
  };
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(nullptr), CATTN_INVALID_ARGUMENT, "args is NULL");
  reset();
  a.struct_size = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  reset();
  a.reserved0 = 1;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->reserved0");
  reset();
  a.ranges = nullptr;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->ranges");
  reset();
  a.range_offsets = nullptr;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->range_offsets");
  HostTensor off_bad0 = HostTensor::of({1, 2, 3}, i32()), off_dec = HostTensor::of({0, 2, 1}, i32()),
             off_past = HostTensor::of({0, 2, 4}, i32()), off_empty({0}, i32());
  for (HostTensor* bad : {&off_bad0, &off_dec, &off_past, &off_empty}) {
    reset();
    a.range_offsets = bad->dl();
    EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->range_offsets");
  }
  HostTensor rng3 = HostTensor::of({1, 4, 6, 9, 2, 3}, i64(), {2, 3});
  HostTensor rng_big = HostTensor::of({1, 4, 6, int64_t{1} << 31, 2, 3}, i64(), {3, 2});
  HostTensor rng_f({3, 2}, f32());
  for (HostTensor* bad : {&rng3, &rng_big, &rng_f}) {
    reset();
    a.ranges = bad->dl();
    EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->ranges");
  }
  HostTensor small({2, 1, 2}, i32()), wide({2, 3, 2}, i32()), flat({2, 4}, i32());
  reset();
  a.out = small.dl();
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INSUFFICIENT_SIZE, "args->out");
  reset();
  a.out = wide.dl();
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->out");
  reset();
  a.out = flat.dl();
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "args->out");
  reset();
  DLTensor dev = *out.dl();
  dev.device = {kDLCUDA, 0};
  a.out = &dev;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_NOT_SUPPORTED, "args->out");
  // An out over the ranges themselves.
  reset();
  DLTensor over = *out.dl();
  over.data = rng.dl()->data;
  over.byte_offset = rng.dl()->byte_offset;
  over.dtype = rng.dl()->dtype;
  a.out = &over;
  EXPECT_CATTN_ERROR(cattn_compute_mm_prefix_range_tensor(&a), CATTN_INVALID_ARGUMENT, "overlaps");
  EXPECT_EQ(a.max_ranges, -5);  // nothing written on failure
  EXPECT_EQ(a.is_none, -5);
  EXPECT_EQ(out.bytes(), before);
  reset();
  ASSERT_CATTN_OK(cattn_compute_mm_prefix_range_tensor(&a));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1, 4, 6, 9, 2, 3, 0, 0}));
}

TEST(fill_mm_prefix_query_ranges, OracleVectors) {
  const auto vec = load_vectors("fill_mm_prefix_query_ranges");
  ASSERT_GE(vec["cases"].size(), 40u);
  int zero_rows = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto qsl = ints(c["query_start_loc"]);
    const auto seq = ints(c["seq_lens"]);
    const int64_t capacity = c["capacity"], rows = c["rows"];
    zero_rows += rows == 0;
    for (const TensorLayout& l : kLayouts) {
      HostTensor q = laid_out(qsl, {static_cast<int64_t>(qsl.size())}, l);
      HostTensor s = laid_out(seq, {static_cast<int64_t>(seq.size())}, l);
      for (DLDataType out_t : {i32(), i64()}) {
        HostTensor out = laid_out(std::vector<int64_t>(static_cast<size_t>(capacity * 2), kSentinel),
                                  {capacity, 2}, {out_t, l.step, l.offset, 0});
        cattn_fill_mm_prefix_query_ranges_args_t a = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
        a.query_start_loc_cpu = q.dl();
        a.seq_lens_cpu = s.dl();
        a.out = out.dl();
        a.rows = -9;
        Csr* csr = nullptr;
        Csr storage = c["none_input"] ? Csr(nlohmann::json{{"range_offsets", {0}}, {"ranges", nlohmann::json::array()}}, l)
                                      : Csr(c, l);
        if (!c["none_input"]) csr = &storage;
        if (csr) {
          a.range_offsets = csr->offsets.dl();
          a.ranges = csr->ranges.dl();
        }
        ASSERT_CATTN_OK(cattn_fill_mm_prefix_query_ranges(&a));
        EXPECT_EQ(a.rows, rows);
        EXPECT_EQ(out.values(), ints(c["out"]));
      }
    }
  }
  EXPECT_GE(zero_rows, 8);
}

TEST(fill_mm_prefix_query_ranges, InclusiveEndAndOverwrite) {
  // Request 0: q 8 from position 0; (2, 4) covers rows 2, 3 AND 4; (3, 4) then overwrites 3, 4.
  HostTensor off = HostTensor::of({0, 2}, i32()), rng = HostTensor::of({2, 4, 3, 4}, i32(), {2, 2});
  HostTensor q = HostTensor::of({0, 8}, i32()), s = HostTensor::of({8}, i32());
  HostTensor out({8, 2}, i64());
  cattn_fill_mm_prefix_query_ranges_args_t a = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
  a.range_offsets = off.dl();
  a.ranges = rng.dl();
  a.query_start_loc_cpu = q.dl();
  a.seq_lens_cpu = s.dl();
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_fill_mm_prefix_query_ranges(&a));
  EXPECT_EQ(a.rows, 8);
  EXPECT_EQ(out.values(), (std::vector<int64_t>{-1, -1, -1, -1, 2, 4, 3, 4, 3, 4, -1, -1, -1, -1,
                                                -1, -1}));
}

TEST(fill_mm_prefix_query_ranges, ExtremeValuesDoNotOverflow) {
  // Context and ranges near the int64 limits: vLLM's Python integers never overflow, and
  // neither does libcattn's arithmetic. seq_len INT64_MIN + 3 gives a context far below any
  // range, a range starting at INT64_MIN covers every query row.
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  HostTensor off = HostTensor::of({0, 1, 2}, i64()), rng = HostTensor::of({lo, hi, lo, lo + 1}, i64(), {2, 2});
  HostTensor q = HostTensor::of({0, 3, 5}, i64()), s = HostTensor::of({lo + 3, hi}, i64());
  HostTensor out({5, 2}, i64());
  cattn_fill_mm_prefix_query_ranges_args_t a = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
  a.range_offsets = off.dl();
  a.ranges = rng.dl();
  a.query_start_loc_cpu = q.dl();
  a.seq_lens_cpu = s.dl();
  a.out = out.dl();
  ASSERT_CATTN_OK(cattn_fill_mm_prefix_query_ranges(&a));
  // Request 0: context lo + 3 - 3 = lo, range (lo, hi): first 0, last min(hi - lo, 2) = 2.
  // Request 1: context hi - 2, range (lo, lo + 1): last = lo + 1 - (hi - 2) < 0: not covered.
  EXPECT_EQ(a.rows, 5);
  EXPECT_EQ(out.values(), (std::vector<int64_t>{lo, hi, lo, hi, lo, hi, -1, -1, -1, -1}));
  // An int32 out cannot hold those values.
  HostTensor out32({5, 2}, i32());
  const auto before = out32.bytes();
  a.out = out32.dl();
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->ranges");
  EXPECT_EQ(out32.bytes(), before);
}

TEST(fill_mm_prefix_query_ranges, Errors) {
  HostTensor off = HostTensor::of({0, 1, 1}, i32()), rng = HostTensor::of({0, 10}, i32(), {1, 2});
  HostTensor q = HostTensor::of({0, 3, 5}, i32()), s = HostTensor::of({3, 2}, i32());
  HostTensor out({6, 2}, i32());
  const auto before = out.bytes();
  cattn_fill_mm_prefix_query_ranges_args_t a;
  auto reset = [&] {
    a = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT;
    a.range_offsets = off.dl();
    a.ranges = rng.dl();
    a.query_start_loc_cpu = q.dl();
    a.seq_lens_cpu = s.dl();
    a.out = out.dl();
    a.rows = -3;
  };
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(nullptr), CATTN_INVALID_ARGUMENT, "args is NULL");
  reset();
  a.struct_size = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  reset();
  a.query_start_loc_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->query_start_loc_cpu");
  reset();
  a.seq_lens_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->seq_lens_cpu");
  reset();
  a.ranges = nullptr;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->ranges");
  HostTensor q_dec = HostTensor::of({0, 3, 2}, i32()), q_from1 = HostTensor::of({1, 3, 5}, i32()),
             q_empty({0}, i32());
  for (HostTensor* bad : {&q_dec, &q_from1, &q_empty}) {
    reset();
    a.query_start_loc_cpu = bad->dl();
    EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->query_start_loc_cpu");
  }
  HostTensor s3 = HostTensor::of({3, 2, 1}, i32());
  reset();
  a.seq_lens_cpu = s3.dl();
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->seq_lens_cpu");
  HostTensor off3 = HostTensor::of({0, 1}, i32());
  reset();
  a.range_offsets = off3.dl();  // describes 1 request, the batch has 2
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->range_offsets");
  // Capacity below T: vLLM asserts, also when no range covers a row.
  HostTensor small({4, 2}, i32());
  const auto small_before = small.bytes();
  HostTensor none_off = HostTensor::of({0, 0, 0}, i32());
  for (HostTensor* o : {&off, &none_off}) {
    reset();
    a.range_offsets = o->dl();
    a.out = small.dl();
    EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INSUFFICIENT_SIZE, "args->out");
  }
  EXPECT_EQ(small.bytes(), small_before);
  HostTensor out3({6, 3}, i32());
  reset();
  a.out = out3.dl();
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "args->out");
  // out over query_start_loc_cpu.
  reset();
  DLTensor over = *out.dl();
  over.data = q.dl()->data;
  a.out = &over;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_INVALID_ARGUMENT, "overlaps");
  reset();
  DLTensor dev = *out.dl();
  dev.device = {kDLCUDA, 0};
  a.out = &dev;
  EXPECT_CATTN_ERROR(cattn_fill_mm_prefix_query_ranges(&a), CATTN_NOT_SUPPORTED, "args->out");
  EXPECT_EQ(a.rows, -3);
  EXPECT_EQ(out.bytes(), before);
  reset();
  ASSERT_CATTN_OK(cattn_fill_mm_prefix_query_ranges(&a));
  EXPECT_EQ(a.rows, 5);
  const auto v = out.values();
  EXPECT_EQ(std::vector<int64_t>(v.begin(), v.begin() + 10),
            (std::vector<int64_t>{0, 10, 0, 10, 0, 10, -1, -1, -1, -1}));
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): the mm prefix helpers

namespace {
using namespace cattn_test::refused_untouched;

struct MmTensor : Base {
  HostTensor off = in_tensor({0, 2, 3}, i32()), rng = in_tensor({1, 4, 6, 9, 2, 3}, i64(), {3, 2}),
             out = out_tensor({2, 2, 2}, i32());
  Guarded<cattn_mm_prefix_range_tensor_args_t> args{CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT};
  bool null_args = false;
  MmTensor() {
    tensors = {&off, &rng, &out};
    structs = {&args.bytes()};
  }
  void wire() {
    args->range_offsets = off.dl();
    args->ranges = rng.dl();
    args->out = out.dl();
    slots = {{"args->range_offsets", off.dl(), [this] { args->range_offsets = nullptr; }},
             {"args->ranges", rng.dl(), [this] { args->ranges = nullptr; }},
             {"args->out", out.dl(), {}, false}};
  }
  cattn_status_t call() {
    return cattn_compute_mm_prefix_range_tensor(null_args ? nullptr : args.get());
  }
};

struct MmFill : Base {
  HostTensor off = in_tensor({0, 1, 1}, i32()), rng = in_tensor({0, 10}, i32(), {1, 2}),
             qsl = in_tensor({0, 3, 5}, i64()), seq = in_tensor({3, 2}, i32()),
             out = out_tensor({6, 2}, i32());
  Guarded<cattn_fill_mm_prefix_query_ranges_args_t> args{CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT};
  bool null_args = false;
  MmFill() {
    tensors = {&off, &rng, &qsl, &seq, &out};
    structs = {&args.bytes()};
  }
  void wire() {
    args->range_offsets = off.dl();
    args->ranges = rng.dl();
    args->query_start_loc_cpu = qsl.dl();
    args->seq_lens_cpu = seq.dl();
    args->out = out.dl();
    slots = {{"args->range_offsets", off.dl(), [this] { args->range_offsets = nullptr; }},
             {"args->ranges", rng.dl(), [this] { args->ranges = nullptr; }},
             {"args->query_start_loc_cpu", qsl.dl(), [this] { args->query_start_loc_cpu = nullptr; }},
             {"args->seq_lens_cpu", seq.dl(), [this] { args->seq_lens_cpu = nullptr; }},
             {"args->out", out.dl(), [this] { args->out = nullptr; }, false}};
  }
  cattn_status_t call() {
    return cattn_fill_mm_prefix_query_ranges(null_args ? nullptr : args.get());
  }
};

}  // namespace

TEST(refused_untouched, ComputeMmPrefixRangeTensor) {
  using V = Variant<MmTensor>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](MmTensor& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr,
       [](MmTensor& s) { s.args->struct_size = CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE - 1; }},
      {"reserved0 set", I, "args->reserved0 is not 0", nullptr, [](MmTensor& s) { s.args->reserved0 = 7; }},
      {"offsets from 1", I, "args->range_offsets does not start at 0", [](MmTensor& s) { s.off = in_tensor({1, 2, 3}, i32()); }, nullptr},
      {"offsets decrease", I, "args->range_offsets decreases", [](MmTensor& s) { s.off = in_tensor({0, 3, 2}, i32()); }, nullptr},
      {"offsets past ranges", I, "args->range_offsets points past the rows", [](MmTensor& s) { s.off = in_tensor({0, 2, 4}, i32()); }, nullptr},
      {"ranges [2, 3]", I, "args->ranges has the wrong size in dim 1", [](MmTensor& s) { s.rng = in_tensor({1, 4, 6, 9, 2, 3}, i64(), {2, 3}); }, nullptr},
      {"range past int32", I, "args->ranges holds a value outside int32", [](MmTensor& s) { s.rng = in_tensor({1, 4, 6, int64_t{1} << 31, 2, 3}, i64(), {3, 2}); }, nullptr},
      {"out [2, 1, 2]", CATTN_INSUFFICIENT_SIZE, "args->out has the wrong size in dim 1", [](MmTensor& s) { s.out = out_tensor({2, 1, 2}, i32()); }, nullptr},
      {"out [3, 2, 2]", I, "args->out has the wrong size in dim 0", [](MmTensor& s) { s.out = out_tensor({3, 2, 2}, i32()); }, nullptr},
      {"out float", I, "args->out has the wrong dtype", nullptr, [](MmTensor& s) { s.args->out->dtype = {kDLFloat, 32, 1}; }},
      {"out on a GPU", CATTN_NOT_SUPPORTED, "args->out is device memory", nullptr, [](MmTensor& s) { s.args->out->device = {kDLCUDA, 0}; }},
      {"out over ranges", I, "args->out overlaps", nullptr, [](MmTensor& s) { s.args->out = s.overlap_view(s.rng, 0, {1, 2}); s.alias.ndim = 3; s.alias_shape[0] = 2; s.alias_shape[1] = 2; s.alias_shape[2] = 2; s.alias.dtype = {kDLInt, 32, 1}; }},
  };
  sweep<MmTensor>("cattn_compute_mm_prefix_range_tensor", structural<MmTensor>() + v);
}

TEST(refused_untouched, FillMmPrefixQueryRanges) {
  using V = Variant<MmFill>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](MmFill& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr,
       [](MmFill& s) { s.args->struct_size = CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE - 1; }},
      {"qsl from 1", I, "args->query_start_loc_cpu does not start at 0", [](MmFill& s) { s.qsl = in_tensor({1, 3, 5}, i64()); }, nullptr},
      {"qsl decreases", I, "args->query_start_loc_cpu decreases", [](MmFill& s) { s.qsl = in_tensor({0, 3, 2}, i64()); }, nullptr},
      {"seq_lens [3]", I, "args->seq_lens_cpu has the wrong size in dim 0", [](MmFill& s) { s.seq = in_tensor({3, 2, 1}, i32()); }, nullptr},
      {"offsets of 1 request", I, "args->range_offsets has the wrong size in dim 0", [](MmFill& s) { s.off = in_tensor({0, 1}, i32()); }, nullptr},
      {"capacity 4 < 5 tokens", CATTN_INSUFFICIENT_SIZE, "args->out holds fewer rows than the query tokens", [](MmFill& s) { s.out = out_tensor({4, 2}, i32()); }, nullptr},
      {"out [6, 3]", I, "args->out has the wrong size in dim 1", [](MmFill& s) { s.out = out_tensor({6, 3}, i32()); }, nullptr},
      {"out on a GPU", CATTN_NOT_SUPPORTED, "args->out is device memory", nullptr, [](MmFill& s) { s.args->out->device = {kDLCUDA, 0}; }},
      {"int32 out, value past int32", I, "args->ranges holds a value an int32 out cannot store", [](MmFill& s) { s.rng = in_tensor({0, int64_t{1} << 40}, i64(), {1, 2}); }, nullptr},
      {"out over query_start_loc_cpu", I, "args->out overlaps", nullptr, [](MmFill& s) { s.args->out = s.overlap_view(s.qsl, 0, {1, 2}); }},
  };
  sweep<MmFill>("cattn_fill_mm_prefix_query_ranges", structural<MmFill>() + v);
}
