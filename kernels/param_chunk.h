/* SPDX-License-Identifier: Apache-2.0 */
// Small host-computed arrays travel to the device inside kernel parameters (up to 32 KiB on
// sm_70+ with CUDA 12.1+), so host-planned utilities upload without a staging allocation, a
// host sync, or a dependency on the caller's memory outliving the launch - and stay capturable
// in CUDA graphs, which copy parameters by value. Longer arrays take several launches.
#pragma once

#include <cstdint>

namespace cattn {
namespace kernels {

constexpr int kParamChunk = 3840;

struct ParamChunk {
  int64_t first = 0;  // index of v[0] in the whole array
  int32_t count = 0;
  int32_t reserved = 0;
  int64_t v[kParamChunk];
};

}  // namespace kernels
}  // namespace cattn
