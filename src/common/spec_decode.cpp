// SPDX-License-Identifier: Apache-2.0
// Flag tensors of the speculative-decoding calls (common/spec_decode.h).
#include "common/spec_decode.h"

#include <string>

#include "common/error.h"

namespace cattn {
namespace {

// DLPack's kDLBool (6), which older dlpack.h releases do not name.
constexpr uint8_t kDLBoolCode = 6;

void expect_byte_dtype(const TensorArg& t) {
  const DLDataType d = t.raw()->dtype;
  if (!(d.bits == 8 && d.lanes == 1 &&
        (d.code == kDLBoolCode || d.code == kDLUInt || d.code == kDLInt)))
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "has an unsupported dtype",
             "code " + std::to_string(d.code) + " bits " + std::to_string(d.bits) + " lanes " +
                 std::to_string(d.lanes),
             "one byte per entry (bool, uint8 or int8)");
}

}  // namespace

void expect_flags(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_size(0, n);
  expect_byte_dtype(t);
}

void expect_flags_output(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_writable().expect_capacity(n);
  expect_byte_dtype(t);
}

void expect_slot_output(const TensorArg& t, int64_t n) {
  t.expect_ndim(1).expect_writable().expect_capacity(n);
  const DLDataType d = t.raw()->dtype;
  if (d.code != kDLInt || d.bits != 64 || d.lanes != 1)
    fail_arg(CATTN_INVALID_ARGUMENT, t.fn(), t.name(), "has the wrong dtype", "not int64",
             "int64 (slots pass 2^31)");
}

void expect_at_least(const char* fn, const char* name, int64_t v, int64_t min) {
  if (v < min)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is out of range", std::to_string(v),
             ">= " + std::to_string(min));
}

bool flag_at(const TensorArg* t, int64_t i) {
  return t != nullptr && t->present() && t->data()[i * t->stride(0)] != 0;
}

}  // namespace cattn
