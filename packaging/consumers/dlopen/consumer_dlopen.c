/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-tree consumer (c): does not link libcattn. It dlopen()s the header's CATTN_SONAME,
 * resolves the one symbol cattn_get_api and calls utilities
 * through the function table; exits 1 on any mismatch. */
#define _GNU_SOURCE
#include <cattn.h>
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>


static int failures = 0;

static void check(int ok, const char* what) {
  printf("  %-58s %s\n", what, ok ? "ok" : "MISMATCH");
  if (!ok) failures++;
}

int main(void) {
  void* lib = dlopen(CATTN_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen consumer: dlopen(%s) failed: %s\n", CATTN_SONAME, dlerror());
    return 1;
  }
  struct link_map* map = NULL;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map)
    printf("dlopen consumer: dlopen(\"%s\") loaded %s\n", CATTN_SONAME, map->l_name);
  /* The header's pattern: dlsym's object pointer copied into cattn_get_api_fn. */
  void* sym = dlsym(lib, "cattn_get_api");
  cattn_get_api_fn get_api = NULL;
  if (sym) memcpy(&get_api, &sym, sizeof get_api);
  if (!get_api) {
    fprintf(stderr, "dlopen consumer: no cattn_get_api: %s\n", dlerror());
    return 1;
  }
  check(get_api(CATTN_VERSION_MAJOR + 1) == NULL, "cattn_get_api(major + 1) is NULL");
  const cattn_api_t* api = get_api(CATTN_VERSION_MAJOR);
  check(api != NULL, "cattn_get_api(CATTN_VERSION_MAJOR) returns a table");
  if (!api) return 1;
  printf("  table: %zu bytes (header knows %zu), abi_major %u, version %u (%s)\n",
         api->struct_size, CATTN_API_SIZE, (unsigned)api->abi_major, (unsigned)api->version,
         api->version_string());
  check(api->abi_major == CATTN_VERSION_MAJOR, "table abi_major == header major");
  /* The table may be newer than this header, never older for what we call. */
  check(api->struct_size >= offsetof(cattn_api_t, infer_global_hyperparameters) +
                                sizeof(api->infer_global_hyperparameters),
        "table holds every 0.1 entry");
  check(api->version_number() == api->version, "version_number() == table version");

  /* Restore index through the table, int64 in, int64 out, strided output (every 2nd slot). */
  int32_t cu[] = {0, 8, 20};
  int64_t cu_n = 3, size = -1;
  DLTensor cu_t = {cu, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &cu_n, NULL, 0};
  check(api->get_pcp_query_restore_idx_size(&cu_t, &size) == CATTN_OK && size == 20,
        "restore index size of [0, 8, 20] is 20");
  int64_t buf[40];
  for (int i = 0; i < 40; ++i) buf[i] = 777;
  int64_t cap = 20, stride = 2;
  DLTensor idx_t = {buf, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &cap, &stride, 0};
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = &cu_t;
  a.restore_idx = &idx_t;
  cattn_status_t st = api->get_pcp_query_restore_idx(&a);
  const int64_t want[20] = {0, 1, 2, 3, 10, 11, 12, 13, 4, 5, 6, 7, 8, 9, 14, 15, 16, 17, 18, 19};
  int ok = st == CATTN_OK;
  for (int i = 0; i < 20; ++i) ok = ok && buf[2 * i] == want[i] && buf[2 * i + 1] == 777;
  check(ok, "restore index (int32 in, int64 strided out)");

  /* KV-cache layout resolution through the table. */
  int32_t valid = -1;
  check(api->is_valid_kv_cache_layout("HND", &valid) == CATTN_OK && valid == 1, "\"HND\" valid");
  check(api->is_valid_kv_cache_layout("hnd", &valid) == CATTN_OK && valid == 0,
        "\"hnd\" not valid (case-sensitive)");
  cattn_kv_cache_layout_args_t la = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  st = api->get_kv_cache_layout(NULL, &la);
  check(st == CATTN_OK && la.layout == CATTN_KV_CACHE_LAYOUT_NHD, "default layout is NHD");
  check(strcmp(api->kv_cache_layout_name(la.layout), "NHD") == 0, "layout name NHD");
  la.env_value = "HND";
  la.supported_mask = CATTN_KV_CACHE_LAYOUT_BIT(CATTN_KV_CACHE_LAYOUT_NHD);
  st = api->get_kv_cache_layout(NULL, &la);
  check(st == CATTN_NOT_SUPPORTED, "HND asked, backend supports NHD only: NOT_SUPPORTED");
  printf("  message: %s\n", api->last_error_message());
  la.env_value = "nhd";
  la.supported_mask = 0;
  st = api->get_kv_cache_layout(NULL, &la);
  check(st == CATTN_INVALID_ARGUMENT, "user setting \"nhd\" is INVALID_ARGUMENT");
  printf("  message: %s\n", api->last_error_message());
  check(strcmp(api->status_string(st), "CATTN_INVALID_ARGUMENT") == 0, "status string");

  dlclose(lib);
  printf("dlopen consumer: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
