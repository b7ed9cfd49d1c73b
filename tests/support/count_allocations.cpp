// SPDX-License-Identifier: Apache-2.0
#include "support/count_allocations.h"

#include <cstdlib>
#include <new>

#include "cattn.h"

namespace {

thread_local bool t_counting = false;
thread_local size_t t_allocated = 0;

void* counted_malloc(size_t n) {
  if (t_counting) t_allocated += n;
  return std::malloc(n == 0 ? 1 : n);
}

}  // namespace

namespace cattn_test {

CountAllocations::CountAllocations() {
  t_allocated = 0;
  t_counting = true;
}
CountAllocations::~CountAllocations() { t_counting = false; }
size_t CountAllocations::bytes() const { return t_allocated; }

bool library_allocations_counted() {
  static const bool counted = [] {
    CountAllocations count;
    cattn_context_t* ctx = nullptr;
    if (cattn_context_create(&ctx) != CATTN_OK) return false;
    cattn_context_destroy(ctx);
    return count.bytes() > 0;
  }();
  return counted;
}

}  // namespace cattn_test

// Every unaligned form is replaced, so that whatever one form allocates another frees (ASan
// checks that the allocator matches the deallocator).
void* operator new(size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
