/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-tree consumer (a): built with `cc $(pkg-config --cflags --libs cattn)` against the
 * installed libcattn-dev, linked with -lcattn. Checks the header/library version, the PCP
 * restore index and the KV-cache layout resolution on host data; exits 1 on any mismatch. */
#define _GNU_SOURCE
#include <cattn.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what) {
  printf("  %-58s %s\n", what, ok ? "ok" : "MISMATCH");
  if (!ok) failures++;
}

int main(void) {
  Dl_info info;
  if (dladdr((void*)&cattn_version, &info) && info.dli_fname)
    printf("pkg-config consumer: libcattn loaded from %s\n", info.dli_fname);
  printf("  header %s, library %s\n", CATTN_VERSION_STRING, cattn_version_string());
  check(cattn_version() == CATTN_VERSION_NUMBER, "cattn_version() == CATTN_VERSION_NUMBER");
  check(strcmp(cattn_version_string(), CATTN_VERSION_STRING) == 0, "version string matches");

  /* SPEC vector: cu_num_tokens [0, 8, 20]. */
  int64_t cu[] = {0, 8, 20}, cu_n = 3, size = -1;
  DLTensor cu_t = {cu, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &cu_n, NULL, 0};
  cattn_status_t st = cattn_get_pcp_query_restore_idx_size(&cu_t, &size);
  check(st == CATTN_OK && size == 20, "restore index size of [0, 8, 20] is 20");
  int32_t idx[20];
  int64_t cap = 20;
  DLTensor idx_t = {idx, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &cap, NULL, 0};
  cattn_pcp_query_restore_idx_args_t a = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  a.cu_num_tokens = &cu_t;
  a.restore_idx = &idx_t;
  st = cattn_get_pcp_query_restore_idx(&a);
  const int32_t want[20] = {0, 1, 2, 3, 10, 11, 12, 13, 4, 5, 6, 7, 8, 9, 14, 15, 16, 17, 18, 19};
  check(st == CATTN_OK && memcmp(idx, want, sizeof want) == 0, "restore index (int32 out)");

  /* Odd length 3 is an error on the host path, and nothing is written. */
  int64_t odd[] = {0, 3};
  int64_t odd_n = 2;
  DLTensor odd_t = {odd, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &odd_n, NULL, 0};
  a.cu_num_tokens = &odd_t;
  st = cattn_get_pcp_query_restore_idx(&a);
  check(st == CATTN_INVALID_ARGUMENT && memcmp(idx, want, sizeof want) == 0,
        "odd length rejected, output untouched");
  printf("  message: %s\n", cattn_last_error_message());

  /* Layout precedence: override > user setting > connector > NHD. */
  cattn_context_t* ctx = NULL;
  check(cattn_context_create(&ctx) == CATTN_OK && ctx != NULL, "context created");
  cattn_kv_cache_layout_args_t la = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  la.connector_layout = CATTN_KV_CACHE_LAYOUT_HND;
  st = cattn_get_kv_cache_layout(ctx, &la);
  check(st == CATTN_OK && la.layout == CATTN_KV_CACHE_LAYOUT_HND, "connector HND wins over NHD");
  la.env_value = "NHD";
  st = cattn_get_kv_cache_layout(ctx, &la);
  check(st == CATTN_OK && la.layout == CATTN_KV_CACHE_LAYOUT_NHD, "user NHD wins over connector");
  cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND);
  st = cattn_get_kv_cache_layout(ctx, &la);
  check(st == CATTN_OK && la.layout == CATTN_KV_CACHE_LAYOUT_HND, "override HND wins over user");
  cattn_context_destroy(ctx);

  printf("pkg-config consumer: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
