// SPDX-License-Identifier: Apache-2.0
// The fused PCP Q/K/V select's launcher, built with the shipped tuning, SelectPolicy
// (fused_pcp_qkv_select_tuning.cuh), and no other: the kernel and the launch logic are in
// fused_pcp_qkv_select.cuh, and the variants measured against this one build in
// bench/tune_fused_select_policies.cu.
#include <cuda_runtime.h>

#include "kernels/fused_pcp_qkv_select.cuh"

namespace cattn {
namespace kernels {

int launch_fused_pcp_qkv_select(const FusedSelectParams& p, const DeviceShape& dev,
                                void* stream) {
  return launch_fused_pcp_qkv_select_kernel<SelectPolicy>(p, dev,
                                                          static_cast<cudaStream_t>(stream));
}

}  // namespace kernels
}  // namespace cattn
