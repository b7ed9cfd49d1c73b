// SPDX-License-Identifier: Apache-2.0
// Status strings and the thread-local last-error message.
#include "common/error.h"

#include <cstring>

namespace cattn {
namespace {
thread_local std::string t_last_error;

// Cuts `s` to `max` bytes, marking the cut with "...".
std::string capped(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  return s.substr(0, max - 3) + "...";
}

}  // namespace

void set_last_error(const std::string& message) noexcept {
  try {
    t_last_error = capped(message, CATTN_LAST_ERROR_MESSAGE_MAX - 1);
  } catch (...) {
    t_last_error.clear();  // out of memory while recording: an empty message beats a crash
  }
}

void fail(cattn_status_t code, const char* fn, const std::string& what) {
  throw Failure{code, std::string(fn) + ": " + what};
}

void fail_arg(cattn_status_t code, const char* fn, const char* arg, const char* problem,
              const std::string& got, const std::string& expected) {
  throw Failure{code, std::string(fn) + ": " + arg + " " + problem + " (got " +
                          capped(got, kMaxMessagePart) + ", expected " +
                          capped(expected, kMaxMessagePart) + ")"};
}

std::string quoted(const char* s, size_t max) {
  static const char kHex[] = "0123456789abcdef";
  std::string q = "\"";
  size_t i = 0;
  for (; i < max && s[i] != '\0'; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      q += static_cast<char>(c);
    } else {
      q += "\\x";
      q += kHex[c >> 4];
      q += kHex[c & 15];
    }
  }
  q += "\"";
  if (i == max && s[i] != '\0') q += "...";
  return q;
}

void fail_no_cuda_path(const char* fn) {
  fail(CATTN_NOT_SUPPORTED, fn,
       "CUDA tensors need a libcattn built with CATTN_WITH_CUDA=ON; this build is CPU-only");
}

void fail_no_nccl_path(const char* fn) {
  fail(CATTN_NOT_SUPPORTED, fn,
       "NCCL communicators need a libcattn built with CATTN_WITH_CUDA=ON; this build is CPU-only");
}

}  // namespace cattn

extern "C" {

CATTN_API const char* cattn_status_string(cattn_status_t status) {
  // A C caller may pass any int; loading an out-of-range value as the C++ enum is undefined,
  // so the switch reads its int representation.
  int code;
  static_assert(sizeof code == sizeof status, "cattn_status_t is int-sized");
  std::memcpy(&code, &status, sizeof code);
  switch (code) {
    case CATTN_OK: return "CATTN_OK";
    case CATTN_INVALID_ARGUMENT: return "CATTN_INVALID_ARGUMENT";
    case CATTN_CUDA_ERROR: return "CATTN_CUDA_ERROR";
    case CATTN_OUT_OF_MEMORY: return "CATTN_OUT_OF_MEMORY";
    case CATTN_INSUFFICIENT_SIZE: return "CATTN_INSUFFICIENT_SIZE";
    case CATTN_NOT_SUPPORTED: return "CATTN_NOT_SUPPORTED";
    case CATTN_INTERNAL: return "CATTN_INTERNAL";
    case CATTN_NOT_IMPLEMENTED: return "CATTN_NOT_IMPLEMENTED";
    case CATTN_NCCL_ERROR: return "CATTN_NCCL_ERROR";
    default: return "CATTN_UNKNOWN_STATUS";
  }
}

CATTN_API const char* cattn_last_error_message(void) { return cattn::t_last_error.c_str(); }

}  // extern "C"
