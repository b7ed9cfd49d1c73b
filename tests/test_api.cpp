// SPDX-License-Identifier: Apache-2.0
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

// ------------------------------------------------------------------------------------------
// Hostile input shared by every entry point: unknown device types, long caller strings, handle
// misuse, empty tensors with any strides.

namespace {

// Stores an arbitrary int in a DLDevice's enum field the way a C caller can, without the
// C++ conversion (whose result would be unspecified outside the enum's range).
void set_device_type(DLTensor* t, int32_t type) {
  static_assert(sizeof type == sizeof t->device.device_type, "int-sized enum");
  std::memcpy(&t->device.device_type, &type, sizeof type);
}

}  // namespace

TEST(api_hostile, UnknownDeviceTypesAreIntegersNotUndefinedBehaviour) {
  // 16 and 17 are real types in newer DLPack releases; UBSan reported "load of value 16, which
  // is not a valid value for type 'DLDeviceType'" from every entry point before.
  for (int32_t type : {16, 17, 255, 0x7fffffff, -1}) {
    SCOPED_TRACE(type);
    const std::string needle = "device_type " + std::to_string(type);
    int64_t cu_values[3] = {0, 4, 8}, out_values[8] = {0};
    int64_t cu_shape[1] = {3}, out_shape[1] = {8};
    DLTensor cu{cu_values, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, cu_shape, nullptr, 0};
    DLTensor out{out_values, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, out_shape, nullptr, 0};
    set_device_type(&cu, type);
    int64_t size = -1;
    EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx_size(&cu, &size), CATTN_NOT_SUPPORTED,
                       needle);
    EXPECT_EQ(size, -1);
    cattn_pcp_query_restore_idx_args_t r = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
    r.cu_num_tokens = &cu;
    r.restore_idx = &out;
    EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&r), CATTN_NOT_SUPPORTED, needle);
    cattn_dcp_local_seq_lens_args_t d = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
    d.seq_lens = &cu;
    d.out = &out;
    d.dcp_rank = 0;
    EXPECT_CATTN_ERROR(cattn_get_dcp_local_seq_lens(&d), CATTN_NOT_SUPPORTED, needle);
    int64_t tot = -1;
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_size(&cu, 8, &tot, nullptr),
                       CATTN_NOT_SUPPORTED, needle);
    // An output of an unknown device is refused the same way.
    set_device_type(&cu, kDLCPU);
    set_device_type(&out, type);
    EXPECT_CATTN_ERROR(cattn_get_pcp_query_restore_idx(&r), CATTN_NOT_SUPPORTED,
                       "args->restore_idx is on an unsupported device (got " + needle);
    for (int64_t v : out_values) EXPECT_EQ(v, 0);
    cattn_pcp_kv_allgather_and_restore_args_t g = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
    g.key = &out;
    size_t ws = 0;
    EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore_workspace_size(&g, &ws),
                       CATTN_NOT_SUPPORTED, needle);
  }
}

TEST(api_hostile, CallerStringsAreCutInMessages) {
  // A 1 MiB env_value made a 1 MiB message.
  std::string huge(size_t{1} << 20, 'N');
  huge[3] = '\x01';
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.env_value = huge.c_str();
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(nullptr, &a), CATTN_INVALID_ARGUMENT,
                     "args->env_value is not a valid KV-cache layout (got \"NNN\\x01NNN");
  const std::string msg = cattn_last_error_message();
  EXPECT_LT(msg.size(), size_t{CATTN_LAST_ERROR_MESSAGE_MAX});
  EXPECT_NE(msg.find("\"..."), std::string::npos) << msg;
  EXPECT_LT(msg.size(), size_t{200}) << msg;
}

TEST(api_hostile, DestroyedContextsAreRecognised) {
  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  ASSERT_CATTN_OK(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND));
  cattn_context_destroy(ctx);
  // Use after destroy: a status, and the freed memory is not read (ASan would say so).
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx is not a live handle");
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  a.layout = CATTN_KV_CACHE_LAYOUT_HND;
  EXPECT_CATTN_ERROR(cattn_get_kv_cache_layout(ctx, &a), CATTN_INVALID_ARGUMENT,
                     "ctx is not a live handle");
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  // Double destroy: nothing is freed twice; the message says why.
  cattn_context_destroy(ctx);
  EXPECT_NE(std::string(cattn_last_error_message()).find("cattn_context_destroy"),
            std::string::npos);
  // A pointer that no create call returned, and a live context still works.
  int64_t not_a_handle[4] = {0};
  EXPECT_CATTN_ERROR(cattn_context_set_kv_cache_layout_override(
                         reinterpret_cast<cattn_context_t*>(not_a_handle), CATTN_KV_CACHE_LAYOUT_NHD),
                     CATTN_INVALID_ARGUMENT, "ctx is not a live handle");
  cattn_context_destroy(reinterpret_cast<cattn_context_t*>(not_a_handle));
  cattn_context_t* live = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&live));
  EXPECT_CATTN_OK(cattn_context_set_kv_cache_layout_override(live, CATTN_KV_CACHE_LAYOUT_HND));
  EXPECT_CATTN_OK(cattn_get_kv_cache_layout(live, &a));
  EXPECT_EQ(a.layout, CATTN_KV_CACHE_LAYOUT_HND);
  cattn_context_destroy(live);
}

TEST(api_hostile, EmptyTensorsTakeAnyStrides) {
  // numpy gives an empty array zero strides, and DLPack leaves them free: an empty output with
  // zero (or negative) strides describes nothing to write and is accepted.
  int64_t cu_values[3] = {0, 1, 2};  // decode only: an empty restore index
  int64_t cu_shape[1] = {3}, empty_shape[1] = {0}, zero_stride[1] = {0}, negative[1] = {-5};
  DLTensor cu{cu_values, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, cu_shape, nullptr, 0};
  DLTensor out{nullptr, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, empty_shape, zero_stride, 0};
  cattn_pcp_query_restore_idx_args_t r = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  r.cu_num_tokens = &cu;
  r.restore_idx = &out;
  EXPECT_CATTN_OK(cattn_get_pcp_query_restore_idx(&r));
  out.strides = negative;
  EXPECT_CATTN_OK(cattn_get_pcp_query_restore_idx(&r));
  // A 2-D [0, 4] DCP output with strides (0, 0).
  int64_t seq_shape[1] = {0}, out2_shape[2] = {0, 4}, zeros2[2] = {0, 0};
  DLTensor seq{nullptr, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, seq_shape, zero_stride, 0};
  DLTensor out2{nullptr, {kDLCPU, 0}, 2, {kDLInt, 32, 1}, out2_shape, zeros2, 0};
  cattn_dcp_local_seq_lens_args_t d = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  d.seq_lens = &seq;
  d.out = &out2;
  d.dcp_size = 4;
  EXPECT_CATTN_OK(cattn_get_dcp_local_seq_lens(&d));
}
