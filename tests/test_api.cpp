// ABI: version macros against the runtime, the function table, status strings, struct sizes,
// the context, and the last-error message's thread locality.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "cattn.h"
#include "support/status_matchers.h"

TEST(api, VersionMacrosMatchRuntime) {
  EXPECT_EQ(cattn_version(), static_cast<uint32_t>(CATTN_VERSION_NUMBER));
  EXPECT_STREQ(cattn_version_string(), CATTN_VERSION_STRING);
  const std::string expect = std::to_string(CATTN_VERSION_MAJOR) + "." +
                             std::to_string(CATTN_VERSION_MINOR) + "." +
                             std::to_string(CATTN_VERSION_PATCH);
  EXPECT_EQ(expect, cattn_version_string());
}

TEST(api, FunctionTableIsCompleteAndMatchesSymbols) {
  EXPECT_EQ(cattn_get_api(CATTN_VERSION_MAJOR + 1), nullptr);
  EXPECT_EQ(cattn_get_api(9999), nullptr);
  const cattn_api_t* api = cattn_get_api(CATTN_VERSION_MAJOR);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, sizeof(cattn_api_t));
  EXPECT_EQ(api->abi_major, static_cast<uint32_t>(CATTN_VERSION_MAJOR));
  EXPECT_EQ(api->version, cattn_version());
  // Every slot after the header fields is a non-NULL function pointer.
  const size_t header = offsetof(cattn_api_t, version_number);
  const size_t slots = (sizeof(cattn_api_t) - header) / sizeof(void*);
  EXPECT_EQ(slots * sizeof(void*) + header, sizeof(cattn_api_t));
  for (size_t i = 0; i < slots; ++i) {
    void* p;
    std::memcpy(&p, reinterpret_cast<const char*>(api) + header + i * sizeof(void*), sizeof p);
    EXPECT_NE(p, nullptr) << "slot " << i;
  }
  EXPECT_EQ(api->get_pcp_query_restore_idx, &cattn_get_pcp_query_restore_idx);
  EXPECT_EQ(api->infer_global_hyperparameters, &cattn_infer_global_hyperparameters);
  // The NCCL entry points follow every 0.1 utility, in declaration order.
  EXPECT_EQ(reinterpret_cast<const char*>(&api->comm_get_unique_id),
            reinterpret_cast<const char*>(&api->infer_global_hyperparameters) + sizeof(void*));
  EXPECT_EQ(api->comm_get_unique_id, &cattn_comm_get_unique_id);
  EXPECT_EQ(api->comm_create, &cattn_comm_create);
  EXPECT_EQ(api->comm_create_borrowed, &cattn_comm_create_borrowed);
  EXPECT_EQ(api->comm_destroy, &cattn_comm_destroy);
  EXPECT_EQ(api->comm_get_rank, &cattn_comm_get_rank);
  EXPECT_EQ(api->comm_get_size, &cattn_comm_get_size);
  EXPECT_EQ(api->version_number(), cattn_version());
}

TEST(api, StatusStrings) {
  for (int s = 0; s < CATTN_STATUS_COUNT_; ++s)
    EXPECT_STRNE(cattn_status_string(static_cast<cattn_status_t>(s)), "CATTN_UNKNOWN_STATUS");
  EXPECT_STREQ(cattn_status_string(CATTN_OK), "CATTN_OK");
  EXPECT_EQ(static_cast<int>(CATTN_NCCL_ERROR), 8);
  EXPECT_EQ(static_cast<int>(CATTN_STATUS_COUNT_), 9);
  EXPECT_STREQ(cattn_status_string(CATTN_NCCL_ERROR), "CATTN_NCCL_ERROR");
  EXPECT_STREQ(cattn_status_string(static_cast<cattn_status_t>(-3)), "CATTN_UNKNOWN_STATUS");
  EXPECT_STREQ(cattn_status_string(CATTN_STATUS_COUNT_), "CATTN_UNKNOWN_STATUS");
}

TEST(api, LastErrorIsThreadLocal) {
  int64_t size = 0;
  ASSERT_EQ(cattn_get_pcp_query_restore_idx_size(nullptr, &size), CATTN_INVALID_ARGUMENT);
  const std::string mine = cattn_last_error_message();
  EXPECT_NE(mine.find("cattn_get_pcp_query_restore_idx_size"), std::string::npos);
  std::string theirs = "unset";
  std::thread([&] { theirs = cattn_last_error_message(); }).join();
  EXPECT_EQ(theirs, "");
  EXPECT_EQ(mine, cattn_last_error_message());
}

TEST(api, SmallStructSizeRejectedLargerAccepted) {
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.struct_size = CATTN_KV_CACHE_LAYOUT_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(nullptr, &a), CATTN_INVALID_ARGUMENT,
                     "struct_size");
  // A newer caller's larger struct is fine: the library reads only the fields it knows.
  struct {
    cattn_kv_cache_layout_args_t a;
    int64_t future_field;
  } bigger{};
  bigger.a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  bigger.a.struct_size = sizeof bigger;
  EXPECT_CATTN_OK(cattn_get_kv_cache_layout(nullptr, &bigger.a));
  EXPECT_EQ(bigger.a.layout, CATTN_KV_CACHE_LAYOUT_NHD);
}

TEST(api, SizeConstantsMatchStructs) {
  EXPECT_EQ(CATTN_COMMON_ATTN_METADATA_SIZE, sizeof(cattn_common_attn_metadata_t));
  EXPECT_EQ(CATTN_API_SIZE, sizeof(cattn_api_t));
  cattn_common_attn_metadata_t m = CATTN_COMMON_ATTN_METADATA_INIT;
  EXPECT_EQ(m.struct_size, sizeof m);
  EXPECT_EQ(m.causal, 1);
}

TEST(api, ContextLifecycle) {
  cattn_context_destroy(nullptr);  // no-op
  EXPECT_CATTN_ERROR(cattn_context_create(nullptr), CATTN_INVALID_ARGUMENT, "out");
  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  ASSERT_NE(ctx, nullptr);
  cattn_context_destroy(ctx);
}

TEST(api, CudaDeviceCountNeverFails) {
  int32_t n = -1;
  EXPECT_CATTN_OK(cattn_cuda_device_count(&n));
  EXPECT_GE(n, 0);
  EXPECT_CATTN_ERROR(cattn_cuda_device_count(nullptr), CATTN_INVALID_ARGUMENT, "count");
}

TEST(api, AllgatherIsNoLongerAPlaceholder) {
  // Since the NCCL release the call validates its arguments instead of refusing outright.
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT, "args->key");
  size_t ws = 0;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &ws),
                     CATTN_INVALID_ARGUMENT, "args->key");
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(nullptr), CATTN_INVALID_ARGUMENT, "args");
}
