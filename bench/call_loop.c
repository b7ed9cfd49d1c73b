/* Calls one libcattn entry point n times back to back from C. bench/gpu_side_by_side.py times
 * it to report the per-call rate a C caller sees, in the same process as the seed, without
 * ctypes' overhead on every call. */
#include <stdint.h>

#include "cattn.h"

typedef cattn_status_t (*cattn_bench_entry_t)(const void* args);

int32_t cattn_bench_call_loop(cattn_bench_entry_t fn, const void* args, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const cattn_status_t s = fn(args);
    if (s != CATTN_OK) return (int32_t)s;
  }
  return 0;
}
