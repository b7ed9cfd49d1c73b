// SPDX-License-Identifier: Apache-2.0
// get_supported_kv_cache_layouts against the upstream oracle's vectors (README examples, the
// default preference, identical and differing lists, votes and ties, empty lists, duplicates,
// random declarations, 1024 backends), the tuple-versus-list quirk, every error path, and
// nothing written on failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/status_matchers.h"
#include "support/vectors.h"
#include "support/kv_layout.h"

using namespace cattn_test;

namespace {

struct Backends {
  std::vector<int64_t> counts;
  std::vector<cattn_kv_cache_layout_t> layouts;

  explicit Backends(const nlohmann::json& decls) {
    for (const auto& d : decls) {
      if (d.is_null()) {
        counts.push_back(CATTN_KV_CACHE_LAYOUTS_NONE);
        continue;
      }
      counts.push_back(static_cast<int64_t>(d.size()));
      for (const auto& n : d) layouts.push_back(layout_named(n));
    }
  }
  cattn_get_supported_kv_cache_layouts_args_t args(cattn_kv_cache_layout_t* out, int64_t cap) {
    cattn_get_supported_kv_cache_layouts_args_t a = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
    a.num_backends = static_cast<int64_t>(counts.size());
    a.backend_counts = counts.empty() ? nullptr : counts.data();
    a.layouts = layouts.empty() ? nullptr : layouts.data();
    a.out = out;
    a.out_capacity = cap;
    a.num_out = -3;
    return a;
  }
};

}  // namespace

TEST(get_supported_kv_cache_layouts, OracleVectors) {
  const auto vec = load_vectors("get_supported_kv_cache_layouts");
  int ok = 0, errors = 0, quirks = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    Backends b(c["backends"]);
    std::vector<cattn_kv_cache_layout_t> out(16);
    std::memset(out.data(), 0x5a, out.size() * sizeof out[0]);
    const std::vector<cattn_kv_cache_layout_t> fresh = out;
    auto a = b.args(out.data(), static_cast<int64_t>(out.size()));
    const cattn_status_t s = cattn_get_supported_kv_cache_layouts(&a);
    if (c["layouts"] == "error") {
      EXPECT_EQ(s, CATTN_INVALID_ARGUMENT) << cattn_last_error_message();
      const std::string msg = cattn_last_error_message();
      EXPECT_NE(msg.find("cattn_get_supported_kv_cache_layouts: args->"), std::string::npos)
          << msg;
      EXPECT_EQ(a.num_out, -3);
      EXPECT_EQ(std::memcmp(out.data(), fresh.data(), out.size() * sizeof out[0]), 0);
      ++errors;
      continue;
    }
    ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message();
    std::vector<std::string> got;
    for (int64_t i = 0; i < a.num_out; ++i) got.push_back(name_of(out[i]));
    EXPECT_EQ(got, c["layouts"].get<std::vector<std::string>>());
    for (size_t i = got.size(); i < out.size(); ++i)
      EXPECT_EQ(std::memcmp(&out[i], &fresh[i], sizeof out[i]), 0) << "wrote past num_out";
    // Exactly the answer's length is enough; one less is refused without a write.
    auto exact = b.args(out.data(), a.num_out);
    ASSERT_CATTN_OK(cattn_get_supported_kv_cache_layouts(&exact));
    EXPECT_EQ(exact.num_out, a.num_out);
    if (a.num_out > 0) {
      std::vector<cattn_kv_cache_layout_t> small(a.num_out);
      auto shortcap = b.args(small.data(), a.num_out - 1);
      EXPECT_CATTN_ERROR(cattn_get_supported_kv_cache_layouts(&shortcap),
                         CATTN_INSUFFICIENT_SIZE,
                         "args->out_capacity is too small (got " +
                             std::to_string(a.num_out - 1) + ", expected >= " +
                             std::to_string(a.num_out));
      EXPECT_EQ(shortcap.num_out, -3);
    }
    if (c.contains("mixed_kinds")) ++quirks;
    ++ok;
  }
  EXPECT_EQ(ok + errors, 322);
  EXPECT_GE(errors, 30);
  EXPECT_EQ(quirks, 2);
}

TEST(get_supported_kv_cache_layouts, TupleVersusListQuirk) {
  // vLLM: a tuple (BLHNC, LBNHC, LBHNC) and a list of the same never compare equal, so the vote
  // re-sorts the tail to the iteration order. C has one sequence kind: the fast path keeps it.
  const auto vec = load_vectors("get_supported_kv_cache_layouts");
  for (const auto& c : vec["cases"]) {
    if (c["name"] != "tuple_vs_list_reorders") continue;
    EXPECT_NE(c["layouts"], c["mixed_kinds"]) << "the quirk case must show the difference";
    Backends b(c["backends"]);
    cattn_kv_cache_layout_t out[6];
    auto a = b.args(out, 6);
    ASSERT_CATTN_OK(cattn_get_supported_kv_cache_layouts(&a));
    ASSERT_EQ(a.num_out, 3);
    EXPECT_EQ(out[0], CATTN_KV_CACHE_LAYOUT_BLHNC);
    EXPECT_EQ(out[1], CATTN_KV_CACHE_LAYOUT_LBNHC);
    EXPECT_EQ(out[2], CATTN_KV_CACHE_LAYOUT_LBHNC);
    return;
  }
  FAIL() << "tuple_vs_list_reorders missing from the vectors";
}

TEST(get_supported_kv_cache_layouts, Errors) {
  const int64_t counts[] = {2, 1};
  cattn_kv_cache_layout_t layouts[] = {CATTN_KV_CACHE_LAYOUT_LBNHC, CATTN_KV_CACHE_LAYOUT_LBHNC,
                                       CATTN_KV_CACHE_LAYOUT_LBHNC};
  cattn_kv_cache_layout_t out[8];
  std::memset(out, 0x5a, sizeof out);
  auto base = [&] {
    cattn_get_supported_kv_cache_layouts_args_t a = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
    a.num_backends = 2;
    a.backend_counts = counts;
    a.layouts = layouts;
    a.out = out;
    a.out_capacity = 8;
    a.num_out = -3;
    return a;
  };
  {
    auto a = base();
    ASSERT_CATTN_OK(cattn_get_supported_kv_cache_layouts(&a));
    ASSERT_EQ(a.num_out, 1);
    EXPECT_EQ(out[0], CATTN_KV_CACHE_LAYOUT_LBHNC);
    std::memset(out, 0x5a, sizeof out);
  }
  struct Case {
    const char* needle;
    cattn_status_t code;
    std::function<void(cattn_get_supported_kv_cache_layouts_args_t&)> edit;
  };
  const int64_t negative[] = {2, -2};
  const int64_t huge[] = {INT64_MAX, 1};
  static cattn_kv_cache_layout_t bad_values[3];
  int seven = 7;
  std::memcpy(&bad_values[0], &seven, sizeof seven);
  bad_values[1] = bad_values[2] = CATTN_KV_CACHE_LAYOUT_LBHNC;
  const std::vector<Case> cases = {
      {"args has struct_size too small", CATTN_INVALID_ARGUMENT, [](auto& a) { a.struct_size = 8; }},
      {"args->num_backends is negative", CATTN_INVALID_ARGUMENT, [](auto& a) { a.num_backends = -1; }},
      {"args->backend_counts is NULL", CATTN_INVALID_ARGUMENT, [](auto& a) { a.backend_counts = nullptr; }},
      {"args->backend_counts[1] is negative (got -2", CATTN_INVALID_ARGUMENT, [&](auto& a) { a.backend_counts = negative; }},
      {"args->backend_counts sum to more than the address space holds", CATTN_INVALID_ARGUMENT, [&](auto& a) { a.backend_counts = huge; a.layouts = nullptr; }},
      {"args->layouts is NULL", CATTN_INVALID_ARGUMENT, [](auto& a) { a.layouts = nullptr; }},
      {"args->layouts[0] is not a KV-cache layout (got 7", CATTN_INVALID_ARGUMENT, [&](auto& a) { a.layouts = bad_values; }},
      {"args->out_capacity is too small (got 0, expected >= 1)", CATTN_INSUFFICIENT_SIZE, [](auto& a) { a.out_capacity = 0; }},
      {"args->out is NULL", CATTN_INVALID_ARGUMENT, [](auto& a) { a.out = nullptr; }},
      {"args->out overlaps an input", CATTN_INVALID_ARGUMENT, [&](auto& a) { a.out = layouts + 2; }},
      {"args->out overlaps an input", CATTN_INVALID_ARGUMENT, [&](auto& a) {
         a.out = reinterpret_cast<cattn_kv_cache_layout_t*>(const_cast<int64_t*>(counts));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    auto a = base();
    c.edit(a);
    const auto before = a;
    cattn_kv_cache_layout_t saved[3];
    std::memcpy(saved, layouts, sizeof saved);
    EXPECT_CATTN_ERROR(cattn_get_supported_kv_cache_layouts(&a), c.code,
                       std::string("cattn_get_supported_kv_cache_layouts: ") + c.needle);
    EXPECT_EQ(std::memcmp(&a, &before, sizeof a), 0) << "a failed call wrote args";
    EXPECT_EQ(std::memcmp(saved, layouts, sizeof saved), 0) << "a failed call wrote an input";
    for (const auto& o : out) {
      int v;
      std::memcpy(&v, &o, sizeof v);
      EXPECT_EQ(v, 0x5a5a5a5a) << "a failed call wrote out";
    }
  }
  EXPECT_CATTN_ERROR(cattn_get_supported_kv_cache_layouts(nullptr), CATTN_INVALID_ARGUMENT,
                     "args is NULL");
  // The empty intersection lists the declared lists, as vLLM's message does.
  const int64_t one_each[] = {1, 1};
  auto a = base();
  a.backend_counts = one_each;
  EXPECT_CATTN_ERROR(cattn_get_supported_kv_cache_layouts(&a), CATTN_INVALID_ARGUMENT,
                     "no KV cache layout that satisfies every supported set (got [['LBNHC'], "
                     "['LBHNC']]");
  // No backend at all: the default preference, with NULL arrays.
  cattn_get_supported_kv_cache_layouts_args_t none = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
  none.out = out;
  none.out_capacity = 6;
  ASSERT_CATTN_OK(cattn_get_supported_kv_cache_layouts(&none));
  EXPECT_EQ(none.num_out, 6);
  EXPECT_EQ(out[0], CATTN_KV_CACHE_LAYOUT_LBNHC);
  EXPECT_EQ(out[5], CATTN_KV_CACHE_LAYOUT_LHBNC);
}
