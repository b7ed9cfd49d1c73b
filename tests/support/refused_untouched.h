/* SPDX-License-Identifier: Apache-2.0 */
// Nothing lost: every fallible host entry point, called with one invalid argument at a time
// (NULL pointers, small struct sizes, each tensor NULL or malformed, wrong ndim/dtype/shape,
// devices that differ, out-of-range scalars, data the call must refuse), returns the status the
// header documents, names the argument, and writes nothing - no output tensor byte (padding and
// the guard bytes around the elements included), no byte of an output struct or scalar.
//
// This header holds the machinery; each tests/test_<utility>.cpp has its entry points' Setup
// and variants. A Setup is a valid call (checked to succeed, or for the communicator calls to
// fail only where a CPU-only build or a missing communicator must) that every variant starts
// from. Variants either rebuild inputs before the call is wired or edit the wired call.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/host_tensor.h"

namespace cattn_test {
namespace refused_untouched {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
inline int64_t g_variants = 0;  // variants checked, reported at the end

// Prints how much was swept when the whole binary runs (ctest runs one test per process, where
// the count is that test's share). Reporting only: each variant asserts on its own.
class SweepReport : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_variants > 0)
      std::printf(
          "[ refused_untouched ] %lld invalid-argument variants checked: documented status, "
          "named argument, nothing written\n",
          static_cast<long long>(g_variants));
  }
};
inline const auto* const g_sweep_report = ::testing::AddGlobalTestEnvironment(new SweepReport);

// Whether tensors marked kDLCUDA may reach past validation: only in a CPU-only build, where the
// library refuses them (in a CUDA build they would be launched on).
inline bool cpu_only_build() {
#if defined(CATTN_TEST_WITH_CUDA)
  return false;
#else
  return true;
#endif
}

// A struct or scalar the library may write, with guard bytes on both sides.
template <class T>
class Guarded {
 public:
  Guarded() : Guarded(T{}) {}
  explicit Guarded(const T& v) : bytes_(sizeof(T) + 2 * kPad, 0xC3) {
    std::memcpy(bytes_.data() + kPad, &v, sizeof v);
  }
  T* get() { return reinterpret_cast<T*>(bytes_.data() + kPad); }
  T* operator->() { return get(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  static constexpr size_t kPad = 16;  // keeps T aligned: vector storage is 16-byte aligned
  std::vector<uint8_t> bytes_;
};

// An output tensor with poison before its first element (byte offset) and after its last.
inline HostTensor out_tensor(std::vector<int64_t> shape, DLDataType dtype) {
  return HostTensor(std::move(shape), dtype, 1, 2);
}
inline HostTensor in_tensor(const std::vector<int64_t>& values, DLDataType dtype,
                     std::vector<int64_t> shape = {}) {
  return HostTensor::of(values, dtype, std::move(shape), 1, 1);
}

// A tensor argument of a wired call, as the library names it.
struct Slot {
  std::string name;
  DLTensor* t;
  std::function<void()> nullify;  // empty: NULL is valid for this argument
  bool device_variant = true;     // whether putting it on a GPU alone must be refused
};

// What every Setup shares: the buffers to watch, the wired tensor slots, and scratch storage
// for edited views.
struct Base {
  std::vector<HostTensor*> tensors;                    // every tensor of the call
  std::vector<const std::vector<uint8_t>*> structs;  // guarded structs and scalars
  std::vector<Slot> slots;
  DLTensor alias{};
  int64_t alias_shape[4] = {0, 0, 0, 0};
  std::vector<int64_t> scratch_shape, scratch_strides;

  std::vector<std::vector<uint8_t>> snapshot() const {
    std::vector<std::vector<uint8_t>> s;
    for (const HostTensor* t : tensors) s.push_back(t->bytes());
    for (const auto* b : structs) s.push_back(*b);
    return s;
  }
  DLTensor* slot(const std::string& name) {
    for (Slot& s : slots)
      if (s.name == name) return s.t;
    ADD_FAILURE() << "no slot " << name;
    return &alias;
  }
  // A view of `base`'s memory shifted by `elems` elements with `shape` (1-D or 2-D), for the
  // overlap variants; it stays inside base's buffer, which has 16 spare bytes after its end.
  DLTensor* overlap_view(HostTensor& base, int64_t elems, std::vector<int64_t> shape) {
    alias = *base.dl();
    for (size_t i = 0; i < shape.size(); ++i) alias_shape[i] = shape[i];
    alias.ndim = static_cast<int32_t>(shape.size());
    alias.shape = alias_shape;
    alias.strides = nullptr;
    alias.byte_offset += static_cast<uint64_t>(elems * base.elem());
    return &alias;
  }
};

template <class S>
struct Variant {
  std::string what;
  cattn_status_t code;
  std::string needle;
  std::function<void(S&)> before;  // edits inputs before the call is wired
  std::function<void(S&)> after;   // edits the wired call
};

// The variants every tensor argument gets: NULL (when required), each structural defect the
// DLPack conventions refuse, and a device of its own.
template <class S>
std::vector<Variant<S>> structural() {
  S probe;
  probe.wire();
  std::vector<Variant<S>> v;
  for (size_t i = 0; i < probe.slots.size(); ++i) {
    const Slot& p = probe.slots[i];
    const std::string n = p.name;
    auto at = [i](S& s) { return s.slots[i].t; };
    if (p.nullify)
      v.push_back({n + " NULL", CATTN_INVALID_ARGUMENT, n + " is NULL", nullptr,
                   [i](S& s) { s.slots[i].nullify(); }});
    v.push_back({n + " ndim 9", CATTN_INVALID_ARGUMENT, n + " has an unsupported ndim", nullptr,
                 [at](S& s) { at(s)->ndim = 9; }});
    v.push_back({n + " NULL shape", CATTN_INVALID_ARGUMENT, n + " has a NULL shape", nullptr,
                 [at](S& s) { at(s)->shape = nullptr; }});
    v.push_back({n + " on OpenCL", CATTN_NOT_SUPPORTED, n + " is on an unsupported device", nullptr,
                 [at](S& s) { at(s)->device = {kDLOpenCL, 0}; }});
    v.push_back({n + " device_id -1", CATTN_INVALID_ARGUMENT, n + " has a negative device_id",
                 nullptr, [at](S& s) { at(s)->device.device_id = -1; }});
    v.push_back({n + " 7-bit dtype", CATTN_NOT_SUPPORTED, n + " has an unsupported dtype", nullptr,
                 [at](S& s) { at(s)->dtype.bits = 7; }});
    v.push_back({n + " 2 lanes", CATTN_INVALID_ARGUMENT, n + " has the wrong dtype", nullptr,
                 [at](S& s) { at(s)->dtype.lanes = 2; }});
    v.push_back({n + " negative dim", CATTN_INVALID_ARGUMENT, n + " has a negative dimension",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_shape.assign(t->shape, t->shape + t->ndim);
                   s.scratch_shape.back() = -1;
                   t->shape = s.scratch_shape.data();
                 }});
    v.push_back({n + " dims overflowing int64", CATTN_INVALID_ARGUMENT, n + " overflows int64",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_shape.assign(static_cast<size_t>(t->ndim), int64_t{1} << 40);
                   if (t->ndim == 1) s.scratch_shape[0] = kI64Max;
                   t->shape = s.scratch_shape.data();
                 }});
    v.push_back({n + " negative stride", CATTN_INVALID_ARGUMENT, n + " has a negative stride",
                 nullptr, [at](S& s) {
                   DLTensor* t = at(s);
                   s.scratch_strides.assign(static_cast<size_t>(t->ndim), 1);
                   s.scratch_strides[0] = -1;
                   t->strides = s.scratch_strides.data();
                 }});
    v.push_back({n + " NULL data", CATTN_INVALID_ARGUMENT, n + " has NULL data", nullptr,
                 [at](S& s) { at(s)->data = nullptr; }});
    v.push_back({n + " byte_offset 2^63", CATTN_INVALID_ARGUMENT,
                 n + " addresses past the end of memory", nullptr,
                 [at](S& s) { at(s)->byte_offset = uint64_t{1} << 63; }});
    if (p.device_variant)
      v.push_back({n + " alone on a GPU", CATTN_INVALID_ARGUMENT, n, nullptr,
                   [at](S& s) { at(s)->device = {kDLCUDA, 0}; }});
  }
  return v;
}

// Runs the valid call, then every variant, each on a fresh Setup.
template <class S>
void sweep(const char* fn, std::vector<Variant<S>> variants, cattn_status_t baseline = CATTN_OK,
           const std::string& baseline_needle = "") {
  {
    S s;
    s.wire();
    const cattn_status_t st = s.call();
    ASSERT_EQ(st, baseline) << "the unchanged call: " << cattn_status_string(st) << " "
                            << cattn_last_error_message();
    if (baseline != CATTN_OK)
      EXPECT_NE(std::string(cattn_last_error_message()).find(baseline_needle), std::string::npos);
  }
  for (const Variant<S>& v : variants) {
    SCOPED_TRACE(std::string(fn) + ": " + v.what);
    S s;
    if (v.before) v.before(s);
    s.wire();
    if (v.after) v.after(s);
    const auto before = s.snapshot();
    const cattn_status_t st = s.call();
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(st, v.code) << cattn_status_string(st) << ": " << msg;
    EXPECT_NE(msg.find(fn), std::string::npos) << msg;
    EXPECT_NE(msg.find(v.needle), std::string::npos) << "message: " << msg << "\nexpected: " << v.needle;
    const auto after = s.snapshot();
    for (size_t i = 0; i < before.size(); ++i)
      EXPECT_EQ(before[i], after[i]) << (i < s.tensors.size() ? "tensor " : "struct ")
                                     << (i < s.tensors.size() ? i : i - s.tensors.size())
                                     << " was written by a failed call";
    ++g_variants;
  }
}

template <class S>
std::vector<Variant<S>> operator+(std::vector<Variant<S>> a, const std::vector<Variant<S>>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace refused_untouched
}  // namespace cattn_test
