/* SPDX-License-Identifier: Apache-2.0 */
/* Calls that pass arbitrary ints where the header declares an enum, as C code may. C++ cannot
 * form such an argument without undefined behaviour (UBSan's -fsanitize=enum), so the fuzz
 * targets go through these C functions. */
#include "cattn.h"

const char* cattn_fuzz_status_string(int status) {
  return cattn_status_string((cattn_status_t)status);
}
const char* cattn_fuzz_layout_name(int layout) {
  return cattn_kv_cache_layout_name((cattn_kv_cache_layout_t)layout);
}
cattn_status_t cattn_fuzz_set_override(cattn_context_t* ctx, int layout) {
  return cattn_context_set_kv_cache_layout_override(ctx, (cattn_kv_cache_layout_t)layout);
}
cattn_status_t cattn_fuzz_layout_properties(int layout, cattn_kv_cache_layout_properties_t* p) {
  return cattn_kv_cache_layout_get_properties((cattn_kv_cache_layout_t)layout, p);
}
cattn_status_t cattn_fuzz_flashinfer_layout(int layout, const char** out) {
  return cattn_get_flashinfer_layout_string((cattn_kv_cache_layout_t)layout, out);
}
