/* SPDX-License-Identifier: Apache-2.0 */
// What the entry points (src/<utility>.cpp) need to dispatch to the device side: whether this
// build has one (kCudaBuild, from common/build_config.h). The functions of
// src/device/<utility>_device.h are declared in every build but defined only in CUDA builds; an
// entry point calls them behind `if constexpr (kCudaBuild)`, whose discarded branch needs no
// definition, and a CPU-only build answers CATTN_NOT_SUPPORTED through fail_no_cuda_path
// (common/error.h) instead.
#pragma once

#include "common/build_config.h"
