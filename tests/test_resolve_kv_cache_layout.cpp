// SPDX-License-Identifier: Apache-2.0
// resolve_kv_cache_layout, record_kv_cache_layout and get_resolved_kv_cache_layout against the
// upstream oracle's vectors (every README example and error path, random worker lists, specs,
// settings and presets, 1024 specs), through both ways of giving the user's setting; the state
// left in the context after success and failure; error messages naming the argument; nothing
// written on failure; and concurrent resolutions of one context.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cattn.h"
#include "support/status_matchers.h"
#include "support/vectors.h"
#include "support/kv_layout.h"

using namespace cattn_test;

namespace {

// One resolve call's inputs, owned.
struct Inputs {
  std::vector<std::string> storage;
  std::vector<int64_t> counts;
  std::vector<const char*> names;
  std::vector<int64_t> heads, states, pages;
  bool has_specs = false;

  Inputs(const nlohmann::json& workers, const nlohmann::json& specs) {
    for (const auto& w : workers) {
      counts.push_back(static_cast<int64_t>(w.size()));
      for (const auto& n : w) storage.push_back(n);
    }
    for (const auto& s : storage) names.push_back(s.c_str());
    if (!specs.is_null()) {
      has_specs = true;
      for (const auto& s : specs) {
        heads.push_back(s[0]);
        states.push_back(s[1]);
        pages.push_back(s[2]);
      }
    }
  }
  cattn_resolve_kv_cache_layout_args_t args() const {
    cattn_resolve_kv_cache_layout_args_t a = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
    a.num_workers = static_cast<int64_t>(counts.size());
    a.worker_counts = counts.empty() ? nullptr : counts.data();
    a.worker_names = names.empty() ? nullptr : names.data();
    a.num_specs = static_cast<int64_t>(heads.size());
    a.spec_num_heads = heads.empty() ? nullptr : heads.data();
    a.spec_num_states = states.empty() ? nullptr : states.data();
    a.spec_page_size_bytes = pages.empty() ? nullptr : pages.data();
    a.layout = kNoLayout;
    a.connector_fell_back = a.from_preset = -1;
    return a;
  }
};

const char* opt(const nlohmann::json& j, std::string& keep) {
  if (j.is_null()) return nullptr;
  keep = j.get<std::string>();
  return keep.c_str();
}

// The context's state against the oracle's cache_config.kv_cache_layout afterwards.
void expect_stored(const cattn_context_t* ctx, const nlohmann::json& stored) {
  cattn_kv_cache_layout_t l = kNoLayout;
  const cattn_status_t s = cattn_get_resolved_kv_cache_layout(ctx, &l);
  const std::string msg = cattn_last_error_message();
  if (stored.is_null()) {
    EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
    EXPECT_NE(msg.find("has no KV cache layout resolved yet"),
              std::string::npos);
    EXPECT_EQ(l, kNoLayout);
    return;
  }
  cattn_kv_cache_layout_t want;
  if (cattn_kv_cache_layout_from_name(stored.get<std::string>().c_str(), &want) != CATTN_OK) {
    EXPECT_EQ(s, CATTN_INVALID_ARGUMENT) << "an unknown preset cannot be read back";
    EXPECT_NE(msg.find("cattn_get_resolved_kv_cache_layout: ctx's preset layout is an unknown"),
              std::string::npos) << msg;
    return;
  }
  ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message();
  EXPECT_EQ(l, want);
}

}  // namespace

TEST(resolve_kv_cache_layout, OracleVectors) {
  const auto vec = load_vectors("resolve_kv_cache_layout");
  int resolved = 0, failed = 0, fell_back = 0, records = 0, reads = 0;
  for (const auto& c : vec["cases"]) {
    const std::string kind = c["kind"];
    if (kind == "record") {
      SCOPED_TRACE("record " + c["initial"].dump() + " then " + c["input"].dump());
      Context ctx = make_context();
      std::string keep;
      ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), opt(c["initial"], keep)));
      const cattn_status_t s =
          cattn_record_kv_cache_layout(ctx.get(), c["input"].get<std::string>().c_str());
      if (c.contains("error")) {
        EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
        EXPECT_NE(std::string(cattn_last_error_message()).find("cattn_record_kv_cache_layout: name"),
                  std::string::npos) << cattn_last_error_message();
      } else {
        EXPECT_EQ(s, CATTN_OK) << cattn_last_error_message();
      }
      expect_stored(ctx.get(), c["stored"]);
      ++records;
      continue;
    }
    if (kind == "get_resolved") {
      SCOPED_TRACE("get_resolved " + c["initial"].dump());
      Context ctx = make_context();
      std::string keep;
      ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), opt(c["initial"], keep)));
      cattn_kv_cache_layout_t l = kNoLayout;
      const cattn_status_t s = cattn_get_resolved_kv_cache_layout(ctx.get(), &l);
      if (c.contains("error")) {
        EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
        EXPECT_EQ(l, kNoLayout);
      } else {
        ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message();
        EXPECT_EQ(name_of(l), c["layout"].get<std::string>());
      }
      ++reads;
      continue;
    }
    SCOPED_TRACE(c["name"].get<std::string>());
    const Inputs in(c["workers"], c["specs"]);
    std::string env_keep, conn_keep, preset_keep;
    const char* env = opt(c["env"], env_keep);
    const char* connector = opt(c["connector"], conn_keep);
    const char* preset = opt(c["preset"], preset_keep);
    // 0: the setting as args->env_value (a bogus environment must be ignored); 1: the setting
    // in the process environment.
    for (int via_environment : {0, 1}) {
      SCOPED_TRACE(via_environment ? "environment" : "env_value");
      ScopedEnv scoped(via_environment ? (env ? std::optional<std::string>(env) : std::nullopt)
                                       : std::optional<std::string>("bogus"));
      Context ctx = make_context();
      ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), preset));
      auto a = in.args();
      a.env_value = via_environment ? nullptr : env;
      a.read_environment = via_environment;
      a.connector_layout = connector;
      const cattn_status_t s = cattn_resolve_kv_cache_layout(ctx.get(), &a);
      if (c.contains("error")) {
        EXPECT_EQ(s, CATTN_INVALID_ARGUMENT) << c.dump();
        const std::string msg = cattn_last_error_message();
        EXPECT_EQ(msg.rfind("cattn_resolve_kv_cache_layout: ", 0), 0u) << msg;
        const bool named = msg.find("args->") != std::string::npos ||
                           msg.find("ctx's preset") != std::string::npos ||
                           msg.find(CATTN_KV_CACHE_LAYOUT_ENV " ") != std::string::npos;
        EXPECT_TRUE(named) << msg;
        EXPECT_EQ(a.layout, kNoLayout) << "a failed call wrote args";
        EXPECT_EQ(a.connector_fell_back, -1);
        EXPECT_EQ(a.from_preset, -1);
        if (!via_environment) ++failed;
      } else {
        ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message() << "\n" << c.dump();
        EXPECT_EQ(name_of(a.layout), c["layout"].get<std::string>());
        EXPECT_EQ(a.connector_fell_back, c["fell_back"].get<bool>() ? 1 : 0);
        EXPECT_EQ(a.from_preset, preset ? 1 : 0);
        if (!via_environment) {
          ++resolved;
          fell_back += a.connector_fell_back;
        }
        // A second resolution answers from the context, whatever the inputs now say.
        auto again = in.args();
        again.env_value = "XYZ";
        again.num_workers = 0;
        ASSERT_CATTN_OK(cattn_resolve_kv_cache_layout(ctx.get(), &again));
        EXPECT_EQ(again.layout, a.layout);
        EXPECT_EQ(again.from_preset, 1);
        EXPECT_EQ(again.connector_fell_back, 0);
      }
      expect_stored(ctx.get(), c["stored"]);
    }
  }
  EXPECT_EQ(resolved + failed, 439);
  EXPECT_GE(failed, 150);
  EXPECT_GE(fell_back, 40);
  EXPECT_EQ(records, 66);
  EXPECT_EQ(reads, 15);
}

TEST(resolve_kv_cache_layout, MessagesNameTheArgument) {
  Context ctx = make_context();
  const int64_t two[] = {2, 2};
  const char* names[] = {"LBNHC", "LBHNC", "LBNHC", "LBHNC"};
  auto base = [&] {
    cattn_resolve_kv_cache_layout_args_t a = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
    a.num_workers = 2;
    a.worker_counts = two;
    a.worker_names = names;
    a.layout = kNoLayout;
    return a;
  };
  const int64_t heads[] = {8, 4}, states[] = {16, 32}, pages[] = {4096, 4096};
  const int64_t zero_second[] = {2, 0};
  const int64_t negative[] = {2, -1};
  const int64_t one_two[] = {1, 2};
  const char* with_null[] = {"LBNHC", nullptr, "LBNHC", "LBHNC"};
  const char* unknown[] = {"LBNHC", "lbhnc", "LBNHC", "lbhnc"};
  const char* not_compact[] = {"LHBNC", "BHLNC", "LHBNC", "BHLNC"};
  struct Case {
    const char* needle;
    std::function<void(cattn_resolve_kv_cache_layout_args_t&)> edit;
  };
  const std::vector<Case> cases = {
      {"args has struct_size too small", [](auto& a) { a.struct_size = 16; }},
      {"args->num_workers reports no worker's supported KV cache layouts (got 0",
       [](auto& a) { a.num_workers = 0; }},
      {"args->num_workers reports no worker", [](auto& a) { a.num_workers = -4; }},
      {"args->worker_counts is NULL", [](auto& a) { a.worker_counts = nullptr; }},
      {"args->worker_counts[1] is 0: a worker reported no supported KV cache layouts",
       [&](auto& a) { a.worker_counts = zero_second; }},
      {"args->worker_counts[1] is negative", [&](auto& a) { a.worker_counts = negative; }},
      {"args->worker_names is NULL", [](auto& a) { a.worker_names = nullptr; }},
      {"args->worker_names[1] is NULL", [&](auto& a) { a.worker_names = with_null; }},
      {"args->worker_names (worker 1) disagree with worker 0's",
       [&](auto& a) { a.worker_counts = one_two; a.num_workers = 2; }},
      {"args->worker_names[1] is an unknown KV cache layout (got \"lbhnc\"",
       [&](auto& a) { a.worker_names = unknown; }},
      {"args->num_specs is negative", [](auto& a) { a.num_specs = -1; }},
      {"args->spec_num_heads is NULL", [](auto& a) { a.num_specs = 2; }},
      {"args->spec_num_states is NULL", [&](auto& a) { a.num_specs = 2; a.spec_num_heads = heads; }},
      {"args->spec_page_size_bytes is NULL", [&](auto& a) {
         a.num_specs = 2; a.spec_num_heads = heads; a.spec_num_states = states; }},
      {"args->worker_names hold no block-compact layout, which specs with mixed HNC shapes need "
       "(got ['LHBNC', 'BHLNC']",
       [&](auto& a) {
         a.worker_names = not_compact;
         a.num_specs = 2; a.spec_num_heads = heads; a.spec_num_states = states;
         a.spec_page_size_bytes = pages; }},
      {"args->env_value is an unknown KV cache layout (got \"Nhd\"", [](auto& a) { a.env_value = "Nhd"; }},
      {"args->env_value does not satisfy every supported set (got \"BLNHC\", expected one of "
       "['LBNHC', 'LBHNC'])",
       [](auto& a) { a.env_value = "BLNHC"; }},
      {"args->env_value does not satisfy every supported set (got \"LHBNC\", expected one of "
       "['LBNHC'])",
       [&](auto& a) {
         a.env_value = "LHBNC";
         static const char* mixed_names[] = {"LHBNC", "LBNHC", "LHBNC", "LBNHC"};
         a.worker_names = mixed_names;
         a.num_specs = 2; a.spec_num_heads = heads; a.spec_num_states = states;
         a.spec_page_size_bytes = pages; }},
      {"args->connector_layout is an unknown KV cache layout (got \"\"",
       [](auto& a) { a.connector_layout = ""; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.needle);
    auto a = base();
    c.edit(a);
    const auto before = a;
    EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(ctx.get(), &a), CATTN_INVALID_ARGUMENT,
                       std::string("cattn_resolve_kv_cache_layout: ") + c.needle);
    EXPECT_EQ(std::memcmp(&a, &before, sizeof a), 0) << "a failed call wrote args";
    cattn_kv_cache_layout_t l;
    EXPECT_EQ(cattn_get_resolved_kv_cache_layout(ctx.get(), &l), CATTN_INVALID_ARGUMENT)
        << "a failed resolution left a layout in the context";
  }
  {
    ScopedEnv env(std::string("HNDX"));
    auto a = base();
    a.read_environment = 1;
    EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(ctx.get(), &a), CATTN_INVALID_ARGUMENT,
                       "CATTN_KV_CACHE_LAYOUT is an unknown KV cache layout (got \"HNDX\"");
  }
  auto a = base();
  EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(nullptr, &a), CATTN_INVALID_ARGUMENT, "ctx is NULL");
  EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(ctx.get(), nullptr), CATTN_INVALID_ARGUMENT,
                     "args is NULL");
  // A destroyed context is refused, not used.
  cattn_context_t* dead = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&dead));
  cattn_context_destroy(dead);
  EXPECT_CATTN_ERROR(cattn_resolve_kv_cache_layout(dead, &a), CATTN_INVALID_ARGUMENT, "ctx");
  EXPECT_CATTN_ERROR(cattn_record_kv_cache_layout(nullptr, "NHD"), CATTN_INVALID_ARGUMENT, "ctx");
  EXPECT_CATTN_ERROR(cattn_record_kv_cache_layout(ctx.get(), nullptr), CATTN_INVALID_ARGUMENT,
                     "cattn_record_kv_cache_layout: name is NULL");
  EXPECT_CATTN_ERROR(cattn_get_resolved_kv_cache_layout(ctx.get(), nullptr), CATTN_INVALID_ARGUMENT,
                     "layout is NULL");
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_preset(nullptr, "NHD"),
                     CATTN_INVALID_ARGUMENT, "ctx");
  const std::string long_name(CATTN_KV_CACHE_LAYOUT_NAME_MAX + 1, 'L');
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_preset(ctx.get(), long_name.c_str()),
                     CATTN_INVALID_ARGUMENT, "name is too long to be a layout name");
  // The longest accepted name is stored and then reported as unknown, as vLLM would.
  const std::string longest(CATTN_KV_CACHE_LAYOUT_NAME_MAX, 'L');
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), longest.c_str()));
  cattn_kv_cache_layout_t l;
  EXPECT_CATTN_ERROR(cattn_get_resolved_kv_cache_layout(ctx.get(), &l), CATTN_INVALID_ARGUMENT,
                     "ctx's preset layout is an unknown KV cache layout");
  // record: the message names both layouts; the state stays.
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), "NHD"));
  EXPECT_CATTN_ERROR(cattn_record_kv_cache_layout(ctx.get(), "LBNHC"), CATTN_INVALID_ARGUMENT,
                     "already resolved to, \"NHD\" (got LBNHC, expected NHD)");
  // Even recording the alias itself conflicts: its canonical name LBNHC differs from "NHD".
  EXPECT_CATTN_ERROR(cattn_record_kv_cache_layout(ctx.get(), "NHD"), CATTN_INVALID_ARGUMENT,
                     "(got LBNHC, expected NHD)");
  // Clearing the preset lets resolution run.
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_preset(ctx.get(), nullptr));
  a = base();
  ASSERT_CATTN_OK(cattn_resolve_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_LBNHC);
  EXPECT_EQ(a.from_preset, 0);
  ASSERT_CATTN_OK(cattn_record_kv_cache_layout(ctx.get(), "NHD"));  // canonical LBNHC stored
  // A larger struct from a newer header is accepted.
  struct {
    cattn_resolve_kv_cache_layout_args_t args;
    uint64_t newer;
  } bigger{};
  bigger.args = base();
  bigger.args.struct_size = sizeof bigger;
  ASSERT_CATTN_OK(cattn_resolve_kv_cache_layout(ctx.get(), &bigger.args));
}

TEST(resolve_kv_cache_layout, ConcurrentResolutionsAgree) {
  // Eight threads resolve one context at once, each with a different user setting; exactly one
  // decides, the others answer its result from the context.
  for (int round = 0; round < 50; ++round) {
    Context ctx = make_context();
    const char* all[] = {"LBHNC", "LBNHC", "LHBNC", "BLHNC", "BLNHC", "BHLNC"};
    const int64_t count[] = {6};
    std::atomic<int> go{0}, deciders{0}, bad{0};
    std::vector<cattn_kv_cache_layout_t> got(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        cattn_resolve_kv_cache_layout_args_t a = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
        a.num_workers = 1;
        a.worker_counts = count;
        a.worker_names = all;
        a.env_value = all[t % 6];
        ++go;
        while (go.load() < 8) std::this_thread::yield();
        if (cattn_resolve_kv_cache_layout(ctx.get(), &a) != CATTN_OK) ++bad;
        if (a.from_preset == 0) ++deciders;
        got[t] = a.layout;
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(deciders.load(), 1);
    for (auto l : got) EXPECT_EQ(l, got[0]);
    cattn_kv_cache_layout_t l;
    ASSERT_CATTN_OK(cattn_get_resolved_kv_cache_layout(ctx.get(), &l));
    EXPECT_EQ(l, got[0]);
  }
}
