/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-tree consumer (b): built by CMake through find_package(cattn <major>) and
 * cattn::cattn. Checks that the package version CMake saw is the library's, and runs the DCP
 * local lengths and the local-attention plan on host data; exits 1 on any mismatch. */
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
    printf("CMake consumer: libcattn loaded from %s\n", info.dli_fname);
  printf("  find_package version %s, library %s\n", EXPECTED_VERSION, cattn_version_string());
  check(strcmp(cattn_version_string(), EXPECTED_VERSION) == 0,
        "package version == library version");
  check(CATTN_VERSION_MAJOR == EXPECTED_MAJOR, "header major == requested major");

  /* SPEC vector: DCP, all ranks, W = 2, interleave 1. */
  int64_t seq[] = {1, 2, 128, 129, 256, 257}, seq_n = 6;
  int32_t out[6][2];
  int64_t out_shape[] = {6, 2};
  DLTensor seq_t = {seq, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, &seq_n, NULL, 0};
  DLTensor out_t = {out, {kDLCPU, 0}, 2, {kDLInt, 32, 1}, out_shape, NULL, 0};
  cattn_dcp_local_seq_lens_args_t d = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  d.seq_lens = &seq_t;
  d.dcp_size = 2;
  d.dcp_rank = CATTN_DCP_ALL_RANKS;
  d.dcp_kv_cache_interleave_size = 1;
  d.out = &out_t;
  cattn_status_t st = cattn_get_dcp_local_seq_lens(&d);
  const int32_t want[6][2] = {{1, 0}, {1, 1}, {64, 64}, {65, 64}, {128, 128}, {129, 128}};
  check(st == CATTN_OK && memcmp(out, want, sizeof want) == 0, "DCP local lengths, W=2 I=1");

  d.dcp_rank = 2; /* out of range for dcp_size 2 */
  st = cattn_get_dcp_local_seq_lens(&d);
  check(st == CATTN_INVALID_ARGUMENT, "dcp_rank 2 of 2 rejected");
  printf("  message: %s\n", cattn_last_error_message());
  check(strcmp(cattn_status_string(CATTN_INSUFFICIENT_SIZE), "CATTN_INSUFFICIENT_SIZE") == 0,
        "status string");

  int32_t gpus = -1;
  check(cattn_cuda_device_count(&gpus) == CATTN_OK && gpus >= 0, "cuda device count answers");
  printf("  CUDA devices visible: %d\n", (int)gpus);

  printf("CMake consumer: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
