/* SPDX-License-Identifier: Apache-2.0 */
// The live-handle registry behind every opaque handle (context, local-attention plan,
// communicator, step plan). A handle is registered when it is created and forgotten when it is
// destroyed, so a destroyed handle, a pointer no create call returned, or a handle of another
// kind is recognised without reading the memory it points to (which may already be freed). Each
// handle also carries its kind's magic value, checked once the registry has vouched for the
// pointer, so a corrupted handle is caught too.
#pragma once

#include <cstdint>

namespace cattn {

// The kinds, as the magic values their objects carry.
enum class HandleKind : uint64_t {
  Context = 0x63617474'6e637478ull,             // "cattnctx"
  LocalAttentionPlan = 0x63617474'6e6c6170ull,  // "cattnlap"
  Comm = 0x63617474'6e636f6dull,                // "cattncom"
  StepPlan = 0x63617474'6e737470ull,            // "cattnstp"
};

// What a destroyed handle's magic is overwritten with before its memory is freed.
constexpr uint64_t kDeadHandleMagic = 0xdeadbeefdeadbeefull;

// Records `handle` as live. Throws std::bad_alloc (one small node per live handle).
void register_handle(const void* handle, HandleKind kind);

// Forgets `handle`; false when it was not a live handle of `kind` (then nothing changes).
bool unregister_handle(const void* handle, HandleKind kind);

// Fails (CATTN_INVALID_ARGUMENT, naming `arg`) unless `handle` is registered as a live
// handle of `kind`. Reads nothing at the address.
void require_registered(const char* fn, const char* arg, const void* handle, HandleKind kind);

// Fails (CATTN_INVALID_ARGUMENT) unless `magic`, read from a registered handle, is its kind's.
void require_magic(const char* fn, const char* arg, uint64_t magic, HandleKind kind);

// Fails unless `handle` is a live handle of `kind` whose magic is intact. The handle's memory
// (its magic) is touched only after the registry has vouched for the pointer, so a forged one
// - misaligned, unmapped, freed - is refused without forming an access through it.
template <class T>
void require_live_handle(const char* fn, const char* arg, const T* handle, HandleKind kind) {
  require_registered(fn, arg, static_cast<const void*>(handle), kind);
  require_magic(fn, arg, handle->magic, kind);
}

// For destroy calls, which return nothing: true when `handle` was live (and is now forgotten);
// otherwise records a message naming `fn` as this thread's last error and returns false.
bool release_handle(const char* fn, const void* handle, HandleKind kind) noexcept;

}  // namespace cattn
