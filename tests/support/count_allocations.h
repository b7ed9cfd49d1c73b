/* SPDX-License-Identifier: Apache-2.0 */
// Counts the bytes operator new hands out on this thread while armed. The test binary replaces
// the global operator new (support/count_allocations.cpp), which covers the library too:
// libcattn.so resolves it from the executable. A test checks that a call allocates nothing
// (promise 8) or no more than its size query reported.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>

#include "cattn.h"

namespace cattn_test {

struct CountAllocations {
  CountAllocations();
  ~CountAllocations();
  size_t bytes() const;
};

// Whether libcattn's allocations reach the operator new above: not when the library carries
// its own (a toolchain that links libstdc++ statically), and then the bounds cannot be checked.
bool library_allocations_counted();

// Expects `call` (named `what`) to succeed without allocating (promise 8).
inline void expect_allocates_nothing(const char* what,
                                     const std::function<cattn_status_t()>& call) {
  size_t bytes;
  cattn_status_t s;
  {
    CountAllocations count;
    s = call();
    bytes = count.bytes();
  }
  EXPECT_EQ(s, CATTN_OK) << what << ": " << cattn_last_error_message();
  EXPECT_EQ(bytes, 0u) << what << " allocated";
}

}  // namespace cattn_test

#define SKIP_UNLESS_ALLOCATIONS_COUNTED()                                                  \
  do {                                                                                    \
    if (!cattn_test::library_allocations_counted())                                       \
      GTEST_SKIP() << "libcattn does not allocate through this binary's operator new";    \
  } while (0)
