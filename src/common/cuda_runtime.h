/* SPDX-License-Identifier: Apache-2.0 */
// The few CUDA-runtime services the host side needs, available (as "no device") in CPU-only
// builds so callers need no #ifdefs.
#pragma once

#include <string>

#include "cattn.h"

namespace cattn {

// Number of usable CUDA devices; 0 without CUDA support, driver or device.
int cuda_device_count() noexcept;

// Converts a cudaError_t (as int) from a launch into a Failure naming `fn`; no-op for success.
void check_cuda(const char* fn, int cuda_error);

}  // namespace cattn
