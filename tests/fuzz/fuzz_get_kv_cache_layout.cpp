// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 1 and the runtime entry points: cattn_get_kv_cache_layout,
// cattn_is_valid_kv_cache_layout, cattn_kv_cache_layout_name, the context and its override, and
// the version/status/API-table/device-count calls. Layouts arrive as arbitrary ints (a C
// caller may store any value in an enum field), user settings as arbitrary strings, in args or
// in the process environment. The reference is vLLM's precedence: override > user setting >
// connector preference > NHD, then the backend's supported mask. A destroyed context (or a
// pointer no create call returned) is refused, and destroying it again frees nothing.
#include <cstdlib>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

int parse(const char* s) {
  if (std::strcmp(s, "NHD") == 0) return CATTN_KV_CACHE_LAYOUT_NHD;
  if (std::strcmp(s, "HND") == 0) return CATTN_KV_CACHE_LAYOUT_HND;
  return -1;
}

std::string pick_string(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return "NHD";
    case 1: return "HND";
    case 2: return "nhd";
    case 3: return "";
    default: return fdp.ConsumeRandomLengthString(12);
  }
}

int pick_layout(FuzzedDataProvider& fdp) {
  return fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeIntegral<int>() : fdp.ConsumeIntegralInRange<int>(0, 2);
}

// Stores an arbitrary int in an enum-typed field without loading it as the enum.
void store_layout(cattn_kv_cache_layout_t* field, int v) { std::memcpy(field, &v, sizeof v); }

}  // namespace

extern "C" {
const char* cattn_fuzz_status_string(int status);  // c_abi_shim.c
const char* cattn_fuzz_layout_name(int layout);
cattn_status_t cattn_fuzz_set_override(cattn_context_t* ctx, int layout);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);

  // Runtime calls that cannot fail, and the ones that fail only on NULL.
  FZ_CHECK(cattn_version() == CATTN_VERSION_NUMBER, "version");
  FZ_CHECK(std::strcmp(cattn_version_string(), CATTN_VERSION_STRING) == 0, "version string");
  const int status = fdp.ConsumeIntegral<int>();
  const char* name = cattn_fuzz_status_string(status);
  FZ_CHECK(name != nullptr, "status string");
  FZ_CHECK((std::strcmp(name, "CATTN_UNKNOWN_STATUS") == 0) == (status < 0 || status >= CATTN_STATUS_COUNT_),
           "status string for " + std::to_string(status));
  const uint32_t major = fdp.ConsumeIntegralInRange<int>(0, 3) == 0 ? fdp.ConsumeIntegral<uint32_t>() : CATTN_VERSION_MAJOR;
  FZ_CHECK((cattn_get_api(major) != nullptr) == (major == CATTN_VERSION_MAJOR), "api table");
  {
    Bytes count(sizeof(int32_t), kPoisonByte);
    const bool null = fdp.ConsumeBool();
    const cattn_status_t s = cattn_cuda_device_count(null ? nullptr : reinterpret_cast<int32_t*>(count.payload()));
    check_status_valid(s);
    FZ_CHECK((s == CATTN_OK) == !null, "device count status");
    int32_t n;
    std::memcpy(&n, count.payload(), sizeof n);
    FZ_CHECK(null || n == 0, "a CPU-only build sees no device");
  }

  // is_valid / name.
  {
    const std::string text = pick_string(fdp);
    const bool null_text = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
    const bool null_valid = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
    Bytes valid(sizeof(int32_t), kPoisonByte);
    const auto before = valid.all();
    const cattn_status_t s = cattn_is_valid_kv_cache_layout(null_text ? nullptr : text.c_str(),
                                                            null_valid ? nullptr : reinterpret_cast<int32_t*>(valid.payload()));
    check_status_valid(s);
    check_failure_message(s, "cattn_is_valid_kv_cache_layout");
    FZ_CHECK((s == CATTN_OK) == (!null_text && !null_valid), "is_valid status");
    if (s == CATTN_OK) {
      int32_t v;
      std::memcpy(&v, valid.payload(), sizeof v);
      FZ_CHECK(v == (parse(text.c_str()) > 0 ? 1 : 0), "is_valid answer for \"" + text + "\"");
    } else {
      FZ_CHECK(valid.all() == before, "a failed is_valid wrote");
    }
    const int l = pick_layout(fdp);
    const char* n = cattn_fuzz_layout_name(l);
    const char* want = l == CATTN_KV_CACHE_LAYOUT_NHD ? "NHD" : l == CATTN_KV_CACHE_LAYOUT_HND ? "HND" : nullptr;
    FZ_CHECK((n == nullptr) == (want == nullptr) && (!n || std::strcmp(n, want) == 0), "layout name");
  }

  // Context and override.
  cattn_context_t* ctx = nullptr;
  FZ_CHECK(cattn_context_create(nullptr) == CATTN_INVALID_ARGUMENT, "context_create(NULL)");
  FZ_CHECK(cattn_context_create(&ctx) == CATTN_OK && ctx != nullptr, "context_create");
  int override_layout = CATTN_KV_CACHE_LAYOUT_UNSET;
  const int sets = fdp.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < sets; ++i) {
    const int l = pick_layout(fdp);
    const bool null_ctx = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
    const cattn_status_t s = cattn_fuzz_set_override(null_ctx ? nullptr : ctx, l);
    check_status_valid(s);
    check_failure_message(s, "cattn_context_set_kv_cache_layout_override");
    const bool ok = !null_ctx && l >= 0 && l <= 2;
    FZ_CHECK((s == CATTN_OK) == ok, "set override status for " + std::to_string(l));
    if (ok) override_layout = l;  // a rejected one leaves the previous override
  }

  // The environment this input sees (only when the args ask for it).
  const int env_choice = fdp.ConsumeIntegralInRange<int>(0, 3);
  const std::string env_text = pick_string(fdp);
  if (env_choice == 0) unsetenv(CATTN_KV_CACHE_LAYOUT_ENV);
  else setenv(CATTN_KV_CACHE_LAYOUT_ENV, env_choice == 1 ? "NHD" : env_choice == 2 ? "HND" : env_text.c_str(), 1);

  const size_t struct_size = pick_struct_size(fdp, CATTN_KV_CACHE_LAYOUT_ARGS_SIZE);
  Struct<cattn_kv_cache_layout_args_t> args(CATTN_KV_CACHE_LAYOUT_ARGS_INIT, struct_size);
  cattn_kv_cache_layout_args_t* a = args.get();
  a->supported_mask = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? fdp.ConsumeIntegral<uint32_t>()
                                                                  : fdp.ConsumeIntegralInRange<uint32_t>(0, 7) & 6u;
  a->read_environment = fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  const std::string user = pick_string(fdp);
  const bool user_given = fdp.ConsumeBool();
  a->env_value = user_given ? user.c_str() : nullptr;
  const int connector = pick_layout(fdp);
  store_layout(&a->connector_layout, connector);
  store_layout(&a->layout, 3);
  const bool use_ctx = fdp.ConsumeIntegralInRange<int>(0, 3) != 0;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto snap = args.snapshot();

  // Reference.
  bool ok = !null_args && struct_size >= CATTN_KV_CACHE_LAYOUT_ARGS_SIZE && connector >= 0 && connector <= 2 &&
            (a->supported_mask & ~6u) == 0;
  int layout = use_ctx ? override_layout : 0;
  if (ok && layout == 0) {
    const char* setting = user_given ? user.c_str() : a->read_environment ? std::getenv(CATTN_KV_CACHE_LAYOUT_ENV) : nullptr;
    if (setting) {
      layout = parse(setting);
      ok = layout > 0;
    }
  }
  if (layout <= 0) layout = connector;
  if (layout <= 0) layout = CATTN_KV_CACHE_LAYOUT_NHD;
  ok = ok && (a->supported_mask == 0 || (a->supported_mask & (1u << layout)) != 0);

  const cattn_status_t s = cattn_get_kv_cache_layout(use_ctx ? ctx : nullptr, null_args ? nullptr : a);
  check_status_valid(s);
  check_failure_message(s, "cattn_get_kv_cache_layout");
  FZ_CHECK((s == CATTN_OK) == ok, std::string("get_kv_cache_layout returned ") + cattn_status_string(s));
  if (s == CATTN_OK) {
    cattn_kv_cache_layout_args_t e;
    std::memcpy(&e, snap.data() + kGuard, sizeof e);
    store_layout(&e.layout, layout);
    FZ_CHECK(args.equals(snap, e), "resolved layout differs (or other bytes changed)");
  } else {
    FZ_CHECK(args.unchanged(snap), "a failed call wrote args");
  }
  cattn_context_destroy(ctx);
  cattn_context_destroy(nullptr);
  FZ_CHECK(cattn_last_error_message() != nullptr, "last error message");
  // A destroyed context is refused wherever it is used, and destroying it again frees nothing
  // (AddressSanitizer would report a double free) but leaves a message; so is a pointer that no
  // create call returned.
  if (fdp.ConsumeBool()) {
    cattn_context_t* dead = fdp.ConsumeBool() ? ctx : reinterpret_cast<cattn_context_t*>(args.get());
    const auto before = args.snapshot();
    const cattn_status_t o = cattn_fuzz_set_override(dead, CATTN_KV_CACHE_LAYOUT_NHD);
    check_status_valid(o);
    check_failure_message(o, "cattn_context_set_kv_cache_layout_override");
    FZ_CHECK(o == CATTN_INVALID_ARGUMENT, std::string("override on a dead context: ") + cattn_status_string(o));
    const cattn_status_t g = cattn_get_kv_cache_layout(dead, a);
    check_status_valid(g);
    check_failure_message(g, "cattn_get_kv_cache_layout");
    FZ_CHECK(g == CATTN_INVALID_ARGUMENT, std::string("get_kv_cache_layout with a dead context: ") + cattn_status_string(g));
    FZ_CHECK(args.unchanged(before), "a call with a dead context wrote args");
    cattn_context_destroy(dead);
    FZ_CHECK(std::strstr(cattn_last_error_message(), "cattn_context_destroy") != nullptr,
             "destroying a dead context leaves no message");
  }
  return 0;
}
