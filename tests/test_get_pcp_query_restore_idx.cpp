// SPDX-License-Identifier: Apache-2.0
// get_pcp_query_restore_idx: conformance against the seed oracle's vectors, an independent
// argsort reference on random batches, layouts (int32/int64, strided), and every error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// What vLLM does, literally: argsort of [heads, tails].
std::vector<int64_t> argsort_reference(const std::vector<int64_t>& cu) {
  std::vector<int64_t> head, tail;
  for (size_t i = 0; i + 1 < cu.size(); ++i) {
    const int64_t h = (cu[i + 1] - cu[i]) / 2;
    for (int64_t o = 0; o < h; ++o) {
      head.push_back(cu[i] + o);
      tail.push_back(cu[i + 1] - h + o);
    }
  }
  head.insert(head.end(), tail.begin(), tail.end());
  std::vector<int64_t> idx(head.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return head[a] < head[b]; });
  return idx;
}

cattn_status_t run(HostTensor& cu, HostTensor& out) {
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu.dl();
  a.restore_idx = out.dl();
  return cattn_get_pcp_query_restore_idx(&a);
}

}  // namespace

TEST(get_pcp_query_restore_idx, OracleVectors) {
  const auto vec = load_vectors("get_pcp_query_restore_idx");
  ASSERT_GT(vec["cases"].size(), 10u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto cu = ints(c["cu_num_tokens"]);
    const auto expect = ints(c["restore_idx"]);
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3}) {
          HostTensor cu_t = HostTensor::of(cu, in_t, {}, step, step == 1 ? 0 : 1);
          int64_t size = -1;
          ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(cu_t.dl(), &size));
          ASSERT_EQ(size, static_cast<int64_t>(expect.size()));
          HostTensor out({size}, out_t, step);
          ASSERT_CATTN_OK(run(cu_t, out));
          EXPECT_EQ(out.values(), expect);
        }
  }
}

TEST(get_pcp_query_restore_idx, RandomAgainstArgsort) {
  std::mt19937_64 g(7);
  for (int iter = 0; iter < 200; ++iter) {
    const int b = static_cast<int>(g() % 300);
    std::vector<int64_t> cu{static_cast<int64_t>(g() % 4) * 2};
    for (int i = 0; i < b; ++i) {
      const int kind = static_cast<int>(g() % 4);
      const int64_t len = kind == 0 ? 1 : kind == 1 ? 0 : static_cast<int64_t>(g() % 100) * 2;
      cu.push_back(cu.back() + len);
    }
    const auto expect = argsort_reference(cu);
    HostTensor cu_t = HostTensor::of(cu, i64());
    HostTensor out({static_cast<int64_t>(expect.size())}, i32());
    ASSERT_CATTN_OK(run(cu_t, out));
    ASSERT_EQ(out.values(), expect);
  }
}

TEST(get_pcp_query_restore_idx, LargerOutputIsPaddedWithMinusOne) {
  HostTensor cu = HostTensor::of({0, 4}, i32());
  HostTensor out({7}, i64());
  ASSERT_CATTN_OK(run(cu, out));
  EXPECT_EQ(out.values(), (std::vector<int64_t>{0, 1, 2, 3, -1, -1, -1}));
}

TEST(get_pcp_query_restore_idx, Errors) {
  HostTensor cu = HostTensor::of({0, 4, 8}, i32());
  HostTensor out({8}, i32());
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(nullptr), CATTN_INVALID_ARGUMENT, "args");
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu.dl();
  a.restore_idx = out.dl();
  a.struct_size = sizeof(size_t);
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE;
  a.cu_num_tokens = nullptr;
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT,
                     "args->cu_num_tokens");
  a.cu_num_tokens = cu.dl();
  a.restore_idx = nullptr;
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT,
                     "args->restore_idx");

  HostTensor small({7}, i32());
  const auto before = small.bytes();
  EXPECT_CATTN_ERROR(run(cu, small), CATTN_INSUFFICIENT_SIZE, "args->restore_idx");
  EXPECT_EQ(small.bytes(), before) << "a failed call wrote to its output";

  HostTensor odd = HostTensor::of({0, 4, 7}, i32());
  HostTensor out2({8}, i32());
  const auto before2 = out2.bytes();
  EXPECT_CATTN_ERROR(run(odd, out2), CATTN_INVALID_ARGUMENT, "odd length");
  EXPECT_EQ(out2.bytes(), before2);
  HostTensor dec = HostTensor::of({0, 4, 2}, i32());
  EXPECT_CATTN_ERROR(run(dec, out2), CATTN_INVALID_ARGUMENT, "decreases");
  HostTensor flt = HostTensor::of({0, 4}, f32());
  EXPECT_CATTN_ERROR(run(flt, out2), CATTN_INVALID_ARGUMENT, "dtype");
  HostTensor two_d = HostTensor::of({0, 4, 8, 12}, i32(), {2, 2});
  EXPECT_CATTN_ERROR(run(two_d, out2), CATTN_INVALID_ARGUMENT, "ndim");

  a.restore_idx = out2.dl();
  a.cu_num_tokens = cu.dl();
  cu.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT,
                     "different device");
  cu.dl()->device = {kDLOpenCL, 0};
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_NOT_SUPPORTED, "device");
  int64_t size = 0;
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx_size(nullptr, &size), CATTN_INVALID_ARGUMENT,
                     "cu_num_tokens");
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx_size(cu.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "size");
}

TEST(get_pcp_query_restore_idx, Int32OutputOverflowRejected) {
  // A stride-0 input fakes a huge batch without memory: 2 requests of 2^31 tokens each.
  const int64_t big = int64_t{1} << 31;
  HostTensor cu = HostTensor::of({0, big, 2 * big}, i64());
  int64_t size = 0;
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(cu.dl(), &size));
  EXPECT_EQ(size, 2 * big);
  DLTensor out{};
  int64_t shape = 2 * big, stride = 1;
  out.data = reinterpret_cast<void*>(0x1000);
  out.device = {kDLCPU, 0};
  out.ndim = 1;
  out.dtype = i32();
  out.shape = &shape;
  out.strides = &stride;
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = cu.dl();
  a.restore_idx = &out;
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT, "int32");
}

// ------------------------------------------------------------------------------------------
// Hostile input.

TEST(get_pcp_query_restore_idx_hostile, BroadcastClaimsAreBoundedNotScanned) {
  // 8 real bytes claiming 2^32..2^40 entries cost the size query seconds to minutes.
  int64_t zero[1] = {0};
  int64_t stride[1] = {0};
  for (int k : {32, 36, 40}) {
    int64_t shape[1] = {int64_t{1} << k};
    DLTensor cu{zero, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, shape, stride, 0};
    int64_t size = -1;
    EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx_size(&cu, &size), CATTN_INVALID_ARGUMENT,
                       "cu_num_tokens is a broadcast view (a zero stride) of too many elements");
    EXPECT_EQ(size, -1);
  }
  // Exactly at the limit a broadcast is read like any tensor: 2^24 equal entries, size 0.
  int64_t shape[1] = {CATTN_MAX_BROADCAST_ELEMENTS};
  DLTensor cu{zero, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, shape, stride, 0};
  int64_t size = -1;
  ASSERT_CATTN_OK(cattn_get_pcp_query_restore_idx_size(&cu, &size));
  EXPECT_EQ(size, 0);
  // The device path refuses the same claim before any launch.
  shape[0] = CATTN_MAX_BROADCAST_ELEMENTS + 1;
  cu.device = {kDLCUDA, 0};
  HostTensor out({4}, i64());
  DLTensor* o = out.dl();
  o->device = {kDLCUDA, 0};
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = &cu;
  a.restore_idx = o;
  EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&a), CATTN_INVALID_ARGUMENT,
                     "args->cu_num_tokens is a broadcast view");
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): PCP restore index and its size

namespace {
using namespace cattn_test::refused_untouched;

struct RestoreSize : Base {
  HostTensor cu = in_tensor({0, 4, 6, 7}, i64());
  Guarded<int64_t> size{-7};
  bool null_size = false;
  const DLTensor* cu_p = nullptr;
  RestoreSize() {
    tensors = {&cu};
    structs = {&size.bytes()};
  }
  void wire() {
    cu_p = cu.dl();
    slots = {{"cu_num_tokens", cu.dl(), [this] { cu_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_get_pcp_query_restore_idx_size(cu_p, null_size ? nullptr : size.get());
  }
};

struct Restore : Base {
  HostTensor cu = in_tensor({0, 4, 6, 7}, i64()), out = out_tensor({8}, i32());
  Guarded<cattn_pcp_query_restore_idx_args_t> args{CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT};
  bool null_args = false;
  Restore() {
    tensors = {&cu, &out};
    structs = {&args.bytes()};
  }
  void wire() {
    args->cu_num_tokens = cu.dl();
    args->restore_idx = out.dl();
    slots = {{"args->cu_num_tokens", cu.dl(), [this] { args->cu_num_tokens = nullptr; }},
             {"args->restore_idx", out.dl(), [this] { args->restore_idx = nullptr; }}};
  }
  cattn_status_t call() { return cattn_get_pcp_query_restore_idx(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, GetPcpQueryRestoreIdx) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<RestoreSize>;
    std::vector<V> v = {
        {"size NULL", I, "size is NULL", [](RestoreSize& s) { s.null_size = true; }, nullptr},
        {"2-D", I, "cu_num_tokens has the wrong ndim", [](RestoreSize& s) { s.cu = in_tensor({0, 4, 6, 7}, i64(), {2, 2}); }, nullptr},
        {"float", I, "cu_num_tokens has the wrong dtype", nullptr, [](RestoreSize& s) { s.slots[0].t->dtype = {kDLFloat, 64, 1}; }},
        {"on a GPU", I, "cu_num_tokens is not host memory", nullptr, [](RestoreSize& s) { s.slots[0].t->device = {kDLCUDA, 0}; }},
        {"decreasing", I, "cu_num_tokens decreases", [](RestoreSize& s) { s.cu = in_tensor({0, 4, 2}, i64()); }, nullptr},
        {"odd length", I, "cu_num_tokens has a request of odd length", [](RestoreSize& s) { s.cu = in_tensor({0, 3}, i32()); }, nullptr},
        {"length past int64", I, "restore index size overflows", [](RestoreSize& s) { s.cu = in_tensor({kI64Min, 0, kI64Max - 1}, i64()); }, nullptr},
    };
    auto st = structural<RestoreSize>();
    st.erase(std::remove_if(st.begin(), st.end(), [](const V& x) { return x.what == "cu_num_tokens alone on a GPU"; }), st.end());
    sweep<RestoreSize>("cattn_get_pcp_query_restore_idx_size", st + v);
  }
  using V = Variant<Restore>;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Restore& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Restore& s) { s.args->struct_size = 8; }},
      {"out 2-D", I, "args->restore_idx has the wrong ndim", [](Restore& s) { s.out = out_tensor({4, 2}, i32()); }, nullptr},
      {"out float", I, "args->restore_idx has the wrong dtype", nullptr, [](Restore& s) { s.args->restore_idx->dtype = {kDLFloat, 32, 1}; }},
      {"out zero stride", I, "args->restore_idx is an output with a zero stride", nullptr, [](Restore& s) {
         s.scratch_strides = {0};
         s.args->restore_idx->strides = s.scratch_strides.data();
       }},
      {"capacity 5 < 6", CATTN_INSUFFICIENT_SIZE, "args->restore_idx is too small", [](Restore& s) { s.out = out_tensor({5}, i32()); }, nullptr},
      {"decreasing", I, "args->cu_num_tokens decreases", [](Restore& s) { s.cu = in_tensor({0, 4, 2}, i64()); }, nullptr},
      {"out overlapping cu_num_tokens", I, "args->restore_idx overlaps an input", nullptr, [](Restore& s) {
         s.cu = in_tensor({0, 2, 4, 4}, i32());
         s.args->cu_num_tokens = s.cu.dl();
         s.args->restore_idx = s.overlap_view(s.cu, 1, {4});
       }},
      {"odd length", I, "odd length", [](Restore& s) { s.cu = in_tensor({0, 4, 9}, i32()); }, nullptr},
  };
  if (cpu_only_build())
    v.push_back({"both on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Restore& s) {
                   s.slots[0].t->device = {kDLCUDA, 0};
                   s.slots[1].t->device = {kDLCUDA, 0};
                 }});
  sweep<Restore>("cattn_get_pcp_query_restore_idx", structural<Restore>() + v);
}

}  // namespace
