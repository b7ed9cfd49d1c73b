/* SPDX-License-Identifier: Apache-2.0 */
/* CATTN_API_HAS against the library's real function table, as strict C99 (also valid C++).
 * No test framework: prints each failed check and exits 1, or prints "ok" and exits 0.
 * Built and run by ctest (api_has). */
#include "cattn.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

int main(void) {
  const cattn_api_t* api = cattn_get_api(CATTN_VERSION_MAJOR);
  const cattn_api_t* none = NULL;
  cattn_api_t old_table;
  cattn_api_t holes;
  cattn_kv_cache_layout_t layout = CATTN_KV_CACHE_LAYOUT_UNSET;

  CHECK(api != NULL);
  if (api == NULL) return 1;
  CHECK(api->struct_size == CATTN_API_SIZE);

  /* A NULL table has no member (and is never dereferenced). */
  CHECK(!CATTN_API_HAS(none, version_number));
  CHECK(!CATTN_API_HAS(cattn_get_api(CATTN_VERSION_MAJOR + 1), version_number));

  /* The real table: the first, a 1.0, a 1.1 and the last member are present. */
  CHECK(CATTN_API_HAS(api, version_number));
  CHECK(CATTN_API_HAS(api, comm_get_size));
  CHECK(CATTN_API_HAS(api, kv_cache_layout_from_name));
  CHECK(CATTN_API_HAS(api, log2_lse_to_ln));

  /* A test passes, the call works. */
  if (CATTN_API_HAS(api, version_number)) CHECK(api->version_number() == CATTN_VERSION_NUMBER);
  if (CATTN_API_HAS(api, kv_cache_layout_from_name)) {
    CHECK(api->kv_cache_layout_from_name("HND", &layout) == CATTN_OK);
    CHECK(layout == CATTN_KV_CACHE_LAYOUT_LBHNC);
  }

  /* A 1.0 library's table ends after comm_get_size: 1.1 members are absent. */
  memcpy(&old_table, api, sizeof old_table);
  old_table.struct_size = offsetof(cattn_api_t, comm_get_size) + sizeof(old_table.comm_get_size);
  CHECK(CATTN_API_HAS(&old_table, comm_get_size));
  CHECK(!CATTN_API_HAS(&old_table, make_local_attention_virtual_batches_size));
  CHECK(!CATTN_API_HAS(&old_table, kv_cache_layout_from_name));
  CHECK(!CATTN_API_HAS(&old_table, log2_lse_to_ln));

  /* A size that ends inside a member does not cover it. */
  old_table.struct_size -= 1;
  CHECK(!CATTN_API_HAS(&old_table, comm_get_size));
  CHECK(CATTN_API_HAS(&old_table, comm_get_rank));

  /* A covered member that is NULL is absent. */
  memcpy(&holes, api, sizeof holes);
  holes.unpadded = NULL;
  CHECK(!CATTN_API_HAS(&holes, unpadded));
  CHECK(CATTN_API_HAS(&holes, log2_lse_to_ln));

  if (failures != 0) return 1;
  printf("ok\n");
  return 0;
}
