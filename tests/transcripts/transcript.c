/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transcript.c - a test transcript: runs every libcattn utility (1-15) on one small,
 * hand-checkable batch and prints the inputs, the results and the status of every call. The Rust
 * and Go transcripts (transcript.rs here, bindings/go/internal/transcript) print the same lines,
 * and scripts/test_rust.sh and scripts/test_go.sh diff them with this one's host run.
 *
 * The batch: 4 requests mixing prefill and decode, KV block size 4, 10 blocks per request.
 *
 *   request             0 (new prompt)   1 (chunked prefill)   2 (chunked prefill)   3 (decode)
 *   query tokens        16               4                     8                     1
 *   sequence length     16               10                    17                    33
 *   block table row     0 1 ... 9        10 11 ... 19          20 21 ... 29          30 ... 39
 *
 * The 1.2 sections (14, step inputs; 15, speculative decoding) take the batch as vLLM's model
 * runner v2 keeps it, persistent request rows and all, plus a fifth request (a decode with 2
 * drafts) in a CUDA-graph bucket of 6 rows, and then run a drafter step on it.
 *
 * Where it runs: on the GPU when the transcript was built against a CUDA build of libcattn
 * (CATTN_TRANSCRIPT_WITH_CUDA) and cattn_cuda_device_count() finds a device, unless
 * CATTN_TRANSCRIPT_FORCE_HOST=1; on the host otherwise. The first line of output says which. On the
 * GPU the batch's tensors live in device memory, every utility runs on one stream the transcript
 * creates, and results are copied back before they are printed, by the same printing code as
 * the host run. Host mirrors (*_cpu) stay in host memory on both paths, as the API requires.
 *
 * C99 and the C standard library; the CUDA runtime's C header only in a CUDA build, and only in
 * the device layer below ("Device layer").
 *
 * pcp_kv_allgather_and_restore (the NCCL all-gather + restore) needs GPUs and NCCL. On the GPU it runs in a
 * one-rank NCCL group on the transcript's device (NCCL is loaded at run time; where it cannot be, the
 * transcript prints why and does not count the utility). On the host it shows the status a host
 * caller gets and is not counted.
 *
 * Exit status: 0 when every counted utility returned CATTN_OK; 1 otherwise; 2 when the transcript
 * itself failed (a CUDA call, memory).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cattn.h"

/* ============================================================================================
 * Tensor allocation layer
 * ========================================================================================== */

/* Where a tensor's bytes live and how to move them to and from the host. */
typedef struct transcript_memory {
  const char* name;
  DLDevice device;
  void* (*alloc)(size_t bytes);
  void (*release)(void* ptr);
  void (*to_host)(void* host_dst, const void* src, size_t bytes);
  void (*from_host)(void* dst, const void* host_src, size_t bytes);
} transcript_memory_t;

static void* host_alloc(size_t bytes) { return malloc(bytes > 0 ? bytes : 1); }
static void host_release(void* ptr) { free(ptr); }
static void host_copy(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }

static const transcript_memory_t kHostMemory = {
    "host", {kDLCPU, 0}, host_alloc, host_release, host_copy, host_copy};

/* Where the batch's tensors (all but the *_cpu host mirrors) live: kHostMemory, or the device
 * memory of the device layer below when the transcript runs on a GPU. */
static const transcript_memory_t* g_batch_memory = &kHostMemory;

/* The stream every utility is given. NULL on the host, where the library ignores it. */
static cattn_stream_t g_stream = NULL;

static void die(const char* what) {
  fprintf(stderr, "transcript: %s\n", what);
  exit(2);
}

/* ============================================================================================
 * Device layer: the transcript's only CUDA code. Compiled when libcattn was built with CUDA (CMake
 * then defines CATTN_TRANSCRIPT_WITH_CUDA and links the CUDA runtime); a CPU-only build gets the
 * stubs at the end, which report no device. No CUDA call is made unless device_open() ran.
 * ========================================================================================== */

#if defined(CATTN_TRANSCRIPT_WITH_CUDA)
#include <cuda_runtime_api.h>

/* Any CUDA failure ends the transcript: after one, nothing it prints could be trusted. */
static void cuda_check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) {
    fprintf(stderr, "transcript: %s failed: %s (%s)\n", call, cudaGetErrorName(error),
            cudaGetErrorString(error));
    exit(2);
  }
}
#define CUDA_CHECK(call) cuda_check((call), #call)

static void* cuda_alloc(size_t bytes) {
  void* ptr = NULL;
  CUDA_CHECK(cudaMalloc(&ptr, bytes > 0 ? bytes : 1));
  return ptr;
}
static void cuda_release(void* ptr) { CUDA_CHECK(cudaFree(ptr)); }

/* Copies are queued on the utilities' stream, so they come after the work that wrote the data,
 * and waited for, so they are complete (and the host buffer free to reuse) on return. */
static void cuda_to_host(void* host_dst, const void* src, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, g_stream));
  CUDA_CHECK(cudaStreamSynchronize(g_stream));
}
static void cuda_from_host(void* dst, const void* host_src, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, g_stream));
  CUDA_CHECK(cudaStreamSynchronize(g_stream));
}

static char g_cuda_memory_name[32];
static transcript_memory_t g_cuda_memory = {g_cuda_memory_name, {kDLCUDA, 0}, cuda_alloc,
                                      cuda_release, cuda_to_host, cuda_from_host};

/* Takes the current CUDA device, writes its name to `name` and creates the stream; returns the
 * device memory the batch is to live in. */
static const transcript_memory_t* device_open(char* name, size_t name_size) {
  struct cudaDeviceProp prop;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  CUDA_CHECK(cudaStreamCreate(&g_stream));
  snprintf(name, name_size, "%s", prop.name);
  snprintf(g_cuda_memory_name, sizeof g_cuda_memory_name, "cuda:%d device", device);
  g_cuda_memory.device.device_id = device;
  return &g_cuda_memory;
}

/* A call that returned CATTN_OK has only queued its device work: wait for it, so that a kernel
 * failure is reported at the call that caused it. */
static void device_sync(void) {
  if (g_stream != NULL) CUDA_CHECK(cudaStreamSynchronize(g_stream));
}

static void device_close(void) {
  if (g_stream != NULL) CUDA_CHECK(cudaStreamDestroy(g_stream));
  g_stream = NULL;
}

#else /* CPU-only build: there is no device to open. */
static const transcript_memory_t* device_open(char* name, size_t name_size) {
  (void)name;
  (void)name_size;
  return NULL;
}
static void device_sync(void) {}
static void device_close(void) {}
#endif

typedef struct transcript_tensor {
  DLTensor dl;
  int64_t shape[3];
  const transcript_memory_t* memory;
} transcript_tensor_t;

#define TRANSCRIPT_MAX_TENSORS 256
static transcript_tensor_t* g_tensors[TRANSCRIPT_MAX_TENSORS];
static int g_num_tensors = 0;

static const DLDataType kI32 = {kDLInt, 32, 1};
static const DLDataType kI64 = {kDLInt, 64, 1};
static const DLDataType kF32 = {kDLFloat, 32, 1};
/* Flags (the speculative-decoding masks): one byte per entry, nonzero = set. */
static const DLDataType kU8 = {kDLUInt, 8, 1};

/* A compact tensor of the given shape (unused dimensions = 0), contents undefined. */
static transcript_tensor_t* tensor_new(const transcript_memory_t* memory, DLDataType dtype, int ndim,
                                 int64_t d0, int64_t d1, int64_t d2) {
  transcript_tensor_t* t;
  int64_t numel = 1;
  int i;
  if (g_num_tensors == TRANSCRIPT_MAX_TENSORS) die("too many tensors");
  t = (transcript_tensor_t*)calloc(1, sizeof(*t));
  if (t == NULL) die("out of memory");
  t->shape[0] = d0;
  t->shape[1] = d1;
  t->shape[2] = d2;
  for (i = 0; i < ndim; ++i) numel *= t->shape[i];
  t->memory = memory;
  t->dl.data = memory->alloc((size_t)numel * (dtype.bits / 8));
  if (t->dl.data == NULL) die("out of memory");
  t->dl.device = memory->device;
  t->dl.ndim = ndim;
  t->dl.dtype = dtype;
  t->dl.shape = t->shape;
  t->dl.strides = NULL; /* compact row-major */
  t->dl.byte_offset = 0;
  g_tensors[g_num_tensors++] = t;
  return t;
}

static int64_t tensor_numel(const transcript_tensor_t* t) {
  int64_t n = 1;
  int i;
  for (i = 0; i < t->dl.ndim; ++i) n *= t->shape[i];
  return n;
}

/* Uploads integer `values` (converted to the tensor's dtype) into a new tensor. */
static transcript_tensor_t* tensor_of(const transcript_memory_t* memory, DLDataType dtype, int ndim,
                                int64_t d0, int64_t d1, const int64_t* values) {
  transcript_tensor_t* t = tensor_new(memory, dtype, ndim, d0, d1, 0);
  int64_t n = tensor_numel(t), i;
  const int64_t elem = dtype.bits / 8;
  unsigned char* staging = (unsigned char*)malloc((size_t)(n * elem) + 1);
  if (staging == NULL) die("out of memory");
  for (i = 0; i < n; ++i) {
    if (dtype.code == kDLFloat) {
      float f = (float)values[i];
      memcpy(staging + i * elem, &f, sizeof f);
    } else if (dtype.bits == 32) {
      int32_t v = (int32_t)values[i];
      memcpy(staging + i * elem, &v, sizeof v);
    } else if (dtype.bits == 8) {
      staging[i] = (unsigned char)values[i];
    } else {
      memcpy(staging + i * elem, &values[i], sizeof values[i]);
    }
  }
  memory->from_host(t->dl.data, staging, (size_t)(n * elem));
  free(staging);
  return t;
}

/* The tensor's elements copied to a new host buffer in one transfer (the caller frees it). */
static unsigned char* tensor_download(const transcript_tensor_t* t) {
  size_t bytes = (size_t)tensor_numel(t) * (t->dl.dtype.bits / 8);
  unsigned char* host = (unsigned char*)malloc(bytes + 1);
  if (host == NULL) die("out of memory");
  t->memory->to_host(host, (const unsigned char*)t->dl.data + t->dl.byte_offset, bytes);
  return host;
}

/* Copies src's elements into dst (same dtype and element count), whichever memory each is in. */
static void tensor_copy(transcript_tensor_t* dst, const transcript_tensor_t* src) {
  unsigned char* host = tensor_download(src);
  dst->memory->from_host((unsigned char*)dst->dl.data + dst->dl.byte_offset, host,
                         (size_t)tensor_numel(src) * (src->dl.dtype.bits / 8));
  free(host);
}

/* Element i (row-major) of a downloaded tensor, as double so that ints and floats share code. */
static double host_value(const transcript_tensor_t* t, const unsigned char* host, int64_t i) {
  const unsigned char* raw = host + (size_t)i * (t->dl.dtype.bits / 8);
  if (t->dl.dtype.code == kDLFloat) {
    float f;
    memcpy(&f, raw, sizeof f);
    return f;
  }
  if (t->dl.dtype.bits == 32) {
    int32_t v;
    memcpy(&v, raw, sizeof v);
    return v;
  }
  if (t->dl.dtype.bits == 8) return raw[0];
  {
    int64_t v;
    memcpy(&v, raw, sizeof v);
    return (double)v;
  }
}

static void free_all_tensors(void) {
  int i;
  for (i = 0; i < g_num_tensors; ++i) {
    g_tensors[i]->memory->release(g_tensors[i]->dl.data);
    free(g_tensors[i]);
  }
  g_num_tensors = 0;
}

/* ============================================================================================
 * Printing
 * ========================================================================================== */

static void print_run(const transcript_tensor_t* t, const unsigned char* host, int64_t from,
                      int64_t to) {
  int64_t i;
  for (i = from; i < to; ++i) printf("%s%g", i > from ? ", " : "", host_value(t, host, i));
}

/* Prints `label`, the shape, the dtype and the values. Long tensors print `head` values and
 * summarise the rest (saying so when it is a single repeated value, e.g. padding). The values
 * are read from a host copy taken first, so the host and the GPU run print through this same
 * code. */
static void print_tensor_head(const char* label, const transcript_tensor_t* t, int64_t head) {
  int64_t n = tensor_numel(t), i;
  unsigned char* host = tensor_download(t);
  const char* dtype = t->dl.dtype.code == kDLFloat ? "float32"
                      : t->dl.dtype.bits == 32     ? "int32"
                      : t->dl.dtype.bits == 8      ? "uint8"
                                                   : "int64";
  printf("    %-26s ", label);
  if (t->dl.ndim == 2) {
    int64_t r, cols = t->shape[1];
    printf("[%" PRId64 ", %" PRId64 "] %s\n", t->shape[0], cols, dtype);
    for (r = 0; r < t->shape[0]; ++r) {
      printf("      [");
      print_run(t, host, r * cols, (r + 1) * cols);
      printf("]\n");
    }
  } else {
    if (t->dl.ndim == 1) {
      printf("[%" PRId64 "] %s = [", t->shape[0], dtype);
    } else {
      printf("[%" PRId64 ", %" PRId64 ", %" PRId64 "] %s, flattened = [", t->shape[0],
             t->shape[1], t->shape[2], dtype);
    }
    if (n <= head) {
      print_run(t, host, 0, n);
      printf("]\n");
    } else {
      double rest = host_value(t, host, head);
      int same = 1;
      print_run(t, host, 0, head);
      for (i = head + 1; i < n && same; ++i) same = host_value(t, host, i) == rest;
      if (same)
        printf(", ... %" PRId64 " more, all %g]\n", n - head, rest);
      else
        printf(", ... %" PRId64 " more]\n", n - head);
    }
  }
  free(host);
}

static void print_tensor(const char* label, const transcript_tensor_t* t) {
  print_tensor_head(label, t, 40);
}

static void section(int utility, const char* title) {
  printf("\n== %d. %s ==\n", utility, title);
}

/* ============================================================================================
 * Status bookkeeping: every call's status is printed; a utility fails if any call that should
 * succeed did not, or a call made to show an error did not give that error.
 * ========================================================================================== */

#define NUM_UTILITIES 15
static int g_failed[NUM_UTILITIES + 1];
static cattn_status_t g_first_bad[NUM_UTILITIES + 1];
/* Why a utility's status does not decide the exit status (NULL: it does). */
static const char* g_not_counted[NUM_UTILITIES + 1];

static void record_failure(int utility, cattn_status_t status) {
  if (!g_failed[utility]) g_first_bad[utility] = status;
  g_failed[utility] = 1;
}

/* Prints a call's status; returns 1 when it is CATTN_OK, after the call's device work (if any)
 * has finished. */
static int check(int utility, const char* call, cattn_status_t status) {
  if (status == CATTN_OK) {
    device_sync();
    printf("  %s -> CATTN_OK\n", call);
    return 1;
  }
  printf("  %s -> %s\n      message: \"%s\"\n", call, cattn_status_string(status),
         cattn_last_error_message());
  record_failure(utility, status);
  return 0;
}

/* A call made on purpose with a bad argument, to show the library's error report. */
static void check_expected_error(int utility, const char* call, cattn_status_t status,
                                 cattn_status_t expected) {
  printf("  %s -> %s (expected %s)\n      message: \"%s\"\n", call, cattn_status_string(status),
         cattn_status_string(expected), status == CATTN_OK ? "" : cattn_last_error_message());
  if (status != expected) record_failure(utility, status == CATTN_OK ? CATTN_INTERNAL : status);
}

/* ============================================================================================
 * The batch
 * ========================================================================================== */

#define B 4
#define KV_BLOCK 4
#define BLOCKS_PER_REQ 10
static const int64_t kQueryLens[B] = {16, 4, 8, 1};
static const int64_t kSeqLens[B] = {16, 10, 17, 33};

typedef struct transcript_batch {
  int64_t qsl[B + 1];
  int64_t num_tokens, max_query_len, max_seq_len;
  int64_t block_table[B * BLOCKS_PER_REQ];
  int64_t slot_mapping[64];
  /* device tensors (g_batch_memory) and host mirrors (kHostMemory) */
  transcript_tensor_t *query_start_loc, *query_start_loc_cpu, *seq_lens, *seq_lens_cpu;
  transcript_tensor_t *num_computed_tokens_cpu, *block_table_tensor, *slot_mapping_tensor;
  transcript_tensor_t* logits_indices_padded;
  int64_t num_logits_indices;
} transcript_batch_t;

/* Slot of every query token: its page in the request's block table times the block size plus
 * its offset in the page, as vLLM's slot_mapping. */
static int64_t fill_slot_mapping(const int64_t* qlens, const int64_t* slens, int64_t* out) {
  int64_t b, i, n = 0;
  for (b = 0; b < B; ++b) {
    for (i = 0; i < qlens[b]; ++i) {
      int64_t pos = slens[b] - qlens[b] + i;
      out[n++] = (b * BLOCKS_PER_REQ + pos / KV_BLOCK) * KV_BLOCK + pos % KV_BLOCK;
    }
  }
  return n;
}

static void make_batch(transcript_batch_t* batch) {
  /* Logits are needed at every request's last token, plus one draft position (18) of request
   * 1; the tensor is padded to 8 entries as for a CUDA graph. */
  static const int64_t kLogits[8] = {15, 18, 19, 27, 28, 0, 0, 0};
  int64_t b, j;
  int64_t nc[B];
  memset(batch, 0, sizeof *batch);
  batch->qsl[0] = 0;
  for (b = 0; b < B; ++b) {
    batch->qsl[b + 1] = batch->qsl[b] + kQueryLens[b];
    if (kQueryLens[b] > batch->max_query_len) batch->max_query_len = kQueryLens[b];
    if (kSeqLens[b] > batch->max_seq_len) batch->max_seq_len = kSeqLens[b];
    nc[b] = kSeqLens[b] - kQueryLens[b];
    for (j = 0; j < BLOCKS_PER_REQ; ++j) batch->block_table[b * BLOCKS_PER_REQ + j] = b * 10 + j;
  }
  batch->num_tokens = batch->qsl[B];
  fill_slot_mapping(kQueryLens, kSeqLens, batch->slot_mapping);

  batch->query_start_loc = tensor_of(g_batch_memory, kI32, 1, B + 1, 0, batch->qsl);
  batch->query_start_loc_cpu = tensor_of(&kHostMemory, kI32, 1, B + 1, 0, batch->qsl);
  batch->seq_lens = tensor_of(g_batch_memory, kI32, 1, B, 0, kSeqLens);
  batch->seq_lens_cpu = tensor_of(&kHostMemory, kI32, 1, B, 0, kSeqLens);
  batch->num_computed_tokens_cpu = tensor_of(&kHostMemory, kI32, 1, B, 0, nc);
  batch->block_table_tensor =
      tensor_of(g_batch_memory, kI32, 2, B, BLOCKS_PER_REQ, batch->block_table);
  batch->slot_mapping_tensor =
      tensor_of(g_batch_memory, kI64, 1, batch->num_tokens, 0, batch->slot_mapping);
  batch->logits_indices_padded = tensor_of(g_batch_memory, kI32, 1, 8, 0, kLogits);
  batch->num_logits_indices = 5;
}

/* The batch as cattn_common_attn_metadata_t. */
static cattn_common_attn_metadata_t batch_metadata(const transcript_batch_t* batch) {
  cattn_common_attn_metadata_t m = CATTN_COMMON_ATTN_METADATA_INIT;
  m.query_start_loc = &batch->query_start_loc->dl;
  m.query_start_loc_cpu = &batch->query_start_loc_cpu->dl;
  m.seq_lens = &batch->seq_lens->dl;
  m.seq_lens_cpu = &batch->seq_lens_cpu->dl;
  m.num_computed_tokens_cpu = &batch->num_computed_tokens_cpu->dl;
  m.block_table_tensor = &batch->block_table_tensor->dl;
  m.slot_mapping = &batch->slot_mapping_tensor->dl;
  m.logits_indices_padded = &batch->logits_indices_padded->dl;
  m.num_reqs = B;
  m.num_actual_tokens = batch->num_tokens;
  m.max_query_len = batch->max_query_len;
  m.max_seq_len = batch->max_seq_len;
  m.num_logits_indices = batch->num_logits_indices;
  m.causal = 1;
  return m;
}

static void print_scalars(const cattn_common_attn_metadata_t* m) {
  printf("    num_reqs %" PRId64 ", num_actual_tokens %" PRId64 ", max_query_len %" PRId64
         ", max_seq_len %" PRId64 ", causal %d\n",
         m->num_reqs, m->num_actual_tokens, m->max_query_len, m->max_seq_len, (int)m->causal);
}

static void print_batch(const transcript_batch_t* batch) {
  printf("\nThe batch (inputs shared by the sections below):\n");
  print_tensor("query_start_loc", batch->query_start_loc);
  print_tensor("seq_lens", batch->seq_lens);
  print_tensor("num_computed_tokens_cpu", batch->num_computed_tokens_cpu);
  print_tensor("block_table_tensor", batch->block_table_tensor);
  print_tensor("slot_mapping", batch->slot_mapping_tensor);
  print_tensor("logits_indices_padded", batch->logits_indices_padded);
  printf("    num_logits_indices %" PRId64 ", num_reqs %d, num_actual_tokens %" PRId64
         ", max_query_len %" PRId64 ", max_seq_len %" PRId64 "\n",
         batch->num_logits_indices, B, batch->num_tokens, batch->max_query_len,
         batch->max_seq_len);
}

/* ============================================================================================
 * 1. KV-cache layout
 * ========================================================================================== */

static void resolve_layout(const cattn_context_t* ctx, const char* env_value,
                           cattn_kv_cache_layout_t connector, const char* what) {
  cattn_kv_cache_layout_args_t args = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  char call[160];
  args.env_value = env_value;
  args.connector_layout = connector;
  snprintf(call, sizeof call, "cattn_get_kv_cache_layout(%s)", what);
  if (check(1, call, cattn_get_kv_cache_layout(ctx, &args)))
    printf("      layout = %s\n", cattn_kv_cache_layout_name(args.layout));
}

static void transcript_kv_cache_layout(void) {
  cattn_context_t* ctx = NULL;
  int32_t valid = -1;
  section(1, "KV-cache layout (get_kv_cache_layout, is_valid_kv_cache_layout)");
  if (check(1, "cattn_is_valid_kv_cache_layout(\"HND\")", cattn_is_valid_kv_cache_layout("HND", &valid)))
    printf("      valid = %d\n", (int)valid);
  if (check(1, "cattn_is_valid_kv_cache_layout(\"hnd\")", cattn_is_valid_kv_cache_layout("hnd", &valid)))
    printf("      valid = %d (case-sensitive, as vLLM)\n", (int)valid);
  if (!check(1, "cattn_context_create", cattn_context_create(&ctx))) return;
  /* read_environment stays 0 so that the transcript does not depend on the caller's environment. */
  resolve_layout(ctx, NULL, CATTN_KV_CACHE_LAYOUT_UNSET, "no setting -> default");
  resolve_layout(ctx, NULL, CATTN_KV_CACHE_LAYOUT_HND, "connector prefers HND");
  resolve_layout(ctx, "NHD", CATTN_KV_CACHE_LAYOUT_HND, "user says NHD, connector HND");
  check(1, "cattn_context_set_kv_cache_layout_override(HND)",
        cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_HND));
  resolve_layout(ctx, "NHD", CATTN_KV_CACHE_LAYOUT_UNSET, "override HND beats user NHD");
  check(1, "cattn_context_set_kv_cache_layout_override(UNSET)",
        cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_UNSET));
  {
    cattn_kv_cache_layout_args_t args = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
    args.env_value = "nhd";
    check_expected_error(1, "cattn_get_kv_cache_layout(user says \"nhd\"; vLLM asserts)",
                         cattn_get_kv_cache_layout(ctx, &args), CATTN_INVALID_ARGUMENT);
  }
  cattn_context_destroy(ctx);
}

/* ============================================================================================
 * 2. DCP local sequence lengths
 * ========================================================================================== */

static void transcript_dcp_local_seq_lens(const transcript_batch_t* batch) {
  cattn_dcp_local_seq_lens_args_t args = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  transcript_tensor_t* all = tensor_new(g_batch_memory, kI32, 2, B, 2, 0);
  transcript_tensor_t* one = tensor_new(g_batch_memory, kI32, 1, B, 0, 0);
  section(2, "DCP local sequence lengths (get_dcp_local_seq_lens)");
  printf("  inputs: seq_lens (above), dcp_size 2, dcp_kv_cache_interleave_size 4\n");
  args.seq_lens = &batch->seq_lens->dl;
  args.dcp_size = 2;
  args.dcp_kv_cache_interleave_size = 4;
  args.dcp_rank = CATTN_DCP_ALL_RANKS;
  args.out = &all->dl;
  args.stream = g_stream;
  if (check(2, "cattn_get_dcp_local_seq_lens(every rank)", cattn_get_dcp_local_seq_lens(&args)))
    print_tensor("local seq_lens [b, rank]", all);
  args.dcp_rank = 1;
  args.out = &one->dl;
  if (check(2, "cattn_get_dcp_local_seq_lens(rank 1)", cattn_get_dcp_local_seq_lens(&args)))
    print_tensor("rank 1's seq_lens", one);
}

/* ============================================================================================
 * 3. PCP query restore index
 * ========================================================================================== */

static void transcript_pcp_query_restore_idx(const transcript_batch_t* batch) {
  cattn_pcp_query_restore_idx_args_t args = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  int64_t size = -1;
  transcript_tensor_t* out;
  section(3, "PCP query restore index (get_pcp_query_restore_idx)");
  printf("  inputs: cu_num_tokens = query_start_loc (above), sized from its host mirror "
         "query_start_loc_cpu;\n          request 3 is a decode and takes no part\n");
  if (!check(3, "cattn_get_pcp_query_restore_idx_size",
             cattn_get_pcp_query_restore_idx_size(&batch->query_start_loc_cpu->dl, &size)))
    return;
  printf("      size = %" PRId64 "\n", size);
  /* Four spare entries show the -1 fill past `size`. */
  out = tensor_new(g_batch_memory, kI32, 1, size + 4, 0, 0);
  /* The index is computed where the batch lives, from the batch's own query_start_loc. */
  args.cu_num_tokens = &batch->query_start_loc->dl;
  args.restore_idx = &out->dl;
  args.stream = g_stream;
  if (check(3, "cattn_get_pcp_query_restore_idx", cattn_get_pcp_query_restore_idx(&args)))
    print_tensor("restore_idx", out);
}

/* ============================================================================================
 * 4. Fused PCP Q/K/V select
 * ========================================================================================== */

static void transcript_fused_pcp_qkv_select(void) {
  /* PCP world size 2, rank 0. Requests 0-2 are split into 2W = 4 chunks; rank 0 holds chunks 0
   * and 3, so its local query lengths are 8, 2 and 4. One head of dimension 1 keeps the print
   * short: q row i holds 100 + i, K row j holds 200 + j and V row j holds 300 + j. */
  static const int64_t kLocalQsl[4] = {0, 8, 10, 14};
  const int64_t nq = 14, world = 2, rank = 0;
  int64_t values[64], i;
  cattn_fused_pcp_qkv_select_args_t args = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  transcript_tensor_t *qsl, *q, *k, *v, *qh, *kh, *vh, *qt, *kt, *vt;
  section(4, "Fused PCP Q/K/V select (fused_pcp_qkv_select)");
  qsl = tensor_of(g_batch_memory, kI32, 1, 4, 0, kLocalQsl);
  for (i = 0; i < nq; ++i) values[i] = 100 + i;
  q = tensor_of(g_batch_memory, kF32, 1, nq, 0, values);
  for (i = 0; i < world * nq; ++i) values[i] = 200 + i;
  k = tensor_of(g_batch_memory, kF32, 1, world * nq, 0, values);
  for (i = 0; i < world * nq; ++i) values[i] = 300 + i;
  v = tensor_of(g_batch_memory, kF32, 1, world * nq, 0, values);
  /* [N, H, D] views of the same storage */
  q->dl.ndim = k->dl.ndim = v->dl.ndim = 3;
  q->shape[1] = q->shape[2] = k->shape[1] = k->shape[2] = v->shape[1] = v->shape[2] = 1;
  qh = tensor_new(g_batch_memory, kF32, 3, nq / 2, 1, 1);
  qt = tensor_new(g_batch_memory, kF32, 3, nq / 2, 1, 1);
  kh = tensor_new(g_batch_memory, kF32, 3, nq / 2 * (rank + 1), 1, 1);
  vh = tensor_new(g_batch_memory, kF32, 3, nq / 2 * (rank + 1), 1, 1);
  kt = tensor_new(g_batch_memory, kF32, 3, nq / 2 * (2 * world - rank), 1, 1);
  vt = tensor_new(g_batch_memory, kF32, 3, nq / 2 * (2 * world - rank), 1, 1);
  printf("  inputs: pcp_world_size 2, pcp_rank 0\n");
  print_tensor("query_start_loc (local)", qsl);
  print_tensor("q [Nq, H, Dq]", q);
  print_tensor("k [W*Nq, H, Dk]", k);
  print_tensor("v [W*Nq, H, Dv]", v);
  args.q = &q->dl;
  args.k = &k->dl;
  args.v = &v->dl;
  args.query_start_loc = &qsl->dl;
  args.pcp_world_size = world;
  args.pcp_rank = rank;
  args.q_head = &qh->dl;
  args.k_head = &kh->dl;
  args.v_head = &vh->dl;
  args.q_tail = &qt->dl;
  args.k_tail = &kt->dl;
  args.v_tail = &vt->dl;
  args.stream = g_stream;
  if (check(4, "cattn_fused_pcp_qkv_select", cattn_fused_pcp_qkv_select(&args))) {
    print_tensor("q_head", qh);
    print_tensor("k_head", kh);
    print_tensor("v_head", vh);
    print_tensor("q_tail", qt);
    print_tensor("k_tail", kt);
    print_tensor("v_tail", vt);
  }
}

/* ============================================================================================
 * 5. PCP all-gather + restore
 * ========================================================================================== */

/* Prints a call's status without counting it (pcp_kv_allgather_and_restore where it cannot run). */
static void print_status(const char* call, cattn_status_t status) {
  printf("  %s -> %s\n      message: \"%s\"\n", call, cattn_status_string(status),
         status == CATTN_OK ? "" : cattn_last_error_message());
}

/* On the GPU: a one-rank PCP group (W = 1) on the transcript's device, so the all-gather is the
 * rank's own rows and the restore index alone decides the output. On the host there is nothing
 * to gather with: the call shows what a host caller gets. */
static void transcript_pcp_kv_allgather_and_restore(void) {
  /* 6 tokens plus 2 rows of CUDA-graph padding; key row t, element d holds 500 + 10 t + d and
   * value row t 600 + 10 t + d, so every output row names the input row it came from. */
  enum { kRows = 8, kTokens = 6, kOutRows = 7, kHeads = 1, kHeadDim = 2 };
  static const int64_t kRestoreIdx[kOutRows] = {0, 1, 2, 3, 4, 5, 5};
  int64_t key_values[kRows * kHeads * kHeadDim], value_values[kRows * kHeads * kHeadDim], i;
  cattn_pcp_kv_allgather_and_restore_args_t args = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  const int on_device = g_batch_memory->device.device_type != kDLCPU;
  const int32_t device = g_batch_memory->device.device_id;
  transcript_tensor_t *key, *value, *idx, *key_out, *value_out;
  char call[96];
  cattn_comm_unique_id_t id;
  cattn_comm_t* comm = NULL;
  size_t workspace_size = 0;
  void* workspace = NULL;
  cattn_status_t st;
  section(5, "PCP all-gather + restore (pcp_kv_allgather_and_restore)");
  for (i = 0; i < kRows * kHeads * kHeadDim; ++i) {
    key_values[i] = 500 + 10 * (i / kHeadDim) + i % kHeadDim;
    value_values[i] = 600 + 10 * (i / kHeadDim) + i % kHeadDim;
  }
  key = tensor_of(g_batch_memory, kF32, 1, kRows * kHeads * kHeadDim, 0, key_values);
  value = tensor_of(g_batch_memory, kF32, 1, kRows * kHeads * kHeadDim, 0, value_values);
  /* [N, H, D] views of the same storage */
  key->dl.ndim = value->dl.ndim = 3;
  key->shape[0] = value->shape[0] = kRows;
  key->shape[1] = value->shape[1] = kHeads;
  key->shape[2] = value->shape[2] = kHeadDim;
  idx = tensor_of(g_batch_memory, kI32, 1, kOutRows, 0, kRestoreIdx);
  key_out = tensor_new(g_batch_memory, kF32, 3, kOutRows, kHeads, kHeadDim);
  value_out = tensor_new(g_batch_memory, kF32, 3, kOutRows, kHeads, kHeadDim);
  printf("  inputs: a PCP group of 1 rank (W = 1), num_actual_tokens %d (rows 6-7 are CUDA-graph "
         "padding);\n          key row t holds 500 + 10t + d, value row t 600 + 10t + d; "
         "restore_idx takes row 5\n          twice (rows may repeat)\n",
         (int)kTokens);
  print_tensor("key [N, H, D]", key);
  print_tensor("value [N, H, D]", value);
  print_tensor("restore_idx", idx);
  args.key = &key->dl;
  args.value = &value->dl;
  args.num_actual_tokens = kTokens;
  args.restore_idx = &idx->dl;
  args.key_out = &key_out->dl;
  args.value_out = &value_out->dl;
  args.stream = g_stream;

  if (!on_device) {
    printf("  This utility needs GPUs and NCCL (NCCL gathers device memory): not counted on the "
           "host.\n");
    st = cattn_pcp_kv_allgather_and_restore(&args);
    print_status("cattn_pcp_kv_allgather_and_restore(host tensors, comm NULL)", st);
    if (st != CATTN_OK) record_failure(5, st);
    g_not_counted[5] = "not counted on the host: needs GPUs and NCCL";
    return;
  }

  /* The first call that needs NCCL loads it: a machine without libnccl.so.2 says so here. */
  st = cattn_comm_get_unique_id(&id);
  if (st == CATTN_NOT_SUPPORTED) {
    print_status("cattn_comm_get_unique_id", st);
    printf("  NCCL could not be loaded: pcp_kv_allgather_and_restore is not counted (not a failure of the transcript).\n");
    record_failure(5, st);
    g_not_counted[5] = "not counted: NCCL could not be loaded";
    return;
  }
  if (!check(5, "cattn_comm_get_unique_id", st)) return;
  /* One rank: cattn_comm_create does not wait for any other. */
  snprintf(call, sizeof call, "cattn_comm_create(nranks 1, rank 0, cuda_device %d)",
           (int)device);
  if (!check(5, call, cattn_comm_create(&id, 1, 0, device, &comm))) return;
  args.comm = comm;
  if (check(5, "cattn_pcp_kv_allgather_and_restore_workspace_size",
            cattn_pcp_kv_allgather_and_restore_workspace_size(&args, &workspace_size))) {
    printf("      workspace = %" PRIu64 " bytes\n", (uint64_t)workspace_size);
    /* Device memory from the device layer (cudaMalloc: 256-byte aligned, as required). */
    if (workspace_size > 0) workspace = g_batch_memory->alloc(workspace_size);
    args.workspace = workspace;
    args.workspace_size = workspace_size;
    /* check() waits for the stream on success, so the outputs are complete when printed (and
     * print_tensor downloads them before it prints anything). */
    if (check(5, "cattn_pcp_kv_allgather_and_restore", cattn_pcp_kv_allgather_and_restore(&args))) {
      print_tensor("key_out [M, H, D]", key_out);
      print_tensor("value_out [M, H, D]", value_out);
    }
    /* The workspace must outlive the enqueued work, whatever the call returned. */
    device_sync();
    if (workspace != NULL) g_batch_memory->release(workspace);
  }
  cattn_comm_destroy(comm);
  printf("  cattn_comm_destroy\n");
}

/* ============================================================================================
 * 6. Causal-conv1d metadata
 * ========================================================================================== */

static void transcript_causal_conv1d_metadata(const transcript_batch_t* batch) {
  cattn_causal_conv1d_metadata_args_t args = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  int64_t tot = -1, capacity = -1;
  transcript_tensor_t *nums, *mlist, *offsets, *batch_ptr, *chunk_ptr;
  section(6, "Causal-conv1d metadata (compute_causal_conv1d_metadata)");
  printf("  inputs: query_start_loc_cpu (above), block_m 8\n");
  if (!check(6, "cattn_compute_causal_conv1d_metadata_size",
             cattn_compute_causal_conv1d_metadata_size(&batch->query_start_loc_cpu->dl, 8, &tot,
                                                       &capacity)))
    return;
  printf("      tot = %" PRId64 ", capacity = %" PRId64 "\n", tot, capacity);
  nums = tensor_new(g_batch_memory, kI32, 1, B, 0, 0);
  mlist = tensor_new(g_batch_memory, kI32, 1, tot, 0, 0);
  offsets = tensor_new(g_batch_memory, kI32, 1, tot, 0, 0);
  batch_ptr = tensor_new(g_batch_memory, kI32, 1, capacity, 0, 0);
  chunk_ptr = tensor_new(g_batch_memory, kI32, 1, capacity, 0, 0);
  args.query_start_loc_cpu = &batch->query_start_loc_cpu->dl;
  args.block_m = 8;
  args.nums = &nums->dl;
  args.mlist = &mlist->dl;
  args.offsetlist = &offsets->dl;
  args.batch_ptr = &batch_ptr->dl;
  args.token_chunk_offset_ptr = &chunk_ptr->dl;
  args.stream = g_stream;
  if (check(6, "cattn_compute_causal_conv1d_metadata",
            cattn_compute_causal_conv1d_metadata(&args))) {
    printf("      tot = %" PRId64 "\n", args.tot);
    print_tensor("nums", nums);
    print_tensor("mlist", mlist);
    print_tensor("offsetlist", offsets);
    print_tensor_head("batch_ptr", batch_ptr, tot + 3);
    print_tensor_head("token_chunk_offset_ptr", chunk_ptr, tot + 3);
  }
}

/* ============================================================================================
 * 7. Extend queries by n
 * ========================================================================================== */

static void transcript_extend_all_queries_by_n(const transcript_batch_t* batch) {
  cattn_common_attn_metadata_t in = batch_metadata(batch);
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_extend_all_queries_by_n_args_t args = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  int64_t qlens[B], slens[B], slots[64], n_slots, b;
  transcript_tensor_t *new_slots, *qsl, *qsl_cpu, *sl, *sl_cpu;
  section(7, "Extend queries (extend_all_queries_by_1, generalised to N)");
  /* The slot mapping of the extended batch (each request's new token included) is the
   * caller's, as in vLLM. */
  for (b = 0; b < B; ++b) {
    qlens[b] = kQueryLens[b] + 1;
    slens[b] = kSeqLens[b] + 1;
  }
  n_slots = fill_slot_mapping(qlens, slens, slots);
  new_slots = tensor_of(g_batch_memory, kI64, 1, n_slots, 0, slots);
  qsl = tensor_new(g_batch_memory, kI32, 1, B + 1, 0, 0);
  qsl_cpu = tensor_new(&kHostMemory, kI32, 1, B + 1, 0, 0);
  sl = tensor_new(g_batch_memory, kI32, 1, B, 0, 0);
  sl_cpu = tensor_new(&kHostMemory, kI32, 1, B, 0, 0);
  printf("  inputs: the batch, n = 1\n");
  print_tensor("new_slot_mapping", new_slots);
  out.query_start_loc = &qsl->dl;
  out.query_start_loc_cpu = &qsl_cpu->dl;
  out.seq_lens = &sl->dl;
  out.seq_lens_cpu = &sl_cpu->dl;
  args.metadata = &in;
  args.n = 1;
  args.new_slot_mapping = &new_slots->dl;
  args.out = &out;
  args.stream = g_stream;
  if (check(7, "cattn_extend_all_queries_by_n", cattn_extend_all_queries_by_n(&args))) {
    print_tensor("query_start_loc", qsl);
    print_tensor("query_start_loc_cpu", qsl_cpu);
    print_tensor("seq_lens", sl);
    print_tensor("seq_lens_cpu", sl_cpu);
    print_scalars(&out);
    printf("    slot_mapping is new_slot_mapping: %s\n",
           out.slot_mapping == &new_slots->dl ? "yes" : "NO");
  }
}

/* ============================================================================================
 * 8. KV-sharing fast-prefill metadata
 * ========================================================================================== */

static void transcript_fast_prefill(const transcript_batch_t* batch) {
  cattn_common_attn_metadata_t in = batch_metadata(batch);
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_fast_prefill_metadata_args_t args = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  transcript_tensor_t* qsl = tensor_new(g_batch_memory, kI32, 1, B + 1, 0, 0);
  transcript_tensor_t* qsl_cpu = tensor_new(&kHostMemory, kI32, 1, B + 1, 0, 0);
  transcript_tensor_t* max_total = tensor_new(g_batch_memory, kI32, 1, 2, 0, 0);
  const int on_device = g_batch_memory->device.device_type != kDLCPU;
  section(8, "KV-sharing fast-prefill metadata (make_kv_sharing_fast_prefill_common_attn_metadata)");
  printf("  inputs: the batch's query_start_loc and its first %" PRId64
         " logits_indices_padded entries\n",
         batch->num_logits_indices);
  out.query_start_loc = &qsl->dl;
  /* The CUDA path never waits for the device, so it neither fills this host mirror (it must be
   * NULL there) nor knows max_query_len and num_actual_tokens (set to -1; their values are in
   * decode_max_and_total). */
  if (on_device) out.query_start_loc_cpu = NULL;
  else out.query_start_loc_cpu = &qsl_cpu->dl;
  args.metadata = &in;
  args.out = &out;
  args.decode_max_and_total = &max_total->dl;
  args.stream = g_stream;
  if (check(8, "cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
            cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&args))) {
    if (on_device) {
      /* What a caller does once the stream is done: read the values back from the device. */
      unsigned char* host = tensor_download(max_total);
      tensor_copy(qsl_cpu, qsl);
      printf("      (CUDA path: the call left query_start_loc_cpu unset and max_query_len = "
             "%" PRId64 ", num_actual_tokens = %" PRId64 ";\n"
             "       the transcript copied them back from query_start_loc and decode_max_and_total)\n",
             out.max_query_len, out.num_actual_tokens);
      out.max_query_len = (int64_t)host_value(max_total, host, 0);
      out.num_actual_tokens = (int64_t)host_value(max_total, host, 1);
      free(host);
    }
    print_tensor("decode query_start_loc", qsl);
    print_tensor("decode query_start_loc_cpu", qsl_cpu);
    print_tensor("decode_max_and_total", max_total);
    print_scalars(&out);
    printf("    passthrough %d\n", (int)args.passthrough);
  }
}

/* ============================================================================================
 * 9. Local-attention virtual batches
 * ========================================================================================== */

static void transcript_local_attention(const transcript_batch_t* batch) {
  cattn_common_attn_metadata_t in = batch_metadata(batch);
  cattn_local_attention_args_t args = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  cattn_local_attention_fill_args_t fill = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  int64_t vb = 0, pages = 0, i, shifted[B * BLOCKS_PER_REQ];
  transcript_tensor_t *qsl_cpu, *qsl, *sl_cpu, *sl, *computed, *table, *new_table, *regathered;
  section(9, "Local-attention virtual batches (make_local_attention_virtual_batches)");
  printf("  inputs: the batch, attn_chunk_size 8, block_size 4\n");
  args.attn_chunk_size = 8;
  args.block_size = KV_BLOCK;
  args.metadata = &in;
  if (!check(9, "cattn_make_local_attention_virtual_batches",
             cattn_make_local_attention_virtual_batches(&args)))
    return;
  if (!check(9, "cattn_local_attention_plan_get_shape",
             cattn_local_attention_plan_get_shape(args.plan, &vb, &pages))) {
    cattn_local_attention_plan_destroy(args.plan);
    return;
  }
  printf("      virtual batches = %" PRId64 ", pages per virtual batch = %" PRId64 "\n", vb, pages);
  qsl_cpu = tensor_new(&kHostMemory, kI32, 1, vb + 1, 0, 0);
  qsl = tensor_new(g_batch_memory, kI32, 1, vb + 1, 0, 0);
  sl_cpu = tensor_new(&kHostMemory, kI32, 1, vb, 0, 0);
  sl = tensor_new(g_batch_memory, kI32, 1, vb, 0, 0);
  computed = tensor_new(&kHostMemory, kI32, 1, vb, 0, 0);
  table = tensor_new(g_batch_memory, kI32, 2, vb, pages, 0);
  out.query_start_loc_cpu = &qsl_cpu->dl;
  out.query_start_loc = &qsl->dl;
  out.seq_lens_cpu = &sl_cpu->dl;
  out.seq_lens = &sl->dl;
  out.num_computed_tokens_cpu = &computed->dl;
  out.block_table_tensor = &table->dl;
  fill.metadata = &in;
  fill.out = &out;
  fill.stream = g_stream;
  if (check(9, "cattn_local_attention_plan_fill", cattn_local_attention_plan_fill(args.plan, &fill))) {
    print_tensor("query_start_loc_cpu", qsl_cpu);
    print_tensor("query_start_loc", qsl);
    print_tensor("seq_lens_cpu", sl_cpu);
    print_tensor("seq_lens", sl);
    print_tensor("num_computed_tokens_cpu", computed);
    print_tensor("block_table_tensor", table);
    print_scalars(&out);
  }
  /* The plan is vLLM's make_block_table closure: the same gather applied to a new table. */
  for (i = 0; i < B * BLOCKS_PER_REQ; ++i) shifted[i] = batch->block_table[i] + 1000;
  new_table = tensor_of(g_batch_memory, kI32, 2, B, BLOCKS_PER_REQ, shifted);
  regathered = tensor_new(g_batch_memory, kI32, 2, vb, pages, 0);
  if (check(9, "cattn_local_attention_plan_make_block_table(block table + 1000)",
            cattn_local_attention_plan_make_block_table(args.plan, &new_table->dl,
                                                        &regathered->dl, g_stream)))
    print_tensor("re-gathered block table", regathered);
  cattn_local_attention_plan_destroy(args.plan);
}

/* ============================================================================================
 * 10. Mamba block table
 * ========================================================================================== */

static void transcript_mamba_block_table(const transcript_batch_t* batch) {
  cattn_mamba_block_table_args_t args = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  transcript_tensor_t* out = tensor_new(g_batch_memory, kI32, 2, B, 2, 0);
  section(10, "Mamba block table (mamba_get_block_table_tensor)");
  printf("  inputs: block_table_tensor and seq_lens (above), mode align, block_size 4, "
         "num_speculative_blocks 1\n");
  args.block_table = &batch->block_table_tensor->dl;
  args.seq_lens = &batch->seq_lens->dl;
  args.block_size = KV_BLOCK;
  args.num_speculative_blocks = 1;
  args.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_ALIGN;
  args.out = &out->dl;
  args.stream = g_stream;
  if (check(10, "cattn_mamba_get_block_table_tensor(align)",
            cattn_mamba_get_block_table_tensor(&args)))
    print_tensor("block table for Mamba", out);
}

/* ============================================================================================
 * 11. Per-layer parameters
 * ========================================================================================== */

static void print_params(const char* label, const cattn_per_layer_parameters_t* p) {
  printf("    %-8s window_left %" PRId64 ", logits_soft_cap %s", label, p->window_left,
         p->has_logits_soft_cap ? "" : "None");
  if (p->has_logits_soft_cap) printf("%g", p->logits_soft_cap);
  printf(", sm_scale %g, has_sinks %d\n", p->sm_scale, (int)p->has_sinks);
}

static void transcript_per_layer_parameters(void) {
  cattn_attention_layer_desc_t layers[3];
  cattn_per_layer_parameters_t params[3];
  cattn_global_hyperparameters_t global = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  int i;
  section(11, "Per-layer parameters (get_per_layer_parameters, infer_global_hyperparameters)");
  for (i = 0; i < 3; ++i) {
    cattn_attention_layer_desc_t d = CATTN_ATTENTION_LAYER_DESC_INIT;
    cattn_per_layer_parameters_t p = CATTN_PER_LAYER_PARAMETERS_INIT;
    d.scale = 0.125;
    layers[i] = d;
    params[i] = p;
  }
  /* Layers 0 and 2: sliding window (4095, 0); layer 1: global attention with a soft cap. */
  layers[0].has_sliding_window = layers[2].has_sliding_window = 1;
  layers[0].sliding_window_left = layers[2].sliding_window_left = 4095;
  layers[1].has_logits_soft_cap = 1;
  layers[1].logits_soft_cap = 30.0;
  printf("  inputs: layer 0 and 2 - sliding_window (4095, 0), no soft cap, scale 0.125;\n"
         "          layer 1 - no window, logits_soft_cap 30, scale 0.125\n");
  if (!check(11, "cattn_get_per_layer_parameters", cattn_get_per_layer_parameters(layers, 3, params)))
    return;
  print_params("layer 0", &params[0]);
  print_params("layer 1", &params[1]);
  print_params("layer 2", &params[2]);
  if (check(11, "cattn_infer_global_hyperparameters(layers 0-2)",
            cattn_infer_global_hyperparameters(params, 3, &global)))
    printf("    global: window_left %" PRId64 ", sm_scale %g, has_same_window_lefts %d, "
           "has_same_all_params %d\n",
           global.window_left, global.sm_scale, (int)global.has_same_window_lefts,
           (int)global.has_same_all_params);
  params[1] = params[2];
  if (check(11, "cattn_infer_global_hyperparameters(layers 0, 2, 2)",
            cattn_infer_global_hyperparameters(params, 3, &global)))
    printf("    global: window_left %" PRId64 ", sm_scale %g, has_same_window_lefts %d, "
           "has_same_all_params %d\n",
           global.window_left, global.sm_scale, (int)global.has_same_window_lefts,
           (int)global.has_same_all_params);
}

/* ============================================================================================
 * 12. KV-cache layout resolver
 * ========================================================================================== */

/* The canonical name of a layout ("?" for a value that is not one). */
static const char* layout_name(cattn_kv_cache_layout_t layout) {
  cattn_kv_cache_layout_properties_t props = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
  if (cattn_kv_cache_layout_get_properties(layout, &props) != CATTN_OK) return "?";
  return props.name;
}

static void print_layouts(const char* label, const cattn_kv_cache_layout_t* layouts, int64_t n) {
  int64_t i;
  printf("      %s", label);
  for (i = 0; i < n; ++i) printf("%s%s", i > 0 ? ", " : "", layout_name(layouts[i]));
  printf("\n");
}

static void print_ints(const char* label, const int64_t* values, int n) {
  int i;
  printf("%s[", label);
  for (i = 0; i < n; ++i) printf("%s%" PRId64, i > 0 ? ", " : "", values[i]);
  printf("]");
}

/* Resolves `names` (the supported list of both workers) in a fresh context, or in `ctx` when
 * it is not NULL; returns the layout, UNSET when the call failed. */
static cattn_kv_cache_layout_t resolve_kv_layout(cattn_context_t* ctx, const char* const* names,
                                                 int64_t n, const char* connector,
                                                 const char* what) {
  cattn_resolve_kv_cache_layout_args_t args = CATTN_RESOLVE_KV_CACHE_LAYOUT_ARGS_INIT;
  const char* both[2 * CATTN_KV_CACHE_LAYOUT_COUNT];
  int64_t counts[2];
  cattn_context_t* own = NULL;
  char call[160];
  int64_t i;
  for (i = 0; i < n; ++i) both[i] = both[n + i] = names[i];
  counts[0] = counts[1] = n;
  args.num_workers = 2;
  args.worker_counts = counts;
  args.worker_names = both;
  args.connector_layout = connector; /* read_environment stays 0, env_value NULL */
  if (ctx == NULL) {
    if (!check(12, "cattn_context_create", cattn_context_create(&own))) return CATTN_KV_CACHE_LAYOUT_UNSET;
    ctx = own;
  }
  snprintf(call, sizeof call, "cattn_resolve_kv_cache_layout(%s)", what);
  if (check(12, call, cattn_resolve_kv_cache_layout(ctx, &args)))
    printf("      layout = %s, connector_fell_back %d, from_preset %d\n", layout_name(args.layout),
           (int)args.connector_fell_back, (int)args.from_preset);
  else
    args.layout = CATTN_KV_CACHE_LAYOUT_UNSET;
  if (own != NULL) cattn_context_destroy(own);
  return args.layout;
}

static void transcript_kv_cache_layout_resolver(void) {
  /* Backend A prefers BLHNC, backend B LBNHC; backend C declares nothing (any layout). */
  static const cattn_kv_cache_layout_t kDeclared[] = {
      CATTN_KV_CACHE_LAYOUT_BLHNC, CATTN_KV_CACHE_LAYOUT_LBHNC, CATTN_KV_CACHE_LAYOUT_LBNHC,
      CATTN_KV_CACHE_LAYOUT_LBNHC, CATTN_KV_CACHE_LAYOUT_BLHNC, CATTN_KV_CACHE_LAYOUT_LBHNC,
      CATTN_KV_CACHE_LAYOUT_BLNHC};
  static const int64_t kCounts[3] = {3, 4, CATTN_KV_CACHE_LAYOUTS_NONE};
  cattn_get_supported_kv_cache_layouts_args_t sup = CATTN_GET_SUPPORTED_KV_CACHE_LAYOUTS_ARGS_INIT;
  cattn_kv_cache_layout_t supported[CATTN_KV_CACHE_LAYOUT_COUNT];
  const char* names[CATTN_KV_CACHE_LAYOUT_COUNT];
  cattn_kv_cache_layout_t chosen;
  cattn_context_t* ctx = NULL;
  int64_t i;
  section(12, "KV-cache layout resolver (resolve_kv_cache_layout, get_supported_kv_cache_layouts)");
  printf("  inputs: backend A declares BLHNC, LBHNC, LBNHC; backend B LBNHC, BLHNC, LBHNC, BLNHC;\n"
         "          backend C declares nothing; two workers with the same backends\n");
  sup.num_backends = 3;
  sup.backend_counts = kCounts;
  sup.layouts = kDeclared;
  sup.out = supported;
  sup.out_capacity = CATTN_KV_CACHE_LAYOUT_COUNT;
  if (!check(12, "cattn_get_supported_kv_cache_layouts(A, B, C)",
             cattn_get_supported_kv_cache_layouts(&sup)))
    return;
  print_layouts("supported = ", supported, sup.num_out);
  printf("      (the layouts A and B share, by first-choice votes, ties in vLLM's order)\n");
  for (i = 0; i < sup.num_out; ++i) names[i] = layout_name(supported[i]);
  if (!check(12, "cattn_context_create", cattn_context_create(&ctx))) return;
  resolve_kv_layout(ctx, names, sup.num_out, NULL, "no preset, setting or connector");
  resolve_kv_layout(ctx, names, sup.num_out, "BLHNC", "same context, connector BLHNC");
  cattn_context_destroy(ctx);
  chosen = resolve_kv_layout(NULL, names, sup.num_out, "BLHNC", "new context, connector BLHNC");
  resolve_kv_layout(NULL, names, sup.num_out, "LHBNC", "new context, connector LHBNC");
  if (chosen != CATTN_KV_CACHE_LAYOUT_UNSET) {
    cattn_kv_cache_layout_properties_t props = CATTN_KV_CACHE_LAYOUT_PROPERTIES_INIT;
    cattn_kv_cache_layout_strides_args_t strides = CATTN_KV_CACHE_LAYOUT_STRIDES_ARGS_INIT;
    const char* flashinfer = NULL;
    int64_t order[5];
    if (check(12, "cattn_kv_cache_layout_get_properties(BLHNC)",
              cattn_kv_cache_layout_get_properties(chosen, &props))) {
      for (i = 0; i < 5; ++i) order[i] = props.stride_order[i];
      print_ints("      stride_order ", order, 5);
      for (i = 0; i < 4; ++i) order[i] = props.layer_view_order[i];
      print_ints(", layer_view_order ", order, 4);
      printf("\n      is_layer_compact %d, is_block_contiguous %d, is_block_compact %d, "
             "is_block_outermost %d\n",
             (int)props.is_layer_compact, (int)props.is_block_contiguous,
             (int)props.is_block_compact, (int)props.is_block_outermost);
    }
    if (check(12, "cattn_get_flashinfer_layout_string(BLHNC)",
              cattn_get_flashinfer_layout_string(chosen, &flashinfer)))
      printf("      flashinfer layout = %s\n", flashinfer);
    strides.layout = chosen;
    strides.sizes[0] = 2; /* L */
    strides.sizes[1] = 3; /* B */
    strides.sizes[2] = 4; /* H */
    strides.sizes[3] = KV_BLOCK; /* N */
    strides.sizes[4] = 8; /* C */
    if (check(12, "cattn_kv_cache_layout_strides(BLHNC, [L, B, H, N, C] = [2, 3, 4, 4, 8])",
              cattn_kv_cache_layout_strides(&strides))) {
      print_ints("      strides ", strides.strides, 5);
      print_ints(", physical_shape ", strides.physical_shape, 5);
      printf(", numel %" PRId64 "\n", strides.numel);
    }
  }
  {
    const char* flashinfer = NULL;
    check_expected_error(12, "cattn_get_flashinfer_layout_string(LHBNC; vLLM asserts)",
                         cattn_get_flashinfer_layout_string(CATTN_KV_CACHE_LAYOUT_LHBNC, &flashinfer),
                         CATTN_NOT_SUPPORTED);
  }
}

/* ============================================================================================
 * 13. Batch split and reorder
 * ========================================================================================== */

static void print_split(const cattn_split_decodes_and_prefills_args_t* s) {
  printf("      num_decodes %" PRId64 ", num_prefills %" PRId64 ", num_decode_tokens %" PRId64
         ", num_prefill_tokens %" PRId64 "\n",
         s->num_decodes, s->num_prefills, s->num_decode_tokens, s->num_prefill_tokens);
}

static void print_split3(const cattn_split_decodes_prefills_and_extends_args_t* s) {
  printf("      num_decodes %" PRId64 ", num_extends %" PRId64 ", num_prefills %" PRId64
         ", num_decode_tokens %" PRId64 ", num_extend_tokens %" PRId64
         ", num_prefill_tokens %" PRId64 "\n",
         s->num_decodes, s->num_extends, s->num_prefills, s->num_decode_tokens,
         s->num_extend_tokens, s->num_prefill_tokens);
}

/* Splits the host batch (qsl_cpu, seq_lens_cpu) two ways at `threshold`. */
static void split_batch(const transcript_tensor_t* qsl_cpu, const transcript_tensor_t* seq_lens_cpu,
                        int64_t num_tokens, int64_t max_query_len, int64_t threshold,
                        const char* what) {
  cattn_split_decodes_and_prefills_args_t two = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
  cattn_split_decodes_prefills_and_extends_args_t three =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
  char call[160];
  two.query_start_loc_cpu = &qsl_cpu->dl;
  two.num_reqs = B;
  two.num_actual_tokens = num_tokens;
  two.max_query_len = max_query_len;
  two.decode_threshold = threshold;
  snprintf(call, sizeof call, "cattn_split_decodes_and_prefills(%s, threshold %" PRId64 ")", what,
           threshold);
  if (check(13, call, cattn_split_decodes_and_prefills(&two))) print_split(&two);
  three.query_start_loc_cpu = &qsl_cpu->dl;
  three.seq_lens_cpu_upper_bound = &seq_lens_cpu->dl;
  three.num_reqs = B;
  three.num_actual_tokens = num_tokens;
  three.max_query_len = max_query_len;
  three.decode_threshold = threshold;
  snprintf(call, sizeof call, "cattn_split_decodes_prefills_and_extends(%s, threshold %" PRId64 ")",
           what, threshold);
  if (check(13, call, cattn_split_decodes_prefills_and_extends(&three))) print_split3(&three);
}

static void transcript_split_and_reorder(const transcript_batch_t* batch) {
  /* The prompts of requests 1 and 2 go on past what is computed so far (chunked prefills);
   * request 3 computed its 20-token prompt and 12 generated tokens. */
  static const int64_t kPromptLens[B] = {16, 24, 32, 20};
  static const char* const kRegions[4] = {"decode", "short extend", "long extend", "prefill"};
  cattn_reorder_batch_args_t reorder = CATTN_REORDER_BATCH_ARGS_INIT;
  cattn_split_prefill_chunks_args_t chunks_args = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
  int64_t computed[B], qsl[B + 1], slens[B], prefill_lens[B], swaps[2 * (B - 1)];
  int64_t b, i, max_q = 0, num_prefill = 0, num_decodes = 0;
  transcript_tensor_t *scheduled_t, *computed_t, *prompt_t, *index_map, *swaps_t, *new_qsl, *new_sl;
  transcript_tensor_t *prefill_t, *chunks;
  const unsigned char* host;
  cattn_status_t status;
  section(13, "Batch split (split_decodes_and_prefills, split_decodes_prefills_and_extends, "
              "split_prefill_chunks, reorder_batch_to_split_decodes_and_prefills)");
  printf("  inputs: query_start_loc_cpu and seq_lens_cpu (above); the batch starts with a "
         "prefill, not in vLLM's order\n");
  split_batch(batch->query_start_loc_cpu, batch->seq_lens_cpu, batch->num_tokens,
              batch->max_query_len, 1, "the batch");

  for (b = 0; b < B; ++b) computed[b] = kSeqLens[b] - kQueryLens[b];
  scheduled_t = tensor_of(&kHostMemory, kI64, 1, B, 0, kQueryLens);
  computed_t = tensor_of(&kHostMemory, kI64, 1, B, 0, computed);
  prompt_t = tensor_of(&kHostMemory, kI64, 1, B, 0, kPromptLens);
  index_map = tensor_new(&kHostMemory, kI64, 1, B, 0, 0);
  swaps_t = tensor_new(&kHostMemory, kI64, 2, B - 1, 2, 0);
  printf("  reorder inputs: num_prompt_tokens as below, decode_threshold 1\n");
  print_tensor("num_scheduled_tokens", scheduled_t);
  print_tensor("num_computed_tokens", computed_t);
  print_tensor("num_prompt_tokens", prompt_t);
  reorder.num_scheduled_tokens = &scheduled_t->dl;
  reorder.num_computed_tokens = &computed_t->dl;
  reorder.num_prompt_tokens = &prompt_t->dl;
  reorder.decode_threshold = 1;
  reorder.index_map = &index_map->dl;
  reorder.swaps = &swaps_t->dl;
  if (!check(13, "cattn_reorder_batch_to_split_decodes_and_prefills",
             cattn_reorder_batch_to_split_decodes_and_prefills(&reorder)))
    return;
  print_tensor("index_map", index_map);
  memcpy(swaps, swaps_t->dl.data, sizeof swaps);
  printf("      changed %d, swaps", (int)reorder.changed);
  if (reorder.num_swaps == 0) printf(" none");
  for (i = 0; i < reorder.num_swaps; ++i)
    printf("%s (%" PRId64 ", %" PRId64 ")", i > 0 ? "," : "", swaps[2 * i], swaps[2 * i + 1]);
  printf("\n      regions: %s %" PRId64 ", %s %" PRId64 ", %s %" PRId64 ", %s %" PRId64 "\n",
         kRegions[0], reorder.num_decodes, kRegions[1], reorder.num_short_extends, kRegions[2],
         reorder.num_long_extends, kRegions[3], reorder.num_prefills);

  /* What the engine then does: the batch in the new order (request index_map[i] at i). */
  host = (const unsigned char*)index_map->dl.data;
  qsl[0] = 0;
  for (i = 0; i < B; ++i) {
    const int64_t from = (int64_t)host_value(index_map, host, i);
    qsl[i + 1] = qsl[i] + kQueryLens[from];
    slens[i] = kSeqLens[from];
    if (kQueryLens[from] > max_q) max_q = kQueryLens[from];
  }
  new_qsl = tensor_of(&kHostMemory, kI32, 1, B + 1, 0, qsl);
  new_sl = tensor_of(&kHostMemory, kI32, 1, B, 0, slens);
  printf("  the batch reordered by index_map:\n");
  print_tensor("query_start_loc_cpu", new_qsl);
  print_tensor("seq_lens_cpu", new_sl);
  split_batch(new_qsl, new_sl, qsl[B], max_q, 1, "reordered");
  split_batch(new_qsl, new_sl, qsl[B], max_q, 4, "reordered");

  /* The requests after the decodes, chunked for a 32-token workspace (MLA's chunked context). */
  num_decodes = reorder.num_decodes;
  for (i = num_decodes; i < B; ++i) prefill_lens[num_prefill++] = slens[i];
  prefill_t = tensor_of(&kHostMemory, kI64, 1, num_prefill, 0, prefill_lens);
  printf("  chunk inputs: the seq_lens after the decodes, workspace_size 32, request_offset %" PRId64
         "\n",
         num_decodes);
  print_tensor("seq_lens_cpu", prefill_t);
  chunks_args.seq_lens_cpu = &prefill_t->dl;
  chunks_args.workspace_size = 32;
  chunks_args.request_offset = num_decodes;
  /* The size query (chunks NULL), then the fill. */
  status = cattn_split_prefill_chunks(&chunks_args);
  chunks = tensor_new(&kHostMemory, kI64, 2, chunks_args.num_chunks, 2, 0);
  if (status == CATTN_OK) {
    chunks_args.chunks = &chunks->dl;
    status = cattn_split_prefill_chunks(&chunks_args);
  }
  if (check(13, "cattn_split_prefill_chunks", status)) print_tensor("chunks [start, end)", chunks);
}

/* ============================================================================================
 * 14. Step inputs (1.2)
 * ========================================================================================== */

/* The step of the 1.2 sections: the batch above as model runner v2 (MRV2) keeps it, plus a
 * fifth request, a decode with 2 drafts, in a CUDA-graph bucket of 6 batch rows whose last is
 * padding, over 6 persistent request rows (persistent row 4 holds a request that is not
 * scheduled this step):
 *
 *   batch row             0     1     2     3     4     5 (padding: never read)
 *   persistent row        2     5     0     3     1     -
 *   num_computed_tokens   0     6     9     32    20    -
 *   scheduled tokens      16    4     8     1     3     -
 *   drafts                0     0     0     0     2     -
 *
 * Two KV-cache groups: group 0 has blocks of 4 tokens and batch row b's blocks are 10b + j (the
 * batch above's table), group 1 blocks of 8 and blocks 100 + 10b + j. Rows 0-2 are prompt
 * chunks (seq_len <= prefill_len), whose input ids the engine wrote (request b's token at
 * position p is 100 (b + 1) + p); rows 3 and 4 are decodes, whose ids the combine call writes. */
#define STEP_ROWS 6
#define STEP_LIVE 5
#define STEP_PERSISTENT 6
#define STEP_TOKEN_CAP 36
#define STEP_LOGIT_CAP 8
#define STEP_W0 10
#define STEP_W1 5
#define STEP_MAX_DRAFTS 2
static const int64_t kStepScheduled[STEP_ROWS] = {16, 4, 8, 1, 3, 7};
static const int64_t kStepIdxMapping[STEP_ROWS] = {2, 5, 0, 3, 1, 4};
static const int64_t kStepDrafts[STEP_ROWS] = {0, 0, 0, 0, 2, 0};
/* Per persistent row: the batch row it is this step (5: none), its computed tokens, the group-0
 * blocks in use (cdiv(seq_len, 4)) and its prompt length. */
static const int64_t kStepOwner[STEP_PERSISTENT] = {2, 4, 0, 3, 5, 1};
static const int64_t kStepComputed[STEP_PERSISTENT] = {9, 20, 0, 32, 12, 6};
static const int64_t kStepNumBlocks0[STEP_PERSISTENT] = {5, 6, 4, 9, 3, 3};
static const int64_t kStepPrefillLen[STEP_PERSISTENT] = {32, 18, 16, 20, 30, 24};
/* Persistent row 1's drafts; persistent row r's last sampled token is 900 + r. */
static const int64_t kStepDraftTokens[2] = {960, 961};

/* The live rows' query_start_loc, positions and input ids: the prompt tokens of the prompt
 * chunks and, with `combined`, each decode row's last sampled token and drafts (what
 * cattn_combine_sampled_and_draft_tokens writes), else 0 there. Returns the live tokens. */
static int64_t step_tokens(int64_t* qsl, int64_t* positions, int64_t* ids, int combined) {
  int64_t b, j, n = 0;
  qsl[0] = 0;
  for (b = 0; b < STEP_LIVE; ++b) {
    const int64_t r = kStepIdxMapping[b], nct = kStepComputed[r], q = kStepScheduled[b];
    const int decode = nct + q > kStepPrefillLen[r];
    for (j = 0; j < q; ++j, ++n) {
      positions[n] = nct + j;
      if (!decode)
        ids[n] = 100 * (b + 1) + nct + j;
      else if (!combined)
        ids[n] = 0;
      else if (j < q - kStepDrafts[b])
        ids[n] = 900 + r;
      else
        ids[n] = kStepDraftTokens[j - (q - kStepDrafts[b])];
    }
    qsl[b + 1] = n;
  }
  return n;
}

static void transcript_step_inputs(void) {
  const int64_t num_reqs_value = STEP_LIVE;
  int64_t table0[STEP_PERSISTENT * STEP_W0], table1[STEP_PERSISTENT * STEP_W1];
  int64_t last[STEP_PERSISTENT], draft_tokens[STEP_PERSISTENT * STEP_MAX_DRAFTS];
  int64_t ids[STEP_TOKEN_CAP], positions[STEP_TOKEN_CAP], qsl[STEP_LIVE + 1];
  int64_t minus_one[STEP_ROWS * STEP_W0], r, j;
  cattn_step_inputs_size_args_t size = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  cattn_prepare_pos_seq_lens_args_t prep = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  cattn_gather_block_tables_args_t gather = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  cattn_compute_slot_mappings_args_t sm = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  cattn_combine_sampled_and_draft_tokens_args_t comb =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  cattn_step_batch_check_args_t bc = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  transcript_tensor_t *sched, *idx, *computed, *num_reqs, *drafts, *t0, *nb0, *t1, *prefill;
  transcript_tensor_t *last_t, *drafts_t, *ids_t, *sched_cpu, *num_reqs_cpu, *drafts_cpu;
  transcript_tensor_t *qsl_t, *seq_lens, *positions_t, *batch_nct, *g0, *g1, *s0, *s1;
  transcript_tensor_t *logits, *cu_logits, *exp_idx, *exp_pos, *status;
  section(14, "Step inputs, 1.2 (step_inputs_size, prepare_pos_seq_lens, gather_block_tables, "
              "compute_slot_mappings, combine_sampled_and_draft_tokens, step_batch_check)");
  for (r = 0; r < STEP_PERSISTENT; ++r) {
    for (j = 0; j < STEP_W0; ++j) table0[r * STEP_W0 + j] = 10 * kStepOwner[r] + j;
    for (j = 0; j < STEP_W1; ++j) table1[r * STEP_W1 + j] = 100 + 10 * kStepOwner[r] + j;
    for (j = 0; j < STEP_MAX_DRAFTS; ++j)
      draft_tokens[r * STEP_MAX_DRAFTS + j] = r == kStepIdxMapping[4] ? kStepDraftTokens[j] : 0;
    last[r] = 900 + r;
  }
  for (j = 0; j < STEP_ROWS * STEP_W0; ++j) minus_one[j] = -1;
  memset(ids, 0, sizeof ids);
  step_tokens(qsl, positions, ids, 0);

  sched = tensor_of(g_batch_memory, kI32, 1, STEP_ROWS, 0, kStepScheduled);
  idx = tensor_of(g_batch_memory, kI32, 1, STEP_ROWS, 0, kStepIdxMapping);
  drafts = tensor_of(g_batch_memory, kI32, 1, STEP_ROWS, 0, kStepDrafts);
  num_reqs = tensor_of(g_batch_memory, kI32, 1, 1, 0, &num_reqs_value);
  computed = tensor_of(g_batch_memory, kI32, 1, STEP_PERSISTENT, 0, kStepComputed);
  t0 = tensor_of(g_batch_memory, kI32, 2, STEP_PERSISTENT, STEP_W0, table0);
  nb0 = tensor_of(g_batch_memory, kI32, 1, STEP_PERSISTENT, 0, kStepNumBlocks0);
  t1 = tensor_of(g_batch_memory, kI32, 2, STEP_PERSISTENT, STEP_W1, table1);
  prefill = tensor_of(g_batch_memory, kI32, 1, STEP_PERSISTENT, 0, kStepPrefillLen);
  last_t = tensor_of(g_batch_memory, kI32, 1, STEP_PERSISTENT, 0, last);
  drafts_t = tensor_of(g_batch_memory, kI32, 2, STEP_PERSISTENT, STEP_MAX_DRAFTS, draft_tokens);
  ids_t = tensor_of(g_batch_memory, kI32, 1, STEP_TOKEN_CAP, 0, ids);
  /* The size query reads host copies of the counts. */
  sched_cpu = tensor_of(&kHostMemory, kI32, 1, STEP_ROWS, 0, kStepScheduled);
  num_reqs_cpu = tensor_of(&kHostMemory, kI32, 1, 1, 0, &num_reqs_value);
  drafts_cpu = tensor_of(&kHostMemory, kI32, 1, STEP_ROWS, 0, kStepDrafts);
  printf("  inputs: a CUDA-graph bucket of 6 batch rows with num_reqs 5 live (row 5 is padding: "
         "its entries\n          are never read), 6 persistent request rows (row 4 is not "
         "scheduled this step)\n");
  print_tensor("num_reqs", num_reqs);
  print_tensor("num_scheduled_tokens", sched);
  print_tensor("idx_mapping", idx);
  print_tensor("num_draft_tokens", drafts);
  print_tensor("num_computed_tokens", computed);
  print_tensor("prefill_len", prefill);
  print_tensor("last_sampled_tokens", last_t);
  print_tensor("draft_tokens", drafts_t);
  print_tensor("block_table (group 0)", t0);
  print_tensor("num_blocks (group 0)", nb0);
  print_tensor("block_table (group 1)", t1);
  print_tensor("input_ids (prompt tokens)", ids_t);

  size.num_scheduled_tokens = &sched_cpu->dl;
  size.num_reqs = &num_reqs_cpu->dl;
  size.num_draft_tokens = &drafts_cpu->dl;
  if (!check(14, "cattn_step_inputs_size", cattn_step_inputs_size(&size))) return;
  printf("      num_tokens = %" PRId64 ", num_logits = %" PRId64 "; the outputs are sized for the "
         "bucket: %d tokens, %d logits\n",
         size.num_tokens, size.num_logits, STEP_TOKEN_CAP, STEP_LOGIT_CAP);
  if (size.num_tokens > STEP_TOKEN_CAP || size.num_logits > STEP_LOGIT_CAP) {
    printf("      the bucket is too small for the step\n");
    record_failure(14, CATTN_INSUFFICIENT_SIZE);
    return;
  }

  qsl_t = tensor_new(g_batch_memory, kI32, 1, STEP_ROWS + 1, 0, 0);
  seq_lens = tensor_new(g_batch_memory, kI32, 1, STEP_ROWS, 0, 0);
  positions_t = tensor_new(g_batch_memory, kI32, 1, STEP_TOKEN_CAP, 0, 0);
  batch_nct = tensor_new(g_batch_memory, kI32, 1, STEP_ROWS, 0, 0);
  prep.num_scheduled_tokens = &sched->dl;
  prep.idx_mapping = &idx->dl;
  prep.num_computed_tokens = &computed->dl;
  prep.num_reqs = &num_reqs->dl;
  prep.query_start_loc = &qsl_t->dl;
  prep.seq_lens = &seq_lens->dl;
  prep.positions = &positions_t->dl;
  prep.batch_num_computed_tokens = &batch_nct->dl;
  prep.stream = g_stream;
  if (!check(14, "cattn_prepare_pos_seq_lens", cattn_prepare_pos_seq_lens(&prep))) return;
  print_tensor("query_start_loc", qsl_t);
  print_tensor("seq_lens", seq_lens);
  print_tensor("positions", positions_t);
  print_tensor("batch_num_computed_tokens", batch_nct);

  /* The gathered tables start as -1: entries past a row's num_blocks are left as they are. */
  g0 = tensor_of(g_batch_memory, kI32, 2, STEP_ROWS, STEP_W0, minus_one);
  g1 = tensor_of(g_batch_memory, kI32, 2, STEP_ROWS, STEP_W1, minus_one);
  printf("  the batch tables start as -1 (entries past a row's num_blocks are left as they are)\n");
  gather.idx_mapping = &idx->dl;
  gather.num_reqs = &num_reqs->dl;
  gather.block_table = &t0->dl;
  gather.num_blocks = &nb0->dl;
  gather.out = &g0->dl;
  gather.stream = g_stream;
  if (check(14, "cattn_gather_block_tables(group 0, num_blocks)",
            cattn_gather_block_tables(&gather)))
    print_tensor("batch table (group 0)", g0);
  gather.block_table = &t1->dl;
  gather.num_blocks = NULL;
  gather.out = &g1->dl;
  if (!check(14, "cattn_gather_block_tables(group 1, full width)",
             cattn_gather_block_tables(&gather)))
    return;
  print_tensor("batch table (group 1)", g1);

  s0 = tensor_new(g_batch_memory, kI64, 1, STEP_TOKEN_CAP, 0, 0);
  s1 = tensor_new(g_batch_memory, kI64, 1, STEP_TOKEN_CAP, 0, 0);
  sm.contract = CATTN_SLOT_MAPPING_MRV2;
  sm.block_size = sm.kernel_block_size = 4;
  sm.query_start_loc = &qsl_t->dl;
  sm.num_reqs = &num_reqs->dl;
  sm.positions = &positions_t->dl;
  sm.idx_mapping = &idx->dl;
  sm.block_table = &t0->dl;
  sm.slot_mapping = &s0->dl;
  sm.stream = g_stream;
  if (!check(14, "cattn_compute_slot_mappings(group 0: MRV2, block_size 4, persistent table)",
             cattn_compute_slot_mappings(&sm)))
    return;
  print_tensor("slot_mapping (group 0)", s0);
  sm.contract = CATTN_SLOT_MAPPING_V1;
  sm.block_size = sm.kernel_block_size = 8;
  sm.idx_mapping = NULL;
  sm.block_table = &g1->dl;
  sm.slot_mapping = &s1->dl;
  if (!check(14, "cattn_compute_slot_mappings(group 1: v1, block_size 8, batch table)",
             cattn_compute_slot_mappings(&sm)))
    return;
  print_tensor("slot_mapping (group 1)", s1);

  logits = tensor_new(g_batch_memory, kI32, 1, STEP_LOGIT_CAP, 0, 0);
  cu_logits = tensor_new(g_batch_memory, kI32, 1, STEP_ROWS + 1, 0, 0);
  exp_idx = tensor_new(g_batch_memory, kI32, 1, STEP_LOGIT_CAP, 0, 0);
  exp_pos = tensor_new(g_batch_memory, kI32, 1, STEP_LOGIT_CAP, 0, 0);
  comb.query_start_loc = &qsl_t->dl;
  comb.num_reqs = &num_reqs->dl;
  comb.num_draft_tokens = &drafts->dl;
  comb.idx_mapping = &idx->dl;
  comb.seq_lens = &seq_lens->dl;
  comb.prefill_len = &prefill->dl;
  comb.last_sampled_tokens = &last_t->dl;
  comb.draft_tokens = &drafts_t->dl;
  comb.logits_indices = &logits->dl;
  comb.cu_num_logits = &cu_logits->dl;
  comb.expanded_idx_mapping = &exp_idx->dl;
  comb.expanded_local_pos = &exp_pos->dl;
  comb.input_ids = &ids_t->dl;
  comb.stream = g_stream;
  if (!check(14, "cattn_combine_sampled_and_draft_tokens",
             cattn_combine_sampled_and_draft_tokens(&comb)))
    return;
  print_tensor("logits_indices", logits);
  print_tensor("cu_num_logits", cu_logits);
  print_tensor("expanded_idx_mapping", exp_idx);
  print_tensor("expanded_local_pos", exp_pos);
  print_tensor("input_ids", ids_t);

  status = tensor_new(g_batch_memory, kI32, 1, 3, 0, 0);
  bc.query_start_loc = &qsl_t->dl;
  bc.num_reqs = &num_reqs->dl;
  bc.seq_lens = &seq_lens->dl;
  bc.block_tables[0] = &g0->dl;
  bc.block_tables[1] = &g1->dl;
  bc.slot_mappings[0] = &s0->dl;
  bc.slot_mappings[1] = &s1->dl;
  bc.status = &status->dl;
  bc.stream = g_stream;
  if (check(14, "cattn_step_batch_check(both groups)", cattn_step_batch_check(&bc))) {
    unsigned char* host = tensor_download(status);
    print_tensor("status [field, index, group]", status);
    printf("      %s\n", host_value(status, host, 0) == CATTN_STEP_CHECK_OK
                             ? "the step keeps the padding contract"
                             : "the step BREAKS the padding contract");
    if (host_value(status, host, 0) != CATTN_STEP_CHECK_OK) record_failure(14, CATTN_INTERNAL);
    free(host);
  }
}

/* ============================================================================================
 * 15. Speculative decoding (1.2)
 * ========================================================================================== */

/* A drafter step after the target model verified section 14's 5 live requests, chained as
 * vLLM's EAGLE proposer chains it: EAGLE fed the target's hidden states (shift s = 1) with
 * parallel drafting (P = 2: the bonus token and one parallel-drafting token), so that each
 * request grows by N = P - s = 1 token. Requests 1 and 2 are prompt chunks: their sampled tokens
 * are discarded and they go on from a backup token. Request 4 verified its 2 drafts (960, 961):
 * the target accepted 960 and sampled 705 in place of 961. The drafter's layers use KV group 1
 * (blocks of 8, batch row b's blocks 100 + 10b + j); max_model_len is 34. */
#define SPEC_REQS 5
#define SPEC_COLS 3 /* the most drafts + 1 */
#define SPEC_P 2
#define SPEC_SHIFT 1
#define SPEC_BLOCK 8
#define SPEC_MAX_MODEL_LEN 34
#define SPEC_GRAPH_ROWS 8
#define SPEC_NEXT_ROWS 6
static const int64_t kSpecSampled[SPEC_REQS * SPEC_COLS] = {701, -1, -1, 702, -1, -1, 703, -1, -1,
                                                            704, -1, -1, 960, 705, -1};
static const int64_t kSpecDiscard[SPEC_REQS] = {0, 1, 1, 0, 0};
static const int64_t kSpecBackup[SPEC_REQS] = {801, 802, 803, 804, 805};
/* The next step's batch: the 4 old requests in place, a new request at row 4, old row 4 at
 * row 5; the scheduler's counts (row 5's assumes that every draft was accepted). */
static const int64_t kNextPrevPositions[SPEC_NEXT_ROWS] = {0, 1, 2, 3, -1, 4};
static const int64_t kNextCpuComputed[SPEC_NEXT_ROWS] = {16, 10, 17, 33, 0, 23};

static void transcript_spec_decode(void) {
  const int64_t n_out_per_req = SPEC_P - SPEC_SHIFT;
  int64_t qsl[SPEC_REQS + 1], positions[STEP_TOKEN_CAP], ids[STEP_TOKEN_CAP];
  int64_t cu_drafts[SPEC_REQS], table[SPEC_REQS * STEP_W1], seq_lens[SPEC_REQS];
  int64_t last_pos[SPEC_REQS], nct[SPEC_NEXT_ROWS], accepted[SPEC_NEXT_ROWS];
  int64_t b, j, num_tokens, n_out, sum = 0;
  cattn_eagle_prepare_next_token_padded_args_t e3 = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  cattn_eagle_prepare_inputs_padded_args_t e2 = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  cattn_copy_and_expand_eagle_inputs_args_t e6 = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  cattn_compute_new_slot_mapping_args_t e4 = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t e1 =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  cattn_update_num_computed_tokens_for_batch_change_args_t e8 =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  transcript_tensor_t *sampled, *discard, *backup, *next, *valid, *cu_t, *qsl_t, *to_sample;
  transcript_tensor_t *rejected, *tok, *pos, *out_ids, *out_pos, *out_rej, *out_masked, *new_idx;
  transcript_tensor_t *hidden, *table_t, *new_slots, *step_pos, *step_seq, *clamped, *step_slots;
  transcript_tensor_t *nct_t, *accepted_t, *prev_pos, *prev_drafts, *cpu_nct;
  unsigned char *host_pos, *host_idx;
  section(15, "Speculative decoding, 1.2 (eagle_prepare_next_token_padded, "
              "eagle_prepare_inputs_padded, copy_and_expand_eagle_inputs, "
              "compute_new_slot_mapping, eagle_step_update_slot_mapping_and_metadata, "
              "update_num_computed_tokens_for_batch_change)");
  num_tokens = step_tokens(qsl, positions, ids, 1);
  n_out = num_tokens + SPEC_REQS * n_out_per_req;
  for (b = 0; b < SPEC_REQS; ++b) {
    sum += kStepDrafts[b];
    cu_drafts[b] = sum;
    /* The drafter batch's seq_lens: the verified ones grown by N, as
     * cattn_extend_all_queries_by_n grows them. */
    seq_lens[b] = kStepComputed[kStepIdxMapping[b]] + kStepScheduled[b] + n_out_per_req;
    for (j = 0; j < STEP_W1; ++j) table[b * STEP_W1 + j] = 100 + 10 * b + j;
  }
  sampled = tensor_of(g_batch_memory, kI32, 2, SPEC_REQS, SPEC_COLS, kSpecSampled);
  discard = tensor_of(g_batch_memory, kU8, 1, SPEC_REQS, 0, kSpecDiscard);
  backup = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS, 0, kSpecBackup);
  cu_t = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS, 0, cu_drafts);
  qsl_t = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS + 1, 0, qsl);
  tok = tensor_of(g_batch_memory, kI32, 1, num_tokens, 0, ids);
  pos = tensor_of(g_batch_memory, kI32, 1, num_tokens, 0, positions);
  table_t = tensor_of(g_batch_memory, kI32, 2, SPEC_REQS, STEP_W1, table);
  printf("  inputs: the verified batch (section 14's live rows and input_ids); EAGLE, "
         "shift_input_ids 1,\n"
         "          num_padding_slots_per_request P = 2 (N = P - 1 = 1 new token a request), "
         "vocab_size 32000,\n          parallel_drafting_token_id 32000, padding_token_id 0, "
         "block_size 8, max_model_len 34\n");
  print_tensor("query_start_loc", qsl_t);
  print_tensor("target_token_ids", tok);
  print_tensor("target_positions", pos);
  print_tensor("cu_num_draft_tokens", cu_t);
  print_tensor("sampled_token_ids", sampled);
  print_tensor("discard_request_mask", discard);
  print_tensor("backup_next_token_ids", backup);
  print_tensor("block_table (group 1)", table_t);

  /* 1. Each request's next token and its count of valid sampled tokens. */
  next = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS, 0, 0);
  valid = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS, 0, 0);
  e3.vocab_size = 32000;
  e3.sampled_token_ids = &sampled->dl;
  e3.discard_request_mask = &discard->dl;
  e3.backup_next_token_ids = &backup->dl;
  e3.next_token_ids = &next->dl;
  e3.valid_sampled_tokens_count = &valid->dl;
  e3.stream = g_stream;
  if (!check(15, "cattn_eagle_prepare_next_token_padded",
             cattn_eagle_prepare_next_token_padded(&e3)))
    return;
  print_tensor("next_token_ids", next);
  print_tensor("valid_sampled_tokens_count", valid);

  /* 2. The rejected tails and the token each request samples from, its last valid token. */
  to_sample = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS, 0, 0);
  rejected = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS, 0, 0);
  e2.cu_num_draft_tokens = &cu_t->dl;
  e2.valid_sampled_tokens_count = &valid->dl;
  e2.query_start_loc = &qsl_t->dl;
  e2.token_indices_to_sample = &to_sample->dl;
  e2.num_rejected_tokens = &rejected->dl;
  e2.stream = g_stream;
  if (!check(15, "cattn_eagle_prepare_inputs_padded", cattn_eagle_prepare_inputs_padded(&e2)))
    return;
  print_tensor("num_rejected_tokens", rejected);
  print_tensor("token_indices_to_sample", to_sample);

  /* 3. The drafter's first-pass inputs; query_end_loc is the index of step 2. */
  out_ids = tensor_new(g_batch_memory, kI32, 1, n_out, 0, 0);
  out_pos = tensor_new(g_batch_memory, kI32, 1, n_out, 0, 0);
  out_rej = tensor_new(g_batch_memory, kU8, 1, n_out, 0, 0);
  out_masked = tensor_new(g_batch_memory, kU8, 1, n_out, 0, 0);
  new_idx = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS * SPEC_P, 0, 0);
  hidden = tensor_new(g_batch_memory, kI32, 1, num_tokens, 0, 0);
  e6.padding_token_id = 0;
  e6.parallel_drafting_token_id = 32000;
  e6.num_padding_slots_per_request = SPEC_P;
  e6.shift_input_ids = SPEC_SHIFT;
  e6.target_token_ids = &tok->dl;
  e6.target_positions = &pos->dl;
  e6.next_token_ids = &next->dl;
  e6.query_start_loc = &qsl_t->dl;
  e6.query_end_loc = &to_sample->dl;
  e6.out_input_ids = &out_ids->dl;
  e6.out_positions = &out_pos->dl;
  e6.out_is_rejected_token_mask = &out_rej->dl;
  e6.out_is_masked_token_mask = &out_masked->dl;
  e6.out_new_token_indices = &new_idx->dl;
  e6.out_hidden_state_mapping = &hidden->dl;
  e6.stream = g_stream;
  if (!check(15, "cattn_copy_and_expand_eagle_inputs(query_end_loc = token_indices_to_sample)",
             cattn_copy_and_expand_eagle_inputs(&e6)))
    return;
  print_tensor("out_input_ids", out_ids);
  print_tensor("out_positions", out_pos);
  print_tensor("out_is_rejected_token_mask", out_rej);
  print_tensor("out_is_masked_token_mask", out_masked);
  print_tensor("out_new_token_indices", new_idx);
  print_tensor("out_hidden_state_mapping", hidden);

  /* 4. The slots of the drafter's tokens, -1 for the rejected ones. */
  new_slots = tensor_new(g_batch_memory, kI64, 1, n_out, 0, 0);
  e4.block_size = SPEC_BLOCK;
  e4.num_new_tokens = n_out_per_req;
  e4.max_model_len = SPEC_MAX_MODEL_LEN;
  e4.query_start_loc = &qsl_t->dl;
  e4.block_table = &table_t->dl;
  e4.new_positions = &out_pos->dl;
  e4.is_rejected_token_mask = &out_rej->dl;
  e4.new_slot_mapping = &new_slots->dl;
  e4.stream = g_stream;
  if (check(15, "cattn_compute_new_slot_mapping(N = 1, out_positions, out_is_rejected_token_mask)",
            cattn_compute_new_slot_mapping(&e4)))
    print_tensor("new_slot_mapping", new_slots);

  /* 5. One autoregressive draft step from the position of each request's last new token (the
   * engine gathers it: out_positions at out_new_token_indices[2i + 1]). */
  host_pos = tensor_download(out_pos);
  host_idx = tensor_download(new_idx);
  for (b = 0; b < SPEC_REQS; ++b)
    last_pos[b] = (int64_t)host_value(
        out_pos, host_pos, (int64_t)host_value(new_idx, host_idx, b * SPEC_P + SPEC_P - 1));
  free(host_pos);
  free(host_idx);
  step_pos = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS, 0, last_pos);
  step_seq = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS, 0, seq_lens);
  clamped = tensor_new(g_batch_memory, kI32, 1, SPEC_REQS, 0, 0);
  step_slots = tensor_new(g_batch_memory, kI64, 1, SPEC_GRAPH_ROWS, 0, 0);
  printf("  draft step inputs: positions of each request's last new token, the drafter batch's "
         "seq_lens\n          (the verified ones + N), input_batch_size 8 (a CUDA graph's "
         "bucket)\n");
  print_tensor("positions", step_pos);
  print_tensor("seq_lens", step_seq);
  e1.block_size = SPEC_BLOCK;
  e1.max_model_len = SPEC_MAX_MODEL_LEN;
  e1.input_batch_size = SPEC_GRAPH_ROWS;
  e1.positions = &step_pos->dl;
  e1.block_table = &table_t->dl;
  e1.seq_lens = &step_seq->dl;
  e1.out_clamped_positions = &clamped->dl;
  e1.out_slot_mapping = &step_slots->dl;
  e1.stream = g_stream;
  if (check(15, "cattn_eagle_step_update_slot_mapping_and_metadata",
            cattn_eagle_step_update_slot_mapping_and_metadata(&e1))) {
    print_tensor("out_clamped_positions", clamped);
    print_tensor("out_slot_mapping", step_slots);
    print_tensor("seq_lens (updated)", step_seq);
  }

  /* 6. The next step's batch: each request's computed tokens, carried across the change. */
  for (b = 0; b < SPEC_NEXT_ROWS; ++b) {
    /* The verified batch's counts in its own layout (entry 5 is past it), 1 accepted each. */
    nct[b] = b < SPEC_REQS ? kStepComputed[kStepIdxMapping[b]] : 0;
    accepted[b] = 1;
  }
  nct_t = tensor_of(g_batch_memory, kI32, 1, SPEC_NEXT_ROWS, 0, nct);
  accepted_t = tensor_of(g_batch_memory, kI32, 1, SPEC_NEXT_ROWS, 0, accepted);
  prev_pos = tensor_of(g_batch_memory, kI32, 1, SPEC_NEXT_ROWS, 0, kNextPrevPositions);
  prev_drafts = tensor_of(g_batch_memory, kI32, 1, SPEC_REQS, 0, kStepDrafts);
  cpu_nct = tensor_of(g_batch_memory, kI32, 1, SPEC_NEXT_ROWS, 0, kNextCpuComputed);
  printf("  batch change inputs: the next step keeps the 4 old requests in place, adds a new one "
         "at row 4\n          and moves old row 4 to row 5; valid_sampled_token_count is the "
         "one above\n");
  print_tensor("prev_positions", prev_pos);
  print_tensor("prev_num_draft_tokens", prev_drafts);
  print_tensor("cpu_num_computed_tokens", cpu_nct);
  print_tensor("num_computed_tokens", nct_t);
  print_tensor("num_accepted_tokens", accepted_t);
  e8.num_computed_tokens = &nct_t->dl;
  e8.num_accepted_tokens = &accepted_t->dl;
  e8.prev_positions = &prev_pos->dl;
  e8.valid_sampled_token_count = &valid->dl;
  e8.prev_num_draft_tokens = &prev_drafts->dl;
  e8.cpu_num_computed_tokens = &cpu_nct->dl;
  e8.stream = g_stream;
  if (check(15, "cattn_update_num_computed_tokens_for_batch_change",
            cattn_update_num_computed_tokens_for_batch_change(&e8))) {
    print_tensor("num_computed_tokens", nct_t);
    print_tensor("num_accepted_tokens", accepted_t);
  }
}

/* ============================================================================================
 * main
 * ========================================================================================== */

static const char* const kUtilityNames[NUM_UTILITIES + 1] = {
    "",
    "get_kv_cache_layout",
    "get_dcp_local_seq_lens",
    "get_pcp_query_restore_idx",
    "fused_pcp_qkv_select",
    "pcp_kv_allgather_and_restore",
    "compute_causal_conv1d_metadata",
    "extend_all_queries_by_1 (N)",
    "make_kv_sharing_fast_prefill_common_attn_metadata",
    "make_local_attention_virtual_batches",
    "mamba_get_block_table_tensor",
    "get_per_layer_parameters",
    "resolve_kv_cache_layout",
    "split_decodes_and_prefills",
    "step inputs (1.2)",
    "speculative decoding (1.2)",
};

/* Says CATTN_TRANSCRIPT_FORCE_HOST asks for the host run (set and neither empty nor "0"). */
static int host_run_forced(void) {
  const char* value = getenv("CATTN_TRANSCRIPT_FORCE_HOST");
  return value != NULL && value[0] != '\0' && strcmp(value, "0") != 0;
}

int main(void) {
  transcript_batch_t batch;
  int32_t gpus = 0;
  int u, ok = 1, any_not_counted = 0;
  char gpu_name[256] = "";
  const cattn_status_t count_status = cattn_cuda_device_count(&gpus);
  const transcript_memory_t* device_memory = NULL;
  const int forced = host_run_forced();

  if (count_status != CATTN_OK) gpus = 0;
  if (gpus > 0 && !forced) device_memory = device_open(gpu_name, sizeof gpu_name);
  if (device_memory != NULL) {
    g_batch_memory = device_memory;
    printf("Running on GPU: %s\n", gpu_name);
  } else if (gpus > 0 && forced) {
    printf("CATTN_TRANSCRIPT_FORCE_HOST is set: running on the host (%d CUDA device(s) left unused)\n",
           (int)gpus);
  } else if (gpus > 0) {
    printf("libcattn sees %d CUDA device(s), but this transcript was built without CUDA: running on "
           "the host\n",
           (int)gpus);
  } else {
#if defined(CATTN_TRANSCRIPT_WITH_CUDA)
    printf("No CUDA device found: running on the host\n");
#else
    printf("No CUDA device found: running on the host (this transcript was built without CUDA)\n");
#endif
  }
  printf("libcattn %s (header %s) transcript\n", cattn_version_string(), CATTN_VERSION_STRING);
  if (cattn_version() != CATTN_VERSION_NUMBER)
    printf("warning: library version %u differs from header version %d\n",
           (unsigned)cattn_version(), CATTN_VERSION_NUMBER);
  check(0, "cattn_cuda_device_count", count_status);
  printf("Batch tensors live in %s memory; host mirrors (*_cpu) in host memory.\n"
         "get_kv_cache_layout, get_per_layer_parameters and resolve_kv_cache_layout take no tensors\n"
         "and the batch split reads host tensors only: they always run on the host.\n",
         g_batch_memory->name);

  make_batch(&batch);
  print_batch(&batch);

  transcript_kv_cache_layout();
  transcript_dcp_local_seq_lens(&batch);
  transcript_pcp_query_restore_idx(&batch);
  transcript_fused_pcp_qkv_select();
  transcript_pcp_kv_allgather_and_restore();
  transcript_causal_conv1d_metadata(&batch);
  transcript_extend_all_queries_by_n(&batch);
  transcript_fast_prefill(&batch);
  transcript_local_attention(&batch);
  transcript_mamba_block_table(&batch);
  transcript_per_layer_parameters();
  transcript_kv_cache_layout_resolver();
  transcript_split_and_reorder(&batch);
  transcript_step_inputs();
  transcript_spec_decode();

  printf("\n== Summary ==\n");
  for (u = 1; u <= NUM_UTILITIES; ++u) {
    const char* verdict = g_failed[u] ? cattn_status_string(g_first_bad[u]) : "CATTN_OK";
    if (g_not_counted[u] != NULL) {
      any_not_counted = 1;
      printf("  %2d. %-50s %s (%s)\n", u, kUtilityNames[u], verdict, g_not_counted[u]);
    } else {
      printf("  %2d. %-50s %s\n", u, kUtilityNames[u], verdict);
      if (g_failed[u]) ok = 0;
    }
  }
  if (g_failed[0]) ok = 0;
  if (!ok)
    printf("Some utilities FAILED.\n");
  else if (any_not_counted)
    printf("All counted utilities returned CATTN_OK.\n");
  else
    printf("All utilities returned CATTN_OK.\n");
  free_all_tensors();
  device_close();
  return ok ? 0 : 1;
}
