/* SPDX-License-Identifier: Apache-2.0 */
// What the entry points (src/<utility>.cpp) need to dispatch to the device side: whether this
// build has one. The functions of src/device/<utility>_device.h are declared in every build
// but defined only in CUDA builds; an entry point calls them behind `if constexpr
// (kCudaBuild)`, whose discarded branch needs no definition, and a CPU-only build answers
// CATTN_NOT_SUPPORTED through fail_no_cuda_path (common/error.h) instead.
#pragma once

namespace cattn {

#if defined(CATTN_HAVE_CUDA)
inline constexpr bool kCudaBuild = true;
#else
inline constexpr bool kCudaBuild = false;
#endif

}  // namespace cattn
