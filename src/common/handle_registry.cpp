// SPDX-License-Identifier: Apache-2.0
#include "common/handle_registry.h"

#include <map>
#include <mutex>
#include <string>

#include "common/error.h"

namespace cattn {
namespace {

// A tree rather than a hash table: each insertion allocates one node of fixed size and never a
// rehash, so what a create call allocates stays bounded by what its size query reports.
struct Registry {
  std::mutex mutex;
  std::map<const void*, HandleKind> live;
};

// Never destroyed: handles may be destroyed from static destructors of the caller.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

const char* kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Context: return "a context";
    case HandleKind::LocalAttentionPlan: return "a local-attention plan";
    case HandleKind::Comm: return "a communicator";
    case HandleKind::StepPlan: return "a step plan";
  }
  return "a handle";
}

bool is_live(const void* handle, HandleKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.live.find(handle);
  return it != r.live.end() && it->second == kind;
}

}  // namespace

void register_handle(const void* handle, HandleKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.live[handle] = kind;
}

bool unregister_handle(const void* handle, HandleKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.live.find(handle);
  if (it == r.live.end() || it->second != kind) return false;
  r.live.erase(it);
  return true;
}

void require_registered(const char* fn, const char* arg, const void* handle, HandleKind kind) {
  if (handle == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", kind_name(kind));
  if (!is_live(handle, kind))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is not a live handle",
             "a pointer that is destroyed, of another kind, or never created",
             std::string(kind_name(kind)) + " that has not been destroyed");
}

void require_magic(const char* fn, const char* arg, uint64_t magic, HandleKind kind) {
  if (magic != static_cast<uint64_t>(kind))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is a corrupted handle",
             "magic " + std::to_string(magic), std::to_string(static_cast<uint64_t>(kind)));
}

bool release_handle(const char* fn, const void* handle, HandleKind kind) noexcept {
  if (unregister_handle(handle, kind)) return true;
  set_last_error(std::string(fn) + ": the handle is not a live handle (destroyed twice, of " +
                 "another kind, or never created); nothing was freed");
  return false;
}

}  // namespace cattn
