// SPDX-License-Identifier: Apache-2.0
#include "common/struct_arg.h"

#include <string>

namespace cattn {

void require_struct_size(const char* fn, const char* arg, size_t size, const size_t* sizes,
                         size_t count) {
  if (size < sizes[0])
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "has struct_size too small", std::to_string(size),
             ">= " + std::to_string(sizes[0]));
  if (size >= sizes[count - 1]) return;
  std::string known;
  for (size_t i = 0; i + 1 < count; ++i) {
    if (size == sizes[i]) return;
    known += std::to_string(sizes[i]) + ", ";
  }
  fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "has a struct_size that no version of the header has",
           std::to_string(size),
           "one of " + known + "or >= " + std::to_string(sizes[count - 1]));
}

}  // namespace cattn
