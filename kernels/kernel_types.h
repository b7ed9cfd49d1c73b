/* SPDX-License-Identifier: Apache-2.0 */
// Plain structs shared by the C++ entry points (src/) and the CUDA kernels (kernels/). No CUDA
// syntax and no C-ABI types, so both compilers can read it and kernels stay free of src/.
#pragma once

#include <cstdint>

namespace cattn {
namespace kernels {

// A strided 1-D or 2-D view of an int32/int64 tensor in device memory: `Data` is const void*
// for an input and void* for an output. step[d] counts elements between neighbours in
// dimension d. Built from a checked tensor by cattn::index_view (src/device/cuda_launch.h) and
// read and written through load_index / store_index (kernels/index_access.cuh).
template <class Data, int Rank>
struct IndexView {
  static_assert(Rank == 1 || Rank == 2, "index views are 1-D or 2-D");
  Data data = nullptr;
  int64_t size[Rank] = {};
  int64_t step[Rank] = {};
  bool i64 = false;
};
using IndexSpan = IndexView<const void*, 1>;
using MutIndexSpan = IndexView<void*, 1>;
using IndexMatrix = IndexView<const void*, 2>;
using MutIndexMatrix = IndexView<void*, 2>;

// Counts a kernel derives from device data for the caller to read later: written to `device`
// and to `mirror`, a view of mapped pinned host memory the kernel writes through (valid once the
// caller has synchronised the stream). Either may be absent (data == nullptr).
struct CountOut {
  MutIndexSpan device, mirror;
};

// Launch configuration the host side reads off the device once per call.
struct DeviceShape {
  int sm_count = 1;
  int max_threads_per_sm = 2048;
  int cc_major = 0;  // compute capability major (9: dependent launches are available)
};

}  // namespace kernels
}  // namespace cattn
