/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cattn.h - libcattn: vLLM's attention-backend metadata utilities behind a C ABI.
 *
 * This is the only public header and its manual. It compiles as C99 and as C++ and needs no
 * CUDA header: tensors are borrowed DLPack views (<dlpack/dlpack.h>) and streams are
 * forward-declared. How the calls are implemented, and what they were measured at, is in the
 * source tree's docs/design.md and docs/performance.md.
 *
 * Promises every call keeps (each declaration below states only what it adds):
 *
 *  1. Status. Every fallible call returns cattn_status_t; CATTN_OK (0) means success. On
 *     failure cattn_last_error_message() names the function, the argument, the value given and
 *     the value expected, and the call has written nothing to any output: no tensor byte, no
 *     field of an output struct. No C++ exception ever leaves the library.
 *  2. Tensors. Tensors are borrowed for the duration of the call: inputs are `const DLTensor*`,
 *     outputs `DLTensor*` allocated by the caller. byte_offset and strides are honoured (NULL
 *     strides = compact row-major); no alignment is assumed. Negative strides are refused, and
 *     outputs may not have zero strides. A tensor without elements may have any strides (they
 *     are ignored). Index and length tensors may be int32 or int64; each output keeps its own
 *     dtype, and a value that does not fit it is an error (host) or is documented per call
 *     (device). Every dtype has one lane: lanes != 1 is CATTN_INVALID_ARGUMENT, like any other
 *     wrong dtype (1.1; 1.0 returned CATTN_NOT_SUPPORTED). An element width other than 8, 16,
 *     32 or 64 bits is CATTN_NOT_SUPPORTED. A view whose elements span more than 2^57 bytes
 *     (shape, strides and element size; past any canonical address range) is
 *     CATTN_INVALID_ARGUMENT, "spans more bytes than an address space holds", whatever its
 *     dtype (since 1.1).
 *  3. Broadcast inputs. An input a call reads in full while writing fewer outputs -
 *     query_start_loc, cu_num_tokens, the *_cpu mirrors of the conv1d metadata and of the
 *     local-attention plan, logits_indices_padded - may be a broadcast view (a zero stride in a
 *     dimension of more than one element) of at most CATTN_MAX_BROADCAST_ELEMENTS elements, so
 *     that no call works in proportion to a size no memory backs; a larger one is
 *     CATTN_INVALID_ARGUMENT. Elsewhere the work is bounded by the outputs, which are real
 *     memory.
 *  4. Overlap, one rule for every call. Everything a call reads is an input: tensor elements,
 *     the DLTensor structs and their shape and strides arrays, args and metadata structs,
 *     arrays and strings behind pointers. Everything it writes is an output: tensor elements,
 *     output structs (an out metadata struct, cattn_unpadded's storage, a properties or shape
 *     struct), values written through pointers. No output may share a byte with an input or
 *     with another output; an overlap is CATTN_INVALID_ARGUMENT, naming the output and what it
 *     shares memory with, before anything is written. Byte ranges are compared in one address
 *     space, whatever the devices (since 1.1: DLTensor structs, shapes, strides, args and
 *     metadata structs count; 1.0 compared tensor elements on the same device). The
 *     exemptions, each documented where it applies: an output that is exactly the view of the
 *     input it replaces (in place: get_dcp_local_seq_lens, compute_num_computed_tokens,
 *     extend_all_queries_by_n, mamba_get_block_table_tensor without ALIGN, log2_lse_to_ln); an
 *     out metadata struct that is the input metadata struct itself (extend_all_queries_by_n,
 *     make_kv_sharing_fast_prefill_common_attn_metadata, cattn_local_attention_plan_fill); and
 *     the out fields of an args struct, which a call fills after every read.
 *  5. Inputs that change. Inputs must not change while a call reads them. If another thread
 *     writes one anyway (a data race of the caller's), the outputs' values are unspecified and
 *     the call may fail, but it never writes outside its outputs or reads outside its inputs:
 *     no value is read twice to place a write, and every write position is bounded by the
 *     checked sizes again.
 *  6. Integers, not enums. Device types, dtypes and enum-typed fields are read as integers, so
 *     any value a caller stores in them (a newer DLPack's device type, say) is refused with a
 *     status, never undefined behaviour.
 *  7. Devices. Dispatch follows the tensors: when every tensor argument is host memory
 *     (kDLCPU or kDLCUDAHost) the host implementation runs synchronously; when they are
 *     kDLCUDA the work is enqueued on the call's `stream` (cattn_stream_t is ABI-identical to
 *     cudaStream_t; NULL = the legacy default stream) and the call returns before it completes,
 *     never synchronising the host, never allocating, and capturable in a CUDA graph.
 *     Arguments documented as host mirrors (`*_cpu`) are host memory on every path. Mixing
 *     devices otherwise is CATTN_INVALID_ARGUMENT. Device data is never read back, so checks
 *     that need its values happen on the device as each call documents (never an access out
 *     of bounds). A CPU-only build (CATTN_WITH_CUDA=OFF) answers CUDA tensors with
 *     CATTN_NOT_SUPPORTED after every other check; so does a machine without a usable device.
 *  8. Memory. Host memory is allocated only by the calls that create handles (each bounded by
 *     what its size query reports, or of a fixed size) and for error messages; device memory
 *     is never allocated (a workspace comes from the caller).
 *  9. Versioned structs. Structs that cross the ABI begin with `size_t struct_size`; set it
 *     with the *_INIT macro. The sizes a header release defined are accepted, and so is any
 *     size from the newest up (a newer header's struct, up to SIZE_MAX): only the fields this
 *     header knows are read or written, and no size forms an address past them. A size below
 *     the oldest is CATTN_INVALID_ARGUMENT ("has struct_size too small"); so is one between two
 *     releases' sizes, which no header wrote (since 1.1; 1.1.0 pre-releases read it as the older
 *     version in some calls). The structs that grew in 1.1 list both sizes
 *     (CATTN_COMMON_ATTN_METADATA_SIZE_1_0 / _1_1, CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0).
 *     Reserved fields ("set to 0") must be 0 in every struct a call reads: any other value is
 *     CATTN_INVALID_ARGUMENT.
 * 10. Threads. Every call may be made from any number of threads at once, provided no two
 *     threads write the same output tensor or handle; handles are safe to share for reading.
 *     The last-error message is per thread.
 * 11. Handles (contexts, plans, communicators) are opaque and checked on every use: a
 *     destroyed handle, a pointer no create call returned, or a handle of another kind is
 *     CATTN_INVALID_ARGUMENT, and destroying one of them frees nothing (the destroy call sets
 *     the message). Such a pointer is never read: the live-handle registry vouches for a
 *     pointer before the library touches the memory it points to. Undefined, because it
 *     cannot be detected: destroying a handle while another thread uses it, and using a
 *     destroyed handle whose address a later create call reused.
 *
 * Each declaration: what it computes; its parameters; Reads / Writes / Allocates; Returns
 * (every status it can return); Stream; Lifetime; Thread safety; Since.
 */
#ifndef CATTN_H
#define CATTN_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#if defined(_WIN32)
#define CATTN_API
#elif defined(CATTN_BUILDING_LIBRARY)
#define CATTN_API __attribute__((visibility("default")))
#else
#define CATTN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Version
 * ========================================================================================== */

#define CATTN_VERSION_MAJOR 1
#define CATTN_VERSION_MINOR 1
#define CATTN_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH. The same MAJOR means the same ABI. */
#define CATTN_VERSION_NUMBER \
  (CATTN_VERSION_MAJOR * 10000 + CATTN_VERSION_MINOR * 100 + CATTN_VERSION_PATCH)
#define CATTN_VERSION_STRING "1.1.0"

/* Returns the version the library was built as, CATTN_VERSION_NUMBER of its header; compare it
 * with the macro to detect a header/library mismatch.
 * Returns: the version number; cannot fail. Stream: synchronous. Lifetime: -.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API uint32_t cattn_version(void);

/* Returns the library's version as "MAJOR.MINOR.PATCH"; never NULL.
 * Returns: the string; cannot fail. Stream: synchronous. Lifetime: static.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API const char* cattn_version_string(void);

/* ============================================================================================
 * Status
 * ========================================================================================== */

/* Status codes. Values are frozen once released; new codes are only appended. */
typedef enum cattn_status_e {
  CATTN_OK = 0,
  CATTN_INVALID_ARGUMENT = 1,  /* an argument is NULL, malformed, inconsistent or out of range */
  CATTN_CUDA_ERROR = 2,        /* the CUDA runtime reported an error (message has its name) */
  CATTN_OUT_OF_MEMORY = 3,     /* an allocation failed: a handle's host memory, or the CUDA
                                  runtime's own */
  CATTN_INSUFFICIENT_SIZE = 4, /* an output tensor or workspace is too small */
  CATTN_NOT_SUPPORTED = 5,     /* valid request this build or machine cannot serve */
  CATTN_INTERNAL = 6,          /* a bug in libcattn; please report the message */
  CATTN_NOT_IMPLEMENTED = 7,   /* reserved for calls declared before they are implemented; no
                                  call of this release returns it */
  CATTN_NCCL_ERROR = 8,        /* NCCL reported an error (message has ncclGetErrorString's text) */
  CATTN_STATUS_COUNT_ = 9      /* internal: number of codes; not a status */
} cattn_status_t;

/* Returns a static, human-readable name for `status` ("CATTN_OK", ...); an unknown value gives
 * "CATTN_UNKNOWN_STATUS". Never NULL.
 * Returns: the name; cannot fail. Stream: synchronous. Lifetime: static.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API const char* cattn_status_string(cattn_status_t status);

/* The longest message cattn_last_error_message returns, in bytes with its NUL. A caller's value
 * shown in a message (a string, a long list) is cut short, ending in "...". Since: 1.1 */
#define CATTN_LAST_ERROR_MESSAGE_MAX 1024

/* Returns the detail of the calling thread's last failed call, in the form
 * "<function>: <argument> <problem> (got X, expected Y)", or "" when no call has failed; at
 * most CATTN_LAST_ERROR_MESSAGE_MAX bytes with its NUL. A successful call may leave an older
 * message in place.
 * Returns: the message; cannot fail. Stream: synchronous.
 * Lifetime: thread-local storage owned by the library, valid until the next libcattn call on
 *   this thread; copy it before calling again.
 * Thread safety: any thread (each thread has its own). Since: 1.0 */
CATTN_API const char* cattn_last_error_message(void);

/* ============================================================================================
 * Runtime and handles
 * ========================================================================================== */

/* The most elements a broadcast view (a zero stride over a dimension of more than one element)
 * may hold where a call reads an input in full (promise 3 above). Since: 1.1 */
#define CATTN_MAX_BROADCAST_ELEMENTS ((int64_t)1 << 24)

/* ABI-identical to cudaStream_t; declared here so this header needs no CUDA header. */
typedef struct CUstream_st* cattn_stream_t;

/* Reports how many CUDA devices the library can use.
 * count: host pointer, not NULL; receives 0 when the build has no CUDA support, when no driver
 *   is installed, or when no device is visible.
 * Reads: the CUDA runtime. Writes: *count. Allocates: nothing.
 * Returns: CATTN_OK (also when there is no GPU); CATTN_INVALID_ARGUMENT (count NULL).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_cuda_device_count(int32_t* count);

/* A context carries state that vLLM keeps in module globals (today: the KV-cache layout
 * override), so that two engines in one process do not share it. Opaque. */
typedef struct cattn_context_s cattn_context_t;

/* Creates a context with no layout override.
 * out: host pointer, not NULL; receives the handle on success.
 * Writes: *out. Allocates: the context (a few bytes of host memory).
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (out NULL); CATTN_OUT_OF_MEMORY.
 * Stream: synchronous.
 * Lifetime: the caller owns the handle and frees it with cattn_context_destroy.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_context_create(cattn_context_t** out);

/* Destroys a context; NULL is a no-op, and so is a context that is not live (destroyed already,
 * or never created), which this thread's last-error message then reports.
 * Returns: nothing. Stream: synchronous. Lifetime: the handle is invalid afterwards.
 * Thread safety: no call may use the context concurrently. Since: 1.0 */
CATTN_API void cattn_context_destroy(cattn_context_t* ctx);

/* The metadata of one batch, equivalent to vLLM's CommonAttentionMetadata. Tensor fields are
 * borrowed DLTensor pointers; extend_all_queries_by_n,
 * make_kv_sharing_fast_prefill_common_attn_metadata and make_local_attention_virtual_batches
 * read one such struct and write another (each call says which fields). Host mirrors (`*_cpu`)
 * are host tensors; the others live on the batch's device. Set struct_size with
 * CATTN_COMMON_ATTN_METADATA_INIT. Since: 1.0 */
typedef struct cattn_common_attn_metadata {
  size_t struct_size;
  DLTensor* query_start_loc;         /* [num_reqs + 1] cumulative query lengths */
  DLTensor* query_start_loc_cpu;     /* host mirror of query_start_loc, may be NULL */
  DLTensor* seq_lens;                /* [num_reqs] sequence (context + query) lengths */
  DLTensor* seq_lens_cpu;            /* host mirror of seq_lens, may be NULL */
  DLTensor* num_computed_tokens_cpu; /* [num_reqs] host, may be NULL */
  DLTensor* block_table_tensor;      /* [num_reqs, max_blocks_per_req], may be NULL */
  DLTensor* slot_mapping;            /* [num_actual_tokens (+ padding)], may be NULL */
  DLTensor* logits_indices_padded;   /* [>= num_logits_indices], may be NULL */
  int64_t num_reqs;
  int64_t num_actual_tokens;
  int64_t max_query_len;
  int64_t max_seq_len;
  int64_t num_logits_indices;        /* meaningful only with logits_indices_padded */
  int32_t causal;                    /* 1 = causal */
  int32_t reserved0;                 /* set to 0; a metadata struct a call reads with another
                                        value is CATTN_INVALID_ARGUMENT (since 1.1) */
  /* Since 1.1: vLLM's newer CommonAttentionMetadata fields. A call reads and writes them only
   * when the struct's struct_size covers them (CATTN_COMMON_ATTN_METADATA_SIZE_1_1); a 1.0
   * struct (CATTN_COMMON_ATTN_METADATA_SIZE_1_0) behaves as these fields were NULL / not given,
   * and nothing past its end is read or written. Each tensor may be NULL (vLLM's None). */
  DLTensor* positions;               /* [num_actual_tokens (+ padding)] token positions */
  DLTensor* is_prefilling;           /* [num_reqs] bool (8-bit, e.g. kDLUInt 8): 1 while the
                                        request is still in its prompt */
  DLTensor* causal_per_req;          /* [num_reqs] bool: vLLM's `causal` when it is a tensor;
                                        when set it takes precedence over the int `causal` */
  DLTensor* dcp_local_seq_lens;      /* [num_reqs] this DCP rank's sequence lengths */
  DLTensor* dcp_local_seq_lens_cpu;  /* host mirror of dcp_local_seq_lens */
  DLTensor* seq_lens_cpu_upper_bound; /* [num_reqs] host: an upper bound of seq_lens (exact for
                                         prefill rows) */
  DLTensor* encoder_seq_lens;        /* [num_reqs] cross-attention encoder lengths */
  DLTensor* encoder_seq_lens_cpu;    /* host mirror of encoder_seq_lens */
  int64_t max_logits_per_req;        /* the most logits indices of one request; 0 or
                                        negative (CATTN_NOT_GIVEN, the _INIT value) = vLLM's
                                        None, so a zero-initialised struct means "not given" */
} cattn_common_attn_metadata_t;
/* A negative int64 field documented as optional: vLLM's None. Since: 1.1 */
#define CATTN_NOT_GIVEN ((int64_t)-1)
#define CATTN_COMMON_ATTN_METADATA_SIZE ((size_t)sizeof(cattn_common_attn_metadata_t))
/* The struct_size of a 1.0 struct (ending at reserved0) and of a 1.1 one. Since: 1.1 */
#define CATTN_COMMON_ATTN_METADATA_SIZE_1_0 \
  ((size_t)(offsetof(cattn_common_attn_metadata_t, reserved0) + sizeof(int32_t)))
#define CATTN_COMMON_ATTN_METADATA_SIZE_1_1 \
  ((size_t)(offsetof(cattn_common_attn_metadata_t, max_logits_per_req) + sizeof(int64_t)))
#define CATTN_COMMON_ATTN_METADATA_INIT \
  { CATTN_COMMON_ATTN_METADATA_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    0, 0, 0, 0, 0, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, CATTN_NOT_GIVEN }

/* ============================================================================================
 * KV-cache layout (get_kv_cache_layout, is_valid_kv_cache_layout)
 * ========================================================================================== */

/* The 1.0 values UNSET, NHD and HND keep their numbers and their meaning for the 1.0 calls
 * below, which accept and return only those. Since 1.1 the enum also names the six physical
 * layouts of vLLM's KVCacheLayout (see "KV-cache layouts, six kinds" below): NHD is LBNHC and
 * HND is LBHNC (the same values), and LHBNC, BLHNC, BLNHC and BHLNC are new. */
typedef enum cattn_kv_cache_layout_e {
  CATTN_KV_CACHE_LAYOUT_UNSET = 0, /* "no preference" in inputs; never a result */
  CATTN_KV_CACHE_LAYOUT_NHD = 1,
  CATTN_KV_CACHE_LAYOUT_HND = 2,
  /* 1.1 */
  CATTN_KV_CACHE_LAYOUT_LBNHC = CATTN_KV_CACHE_LAYOUT_NHD, /* [L, B, N, H, C] */
  CATTN_KV_CACHE_LAYOUT_LBHNC = CATTN_KV_CACHE_LAYOUT_HND, /* [L, B, H, N, C] (identity) */
  CATTN_KV_CACHE_LAYOUT_LHBNC = 3,                         /* [L, H, B, N, C] */
  CATTN_KV_CACHE_LAYOUT_BLHNC = 4,                         /* [B, L, H, N, C] */
  CATTN_KV_CACHE_LAYOUT_BLNHC = 5,                         /* [B, L, N, H, C] */
  CATTN_KV_CACHE_LAYOUT_BHLNC = 6                          /* [B, H, L, N, C] */
} cattn_kv_cache_layout_t;

/* Bit for `layout` in cattn_kv_cache_layout_args.supported_mask. */
#define CATTN_KV_CACHE_LAYOUT_BIT(layout) (1u << (unsigned)(layout))

/* Name of the environment variable that plays the part of VLLM_KV_CACHE_LAYOUT. */
#define CATTN_KV_CACHE_LAYOUT_ENV "CATTN_KV_CACHE_LAYOUT"

/* Checks whether `value` names a KV-cache layout ("NHD" or "HND", exact and case-sensitive,
 * as vLLM's is_valid_kv_cache_layout).
 * value: NUL-terminated host string, not NULL. valid: host pointer, not NULL.
 * Reads: value. Writes: *valid (1 or 0). Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer).
 * Stream: synchronous. Lifetime: value is read during the call only.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_is_valid_kv_cache_layout(const char* value, int32_t* valid);

/* Returns the name of a layout ("NHD", "HND"), or NULL for any other value, the layouts added
 * in 1.1 (LHBNC, ...) included: their names come from cattn_kv_cache_layout_get_properties.
 * Returns: the name or NULL; cannot fail. Stream: synchronous. Lifetime: static.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API const char* cattn_kv_cache_layout_name(cattn_kv_cache_layout_t layout);

/* Sets (or, with CATTN_KV_CACHE_LAYOUT_UNSET, clears) the context's layout override, vLLM's
 * _KV_CACHE_LAYOUT_OVERRIDE. Unlike vLLM's lru_cache, later resolutions see the new value.
 * ctx: a live context. layout: UNSET, NHD or HND.
 * Writes: the context. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, layout out of range).
 * Stream: synchronous. Lifetime: -.
 * Thread safety: any thread; the value is published atomically. Since: 1.0 */
CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_override(
    cattn_context_t* ctx, cattn_kv_cache_layout_t layout);

typedef struct cattn_kv_cache_layout_args {
  size_t struct_size;
  /* in: the backend's layouts as CATTN_KV_CACHE_LAYOUT_BIT ORed together; 0 = any layout. */
  uint32_t supported_mask;
  /* in: 1 = read CATTN_KV_CACHE_LAYOUT from the process environment when env_value is NULL. */
  int32_t read_environment;
  /* in: the user's setting as text ("NHD"/"HND"), vLLM's VLLM_KV_CACHE_LAYOUT; NULL = unset. */
  const char* env_value;
  /* in: the KV connector's preferred layout; UNSET = no connector preference. */
  cattn_kv_cache_layout_t connector_layout;
  /* out: the resolved layout. */
  cattn_kv_cache_layout_t layout;
} cattn_kv_cache_layout_args_t;
#define CATTN_KV_CACHE_LAYOUT_ARGS_SIZE ((size_t)sizeof(cattn_kv_cache_layout_args_t))
#define CATTN_KV_CACHE_LAYOUT_ARGS_INIT \
  { CATTN_KV_CACHE_LAYOUT_ARGS_SIZE, 0u, 0, NULL, CATTN_KV_CACHE_LAYOUT_UNSET, \
    CATTN_KV_CACHE_LAYOUT_UNSET }

/* Resolves the KV-cache layout with vLLM's precedence: the context's override > the user's
 * setting (env_value, or the environment) > the connector's preference > NHD.
 * ctx: a live context, or NULL (no override). args: host pointer, not NULL.
 * Reads: the context, args, and with read_environment the environment (getenv).
 * Writes: args->layout. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, ctx not live, a user
 *   setting that is not a valid layout - vLLM asserts here -, connector_layout out of range,
 *   supported_mask bits that name no layout); CATTN_NOT_SUPPORTED (the resolved layout is not
 *   in supported_mask).
 * Stream: synchronous. Lifetime: env_value is read during the call only.
 * Thread safety: any thread. Reading the environment races with a concurrent setenv/putenv
 *   elsewhere in the process; pass env_value to avoid that. Since: 1.0 */
CATTN_API cattn_status_t cattn_get_kv_cache_layout(const cattn_context_t* ctx,
                                                   cattn_kv_cache_layout_args_t* args);

/* ============================================================================================
 * KV-cache layouts, six kinds (KVCacheLayout, get_flashinfer_layout_string,
 * get_supported_kv_cache_layouts, resolve_kv_cache_layout, record_kv_cache_layout)
 * ========================================================================================== */

/* The logical shape of a KV-cache group is always [L, B, H, N, C]: axis 0 = L (layer), 1 = B
 * (block, page), 2 = H (KV head), 3 = N (token slot in the block), 4 = C (content; bytes in
 * vLLM, any unit here). A layout's stride order is a permutation: stride_order[k] is the logical
 * axis stored at physical position k, outermost first.
 *
 * Iteration order. vLLM iterates its layouts in enum order LBHNC, LBNHC, LHBNC, BLHNC, BLNHC,
 * BHLNC; that order breaks ties in cattn_get_supported_kv_cache_layouts and lists the valid
 * names in messages. It is not the numeric order of the values (LBHNC is 2, LBNHC is 1): use
 * cattn_kv_cache_layout_properties_t.order, or CATTN_KV_CACHE_LAYOUTS_INIT below. */

/* Number of layouts (valid cattn_kv_cache_layout_t values other than UNSET). Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_COUNT 6

/* The layouts in vLLM's iteration order, as an initializer for an array of
 * CATTN_KV_CACHE_LAYOUT_COUNT elements. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUTS_INIT                                                      \
  { CATTN_KV_CACHE_LAYOUT_LBHNC, CATTN_KV_CACHE_LAYOUT_LBNHC, CATTN_KV_CACHE_LAYOUT_LHBNC, \
    CATTN_KV_CACHE_LAYOUT_BLHNC, CATTN_KV_CACHE_LAYOUT_BLNHC, CATTN_KV_CACHE_LAYOUT_BHLNC }

/* Parses a layout name, as vLLM's _layout_from_name: "NHD" means LBNHC and "HND" means LBHNC;
 * otherwise the name must be one of the six canonical names, exactly (case-sensitive, no
 * surrounding space).
 * name: NUL-terminated host string, not NULL. layout: host pointer, not NULL.
 * Reads: name. Writes: *layout. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer; an unknown name - vLLM raises
 *   ValueError -, the message listing the valid layouts).
 * Stream: synchronous. Lifetime: name is read during the call only.
 * Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_kv_cache_layout_from_name(const char* name,
                                                         cattn_kv_cache_layout_t* layout);

/* The fixed properties of one layout (vLLM's KVCacheLayout members and their properties). */
typedef struct cattn_kv_cache_layout_properties {
  size_t struct_size;
  /* out: the logical axis at each physical position, outermost first (vLLM's value). */
  int32_t stride_order[5];
  /* out: the physical order of the per-layer 4-D view [B, H, N, C] (axes 0..3): stride_order
   * without L, every other axis less one. */
  int32_t layer_view_order[4];
  int32_t is_layer_compact;    /* out: 1 when L is outermost */
  int32_t is_block_contiguous; /* out: 1 when H, N, C are the three innermost, in that order */
  int32_t is_block_compact;    /* out: 1 when L and B are the two outermost (one page is one
                                  contiguous run of H*N*C) */
  int32_t is_block_outermost;  /* out: 1 when B is outermost */
  int32_t order;               /* out: position in vLLM's iteration order, 0 (LBHNC) to 5 */
  const char* name;            /* out: the canonical name ("LBNHC", never "NHD"); static */
  /* out: FlashInfer's name ("NHD" or "HND"); NULL for LHBNC, which has none (see
   * cattn_get_flashinfer_layout_string). Static. */
  const char* flashinfer_layout;
} cattn_kv_cache_layout_properties_t;
#define CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE ((size_t)sizeof(cattn_kv_cache_layout_properties_t))
#define CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT \
  { CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE, {0, 0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0, 0, 0, NULL, \
    NULL }

/* Describes `layout`. The six layouts (1 = LBNHC = NHD, ..., see the enum):
 *   layout stride_order layer_view layer_compact block_contiguous block_compact outermost FI
 *   LBHNC  0 1 2 3 4    0 1 2 3    1             1                1             0        HND
 *   LBNHC  0 1 3 2 4    0 2 1 3    1             0                1             0        NHD
 *   LHBNC  0 2 1 3 4    1 0 2 3    1             0                0             0        -
 *   BLHNC  1 0 2 3 4    0 1 2 3    0             1                1             1        HND
 *   BLNHC  1 0 3 2 4    0 2 1 3    0             0                1             1        NHD
 *   BHLNC  1 2 0 3 4    0 1 2 3    0             0                0             1        HND
 * layout: one of the six (UNSET is not a layout). props: host pointer, not NULL, struct_size set.
 * Reads: nothing else. Writes: *props (the fields its struct_size covers). Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (props NULL or small struct_size, layout not one
 *   of the six).
 * Stream: synchronous. Lifetime: the strings are static. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_kv_cache_layout_get_properties(
    cattn_kv_cache_layout_t layout, cattn_kv_cache_layout_properties_t* props);

/* Gives FlashInfer's name of `layout`, as vLLM's get_flashinfer_layout_string: "NHD" for LBNHC
 * and BLNHC, "HND" for LBHNC, BLHNC and BHLNC.
 * layout: one of the six. out: host pointer, not NULL; receives a static string.
 * Writes: *out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (out NULL, layout not one of the six);
 *   CATTN_NOT_SUPPORTED (LHBNC, which FlashInfer has no name for; vLLM asserts).
 * Stream: synchronous. Lifetime: static. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_get_flashinfer_layout_string(cattn_kv_cache_layout_t layout,
                                                            const char** out);

typedef struct cattn_kv_cache_layout_strides_args {
  size_t struct_size;
  cattn_kv_cache_layout_t layout; /* in: one of the six */
  int32_t reserved0;              /* set to 0 */
  int64_t sizes[5];               /* in: the logical sizes L, B, H, N, C, each >= 0 */
  int64_t strides[5];             /* out: the element stride of each logical axis L..C */
  int64_t physical_shape[5];      /* out: sizes[stride_order[k]] for k = 0..4 */
  int64_t numel;                  /* out: L * B * H * N * C */
} cattn_kv_cache_layout_strides_args_t;
#define CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE \
  ((size_t)sizeof(cattn_kv_cache_layout_strides_args_t))
#define CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT \
  { CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE, CATTN_KV_CACHE_LAYOUT_UNSET, 0, {0, 0, 0, 0, 0}, \
    {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 0 }

/* Computes the strides of the logical [L, B, H, N, C] view of a compact buffer stored in
 * `layout`'s physical order: strides[stride_order[k]] = the product of physical_shape[j] for
 * j > k, a size of 0 counting as 1 there (as torch's contiguous strides, so a view with an
 * empty axis still has the strides torch gives it). Strides are in elements of C's unit.
 * args: host pointer, not NULL.
 * Reads: args. Writes: args->strides, physical_shape, numel. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, layout not one of
 *   the six, reserved0 not 0 (since 1.1.0), a negative size, a product that overflows int64 -
 *   the message names the axis).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_kv_cache_layout_strides(cattn_kv_cache_layout_strides_args_t* args);

/* In cattn_get_supported_kv_cache_layouts_args.backend_counts: the backend declares nothing
 * (its supported_kv_cache_layouts() returns None; any layout works). Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUTS_NONE (-1)

typedef struct cattn_get_supported_kv_cache_layouts_args {
  size_t struct_size;
  int64_t num_backends; /* in: >= 0 */
  /* in: [num_backends] host array, NULL when num_backends is 0: how many layouts each backend
   * declares (>= 0), or CATTN_KV_CACHE_LAYOUTS_NONE. */
  const int64_t* backend_counts;
  /* in: the declared lists back to back, most preferred first, in backend order (backends
   * with NONE take no entries): sum of the non-NONE counts entries; NULL when that is 0. */
  const cattn_kv_cache_layout_t* layouts;
  cattn_kv_cache_layout_t* out; /* in: host array of out_capacity entries (NULL when 0) */
  int64_t out_capacity;         /* in: entries available at out */
  int64_t num_out;              /* out: entries written to out */
} cattn_get_supported_kv_cache_layouts_args_t;
#define CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE \
  ((size_t)sizeof(cattn_get_supported_kv_cache_layouts_args_t))
#define CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT \
  { CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE, 0, NULL, NULL, NULL, 0, 0 }

/* Combines one worker's backends' layout preferences, as vLLM's get_supported_kv_cache_layouts:
 *  1. Backends that declare NONE are skipped; when none declares, the answer is the default
 *     preference LBNHC, LBHNC, BLNHC, BLHNC, BHLNC, LHBNC.
 *  2. When every declared list equals the first (same layouts, same order, same length), the
 *     answer is the first list as given (duplicates included).
 *  3. Otherwise each declaring backend votes for its first entry; the answer is the
 *     intersection of the declared sets ordered by votes, most first, ties (zero votes
 *     included) in the iteration order above. Orders beyond the first entries are ignored.
 * vLLM compares the lists with Python's ==, under which a tuple never equals a list, so a
 * tuple and a list of the same layouts take step 3 there (which can reorder them). C has one
 * kind of sequence: equal contents always take step 2, which is what vLLM does whenever the
 * backends return the same kind.
 * args: host pointer, not NULL; the arrays are host memory.
 * Reads: the arrays. Writes: out[0..num_out), args->num_out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, a negative count,
 *   a NULL array that must hold entries, a value that is not one of the six layouts, out
 *   overlapping args or an input array, an empty declared list in step 3 - vLLM fails unpacking it
 *   -, an empty intersection - vLLM raises ValueError -, the message listing the declared lists);
 *   CATTN_INSUFFICIENT_SIZE
 *   (out_capacity below the answer's length, which the message gives; the answer never
 *   exceeds max(6, first declared list's length)).
 * Stream: synchronous. Lifetime: the arrays are read during the call only.
 * Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_get_supported_kv_cache_layouts(
    cattn_get_supported_kv_cache_layouts_args_t* args);

typedef struct cattn_resolve_kv_cache_layout_args {
  size_t struct_size;
  /* in: one list per worker (vLLM's supported_layouts): num_workers >= 0 lists of layout
   * names (aliases allowed), worker_counts[w] names each, back to back in worker_names. */
  int64_t num_workers;
  const int64_t* worker_counts;   /* [num_workers] host, NULL when num_workers is 0 */
  const char* const* worker_names; /* [sum of worker_counts] host, NUL-terminated names */
  /* in: the KV-cache specs' (num_heads, num_states, page_size_bytes), num_specs >= 0 each
   * (vLLM's kv_cache_specs; 0 = None). Only whether they differ matters. */
  int64_t num_specs;
  const int64_t* spec_num_heads;
  const int64_t* spec_num_states;
  const int64_t* spec_page_size_bytes;
  /* in: the user's setting (vLLM's VLLM_KV_CACHE_LAYOUT) as a name; NULL = unset. */
  const char* env_value;
  /* in: 1 = read CATTN_KV_CACHE_LAYOUT from the process environment when env_value is NULL. */
  int32_t read_environment;
  int32_t reserved0; /* set to 0 */
  /* in: the KV connector's preferred layout name (vLLM's get_kv_connector_cache_layout);
   * NULL = no connector or no preference. */
  const char* connector_layout;
  cattn_kv_cache_layout_t layout; /* out: the resolved layout */
  /* out: 1 when the connector's layout was not a candidate and the first candidate was used
   * instead (vLLM logs a warning then); 0 otherwise. */
  int32_t connector_fell_back;
  /* out: 1 when the context already held a layout (a preset, or an earlier resolution), which
   * won outright; 0 otherwise. */
  int32_t from_preset;
  int32_t reserved1; /* set to 0 */
} cattn_resolve_kv_cache_layout_args_t;
#define CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE \
  ((size_t)sizeof(cattn_resolve_kv_cache_layout_args_t))
#define CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT \
  { CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, \
    NULL, CATTN_KV_CACHE_LAYOUT_UNSET, 0, 0, 0 }

/* The longest layout name a context stores (cattn_context_set_kv_cache_layout_preset), in
 * bytes without the NUL. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_NAME_MAX 31

/* Sets (or, with NULL, clears) the context's resolved KV-cache layout name as written, vLLM's
 * explicit cache_config.kv_cache_layout: an alias stays "NHD", and a name is not checked until
 * it is used (cattn_resolve_kv_cache_layout, cattn_get_resolved_kv_cache_layout and
 * cattn_record_kv_cache_layout report an unknown one, as vLLM does).
 * ctx: a live context. name: NUL-terminated host string or NULL.
 * Writes: the context. Allocates: nothing (the name is copied into the context).
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, a name longer than
 *   CATTN_KV_CACHE_LAYOUT_NAME_MAX bytes, which cannot be a layout).
 * Stream: synchronous. Lifetime: name is copied. Thread safety: any thread (the context's
 *   layout state is guarded by a lock). Since: 1.1 */
CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_preset(cattn_context_t* ctx,
                                                                  const char* name);

/* Resolves one KV-cache layout for the whole model, as vLLM's resolve_kv_cache_layout, with
 * its precedence:
 *  1. A layout the context already holds (a preset, an earlier resolution or record) wins,
 *     parsed (an alias is accepted), checked against nothing; from_preset = 1.
 *  2. There must be at least one worker and no worker's list may be empty.
 *  3. Every worker's list must equal the first's, name by name ("NHD" and "LBNHC" differ).
 *  4. The candidates are the first list, parsed.
 *  5. When the specs hold more than one distinct (num_heads, num_states, page_size_bytes),
 *     only block-compact candidates (LBHNC, LBNHC, BLHNC, BLNHC) remain; none left is an error.
 *  6. A user setting (env_value, or the environment) must parse and be a candidate.
 *  7. Otherwise a connector preference must parse; when it is not a candidate the first
 *     candidate is used and connector_fell_back = 1.
 *  8. Otherwise the first candidate.
 * The result's canonical name is stored in the context (step 1 stores nothing; the context
 * keeps the preset as written).
 * ctx: a live context (it holds the resolved state; vLLM's cache_config). args: host pointer.
 * Reads: the context, args and its arrays, the environment with read_environment.
 * Writes: args->layout, connector_fell_back, from_preset; the context's layout.
 * Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, args NULL, small
 *   struct_size, reserved0 or reserved1 not 0, a negative count, a NULL array that must hold
 *   entries, a NULL name, and every failure vLLM raises: an unknown preset, no worker or an
 *   empty list (vLLM asserts), workers that disagree (asserts), an unknown name in the first
 *   list, mixed specs with no block-compact candidate, an unknown user setting or one that is
 *   not a candidate, an unknown connector layout; the message names the argument and lists
 *   what was valid).
 *   On failure the context is left as it was.
 * Stream: synchronous. Lifetime: the arrays and strings are read during the call only.
 * Thread safety: any thread; the whole resolution holds the context's lock, so of concurrent
 *   resolutions one decides and the others return its result as in step 1. Reading the
 *   environment races with a concurrent setenv elsewhere; pass env_value to avoid that.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_resolve_kv_cache_layout(
    cattn_context_t* ctx, cattn_resolve_kv_cache_layout_args_t* args);

/* Adopts a layout resolved elsewhere (the engine core), as vLLM's record_kv_cache_layout: parses
 * `name`; when the context already holds a name that differs from the parsed layout's canonical
 * name, as a string, fails (so a preset "NHD" and a record of "LBNHC" conflict, as in vLLM);
 * otherwise stores the canonical name.
 * ctx: a live context. name: NUL-terminated host string, not NULL.
 * Writes: the context. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, name NULL or unknown, a
 *   context already resolved to another name; the context is then unchanged).
 * Stream: synchronous. Lifetime: name is read during the call only.
 * Thread safety: any thread (under the context's lock). Since: 1.1 */
CATTN_API cattn_status_t cattn_record_kv_cache_layout(cattn_context_t* ctx, const char* name);

/* Gives the context's resolved layout, as vLLM's CacheConfig.get_resolved_kv_cache_layout.
 * ctx: a live context. layout: host pointer, not NULL.
 * Reads: the context. Writes: *layout. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, layout NULL, nothing
 *   resolved yet, a preset that names no layout).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread (under the context's lock).
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_get_resolved_kv_cache_layout(const cattn_context_t* ctx,
                                                            cattn_kv_cache_layout_t* layout);

/* ============================================================================================
 * DCP local sequence lengths (get_dcp_local_seq_lens)
 * ========================================================================================== */

/* dcp_rank value that asks for the lengths of every rank (vLLM's dcp_rank=None). */
#define CATTN_DCP_ALL_RANKS (-1)

typedef struct cattn_dcp_local_seq_lens_args {
  size_t struct_size;
  const DLTensor* seq_lens;   /* in: [B] int32/int64, values in [0, INT32_MAX] (any shape
                                 with CATTN_DCP_SHAPE_PRESERVE) */
  int64_t dcp_size;           /* in: >= 1 */
  int64_t dcp_rank;           /* in: [0, dcp_size) or CATTN_DCP_ALL_RANKS */
  int64_t dcp_kv_cache_interleave_size; /* in: >= 1, and dcp_size * this <= INT32_MAX */
  DLTensor* out;              /* out: [B] for one rank, [B, dcp_size] for all ranks (when
                                 dcp_size == 1, [B] as vLLM returns, or [B, 1]); int32/int64;
                                 same device as seq_lens */
  cattn_stream_t stream;      /* CUDA tensors only */
  /* 1.1 */
  int64_t shape_mode;         /* in: a cattn_dcp_shape_mode_t value; a 1.0 caller's struct
                                 without this field, and the _INIT value, mean
                                 CATTN_DCP_SHAPE_1_0 */
} cattn_dcp_local_seq_lens_args_t;
#define CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE ((size_t)sizeof(cattn_dcp_local_seq_lens_args_t))
#define CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT \
  { CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE, NULL, 1, CATTN_DCP_ALL_RANKS, 1, NULL, NULL, \
    CATTN_DCP_SHAPE_1_0 }

/* How cattn_get_dcp_local_seq_lens shapes its input and output (args->shape_mode, Since: 1.1).
 * CATTN_DCP_SHAPE_1_0: the 1.0 contract, unchanged: seq_lens is [B]; out is [B] for one rank,
 *   [B, dcp_size] for all ranks, and [B] or [B, 1] for all ranks of a group of 1 (the seed
 *   squeezed that axis away).
 * CATTN_DCP_SHAPE_PRESERVE: vLLM's newest semantics: seq_lens has any shape S of 0 to 7
 *   dimensions (0-D is one length); out has shape S for one rank and S + [dcp_size] for all
 *   ranks, the trailing rank axis kept even when dcp_size == 1. Strided and stride-0 seq_lens
 *   views are read as they are; out may not broadcast. */
typedef enum cattn_dcp_shape_mode_e {
  CATTN_DCP_SHAPE_1_0 = 0,
  CATTN_DCP_SHAPE_PRESERVE = 1
} cattn_dcp_shape_mode_t;

/* Computes how many KV tokens of each request each DCP rank stores, with the KV cache dealt out
 * round-robin in runs of dcp_kv_cache_interleave_size tokens. vLLM computes in int32, so the
 * inputs are bounded to where that is exact: dcp_size * dcp_kv_cache_interleave_size at most
 * INT32_MAX (vLLM's rank offsets wrap past it), host seq_lens in [0, INT32_MAX]. A [B] out may
 * be the very same view as seq_lens (same dtype and layout), computing in place.
 * Since 1.1, args->shape_mode = CATTN_DCP_SHAPE_PRESERVE takes seq_lens of any shape (see
 * cattn_dcp_shape_mode_t); a one-rank out may then be the same view as seq_lens too. An
 * unknown shape_mode is CATTN_INVALID_ARGUMENT.
 * Reads: args, seq_lens. Writes: out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shapes, dtypes, size/rank/interleave out of
 *   range, a host seq_len negative or above INT32_MAX, out overlapping seq_lens other than as
 *   the same view; since 1.1 an unknown shape_mode, and a struct_size above the 1.0 struct's
 *   but below CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE); CATTN_INSUFFICIENT_SIZE (out too small);
 *   CATTN_NOT_SUPPORTED (CUDA tensors this build or machine cannot serve); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream. The device seq_lens cannot be
 *   range-checked: one outside [0, INT32_MAX] is computed as vLLM does, wrapped to int32 first
 *   (a negative length gives vLLM's floor-division results); every result fits either dtype.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_get_dcp_local_seq_lens(const cattn_dcp_local_seq_lens_args_t* args);

/* ============================================================================================
 * PCP query restore index (get_pcp_query_restore_idx)
 * ========================================================================================== */

typedef struct cattn_pcp_query_restore_idx_args {
  size_t struct_size;
  const DLTensor* cu_num_tokens; /* in: [R + 1] int32/int64, non-decreasing */
  DLTensor* restore_idx;         /* out: [capacity >= size] int32/int64; entries past `size`
                                    are set to -1 */
  cattn_stream_t stream;         /* CUDA tensors only */
} cattn_pcp_query_restore_idx_args_t;
#define CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE ((size_t)sizeof(cattn_pcp_query_restore_idx_args_t))
#define CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT \
  { CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE, NULL, NULL, NULL }

/* Computes the exact length of the restore index for a host cu_num_tokens: twice the sum of the
 * per-request half lengths (a length-1 decode request contributes nothing).
 * cu_num_tokens: host [R + 1] int32/int64. size: host pointer, not NULL.
 * Reads: cu_num_tokens. Writes: *size. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shape, dtype, device tensor, decreasing, an
 *   odd length above 1, a broadcast of more than CATTN_MAX_BROADCAST_ELEMENTS).
 * Stream: synchronous. Lifetime: cu_num_tokens borrowed for the call.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx_size(const DLTensor* cu_num_tokens,
                                                              int64_t* size);

/* Computes the index that restores the original token order after every request's tokens were
 * split into a head half and a tail half and concatenated as [all heads, all tails]: vLLM's
 * argsort result. Requests of length 1 (decode) take no part (a decode-only batch gives an
 * empty index).
 * Reads: args, cu_num_tokens. Writes: restore_idx. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (shape, dtype, decreasing cu_num_tokens, an odd
 *   length above 1, a value that does not fit the output dtype, restore_idx overlapping
 *   cu_num_tokens, a broadcast cu_num_tokens of more than CATTN_MAX_BROADCAST_ELEMENTS);
 *   CATTN_INSUFFICIENT_SIZE (capacity < size); CATTN_NOT_SUPPORTED (CUDA tensors this build or
 *   machine cannot serve, a device tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream, reading the device
 *   cu_num_tokens. There the data cannot be checked: the size is not compared with the
 *   capacity (cu_num_tokens[R] - cu_num_tokens[0] entries always suffice; fewer truncate), an
 *   odd length gives vLLM's answer (its middle token is left out), and a decreasing entry
 *   counts as an empty request.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx(
    const cattn_pcp_query_restore_idx_args_t* args);

/* ============================================================================================
 * Fused PCP Q/K/V select (fused_pcp_qkv_select)
 * ========================================================================================== */

typedef struct cattn_fused_pcp_qkv_select_args {
  size_t struct_size;
  const DLTensor* q;     /* in: [Nq, H, Dq], this rank's queries; last dim stride 1 (any
                            when Dq <= 1), any strides in dims 0 and 1 */
  const DLTensor* k;     /* in: [>= W * query_start_loc[B], H, Dk], keys of all ranks; same
                            stride rules as q */
  const DLTensor* v;     /* in: [>= W * query_start_loc[B], H, Dv], values of all ranks; same
                            stride rules as q */
  const DLTensor* query_start_loc; /* in: [B + 1] (B >= 0) int32/int64, entries even and
                                      >= 0, non-decreasing, query_start_loc[B] <= Nq */
  int64_t pcp_world_size; /* in: W >= 1 */
  int64_t pcp_rank;       /* in: r in [0, W) */
  DLTensor* q_head;       /* out: [Nq / 2, H, Dq], dtype of q, compact */
  DLTensor* k_head;       /* out: [Nq / 2 * (r + 1), H, Dk], dtype of k, compact */
  DLTensor* v_head;       /* out: [Nq / 2 * (r + 1), H, Dv], dtype of v, compact */
  DLTensor* q_tail;       /* out: [Nq / 2, H, Dq] */
  DLTensor* k_tail;       /* out: [Nq / 2 * (2W - r), H, Dk] */
  DLTensor* v_tail;       /* out: [Nq / 2 * (2W - r), H, Dv] */
  cattn_stream_t stream;  /* CUDA tensors only */
} cattn_fused_pcp_qkv_select_args_t;
#define CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE ((size_t)sizeof(cattn_fused_pcp_qkv_select_args_t))
#define CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT \
  { CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, 0, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/* Selects, for every request, the head and tail halves of this rank's queries and the K/V rows
 * each half attends to, as vLLM's Triton kernel does, in one pass. For request i with start
 * s = query_start_loc[i] and half = (query_start_loc[i+1] - s) / 2: q_head/q_tail rows
 * [s/2, s/2 + half) get q rows [s, s + half) / [s + half, s + 2 half); the request's K/V
 * segment, rows [W s, W s + 2W half), is cut into 2W blocks of `half` rows, and blocks 0..r go
 * to k_head/v_head rows from s/2 * (r + 1) on, blocks 0..2W-r-1 to k_tail/v_tail rows from
 * s/2 * (2W - r) on. Output rows past query_start_loc[B] / 2 (CUDA-graph padding) are not
 * written. Elements of 1, 2, 4 or 8 bytes (fp8 to fp64); Dq, Dk and Dv may differ (MLA);
 * tensors past 2^31 elements are fine (offsets are 64-bit). vLLM drops the last token of an
 * odd-length request and reads out of bounds past the end of q, k or v; the host path refuses
 * both.
 * Reads: args, q, k, v, query_start_loc. Writes: the six outputs. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or tensor, small struct_size, ndim, H
 *   differing between q, k and v, a last-dim stride other than 1, query_start_loc empty or not
 *   int32/int64, W < 1, r outside [0, W), an output whose dtype, H or D differs from its input,
 *   a non-compact output, an output with more rows than above, tensors on different devices,
 *   an output overlapping an input or another output, a broadcast query_start_loc of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries, sizes overflowing int64; on the host also a
 *   negative, odd or decreasing query_start_loc, query_start_loc[B] > Nq, k or v shorter than
 *   W * query_start_loc[B]); CATTN_INSUFFICIENT_SIZE (an output with fewer rows than above);
 *   CATTN_NOT_SUPPORTED (an element width not 1, 2, 4 or 8 bytes, an unsupported device, CUDA
 *   tensors this build or machine cannot serve, on the device a token row of 2 GiB or more or a
 *   query_start_loc off its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream. The device query_start_loc is
 *   not read back, so it cannot be checked: its entries are taken as clamped to [0, Nq], every
 *   row is bounds-checked against the tensors' shapes, and a row that would fall outside them
 *   is skipped (bad entries give wrong rows, never an out-of-bounds access). On sm_90 and newer
 *   (since 1.1) the kernel is a programmatic dependent launch: it may be scheduled while the
 *   kernel before it on the stream drains, but reads and writes no memory until that kernel
 *   has completed, so stream order (CUDA-graph capture included) is as for any kernel; and it
 *   lets a dependent launch queued after it be scheduled once all of its own blocks have
 *   started.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_fused_pcp_qkv_select(const cattn_fused_pcp_qkv_select_args_t* args);

/* ============================================================================================
 * PCP all-gather + restore (pcp_kv_allgather_and_restore)
 * ========================================================================================== */

/* A communicator over the PCP group: one rank's handle of an NCCL communicator that libcattn
 * either borrows from the engine (cattn_comm_create_borrowed) or creates and owns
 * (cattn_comm_create). It is bound to one CUDA device. Opaque.
 *
 * NCCL is not a link-time dependency. On the first call that needs it, libcattn dlopen()s
 * "libnccl.so.2" (or the file named by CATTN_NCCL_LIBRARY_ENV, read once per process) and
 * resolves every NCCL symbol it uses; a libnccl.so.2 the process has already loaded, such as
 * the engine's, is the one used. NCCL 2.13 or newer is required. When NCCL cannot be loaded,
 * the calls of this section return CATTN_NOT_SUPPORTED with the library's name and the
 * loader's error, and the rest of libcattn works as before. A CPU-only build answers every call
 * of this section with CATTN_NOT_SUPPORTED after its argument checks.
 *
 * NCCL communicators are not thread-safe: a cattn_comm_t may be used by one thread at a time
 * (any thread), and all ranks must make the same collective calls in the same order. Drive the
 * ranks of a group from separate threads or processes: each call completes its own NCCL group
 * before it returns, so one thread cannot interleave several ranks. Each handle also owns one
 * non-blocking CUDA stream and two events on its device, made with the handle and freed with
 * it, onto which cattn_pcp_kv_allgather_and_restore forks work and from which it joins back. */
typedef struct cattn_comm_s cattn_comm_t;

/* Name of the environment variable that replaces "libnccl.so.2" as the library to dlopen (a
 * soname or a path). Read once, by the first call that needs NCCL. */
#define CATTN_NCCL_LIBRARY_ENV "CATTN_NCCL_LIBRARY"

/* Size in bytes of a communicator's unique id (NCCL_UNIQUE_ID_BYTES). */
#define CATTN_COMM_UNIQUE_ID_BYTES 128

/* The rendezvous token of a new communicator: an ncclUniqueId as plain bytes, so that an engine
 * can send it to the other ranks over its own transport. Since: 1.0 */
typedef struct cattn_comm_unique_id {
  uint8_t bytes[CATTN_COMM_UNIQUE_ID_BYTES];
} cattn_comm_unique_id_t;

/* Creates the unique id of a new communicator (ncclGetUniqueId). Call it on one rank and send
 * the bytes to every other rank before they call cattn_comm_create.
 * id: host pointer, not NULL.
 * Writes: *id (on success only). Allocates: nothing of libcattn's (NCCL's bootstrap may).
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (id NULL); CATTN_NOT_SUPPORTED (CPU-only build, NCCL
 *   cannot be loaded); CATTN_NCCL_ERROR (NCCL failed, e.g. no network interface for its
 *   bootstrap).
 * Stream: synchronous; needs no GPU. Lifetime: one id serves one communicator (all of its
 *   ranks); make a fresh one for each. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_comm_get_unique_id(cattn_comm_unique_id_t* id);

/* Creates a communicator of `nranks` ranks from a unique id and owns it (ncclCommInitRank on
 * `cuda_device`). Blocks until all nranks ranks have called it with the same id: call it for
 * every rank concurrently, from one thread or process per rank. It does not time out by itself.
 * id: host pointer, not NULL, from cattn_comm_get_unique_id. nranks: >= 1. rank: in
 * [0, nranks), distinct on every rank. cuda_device: the device ordinal this rank uses (as
 * cudaSetDevice counts), >= 0 and below the device count; the caller's current device is
 * restored before returning. out: host pointer, not NULL.
 * Reads: id. Writes: *out (on success only). Allocates: the handle, its stream and two events,
 *   and NCCL's communicator.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, nranks < 1, rank outside
 *   [0, nranks), cuda_device negative or not below the device count); CATTN_NOT_SUPPORTED
 *   (CPU-only build, NCCL cannot be loaded, no usable CUDA device or driver);
 *   CATTN_NCCL_ERROR (ncclCommInitRank failed: an inconsistent rank or size, an unreachable
 *   peer, ...); CATTN_CUDA_ERROR; CATTN_OUT_OF_MEMORY.
 * Stream: synchronous. Lifetime: the caller owns the handle and frees it with
 *   cattn_comm_destroy, which also destroys the NCCL communicator.
 * Thread safety: any thread; the ranks of one group must call it concurrently. Since: 1.0 */
CATTN_API cattn_status_t cattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                           int32_t rank, int32_t cuda_device, cattn_comm_t** out);

/* Wraps an NCCL communicator that the engine owns; libcattn never destroys it.
 * nccl_comm: an ncclComm_t (blocking or nonblocking) made by the NCCL library libcattn loads
 *   (see cattn_comm_t), not NULL; a nonblocking one still initialising is waited for.
 * out: host pointer, not NULL.
 * Reads: the communicator's rank, size and CUDA device, once. Writes: *out (on success only).
 *   Allocates: the handle, its stream and two events.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer); CATTN_NOT_SUPPORTED (CPU-only
 *   build, NCCL cannot be loaded, no usable CUDA device or driver); CATTN_NCCL_ERROR (NCCL
 *   rejects the communicator, or its nonblocking initialisation failed); CATTN_CUDA_ERROR (the
 *   handle's stream or events); CATTN_OUT_OF_MEMORY.
 * Stream: synchronous. Lifetime: nccl_comm is borrowed and must outlive the handle;
 *   cattn_comm_destroy frees only the handle. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_comm_create_borrowed(void* nccl_comm, cattn_comm_t** out);

/* Destroys a communicator handle; NULL is a no-op, and so is a handle that is not live
 * (destroyed already, or never created), which this thread's last-error message reports. An
 * owned NCCL communicator is destroyed with it (ncclCommDestroy, which waits for the
 * communicator's outstanding work; errors are ignored); a borrowed one is left to its owner.
 * Returns: nothing. Stream: synchronous. Lifetime: the handle is invalid afterwards.
 * Thread safety: no call may use the handle concurrently. Since: 1.0 */
CATTN_API void cattn_comm_destroy(cattn_comm_t* comm);

/* Reports the communicator's rank within its group.
 * comm: a live communicator. rank: host pointer, not NULL; receives a value in [0, size).
 * Reads: the handle (a value read at creation). Writes: *rank. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, comm not live);
 *   CATTN_NOT_SUPPORTED (CPU-only build).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread, also while another thread uses
 *   the communicator. Since: 1.0 */
CATTN_API cattn_status_t cattn_comm_get_rank(const cattn_comm_t* comm, int32_t* rank);

/* Reports the number of ranks in the communicator's group (the PCP world size W).
 * comm: a live communicator. size: host pointer, not NULL; receives a value >= 1.
 * Reads: the handle (a value read at creation). Writes: *size. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, comm not live);
 *   CATTN_NOT_SUPPORTED (CPU-only build).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread, also while another thread uses
 *   the communicator. Since: 1.0 */
CATTN_API cattn_status_t cattn_comm_get_size(const cattn_comm_t* comm, int32_t* size);

typedef struct cattn_pcp_kv_allgather_and_restore_args {
  size_t struct_size;
  cattn_comm_t* comm;             /* in: this rank's handle of the PCP group of W ranks */
  const DLTensor* key;            /* in: [>= num_actual_tokens, ...] this rank's keys on the
                                     comm's device; elements of 1, 2, 4 or 8 bytes; any
                                     strides */
  const DLTensor* value;          /* in: [key's dim 0, ...] this rank's values; its other dims
                                     and dtype may differ from key's (MLA) */
  int64_t num_actual_tokens;      /* in: n, the rows to gather, in [0, key's dim 0]; rows past
                                     it (CUDA-graph padding) are ignored. Same on every rank */
  const DLTensor* restore_idx;    /* in: [M] int32/int64, rows of the gathered [W * n, ...]
                                     tensors; any stride */
  DLTensor* key_out;              /* out: [M, key's other dims], key's dtype, compact */
  DLTensor* value_out;            /* out: [M, value's other dims], value's dtype, compact */
  void* workspace;                /* in: device memory on the comm's device, 256-byte aligned
                                     (as cudaMalloc returns); may be NULL when the workspace
                                     query reports 0 */
  size_t workspace_size;          /* in: bytes at workspace, >= the workspace query's result */
  cattn_stream_t stream;          /* in: a stream of the comm's device; NULL = legacy default */
} cattn_pcp_kv_allgather_and_restore_args_t;
#define CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE \
  ((size_t)sizeof(cattn_pcp_kv_allgather_and_restore_args_t))
#define CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT \
  { CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE, NULL, NULL, NULL, 0, NULL, NULL, NULL, \
    NULL, 0, NULL }

/* Reports the device workspace cattn_pcp_kv_allgather_and_restore needs for these arguments:
 * the gathered key and value, W * n rows each, every piece rounded up to 256 bytes. It depends
 * only on comm's size, key's and value's shapes and dtypes, and num_actual_tokens (not on
 * layouts); the other fields are ignored.
 * args: host pointer, not NULL. size: host pointer, not NULL.
 * Reads: args, the handle. Writes: *size. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, small struct_size, NULL key or
 *   value, ndim 0, value's dim 0 differing from key's, num_actual_tokens outside
 *   [0, key's dim 0], comm NULL or not live, a size overflowing, a dtype with lanes != 1);
 *   CATTN_NOT_SUPPORTED (CPU-only build; an element width other than 8, 16, 32 or 64 bits).
 * Stream: synchronous; touches no device memory. Lifetime: tensors borrowed for the call.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore_workspace_size(
    const cattn_pcp_kv_allgather_and_restore_args_t* args, size_t* size);

/* All-gathers this rank's first n = num_actual_tokens rows of key and value across the PCP
 * group and restores the original token order, as vLLM's pcp_kv_allgather_and_restore: with
 * K_all = [key[:n] of rank 0; ...; key[:n] of rank W-1] (W * n rows), key_out[i] =
 * K_all[restore_idx[i]], and the same for value. Rows may repeat (decode tokens do). Every rank
 * must call it with the same n, the same trailing shapes and dtypes, and in the same order
 * relative to its other collectives on the communicator; that cannot be checked locally. K and
 * V travel in one NCCL group, as bytes (any element type: bf16, fp8, ...), and one restore
 * serves both; rows past 2^31 elements are fine.
 * Reads: args, key[:n], value[:n], restore_idx, and the other ranks' rows through NCCL.
 * Writes: key_out, value_out, the workspace. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or tensor, small struct_size, ndim 0,
 *   value's dim 0 differing from key's, num_actual_tokens outside [0, key's dim 0],
 *   restore_idx not 1-D int32/int64, an output with the wrong ndim, trailing dims or dtype or
 *   more than M rows, a non-compact output, tensors on different devices or not on the comm's
 *   device, comm NULL or not live, a NULL or unaligned workspace where one is needed, outputs
 *   overlapping each other, an input or the workspace, sizes overflowing, a dtype with
 *   lanes != 1);
 *   CATTN_INSUFFICIENT_SIZE (an output with fewer than M rows, workspace_size below the
 *   query's result); CATTN_NOT_SUPPORTED (host tensors - NCCL needs device memory -, CPU-only
 *   build, NCCL cannot be loaded, an element width other than 8-64 bits, restore_idx off
 *   its element alignment, no usable CUDA device); CATTN_NCCL_ERROR; CATTN_CUDA_ERROR.
 * Stream: enqueued on args->stream - a pack kernel when key or value rows are strided, one NCCL
 *   group, the restore kernel - and, for large transfers, part of the restore on the comm's
 *   own stream, forked from args->stream and joined back to it with the comm's events; the call
 *   returns before completion, with no host sync and no allocation, and can be captured in a
 *   CUDA graph as NCCL collectives can. NCCL itself may block the host: the first collective on
 *   a communicator waits until every rank reaches it (NCCL connects lazily), and with a
 *   nonblocking NCCL communicator the call waits until NCCL has enqueued the group. Do not call
 *   it inside an open ncclGroupStart()/ncclGroupEnd(): the restore kernel would be enqueued
 *   before the all-gathers it reads. Device data cannot be checked: a restore_idx entry
 *   outside [0, W * n) (negative included) makes that output row all zero bytes instead of
 *   reading out of bounds (vLLM's index_select raises).
 * Lifetime: tensors and workspace are borrowed; the workspace must not be reused until the
 *   enqueued work has completed.
 * Thread safety: one thread at a time per comm (see cattn_comm_t). Since: 1.0 */
CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore(
    const cattn_pcp_kv_allgather_and_restore_args_t* args);

/* ============================================================================================
 * Causal-conv1d metadata (compute_causal_conv1d_metadata)
 * ========================================================================================== */

/* Value written to batch_ptr and token_chunk_offset_ptr past the programs in use. */
#define CATTN_PAD_SLOT_ID (-1)

typedef struct cattn_causal_conv1d_metadata_args {
  size_t struct_size;
  const DLTensor* query_start_loc_cpu; /* in: host [B + 1] int32/int64, non-decreasing; an
                                          empty tensor is the empty batch (B = 0), as in vLLM */
  int64_t block_m;                /* in: tokens per program (vLLM: 8), >= 1 */
  DLTensor* nums;                 /* out, may be NULL: exactly [B], programs per request,
                                     ceil(len / block_m) */
  DLTensor* mlist;                /* out, may be NULL: [>= tot] request of each program;
                                     entries past tot are not written */
  DLTensor* offsetlist;           /* out, may be NULL: [>= tot] chunk index within its request;
                                     entries past tot are not written */
  DLTensor* batch_ptr;            /* out, may be NULL: [capacity >= tot], mlist then
                                     CATTN_PAD_SLOT_ID up to capacity */
  DLTensor* token_chunk_offset_ptr; /* out, may be NULL: [capacity >= tot], offsetlist then
                                       CATTN_PAD_SLOT_ID up to capacity */
  int64_t tot;                    /* out: number of programs, vLLM's nums.sum(); written on
                                     success even when every tensor output is NULL */
  cattn_stream_t stream;          /* CUDA outputs only */
} cattn_causal_conv1d_metadata_args_t;
#define CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE \
  ((size_t)sizeof(cattn_causal_conv1d_metadata_args_t))
#define CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT \
  { CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE, NULL, 8, NULL, NULL, NULL, NULL, NULL, 0, NULL }
/* The same struct under its utility's name; the name above stays. Since: 1.1 */
typedef cattn_causal_conv1d_metadata_args_t cattn_compute_causal_conv1d_metadata_args_t;
#define CATTN_COMPUTE_CAUSAL_CONV1D_METADATA_ARGS_SIZE CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE
#define CATTN_COMPUTE_CAUSAL_CONV1D_METADATA_ARGS_INIT CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT

/* Computes the number of programs `tot` and the capacity vLLM allocates for batch_ptr and
 * token_chunk_offset_ptr, max(1024, tot) * 2 (any capacity >= tot is accepted by the compute
 * call).
 * query_start_loc_cpu: host [B + 1] int32/int64. block_m: >= 1. tot, capacity: host pointers;
 *   either may be NULL.
 * Reads: query_start_loc_cpu. Writes: *tot, *capacity. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, ndim, dtype or device of
 *   query_start_loc_cpu, a broadcast one of more than CATTN_MAX_BROADCAST_ELEMENTS entries,
 *   block_m < 1, a decreasing query_start_loc_cpu, a length overflowing int64, more than
 *   2^62 - 1 programs, so that the capacity fits int64 - the compute call refuses the same).
 * Stream: synchronous. Lifetime: query_start_loc_cpu borrowed for the call.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_size(
    const DLTensor* query_start_loc_cpu, int64_t block_m, int64_t* tot, int64_t* capacity);

/* Computes causal_conv1d's launch metadata: per-request program counts ceil(len / block_m),
 * the request and chunk index of every program, and the padded launch arrays. Request i owns
 * nums[i] consecutive programs; a zero-length request owns none. Every tensor output is
 * optional; the present ones are 1-D int32/int64 (each its own dtype) on one device.
 * query_start_loc_cpu is a host mirror on every path. vLLM gives 0 programs to a decrease of
 * query_start_loc smaller than block_m and fails on a larger one; libcattn refuses any.
 * Reads: args, query_start_loc_cpu. Writes: the present outputs, args->tot. Allocates:
 *   nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or query_start_loc_cpu, small
 *   struct_size, ndim/dtype/device of any tensor, outputs on different devices, an output with
 *   a zero stride, an output overlapping query_start_loc_cpu or another output, block_m < 1, a
 *   decreasing query_start_loc_cpu, a broadcast one of more than CATTN_MAX_BROADCAST_ELEMENTS
 *   entries, more than 2^62 - 1 programs (as the size query), nums longer than B, a value that
 *   does not fit an int32 output); CATTN_INSUFFICIENT_SIZE (nums shorter than B, another
 *   output shorter than tot); CATTN_NOT_SUPPORTED (CUDA outputs this build or machine cannot
 *   serve, a device output off its element alignment, reported after every other check);
 *   CATTN_CUDA_ERROR.
 * Stream: host outputs - synchronous. CUDA outputs - the host checks query_start_loc_cpu in
 *   full and plans the program offsets from it (tot is written before returning), then
 *   enqueues on args->stream kernels that carry the plan in their parameters: no
 *   device-to-host read, no host sync, no allocation, capturable - and a captured graph
 *   replays the values planned when it was captured. Results equal the host path's, including
 *   what is left unwritten.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata(
    cattn_causal_conv1d_metadata_args_t* args);

typedef struct cattn_causal_conv1d_metadata_device_args {
  size_t struct_size;
  const DLTensor* query_start_loc; /* in: [B + 1] int32/int64 on the device, non-decreasing;
                                      zero-length requests pad a batch to its capacity */
  int64_t block_m;                 /* in: tokens per program (vLLM: 8), >= 1 */
  DLTensor* nums;                  /* out, may be NULL: [B], programs per request */
  DLTensor* mlist;                 /* out, may be NULL: [capacity] request of each program,
                                      CATTN_PAD_SLOT_ID past tot */
  DLTensor* offsetlist;            /* out, may be NULL: [capacity] chunk index within its
                                      request, CATTN_PAD_SLOT_ID past tot */
  DLTensor* batch_ptr;             /* out, may be NULL: [capacity], as mlist */
  DLTensor* token_chunk_offset_ptr; /* out, may be NULL: [capacity], as offsetlist */
  DLTensor* tot;                   /* out, may be NULL: [1] the number of programs */
  cattn_stream_t stream;
} cattn_causal_conv1d_metadata_device_args_t;
#define CATTN_CAUSAL_CONV1D_METADATA_DEVICE_ARGS_SIZE \
  ((size_t)sizeof(cattn_causal_conv1d_metadata_device_args_t))
#define CATTN_CAUSAL_CONV1D_METADATA_DEVICE_ARGS_INIT \
  { CATTN_CAUSAL_CONV1D_METADATA_DEVICE_ARGS_SIZE, NULL, 8, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL }

/* Computes causal_conv1d's launch metadata on the device from the device query_start_loc, so
 * that a captured CUDA graph computes it afresh from the batch written into the same buffers
 * before every replay (cattn_compute_causal_conv1d_metadata plans on the host and replays the
 * values planned at capture). Values equal the host call's; every per-program output is filled
 * to its own length, with CATTN_PAD_SLOT_ID past tot. A capacity of
 * cdiv(max_num_tokens, block_m) + max_num_reqs holds every batch of at most max_num_tokens
 * tokens and max_num_reqs requests; a batch of more programs than an output holds writes the
 * first ones, and tot still reports them all.
 * Reads: args, query_start_loc. Writes: the present outputs. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or query_start_loc, small struct_size,
 *   ndim/dtype of any tensor, a tensor not on query_start_loc's device, host tensors (this
 *   call is for the device; the host has cattn_compute_causal_conv1d_metadata), nums or tot
 *   longer than B entries or one, block_m < 1, an output with a zero stride, overlapping or
 *   overlapping query_start_loc, a broadcast query_start_loc of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries); CATTN_INSUFFICIENT_SIZE (nums or tot shorter);
 *   CATTN_NOT_SUPPORTED (CPU-only build, no usable
 *   device, a tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: one kernel on args->stream, reading query_start_loc on the device: no host sync, no
 *   allocation, capturable and correct on replay. The data cannot be checked there: a
 *   decreasing entry counts as an empty request, and an int32 output keeps the low 32 bits.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_device(
    const cattn_causal_conv1d_metadata_device_args_t* args);

/* ============================================================================================
 * Extend queries (extend_all_queries_by_1, generalised to N)
 * ========================================================================================== */

typedef struct cattn_extend_all_queries_by_n_args {
  size_t struct_size;
  /* in: reads query_start_loc, query_start_loc_cpu, seq_lens, seq_lens_cpu and the scalars. */
  const cattn_common_attn_metadata_t* metadata;
  int64_t n;                        /* in: tokens added to every request, >= 0 */
  DLTensor* new_slot_mapping;       /* in: becomes out->slot_mapping (borrowed), may be NULL */
  /* out: the caller sets out->query_start_loc and out->seq_lens (and out->query_start_loc_cpu,
   * out->seq_lens_cpu when the input has them) to tensors of the input's shapes - they may be
   * the input tensors themselves (in place). The call writes their data, every scalar field and
   * the remaining pointer fields (copied from the input). */
  cattn_common_attn_metadata_t* out;
  cattn_stream_t stream;            /* CUDA tensors only */
  /* in (since 1.1): the DCP group the metadata's dcp_local_seq_lens belong to, needed only when
   * the metadata has dcp_local_seq_lens or dcp_local_seq_lens_cpu (as for
   * cattn_get_dcp_local_seq_lens with one rank). dcp_size 0 (and a 1.0 struct, which lacks the
   * fields) = not given. */
  int64_t dcp_size;
  int64_t dcp_rank;                 /* in [0, dcp_size) */
  int64_t dcp_kv_cache_interleave_size; /* >= 1 */
} cattn_extend_all_queries_by_n_args_t;
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE \
  ((size_t)sizeof(cattn_extend_all_queries_by_n_args_t))
/* The struct_size of a 1.0 args struct (ending at stream). Since: 1.1 */
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0 \
  ((size_t)(offsetof(cattn_extend_all_queries_by_n_args_t, stream) + sizeof(cattn_stream_t)))
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT \
  { CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE, NULL, 1, NULL, NULL, NULL, 0, 0, 1 }

/* Extends every request's query and sequence by n tokens (vLLM's extend_all_queries_by_1 for
 * n = 1): query_start_loc[i] += i * n, seq_lens += n, num_actual_tokens += n * B,
 * max_query_len += n, max_seq_len += n, slot_mapping = new_slot_mapping. Unlike vLLM it also
 * updates the seq_lens_cpu mirror (vLLM leaves it at the old lengths). B is seq_lens' length and
 * query_start_loc must have B + 1 entries (num_reqs is copied, not checked). A mirror is
 * written exactly when the input has it: out->query_start_loc_cpu / out->seq_lens_cpu must be
 * set when the input's are and NULL when they are not. num_computed_tokens_cpu (unchanged by
 * construction), block_table_tensor, logits_indices_padded, num_logits_indices and causal are
 * copied. `out` may be the metadata struct itself; each output tensor may be the very view of
 * its input tensor or of that tensor's mirror, and a tensor's output and its mirror's output may
 * be one view (every element is extended once); every other overlap is refused. On the host
 * path a mirror must hold its tensor's values (a device tensor's mirror cannot be compared
 * without a sync). new_slot_mapping, when given, must be 1-D on the batch's device; it is not
 * read.
 * Reads: args, the metadata struct and its four tensors. Writes: out's tensors and fields.
 *   Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (shapes, devices, a mirror on one side only, a host
 *   mirror disagreeing with its tensor, an overlap other than those above, n < 0, int64
 *   overflow, a host value that does not fit its output dtype); CATTN_INSUFFICIENT_SIZE (an
 *   output shorter than its input); CATTN_NOT_SUPPORTED (CUDA tensors this build or machine
 *   cannot serve, a device tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - query_start_loc and seq_lens are updated by one kernel on
 *   args->stream; the host mirrors, which stay host tensors, are checked before the launch and
 *   updated on the host before return (a captured graph replays only the device part). The
 *   device values are not read back, so they cannot be checked: a device result that
 *   overflows int64 wraps, and one that does not fit an int32 output keeps its low 32 bits.
 * Since 1.1, when both metadata structs are 1.1 structs (CATTN_COMMON_ATTN_METADATA_SIZE_1_1),
 * the newer fields are handled too; vLLM's extend_all_queries_by_N leaves some of them stale,
 * libcattn writes the right values instead:
 *   - seq_lens_cpu_upper_bound (host [B]) gets + n, as in vLLM: out->seq_lens_cpu_upper_bound
 *     must be set exactly when the input's is (it may be the same view, in place).
 *   - dcp_local_seq_lens (device) and dcp_local_seq_lens_cpu (host): vLLM drops the mirror and
 *     leaves the device tensor at the old lengths; here each one the input has is rewritten
 *     from the extended lengths, get_dcp_local_seq_lens(seq_lens + n, args->dcp_size,
 *     args->dcp_rank, args->dcp_kv_cache_interleave_size), into out's tensor of the same name
 *     ([B], set exactly when the input's is; the same view is allowed). The DCP parameters
 *     must then be given (a 1.1 args struct with dcp_size >= 1), and the mirror needs the
 *     seq_lens_cpu mirror on the CUDA path. The input DCP tensors are not read.
 *   - positions: vLLM keeps the old tensor, whose length no longer fits the batch. Here, when
 *     out->positions is set (1-D, the batch's device, not overlapping anything), it receives
 *     the extended batch's positions: token t of request r (query_start_loc'[r] <= t <
 *     query_start_loc'[r + 1], after the extension) gets seq_lens'[r] - query_len'[r] +
 *     (t - query_start_loc'[r]), token t counted from query_start_loc'[0], and every entry
 *     past the last request's tokens gets 0 (padding tokens, as token_to_req_indices maps
 *     them to request 0). When out->positions is NULL it stays NULL (dropped rather than
 *     stale). The input positions are not read.
 *   - every other newer field (is_prefilling, causal_per_req, the encoder lengths,
 *     max_logits_per_req) is copied.
 *   A 1.0 output struct gets none of these; a 1.0 input struct has none of them.
 *   On the CUDA path the DCP lengths and the positions are each one more kernel on
 *   args->stream (after the extension kernel, reading its output); the host mirrors are
 *   written on the host. The extra Returns: CATTN_INVALID_ARGUMENT (an output of these set
 *   without its input or the reverse, DCP parameters missing or out of range, shapes, dtypes,
 *   overlaps).
 * Lifetime: tensors borrowed for the call; out->slot_mapping keeps new_slot_mapping's pointer.
 * Thread safety: any thread. Since: 1.0 (the newer fields: 1.1) */
CATTN_API cattn_status_t cattn_extend_all_queries_by_n(
    const cattn_extend_all_queries_by_n_args_t* args);

/* ============================================================================================
 * KV-sharing fast-prefill metadata (make_kv_sharing_fast_prefill_common_attn_metadata,
 * create_fast_prefill_custom_backend)
 * ========================================================================================== */

typedef struct cattn_fast_prefill_metadata_args {
  size_t struct_size;
  /* in: reads query_start_loc, logits_indices_padded, num_logits_indices, num_reqs,
   * max_query_len and copies the rest. */
  const cattn_common_attn_metadata_t* metadata;
  /* out: the caller sets out->query_start_loc ([num_reqs + 1], the input's device) and may set
   * out->query_start_loc_cpu (host mirror, host path only). The call writes them, every scalar
   * and the other pointer fields (copied). On the CUDA path max_query_len and
   * num_actual_tokens are set to -1: their values are in decode_max_and_total. */
  cattn_common_attn_metadata_t* out;
  /* out: [2] int32/int64 on the input's device: {max_query_len, num_actual_tokens} of the
   * decode batch. Required for CUDA tensors (the sync-free way to read them later); optional
   * on the host. */
  DLTensor* decode_max_and_total;
  int32_t passthrough;            /* out: 1 when max_query_len == 1 and out is a copy of the
                                     input (vLLM returns the metadata unchanged) */
  int32_t reserved0;              /* set to 0 */
  cattn_stream_t stream;
} cattn_fast_prefill_metadata_args_t;
#define CATTN_FAST_PREFILL_METADATA_ARGS_SIZE ((size_t)sizeof(cattn_fast_prefill_metadata_args_t))
#define CATTN_FAST_PREFILL_METADATA_ARGS_INIT \
  { CATTN_FAST_PREFILL_METADATA_ARGS_SIZE, NULL, NULL, NULL, 0, 0, NULL }
/* The same struct under its utility's name; the name above stays. Since: 1.1 */
typedef cattn_fast_prefill_metadata_args_t
    cattn_make_kv_sharing_fast_prefill_common_attn_metadata_args_t;
#define CATTN_MAKE_KV_SHARING_FAST_PREFILL_COMMON_ATTN_METADATA_ARGS_SIZE \
  CATTN_FAST_PREFILL_METADATA_ARGS_SIZE
#define CATTN_MAKE_KV_SHARING_FAST_PREFILL_COMMON_ATTN_METADATA_ARGS_INIT \
  CATTN_FAST_PREFILL_METADATA_ARGS_INIT

/* Builds the decode-only metadata of KV-sharing fast prefill: each request keeps only the
 * tokens whose logits are needed. request(i) = number of query_start_loc[1:] entries <= the
 * i-th logits index; decode query_start_loc = [0, cumsum(bincount)]. Only the first
 * num_logits_indices entries of logits_indices_padded are read (0 allowed); they may be
 * unsorted, and a negative index counts for request 0. When metadata->max_query_len == 1
 * nothing is read: *out receives the input's fields (its struct_size is kept), passthrough = 1,
 * and no tensor is written. Otherwise passthrough = 0 and out gets: query_start_loc(_cpu) as
 * above, num_actual_tokens = num_logits_indices, max_query_len = the largest count, causal = 1,
 * logits_indices_padded = NULL and num_logits_indices = 0 (vLLM's new metadata drops them), the
 * other fields copied. The outputs may not overlap query_start_loc, logits_indices_padded or
 * each other, so `out` cannot be the metadata struct itself except for passthrough.
 * create_fast_prefill_custom_backend is this call followed by passing logits_indices_padded and
 * num_logits_indices through to the backend's metadata.
 * Reads: args, the metadata struct, query_start_loc, logits_indices_padded. Writes: out's
 *   fields and tensors, decode_max_and_total, passthrough. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (reserved0 not 0, no logits indices when
 *   max_query_len != 1,
 *   num_logits_indices outside [0, length], num_reqs < 1, query_start_loc not of num_reqs + 1
 *   entries or (host) decreasing, a host logits index at or past query_start_loc[num_reqs],
 *   overlapping outputs, a broadcast input of more than CATTN_MAX_BROADCAST_ELEMENTS entries -
 *   vLLM asserts or fails on the first, the num_reqs and the past-the-end cases -; with CUDA
 *   tensors also decode_max_and_total NULL or out->query_start_loc_cpu set);
 *   CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED (CUDA tensors this build or machine cannot
 *   serve, a device tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream, no device-to-host read (the
 *   passthrough enqueues nothing). The device results stay on the device: out->max_query_len
 *   and out->num_actual_tokens are -1 (read decode_max_and_total instead), and
 *   out->query_start_loc_cpu must be NULL. The device data cannot be checked: a logits index at
 *   or past query_start_loc[num_reqs] is left out of every count (so the total falls short of
 *   num_logits_indices), and a decreasing query_start_loc gives counts of no meaning, never an
 *   access out of bounds. Every value fits any output dtype the host path accepts (they are
 *   bounded by num_logits_indices).
 * Since 1.1, with 1.1 metadata structs: when metadata->max_logits_per_req is given (> 0),
 * out->max_query_len is that value on both paths, trusted as vLLM trusts it (not compared with
 * the counts; decode_max_and_total still receives the computed largest count). vLLM asserts
 * that it is given; libcattn computes the maximum instead when it is not (0 or negative), as
 * in 1.0. (vLLM would also trust a given 0, which no batch with logits indices has.) Of the newer
 * fields out keeps seq_lens_cpu_upper_bound, as vLLM does; positions, is_prefilling,
 * causal_per_req, the DCP and encoder lengths become NULL and
 * max_logits_per_req CATTN_NOT_GIVEN (vLLM's defaults). The passthrough copies every field.
 * Lifetime: tensors borrowed for the call; out keeps the input's pointers it copies.
 * Thread safety: any thread. Since: 1.0 (max_logits_per_req: 1.1) */
CATTN_API cattn_status_t cattn_make_kv_sharing_fast_prefill_common_attn_metadata(
    cattn_fast_prefill_metadata_args_t* args);

/* ============================================================================================
 * Local-attention virtual batches (make_local_attention_virtual_batches)
 * ========================================================================================== */

/* The result of splitting a batch into attention-chunk-local virtual batches: vLLM's returned
 * metadata plus its make_block_table closure. Opaque; immutable after creation. */
typedef struct cattn_local_attention_plan_s cattn_local_attention_plan_t;

typedef struct cattn_local_attention_args {
  size_t struct_size;
  int64_t attn_chunk_size;       /* in: >= 1 */
  int64_t block_size;            /* in: >= 1 and divides attn_chunk_size */
  /* in: reads query_start_loc_cpu, seq_lens_cpu (host, [B + 1] and [B]), the column count of
   * block_table_tensor (its device may be either), num_actual_tokens. */
  const cattn_common_attn_metadata_t* metadata;
  cattn_local_attention_plan_t* plan; /* out: a new plan the caller destroys */
  /* in (since 1.1): the most virtual batches the plan may hold, e.g. vLLM's
   * max_local_attention_virtual_batches(attn_chunk_size, max_num_seqs, max_num_batched_tokens);
   * 0 (and a 1.0 struct, which lacks the field) = 2 * B + cdiv(metadata->num_actual_tokens,
   * attn_chunk_size), which every batch of at most num_actual_tokens tokens keeps. */
  int64_t max_virtual_batches;
} cattn_local_attention_args_t;
#define CATTN_LOCAL_ATTENTION_ARGS_SIZE ((size_t)sizeof(cattn_local_attention_args_t))
#define CATTN_LOCAL_ATTENTION_ARGS_INIT { CATTN_LOCAL_ATTENTION_ARGS_SIZE, 0, 0, NULL, NULL, 0 }
/* The same struct under its utility's name; the name above stays. Since: 1.1 */
typedef cattn_local_attention_args_t cattn_make_local_attention_virtual_batches_args_t;
#define CATTN_MAKE_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE CATTN_LOCAL_ATTENTION_ARGS_SIZE
#define CATTN_MAKE_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT CATTN_LOCAL_ATTENTION_ARGS_INIT

/* Reports, without allocating, what cattn_make_local_attention_virtual_batches would plan for
 * the same args: the virtual batches V, the pages per virtual batch P, and the most host memory
 * the create call allocates (the plan holds 40 bytes per virtual batch). It makes every check
 * the create call makes, the cap included, and fails where it fails.
 * args: as for the create call (args->plan is ignored). Each output pointer may be NULL.
 * Reads: args, the metadata struct, its mirrors once. Writes: the outputs. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (as for the create call).
 * Stream: synchronous. Lifetime: the metadata is not retained.
 * Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_size(
    const cattn_local_attention_args_t* args, int64_t* virtual_batches, int64_t* pages,
    size_t* plan_bytes);

/* Plans the virtual batches of chunked local attention. Each request is cut at attention-chunk
 * boundaries exactly as vLLM does, including a virtual batch of query length 0 for a
 * zero-length request. block_table_tensor must be [B, cols] with cols >= 1; page indices are
 * clipped to cols - 1 as in vLLM. Unlike vLLM, a zero-length request never produces a negative
 * block index: with seq_len 0 its keys would start at -attn_chunk_size, which vLLM turns into
 * negative page indices that wrap around to the end of the block-table row (or fail when the
 * row has fewer than P columns); here its pages start at column 0. Every other value matches
 * vLLM. The virtual batches are counted before anything is allocated, and a batch that needs
 * more than args->max_virtual_batches (or the cap derived from num_actual_tokens) is refused.
 * Reads: args, the metadata struct, its mirrors (twice: a count, then the plan, which checks
 *   them again) and the block table's column count. Writes: args->plan.
 *   Allocates: the plan, at most what cattn_make_local_attention_virtual_batches_size reports.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (chunk/block sizes, missing or non-host mirrors,
 *   shapes, decreasing query_start_loc_cpu, seq_len < query_len, empty batch - vLLM fails -,
 *   block table NULL, not 2-D, not B rows or without columns, a broadcast mirror of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries, a negative max_virtual_batches, more virtual batches
 *   than the cap, mirrors that another thread changed during the call); CATTN_OUT_OF_MEMORY.
 *   On failure args->plan is not written.
 * Stream: synchronous. Lifetime: args->plan is owned by the caller
 *   (cattn_local_attention_plan_destroy); the metadata is not retained.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches(
    cattn_local_attention_args_t* args);

/* Destroys a plan; NULL is a no-op, and so is a plan that is not live (destroyed already, or
 * never created), which this thread's last-error message reports.
 * Returns: nothing. Stream: synchronous. Lifetime: the plan is invalid afterwards.
 * Thread safety: no call may use the plan concurrently. Since: 1.0 */
CATTN_API void cattn_local_attention_plan_destroy(cattn_local_attention_plan_t* plan);

/* Reports the plan's sizes: virtual batches V and block-table pages per virtual batch P.
 * plan: a live plan. virtual_batches, pages: host pointers; either may be NULL.
 * Reads: the plan. Writes: the outputs. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live).
 * Stream: synchronous. Lifetime: -. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_local_attention_plan_get_shape(
    const cattn_local_attention_plan_t* plan, int64_t* virtual_batches, int64_t* pages);

typedef struct cattn_local_attention_fill_args {
  size_t struct_size;
  /* in: the batch the plan was made from; its block_table_tensor is gathered. */
  const cattn_common_attn_metadata_t* metadata;
  /* out: the caller sets query_start_loc_cpu [V + 1], seq_lens_cpu [V],
   * num_computed_tokens_cpu [V] (host) and block_table_tensor [V, P] (block table's device);
   * query_start_loc and seq_lens are optional device copies (NULL = not written; the CUDA path
   * may not be available in this build). The call writes every scalar and slot_mapping. */
  cattn_common_attn_metadata_t* out;
  cattn_stream_t stream;
} cattn_local_attention_fill_args_t;
#define CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE ((size_t)sizeof(cattn_local_attention_fill_args_t))
#define CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT \
  { CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE, NULL, NULL, NULL }

/* Writes the virtual-batch metadata of a plan: the tensors above (each int32 or int64; the
 * gathered block table has the dtype of args->metadata->block_table_tensor, which needs B rows
 * and at least the planned columns), num_reqs = V, num_actual_tokens (the planned batch's),
 * max_query_len, max_seq_len, causal = 1, slot_mapping = args->metadata->slot_mapping,
 * logits_indices_padded = NULL and num_logits_indices = 0. Other fields of out are left as they
 * are. Every output value comes from the plan, so every check (output dtypes included) happens
 * on the host, device outputs too, before anything is written.
 * plan: a live plan.
 * Reads: the plan, args, the metadata's block table. Writes: out's tensors and fields.
 *   Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live, NULL args, shapes, dtypes,
 *   devices, an output overlapping the block table or another output, a value that does not
 *   fit an output dtype); CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED (CUDA tensors this build
 *   or machine cannot serve; on the device a planned batch of more than 2^31 requests or a
 *   block table of more than 2^31 planned columns, or a tensor off its element alignment);
 *   CATTN_CUDA_ERROR.
 * Stream: host outputs - synchronous; device outputs (the gathered block table and the optional
 *   query_start_loc and seq_lens copies) - kernels on args->stream that carry the planned
 *   values in their parameters, with no host sync and no allocation, capturable (a captured
 *   graph replays the values planned when it was captured); the host mirrors are written on
 *   the host, after the launches.
 * Since 1.1, a 1.1 out struct may set out->seq_lens_cpu_upper_bound to a host [V] int32/int64
 * tensor: it receives the virtual batches' key lengths (exact, so their own upper bound). vLLM
 * copies the input's [B] upper bound unchanged, which is mis-shaped for the virtual batches;
 * NULL leaves it NULL (nothing written). Other newer fields of out are left as they are.
 * Lifetime: tensors borrowed for the call. Thread safety: the plan may be used by many threads
 *   at once. Since: 1.0 (seq_lens_cpu_upper_bound: 1.1) */
CATTN_API cattn_status_t cattn_local_attention_plan_fill(
    const cattn_local_attention_plan_t* plan, const cattn_local_attention_fill_args_t* args);

/* Gathers a (new) block table into the virtual batches' table, vLLM's make_block_table:
 * out[v, p] = block_table[batch(v), min(start(v) + p, cols - 1)] with the plan's cols.
 * plan: a live plan. block_table: [B, >= cols], int32 or int64. out: [V, P], the same device
 * and dtype, not overlapping block_table.
 * Reads: the plan, block_table. Writes: out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live, shapes, dtypes, devices,
 *   out overlapping block_table); CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED (as for
 *   cattn_local_attention_plan_fill); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - kernels on `stream` that carry the plan's rows and first
 *   pages in their parameters; no host sync, no allocation, capturable.
 * Lifetime: tensors borrowed for the call. Thread safety: the plan may be used by many threads
 *   at once. Since: 1.0 */
CATTN_API cattn_status_t cattn_local_attention_plan_make_block_table(
    const cattn_local_attention_plan_t* plan, const DLTensor* block_table, DLTensor* out,
    cattn_stream_t stream);

typedef struct cattn_local_attention_device_args {
  size_t struct_size;
  int64_t attn_chunk_size;         /* in: C >= 1 */
  int64_t block_size;              /* in: >= 1 and divides attn_chunk_size */
  const DLTensor* query_start_loc; /* in: [B + 1] int32/int64 on the device; zero-length
                                      requests pad a batch to its capacity */
  const DLTensor* seq_lens;        /* in: [B] int32/int64 on the device */
  const DLTensor* block_table;     /* in: [B, cols >= 1] int32/int64 on the device */
  DLTensor* query_start_loc_out;   /* out: [capacity + 1] the virtual batches' cu_seqlens_q;
                                      past V it repeats the total */
  DLTensor* seq_lens_out;          /* out: [capacity] their key lengths; 0 past V */
  DLTensor* num_computed_tokens_out; /* out, may be NULL: [capacity]; 0 past V */
  DLTensor* block_table_out;       /* out, may be NULL: [capacity, C / block_size], the
                                      block_table's dtype; rows past V are 0 */
  DLTensor* counts;                /* out, may be NULL: [3] {V, max_query_len, max_seq_len} */
  cattn_stream_t stream;
} cattn_local_attention_device_args_t;
#define CATTN_LOCAL_ATTENTION_DEVICE_ARGS_SIZE ((size_t)sizeof(cattn_local_attention_device_args_t))
#define CATTN_LOCAL_ATTENTION_DEVICE_ARGS_INIT \
  { CATTN_LOCAL_ATTENTION_DEVICE_ARGS_SIZE, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL }

/* Computes the local-attention virtual batches on the device from the device query_start_loc
 * and seq_lens - cu_seqlens_q, key lengths, computed tokens, the gathered block table and the
 * counts - so that a captured CUDA graph computes them afresh on every replay (vLLM marks
 * chunked local attention as graph NEVER; the plan calls above replay the values planned at
 * capture). Values equal the plan's for every batch the host accepts; the capacity is the
 * outputs' length. min(2 * max_num_reqs + cdiv(max_num_tokens, C), max_num_tokens +
 * max_num_reqs) holds every batch of at most max_num_reqs requests (padding rows included) and
 * max_num_tokens tokens: vLLM's max_local_attention_virtual_batches caps at max_num_tokens,
 * which a zero-length padding row (one virtual batch of no tokens) can exceed. A batch of more
 * virtual batches than the capacity writes the first ones and reports its V in counts.
 * Reads: args and its input tensors. Writes: the outputs. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or required tensor, small struct_size,
 *   chunk/block sizes, shapes, dtypes, a tensor not on query_start_loc's device, host tensors
 *   (the host has the plan calls), outputs of different capacities, a block_table_out of
 *   other columns or dtype, an output with a zero stride, overlapping or overlapping an input,
 *   a broadcast query_start_loc or seq_lens of more than CATTN_MAX_BROADCAST_ELEMENTS
 *   entries); CATTN_INSUFFICIENT_SIZE (query_start_loc_out or counts shorter than
 *   seq_lens_out + 1 or 3 entries); CATTN_NOT_SUPPORTED (CPU-only build, no usable device, a tensor
 *   off its element alignment); CATTN_CUDA_ERROR.
 * Stream: one kernel on args->stream, reading the inputs on the device: no host sync, no
 *   allocation, capturable and correct on replay. The data cannot be checked there: a
 *   decreasing query_start_loc entry counts as an empty request, a seq_len shorter than its
 *   query is taken as the query's length, and an int32 output keeps the low 32 bits.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_device(
    const cattn_local_attention_device_args_t* args);

/* ============================================================================================
 * Mamba block table (mamba_get_block_table_tensor)
 * ========================================================================================== */

typedef enum cattn_mamba_cache_mode_e {
  CATTN_MAMBA_CACHE_MODE_NONE = 0,
  CATTN_MAMBA_CACHE_MODE_ALL = 1,
  CATTN_MAMBA_CACHE_MODE_ALIGN = 2
} cattn_mamba_cache_mode_t;

typedef struct cattn_mamba_block_table_args {
  size_t struct_size;
  const DLTensor* block_table;     /* in: [B, M] int32/int64 */
  const DLTensor* seq_lens;        /* in: [B] int32/int64 (ALIGN only; may be NULL otherwise,
                                      and is checked but not read when given) */
  int64_t block_size;              /* in: >= 1 (ALIGN; ignored otherwise) */
  int64_t num_speculative_blocks;  /* in: >= 0 (ALIGN; ignored otherwise) */
  int32_t mamba_cache_mode;        /* in: a cattn_mamba_cache_mode_t */
  int32_t reserved0;               /* set to 0 */
  DLTensor* out;                   /* out: ALL/NONE - [B, M], a copy (nothing is written when
                                      out is the very view block_table is: same data, dtype and
                                      strides); ALIGN - [B, 1 + nspec]. int32/int64, its dtype
                                      may differ from block_table's (values must fit it); no
                                      other overlap with the inputs */
  cattn_stream_t stream;
} cattn_mamba_block_table_args_t;
#define CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE ((size_t)sizeof(cattn_mamba_block_table_args_t))
#define CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT \
  { CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE, NULL, NULL, 0, 0, CATTN_MAMBA_CACHE_MODE_NONE, 0, \
    NULL, NULL }
/* The same struct under its utility's name; the name above stays. Since: 1.1 */
typedef cattn_mamba_block_table_args_t cattn_mamba_get_block_table_tensor_args_t;
#define CATTN_MAMBA_GET_BLOCK_TABLE_TENSOR_ARGS_SIZE CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE
#define CATTN_MAMBA_GET_BLOCK_TABLE_TENSOR_ARGS_INIT CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT

/* Selects the block-table columns Mamba kernels use. ALIGN: out[b, j] =
 * block_table[b, max((seq_lens[b] - 1) // block_size, 0) + j] for j <= nspec (floor division).
 * A seq_len <= 0 (CUDA-graph padding rows) starts at column 0, as in vLLM. Unlike vLLM this
 * never reads past a row: on the host a column >= M is CATTN_INVALID_ARGUMENT; on the device
 * that element is written as CATTN_PAD_SLOT_ID (-1). NONE/ALL: out is a copy of block_table
 * (vLLM returns the tensor itself).
 * Reads: args, block_table, seq_lens (ALIGN). Writes: out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shapes, dtypes, unknown mode, nonzero
 *   reserved0, block_size/num_speculative_blocks out of range, a column past a row, a value
 *   that does not fit out's dtype, out overlapping an input); CATTN_INSUFFICIENT_SIZE (out
 *   smaller than the result); CATTN_NOT_SUPPORTED (CUDA tensors this build or machine cannot
 *   serve, a device tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream, for the copy modes too. Device
 *   data is not read on the host: besides the PAD for a column past a row, a block_table value
 *   that does not fit an int32 out keeps its low 32 bits instead of being refused.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_mamba_get_block_table_tensor(
    const cattn_mamba_block_table_args_t* args);

/* ============================================================================================
 * Per-layer parameters (get_per_layer_parameters, infer_global_hyperparameters)
 * ========================================================================================== */

/* What vLLM reads from one attention layer's impl. */
typedef struct cattn_attention_layer_desc {
  size_t struct_size;
  int64_t sliding_window_left;  /* impl.sliding_window[0], used when has_sliding_window */
  int64_t sliding_window_right; /* impl.sliding_window[1] (not used by vLLM here) */
  double logits_soft_cap;       /* used when has_logits_soft_cap */
  double scale;                 /* impl.scale */
  int32_t has_sliding_window;   /* 0 = impl.sliding_window is None */
  int32_t has_logits_soft_cap;  /* 0 = impl.logits_soft_cap is None */
  int32_t has_sinks;            /* 1 = impl.sinks is not None */
  int32_t reserved0;            /* set to 0 */
} cattn_attention_layer_desc_t;
#define CATTN_ATTENTION_LAYER_DESC_SIZE ((size_t)sizeof(cattn_attention_layer_desc_t))
#define CATTN_ATTENTION_LAYER_DESC_INIT \
  { CATTN_ATTENTION_LAYER_DESC_SIZE, 0, 0, 0.0, 1.0, 0, 0, 0, 0 }

/* vLLM's PerLayerParameters. */
typedef struct cattn_per_layer_parameters {
  size_t struct_size;
  int64_t window_left;          /* -1 = no sliding window */
  double logits_soft_cap;       /* meaningful when has_logits_soft_cap; written as 0.0 otherwise */
  double sm_scale;
  int32_t has_logits_soft_cap;  /* 0 = None (which is not equal to a cap of 0.0), or 1 */
  int32_t has_sinks;            /* 0 or 1 */
} cattn_per_layer_parameters_t;
#define CATTN_PER_LAYER_PARAMETERS_SIZE ((size_t)sizeof(cattn_per_layer_parameters_t))
#define CATTN_PER_LAYER_PARAMETERS_INIT { CATTN_PER_LAYER_PARAMETERS_SIZE, -1, 0.0, 1.0, 0, 0 }

/* The global parameters and vLLM's two flags. */
typedef struct cattn_global_hyperparameters {
  size_t struct_size;
  int64_t window_left;
  double logits_soft_cap;
  double sm_scale;
  int32_t has_logits_soft_cap;
  int32_t has_sinks;
  int32_t has_same_window_lefts; /* every layer's window_left equals the first's */
  int32_t has_same_all_params;   /* every layer equals the first in all four fields */
} cattn_global_hyperparameters_t;
#define CATTN_GLOBAL_HYPERPARAMETERS_SIZE ((size_t)sizeof(cattn_global_hyperparameters_t))
#define CATTN_GLOBAL_HYPERPARAMETERS_INIT \
  { CATTN_GLOBAL_HYPERPARAMETERS_SIZE, 0, 0.0, 0.0, 0, 0, 0, 0 }

/* Converts layer descriptions into per-layer parameters, element by element: window_left is
 * sliding_window_left, or -1 without a sliding window; a missing soft cap stays missing.
 * layers: host array of num_layers descriptors, each with the same struct_size (it is the
 *   array's stride); the has_* flags must be 0 or 1 and reserved0 0. out: host array of
 *   num_layers parameter structs whose struct_size the caller has set (the same in every
 *   element, it is the stride). Both may be NULL when num_layers == 0, a successful no-op.
 *   No alignment is assumed.
 * Reads: layers. Writes: the known fields of every out element. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL arrays, a struct_size below the known size
 *   or different from element 0's, a flag not 0/1, nonzero reserved0, the output array
 *   overlapping the input array).
 * Stream: synchronous. Lifetime: the arrays are borrowed for the call.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_get_per_layer_parameters(const cattn_attention_layer_desc_t* layers,
                                                        size_t num_layers,
                                                        cattn_per_layer_parameters_t* out);

/* Takes the first layer's parameters as global and reports whether every layer shares its
 * window_left, and whether every layer equals it in all four fields (window_left, soft cap,
 * sm_scale, has_sinks with ==, as vLLM's dataclass equality: a missing soft cap equals only a
 * missing soft cap, -0.0 equals 0.0, NaN equals nothing). The first layer always equals itself
 * (vLLM compares the object with itself), so one layer gives 1 for both flags even with a NaN
 * scale; a NaN in any later layer clears has_same_all_params. (Python would call two layers
 * sharing one NaN object equal; a C value has no identity, so that never happens here.)
 * params: host array (stride = params[0].struct_size, the same in every element; has_* flags
 *   0 or 1). out: host pointer, not NULL, struct_size set.
 * Reads: params. Writes: the known fields of *out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, num_layers == 0 - vLLM asserts "No attention
 *   layers found" -, struct sizes, a flag not 0/1, out overlapping params).
 * Stream: synchronous. Lifetime: the arrays are borrowed for the call.
 * Thread safety: any thread. Since: 1.0 */
CATTN_API cattn_status_t cattn_infer_global_hyperparameters(
    const cattn_per_layer_parameters_t* params, size_t num_layers,
    cattn_global_hyperparameters_t* out);

/* ============================================================================================
 * Step plan: a whole step's metadata in one launch, replayable in a CUDA graph
 * ========================================================================================== */

/* A step plan computes the selected products of one engine step from the batch's device
 * tensors in a single kernel launch. It is made for CUDA graphs: a graph fixes every host value
 * at capture, so the plan keeps only capacities and parameters on the host, and every per-step
 * count (requests in use, tokens, programs, virtual batches, logits indices) is derived on the
 * device from the tensors, or read from a device scalar the caller writes. Capture
 * cattn_step_plan_run once per batch-size bucket, write each step's batch into the same
 * buffers, and replay: every output is recomputed from the new contents. Engines pad a batch to
 * its graph's size with zero-length requests (query_start_loc repeating its last entry,
 * seq_len 0); each product treats those as its utility does an empty request.
 *
 * Every product gives the values of its own call (the device paths of the 1.0 utilities, and
 * cattn_compute_causal_conv1d_metadata_device / cattn_make_local_attention_virtual_batches_device
 * for the two that plan on the host elsewhere), with the same sentinels and the same behaviour
 * for data the host cannot check. */

/* The products (cattn_step_plan_desc_t.products is an OR of them) and the utility each one
 * computes. */
#define CATTN_STEP_DCP_LOCAL_SEQ_LENS (1u << 0)      /* cattn_get_dcp_local_seq_lens */
#define CATTN_STEP_PCP_QUERY_RESTORE_IDX (1u << 1)   /* cattn_get_pcp_query_restore_idx */
#define CATTN_STEP_MAMBA_BLOCK_TABLE (1u << 2)       /* cattn_mamba_get_block_table_tensor */
#define CATTN_STEP_CAUSAL_CONV1D_METADATA (1u << 3)  /* ..._causal_conv1d_metadata_device */
#define CATTN_STEP_LOCAL_ATTENTION (1u << 4)         /* ..._virtual_batches_device */
#define CATTN_STEP_FAST_PREFILL (1u << 5) /* cattn_make_kv_sharing_fast_prefill_..._metadata */
#define CATTN_STEP_EXTEND_QUERIES (1u << 6)          /* cattn_extend_all_queries_by_n */
#define CATTN_STEP_ALL_PRODUCTS (0x7fu)

/* The entries of the plan's counts vector: per-step values derived on the device. An entry of
 * a product the plan does not compute is 0. */
#define CATTN_STEP_COUNT_TOKENS 0                /* query_start_loc[B] - query_start_loc[0] */
#define CATTN_STEP_COUNT_RESTORE_SIZE 1          /* restore-index entries in use */
#define CATTN_STEP_COUNT_CONV1D_PROGRAMS 2       /* causal-conv1d programs (tot) */
#define CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES 3 /* V */
#define CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN 4   /* over the virtual batches */
#define CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN 5     /* over the virtual batches */
#define CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN 6  /* fast prefill's decode batch */
#define CATTN_STEP_COUNT_DECODE_TOKENS 7         /* fast prefill's decode batch */
#define CATTN_STEP_NUM_COUNTS 8

/* Each product's parameters, as its utility takes them. */
typedef struct cattn_step_dcp_params {
  int64_t dcp_size;                     /* >= 1 */
  int64_t dcp_rank;                     /* [0, dcp_size) or CATTN_DCP_ALL_RANKS */
  int64_t dcp_kv_cache_interleave_size; /* >= 1, and dcp_size * this <= INT32_MAX */
} cattn_step_dcp_params_t;
typedef struct cattn_step_mamba_params {
  int64_t block_size;             /* >= 1 (ALIGN) */
  int64_t num_speculative_blocks; /* >= 0 (ALIGN) */
  int32_t mamba_cache_mode;       /* a cattn_mamba_cache_mode_t */
  int32_t reserved0;              /* set to 0 */
} cattn_step_mamba_params_t;
typedef struct cattn_step_conv1d_params {
  int64_t block_m; /* tokens per program, >= 1 (vLLM: 8) */
} cattn_step_conv1d_params_t;
typedef struct cattn_step_local_attention_params {
  int64_t attn_chunk_size; /* C >= 1 */
  int64_t block_size;      /* >= 1, divides attn_chunk_size */
} cattn_step_local_attention_params_t;
typedef struct cattn_step_extend_params {
  int64_t n; /* tokens added to every request, >= 0 */
} cattn_step_extend_params_t;

typedef struct cattn_step_plan_desc {
  size_t struct_size;
  uint32_t products;               /* CATTN_STEP_* bits, at least one */
  uint32_t reserved0;              /* set to 0 */
  int64_t max_num_reqs;            /* >= 1: rows of a batch's per-request tensors (B) */
  int64_t max_num_tokens;          /* >= 0: tokens a batch holds (T) */
  int64_t max_num_blocks_per_req;  /* columns of a batch's block_table: >= 1 when mamba or
                                      local attention is selected, else >= 0 */
  int64_t max_num_logits;          /* >= 0: entries of a batch's logits_indices (fast prefill) */
  cattn_step_dcp_params_t dcp;                         /* CATTN_STEP_DCP_LOCAL_SEQ_LENS */
  cattn_step_mamba_params_t mamba;                     /* CATTN_STEP_MAMBA_BLOCK_TABLE */
  cattn_step_conv1d_params_t conv1d;                   /* CATTN_STEP_CAUSAL_CONV1D_METADATA */
  cattn_step_local_attention_params_t local_attention; /* CATTN_STEP_LOCAL_ATTENTION */
  cattn_step_extend_params_t extend;                   /* CATTN_STEP_EXTEND_QUERIES */
} cattn_step_plan_desc_t;
#define CATTN_STEP_PLAN_DESC_SIZE ((size_t)sizeof(cattn_step_plan_desc_t))
/* Zero capacities and no product; each product's parameters at vLLM's defaults where vLLM has
 * one (DCP one rank group of 1, Mamba NONE, conv1d block_m 8, extend n 1). Local attention has
 * none: set attn_chunk_size and block_size when selecting it. */
#define CATTN_STEP_PLAN_DESC_INIT \
  { CATTN_STEP_PLAN_DESC_SIZE, 0, 0, 0, 0, 0, 0, {1, CATTN_DCP_ALL_RANKS, 1}, \
    {1, 0, CATTN_MAMBA_CACHE_MODE_NONE, 0}, {8}, {0, 0}, {1} }

/* The capacities a plan's outputs must hold, derived from its desc; the fields of products
 * the plan does not compute are 0. */
typedef struct cattn_step_plan_shape {
  size_t struct_size;
  int64_t restore_capacity;        /* max_num_tokens: restore-index entries */
  int64_t conv1d_capacity;         /* cdiv(max_num_tokens, block_m) + max_num_reqs programs */
  int64_t local_capacity;          /* min(2 * max_num_reqs + cdiv(max_num_tokens, C),
                                      max_num_tokens + max_num_reqs) virtual batches (see
                                      cattn_make_local_attention_virtual_batches_device) */
  int64_t local_pages;             /* C / block_size: columns of the local block table */
  int64_t mamba_columns;           /* ALIGN: 1 + num_speculative_blocks; copy modes: 0 (the
                                      batch's block_table columns) */
} cattn_step_plan_shape_t;
#define CATTN_STEP_PLAN_SHAPE_SIZE ((size_t)sizeof(cattn_step_plan_shape_t))
#define CATTN_STEP_PLAN_SHAPE_INIT { CATTN_STEP_PLAN_SHAPE_SIZE, 0, 0, 0, 0, 0 }

/* One step's batch, every tensor int32/int64 in device memory of one GPU. B is
 * query_start_loc's length - 1, at most max_num_reqs; padding rows included. A tensor a
 * selected product needs is required; the others may be NULL and are not read. */
typedef struct cattn_step_batch {
  size_t struct_size;
  const DLTensor* query_start_loc;    /* [B + 1], 1 <= B + 1 <= max_num_reqs + 1 (all but
                                         DCP and mamba) */
  const DLTensor* seq_lens;           /* [B] (DCP, mamba ALIGN, local attention, extend) */
  const DLTensor* block_table;        /* [B, cols], 1 <= cols <= max_num_blocks_per_req
                                         (mamba, local attention) */
  const DLTensor* cu_num_tokens;      /* [R + 1], R <= max_num_reqs: the PCP restore index's
                                         input; NULL = query_start_loc */
  const DLTensor* logits_indices;     /* [L], L <= max_num_logits (fast prefill) */
  const DLTensor* num_logits_indices; /* [1]: how many of logits_indices to read, clamped to
                                         [0, L] on the device; NULL = all L (fast prefill) */
} cattn_step_batch_t;
#define CATTN_STEP_BATCH_SIZE ((size_t)sizeof(cattn_step_batch_t))
#define CATTN_STEP_BATCH_INIT { CATTN_STEP_BATCH_SIZE, NULL, NULL, NULL, NULL, NULL, NULL }

/* Where a run writes. Every output of a selected product is required unless marked "may be
 * NULL"; every output of a product the plan does not compute must be NULL. int32/int64, in
 * device memory on the batch's GPU except counts_host. Capacities come from
 * cattn_step_plan_get_shape; a capacity output may be longer, and every entry past the step's
 * values is written with its sentinel. */
typedef struct cattn_step_outputs {
  size_t struct_size;
  DLTensor* dcp_local_seq_lens;    /* [B] one rank, [B, dcp_size] all ranks */
  DLTensor* pcp_query_restore_idx; /* [>= restore_capacity]; -1 past the size */
  DLTensor* mamba_block_table;     /* ALIGN: [B, 1 + nspec]; copy modes: [B, cols] */
  DLTensor* conv1d_nums;           /* [B], may be NULL */
  DLTensor* conv1d_mlist;          /* [>= conv1d_capacity], may be NULL; past tot
                                      CATTN_PAD_SLOT_ID, as the next three */
  DLTensor* conv1d_offsetlist;     /* as conv1d_mlist */
  DLTensor* conv1d_batch_ptr;      /* as conv1d_mlist */
  DLTensor* conv1d_token_chunk_offset_ptr; /* as conv1d_mlist */
  DLTensor* local_query_start_loc; /* [V_cap + 1], V_cap >= local_capacity; past V it
                                      repeats the total */
  DLTensor* local_seq_lens;        /* [V_cap]; 0 past V */
  DLTensor* local_num_computed_tokens; /* [V_cap], may be NULL; 0 past V */
  DLTensor* local_block_table;     /* [V_cap, local_pages], the batch block_table's dtype, may
                                      be NULL; rows past V are 0 */
  DLTensor* decode_query_start_loc; /* [B + 1]: fast prefill's decode query_start_loc */
  DLTensor* extend_query_start_loc; /* [B + 1] */
  DLTensor* extend_seq_lens;       /* [B] */
  DLTensor* counts;                /* [CATTN_STEP_NUM_COUNTS], may be NULL */
  DLTensor* counts_host;           /* [CATTN_STEP_NUM_COUNTS] kDLCUDAHost: a host mirror of
                                      counts in pinned memory mapped for the device
                                      (cudaHostAlloc, cudaMallocHost, or cudaHostRegister
                                      with cudaHostRegisterMapped), written by the kernel and
                                      valid once the caller has synchronised the stream; may
                                      be NULL */
  void* workspace;                 /* device memory of cattn_step_plan_workspace_size bytes;
                                      may be NULL when that is 0 */
  size_t workspace_bytes;
} cattn_step_outputs_t;
#define CATTN_STEP_OUTPUTS_SIZE ((size_t)sizeof(cattn_step_outputs_t))
#define CATTN_STEP_OUTPUTS_INIT \
  { CATTN_STEP_OUTPUTS_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 }

/* A step plan: the products, their parameters and the capacities, and the launch layout they
 * fix. Opaque; its desc and layout are immutable after creation, and it remembers the
 * descriptors of its last run that passed every check (cattn_step_plan_run). */
typedef struct cattn_step_plan_s cattn_step_plan_t;

/* Creates a step plan from `desc`. The launch layout is fixed here from the capacities alone
 * (no device is queried, so creation needs no GPU), which is what lets a captured run keep its
 * grid on every replay. The parameters of the products not selected are ignored.
 * Reads: desc. Writes: *out, on success only. Allocates: the plan, one host object of fixed
 *   size (under 4 KiB, most of it the memo of the last checked run), and its registry entry.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL desc or out, small struct_size, no product or
 *   an unknown bit, nonzero reserved0, a capacity out of range, a selected product's parameter
 *   out of range - named as desc->dcp.dcp_size and the like -, a capacity whose derived sizes
 *   overflow int64); CATTN_OUT_OF_MEMORY.
 * Stream: synchronous, no CUDA call. Lifetime: the plan lives until cattn_step_plan_destroy
 *   and does not borrow desc. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_step_plan_create(const cattn_step_plan_desc_t* desc,
                                                cattn_step_plan_t** out);

/* Destroys a plan; NULL is a no-op, and a handle that is not a live plan is left alone (the
 * message says so). Not while a run on it is being enqueued; runs already enqueued do not need
 * the plan.
 * Reads, writes: the plan. Allocates: nothing. Stream: synchronous. Since: 1.1 */
CATTN_API void cattn_step_plan_destroy(cattn_step_plan_t* plan);

/* The capacities the plan's outputs must hold.
 * Reads: plan. Writes: *shape (its struct_size is kept; fields past it are not written).
 * Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, NULL or small shape).
 * Stream: synchronous. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_step_plan_get_shape(const cattn_step_plan_t* plan,
                                                   cattn_step_plan_shape_t* shape);

/* The device workspace a run needs, in bytes. It is 0 for every plan of this version: each of
 * the kernel's blocks derives the prefix sums it needs itself, so the run keeps no state
 * between blocks or between replays. The query exists so that a later version may need a
 * workspace without a new entry point: pass outputs->workspace of the size it reports.
 * Reads: plan. Writes: *bytes. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, bytes NULL).
 * Stream: synchronous. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_step_plan_workspace_size(const cattn_step_plan_t* plan,
                                                        size_t* bytes);

/* Computes every product of the plan from the batch's device tensors in one kernel launch on
 * `stream`. Everything that needs no device data is checked on the host first: shapes,
 * dtypes, devices, the capacities, the outputs' sizes, and that no output overlaps an input or
 * another output (the products run side by side in one grid, so unlike the utilities no
 * output may alias its input in place). What needs the data is handled on the device, by
 * each product as its utility documents: a batch of more tokens than max_num_tokens fills a
 * capacity output with what fits while counts still report the step's full values; a
 * decreasing query_start_loc entry counts as an empty request; seq_lens shorter than their
 * queries are taken as the queries' lengths (local attention); an int32 output keeps a value's
 * low 32 bits. The fast-prefill product always computes the decode batch (the utility's
 * max_query_len == 1 passthrough is a host decision the caller makes).
 * A run whose tensors are all described exactly as in the plan's last run that passed every
 * check - the same DLTensor fields, shape and stride values, NULLs in the same places; the
 * contents may differ, as each step's do - gets that run's answer without the checks: its
 * kernel parameters are launched as they are, and counts_host's memory is not queried again.
 * Memory a plan has accepted as counts_host must therefore stay pinned and mapped as it was
 * (not freed, unregistered or registered anew) while runs keep passing its address; any
 * other description is checked in full, and becomes the one remembered once it passes.
 * Reads: plan, batch and its tensors on the device. Writes: the outputs on the device, and
 *   counts_host through its mapping. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, NULL or small structs, a required
 *   tensor NULL, an output of an unselected product set, shapes, dtypes, devices - a tensor
 *   not on the others' device, host tensors other than counts_host, a counts_host that is
 *   not mapped pinned memory -, a batch past a capacity, an overlap, a broadcast
 *   query_start_loc, seq_lens, cu_num_tokens or logits_indices of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries); CATTN_INSUFFICIENT_SIZE (an output shorter than
 *   its capacity or than the batch needs); CATTN_NOT_SUPPORTED (CPU-only build, no usable device, a
 *   tensor off its element alignment); CATTN_CUDA_ERROR.
 * Stream: one kernel on `stream` and no other CUDA work: no host sync, no allocation,
 *   capturable, and correct on every replay with new tensor contents.
 * Lifetime: tensors borrowed for the call; a captured graph keeps their addresses, so they
 *   must outlive it. The plan keeps a copy of the last checked run's descriptors (never the
 *   caller's DLTensors or shape arrays). Thread safety: any thread; one plan may run on several
 *   threads at once (they share the remembered run under a lock).
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_step_plan_run(const cattn_step_plan_t* plan,
                                             const cattn_step_batch_t* batch,
                                             const cattn_step_outputs_t* outputs,
                                             cattn_stream_t stream);

/* ============================================================================================
 * Batch splitting and reordering (split_decodes_and_prefills,
 * split_decodes_prefills_and_extends, split_prefill_chunks,
 * reorder_batch_to_split_decodes_and_prefills)
 *
 * vLLM's backends split a batch ordered decode -> short extend -> long extend -> prefill at
 * the first request that is not a decode, and reorder the persistent batch into that order
 * before each step. These calls take the batch as explicit tensors and scalars (the fields of
 * CommonAttentionMetadata that vLLM reads) and return the same numbers. With q[i] =
 * query_start_loc[i + 1] - query_start_loc[i], computed in query_start_loc's dtype and
 * wrapping as vLLM's tensor arithmetic does (an int32 difference past INT32_MAX wraps), and a
 * query_start_loc that need not start at 0 (its entries are used as given, as vLLM does).
 * ========================================================================================== */

typedef struct cattn_split_decodes_and_prefills_args {
  size_t struct_size;
  const DLTensor* query_start_loc_cpu; /* in: host [num_reqs + 1] int32/int64 */
  const DLTensor* is_prefilling_cpu;   /* in, may be NULL: host [num_reqs], one byte per
                                          request (kDLBool, kDLUInt or kDLInt of 8 bits;
                                          nonzero = still prefilling); read only when
                                          treat_short_extends_as_decodes is 0 */
  int64_t num_reqs;                    /* in: B >= 0 */
  int64_t num_actual_tokens;           /* in: T, may include CUDA-graph padding; used as given */
  int64_t max_query_len;               /* in: the metadata's max_query_len; used as given */
  int64_t decode_threshold;            /* in: [0, INT32_MAX]; vLLM's default 1 */
  int32_t require_uniform;             /* in: 0 or 1 */
  int32_t treat_short_extends_as_decodes; /* in: 0 or 1; vLLM's default 1 */
  int64_t num_decodes;                 /* out */
  int64_t num_prefills;                /* out */
  int64_t num_decode_tokens;           /* out */
  int64_t num_prefill_tokens;          /* out */
} cattn_split_decodes_and_prefills_args_t;
#define CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_and_prefills_args_t))
#define CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT \
  { CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE, NULL, NULL, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0 }

/* Splits an ordered batch into its leading decodes and the prefills after them (vLLM's
 * split_decodes_and_prefills), with thr = decode_threshold:
 *  1. max_query_len <= thr and (require_uniform is 0 or thr <= 1) and
 *     treat_short_extends_as_decodes: all decodes, (B, 0, T, 0).
 *  2. q[0] > thr: all prefills, (0, B, 0, T). With B = 0 vLLM raises IndexError here; libcattn
 *     returns CATTN_INVALID_ARGUMENT naming num_reqs (only when step 1 did not return).
 *  3. require_uniform: when treat_short_extends_as_decodes and every q[i] equals q[0] or is 0
 *     (the padding rows of a full CUDA graph), all decodes; otherwise a request is a prefill
 *     when q[i] != q[0] (a zero-length row then counts as a prefill). Without require_uniform
 *     a request is a prefill when q[i] > thr.
 *  4. treat_short_extends_as_decodes == 0: a request is also a prefill when is_prefilling_cpu
 *     says so; is_prefilling_cpu NULL here is CATTN_INVALID_ARGUMENT (vLLM's assert).
 *  5. No prefill: (B, 0, T, 0). Otherwise, f = the first prefill: (f, B - f,
 *     query_start_loc[f], T - query_start_loc[f]); every request after f counts as a prefill,
 *     whatever its length (the batch is assumed ordered; an unordered one is not reported).
 * T and max_query_len are used as given, not checked against query_start_loc_cpu.
 * Reads: args, query_start_loc_cpu, is_prefilling_cpu (step 4). Writes: the four outputs of
 *   args. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or query_start_loc_cpu, small
 *   struct_size, ndim/dtype/device of a tensor, query_start_loc_cpu not of num_reqs + 1
 *   entries, is_prefilling_cpu not of num_reqs entries, num_reqs < 0, decode_threshold outside
 *   [0, INT32_MAX], a flag other than 0 or 1, a broadcast query_start_loc_cpu of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries, the B = 0 and assert cases above, a token count that
 *   overflows int64).
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_split_decodes_and_prefills(
    cattn_split_decodes_and_prefills_args_t* args);

typedef struct cattn_split_decodes_and_prefills_device_args {
  size_t struct_size;
  const DLTensor* query_start_loc;   /* in: device [B + 1] int32/int64 (B from its shape; pad
                                        a captured batch with zero-length rows) */
  const DLTensor* is_prefilling;     /* in, may be NULL: device [B], one byte per request as in
                                        the host call; read only in step 4 */
  const DLTensor* num_actual_tokens; /* in, may be NULL: device [1] int32/int64, T; NULL means
                                        query_start_loc[B] */
  const DLTensor* max_query_len;     /* in, may be NULL: device [1] int32/int64; NULL means the
                                        largest q[i] (0 when B = 0) */
  int64_t decode_threshold;          /* in: [0, INT32_MAX] */
  int32_t require_uniform;           /* in: 0 or 1 */
  int32_t treat_short_extends_as_decodes; /* in: 0 or 1 */
  DLTensor* result;                  /* out: device [4] int32/int64: num_decodes, num_prefills,
                                        num_decode_tokens, num_prefill_tokens */
  cattn_stream_t stream;
} cattn_split_decodes_and_prefills_device_args_t;
#define CATTN_SPLIT_DECODES_AND_PREFILLS_DEVICE_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_and_prefills_device_args_t))
#define CATTN_SPLIT_DECODES_AND_PREFILLS_DEVICE_ARGS_INIT \
  { CATTN_SPLIT_DECODES_AND_PREFILLS_DEVICE_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, 0, 1, NULL, \
    NULL }

/* cattn_split_decodes_and_prefills for a batch on the device: the same steps and values,
 * read from the device tensors and written to `result`, so that a captured CUDA graph splits
 * the batch written into the same buffers before every replay.
 * Reads: args, the input tensors. Writes: result. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, query_start_loc or result, small
 *   struct_size, ndim/dtype of a tensor, a host tensor, tensors on different devices, shapes
 *   other than above, decode_threshold or a flag out of range, result longer than 4 entries
 *   or with a zero stride, result overlapping an input, a broadcast query_start_loc of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries); CATTN_INSUFFICIENT_SIZE (result shorter than 4
 *   entries); CATTN_NOT_SUPPORTED (CPU-only build, no usable device, a tensor off its element
 *   alignment); CATTN_CUDA_ERROR.
 * Stream: one kernel on args->stream: no host sync, no allocation, capturable and correct on
 *   replay. The data cannot be checked there: where the host call fails on the values (B = 0
 *   past step 1, is_prefilling NULL when step 4 is reached, a count overflowing int64) all
 *   four entries are -1, and an int32 result keeps the low 32 bits of each count.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_split_decodes_and_prefills_device(
    const cattn_split_decodes_and_prefills_device_args_t* args);

typedef struct cattn_split_decodes_prefills_and_extends_args {
  size_t struct_size;
  const DLTensor* query_start_loc_cpu;      /* in: host [num_reqs + 1] int32/int64 */
  const DLTensor* seq_lens_cpu_upper_bound; /* in, may be NULL: host [num_reqs] int32/int64;
                                               read only past step 1 (vLLM asserts it) */
  int64_t num_reqs;                         /* in: B >= 0 */
  int64_t num_actual_tokens;                /* in: T, may include padding; used as given */
  int64_t max_query_len;                    /* in: used as given */
  int64_t decode_threshold;                 /* in: [0, INT32_MAX]; vLLM's default 1 */
  int64_t num_decodes;                      /* out */
  int64_t num_extends;                      /* out */
  int64_t num_prefills;                     /* out */
  int64_t num_decode_tokens;                /* out */
  int64_t num_extend_tokens;                /* out */
  int64_t num_prefill_tokens;               /* out */
} cattn_split_decodes_prefills_and_extends_args_t;
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_prefills_and_extends_args_t))
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT \
  { CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE, NULL, NULL, 0, 0, 0, 1, 0, 0, 0, 0, 0, \
    0 }

/* Splits an ordered batch into decodes, extends (chunked prefills with context) and prefills
 * (no context: seq_lens_cpu_upper_bound[i] == q[i]), vLLM's split_decodes_prefills_and_extends,
 * with thr = decode_threshold:
 *  1. max_query_len <= thr: (B, 0, 0, T, 0, 0).
 *  2. seq_lens_cpu_upper_bound NULL: CATTN_INVALID_ARGUMENT (vLLM's assert). B = 0:
 *     CATTN_INVALID_ARGUMENT naming num_reqs (vLLM's argmax of an empty tensor raises).
 *  3. e = the first i with q[i] > thr, p = the first i with q[i] > thr and
 *     seq_lens_cpu_upper_bound[i] == q[i]; 0 when there is none (vLLM's argmax).
 *  4. No q[i] > thr: (e, 0, 0, query_start_loc[e], 0, 0) with e = 0. This is vLLM's result
 *     when max_query_len over-estimates, kept as is: all zeros when query_start_loc[0] is 0,
 *     where cattn_split_decodes_and_prefills would report every request a decode.
 *  5. No prefill: (e, B - e, 0, query_start_loc[e], T - query_start_loc[e], 0).
 *  6. Otherwise (e, p - e, B - p, query_start_loc[e], (T - query_start_loc[e]) -
 *     (T - query_start_loc[p]), T - query_start_loc[p]). vLLM computes the last two as
 *     tensors of query_start_loc's dtype, so with an int32 query_start_loc they wrap modulo
 *     2^32 as vLLM's do. In a batch that is not ordered (a prefill before an extend) p - e is 0
 *     and everything from p on counts as prefill, as in vLLM.
 * Reads: args, query_start_loc_cpu, seq_lens_cpu_upper_bound. Writes: the six outputs of args.
 *   Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or query_start_loc_cpu, small
 *   struct_size, ndim/dtype/device of a tensor, query_start_loc_cpu not of num_reqs + 1
 *   entries, seq_lens_cpu_upper_bound not of num_reqs, num_reqs < 0, decode_threshold out of
 *   range, a broadcast input of more than CATTN_MAX_BROADCAST_ELEMENTS entries, the cases of
 *   step 2, an int64 count that overflows).
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends(
    cattn_split_decodes_prefills_and_extends_args_t* args);

typedef struct cattn_split_decodes_prefills_and_extends_device_args {
  size_t struct_size;
  const DLTensor* query_start_loc;      /* in: device [B + 1] int32/int64 */
  const DLTensor* seq_lens_upper_bound; /* in: device [B] int32/int64 */
  const DLTensor* num_actual_tokens;    /* in, may be NULL: device [1]; NULL means
                                           query_start_loc[B] */
  const DLTensor* max_query_len;        /* in, may be NULL: device [1]; NULL means the largest
                                           q[i] (0 when B = 0) */
  int64_t decode_threshold;             /* in: [0, INT32_MAX] */
  DLTensor* result;                     /* out: device [6] int32/int64: num_decodes,
                                           num_extends, num_prefills, num_decode_tokens,
                                           num_extend_tokens, num_prefill_tokens */
  cattn_stream_t stream;
} cattn_split_decodes_prefills_and_extends_device_args_t;
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_DEVICE_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_prefills_and_extends_device_args_t))
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_DEVICE_ARGS_INIT \
  { CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_DEVICE_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, NULL, \
    NULL }

/* cattn_split_decodes_prefills_and_extends for a batch on the device, results in `result`.
 * Reads: args, the input tensors. Writes: result. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, query_start_loc, seq_lens_upper_bound
 *   or result, small struct_size, ndim/dtype/shape of a tensor, a host tensor, tensors on
 *   different devices, decode_threshold out of range, result longer than 6 entries or with a
 *   zero stride, result overlapping an input, a broadcast input of more than
 *   CATTN_MAX_BROADCAST_ELEMENTS entries); CATTN_INSUFFICIENT_SIZE (result shorter than 6
 *   entries); CATTN_NOT_SUPPORTED (CPU-only build, no usable device, a tensor off its element
 *   alignment); CATTN_CUDA_ERROR.
 * Stream: one kernel on args->stream: no host sync, no allocation, capturable and correct on
 *   replay. Where the host call fails on the values (B = 0 past step 1, an int64 count that
 *   overflows) all six entries are -1; an int32 result keeps the low 32 bits.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends_device(
    const cattn_split_decodes_prefills_and_extends_device_args_t* args);

typedef struct cattn_split_prefill_chunks_args {
  size_t struct_size;
  const DLTensor* seq_lens_cpu; /* in: host [n] int32/int64, the prefill requests' lengths */
  int64_t workspace_size;       /* in: tokens per chunk, >= 0 */
  int64_t request_offset;       /* in: added to every bound */
  DLTensor* chunks;             /* out, may be NULL: host [capacity >= num_chunks, 2]
                                   int32/int64, row k = {start, end} of chunk k; rows past
                                   num_chunks are not written */
  int64_t num_chunks;           /* out: the number of chunks, also when chunks is NULL */
} cattn_split_prefill_chunks_args_t;
#define CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE ((size_t)sizeof(cattn_split_prefill_chunks_args_t))
#define CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT \
  { CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE, NULL, 0, 0, NULL, 0 }

/* Splits prefill requests into chunks whose total length fits the workspace (vLLM's
 * split_prefill_chunks): greedy, a chunk starts at request i and takes requests while the
 * running sum stays <= workspace_size; chunk bounds are half-open [start + request_offset,
 * end + request_offset). An empty seq_lens_cpu gives no chunk. Every length must be <=
 * workspace_size (vLLM asserts; compared exactly, where vLLM's tensor comparison wraps a
 * workspace_size past INT32_MAX for an int32 tensor). Call with chunks NULL to learn
 * num_chunks (the size query), then with a tensor of at least that many rows.
 * Reads: args, seq_lens_cpu. Writes: chunks, num_chunks. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args or seq_lens_cpu, small struct_size,
 *   ndim/dtype/device of a tensor, chunks not of 2 columns or with a zero stride or
 *   overlapping seq_lens_cpu, workspace_size < 0, a length > workspace_size (vLLM's assert), a
 *   bound that overflows int64 or does not fit an int32 chunks); CATTN_INSUFFICIENT_SIZE
 *   (chunks of fewer than num_chunks rows).
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_split_prefill_chunks(cattn_split_prefill_chunks_args_t* args);

/* The regions of cattn_reorder_batch_to_split_decodes_and_prefills, in batch order. */
#define CATTN_REGION_DECODE 0
#define CATTN_REGION_SHORT_EXTEND 1
#define CATTN_REGION_LONG_EXTEND 2
#define CATTN_REGION_PREFILL 3

typedef struct cattn_reorder_batch_args {
  size_t struct_size;
  const DLTensor* num_scheduled_tokens; /* in: host [B] int32/int64, per request in batch
                                           order */
  const DLTensor* num_computed_tokens;  /* in: host [B] int32/int64 */
  const DLTensor* num_prompt_tokens;    /* in: host [B] int32/int64 */
  int64_t decode_threshold;             /* in: [0, INT32_MAX]; vLLM's default 1 */
  DLTensor* index_map;  /* out: host [B] int32/int64: index_map[i] = the position before the
                           reorder of the request at position i after it (the identity when
                           nothing changes); an int32 one holds at most 2^28 requests */
  DLTensor* swaps;      /* out, may be NULL: host [capacity >= max(B - 1, 0), 2] int32/int64:
                           the swaps vLLM makes, in its order; rows past num_swaps are not
                           written */
  int32_t changed;      /* out: 1 when the batch must be reordered (vLLM returns True) */
  int32_t reserved0;    /* set to 0 */
  int64_t num_swaps;    /* out */
  int64_t num_decodes;       /* out: requests of region CATTN_REGION_DECODE */
  int64_t num_short_extends; /* out */
  int64_t num_long_extends;  /* out */
  int64_t num_prefills;      /* out */
} cattn_reorder_batch_args_t;
#define CATTN_REORDER_BATCH_ARGS_SIZE ((size_t)sizeof(cattn_reorder_batch_args_t))
#define CATTN_REORDER_BATCH_ARGS_INIT \
  { CATTN_REORDER_BATCH_ARGS_SIZE, NULL, NULL, NULL, 1, NULL, NULL, 0, 0, 0, 0, 0, 0, 0 }
/* The same struct under its utility's name. Since: 1.1 */
typedef cattn_reorder_batch_args_t cattn_reorder_batch_to_split_decodes_and_prefills_args_t;

/* Computes how vLLM's reorder_batch_to_split_decodes_and_prefills reorders a batch; the engine
 * applies it. With s, c, p the scheduled, computed and prompt tokens and thr =
 * decode_threshold, request i is in region decode (c > 0, s <= thr, c >= p), short extend
 * (c > 0, s <= thr, c < p), long extend (c > 0, s > thr) or prefill (c <= 0, whatever s; a
 * one-token prompt is a prefill). The target is the regions sorted; a position is misplaced
 * when its region differs from the target's. None misplaced: changed = 0, index_map the
 * identity, no swap. Otherwise the misplaced requests, taken region by region and in batch
 * order within a region, move to the misplaced positions in ascending order; correctly placed
 * requests stay (this is not a stable sort of the batch: [P0, D1, P2, D3], named by their old
 * positions, becomes [D3, D1, P2, P0]). swaps lists vLLM's in-place swap_states(a, b) calls,
 * which give the same order when applied first to last to every per-request array: at most
 * B - 1 of them. In vLLM this function also reorders the batch; libcattn only plans it.
 * Reads: args and the three inputs (each element once). Writes: index_map, swaps and the
 *   outputs of args. Allocates: nothing (index_map is the working memory).
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, an input or index_map, small
 *   struct_size, ndim/dtype/device of a tensor, inputs of different lengths, index_map longer
 *   than B entries, swaps not of 2 columns, an output with a zero stride or overlapping an
 *   input or the other output, decode_threshold out of range, reserved0 != 0, an int32
 *   index_map of more than 2^28 entries); CATTN_INSUFFICIENT_SIZE (index_map shorter than B,
 *   swaps of fewer than B - 1 rows).
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_reorder_batch_to_split_decodes_and_prefills(
    cattn_reorder_batch_args_t* args);

/* ============================================================================================
 * Metadata v2 helpers (CommonAttentionMetadata.naive_query_lens, compute_num_computed_tokens,
 * token_to_req_indices, unpadded)
 * ========================================================================================== */

typedef struct cattn_naive_query_lens_args {
  size_t struct_size;
  /* in: reads query_start_loc ([B + 1]) and, for compute_num_computed_tokens, seq_lens ([B]);
   * B is seq_lens' length when seq_lens is read, query_start_loc's length - 1 otherwise. Every
   * other field is ignored; a 1.0 struct will do. */
  const cattn_common_attn_metadata_t* metadata;
  DLTensor* out;                   /* out: [B] int32/int64 on the tensors' device */
  cattn_stream_t stream;           /* CUDA tensors only */
} cattn_naive_query_lens_args_t;
#define CATTN_NAIVE_QUERY_LENS_ARGS_SIZE ((size_t)sizeof(cattn_naive_query_lens_args_t))
#define CATTN_NAIVE_QUERY_LENS_ARGS_INIT { CATTN_NAIVE_QUERY_LENS_ARGS_SIZE, NULL, NULL, NULL }
/* compute_num_computed_tokens takes the same struct. */
typedef cattn_naive_query_lens_args_t cattn_compute_num_computed_tokens_args_t;
#define CATTN_COMPUTE_NUM_COMPUTED_TOKENS_ARGS_SIZE CATTN_NAIVE_QUERY_LENS_ARGS_SIZE
#define CATTN_COMPUTE_NUM_COMPUTED_TOKENS_ARGS_INIT CATTN_NAIVE_QUERY_LENS_ARGS_INIT

/* Writes the query lengths, out[i] = query_start_loc[i + 1] - query_start_loc[i] (vLLM's
 * CommonAttentionMetadata.naive_query_lens: "naive" because it assumes each query ends where
 * the next begins). Values are not checked: a decreasing query_start_loc gives a negative
 * length, as in vLLM. out may be no view of query_start_loc.
 * Reads: args, metadata->query_start_loc. Writes: out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, metadata or tensors, a small
 *   struct_size, shapes, dtypes, devices, out overlapping query_start_loc, a broadcast
 *   query_start_loc of more than CATTN_MAX_BROADCAST_ELEMENTS entries, a host difference that
 *   overflows int64 or does not fit out's dtype); CATTN_INSUFFICIENT_SIZE (out shorter than B);
 *   CATTN_NOT_SUPPORTED (CUDA tensors this build or machine cannot serve, a device tensor off
 *   its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream, reading query_start_loc on
 *   the device: no host sync, no allocation, capturable and correct on replay. There a
 *   difference is computed modulo 2^64 and an int32 out keeps its low 32 bits.
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_naive_query_lens(const cattn_naive_query_lens_args_t* args);

/* Writes the tokens each request has computed before this step, out[i] = seq_lens[i] -
 * (query_start_loc[i + 1] - query_start_loc[i]) (vLLM's
 * CommonAttentionMetadata.compute_num_computed_tokens). vLLM caches the tensor in the metadata
 * object and returns the cached one on later calls, even after a copy made with replace() has
 * new lengths; libcattn keeps no cache: every call computes from the tensors as they are.
 * query_start_loc must have B + 1 entries. Values are not checked (vLLM does not), so a
 * seq_len shorter than its query gives a negative count. out may be the very view of seq_lens
 * (in place); any other overlap is refused.
 * Reads: args, metadata->query_start_loc, metadata->seq_lens. Writes: out. Allocates: nothing.
 * Returns: as cattn_naive_query_lens, seq_lens included in the checks.
 * Stream: as cattn_naive_query_lens (one kernel, capturable, correct on replay).
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_compute_num_computed_tokens(
    const cattn_compute_num_computed_tokens_args_t* args);

typedef struct cattn_token_to_req_indices_args {
  size_t struct_size;
  /* in: reads query_start_loc ([B + 1], the batch's device), query_start_loc_cpu (its host
   * mirror, may be NULL) and num_actual_tokens (T, >= 0, padding included). A 1.0 struct will
   * do. */
  const cattn_common_attn_metadata_t* metadata;
  /* out: [>= max(M, T)] int32/int64 on query_start_loc's device, where M = the mapped tokens
   * (see below); the caller owns it and may reuse it every step. */
  DLTensor* buffer;
  cattn_stream_t stream;           /* CUDA tensors only */
} cattn_token_to_req_indices_args_t;
#define CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE ((size_t)sizeof(cattn_token_to_req_indices_args_t))
#define CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT \
  { CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE, NULL, NULL, NULL }

/* Writes the request of every token into a caller's buffer (vLLM's
 * CommonAttentionMetadata.token_to_req_indices): with q[r] = query_start_loc[r + 1] -
 * query_start_loc[r] and M = the sum of q (the mapped tokens), buffer[0:M] = each r repeated
 * q[r] times, r = 0 .. B - 1 in order, and buffer[M:T] = 0, so padding tokens map to request 0
 * (not to -1). The result is buffer[0:T]; entries from max(M, T) on are not written. vLLM
 * builds the mapping once and caches the slice in the metadata object, returning the cache on
 * every later call - also on a copy whose batch has changed (extend_all_queries_by_N carries
 * it over stale). libcattn keeps no cache: each call computes the mapping from the tensors as
 * they are, so recompute it whenever the batch changes, or keep the buffer as the cache.
 * Host path: M = query_start_loc_cpu[B] (or query_start_loc[B] - query_start_loc[0] without a
 *   mirror). As vLLM (torch.repeat_interleave), a negative q and a sum of q other than M are
 *   CATTN_INVALID_ARGUMENT; a buffer shorter than max(M, T) is CATTN_INSUFFICIENT_SIZE (vLLM
 *   asserts).
 * CUDA path: one kernel reads query_start_loc on the device and takes M = query_start_loc[B] -
 *   query_start_loc[0] there, so a captured graph maps each replay's batch (T is the captured
 *   value; a padded batch keeps T constant). When the mirror is given, the buffer's length is
 *   checked against max(mirror M, T) on the host, as vLLM asserts; without it against T only,
 *   and the kernel writes nothing past the buffer's end. The data cannot be checked on the
 *   device: a decreasing query_start_loc entry counts as an empty request, never an access out
 *   of bounds.
 * Reads: args, the metadata's query_start_loc(_cpu) and num_actual_tokens. Writes: buffer.
 *   Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, metadata or tensors, small struct_size,
 *   shapes, dtypes, devices, T < 0, a buffer overlapping query_start_loc(_cpu), a broadcast
 *   query_start_loc of more than CATTN_MAX_BROADCAST_ELEMENTS entries, the host checks above,
 *   a request index that does not fit an int32 buffer); CATTN_INSUFFICIENT_SIZE;
 *   CATTN_NOT_SUPPORTED (CUDA tensors this build or machine cannot serve, a device tensor off
 *   its element alignment); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream: no host sync, no allocation,
 *   capturable and correct on replay.
 * Lifetime: tensors borrowed for the call; nothing is retained. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_token_to_req_indices(const cattn_token_to_req_indices_args_t* args);

/* The most dimensions a tensor handed to cattn_unpadded may have. Since: 1.1 */
#define CATTN_UNPADDED_MAX_DIMS 4
/* The size of cattn_unpadded_storage_t's opaque words: room for the sliced view of every
 * DLTensor field of the metadata struct, with shapes and strides. Since: 1.1 */
#define CATTN_UNPADDED_STORAGE_WORDS 256

/* Caller-owned storage for the sliced views cattn_unpadded makes (their DLTensor structs,
 * shapes and strides); the out metadata's tensor fields point into it. Opaque: read the views
 * through those fields. Set struct_size to CATTN_UNPADDED_STORAGE_SIZE. Since: 1.1 */
typedef struct cattn_unpadded_storage {
  size_t struct_size;
  int64_t opaque[CATTN_UNPADDED_STORAGE_WORDS];
} cattn_unpadded_storage_t;
#define CATTN_UNPADDED_STORAGE_SIZE ((size_t)sizeof(cattn_unpadded_storage_t))

typedef struct cattn_unpadded_args {
  size_t struct_size;
  const cattn_common_attn_metadata_t* metadata; /* in: the padded batch */
  int64_t num_actual_tokens;       /* in: T' in [0, slot_mapping's length] */
  int64_t num_actual_reqs;         /* in: B' in [0, seq_lens' length] */
  cattn_common_attn_metadata_t* out; /* out: the unpadded batch (may not be metadata itself) */
  cattn_unpadded_storage_t* storage; /* out: the views out points into */
} cattn_unpadded_args_t;
#define CATTN_UNPADDED_ARGS_SIZE ((size_t)sizeof(cattn_unpadded_args_t))
#define CATTN_UNPADDED_ARGS_INIT { CATTN_UNPADDED_ARGS_SIZE, NULL, 0, 0, NULL, NULL }

/* Makes the metadata of the first B' requests and T' tokens of a padded batch (vLLM's
 * CommonAttentionMetadata.unpadded(T', B')) as views: no tensor data is read, copied or
 * written, and nothing is allocated. Each present tensor field of the input becomes, in out, a
 * view of its first entries (same data, byte_offset, dtype, device and strides; the first
 * dimension cut) made in args->storage: query_start_loc(_cpu) [B' + 1]; seq_lens(_cpu),
 * num_computed_tokens_cpu, block_table_tensor (rows), causal_per_req, is_prefilling,
 * dcp_local_seq_lens(_cpu), encoder_seq_lens(_cpu) and seq_lens_cpu_upper_bound [B'];
 * slot_mapping and positions [T']. NULL fields stay NULL. logits_indices_padded is the input's
 * pointer. num_reqs = B', num_actual_tokens = T'; max_query_len, max_seq_len,
 * num_logits_indices, max_logits_per_req and causal are copied. vLLM drops positions and
 * seq_lens_cpu_upper_bound (so split_decodes_prefills_and_extends fails its assert on the
 * result); libcattn slices them like the other per-token and per-request fields. Python's
 * slices shorten silently past the end; here a B' or T' past a tensor's length is an error.
 * The newer fields are read from a 1.1 input and written to a 1.1 out only.
 * Reads: args, the metadata struct and its tensors' shapes and strides. Writes: *out (its
 *   struct_size kept), *args->storage (its struct_size kept). Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL args, metadata, out or storage, small
 *   struct_size, out or storage overlapping each other, args, metadata or a DLTensor the views
 *   are made from (out equal to metadata among them), B' or T' negative or past a tensor's
 *   first dimension, query_start_loc(_cpu) shorter than B' + 1, a tensor of no dimension or of
 *   more than CATTN_UNPADDED_MAX_DIMS, malformed tensors).
 * Stream: synchronous; no device work, so it serves host and device tensors alike.
 * Lifetime: out's tensor fields point into args->storage and into the input tensors' memory;
 *   they stay valid while both do. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_unpadded(const cattn_unpadded_args_t* args);

/* ============================================================================================
 * Other helpers of vLLM's newest attention utils (1.1): max_local_attention_virtual_batches,
 * compute_mm_prefix_range_tensor, fill_mm_prefix_query_ranges, log2_lse_to_ln
 * ========================================================================================== */

typedef struct cattn_max_local_attention_virtual_batches_args {
  size_t struct_size;
  int64_t attn_chunk_size;        /* in: C, >= 1 */
  int64_t max_num_seqs;           /* in: >= 0 */
  int64_t max_num_batched_tokens; /* in: >= 0 */
  int64_t bound;                  /* out: vLLM's bound (below) */
  int64_t bound_with_empty_rows;  /* out: a bound that also holds with zero-length rows */
} cattn_max_local_attention_virtual_batches_args_t;
#define CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE \
  ((size_t)sizeof(cattn_max_local_attention_virtual_batches_args_t))
#define CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT \
  { CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE, 1, 0, 0, 0, 0 }

/* Gives vLLM's upper bound on the number of virtual batches cattn_make_local_attention_virtual_
 * batches can produce for a step of at most max_num_seqs requests and max_num_batched_tokens
 * query tokens, to size per-virtual-batch buffers once:
 *   bound = min(2 * max_num_seqs + ceil(max_num_batched_tokens / C), max_num_batched_tokens).
 * The first term holds for every batch (a request of q tokens spans at most 2 + (q - 1) / C
 * chunks). The token cap assumes every virtual batch holds a query token, which a zero-length
 * row (q = 0, CUDA-graph padding) breaks: such a row still makes one virtual batch, so
 * max_num_batched_tokens = 0 gives bound 0 although one empty row makes 1. bound is vLLM's value
 * exactly, quirk included; bound_with_empty_rows = min(2 * max_num_seqs + ceil(T / C),
 * T + max_num_seqs) holds whatever the rows, and is what to size with when padded rows occur.
 * Computed without overflow: any valid input gives exact results (each is at most
 * max_num_batched_tokens + max_num_seqs, saturated at INT64_MAX).
 * Reads: args. Writes: args->bound, args->bound_with_empty_rows. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, attn_chunk_size < 1 -
 *   vLLM divides by zero -, a negative max_num_seqs or max_num_batched_tokens); nothing is written
 *   on failure.
 * Stream: synchronous. Lifetime: nothing kept. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_max_local_attention_virtual_batches(
    cattn_max_local_attention_virtual_batches_args_t* args);

/* Multimodal prefix ranges ("mm_prefix_range", vLLM's dict request -> [(start, end), ...]) in
 * CSR form: request r's ranges are rows range_offsets[r] .. range_offsets[r + 1] - 1 of
 * ranges, in the dict's list order. range_offsets == NULL (and ranges NULL) stands for vLLM's
 * None. Both are host tensors, int32 or int64, any strides. */
typedef struct cattn_mm_prefix_range_tensor_args {
  size_t struct_size;
  const DLTensor* range_offsets; /* in: host [num_seqs + 1], offsets[0] = 0, non-decreasing,
                                    last <= rows of ranges; NULL for None */
  const DLTensor* ranges;        /* in: host [n, 2] (start, end), values in int32; NULL only
                                    with range_offsets NULL */
  DLTensor* out;                 /* out: host [num_seqs, max_ranges, 2] int32/int64, or NULL to
                                    ask for max_ranges and is_none only */
  int64_t max_ranges;            /* out: ranges per request after padding (>= 1), 0 for None */
  int32_t is_none;               /* out: 1 where vLLM returns None (then out is not written) */
  int32_t reserved0;             /* in: must be 0 */
} cattn_mm_prefix_range_tensor_args_t;
#define CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE \
  ((size_t)sizeof(cattn_mm_prefix_range_tensor_args_t))
#define CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT \
  { CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE, NULL, NULL, NULL, 0, 0, 0 }

/* Builds vLLM's padded per-request range tensor (compute_mm_prefix_range_tensor): request r's
 * ranges, a request without ranges as the one range (0, 0), each padded with (0, 0) to
 * max_ranges = the longest list. Ranges are copied as given; degenerate ones (start >= end) are
 * kept, as vLLM keeps them. The result is None (is_none = 1, max_ranges = 0, out untouched)
 * when range_offsets is NULL or when every request's list is empty or exactly [(0, 0)], as in
 * vLLM. Call with out NULL first to learn max_ranges (the size query), then with an out of
 * exactly [num_seqs, max_ranges, 2]; num_seqs = 0 gives None.
 * vLLM builds the tensor on the host and copies it to the device (non-blocking); libcattn
 * writes host memory only: copy it to the device yourself (a CUDA out is CATTN_NOT_SUPPORTED).
 * Reads: args, range_offsets, ranges. Writes: max_ranges, is_none, out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, reserved0, shapes, dtypes,
 *   offsets not starting at 0, decreasing or past the rows of ranges, a range value outside
 *   int32 - vLLM's int32 conversion raises -, out overlapping an input or of the wrong
 *   shape); CATTN_INSUFFICIENT_SIZE (out smaller than [num_seqs, max_ranges, 2]);
 *   CATTN_NOT_SUPPORTED (device tensors). On failure nothing is written.
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_compute_mm_prefix_range_tensor(
    cattn_mm_prefix_range_tensor_args_t* args);

typedef struct cattn_fill_mm_prefix_query_ranges_args {
  size_t struct_size;
  const DLTensor* range_offsets;       /* in: host [B + 1] as above, or NULL for None */
  const DLTensor* ranges;              /* in: host [n, 2] (start, end), absolute prompt
                                          positions; NULL only with range_offsets NULL */
  const DLTensor* query_start_loc_cpu; /* in: host [B + 1], from 0, non-decreasing */
  const DLTensor* seq_lens_cpu;        /* in: host [B] */
  DLTensor* out;                       /* out: host [capacity, 2] int32/int64, capacity >=
                                          query_start_loc_cpu[B] */
  int64_t rows;                        /* out: rows written: 0 or query_start_loc_cpu[B] */
} cattn_fill_mm_prefix_query_ranges_args_t;
#define CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE \
  ((size_t)sizeof(cattn_fill_mm_prefix_query_ranges_args_t))
#define CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT \
  { CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, 0 }

/* Maps each scheduled query token to the multimodal prefix range holding it (vLLM's
 * fill_mm_prefix_query_ranges). With T = query_start_loc_cpu[B], q = the query length of
 * request r and ctx = seq_lens_cpu[r] - q (the position of its first scheduled token), each
 * range (start, end) of r with start < end covers the query rows qsl[r] + max(start - ctx, 0)
 * through qsl[r] + min(end - ctx, q - 1), the end INCLUSIVE as in vLLM: the token at position
 * `end` is covered too. When no range covers any row (or None, or T = 0) rows = 0 and out is
 * left untouched: skip the mask. Otherwise rows 0..T-1 of out are set to (-1, -1), every
 * covered row to its range's (start, end) - a later range of the same request overwrites an
 * earlier one where they overlap - and rows = T; rows past T are not touched. vLLM reads
 * query_start_loc_cpu unchecked; libcattn refuses one that does not start at 0 or decreases
 * (vLLM would then write rows of another request, or wrap negative indices), and computes the
 * positions in 128 bits, as exact as vLLM's Python integers. With range_offsets NULL the
 * tensors are checked for shape and dtype only, their values not read.
 * Reads: args and the input tensors. Writes: out, args->rows. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, shapes, dtypes, offsets or
 *   query_start_loc_cpu not from 0 or decreasing, a written range value that does not fit
 *   out's dtype, out overlapping an input); CATTN_INSUFFICIENT_SIZE (capacity < T, which vLLM
 *   asserts, checked even when no range covers a row); CATTN_NOT_SUPPORTED (device tensors).
 *   On failure nothing is written.
 * Stream: synchronous. Lifetime: tensors borrowed for the call. Thread safety: any thread.
 * Since: 1.1 */
CATTN_API cattn_status_t cattn_fill_mm_prefix_query_ranges(
    cattn_fill_mm_prefix_query_ranges_args_t* args);

/* How cattn_log2_lse_to_ln rounds for float16 and bfloat16 (args->half_rounding). */
typedef enum cattn_lse_rounding_e {
  /* torch >= 2.0, CPU and CUDA (vLLM's runtime): out = round(float(x) * float(ln 2)), the
   * product in float32 with ln 2 rounded to float32, rounded once to the tensor's type. */
  CATTN_LSE_ROUNDING_TORCH = 0,
  /* torch 1.x on the CPU: ln 2 is first rounded to the tensor's type, then as above. */
  CATTN_LSE_ROUNDING_TORCH1_CPU = 1
} cattn_lse_rounding_t;

typedef struct cattn_log2_lse_to_ln_args {
  size_t struct_size;
  const DLTensor* lse;   /* in: any shape (0 to 8 dims), any strides (stride 0 too); float16,
                            bfloat16, float32 or float64 */
  DLTensor* out;         /* out: lse's shape and dtype, same device, no zero strides; may be the
                            very same view as lse (in place), may not overlap it otherwise */
  int64_t half_rounding; /* in: a cattn_lse_rounding_t (float16/bfloat16 only) */
  cattn_stream_t stream; /* CUDA tensors only */
} cattn_log2_lse_to_ln_args_t;
#define CATTN_LOG2_LSE_TO_LN_ARGS_SIZE ((size_t)sizeof(cattn_log2_lse_to_ln_args_t))
#define CATTN_LOG2_LSE_TO_LN_ARGS_INIT \
  { CATTN_LOG2_LSE_TO_LN_ARGS_SIZE, NULL, NULL, CATTN_LSE_ROUNDING_TORCH, NULL }

/* Converts a base-2 log-sum-exp to natural-log units: out = lse * ln 2 (vLLM's log2_lse_to_ln).
 * float64 multiplies in double by ln 2, float32 in float by (float)ln 2, as torch does; float16
 * and bfloat16 as args->half_rounding says, with round-to-nearest-even conversions, so host
 * and device give the same bits. A NaN stays a NaN (its payload is not specified: torch's CPU
 * and CUDA builds differ there); infinities and signed zeros follow IEEE multiplication.
 * Reads: args, lse. Writes: out. Allocates: nothing.
 * Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, an unsupported dtype, out of
 *   another shape or dtype, a zero-stride out, out overlapping lse other than as the same view,
 *   an unknown half_rounding, tensors on different devices); CATTN_NOT_SUPPORTED (CUDA tensors
 *   this build or machine cannot serve, a misaligned device tensor); CATTN_CUDA_ERROR.
 * Stream: host - synchronous; CUDA - one kernel on args->stream, returns before completion,
 *   capturable in a CUDA graph (shapes and pointers are captured, values are read at replay).
 * Lifetime: tensors borrowed for the call. Thread safety: any thread. Since: 1.1 */
CATTN_API cattn_status_t cattn_log2_lse_to_ln(const cattn_log2_lse_to_ln_args_t* args);

/* ============================================================================================
 * Function table for dlopen users (append-only)
 * ========================================================================================== */

/* Every entry point, in release order. New members are only appended; check struct_size before
 * reading a member newer than your header. */
typedef struct cattn_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t version;
  /* 1.0 */
  uint32_t (*version_number)(void);
  const char* (*version_string)(void);
  const char* (*status_string)(cattn_status_t);
  const char* (*last_error_message)(void);
  cattn_status_t (*cuda_device_count)(int32_t*);
  cattn_status_t (*context_create)(cattn_context_t**);
  void (*context_destroy)(cattn_context_t*);
  cattn_status_t (*is_valid_kv_cache_layout)(const char*, int32_t*);
  const char* (*kv_cache_layout_name)(cattn_kv_cache_layout_t);
  cattn_status_t (*context_set_kv_cache_layout_override)(cattn_context_t*,
                                                         cattn_kv_cache_layout_t);
  cattn_status_t (*get_kv_cache_layout)(const cattn_context_t*, cattn_kv_cache_layout_args_t*);
  cattn_status_t (*get_dcp_local_seq_lens)(const cattn_dcp_local_seq_lens_args_t*);
  cattn_status_t (*get_pcp_query_restore_idx_size)(const DLTensor*, int64_t*);
  cattn_status_t (*get_pcp_query_restore_idx)(const cattn_pcp_query_restore_idx_args_t*);
  cattn_status_t (*fused_pcp_qkv_select)(const cattn_fused_pcp_qkv_select_args_t*);
  cattn_status_t (*pcp_kv_allgather_and_restore_workspace_size)(
      const cattn_pcp_kv_allgather_and_restore_args_t*, size_t*);
  cattn_status_t (*pcp_kv_allgather_and_restore)(const cattn_pcp_kv_allgather_and_restore_args_t*);
  cattn_status_t (*compute_causal_conv1d_metadata_size)(const DLTensor*, int64_t, int64_t*,
                                                        int64_t*);
  cattn_status_t (*compute_causal_conv1d_metadata)(cattn_causal_conv1d_metadata_args_t*);
  cattn_status_t (*extend_all_queries_by_n)(const cattn_extend_all_queries_by_n_args_t*);
  cattn_status_t (*make_kv_sharing_fast_prefill_common_attn_metadata)(
      cattn_fast_prefill_metadata_args_t*);
  cattn_status_t (*make_local_attention_virtual_batches)(cattn_local_attention_args_t*);
  void (*local_attention_plan_destroy)(cattn_local_attention_plan_t*);
  cattn_status_t (*local_attention_plan_get_shape)(const cattn_local_attention_plan_t*,
                                                   int64_t*, int64_t*);
  cattn_status_t (*local_attention_plan_fill)(const cattn_local_attention_plan_t*,
                                              const cattn_local_attention_fill_args_t*);
  cattn_status_t (*local_attention_plan_make_block_table)(const cattn_local_attention_plan_t*,
                                                          const DLTensor*, DLTensor*,
                                                          cattn_stream_t);
  cattn_status_t (*mamba_get_block_table_tensor)(const cattn_mamba_block_table_args_t*);
  cattn_status_t (*get_per_layer_parameters)(const cattn_attention_layer_desc_t*, size_t,
                                             cattn_per_layer_parameters_t*);
  cattn_status_t (*infer_global_hyperparameters)(const cattn_per_layer_parameters_t*, size_t,
                                                 cattn_global_hyperparameters_t*);
  /* 1.0, NCCL */
  cattn_status_t (*comm_get_unique_id)(cattn_comm_unique_id_t*);
  cattn_status_t (*comm_create)(const cattn_comm_unique_id_t*, int32_t, int32_t, int32_t,
                                cattn_comm_t**);
  cattn_status_t (*comm_create_borrowed)(void*, cattn_comm_t**);
  void (*comm_destroy)(cattn_comm_t*);
  cattn_status_t (*comm_get_rank)(const cattn_comm_t*, int32_t*);
  cattn_status_t (*comm_get_size)(const cattn_comm_t*, int32_t*);
  /* 1.1 */
  cattn_status_t (*make_local_attention_virtual_batches_size)(const cattn_local_attention_args_t*,
                                                              int64_t*, int64_t*, size_t*);
  cattn_status_t (*compute_causal_conv1d_metadata_device)(
      const cattn_causal_conv1d_metadata_device_args_t*);
  cattn_status_t (*make_local_attention_virtual_batches_device)(
      const cattn_local_attention_device_args_t*);
  cattn_status_t (*step_plan_create)(const cattn_step_plan_desc_t*, cattn_step_plan_t**);
  void (*step_plan_destroy)(cattn_step_plan_t*);
  cattn_status_t (*step_plan_get_shape)(const cattn_step_plan_t*, cattn_step_plan_shape_t*);
  cattn_status_t (*step_plan_workspace_size)(const cattn_step_plan_t*, size_t*);
  cattn_status_t (*step_plan_run)(const cattn_step_plan_t*, const cattn_step_batch_t*,
                                  const cattn_step_outputs_t*, cattn_stream_t);
  cattn_status_t (*kv_cache_layout_from_name)(const char*, cattn_kv_cache_layout_t*);
  cattn_status_t (*kv_cache_layout_get_properties)(cattn_kv_cache_layout_t,
                                                   cattn_kv_cache_layout_properties_t*);
  cattn_status_t (*get_flashinfer_layout_string)(cattn_kv_cache_layout_t, const char**);
  cattn_status_t (*kv_cache_layout_strides)(cattn_kv_cache_layout_strides_args_t*);
  cattn_status_t (*get_supported_kv_cache_layouts)(cattn_get_supported_kv_cache_layouts_args_t*);
  cattn_status_t (*context_set_kv_cache_layout_preset)(cattn_context_t*, const char*);
  cattn_status_t (*resolve_kv_cache_layout)(cattn_context_t*,
                                            cattn_resolve_kv_cache_layout_args_t*);
  cattn_status_t (*record_kv_cache_layout)(cattn_context_t*, const char*);
  cattn_status_t (*get_resolved_kv_cache_layout)(const cattn_context_t*,
                                                 cattn_kv_cache_layout_t*);
  cattn_status_t (*split_decodes_and_prefills)(cattn_split_decodes_and_prefills_args_t*);
  cattn_status_t (*split_decodes_and_prefills_device)(
      const cattn_split_decodes_and_prefills_device_args_t*);
  cattn_status_t (*split_decodes_prefills_and_extends)(
      cattn_split_decodes_prefills_and_extends_args_t*);
  cattn_status_t (*split_decodes_prefills_and_extends_device)(
      const cattn_split_decodes_prefills_and_extends_device_args_t*);
  cattn_status_t (*split_prefill_chunks)(cattn_split_prefill_chunks_args_t*);
  cattn_status_t (*reorder_batch_to_split_decodes_and_prefills)(cattn_reorder_batch_args_t*);
  /* 1.1, metadata v2 */
  cattn_status_t (*naive_query_lens)(const cattn_naive_query_lens_args_t*);
  cattn_status_t (*compute_num_computed_tokens)(const cattn_compute_num_computed_tokens_args_t*);
  cattn_status_t (*token_to_req_indices)(const cattn_token_to_req_indices_args_t*);
  cattn_status_t (*unpadded)(const cattn_unpadded_args_t*);
  cattn_status_t (*max_local_attention_virtual_batches)(
      cattn_max_local_attention_virtual_batches_args_t*);
  cattn_status_t (*compute_mm_prefix_range_tensor)(cattn_mm_prefix_range_tensor_args_t*);
  cattn_status_t (*fill_mm_prefix_query_ranges)(cattn_fill_mm_prefix_query_ranges_args_t*);
  cattn_status_t (*log2_lse_to_ln)(const cattn_log2_lse_to_ln_args_t*);
} cattn_api_t;
#define CATTN_API_SIZE ((size_t)sizeof(cattn_api_t))

/* Returns the function table for ABI `abi_major`, or NULL when this library does not implement
 * that major version: the one symbol a dlopen user needs to resolve.
 * Returns: the table or NULL; cannot fail. Stream: synchronous.
 * Lifetime: static; valid while the library stays loaded. Thread safety: any thread.
 * Since: 1.0 */
CATTN_API const cattn_api_t* cattn_get_api(uint32_t abi_major);

/* The library's file name for dlopen: its SONAME, "libcattn.so.<ABI major>". Since: 1.1 */
#define CATTN_SONAME "libcattn.so.1"

/* The type of cattn_get_api, for callers that resolve it with dlsym. ISO C defines no cast from
 * dlsym's void* to a function pointer (-Wpedantic warns on one), so copy the pointer's bytes:
 *     void* lib = dlopen(CATTN_SONAME, RTLD_NOW | RTLD_LOCAL);
 *     void* sym = lib ? dlsym(lib, "cattn_get_api") : NULL;
 *     cattn_get_api_fn get_api = NULL;
 *     if (sym) memcpy(&get_api, &sym, sizeof get_api);
 *     const cattn_api_t* api = get_api ? get_api(CATTN_VERSION_MAJOR) : NULL;
 * POSIX guarantees that the two pointer types have one representation. Since: 1.1 */
typedef const cattn_api_t* (*cattn_get_api_fn)(uint32_t abi_major);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CATTN_H */
