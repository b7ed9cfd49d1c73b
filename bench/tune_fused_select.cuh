// SPDX-License-Identifier: Apache-2.0
// The tuning harness's policies (bench/tune_fused_select.cu): each one is the fused select's
// launcher (kernels/fused_pcp_qkv_select.cuh) instantiated with a policy type, under a name.
// Two lists are linked against the harness: tune_fused_select_shipped.cu holds the shipped
// policy alone (target tune_fused_select), tune_fused_select_policies.cu every variant as well
// (target tune_fused_select_variants, which bench/tune_fused_select.sh builds).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/fused_pcp_qkv_select.cuh"

struct TunePolicy {
  const char* name;  // what --policy selects
  const char* what;  // how it differs from the shipped policy, and where it was measured
  std::string values;  // every member's value, for the output
  cudaError_t (*launch)(const cattn::kernels::FusedSelectParams&,
                        const cattn::kernels::DeviceShape&, cudaStream_t);
};

// The list linked in: the shipped policy first.
const std::vector<TunePolicy>& tune_policies();

template <class Policy>
TunePolicy tune_policy(const char* name, const char* what) {
  using cattn::kernels::SelectSearch;
  char values[256];
  std::snprintf(values, sizeof values,
                "unroll %d, min blocks %d, streaming %d, interleave %d, waves %d, search %s, "
                "prefetch %d, rows %d, narrow %d, joint rounds %d, chunk rounds %d, "
                "dependent launch %d",
                Policy::kUnroll, Policy::kMinBlocks, int{Policy::kStreaming},
                int{Policy::kInterleave}, Policy::kWaves,
                Policy::kSearch == SelectSearch::kWarp ? "warp" : "serial",
                int{Policy::kPrefetch}, Policy::kRows, int{Policy::kNarrow},
                Policy::kJointRounds, Policy::kChunkRounds, int{Policy::kDependentLaunch});
  return {name, what, values, &cattn::kernels::launch_fused_pcp_qkv_select_kernel<Policy>};
}
