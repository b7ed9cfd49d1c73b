// SPDX-License-Identifier: Apache-2.0
// reorder_batch_to_split_decodes_and_prefills: conformance against the upstream oracle's
// vectors (the index map, the swaps in vLLM's order, the changed flag, the region counts) in
// every layout; applying the swaps gives the index map; large random batches against a
// reference built from the README's description; every error path with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <string>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

constexpr int64_t kUnwritten = -777;

struct ReorderCall {
  HostTensor s, c, p, map, swaps;
  cattn_reorder_batch_args_t a = CATTN_REORDER_BATCH_ARGS_INIT;
  ReorderCall(const std::vector<int64_t>& sv, const std::vector<int64_t>& cv,
              const std::vector<int64_t>& pv, int64_t thr, DLDataType t, DLDataType out_t,
              int64_t step, bool with_swaps, int64_t spare = 0) {
    const int64_t B = static_cast<int64_t>(sv.size());
    s = HostTensor::of(sv, t, {}, step, step == 1 ? 0 : 1);
    c = HostTensor::of(cv, t, {}, step, step == 1 ? 0 : 2);
    p = HostTensor::of(pv, t, {}, step, 0);
    map = HostTensor({B}, out_t, step, step == 1 ? 0 : 3);
    for (int64_t i = 0; i < B; ++i) map.set(i, kUnwritten);
    a.num_scheduled_tokens = s.dl();
    a.num_computed_tokens = c.dl();
    a.num_prompt_tokens = p.dl();
    a.decode_threshold = thr;
    a.index_map = map.dl();
    if (with_swaps) {
      swaps = HostTensor({std::max<int64_t>(B - 1, 0) + spare, 2}, out_t, step, 0);
      for (int64_t i = 0; i < swaps.numel(); ++i) swaps.set(i, kUnwritten);
      a.swaps = swaps.dl();
    }
    a.changed = -1;
    a.num_swaps = a.num_decodes = a.num_short_extends = a.num_long_extends = a.num_prefills =
        kUnwritten;
  }
  std::vector<int64_t> swap_rows(int64_t n) {
    auto v = swaps.values();
    v.resize(static_cast<size_t>(2 * n));
    return v;
  }
};

std::vector<int64_t> flat_pairs(const nlohmann::json& j) {
  std::vector<int64_t> out;
  for (const auto& r : j) out.push_back(r[0]), out.push_back(r[1]);
  return out;
}

// The README's description, with sorting and a map: region per request, the target run of each
// region, misplaced requests region by region moving to the misplaced positions.
std::vector<int64_t> reference_map(const std::vector<int64_t>& s, const std::vector<int64_t>& c,
                                   const std::vector<int64_t>& p, int64_t thr) {
  const size_t B = s.size();
  std::vector<int> reg(B);
  for (size_t i = 0; i < B; ++i)
    reg[i] = c[i] <= 0 ? 3 : s[i] > thr ? 2 : c[i] >= p[i] ? 0 : 1;
  std::vector<int> target = reg;
  std::sort(target.begin(), target.end());
  std::vector<int64_t> orig;
  for (size_t i = 0; i < B; ++i)
    if (reg[i] != target[i]) orig.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> src = orig;
  std::stable_sort(src.begin(), src.end(), [&](int64_t x, int64_t y) { return reg[x] < reg[y]; });
  std::vector<int64_t> map(B);
  for (size_t i = 0; i < B; ++i) map[i] = static_cast<int64_t>(i);
  for (size_t k = 0; k < orig.size(); ++k) map[orig[k]] = src[k];
  return map;
}

}  // namespace

TEST(reorder_batch_to_split_decodes_and_prefills, OracleVectors) {
  const auto vec = load_vectors("reorder_batch_to_split_decodes_and_prefills");
  ASSERT_GE(vec["cases"].size(), 70u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto s = ints(c["num_scheduled_tokens"]), cc = ints(c["num_computed_tokens"]),
               p = ints(c["num_prompt_tokens"]);
    const auto map = ints(c["index_map"]);
    const auto swaps = flat_pairs(c["swaps"]);
    const bool s_fits = std::all_of(s.begin(), s.end(), [](int64_t v) { return v <= INT32_MAX; });
    for (DLDataType t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3})
          for (bool with_swaps : {true, false}) {
            if (t.bits == 32 && !s_fits) continue;
            ReorderCall call(s, cc, p, c["decode_threshold"], t, out_t, step, with_swaps, 1);
            ASSERT_CATTN_OK(cattn_reorder_batch_to_split_decodes_and_prefills(&call.a));
            EXPECT_EQ(call.a.changed, c["changed"].get<int>());
            EXPECT_EQ(call.map.values(), map);
            EXPECT_EQ(call.a.num_swaps, static_cast<int64_t>(swaps.size() / 2));
            const auto counts = ints(c["counts"]);
            EXPECT_EQ(call.a.num_decodes, counts[0]);
            EXPECT_EQ(call.a.num_short_extends, counts[1]);
            EXPECT_EQ(call.a.num_long_extends, counts[2]);
            EXPECT_EQ(call.a.num_prefills, counts[3]);
            if (with_swaps) {
              auto all = call.swaps.values();
              std::vector<int64_t> expect = swaps;
              expect.resize(all.size(), kUnwritten);  // rows past num_swaps stay
              EXPECT_EQ(all, expect);
            }
          }
  }
}

TEST(reorder_batch_to_split_decodes_and_prefills, LargeRandomBatches) {
  std::mt19937_64 g(15);
  for (int it = 0; it < 40; ++it) {
    const int64_t B = std::uniform_int_distribution<int64_t>(1, 3000)(g);
    const int64_t thr = std::uniform_int_distribution<int64_t>(1, 8)(g);
    std::vector<int64_t> s(B), c(B), p(B);
    for (int64_t i = 0; i < B; ++i) {
      s[i] = std::uniform_int_distribution<int64_t>(1, 20)(g);
      c[i] = g() % 3 == 0 ? 0 : std::uniform_int_distribution<int64_t>(1, 100)(g);
      p[i] = std::uniform_int_distribution<int64_t>(1, 100)(g);
    }
    ReorderCall call(s, c, p, thr, i64(), it % 2 ? i32() : i64(), 1, true);
    ASSERT_CATTN_OK(cattn_reorder_batch_to_split_decodes_and_prefills(&call.a));
    const auto map = call.map.values();
    EXPECT_EQ(map, reference_map(s, c, p, thr));
    // Applying the swaps first to last to the identity gives the index map.
    std::vector<int64_t> order(B);
    for (int64_t i = 0; i < B; ++i) order[i] = i;
    const auto sw = call.swap_rows(call.a.num_swaps);
    for (int64_t k = 0; k < call.a.num_swaps; ++k) std::swap(order[sw[2 * k]], order[sw[2 * k + 1]]);
    EXPECT_EQ(order, map);
    EXPECT_LE(call.a.num_swaps, B - 1);
  }
}

TEST(reorder_batch_to_split_decodes_and_prefills, Errors) {
  const std::vector<int64_t> s{5, 1, 5, 1}, c{0, 9, 0, 9}, p{5, 9, 5, 9};
  ReorderCall call(s, c, p, 1, i32(), i64(), 1, true);
  const auto map_before = call.map.bytes();
  const auto swaps_before = call.swaps.bytes();
  const cattn_reorder_batch_args_t base = call.a;
  auto expect = [&](cattn_reorder_batch_args_t a, cattn_status_t code, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_reorder_batch_to_split_decodes_and_prefills(&a), code, needle);
    EXPECT_EQ(a.changed, -1);
    EXPECT_EQ(a.num_swaps, kUnwritten);
    EXPECT_EQ(call.map.bytes(), map_before);
    EXPECT_EQ(call.swaps.bytes(), swaps_before);
  };
  EXPECT_CATTN_ERROR(cattn_reorder_batch_to_split_decodes_and_prefills(nullptr),
                     CATTN_INVALID_ARGUMENT, "args");
  auto a = base;
  a.struct_size = 8;
  expect(a, CATTN_INVALID_ARGUMENT, "struct_size");
  a = base;
  a.num_scheduled_tokens = nullptr;
  expect(a, CATTN_INVALID_ARGUMENT, "num_scheduled_tokens");
  a = base;
  a.index_map = nullptr;
  expect(a, CATTN_INVALID_ARGUMENT, "index_map");
  HostTensor c3 = HostTensor::of({1, 2, 3}, i32());
  a = base;
  a.num_computed_tokens = c3.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "num_computed_tokens");
  a = base;
  a.num_prompt_tokens = c3.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "num_prompt_tokens");
  HostTensor m3({3}, i64());
  a = base;
  a.index_map = m3.dl();
  expect(a, CATTN_INSUFFICIENT_SIZE, "index_map");
  HostTensor sw2({2, 2}, i64());
  a = base;
  a.swaps = sw2.dl();
  expect(a, CATTN_INSUFFICIENT_SIZE, "swaps");
  HostTensor sw3({3, 3}, i64());
  a = base;
  a.swaps = sw3.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "swaps");
  a = base;
  a.decode_threshold = -1;
  expect(a, CATTN_INVALID_ARGUMENT, "decode_threshold");
  a = base;
  a.reserved0 = 1;
  expect(a, CATTN_INVALID_ARGUMENT, "reserved0");
  HostTensor f = HostTensor::of({1, 2, 3, 4}, f32());
  a = base;
  a.num_prompt_tokens = f.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "num_prompt_tokens");
  // The index map over an input's memory, and swaps over the index map.
  DLTensor alias = *call.s.dl();
  a = base;
  a.index_map = &alias;
  expect(a, CATTN_INVALID_ARGUMENT, "overlap");
  HostTensor shared({8}, i64());
  int64_t shape2[2] = {3, 2};
  DLTensor sw_alias = *shared.dl();
  sw_alias.ndim = 2;
  sw_alias.shape = shape2;
  DLTensor map_alias = *shared.dl();
  int64_t shape1[1] = {4};
  map_alias.shape = shape1;
  a = base;
  a.index_map = &map_alias;
  a.swaps = &sw_alias;
  EXPECT_CATTN_ERROR(cattn_reorder_batch_to_split_decodes_and_prefills(&a),
                     CATTN_INVALID_ARGUMENT, "overlap");
  int64_t zs[1] = {0};
  DLTensor bcast = *call.map.dl();
  bcast.strides = zs;
  a = base;
  a.index_map = &bcast;
  expect(a, CATTN_INVALID_ARGUMENT, "zero stride");
  HostTensor sd = HostTensor::of(s, i32());
  DLTensor* sdl = sd.dl();
  sdl->device = {kDLCUDA, 0};
  a = base;
  a.num_scheduled_tokens = sdl;
  expect(a, CATTN_INVALID_ARGUMENT, "host memory");
  // Broadcast inputs are fine: every request alike.
  int32_t one = 1, nine = 9;
  int64_t bshape[1] = {4}, bstr[1] = {0};
  DLTensor bs{&one, {kDLCPU, 0}, 1, i32(), bshape, bstr, 0};
  DLTensor bc{&nine, {kDLCPU, 0}, 1, i32(), bshape, bstr, 0};
  a = base;
  a.num_scheduled_tokens = &bs;
  a.num_computed_tokens = &bc;
  a.num_prompt_tokens = &bc;
  ASSERT_CATTN_OK(cattn_reorder_batch_to_split_decodes_and_prefills(&a));
  EXPECT_EQ(a.changed, 0);
  EXPECT_EQ(a.num_decodes, 4);
  EXPECT_EQ(call.map.values(), (std::vector<int64_t>{0, 1, 2, 3}));
}
