// SPDX-License-Identifier: Apache-2.0
// The benches' checks, one spelling each. A failed call prints where it was made, the call and
// the reason, then ends the program with the code of its kind (2 CUDA, 3 libcattn, 4 NCCL), so
// that a script running the benches can tell them apart; BENCH_CUDA_TRY instead returns false
// from the enclosing function, for a harness that goes on to its next case.
//
// Each macro names its library's types only where it is used: include cuda_runtime_api.h
// before using a CUDA check, and nccl.h plus the NCCL loader (src/device/nccl_loader.h) before
// BENCH_NCCL_CHECK. cattn.h is included here.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "cattn.h"

// A CUDA runtime call that must succeed.
#define BENCH_CUDA_CHECK(call)                                                             \
  do {                                                                                     \
    const cudaError_t bench_e_ = (call);                                                   \
    if (bench_e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(bench_e_));                                          \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

// A CUDA runtime call whose failure ends the current case: prints like BENCH_CUDA_CHECK, then
// `return false;`.
#define BENCH_CUDA_TRY(call)                                                               \
  do {                                                                                     \
    const cudaError_t bench_e_ = (call);                                                   \
    if (bench_e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(bench_e_));                                          \
      return false;                                                                        \
    }                                                                                      \
  } while (0)

// A libcattn call that must return CATTN_OK: prints the status and the library's message.
#define BENCH_CATTN_CHECK(call)                                                            \
  do {                                                                                     \
    const cattn_status_t bench_s_ = (call);                                                \
    if (bench_s_ != CATTN_OK) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #call,                \
                   cattn_status_string(bench_s_), cattn_last_error_message());             \
      std::exit(3);                                                                        \
    }                                                                                      \
  } while (0)

// An NCCL call through `api` (a cattn::NcclApi, the library's loader) that must succeed.
#define BENCH_NCCL_CHECK(api, call)                                                        \
  do {                                                                                     \
    const ncclResult_t bench_r_ = (call);                                                  \
    if (bench_r_ != ncclSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                    \
                   (api).GetErrorString(bench_r_));                                        \
      std::exit(4);                                                                        \
    }                                                                                      \
  } while (0)
