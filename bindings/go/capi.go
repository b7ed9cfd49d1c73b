// SPDX-License-Identifier: Apache-2.0

package cattn

// The cgo layer: every call into libcattn is in this file. Each Go function here fills one C
// argument struct (in the frame's C memory) and makes exactly one cgo call, to a shim below
// that calls libcattn and, on failure, copies cattn_last_error_message() into the frame's
// buffer before returning. The message is thread-local in C, and a goroutine may continue on
// another OS thread after any cgo call, so it must be read inside the same call.
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
  X(log2_lse_to_ln, cattn_log2_lse_to_ln_args_t)

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
static cattn_status_t gocattn_comm_get_unique_id(cattn_comm_unique_id_t* id, char* msg,
                                                 size_t cap) {
  GOCATTN_CALL(comm_get_unique_id, id);
}
static cattn_status_t gocattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                          int32_t rank, int32_t device, cattn_comm_t** out,
                                          char* msg, size_t cap) {
  GOCATTN_CALL(comm_create, id, nranks, rank, device, out);
}
static cattn_status_t gocattn_comm_create_borrowed(uintptr_t nccl_comm, cattn_comm_t** out,
                                                   char* msg, size_t cap) {
  GOCATTN_CALL(comm_create_borrowed, (void*)nccl_comm, out);
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
                                                                  int64_t block_m, int64_t* tot,
                                                                  int64_t* capacity, char* msg,
                                                                  size_t cap) {
  GOCATTN_CALL(compute_causal_conv1d_metadata_size, qsl, block_m, tot, capacity);
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
// them: products[0..6] are the bits in declaration order, products[7] CATTN_STEP_ALL_PRODUCTS;
// counts[0..7] the CATTN_STEP_COUNT_* indices in order, counts[8] CATTN_STEP_NUM_COUNTS.
static void gocattn_step_constants(uint32_t* products, int32_t* counts) {
  const uint32_t p[8] = {CATTN_STEP_DCP_LOCAL_SEQ_LENS, CATTN_STEP_PCP_QUERY_RESTORE_IDX,
                         CATTN_STEP_MAMBA_BLOCK_TABLE, CATTN_STEP_CAUSAL_CONV1D_METADATA,
                         CATTN_STEP_LOCAL_ATTENTION, CATTN_STEP_FAST_PREFILL,
                         CATTN_STEP_EXTEND_QUERIES, CATTN_STEP_ALL_PRODUCTS};
  const int32_t c[9] = {CATTN_STEP_COUNT_TOKENS, CATTN_STEP_COUNT_RESTORE_SIZE,
                        CATTN_STEP_COUNT_CONV1D_PROGRAMS, CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES,
                        CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN, CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN,
                        CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN, CATTN_STEP_COUNT_DECODE_TOKENS,
                        CATTN_STEP_NUM_COUNTS};
  memcpy(products, p, sizeof p);
  memcpy(counts, c, sizeof c);
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

// cLoad opens libcattn at path in a cattn_dlopen build (see load.go); linked, it does nothing.
func cLoad(path string) error {
	f := newFrameNoLoad("cattn_get_api", "Load", "path", "path")
	defer f.free()
	return f.status(C.gocattn_load(f.cstring(path), f.msg, msgCap))
}

// cArgs returns a zeroed T in the frame's C memory with its leading struct_size set to the
// size of T, which cgo lays out as the header does; every versioned struct of cattn.h starts
// with that field.
func cArgs[T any](f *frame) *T {
	size := unsafe.Sizeof(*new(T))
	p := f.alloc(size)
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

// --- Version, status, devices -----------------------------------------------------------------

func cVersion() uint32 { return uint32(C.gocattn_version()) }

func cVersionString() string { return C.GoString(C.gocattn_version_string()) }

func cStatusString(s Status) string {
	return C.GoString(C.gocattn_status_string(C.int32_t(s)))
}

func (f *frame) cudaDeviceCount() (int32, error) {
	var n C.int32_t
	err := f.status(C.gocattn_cuda_device_count(&n, f.msg, msgCap))
	return int32(n), err
}

// --- Context and KV-cache layout (get_kv_cache_layout) --------------------------------------------------

func (f *frame) contextCreate() (cContext, error) {
	out := (*cContext)(f.alloc(unsafe.Sizeof(cContext(nil))))
	if err := f.status(C.gocattn_context_create(out, f.msg, msgCap)); err != nil {
		return nil, err
	}
	return *out, nil
}

func cContextDestroy(c cContext) { C.gocattn_context_destroy(c) }

func (f *frame) isValidKVCacheLayout(value string) (bool, error) {
	var valid C.int32_t
	err := f.status(C.gocattn_is_valid_kv_cache_layout(f.cstring(value), &valid, f.msg, msgCap))
	return valid != 0, err
}

func cKVCacheLayoutName(l KVCacheLayout) string {
	p := C.gocattn_kv_cache_layout_name(C.int32_t(l))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func (f *frame) setKVCacheLayoutOverride(ctx cContext, l KVCacheLayout) error {
	return f.status(C.gocattn_context_set_kv_cache_layout_override(ctx, C.int32_t(l), f.msg, msgCap))
}

func (f *frame) getKVCacheLayout(ctx cContext, mask uint32, readEnv bool, env *string,
	connector KVCacheLayout) (KVCacheLayout, error) {
	a := cArgs[C.cattn_kv_cache_layout_args_t](f)
	a.supported_mask = C.uint32_t(mask)
	a.read_environment = b2i(readEnv)
	if env != nil {
		a.env_value = f.cstring(*env)
	}
	a.connector_layout = C.cattn_kv_cache_layout_t(connector)
	if err := f.status(C.gocattn_get_kv_cache_layout(ctx, a, f.msg, msgCap)); err != nil {
		return KVCacheLayoutUnset, err
	}
	return KVCacheLayout(a.layout), nil
}

// --- The six KV-cache layouts (1.1: kv_cache_layout_*, get_supported_kv_cache_layouts,
// resolve_kv_cache_layout) -----------------------------------------------------------------------

func (f *frame) kvCacheLayoutFromName(name string) (KVCacheLayout, error) {
	var l C.int32_t
	err := f.status(C.gocattn_kv_cache_layout_from_name(f.cstring(name), &l, f.msg, msgCap))
	return KVCacheLayout(l), err
}

func (f *frame) kvCacheLayoutProperties(l KVCacheLayout) (KVCacheLayoutProperties, error) {
	p := cArgs[C.cattn_kv_cache_layout_properties_t](f)
	if err := f.status(C.gocattn_kv_cache_layout_get_properties(C.int32_t(l), p, f.msg, msgCap)); err != nil {
		return KVCacheLayoutProperties{}, err
	}
	var out KVCacheLayoutProperties
	for i := range out.StrideOrder {
		out.StrideOrder[i] = int32(p.stride_order[i])
	}
	for i := range out.LayerViewOrder {
		out.LayerViewOrder[i] = int32(p.layer_view_order[i])
	}
	out.IsLayerCompact = p.is_layer_compact != 0
	out.IsBlockContiguous = p.is_block_contiguous != 0
	out.IsBlockCompact = p.is_block_compact != 0
	out.IsBlockOutermost = p.is_block_outermost != 0
	out.Order = int(p.order)
	out.Name = C.GoString(p.name)
	if p.flashinfer_layout != nil {
		out.FlashInferLayout = C.GoString(p.flashinfer_layout)
	}
	return out, nil
}

func (f *frame) flashInferLayoutString(l KVCacheLayout) (string, error) {
	out := (**C.char)(f.alloc(unsafe.Sizeof(uintptr(0))))
	if err := f.status(C.gocattn_get_flashinfer_layout_string(C.int32_t(l), out, f.msg, msgCap)); err != nil {
		return "", err
	}
	return C.GoString(*out), nil
}

func (f *frame) kvCacheLayoutStrides(l KVCacheLayout, sizes [5]int64) (KVCacheLayoutStrides, error) {
	a := cArgs[C.cattn_kv_cache_layout_strides_args_t](f)
	for i, s := range sizes {
		a.sizes[i] = C.int64_t(s)
	}
	a.layout = C.cattn_kv_cache_layout_t(l)
	if err := f.status(C.gocattn_kv_cache_layout_strides(a, f.msg, msgCap)); err != nil {
		return KVCacheLayoutStrides{}, err
	}
	var out KVCacheLayoutStrides
	for i := range out.Strides {
		out.Strides[i] = int64(a.strides[i])
		out.PhysicalShape[i] = int64(a.physical_shape[i])
	}
	out.Numel = int64(a.numel)
	return out, nil
}

// int64s copies v into the frame's C memory (NULL for an empty slice).
func (f *frame) int64s(v []int64) *C.int64_t {
	if len(v) == 0 {
		return nil
	}
	p := (*C.int64_t)(f.alloc(uintptr(len(v)) * 8))
	copy(unsafe.Slice((*int64)(unsafe.Pointer(p)), len(v)), v)
	return p
}

func (f *frame) getSupportedKVCacheLayouts(counts []int64, layouts []int32, capacity int) ([]KVCacheLayout, error) {
	a := cArgs[C.cattn_get_supported_kv_cache_layouts_args_t](f)
	a.num_backends = C.int64_t(len(counts))
	a.backend_counts = f.int64s(counts)
	if len(layouts) > 0 {
		p := f.alloc(uintptr(len(layouts)) * 4)
		copy(unsafe.Slice((*int32)(p), len(layouts)), layouts)
		a.layouts = (*C.cattn_kv_cache_layout_t)(p)
	}
	out := f.alloc(uintptr(capacity) * 4)
	a.out = (*C.cattn_kv_cache_layout_t)(out)
	a.out_capacity = C.int64_t(capacity)
	if err := f.status(C.gocattn_get_supported_kv_cache_layouts(a, f.msg, msgCap)); err != nil {
		return nil, err
	}
	got := unsafe.Slice((*int32)(out), int(a.num_out))
	res := make([]KVCacheLayout, len(got))
	for i, v := range got {
		res[i] = KVCacheLayout(v)
	}
	return res, nil
}

func (f *frame) setKVCacheLayoutPreset(ctx cContext, name *string) error {
	var p *C.char
	if name != nil {
		p = f.cstring(*name)
	}
	return f.status(C.gocattn_context_set_kv_cache_layout_preset(ctx, p, f.msg, msgCap))
}

func (f *frame) resolveKVCacheLayout(ctx cContext, args *ResolveKVCacheLayoutArgs) (ResolvedKVCacheLayout, error) {
	a := cArgs[C.cattn_resolve_kv_cache_layout_args_t](f)
	counts := make([]int64, len(args.Workers))
	total := 0
	for i, w := range args.Workers {
		counts[i] = int64(len(w))
		total += len(w)
	}
	a.num_workers = C.int64_t(len(counts))
	a.worker_counts = f.int64s(counts)
	if total > 0 {
		names := unsafe.Slice((**C.char)(f.alloc(uintptr(total)*unsafe.Sizeof(uintptr(0)))), total)
		k := 0
		for _, w := range args.Workers {
			for _, n := range w {
				names[k] = f.cstring(n)
				k++
			}
		}
		a.worker_names = &names[0]
	}
	heads := make([]int64, len(args.Specs))
	states := make([]int64, len(args.Specs))
	pages := make([]int64, len(args.Specs))
	for i, s := range args.Specs {
		heads[i], states[i], pages[i] = s.NumHeads, s.NumStates, s.PageSizeBytes
	}
	a.num_specs = C.int64_t(len(args.Specs))
	a.spec_num_heads = f.int64s(heads)
	a.spec_num_states = f.int64s(states)
	a.spec_page_size_bytes = f.int64s(pages)
	if args.UserSetting != nil {
		a.env_value = f.cstring(*args.UserSetting)
	}
	a.read_environment = b2i(args.ReadEnvironment)
	if args.Connector != nil {
		a.connector_layout = f.cstring(*args.Connector)
	}
	if err := f.status(C.gocattn_resolve_kv_cache_layout(ctx, a, f.msg, msgCap)); err != nil {
		return ResolvedKVCacheLayout{}, err
	}
	return ResolvedKVCacheLayout{Layout: KVCacheLayout(a.layout),
		ConnectorFellBack: a.connector_fell_back != 0, FromPreset: a.from_preset != 0}, nil
}

func (f *frame) recordKVCacheLayout(ctx cContext, name string) error {
	return f.status(C.gocattn_record_kv_cache_layout(ctx, f.cstring(name), f.msg, msgCap))
}

func (f *frame) resolvedKVCacheLayout(ctx cContext) (KVCacheLayout, error) {
	var l C.int32_t
	err := f.status(C.gocattn_get_resolved_kv_cache_layout(ctx, &l, f.msg, msgCap))
	return KVCacheLayout(l), err
}

// --- DCP local sequence lengths (get_dcp_local_seq_lens) ---------------------------------------------------

func (f *frame) getDCPLocalSeqLens(seqLens cTensor, size, rank, interleave int64, out cTensor,
	preserveShape bool, stream Stream) error {
	a := cArgs[C.cattn_dcp_local_seq_lens_args_t](f)
	a.seq_lens = seqLens
	a.dcp_size = C.int64_t(size)
	a.dcp_rank = C.int64_t(rank)
	a.dcp_kv_cache_interleave_size = C.int64_t(interleave)
	a.out = out
	a.shape_mode = C.CATTN_DCP_SHAPE_SQUEEZE
	if preserveShape {
		a.shape_mode = C.CATTN_DCP_SHAPE_PRESERVE
	}
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_get_dcp_local_seq_lens(a, f.msg, msgCap))
}

// --- PCP query restore index (get_pcp_query_restore_idx) ------------------------------------------------------

func (f *frame) getPCPQueryRestoreIdxSize(cu cTensor) (int64, error) {
	var size C.int64_t
	err := f.status(C.gocattn_get_pcp_query_restore_idx_size(cu, &size, f.msg, msgCap))
	return int64(size), err
}

func (f *frame) getPCPQueryRestoreIdx(cu, out cTensor, stream Stream) error {
	a := cArgs[C.cattn_pcp_query_restore_idx_args_t](f)
	a.cu_num_tokens = cu
	a.restore_idx = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_get_pcp_query_restore_idx(a, f.msg, msgCap))
}

// --- Fused PCP Q/K/V select (fused_pcp_qkv_select) -------------------------------------------------------

// t holds q, k, v, query_start_loc, q_head, k_head, v_head, q_tail, k_tail, v_tail.
func (f *frame) fusedPCPQKVSelect(t [10]cTensor, world, rank int64, stream Stream) error {
	a := cArgs[C.cattn_fused_pcp_qkv_select_args_t](f)
	a.q, a.k, a.v, a.query_start_loc = t[0], t[1], t[2], t[3]
	a.pcp_world_size = C.int64_t(world)
	a.pcp_rank = C.int64_t(rank)
	a.q_head, a.k_head, a.v_head = t[4], t[5], t[6]
	a.q_tail, a.k_tail, a.v_tail = t[7], t[8], t[9]
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_fused_pcp_qkv_select(a, f.msg, msgCap))
}

// --- Communicators and the PCP all-gather (pcp_kv_allgather_and_restore) -----------------------------------------

func (f *frame) commGetUniqueID() (CommUniqueID, error) {
	var id CommUniqueID
	cid := (*C.cattn_comm_unique_id_t)(f.alloc(C.sizeof_cattn_comm_unique_id_t))
	if err := f.status(C.gocattn_comm_get_unique_id(cid, f.msg, msgCap)); err != nil {
		return id, err
	}
	copy(id[:], unsafe.Slice((*byte)(unsafe.Pointer(&cid.bytes[0])), len(id)))
	return id, nil
}

func (f *frame) commCreate(id *CommUniqueID, nranks, rank, device int32) (cComm, error) {
	var cid *C.cattn_comm_unique_id_t
	if id != nil {
		cid = (*C.cattn_comm_unique_id_t)(f.alloc(C.sizeof_cattn_comm_unique_id_t))
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&cid.bytes[0])), len(id)), id[:])
	}
	out := (*cComm)(f.alloc(unsafe.Sizeof(cComm(nil))))
	err := f.status(C.gocattn_comm_create(cid, C.int32_t(nranks), C.int32_t(rank),
		C.int32_t(device), out, f.msg, msgCap))
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (f *frame) commCreateBorrowed(ncclComm uintptr) (cComm, error) {
	out := (*cComm)(f.alloc(unsafe.Sizeof(cComm(nil))))
	err := f.status(C.gocattn_comm_create_borrowed(C.uintptr_t(ncclComm), out, f.msg, msgCap))
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func cCommDestroy(c cComm) { C.gocattn_comm_destroy(c) }

func (f *frame) commGetRank(c cComm) (int32, error) {
	var v C.int32_t
	err := f.status(C.gocattn_comm_get_rank(c, &v, f.msg, msgCap))
	return int32(v), err
}

func (f *frame) commGetSize(c cComm) (int32, error) {
	var v C.int32_t
	err := f.status(C.gocattn_comm_get_size(c, &v, f.msg, msgCap))
	return int32(v), err
}

// t holds key, value, restore_idx, key_out, value_out.
func (f *frame) allgatherArgs(comm cComm, t [5]cTensor, n int64, workspace uintptr,
	workspaceSize uint64, stream Stream) *C.cattn_pcp_kv_allgather_and_restore_args_t {
	a := cArgs[C.cattn_pcp_kv_allgather_and_restore_args_t](f)
	a.comm = comm
	a.key, a.value = t[0], t[1]
	a.num_actual_tokens = C.int64_t(n)
	a.restore_idx, a.key_out, a.value_out = t[2], t[3], t[4]
	setAddr(&a.workspace, workspace)
	a.workspace_size = C.size_t(workspaceSize)
	setAddr(&a.stream, uintptr(stream))
	return a
}

func (f *frame) pcpKVAllgatherAndRestoreWorkspaceSize(comm cComm, t [5]cTensor, n int64,
	workspace uintptr, workspaceSize uint64, stream Stream) (uint64, error) {
	a := f.allgatherArgs(comm, t, n, workspace, workspaceSize, stream)
	var size C.size_t
	err := f.status(C.gocattn_pcp_kv_allgather_and_restore_workspace_size(a, &size, f.msg,
		msgCap))
	return uint64(size), err
}

func (f *frame) pcpKVAllgatherAndRestore(comm cComm, t [5]cTensor, n int64, workspace uintptr,
	workspaceSize uint64, stream Stream) error {
	a := f.allgatherArgs(comm, t, n, workspace, workspaceSize, stream)
	return f.status(C.gocattn_pcp_kv_allgather_and_restore(a, f.msg, msgCap))
}

// --- Causal-conv1d metadata (compute_causal_conv1d_metadata) -------------------------------------------------------

func (f *frame) computeCausalConv1dMetadataSize(qsl cTensor, blockM int64) (int64, int64, error) {
	var tot, capacity C.int64_t
	err := f.status(C.gocattn_compute_causal_conv1d_metadata_size(qsl, C.int64_t(blockM), &tot,
		&capacity, f.msg, msgCap))
	return int64(tot), int64(capacity), err
}

// t holds query_start_loc_cpu, nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr.
func (f *frame) computeCausalConv1dMetadata(t [6]cTensor, blockM int64, stream Stream) (int64, error) {
	a := cArgs[C.cattn_causal_conv1d_metadata_args_t](f)
	a.query_start_loc_cpu = t[0]
	a.block_m = C.int64_t(blockM)
	a.nums, a.mlist, a.offsetlist = t[1], t[2], t[3]
	a.batch_ptr, a.token_chunk_offset_ptr = t[4], t[5]
	setAddr(&a.stream, uintptr(stream))
	err := f.status(C.gocattn_compute_causal_conv1d_metadata(a, f.msg, msgCap))
	return int64(a.tot), err
}

// t holds query_start_loc, nums, mlist, offsetlist, batch_ptr, token_chunk_offset_ptr, tot.
func (f *frame) computeCausalConv1dMetadataCapturable(t [7]cTensor, blockM int64, stream Stream) error {
	a := cArgs[C.cattn_causal_conv1d_metadata_capturable_args_t](f)
	a.query_start_loc = t[0]
	a.block_m = C.int64_t(blockM)
	a.nums, a.mlist, a.offsetlist = t[1], t[2], t[3]
	a.batch_ptr, a.token_chunk_offset_ptr, a.tot = t[4], t[5], t[6]
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_compute_causal_conv1d_metadata_capturable(a, f.msg, msgCap))
}

// --- Extend queries (extend_all_queries_by_n) ---------------------------------------------------------------

func (f *frame) extendAllQueriesByN(in cMetadata, n int64, slots cTensor, out cMetadata,
	dcpSize, dcpRank, dcpInterleave int64, stream Stream) error {
	a := cArgs[C.cattn_extend_all_queries_by_n_args_t](f)
	a.metadata = in
	a.n = C.int64_t(n)
	a.new_slot_mapping = slots
	a.out = out
	a.dcp_size = C.int64_t(dcpSize)
	a.dcp_rank = C.int64_t(dcpRank)
	a.dcp_kv_cache_interleave_size = C.int64_t(dcpInterleave)
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_extend_all_queries_by_n(a, f.msg, msgCap))
}

// --- Per-request metadata helpers (naive_query_lens, compute_num_computed_tokens, token_to_req_indices) ---

func (f *frame) naiveQueryLens(md cMetadata, out cTensor, computed bool, stream Stream) error {
	a := cArgs[C.cattn_naive_query_lens_args_t](f)
	a.metadata = md
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	if computed {
		return f.status(C.gocattn_compute_num_computed_tokens(a, f.msg, msgCap))
	}
	return f.status(C.gocattn_naive_query_lens(a, f.msg, msgCap))
}

func (f *frame) tokenToReqIndices(md cMetadata, buffer cTensor, stream Stream) error {
	a := cArgs[C.cattn_token_to_req_indices_args_t](f)
	a.metadata = md
	a.buffer = buffer
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_token_to_req_indices(a, f.msg, msgCap))
}

// unpadded fills out with views in C storage owned by the frame; the caller reads their
// first dimensions (firstDim) before the frame is freed.
func (f *frame) unpadded(in, out cMetadata, tokens, reqs int64) error {
	st := cArgs[C.cattn_unpadded_storage_t](f)
	a := cArgs[C.cattn_unpadded_args_t](f)
	a.metadata = in
	a.out = out
	a.storage = st
	a.num_actual_tokens = C.int64_t(tokens)
	a.num_actual_reqs = C.int64_t(reqs)
	return f.status(C.gocattn_unpadded(a, f.msg, msgCap))
}

func (f *frame) newMetadataOut() cMetadata {
	return cArgs[C.cattn_common_attn_metadata_t](f)
}

func firstDim(t cTensor) int64 { return int64(C.gocattn_first_dim(t)) }

// --- KV-sharing fast prefill (make_kv_sharing_fast_prefill_common_attn_metadata) ------------------------------------------------------

func (f *frame) makeKVSharingFastPrefill(in, out cMetadata, maxAndTotal cTensor,
	stream Stream) (bool, error) {
	a := cArgs[C.cattn_fast_prefill_metadata_args_t](f)
	a.metadata = in
	a.out = out
	a.decode_max_and_total = maxAndTotal
	setAddr(&a.stream, uintptr(stream))
	err := f.status(C.gocattn_make_kv_sharing_fast_prefill_common_attn_metadata(a, f.msg, msgCap))
	return a.passthrough != 0, err
}

// --- Local-attention virtual batches (make_local_attention_virtual_batches) ----------------------------------------------

func (f *frame) localAttentionArgs(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) *C.cattn_local_attention_args_t {
	a := cArgs[C.cattn_local_attention_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.block_size = C.int64_t(block)
	a.metadata = md
	a.max_virtual_batches = C.int64_t(maxVirtualBatches)
	return a
}

func (f *frame) makeLocalAttentionVirtualBatches(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) (cPlan, error) {
	a := f.localAttentionArgs(chunk, block, md, maxVirtualBatches)
	if err := f.status(C.gocattn_make_local_attention_virtual_batches(a, f.msg, msgCap)); err != nil {
		return nil, err
	}
	return a.plan, nil
}

func (f *frame) makeLocalAttentionVirtualBatchesSize(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) (LocalAttentionSize, error) {
	a := f.localAttentionArgs(chunk, block, md, maxVirtualBatches)
	var vb, pages C.int64_t
	var bytes C.size_t
	err := f.status(C.gocattn_make_local_attention_virtual_batches_size(a, &vb, &pages, &bytes,
		f.msg, msgCap))
	if err != nil {
		return LocalAttentionSize{}, err
	}
	return LocalAttentionSize{VirtualBatches: int64(vb), Pages: int64(pages),
		PlanBytes: uint64(bytes)}, nil
}

func cLocalAttentionPlanDestroy(p cPlan) { C.gocattn_local_attention_plan_destroy(p) }

func (f *frame) localAttentionPlanGetShape(p cPlan) (int64, int64, error) {
	var vb, pages C.int64_t
	err := f.status(C.gocattn_local_attention_plan_get_shape(p, &vb, &pages, f.msg, msgCap))
	return int64(vb), int64(pages), err
}

func (f *frame) localAttentionPlanFill(p cPlan, in, out cMetadata, stream Stream) error {
	a := cArgs[C.cattn_local_attention_fill_args_t](f)
	a.metadata = in
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_local_attention_plan_fill(p, a, f.msg, msgCap))
}

func (f *frame) localAttentionPlanMakeBlockTable(p cPlan, table, out cTensor, stream Stream) error {
	return f.status(C.gocattn_local_attention_plan_make_block_table(p, table, out,
		C.uintptr_t(stream), f.msg, msgCap))
}

// t holds query_start_loc, seq_lens, block_table, query_start_loc_out, seq_lens_out,
// num_computed_tokens_out, block_table_out, counts.
func (f *frame) makeLocalAttentionVirtualBatchesCapturable(chunk, block int64, t [8]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_local_attention_capturable_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.block_size = C.int64_t(block)
	a.query_start_loc, a.seq_lens, a.block_table = t[0], t[1], t[2]
	a.query_start_loc_out, a.seq_lens_out = t[3], t[4]
	a.num_computed_tokens_out, a.block_table_out, a.counts = t[5], t[6], t[7]
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_make_local_attention_virtual_batches_capturable(a, f.msg, msgCap))
}

// --- Mamba block table (mamba_get_block_table_tensor) -----------------------------------------------------------

func (f *frame) mambaGetBlockTableTensor(table, seqLens cTensor, blockSize, nspec int64,
	mode MambaCacheMode, out cTensor, stream Stream) error {
	a := cArgs[C.cattn_mamba_block_table_args_t](f)
	a.block_table = table
	a.seq_lens = seqLens
	a.block_size = C.int64_t(blockSize)
	a.num_speculative_blocks = C.int64_t(nspec)
	a.mamba_cache_mode = C.int32_t(mode)
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_mamba_get_block_table_tensor(a, f.msg, msgCap))
}

// --- Per-layer parameters (get_per_layer_parameters) --------------------------------------------------------

func (f *frame) perLayerArray(n int) []C.cattn_per_layer_parameters_t {
	if n == 0 {
		return nil
	}
	p := f.alloc(uintptr(n) * C.sizeof_cattn_per_layer_parameters_t)
	return unsafe.Slice((*C.cattn_per_layer_parameters_t)(p), n)
}

func (f *frame) getPerLayerParameters(layers []AttentionLayer) ([]PerLayerParameters, error) {
	n := len(layers)
	var descs []C.cattn_attention_layer_desc_t
	if n > 0 {
		p := f.alloc(uintptr(n) * C.sizeof_cattn_attention_layer_desc_t)
		descs = unsafe.Slice((*C.cattn_attention_layer_desc_t)(p), n)
	}
	for i, l := range layers {
		d := &descs[i]
		d.struct_size = C.sizeof_cattn_attention_layer_desc_t
		d.sliding_window_left = C.int64_t(l.SlidingWindow[0])
		d.sliding_window_right = C.int64_t(l.SlidingWindow[1])
		d.logits_soft_cap = C.double(l.LogitsSoftCap)
		d.scale = C.double(l.Scale)
		d.has_sliding_window = b2i(l.HasSlidingWindow)
		d.has_logits_soft_cap = b2i(l.HasLogitsSoftCap)
		d.has_sinks = b2i(l.HasSinks)
	}
	out := f.perLayerArray(n)
	for i := range out {
		out[i].struct_size = C.sizeof_cattn_per_layer_parameters_t
	}
	err := f.status(C.gocattn_get_per_layer_parameters(unsafe.SliceData(descs), C.size_t(n),
		unsafe.SliceData(out), f.msg, msgCap))
	if err != nil {
		return nil, err
	}
	res := make([]PerLayerParameters, n)
	for i, p := range out {
		res[i] = PerLayerParameters{
			WindowLeft:       int64(p.window_left),
			LogitsSoftCap:    float64(p.logits_soft_cap),
			HasLogitsSoftCap: p.has_logits_soft_cap != 0,
			SMScale:          float64(p.sm_scale),
			HasSinks:         p.has_sinks != 0,
		}
	}
	return res, nil
}

func (f *frame) inferGlobalHyperparameters(params []PerLayerParameters) (GlobalHyperparameters, error) {
	in := f.perLayerArray(len(params))
	for i, p := range params {
		c := &in[i]
		c.struct_size = C.sizeof_cattn_per_layer_parameters_t
		c.window_left = C.int64_t(p.WindowLeft)
		c.logits_soft_cap = C.double(p.LogitsSoftCap)
		c.sm_scale = C.double(p.SMScale)
		c.has_logits_soft_cap = b2i(p.HasLogitsSoftCap)
		c.has_sinks = b2i(p.HasSinks)
	}
	out := cArgs[C.cattn_global_hyperparameters_t](f)
	err := f.status(C.gocattn_infer_global_hyperparameters(unsafe.SliceData(in),
		C.size_t(len(params)), out, f.msg, msgCap))
	if err != nil {
		return GlobalHyperparameters{}, err
	}
	return GlobalHyperparameters{
		PerLayerParameters: PerLayerParameters{
			WindowLeft:       int64(out.window_left),
			LogitsSoftCap:    float64(out.logits_soft_cap),
			HasLogitsSoftCap: out.has_logits_soft_cap != 0,
			SMScale:          float64(out.sm_scale),
			HasSinks:         out.has_sinks != 0,
		},
		HasSameWindowLefts: out.has_same_window_lefts != 0,
		HasSameAllParams:   out.has_same_all_params != 0,
	}, nil
}

// --- Step plan (cattn_step_plan_*) ------------------------------------------------------------

func (f *frame) stepPlanCreate(d *StepPlanDesc) (cStepPlan, error) {
	c := cArgs[C.cattn_step_plan_desc_t](f)
	c.products = C.uint32_t(d.Products)
	c.max_num_reqs = C.int64_t(d.MaxNumReqs)
	c.max_num_tokens = C.int64_t(d.MaxNumTokens)
	c.max_num_blocks_per_req = C.int64_t(d.MaxNumBlocksPerReq)
	c.max_num_logits = C.int64_t(d.MaxNumLogits)
	c.dcp.dcp_size = C.int64_t(nonZero(d.DCP.DCPSize, 1))
	c.dcp.dcp_rank = C.int64_t(d.DCP.Ranks.c())
	c.dcp.dcp_kv_cache_interleave_size = C.int64_t(nonZero(d.DCP.InterleaveSize, 1))
	c.mamba.block_size = C.int64_t(nonZero(d.Mamba.BlockSize, 1))
	c.mamba.num_speculative_blocks = C.int64_t(d.Mamba.NumSpeculativeBlocks)
	c.mamba.mamba_cache_mode = C.int32_t(d.Mamba.Mode)
	c.conv1d.block_m = C.int64_t(nonZero(d.Conv1d.BlockM, 8))
	c.local_attention.attn_chunk_size = C.int64_t(d.LocalAttention.AttnChunkSize)
	c.local_attention.block_size = C.int64_t(d.LocalAttention.BlockSize)
	c.extend.n = C.int64_t(orDefault(d.Extend.N, 1))
	out := (*cStepPlan)(f.alloc(unsafe.Sizeof(cStepPlan(nil))))
	if err := f.status(C.gocattn_step_plan_create(c, out, f.msg, msgCap)); err != nil {
		return nil, err
	}
	return *out, nil
}

func cStepPlanDestroy(p cStepPlan) { C.gocattn_step_plan_destroy(p) }

func (f *frame) stepPlanGetShape(p cStepPlan) (StepPlanShape, error) {
	s := cArgs[C.cattn_step_plan_shape_t](f)
	if err := f.status(C.gocattn_step_plan_get_shape(p, s, f.msg, msgCap)); err != nil {
		return StepPlanShape{}, err
	}
	return StepPlanShape{
		RestoreCapacity: int64(s.restore_capacity),
		Conv1dCapacity:  int64(s.conv1d_capacity),
		LocalCapacity:   int64(s.local_capacity),
		LocalPages:      int64(s.local_pages),
		MambaColumns:    int64(s.mamba_columns),
	}, nil
}

func (f *frame) stepPlanWorkspaceSize(p cStepPlan) (uint64, error) {
	var bytes C.size_t
	err := f.status(C.gocattn_step_plan_workspace_size(p, &bytes, f.msg, msgCap))
	return uint64(bytes), err
}

// b holds the batch's tensors in cattn_step_batch_t order (stepBatchFields), o the outputs'
// in cattn_step_outputs_t order (stepOutputFields).
func (f *frame) stepPlanRun(p cStepPlan, b [6]cTensor, o [17]cTensor, workspace uintptr,
	workspaceBytes uint64, stream Stream) error {
	cb := cArgs[C.cattn_step_batch_t](f)
	cb.query_start_loc, cb.seq_lens, cb.block_table = b[0], b[1], b[2]
	cb.cu_num_tokens, cb.logits_indices, cb.num_logits_indices = b[3], b[4], b[5]
	co := cArgs[C.cattn_step_outputs_t](f)
	co.dcp_local_seq_lens, co.pcp_query_restore_idx, co.mamba_block_table = o[0], o[1], o[2]
	co.conv1d_nums, co.conv1d_mlist, co.conv1d_offsetlist = o[3], o[4], o[5]
	co.conv1d_batch_ptr, co.conv1d_token_chunk_offset_ptr = o[6], o[7]
	co.local_query_start_loc, co.local_seq_lens = o[8], o[9]
	co.local_num_computed_tokens, co.local_block_table = o[10], o[11]
	co.decode_query_start_loc, co.extend_query_start_loc, co.extend_seq_lens = o[12], o[13], o[14]
	co.counts, co.counts_host = o[15], o[16]
	setAddr(&co.workspace, workspace)
	co.workspace_bytes = C.size_t(workspaceBytes)
	return f.status(C.gocattn_step_plan_run(p, cb, co, C.uintptr_t(stream), f.msg, msgCap))
}

// cStepPlanDescInit returns CATTN_STEP_PLAN_DESC_INIT as a StepPlanDesc (tests compare it with
// DefaultStepPlanDesc).
func cStepPlanDescInit() StepPlanDesc {
	d := C.gocattn_step_plan_desc_init()
	return StepPlanDesc{
		Products:           StepProduct(d.products),
		MaxNumReqs:         int64(d.max_num_reqs),
		MaxNumTokens:       int64(d.max_num_tokens),
		MaxNumBlocksPerReq: int64(d.max_num_blocks_per_req),
		MaxNumLogits:       int64(d.max_num_logits),
		DCP: StepDCPParams{DCPSize: int64(d.dcp.dcp_size), Ranks: DCPRank(int64(d.dcp.dcp_rank)),
			InterleaveSize: int64(d.dcp.dcp_kv_cache_interleave_size)},
		Mamba: StepMambaParams{BlockSize: int64(d.mamba.block_size),
			NumSpeculativeBlocks: int64(d.mamba.num_speculative_blocks),
			Mode:                 MambaCacheMode(d.mamba.mamba_cache_mode)},
		Conv1d: StepConv1dParams{BlockM: int64(d.conv1d.block_m)},
		LocalAttention: StepLocalAttentionParams{
			AttnChunkSize: int64(d.local_attention.attn_chunk_size),
			BlockSize:     int64(d.local_attention.block_size)},
		Extend: StepExtendParams{N: Ptr(int64(d.extend.n))},
	}
}

// cStepConstants returns the header's CATTN_STEP_* product bits (the seven, then
// CATTN_STEP_ALL_PRODUCTS) and CATTN_STEP_COUNT_* indices (the eight, then
// CATTN_STEP_NUM_COUNTS), for the test that holds the Go constants to them.
func cStepConstants() (products [8]uint32, counts [9]int32) {
	var p [8]C.uint32_t
	var c [9]C.int32_t
	C.gocattn_step_constants(&p[0], &c[0])
	for i := range p {
		products[i] = uint32(p[i])
	}
	for i := range c {
		counts[i] = int32(c[i])
	}
	return products, counts
}

// --- Batch splitting and reordering (split_decodes_and_prefills, ...) ---------------------------

func (f *frame) splitDecodesAndPrefills(qsl, isp cTensor, b SplitBatch, o SplitOptions) (
	DecodePrefillSplit, error) {
	a := cArgs[C.cattn_split_decodes_and_prefills_args_t](f)
	a.query_start_loc_cpu = qsl
	a.is_prefilling_cpu = isp
	a.num_reqs = C.int64_t(b.NumReqs)
	a.num_actual_tokens = C.int64_t(b.NumActualTokens)
	a.max_query_len = C.int64_t(b.MaxQueryLen)
	a.decode_threshold = C.int64_t(orDefault(o.DecodeThreshold, 1))
	a.require_uniform = b2i(o.RequireUniform)
	a.treat_short_extends_as_decodes = b2i(!o.CountShortExtendsAsPrefills)
	if err := f.status(C.gocattn_split_decodes_and_prefills(a, f.msg, msgCap)); err != nil {
		return DecodePrefillSplit{}, err
	}
	return DecodePrefillSplit{int64(a.num_decodes), int64(a.num_prefills),
		int64(a.num_decode_tokens), int64(a.num_prefill_tokens)}, nil
}

func (f *frame) splitDecodesPrefillsAndExtends(qsl, ub cTensor, b SplitBatch, thr int64) (
	DecodeExtendPrefillSplit, error) {
	a := cArgs[C.cattn_split_decodes_prefills_and_extends_args_t](f)
	a.query_start_loc_cpu = qsl
	a.seq_lens_cpu_upper_bound = ub
	a.num_reqs = C.int64_t(b.NumReqs)
	a.num_actual_tokens = C.int64_t(b.NumActualTokens)
	a.max_query_len = C.int64_t(b.MaxQueryLen)
	a.decode_threshold = C.int64_t(thr)
	if err := f.status(C.gocattn_split_decodes_prefills_and_extends(a, f.msg, msgCap)); err != nil {
		return DecodeExtendPrefillSplit{}, err
	}
	return DecodeExtendPrefillSplit{int64(a.num_decodes), int64(a.num_extends),
		int64(a.num_prefills), int64(a.num_decode_tokens), int64(a.num_extend_tokens),
		int64(a.num_prefill_tokens)}, nil
}

func (f *frame) splitDecodesAndPrefillsCapturable(qsl, isp, tokens, mql, result cTensor,
	o SplitOptions, stream Stream) error {
	a := cArgs[C.cattn_split_decodes_and_prefills_capturable_args_t](f)
	a.query_start_loc = qsl
	a.is_prefilling = isp
	a.num_actual_tokens = tokens
	a.max_query_len = mql
	a.decode_threshold = C.int64_t(orDefault(o.DecodeThreshold, 1))
	a.require_uniform = b2i(o.RequireUniform)
	a.treat_short_extends_as_decodes = b2i(!o.CountShortExtendsAsPrefills)
	a.result = result
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_split_decodes_and_prefills_capturable(a, f.msg, msgCap))
}

func (f *frame) splitDecodesPrefillsAndExtendsCapturable(qsl, ub, tokens, mql, result cTensor,
	thr int64, stream Stream) error {
	a := cArgs[C.cattn_split_decodes_prefills_and_extends_capturable_args_t](f)
	a.query_start_loc = qsl
	a.seq_lens_upper_bound = ub
	a.num_actual_tokens = tokens
	a.max_query_len = mql
	a.decode_threshold = C.int64_t(thr)
	a.result = result
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_split_decodes_prefills_and_extends_capturable(a, f.msg, msgCap))
}

func (f *frame) splitPrefillChunks(seq, chunks cTensor, ws, off int64) (int64, error) {
	a := cArgs[C.cattn_split_prefill_chunks_args_t](f)
	a.seq_lens_cpu = seq
	a.workspace_size = C.int64_t(ws)
	a.request_offset = C.int64_t(off)
	a.chunks = chunks
	err := f.status(C.gocattn_split_prefill_chunks(a, f.msg, msgCap))
	return int64(a.num_chunks), err
}

func (f *frame) reorderBatch(s, c, p, indexMap, swaps cTensor, thr int64) (ReorderResult, error) {
	a := cArgs[C.cattn_reorder_batch_args_t](f)
	a.num_scheduled_tokens = s
	a.num_computed_tokens = c
	a.num_prompt_tokens = p
	a.decode_threshold = C.int64_t(thr)
	a.index_map = indexMap
	a.swaps = swaps
	if err := f.status(C.gocattn_reorder_batch_to_split_decodes_and_prefills(a, f.msg,
		msgCap)); err != nil {
		return ReorderResult{}, err
	}
	return ReorderResult{Changed: a.changed != 0, NumSwaps: int64(a.num_swaps),
		Counts: [4]int64{int64(a.num_decodes), int64(a.num_short_extends),
			int64(a.num_long_extends), int64(a.num_prefills)}}, nil
}

// --- The other 1.1 helpers (max_local_attention_virtual_batches, mm prefix ranges, log2_lse_to_ln) ---

func (f *frame) maxLocalAttentionVirtualBatches(chunk, seqs, tokens int64) (int64, int64, error) {
	a := cArgs[C.cattn_max_local_attention_virtual_batches_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.max_num_seqs = C.int64_t(seqs)
	a.max_num_batched_tokens = C.int64_t(tokens)
	err := f.status(C.gocattn_max_local_attention_virtual_batches(a, f.msg, msgCap))
	return int64(a.bound), int64(a.bound_with_empty_rows), err
}

func (f *frame) computeMMPrefixRangeTensor(offsets, ranges, out cTensor) (int64, bool, error) {
	a := cArgs[C.cattn_mm_prefix_range_tensor_args_t](f)
	a.range_offsets = offsets
	a.ranges = ranges
	a.out = out
	err := f.status(C.gocattn_compute_mm_prefix_range_tensor(a, f.msg, msgCap))
	return int64(a.max_ranges), a.is_none != 0, err
}

func (f *frame) fillMMPrefixQueryRanges(offsets, ranges, qsl, seq, out cTensor) (int64, error) {
	a := cArgs[C.cattn_fill_mm_prefix_query_ranges_args_t](f)
	a.range_offsets = offsets
	a.ranges = ranges
	a.query_start_loc_cpu = qsl
	a.seq_lens_cpu = seq
	a.out = out
	err := f.status(C.gocattn_fill_mm_prefix_query_ranges(a, f.msg, msgCap))
	return int64(a.rows), err
}

func (f *frame) log2LSEToLn(lse, out cTensor, rounding int64, stream Stream) error {
	a := cArgs[C.cattn_log2_lse_to_ln_args_t](f)
	a.lse = lse
	a.out = out
	a.half_rounding = C.int64_t(rounding)
	setAddr(&a.stream, uintptr(stream))
	return f.status(C.gocattn_log2_lse_to_ln(a, f.msg, msgCap))
}

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
