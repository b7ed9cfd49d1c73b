/* SPDX-License-Identifier: Apache-2.0 */
// Internal error plumbing: a C++ exception carries a status and a message from wherever a
// check fails up to the C entry point, where guarded() turns it into a status and the
// thread-local message. Nothing here is exported.
#pragma once

#include <new>
#include <string>

#include "cattn.h"
#include "common/call_args.h"

namespace cattn {

// Thrown by checks; caught only by guarded().
struct Failure {
  cattn_status_t code;
  std::string message;
};

// Records `message` as this thread's last error.
void set_last_error(const std::string& message) noexcept;

// Throws Failure{code, "<fn>: <what>"}.
[[noreturn]] void fail(cattn_status_t code, const char* fn, const std::string& what);

// Throws the canonical argument error "<fn>: <arg> <problem> (got <got>, expected <expected>)".
// `got` and `expected` are cut to kMaxMessagePart bytes each, and the whole message to
// CATTN_LAST_ERROR_MESSAGE_MAX - 1, so that a caller's value never makes a message long.
[[noreturn]] void fail_arg(cattn_status_t code, const char* fn, const char* arg,
                           const char* problem, const std::string& got,
                           const std::string& expected);

constexpr size_t kMaxMessagePart = 256;

// A caller's NUL-terminated string as it may appear in a message: quoted, at most `max` bytes
// of it read and shown (longer ones end in "..."), bytes outside printable ASCII as \xNN.
std::string quoted(const char* s, size_t max = 64);

// Runs `body` (which returns nothing and reports failure by throwing) and converts the outcome
// into a status. This is the only place exceptions stop, so every entry point wraps its whole
// body in it. It also opens the call whose arguments the body records (common/call_args.h):
// a body that recorded outputs must have sealed them before it succeeds.
template <class F>
cattn_status_t guarded(const char* fn, F&& body) noexcept {
  CallArgs call(fn);
  const CallScope scope(&call);
  try {
    body();
    if (call.has_outputs() && !call.sealed())
      fail(CATTN_INTERNAL, fn, "recorded outputs without the overlap check");
    return CATTN_OK;
  } catch (const Failure& f) {
    set_last_error(f.message);
    return f.code;
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(fn) + ": host allocation failed");
    return CATTN_OUT_OF_MEMORY;
  } catch (...) {
    set_last_error(std::string(fn) + ": unexpected internal exception");
    return CATTN_INTERNAL;
  }
}

// The one place a CPU-only build answers a request for the device: CATTN_NOT_SUPPORTED with a
// message saying the build is CPU-only, for CUDA tensors and for NCCL communicators.
[[noreturn]] void fail_no_cuda_path(const char* fn);
[[noreturn]] void fail_no_nccl_path(const char* fn);

}  // namespace cattn
