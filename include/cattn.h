/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cattn.h
 * @brief libcattn: vLLM's attention-backend metadata utilities behind a C ABI.
 *
 * The only public header. It compiles as C99 and as C++ and needs no CUDA header: tensors are
 * borrowed DLPack views (`dlpack/dlpack.h`) and streams are forward-declared. Each call has a
 * page in docs/api/ (what vLLM computes, where libcattn differs, edge cases, a worked example,
 * history); docs/api/README.md lists them. docs/design.md says how it is built,
 * docs/performance.md what it measures.
 *
 * Contents, by subject (each a section below, and a group, named here, of the HTML reference
 * that scripts/docs.sh builds):
 *  - @ref group_version "Version": the version macros, version, version_string.
 *  - @ref group_status "Status": the status codes, status_string, last_error_message.
 *  - @ref group_runtime "Runtime and handles": the stream type, CUDA device count, context,
 *    the common attention metadata struct.
 *  - @ref group_kv_cache_layouts "KV-cache layouts": get_kv_cache_layout,
 *    is_valid_kv_cache_layout, the six layouts and their properties and strides,
 *    get_supported_kv_cache_layouts, resolve_kv_cache_layout.
 *  - @ref group_batch_split "Batch splitting and reordering": split_decodes_and_prefills
 *    (+ `_capturable`), split_decodes_prefills_and_extends (+ `_capturable`),
 *    split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills.
 *  - @ref group_per_request "Per-request metadata": naive_query_lens,
 *    compute_num_computed_tokens, token_to_req_indices, unpadded.
 *  - @ref group_dcp "DCP": get_dcp_local_seq_lens.
 *  - @ref group_pcp "PCP": get_pcp_query_restore_idx (+ `_size`), fused_pcp_qkv_select
 *    (+ `_size`), the communicator (`cattn_comm_*`), pcp_kv_allgather_and_restore
 *    (+ `_workspace_size`).
 *  - @ref group_local_attention "Local attention": make_local_attention_virtual_batches
 *    (+ `_size`, the plan, `_capturable`), max_local_attention_virtual_batches.
 *  - @ref group_causal_conv1d "Causal conv1d": compute_causal_conv1d_metadata (+ `_size`,
 *    `_capturable`).
 *  - @ref group_mamba "Mamba": mamba_get_block_table_tensor.
 *  - @ref group_fast_prefill "Fast prefill and extend":
 *    make_kv_sharing_fast_prefill_common_attn_metadata, extend_all_queries_by_n.
 *  - @ref group_mm_prefix "Multimodal prefix ranges": compute_mm_prefix_range_tensor,
 *    fill_mm_prefix_query_ranges.
 *  - @ref group_lse "LSE": log2_lse_to_ln.
 *  - @ref group_per_layer "Per-layer parameters": get_per_layer_parameters,
 *    infer_global_hyperparameters.
 *  - @ref group_step_inputs "Step inputs (1.2)": prepare_pos_seq_lens, gather_block_tables,
 *    compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check,
 *    step_inputs_size, and the padding contract.
 *  - @ref group_spec_decode "Speculative decoding (1.2)":
 *    eagle_step_update_slot_mapping_and_metadata, eagle_prepare_inputs_padded,
 *    eagle_prepare_next_token_padded, compute_new_slot_mapping, copy_and_expand_eagle_inputs,
 *    update_num_computed_tokens_for_batch_change.
 *  - @ref group_step_plan "Step plan": several products in one launch, replayable in a CUDA
 *    graph (`cattn_step_plan_*`).
 *  - @ref group_api_table "Function table": cattn_get_api, CATTN_API_HAS, for dlopen users.
 *
 * Promises every call keeps (docs/api/conventions.md explains each at length; a declaration
 * states only what it adds):
 * 1. Status. Fallible calls return cattn_status_t, CATTN_OK (0) on success. On failure
 *     cattn_last_error_message() names the function, the argument, the value given and the
 *     value expected, and nothing was written: no tensor byte, no output struct field (unless
 *     an input changed during the call, 5). No C++ exception leaves the library.
 * 2. Tensors are borrowed for the call: inputs `const DLTensor*`, outputs `DLTensor*` allocated
 *     by the caller. byte_offset and strides are honoured (NULL strides = compact row-major); no
 *     alignment is assumed. Negative strides are refused; outputs may not have zero strides; an
 *     empty tensor's strides are ignored. Index and length tensors are int32 or int64; each
 *     output keeps its dtype, and a value that does not fit is an error (host) or documented per
 *     call (device). lanes != 1 is CATTN_INVALID_ARGUMENT (1.0: CATTN_NOT_SUPPORTED); widths
 *     other than 8, 16, 32, 64 bits are CATTN_NOT_SUPPORTED. A view spanning more than 2^57
 *     bytes is CATTN_INVALID_ARGUMENT, "spans more bytes than an address space holds" (1.1), as
 *     is one reaching into the top 2^52 bytes of the address space, where no process has memory
 *     (1.2: "addresses past the end of memory").
 * 3. Broadcast inputs. An input read in full while fewer outputs are written (query_start_loc,
 *     cu_num_tokens, the conv1d and local-attention `*_cpu` mirrors, logits_indices_padded) may
 *     be a broadcast view (a zero stride) of at most CATTN_MAX_BROADCAST_ELEMENTS elements.
 * 4. Overlap, one rule. Everything a call reads is an input (tensor elements, DLTensor structs,
 *     shape and strides arrays, args and metadata structs, arrays and strings behind pointers);
 *     everything it writes is an output (tensor elements, output structs, values written through
 *     pointers). No output shares a byte with an input or another output, in one address space
 *     whatever the devices: CATTN_INVALID_ARGUMENT before anything is written, naming both
 *     (1.1; 1.0 compared tensor elements on one device). Exemptions, each documented where it
 *     applies: an output that is exactly the view it replaces (get_dcp_local_seq_lens,
 *     compute_num_computed_tokens, extend_all_queries_by_n, mamba_get_block_table_tensor
 *     without ALIGN, log2_lse_to_ln); an out metadata struct that is the input struct itself
 *     (extend_all_queries_by_n, make_kv_sharing_fast_prefill_common_attn_metadata,
 *     cattn_local_attention_plan_fill); the out fields of an args struct, filled after every read.
 * 5. Inputs that change during a call (a caller's data race) give unspecified outputs or a
 *     failure (CATTN_INVALID_ARGUMENT, possibly after part of the outputs was written), never a
 *     write outside the outputs or a read outside the inputs: a host path uses a checked value
 *     only as it read it, and checks again, where it is used, any index it forms from a value
 *     it reads again.
 * 6. Device types, dtypes and enum-typed fields are read as integers: any stored value is
 *     refused with a status, never undefined behaviour.
 * 7. Devices. All-host tensors (kDLCPU, kDLCUDAHost) run the host path synchronously; kDLCUDA
 *     tensors enqueue on the call's stream (cattn_stream_t = cudaStream_t; NULL = legacy
 *     default), with no host sync, no allocation, capturable in a CUDA graph. `*_cpu` mirrors
 *     are host memory on every path; other mixes are CATTN_INVALID_ARGUMENT. Device data is
 *     never read back: value checks happen on the device as each call says, never out of
 *     bounds. A CPU-only build, or a machine without a usable device, answers CUDA tensors with
 *     CATTN_NOT_SUPPORTED after every other check. Such a path plans on the host from the
 *     `*_cpu` mirrors, so a replay repeats the planned values; the `*_capturable` calls read the
 *     batch from device tensors only and write their counts to a device tensor, so one captured
 *     graph serves a new batch on every replay (outputs sized by capacity).
 * 8. Memory. Host memory is allocated only by handle-creating calls (bounded by their size
 *     query, or fixed) and for error messages; device memory never (workspaces are the caller's).
 * 9. Versioned structs begin with `size_t struct_size` (set by the *_INIT macro). Released
 *     sizes, and any size from the newest up to SIZE_MAX, are accepted; only known fields are
 *     read or written and no size forms an address past them. A size below the oldest or between
 *     two releases is CATTN_INVALID_ARGUMENT (1.1). Reserved fields must be 0.
 * 10. Threads. Any call from any number of threads at once, provided no two write the same
 *     output or handle; handles may be shared for reading. The last error is per thread.
 * 11. Handles (contexts, plans, communicators) are opaque and checked against a registry before
 *     their memory is touched: a destroyed, foreign or wrong-kind handle is
 *     CATTN_INVALID_ARGUMENT (destroying one frees nothing). Undefined: destroying a handle
 *     another thread uses, or using a destroyed handle whose address a new handle reuses.
 *
 * Each declaration: what it computes; Reads / Writes / Allocates; Returns (every status);
 * Stream, Lifetime and Thread safety where they differ from 7, 8 and 10; Since.
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

/* === Version === */
/** @defgroup group_version Version
 *  The header's and the library's version: the `CATTN_VERSION_*` macros, cattn_version,
 *  cattn_version_string.
 *  Pages: docs/api/context.md.
 *  @{ */

/** Major version: the same major means the same ABI. Since: 1.0 */
#define CATTN_VERSION_MAJOR 1
/** Minor version: grows when calls or struct fields are added. Since: 1.0 */
#define CATTN_VERSION_MINOR 2
/** Patch version: fixes only. Since: 1.0 */
#define CATTN_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH (10200 for 1.2.0). Since: 1.0 */
#define CATTN_VERSION_NUMBER \
  (CATTN_VERSION_MAJOR * 10000 + CATTN_VERSION_MINOR * 100 + CATTN_VERSION_PATCH)
/** The header's version as text, "MAJOR.MINOR.PATCH". Since: 1.0 */
#define CATTN_VERSION_STRING "1.2.0"

/** Returns the library's CATTN_VERSION_NUMBER; compare it with the macro to detect a
 *  header/library mismatch. Cannot fail. Since: 1.0. Details: docs/api/context.md */
CATTN_API uint32_t cattn_version(void);

/** Returns the library's version as "MAJOR.MINOR.PATCH"; static, never NULL. Cannot fail.
 *  Since: 1.0. Details: docs/api/context.md */
CATTN_API const char* cattn_version_string(void);

/** @} */

/* === Status === */
/** @defgroup group_status Status
 *  The status every call returns, its name (cattn_status_string) and the calling thread's last
 *  error message.
 *  Pages: docs/api/context.md.
 *  @{ */

/** Status codes. Values are frozen once released; new codes are only appended. Since: 1.0 */
typedef enum cattn_status_e {
  CATTN_OK = 0,                /**< success */
  CATTN_INVALID_ARGUMENT = 1,  /**< an argument is NULL, malformed, inconsistent or out of range */
  CATTN_CUDA_ERROR = 2,        /**< the CUDA runtime reported an error (message has its name) */
  CATTN_OUT_OF_MEMORY = 3,     /**< an allocation failed: a handle's host memory, or the CUDA
                                    runtime's own */
  CATTN_INSUFFICIENT_SIZE = 4, /**< an output tensor or workspace is too small */
  CATTN_NOT_SUPPORTED = 5,     /**< a valid request this build or machine cannot serve */
  CATTN_INTERNAL = 6,          /**< a bug in libcattn; please report the message */
  CATTN_NOT_IMPLEMENTED = 7,   /**< reserved for calls declared before they are implemented; no
                                    call of this release returns it */
  CATTN_NCCL_ERROR = 8,        /**< NCCL reported an error (message has ncclGetErrorString's
                                    text) */
  CATTN_STATUS_COUNT_ = 9      /**< internal: number of codes; not a status */
} cattn_status_t;

/** Returns a static name for `status` ("CATTN_OK", ...), "CATTN_UNKNOWN_STATUS" for an
 *  unknown value; never NULL. Cannot fail. Since: 1.0. Details: docs/api/context.md */
CATTN_API const char* cattn_status_string(cattn_status_t status);

/** The longest message cattn_last_error_message returns, in bytes with its NUL; a caller's
 *  value shown in a message (a string, a long list) is cut short, ending in "...". Since: 1.1 */
#define CATTN_LAST_ERROR_MESSAGE_MAX 1024

/** Returns the calling thread's last failure as "function: argument problem (got X, expected
 *  Y)", or "" when no call has failed; at most CATTN_LAST_ERROR_MESSAGE_MAX bytes with its NUL.
 *  A successful call may leave an older message in place. Cannot fail.
 *  Lifetime: thread-local, valid until this thread's next libcattn call; copy it first.
 *  Since: 1.0. Details: docs/api/context.md */
CATTN_API const char* cattn_last_error_message(void);

/** @} */

/* === Runtime and handles === */
/** @defgroup group_runtime Runtime and handles
 *  The stream type, the CUDA device count, the context handle, and the common attention metadata
 *  struct that many calls read or write.
 *  Pages: docs/api/context.md, docs/api/common_attn_metadata.md, docs/api/conventions.md.
 *  @{ */

/** The most elements a broadcast view (a zero stride over a dimension of more than one
 *  element) may hold where a call reads an input in full (promise 3). Since: 1.1 */
#define CATTN_MAX_BROADCAST_ELEMENTS ((int64_t)1 << 24)

/** ABI-identical to cudaStream_t (NULL = the legacy default stream); declared here so that this
 *  header needs no CUDA header. Since: 1.0 */
typedef struct CUstream_st* cattn_stream_t;

/** Reports how many CUDA devices the library can use.
 *  count: host pointer, not NULL; receives 0 in a CPU-only build, without a driver, or when
 *  no device is visible. Reads: the CUDA runtime. Writes: *count. Allocates: nothing.
 *  Returns: CATTN_OK (also with no GPU); CATTN_INVALID_ARGUMENT (count NULL).
 *  Since: 1.0. Details: docs/api/context.md */
CATTN_API cattn_status_t cattn_cuda_device_count(int32_t* count);

/** Opaque context: the state vLLM keeps in module globals (the KV-cache layout override and
 *  the resolved layout), so that two engines in one process do not share it. Since: 1.0 */
typedef struct cattn_context_s cattn_context_t;

/** Creates a context with no layout override and no resolved layout.
 *  out: host pointer, not NULL; receives the handle. Writes: *out.
 *  Allocates: the context (a few bytes of host memory); free it with cattn_context_destroy.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (out NULL); CATTN_OUT_OF_MEMORY.
 *  Since: 1.0. Details: docs/api/context.md */
CATTN_API cattn_status_t cattn_context_create(cattn_context_t** out);

/** Destroys a context. NULL is a no-op; so is a context that is not live (destroyed already,
 *  never created), which this thread's last-error message then reports.
 *  Lifetime: the handle is invalid afterwards.
 *  Thread safety: no call may use the context concurrently. Since: 1.0.
 *  Details: docs/api/context.md */
CATTN_API void cattn_context_destroy(cattn_context_t* ctx);

/** One batch's metadata, vLLM's CommonAttentionMetadata: borrowed DLTensor pointers and
 *  counts, read and written by extend_all_queries_by_n, fast prefill and local attention.
 *  Host mirrors (`*_cpu`) are host tensors; the others live on the batch's device. The 1.1
 *  fields (positions onward) are read or written only when struct_size covers them, and each
 *  tensor among them may be NULL (vLLM's None). Set struct_size with
 *  CATTN_COMMON_ATTN_METADATA_INIT. Since: 1.0; grew in 1.1.
 *  Details: docs/api/common_attn_metadata.md */
typedef struct cattn_common_attn_metadata {
  size_t struct_size;                /**< CATTN_COMMON_ATTN_METADATA_SIZE (or _SIZE_1_0) */
  DLTensor* query_start_loc;         /**< [num_reqs + 1] cumulative query lengths */
  DLTensor* query_start_loc_cpu;     /**< host mirror of query_start_loc, may be NULL */
  DLTensor* seq_lens;                /**< [num_reqs] sequence (context + query) lengths */
  DLTensor* seq_lens_cpu;            /**< host mirror of seq_lens, may be NULL */
  DLTensor* num_computed_tokens_cpu; /**< [num_reqs] host, may be NULL */
  DLTensor* block_table_tensor;      /**< [num_reqs, max_blocks_per_req], may be NULL */
  DLTensor* slot_mapping;            /**< [num_actual_tokens (+ padding)], may be NULL */
  DLTensor* logits_indices_padded;   /**< [num_logits_indices or more], may be NULL */
  int64_t num_reqs;                  /**< number of requests */
  int64_t num_actual_tokens;         /**< tokens in the batch */
  int64_t max_query_len;             /**< longest query */
  int64_t max_seq_len;               /**< longest sequence (may be an upper bound) */
  int64_t num_logits_indices;        /**< meaningful only with logits_indices_padded */
  int32_t causal;                    /**< 1 = causal */
  int32_t reserved0;                 /**< set to 0; another value is CATTN_INVALID_ARGUMENT
                                          (since 1.1). A 1.0 struct ends here. */
  DLTensor* positions;               /**< 1.1: [num_actual_tokens (+ padding)] positions */
  DLTensor* is_prefilling;           /**< 1.1: [num_reqs] bool (8-bit): 1 while the request is
                                          still in its prompt */
  DLTensor* causal_per_req;          /**< 1.1: [num_reqs] bool, vLLM's tensor `causal`; when set
                                          it takes precedence over `causal` */
  DLTensor* dcp_local_seq_lens;      /**< 1.1: [num_reqs] this DCP rank's sequence lengths */
  DLTensor* dcp_local_seq_lens_cpu;  /**< 1.1: host mirror of dcp_local_seq_lens */
  DLTensor* seq_lens_cpu_upper_bound; /**< 1.1: [num_reqs] host: an upper bound of seq_lens
                                           (exact for prefill rows) */
  DLTensor* encoder_seq_lens;        /**< 1.1: [num_reqs] cross-attention encoder lengths */
  DLTensor* encoder_seq_lens_cpu;    /**< 1.1: host mirror of encoder_seq_lens */
  int64_t max_logits_per_req;        /**< 1.1: the most logits indices of one request; 0 or
                                          negative (CATTN_NOT_GIVEN) = not given */
} cattn_common_attn_metadata_t;
/** A negative int64 field documented as optional: vLLM's None. Since: 1.1 */
#define CATTN_NOT_GIVEN ((int64_t)-1)
/** The struct_size of this header's metadata struct. Since: 1.0 */
#define CATTN_COMMON_ATTN_METADATA_SIZE ((size_t)sizeof(cattn_common_attn_metadata_t))
/** The struct_size of a 1.0 metadata struct (ending at reserved0). Since: 1.1 */
#define CATTN_COMMON_ATTN_METADATA_SIZE_1_0 \
  ((size_t)(offsetof(cattn_common_attn_metadata_t, reserved0) + sizeof(int32_t)))
/** The struct_size of a 1.1 metadata struct (ending at max_logits_per_req). Since: 1.1 */
#define CATTN_COMMON_ATTN_METADATA_SIZE_1_1 \
  ((size_t)(offsetof(cattn_common_attn_metadata_t, max_logits_per_req) + sizeof(int64_t)))
/** Initializer: every pointer NULL, counts 0, causal 1, max_logits_per_req CATTN_NOT_GIVEN.
 *  Since: 1.0 */
#define CATTN_COMMON_ATTN_METADATA_INIT \
  { CATTN_COMMON_ATTN_METADATA_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    0, 0, 0, 0, 0, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, CATTN_NOT_GIVEN }

/** @} */

/* === KV-cache layouts === */
/** @defgroup group_kv_cache_layouts KV-cache layouts
 *  Which KV-cache layout to use, and what each layout is: get_kv_cache_layout,
 *  is_valid_kv_cache_layout, the six layouts with their properties and strides,
 *  get_supported_kv_cache_layouts, resolve_kv_cache_layout.
 *  Pages: docs/api/get_kv_cache_layout.md, docs/api/kv_cache_layout.md,
 *  docs/api/get_supported_kv_cache_layouts.md, docs/api/resolve_kv_cache_layout.md.
 *  @{ */

/** KV-cache layouts. The 1.0 values UNSET, NHD and HND keep their numbers and meaning for the
 *  1.0 calls, which accept and return only those; 1.1 names vLLM's six physical layouts
 *  (KVCacheLayout) of the logical shape [L, B, H, N, C]: NHD is LBNHC and HND is LBHNC.
 *  Since: 1.0; six layouts since 1.1. Details: docs/api/kv_cache_layout.md */
typedef enum cattn_kv_cache_layout_e {
  CATTN_KV_CACHE_LAYOUT_UNSET = 0, /**< "no preference" in inputs; never a result */
  CATTN_KV_CACHE_LAYOUT_NHD = 1,   /**< 1.0 name of LBNHC */
  CATTN_KV_CACHE_LAYOUT_HND = 2,   /**< 1.0 name of LBHNC */
  /* 1.1 */
  CATTN_KV_CACHE_LAYOUT_LBNHC = CATTN_KV_CACHE_LAYOUT_NHD, /**< [L, B, N, H, C] (1.1) */
  CATTN_KV_CACHE_LAYOUT_LBHNC = CATTN_KV_CACHE_LAYOUT_HND, /**< [L, B, H, N, C], identity (1.1) */
  CATTN_KV_CACHE_LAYOUT_LHBNC = 3,                         /**< [L, H, B, N, C] (1.1) */
  CATTN_KV_CACHE_LAYOUT_BLHNC = 4,                         /**< [B, L, H, N, C] (1.1) */
  CATTN_KV_CACHE_LAYOUT_BLNHC = 5,                         /**< [B, L, N, H, C] (1.1) */
  CATTN_KV_CACHE_LAYOUT_BHLNC = 6                          /**< [B, H, L, N, C] (1.1) */
} cattn_kv_cache_layout_t;

/** The bit of `layout` in cattn_kv_cache_layout_args.supported_mask. Since: 1.0 */
#define CATTN_KV_CACHE_LAYOUT_BIT(layout) (1u << (unsigned)(layout))

/** The environment variable that plays the part of VLLM_KV_CACHE_LAYOUT. Since: 1.0 */
#define CATTN_KV_CACHE_LAYOUT_ENV "CATTN_KV_CACHE_LAYOUT"

/** Checks whether `value` is "NHD" or "HND" (exact, case-sensitive), as vLLM's
 *  is_valid_kv_cache_layout.
 *  value: NUL-terminated host string, not NULL. valid: host pointer, not NULL.
 *  Reads: value. Writes: *valid (1 or 0). Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer).
 *  Since: 1.0. Details: docs/api/get_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_is_valid_kv_cache_layout(const char* value, int32_t* valid);

/** Returns "NHD" or "HND" for those two values, NULL for any other value, the 1.1 layouts
 *  included (their names come from cattn_kv_cache_layout_get_properties). Static; cannot
 *  fail. Since: 1.0. Details: docs/api/get_kv_cache_layout.md */
CATTN_API const char* cattn_kv_cache_layout_name(cattn_kv_cache_layout_t layout);

/** Sets, or with CATTN_KV_CACHE_LAYOUT_UNSET clears, the context's layout override (vLLM's
 *  _KV_CACHE_LAYOUT_OVERRIDE); later resolutions see the new value.
 *  ctx: a live context. layout: UNSET, NHD or HND. Writes: the context. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, layout out of range).
 *  Thread safety: the value is published atomically.
 *  Since: 1.0. Details: docs/api/get_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_override(
    cattn_context_t* ctx, cattn_kv_cache_layout_t layout);

/** Arguments of cattn_get_kv_cache_layout. Since: 1.0 */
typedef struct cattn_kv_cache_layout_args {
  size_t struct_size; /**< CATTN_KV_CACHE_LAYOUT_ARGS_SIZE */
  /** in: the backend's layouts, CATTN_KV_CACHE_LAYOUT_BIT of NHD and/or HND ORed; 0 = any. */
  uint32_t supported_mask;
  /** in: 1 = read CATTN_KV_CACHE_LAYOUT from the environment when env_value is NULL. */
  int32_t read_environment;
  /** in: the user's setting ("NHD"/"HND"), vLLM's VLLM_KV_CACHE_LAYOUT; NULL = unset. */
  const char* env_value;
  /** in: the KV connector's preferred layout (UNSET, NHD or HND); UNSET = no preference. */
  cattn_kv_cache_layout_t connector_layout;
  /** out: the resolved layout, NHD or HND. */
  cattn_kv_cache_layout_t layout;
} cattn_kv_cache_layout_args_t;
/** The struct_size of cattn_kv_cache_layout_args_t. Since: 1.0 */
#define CATTN_KV_CACHE_LAYOUT_ARGS_SIZE ((size_t)sizeof(cattn_kv_cache_layout_args_t))
/** Initializer: no mask, no environment, no setting, no connector preference. Since: 1.0 */
#define CATTN_KV_CACHE_LAYOUT_ARGS_INIT \
  { CATTN_KV_CACHE_LAYOUT_ARGS_SIZE, 0u, 0, NULL, CATTN_KV_CACHE_LAYOUT_UNSET, \
    CATTN_KV_CACHE_LAYOUT_UNSET }

/** Resolves the 1.0 KV-cache layout, vLLM's get_kv_cache_layout: the context's override, else
 *  the user's setting (env_value, or the environment), else connector_layout, else NHD.
 *  ctx: a live context, or NULL (no override). args: host pointer, not NULL.
 *  Reads: the context, args, the environment with read_environment. Writes: args->layout.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, ctx not live, a
 *  user setting that is not "NHD"/"HND", connector_layout out of range, supported_mask bits
 *  that name no 1.0 layout); CATTN_NOT_SUPPORTED (the result is not in supported_mask).
 *  Thread safety: the environment read races with a concurrent setenv; pass env_value.
 *  Since: 1.0. Details: docs/api/get_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_get_kv_cache_layout(const cattn_context_t* ctx,
                                                   cattn_kv_cache_layout_args_t* args);

/** Number of layouts (the valid cattn_kv_cache_layout_t values other than UNSET). Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_COUNT 6

/** The six layouts in vLLM's iteration order (LBHNC, LBNHC, LHBNC, BLHNC, BLNHC, BHLNC, not
 *  the numeric order), an initializer for an array of CATTN_KV_CACHE_LAYOUT_COUNT. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUTS_INIT                                                      \
  { CATTN_KV_CACHE_LAYOUT_LBHNC, CATTN_KV_CACHE_LAYOUT_LBNHC, CATTN_KV_CACHE_LAYOUT_LHBNC, \
    CATTN_KV_CACHE_LAYOUT_BLHNC, CATTN_KV_CACHE_LAYOUT_BLNHC, CATTN_KV_CACHE_LAYOUT_BHLNC }

/** Parses a layout name, vLLM's _layout_from_name: "NHD" is LBNHC, "HND" is LBHNC, otherwise
 *  one of the six canonical names, exactly (case-sensitive, no surrounding space).
 *  name: NUL-terminated host string, not NULL. layout: host pointer, not NULL.
 *  Reads: name. Writes: *layout. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer; an unknown name, the message
 *  listing the valid ones). Since: 1.1. Details: docs/api/kv_cache_layout.md */
CATTN_API cattn_status_t cattn_kv_cache_layout_from_name(const char* name,
                                                         cattn_kv_cache_layout_t* layout);

/** The fixed properties of one layout (vLLM's KVCacheLayout member and its properties), filled
 *  by cattn_kv_cache_layout_get_properties. Since: 1.1 */
typedef struct cattn_kv_cache_layout_properties {
  size_t struct_size;          /**< CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE */
  int32_t stride_order[5];     /**< out: the logical axis at each physical position, outermost
                                    first (vLLM's value) */
  int32_t layer_view_order[4]; /**< out: physical order of the per-layer view [B, H, N, C]:
                                    stride_order without L, each other axis less one */
  int32_t is_layer_compact;    /**< out: 1 when L is outermost */
  int32_t is_block_contiguous; /**< out: 1 when H, N, C are the three innermost, in order */
  int32_t is_block_compact;    /**< out: 1 when L and B are the two outermost (a page is one
                                    contiguous run of H*N*C) */
  int32_t is_block_outermost;  /**< out: 1 when B is outermost */
  int32_t order;               /**< out: position in vLLM's iteration order, 0 (LBHNC) to 5 */
  const char* name;            /**< out: the canonical name ("LBNHC", never "NHD"); static */
  const char* flashinfer_layout; /**< out: FlashInfer's name ("NHD"/"HND"), NULL for LHBNC;
                                      static */
} cattn_kv_cache_layout_properties_t;
/** The struct_size of cattn_kv_cache_layout_properties_t. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE ((size_t)sizeof(cattn_kv_cache_layout_properties_t))
/** Initializer: struct_size set, every output zero or NULL. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT \
  { CATTN_KV_CACHE_LAYOUT_PROPERTIES_SIZE, {0, 0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0, 0, 0, NULL, \
    NULL }

/** Describes `layout` (the table of all six: docs/api/kv_cache_layout.md).
 *  layout: one of the six (UNSET is not a layout). props: host pointer, struct_size set.
 *  Writes: *props (the fields its struct_size covers). Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (props NULL or small struct_size, layout not one
 *  of the six). Lifetime: the strings are static. Since: 1.1 */
CATTN_API cattn_status_t cattn_kv_cache_layout_get_properties(
    cattn_kv_cache_layout_t layout, cattn_kv_cache_layout_properties_t* props);

/** Gives FlashInfer's name of `layout`, vLLM's get_flashinfer_layout_string: "NHD" for LBNHC
 *  and BLNHC, "HND" for LBHNC, BLHNC and BHLNC.
 *  out: host pointer, not NULL; receives a static string. Writes: *out. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (out NULL, layout not one of the six);
 *  CATTN_NOT_SUPPORTED (LHBNC, which FlashInfer has no name for).
 *  Since: 1.1. Details: docs/api/kv_cache_layout.md */
CATTN_API cattn_status_t cattn_get_flashinfer_layout_string(cattn_kv_cache_layout_t layout,
                                                            const char** out);

/** Arguments of cattn_kv_cache_layout_strides. Since: 1.1 */
typedef struct cattn_kv_cache_layout_strides_args {
  size_t struct_size;             /**< CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE */
  cattn_kv_cache_layout_t layout; /**< in: one of the six */
  int32_t reserved0;              /**< set to 0 */
  int64_t sizes[5];               /**< in: the logical sizes L, B, H, N, C, each 0 or more */
  int64_t strides[5];             /**< out: the element stride of each logical axis L..C */
  int64_t physical_shape[5];      /**< out: sizes[stride_order[k]] for k = 0..4 */
  int64_t numel;                  /**< out: L * B * H * N * C */
} cattn_kv_cache_layout_strides_args_t;
/** The struct_size of cattn_kv_cache_layout_strides_args_t. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE \
  ((size_t)sizeof(cattn_kv_cache_layout_strides_args_t))
/** Initializer: layout UNSET (set one), sizes and outputs zero. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT \
  { CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_SIZE, CATTN_KV_CACHE_LAYOUT_UNSET, 0, {0, 0, 0, 0, 0}, \
    {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 0 }

/** Computes torch's strides of the logical [L, B, H, N, C] view of a compact buffer stored in
 *  `layout`'s physical order, in elements of C's unit (a size of 0 counts as 1 in the
 *  products). args: host pointer, not NULL.
 *  Reads: args. Writes: args->strides, physical_shape, numel. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, layout not one of
 *  the six, reserved0 not 0, a negative size, a product that overflows int64, the message
 *  naming the axis). Since: 1.1. Details: docs/api/kv_cache_layout.md */
CATTN_API cattn_status_t cattn_kv_cache_layout_strides(cattn_kv_cache_layout_strides_args_t* args);

/** In cattn_get_supported_kv_cache_layouts_args.backend_counts: the backend declares nothing
 *  (vLLM's None; any layout works). Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUTS_NONE (-1)

/** Arguments of cattn_get_supported_kv_cache_layouts. Since: 1.1 */
typedef struct cattn_get_supported_kv_cache_layouts_args {
  size_t struct_size;   /**< CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE */
  int64_t num_backends; /**< in: 0 or more */
  /** in: [num_backends] host array (NULL when 0): each backend's count of declared layouts
   *  (0 or more), or CATTN_KV_CACHE_LAYOUTS_NONE. */
  const int64_t* backend_counts;
  /** in: the declared lists back to back, most preferred first, in backend order (NONE takes
   *  no entries): the sum of the other counts; NULL when that is 0. */
  const cattn_kv_cache_layout_t* layouts;
  cattn_kv_cache_layout_t* out; /**< in: host array of out_capacity entries (NULL when 0) */
  int64_t out_capacity;         /**< in: entries available at out */
  int64_t num_out;              /**< out: entries written to out */
} cattn_get_supported_kv_cache_layouts_args_t;
/** The struct_size of cattn_get_supported_kv_cache_layouts_args_t. Since: 1.1 */
#define CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE \
  ((size_t)sizeof(cattn_get_supported_kv_cache_layouts_args_t))
/** Initializer: no backends, no output. Since: 1.1 */
#define CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT \
  { CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_SIZE, 0, NULL, NULL, NULL, 0, 0 }

/** Combines one worker's backends' layout lists, vLLM's get_supported_kv_cache_layouts: none
 *  declared gives the default preference; equal lists give the first as is; else the common
 *  layouts by first-entry votes, ties in iteration order. args: host pointer; host arrays.
 *  Writes: out[0..num_out), args->num_out. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, a negative count,
 *  a NULL array that must hold entries, a value not one of the six, out overlapping args or
 *  an input, an empty list among differing ones, an empty intersection);
 *  CATTN_INSUFFICIENT_SIZE (out_capacity below the answer, which is at most max(6, the first
 *  list's length); the message gives it). Since: 1.1.
 *  Details: docs/api/get_supported_kv_cache_layouts.md */
CATTN_API cattn_status_t cattn_get_supported_kv_cache_layouts(
    cattn_get_supported_kv_cache_layouts_args_t* args);

/** Arguments of cattn_resolve_kv_cache_layout. Since: 1.1 */
typedef struct cattn_resolve_kv_cache_layout_args {
  size_t struct_size;              /**< CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE */
  int64_t num_workers;             /**< in: workers reporting a list (vLLM's supported_layouts),
                                        0 or more */
  const int64_t* worker_counts;    /**< in: [num_workers] host: names in each worker's list;
                                        NULL when num_workers is 0 */
  const char* const* worker_names; /**< in: [sum of worker_counts] host NUL-terminated layout
                                        names (aliases allowed), the lists back to back */
  int64_t num_specs;               /**< in: KV-cache specs, 0 or more (0 = vLLM's None) */
  const int64_t* spec_num_heads;   /**< in: [num_specs] each spec's num_heads */
  const int64_t* spec_num_states;  /**< in: [num_specs] each spec's num_states */
  const int64_t* spec_page_size_bytes; /**< in: [num_specs] each spec's page_size_bytes */
  const char* env_value;           /**< in: the user's setting (VLLM_KV_CACHE_LAYOUT) as a
                                        name; NULL = unset */
  int32_t read_environment;        /**< in: 1 = read CATTN_KV_CACHE_LAYOUT when env_value is
                                        NULL */
  int32_t reserved0;               /**< set to 0 */
  const char* connector_layout;    /**< in: the KV connector's preferred layout name; NULL =
                                        no connector or no preference */
  cattn_kv_cache_layout_t layout;  /**< out: the resolved layout */
  int32_t connector_fell_back;     /**< out: 1 when the connector's layout was not a candidate
                                        and the first candidate was used (vLLM warns) */
  int32_t from_preset;             /**< out: 1 when the context already held a layout, which
                                        won outright */
  int32_t reserved1;               /**< set to 0 */
} cattn_resolve_kv_cache_layout_args_t;
/** The struct_size of cattn_resolve_kv_cache_layout_args_t. Since: 1.1 */
#define CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE \
  ((size_t)sizeof(cattn_resolve_kv_cache_layout_args_t))
/** Initializer: no workers, no specs, no setting, no connector. Since: 1.1 */
#define CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT \
  { CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_SIZE, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0, \
    NULL, CATTN_KV_CACHE_LAYOUT_UNSET, 0, 0, 0 }

/** The longest layout name a context stores, in bytes without the NUL. Since: 1.1 */
#define CATTN_KV_CACHE_LAYOUT_NAME_MAX 31

/** Sets, or with NULL clears, the context's resolved layout name as written (vLLM's explicit
 *  cache_config.kv_cache_layout): an alias stays "NHD"; the name is checked only when used.
 *  ctx: a live context. name: NUL-terminated host string or NULL; copied.
 *  Writes: the context. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, a name longer than
 *  CATTN_KV_CACHE_LAYOUT_NAME_MAX bytes). Thread safety: under the context's lock.
 *  Since: 1.1. Details: docs/api/resolve_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_context_set_kv_cache_layout_preset(cattn_context_t* ctx,
                                                                  const char* name);

/** Resolves one layout for the whole model, vLLM's resolve_kv_cache_layout: a layout the
 *  context holds wins; else the workers' common list, narrowed to block-compact layouts for
 *  mixed specs, picked by the user's setting, the connector, or first. The result's canonical
 *  name is stored in the context (a preset is kept as written).
 *  ctx: a live context. args: host pointer. Writes: args' out fields; the context.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, args NULL, small
 *  struct_size, reserved0/1 not 0, a negative count, a NULL array that must hold entries, a
 *  NULL name, and each failure vLLM raises: unknown preset, no worker or an empty list,
 *  workers that disagree, unknown name, mixed specs without a block-compact candidate, user
 *  setting unknown or not a candidate, unknown connector layout); on failure the context is
 *  unchanged. Thread safety: one resolution at a time per context; the environment read
 *  races with setenv (pass env_value). Since: 1.1. Details: docs/api/resolve_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_resolve_kv_cache_layout(
    cattn_context_t* ctx, cattn_resolve_kv_cache_layout_args_t* args);

/** Adopts a layout resolved elsewhere, vLLM's record_kv_cache_layout: parses `name` and stores
 *  its canonical name; fails when the context holds a different name, compared as strings
 *  (a preset "NHD" and a record of "LBNHC" conflict).
 *  ctx: a live context. name: NUL-terminated host string, not NULL. Writes: the context.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, name NULL or unknown, a
 *  context resolved to another name, which is then unchanged).
 *  Thread safety: under the context's lock. Since: 1.1.
 *  Details: docs/api/resolve_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_record_kv_cache_layout(cattn_context_t* ctx, const char* name);

/** Gives the context's resolved layout, vLLM's CacheConfig.get_resolved_kv_cache_layout.
 *  ctx: a live context. layout: host pointer, not NULL. Reads: the context. Writes: *layout.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (ctx NULL or not live, layout NULL, nothing
 *  resolved yet, a preset that names no layout). Thread safety: under the context's lock.
 *  Since: 1.1. Details: docs/api/resolve_kv_cache_layout.md */
CATTN_API cattn_status_t cattn_get_resolved_kv_cache_layout(const cattn_context_t* ctx,
                                                            cattn_kv_cache_layout_t* layout);

/** @} */

/* === Batch splitting and reordering === */
/** @defgroup group_batch_split Batch splitting and reordering
 *  Where a batch's decodes, extends and prefills begin, and the order that makes each region
 *  contiguous: split_decodes_and_prefills and split_decodes_prefills_and_extends (each with a
 *  `_capturable` variant), split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills.
 *  Pages: docs/api/split_decodes_and_prefills.md, docs/api/split_prefill_chunks.md,
 *  docs/api/reorder_batch_to_split_decodes_and_prefills.md.
 *  @{ */

/** A split's num_actual_tokens or max_query_len left for the call to derive from
 *  query_start_loc: `query_start_loc[B]`, and the largest `q[i]` (0 when B = 0). The host
 *  splits' _INIT value. Since: 1.1 */
#define CATTN_FROM_QUERY_START_LOC ((int64_t)-1)

/** Arguments of cattn_split_decodes_and_prefills (the host split). */
typedef struct cattn_split_decodes_and_prefills_args {
  size_t struct_size;                  /**< CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE. */
  const DLTensor* query_start_loc_cpu; /**< in: host [num_reqs + 1] int32/int64. */
  const DLTensor* is_prefilling_cpu;   /**< in, may be NULL: host [num_reqs], one byte per
                                            request (bool, uint8 or int8; nonzero = prefilling);
                                            read only when treat_short_extends_as_decodes is 0. */
  int64_t num_reqs;                    /**< in: B, at least 0. */
  int64_t num_actual_tokens;           /**< in: T, padding included, at least 0 and used as
                                            given; or CATTN_FROM_QUERY_START_LOC (_INIT). */
  int64_t max_query_len;               /**< in: the metadata's max_query_len, at least 0 and
                                            used as given; or CATTN_FROM_QUERY_START_LOC. */
  int64_t decode_threshold;            /**< in: 0 to INT32_MAX; vLLM's default 1. */
  int32_t require_uniform;             /**< in: 0 or 1. */
  int32_t treat_short_extends_as_decodes; /**< in: 0 or 1; vLLM's default 1. */
  int64_t num_decodes;                 /**< out: leading decode requests. */
  int64_t num_prefills;                /**< out: requests from the first prefill on. */
  int64_t num_decode_tokens;           /**< out: `query_start_loc[f]`, f the first prefill;
                                            T when there is none. */
  int64_t num_prefill_tokens;          /**< out: T minus the decode tokens. */
} cattn_split_decodes_and_prefills_args_t;
/** struct_size of cattn_split_decodes_and_prefills_args_t. */
#define CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_and_prefills_args_t))
/** Initialiser: vLLM's default knobs, T and max_query_len CATTN_FROM_QUERY_START_LOC. */
#define CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT \
  { CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE, NULL, NULL, 0, CATTN_FROM_QUERY_START_LOC, \
    CATTN_FROM_QUERY_START_LOC, 1, 0, 1, 0, 0, 0, 0 }

/** Splits an ordered batch at its first prefill (vLLM's split_decodes_and_prefills): request i
 *  is a prefill when its query length `q[i]` exceeds decode_threshold (or, per the flags,
 *  differs from `q[0]` or is still prefilling). With the default flags a max_query_len at most
 *  decode_threshold makes all B requests decodes, the batch unread. Host tensors only.
 *  Reads: args, query_start_loc_cpu, is_prefilling_cpu. Writes: the four outputs.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, a knob out
 *  of range, a count below -1, B = 0 or is_prefilling_cpu NULL where vLLM raises, an int64
 *  overflow).
 *  Since: 1.1. Details: docs/api/split_decodes_and_prefills.md */
CATTN_API cattn_status_t cattn_split_decodes_and_prefills(
    cattn_split_decodes_and_prefills_args_t* args);

/** Arguments of cattn_split_decodes_and_prefills_capturable. */
typedef struct cattn_split_decodes_and_prefills_capturable_args {
  size_t struct_size;                /**< CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_SIZE. */
  const DLTensor* query_start_loc;   /**< in: device [B + 1] int32/int64, B from its shape
                                          (pad a captured batch with zero-length rows). */
  const DLTensor* is_prefilling;     /**< in, may be NULL: device [B], one byte per request,
                                          read as in the host call. */
  const DLTensor* num_actual_tokens; /**< in, may be NULL: device [1] int32/int64, T; NULL
                                          means `query_start_loc[B]`. */
  const DLTensor* max_query_len;     /**< in, may be NULL: device [1] int32/int64; NULL means
                                          the largest `q[i]` (0 when B = 0). */
  int64_t decode_threshold;          /**< in: 0 to INT32_MAX. */
  int32_t require_uniform;           /**< in: 0 or 1. */
  int32_t treat_short_extends_as_decodes; /**< in: 0 or 1. */
  DLTensor* result;                  /**< out: device [4] int32/int64: num_decodes,
                                          num_prefills, num_decode_tokens, num_prefill_tokens. */
  cattn_stream_t stream;             /**< in: the stream the kernel runs on. */
} cattn_split_decodes_and_prefills_capturable_args_t;
/** struct_size of cattn_split_decodes_and_prefills_capturable_args_t. */
#define CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_and_prefills_capturable_args_t))
/** Initialiser: vLLM's default knobs, T and max_query_len taken from query_start_loc. */
#define CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT                                     \
  {                                                                                               \
    CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, 0, 1, NULL, \
        NULL                                                                                      \
  }

/** cattn_split_decodes_and_prefills on CUDA tensors in one kernel, counts written to `result`,
 *  so that a captured graph splits each replay's batch. Values the host call refuses give four
 *  -1 entries; an int32 result keeps the low 32 bits. Reads: args, inputs. Writes: result.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, a host
 *  tensor, mixed devices, result longer than 4 or overlapping an input, a knob out of range);
 *  CATTN_INSUFFICIENT_SIZE (result shorter than 4); CATTN_NOT_SUPPORTED (CPU-only build, no
 *  usable device, a tensor off its element alignment); CATTN_CUDA_ERROR.
 *  Since: 1.1. Details: docs/api/split_decodes_and_prefills.md */
CATTN_API cattn_status_t cattn_split_decodes_and_prefills_capturable(
    const cattn_split_decodes_and_prefills_capturable_args_t* args);

/** Arguments of cattn_split_decodes_prefills_and_extends (the host split). */
typedef struct cattn_split_decodes_prefills_and_extends_args {
  size_t struct_size; /**< CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE. */
  const DLTensor* query_start_loc_cpu;      /**< in: host [num_reqs + 1] int32/int64. */
  const DLTensor* seq_lens_cpu_upper_bound; /**< in, may be NULL: host [num_reqs] int32/int64;
                                                 required once max_query_len exceeds
                                                 decode_threshold (vLLM asserts). */
  int64_t num_reqs;                         /**< in: B, at least 0. */
  int64_t num_actual_tokens;                /**< in: T, padding included, at least 0, or
                                                 CATTN_FROM_QUERY_START_LOC (_INIT). */
  int64_t max_query_len;                    /**< in: at least 0, or
                                                 CATTN_FROM_QUERY_START_LOC (_INIT). */
  int64_t decode_threshold;                 /**< in: 0 to INT32_MAX; vLLM's default 1. */
  int64_t num_decodes;                      /**< out: leading decode requests. */
  int64_t num_extends;                      /**< out: requests with context after them. */
  int64_t num_prefills;                     /**< out: requests from the first prefill on. */
  int64_t num_decode_tokens;                /**< out */
  int64_t num_extend_tokens;                /**< out */
  int64_t num_prefill_tokens;               /**< out */
} cattn_split_decodes_prefills_and_extends_args_t;
/** struct_size of cattn_split_decodes_prefills_and_extends_args_t. */
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_prefills_and_extends_args_t))
/** Initialiser: decode_threshold 1, T and max_query_len CATTN_FROM_QUERY_START_LOC. */
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT \
  { CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE, NULL, NULL, 0, \
    CATTN_FROM_QUERY_START_LOC, CATTN_FROM_QUERY_START_LOC, 1, 0, 0, 0, 0, 0, 0 }

/** Splits an ordered batch into decodes, extends (query above decode_threshold, with context)
 *  and prefills (no context: `seq_lens_cpu_upper_bound[i] == q[i]`), vLLM's
 *  split_decodes_prefills_and_extends, quirks included: an over-estimated max_query_len gives
 *  all zeros, and int32 token counts wrap as vLLM's tensors do. Host tensors only.
 *  Reads: args, query_start_loc_cpu, seq_lens_cpu_upper_bound. Writes: the six outputs.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor,
 *  decode_threshold out of range, a count below -1, B = 0 or seq_lens_cpu_upper_bound NULL past
 *  the all-decode case, an int64 overflow). Since: 1.1. Details: docs/api/split_decodes_and_prefills.md */
CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends(
    cattn_split_decodes_prefills_and_extends_args_t* args);

/** Arguments of cattn_split_decodes_prefills_and_extends_capturable. */
typedef struct cattn_split_decodes_prefills_and_extends_capturable_args {
  size_t struct_size; /**< CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_SIZE. */
  const DLTensor* query_start_loc;      /**< in: device [B + 1] int32/int64. */
  const DLTensor* seq_lens_upper_bound; /**< in: device [B] int32/int64. */
  const DLTensor* num_actual_tokens;    /**< in, may be NULL: device [1]; NULL means
                                             `query_start_loc[B]`. */
  const DLTensor* max_query_len;        /**< in, may be NULL: device [1]; NULL means the
                                             largest `q[i]` (0 when B = 0). */
  int64_t decode_threshold;             /**< in: 0 to INT32_MAX. */
  DLTensor* result;                     /**< out: device [6] int32/int64: num_decodes,
                                             num_extends, num_prefills, num_decode_tokens,
                                             num_extend_tokens, num_prefill_tokens. */
  cattn_stream_t stream;                /**< in: the stream the kernel runs on. */
} cattn_split_decodes_prefills_and_extends_capturable_args_t;
/** struct_size of cattn_split_decodes_prefills_and_extends_capturable_args_t. */
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_SIZE \
  ((size_t)sizeof(cattn_split_decodes_prefills_and_extends_capturable_args_t))
/** Initialiser: decode_threshold 1, T and max_query_len taken from query_start_loc. */
#define CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_INIT                         \
  {                                                                                           \
    CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, \
        NULL, NULL                                                                            \
  }

/** cattn_split_decodes_prefills_and_extends on CUDA tensors in one kernel, counts to `result`.
 *  Values the host call refuses (B = 0 past the all-decode case, an int64 overflow) give six
 *  -1 entries; an int32 result keeps the low 32 bits. Reads: args, inputs. Writes: result.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, a host
 *  tensor, mixed devices, result longer than 6 or overlapping an input, decode_threshold out of
 *  range); CATTN_INSUFFICIENT_SIZE (result shorter than 6); CATTN_NOT_SUPPORTED (CPU-only
 *  build, no usable device, a tensor off its element alignment); CATTN_CUDA_ERROR.
 *  Since: 1.1. Details: docs/api/split_decodes_and_prefills.md */
CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends_capturable(
    const cattn_split_decodes_prefills_and_extends_capturable_args_t* args);

/** Arguments of cattn_split_prefill_chunks. */
typedef struct cattn_split_prefill_chunks_args {
  size_t struct_size;           /**< CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE. */
  const DLTensor* seq_lens_cpu; /**< in: host [n] int32/int64, the prefill requests' lengths. */
  int64_t workspace_size;       /**< in: tokens per chunk, at least 0. */
  int64_t request_offset;       /**< in: added to every bound. */
  DLTensor* chunks;             /**< out, may be NULL (size query): host [rows, 2] int32/int64,
                                     row k = {start, end} of chunk k; later rows untouched. */
  int64_t num_chunks;           /**< out: the number of chunks, also when chunks is NULL. */
} cattn_split_prefill_chunks_args_t;
/** struct_size of cattn_split_prefill_chunks_args_t. */
#define CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE ((size_t)sizeof(cattn_split_prefill_chunks_args_t))
/** Initialiser: no tensors, workspace_size and request_offset 0. */
#define CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT \
  { CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE, NULL, 0, 0, NULL, 0 }

/** Groups consecutive prefill requests greedily into chunks of at most workspace_size tokens
 *  (vLLM's split_prefill_chunks); bounds are half-open, shifted by request_offset. Call with
 *  chunks NULL to learn num_chunks. Reads: args, seq_lens_cpu. Writes: chunks, num_chunks.
 *  Host tensors only. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument
 *  or tensor, chunks not of 2 columns or overlapping seq_lens_cpu, workspace_size negative, a
 *  length above it (vLLM asserts), a bound overflowing int64 or an int32 chunks);
 *  CATTN_INSUFFICIENT_SIZE (fewer than num_chunks rows).
 *  Since: 1.1. Details: docs/api/split_prefill_chunks.md */
CATTN_API cattn_status_t cattn_split_prefill_chunks(cattn_split_prefill_chunks_args_t* args);

/** Regions of cattn_reorder_batch_to_split_decodes_and_prefills, in batch order. Decode:
 *  `computed > 0`, `scheduled <= decode_threshold`, `computed >= prompt`. */
#define CATTN_REGION_DECODE 0
/** Region short extend: `computed > 0`, `scheduled <= decode_threshold`, `computed < prompt`. */
#define CATTN_REGION_SHORT_EXTEND 1
/** Region long extend: `computed > 0`, `scheduled > decode_threshold`. */
#define CATTN_REGION_LONG_EXTEND 2
/** Region prefill: `computed <= 0`, whatever is scheduled (a one-token prompt too). */
#define CATTN_REGION_PREFILL 3

/** Arguments of cattn_reorder_batch_to_split_decodes_and_prefills. */
typedef struct cattn_reorder_batch_args {
  size_t struct_size;                   /**< CATTN_REORDER_BATCH_ARGS_SIZE. */
  const DLTensor* num_scheduled_tokens; /**< in: host [B] int32/int64, in batch order. */
  const DLTensor* num_computed_tokens;  /**< in: host [B] int32/int64. */
  const DLTensor* num_prompt_tokens;    /**< in: host [B] int32/int64. */
  int64_t decode_threshold;             /**< in: 0 to INT32_MAX; vLLM's default 1. */
  DLTensor* index_map;  /**< out: host [B] int32/int64: the old position of the request now at
                             position i (the identity when nothing moves); int32 holds at most
                             2^28 requests. */
  DLTensor* swaps;      /**< out, may be NULL: host [rows at least B - 1, 2] int32/int64,
                             vLLM's swaps in its order; later rows untouched. */
  int32_t changed;      /**< out: 1 when the batch must be reordered (vLLM returns True). */
  int32_t reserved0;    /**< Set to 0. */
  int64_t num_swaps;    /**< out: rows written to swaps. */
  int64_t num_decodes;       /**< out: requests of CATTN_REGION_DECODE. */
  int64_t num_short_extends; /**< out: requests of CATTN_REGION_SHORT_EXTEND. */
  int64_t num_long_extends;  /**< out: requests of CATTN_REGION_LONG_EXTEND. */
  int64_t num_prefills;      /**< out: requests of CATTN_REGION_PREFILL. */
} cattn_reorder_batch_args_t;
/** struct_size of cattn_reorder_batch_args_t. */
#define CATTN_REORDER_BATCH_ARGS_SIZE ((size_t)sizeof(cattn_reorder_batch_args_t))
/** Initialiser: no tensors, decode_threshold 1. */
#define CATTN_REORDER_BATCH_ARGS_INIT \
  { CATTN_REORDER_BATCH_ARGS_SIZE, NULL, NULL, NULL, 1, NULL, NULL, 0, 0, 0, 0, 0, 0, 0 }
/** cattn_reorder_batch_args_t under its utility's name. Since: 1.1 */
typedef cattn_reorder_batch_args_t cattn_reorder_batch_to_split_decodes_and_prefills_args_t;

/** Plans vLLM's reorder_batch_to_split_decodes_and_prefills for the engine to apply: regions
 *  CATTN_REGION_DECODE to CATTN_REGION_PREFILL in order, misplaced requests moved to misplaced
 *  positions (not a stable sort). Host tensors only; allocates nothing. Writes: index_map,
 *  swaps and the outputs of args. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or
 *  malformed argument or tensor, unequal input lengths, index_map over B entries or int32 over
 *  2^28, swaps not of 2 columns, an overlap, a knob out of range, reserved0 not 0);
 *  CATTN_INSUFFICIENT_SIZE (index_map under B entries, swaps under B - 1 rows).
 *  Since: 1.1. Details: docs/api/reorder_batch_to_split_decodes_and_prefills.md */
CATTN_API cattn_status_t cattn_reorder_batch_to_split_decodes_and_prefills(
    cattn_reorder_batch_args_t* args);

/** @} */

/* === Per-request metadata (query lens, computed tokens, token to request, unpadded) === */
/** @defgroup group_per_request Per-request metadata (query lens, computed tokens, token to request, unpadded)
 *  Per-request and per-token values of one batch: naive_query_lens, compute_num_computed_tokens,
 *  token_to_req_indices, unpadded.
 *  Pages: docs/api/naive_query_lens.md, docs/api/compute_num_computed_tokens.md,
 *  docs/api/token_to_req_indices.md, docs/api/unpadded.md.
 *  @{ */

/** Arguments of cattn_naive_query_lens and cattn_compute_num_computed_tokens. */
typedef struct cattn_naive_query_lens_args {
  size_t struct_size; /**< CATTN_NAIVE_QUERY_LENS_ARGS_SIZE. */
  /** in: only query_start_loc ([B + 1]) and, for compute_num_computed_tokens, seq_lens ([B])
   *  are read; B is seq_lens' length when it is read, else query_start_loc's length - 1. A
   *  1.0 struct will do. */
  const cattn_common_attn_metadata_t* metadata;
  DLTensor* out;                   /**< out: [B] int32/int64 on the tensors' device. */
  cattn_stream_t stream;           /**< in: the stream, for CUDA tensors only. */
} cattn_naive_query_lens_args_t;
/** struct_size of cattn_naive_query_lens_args_t. */
#define CATTN_NAIVE_QUERY_LENS_ARGS_SIZE ((size_t)sizeof(cattn_naive_query_lens_args_t))
/** Initialiser: no metadata, no out, the legacy default stream. */
#define CATTN_NAIVE_QUERY_LENS_ARGS_INIT { CATTN_NAIVE_QUERY_LENS_ARGS_SIZE, NULL, NULL, NULL }
/** The arguments of cattn_compute_num_computed_tokens: the same struct. Since: 1.1 */
typedef cattn_naive_query_lens_args_t cattn_compute_num_computed_tokens_args_t;
/** struct_size of cattn_compute_num_computed_tokens_args_t. */
#define CATTN_COMPUTE_NUM_COMPUTED_TOKENS_ARGS_SIZE CATTN_NAIVE_QUERY_LENS_ARGS_SIZE
/** Initialiser of cattn_compute_num_computed_tokens_args_t. */
#define CATTN_COMPUTE_NUM_COMPUTED_TOKENS_ARGS_INIT CATTN_NAIVE_QUERY_LENS_ARGS_INIT

/** Writes each request's query length, `out[i] = query_start_loc[i + 1] - query_start_loc[i]`
 *  (vLLM's CommonAttentionMetadata.naive_query_lens), unchecked: a decrease gives a negative
 *  length. out may not overlap query_start_loc. On CUDA one kernel, correct on replay, modulo
 *  2^64 (an int32 out keeps the low 32 bits). Reads: query_start_loc. Writes: out.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, an
 *  overlap, a host difference overflowing int64 or out's dtype); CATTN_INSUFFICIENT_SIZE (out
 *  under B); CATTN_NOT_SUPPORTED (CUDA tensors not served here, a device tensor off its element
 *  alignment); CATTN_CUDA_ERROR. Since: 1.1. Details: docs/api/naive_query_lens.md */
CATTN_API cattn_status_t cattn_naive_query_lens(const cattn_naive_query_lens_args_t* args);

/** Writes the tokens each request computed before this step, `out[i] = seq_lens[i] -
 *  (query_start_loc[i + 1] - query_start_loc[i])` (vLLM's
 *  CommonAttentionMetadata.compute_num_computed_tokens), from the tensors as they are: no
 *  cache. query_start_loc has B + 1 entries; values unchecked. out may be the very view of
 *  seq_lens (in place); any other overlap is refused. Reads: query_start_loc, seq_lens.
 *  Writes: out. Returns and device path: as cattn_naive_query_lens, seq_lens checked too.
 *  Since: 1.1. Details: docs/api/compute_num_computed_tokens.md */
CATTN_API cattn_status_t cattn_compute_num_computed_tokens(
    const cattn_compute_num_computed_tokens_args_t* args);

/** Arguments of cattn_token_to_req_indices. */
typedef struct cattn_token_to_req_indices_args {
  size_t struct_size; /**< CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE. */
  /** in: only query_start_loc ([B + 1], the batch's device), query_start_loc_cpu (its host
   *  mirror, may be NULL) and num_actual_tokens (T, at least 0, padding included) are read. A
   *  1.0 struct will do. */
  const cattn_common_attn_metadata_t* metadata;
  /** out: [at least max(M, T)] int32/int64 on query_start_loc's device, M the mapped tokens;
   *  the caller owns it and may reuse it every step. */
  DLTensor* buffer;
  cattn_stream_t stream;           /**< in: the stream, for CUDA tensors only. */
} cattn_token_to_req_indices_args_t;
/** struct_size of cattn_token_to_req_indices_args_t. */
#define CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE ((size_t)sizeof(cattn_token_to_req_indices_args_t))
/** Initialiser: no metadata, no buffer, the legacy default stream. */
#define CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT \
  { CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE, NULL, NULL, NULL }

/** Writes into buffer the request of each token (vLLM's
 *  CommonAttentionMetadata.token_to_req_indices): `buffer[0:M]` = request r repeated `q[r]`
 *  times, `buffer[M:T]` = 0 (padding is request 0); the result is `buffer[0:T]`, nothing from
 *  max(M, T) on is written; no cache. M, the mapped tokens: `query_start_loc_cpu[B]`, or
 *  `query_start_loc[B] - query_start_loc[0]` without the mirror and on CUDA (one kernel,
 *  correct on replay). Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument
 *  or tensor, T below 0, an overlap, on the host a negative `q[r]` or q not summing to M, a
 *  request index too big for an int32 buffer); CATTN_INSUFFICIENT_SIZE (buffer under max(M, T),
 *  or under T on CUDA without the mirror); CATTN_NOT_SUPPORTED (CUDA tensors not served here, a
 *  device tensor off its element alignment); CATTN_CUDA_ERROR.
 *  Since: 1.1. Details: docs/api/token_to_req_indices.md */
CATTN_API cattn_status_t cattn_token_to_req_indices(const cattn_token_to_req_indices_args_t* args);

/** The most dimensions a tensor handed to cattn_unpadded may have. Since: 1.1 */
#define CATTN_UNPADDED_MAX_DIMS 4
/** The size of cattn_unpadded_storage_t's opaque words: room for the sliced view of every
 *  DLTensor field of the metadata struct, with shapes and strides. Since: 1.1 */
#define CATTN_UNPADDED_STORAGE_WORDS 256

/** Caller-owned storage for the views cattn_unpadded makes; the out metadata's tensor fields
 *  point into it. Opaque: read the views through those fields. Since: 1.1 */
typedef struct cattn_unpadded_storage {
  size_t struct_size;                          /**< CATTN_UNPADDED_STORAGE_SIZE. */
  int64_t opaque[CATTN_UNPADDED_STORAGE_WORDS]; /**< Opaque; not to be read or written. */
} cattn_unpadded_storage_t;
/** struct_size of cattn_unpadded_storage_t. */
#define CATTN_UNPADDED_STORAGE_SIZE ((size_t)sizeof(cattn_unpadded_storage_t))

/** Arguments of cattn_unpadded. */
typedef struct cattn_unpadded_args {
  size_t struct_size;                           /**< CATTN_UNPADDED_ARGS_SIZE. */
  const cattn_common_attn_metadata_t* metadata; /**< in: the padded batch. */
  int64_t num_actual_tokens;         /**< in: T', 0 to slot_mapping's length. */
  int64_t num_actual_reqs;           /**< in: B', 0 to seq_lens' length. */
  cattn_common_attn_metadata_t* out; /**< out: the unpadded batch (not metadata itself). */
  cattn_unpadded_storage_t* storage; /**< out: the views out points into. */
} cattn_unpadded_args_t;
/** struct_size of cattn_unpadded_args_t. */
#define CATTN_UNPADDED_ARGS_SIZE ((size_t)sizeof(cattn_unpadded_args_t))
/** Initialiser: no structs, T' and B' 0. */
#define CATTN_UNPADDED_ARGS_INIT { CATTN_UNPADDED_ARGS_SIZE, NULL, 0, 0, NULL, NULL }

/** Makes the metadata of the first B' requests and T' tokens of a padded batch (vLLM's
 *  CommonAttentionMetadata.unpadded) as views in storage, touching no tensor data (host and
 *  device alike): per-request tensors cut to B' rows (query_start_loc(_cpu) to B' + 1),
 *  slot_mapping and positions to T', num_reqs = B', num_actual_tokens = T', the rest copied;
 *  newer fields only between 1.1 structs. Writes: *out, *storage (each keeps its struct_size).
 *  Lifetime: out's views live while storage and the input tensors do.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, an overlap
 *  (out equal to metadata included), B' or T' negative or past a tensor's length, a tensor of
 *  no dimension or over CATTN_UNPADDED_MAX_DIMS). Since: 1.1. Details: docs/api/unpadded.md */
CATTN_API cattn_status_t cattn_unpadded(const cattn_unpadded_args_t* args);

/** @} */

/* === DCP local sequence lengths (get_dcp_local_seq_lens) === */
/** @defgroup group_dcp DCP local sequence lengths (get_dcp_local_seq_lens)
 *  Each decode-context-parallel rank's share of every sequence: get_dcp_local_seq_lens.
 *  Pages: docs/api/get_dcp_local_seq_lens.md.
 *  @{ */

/** dcp_rank value that asks for the lengths of every rank (vLLM's `dcp_rank=None`). Since: 1.0 */
#define CATTN_DCP_ALL_RANKS (-1)

/** How cattn_get_dcp_local_seq_lens shapes its input and output (`args->shape_mode`).
 *  Since: 1.1. Details: docs/api/get_dcp_local_seq_lens.md */
typedef enum cattn_dcp_shape_mode_e {
  /** The 1.0 contract: seq_lens `[B]`; out `[B]` for one rank, `[B, dcp_size]` for all ranks,
   *  and `[B]` or `[B, 1]` for all ranks when dcp_size is 1. */
  CATTN_DCP_SHAPE_SQUEEZE = 0,
  /** vLLM's newest: seq_lens of any shape S (strided or broadcast views are fine); out S for
   *  one rank, S + `[dcp_size]` for all ranks, even when dcp_size is 1. out has at most 8
   *  dims: S 0 to 8 dims for one rank, 0 to 7 for all ranks. */
  CATTN_DCP_SHAPE_PRESERVE = 1
} cattn_dcp_shape_mode_t;

/** Arguments of cattn_get_dcp_local_seq_lens; set with CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT. */
typedef struct cattn_dcp_local_seq_lens_args {
  size_t struct_size;         /**< CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE, or the 1.0 struct's size. */
  const DLTensor* seq_lens;   /**< in: `[B]` int32/int64 (any shape with
                                   CATTN_DCP_SHAPE_PRESERVE), values in [0, INT32_MAX]. */
  int64_t dcp_size;           /**< in: D, at least 1. */
  int64_t dcp_rank;           /**< in: in [0, D), or CATTN_DCP_ALL_RANKS. */
  int64_t dcp_kv_cache_interleave_size; /**< in: I, at least 1, with D * I at most INT32_MAX. */
  DLTensor* out;              /**< out: int32/int64 on seq_lens' device, shaped as shape_mode
                                   says. */
  cattn_stream_t stream;      /**< CUDA tensors only. */
  int64_t shape_mode;         /**< in (1.1): a cattn_dcp_shape_mode_t; the _INIT value and a 1.0
                                   struct without this field mean CATTN_DCP_SHAPE_SQUEEZE. */
} cattn_dcp_local_seq_lens_args_t;
/** Size of cattn_dcp_local_seq_lens_args_t in this header (the 1.1 struct). */
#define CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE ((size_t)sizeof(cattn_dcp_local_seq_lens_args_t))
/** Initialiser: D = 1, all ranks, I = 1, CATTN_DCP_SHAPE_SQUEEZE, NULL tensors and stream. */
#define CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT                                           \
  {                                                                                  \
    CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE, NULL, 1, CATTN_DCP_ALL_RANKS, 1, NULL, NULL, \
        CATTN_DCP_SHAPE_SQUEEZE                                                      \
  }

/** Computes how many KV tokens of each request each DCP rank stores, the KV cache being dealt
 *  out round-robin in runs of I tokens (vLLM's get_dcp_local_seq_lens, exact in int32). In
 *  place: a `[B]` out (any one-rank out with CATTN_DCP_SHAPE_PRESERVE) may be the very same
 *  view as seq_lens, same dtype and layout. Reads: args, seq_lens. Writes: out. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shapes, dtypes, D, rank or I out of range,
 *  a host seq_len outside [0, INT32_MAX], out overlapping seq_lens other than as the same view;
 *  since 1.1 an unknown shape_mode, a struct_size between the 1.0 and 1.1 sizes);
 *  CATTN_INSUFFICIENT_SIZE (out too small); CATTN_NOT_SUPPORTED (CUDA tensors this build or
 *  machine cannot serve); CATTN_CUDA_ERROR. Stream: CUDA: one kernel on args->stream; device
 *  lengths are not range-checked (out-of-range ones wrap to int32 first, as in vLLM).
 *  Since: 1.0. Details: docs/api/get_dcp_local_seq_lens.md */
CATTN_API cattn_status_t cattn_get_dcp_local_seq_lens(const cattn_dcp_local_seq_lens_args_t* args);

/** @} */

/* === PCP (restore index, fused select, all-gather) === */
/** @defgroup group_pcp PCP (restore index, fused select, all-gather)
 *  Prefill context parallelism: get_pcp_query_restore_idx and fused_pcp_qkv_select (each with a
 *  `_size` query), the communicator (`cattn_comm_*`), pcp_kv_allgather_and_restore (with a
 *  `_workspace_size` query).
 *  Pages: docs/api/get_pcp_query_restore_idx.md, docs/api/fused_pcp_qkv_select.md,
 *  docs/api/pcp_kv_allgather_and_restore.md.
 *  @{ */

/** Arguments of cattn_get_pcp_query_restore_idx; set with CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT. */
typedef struct cattn_pcp_query_restore_idx_args {
  size_t struct_size;            /**< CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE. */
  const DLTensor* cu_num_tokens; /**< in: `[R + 1]` int32/int64, non-decreasing: this rank's
                                      cumulative token counts per request. */
  DLTensor* restore_idx;         /**< out: `[capacity]` int32/int64, capacity at least the size;
                                      entries past the size are set to -1. */
  cattn_stream_t stream;         /**< CUDA tensors only. */
} cattn_pcp_query_restore_idx_args_t;
/** Size of cattn_pcp_query_restore_idx_args_t in this header. */
#define CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE ((size_t)sizeof(cattn_pcp_query_restore_idx_args_t))
/** Initialiser: NULL tensors and stream. */
#define CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT \
  { CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE, NULL, NULL, NULL }

/** Computes the exact length of the restore index for a host cu_num_tokens: twice the sum of
 *  the per-request halves `(cu[i+1] - cu[i]) / 2` (a length-1 decode request adds nothing).
 *  cu_num_tokens: host `[R + 1]` int32/int64. size: host pointer, not NULL. Writes: *size.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shape, dtype, device tensor, decreasing, an
 *  odd length above 1, a broadcast of more than CATTN_MAX_BROADCAST_ELEMENTS).
 *  Since: 1.0. Details: docs/api/get_pcp_query_restore_idx.md */
CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx_size(const DLTensor* cu_num_tokens,
                                                              int64_t* size);

/** Computes the index that restores this rank's query order after each request was split into
 *  a head half and a tail half and the halves concatenated as [all heads, all tails] (vLLM's
 *  argsort result): row i of the restored order is row `restore_idx[i]` of the concatenation.
 *  Length-1 (decode) requests take no part; a decode-only batch gives an empty index.
 *  Reads: args, cu_num_tokens. Writes: restore_idx. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, shape, dtype, decreasing cu_num_tokens, an
 *  odd length above 1, a value that does not fit the output dtype, restore_idx overlapping
 *  cu_num_tokens, a broadcast cu_num_tokens of more than CATTN_MAX_BROADCAST_ELEMENTS);
 *  CATTN_INSUFFICIENT_SIZE (capacity below the size); CATTN_NOT_SUPPORTED (CUDA tensors this
 *  build or machine cannot serve, a device tensor off its element alignment); CATTN_CUDA_ERROR.
 *  Stream: CUDA: one kernel on args->stream, which cannot check the data: the capacity is not
 *  compared (cu[R] - cu[0] entries suffice; fewer truncate), an odd length gives vLLM's answer
 *  and a decreasing entry is an empty request.
 *  Since: 1.0. Details: docs/api/get_pcp_query_restore_idx.md */
CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx(
    const cattn_pcp_query_restore_idx_args_t* args);

/** Arguments of cattn_fused_pcp_qkv_select; set with CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT. */
typedef struct cattn_fused_pcp_qkv_select_args {
  size_t struct_size;     /**< CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE. */
  const DLTensor* q;      /**< in: `[Nq, H, Dq]`, this rank's queries; last-dim stride 1 (any
                               when Dq is at most 1), any strides in dims 0 and 1. */
  const DLTensor* k;      /**< in: `[W * query_start_loc[B] or more, H, Dk]`, the keys of all
                               ranks; stride rules as q. */
  const DLTensor* v;      /**< in: `[W * query_start_loc[B] or more, H, Dv]`, the values of all
                               ranks; stride rules as q. */
  const DLTensor* query_start_loc; /**< in: `[B + 1]` (B at least 0) int32/int64, entries even,
                                        at least 0, non-decreasing, `query_start_loc[B]` at
                                        most Nq. */
  int64_t pcp_world_size; /**< in: W, at least 1. */
  int64_t pcp_rank;       /**< in: r in [0, W). */
  DLTensor* q_head;       /**< out: `[Nq / 2, H, Dq]`, dtype of q, compact. */
  DLTensor* k_head;       /**< out: `[Nq / 2 * (r + 1), H, Dk]`, dtype of k, compact. */
  DLTensor* v_head;       /**< out: `[Nq / 2 * (r + 1), H, Dv]`, dtype of v, compact. */
  DLTensor* q_tail;       /**< out: `[Nq / 2, H, Dq]`, dtype of q, compact. */
  DLTensor* k_tail;       /**< out: `[Nq / 2 * (2W - r), H, Dk]`, dtype of k, compact. */
  DLTensor* v_tail;       /**< out: `[Nq / 2 * (2W - r), H, Dv]`, dtype of v, compact. */
  cattn_stream_t stream;  /**< CUDA tensors only. */
} cattn_fused_pcp_qkv_select_args_t;
/** Size of cattn_fused_pcp_qkv_select_args_t in this header. */
#define CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE ((size_t)sizeof(cattn_fused_pcp_qkv_select_args_t))
/** Initialiser: W = 1, r = 0, NULL tensors and stream. */
#define CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT \
  { CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE, NULL, NULL, NULL, NULL, 1, 0, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** The row counts of cattn_fused_pcp_qkv_select's outputs for `num_q_rows` query rows (Nq) at
 *  world size W and rank r: `*q_rows` = Nq / 2 (q_head, q_tail), `*kv_head_rows` =
 *  Nq / 2 * (r + 1) (k_head, v_head), `*kv_tail_rows` = Nq / 2 * (2W - r) (k_tail, v_tail).
 *  Writes: the three counts. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (Nq negative, W or r out
 *  of range, a NULL or overlapping pointer, a count past INT64_MAX).
 *  Since: 1.1. Details: docs/api/fused_pcp_qkv_select.md */
CATTN_API cattn_status_t cattn_fused_pcp_qkv_select_size(int64_t num_q_rows,
                                                         int64_t pcp_world_size,
                                                         int64_t pcp_rank, int64_t* q_rows,
                                                         int64_t* kv_head_rows,
                                                         int64_t* kv_tail_rows);

/** Selects, per request, this rank's head and tail query halves and the K/V blocks (of 2W)
 *  each attends to, 0..r and 0..2W-r-1, in one pass (vLLM's fused_pcp_qkv_select). Rows past
 *  the live requests are not written. Elements of 1, 2, 4 or 8 bytes; Dq, Dk, Dv may differ.
 *  Reads: args, q, k, v, query_start_loc. Writes: the six outputs. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, struct_size, ndim, H differing, a last-dim
 *  stride not 1, W or r out of range, query_start_loc empty or not int32/int64, an output's
 *  dtype, H or D differing from its input, not compact or with too many rows, mixed devices,
 *  overlaps, a broadcast query_start_loc over CATTN_MAX_BROADCAST_ELEMENTS, int64 overflow;
 *  host only: a negative, odd or decreasing query_start_loc, `query_start_loc[B]` above Nq, k
 *  or v under `W * query_start_loc[B]` rows); CATTN_INSUFFICIENT_SIZE (an output short of
 *  rows); CATTN_NOT_SUPPORTED (another element width or device, CUDA tensors this build or
 *  machine cannot serve; device: a token row of 2 GiB or more, query_start_loc misaligned);
 *  CATTN_CUDA_ERROR. Stream: CUDA: one kernel (since 1.1 a programmatic dependent launch on
 *  sm_90+); a bad device query_start_loc gives wrong rows, never an out-of-bounds access.
 *  Since: 1.0. Details: docs/api/fused_pcp_qkv_select.md */
CATTN_API cattn_status_t cattn_fused_pcp_qkv_select(const cattn_fused_pcp_qkv_select_args_t* args);

/** Opaque communicator over the PCP group: one rank's handle of an NCCL communicator, owned
 *  (cattn_comm_create) or borrowed (cattn_comm_create_borrowed), bound to one CUDA device.
 *  NCCL 2.13 or newer is loaded with dlopen on first need ("libnccl.so.2", or the value of
 *  CATTN_NCCL_LIBRARY_ENV; one the process already loaded is the one used); when it cannot be,
 *  this section's calls return CATTN_NOT_SUPPORTED, as a CPU-only build always does. One
 *  thread at a time per handle; every rank makes the same collective calls in the same order,
 *  one thread or process per rank. The handle owns a CUDA stream and two events on its device.
 *  Since: 1.0. Details: docs/api/pcp_kv_allgather_and_restore.md */
typedef struct cattn_comm_s cattn_comm_t;

/** Environment variable naming the library to dlopen instead of "libnccl.so.2" (a soname or a
 *  path); read once per process, by the first call that needs NCCL. Since: 1.0 */
#define CATTN_NCCL_LIBRARY_ENV "CATTN_NCCL_LIBRARY"

/** Size in bytes of a communicator's unique id (NCCL_UNIQUE_ID_BYTES). Since: 1.0 */
#define CATTN_COMM_UNIQUE_ID_BYTES 128

/** Rendezvous token of a new communicator: an ncclUniqueId as plain bytes, for the engine to
 *  send to the other ranks over its own transport. Since: 1.0 */
typedef struct cattn_comm_unique_id {
  uint8_t bytes[CATTN_COMM_UNIQUE_ID_BYTES]; /**< The id's bytes, opaque. */
} cattn_comm_unique_id_t;

/** Creates the unique id of a new communicator (ncclGetUniqueId): call it on one rank and send
 *  the bytes to every other rank before they call cattn_comm_create; one id serves one
 *  communicator. id: host, not NULL. Needs no GPU. Allocates: nothing of libcattn's.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (id NULL); CATTN_NOT_SUPPORTED (CPU-only build,
 *  NCCL cannot be loaded); CATTN_NCCL_ERROR (e.g. no network interface for its bootstrap).
 *  Since: 1.0. Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_comm_get_unique_id(cattn_comm_unique_id_t* id);

/** Creates and owns a communicator of nranks ranks (ncclCommInitRank on cuda_device, which
 *  must be below the device count; the current device is restored). Blocks, with no timeout,
 *  until all ranks have called it with the same id: call it for every rank concurrently.
 *  rank: in [0, nranks), distinct per rank. Allocates: the handle, its stream and two events,
 *  NCCL's communicator; cattn_comm_destroy frees them all.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, nranks below 1, rank or
 *  cuda_device out of range); CATTN_NOT_SUPPORTED (CPU-only build, NCCL cannot be loaded, no
 *  usable CUDA device or driver); CATTN_NCCL_ERROR (ncclCommInitRank failed: inconsistent rank
 *  or size, unreachable peer, ...); CATTN_CUDA_ERROR; CATTN_OUT_OF_MEMORY. Since: 1.0.
 *  Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_comm_create(const cattn_comm_unique_id_t* id, int32_t nranks,
                                           int32_t rank, int32_t cuda_device, cattn_comm_t** out);

/** Wraps an NCCL communicator the engine owns: nccl_comm is an ncclComm_t (blocking, or
 *  nonblocking and waited for if still initialising) of the NCCL that libcattn loads; its
 *  rank, size and device are read once. Allocates: the handle, its stream and two events.
 *  Lifetime: nccl_comm must outlive the handle; cattn_comm_destroy frees only the handle.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer); CATTN_NOT_SUPPORTED (CPU-only
 *  build, NCCL cannot be loaded, no usable CUDA device or driver); CATTN_NCCL_ERROR (NCCL
 *  rejects it, or its nonblocking initialisation failed); CATTN_CUDA_ERROR (the stream or
 *  events); CATTN_OUT_OF_MEMORY. Since: 1.0. Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_comm_create_borrowed(void* nccl_comm, cattn_comm_t** out);

/** Destroys a communicator handle and an owned NCCL communicator with it (ncclCommDestroy,
 *  which waits for its outstanding work; errors are ignored); a borrowed one is left to its
 *  owner. NULL is a no-op, and so is a handle that is not live (this thread's last-error
 *  message says so). No call may use the handle concurrently. Since: 1.0.
 *  Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API void cattn_comm_destroy(cattn_comm_t* comm);

/** Writes the communicator's rank, in [0, size), to *rank (a value read at creation); safe
 *  while another thread uses the communicator. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a
 *  NULL pointer, comm not live); CATTN_NOT_SUPPORTED (CPU-only build). Since: 1.0.
 *  Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_comm_get_rank(const cattn_comm_t* comm, int32_t* rank);

/** Writes the group's number of ranks (the PCP world size W, at least 1) to *size (a value read
 *  at creation); safe while another thread uses the communicator. Returns: CATTN_OK;
 *  CATTN_INVALID_ARGUMENT (a NULL pointer, comm not live); CATTN_NOT_SUPPORTED (CPU-only
 *  build). Since: 1.0. Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_comm_get_size(const cattn_comm_t* comm, int32_t* size);

/** Arguments of cattn_pcp_kv_allgather_and_restore and its workspace query; set with
 *  CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT. */
typedef struct cattn_pcp_kv_allgather_and_restore_args {
  size_t struct_size;             /**< CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE. */
  cattn_comm_t* comm;             /**< in: this rank's handle of the PCP group of W ranks. */
  const DLTensor* key;            /**< in: `[n or more, ...]`, this rank's keys on comm's device;
                                       elements of 1, 2, 4 or 8 bytes; any strides. */
  const DLTensor* value;          /**< in: `[key's dim 0, ...]`, this rank's values; other dims
                                       and dtype may differ from key's (MLA). */
  int64_t num_actual_tokens;      /**< in: n, the rows to gather, in [0, key's dim 0], the same
                                       on every rank; later rows (graph padding) are ignored. */
  const DLTensor* restore_idx;    /**< in: `[M]` int32/int64, rows of the gathered `[W * n, ...]`
                                       tensors; any stride. */
  DLTensor* key_out;              /**< out: `[M, key's other dims]`, key's dtype, compact. */
  DLTensor* value_out;            /**< out: `[M, value's other dims]`, value's dtype, compact. */
  void* workspace;                /**< in: device memory on comm's device, 256-byte aligned (as
                                       cudaMalloc returns); NULL when the query reports 0. */
  size_t workspace_size;          /**< in: bytes at workspace, at least the query's result. */
  cattn_stream_t stream;          /**< in: a stream of comm's device; NULL = legacy default. */
} cattn_pcp_kv_allgather_and_restore_args_t;
/** Size of cattn_pcp_kv_allgather_and_restore_args_t in this header. */
#define CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE \
  ((size_t)sizeof(cattn_pcp_kv_allgather_and_restore_args_t))
/** Initialiser: n = 0, workspace_size 0, NULL pointers and stream. */
#define CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT \
  { CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE, NULL, NULL, NULL, 0, NULL, NULL, NULL, \
    NULL, 0, NULL }

/** Reports the device workspace cattn_pcp_kv_allgather_and_restore needs: the gathered key and
 *  value, W * n rows each, every piece rounded up to 256 bytes. It depends only on comm's size,
 *  key's and value's shapes and dtypes and num_actual_tokens; other fields are ignored.
 *  args, size: host, not NULL. Writes: *size. Touches no device memory.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL pointer, small struct_size, NULL key or
 *  value, ndim 0, value's dim 0 not key's, num_actual_tokens outside [0, key's dim 0], comm
 *  NULL or not live, a size overflowing, lanes not 1); CATTN_NOT_SUPPORTED (CPU-only build; an
 *  element width other than 8, 16, 32 or 64 bits). Since: 1.0.
 *  Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore_workspace_size(
    const cattn_pcp_kv_allgather_and_restore_args_t* args, size_t* size);

/** All-gathers this rank's first n rows of key and value over the PCP group and restores the
 *  order (vLLM's pcp_kv_allgather_and_restore): `key_out[i] = K_all[restore_idx[i]]`, K_all the
 *  ranks' `key[:n]` in rank order; value alike. Every rank calls it with the same n, trailing
 *  shapes and dtypes, in the same order among its collectives. Writes: outputs, workspace.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL, struct_size, ndim 0, value's dim 0 not
 *  key's, n out of range, restore_idx not 1-D int32/int64, an output's ndim, trailing dims,
 *  dtype, more than M rows or not compact, devices mixed or not comm's, comm not live, a NULL or
 *  unaligned workspace where needed, overlaps, a size overflowing, lanes not 1);
 *  CATTN_INSUFFICIENT_SIZE (an output under M rows, workspace_size under the query's);
 *  CATTN_NOT_SUPPORTED (host tensors, CPU-only build, NCCL cannot be loaded, element width,
 *  restore_idx misaligned, no usable device); CATTN_NCCL_ERROR; CATTN_CUDA_ERROR.
 *  Stream: enqueued on args->stream (part on comm's stream, forked and joined back); NCCL may
 *  block the host; never inside an open ncclGroupStart. A restore_idx entry outside [0, W * n)
 *  gives a zero row. Lifetime: keep the workspace until the work completes. Thread safety: one
 *  thread at a time per comm. Since: 1.0. Details: docs/api/pcp_kv_allgather_and_restore.md */
CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore(
    const cattn_pcp_kv_allgather_and_restore_args_t* args);

/** @} */

/* === Local attention === */
/** @defgroup group_local_attention Local attention
 *  Chunked local attention's virtual batches: make_local_attention_virtual_batches (a `_size`
 *  query, the plan, a `_capturable` variant), max_local_attention_virtual_batches.
 *  Pages: docs/api/make_local_attention_virtual_batches.md,
 *  docs/api/max_local_attention_virtual_batches.md.
 *  @{ */

/** A local-attention plan: the virtual batches of one batch, that is vLLM's returned metadata
 *  plus its make_block_table closure. Opaque; immutable after creation. Since: 1.0 */
typedef struct cattn_local_attention_plan_s cattn_local_attention_plan_t;

/** Arguments of cattn_make_local_attention_virtual_batches and its _size query. Since: 1.0 */
typedef struct cattn_local_attention_args {
  size_t struct_size;            /**< CATTN_LOCAL_ATTENTION_ARGS_SIZE, or a 1.0 struct's size */
  int64_t attn_chunk_size;       /**< in: the attention chunk C, at least 1 */
  int64_t block_size;            /**< in: tokens per page, at least 1; divides attn_chunk_size */
  /** in: query_start_loc_cpu [B + 1] and seq_lens_cpu [B] (host), the column count of
   *  block_table_tensor (any device) and num_actual_tokens are read. */
  const cattn_common_attn_metadata_t* metadata;
  cattn_local_attention_plan_t* plan; /**< out: a new plan, which the caller destroys */
  /** in (since 1.1): the most virtual batches the plan may hold; 0, and a 1.0 struct, mean
   *  `2 * B + cdiv(num_actual_tokens, attn_chunk_size)`. */
  int64_t max_virtual_batches;
} cattn_local_attention_args_t;
/** The struct_size of cattn_local_attention_args_t. Since: 1.0 */
#define CATTN_LOCAL_ATTENTION_ARGS_SIZE ((size_t)sizeof(cattn_local_attention_args_t))
/** Initialiser of cattn_local_attention_args_t (no cap given). Since: 1.0 */
#define CATTN_LOCAL_ATTENTION_ARGS_INIT { CATTN_LOCAL_ATTENTION_ARGS_SIZE, 0, 0, NULL, NULL, 0 }
/** cattn_local_attention_args_t under its utility's name; the old name stays. Since: 1.1 */
typedef cattn_local_attention_args_t cattn_make_local_attention_virtual_batches_args_t;
/** CATTN_LOCAL_ATTENTION_ARGS_SIZE under its utility's name. Since: 1.1 */
#define CATTN_MAKE_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE CATTN_LOCAL_ATTENTION_ARGS_SIZE
/** CATTN_LOCAL_ATTENTION_ARGS_INIT under its utility's name. Since: 1.1 */
#define CATTN_MAKE_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT CATTN_LOCAL_ATTENTION_ARGS_INIT

/** Reports, without allocating, what cattn_make_local_attention_virtual_batches would plan for
 *  the same args (`args->plan` ignored): virtual batches V, pages per virtual batch P, and the
 *  most host memory the create call allocates. It makes every check the create call makes,
 *  the cap included. Each output pointer may be NULL.
 *  Reads: args, the metadata struct, its mirrors once. Writes: the outputs.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (as the create call).
 *  Since: 1.1. Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_size(
    const cattn_local_attention_args_t* args, int64_t* virtual_batches, int64_t* pages,
    size_t* plan_bytes);

/** Plans chunked local attention's virtual batches (vLLM's make_local_attention_virtual_batches)
 *  and their block table: pages clipped to column cols - 1; a seq_len of 0 starts at column 0.
 *  Reads: args, the metadata, its mirrors (twice). Writes: `args->plan`, on success only.
 *  Allocates: the plan, at most what the _size query reports. Stream: synchronous, always.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (sizes, mirrors, block table, a seq_len below its
 *  query length, an empty batch, a negative cap or more virtual batches than the cap, mirrors
 *  changed during the call); CATTN_OUT_OF_MEMORY. Lifetime: the caller destroys the plan.
 *  Since: 1.0. Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches(
    cattn_local_attention_args_t* args);

/** Destroys a plan. NULL is a no-op; so is a plan that is not live, which this thread's
 *  last-error message then reports. No call may use the plan concurrently. Since: 1.0.
 *  Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API void cattn_local_attention_plan_destroy(cattn_local_attention_plan_t* plan);

/** Reports a live plan's virtual batches V and pages per virtual batch P; either output
 *  pointer may be NULL. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live).
 *  Since: 1.0. Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_local_attention_plan_get_shape(
    const cattn_local_attention_plan_t* plan, int64_t* virtual_batches, int64_t* pages);

/** Arguments of cattn_local_attention_plan_fill. Since: 1.0 */
typedef struct cattn_local_attention_fill_args {
  size_t struct_size; /**< CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE */
  /** in: the batch the plan was made from; its block_table_tensor is gathered. */
  const cattn_common_attn_metadata_t* metadata;
  /** out: the caller sets query_start_loc_cpu [V + 1], seq_lens_cpu [V] and
   *  num_computed_tokens_cpu [V] (host), block_table_tensor [V, P] (the block table's device),
   *  and optionally device copies query_start_loc and seq_lens (NULL: not written). */
  cattn_common_attn_metadata_t* out;
  cattn_stream_t stream; /**< device outputs only */
} cattn_local_attention_fill_args_t;
/** The struct_size of cattn_local_attention_fill_args_t. Since: 1.0 */
#define CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE ((size_t)sizeof(cattn_local_attention_fill_args_t))
/** Initialiser of cattn_local_attention_fill_args_t. Since: 1.0 */
#define CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT \
  { CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE, NULL, NULL, NULL }

/** Writes a plan's virtual batches into `args->out`, which may be `args->metadata` itself: its
 *  tensors (int32/int64; the table in the input table's dtype), num_reqs = V, max_query_len,
 *  max_seq_len, num_actual_tokens and slot_mapping (the input's), causal = 1,
 *  logits_indices_padded = NULL, num_logits_indices = 0 and, in a 1.1 struct, a host [V]
 *  seq_lens_cpu_upper_bound if set (the key lengths). Other fields stay as they are.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live, NULL args, shapes, dtypes,
 *  devices, overlap, a value past an output dtype); CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED
 *  (CUDA tensors not served, misaligned, 2^31 planned requests or columns); CATTN_CUDA_ERROR.
 *  Stream: device outputs from the plan (a captured graph replays it), host mirrors after.
 *  Since: 1.0 (seq_lens_cpu_upper_bound: 1.1).
 *  Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_local_attention_plan_fill(
    const cattn_local_attention_plan_t* plan, const cattn_local_attention_fill_args_t* args);

/** Gathers a (new) block table into the virtual batches' table (vLLM's make_block_table):
 *  `out[v, p] = block_table[batch(v), min(start(v) + p, cols - 1)]`, cols the plan's.
 *  block_table: [B, at least cols] int32/int64. out: [V, P], block_table's device and dtype.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan NULL or not live, shapes, dtypes, devices,
 *  overlap); CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED (as the fill); CATTN_CUDA_ERROR.
 *  Stream: CUDA - kernels on `stream` carrying the plan (a captured graph replays it).
 *  Since: 1.0. Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_local_attention_plan_make_block_table(
    const cattn_local_attention_plan_t* plan, const DLTensor* block_table, DLTensor* out,
    cattn_stream_t stream);

/** Arguments of cattn_max_local_attention_virtual_batches. Since: 1.1 */
typedef struct cattn_max_local_attention_virtual_batches_args {
  size_t struct_size;             /**< CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE */
  int64_t attn_chunk_size;        /**< in: the attention chunk C, at least 1 */
  int64_t max_num_seqs;           /**< in: R, requests per step, at least 0 */
  int64_t max_num_batched_tokens; /**< in: T, query tokens per step, at least 0 */
  int64_t bound;                  /**< out: vLLM's, `min(2 * R + cdiv(T, C), T)` */
  int64_t bound_with_empty_rows;  /**< out: `min(2 * R + cdiv(T, C), T + R)` */
} cattn_max_local_attention_virtual_batches_args_t;
/** The struct_size of cattn_max_local_attention_virtual_batches_args_t. Since: 1.1 */
#define CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE \
  ((size_t)sizeof(cattn_max_local_attention_virtual_batches_args_t))
/** Initialiser of cattn_max_local_attention_virtual_batches_args_t (C = 1). Since: 1.1 */
#define CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT \
  { CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE, 1, 0, 0, 0, 0 }

/** Bounds the virtual batches of a step of at most R requests and T query tokens, to size
 *  per-virtual-batch buffers once (vLLM's max_local_attention_virtual_batches). `bound` is
 *  vLLM's value, quirk included: a zero-length (padding) row can exceed it.
 *  `bound_with_empty_rows` holds whatever the rows. Exact, saturated at INT64_MAX.
 *  Reads: args. Writes: `args->bound`, `args->bound_with_empty_rows`.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (args NULL, small struct_size, attn_chunk_size
 *  below 1, a negative max_num_seqs or max_num_batched_tokens).
 *  Since: 1.1. Details: docs/api/max_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_max_local_attention_virtual_batches(
    cattn_max_local_attention_virtual_batches_args_t* args);

/** Arguments of cattn_make_local_attention_virtual_batches_capturable. Since: 1.1 */
typedef struct cattn_local_attention_capturable_args {
  size_t struct_size;              /**< CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_SIZE */
  int64_t attn_chunk_size;         /**< in: the attention chunk C, at least 1 */
  int64_t block_size;              /**< in: tokens per page, at least 1; divides C */
  const DLTensor* query_start_loc; /**< in: device [B + 1] int32/int64 */
  const DLTensor* seq_lens;        /**< in: device [B] int32/int64 */
  const DLTensor* block_table;     /**< in: device [B, cols] int32/int64, cols at least 1 */
  DLTensor* query_start_loc_out;   /**< out: [capacity + 1] cu_seqlens_q; the total past V */
  DLTensor* seq_lens_out;          /**< out: [capacity] key lengths; 0 past V */
  DLTensor* num_computed_tokens_out; /**< out, may be NULL: [capacity]; 0 past V */
  /** out, may be NULL: [capacity, C / block_size] in block_table's dtype; rows past V are 0 */
  DLTensor* block_table_out;
  DLTensor* counts;                /**< out, may be NULL: [3] V, max_query_len, max_seq_len */
  cattn_stream_t stream;           /**< the stream the kernel is enqueued on */
} cattn_local_attention_capturable_args_t;
/** The struct_size of cattn_local_attention_capturable_args_t. Since: 1.1 */
#define CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_SIZE \
  ((size_t)sizeof(cattn_local_attention_capturable_args_t))
/** Initialiser of cattn_local_attention_capturable_args_t. Since: 1.1 */
#define CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_INIT                                              \
  {                                                                                             \
    CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_SIZE, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
        NULL, NULL                                                                              \
  }

/** Computes the virtual batches on the device from the device query_start_loc and seq_lens, so
 *  that a captured CUDA graph recomputes them on every replay; values equal the plan's. The
 *  capacity is the outputs' length (cattn_max_local_attention_virtual_batches'
 *  bound_with_empty_rows suffices); a larger batch writes its first ones, its V in counts.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (arguments, host tensors, outputs of different
 *  capacities, block_table_out columns or dtype); CATTN_INSUFFICIENT_SIZE (query_start_loc_out,
 *  counts); CATTN_NOT_SUPPORTED (CPU-only build, no usable device, misaligned); CATTN_CUDA_ERROR.
 *  Stream: one kernel on `args->stream`. Unchecked data: a decrease is an empty request, a
 *  short seq_len its query's length; an int32 output keeps the low 32 bits.
 *  Since: 1.1. Details: docs/api/make_local_attention_virtual_batches.md */
CATTN_API cattn_status_t cattn_make_local_attention_virtual_batches_capturable(
    const cattn_local_attention_capturable_args_t* args);

/** @} */

/* === Causal-conv1d metadata === */
/** @defgroup group_causal_conv1d Causal-conv1d metadata
 *  The launch metadata of Mamba's causal-conv1d kernel: compute_causal_conv1d_metadata (a `_size`
 *  query, a `_capturable` variant).
 *  Pages: docs/api/compute_causal_conv1d_metadata.md.
 *  @{ */

/** The value written past the programs in use: batch_ptr and token_chunk_offset_ptr (and, on
 *  the device call, every per-program output) past tot; also the Mamba block table's device
 *  entry for a column past a row. Since: 1.0 */
#define CATTN_PAD_SLOT_ID (-1)

/** Arguments of cattn_compute_causal_conv1d_metadata. Since: 1.0 */
typedef struct cattn_causal_conv1d_metadata_args {
  size_t struct_size; /**< CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE */
  /** in: host [B + 1] int32/int64, non-decreasing; an empty tensor is the empty batch, B = 0 */
  const DLTensor* query_start_loc_cpu;
  int64_t block_m;                /**< in: tokens per program (vLLM: 8), at least 1 */
  DLTensor* nums;                 /**< out, may be NULL: exactly [B], programs per request */
  DLTensor* mlist;                /**< out, may be NULL: [at least tot] request of each program */
  DLTensor* offsetlist;           /**< out, may be NULL: [at least tot] chunk within its request */
  /** out, may be NULL: [capacity, at least tot] mlist, then CATTN_PAD_SLOT_ID to capacity */
  DLTensor* batch_ptr;
  /** out, may be NULL: [capacity, at least tot] offsetlist, then CATTN_PAD_SLOT_ID */
  DLTensor* token_chunk_offset_ptr;
  int64_t tot;                    /**< out: programs in all (vLLM's `nums.sum()`) */
  cattn_stream_t stream;          /**< CUDA outputs only */
} cattn_causal_conv1d_metadata_args_t;
/** The struct_size of cattn_causal_conv1d_metadata_args_t. Since: 1.0 */
#define CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE \
  ((size_t)sizeof(cattn_causal_conv1d_metadata_args_t))
/** Initialiser of cattn_causal_conv1d_metadata_args_t (block_m 8, no outputs). Since: 1.0 */
#define CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT \
  { CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE, NULL, 8, NULL, NULL, NULL, NULL, NULL, 0, NULL }
/** cattn_causal_conv1d_metadata_args_t under its utility's name; the old name stays.
 *  Since: 1.1 */
typedef cattn_causal_conv1d_metadata_args_t cattn_compute_causal_conv1d_metadata_args_t;
/** CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE under its utility's name. Since: 1.1 */
#define CATTN_COMPUTE_CAUSAL_CONV1D_METADATA_ARGS_SIZE CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE
/** CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT under its utility's name. Since: 1.1 */
#define CATTN_COMPUTE_CAUSAL_CONV1D_METADATA_ARGS_INIT CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT

/** Counts the programs `tot` and the capacity vLLM allocates for the padded launch arrays,
 *  `max(1024, tot) * 2`; the compute call takes any capacity of at least tot. tot, capacity:
 *  host pointers, either may be NULL. Reads: query_start_loc_cpu. Writes: `*tot`, `*capacity`.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (query_start_loc_cpu NULL, malformed, off the
 *  host, decreasing or broadcast past CATTN_MAX_BROADCAST_ELEMENTS; block_m below 1; a length
 *  past int64; more than 2^62 - 1 programs, which the compute call refuses too).
 *  Since: 1.0. Details: docs/api/compute_causal_conv1d_metadata.md */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_size(
    const DLTensor* query_start_loc_cpu, int64_t block_m, int64_t* tot, int64_t* capacity);

/** Computes causal_conv1d's launch metadata (vLLM's compute_causal_conv1d_metadata): programs
 *  per request `ceil(len / block_m)`, each program's request and chunk, the padded arrays.
 *  Outputs: optional 1-D int32/int64 on one device. Writes: the outputs, `args->tot`.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (the size query's refusals, NULL args, small
 *  struct_size, bad or overlapping outputs, nums longer than B, a value past an int32 output);
 *  CATTN_INSUFFICIENT_SIZE (nums shorter than B, another output shorter than tot);
 *  CATTN_NOT_SUPPORTED (CUDA outputs not served, misaligned); CATTN_CUDA_ERROR. Stream: CUDA -
 *  planned on the host, tot set on return; a captured graph replays the values planned then.
 *  Since: 1.0. Details: docs/api/compute_causal_conv1d_metadata.md */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata(
    cattn_causal_conv1d_metadata_args_t* args);

/** Arguments of cattn_compute_causal_conv1d_metadata_capturable. Since: 1.1 */
typedef struct cattn_causal_conv1d_metadata_capturable_args {
  size_t struct_size;              /**< CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_SIZE */
  const DLTensor* query_start_loc; /**< in: device [B + 1] int32/int64, non-decreasing */
  int64_t block_m;                 /**< in: tokens per program (vLLM: 8), at least 1 */
  DLTensor* nums;                  /**< out, may be NULL: [B] programs per request */
  DLTensor* mlist;                 /**< out, may be NULL: [capacity] request of each program */
  DLTensor* offsetlist;            /**< out, may be NULL: [capacity] chunk within its request */
  DLTensor* batch_ptr;             /**< out, may be NULL: [capacity], as mlist */
  DLTensor* token_chunk_offset_ptr; /**< out, may be NULL: [capacity], as offsetlist */
  DLTensor* tot;                   /**< out, may be NULL: [1] the number of programs */
  cattn_stream_t stream;           /**< the stream the kernel is enqueued on */
} cattn_causal_conv1d_metadata_capturable_args_t;
/** The struct_size of cattn_causal_conv1d_metadata_capturable_args_t. Since: 1.1 */
#define CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_SIZE \
  ((size_t)sizeof(cattn_causal_conv1d_metadata_capturable_args_t))
/** Initialiser of cattn_causal_conv1d_metadata_capturable_args_t (block_m 8). Since: 1.1 */
#define CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_INIT                                     \
  {                                                                                           \
    CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_SIZE, NULL, 8, NULL, NULL, NULL, NULL, NULL, \
        NULL, NULL                                                                            \
  }

/** Computes the same metadata on the device from the device query_start_loc, so that a
 *  captured CUDA graph recomputes it on every replay. Per-program outputs get CATTN_PAD_SLOT_ID
 *  past tot; `cdiv(max_num_tokens, block_m) + max_num_reqs` entries hold every batch within
 *  those limits, and a larger batch writes its first programs (tot counts all).
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (arguments, host tensors, nums or tot longer than
 *  B or 1); CATTN_INSUFFICIENT_SIZE (nums or tot shorter); CATTN_NOT_SUPPORTED (CPU-only build,
 *  no usable device, misaligned); CATTN_CUDA_ERROR. Stream: one kernel on `args->stream`;
 *  unchecked data: a decrease is an empty request, an int32 output keeps the low 32 bits.
 *  Since: 1.1. Details: docs/api/compute_causal_conv1d_metadata.md */
CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_capturable(
    const cattn_causal_conv1d_metadata_capturable_args_t* args);

/** @} */

/* === Mamba block table === */
/** @defgroup group_mamba Mamba block table
 *  The block-table columns Mamba layers read: mamba_get_block_table_tensor.
 *  Pages: docs/api/mamba_get_block_table_tensor.md.
 *  @{ */

/** Which block-table columns the Mamba kernels use (vLLM's mamba_cache_mode). Since: 1.0 */
typedef enum cattn_mamba_cache_mode_e {
  CATTN_MAMBA_CACHE_MODE_NONE = 0, /**< "none": every column, as given */
  CATTN_MAMBA_CACHE_MODE_ALL = 1,  /**< "all": every column, as given */
  CATTN_MAMBA_CACHE_MODE_ALIGN = 2 /**< "align": each request's last 1 + nspec blocks */
} cattn_mamba_cache_mode_t;

/** Arguments of cattn_mamba_get_block_table_tensor. Since: 1.0 */
typedef struct cattn_mamba_block_table_args {
  size_t struct_size;              /**< CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE */
  const DLTensor* block_table;     /**< in: [B, M] int32/int64 */
  /** in: [B] int32/int64, read by ALIGN only; otherwise may be NULL (checked if given) */
  const DLTensor* seq_lens;
  int64_t block_size;              /**< in: ALIGN: tokens per block, at least 1; else ignored */
  int64_t num_speculative_blocks;  /**< in: ALIGN: nspec, at least 0; else ignored */
  int32_t mamba_cache_mode;        /**< in: a cattn_mamba_cache_mode_t */
  int32_t reserved0;               /**< set to 0 */
  /** out: int32/int64, block_table's dtype or the other: [B, M] for ALL and NONE,
   *  [B, 1 + nspec] for ALIGN */
  DLTensor* out;
  cattn_stream_t stream;           /**< CUDA tensors only */
} cattn_mamba_block_table_args_t;
/** The struct_size of cattn_mamba_block_table_args_t. Since: 1.0 */
#define CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE ((size_t)sizeof(cattn_mamba_block_table_args_t))
/** Initialiser of cattn_mamba_block_table_args_t (mode NONE). Since: 1.0 */
#define CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT \
  { CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE, NULL, NULL, 0, 0, CATTN_MAMBA_CACHE_MODE_NONE, 0, \
    NULL, NULL }
/** cattn_mamba_block_table_args_t under its utility's name; the old name stays. Since: 1.1 */
typedef cattn_mamba_block_table_args_t cattn_mamba_get_block_table_tensor_args_t;
/** CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE under its utility's name. Since: 1.1 */
#define CATTN_MAMBA_GET_BLOCK_TABLE_TENSOR_ARGS_SIZE CATTN_MAMBA_BLOCK_TABLE_ARGS_SIZE
/** CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT under its utility's name. Since: 1.1 */
#define CATTN_MAMBA_GET_BLOCK_TABLE_TENSOR_ARGS_INIT CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT

/** Selects the block-table columns Mamba kernels use (vLLM's mamba_get_block_table_tensor).
 *  ALIGN: `out[b, j] = block_table[b, max((seq_lens[b] - 1) // block_size, 0) + j]`, j from 0
 *  to nspec. ALL, NONE: out is a copy, or block_table's very view (then nothing is written).
 *  A column past a row: refused on the host, CATTN_PAD_SLOT_ID on the device.
 *  Reads: args, block_table, seq_lens (ALIGN). Writes: out.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (arguments, unknown mode, nonzero reserved0,
 *  block_size or nspec out of range, a column past a row, a value past out's dtype, overlap);
 *  CATTN_INSUFFICIENT_SIZE (out too small); CATTN_NOT_SUPPORTED (CUDA tensors not served,
 *  misaligned); CATTN_CUDA_ERROR. Stream: CUDA - one kernel, copies too; an int32 out keeps the
 *  low 32 bits of a wider value. Since: 1.0. Details: docs/api/mamba_get_block_table_tensor.md */
CATTN_API cattn_status_t cattn_mamba_get_block_table_tensor(
    const cattn_mamba_block_table_args_t* args);

/** @} */

/* === Fast prefill and extend === */
/** @defgroup group_fast_prefill Fast prefill and extend
 *  A batch's metadata made into another batch's: KV-sharing fast prefill's decode batch
 *  (make_kv_sharing_fast_prefill_common_attn_metadata), every query longer by n tokens
 *  (extend_all_queries_by_n).
 *  Pages: docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md,
 *  docs/api/extend_all_queries_by_n.md.
 *  @{ */

/** Arguments of cattn_extend_all_queries_by_n. */
typedef struct cattn_extend_all_queries_by_n_args {
  size_t struct_size; /**< CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE (or `_SIZE_1_0`). */
  /** in: the batch; its query_start_loc(_cpu), seq_lens(_cpu) and scalars are read. */
  const cattn_common_attn_metadata_t* metadata;
  int64_t n;                        /**< in: tokens added to every request, at least 0. */
  DLTensor* new_slot_mapping;       /**< in: 1-D or NULL; becomes out->slot_mapping, not read. */
  /** out: the caller sets its query_start_loc and seq_lens (and mirrors) to tensors of the
   *  input's shapes, possibly the input's own (in place); the call writes the rest. */
  cattn_common_attn_metadata_t* out;
  cattn_stream_t stream;            /**< CUDA tensors only. */
  /** in (1.1): DCP group size of the metadata's dcp_local_seq_lens; 0 = not given. */
  int64_t dcp_size;
  int64_t dcp_rank;                 /**< in (1.1): in `[0, dcp_size)`. */
  int64_t dcp_kv_cache_interleave_size; /**< in (1.1): at least 1. */
} cattn_extend_all_queries_by_n_args_t;
/** struct_size of a current cattn_extend_all_queries_by_n_args_t. */
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE \
  ((size_t)sizeof(cattn_extend_all_queries_by_n_args_t))
/** struct_size of a 1.0 args struct (ending at stream, no DCP fields). Since: 1.1 */
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0 \
  ((size_t)(offsetof(cattn_extend_all_queries_by_n_args_t, stream) + sizeof(cattn_stream_t)))
/** Initialiser: n = 1, no DCP group, interleave 1, everything else NULL. */
#define CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT \
  { CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE, NULL, 1, NULL, NULL, NULL, 0, 0, 1 }

/** Extends every request's query and sequence by `n` tokens (vLLM's extend_all_queries_by_1,
 *  for any n): `query_start_loc[i] += i * n`; seq_lens, seq_lens_cpu, max_query_len and
 *  max_seq_len `+= n`; `num_actual_tokens += n * B` (B = seq_lens' length); slot_mapping =
 *  new_slot_mapping; the rest is copied. With 1.1 structs on both sides it also extends
 *  seq_lens_cpu_upper_bound, recomputes dcp_local_seq_lens(_cpu) (needs dcp_size) and fills
 *  out->positions when set. An output is set exactly when its input is. Writes: out. In place:
 *  out may be the metadata struct, an output tensor its input's (or its mirror's) view.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (shapes, dtypes, devices, an output set without
 *  its input or the reverse, a host mirror unlike its tensor, DCP parameters, overlaps, n
 *  negative, int64 overflow, a host value too wide for its output); CATTN_INSUFFICIENT_SIZE;
 *  CATTN_NOT_SUPPORTED (CUDA unavailable, a misaligned device tensor); CATTN_CUDA_ERROR.
 *  Stream: CUDA - kernels on args->stream; host mirrors are updated on the host before return.
 *  Lifetime: out->slot_mapping keeps new_slot_mapping's pointer.
 *  Since: 1.0 (1.1 fields: 1.1). Details: docs/api/extend_all_queries_by_n.md */
CATTN_API cattn_status_t cattn_extend_all_queries_by_n(
    const cattn_extend_all_queries_by_n_args_t* args);

/** Arguments of cattn_make_kv_sharing_fast_prefill_common_attn_metadata. */
typedef struct cattn_fast_prefill_metadata_args {
  size_t struct_size; /**< CATTN_FAST_PREFILL_METADATA_ARGS_SIZE. */
  /** in: the batch: query_start_loc, logits_indices_padded and the scalars are read. */
  const cattn_common_attn_metadata_t* metadata;
  /** out: the caller sets query_start_loc (`[num_reqs + 1]`) and, host path only, optionally
   *  query_start_loc_cpu; the call writes them and every other field. */
  cattn_common_attn_metadata_t* out;
  /** out: `[2]` {max_query_len, num_actual_tokens} of the decode batch, on the input's device;
   *  required for CUDA tensors, optional on the host. */
  DLTensor* decode_max_and_total;
  int32_t passthrough;            /**< out: 1 when max_query_len is 1 and out is a copy. */
  int32_t reserved0;              /**< Set to 0. */
  cattn_stream_t stream;          /**< CUDA tensors only. */
} cattn_fast_prefill_metadata_args_t;
/** struct_size of cattn_fast_prefill_metadata_args_t. */
#define CATTN_FAST_PREFILL_METADATA_ARGS_SIZE ((size_t)sizeof(cattn_fast_prefill_metadata_args_t))
/** Initialiser: every pointer NULL, passthrough 0. */
#define CATTN_FAST_PREFILL_METADATA_ARGS_INIT \
  { CATTN_FAST_PREFILL_METADATA_ARGS_SIZE, NULL, NULL, NULL, 0, 0, NULL }
/** The same struct under its utility's name; the older name stays. Since: 1.1 */
typedef cattn_fast_prefill_metadata_args_t
    cattn_make_kv_sharing_fast_prefill_common_attn_metadata_args_t;
/** CATTN_FAST_PREFILL_METADATA_ARGS_SIZE under the utility's name. Since: 1.1 */
#define CATTN_MAKE_KV_SHARING_FAST_PREFILL_COMMON_ATTN_METADATA_ARGS_SIZE \
  CATTN_FAST_PREFILL_METADATA_ARGS_SIZE
/** CATTN_FAST_PREFILL_METADATA_ARGS_INIT under the utility's name. Since: 1.1 */
#define CATTN_MAKE_KV_SHARING_FAST_PREFILL_COMMON_ATTN_METADATA_ARGS_INIT \
  CATTN_FAST_PREFILL_METADATA_ARGS_INIT

/** Builds KV-sharing fast prefill's decode-only metadata (vLLM's
 *  make_kv_sharing_fast_prefill_common_attn_metadata): each request keeps only the tokens
 *  whose logits are needed. When max_query_len is 1, out is a copy and passthrough = 1.
 *  Reads: args, the metadata, query_start_loc, logits_indices_padded. Writes: out,
 *  decode_max_and_total, passthrough. Allocates: nothing. out is the metadata only if passthrough.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (reserved0, no logits indices, num_logits_indices
 *  or num_reqs out of range, a bad host query_start_loc or logits index, overlaps, a broadcast
 *  input too large; on CUDA a NULL decode_max_and_total or a set out->query_start_loc_cpu);
 *  CATTN_INSUFFICIENT_SIZE; CATTN_NOT_SUPPORTED (CUDA unavailable, a misaligned device
 *  tensor); CATTN_CUDA_ERROR.
 *  Stream: CUDA - one kernel on args->stream; out->max_query_len and num_actual_tokens are -1.
 *  Since: 1.0 (max_logits_per_req: 1.1).
 *  Details: docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md */
CATTN_API cattn_status_t cattn_make_kv_sharing_fast_prefill_common_attn_metadata(
    cattn_fast_prefill_metadata_args_t* args);

/** @} */

/* === Multimodal prefix ranges === */
/** @defgroup group_mm_prefix Multimodal prefix ranges
 *  Multimodal items' bidirectional prefix ranges: compute_mm_prefix_range_tensor,
 *  fill_mm_prefix_query_ranges.
 *  Pages: docs/api/compute_mm_prefix_range_tensor.md.
 *  @{ */

/** Arguments of cattn_compute_mm_prefix_range_tensor. The ranges are vLLM's mm_prefix_range
 *  dict in CSR form: request r's ranges are the rows of ranges from `range_offsets[r]` up to,
 *  not including, `range_offsets[r + 1]`, in list order; range_offsets NULL stands for None. */
typedef struct cattn_mm_prefix_range_tensor_args {
  size_t struct_size; /**< CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE. */
  /** in: host `[num_seqs + 1]` int32/int64, from 0, non-decreasing, last at most the rows of
   *  ranges; NULL for None. */
  const DLTensor* range_offsets;
  /** in: host `[n, 2]` (start, end) pairs, values in int32; NULL only with range_offsets. */
  const DLTensor* ranges;
  /** out: host `[num_seqs, max_ranges, 2]` int32/int64, or NULL for the size query. */
  DLTensor* out;
  int64_t max_ranges;            /**< out: ranges per request after padding, 0 for None. */
  int32_t is_none;               /**< out: 1 where vLLM returns None (out not written). */
  int32_t reserved0;             /**< in: must be 0. */
} cattn_mm_prefix_range_tensor_args_t;
/** struct_size of cattn_mm_prefix_range_tensor_args_t. Since: 1.1 */
#define CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE \
  ((size_t)sizeof(cattn_mm_prefix_range_tensor_args_t))
/** Initialiser: every pointer NULL (None). Since: 1.1 */
#define CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT \
  { CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE, NULL, NULL, NULL, 0, 0, 0 }

/** Builds vLLM's padded per-request range tensor (compute_mm_prefix_range_tensor): request r's
 *  ranges as given (or one (0, 0)), padded with (0, 0) to max_ranges, the longest list; None
 *  (is_none = 1) when every list is empty or exactly one (0, 0). Size query: out NULL gives
 *  max_ranges; then pass out of exactly `[num_seqs, max_ranges, 2]`. Reads: args, inputs.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, reserved0, shapes, dtypes,
 *  bad offsets, a range value outside int32, overlaps); CATTN_INSUFFICIENT_SIZE (out too
 *  small); CATTN_NOT_SUPPORTED (device tensors: host memory only).
 *  Since: 1.1. Details: docs/api/compute_mm_prefix_range_tensor.md */
CATTN_API cattn_status_t cattn_compute_mm_prefix_range_tensor(
    cattn_mm_prefix_range_tensor_args_t* args);

/** Arguments of cattn_fill_mm_prefix_query_ranges (host tensors, int32/int64). */
typedef struct cattn_fill_mm_prefix_query_ranges_args {
  size_t struct_size; /**< CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE. */
  const DLTensor* range_offsets;       /**< in: host `[B + 1]` as above, or NULL for None. */
  /** in: host `[n, 2]` (start, end) in absolute prompt positions; NULL only with
   *  range_offsets. */
  const DLTensor* ranges;
  const DLTensor* query_start_loc_cpu; /**< in: host `[B + 1]`, from 0, non-decreasing. */
  const DLTensor* seq_lens_cpu;        /**< in: host `[B]`. */
  /** out: host `[capacity, 2]`, capacity at least T = `query_start_loc_cpu[B]`. */
  DLTensor* out;
  int64_t rows;                        /**< out: rows written: 0 or T. */
} cattn_fill_mm_prefix_query_ranges_args_t;
/** struct_size of cattn_fill_mm_prefix_query_ranges_args_t. Since: 1.1 */
#define CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE \
  ((size_t)sizeof(cattn_fill_mm_prefix_query_ranges_args_t))
/** Initialiser: every pointer NULL. Since: 1.1 */
#define CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT \
  { CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, 0 }

/** Maps each scheduled query token to the multimodal prefix range covering its position, end
 *  inclusive (vLLM's fill_mm_prefix_query_ranges). If any token is covered, rows 0 to T - 1 of
 *  out become (-1, -1), covered rows their range's (start, end), and rows = T; else rows = 0
 *  and out is untouched. Reads: args and the inputs. Writes: out, rows. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, shapes, dtypes, offsets or
 *  query_start_loc_cpu not from 0 or decreasing, a range value too wide for out, overlaps);
 *  CATTN_INSUFFICIENT_SIZE (capacity below T, always checked); CATTN_NOT_SUPPORTED (device).
 *  Since: 1.1. Details: docs/api/compute_mm_prefix_range_tensor.md */
CATTN_API cattn_status_t cattn_fill_mm_prefix_query_ranges(
    cattn_fill_mm_prefix_query_ranges_args_t* args);

/** @} */

/* === LSE === */
/** @defgroup group_lse LSE
 *  Log-sum-exp from base 2 to natural logs: log2_lse_to_ln.
 *  Pages: docs/api/log2_lse_to_ln.md.
 *  @{ */

/** How cattn_log2_lse_to_ln rounds float16 and bfloat16 (args->half_rounding). Since: 1.1 */
typedef enum cattn_lse_rounding_e {
  /** torch 2.0 and later, CPU and CUDA (vLLM's runtime): the product in float32 with ln 2
   *  rounded to float32, rounded once to the tensor's type. */
  CATTN_LSE_ROUNDING_TORCH = 0,
  /** torch 1.x on the CPU: ln 2 first rounded to the tensor's type, then as above. */
  CATTN_LSE_ROUNDING_TORCH1_CPU = 1
} cattn_lse_rounding_t;

/** Arguments of cattn_log2_lse_to_ln. */
typedef struct cattn_log2_lse_to_ln_args {
  size_t struct_size; /**< CATTN_LOG2_LSE_TO_LN_ARGS_SIZE. */
  /** in: 0 to 8 dims, any strides (0 too); float16, bfloat16, float32 or float64. */
  const DLTensor* lse;
  /** out: lse's shape, dtype and device; may be the very view of lse (in place). */
  DLTensor* out;
  int64_t half_rounding; /**< in: a cattn_lse_rounding_t (float16 and bfloat16 only). */
  cattn_stream_t stream; /**< CUDA tensors only. */
} cattn_log2_lse_to_ln_args_t;
/** struct_size of cattn_log2_lse_to_ln_args_t. Since: 1.1 */
#define CATTN_LOG2_LSE_TO_LN_ARGS_SIZE ((size_t)sizeof(cattn_log2_lse_to_ln_args_t))
/** Initialiser: NULL tensors, CATTN_LSE_ROUNDING_TORCH, default stream. Since: 1.1 */
#define CATTN_LOG2_LSE_TO_LN_ARGS_INIT \
  { CATTN_LOG2_LSE_TO_LN_ARGS_SIZE, NULL, NULL, CATTN_LSE_ROUNDING_TORCH, NULL }

/** Converts a base-2 log-sum-exp to natural-log units, `out = lse * ln 2` (vLLM's
 *  log2_lse_to_ln), rounding as torch does, so host and device give the same bits.
 *  Reads: args, lse. Writes: out (which may be lse itself). Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, an unsupported dtype, out
 *  of another shape or dtype, a zero-stride out, out overlapping lse other than as the same
 *  view, an unknown half_rounding, tensors on different devices); CATTN_NOT_SUPPORTED (CUDA
 *  unavailable, a misaligned device tensor); CATTN_CUDA_ERROR.
 *  Since: 1.1. Details: docs/api/log2_lse_to_ln.md */
CATTN_API cattn_status_t cattn_log2_lse_to_ln(const cattn_log2_lse_to_ln_args_t* args);

/** @} */

/* === Per-layer parameters === */
/** @defgroup group_per_layer Per-layer parameters
 *  Attention hyperparameters per layer and for the model: get_per_layer_parameters,
 *  infer_global_hyperparameters.
 *  Pages: docs/api/get_per_layer_parameters.md.
 *  @{ */

/** What vLLM reads from one attention layer's impl; the input of
 *  cattn_get_per_layer_parameters. */
typedef struct cattn_attention_layer_desc {
  size_t struct_size; /**< CATTN_ATTENTION_LAYER_DESC_SIZE; the array's stride. */
  int64_t sliding_window_left;  /**< impl.sliding_window[0], used when has_sliding_window. */
  int64_t sliding_window_right; /**< impl.sliding_window[1] (unused, as in vLLM). */
  double logits_soft_cap;       /**< Used when has_logits_soft_cap. */
  double scale;                 /**< impl.scale. */
  int32_t has_sliding_window;   /**< 0 = impl.sliding_window is None, or 1. */
  int32_t has_logits_soft_cap;  /**< 0 = impl.logits_soft_cap is None, or 1. */
  int32_t has_sinks;            /**< 1 = impl.sinks is not None, or 0. */
  int32_t reserved0;            /**< Set to 0. */
} cattn_attention_layer_desc_t;
/** struct_size of cattn_attention_layer_desc_t. */
#define CATTN_ATTENTION_LAYER_DESC_SIZE ((size_t)sizeof(cattn_attention_layer_desc_t))
/** Initialiser: no window, no soft cap, scale 1.0, no sinks. */
#define CATTN_ATTENTION_LAYER_DESC_INIT \
  { CATTN_ATTENTION_LAYER_DESC_SIZE, 0, 0, 0.0, 1.0, 0, 0, 0, 0 }

/** vLLM's PerLayerParameters: the output of cattn_get_per_layer_parameters. */
typedef struct cattn_per_layer_parameters {
  size_t struct_size; /**< CATTN_PER_LAYER_PARAMETERS_SIZE; the array's stride. */
  int64_t window_left;          /**< -1 = no sliding window. */
  double logits_soft_cap;       /**< Meaningful when has_logits_soft_cap; else written 0.0. */
  double sm_scale;              /**< The layer's softmax scale. */
  int32_t has_logits_soft_cap;  /**< 0 = None (unlike a cap of 0.0), or 1. */
  int32_t has_sinks;            /**< 0 or 1. */
} cattn_per_layer_parameters_t;
/** struct_size of cattn_per_layer_parameters_t. */
#define CATTN_PER_LAYER_PARAMETERS_SIZE ((size_t)sizeof(cattn_per_layer_parameters_t))
/** Initialiser: no window, no soft cap, scale 1.0, no sinks. */
#define CATTN_PER_LAYER_PARAMETERS_INIT { CATTN_PER_LAYER_PARAMETERS_SIZE, -1, 0.0, 1.0, 0, 0 }

/** The global parameters and vLLM's two flags: the output of
 *  cattn_infer_global_hyperparameters. */
typedef struct cattn_global_hyperparameters {
  size_t struct_size; /**< CATTN_GLOBAL_HYPERPARAMETERS_SIZE. */
  int64_t window_left;          /**< The first layer's window_left. */
  double logits_soft_cap;       /**< The first layer's logits_soft_cap. */
  double sm_scale;              /**< The first layer's sm_scale. */
  int32_t has_logits_soft_cap;  /**< The first layer's has_logits_soft_cap. */
  int32_t has_sinks;            /**< The first layer's has_sinks. */
  int32_t has_same_window_lefts; /**< 1 when every layer's window_left equals the first's. */
  int32_t has_same_all_params;   /**< 1 when every layer equals the first in all four fields. */
} cattn_global_hyperparameters_t;
/** struct_size of cattn_global_hyperparameters_t. */
#define CATTN_GLOBAL_HYPERPARAMETERS_SIZE ((size_t)sizeof(cattn_global_hyperparameters_t))
/** Initialiser: all zero but struct_size. */
#define CATTN_GLOBAL_HYPERPARAMETERS_INIT \
  { CATTN_GLOBAL_HYPERPARAMETERS_SIZE, 0, 0.0, 0.0, 0, 0, 0, 0 }

/** Converts layer descriptions into per-layer parameters, element by element (vLLM's
 *  get_per_layer_parameters): window_left = sliding_window_left or -1; a missing soft cap
 *  stays missing. layers and out: host arrays of num_layers structs, each array's stride its
 *  element 0's struct_size (the same in every element); both may be NULL when num_layers = 0.
 *  Reads: layers. Writes: the known fields of every out element. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULL arrays, a struct_size too small or unlike
 *  element 0's, a flag not 0 or 1, nonzero reserved0, out overlapping layers).
 *  Stream: synchronous. Since: 1.0. Details: docs/api/get_per_layer_parameters.md */
CATTN_API cattn_status_t cattn_get_per_layer_parameters(const cattn_attention_layer_desc_t* layers,
                                                        size_t num_layers,
                                                        cattn_per_layer_parameters_t* out);

/** Takes the first layer's parameters as global and reports whether every layer shares its
 *  window_left and whether every layer equals it in all four fields, with vLLM's dataclass
 *  equality (vLLM's infer_global_hyperparameters). params: host array, stride
 *  `params[0].struct_size`; out: host, not NULL, struct_size set.
 *  Reads: params. Writes: the known fields of `*out`. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, num_layers 0, struct sizes, a flag not 0
 *  or 1, out overlapping params).
 *  Stream: synchronous. Since: 1.0. Details: docs/api/get_per_layer_parameters.md */
CATTN_API cattn_status_t cattn_infer_global_hyperparameters(
    const cattn_per_layer_parameters_t* params, size_t num_layers,
    cattn_global_hyperparameters_t* out);

/** @} */

/* === Step inputs: a step's attention inputs from the scheduler's output (1.2) ===
 * What an engine builds every step before attention runs: query_start_loc, seq_lens and
 * positions from the scheduled token counts, the batch's block tables gathered from the
 * persistent ones, slot mappings, and logits indices. Each call takes int32/int64 tensors, all
 * on the host (CPU) or all on one GPU (one kernel on `stream`, no sync, capturable), and the
 * step plan computes the same products in its launch (CATTN_STEP_INPUTS and after).
 *
 * The padding contract. A batch has B rows (a CUDA-graph bucket); the first num_reqs are live
 * and the rest are padding. num_reqs is a device (or host) scalar `[1]` in [0, B] (the host
 * refuses another value, the device clamps it); NULL means B. A padded row is an empty
 * request, in every product: its query_start_loc entry repeats the total (`qsl[b + 1] ==
 * qsl[b]`), its seq_len and num_computed_tokens are 0, its gathered block-table row is 0
 * across the full width, it owns no token and no logit. Every
 * token past the live total has position 0, request 0 and slot CATTN_PAD_SLOT_ID (-1) in every
 * group, up to the output's length; every logit past the total has index 0. Inputs of padded
 * rows are never read. cattn_step_batch_check verifies a batch against this contract.
 *
 * Values. The host path refuses a value out of range (a negative count, an idx_mapping entry
 * outside the persistent rows, a total past an output) with CATTN_INVALID_ARGUMENT. The device
 * path never reads or writes out of bounds whatever the values: a negative count reads as 0, a
 * row outside the persistent state reads as an empty one (no computed tokens, no blocks: slots
 * -1), a token past an output is not written, a block-table column past the table gives slot
 * -1; cattn_step_batch_check reports such a batch. The device path takes at most 8192 rows
 * (CATTN_NOT_SUPPORTED past them: its scans live in shared memory). Details:
 * docs/api/step_inputs.md */
/** @defgroup group_step_inputs Step inputs: a step's attention inputs from the scheduler's output (1.2)
 *  A step's attention inputs from the scheduler's output: prepare_pos_seq_lens,
 *  gather_block_tables, compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check,
 *  step_inputs_size, and the padding contract.
 *  Pages: docs/api/step_inputs.md (the padding contract too).
 *  @{ */

/** The most KV-cache groups one step plan or batch check handles. Since: 1.2 */
#define CATTN_MAX_KV_GROUPS 8

/** Which of vLLM's slot-mapping contracts (cattn_compute_slot_mappings_args_t.contract).
 *  Since: 1.2 */
typedef enum cattn_slot_mapping_contract {
  /** Model runner v2 (vllm/v1/worker/gpu/block_table.py): the table row of batch row b is the
   *  persistent row `idx_mapping[b]`; positions split into kernel blocks of kernel_block_size
   *  x dcp_size tokens. vLLM computes the slot in 32 bits (it wraps past 2^31); libcattn
   *  writes the 64-bit value. */
  CATTN_SLOT_MAPPING_MRV2 = 0,
  /** v1 (vllm/v1/worker/block_table.py): the table row is the batch row; positions split into
   *  virtual blocks of block_size x dcp_size tokens, then into kernel blocks. */
  CATTN_SLOT_MAPPING_V1 = 1
} cattn_slot_mapping_contract_t;

/** A KV-cache group's slot mode (vLLM's SlotMappingMode). Since: 1.2 */
typedef enum cattn_slot_mode {
  CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT = 0, /**< Attention groups: a slot per token. */
  CATTN_SLOT_MODE_NONE = 1              /**< Mamba groups: no slot mapping is written. */
} cattn_slot_mode_t;

/** Arguments of cattn_prepare_pos_seq_lens. B = num_scheduled_tokens' length. */
typedef struct cattn_prepare_pos_seq_lens_args {
  size_t struct_size;                   /**< CATTN_PREPARE_POS_SEQ_LENS_ARGS_SIZE. */
  const DLTensor* num_scheduled_tokens; /**< in: [B] query length of each batch row. */
  const DLTensor* idx_mapping;          /**< in: [B] persistent row of each batch row. */
  const DLTensor* num_computed_tokens;  /**< in: [R] per persistent row. */
  const DLTensor* num_reqs;             /**< in, may be NULL: [1] live rows; NULL = B. */
  DLTensor* query_start_loc;            /**< out: [B + 1]. */
  DLTensor* seq_lens;                   /**< out: [B]. */
  DLTensor* positions;                  /**< out, may be NULL: [T_cap], at least the total. */
  DLTensor* batch_num_computed_tokens;  /**< out, may be NULL: [B]. */
  cattn_stream_t stream;                /**< in: for CUDA tensors. */
} cattn_prepare_pos_seq_lens_args_t;
/** struct_size of cattn_prepare_pos_seq_lens_args_t. Since: 1.2 */
#define CATTN_PREPARE_POS_SEQ_LENS_ARGS_SIZE ((size_t)sizeof(cattn_prepare_pos_seq_lens_args_t))
/** Initialiser: every tensor NULL, the legacy default stream. Since: 1.2 */
#define CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT \
  { CATTN_PREPARE_POS_SEQ_LENS_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** A step's query_start_loc (the running sum of the live rows' scheduled tokens), seq_lens
 *  (`num_computed_tokens[idx_mapping[b]] + q[b]`), positions (`nct + j` for token j of row b)
 *  and the batch's num_computed_tokens, padded rows per the padding contract: vLLM's host
 *  cumsum plus MRV2's prepare_pos_seq_lens, whose unwritten padded positions are 0 here.
 *  Reads: args, inputs. Writes: the outputs. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, mixed
 *  devices, an overlap; host: a value out of range); CATTN_INSUFFICIENT_SIZE (an output
 *  shorter than its shape; host: positions shorter than the total); CATTN_NOT_SUPPORTED
 *  (CUDA tensors in a CPU-only build); CATTN_CUDA_ERROR.
 *  Stream: CUDA tensors: one kernel on `stream`, capturable. Since: 1.2.
 *  Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_prepare_pos_seq_lens(const cattn_prepare_pos_seq_lens_args_t* args);

/** Arguments of cattn_gather_block_tables. B = idx_mapping's length. */
typedef struct cattn_gather_block_tables_args {
  size_t struct_size;           /**< CATTN_GATHER_BLOCK_TABLES_ARGS_SIZE. */
  const DLTensor* idx_mapping;  /**< in: [B] persistent row of each batch row. */
  const DLTensor* num_reqs;     /**< in, may be NULL: [1] live rows; NULL = B. */
  const DLTensor* block_table;  /**< in: [R, W] the persistent table (kernel-block ids). */
  /** in, may be NULL: [R] entries in use per persistent row, in [0, W] (host: refused outside;
   *  device: clamped); NULL = W. */
  const DLTensor* num_blocks;
  DLTensor* out;                /**< out: [B, W] in block_table's dtype or another. */
  cattn_stream_t stream;        /**< in: for CUDA tensors. */
} cattn_gather_block_tables_args_t;
/** struct_size of cattn_gather_block_tables_args_t. Since: 1.2 */
#define CATTN_GATHER_BLOCK_TABLES_ARGS_SIZE ((size_t)sizeof(cattn_gather_block_tables_args_t))
/** Initialiser: every tensor NULL, the legacy default stream. Since: 1.2 */
#define CATTN_GATHER_BLOCK_TABLES_ARGS_INIT \
  { CATTN_GATHER_BLOCK_TABLES_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, NULL }

/** Copies each live row's persistent block-table row into the batch's table (MRV2's
 *  gather_block_tables): `out[b, 0:n] = block_table[idx_mapping[b], 0:n]`, n = num_blocks of
 *  that row; entries of a live row past n are left as they are (vLLM); padded rows are 0
 *  across the full width. Reads: args, inputs. Writes: out. Allocates: nothing.
 *  Returns: as cattn_prepare_pos_seq_lens. Stream: as cattn_prepare_pos_seq_lens.
 *  Since: 1.2. Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_gather_block_tables(const cattn_gather_block_tables_args_t* args);

/** Arguments of cattn_compute_slot_mappings (one KV-cache group). */
typedef struct cattn_compute_slot_mappings_args {
  size_t struct_size;               /**< CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_SIZE. */
  int32_t contract;                 /**< in: a cattn_slot_mapping_contract_t. */
  int32_t reserved0;                /**< Set to 0. */
  int64_t block_size;               /**< in: the group's block size, at least 1. */
  int64_t kernel_block_size;        /**< in: divides block_size; the table's block unit. */
  int64_t dcp_size;                 /**< in: at least 1 (vLLM's default 1). */
  int64_t dcp_rank;                 /**< in: in [0, dcp_size). */
  int64_t dcp_kv_cache_interleave_size; /**< in: at least 1, divides the contract's block. */
  const DLTensor* query_start_loc;  /**< in: [B + 1]. */
  const DLTensor* num_reqs;         /**< in, may be NULL: [1] live rows; NULL = B. */
  const DLTensor* positions;        /**< in: [N], N at least the live total (v1: padded). */
  const DLTensor* idx_mapping;      /**< in: [B] (MRV2); must be NULL with V1. */
  const DLTensor* block_table;      /**< in: [rows, W]: persistent rows (MRV2), batch (V1). */
  DLTensor* slot_mapping;           /**< out: [T_cap] int64, T_cap at least the live total. */
  cattn_stream_t stream;            /**< in: for CUDA tensors. */
} cattn_compute_slot_mappings_args_t;
/** struct_size of cattn_compute_slot_mappings_args_t. Since: 1.2 */
#define CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_SIZE ((size_t)sizeof(cattn_compute_slot_mappings_args_t))
/** Initialiser: MRV2, block sizes 0 (set them), one DCP rank. Since: 1.2 */
#define CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT \
  { CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_SIZE, CATTN_SLOT_MAPPING_MRV2, 0, 0, 0, 1, 0, 1, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL }

/** The KV-cache slot of every live token of one group: `table[row, col] * kernel_block_size +
 *  offset` with the row, column and offset of `contract`, CATTN_PAD_SLOT_ID (-1) for a token
 *  another DCP rank stores and for every entry from the live total to T_cap (vLLM v1 leaves
 *  the entries between the live and the padded count as they were). 64-bit arithmetic. Host:
 *  refuses a negative position, a column past the table, and a block id below 0 or whose slot
 *  passes int64; device: -1 for such a token. Reads: args, inputs. Writes: slot_mapping.
 *  Allocates: nothing.
 *  Returns: as cattn_prepare_pos_seq_lens, plus CATTN_INVALID_ARGUMENT for the parameters
 *  (contract, reserved0, block sizes, DCP). Stream: as cattn_prepare_pos_seq_lens.
 *  Since: 1.2. Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_compute_slot_mappings(
    const cattn_compute_slot_mappings_args_t* args);

/** Arguments of cattn_combine_sampled_and_draft_tokens. */
typedef struct cattn_combine_sampled_and_draft_tokens_args {
  size_t struct_size;                  /**< CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_SIZE. */
  int64_t num_new_sampled_tokens;      /**< in: 0 or 1 logits per row besides its drafts. */
  const DLTensor* query_start_loc;     /**< in: [B + 1]. */
  const DLTensor* num_reqs;            /**< in, may be NULL: [1] live rows; NULL = B. */
  const DLTensor* num_draft_tokens;    /**< in, may be NULL: [B] drafts per row; NULL = 0. */
  /** in: [B], required by expanded_idx_mapping and input_ids; otherwise may be NULL. */
  const DLTensor* idx_mapping;
  /* The token combination: all four with input_ids, else NULL. */
  const DLTensor* seq_lens;            /**< in: [B]. */
  const DLTensor* prefill_len;         /**< in: [R] prompt length per persistent row. */
  const DLTensor* last_sampled_tokens; /**< in: [R]. */
  const DLTensor* draft_tokens;        /**< in: [R, S], S at least every row's drafts. */
  DLTensor* logits_indices;            /**< out: [L_cap], at least the total logits. */
  DLTensor* cu_num_logits;             /**< out, may be NULL: [B + 1]. */
  DLTensor* expanded_idx_mapping;      /**< out, may be NULL: [L_cap]. */
  DLTensor* expanded_local_pos;        /**< out, may be NULL: [L_cap]. */
  /** out, may be NULL: [T] token ids: each decode row's sampled and draft tokens go in. */
  DLTensor* input_ids;
  cattn_stream_t stream;               /**< in: for CUDA tensors. */
} cattn_combine_sampled_and_draft_tokens_args_t;
/** struct_size of cattn_combine_sampled_and_draft_tokens_args_t. Since: 1.2 */
#define CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_SIZE \
  ((size_t)sizeof(cattn_combine_sampled_and_draft_tokens_args_t))
/** Initialiser: one new sampled token (vLLM's default), every tensor NULL. Since: 1.2 */
#define CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT \
  { CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_SIZE, 1, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** The logits of a step (MRV2's combine_sampled_and_draft_tokens and expand_idx_mapping): live
 *  row b owns `n_b = num_new_sampled_tokens + drafts[b]` logits, the last n_b tokens of its
 *  query: `logits_indices[cu[b] + j] = qsl[b + 1] - n_b + j`, expanded_idx_mapping
 *  `idx_mapping[b]`, expanded_local_pos j; 0 past the total. With input_ids, a row past its
 *  prompt (`seq_len > prefill_len`) gets its drafts in its last n_b - 1 tokens and, when its
 *  first logit is past the prompt too, its last sampled token before them (vLLM's prompt-tail
 *  guard); other entries are left as they are. A row whose n_b passes its query gets vLLM's
 *  indices, before its first token (-1 for row 0); input_ids entries outside it are skipped.
 *  Reads: args, inputs. Writes: the outputs. Allocates: nothing.
 *  Returns: as cattn_prepare_pos_seq_lens. Stream: as cattn_prepare_pos_seq_lens.
 *  Since: 1.2. Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_combine_sampled_and_draft_tokens(
    const cattn_combine_sampled_and_draft_tokens_args_t* args);

/** cattn_step_batch_check's report, its status entries (an int32/int64 [3] tensor): the first
 *  defect's field (0 when the batch keeps the contract), its index (the query_start_loc entry,
 *  the row for seq_lens and block tables, the token for slot mappings) and its group. Fields
 *  are reported in this order, each at its lowest index. */
#define CATTN_STEP_CHECK_OK 0
/** num_reqs is outside [0, B]. */
#define CATTN_STEP_CHECK_NUM_REQS 1
/** query_start_loc: entry 0 is not 0, a live entry decreases, or a padded one differs. */
#define CATTN_STEP_CHECK_QUERY_START_LOC 2
/** seq_lens: a live row below its query length, or a padded row not 0. */
#define CATTN_STEP_CHECK_SEQ_LENS 3
/** A padded block-table row with a nonzero entry. */
#define CATTN_STEP_CHECK_BLOCK_TABLE 4
/** A slot mapping not -1 from the live total on, below -1 before it, or shorter than the
 *  live total (index: its length). */
#define CATTN_STEP_CHECK_SLOT_MAPPING 5

/** Arguments of cattn_step_batch_check. B = query_start_loc's length - 1. */
typedef struct cattn_step_batch_check_args {
  size_t struct_size;                /**< CATTN_STEP_BATCH_CHECK_ARGS_SIZE. */
  const DLTensor* query_start_loc;   /**< in: [B + 1]. */
  const DLTensor* num_reqs;          /**< in, may be NULL: [1] live rows; NULL = B. */
  const DLTensor* seq_lens;          /**< in, may be NULL: [B]. */
  /** in, may be NULL each: [B, W_g] the batch's tables. */
  const DLTensor* block_tables[CATTN_MAX_KV_GROUPS];
  /** in, may be NULL each: [T] the groups' slot mappings. */
  const DLTensor* slot_mappings[CATTN_MAX_KV_GROUPS];
  DLTensor* status;                  /**< out: [3] field, index, group. */
  cattn_stream_t stream;             /**< in: for CUDA tensors. */
} cattn_step_batch_check_args_t;
/** struct_size of cattn_step_batch_check_args_t. Since: 1.2 */
#define CATTN_STEP_BATCH_CHECK_ARGS_SIZE ((size_t)sizeof(cattn_step_batch_check_args_t))
/** Initialiser: every tensor NULL. Since: 1.2 */
#define CATTN_STEP_BATCH_CHECK_ARGS_INIT \
  { CATTN_STEP_BATCH_CHECK_ARGS_SIZE, NULL, NULL, NULL, {NULL}, {NULL}, NULL, NULL }

/** Verifies a batch against the padding contract and writes the first defect to status, on
 *  the device without a host sync (read status when the stream is done), on the host directly.
 *  A batch that keeps the contract gets {0, 0, 0}. The call's return reports its arguments,
 *  never the batch's values. Reads: args, inputs. Writes: status. Allocates: nothing.
 *  Returns: as cattn_prepare_pos_seq_lens. Stream: as cattn_prepare_pos_seq_lens.
 *  Since: 1.2. Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_step_batch_check(const cattn_step_batch_check_args_t* args);

/** Arguments of cattn_step_inputs_size: one batch's counts, as the step-input calls read them. */
typedef struct cattn_step_inputs_size_args {
  size_t struct_size;                   /**< CATTN_STEP_INPUTS_SIZE_ARGS_SIZE. */
  int64_t num_new_sampled_tokens;       /**< in: 0 or 1, as the combine call's. */
  /** in: host [B] (cattn_prepare_pos_seq_lens'), or NULL with query_start_loc. */
  const DLTensor* num_scheduled_tokens;
  /** in: host [B + 1] starting at 0 (the combine call's), or NULL with num_scheduled_tokens. */
  const DLTensor* query_start_loc;
  const DLTensor* num_reqs;             /**< in, may be NULL: host [1] live rows; NULL = B. */
  const DLTensor* num_draft_tokens;     /**< in, may be NULL: host [B]; NULL = no draft. */
  int64_t num_tokens;                   /**< out: the live rows' tokens. */
  int64_t num_logits;                   /**< out: their logits. */
} cattn_step_inputs_size_args_t;
/** struct_size of cattn_step_inputs_size_args_t. Since: 1.2 */
#define CATTN_STEP_INPUTS_SIZE_ARGS_SIZE ((size_t)sizeof(cattn_step_inputs_size_args_t))
/** Initialiser: one new sampled token a row (vLLM's), every tensor NULL. Since: 1.2 */
#define CATTN_STEP_INPUTS_SIZE_ARGS_INIT \
  { CATTN_STEP_INPUTS_SIZE_ARGS_SIZE, 1, NULL, NULL, NULL, NULL, 0, 0 }

/** The entries a step's per-token and per-logit outputs need: num_tokens, the live rows'
 *  scheduled tokens (positions, slot mappings, token_to_req_indices); num_logits, their
 *  `num_new_sampled_tokens + num_draft_tokens[b]` (logits_indices and the expanded map), as
 *  the calls count them. Host tensors only: size the outputs before a host call, or a host
 *  copy of a device batch. Reads: args, the tensors. Writes: num_tokens and num_logits, on
 *  success only. Allocates: nothing. Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or
 *  malformed argument, both or neither of num_scheduled_tokens and query_start_loc, a device
 *  tensor, a value the calls refuse: a negative count, num_reqs outside [0, B], a decreasing
 *  query_start_loc, a total past int64). Stream: none. Since: 1.2.
 *  Details: docs/api/step_inputs.md */
CATTN_API cattn_status_t cattn_step_inputs_size(cattn_step_inputs_size_args_t* args);

/** @} */

/* === Speculative decoding (1.2): EAGLE's per-step metadata ===
 * vLLM's vllm/v1/spec_decode/utils.py, one call per helper; CUDA tensors: one kernel on
 * `stream`, no host sync, capturable. Flag tensors (masks) hold one byte per entry (bool, uint8
 * or int8; nonzero = set). Values: the host path refuses a value that would make vLLM read
 * outside an input or write outside an output (CATTN_INVALID_ARGUMENT naming the tensor and
 * the index); the device path never reads or writes out of bounds whatever the values, and
 * writes what the call's entry in docs/api/spec_decode.md says instead. Slots are int64 and
 * exact where vLLM computes `block * block_size` in 32 bits and wraps past 2^31; a block id
 * below 0, or one whose slot passes int64, is refused on the host and gives slot -1 on the
 * device. */
/** @defgroup group_spec_decode Speculative decoding (1.2): EAGLE's per-step metadata
 *  EAGLE's per-step metadata: eagle_step_update_slot_mapping_and_metadata,
 *  eagle_prepare_inputs_padded, eagle_prepare_next_token_padded, compute_new_slot_mapping,
 *  copy_and_expand_eagle_inputs, update_num_computed_tokens_for_batch_change.
 *  Pages: docs/api/spec_decode.md.
 *  @{ */

/** Arguments of cattn_eagle_step_update_slot_mapping_and_metadata. B = positions' length. */
typedef struct cattn_eagle_step_update_slot_mapping_and_metadata_args {
  size_t struct_size;            /**< CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_SIZE */
  int64_t block_size;            /**< in: at least 1. */
  int64_t max_model_len;         /**< in: at least 1. */
  /** in: slot_mapping entries written, the batch plus CUDA-graph padding: 0 = B, else >= B. */
  int64_t input_batch_size;
  const DLTensor* positions;     /**< in: [B] the step's positions (M-RoPE: row 0). */
  const DLTensor* block_table;   /**< in: [B, W], W >= 1 when B > 0. */
  DLTensor* seq_lens;            /**< in and out: [B], updated in place. */
  DLTensor* out_clamped_positions; /**< out: [>= B]; may be positions' very view. */
  DLTensor* out_slot_mapping;    /**< out: [>= input_batch_size] int64. */
  cattn_stream_t stream;         /**< in: for CUDA tensors. */
} cattn_eagle_step_update_slot_mapping_and_metadata_args_t;
/** struct_size of cattn_eagle_step_update_slot_mapping_and_metadata_args_t. Since: 1.2 */
#define CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_SIZE \
  ((size_t)sizeof(cattn_eagle_step_update_slot_mapping_and_metadata_args_t))
/** Initialiser: sizes 0 (set them), input_batch_size 0 (= B), every tensor NULL. Since: 1.2 */
#define CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT \
  { CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_SIZE, 0, 0, 0, NULL, NULL, NULL, \
    NULL, NULL, NULL }

/** One EAGLE drafting step: for row i, p = positions[i] + 1; when p < max_model_len the
 *  clamped position is p, the slot `block_table[i, min(p / block_size, W - 1)] * block_size +
 *  p % block_size` and `seq_lens[i] = min(seq_lens[i] + 1, max_model_len)`; otherwise 0, -1
 *  and min(1, max_model_len). Slots B to input_batch_size - 1 get -1; later entries are left.
 *  Host: refuses a position below -1. Device: such a row is as one past max_model_len.
 *  Reads: args, inputs, seq_lens. Writes: seq_lens, the outputs. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (a NULL or malformed argument or tensor, mixed
 *  devices, an overlap; host: a value out of range); CATTN_INSUFFICIENT_SIZE (an output
 *  shorter than its shape); CATTN_NOT_SUPPORTED (CUDA tensors in a CPU-only build);
 *  CATTN_CUDA_ERROR. Stream: CUDA tensors: one kernel on `stream`, capturable. Since: 1.2.
 *  Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_eagle_step_update_slot_mapping_and_metadata(
    const cattn_eagle_step_update_slot_mapping_and_metadata_args_t* args);

/** Arguments of cattn_eagle_prepare_inputs_padded. B = cu_num_draft_tokens' length. */
typedef struct cattn_eagle_prepare_inputs_padded_args {
  size_t struct_size;                         /**< CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_SIZE */
  const DLTensor* cu_num_draft_tokens;        /**< in: [B] INCLUSIVE running sum of drafts. */
  const DLTensor* valid_sampled_tokens_count; /**< in: [B] accepted drafts + 1 (0: discarded). */
  const DLTensor* query_start_loc;            /**< in: [>= B + 1] the verified batch's. */
  DLTensor* token_indices_to_sample;          /**< out: [>= B]. */
  DLTensor* num_rejected_tokens;              /**< out: [>= B]. */
  cattn_stream_t stream;                      /**< in: for CUDA tensors. */
} cattn_eagle_prepare_inputs_padded_args_t;
/** struct_size of cattn_eagle_prepare_inputs_padded_args_t. Since: 1.2 */
#define CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_SIZE \
  ((size_t)sizeof(cattn_eagle_prepare_inputs_padded_args_t))
/** Initialiser: every tensor NULL, the legacy default stream. Since: 1.2 */
#define CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT \
  { CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, NULL }

/** Per request of a verified batch: d = its drafts (from the inclusive sum), rejected =
 *  `d > 0 ? d + 1 - valid : 0`, the token to sample `query_start_loc[i + 1] - 1 - rejected`.
 *  Entries from B on are left as they are. Host: refuses, for a request with drafts, a valid
 *  count outside [0, d + 1] (a negative rejected count); the device computes vLLM's values.
 *  Reads: args, inputs. Writes: the outputs. Allocates: nothing.
 *  Returns: as cattn_eagle_step_update_slot_mapping_and_metadata (host: a result that does not
 *  fit its output's dtype). Stream: as that call. Since: 1.2.
 *  Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_eagle_prepare_inputs_padded(
    const cattn_eagle_prepare_inputs_padded_args_t* args);

/** Arguments of cattn_eagle_prepare_next_token_padded. B = sampled_token_ids' rows. */
typedef struct cattn_eagle_prepare_next_token_padded_args {
  size_t struct_size;                   /**< CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_SIZE */
  int64_t vocab_size;                   /**< in: >= 1; a token at or past it is not valid. */
  const DLTensor* sampled_token_ids;    /**< in: [B, S] the rejection sampler's, -1 rejected. */
  const DLTensor* discard_request_mask; /**< in, may be NULL: [B] flags; NULL = none. */
  const DLTensor* backup_next_token_ids; /**< in: [B]. */
  DLTensor* next_token_ids;             /**< out: [>= B]. */
  DLTensor* valid_sampled_tokens_count; /**< out: [>= B]. */
  cattn_stream_t stream;                /**< in: for CUDA tensors. */
} cattn_eagle_prepare_next_token_padded_args_t;
/** struct_size of cattn_eagle_prepare_next_token_padded_args_t. Since: 1.2 */
#define CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_SIZE \
  ((size_t)sizeof(cattn_eagle_prepare_next_token_padded_args_t))
/** Initialiser: vocab_size 0 (set it), every tensor NULL. Since: 1.2 */
#define CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT \
  { CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_SIZE, 0, NULL, NULL, NULL, NULL, NULL, NULL }

/** Per request: a discarded one gets its backup token and 0 valid; otherwise valid counts the
 *  sampled tokens other than -1 and below vocab_size (vLLM counts other negatives as valid),
 *  and the next token is the valid one at the highest column, or the backup when none is.
 *  Entries from B on are left as they are. Reads: args, inputs. Writes: the outputs.
 *  Allocates: nothing. Returns: as cattn_eagle_prepare_inputs_padded. Stream: as that call.
 *  Since: 1.2. Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_eagle_prepare_next_token_padded(
    const cattn_eagle_prepare_next_token_padded_args_t* args);

/** Arguments of cattn_compute_new_slot_mapping. B = block_table's rows. */
typedef struct cattn_compute_new_slot_mapping_args {
  size_t struct_size;                    /**< CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_SIZE. */
  int64_t block_size;                    /**< in: at least 1. */
  int64_t num_new_tokens;                /**< in: N >= 0 tokens added to every request. */
  int64_t max_model_len;                 /**< in: at least 1. */
  const DLTensor* query_start_loc;       /**< in: [B + 1] the batch before the extension. */
  const DLTensor* block_table;           /**< in: [B, W]. */
  /** in: [n], n = `query_start_loc[B] - query_start_loc[0] + B * N`, request by request. */
  const DLTensor* new_positions;
  const DLTensor* is_rejected_token_mask; /**< in, may be NULL: [n] flags; NULL = none. */
  DLTensor* new_slot_mapping;            /**< out: [>= n] int64. */
  cattn_stream_t stream;                 /**< in: for CUDA tensors. */
} cattn_compute_new_slot_mapping_args_t;
/** struct_size of cattn_compute_new_slot_mapping_args_t. Since: 1.2 */
#define CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_SIZE \
  ((size_t)sizeof(cattn_compute_new_slot_mapping_args_t))
/** Initialiser: sizes 0 (set them), every tensor NULL. Since: 1.2 */
#define CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT \
  { CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_SIZE, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL }

/** The slots of a batch whose requests each grew by N tokens: token k of request r (requests
 *  own q_r + N consecutive tokens) at position p gets -1 when rejected or `p >= max_model_len`,
 *  else `table[f / W][f % W] * block_size + p % block_size` with `f = r * W + p / block_size`
 *  (vLLM indexes the flattened table, so a narrow table reads the next row's blocks).
 *  Host: refuses a decreasing query_start_loc, n other than the tokens' count, and, for a
 *  token neither rejected nor past max_model_len, a negative position or f past the table.
 *  Device: -1 for those tokens. Reads: args, inputs. Writes: new_slot_mapping[0, n).
 *  Allocates: nothing. Returns: as cattn_eagle_step_update_slot_mapping_and_metadata.
 *  Stream: as that call. Since: 1.2. Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_compute_new_slot_mapping(
    const cattn_compute_new_slot_mapping_args_t* args);

/** Arguments of cattn_copy_and_expand_eagle_inputs. B = next_token_ids' length, P =
 *  num_padding_slots_per_request, s = shift_input_ids, n_out = `query_start_loc[B] + B * (P -
 *  s)` output tokens. */
typedef struct cattn_copy_and_expand_eagle_inputs_args {
  size_t struct_size;                     /**< CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_SIZE. */
  int64_t padding_token_id;               /**< in: the rejected tail's token. */
  int64_t parallel_drafting_token_id;     /**< in: the token of slots 2 to P. */
  int64_t num_padding_slots_per_request;  /**< in: P in [1, 65536]: the bonus + parallel drafts. */
  /** in: a request's output tokens, and its hidden_state_mapping entries, from this index on
   *  are not written (vLLM's num_blocks x BLOCK_SIZE_TOKENS); 0 = no limit. */
  int64_t max_tokens_per_request;
  int32_t shift_input_ids;                /**< in: 0 or 1: drop each request's first token. */
  int32_t reserved0;                      /**< Set to 0. */
  const DLTensor* target_token_ids;       /**< in: [T] the verified batch's tokens. */
  const DLTensor* target_positions;       /**< in: [T'] their positions. */
  const DLTensor* next_token_ids;         /**< in: [B] each request's bonus token. */
  const DLTensor* query_start_loc;        /**< in: [B + 1]. */
  const DLTensor* query_end_loc;          /**< in: [B] each request's last valid token. */
  DLTensor* out_input_ids;                /**< out: [>= n_out]. */
  DLTensor* out_positions;                /**< out: [>= n_out]. */
  DLTensor* out_is_rejected_token_mask;   /**< out, may be NULL: [>= n_out] flags. */
  DLTensor* out_is_masked_token_mask;     /**< out, may be NULL: [>= n_out] flags. */
  DLTensor* out_new_token_indices;        /**< out, may be NULL: [>= B * P]. */
  /** out, may be NULL: [>= query_start_loc[B]]; written with shift_input_ids only. */
  DLTensor* out_hidden_state_mapping;
  cattn_stream_t stream;                  /**< in: for CUDA tensors. */
} cattn_copy_and_expand_eagle_inputs_args_t;
/** struct_size of cattn_copy_and_expand_eagle_inputs_args_t. Since: 1.2 */
#define CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_SIZE \
  ((size_t)sizeof(cattn_copy_and_expand_eagle_inputs_args_t))
/** Initialiser: token ids 0, P = 1, no limit, no shift, every tensor NULL. Since: 1.2 */
#define CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT \
  { CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_SIZE, 0, 0, 1, 0, 0, 0, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** The drafter's inputs from a verified batch (parallel drafting): request i owns output
 *  tokens `[query_start_loc[i] + i * (P - s), +q_i + P - s)`: its v valid tokens (from
 *  `query_start_loc[i] + s`), the bonus `next_token_ids[i]`, P - 1 parallel-drafting tokens
 *  (masked), then its rejected tail (padding token, position 0, rejected); positions count up
 *  from the request's first target position. new_token_indices[i * P + k] is the output index
 *  of new token k; with s, hidden_state_mapping maps each input token to its output index.
 *  Indices are absolute, as vLLM's: entries before query_start_loc[0] are not written.
 *  Host: refuses query_end_loc outside its request, a request without tokens, a negative
 *  query_start_loc or one past the targets. Device: each read is clamped into its input.
 *  Reads: args, inputs. Writes: the outputs. Allocates: nothing.
 *  Returns: as cattn_eagle_step_update_slot_mapping_and_metadata. Stream: as that call.
 *  Since: 1.2. Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_copy_and_expand_eagle_inputs(
    const cattn_copy_and_expand_eagle_inputs_args_t* args);

/** Arguments of cattn_update_num_computed_tokens_for_batch_change. n = prev_positions'
 *  length, n_prev = the previous batch's rows. */
typedef struct cattn_update_num_computed_tokens_for_batch_change_args {
  size_t struct_size; /**< CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_SIZE. */
  DLTensor* num_computed_tokens;             /**< in and out: [M >= n]; [0, n) rewritten. */
  DLTensor* num_accepted_tokens;             /**< in and out: [n]. */
  const DLTensor* prev_positions;            /**< in: [n] previous row, negative = new. */
  const DLTensor* valid_sampled_token_count; /**< in: [n_prev]. */
  const DLTensor* prev_num_draft_tokens;     /**< in: [n_prev]. */
  const DLTensor* cpu_num_computed_tokens;   /**< in: [n] the scheduler's counts. */
  cattn_stream_t stream;                     /**< in: for CUDA tensors. */
} cattn_update_num_computed_tokens_for_batch_change_args_t;
/** struct_size of cattn_update_num_computed_tokens_for_batch_change_args_t. Since: 1.2 */
#define CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_SIZE \
  ((size_t)sizeof(cattn_update_num_computed_tokens_for_batch_change_args_t))
/** Initialiser: every tensor NULL, the legacy default stream. Since: 1.2 */
#define CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT \
  { CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_SIZE, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL }

/** Carries the async-scheduling counts across a batch change: row k with g = prev_positions[k]
 *  >= 0 and `prev_num_draft_tokens[g] > 0` gets `num_computed_tokens[g] + valid[g]` (the value
 *  before this call: a reordering reads the previous layout) and `num_accepted_tokens[k] =
 *  valid[g]`; any other row gets cpu_num_computed_tokens[k] and keeps its accepted count.
 *  Host: refuses g past M or n_prev, and an int32 num_accepted_tokens with a new count past
 *  2^31 (it stages the new counts). Device: such a row is new; at most 8192 rows
 *  (CATTN_NOT_SUPPORTED past them). Reads: args, inputs. Writes: both counts.
 *  Allocates: nothing.
 *  Returns: as cattn_eagle_step_update_slot_mapping_and_metadata.
 *  Stream: as that call. Since: 1.2. Details: docs/api/spec_decode.md */
CATTN_API cattn_status_t cattn_update_num_computed_tokens_for_batch_change(
    const cattn_update_num_computed_tokens_for_batch_change_args_t* args);

/** @} */

/* === Step plan: a whole step's metadata in one launch, replayable in a CUDA graph ===
 * Capacities and parameters live on the host; every per-step count is derived on the device.
 * Capture cattn_step_plan_run once, write each step into the same buffers, replay. Guide:
 * docs/api/step_plan.md */
/** @defgroup group_step_plan Step plan: a whole step's metadata in one launch, replayable in a CUDA graph
 *  Several products of one step in one launch, replayable in a CUDA graph: the step plan
 *  (`cattn_step_plan_*`).
 *  Pages: docs/api/step_plan.md.
 *  @{ */

/** Product bit (cattn_step_plan_desc_t.products): cattn_get_dcp_local_seq_lens. */
#define CATTN_STEP_DCP_LOCAL_SEQ_LENS (1u << 0)
/** Product bit: cattn_get_pcp_query_restore_idx. */
#define CATTN_STEP_PCP_QUERY_RESTORE_IDX (1u << 1)
/** Product bit: cattn_mamba_get_block_table_tensor. */
#define CATTN_STEP_MAMBA_BLOCK_TABLE (1u << 2)
/** Product bit: cattn_compute_causal_conv1d_metadata_capturable. */
#define CATTN_STEP_CAUSAL_CONV1D_METADATA (1u << 3)
/** Product bit: cattn_make_local_attention_virtual_batches_capturable. */
#define CATTN_STEP_LOCAL_ATTENTION (1u << 4)
/** Product bit: cattn_make_kv_sharing_fast_prefill_common_attn_metadata. */
#define CATTN_STEP_FAST_PREFILL (1u << 5)
/** Product bit: cattn_extend_all_queries_by_n. */
#define CATTN_STEP_EXTEND_QUERIES (1u << 6)
/** Product bit: query_start_loc, seq_lens, positions and num_computed_tokens from the
 *  scheduled counts (cattn_prepare_pos_seq_lens). With it, the 1.1 products read the computed
 *  query_start_loc and seq_lens. Since: 1.2 */
#define CATTN_STEP_INPUTS (1u << 7)
/** Product bit: every group's batch block table (cattn_gather_block_tables). With it, the
 *  1.1 products read group inputs.table_group's gathered table. Since: 1.2 */
#define CATTN_STEP_BLOCK_TABLES (1u << 8)
/** Product bit: every TOKEN_TO_KV_SLOT group's slot mapping (cattn_compute_slot_mappings).
 *  Since: 1.2 */
#define CATTN_STEP_SLOT_MAPPINGS (1u << 9)
/** Product bit: logits indices (cattn_combine_sampled_and_draft_tokens, no input_ids).
 *  Since: 1.2 */
#define CATTN_STEP_LOGITS_INDICES (1u << 10)
/** Product bit: token_to_req_indices of the live tokens, 0 past them. Since: 1.2 */
#define CATTN_STEP_TOKEN_TO_REQ (1u << 11)
/** Product bit: the decode/prefill split of the live rows, to the counts (vLLM's
 *  split_decodes_and_prefills with treat_short_extends_as_decodes). Since: 1.2 */
#define CATTN_STEP_SPLIT (1u << 12)
/** Product bit: the drafter's next tokens and valid counts from the rejection sampler's output
 *  (cattn_eagle_prepare_next_token_padded). The drafter products read the verified batch and
 *  the sampler's output, a later point of an engine step than the step-input products: a plan
 *  selects either. Since: 1.2 */
#define CATTN_STEP_DRAFT_NEXT_TOKEN (1u << 13)
/** Product bit: the tokens to sample and rejected counts (cattn_eagle_prepare_inputs_padded),
 *  from CATTN_STEP_DRAFT_NEXT_TOKEN's valid counts, which it needs. Since: 1.2 */
#define CATTN_STEP_DRAFT_PREPARE_INPUTS (1u << 14)
/** Product bit: the drafter's input tokens (cattn_copy_and_expand_eagle_inputs), each
 *  request's last valid token from CATTN_STEP_DRAFT_PREPARE_INPUTS's rejected count and its
 *  bonus from CATTN_STEP_DRAFT_NEXT_TOKEN, which it needs. Since: 1.2 */
#define CATTN_STEP_DRAFT_EXPAND (1u << 15)
/** Product bit: the slots of the drafter's input tokens (cattn_compute_new_slot_mapping, N =
 *  P - shift), from CATTN_STEP_DRAFT_EXPAND's positions and rejected tokens, which it needs.
 *  Since: 1.2 */
#define CATTN_STEP_DRAFT_SLOT_MAPPING (1u << 16)
/** Product bit: one drafting step's positions, slots and seq_lens
 *  (cattn_eagle_step_update_slot_mapping_and_metadata), run between draft steps: the plan's
 *  only product. Since: 1.2 */
#define CATTN_STEP_DRAFT_STEP (1u << 17)
/** Product bit: the async-scheduling counts across a batch change
 *  (cattn_update_num_computed_tokens_for_batch_change): the plan's only product. Since: 1.2 */
#define CATTN_STEP_BATCH_CHANGE (1u << 18)
/** The 1.1 product bits, 0x7f. The value is kept as 1.1 defined it, so that code selecting
 *  "every product" keeps the products it was written for; the 1.2 products are
 *  CATTN_STEP_INPUT_PRODUCTS. */
#define CATTN_STEP_ALL_PRODUCTS (0x7fu)
/** The step-input product bits (1.2): CATTN_STEP_INPUTS to CATTN_STEP_SPLIT. Since: 1.2 */
#define CATTN_STEP_INPUT_PRODUCTS (0x1f80u)
/** The drafter product bits (1.2): CATTN_STEP_DRAFT_NEXT_TOKEN to CATTN_STEP_BATCH_CHANGE.
 *  Since: 1.2 */
#define CATTN_STEP_DRAFT_PRODUCTS (0x7e000u)

/** Counts entry: `query_start_loc[B] - query_start_loc[0]`. Counts entries are per-step
 *  values derived on the device; a product the plan does not compute leaves its entries 0. */
#define CATTN_STEP_COUNT_TOKENS 0
/** Counts entry: restore-index entries in use. */
#define CATTN_STEP_COUNT_RESTORE_SIZE 1
/** Counts entry: causal-conv1d programs (tot). */
#define CATTN_STEP_COUNT_CONV1D_PROGRAMS 2
/** Counts entry: local-attention virtual batches (V). */
#define CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES 3
/** Counts entry: the largest query length over the virtual batches. */
#define CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN 4
/** Counts entry: the largest sequence length over the virtual batches. */
#define CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN 5
/** Counts entry: fast prefill's decode batch, its max_query_len. */
#define CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN 6
/** Counts entry: fast prefill's decode batch, its token count. */
#define CATTN_STEP_COUNT_DECODE_TOKENS 7
/** Counts entry: the live rows, num_reqs (step inputs). Since: 1.2 */
#define CATTN_STEP_COUNT_NUM_REQS 8
/** Counts entry: the logits (CATTN_STEP_LOGITS_INDICES). Since: 1.2 */
#define CATTN_STEP_COUNT_NUM_LOGITS 9
/** Counts entry: the largest live query length (any step-input product). Since: 1.2 */
#define CATTN_STEP_COUNT_MAX_QUERY_LEN 10
/** Counts entry: the largest live seq_len (CATTN_STEP_INPUTS). Since: 1.2 */
#define CATTN_STEP_COUNT_MAX_SEQ_LEN 11
/** Counts entry: CATTN_STEP_SPLIT's num_decodes (-1 where vLLM raises). Since: 1.2 */
#define CATTN_STEP_COUNT_SPLIT_DECODES 12
/** Counts entry: CATTN_STEP_SPLIT's num_prefills. Since: 1.2 */
#define CATTN_STEP_COUNT_SPLIT_PREFILLS 13
/** Counts entry: CATTN_STEP_SPLIT's num_decode_tokens. Since: 1.2 */
#define CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS 14
/** Counts entry: CATTN_STEP_SPLIT's num_prefill_tokens. Since: 1.2 */
#define CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS 15
/** Length of the counts vector a plan with a 1.2 product writes. */
#define CATTN_STEP_NUM_COUNTS 16
/** Length of the counts vector of a plan with 1.1 products only (entries 0 to 7). Since: 1.2 */
#define CATTN_STEP_NUM_COUNTS_1_1 8

/** Parameters of CATTN_STEP_DCP_LOCAL_SEQ_LENS, as cattn_get_dcp_local_seq_lens takes them. */
typedef struct cattn_step_dcp_params {
  int64_t dcp_size;                     /**< At least 1. */
  int64_t dcp_rank;                     /**< In `[0, dcp_size)` or CATTN_DCP_ALL_RANKS. */
  int64_t dcp_kv_cache_interleave_size; /**< At least 1; `dcp_size * this` fits INT32_MAX. */
} cattn_step_dcp_params_t;
/** Parameters of CATTN_STEP_MAMBA_BLOCK_TABLE. */
typedef struct cattn_step_mamba_params {
  int64_t block_size;             /**< At least 1 (ALIGN mode). */
  int64_t num_speculative_blocks; /**< At least 0 (ALIGN mode). */
  int32_t mamba_cache_mode;       /**< A cattn_mamba_cache_mode_t. */
  int32_t reserved0;              /**< Set to 0. */
} cattn_step_mamba_params_t;
/** Parameters of CATTN_STEP_CAUSAL_CONV1D_METADATA. */
typedef struct cattn_step_conv1d_params {
  int64_t block_m; /**< Tokens per program, at least 1 (vLLM: 8). */
} cattn_step_conv1d_params_t;
/** Parameters of CATTN_STEP_LOCAL_ATTENTION. */
typedef struct cattn_step_local_attention_params {
  int64_t attn_chunk_size; /**< C, at least 1. */
  int64_t block_size;      /**< At least 1; divides attn_chunk_size. */
} cattn_step_local_attention_params_t;
/** Parameters of CATTN_STEP_EXTEND_QUERIES. */
typedef struct cattn_step_extend_params {
  int64_t n; /**< Tokens added to every request, at least 0. */
} cattn_step_extend_params_t;

/** One KV-cache group's geometry (cattn_step_plan_desc_t.kv_groups). Since: 1.2 */
typedef struct cattn_kv_group_params {
  int64_t block_size;        /**< The group's block size in tokens, at least 1. */
  int64_t kernel_block_size; /**< Divides block_size: the unit of the group's tables. */
  int64_t max_num_blocks;    /**< W: columns of the group's tables, at least 1. */
  int32_t slot_mode;         /**< A cattn_slot_mode_t. */
  int32_t reserved0;         /**< Set to 0. */
} cattn_kv_group_params_t;

/** Parameters of the step-input products (CATTN_STEP_INPUTS to CATTN_STEP_SPLIT). Since: 1.2 */
typedef struct cattn_step_inputs_params {
  int32_t num_kv_groups;         /**< Groups in kv_groups: 1 to CATTN_MAX_KV_GROUPS. */
  int32_t slot_mapping_contract; /**< A cattn_slot_mapping_contract_t. */
  int64_t dcp_size;              /**< Slot mappings' DCP world, at least 1. */
  int64_t dcp_rank;              /**< This rank, in [0, dcp_size). */
  /** At least 1; divides each group's block (kernel_block_size with MRV2, block_size V1). */
  int64_t dcp_kv_cache_interleave_size;
  int64_t num_new_sampled_tokens; /**< Logits per row besides its drafts: 0 or 1. */
  int64_t decode_threshold;      /**< CATTN_STEP_SPLIT: 0 to INT32_MAX. */
  int32_t require_uniform;       /**< CATTN_STEP_SPLIT: 0 or 1. */
  int32_t table_group;           /**< The group whose gathered table the 1.1 products read. */
} cattn_step_inputs_params_t;

/** Parameters of the drafter products (CATTN_STEP_DRAFT_NEXT_TOKEN to CATTN_STEP_DRAFT_STEP),
 *  as the speculative-decoding calls take them. Since: 1.2 */
typedef struct cattn_step_draft_params {
  int64_t vocab_size;                    /**< NEXT_TOKEN: >= 1. */
  int64_t num_padding_slots_per_request; /**< EXPAND: P in [1, 65536]. */
  int64_t padding_token_id;              /**< EXPAND: the rejected tail's token. */
  int64_t parallel_drafting_token_id;    /**< EXPAND: the token of slots 2 to P. */
  int64_t max_tokens_per_request;        /**< EXPAND: 0 = no limit (as the call's). */
  int64_t block_size;                    /**< SLOT_MAPPING, DRAFT_STEP: >= 1. */
  int64_t max_model_len;                 /**< SLOT_MAPPING, DRAFT_STEP: >= 1. */
  int32_t shift_input_ids;               /**< EXPAND: 0 or 1. */
  int32_t reserved0;                     /**< Set to 0. */
} cattn_step_draft_params_t;

/** What cattn_step_plan_create takes: the products, capacities and parameters. */
typedef struct cattn_step_plan_desc {
  size_t struct_size; /**< CATTN_STEP_PLAN_DESC_SIZE. */
  uint32_t products;               /**< CATTN_STEP_* bits, at least one. */
  uint32_t reserved0;              /**< Set to 0. */
  int64_t max_num_reqs;            /**< At least 1: rows of per-request tensors (B). */
  int64_t max_num_tokens;          /**< At least 0: tokens a batch holds (T). */
  /** Columns of a batch's block_table: at least 1 with mamba or local attention, else 0 up. */
  int64_t max_num_blocks_per_req;
  int64_t max_num_logits;          /**< At least 0: logits_indices entries (fast prefill). */
  cattn_step_dcp_params_t dcp;                         /**< CATTN_STEP_DCP_LOCAL_SEQ_LENS. */
  cattn_step_mamba_params_t mamba;                     /**< CATTN_STEP_MAMBA_BLOCK_TABLE. */
  cattn_step_conv1d_params_t conv1d;                   /**< CATTN_STEP_CAUSAL_CONV1D_METADATA. */
  cattn_step_local_attention_params_t local_attention; /**< CATTN_STEP_LOCAL_ATTENTION. */
  cattn_step_extend_params_t extend;                   /**< CATTN_STEP_EXTEND_QUERIES. */
  /* 1.2 */
  /** R: persistent request rows (num_computed_tokens, MRV2 tables); at least 1 with a product
   *  that reads them. */
  int64_t max_num_persistent_reqs;
  cattn_step_inputs_params_t inputs;                   /**< The step-input products. */
  cattn_kv_group_params_t kv_groups[CATTN_MAX_KV_GROUPS]; /**< The first num_kv_groups. */
  cattn_step_draft_params_t draft;                     /**< The drafter products. */
} cattn_step_plan_desc_t;
/** struct_size of a 1.1 cattn_step_plan_desc_t. Since: 1.2 */
#define CATTN_STEP_PLAN_DESC_SIZE_1_1 offsetof(cattn_step_plan_desc_t, max_num_persistent_reqs)
/** struct_size of cattn_step_plan_desc_t. Since: 1.1 */
#define CATTN_STEP_PLAN_DESC_SIZE ((size_t)sizeof(cattn_step_plan_desc_t))
/** Initialiser: no product, zero capacities, vLLM's defaults where it has one (DCP 1 rank,
 *  Mamba NONE, block_m 8, n 1, P 1); local attention and the drafter's sizes have none: set
 *  them. Since: 1.1 */
#define CATTN_STEP_PLAN_DESC_INIT \
  { CATTN_STEP_PLAN_DESC_SIZE, 0, 0, 0, 0, 0, 0, {1, CATTN_DCP_ALL_RANKS, 1}, \
    {1, 0, CATTN_MAMBA_CACHE_MODE_NONE, 0}, {8}, {0, 0}, {1}, 0, \
    {0, CATTN_SLOT_MAPPING_MRV2, 1, 0, 1, 1, 1, 0, 0}, {{0, 0, 0, 0, 0}}, \
    {0, 1, 0, 0, 0, 0, 0, 0, 0} }

/** The capacities a plan's outputs must hold (cattn_step_plan_get_shape); 0 for products the
 *  plan does not compute. */
typedef struct cattn_step_plan_shape {
  size_t struct_size; /**< CATTN_STEP_PLAN_SHAPE_SIZE. */
  int64_t restore_capacity;        /**< Restore-index entries: max_num_tokens. */
  int64_t conv1d_capacity;         /**< Programs: `cdiv(max_num_tokens, block_m) + max_num_reqs`. */
  /** Virtual batches: `min(2 * max_num_reqs + cdiv(max_num_tokens, C), max_num_tokens +
   *  max_num_reqs)`. */
  int64_t local_capacity;
  int64_t local_pages;             /**< Columns of the local block table: C / block_size. */
  /** Mamba columns: ALIGN `1 + num_speculative_blocks`; copy modes 0 (the batch's). */
  int64_t mamba_columns;
  /* 1.2 */
  /** The drafter's input tokens (CATTN_STEP_DRAFT_EXPAND): `max_num_tokens + max_num_reqs *
   *  (P - shift_input_ids)`. */
  int64_t draft_token_capacity;
} cattn_step_plan_shape_t;
/** struct_size of a 1.1 cattn_step_plan_shape_t. Since: 1.2 */
#define CATTN_STEP_PLAN_SHAPE_SIZE_1_1 offsetof(cattn_step_plan_shape_t, draft_token_capacity)
/** struct_size of cattn_step_plan_shape_t. Since: 1.1 */
#define CATTN_STEP_PLAN_SHAPE_SIZE ((size_t)sizeof(cattn_step_plan_shape_t))
/** Initialiser: struct_size set, capacities 0. Since: 1.1 */
#define CATTN_STEP_PLAN_SHAPE_INIT { CATTN_STEP_PLAN_SHAPE_SIZE, 0, 0, 0, 0, 0, 0 }

/** One step's batch for cattn_step_plan_run: int32/int64 device tensors of one GPU. B =
 *  query_start_loc's length - 1, at most max_num_reqs, padding rows included. A tensor a
 *  selected product needs is required; the others may be NULL and are not read. */
typedef struct cattn_step_batch {
  size_t struct_size; /**< CATTN_STEP_BATCH_SIZE. */
  /** `[B + 1]`, B at most max_num_reqs (every product but DCP and mamba). */
  const DLTensor* query_start_loc;
  const DLTensor* seq_lens;           /**< `[B]` (DCP, mamba ALIGN, local attention, extend). */
  /** `[B, cols]`, cols from 1 to max_num_blocks_per_req (mamba, local attention). */
  const DLTensor* block_table;
  /** `[R + 1]`, R at most max_num_reqs: the PCP restore index's input; NULL = query_start_loc. */
  const DLTensor* cu_num_tokens;
  const DLTensor* logits_indices;     /**< `[L]`, L at most max_num_logits (fast prefill). */
  /** `[1]`: how many logits_indices to read, clamped to `[0, L]`; NULL = all (fast prefill). */
  const DLTensor* num_logits_indices;
  /* 1.2 */
  const DLTensor* num_reqs;             /**< `[1]`: live rows, clamped to [0, B]; NULL = B. */
  /** `[B]` (CATTN_STEP_INPUTS): B is then its length and query_start_loc, seq_lens and
   *  block_table must be NULL (the plan computes them). */
  const DLTensor* num_scheduled_tokens;
  const DLTensor* idx_mapping;          /**< `[B]` persistent rows (inputs, tables, MRV2). */
  const DLTensor* num_computed_tokens;  /**< `[R]` (CATTN_STEP_INPUTS). */
  const DLTensor* num_draft_tokens;     /**< `[B]`, may be NULL (CATTN_STEP_LOGITS_INDICES). */
  const DLTensor* positions;            /**< `[N]`: slot mappings without CATTN_STEP_INPUTS. */
  /** Per group: `[R, W]` persistent (MRV2), `[B, W]` batch rows (V1 slot mappings). */
  const DLTensor* kv_block_tables[CATTN_MAX_KV_GROUPS];
  /** Per group, may be NULL: `[R]` entries in use (CATTN_STEP_BLOCK_TABLES). */
  const DLTensor* kv_num_blocks[CATTN_MAX_KV_GROUPS];
  /* 1.2, the drafter products. B: the verified batch's query_start_loc's length - 1 (the chain
   * NEXT_TOKEN to SLOT_MAPPING; SLOT_MAPPING reads block_table `[B, W]`), positions' length
   * (DRAFT_STEP, which reads positions, block_table and seq_lens), prev_positions' length n
   * (BATCH_CHANGE). */
  const DLTensor* sampled_token_ids;     /**< `[B, S]`, -1 rejected (DRAFT_NEXT_TOKEN). */
  const DLTensor* discard_request_mask;  /**< `[B]` flags; may be NULL (DRAFT_NEXT_TOKEN). */
  const DLTensor* backup_next_token_ids; /**< `[B]` (DRAFT_NEXT_TOKEN). */
  const DLTensor* cu_num_draft_tokens;   /**< `[B]` inclusive sum (DRAFT_PREPARE_INPUTS). */
  const DLTensor* target_token_ids;      /**< `[T]`, T <= max_num_tokens (DRAFT_EXPAND). */
  const DLTensor* target_positions;      /**< `[T']` (DRAFT_EXPAND). */
  /** `[n]` previous row of each row, negative = new (BATCH_CHANGE; it also reads
   *  num_computed_tokens, `[M >= n]`). */
  const DLTensor* prev_positions;
  const DLTensor* num_accepted_tokens;   /**< `[n]` (BATCH_CHANGE). */
  const DLTensor* valid_sampled_token_count; /**< `[n_prev]` (BATCH_CHANGE). */
  const DLTensor* prev_num_draft_tokens; /**< `[n_prev]` (BATCH_CHANGE). */
  const DLTensor* cpu_num_computed_tokens; /**< `[n]` (BATCH_CHANGE). */
} cattn_step_batch_t;
/** struct_size of a 1.1 cattn_step_batch_t. Since: 1.2 */
#define CATTN_STEP_BATCH_SIZE_1_1 offsetof(cattn_step_batch_t, num_reqs)
/** struct_size of cattn_step_batch_t. Since: 1.1 */
#define CATTN_STEP_BATCH_SIZE ((size_t)sizeof(cattn_step_batch_t))
/** Initialiser: every tensor NULL. Since: 1.1 */
#define CATTN_STEP_BATCH_INIT \
  { CATTN_STEP_BATCH_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, {NULL}, {NULL}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** Where cattn_step_plan_run writes: int32/int64 device tensors on the batch's GPU (except
 *  counts_host). A selected product's outputs are required unless "may be NULL"; an
 *  unselected product's must be NULL. A capacity output may be longer than its capacity
 *  (cattn_step_plan_get_shape); every entry past the step's values gets its sentinel. */
typedef struct cattn_step_outputs {
  size_t struct_size; /**< CATTN_STEP_OUTPUTS_SIZE. */
  DLTensor* dcp_local_seq_lens;    /**< `[B]` one rank, `[B, dcp_size]` all ranks. */
  DLTensor* pcp_query_restore_idx; /**< At least restore_capacity; -1 past the size. */
  DLTensor* mamba_block_table;     /**< ALIGN `[B, 1 + nspec]`; copy modes `[B, cols]`. */
  DLTensor* conv1d_nums;           /**< `[B]`; may be NULL. */
  /** At least conv1d_capacity; may be NULL; CATTN_PAD_SLOT_ID past tot, as the next three. */
  DLTensor* conv1d_mlist;
  DLTensor* conv1d_offsetlist;     /**< As conv1d_mlist. */
  DLTensor* conv1d_batch_ptr;      /**< As conv1d_mlist. */
  DLTensor* conv1d_token_chunk_offset_ptr; /**< As conv1d_mlist. */
  /** `[V_cap + 1]`, V_cap at least local_capacity; past V it repeats the total. */
  DLTensor* local_query_start_loc;
  DLTensor* local_seq_lens;        /**< `[V_cap]`; 0 past V. */
  DLTensor* local_num_computed_tokens; /**< `[V_cap]`; may be NULL; 0 past V. */
  /** `[V_cap, local_pages]` in block_table's dtype; may be NULL; rows past V are 0. */
  DLTensor* local_block_table;
  DLTensor* decode_query_start_loc; /**< `[B + 1]`: fast prefill's decode query_start_loc. */
  DLTensor* extend_query_start_loc; /**< `[B + 1]`. */
  DLTensor* extend_seq_lens;       /**< `[B]`. */
  DLTensor* counts;                /**< `[CATTN_STEP_NUM_COUNTS]`; may be NULL. */
  /** `[CATTN_STEP_NUM_COUNTS]` kDLCUDAHost: counts in mapped pinned memory, valid once the
   *  stream is synchronised; may be NULL. */
  DLTensor* counts_host;
  /** Device memory of cattn_step_plan_workspace_size bytes; may be NULL when that is 0. */
  void* workspace;
  size_t workspace_bytes;          /**< The size of workspace in bytes. */
  /* 1.2 */
  DLTensor* query_start_loc;       /**< `[B + 1]` (CATTN_STEP_INPUTS). */
  DLTensor* seq_lens;              /**< `[B]` (CATTN_STEP_INPUTS). */
  DLTensor* positions;             /**< At least max_num_tokens; may be NULL (INPUTS). */
  DLTensor* num_computed_tokens;   /**< `[B]`; may be NULL (CATTN_STEP_INPUTS). */
  DLTensor* block_tables[CATTN_MAX_KV_GROUPS];  /**< `[B, W]` per group (BLOCK_TABLES). */
  /** int64, at least max_num_tokens per TOKEN_TO_KV_SLOT group; NULL for NONE groups. */
  DLTensor* slot_mappings[CATTN_MAX_KV_GROUPS];
  DLTensor* logits_indices;        /**< At least max_num_logits (LOGITS_INDICES). */
  DLTensor* cu_num_logits;         /**< `[B + 1]`; may be NULL (LOGITS_INDICES). */
  DLTensor* expanded_idx_mapping;  /**< At least max_num_logits; may be NULL. */
  DLTensor* expanded_local_pos;    /**< At least max_num_logits; may be NULL. */
  DLTensor* token_to_req_indices;  /**< At least max_num_tokens (TOKEN_TO_REQ). */
  /* 1.2, the drafter products. "Tokens": at least draft_token_capacity entries; past the
   * step's `query_start_loc[B] + B * (P - shift)` the ids are padding_token_id, positions 0,
   * tokens rejected and not masked, slots -1. */
  DLTensor* next_token_ids;             /**< `[>= B]` (DRAFT_NEXT_TOKEN). */
  DLTensor* valid_sampled_tokens_count; /**< `[>= B]`; may be NULL (DRAFT_NEXT_TOKEN). */
  DLTensor* token_indices_to_sample;    /**< `[>= B]` (DRAFT_PREPARE_INPUTS). */
  DLTensor* num_rejected_tokens;        /**< `[>= B]`; may be NULL (DRAFT_PREPARE_INPUTS). */
  DLTensor* draft_input_ids;            /**< Tokens (DRAFT_EXPAND). */
  /** Tokens (DRAFT_EXPAND); `[>= B]` clamped positions (DRAFT_STEP: may be batch->positions'
   *  very view). */
  DLTensor* draft_positions;
  DLTensor* is_rejected_token_mask;     /**< Tokens, flags; may be NULL (DRAFT_EXPAND). */
  DLTensor* is_masked_token_mask;       /**< Tokens, flags; may be NULL (DRAFT_EXPAND). */
  /** `[>= max_num_reqs * P]`, -1 past B * P; may be NULL (DRAFT_EXPAND). */
  DLTensor* new_token_indices;
  /** At least max_num_tokens, -1 past `query_start_loc[B]`; may be NULL (DRAFT_EXPAND with
   *  shift_input_ids). */
  DLTensor* hidden_state_mapping;
  /** int64: tokens (DRAFT_SLOT_MAPPING); `[>= B]`, -1 past B (DRAFT_STEP). */
  DLTensor* draft_slot_mapping;
  DLTensor* draft_seq_lens;             /**< `[B]` (DRAFT_STEP): may be batch->seq_lens' view. */
  /** `[>= n]` (BATCH_CHANGE, [0, n) written): may be batch->num_computed_tokens' view. */
  DLTensor* carried_num_computed_tokens;
  /** `[n]` (BATCH_CHANGE): may be batch->num_accepted_tokens' very view. */
  DLTensor* carried_num_accepted_tokens;
} cattn_step_outputs_t;
/** struct_size of a 1.1 cattn_step_outputs_t. Since: 1.2 */
#define CATTN_STEP_OUTPUTS_SIZE_1_1 offsetof(cattn_step_outputs_t, query_start_loc)
/** struct_size of cattn_step_outputs_t. Since: 1.1 */
#define CATTN_STEP_OUTPUTS_SIZE ((size_t)sizeof(cattn_step_outputs_t))
/** Initialiser: every output NULL, no workspace. Since: 1.1 */
#define CATTN_STEP_OUTPUTS_INIT \
  { CATTN_STEP_OUTPUTS_SIZE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, {NULL}, {NULL}, NULL, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL }

/** A step plan (opaque): products, parameters, capacities and the launch layout they fix,
 *  immutable after creation, plus a memo of its last fully checked run. Since: 1.1 */
typedef struct cattn_step_plan_s cattn_step_plan_t;

/** Creates a step plan from `desc`, fixing the launch layout from the capacities alone (no
 *  GPU needed). Reads: desc. Writes: `*out`, on success only. Allocates: the plan (one host
 *  object under 4 KiB) and its registry entry. Lifetime: until cattn_step_plan_destroy.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (NULLs, struct_size, no product or an unknown
 *  bit, reserved0, a capacity or a selected product's parameter out of range, derived sizes
 *  overflowing int64); CATTN_OUT_OF_MEMORY.
 *  Stream: synchronous, no CUDA call. Since: 1.1. Details: docs/api/step_plan.md */
CATTN_API cattn_status_t cattn_step_plan_create(const cattn_step_plan_desc_t* desc,
                                                cattn_step_plan_t** out);

/** Destroys a plan; NULL is a no-op, a handle that is not a live plan is left alone (the
 *  message says so). Not while a run on it is being enqueued; enqueued runs do not need it.
 *  Stream: synchronous. Since: 1.1. Details: docs/api/step_plan.md */
CATTN_API void cattn_step_plan_destroy(cattn_step_plan_t* plan);

/** Reports the capacities the plan's outputs must hold.
 *  Reads: plan. Writes: `*shape` (its struct_size kept; fields past it not written).
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, NULL or small shape).
 *  Stream: synchronous. Since: 1.1. Details: docs/api/step_plan.md */
CATTN_API cattn_status_t cattn_step_plan_get_shape(const cattn_step_plan_t* plan,
                                                   cattn_step_plan_shape_t* shape);

/** Reports the device workspace a run needs, in bytes: 0 for every plan of this version.
 *  Reads: plan. Writes: `*bytes`.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, bytes NULL).
 *  Stream: synchronous. Since: 1.1. Details: docs/api/step_plan.md */
CATTN_API cattn_status_t cattn_step_plan_workspace_size(const cattn_step_plan_t* plan,
                                                        size_t* bytes);

/** Computes every product of the plan from the batch's device tensors in one kernel launch.
 *  Shapes, dtypes, devices, capacities and overlaps are checked on the host (no output may
 *  alias an input, in place included, but for the very views CATTN_STEP_DRAFT_STEP and
 *  CATTN_STEP_BATCH_CHANGE update); data is handled on the device as each utility does.
 *  A run described exactly as the last fully checked one skips the host checks.
 *  Reads: plan, batch. Writes: outputs, counts_host through its mapping. Allocates: nothing.
 *  Returns: CATTN_OK; CATTN_INVALID_ARGUMENT (plan not live, NULL or small structs, a required
 *  tensor NULL, an unselected product's output set, shapes, dtypes, devices, a counts_host
 *  not mapped pinned memory, a batch past a capacity, overlaps, a broadcast input too large);
 *  CATTN_INSUFFICIENT_SIZE (an output below its capacity or the batch's need);
 *  CATTN_NOT_SUPPORTED (CPU-only build, no usable device, a misaligned tensor);
 *  CATTN_CUDA_ERROR.
 *  Stream: one kernel on `stream`, nothing else; capturable, correct on every replay. A plan
 *  with step-input products (1.2) and 1.1 products launches two kernels, the second a
 *  programmatic dependent launch on sm_90 (one graph segment); a drafter plan one.
 *  Lifetime: a captured graph keeps the tensors' addresses. Thread safety: one plan may run
 *  on several threads at once. Since: 1.1. Details: docs/api/step_plan.md */
CATTN_API cattn_status_t cattn_step_plan_run(const cattn_step_plan_t* plan,
                                             const cattn_step_batch_t* batch,
                                             const cattn_step_outputs_t* outputs,
                                             cattn_stream_t stream);

/** @} */

/* === Function table for dlopen users (append-only) === */
/** @defgroup group_api_table Function table for dlopen users (append-only)
 *  Every entry point in one table, for callers that dlopen the library: cattn_get_api,
 *  CATTN_API_HAS.
 *  Pages: docs/api/api_table.md.
 *  @{ */

/** Every entry point, in release order, for callers that dlopen the library and resolve only
 *  cattn_get_api. Members are only appended: test a member newer than your oldest supported
 *  library with CATTN_API_HAS before calling it. Since: 1.0; members added in 1.1 and 1.2.
 *  Details: docs/api/api_table.md */
typedef struct cattn_api {
  /** CATTN_API_SIZE of the library's header: the table's size in bytes */
  size_t struct_size;
  /** the ABI major version, CATTN_VERSION_MAJOR of the library */
  uint32_t abi_major;
  /** the library's CATTN_VERSION_NUMBER */
  uint32_t version;
  /* 1.0 */
  /** cattn_version */
  uint32_t (*version_number)(void);
  /** cattn_version_string */
  const char* (*version_string)(void);
  /** cattn_status_string */
  const char* (*status_string)(cattn_status_t);
  /** cattn_last_error_message */
  const char* (*last_error_message)(void);
  /** cattn_cuda_device_count */
  cattn_status_t (*cuda_device_count)(int32_t*);
  /** cattn_context_create */
  cattn_status_t (*context_create)(cattn_context_t**);
  /** cattn_context_destroy */
  void (*context_destroy)(cattn_context_t*);
  /** cattn_is_valid_kv_cache_layout */
  cattn_status_t (*is_valid_kv_cache_layout)(const char*, int32_t*);
  /** cattn_kv_cache_layout_name */
  const char* (*kv_cache_layout_name)(cattn_kv_cache_layout_t);
  /** cattn_context_set_kv_cache_layout_override */
  cattn_status_t (*context_set_kv_cache_layout_override)(cattn_context_t*,
                                                         cattn_kv_cache_layout_t);
  /** cattn_get_kv_cache_layout */
  cattn_status_t (*get_kv_cache_layout)(const cattn_context_t*, cattn_kv_cache_layout_args_t*);
  /** cattn_get_dcp_local_seq_lens */
  cattn_status_t (*get_dcp_local_seq_lens)(const cattn_dcp_local_seq_lens_args_t*);
  /** cattn_get_pcp_query_restore_idx_size */
  cattn_status_t (*get_pcp_query_restore_idx_size)(const DLTensor*, int64_t*);
  /** cattn_get_pcp_query_restore_idx */
  cattn_status_t (*get_pcp_query_restore_idx)(const cattn_pcp_query_restore_idx_args_t*);
  /** cattn_fused_pcp_qkv_select */
  cattn_status_t (*fused_pcp_qkv_select)(const cattn_fused_pcp_qkv_select_args_t*);
  /** cattn_pcp_kv_allgather_and_restore_workspace_size */
  cattn_status_t (*pcp_kv_allgather_and_restore_workspace_size)(
      const cattn_pcp_kv_allgather_and_restore_args_t*, size_t*);
  /** cattn_pcp_kv_allgather_and_restore */
  cattn_status_t (*pcp_kv_allgather_and_restore)(const cattn_pcp_kv_allgather_and_restore_args_t*);
  /** cattn_compute_causal_conv1d_metadata_size */
  cattn_status_t (*compute_causal_conv1d_metadata_size)(const DLTensor*, int64_t, int64_t*,
                                                        int64_t*);
  /** cattn_compute_causal_conv1d_metadata */
  cattn_status_t (*compute_causal_conv1d_metadata)(cattn_causal_conv1d_metadata_args_t*);
  /** cattn_extend_all_queries_by_n */
  cattn_status_t (*extend_all_queries_by_n)(const cattn_extend_all_queries_by_n_args_t*);
  /** cattn_make_kv_sharing_fast_prefill_common_attn_metadata */
  cattn_status_t (*make_kv_sharing_fast_prefill_common_attn_metadata)(
      cattn_fast_prefill_metadata_args_t*);
  /** cattn_make_local_attention_virtual_batches */
  cattn_status_t (*make_local_attention_virtual_batches)(cattn_local_attention_args_t*);
  /** cattn_local_attention_plan_destroy */
  void (*local_attention_plan_destroy)(cattn_local_attention_plan_t*);
  /** cattn_local_attention_plan_get_shape */
  cattn_status_t (*local_attention_plan_get_shape)(const cattn_local_attention_plan_t*,
                                                   int64_t*, int64_t*);
  /** cattn_local_attention_plan_fill */
  cattn_status_t (*local_attention_plan_fill)(const cattn_local_attention_plan_t*,
                                              const cattn_local_attention_fill_args_t*);
  /** cattn_local_attention_plan_make_block_table */
  cattn_status_t (*local_attention_plan_make_block_table)(const cattn_local_attention_plan_t*,
                                                          const DLTensor*, DLTensor*,
                                                          cattn_stream_t);
  /** cattn_mamba_get_block_table_tensor */
  cattn_status_t (*mamba_get_block_table_tensor)(const cattn_mamba_block_table_args_t*);
  /** cattn_get_per_layer_parameters */
  cattn_status_t (*get_per_layer_parameters)(const cattn_attention_layer_desc_t*, size_t,
                                             cattn_per_layer_parameters_t*);
  /** cattn_infer_global_hyperparameters */
  cattn_status_t (*infer_global_hyperparameters)(const cattn_per_layer_parameters_t*, size_t,
                                                 cattn_global_hyperparameters_t*);
  /* 1.0, NCCL */
  /** cattn_comm_get_unique_id */
  cattn_status_t (*comm_get_unique_id)(cattn_comm_unique_id_t*);
  /** cattn_comm_create */
  cattn_status_t (*comm_create)(const cattn_comm_unique_id_t*, int32_t, int32_t, int32_t,
                                cattn_comm_t**);
  /** cattn_comm_create_borrowed */
  cattn_status_t (*comm_create_borrowed)(void*, cattn_comm_t**);
  /** cattn_comm_destroy */
  void (*comm_destroy)(cattn_comm_t*);
  /** cattn_comm_get_rank */
  cattn_status_t (*comm_get_rank)(const cattn_comm_t*, int32_t*);
  /** cattn_comm_get_size */
  cattn_status_t (*comm_get_size)(const cattn_comm_t*, int32_t*);
  /* 1.1 */
  /** cattn_make_local_attention_virtual_batches_size */
  cattn_status_t (*make_local_attention_virtual_batches_size)(const cattn_local_attention_args_t*,
                                                              int64_t*, int64_t*, size_t*);
  /** cattn_compute_causal_conv1d_metadata_capturable */
  cattn_status_t (*compute_causal_conv1d_metadata_capturable)(
      const cattn_causal_conv1d_metadata_capturable_args_t*);
  /** cattn_make_local_attention_virtual_batches_capturable */
  cattn_status_t (*make_local_attention_virtual_batches_capturable)(
      const cattn_local_attention_capturable_args_t*);
  /** cattn_step_plan_create */
  cattn_status_t (*step_plan_create)(const cattn_step_plan_desc_t*, cattn_step_plan_t**);
  /** cattn_step_plan_destroy */
  void (*step_plan_destroy)(cattn_step_plan_t*);
  /** cattn_step_plan_get_shape */
  cattn_status_t (*step_plan_get_shape)(const cattn_step_plan_t*, cattn_step_plan_shape_t*);
  /** cattn_step_plan_workspace_size */
  cattn_status_t (*step_plan_workspace_size)(const cattn_step_plan_t*, size_t*);
  /** cattn_step_plan_run */
  cattn_status_t (*step_plan_run)(const cattn_step_plan_t*, const cattn_step_batch_t*,
                                  const cattn_step_outputs_t*, cattn_stream_t);
  /** cattn_kv_cache_layout_from_name */
  cattn_status_t (*kv_cache_layout_from_name)(const char*, cattn_kv_cache_layout_t*);
  /** cattn_kv_cache_layout_get_properties */
  cattn_status_t (*kv_cache_layout_get_properties)(cattn_kv_cache_layout_t,
                                                   cattn_kv_cache_layout_properties_t*);
  /** cattn_get_flashinfer_layout_string */
  cattn_status_t (*get_flashinfer_layout_string)(cattn_kv_cache_layout_t, const char**);
  /** cattn_kv_cache_layout_strides */
  cattn_status_t (*kv_cache_layout_strides)(cattn_kv_cache_layout_strides_args_t*);
  /** cattn_get_supported_kv_cache_layouts */
  cattn_status_t (*get_supported_kv_cache_layouts)(cattn_get_supported_kv_cache_layouts_args_t*);
  /** cattn_context_set_kv_cache_layout_preset */
  cattn_status_t (*context_set_kv_cache_layout_preset)(cattn_context_t*, const char*);
  /** cattn_resolve_kv_cache_layout */
  cattn_status_t (*resolve_kv_cache_layout)(cattn_context_t*,
                                            cattn_resolve_kv_cache_layout_args_t*);
  /** cattn_record_kv_cache_layout */
  cattn_status_t (*record_kv_cache_layout)(cattn_context_t*, const char*);
  /** cattn_get_resolved_kv_cache_layout */
  cattn_status_t (*get_resolved_kv_cache_layout)(const cattn_context_t*,
                                                 cattn_kv_cache_layout_t*);
  /** cattn_split_decodes_and_prefills */
  cattn_status_t (*split_decodes_and_prefills)(cattn_split_decodes_and_prefills_args_t*);
  /** cattn_split_decodes_and_prefills_capturable */
  cattn_status_t (*split_decodes_and_prefills_capturable)(
      const cattn_split_decodes_and_prefills_capturable_args_t*);
  /** cattn_split_decodes_prefills_and_extends */
  cattn_status_t (*split_decodes_prefills_and_extends)(
      cattn_split_decodes_prefills_and_extends_args_t*);
  /** cattn_split_decodes_prefills_and_extends_capturable */
  cattn_status_t (*split_decodes_prefills_and_extends_capturable)(
      const cattn_split_decodes_prefills_and_extends_capturable_args_t*);
  /** cattn_split_prefill_chunks */
  cattn_status_t (*split_prefill_chunks)(cattn_split_prefill_chunks_args_t*);
  /** cattn_reorder_batch_to_split_decodes_and_prefills */
  cattn_status_t (*reorder_batch_to_split_decodes_and_prefills)(cattn_reorder_batch_args_t*);
  /* 1.1, per-request metadata helpers */
  /** cattn_naive_query_lens */
  cattn_status_t (*naive_query_lens)(const cattn_naive_query_lens_args_t*);
  /** cattn_compute_num_computed_tokens */
  cattn_status_t (*compute_num_computed_tokens)(const cattn_compute_num_computed_tokens_args_t*);
  /** cattn_token_to_req_indices */
  cattn_status_t (*token_to_req_indices)(const cattn_token_to_req_indices_args_t*);
  /** cattn_unpadded */
  cattn_status_t (*unpadded)(const cattn_unpadded_args_t*);
  /** cattn_max_local_attention_virtual_batches */
  cattn_status_t (*max_local_attention_virtual_batches)(
      cattn_max_local_attention_virtual_batches_args_t*);
  /** cattn_compute_mm_prefix_range_tensor */
  cattn_status_t (*compute_mm_prefix_range_tensor)(cattn_mm_prefix_range_tensor_args_t*);
  /** cattn_fill_mm_prefix_query_ranges */
  cattn_status_t (*fill_mm_prefix_query_ranges)(cattn_fill_mm_prefix_query_ranges_args_t*);
  /** cattn_log2_lse_to_ln */
  cattn_status_t (*log2_lse_to_ln)(const cattn_log2_lse_to_ln_args_t*);
  /** cattn_fused_pcp_qkv_select_size */
  cattn_status_t (*fused_pcp_qkv_select_size)(int64_t, int64_t, int64_t, int64_t*, int64_t*,
                                              int64_t*);
  /* 1.2 */
  /** cattn_prepare_pos_seq_lens */
  cattn_status_t (*prepare_pos_seq_lens)(const cattn_prepare_pos_seq_lens_args_t*);
  /** cattn_gather_block_tables */
  cattn_status_t (*gather_block_tables)(const cattn_gather_block_tables_args_t*);
  /** cattn_compute_slot_mappings */
  cattn_status_t (*compute_slot_mappings)(const cattn_compute_slot_mappings_args_t*);
  /** cattn_combine_sampled_and_draft_tokens */
  cattn_status_t (*combine_sampled_and_draft_tokens)(
      const cattn_combine_sampled_and_draft_tokens_args_t*);
  /** cattn_step_batch_check */
  cattn_status_t (*step_batch_check)(const cattn_step_batch_check_args_t*);
  /** cattn_eagle_step_update_slot_mapping_and_metadata */
  cattn_status_t (*eagle_step_update_slot_mapping_and_metadata)(
      const cattn_eagle_step_update_slot_mapping_and_metadata_args_t*);
  /** cattn_eagle_prepare_inputs_padded */
  cattn_status_t (*eagle_prepare_inputs_padded)(const cattn_eagle_prepare_inputs_padded_args_t*);
  /** cattn_eagle_prepare_next_token_padded */
  cattn_status_t (*eagle_prepare_next_token_padded)(
      const cattn_eagle_prepare_next_token_padded_args_t*);
  /** cattn_compute_new_slot_mapping */
  cattn_status_t (*compute_new_slot_mapping)(const cattn_compute_new_slot_mapping_args_t*);
  /** cattn_copy_and_expand_eagle_inputs */
  cattn_status_t (*copy_and_expand_eagle_inputs)(
      const cattn_copy_and_expand_eagle_inputs_args_t*);
  /** cattn_update_num_computed_tokens_for_batch_change */
  cattn_status_t (*update_num_computed_tokens_for_batch_change)(
      const cattn_update_num_computed_tokens_for_batch_change_args_t*);
  /** cattn_step_inputs_size */
  cattn_status_t (*step_inputs_size)(cattn_step_inputs_size_args_t*);
} cattn_api_t;
/** The size of this header's table; the library's own is in its struct_size. Since: 1.0 */
#define CATTN_API_SIZE ((size_t)sizeof(cattn_api_t))

/** Nonzero when the table `api` is not NULL, its struct_size covers `member` and that
 *  function pointer is not NULL: test an entry added after your oldest supported library
 *  before calling it. `api` is evaluated more than once (pass a plain variable); `member` is
 *  a function-pointer member name of cattn_api_t. C99 and C++. Since: 1.1 */
#define CATTN_API_HAS(api, member)                                                        \
  ((api) != NULL &&                                                                       \
   (api)->struct_size >= offsetof(cattn_api_t, member) + sizeof((api)->member) &&         \
   (api)->member != NULL)

/** Returns the function table for ABI `abi_major` (CATTN_VERSION_MAJOR), or NULL when the
 *  library does not implement that major: the one symbol a dlopen user resolves.
 *  Returns: the table or NULL; cannot fail.
 *  Lifetime: static; valid while the library stays loaded. Since: 1.0.
 *  Details: docs/api/api_table.md */
CATTN_API const cattn_api_t* cattn_get_api(uint32_t abi_major);

/** The library's file name for dlopen: its SONAME, "libcattn.so.1" (the ABI major). Since: 1.1 */
#define CATTN_SONAME "libcattn.so.1"

/** The type of cattn_get_api, for callers that resolve it with dlsym; copy dlsym's pointer
 *  into it with memcpy (ISO C has no cast from void* to a function pointer; POSIX gives both
 *  one representation). Example: docs/api/api_table.md. Since: 1.1 */
typedef const cattn_api_t* (*cattn_get_api_fn)(uint32_t abi_major);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CATTN_H */
