/* SPDX-License-Identifier: Apache-2.0 */
/* Calls libcattn entry points back to back from C, so that the Python runners
 * (bench/gpu_side_by_side.py, bench/step_side_by_side.py) time the rate a C caller sees, in the
 * same process as the seed, without ctypes' overhead on every call. */
#include <stdint.h>

#include "cattn.h"

typedef cattn_status_t (*cattn_bench_entry_t)(const void* args);

/* One entry point, n times. */
int32_t cattn_bench_call_loop(cattn_bench_entry_t fn, const void* args, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const cattn_status_t s = fn(args);
    if (s != CATTN_OK) return (int32_t)s;
  }
  return 0;
}

/* A step of `count` calls (fns[i] on args[i], in order), n times. */
int32_t cattn_bench_call_list(const cattn_bench_entry_t* fns, const void* const* args,
                              int32_t count, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    for (int32_t c = 0; c < count; ++c) {
      const cattn_status_t s = fns[c](args[c]);
      if (s != CATTN_OK) return (int32_t)s;
    }
  return 0;
}

typedef cattn_status_t (*cattn_bench_run_t)(const cattn_step_plan_t*, const cattn_step_batch_t*,
                                            const cattn_step_outputs_t*, cattn_stream_t);

/* cattn_step_plan_run (passed as `run`, so this module needs no link to libcattn), n times. */
int32_t cattn_bench_step_plan_loop(cattn_bench_run_t run, const cattn_step_plan_t* plan,
                                   const cattn_step_batch_t* batch,
                                   const cattn_step_outputs_t* outputs, cattn_stream_t stream,
                                   int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const cattn_status_t s = run(plan, batch, outputs, stream);
    if (s != CATTN_OK) return (int32_t)s;
  }
  return 0;
}

/* cattn_resolve_kv_cache_layout n times on one context, clearing the context's resolved layout
 * (cattn_context_set_kv_cache_layout_preset with NULL) before each call, so that every call
 * resolves afresh (bench/kv_cache_layout_side_by_side.py). The entry points come as pointers,
 * as above, so this module needs no link to libcattn. */
typedef cattn_status_t (*cattn_bench_preset_t)(cattn_context_t*, const char*);
typedef cattn_status_t (*cattn_bench_resolve_t)(cattn_context_t*,
                                                cattn_resolve_kv_cache_layout_args_t*);

int32_t cattn_bench_resolve_loop(cattn_bench_preset_t preset, cattn_bench_resolve_t resolve,
                                 cattn_context_t* ctx, cattn_resolve_kv_cache_layout_args_t* args,
                                 int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    cattn_status_t s = preset(ctx, NULL);
    if (s == CATTN_OK) s = resolve(ctx, args);
    if (s != CATTN_OK) return (int32_t)s;
  }
  return 0;
}
