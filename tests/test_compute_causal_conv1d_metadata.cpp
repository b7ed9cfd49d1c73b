// SPDX-License-Identifier: Apache-2.0
// compute_causal_conv1d_metadata: conformance against the seed oracle's vectors (block sizes
// other than vLLM's 8 included), an independent reference on random batches, optional and
// oversized outputs, layouts (int32/int64, strided, misaligned), and every error path.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
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

struct Expected {
  std::vector<int64_t> nums, mlist, offsetlist;
  int64_t tot = 0;
};

// Straightforward restatement of vLLM's loop: one program per started block of block_m tokens.
Expected reference(const std::vector<int64_t>& qsl, int64_t block_m) {
  Expected e;
  for (size_t i = 0; i + 1 < qsl.size(); ++i) {
    int64_t n = 0;
    for (int64_t covered = 0; covered < qsl[i + 1] - qsl[i]; covered += block_m) ++n;
    e.nums.push_back(n);
    for (int64_t o = 0; o < n; ++o) {
      e.mlist.push_back(static_cast<int64_t>(i));
      e.offsetlist.push_back(o);
    }
  }
  e.tot = static_cast<int64_t>(e.mlist.size());
  return e;
}

std::vector<int64_t> padded(std::vector<int64_t> head, int64_t capacity) {
  head.resize(static_cast<size_t>(capacity), CATTN_PAD_SLOT_ID);
  return head;
}

std::vector<int64_t> head_of(HostTensor& t, int64_t n) {
  auto v = t.values();
  v.resize(static_cast<size_t>(n));
  return v;
}

struct Outputs {
  HostTensor* nums = nullptr;
  HostTensor* mlist = nullptr;
  HostTensor* offsetlist = nullptr;
  HostTensor* batch_ptr = nullptr;
  HostTensor* chunk_ptr = nullptr;
};

cattn_status_t run(const DLTensor* qsl, int64_t block_m, const Outputs& o,
                   int64_t* tot = nullptr) {
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = qsl;
  a.block_m = block_m;
  a.nums = o.nums ? o.nums->dl() : nullptr;
  a.mlist = o.mlist ? o.mlist->dl() : nullptr;
  a.offsetlist = o.offsetlist ? o.offsetlist->dl() : nullptr;
  a.batch_ptr = o.batch_ptr ? o.batch_ptr->dl() : nullptr;
  a.token_chunk_offset_ptr = o.chunk_ptr ? o.chunk_ptr->dl() : nullptr;
  a.tot = -12345;
  const cattn_status_t s = cattn_compute_causal_conv1d_metadata(&a);
  if (tot) *tot = a.tot;
  return s;
}
cattn_status_t run(HostTensor& qsl, int64_t block_m, const Outputs& o, int64_t* tot = nullptr) {
  return run(qsl.dl(), block_m, o, tot);
}

}  // namespace

TEST(compute_causal_conv1d_metadata, OracleVectors) {
  const auto vec = load_vectors("compute_causal_conv1d_metadata");
  ASSERT_GT(vec["cases"].size(), 20u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto qsl = ints(c["query_start_loc_cpu"]);
    const int64_t block_m = c["block_m"].get<int64_t>();
    const int64_t tot = c["tot"].get<int64_t>();
    const int64_t capacity = c["capacity"].get<int64_t>();
    const auto nums = ints(c["nums"]);
    const auto batch_ptr = padded(ints(c["batch_ptr_head"]), capacity);
    const auto chunk_ptr = padded(ints(c["token_chunk_offset_ptr_head"]), capacity);
    // The oracle fills the launch arrays with PAD_SLOT_ID; capacity > tot always holds there.
    ASSERT_EQ(c["batch_ptr_fill"].get<int64_t>(), CATTN_PAD_SLOT_ID);
    ASSERT_EQ(c["token_chunk_offset_ptr_fill"].get<int64_t>(), CATTN_PAD_SLOT_ID);
    const int64_t batch = static_cast<int64_t>(nums.size());
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3}) {
          HostTensor q = HostTensor::of(qsl, in_t, {}, step, step == 1 ? 0 : 1);
          int64_t got_tot = -1, got_cap = -1;
          ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), block_m, &got_tot,
                                                                    &got_cap));
          ASSERT_EQ(got_tot, tot);
          ASSERT_EQ(got_cap, capacity);
          HostTensor n({batch}, out_t, step, step == 1 ? 0 : 2);
          HostTensor m({tot}, out_t, step), off({tot}, out_t, step);
          HostTensor bp({capacity}, out_t, step, step == 1 ? 0 : 1), cp({capacity}, out_t, step);
          int64_t written = -1;
          ASSERT_CATTN_OK(run(q, block_m, {&n, &m, &off, &bp, &cp}, &written));
          EXPECT_EQ(written, tot);
          EXPECT_EQ(n.values(), nums);
          EXPECT_EQ(m.values(), ints(c["mlist"]));
          EXPECT_EQ(off.values(), ints(c["offsetlist"]));
          EXPECT_EQ(bp.values(), batch_ptr);
          EXPECT_EQ(cp.values(), chunk_ptr);
        }
  }
}

TEST(compute_causal_conv1d_metadata, RandomAgainstReference) {
  std::mt19937_64 g(11);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t batch = static_cast<int64_t>(g() % 1025);
    const int64_t block_m = iter % 3 == 0 ? 8 : 1 + static_cast<int64_t>(g() % 100);
    const int64_t max_len = 1 + static_cast<int64_t>(g() % 256);
    std::vector<int64_t> qsl{static_cast<int64_t>(g() % 50)};
    for (int64_t i = 0; i < batch; ++i) {
      const int kind = static_cast<int>(g() % 5);
      qsl.push_back(qsl.back() + (kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int64_t>(g() % max_len)));
    }
    const Expected e = reference(qsl, block_m);
    const int64_t capacity = e.tot + static_cast<int64_t>(g() % 40);
    const DLDataType out_t = iter % 2 ? i32() : i64();
    const int64_t step = 1 + static_cast<int64_t>(g() % 2);
    HostTensor q = HostTensor::of(qsl, iter % 4 < 2 ? i64() : i32());
    HostTensor n({batch}, out_t, step), m({e.tot}, out_t, step), off({e.tot}, out_t);
    HostTensor bp({capacity}, out_t), cp({capacity}, out_t, step);
    int64_t tot = -1;
    ASSERT_CATTN_OK(run(q, block_m, {&n, &m, &off, &bp, &cp}, &tot));
    ASSERT_EQ(tot, e.tot);
    ASSERT_EQ(n.values(), e.nums);
    ASSERT_EQ(m.values(), e.mlist);
    ASSERT_EQ(off.values(), e.offsetlist);
    ASSERT_EQ(bp.values(), padded(e.mlist, capacity));
    ASSERT_EQ(cp.values(), padded(e.offsetlist, capacity));
  }
}

TEST(compute_causal_conv1d_metadata, OptionalOutputsAndCapacities) {
  HostTensor q = HostTensor::of({0, 10, 16, 17}, i32());
  // No output at all: the call still reports tot.
  int64_t tot = -1;
  ASSERT_CATTN_OK(run(q, 8, {}, &tot));
  EXPECT_EQ(tot, 4);
  // Only one launch array, exactly tot long: no room for (and no write of) padding.
  HostTensor bp({4}, i32());
  ASSERT_CATTN_OK(run(q, 8, {nullptr, nullptr, nullptr, &bp, nullptr}, &tot));
  EXPECT_EQ(bp.values(), (std::vector<int64_t>{0, 0, 1, 2}));
  // mlist/offsetlist longer than tot: entries past tot are left as they were.
  HostTensor m({7}, i64()), off({6}, i32());
  const auto m_before = m.values();
  const auto off_before = off.values();
  ASSERT_CATTN_OK(run(q, 8, {nullptr, &m, &off, nullptr, nullptr}, &tot));
  EXPECT_EQ(head_of(m, 4), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(head_of(off, 4), (std::vector<int64_t>{0, 1, 0, 0}));
  for (int64_t i = 4; i < 7; ++i) EXPECT_EQ(m.get(i), m_before[static_cast<size_t>(i)]);
  for (int64_t i = 4; i < 6; ++i) EXPECT_EQ(off.get(i), off_before[static_cast<size_t>(i)]);
  // A smaller capacity than vLLM's 2048 is fine as long as it holds tot.
  HostTensor cp({9}, i64(), 2, 3);
  ASSERT_CATTN_OK(run(q, 8, {nullptr, nullptr, nullptr, nullptr, &cp}, &tot));
  EXPECT_EQ(cp.values(), (std::vector<int64_t>{0, 1, 0, 0, -1, -1, -1, -1, -1}));
  // Empty tensor = empty batch, as in vLLM; the size query gives vLLM's 2048.
  HostTensor empty({0}, i64());
  int64_t cap = -1;
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(empty.dl(), 8, &tot, &cap));
  EXPECT_EQ(tot, 0);
  EXPECT_EQ(cap, 2048);
  HostTensor n0({0}, i32()), bp0({3}, i32());
  ASSERT_CATTN_OK(run(empty, 8, {&n0, nullptr, nullptr, &bp0, nullptr}, &tot));
  EXPECT_EQ(bp0.values(), (std::vector<int64_t>{-1, -1, -1}));
  // Either size output may be NULL.
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), 8, nullptr, &cap));
  EXPECT_EQ(cap, 2048);
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), 8, &tot, nullptr));
  EXPECT_EQ(tot, 4);
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(q.dl(), 8, nullptr, nullptr));
}

TEST(compute_causal_conv1d_metadata, MisalignedOutputs) {
  // DLPack allows any byte_offset; the typed fast path must not be taken then.
  HostTensor q = HostTensor::of({0, 10, 16, 17}, i64());
  for (DLDataType t : {i32(), i64()}) {
    HostTensor n({3}, t), bp({6}, t);
    cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
    a.query_start_loc_cpu = q.dl();
    a.nums = n.dl();
    a.nums->byte_offset = 1;
    a.batch_ptr = bp.dl();
    a.batch_ptr->byte_offset = 3;
    ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&a));
    auto read = [&](const HostTensor& h, int64_t off, int64_t i) {
      const uint8_t* p = h.bytes().data() + off + i * (t.bits / 8);
      if (t.bits == 64) {
        int64_t v;
        std::memcpy(&v, p, 8);
        return v;
      }
      int32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<int64_t>(v);
    };
    EXPECT_EQ(read(n, 1, 0), 2);
    EXPECT_EQ(read(n, 1, 1), 1);
    EXPECT_EQ(read(n, 1, 2), 1);
    const std::vector<int64_t> want{0, 0, 1, 2, -1, -1};
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(read(bp, 3, i), want[static_cast<size_t>(i)]);
  }
}

TEST(compute_causal_conv1d_metadata, Errors) {
  HostTensor q = HostTensor::of({0, 10, 16, 17}, i32());
  HostTensor n({3}, i32()), m({4}, i32()), off({4}, i32()), bp({8}, i32()), cp({8}, i32());
  const Outputs all{&n, &m, &off, &bp, &cp};
  auto untouched = [&, b = std::vector<std::vector<uint8_t>>{n.bytes(), m.bytes(), off.bytes(),
                                                              bp.bytes(), cp.bytes()}]() {
    return b == std::vector<std::vector<uint8_t>>{n.bytes(), m.bytes(), off.bytes(), bp.bytes(),
                                                  cp.bytes()};
  };

  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(nullptr), CATTN_INVALID_ARGUMENT,
                     "args");
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.batch_ptr = bp.dl();
  a.struct_size = sizeof(size_t);
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&a), CATTN_INVALID_ARGUMENT,
                     "struct_size");
  a.struct_size = CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE;
  a.query_start_loc_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&a), CATTN_INVALID_ARGUMENT,
                     "args->query_start_loc_cpu");
  EXPECT_EQ(a.tot, 0) << "a failed call wrote tot";

  // Malformed query_start_loc_cpu.
  HostTensor flt = HostTensor::of({0, 4}, f32());
  EXPECT_CATTN_ERROR(run(flt, 8, all), CATTN_INVALID_ARGUMENT, "dtype");
  HostTensor two_d = HostTensor::of({0, 4, 8, 12}, i32(), {2, 2});
  EXPECT_CATTN_ERROR(run(two_d, 8, all), CATTN_INVALID_ARGUMENT, "ndim");
  HostTensor dec = HostTensor::of({0, 4, 3, 9}, i64());
  EXPECT_CATTN_ERROR(run(dec, 8, all), CATTN_INVALID_ARGUMENT, "decreases");
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  HostTensor wide = HostTensor::of({lo, 0, 1}, i64());
  EXPECT_CATTN_ERROR(run(wide, 8, all), CATTN_INVALID_ARGUMENT, "overflows int64");
  HostTensor many = HostTensor::of({lo + 1, 0, hi}, i64());
  EXPECT_CATTN_ERROR(run(many, 1, {}), CATTN_INVALID_ARGUMENT, "number of programs");
  EXPECT_CATTN_ERROR(run(q, 0, all), CATTN_INVALID_ARGUMENT, "block_m");
  EXPECT_CATTN_ERROR(run(q, -8, all), CATTN_INVALID_ARGUMENT, "block_m");
  DLTensor* q_elsewhere = q.dl();
  q_elsewhere->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(run(q_elsewhere, 8, all), CATTN_INVALID_ARGUMENT, "host");
  q_elsewhere->device = {kDLOpenCL, 0};
  EXPECT_CATTN_ERROR(run(q_elsewhere, 8, all), CATTN_NOT_SUPPORTED, "device");
  EXPECT_TRUE(untouched()) << "a failed call wrote to an output";

  // Malformed outputs, one at a time.
  HostTensor n_small({2}, i32()), n_big({4}, i32()), n_f({3}, f32());
  EXPECT_CATTN_ERROR(run(q, 8, {&n_small, &m, &off, &bp, &cp}), CATTN_INSUFFICIENT_SIZE,
                     "args->nums");
  EXPECT_CATTN_ERROR(run(q, 8, {&n_big, &m, &off, &bp, &cp}), CATTN_INVALID_ARGUMENT,
                     "args->nums");
  EXPECT_CATTN_ERROR(run(q, 8, {&n_f, &m, &off, &bp, &cp}), CATTN_INVALID_ARGUMENT,
                     "args->nums has the wrong dtype");
  HostTensor short3({3}, i64());
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &short3, &off, &bp, &cp}), CATTN_INSUFFICIENT_SIZE,
                     "args->mlist");
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &m, &short3, &bp, &cp}), CATTN_INSUFFICIENT_SIZE,
                     "args->offsetlist");
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &m, &off, &short3, &cp}), CATTN_INSUFFICIENT_SIZE,
                     "args->batch_ptr");
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &m, &off, &bp, &short3}), CATTN_INSUFFICIENT_SIZE,
                     "args->token_chunk_offset_ptr");
  HostTensor m2d({2, 2}, i32());
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &m2d, &off, &bp, &cp}), CATTN_INVALID_ARGUMENT,
                     "args->mlist has the wrong ndim");
  HostTensor u16({8}, dtype_bits(16));
  EXPECT_CATTN_ERROR(run(q, 8, {&n, &m, &off, &u16, &cp}), CATTN_INVALID_ARGUMENT,
                     "args->batch_ptr has the wrong dtype");
  {
    HostTensor zero_stride({8}, i32());
    DLTensor* d = zero_stride.dl();
    int64_t stride0 = 0;
    d->strides = &stride0;
    cattn_causal_conv1d_metadata_args_t z = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
    z.query_start_loc_cpu = q.dl();
    z.token_chunk_offset_ptr = d;
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&z), CATTN_INVALID_ARGUMENT,
                       "zero stride");
  }
  EXPECT_TRUE(untouched()) << "a failed call wrote to an output";

  // Outputs on different devices; then all on a GPU (checked fully, then no CUDA path yet).
  {
    cattn_causal_conv1d_metadata_args_t d = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
    d.query_start_loc_cpu = q.dl();
    d.nums = n.dl();
    d.batch_ptr = bp.dl();
    d.batch_ptr->device = {kDLCUDA, 0};
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&d), CATTN_INVALID_ARGUMENT,
                       "different device");
    d.nums = nullptr;
    d.batch_ptr = short3.dl();
    d.batch_ptr->device = {kDLCUDA, 0};
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&d), CATTN_INSUFFICIENT_SIZE,
                       "args->batch_ptr");
    d.batch_ptr = bp.dl();
    d.batch_ptr->device = {kDLCUDA, 0};
    d.tot = -7;
    if (no_usable_gpu()) {
      const cattn_status_t s = cattn_compute_causal_conv1d_metadata(&d);
      EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s) << ": "
                                        << cattn_last_error_message();
      EXPECT_EQ(d.tot, -7);
    }
  }

  // A result that does not fit an int32 output: one request of 2^32 tokens with block_m 1.
  HostTensor huge = HostTensor::of({0, int64_t{1} << 32}, i64());
  HostTensor n32({1}, i32()), n64({1}, i64());
  EXPECT_CATTN_ERROR(run(huge, 1, {&n32, nullptr, nullptr, nullptr, nullptr}),
                     CATTN_INVALID_ARGUMENT, "int32");
  ASSERT_CATTN_OK(run(huge, 1, {&n64, nullptr, nullptr, nullptr, nullptr}));
  EXPECT_EQ(n64.get(0), int64_t{1} << 32);
  {
    // Chunk indices up to 2^32 - 1 in an int32 offsetlist: rejected before anything is
    // written (the tensor's memory is never touched, so a dummy address suffices).
    DLTensor big{};
    int64_t shape = int64_t{1} << 32, stride = 1;
    big.data = reinterpret_cast<void*>(0x1000);
    big.device = {kDLCPU, 0};
    big.ndim = 1;
    big.dtype = i32();
    big.shape = &shape;
    big.strides = &stride;
    cattn_causal_conv1d_metadata_args_t b = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
    b.query_start_loc_cpu = huge.dl();
    b.block_m = 1;
    b.offsetlist = &big;
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&b), CATTN_INVALID_ARGUMENT,
                       "args->offsetlist cannot hold");
  }

  // The size query.
  HostTensor good = HostTensor::of({0, 10, 16, 17}, i32());
  int64_t tot = -1, cap = -1;
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(nullptr, 8, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "query_start_loc_cpu");
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(good.dl(), 0, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "block_m");
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(dec.dl(), 8, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "decreases");
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(flt.dl(), 8, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "dtype");
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(many.dl(), 1, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "number of programs");
  HostTensor cap_overflow = HostTensor::of({0, hi}, i64());
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(cap_overflow.dl(), 1, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "capacity");
  DLTensor* on_gpu = good.dl();
  on_gpu->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(on_gpu, 8, &tot, &cap),
                     CATTN_INVALID_ARGUMENT, "host");
  EXPECT_EQ(tot, -1);
  EXPECT_EQ(cap, -1);
}

// ------------------------------------------------------------------------------------------
// Hostile input.

TEST(compute_causal_conv1d_metadata_hostile, SizeQueryAndComputeAgree) {
  // {0, INT64_MAX} with block_m 1: the size query refused (its capacity overflows) while the
  // compute call accepted and returned tot = INT64_MAX. Both refuse now, with one message.
  HostTensor q = HostTensor::of({0, std::numeric_limits<int64_t>::max()}, i64());
  int64_t tot = -1, capacity = -1;
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(q.dl(), 1, &tot, &capacity),
                     CATTN_INVALID_ARGUMENT, "query_start_loc_cpu needs too many programs");
  EXPECT_EQ(tot, -1);
  EXPECT_EQ(capacity, -1);
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.block_m = 1;
  a.tot = -1;
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&a), CATTN_INVALID_ARGUMENT,
                     "args->query_start_loc_cpu needs too many programs");
  EXPECT_EQ(a.tot, -1);
  // The largest total, 2^62 - 1 (capacity 2^63 - 2), is accepted by both.
  const int64_t most = (int64_t{1} << 62) - 1;
  HostTensor edge = HostTensor::of({0, most}, i64());
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata_size(edge.dl(), 1, &tot, &capacity));
  EXPECT_EQ(tot, most);
  EXPECT_EQ(capacity, 2 * most);
  a.query_start_loc_cpu = edge.dl();
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&a));
  EXPECT_EQ(a.tot, most);
}

TEST(compute_causal_conv1d_metadata_hostile, OutputsMayNotShareMemory) {
  HostTensor q = HostTensor::of({0, 5, 5, 20}, i32());
  HostTensor shared({16}, i64());
  DLTensor nums = *shared.dl(), mlist = *shared.dl();
  int64_t nums_shape[1] = {3}, mlist_shape[1] = {6};
  nums.shape = nums_shape;
  mlist.shape = mlist_shape;
  mlist.byte_offset = 2 * sizeof(int64_t);  // mlist's first entry is nums' last
  cattn_causal_conv1d_metadata_args_t a = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  a.query_start_loc_cpu = q.dl();
  a.block_m = 4;
  a.nums = &nums;
  a.mlist = &mlist;
  const auto before = shared.bytes();
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata(&a), CATTN_INVALID_ARGUMENT,
                     "args->mlist overlaps another output (got memory shared with args->nums");
  EXPECT_EQ(shared.bytes(), before);
  mlist.byte_offset = 3 * sizeof(int64_t);  // adjacent, not overlapping
  ASSERT_CATTN_OK(cattn_compute_causal_conv1d_metadata(&a));
  EXPECT_EQ(shared.values().size(), 16u);
}

TEST(compute_causal_conv1d_metadata_hostile, HugeBroadcastIsNotScanned) {
  // 8 real bytes claiming 2^40 entries cost the size query minutes.
  int64_t zero[1] = {0};
  int64_t shape[1] = {int64_t{1} << 40}, stride[1] = {0};
  DLTensor q{zero, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, shape, stride, 0};
  int64_t tot = -1;
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(&q, 8, &tot, nullptr),
                     CATTN_INVALID_ARGUMENT, "query_start_loc_cpu is a broadcast view");
  EXPECT_EQ(tot, -1);
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Causal-conv1d metadata and its size

namespace {
using namespace cattn_test::refused_untouched;

struct ConvSize : Base {
  HostTensor q = in_tensor({0, 5, 5, 20}, i32());
  Guarded<int64_t> tot{-3}, cap{-4};
  int64_t block_m = 4;
  const DLTensor* q_p = nullptr;
  ConvSize() {
    tensors = {&q};
    structs = {&tot.bytes(), &cap.bytes()};
  }
  void wire() {
    q_p = q.dl();
    slots = {{"query_start_loc_cpu", q.dl(), [this] { q_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_compute_causal_conv1d_metadata_size(q_p, block_m, tot.get(), cap.get());
  }
};

struct Conv : Base {
  HostTensor q = in_tensor({0, 5, 5, 20}, i32());
  HostTensor outs[5] = {out_tensor({3}, i32()), out_tensor({6}, i64()), out_tensor({6}, i32()),
                        out_tensor({10}, i64()), out_tensor({10}, i32())};
  Guarded<cattn_causal_conv1d_metadata_args_t> args{CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT};
  bool null_args = false;
  Conv() {
    tensors = {&q, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4]};
    structs = {&args.bytes()};
    args->block_m = 4;
    args->tot = -9;
  }
  void wire() {
    cattn_causal_conv1d_metadata_args_t* a = args.get();
    a->query_start_loc_cpu = q.dl();
    DLTensor** o[5] = {&a->nums, &a->mlist, &a->offsetlist, &a->batch_ptr, &a->token_chunk_offset_ptr};
    const char* names[5] = {"args->nums", "args->mlist", "args->offsetlist", "args->batch_ptr", "args->token_chunk_offset_ptr"};
    slots = {{"args->query_start_loc_cpu", q.dl(), [a] { a->query_start_loc_cpu = nullptr; }, false}};
    for (int i = 0; i < 5; ++i) {
      *o[i] = outs[i].dl();
      slots.push_back({names[i], outs[i].dl(), nullptr});  // every output is optional
    }
  }
  cattn_status_t call() { return cattn_compute_causal_conv1d_metadata(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, ComputeCausalConv1dMetadata) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<ConvSize>;
    std::vector<V> v = {
        {"2-D", I, "query_start_loc_cpu has the wrong ndim", [](ConvSize& s) { s.q = in_tensor({0, 5, 5, 20}, i32(), {2, 2}); }, nullptr},
        {"float", I, "query_start_loc_cpu has the wrong dtype", nullptr, [](ConvSize& s) { s.slots[0].t->dtype = {kDLFloat, 32, 1}; }},
        {"on a GPU", I, "query_start_loc_cpu is not host memory", nullptr, [](ConvSize& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
        {"block_m 0", I, "block_m is out of range", [](ConvSize& s) { s.block_m = 0; }, nullptr},
        {"block_m -3", I, "cattn_compute_causal_conv1d_metadata_size: block_m is out of range (got -3,", [](ConvSize& s) { s.block_m = -3; }, nullptr},
        {"decreasing", I, "query_start_loc_cpu decreases", [](ConvSize& s) { s.q = in_tensor({0, 5, 4}, i32()); }, nullptr},
        {"length past int64", I, "overflows int64", [](ConvSize& s) { s.q = in_tensor({kI64Min, kI64Max}, i64()); }, nullptr},
        {"programs past int64", I, "the number of programs overflows int64", [](ConvSize& s) {
           s.q = in_tensor({-kI64Max, 0, kI64Max}, i64());
           s.block_m = 1;
         }, nullptr},
        {"capacity past int64", I, "needs too many programs", [](ConvSize& s) {
           s.q = in_tensor({0, kI64Max}, i64());
           s.block_m = 1;
         }, nullptr},
    };
    auto st = structural<ConvSize>();
    st.erase(std::remove_if(st.begin(), st.end(), [](const V& x) { return x.what == "query_start_loc_cpu alone on a GPU"; }), st.end());
    sweep<ConvSize>("cattn_compute_causal_conv1d_metadata_size", st + v);
  }
  using V = Variant<Conv>;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Conv& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Conv& s) { s.args->struct_size = 8; }},
      {"query_start_loc_cpu on a GPU", I, "args->query_start_loc_cpu is not host memory", nullptr, [](Conv& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
      {"block_m 0", I, "args->block_m is out of range (got 0, expected >= 1)", nullptr, [](Conv& s) { s.args->block_m = 0; }},
      {"nums [2]", CATTN_INSUFFICIENT_SIZE, "args->nums has the wrong size in dim 0", [](Conv& s) { s.outs[0] = out_tensor({2}, i32()); }, nullptr},
      {"nums [4]", I, "args->nums has the wrong size in dim 0", [](Conv& s) { s.outs[0] = out_tensor({4}, i32()); }, nullptr},
      {"mlist [5]", CATTN_INSUFFICIENT_SIZE, "args->mlist is too small", [](Conv& s) { s.outs[1] = out_tensor({5}, i64()); }, nullptr},
      {"token_chunk_offset_ptr [5]", CATTN_INSUFFICIENT_SIZE, "args->token_chunk_offset_ptr is too small", [](Conv& s) { s.outs[4] = out_tensor({5}, i32()); }, nullptr},
      {"offsetlist 2-D", I, "args->offsetlist has the wrong ndim", [](Conv& s) { s.outs[2] = out_tensor({3, 2}, i32()); }, nullptr},
      {"batch_ptr float", I, "args->batch_ptr has the wrong dtype", nullptr, [](Conv& s) { s.slots[4].t->dtype = {kDLFloat, 64, 1}; }},
      {"mlist zero stride", I, "args->mlist is an output with a zero stride", nullptr, [](Conv& s) {
         s.scratch_strides = {0};
         s.slots[2].t->strides = s.scratch_strides.data();
       }},
      {"decreasing", I, "args->query_start_loc_cpu decreases", [](Conv& s) { s.q = in_tensor({0, 5, 4, 20}, i32()); }, nullptr},
      {"mlist overlapping query_start_loc_cpu", I, "args->mlist overlaps an input", nullptr, [](Conv& s) {
         s.args->mlist = s.overlap_view(s.q, 2, {6});
       }},
      {"batch_ptr overlapping nums", I, "args->batch_ptr overlaps another output", nullptr, [](Conv& s) {
         s.args->batch_ptr = s.overlap_view(s.outs[0], 1, {6});
       }},
      {"programs past 2^62 (the size query refuses them too)", I, "needs too many programs", [](Conv& s) {
         s.q = in_tensor({0, kI64Max}, i64());
       }, [](Conv& s) {
         s.args->block_m = 1;
         s.args->nums = s.args->mlist = s.args->offsetlist = s.args->batch_ptr = s.args->token_chunk_offset_ptr = nullptr;
       }},
      {"nums value past int32", I, "args->nums cannot hold a result value", [](Conv& s) {
         s.q = in_tensor({0, int64_t{1} << 35}, i64());
         s.outs[0] = out_tensor({1}, i32());
       }, [](Conv& s) {
         s.args->block_m = 1;
         s.args->mlist = s.args->offsetlist = s.args->batch_ptr = s.args->token_chunk_offset_ptr = nullptr;
       }},
  };
  if (cpu_only_build())
    v.push_back({"every output on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Conv& s) {
                   for (size_t i = 1; i < s.slots.size(); ++i) s.slots[i].t->device = {kDLCUDA, 0};
                 }});
  sweep<Conv>("cattn_compute_causal_conv1d_metadata", structural<Conv>() + v);
}

}  // namespace
