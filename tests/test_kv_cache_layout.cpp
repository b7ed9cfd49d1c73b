// SPDX-License-Identifier: Apache-2.0
// The six KV-cache layouts: properties, names (aliases, case), FlashInfer strings and strides
// against the upstream oracle's vectors, every error path, nothing written on failure, and
// the 1.0 layout calls unchanged by the new enum values.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "cattn.h"
#include "support/status_matchers.h"
#include "support/vectors.h"
#include "support/kv_layout.h"

using namespace cattn_test;

TEST(kv_cache_layout, OracleVectors) {
  const auto vec = load_vectors("kv_cache_layout");
  int props = 0, names = 0, strides = 0, overflows = 0;
  for (const auto& c : vec["cases"]) {
    const std::string kind = c["kind"];
    if (kind == "properties") {
      SCOPED_TRACE(c["name"].get<std::string>());
      const cattn_kv_cache_layout_t l = layout_named(c["name"]);
      cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
      ASSERT_CATTN_OK(cattn_kv_cache_layout_get_properties(l, &p));
      EXPECT_EQ(std::vector<int>(p.stride_order, p.stride_order + 5),
                c["stride_order"].get<std::vector<int>>());
      EXPECT_EQ(std::vector<int>(p.layer_view_order, p.layer_view_order + 4),
                c["layer_view_order"].get<std::vector<int>>());
      EXPECT_EQ(p.is_layer_compact, c["is_layer_compact"].get<bool>());
      EXPECT_EQ(p.is_block_contiguous, c["is_block_contiguous"].get<bool>());
      EXPECT_EQ(p.is_block_compact, c["is_block_compact"].get<bool>());
      EXPECT_EQ(p.is_block_outermost, c["is_block_outermost"].get<bool>());
      EXPECT_EQ(p.order, c["order"].get<int>());
      EXPECT_STREQ(p.name, c["name"].get<std::string>().c_str());
      const char* fi = reinterpret_cast<const char*>(0x1);
      if (c["flashinfer"].is_null()) {
        EXPECT_EQ(p.flashinfer_layout, nullptr);
        EXPECT_CATTN_ERROR(cattn_get_flashinfer_layout_string(l, &fi), CATTN_NOT_SUPPORTED,
                           "layout has no FlashInfer equivalent");
        EXPECT_EQ(fi, reinterpret_cast<const char*>(0x1)) << "a failed call wrote out";
      } else {
        EXPECT_STREQ(p.flashinfer_layout, c["flashinfer"].get<std::string>().c_str());
        ASSERT_CATTN_OK(cattn_get_flashinfer_layout_string(l, &fi));
        EXPECT_STREQ(fi, c["flashinfer"].get<std::string>().c_str());
      }
      // The iteration-order initializer agrees with `order`.
      const cattn_kv_cache_layout_t order[CATTN_KV_CACHE_LAYOUT_COUNT] =
          CATTN_KV_CACHE_LAYOUTS_INIT;
      EXPECT_EQ(order[p.order], l);
      ++props;
    } else if (kind == "from_name") {
      const std::string in = c["input"];
      SCOPED_TRACE("name " + in);
      cattn_kv_cache_layout_t l = kNoLayout;
      const cattn_status_t s = cattn_kv_cache_layout_from_name(in.c_str(), &l);
      if (c["layout"] == "error") {
        EXPECT_EQ(s, CATTN_INVALID_ARGUMENT);
        const std::string msg = cattn_last_error_message();
        EXPECT_NE(msg.find("cattn_kv_cache_layout_from_name: name is an unknown KV cache layout"),
                  std::string::npos) << msg;
        EXPECT_NE(msg.find("['LBHNC', 'LBNHC', 'LHBNC', 'BLHNC', 'BLNHC', 'BHLNC']"),
                  std::string::npos) << msg;
        int got = 0;
        std::memcpy(&got, &l, sizeof got);
        EXPECT_EQ(got, 7) << "a failed call wrote layout";
      } else {
        ASSERT_EQ(s, CATTN_OK) << cattn_last_error_message();
        cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
        ASSERT_CATTN_OK(cattn_kv_cache_layout_get_properties(l, &p));
        EXPECT_STREQ(p.name, c["layout"].get<std::string>().c_str());
      }
      ++names;
    } else {
      ASSERT_EQ(kind, "strides");
      const auto sizes = ints(c["sizes"]);
      SCOPED_TRACE(c["layout"].get<std::string>() + " " + c["sizes"].dump());
      cattn_kv_cache_layout_strides_args_t a = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
      a.layout = layout_named(c["layout"]);
      for (int i = 0; i < 5; ++i) a.sizes[i] = sizes[i];
      a.strides[0] = a.physical_shape[0] = a.numel = -7;
      if (c.contains("error")) {
        const cattn_kv_cache_layout_strides_args_t before = a;
        EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&a), CATTN_INVALID_ARGUMENT,
                           "overflows int64");
        EXPECT_EQ(std::memcmp(&a, &before, sizeof a), 0) << "a failed call wrote args";
        ++overflows;
      } else {
        ASSERT_CATTN_OK(cattn_kv_cache_layout_strides(&a));
        EXPECT_EQ(std::vector<int64_t>(a.strides, a.strides + 5), ints(c["strides"]));
        EXPECT_EQ(std::vector<int64_t>(a.physical_shape, a.physical_shape + 5),
                  ints(c["physical_shape"]));
        EXPECT_EQ(a.numel, c["numel"].get<int64_t>());
      }
      ++strides;
    }
  }
  EXPECT_EQ(props, 6);
  EXPECT_EQ(names, 25);
  EXPECT_EQ(strides, 354);
  EXPECT_GE(overflows, 20);
}

TEST(kv_cache_layout, EnumValuesAndAliases) {
  // 1.0 values keep their numbers; the new names alias them.
  static_assert(CATTN_KV_CACHE_LAYOUT_LBNHC == CATTN_KV_CACHE_LAYOUT_NHD, "NHD is LBNHC");
  static_assert(CATTN_KV_CACHE_LAYOUT_LBHNC == CATTN_KV_CACHE_LAYOUT_HND, "HND is LBHNC");
  EXPECT_EQ(layout_named("NHD"), CATTN_KV_CACHE_LAYOUT_LBNHC);
  EXPECT_EQ(layout_named("HND"), CATTN_KV_CACHE_LAYOUT_LBHNC);
  EXPECT_EQ(layout_named("BHLNC"), CATTN_KV_CACHE_LAYOUT_BHLNC);
  // Every value 1..6 is a layout, each with its own canonical name; nothing else is.
  std::string seen;
  for (int v = 1; v <= CATTN_KV_CACHE_LAYOUT_COUNT; ++v) {
    cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
    ASSERT_CATTN_OK(cattn_kv_cache_layout_get_properties(raw_layout(v), &p));
    EXPECT_EQ(seen.find(p.name), std::string::npos);
    seen += p.name;
    EXPECT_EQ(layout_named(p.name), raw_layout(v));
  }
  // The 1.0 calls accept and return only UNSET, NHD and HND.
  EXPECT_EQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_BLHNC), nullptr);
  EXPECT_STREQ(cattn_kv_cache_layout_name(CATTN_KV_CACHE_LAYOUT_LBNHC), "NHD");
  int32_t valid = -1;
  ASSERT_CATTN_OK(cattn_is_valid_kv_cache_layout("LBNHC", &valid));
  EXPECT_EQ(valid, 0) << "1.0's validity check knows NHD and HND only";
  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_BLHNC),
                     CATTN_INVALID_ARGUMENT, "layout is not a layout");
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.connector_layout = CATTN_KV_CACHE_LAYOUT_LHBNC;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx, &a), CATTN_INVALID_ARGUMENT,
                     "args->connector_layout");
  cattn_context_destroy(ctx);
}

TEST(kv_cache_layout, Errors) {
  cattn_kv_cache_layout_t l = kNoLayout;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_from_name(nullptr, &l), CATTN_INVALID_ARGUMENT,
                     "cattn_kv_cache_layout_from_name: name is NULL");
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_from_name("NHD", nullptr), CATTN_INVALID_ARGUMENT,
                     "layout is NULL");
  EXPECT_EQ(l, kNoLayout);
  // A long hostile name is cut in the message.
  const std::string huge(100000, 'X');
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_from_name(huge.c_str(), &l), CATTN_INVALID_ARGUMENT,
                     "...");
  EXPECT_LT(std::strlen(cattn_last_error_message()), size_t{CATTN_LAST_ERROR_MESSAGE_MAX});

  cattn_kv_cache_layout_properties_t p = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
  for (int bad : {0, -1, 7, 1000, std::numeric_limits<int>::min()}) {
    SCOPED_TRACE(bad);
    cattn_kv_cache_layout_properties_t before = p;
    EXPECT_CATTN_ERROR(cattn_kv_cache_layout_get_properties(raw_layout(bad), &p),
                       CATTN_INVALID_ARGUMENT,
                       "cattn_kv_cache_layout_get_properties: layout is not a KV-cache layout (got " +
                           std::to_string(bad));
    EXPECT_EQ(std::memcmp(&p, &before, sizeof p), 0);
    const char* fi = nullptr;
    EXPECT_CATTN_ERROR(cattn_get_flashinfer_layout_string(raw_layout(bad), &fi),
                       CATTN_INVALID_ARGUMENT, "layout is not a KV-cache layout");
    EXPECT_EQ(fi, nullptr);
    cattn_kv_cache_layout_strides_args_t a = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
    a.layout = raw_layout(bad);
    EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&a), CATTN_INVALID_ARGUMENT,
                       "args->layout is not a KV-cache layout");
  }
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_get_properties(CATTN_KV_CACHE_LAYOUT_NHD, nullptr),
                     CATTN_INVALID_ARGUMENT, "props is NULL");
  p.struct_size = CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_get_properties(CATTN_KV_CACHE_LAYOUT_NHD, &p),
                     CATTN_INVALID_ARGUMENT, "props has struct_size too small");
  EXPECT_EQ(p.name, nullptr);
  EXPECT_CATTN_ERROR(cattn_get_flashinfer_layout_string(CATTN_KV_CACHE_LAYOUT_NHD, nullptr),
                     CATTN_INVALID_ARGUMENT, "out is NULL");

  cattn_kv_cache_layout_strides_args_t a = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(nullptr), CATTN_INVALID_ARGUMENT, "args is NULL");
  a.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&a), CATTN_INVALID_ARGUMENT,
                     "args has struct_size too small");
  a.struct_size = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE;
  a.layout = CATTN_KV_CACHE_LAYOUT_BLHNC;
  const char* axis[5] = {"(L)", "(B)", "(H)", "(N)", "(C)"};
  for (int i = 0; i < 5; ++i) {
    for (int64_t bad : {int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
      for (auto& s : a.sizes) s = 2;
      a.sizes[i] = bad;
      a.numel = -5;
      EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&a), CATTN_INVALID_ARGUMENT,
                         std::string("args->sizes[") + std::to_string(i) + "] " + axis[i] +
                             " is negative");
      EXPECT_EQ(a.numel, -5);
    }
  }
  // The axis whose size makes a stride overflow is named. BLHNC stores B, L, H, N, C: B's
  // stride is L*H*N*C, and multiplying in L (4) after H (2^62) overflows.
  for (auto& s : a.sizes) s = 1;
  a.sizes[2] = int64_t{1} << 62;
  a.sizes[1] = 0;  // numel 0 fits, but B's stride L*H*N*C = 4 * 2^62 does not
  a.sizes[0] = 4;
  EXPECT_CATTN_ERROR(cattn_kv_cache_layout_strides(&a), CATTN_INVALID_ARGUMENT,
                     "args->sizes[0] (L) overflows int64");
  // A larger struct from a newer header is accepted.
  struct {
    cattn_kv_cache_layout_strides_args_t args;
    int64_t newer;
  } bigger{};
  bigger.args = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
  bigger.args.struct_size = sizeof bigger;
  bigger.args.layout = CATTN_KV_CACHE_LAYOUT_LBHNC;
  for (auto& s : bigger.args.sizes) s = 3;
  bigger.newer = 42;
  ASSERT_CATTN_OK(cattn_kv_cache_layout_strides(&bigger.args));
  EXPECT_EQ(bigger.args.numel, 243);
  EXPECT_EQ(bigger.newer, 42);
}
