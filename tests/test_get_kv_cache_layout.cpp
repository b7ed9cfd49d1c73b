// SPDX-License-Identifier: Apache-2.0
// get_kv_cache_layout and friends: the seed oracle's precedence table (override > user setting
// > connector > NHD, invalid settings) through both ways of giving the setting (args->env_value
// and the process environment), no stale cache, supported masks, every error path, and
// resolution racing with override changes on several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cattn.h"
#include "support/kv_layout.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

cattn_kv_cache_layout_t layout_of(const nlohmann::json& j) {
  if (j.is_null()) return CATTN_KV_CACHE_LAYOUT_UNSET;
  return j.get<std::string>() == "NHD" ? CATTN_KV_CACHE_LAYOUT_NHD : CATTN_KV_CACHE_LAYOUT_HND;
}

// Outside the three layouts but inside the enum's range (0..3): a sentinel of 77 made every
// comparison load an invalid enum value, which UBSan rejects.
constexpr auto kSentinel = static_cast<cattn_kv_cache_layout_t>(3);

}  // namespace

TEST(get_kv_cache_layout, OracleVectors) {
  const auto vec = load_vectors("get_kv_cache_layout");
  int resolved = 0, valid_checks = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    if (c.contains("is_valid")) {
      int32_t valid = -1;
      ASSERT_CATTN_OK(
          cattn_is_valid_kv_cache_layout(c["is_valid"].get<std::string>().c_str(), &valid));
      EXPECT_EQ(valid, c["valid"].get<bool>() ? 1 : 0);
      ++valid_checks;
      continue;
    }
    ++resolved;
    const std::optional<std::string> env =
        c["env"].is_null() ? std::nullopt : std::optional<std::string>(c["env"]);
    const std::string expect = c["layout"];
    Context ctx = make_context();
    ASSERT_CATTN_OK(
        cattn_context_set_kv_cache_layout_override(ctx.get(), layout_of(c["override"])));
    // 0: the setting as args->env_value (with a bogus environment that must be ignored);
    // 1: the setting in the process environment.
    for (int via_environment : {0, 1}) {
      SCOPED_TRACE(via_environment ? "environment" : "env_value");
      ScopedEnv scoped(via_environment ? env : std::optional<std::string>("bogus"));
      cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
      a.env_value = via_environment || !env ? nullptr : env->c_str();
      a.read_environment = via_environment;
      a.connector_layout = layout_of(c["connector"]);
      a.layout = kSentinel;
      const cattn_status_t s = cattn_get_kv_cache_layout(ctx.get(), &a);
      if (expect == "error") {
        EXPECT_EQ(s, CATTN_INVALID_ARGUMENT) << cattn_last_error_message();
        const std::string msg = cattn_last_error_message();
        EXPECT_NE(msg.find(via_environment ? "CATTN_KV_CACHE_LAYOUT is not a valid"
                                           : "args->env_value is not a valid"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("\"" + *env + "\""), std::string::npos) << msg;
        EXPECT_EQ(a.layout, kSentinel) << "a failed call wrote its output";
      } else {
        ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message();
        EXPECT_STREQ(cattn_kv_cache_layout_name(a.layout), expect.c_str());
      }
      // Without an override a NULL context resolves the same way.
      if (c["override"].is_null()) {
        cattn_kv_cache_layout_t with_ctx = a.layout;
        a.layout = kSentinel;
        EXPECT_EQ(cattn_get_kv_cache_layout(nullptr, &a), s);
        EXPECT_EQ(a.layout, with_ctx);
      }
    }
  }
  EXPECT_EQ(resolved, 72);
  EXPECT_GE(valid_checks, 8);
}

TEST(get_kv_cache_layout, Precedence) {
  Context ctx = make_context();
  ScopedEnv env(std::string("HND"));
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD) << "nothing set: NHD (environment not read)";
  a.connector_layout = CATTN_KV_CACHE_LAYOUT_HND;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND) << "connector beats the default";
  {
    ScopedEnv nhd(std::string("NHD"));
    a.read_environment = 1;
    ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
    EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD) << "environment beats the connector";
  }
  a.env_value = "HND";
  {
    ScopedEnv nhd(std::string("NHD"));
    ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
    EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND) << "env_value beats the environment";
  }
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_NHD));
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD) << "override beats everything";
  a.env_value = "garbage";  // vLLM does not look at the setting once an override is set
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
}

TEST(get_kv_cache_layout, OverrideSetLaterTakesEffect) {
  // vLLM's lru_cache would keep answering the first result; here the override is live.
  Context ctx = make_context();
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.connector_layout = CATTN_KV_CACHE_LAYOUT_HND;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_NHD));
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_HND));
  a.connector_layout = CATTN_KV_CACHE_LAYOUT_NHD;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  // Clearing it falls back to the rest of the chain.
  ASSERT_CATTN_OK(
      cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_UNSET));
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
  // Contexts do not share overrides.
  Context other = make_context();
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_HND));
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(other.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
}

TEST(get_kv_cache_layout, SupportedMask) {
  Context ctx = make_context();
  const uint32_t nhd = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD);
  const uint32_t hnd = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_HND);
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  for (uint32_t mask : {0u, nhd, nhd | hnd}) {
    a.supported_mask = mask;
    ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
    EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
  }
  a.supported_mask = hnd;
  a.layout = kSentinel;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), &a), CATTN_NOT_SUPPORTED, "NHD");
  EXPECT_EQ(a.layout, kSentinel);
  // The mask applies to the final answer, whichever source gave it.
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx.get(), CATTN_KV_CACHE_LAYOUT_HND));
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  a.supported_mask = nhd;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), &a), CATTN_NOT_SUPPORTED,
                     "not supported by the backend");
  // Bits that name no layout: UNSET's bit, and anything above HND's.
  for (uint32_t bad : {1u, 1u << 3, nhd | (1u << 31)}) {
    a.supported_mask = bad;
    a.layout = kSentinel;
    EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), &a), CATTN_INVALID_ARGUMENT,
                       "args->supported_mask");
    EXPECT_EQ(a.layout, kSentinel);
  }
}

TEST(get_kv_cache_layout, Errors) {
  Context ctx = make_context();
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), nullptr), CATTN_INVALID_ARGUMENT, "args");
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.layout = kSentinel;
  a.struct_size = CATTN_KV_CACHE_LAYOUT_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), &a), CATTN_INVALID_ARGUMENT,
                     "struct_size");
  EXPECT_EQ(a.layout, kSentinel);
  a.struct_size = CATTN_KV_CACHE_LAYOUT_ARGS_SIZE;
  for (int bad : {-1, 3, 1000}) {
    a.connector_layout = static_cast<cattn_kv_cache_layout_t>(bad);
    EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx.get(), &a), CATTN_INVALID_ARGUMENT,
                       "args->connector_layout");
    EXPECT_EQ(a.layout, kSentinel);
    EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(
                           ctx.get(), static_cast<cattn_kv_cache_layout_t>(bad)),
                       CATTN_INVALID_ARGUMENT, "layout");
  }
  a.connector_layout = CATTN_KV_CACHE_LAYOUT_UNSET;
  // A rejected override leaves the previous one in place.
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(nullptr, CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx");
  // A larger struct from a newer header is accepted.
  struct {
    cattn_kv_cache_layout_args_t args;
    uint64_t newer_field;
  } bigger{};
  bigger.args = a;
  bigger.args.struct_size = sizeof bigger;
  EXPECT_CATTN_OK(cattn_get_kv_cache_layout(ctx.get(), &bigger.args));

  EXPECT_CATTN_ERROR(cattn_context_create(nullptr), CATTN_INVALID_ARGUMENT, "out");
  cattn_context_destroy(nullptr);  // a no-op
}

TEST(get_kv_cache_layout, IsValidAndNames) {
  int32_t valid = -1;
  const std::pair<const char*, int32_t> cases[] = {{"NHD", 1}, {"HND", 1},  {"nhd", 0},
                                                   {"", 0},    {"NHDX", 0}, {"NH", 0}};
  for (const auto& [value, expect] : cases) {
    ASSERT_CATTN_OK(cattn_is_valid_kv_cache_layout(value, &valid));
    EXPECT_EQ(valid, expect) << value;
  }
  valid = 7;
  EXPECT_CATTN_ERROR(cattn_is_valid_kv_cache_layout(nullptr, &valid), CATTN_INVALID_ARGUMENT,
                     "value");
  EXPECT_EQ(valid, 7);
  EXPECT_CATTN_ERROR(cattn_is_valid_kv_cache_layout("NHD", nullptr), CATTN_INVALID_ARGUMENT,
                     "valid");
  EXPECT_STREQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_NHD), "NHD");
  EXPECT_STREQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_HND), "HND");
  EXPECT_EQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_UNSET), nullptr);
  EXPECT_EQ(cattn_kv_cache_layout_name(static_cast<cattn_kv_cache_layout_t>(3)), nullptr);
  EXPECT_EQ(cattn_kv_cache_layout_name(static_cast<cattn_kv_cache_layout_t>(-1)), nullptr);
}

TEST(get_kv_cache_layout, ConcurrentOverrideChanges) {
  // Readers resolve while a writer cycles the override through NHD, HND and unset. Readers
  // without a user setting fall back to the connector's HND, readers with env_value "NHD" to
  // that. Every answer must be a legal one (NHD or HND, never an error or a torn value), and
  // once the writer stops with the override cleared each reader sees its own fallback.
  Context ctx = make_context();
  std::atomic<bool> stop{false};
  std::atomic<int> started{0}, bad{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&, t] {
      cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
      a.connector_layout = CATTN_KV_CACHE_LAYOUT_HND;
      a.env_value = t % 2 ? "NHD" : nullptr;
      ++started;
      while (!stop.load()) {
        a.layout = kSentinel;
        if (cattn_get_kv_cache_layout(ctx.get(), &a) != CATTN_OK ||
            (a.layout != CATTN_KV_CACHE_LAYOUT_NHD && a.layout != CATTN_KV_CACHE_LAYOUT_HND))
          ++bad;
        ++reads;
      }
      a.layout = kSentinel;
      if (cattn_get_kv_cache_layout(ctx.get(), &a) != CATTN_OK ||
          a.layout != (t % 2 ? CATTN_KV_CACHE_LAYOUT_NHD : CATTN_KV_CACHE_LAYOUT_HND))
        ++bad;
    });
  while (started.load() < 4) std::this_thread::yield();
  const cattn_kv_cache_layout_t cycle[] = {CATTN_KV_CACHE_LAYOUT_NHD, CATTN_KV_CACHE_LAYOUT_HND,
                                           CATTN_KV_CACHE_LAYOUT_UNSET};
  for (int i = 0; i < 300000; ++i)
    if (cattn_context_set_kv_cache_layout_override(ctx.get(), cycle[i % 3]) != CATTN_OK) ++bad;
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): KV-cache layout, the context, and the
// runtime calls

namespace {
using namespace cattn_test::refused_untouched;

TEST(refused_untouched, KvCacheLayoutContextAndRuntime) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  auto check = [](cattn_status_t st, cattn_status_t code, const char* fn, const std::string& needle) {
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(st, code) << fn << ": " << msg;
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg << "\nexpected: " << needle;
    ++g_variants;
  };
  check(cattn_cuda_device_count(nullptr), I, "cattn_cuda_device_count", "count is NULL");
  check(cattn_context_create(nullptr), I, "cattn_context_create", "out is NULL");
  Guarded<int32_t> valid{-3};
  const auto valid0 = valid.bytes();
  check(cattn_is_valid_kv_cache_layout(nullptr, valid.get()), I, "cattn_is_valid_kv_cache_layout", "value is NULL");
  check(cattn_is_valid_kv_cache_layout("NHD", nullptr), I, "cattn_is_valid_kv_cache_layout", "valid is NULL");
  EXPECT_EQ(valid.bytes(), valid0);

  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND));
  check(cattn_context_set_kv_cache_layout_override(nullptr, CATTN_KV_CACHE_LAYOUT_NHD), I,
        "cattn_context_set_kv_cache_layout_override", "ctx is NULL");
  // Out-of-range layouts as a C caller could pass them (3 is inside the enum's value range).
  check(cattn_context_set_kv_cache_layout_override(ctx, static_cast<cattn_kv_cache_layout_t>(3)), I,
        "cattn_context_set_kv_cache_layout_override", "layout is not a layout (got 3,");

  using Args = cattn_kv_cache_layout_args_t;
  struct Case {
    const char* what;
    cattn_status_t code;
    std::string needle;
    std::function<void(Args&)> edit;
    bool null_args = false;
    const cattn_context_t* context = nullptr;
  };
  setenv(CATTN_KV_CACHE_LAYOUT_ENV, "Hnd", 1);
  const std::vector<Case> cases = {
      {"NULL args", I, "args is NULL", nullptr, true},
      {"small struct_size", I, "args has struct_size too small", [](Args& a) { a.struct_size = 4; }},
      {"connector 3", I, "args->connector_layout is not a layout (got 3,", [](Args& a) {
         const int bad = 3;
         std::memcpy(&a.connector_layout, &bad, sizeof bad);
       }},
      {"connector -1", I, "args->connector_layout is not a layout (got -1,", [](Args& a) {
         const int bad = -1;
         std::memcpy(&a.connector_layout, &bad, sizeof bad);
       }},
      {"mask bit 8", I, "args->supported_mask has bits that name no layout", [](Args& a) { a.supported_mask = 1u << 8; }},
      {"env_value lowercase", I, "args->env_value is not a valid KV-cache layout", [](Args& a) { a.env_value = "nhd"; }},
      {"environment invalid", I, "CATTN_KV_CACHE_LAYOUT is not a valid KV-cache layout", [](Args& a) { a.read_environment = 1; }},
      {"resolved layout unsupported", CATTN_NOT_SUPPORTED, "the resolved layout is not supported", [](Args& a) {
         a.supported_mask = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD);
       }, false, ctx},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Guarded<Args> a{CATTN_KV_CACHE_LAYOUT_ARGS_INIT};
    if (c.edit) c.edit(*a.get());
    const auto before = a.bytes();
    check(cattn_get_kv_cache_layout(c.context, c.null_args ? nullptr : a.get()), c.code, "cattn_get_kv_cache_layout", c.needle);
    EXPECT_EQ(a.bytes(), before) << "a failed call wrote args";
  }
  unsetenv(CATTN_KV_CACHE_LAYOUT_ENV);
  // The rejected override left the previous one in place.
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  ASSERT_CATTN_OK(cattn_get_kv_cache_layout(ctx, &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  cattn_context_destroy(ctx);
  // The calls that cannot fail.
  EXPECT_EQ(cattn_get_api(CATTN_VERSION_MAJOR + 1), nullptr);
  EXPECT_STREQ(cattn_status_string(static_cast<cattn_status_t>(15)), "CATTN_UNKNOWN_STATUS");
  EXPECT_EQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_UNSET), nullptr);
  cattn_context_destroy(nullptr);
  cattn_local_attention_plan_destroy(nullptr);
  cattn_comm_destroy(nullptr);
}

}  // namespace
