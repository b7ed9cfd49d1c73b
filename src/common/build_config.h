/* SPDX-License-Identifier: Apache-2.0 */
// What this build of the library contains, as constants every layer may read. CMake defines
// CATTN_HAVE_CUDA for a CUDA build (CATTN_WITH_CUDA=ON); only code that must compile
// differently without the CUDA runtime (common/cuda_runtime.cpp) tests the macro itself.
#pragma once

namespace cattn {

// True in a CUDA build. The entry points dispatch to the device side behind
// `if constexpr (kCudaBuild)` (device/device.h says why), and common code that treats CUDA-only
// objects differently in a CPU-only build (common/comm_handle.h) asks it too.
#if defined(CATTN_HAVE_CUDA)
inline constexpr bool kCudaBuild = true;
#else
inline constexpr bool kCudaBuild = false;
#endif

}  // namespace cattn
