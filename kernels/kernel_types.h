// Plain structs shared by the C++ entry points (src/) and the CUDA kernels (kernels/). No CUDA
// syntax and no C-ABI types, so both compilers can read it and kernels stay free of src/.
#pragma once

#include <cstdint>

namespace cattn {
namespace kernels {

// A strided 1-D view of an int32/int64 tensor in device memory.
struct IndexSpan {
  const void* data = nullptr;
  int64_t step = 0;  // elements between consecutive entries
  int64_t size = 0;
  bool i64 = false;
};
struct MutIndexSpan {
  void* data = nullptr;
  int64_t step = 0;
  int64_t size = 0;
  bool i64 = false;
};
// A strided 2-D view of an int32/int64 tensor in device memory.
struct IndexMatrix {
  const void* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t row_step = 0, col_step = 0;  // elements
  bool i64 = false;
};
struct MutIndexMatrix {
  void* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t row_step = 0, col_step = 0;
  bool i64 = false;
};

// Launch configuration the host side reads off the device once per call.
struct DeviceShape {
  int sm_count = 1;
  int max_threads_per_sm = 2048;
};

}  // namespace kernels
}  // namespace cattn
