// SPDX-License-Identifier: Apache-2.0
// The tuning harness's list for the default build (target tune_fused_select): the shipped
// policy alone, so that the harness builds with every CUDA build at the cost of one policy.
// The variants are in tune_fused_select_policies.cu (target tune_fused_select_variants).
#include "bench/tune_fused_select.cuh"

const std::vector<TunePolicy>& tune_policies() {
  static const std::vector<TunePolicy> list{
      tune_policy<cattn::kernels::SelectPolicy>("shipped", "the library's SelectPolicy")};
  return list;
}
