// SPDX-License-Identifier: Apache-2.0

package cattn

// The cgo layer, the bottom of the package: every call into libcattn is in this file. It takes
// and returns C-shaped values only (C structs and scalars, unsafe pointers, DLTensor
// pointers) and knows nothing of the package's Go types; the utility files (<utility>.go)
// fill the C argument structs, apply the Go defaults and convert the results, through a frame
// (frame.go) whose C memory is capi_mem.go's. scripts/check_layers.py's "go" rule set holds
// the cgo layer (capi*.go, link_*.go) to using nothing declared above it.
//
// Each Go function c<Name> at the end of this file makes exactly one cgo call, to the shim
// gocattn_<name> in the preamble, which calls libcattn and, on failure, copies
// cattn_last_error_message() into the caller's message buffer (msg, msgCap bytes) before
// returning. The message is thread-local in C, and a goroutine may continue on another OS
// thread after any cgo call, so it must be read inside the same call.
//
// The shims reach libcattn through GOCATTN_CALL, which calls cattn_<name> directly when the
// package links the library (the default), and the member <name> of the function table that
// cattn_get_api returned when it was built with -tags cattn_dlopen (link_dlopen.go defines
// GOCATTN_DLOPEN): the library is then opened with dlopen at run time, and a call the loaded
// library's table lacks (an older libcattn) is CATTN_NOT_SUPPORTED instead of a missing symbol.
//
// Streams, device addresses and NCCL communicators cross as integers: the Go side stores them
// into pointer fields through a *uintptr (setAddr), and the shims that take one as a parameter
// convert it in C. They are not Go pointers, and converting them in Go would look like one.

/*
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cattn.h>

#ifdef GOCATTN_DLOPEN
#include <dlfcn.h>

// The table of the libcattn gocattn_load opened (NULL until it succeeds), published with
// release/acquire so that a call on another thread sees a complete table.
static const cattn_api_t* gocattn_api_table;
// Why the load failed, for the message of every call made afterwards.
static char gocattn_load_got[512] = "libcattn was not loaded";
static char gocattn_load_expected[512] = "a successful cattn.Load";

static const cattn_api_t* gocattn_api(void) {
  return __atomic_load_n(&gocattn_api_table, __ATOMIC_ACQUIRE);
}

// True when the loaded table is new enough to hold member m and the library filled it in.
#define GOCATTN_HAS(api, m) \
  ((api) != NULL && offsetof(cattn_api_t, m) + sizeof((api)->m) <= (api)->struct_size && \
   (api)->m != NULL)

static const char* gocattn_last_message(const cattn_api_t* api) {
  return api != NULL ? api->last_error_message() : NULL;
}

static cattn_status_t gocattn_unavailable(const cattn_api_t* api, const char* fn, char* msg,
                                          size_t cap) {
  if (api == NULL)
    snprintf(msg, cap, "%s: libcattn could not be loaded (got %s, expected %s)", fn,
             gocattn_load_got, gocattn_load_expected);
  else
    snprintf(msg, cap,
             "%s: the loaded libcattn lacks this call (got version %u, expected %s or newer)",
             fn, (unsigned)api->version, CATTN_VERSION_STRING);
  return CATTN_NOT_SUPPORTED;
}

static cattn_status_t gocattn_load(const char* path, char* msg, size_t cap) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char* e = dlerror();
    snprintf(gocattn_load_got, sizeof gocattn_load_got, "\"%s\"", e != NULL ? e : "?");
    snprintf(gocattn_load_expected, sizeof gocattn_load_expected,
             "a libcattn dlopen can open as %s (set $CATTN_LIBRARY to its path, or put "
             "libcattn.so.1 on the loader's search path)", path);
  } else {
    void* sym = dlsym(lib, "cattn_get_api");
    cattn_get_api_fn get_api = NULL;
    const cattn_api_t* api = NULL;
    if (sym != NULL) memcpy(&get_api, &sym, sizeof get_api);
    if (get_api != NULL) api = get_api(CATTN_VERSION_MAJOR);
    if (get_api == NULL) {
      snprintf(gocattn_load_got, sizeof gocattn_load_got, "%s without cattn_get_api", path);
      snprintf(gocattn_load_expected, sizeof gocattn_load_expected, "a libcattn (1.0 or newer)");
    } else if (api == NULL || api->abi_major != CATTN_VERSION_MAJOR ||
               api->struct_size < offsetof(cattn_api_t, comm_get_size) + sizeof api->comm_get_size) {
      snprintf(gocattn_load_got, sizeof gocattn_load_got, "%s without a table for ABI %d", path,
               CATTN_VERSION_MAJOR);
      snprintf(gocattn_load_expected, sizeof gocattn_load_expected, "a libcattn of ABI %d",
               CATTN_VERSION_MAJOR);
    } else {
      // The library stays loaded for the life of the process: handles and tables point into it.
      __atomic_store_n(&gocattn_api_table, api, __ATOMIC_RELEASE);
      return CATTN_OK;
    }
    dlclose(lib);
  }
  snprintf(msg, cap, "cattn_get_api: libcattn could not be loaded (got %s, expected %s)",
           gocattn_load_got, gocattn_load_expected);
  return CATTN_NOT_SUPPORTED;
}

#define GOCATTN_IS_DLOPEN 1
// Returns from the enclosing shim: the status of libcattn's call m(...), or
// CATTN_NOT_SUPPORTED when the library or that call is missing.
#define GOCATTN_CALL(m, ...)                                                   \
  do {                                                                        \
    const cattn_api_t* api_ = gocattn_api();                                  \
    if (!GOCATTN_HAS(api_, m)) return gocattn_unavailable(api_, "cattn_" #m, msg, cap); \
    cattn_status_t s_ = api_->m(__VA_ARGS__);                                 \
    if (s_ != CATTN_OK) gocattn_copy_message(gocattn_last_message(api_), msg, cap); \
    return s_;                                                                \
  } while (0)
// For the calls that cannot fail (no message to write): api_->m or, when it is missing,
// `fallback`.
#define GOCATTN_PLAIN(m, fallback, ...)                                        \
  do {                                                                        \
    const cattn_api_t* api_ = gocattn_api();                                  \
    if (!GOCATTN_HAS(api_, m)) return fallback;                               \
    return api_->m(__VA_ARGS__);                                              \
  } while (0)
#define GOCATTN_VOID(m, ...)                                                   \
  do {                                                                        \
    const cattn_api_t* api_ = gocattn_api();                                  \
    if (GOCATTN_HAS(api_, m)) api_->m(__VA_ARGS__);                           \
  } while (0)

#else // linked against libcattn

static cattn_status_t gocattn_load(const char* path, char* msg, size_t cap) {
  (void)path;
  (void)msg;
  (void)cap;
  return CATTN_OK;
}

#define GOCATTN_IS_DLOPEN 0
#define GOCATTN_CALL(m, ...)                                                   \
  do {                                                                        \
    cattn_status_t s_ = cattn_##m(__VA_ARGS__);                               \
    if (s_ != CATTN_OK) gocattn_copy_message(cattn_last_error_message(), msg, cap); \
    return s_;                                                                \
  } while (0)
#define GOCATTN_PLAIN(m, fallback, ...) return cattn_##m(__VA_ARGS__)
#define GOCATTN_VOID(m, ...) cattn_##m(__VA_ARGS__)

#endif

static void gocattn_copy_message(const char* m, char* msg, size_t cap) {
  size_t n = m != NULL ? strlen(m) : 0;
  if (cap == 0) return;
  if (n >= cap) n = cap - 1;
  if (n > 0) memcpy(msg, m, n);
  msg[n] = '\0';
}

// The calls that take one argument struct: gocattn_<name>(args, msg, cap). Streams and
// workspaces are set in the struct by the Go side.
#define GOCATTN_ARGS_CALLS(X)                                                   \
  X(get_dcp_local_seq_lens, cattn_dcp_local_seq_lens_args_t)                    \
  X(get_pcp_query_restore_idx, cattn_pcp_query_restore_idx_args_t)              \
  X(fused_pcp_qkv_select, cattn_fused_pcp_qkv_select_args_t)                    \
  X(pcp_kv_allgather_and_restore, cattn_pcp_kv_allgather_and_restore_args_t)    \
  X(compute_causal_conv1d_metadata, cattn_causal_conv1d_metadata_args_t)        \
  X(compute_causal_conv1d_metadata_capturable, cattn_causal_conv1d_metadata_capturable_args_t) \
  X(extend_all_queries_by_n, cattn_extend_all_queries_by_n_args_t)              \
  X(make_kv_sharing_fast_prefill_common_attn_metadata, cattn_fast_prefill_metadata_args_t) \
  X(make_local_attention_virtual_batches, cattn_local_attention_args_t)         \
  X(make_local_attention_virtual_batches_capturable, cattn_local_attention_capturable_args_t) \
  X(mamba_get_block_table_tensor, cattn_mamba_block_table_args_t)               \
  X(kv_cache_layout_strides, cattn_kv_cache_layout_strides_args_t)              \
  X(get_supported_kv_cache_layouts, cattn_get_supported_kv_cache_layouts_args_t) \
  X(split_decodes_and_prefills, cattn_split_decodes_and_prefills_args_t)        \
  X(split_decodes_and_prefills_capturable, cattn_split_decodes_and_prefills_capturable_args_t) \
  X(split_decodes_prefills_and_extends, cattn_split_decodes_prefills_and_extends_args_t) \
  X(split_decodes_prefills_and_extends_capturable,                                 \
    cattn_split_decodes_prefills_and_extends_capturable_args_t)                     \
  X(split_prefill_chunks, cattn_split_prefill_chunks_args_t)                    \
  X(reorder_batch_to_split_decodes_and_prefills, cattn_reorder_batch_args_t)    \
  X(naive_query_lens, cattn_naive_query_lens_args_t)                            \
  X(compute_num_computed_tokens, cattn_compute_num_computed_tokens_args_t)      \
  X(token_to_req_indices, cattn_token_to_req_indices_args_t)                    \
  X(unpadded, cattn_unpadded_args_t)                                            \
  X(max_local_attention_virtual_batches, cattn_max_local_attention_virtual_batches_args_t) \
  X(compute_mm_prefix_range_tensor, cattn_mm_prefix_range_tensor_args_t)        \
  X(fill_mm_prefix_query_ranges, cattn_fill_mm_prefix_query_ranges_args_t)      \
  X(log2_lse_to_ln, cattn_log2_lse_to_ln_args_t)                                \
  X(prepare_pos_seq_lens, cattn_prepare_pos_seq_lens_args_t)                    \
  X(gather_block_tables, cattn_gather_block_tables_args_t)                      \
  X(compute_slot_mappings, cattn_compute_slot_mappings_args_t)                  \
  X(combine_sampled_and_draft_tokens, cattn_combine_sampled_and_draft_tokens_args_t) \
  X(step_batch_check, cattn_step_batch_check_args_t)                            \
  X(eagle_step_update_slot_mapping_and_metadata,                                \
    cattn_eagle_step_update_slot_mapping_and_metadata_args_t)                   \
  X(eagle_prepare_inputs_padded, cattn_eagle_prepare_inputs_padded_args_t)      \
  X(eagle_prepare_next_token_padded, cattn_eagle_prepare_next_token_padded_args_t) \
  X(compute_new_slot_mapping, cattn_compute_new_slot_mapping_args_t)            \
  X(copy_and_expand_eagle_inputs, cattn_copy_and_expand_eagle_inputs_args_t)    \
  X(update_num_computed_tokens_for_batch_change,                                \
    cattn_update_num_computed_tokens_for_batch_change_args_t)                   \
  X(step_inputs_size, cattn_step_inputs_size_args_t)

#define GOCATTN_ARGS_SHIM(m, T) \
  static cattn_status_t gocattn_##m(T* a, char* msg, size_t cap) { GOCATTN_CALL(m, a); }
GOCATTN_ARGS_CALLS(GOCATTN_ARGS_SHIM)

// The other calls, one shim each. Enums cross as int32_t.
static uint32_t gocattn_version(void) {
#ifdef GOCATTN_DLOPEN
  GOCATTN_PLAIN(version_number, 0u);
#else
  return cattn_version(); // the one call whose table member has another name
#endif
}
static const char* gocattn_version_string(void) { GOCATTN_PLAIN(version_string, ""); }
static const char* gocattn_status_string(int32_t s) {
  GOCATTN_PLAIN(status_string, "", (cattn_status_t)s);
}
static const char* gocattn_kv_cache_layout_name(int32_t l) {
  GOCATTN_PLAIN(kv_cache_layout_name, NULL, (cattn_kv_cache_layout_t)l);
}
static void gocattn_context_destroy(cattn_context_t* c) { GOCATTN_VOID(context_destroy, c); }
static void gocattn_local_attention_plan_destroy(cattn_local_attention_plan_t* p) {
  GOCATTN_VOID(local_attention_plan_destroy, p);
}
static void gocattn_step_plan_destroy(cattn_step_plan_t* p) { GOCATTN_VOID(step_plan_destroy, p); }
static void gocattn_comm_destroy(cattn_comm_t* c) { GOCATTN_VOID(comm_destroy, c); }

static cattn_status_t gocattn_cuda_device_count(int32_t* n, char* msg, size_t cap) {
  GOCATTN_CALL(cuda_device_count, n);
}
static cattn_status_t gocattn_context_create(cattn_context_t** out, char* msg, size_t cap) {
  GOCATTN_CALL(context_create, out);
}
static cattn_status_t gocattn_is_valid_kv_cache_layout(const char* v, int32_t* valid, char* msg,
                                                       size_t cap) {
  GOCATTN_CALL(is_valid_kv_cache_layout, v, valid);
}
static cattn_status_t gocattn_context_set_kv_cache_layout_override(cattn_context_t* ctx,
                                                                   int32_t l, char* msg,
                                                                   size_t cap) {
  GOCATTN_CALL(context_set_kv_cache_layout_override, ctx, (cattn_kv_cache_layout_t)l);
}
static cattn_status_t gocattn_get_kv_cache_layout(const cattn_context_t* ctx,
                                                  cattn_kv_cache_layout_args_t* a, char* msg,
                                                  size_t cap) {
  GOCATTN_CALL(get_kv_cache_layout, ctx, a);
}
// The layout outputs go through an enum local: the caller's int32_t is never written as an
// enum of another size.
static cattn_status_t gocattn_kv_cache_layout_from_name_e(const char* name,
                                                          cattn_kv_cache_layout_t* l, char* msg,
                                                          size_t cap) {
  GOCATTN_CALL(kv_cache_layout_from_name, name, l);
}
static cattn_status_t gocattn_kv_cache_layout_from_name(const char* name, int32_t* out,
                                                        char* msg, size_t cap) {
  cattn_kv_cache_layout_t l = CATTN_KV_CACHE_LAYOUT_UNSET;
  cattn_status_t s = gocattn_kv_cache_layout_from_name_e(name, &l, msg, cap);
  *out = (int32_t)l;
  return s;
}
static cattn_status_t gocattn_kv_cache_layout_get_properties(
    int32_t l, cattn_kv_cache_layout_properties_t* p, char* msg, size_t cap) {
  GOCATTN_CALL(kv_cache_layout_get_properties, (cattn_kv_cache_layout_t)l, p);
}
static cattn_status_t gocattn_get_flashinfer_layout_string(int32_t l, const char** out,
                                                           char* msg, size_t cap) {
  GOCATTN_CALL(get_flashinfer_layout_string, (cattn_kv_cache_layout_t)l, out);
}
static cattn_status_t gocattn_context_set_kv_cache_layout_preset(cattn_context_t* ctx,
                                                                 const char* name, char* msg,
                                                                 size_t cap) {
  GOCATTN_CALL(context_set_kv_cache_layout_preset, ctx, name);
}
static cattn_status_t gocattn_resolve_kv_cache_layout(cattn_context_t* ctx,
                                                      cattn_resolve_kv_cache_layout_args_t* a,
                                                      char* msg, size_t cap) {
  GOCATTN_CALL(resolve_kv_cache_layout, ctx, a);
}
static cattn_status_t gocattn_record_kv_cache_layout(cattn_context_t* ctx, const char* name,
                                                     char* msg, size_t cap) {
  GOCATTN_CALL(record_kv_cache_layout, ctx, name);
}
static cattn_status_t gocattn_get_resolved_kv_cache_layout_e(const cattn_context_t* ctx,
                                                             cattn_kv_cache_layout_t* l,
                                                             char* msg, size_t cap) {
  GOCATTN_CALL(get_resolved_kv_cache_layout, ctx, l);
}
static cattn_status_t gocattn_get_resolved_kv_cache_layout(const cattn_context_t* ctx,
                                                           int32_t* out, char* msg, size_t cap) {
  cattn_kv_cache_layout_t l = CATTN_KV_CACHE_LAYOUT_UNSET;
  cattn_status_t s = gocattn_get_resolved_kv_cache_layout_e(ctx, &l, msg, cap);
  *out = (int32_t)l;
  return s;
}
static cattn_status_t gocattn_get_pcp_query_restore_idx_size(const DLTensor* cu, int64_t* size,
                                                             char* msg, size_t cap) {
  GOCATTN_CALL(get_pcp_query_restore_idx_size, cu, size);
}
static cattn_status_t gocattn_fused_pcp_qkv_select_size(int64_t n, int64_t w, int64_t r,
                                                        int64_t* q_rows, int64_t* kv_head_rows,
                                                        int64_t* kv_tail_rows, char* msg,
                                                        size_t cap) {
  GOCATTN_CALL(fused_pcp_qkv_select_size, n, w, r, q_rows, kv_head_rows, kv_tail_rows);
}
static cattn_status_t gocattn_comm_get_unique_id(cattn_comm_unique_id_t* id, char* msg,
                                                 size_t cap) {
  GOCATTN_CALL(comm_get_unique_id, id);
}
static cattn_status_t gocattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                          int32_t rank, int32_t device, cattn_comm_t** out,
                                          char* msg, size_t cap) {
  GOCATTN_CALL(comm_create, id, nranks, rank, device, out);
}
static cattn_status_t gocattn_comm_create_borrowed(uintptr_t ncclComm, cattn_comm_t** out,
                                                   char* msg, size_t cap) {
  GOCATTN_CALL(comm_create_borrowed, (void*)ncclComm, out);
}
static cattn_status_t gocattn_comm_get_rank(const cattn_comm_t* c, int32_t* v, char* msg,
                                            size_t cap) {
  GOCATTN_CALL(comm_get_rank, c, v);
}
static cattn_status_t gocattn_comm_get_size(const cattn_comm_t* c, int32_t* v, char* msg,
                                            size_t cap) {
  GOCATTN_CALL(comm_get_size, c, v);
}
static cattn_status_t gocattn_pcp_kv_allgather_and_restore_workspace_size(
    cattn_pcp_kv_allgather_and_restore_args_t* a, size_t* size, char* msg, size_t cap) {
  GOCATTN_CALL(pcp_kv_allgather_and_restore_workspace_size, a, size);
}
static cattn_status_t gocattn_compute_causal_conv1d_metadata_size(const DLTensor* qsl,
                                                                  int64_t blockM, int64_t* tot,
                                                                  int64_t* capacity, char* msg,
                                                                  size_t cap) {
  GOCATTN_CALL(compute_causal_conv1d_metadata_size, qsl, blockM, tot, capacity);
}
static cattn_status_t gocattn_make_local_attention_virtual_batches_size(
    cattn_local_attention_args_t* a, int64_t* vb, int64_t* pages, size_t* bytes, char* msg,
    size_t cap) {
  GOCATTN_CALL(make_local_attention_virtual_batches_size, a, vb, pages, bytes);
}
static cattn_status_t gocattn_local_attention_plan_get_shape(
    const cattn_local_attention_plan_t* p, int64_t* vb, int64_t* pages, char* msg, size_t cap) {
  GOCATTN_CALL(local_attention_plan_get_shape, p, vb, pages);
}
static cattn_status_t gocattn_local_attention_plan_fill(const cattn_local_attention_plan_t* p,
                                                        cattn_local_attention_fill_args_t* a,
                                                        char* msg, size_t cap) {
  GOCATTN_CALL(local_attention_plan_fill, p, a);
}
static cattn_status_t gocattn_local_attention_plan_make_block_table(
    const cattn_local_attention_plan_t* p, const DLTensor* table, DLTensor* out,
    uintptr_t stream, char* msg, size_t cap) {
  GOCATTN_CALL(local_attention_plan_make_block_table, p, table, out, (cattn_stream_t)stream);
}
static cattn_status_t gocattn_get_per_layer_parameters(const cattn_attention_layer_desc_t* l,
                                                       size_t n,
                                                       cattn_per_layer_parameters_t* out,
                                                       char* msg, size_t cap) {
  GOCATTN_CALL(get_per_layer_parameters, l, n, out);
}
static cattn_status_t gocattn_infer_global_hyperparameters(
    const cattn_per_layer_parameters_t* p, size_t n, cattn_global_hyperparameters_t* out,
    char* msg, size_t cap) {
  GOCATTN_CALL(infer_global_hyperparameters, p, n, out);
}
static cattn_status_t gocattn_step_plan_create(const cattn_step_plan_desc_t* d,
                                               cattn_step_plan_t** out, char* msg, size_t cap) {
  GOCATTN_CALL(step_plan_create, d, out);
}
static cattn_status_t gocattn_step_plan_get_shape(const cattn_step_plan_t* p,
                                                  cattn_step_plan_shape_t* s, char* msg,
                                                  size_t cap) {
  GOCATTN_CALL(step_plan_get_shape, p, s);
}
static cattn_status_t gocattn_step_plan_workspace_size(const cattn_step_plan_t* p, size_t* b,
                                                       char* msg, size_t cap) {
  GOCATTN_CALL(step_plan_workspace_size, p, b);
}
static cattn_status_t gocattn_step_plan_run(const cattn_step_plan_t* p,
                                            const cattn_step_batch_t* b,
                                            const cattn_step_outputs_t* o, uintptr_t stream,
                                            char* msg, size_t cap) {
  GOCATTN_CALL(step_plan_run, p, b, o, (cattn_stream_t)stream);
}

static int64_t gocattn_first_dim(const DLTensor* t) { return t->shape[0]; }

// The header's defaults, for the test that holds DefaultStepPlanDesc to them.
static cattn_step_plan_desc_t gocattn_step_plan_desc_init(void) {
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  return d;
}

// The header's product bits and count indices, for the test that holds the Go constants to
// them: products[0..12] are the bits in declaration order, products[13]
// CATTN_STEP_ALL_PRODUCTS (1.1's seven), products[14] CATTN_STEP_INPUT_PRODUCTS, products[15..20]
// the drafter bits in declaration order, products[21] CATTN_STEP_DRAFT_PRODUCTS; counts[0..15] the
// CATTN_STEP_COUNT_* indices in order, counts[16] CATTN_STEP_NUM_COUNTS, counts[17]
// CATTN_STEP_NUM_COUNTS_1_1, counts[18] CATTN_MAX_KV_GROUPS; checks[0..5] the
// CATTN_STEP_CHECK_* codes in order, checks[6..9] CATTN_SLOT_MAPPING_MRV2, _V1,
// CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT and _NONE.
static void gocattn_step_constants(uint32_t* products, int32_t* counts, int32_t* checks) {
  const uint32_t p[22] = {CATTN_STEP_DCP_LOCAL_SEQ_LENS, CATTN_STEP_PCP_QUERY_RESTORE_IDX,
                          CATTN_STEP_MAMBA_BLOCK_TABLE, CATTN_STEP_CAUSAL_CONV1D_METADATA,
                          CATTN_STEP_LOCAL_ATTENTION, CATTN_STEP_FAST_PREFILL,
                          CATTN_STEP_EXTEND_QUERIES, CATTN_STEP_INPUTS, CATTN_STEP_BLOCK_TABLES,
                          CATTN_STEP_SLOT_MAPPINGS, CATTN_STEP_LOGITS_INDICES,
                          CATTN_STEP_TOKEN_TO_REQ, CATTN_STEP_SPLIT, CATTN_STEP_ALL_PRODUCTS,
                          CATTN_STEP_INPUT_PRODUCTS, CATTN_STEP_DRAFT_NEXT_TOKEN,
                          CATTN_STEP_DRAFT_PREPARE_INPUTS, CATTN_STEP_DRAFT_EXPAND,
                          CATTN_STEP_DRAFT_SLOT_MAPPING, CATTN_STEP_DRAFT_STEP,
                          CATTN_STEP_BATCH_CHANGE, CATTN_STEP_DRAFT_PRODUCTS};
  const int32_t c[19] = {CATTN_STEP_COUNT_TOKENS, CATTN_STEP_COUNT_RESTORE_SIZE,
                         CATTN_STEP_COUNT_CONV1D_PROGRAMS, CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES,
                         CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN, CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN,
                         CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN, CATTN_STEP_COUNT_DECODE_TOKENS,
                         CATTN_STEP_COUNT_NUM_REQS, CATTN_STEP_COUNT_NUM_LOGITS,
                         CATTN_STEP_COUNT_MAX_QUERY_LEN, CATTN_STEP_COUNT_MAX_SEQ_LEN,
                         CATTN_STEP_COUNT_SPLIT_DECODES, CATTN_STEP_COUNT_SPLIT_PREFILLS,
                         CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS,
                         CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS, CATTN_STEP_NUM_COUNTS,
                         CATTN_STEP_NUM_COUNTS_1_1, CATTN_MAX_KV_GROUPS};
  const int32_t k[10] = {CATTN_STEP_CHECK_OK, CATTN_STEP_CHECK_NUM_REQS,
                         CATTN_STEP_CHECK_QUERY_START_LOC, CATTN_STEP_CHECK_SEQ_LENS,
                         CATTN_STEP_CHECK_BLOCK_TABLE, CATTN_STEP_CHECK_SLOT_MAPPING,
                         CATTN_SLOT_MAPPING_MRV2, CATTN_SLOT_MAPPING_V1,
                         CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, CATTN_SLOT_MODE_NONE};
  memcpy(products, p, sizeof p);
  memcpy(counts, c, sizeof c);
  memcpy(checks, k, sizeof k);
}

// The header's initialisers of the 1.2 argument structs, written over a struct the Go side
// allocated: the idiomatic layer leaves a field it is given no value for at the header's
// default instead of stating the default again.
static void gocattn_compute_slot_mappings_args_init(cattn_compute_slot_mappings_args_t* a) {
  const cattn_compute_slot_mappings_args_t init = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  *a = init;
}
static void gocattn_combine_sampled_and_draft_tokens_args_init(
    cattn_combine_sampled_and_draft_tokens_args_t* a) {
  const cattn_combine_sampled_and_draft_tokens_args_t init =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  *a = init;
}
static void gocattn_prepare_pos_seq_lens_args_init(cattn_prepare_pos_seq_lens_args_t* a) {
  const cattn_prepare_pos_seq_lens_args_t init = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  *a = init;
}
static void gocattn_gather_block_tables_args_init(cattn_gather_block_tables_args_t* a) {
  const cattn_gather_block_tables_args_t init = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  *a = init;
}
static void gocattn_step_batch_check_args_init(cattn_step_batch_check_args_t* a) {
  const cattn_step_batch_check_args_t init = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  *a = init;
}
static void gocattn_eagle_step_update_slot_mapping_and_metadata_args_init(
    cattn_eagle_step_update_slot_mapping_and_metadata_args_t* a) {
  const cattn_eagle_step_update_slot_mapping_and_metadata_args_t init =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  *a = init;
}
static void gocattn_eagle_prepare_inputs_padded_args_init(
    cattn_eagle_prepare_inputs_padded_args_t* a) {
  const cattn_eagle_prepare_inputs_padded_args_t init =
      CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  *a = init;
}
static void gocattn_eagle_prepare_next_token_padded_args_init(
    cattn_eagle_prepare_next_token_padded_args_t* a) {
  const cattn_eagle_prepare_next_token_padded_args_t init =
      CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  *a = init;
}
static void gocattn_compute_new_slot_mapping_args_init(
    cattn_compute_new_slot_mapping_args_t* a) {
  const cattn_compute_new_slot_mapping_args_t init =
      CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  *a = init;
}
static void gocattn_copy_and_expand_eagle_inputs_args_init(
    cattn_copy_and_expand_eagle_inputs_args_t* a) {
  const cattn_copy_and_expand_eagle_inputs_args_t init =
      CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  *a = init;
}
static void gocattn_update_num_computed_tokens_for_batch_change_args_init(
    cattn_update_num_computed_tokens_for_batch_change_args_t* a) {
  const cattn_update_num_computed_tokens_for_batch_change_args_t init =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  *a = init;
}
static void gocattn_step_inputs_size_args_init(cattn_step_inputs_size_args_t* a) {
  const cattn_step_inputs_size_args_t init = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  *a = init;
}
static void gocattn_step_plan_desc_init_into(cattn_step_plan_desc_t* d) {
  const cattn_step_plan_desc_t init = CATTN_STEP_PLAN_DESC_INIT;
  *d = init;
}
static void gocattn_step_batch_init(cattn_step_batch_t* b) {
  const cattn_step_batch_t init = CATTN_STEP_BATCH_INIT;
  *b = init;
}
static void gocattn_step_outputs_init(cattn_step_outputs_t* o) {
  const cattn_step_outputs_t init = CATTN_STEP_OUTPUTS_INIT;
  *o = init;
}
*/
import "C"
import "unsafe"

type (
	cContext  = *C.cattn_context_t
	cPlan     = *C.cattn_local_attention_plan_t
	cComm     = *C.cattn_comm_t
	cStepPlan = *C.cattn_step_plan_t
)

// The header the package was compiled against.
const (
	headerVersionNumber = C.CATTN_VERSION_NUMBER
	headerVersionString = C.CATTN_VERSION_STRING
)

// dlopenBuild is true when the package was built with -tags cattn_dlopen.
const dlopenBuild = C.GOCATTN_IS_DLOPEN != 0

// cArgs returns a zeroed T in C memory from m with its leading struct_size set to the size of
// T, which cgo lays out as the header does; every versioned struct of cattn.h starts with that
// field.
func cArgs[T any](m cAllocator) *T {
	size := unsafe.Sizeof(*new(T))
	p := m.alloc(size)
	*(*C.size_t)(p) = C.size_t(size)
	return (*T)(p)
}

// setAddr stores an address Go does not manage (a stream, device memory) into a C pointer
// field: as an integer, never converted to a Go pointer.
func setAddr[P any](field *P, addr uintptr) {
	*(*uintptr)(unsafe.Pointer(field)) = addr
}

func b2i(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

func cVersion() uint32 { return uint32(C.gocattn_version()) }

func cVersionString() string { return C.GoString(C.gocattn_version_string()) }

func cStatusString(s int32) string {
	return C.GoString(C.gocattn_status_string(C.int32_t(s)))
}

func cContextDestroy(c cContext) { C.gocattn_context_destroy(c) }

func cKVCacheLayoutName(l int32) string {
	p := C.gocattn_kv_cache_layout_name(C.int32_t(l))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func cCommDestroy(c cComm) { C.gocattn_comm_destroy(c) }

func firstDim(t cTensor) int64 { return int64(C.gocattn_first_dim(t)) }

func cLocalAttentionPlanDestroy(p cPlan) { C.gocattn_local_attention_plan_destroy(p) }

func cStepPlanDestroy(p cStepPlan) { C.gocattn_step_plan_destroy(p) }

// cStepPlanDescInit returns CATTN_STEP_PLAN_DESC_INIT.
func cStepPlanDescInit() C.cattn_step_plan_desc_t { return C.gocattn_step_plan_desc_init() }

// cStepConstants returns the header's CATTN_STEP_* product bits (the thirteen, then
// CATTN_STEP_ALL_PRODUCTS and CATTN_STEP_INPUT_PRODUCTS, then the six drafter bits and
// CATTN_STEP_DRAFT_PRODUCTS), CATTN_STEP_COUNT_* indices (the
// sixteen, then CATTN_STEP_NUM_COUNTS, CATTN_STEP_NUM_COUNTS_1_1 and CATTN_MAX_KV_GROUPS) and
// CATTN_STEP_CHECK_* codes (then the slot-mapping contracts and slot modes), for the test
// that holds the Go constants to them.
func cStepConstants() (products [22]uint32, counts [19]int32, checks [10]int32) {
	var p [22]C.uint32_t
	var c [19]C.int32_t
	var k [10]C.int32_t
	C.gocattn_step_constants(&p[0], &c[0], &k[0])
	for i := range p {
		products[i] = uint32(p[i])
	}
	for i := range c {
		counts[i] = int32(c[i])
	}
	for i := range k {
		checks[i] = int32(k[i])
	}
	return products, counts, checks
}

// The header's initialisers (CATTN_<X>_INIT), written over a struct cArgs allocated; its
// struct_size is the initialiser's, the same size.

func cComputeSlotMappingsArgsInit(a *C.cattn_compute_slot_mappings_args_t) {
	C.gocattn_compute_slot_mappings_args_init(a)
}

func cCombineSampledAndDraftTokensArgsInit(a *C.cattn_combine_sampled_and_draft_tokens_args_t) {
	C.gocattn_combine_sampled_and_draft_tokens_args_init(a)
}

func cPreparePosSeqLensArgsInit(a *C.cattn_prepare_pos_seq_lens_args_t) {
	C.gocattn_prepare_pos_seq_lens_args_init(a)
}

func cGatherBlockTablesArgsInit(a *C.cattn_gather_block_tables_args_t) {
	C.gocattn_gather_block_tables_args_init(a)
}

func cStepBatchCheckArgsInit(a *C.cattn_step_batch_check_args_t) {
	C.gocattn_step_batch_check_args_init(a)
}

func cEagleStepUpdateSlotMappingAndMetadataArgsInit(a *C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t) {
	C.gocattn_eagle_step_update_slot_mapping_and_metadata_args_init(a)
}

func cEaglePrepareInputsPaddedArgsInit(a *C.cattn_eagle_prepare_inputs_padded_args_t) {
	C.gocattn_eagle_prepare_inputs_padded_args_init(a)
}

func cEaglePrepareNextTokenPaddedArgsInit(a *C.cattn_eagle_prepare_next_token_padded_args_t) {
	C.gocattn_eagle_prepare_next_token_padded_args_init(a)
}

func cComputeNewSlotMappingArgsInit(a *C.cattn_compute_new_slot_mapping_args_t) {
	C.gocattn_compute_new_slot_mapping_args_init(a)
}

func cCopyAndExpandEagleInputsArgsInit(a *C.cattn_copy_and_expand_eagle_inputs_args_t) {
	C.gocattn_copy_and_expand_eagle_inputs_args_init(a)
}

func cUpdateNumComputedTokensForBatchChangeArgsInit(a *C.cattn_update_num_computed_tokens_for_batch_change_args_t) {
	C.gocattn_update_num_computed_tokens_for_batch_change_args_init(a)
}

func cStepInputsSizeArgsInit(a *C.cattn_step_inputs_size_args_t) {
	C.gocattn_step_inputs_size_args_init(a)
}

func cStepPlanDescInitInto(d *C.cattn_step_plan_desc_t) { C.gocattn_step_plan_desc_init_into(d) }

func cStepBatchInit(b *C.cattn_step_batch_t) { C.gocattn_step_batch_init(b) }

func cStepOutputsInit(o *C.cattn_step_outputs_t) { C.gocattn_step_outputs_init(o) }

// cArgsSizeMismatches reports, for every struct cArgs allocates, the names whose Go size (what
// cArgs writes as struct_size) differs from the C sizeof; the test expects none.
func cArgsSizeMismatches() []string {
	var bad []string
	check := func(name string, goSize uintptr, cSize C.size_t) {
		if goSize != uintptr(cSize) {
			bad = append(bad, name)
		}
	}
	check("cattn_common_attn_metadata_t", unsafe.Sizeof(C.cattn_common_attn_metadata_t{}), C.sizeof_cattn_common_attn_metadata_t)
	check("cattn_combine_sampled_and_draft_tokens_args_t", unsafe.Sizeof(C.cattn_combine_sampled_and_draft_tokens_args_t{}), C.sizeof_cattn_combine_sampled_and_draft_tokens_args_t)
	check("cattn_compute_slot_mappings_args_t", unsafe.Sizeof(C.cattn_compute_slot_mappings_args_t{}), C.sizeof_cattn_compute_slot_mappings_args_t)
	check("cattn_gather_block_tables_args_t", unsafe.Sizeof(C.cattn_gather_block_tables_args_t{}), C.sizeof_cattn_gather_block_tables_args_t)
	check("cattn_prepare_pos_seq_lens_args_t", unsafe.Sizeof(C.cattn_prepare_pos_seq_lens_args_t{}), C.sizeof_cattn_prepare_pos_seq_lens_args_t)
	check("cattn_step_batch_check_args_t", unsafe.Sizeof(C.cattn_step_batch_check_args_t{}), C.sizeof_cattn_step_batch_check_args_t)
	check("cattn_step_inputs_size_args_t", unsafe.Sizeof(C.cattn_step_inputs_size_args_t{}), C.sizeof_cattn_step_inputs_size_args_t)
	check("cattn_eagle_step_update_slot_mapping_and_metadata_args_t", unsafe.Sizeof(C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t{}), C.sizeof_cattn_eagle_step_update_slot_mapping_and_metadata_args_t)
	check("cattn_eagle_prepare_inputs_padded_args_t", unsafe.Sizeof(C.cattn_eagle_prepare_inputs_padded_args_t{}), C.sizeof_cattn_eagle_prepare_inputs_padded_args_t)
	check("cattn_eagle_prepare_next_token_padded_args_t", unsafe.Sizeof(C.cattn_eagle_prepare_next_token_padded_args_t{}), C.sizeof_cattn_eagle_prepare_next_token_padded_args_t)
	check("cattn_compute_new_slot_mapping_args_t", unsafe.Sizeof(C.cattn_compute_new_slot_mapping_args_t{}), C.sizeof_cattn_compute_new_slot_mapping_args_t)
	check("cattn_copy_and_expand_eagle_inputs_args_t", unsafe.Sizeof(C.cattn_copy_and_expand_eagle_inputs_args_t{}), C.sizeof_cattn_copy_and_expand_eagle_inputs_args_t)
	check("cattn_update_num_computed_tokens_for_batch_change_args_t", unsafe.Sizeof(C.cattn_update_num_computed_tokens_for_batch_change_args_t{}), C.sizeof_cattn_update_num_computed_tokens_for_batch_change_args_t)
	check("cattn_causal_conv1d_metadata_args_t", unsafe.Sizeof(C.cattn_causal_conv1d_metadata_args_t{}), C.sizeof_cattn_causal_conv1d_metadata_args_t)
	check("cattn_causal_conv1d_metadata_capturable_args_t", unsafe.Sizeof(C.cattn_causal_conv1d_metadata_capturable_args_t{}), C.sizeof_cattn_causal_conv1d_metadata_capturable_args_t)
	check("cattn_dcp_local_seq_lens_args_t", unsafe.Sizeof(C.cattn_dcp_local_seq_lens_args_t{}), C.sizeof_cattn_dcp_local_seq_lens_args_t)
	check("cattn_extend_all_queries_by_n_args_t", unsafe.Sizeof(C.cattn_extend_all_queries_by_n_args_t{}), C.sizeof_cattn_extend_all_queries_by_n_args_t)
	check("cattn_fast_prefill_metadata_args_t", unsafe.Sizeof(C.cattn_fast_prefill_metadata_args_t{}), C.sizeof_cattn_fast_prefill_metadata_args_t)
	check("cattn_fill_mm_prefix_query_ranges_args_t", unsafe.Sizeof(C.cattn_fill_mm_prefix_query_ranges_args_t{}), C.sizeof_cattn_fill_mm_prefix_query_ranges_args_t)
	check("cattn_fused_pcp_qkv_select_args_t", unsafe.Sizeof(C.cattn_fused_pcp_qkv_select_args_t{}), C.sizeof_cattn_fused_pcp_qkv_select_args_t)
	check("cattn_get_supported_kv_cache_layouts_args_t", unsafe.Sizeof(C.cattn_get_supported_kv_cache_layouts_args_t{}), C.sizeof_cattn_get_supported_kv_cache_layouts_args_t)
	check("cattn_global_hyperparameters_t", unsafe.Sizeof(C.cattn_global_hyperparameters_t{}), C.sizeof_cattn_global_hyperparameters_t)
	check("cattn_kv_cache_layout_args_t", unsafe.Sizeof(C.cattn_kv_cache_layout_args_t{}), C.sizeof_cattn_kv_cache_layout_args_t)
	check("cattn_kv_cache_layout_properties_t", unsafe.Sizeof(C.cattn_kv_cache_layout_properties_t{}), C.sizeof_cattn_kv_cache_layout_properties_t)
	check("cattn_kv_cache_layout_strides_args_t", unsafe.Sizeof(C.cattn_kv_cache_layout_strides_args_t{}), C.sizeof_cattn_kv_cache_layout_strides_args_t)
	check("cattn_local_attention_args_t", unsafe.Sizeof(C.cattn_local_attention_args_t{}), C.sizeof_cattn_local_attention_args_t)
	check("cattn_local_attention_capturable_args_t", unsafe.Sizeof(C.cattn_local_attention_capturable_args_t{}), C.sizeof_cattn_local_attention_capturable_args_t)
	check("cattn_local_attention_fill_args_t", unsafe.Sizeof(C.cattn_local_attention_fill_args_t{}), C.sizeof_cattn_local_attention_fill_args_t)
	check("cattn_log2_lse_to_ln_args_t", unsafe.Sizeof(C.cattn_log2_lse_to_ln_args_t{}), C.sizeof_cattn_log2_lse_to_ln_args_t)
	check("cattn_mamba_block_table_args_t", unsafe.Sizeof(C.cattn_mamba_block_table_args_t{}), C.sizeof_cattn_mamba_block_table_args_t)
	check("cattn_max_local_attention_virtual_batches_args_t", unsafe.Sizeof(C.cattn_max_local_attention_virtual_batches_args_t{}), C.sizeof_cattn_max_local_attention_virtual_batches_args_t)
	check("cattn_mm_prefix_range_tensor_args_t", unsafe.Sizeof(C.cattn_mm_prefix_range_tensor_args_t{}), C.sizeof_cattn_mm_prefix_range_tensor_args_t)
	check("cattn_naive_query_lens_args_t", unsafe.Sizeof(C.cattn_naive_query_lens_args_t{}), C.sizeof_cattn_naive_query_lens_args_t)
	check("cattn_pcp_kv_allgather_and_restore_args_t", unsafe.Sizeof(C.cattn_pcp_kv_allgather_and_restore_args_t{}), C.sizeof_cattn_pcp_kv_allgather_and_restore_args_t)
	check("cattn_pcp_query_restore_idx_args_t", unsafe.Sizeof(C.cattn_pcp_query_restore_idx_args_t{}), C.sizeof_cattn_pcp_query_restore_idx_args_t)
	check("cattn_reorder_batch_args_t", unsafe.Sizeof(C.cattn_reorder_batch_args_t{}), C.sizeof_cattn_reorder_batch_args_t)
	check("cattn_resolve_kv_cache_layout_args_t", unsafe.Sizeof(C.cattn_resolve_kv_cache_layout_args_t{}), C.sizeof_cattn_resolve_kv_cache_layout_args_t)
	check("cattn_split_decodes_and_prefills_args_t", unsafe.Sizeof(C.cattn_split_decodes_and_prefills_args_t{}), C.sizeof_cattn_split_decodes_and_prefills_args_t)
	check("cattn_split_decodes_and_prefills_capturable_args_t", unsafe.Sizeof(C.cattn_split_decodes_and_prefills_capturable_args_t{}), C.sizeof_cattn_split_decodes_and_prefills_capturable_args_t)
	check("cattn_split_decodes_prefills_and_extends_args_t", unsafe.Sizeof(C.cattn_split_decodes_prefills_and_extends_args_t{}), C.sizeof_cattn_split_decodes_prefills_and_extends_args_t)
	check("cattn_split_decodes_prefills_and_extends_capturable_args_t", unsafe.Sizeof(C.cattn_split_decodes_prefills_and_extends_capturable_args_t{}), C.sizeof_cattn_split_decodes_prefills_and_extends_capturable_args_t)
	check("cattn_split_prefill_chunks_args_t", unsafe.Sizeof(C.cattn_split_prefill_chunks_args_t{}), C.sizeof_cattn_split_prefill_chunks_args_t)
	check("cattn_step_batch_t", unsafe.Sizeof(C.cattn_step_batch_t{}), C.sizeof_cattn_step_batch_t)
	check("cattn_step_outputs_t", unsafe.Sizeof(C.cattn_step_outputs_t{}), C.sizeof_cattn_step_outputs_t)
	check("cattn_step_plan_desc_t", unsafe.Sizeof(C.cattn_step_plan_desc_t{}), C.sizeof_cattn_step_plan_desc_t)
	check("cattn_step_plan_shape_t", unsafe.Sizeof(C.cattn_step_plan_shape_t{}), C.sizeof_cattn_step_plan_shape_t)
	check("cattn_token_to_req_indices_args_t", unsafe.Sizeof(C.cattn_token_to_req_indices_args_t{}), C.sizeof_cattn_token_to_req_indices_args_t)
	check("cattn_unpadded_args_t", unsafe.Sizeof(C.cattn_unpadded_args_t{}), C.sizeof_cattn_unpadded_args_t)
	check("cattn_unpadded_storage_t", unsafe.Sizeof(C.cattn_unpadded_storage_t{}), C.sizeof_cattn_unpadded_storage_t)
	return bad
}

// --- One Go function per shim: C-shaped values in, the C status out (on failure, the
// message in msg, a buffer of msgCap bytes) --------------------------------------------------

func cCommCreate(id *C.cattn_comm_unique_id_t, nranks C.int32_t, rank C.int32_t,
	device C.int32_t, out **C.cattn_comm_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_comm_create(id, nranks, rank, device, out, msg, msgCap)
}

func cCommCreateBorrowed(ncclComm C.uintptr_t, out **C.cattn_comm_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_comm_create_borrowed(ncclComm, out, msg, msgCap)
}

func cCommGetRank(c *C.cattn_comm_t, v *C.int32_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_comm_get_rank(c, v, msg, msgCap)
}

func cCommGetSize(c *C.cattn_comm_t, v *C.int32_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_comm_get_size(c, v, msg, msgCap)
}

func cCommGetUniqueID(id *C.cattn_comm_unique_id_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_comm_get_unique_id(id, msg, msgCap)
}

func cComputeCausalConv1dMetadata(a *C.cattn_causal_conv1d_metadata_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_causal_conv1d_metadata(a, msg, msgCap)
}

func cComputeCausalConv1dMetadataCapturable(a *C.cattn_causal_conv1d_metadata_capturable_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_causal_conv1d_metadata_capturable(a, msg, msgCap)
}

func cCombineSampledAndDraftTokens(a *C.cattn_combine_sampled_and_draft_tokens_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_combine_sampled_and_draft_tokens(a, msg, msgCap)
}

func cComputeSlotMappings(a *C.cattn_compute_slot_mappings_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_slot_mappings(a, msg, msgCap)
}

func cComputeCausalConv1dMetadataSize(qsl *C.DLTensor, blockM C.int64_t, tot *C.int64_t,
	capacity *C.int64_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_causal_conv1d_metadata_size(qsl, blockM, tot, capacity, msg, msgCap)
}

func cComputeMMPrefixRangeTensor(a *C.cattn_mm_prefix_range_tensor_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_mm_prefix_range_tensor(a, msg, msgCap)
}

func cComputeNumComputedTokens(a *C.cattn_compute_num_computed_tokens_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_num_computed_tokens(a, msg, msgCap)
}

func cContextCreate(out **C.cattn_context_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_context_create(out, msg, msgCap)
}

func cContextSetKVCacheLayoutOverride(ctx *C.cattn_context_t, l C.int32_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_context_set_kv_cache_layout_override(ctx, l, msg, msgCap)
}

func cContextSetKVCacheLayoutPreset(ctx *C.cattn_context_t, name *C.char,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_context_set_kv_cache_layout_preset(ctx, name, msg, msgCap)
}

func cCUDADeviceCount(n *C.int32_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_cuda_device_count(n, msg, msgCap)
}

func cExtendAllQueriesByN(a *C.cattn_extend_all_queries_by_n_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_extend_all_queries_by_n(a, msg, msgCap)
}

func cFillMMPrefixQueryRanges(a *C.cattn_fill_mm_prefix_query_ranges_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_fill_mm_prefix_query_ranges(a, msg, msgCap)
}

func cFusedPCPQKVSelectSize(n C.int64_t, w C.int64_t, r C.int64_t, qRows *C.int64_t,
	kvHeadRows *C.int64_t, kvTailRows *C.int64_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_fused_pcp_qkv_select_size(n, w, r, qRows, kvHeadRows, kvTailRows, msg, msgCap)
}

func cFusedPCPQKVSelect(a *C.cattn_fused_pcp_qkv_select_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_fused_pcp_qkv_select(a, msg, msgCap)
}

func cGatherBlockTables(a *C.cattn_gather_block_tables_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_gather_block_tables(a, msg, msgCap)
}

func cGetDCPLocalSeqLens(a *C.cattn_dcp_local_seq_lens_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_get_dcp_local_seq_lens(a, msg, msgCap)
}

func cGetFlashinferLayoutString(l C.int32_t, out **C.char, msg *C.char) C.cattn_status_t {
	return C.gocattn_get_flashinfer_layout_string(l, out, msg, msgCap)
}

func cGetKVCacheLayout(ctx *C.cattn_context_t, a *C.cattn_kv_cache_layout_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_get_kv_cache_layout(ctx, a, msg, msgCap)
}

func cGetPCPQueryRestoreIdx(a *C.cattn_pcp_query_restore_idx_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_get_pcp_query_restore_idx(a, msg, msgCap)
}

func cGetPCPQueryRestoreIdxSize(cu *C.DLTensor, size *C.int64_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_get_pcp_query_restore_idx_size(cu, size, msg, msgCap)
}

func cGetPerLayerParameters(l *C.cattn_attention_layer_desc_t, n C.size_t,
	out *C.cattn_per_layer_parameters_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_get_per_layer_parameters(l, n, out, msg, msgCap)
}

func cGetResolvedKVCacheLayout(ctx *C.cattn_context_t, out *C.int32_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_get_resolved_kv_cache_layout(ctx, out, msg, msgCap)
}

func cGetSupportedKVCacheLayouts(a *C.cattn_get_supported_kv_cache_layouts_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_get_supported_kv_cache_layouts(a, msg, msgCap)
}

func cInferGlobalHyperparameters(p *C.cattn_per_layer_parameters_t, n C.size_t,
	out *C.cattn_global_hyperparameters_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_infer_global_hyperparameters(p, n, out, msg, msgCap)
}

func cIsValidKVCacheLayout(v *C.char, valid *C.int32_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_is_valid_kv_cache_layout(v, valid, msg, msgCap)
}

func cKVCacheLayoutFromName(name *C.char, out *C.int32_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_kv_cache_layout_from_name(name, out, msg, msgCap)
}

func cKVCacheLayoutGetProperties(l C.int32_t, p *C.cattn_kv_cache_layout_properties_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_kv_cache_layout_get_properties(l, p, msg, msgCap)
}

func cKVCacheLayoutStrides(a *C.cattn_kv_cache_layout_strides_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_kv_cache_layout_strides(a, msg, msgCap)
}

func cLoad(path *C.char, msg *C.char) C.cattn_status_t {
	return C.gocattn_load(path, msg, msgCap)
}

func cLocalAttentionPlanFill(p *C.cattn_local_attention_plan_t,
	a *C.cattn_local_attention_fill_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_local_attention_plan_fill(p, a, msg, msgCap)
}

func cLocalAttentionPlanGetShape(p *C.cattn_local_attention_plan_t, vb *C.int64_t,
	pages *C.int64_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_local_attention_plan_get_shape(p, vb, pages, msg, msgCap)
}

func cLocalAttentionPlanMakeBlockTable(p *C.cattn_local_attention_plan_t, table *C.DLTensor,
	out *C.DLTensor, stream C.uintptr_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_local_attention_plan_make_block_table(p, table, out, stream, msg, msgCap)
}

func cLog2LSEToLn(a *C.cattn_log2_lse_to_ln_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_log2_lse_to_ln(a, msg, msgCap)
}

func cMakeKVSharingFastPrefillCommonAttnMetadata(a *C.cattn_fast_prefill_metadata_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_make_kv_sharing_fast_prefill_common_attn_metadata(a, msg, msgCap)
}

func cMakeLocalAttentionVirtualBatches(a *C.cattn_local_attention_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_make_local_attention_virtual_batches(a, msg, msgCap)
}

func cMakeLocalAttentionVirtualBatchesCapturable(a *C.cattn_local_attention_capturable_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_make_local_attention_virtual_batches_capturable(a, msg, msgCap)
}

func cMakeLocalAttentionVirtualBatchesSize(a *C.cattn_local_attention_args_t, vb *C.int64_t,
	pages *C.int64_t, bytes *C.size_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_make_local_attention_virtual_batches_size(a, vb, pages, bytes, msg, msgCap)
}

func cMambaGetBlockTableTensor(a *C.cattn_mamba_block_table_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_mamba_get_block_table_tensor(a, msg, msgCap)
}

func cMaxLocalAttentionVirtualBatches(a *C.cattn_max_local_attention_virtual_batches_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_max_local_attention_virtual_batches(a, msg, msgCap)
}

func cNaiveQueryLens(a *C.cattn_naive_query_lens_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_naive_query_lens(a, msg, msgCap)
}

func cPCPKVAllgatherAndRestore(a *C.cattn_pcp_kv_allgather_and_restore_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_pcp_kv_allgather_and_restore(a, msg, msgCap)
}

func cPCPKVAllgatherAndRestoreWorkspaceSize(a *C.cattn_pcp_kv_allgather_and_restore_args_t,
	size *C.size_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_pcp_kv_allgather_and_restore_workspace_size(a, size, msg, msgCap)
}

func cPreparePosSeqLens(a *C.cattn_prepare_pos_seq_lens_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_prepare_pos_seq_lens(a, msg, msgCap)
}

func cRecordKVCacheLayout(ctx *C.cattn_context_t, name *C.char, msg *C.char) C.cattn_status_t {
	return C.gocattn_record_kv_cache_layout(ctx, name, msg, msgCap)
}

func cReorderBatchToSplitDecodesAndPrefills(a *C.cattn_reorder_batch_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_reorder_batch_to_split_decodes_and_prefills(a, msg, msgCap)
}

func cResolveKVCacheLayout(ctx *C.cattn_context_t, a *C.cattn_resolve_kv_cache_layout_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_resolve_kv_cache_layout(ctx, a, msg, msgCap)
}

func cSplitDecodesAndPrefills(a *C.cattn_split_decodes_and_prefills_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_split_decodes_and_prefills(a, msg, msgCap)
}

func cSplitDecodesAndPrefillsCapturable(a *C.cattn_split_decodes_and_prefills_capturable_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_split_decodes_and_prefills_capturable(a, msg, msgCap)
}

func cSplitDecodesPrefillsAndExtends(a *C.cattn_split_decodes_prefills_and_extends_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_split_decodes_prefills_and_extends(a, msg, msgCap)
}

func cSplitDecodesPrefillsAndExtendsCapturable(
	a *C.cattn_split_decodes_prefills_and_extends_capturable_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_split_decodes_prefills_and_extends_capturable(a, msg, msgCap)
}

func cSplitPrefillChunks(a *C.cattn_split_prefill_chunks_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_split_prefill_chunks(a, msg, msgCap)
}

func cStepBatchCheck(a *C.cattn_step_batch_check_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_step_batch_check(a, msg, msgCap)
}

func cStepInputsSize(a *C.cattn_step_inputs_size_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_step_inputs_size(a, msg, msgCap)
}

func cStepPlanCreate(d *C.cattn_step_plan_desc_t, out **C.cattn_step_plan_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_step_plan_create(d, out, msg, msgCap)
}

func cStepPlanGetShape(p *C.cattn_step_plan_t, s *C.cattn_step_plan_shape_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_step_plan_get_shape(p, s, msg, msgCap)
}

func cStepPlanRun(p *C.cattn_step_plan_t, b *C.cattn_step_batch_t, o *C.cattn_step_outputs_t,
	stream C.uintptr_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_step_plan_run(p, b, o, stream, msg, msgCap)
}

func cStepPlanWorkspaceSize(p *C.cattn_step_plan_t, b *C.size_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_step_plan_workspace_size(p, b, msg, msgCap)
}

func cTokenToReqIndices(a *C.cattn_token_to_req_indices_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_token_to_req_indices(a, msg, msgCap)
}

func cUnpadded(a *C.cattn_unpadded_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_unpadded(a, msg, msgCap)
}

// Speculative decoding (1.2).

func cEagleStepUpdateSlotMappingAndMetadata(
	a *C.cattn_eagle_step_update_slot_mapping_and_metadata_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_eagle_step_update_slot_mapping_and_metadata(a, msg, msgCap)
}

func cEaglePrepareInputsPadded(a *C.cattn_eagle_prepare_inputs_padded_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_eagle_prepare_inputs_padded(a, msg, msgCap)
}

func cEaglePrepareNextTokenPadded(a *C.cattn_eagle_prepare_next_token_padded_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_eagle_prepare_next_token_padded(a, msg, msgCap)
}

func cComputeNewSlotMapping(a *C.cattn_compute_new_slot_mapping_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_compute_new_slot_mapping(a, msg, msgCap)
}

func cCopyAndExpandEagleInputs(a *C.cattn_copy_and_expand_eagle_inputs_args_t,
	msg *C.char) C.cattn_status_t {
	return C.gocattn_copy_and_expand_eagle_inputs(a, msg, msgCap)
}

func cUpdateNumComputedTokensForBatchChange(
	a *C.cattn_update_num_computed_tokens_for_batch_change_args_t, msg *C.char) C.cattn_status_t {
	return C.gocattn_update_num_computed_tokens_for_batch_change(a, msg, msgCap)
}
