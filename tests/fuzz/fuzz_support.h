/* SPDX-License-Identifier: Apache-2.0 */
// Shared pieces of the libFuzzer targets: tensors built structurally from the fuzzer's bytes,
// memory the harness owns (with guard zones), outputs placed over other tensors' memory
// (aliases), snapshots for "a failed call wrote nothing", and the checks every target makes.
//
// The one rule every generator keeps: a tensor the library may read or write claims only memory
// the harness owns. The library cannot know a buffer's real size and is entitled to trust shape x
// stride x element size; so a tensor whose claimed extent would not fit the buffer the harness is
// willing to allocate gets NULL data instead (which the library must refuse when it has
// elements), and extents that overflow are passed as they are (the library must refuse those
// from the numbers alone). Everything else - values, shapes against each other, dtypes, devices,
// scalars, struct sizes, which tensors share memory - is the fuzzer's to choose.
//
// Memory is shared (std::shared_ptr<Bytes>): an output re-placed over an input's (or an earlier
// output's) memory holds the same buffer, so a snapshot of a buffer covers every tensor in it.
// A target may define CATTN_FUZZ_MAX_PAYLOAD before including this header to own larger buffers.
#pragma once

#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cattn.h"

namespace cattn_fuzz {

[[noreturn]] inline void die(const char* file, int line, const char* cond, const std::string& why) {
  std::fprintf(stderr, "\n%s:%d: check failed: %s\n  %s\n  last error: %s\n", file, line, cond,
               why.c_str(), cattn_last_error_message());
  std::abort();
}
#define FZ_CHECK(cond, why)                                                  \
  do {                                                                       \
    if (!(cond)) ::cattn_fuzz::die(__FILE__, __LINE__, #cond, (why));        \
  } while (0)

// Every status a call returns must be one of the codes the header defines.
inline void check_status_valid(cattn_status_t s) {
  int code;
  std::memcpy(&code, &s, sizeof code);  // read as an int: the enum may hold anything
  FZ_CHECK(code >= 0 && code < CATTN_STATUS_COUNT_,
           "status " + std::to_string(code) + " outside [0, CATTN_STATUS_COUNT_)");
}

// A failed call must leave a message naming its function, of at most
// CATTN_LAST_ERROR_MESSAGE_MAX bytes with its NUL; a successful one changes nothing we can check
// about the message (it may keep an older one).
inline void check_failure_message(cattn_status_t s, const char* fn) {
  if (s == CATTN_OK) return;
  const char* m = cattn_last_error_message();
  FZ_CHECK(m != nullptr, std::string("no message after a failure of ") + fn);
  const size_t len = std::strlen(m);
  FZ_CHECK(len <= CATTN_LAST_ERROR_MESSAGE_MAX - 1,
           std::string("message of ") + fn + " is " + std::to_string(len) + " bytes, more than " +
               std::to_string(CATTN_LAST_ERROR_MESSAGE_MAX - 1));
  FZ_CHECK(std::strstr(m, fn) != nullptr, std::string("message does not name ") + fn);
}

#ifndef CATTN_FUZZ_MAX_PAYLOAD
#define CATTN_FUZZ_MAX_PAYLOAD (1 << 16)
#endif
constexpr size_t kGuard = 16;          // guard bytes on each side of every buffer
constexpr uint8_t kGuardByte = 0xC3;   // guard zone content
constexpr uint8_t kPoisonByte = 0xA5;  // initial content of output payloads
constexpr int64_t kMaxPayload = CATTN_FUZZ_MAX_PAYLOAD;  // largest tensor payload the harness allocates
// The largest byte span a view may claim (any dtype): larger ones are refused.
constexpr int64_t kMaxSpanBytes = int64_t{1} << 57;
// The library's limit on broadcast scans as the fuzz build sets it for the library and the
// targets alike (CATTN_FUZZ_MAX_BROADCAST_ELEMENTS, tests/fuzz/CMakeLists.txt).
constexpr int64_t kMaxBroadcast = CATTN_FUZZ_MAX_BROADCAST_ELEMENTS;

// Heap bytes with guard zones; payload() is where tensor data starts.
class Bytes {
 public:
  Bytes(size_t payload, uint8_t fill) : v_(payload + 2 * kGuard, kGuardByte) {
    std::memset(v_.data() + kGuard, fill, payload);
  }
  uint8_t* payload() { return v_.data() + kGuard; }
  size_t payload_size() const { return v_.size() - 2 * kGuard; }
  const std::vector<uint8_t>& all() const { return v_; }
  std::vector<uint8_t>& all() { return v_; }
  // Whether both guard zones still hold kGuardByte.
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (v_[i] != kGuardByte || v_[v_.size() - 1 - i] != kGuardByte) return false;
    return true;
  }

 private:
  std::vector<uint8_t> v_;
};

inline DLDataType i32() { return {kDLInt, 32, 1}; }
inline DLDataType i64() { return {kDLInt, 64, 1}; }

inline bool is_index_dtype(DLDataType d) {
  return d.code == kDLInt && d.lanes == 1 && (d.bits == 32 || d.bits == 64);
}
inline bool valid_width(DLDataType d) {
  return d.lanes == 1 && (d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64);
}
inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// The device type as the int a C caller stored (any value, read with memcpy: loading an
// out-of-range value as the C++ enum would be undefined), and its store.
inline int32_t device_type_of(const DLDevice& d) {
  int32_t v;
  static_assert(sizeof v == sizeof d.device_type, "DLDeviceType is int-sized");
  std::memcpy(&v, &d.device_type, sizeof v);
  return v;
}
inline void set_device(DLDevice& d, int32_t type, int32_t id) {
  std::memcpy(&d.device_type, &type, sizeof type);
  d.device_id = id;
}
inline bool host_type(int32_t t) { return t == kDLCPU || t == kDLCUDAHost; }
inline bool cuda_type(int32_t t) { return t == kDLCUDA || t == kDLCUDAManaged; }

// What a generator may do to a tensor beyond a legal layout.
struct Allow {
  bool perturb = true;  // structural mutations (NULL, ndim, dtype, device, strides, ...)
  bool cuda = true;     // may be marked as device memory
  bool huge = false;    // may become a broadcast view (a zero stride) claiming kMaxBroadcast - 1 .. 2^40
                        // elements over a few real bytes; only where the target predicts it
};

// A caller-side tensor: the DLTensor, its shape/stride arrays and the bytes behind it. Movable,
// not copyable (the DLTensor points into the shape and stride vectors).
struct Tensor {
  bool exists = true;   // false: passed as NULL
  bool bad = false;     // structurally invalid: the library must refuse any call that validates it
  bool device = false;  // marked kDLCUDA/kDLCUDAManaged (a CPU-only build cannot serve it)
  bool perturbed = false;  // anything beyond a legal layout was done to it
  bool output = false;
  bool broadcast = false;  // usable, with a zero stride over a dimension of more than one element
  std::vector<int64_t> shape, strides;  // storage (may be longer than ndim)
  std::shared_ptr<Bytes> mem;
  DLTensor t{};
  int64_t elem = 0;    // bytes per element as the library sees a valid dtype; 0 if invalid
  int64_t numel = 0;   // when !bad
  int64_t extent = 0;  // when usable with data: byte_offset + the bytes its elements span

  Tensor() = default;
  Tensor(Tensor&&) = default;
  Tensor& operator=(Tensor&&) = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  DLTensor* ptr() { return exists ? &t : nullptr; }
  const DLTensor* cptr() const { return exists ? &t : nullptr; }
  bool usable() const { return exists && !bad; }
  bool index() const { return is_index_dtype(t.dtype); }
  bool i64() const { return t.dtype.bits == 64; }
  int ndim() const { return t.ndim; }
  int64_t dim(int d) const { return t.shape[d]; }
  int32_t device_type() const { return device_type_of(t.device); }
  // The stride the library uses: the given one for a tensor with elements, else compact (an
  // empty tensor's strides are ignored).
  int64_t stride(int d) const {
    if (t.strides && numel > 0) return t.strides[d];
    // Saturates where the claimed sizes overflow int64 (the library refuses such a tensor).
    int64_t s = 1;
    for (int i = t.ndim - 1; i > d; --i)
      if (__builtin_mul_overflow(s, t.shape[i], &s)) return std::numeric_limits<int64_t>::max();
    return s;
  }
  // Address of element (i, j, k...) for a usable tensor with data.
  uint8_t* at(std::initializer_list<int64_t> idx) const {
    int64_t off = 0;
    int d = 0;
    for (int64_t i : idx) off += i * stride(d++);
    return static_cast<uint8_t*>(t.data) + t.byte_offset + off * elem;
  }
  // Row-major element i of a usable tensor (any i < numel, also of a huge broadcast view).
  uint8_t* flat(int64_t i) const {
    int64_t off = 0;
    for (int d = t.ndim - 1; d >= 0; --d) {
      off += (i % t.shape[d]) * stride(d);
      i /= t.shape[d];
    }
    return static_cast<uint8_t*>(t.data) + t.byte_offset + off * elem;
  }
  static int64_t load(const uint8_t* p, int64_t elem) {
    switch (elem) {
      case 1: { int8_t v; std::memcpy(&v, p, 1); return v; }
      case 2: { int16_t v; std::memcpy(&v, p, 2); return v; }
      case 4: { int32_t v; std::memcpy(&v, p, 4); return v; }
      default: { int64_t v; std::memcpy(&v, p, 8); return v; }
    }
  }
  static void store(uint8_t* p, int64_t elem, int64_t v) {
    switch (elem) {
      case 1: { int8_t w = static_cast<int8_t>(v); std::memcpy(p, &w, 1); break; }
      case 2: { int16_t w = static_cast<int16_t>(v); std::memcpy(p, &w, 2); break; }
      case 4: { int32_t w = static_cast<int32_t>(v); std::memcpy(p, &w, 4); break; }
      default: std::memcpy(p, &v, 8);
    }
  }
  int64_t get(int64_t i) const { return load(flat(i), elem); }
  void set(int64_t i, int64_t v) const { store(flat(i), elem, v); }
  // Writes `values` in row-major order (as many as fit); no-op for tensors without usable data.
  // (On a broadcast view the later values land on the earlier ones' bytes.)
  void fill(const std::vector<int64_t>& values) const {
    if (!usable() || elem == 0 || t.data == nullptr) return;
    for (int64_t i = 0; i < numel && i < static_cast<int64_t>(values.size()); ++i)
      set(i, values[static_cast<size_t>(i)]);
  }
  // Every value in row-major order; not for huge broadcast views (targets read those with get).
  std::vector<int64_t> values() const {
    std::vector<int64_t> v;
    if (!usable() || t.data == nullptr) return v;
    if (numel > (int64_t{1} << 22)) die(__FILE__, __LINE__, "numel <= 2^22", "values() of a huge tensor");
    for (int64_t i = 0; i < numel; ++i) v.push_back(get(i));
    return v;
  }
  std::vector<uint8_t> snapshot() const { return mem ? mem->all() : std::vector<uint8_t>(); }
  bool unchanged(const std::vector<uint8_t>& s) const { return !mem || mem->all() == s; }
  // Expected bytes after a call: a copy of `before` (a snapshot of t's buffer) with element i
  // (row-major) set to v.
  static void put(std::vector<uint8_t>& image, const Tensor& t, int64_t i, int64_t v) {
    const uint8_t* p = t.flat(i);
    store(image.data() + (p - t.mem->all().data()), t.elem, v);
  }
};

// One line about a tensor, for the reproducer output (CATTN_FUZZ_VERBOSE=1).
inline std::string describe(const Tensor& t) {
  if (!t.exists) return "NULL";
  std::string s = "ndim " + std::to_string(t.t.ndim) + " shape [";
  for (int d = 0; t.t.shape && d < t.t.ndim && d < 9; ++d) s += (d ? "," : "") + std::to_string(t.t.shape[d]);
  s += "] strides ";
  if (t.t.strides) {
    s += "[";
    for (int d = 0; d < t.t.ndim && d < 9; ++d) s += (d ? "," : "") + std::to_string(t.t.strides[d]);
    s += "]";
  } else {
    s += "NULL";
  }
  s += " dtype " + std::to_string(t.t.dtype.code) + "/" + std::to_string(t.t.dtype.bits) + "x" +
       std::to_string(t.t.dtype.lanes) + " dev " + std::to_string(device_type_of(t.t.device)) + ":" +
       std::to_string(t.t.device.device_id) + " off " + std::to_string(t.t.byte_offset) +
       (t.t.data ? "" : " data NULL") + (t.bad ? " (bad)" : "") + (t.broadcast ? " (broadcast)" : "");
  if (t.mem && t.t.data)
    s += " at +" + std::to_string(static_cast<const uint8_t*>(t.t.data) - t.mem->payload()) + " of " +
         std::to_string(t.mem->payload_size()) + (t.mem.use_count() > 1 ? " (shared)" : "");
  if (t.usable() && t.t.data && t.elem && t.numel <= 64) {
    s += " values";
    for (int64_t v : t.values()) s += " " + std::to_string(v);
  }
  return s;
}
inline bool verbose() {
  static const bool v = std::getenv("CATTN_FUZZ_VERBOSE") != nullptr;
  return v;
}
// Where two byte images first differ, for the reproducer output.
inline std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  if (got.size() != want.size()) return "sizes differ";
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + " of " + std::to_string(got.size()) + " (payload starts at " +
             std::to_string(kGuard) + "): got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  return "equal";
}
#define FZ_LOG(...)                                   \
  do {                                                \
    if (::cattn_fuzz::verbose()) std::fprintf(stderr, __VA_ARGS__); \
  } while (0)

// Structural facts about a DLTensor as the header's conventions define them, computed without
// the library: returns true when the library must refuse it; fills numel and the claimed extent
// (byte_offset + span in bytes) when it is acceptable. The device type is compared as the int
// stored in the field; a tensor without elements may have any strides (they are ignored).
inline bool structurally_bad(const DLTensor& t, int64_t* numel_out, __int128* extent_out) {
  if (t.ndim < 0 || t.ndim > 8) return true;
  if (t.ndim > 0 && t.shape == nullptr) return true;
  const int32_t type = device_type_of(t.device);
  if (!host_type(type) && !cuda_type(type)) return true;
  if (t.device.device_id < 0) return true;
  if (!valid_width(t.dtype)) return true;
  const int64_t elem = t.dtype.bits / 8;
  __int128 numel = 1;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) return true;
    numel *= t.shape[i];
    if (numel > std::numeric_limits<int64_t>::max()) return true;
  }
  if (numel * elem > std::numeric_limits<int64_t>::max()) return true;
  __int128 span = 0;
  if (numel > 0) {
    for (int i = 0; i < t.ndim; ++i)
      if (t.strides && t.strides[i] < 0) return true;
    int64_t compact = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      const int64_t s = t.strides ? t.strides[i] : compact;
      // A dimension of one element never advances: its stride may be anything.
      if (t.shape[i] > 1) {
        const __int128 term = static_cast<__int128>(t.shape[i] - 1) * s;
        if (term > kMaxSpanBytes) return true;
        span += term;
        if (span > kMaxSpanBytes) return true;
      }
      compact *= t.shape[i];
    }
    span = (span + 1) * elem;
    // Every dtype: no view spans more than 2^57 bytes.
    if (span > kMaxSpanBytes) return true;
    if (t.data == nullptr) return true;
  }
  if (t.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return true;
  // The first element and the span must lie within the address space.
  if (static_cast<unsigned __int128>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset +
          static_cast<unsigned __int128>(span) > std::numeric_limits<uintptr_t>::max())
    return true;
  *numel_out = static_cast<int64_t>(numel);
  *extent_out = static_cast<__int128>(t.byte_offset) + span;
  return false;
}

// Sets the derived fields (bad, numel, extent, elem, broadcast, device) from the DLTensor.
inline void derive(Tensor& x) {
  __int128 extent = 0;
  x.bad = structurally_bad(x.t, &x.numel, &extent);
  x.elem = valid_width(x.t.dtype) ? x.t.dtype.bits / 8 : 0;
  x.device = cuda_type(device_type_of(x.t.device));
  if (x.bad) x.numel = 0;
  x.extent = x.bad ? 0 : static_cast<int64_t>(std::min<__int128>(extent, std::numeric_limits<int64_t>::max()));
  x.broadcast = false;
  if (!x.bad && x.numel > 0)
    for (int d = 0; d < x.t.ndim; ++d) x.broadcast = x.broadcast || (x.dim(d) > 1 && x.stride(d) == 0);
}

// Gives a tensor whose DLTensor fields (but data) are set its memory: exactly what it claims
// when that is acceptable and small enough; otherwise a tensor with elements gets NULL data,
// which makes it one the library must refuse. Outputs are filled with poison, inputs with zeros.
inline void allocate(Tensor& x, bool null_data) {
  int64_t numel = 0;
  __int128 extent = 0;
  x.t.data = reinterpret_cast<void*>(uintptr_t{1});  // placeholder for the structural check
  const bool bad_shape = structurally_bad(x.t, &numel, &extent);
  x.t.data = nullptr;
  size_t payload = 0;
  const bool owned = !bad_shape && extent <= kMaxPayload;
  if (owned) payload = static_cast<size_t>(extent);
  else if (bad_shape || numel == 0) payload = 16;  // something to point at; never touched
  x.mem = std::make_shared<Bytes>(payload, x.output ? kPoisonByte : 0);
  if (!null_data && (owned || numel == 0 || bad_shape)) x.t.data = x.mem->payload();
  // A NULL-data tensor whose extent we do not own stays NULL: refused by the library when it
  // has elements, harmless when it has none.
  if (!owned && numel > 0 && !bad_shape) x.t.data = nullptr;
  // A bad tensor may still point at the small placeholder buffer; the library refuses it from
  // its numbers before reading anything.
  derive(x);
}

// Builds a tensor meant to be `shape` of `dtype` (the valid form for its role), in a layout the
// fuzzer picks (compact, NULL strides, strided, padded rows, transposed, misaligned byte
// offset), and - when allowed - with one structural mutation. Outputs are filled with poison,
// inputs with zeros (the caller writes values with fill()).
inline Tensor make_tensor(FuzzedDataProvider& fdp, std::vector<int64_t> shape, DLDataType dtype,
                          bool output, Allow allow = {}) {
  Tensor x;
  x.output = output;
  int ndim = static_cast<int>(shape.size());
  int32_t dev_type = kDLCPU, dev_id = 0;
  uint64_t byte_offset = 0;
  enum Stride { Default, Null, Zero, Negative, Huge, HugeOne, Min, Pow61, SpanEdge };
  Stride stride_mut = Default;
  int stride_dim = 0;
  bool null_shape = false, null_data = false, huge_offset = false;
  int64_t broadcast_size = 0;  // > 0: a zero stride over a dimension of this many elements

  const uint8_t p = allow.perturb ? fdp.ConsumeIntegral<uint8_t>() : 0;
  if (p >= 176 && p < 216) {
    x.perturbed = true;
    switch (p - 176) {
      case 0: x.exists = false; break;
      case 1: ndim = -1; break;
      case 2: ndim = 9; break;
      case 3: if (ndim > 0) --ndim; break;
      case 4: ++ndim; shape.push_back(1); break;
      case 5: ++ndim; shape.insert(shape.begin(), 2); break;
      case 6: null_shape = true; break;
      case 7: dtype = dtype.bits == 64 ? i32() : i64(); break;
      case 8: dtype = {kDLFloat, 32, 1}; break;
      case 9: dtype = {kDLUInt, dtype.bits, 1}; break;
      case 10: dtype = {kDLInt, 16, 1}; break;
      case 11: dtype = {kDLInt, 8, 1}; break;
      case 12: dtype = {kDLInt, 7, 1}; break;
      case 13: dtype = {kDLInt, 0, 1}; break;
      case 14: dtype = {kDLInt, 32, 2}; break;
      case 15: dtype = {kDLInt, 64, 0}; break;
      case 16: dtype = {99, 32, 1}; break;
      case 17: dtype = {kDLBfloat, 16, 1}; break;
      case 18: dev_type = kDLCUDAHost; break;
      case 19: dev_type = kDLCUDA; break;
      case 20: dev_type = kDLCUDA; dev_id = 1; break;
      case 21: dev_type = kDLCUDAManaged; break;
      case 22: dev_type = kDLOpenCL; break;
      case 23: dev_type = kDLROCM; break;
      case 24: dev_id = -1; break;
      case 25: dev_id = 7; break;
      case 26: case 27: case 28: case 29: case 30: case 31: {
        // One dimension resized: emptied, one off, or far beyond any buffer.
        if (shape.empty()) break;
        const size_t d = fdp.ConsumeIntegralInRange<size_t>(0, shape.size() - 1);
        const int64_t choices[] = {0, shape[d] < std::numeric_limits<int64_t>::max() ? shape[d] + 1 : 0,
                                   shape[d] > 0 ? shape[d] - 1 : 1, -1,
                                   std::numeric_limits<int64_t>::max(), int64_t{1} << 40};
        shape[d] = choices[p - 176 - 26];
        break;
      }
      case 32: stride_mut = Zero; break;
      case 33: stride_mut = Negative; break;
      case 34: stride_mut = Huge; break;
      case 35: stride_mut = HugeOne; break;
      case 36: null_data = true; break;
      case 37: huge_offset = true; byte_offset = uint64_t{1} << 63; break;
      case 38: huge_offset = true; byte_offset = std::numeric_limits<uint64_t>::max(); break;
      case 39: huge_offset = true; byte_offset = uint64_t{1} << 40; break;
    }
  } else if (p >= 216) {
    x.perturbed = true;
    switch (p - 216) {
      // Device types no DLPack header of this build names, stored as ints (a newer DLPack's
      // types, garbage): refused with CATTN_NOT_SUPPORTED.
      case 0: dev_type = 16; break;
      case 1: dev_type = 17; break;
      case 2: dev_type = 255; break;
      case 3: dev_type = 0x7fffffff; break;
      case 4: dev_type = -1; break;
      case 5: dev_type = 0; break;
      case 6: dev_type = 14; break;
      case 7: dev_type = std::numeric_limits<int32_t>::min(); break;
      // A broadcast view claiming a huge size over a few real bytes (only where the target
      // expects one; elsewhere a small one).
      // A view the library accepts is scanned in full (about 0.25 s for 2^24 elements in this
      // instrumented build), so the exact limit is drawn rarely (and seeded in the corpus).
      case 8: case 9: case 10: case 11: case 12: case 13: {
        const bool limit = fdp.ConsumeIntegral<uint8_t>() == 0x5C;
        const int64_t sizes[] = {kMaxBroadcast + 1, int64_t{1} << 32, int64_t{1} << 40,
                                 (int64_t{1} << 12) + 1, int64_t{1} << 16,
                                 limit ? kMaxBroadcast - fdp.ConsumeIntegralInRange<int64_t>(0, 1) : kMaxBroadcast + 1};
        if (allow.huge) broadcast_size = sizes[p - 216 - 8];
        else stride_mut = Zero;  // a broadcast view of the size the role has
        break;
      }
      // Empty tensors with strides that would be refused on a tensor with elements.
      case 14: case 15: case 16: case 17: case 18: {
        if (shape.empty()) break;
        shape[fdp.ConsumeIntegralInRange<size_t>(0, shape.size() - 1)] = 0;
        const Stride muts[] = {Negative, Zero, Huge, Min, Negative};
        stride_mut = muts[p - 216 - 14];
        break;
      }
      case 19: stride_mut = Min; break;
      // Strides whose span fits int64 but not the 2^57-byte limit (the 1.1 probe's 1-byte
      // view with stride 2^61), or only just passes it.
      case 20: stride_mut = Pow61; break;
      case 21: stride_mut = SpanEdge; break;
      default: x.perturbed = false; break;  // unperturbed
    }
  }
  if (!allow.cuda && cuda_type(dev_type)) dev_type = kDLCPU;
  if ((stride_mut != Default || broadcast_size > 0) && !shape.empty())
    stride_dim = fdp.ConsumeIntegralInRange<int>(0, static_cast<int>(shape.size()) - 1);
  if (broadcast_size > 0 && !shape.empty()) {
    shape[static_cast<size_t>(stride_dim)] = broadcast_size;
    stride_mut = Zero;
  }
  if (ndim > static_cast<int>(shape.size())) shape.resize(static_cast<size_t>(ndim), 1);

  // Legal layout: how strides and the byte offset place the elements in the buffer.
  const int elem_alloc = valid_width(dtype) ? dtype.bits / 8 : 8;
  const int layout = fdp.ConsumeIntegralInRange<int>(0, 7);
  const int nd = std::max(ndim, 0);
  std::vector<int64_t> strides(shape.size() + 1, 0);
  bool explicit_strides = layout != 0;
  {
    // Sizes used to derive strides; negative or huge ones only make the strides meaningless,
    // which is fine: such tensors are refused anyway (a broadcast dimension gets stride 0).
    auto sz = [&](int i) { return shape[i] < 0 || shape[i] > (1 << 20) ? 1 : shape[i]; };
    int64_t compact = 1;
    const int64_t step = layout == 2 ? 2 : layout == 3 ? 3 : 1;
    const int64_t pad = layout == 5 ? 1 + fdp.ConsumeIntegralInRange<int>(0, 3) : 0;
    for (int i = nd - 1; i >= 0; --i) {
      strides[i] = compact * step;
      compact *= sz(i) + (i == nd - 1 ? pad : 0);
    }
    if (layout == 6 && nd >= 2) {  // column-major: the first dimension is the fastest
      int64_t c = 1;
      for (int i = 0; i < nd; ++i) {
        strides[i] = c;
        c *= sz(i);
      }
    }
  }
  if (!huge_offset) {
    if (layout == 4)
      byte_offset = fdp.ConsumeIntegralInRange<int>(1, 7);  // misaligned first element
    else if (layout == 7)
      byte_offset = static_cast<uint64_t>(elem_alloc) * fdp.ConsumeIntegralInRange<int>(1, 4);
  }
  if (stride_mut != Default && nd > 0) {
    const int d = std::min(stride_dim, nd - 1);
    explicit_strides = true;
    switch (stride_mut) {
      case Zero: strides[d] = 0; break;
      case Negative: strides[d] = -std::max<int64_t>(1, strides[d]); break;
      case Huge: strides[d] = std::numeric_limits<int64_t>::max() / 2; break;
      case HugeOne: strides[d] = int64_t{1} << 40; break;
      case Min: strides[d] = std::numeric_limits<int64_t>::min(); break;
      case Pow61: strides[d] = int64_t{1} << 61; break;
      case SpanEdge: strides[d] = (int64_t{1} << 57) / elem_alloc - fdp.ConsumeIntegralInRange<int>(0, 1); break;
      default: break;
    }
  }

  x.shape = shape;
  x.shape.resize(std::max<size_t>(x.shape.size(), 1));
  x.strides = strides;
  x.t.ndim = ndim;
  x.t.shape = null_shape ? nullptr : x.shape.data();
  x.t.strides = explicit_strides ? x.strides.data() : nullptr;
  x.t.dtype = dtype;
  set_device(x.t.device, dev_type, dev_id);
  x.t.byte_offset = byte_offset;
  allocate(x, null_data);
  return x;
}

// A tensor of `shape` with exactly these strides (NULL: compact) and byte offset, in owned memory
// when it fits (see allocate); for generators that need a particular layout, such as a broadcast
// view of a given size.
inline Tensor make_tensor_with(std::vector<int64_t> shape, const std::vector<int64_t>* strides,
                               DLDataType dtype, bool output, uint64_t byte_offset = 0) {
  Tensor x;
  x.output = output;
  x.t.ndim = static_cast<int>(shape.size());
  x.shape = std::move(shape);
  x.shape.resize(std::max<size_t>(x.shape.size(), 1));
  if (strides) {
    x.strides = *strides;
    x.strides.resize(x.shape.size());
  }
  x.t.shape = x.shape.data();
  x.t.strides = strides ? x.strides.data() : nullptr;
  x.t.dtype = dtype;
  set_device(x.t.device, kDLCPU, 0);
  x.t.byte_offset = byte_offset;
  allocate(x, false);
  return x;
}

// A 1-D broadcast view (stride 0) of `n` elements all holding `value`, over one real element.
inline Tensor make_broadcast_1d(int64_t n, DLDataType dtype, int64_t value) {
  const std::vector<int64_t> zero{0};
  Tensor x = make_tensor_with({n}, &zero, dtype, false);
  if (x.usable() && x.t.data && x.numel > 0) x.set(0, value);
  return x;
}

// Where a usable tensor's memory is, for the overlap rules: 0 for the host (kDLCPU, kDLCUDAHost,
// any device_id), 1 + device_id for a GPU (kDLCUDA, kDLCUDAManaged).
inline int64_t where_of(const Tensor& t) {
  return cuda_type(t.device_type()) ? 1 + int64_t{t.t.device.device_id} : 0;
}

// [first, last) bytes a usable tensor's elements span; first == last when it has none.
inline std::pair<uintptr_t, uintptr_t> byte_range(const Tensor& x) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(x.t.data) + static_cast<uintptr_t>(x.t.byte_offset);
  if (x.numel == 0) return {lo, lo};
  int64_t span = 1;
  for (int d = 0; d < x.t.ndim; ++d) span += (x.t.shape[d] - 1) * x.stride(d);
  return {lo, lo + static_cast<uintptr_t>(span * x.elem)};
}

// Whether two tensors share a byte the library compares: both present and valid, with elements
// whose byte ranges intersect. One address space holds every device's memory, so the devices
// the tensors are marked with do not matter.
inline bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.usable() || !b.usable() || a.numel == 0 || b.numel == 0) return false;
  const auto x = byte_range(a), y = byte_range(b);
  return x.first < y.second && y.first < x.second;
}

// The library's "same view": same first element, place, ndim, dtype and shape, and the same
// strides in every dimension of more than one element.
inline bool same_view(const Tensor& a, const Tensor& b) {
  if (!a.usable() || !b.usable()) return false;
  if (byte_range(a).first != byte_range(b).first || where_of(a) != where_of(b)) return false;
  if (a.ndim() != b.ndim() || !same_dtype(a.t.dtype, b.t.dtype)) return false;
  for (int d = 0; d < a.ndim(); ++d)
    if (a.dim(d) != b.dim(d) || (a.dim(d) > 1 && a.stride(d) != b.stride(d))) return false;
  return true;
}

// Re-places output `out` (a usable tensor with data, alone in its buffer) over the memory of
// `other` (an input, or an output made earlier): its first element lands at, inside, just
// before, just after, one byte into or anywhere around `other`'s elements. The buffer is shared
// (an aliased output touches the other tensor's buffer); when `out` would not fit it, `other`
// is moved into a larger buffer first (its bytes, and so its values, kept), provided no other
// tensor shares its buffer yet. Returns whether `out` was re-placed.
inline bool alias_onto(FuzzedDataProvider& fdp, Tensor& out, Tensor& other) {
  if (&out == &other || !out.usable() || !other.usable() || !out.mem || !other.mem ||
      !out.t.data || !other.t.data || out.mem == other.mem || out.mem.use_count() != 1)
    return false;
  uint8_t* base = other.mem->payload();
  const int64_t size = static_cast<int64_t>(other.mem->payload_size());
  const auto range = byte_range(other), mine = byte_range(out);
  const int64_t olo = static_cast<int64_t>(range.first - reinterpret_cast<uintptr_t>(base));
  const int64_t ohi = static_cast<int64_t>(range.second - reinterpret_cast<uintptr_t>(base));
  const int64_t span = static_cast<int64_t>(mine.second - mine.first);
  int64_t lo = olo;  // where out's first element goes, relative to `base`
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: break;                                                                   // same first element
    case 1: lo = olo + fdp.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(ohi - olo - 1, 0)); break;
    case 2: lo = olo - span; break;                                                  // ends where other begins
    case 3: lo = ohi; break;                                                         // begins where other ends
    case 4: lo = olo - span + 1; break;                                              // one shared byte
    case 5: lo = ohi - 1; break;                                                     // one shared byte
    case 6: lo = olo - fdp.ConsumeIntegralInRange<int64_t>(0, span); break;
    default: lo = fdp.ConsumeIntegralInRange<int64_t>(-span, size); break;
  }
  const int64_t data = lo - static_cast<int64_t>(out.t.byte_offset), end = data + out.extent;
  if (data >= 0 && end <= size) {
    out.mem = other.mem;
    out.t.data = base + data;
    return true;
  }
  if (other.mem.use_count() != 1) return false;  // another tensor lies in other's buffer
  const int64_t from = std::min<int64_t>(0, data), to = std::max(size, end);
  if (to - from > 4 * kMaxPayload) return false;
  auto fresh = std::make_shared<Bytes>(static_cast<size_t>(to - from), kPoisonByte);
  std::memcpy(fresh->payload() - from, base, static_cast<size_t>(size));
  other.t.data = fresh->payload() - from + (static_cast<uint8_t*>(other.t.data) - base);
  other.mem = fresh;
  out.t.data = fresh->payload() + (data - from);
  out.mem = fresh;
  return true;
}

// With probability 1 / one_in, re-places output `out` over the memory of one of `others`
// (inputs, or outputs made before it); NULL entries are skipped. Returns the tensor it now
// shares memory with, or nullptr.
inline const Tensor* maybe_alias(FuzzedDataProvider& fdp, Tensor& out, std::initializer_list<Tensor*> others,
                                 int one_in = 6) {
  if (fdp.ConsumeIntegralInRange<int>(0, one_in - 1) != 0) return nullptr;
  std::vector<Tensor*> c;
  for (Tensor* t : others)
    if (t && t != &out && t->usable() && t->mem && t->t.data) c.push_back(t);
  if (c.empty()) return nullptr;
  Tensor* o = c[fdp.ConsumeIntegralInRange<size_t>(0, c.size() - 1)];
  return alias_onto(fdp, out, *o) ? o : nullptr;
}

// A separate DLTensor over `src`'s memory that is mostly the same view (same first element,
// place, ndim, dtype, shape and strides where a dimension has more than one element), reached
// by other means: explicit strides for NULL ones (or the reverse), any strides in dimensions of
// one element (any at all for an empty tensor), kDLCUDAHost for kDLCPU, another split of the
// first element's address between data and byte_offset. Sometimes a near miss instead, which is
// not the same view: one row fewer, the next element first, a narrower dtype, GPU memory.
// Claims only memory `src` claims. same_view() tells which it is.
inline Tensor view_of(FuzzedDataProvider& fdp, const Tensor& src, bool output) {
  Tensor x;
  x.output = output;
  x.exists = src.exists;
  x.shape = src.shape;
  x.strides = src.strides;
  x.strides.resize(std::max(x.shape.size(), x.strides.size()), 0);
  x.t = src.t;
  x.t.shape = src.t.shape ? x.shape.data() : nullptr;
  x.t.strides = src.t.strides ? x.strides.data() : nullptr;
  x.mem = src.mem;
  const int choice = fdp.ConsumeIntegralInRange<int>(0, 11);
  if (src.usable() && src.t.data) {
    const int nd = src.ndim();
    auto explicit_strides = [&] {
      for (int d = 0; d < nd; ++d) x.strides[d] = src.stride(d);
      x.t.strides = x.strides.data();
    };
    switch (choice) {
      case 1:  // the strides the library uses, the other way round
        if (src.t.strides) {
          bool compact = true;
          int64_t c = 1;
          for (int d = nd - 1; d >= 0 && compact; --d) {
            if (src.dim(d) > 1 && src.stride(d) != c) compact = false;
            // A claimed size past int64 cannot be compact: stop before the product overflows.
            if (__builtin_mul_overflow(c, src.dim(d), &c)) compact = false;
          }
          if (compact || src.numel == 0) x.t.strides = nullptr;
        } else {
          explicit_strides();
        }
        break;
      case 2: {  // free strides where they do not matter
        explicit_strides();
        const int64_t free_values[] = {0, 1, 3, int64_t{1} << 40, std::numeric_limits<int64_t>::max(), -1,
                                       std::numeric_limits<int64_t>::min()};
        for (int d = 0; d < nd; ++d)
          if (src.numel == 0 || src.dim(d) <= 1)
            x.strides[d] = free_values[fdp.ConsumeIntegralInRange<int>(0, src.numel == 0 ? 6 : 4)];
        break;
      }
      case 3:  // another host type or id: still the host
        if (where_of(src) == 0)
          set_device(x.t.device, src.device_type() == kDLCPU ? kDLCUDAHost : kDLCPU,
                     fdp.ConsumeIntegralInRange<int32_t>(0, 3));
        break;
      case 4: {  // data + byte_offset split differently
        const int64_t back = static_cast<uint8_t*>(src.t.data) - src.mem->payload();
        const int64_t k = fdp.ConsumeIntegralInRange<int64_t>(-back, static_cast<int64_t>(std::min<uint64_t>(src.t.byte_offset, 1 << 20)));
        x.t.data = static_cast<uint8_t*>(src.t.data) + k;
        x.t.byte_offset = src.t.byte_offset - static_cast<uint64_t>(k);
        break;
      }
      case 5:  // one row fewer
        if (nd > 0 && src.dim(0) > 0) x.shape[0] = src.dim(0) - 1;
        break;
      case 6: {  // starting at the next row (where a row's bytes are representable)
        int64_t row_bytes = 0;
        if (nd > 0 && src.dim(0) > 1 &&
            !__builtin_mul_overflow(src.stride(0), src.elem, &row_bytes)) {
          explicit_strides();
          x.shape[0] = src.dim(0) - 1;
          x.t.byte_offset = src.t.byte_offset + static_cast<uint64_t>(row_bytes);
        }
        break;
      }
      case 7:  // a narrower dtype over the same bytes
        if (src.t.dtype.bits == 64) x.t.dtype.bits = 32;
        break;
      case 8:  // not the host
        if (where_of(src) == 0) set_device(x.t.device, kDLCUDA, 0);
        else set_device(x.t.device, kDLCPU, 0);
        break;
      default: break;  // the same fields
    }
  }
  derive(x);
  return x;
}

// A struct the library reads or writes, placed at the start of owned bytes with guard zones and
// room for a struct_size larger than the known one (a newer caller's struct; the library reads
// only the fields it knows, so a claim past them - up to SIZE_MAX - gets 64 owned bytes).
template <class T>
class Struct {
 public:
  // size: the struct_size to store.
  Struct(const T& init, size_t struct_size)
      : mem_(std::max(sizeof(T), std::min(struct_size, sizeof(T) + 64)), kGuardByte) {
    // Keep T's alignment: payload() is kGuard (16) bytes into a vector, which is 16-aligned.
    std::memcpy(mem_.payload(), &init, sizeof(T));
    T* p = get();
    p->struct_size = struct_size;
  }
  T* get() { return reinterpret_cast<T*>(mem_.payload()); }
  std::vector<uint8_t> snapshot() const { return mem_.all(); }
  bool unchanged(const std::vector<uint8_t>& s) const { return mem_.all() == s; }
  bool guards_intact() const { return mem_.guards_intact(); }
  // The struct bytes as they are now, for building an expected image.
  T value() { T v; std::memcpy(&v, mem_.payload(), sizeof v); return v; }
  // True when the bytes equal `before` with the struct replaced by `expected`.
  bool equals(const std::vector<uint8_t>& before, const T& expected) const {
    std::vector<uint8_t> image = before;
    std::memcpy(image.data() + kGuard, &expected, sizeof expected);
    return mem_.all() == image;
  }

 private:
  Bytes mem_;
};

// The struct_size rule (cattn.h, promise 9): one of the sizes a header version defined
// (`versions`, oldest first), or the newest or more (a newer header's struct, however large).
inline bool struct_size_ok(size_t size, std::initializer_list<size_t> versions) {
  for (size_t v : versions)
    if (size == v) return true;
  return size >= *(versions.end() - 1);
}

// struct_size values at every boundary of `versions` (oldest first): mostly the newest;
// otherwise 0, 8, each version and its neighbours, a size between two versions, a newer
// struct's sizes up to SIZE_MAX.
inline size_t pick_struct_size(FuzzedDataProvider& fdp, std::initializer_list<size_t> versions) {
  const size_t newest = *(versions.end() - 1);
  const uint8_t c = fdp.ConsumeIntegral<uint8_t>();
  if (c < 224) return newest;
  const size_t v = *(versions.begin() + fdp.ConsumeIntegralInRange<size_t>(0, versions.size() - 1));
  switch (c % 12) {
    case 0: return 0;
    case 1: return sizeof(size_t);
    case 2: return v - 1;
    case 3: return v - 8;
    case 4: return v + 1;
    case 5: return v + 8;
    case 6: return v;
    case 7: return fdp.ConsumeIntegralInRange<size_t>(*versions.begin(), newest + 16);
    case 8: return std::numeric_limits<size_t>::max();
    case 9: return std::numeric_limits<size_t>::max() - 7;
    case 10: return size_t{1} << 63;
    default: return newest + 4096;
  }
}
inline size_t pick_struct_size(FuzzedDataProvider& fdp, size_t known) {
  return pick_struct_size(fdp, {known});
}

// struct_size values for the elements of an array, whose struct_size is its stride (the harness
// owns count x struct_size bytes): the known size, its neighbours, 0 and 8.
inline size_t pick_element_size(FuzzedDataProvider& fdp, size_t known) {
  const uint8_t c = fdp.ConsumeIntegral<uint8_t>();
  if (c < 232) return known;
  switch (c % 6) {
    case 0: return 0;
    case 1: return known - 1;
    case 2: return known - 8;
    case 3: return known + 8;
    case 4: return known + 1;
    default: return sizeof(size_t);
  }
}

// The released sizes of the structs that grew in 1.1.
#define CATTN_FUZZ_METADATA_SIZES \
  { CATTN_COMMON_ATTN_METADATA_SIZE_1_0, CATTN_COMMON_ATTN_METADATA_SIZE_1_1 }
#define CATTN_FUZZ_EXTEND_ARGS_SIZES \
  { CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0, CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE }
#define CATTN_FUZZ_LOCAL_ATTENTION_ARGS_SIZES \
  { offsetof(cattn_local_attention_args_t, plan) + sizeof(void*), CATTN_LOCAL_ATTENTION_ARGS_SIZE }
#define CATTN_FUZZ_DCP_ARGS_SIZES \
  { offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode), CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE }

// With probability 1 / one_in, copies struct `s` into the buffer of output `out`, at an
// 8-aligned offset where its bytes meet out's elements, and returns the copy for the call to
// read: an output over the call's own argument struct, which the call must refuse before
// writing anything (*placed tells). Otherwise returns s.get(). Call it before the buffer is
// watched.
template <class T>
T* maybe_struct_over_output(FuzzedDataProvider& fdp, Struct<T>& s, const Tensor& out,
                            bool* placed, int one_in = 12) {
  *placed = false;
  if (fdp.ConsumeIntegralInRange<int>(0, one_in - 1) != 0) return s.get();
  if (!out.exists || !out.usable() || !out.mem || !out.t.data || out.numel == 0) return s.get();
  uint8_t* base = out.mem->payload();
  const int64_t size = static_cast<int64_t>(out.mem->payload_size());
  const auto r = byte_range(out);
  const int64_t lo = static_cast<int64_t>(r.first - reinterpret_cast<uintptr_t>(base));
  const int64_t hi = static_cast<int64_t>(r.second - reinterpret_cast<uintptr_t>(base));
  // The bytes the library reads of the struct (min(struct_size, sizeof(T))) must meet out's;
  // all sizeof(T) copied bytes must fit the buffer.
  const int64_t bytes = static_cast<int64_t>(sizeof(T));
  const int64_t meet = static_cast<int64_t>(std::min(s.get()->struct_size, sizeof(T)));
  if (meet == 0) return s.get();
  // Offsets k (multiples of 8) with [k, k + bytes) inside the buffer and [k, k + meet) meeting
  // [lo, hi).
  const int64_t first = std::max<int64_t>(0, lo - meet + 1), last = std::min(hi - 1, size - bytes);
  const int64_t k0 = (first + 7) / 8, k1 = last >= 0 ? last / 8 : -1;
  if (k1 < k0) return s.get();
  const int64_t k = 8 * fdp.ConsumeIntegralInRange<int64_t>(k0, k1);
  std::memcpy(base + k, s.get(), sizeof(T));
  *placed = true;
  return reinterpret_cast<T*>(base + k);
}

// Index values: mostly small and non-negative, sometimes extreme (the int32 and int64 limits and
// their neighbours, 2^32, 2^62).
inline int64_t pick_value(FuzzedDataProvider& fdp, int64_t typical_max) {
  const uint8_t c = fdp.ConsumeIntegral<uint8_t>();
  if (c < 224) return fdp.ConsumeIntegralInRange<int64_t>(0, typical_max);
  constexpr int64_t i32max = std::numeric_limits<int32_t>::max(), i32min = std::numeric_limits<int32_t>::min();
  constexpr int64_t i64max = std::numeric_limits<int64_t>::max(), i64min = std::numeric_limits<int64_t>::min();
  switch (c % 16) {
    case 0: return -1;
    case 1: return i32max;
    case 2: return i32max + 1;
    case 3: return i64max;
    case 4: return i64min;
    case 5: return i32min;
    case 6: return -fdp.ConsumeIntegralInRange<int64_t>(1, typical_max + 1);
    case 7: return fdp.ConsumeIntegral<int64_t>();
    case 8: return i32max - 1;
    case 9: return i32min - 1;
    case 10: return i64max - 1;
    case 11: return i64min + 1;
    case 12: return int64_t{1} << 62;
    case 13: return (int64_t{1} << 62) - 1;
    case 14: return int64_t{std::numeric_limits<uint32_t>::max()};
    default: return int64_t{1} << 32;
  }
}

// A cumulative length vector [0, l0, l0 + l1, ...] of `n + 1` entries, lengths drawn by `len`;
// with `mutate`, one entry may then be replaced by an arbitrary value.
template <class Len>
std::vector<int64_t> cumulative(FuzzedDataProvider& fdp, int64_t n, Len len, bool mutate) {
  std::vector<int64_t> v(static_cast<size_t>(n + 1), 0);
  v[0] = fdp.ConsumeIntegralInRange<int64_t>(0, 3) == 3 ? fdp.ConsumeIntegralInRange<int64_t>(0, 64)
                                                        : 0;
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i + 1)] = v[static_cast<size_t>(i)] + len();
  if (mutate && fdp.ConsumeIntegralInRange<int>(0, 15) == 15) {
    const size_t at = fdp.ConsumeIntegralInRange<size_t>(0, v.size() - 1);
    v[at] = pick_value(fdp, 64);
  }
  return v;
}

// Exact fit of a value in an index dtype.
inline bool fits(const Tensor& t, int64_t v) {
  return t.i64() || (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max());
}

// Tracks every buffer of a call, once each however many tensors lie in it, for the "a failed
// call wrote nothing" and "inputs unchanged" checks, and the expected images after a success.
class Watch {
 public:
  void add(const Tensor* t) {
    if (!t->mem) return;
    tensors_.push_back(t);
    if (find(t->mem.get())) return;
    bufs_.push_back({t->mem.get(), t->mem->all(), {}, false});
  }
  bool all_unchanged() const {
    for (const auto& b : bufs_)
      if (b.mem->all() != b.before) return false;
    return true;
  }
  // Buffers that hold no output: an output over an input's memory (refused, or an in-place
  // alias) makes that buffer one the call may write.
  bool inputs_unchanged() const {
    for (const auto& b : bufs_)
      if (!holds_output(b.mem) && b.mem->all() != b.before) return false;
    return true;
  }
  // The snapshot of t's buffer.
  const std::vector<uint8_t>& before(const Tensor* t) const {
    const Buf* b = find(t->mem.get());
    if (!b) die(__FILE__, __LINE__, "watched", "before() of a tensor not watched");
    return b->before;
  }
  // The expected image of t's buffer after a success: its snapshot plus every put() into it.
  std::vector<uint8_t>& image(const Tensor& t) {
    Buf* b = find(t.mem.get());
    if (!b) die(__FILE__, __LINE__, "watched", "image() of a tensor not watched");
    if (!b->touched) {
      b->image = b->before;
      b->touched = true;
    }
    return b->image;
  }
  void put(const Tensor& t, int64_t i, int64_t v) { Tensor::put(image(t), t, i, v); }
  // "" when every buffer equals its expected image (an untouched one, its snapshot).
  std::string mismatch() const {
    for (size_t i = 0; i < bufs_.size(); ++i) {
      const Buf& b = bufs_[i];
      const auto& want = b.touched ? b.image : b.before;
      if (b.mem->all() != want) {
        std::string who;
        for (const Tensor* t : tensors_)
          if (t->mem.get() == b.mem) who += std::string(who.empty() ? "" : ", ") + (t->output ? "output " : "input ") + describe(*t);
        return "buffer " + std::to_string(i) + " (" + who + "): " + first_difference(b.mem->all(), want);
      }
    }
    return "";
  }

 private:
  struct Buf {
    const Bytes* mem;
    std::vector<uint8_t> before, image;
    bool touched;
  };
  Buf* find(const Bytes* m) {
    for (auto& b : bufs_)
      if (b.mem == m) return &b;
    return nullptr;
  }
  const Buf* find(const Bytes* m) const {
    for (const auto& b : bufs_)
      if (b.mem == m) return &b;
    return nullptr;
  }
  bool holds_output(const Bytes* m) const {
    for (const Tensor* t : tensors_)
      if (t->output && t->mem.get() == m) return true;
    return false;
  }
  std::vector<const Tensor*> tensors_;
  std::vector<Buf> bufs_;
};

// The checks every call gets: a valid status, a message naming the function on failure, success
// exactly when the harness predicted it, inputs never written, and - on failure - no watched
// byte changed. Returns whether the call succeeded.
inline bool check_outcome(cattn_status_t s, const char* fn, bool expect_ok, const Watch& w) {
  check_status_valid(s);
  check_failure_message(s, fn);
  FZ_CHECK((s == CATTN_OK) == expect_ok, std::string(fn) + " returned " + cattn_status_string(s) +
                                             ", expected " + (expect_ok ? "CATTN_OK" : "a failure"));
  FZ_CHECK(w.inputs_unchanged(), std::string(fn) + " wrote an input");
  if (s != CATTN_OK) FZ_CHECK(w.all_unchanged(), std::string(fn) + " failed but wrote an output");
  return s == CATTN_OK;
}
// After a success: every watched buffer holds exactly its expected image.
inline void check_images(const Watch& w, const char* fn) {
  const std::string m = w.mismatch();
  FZ_CHECK(m.empty(), std::string(fn) + ": memory differs from the reference: " + m);
}

// A usable host tensor of `ndim` dimensions and an int32/int64 dtype.
inline bool host_index(const Tensor& t, int ndim) {
  return t.usable() && !t.device && t.ndim() == ndim && t.index();
}
// ... that an output may be: no zero stride in a dimension of more than one element (an empty
// tensor, whose strides are ignored, always is).
inline bool writable(const Tensor& t) {
  if (t.numel == 0 || t.t.strides == nullptr) return true;  // compact strides never repeat an element
  for (int d = 0; d < t.ndim(); ++d)
    if (t.dim(d) > 1 && t.stride(d) == 0) return false;
  return true;
}
// A 1-D broadcast view: every element is element 0 (targets read such inputs, of any size, as
// the two-element vector of that value, or by their length alone).
inline bool constant_1d(const Tensor& t) { return t.usable() && t.t.data && t.ndim() == 1 && t.broadcast; }
inline std::vector<int64_t> values_or_pair(const Tensor& t) {
  return constant_1d(t) ? std::vector<int64_t>{t.get(0), t.get(0)} : t.values();
}
// An input the library scans in full: a broadcast view of more than
// CATTN_MAX_BROADCAST_ELEMENTS elements is refused.
inline bool scan_bounded(const Tensor& t) { return !(t.broadcast && t.numel > kMaxBroadcast); }

// An int64 scalar argument: mostly from [lo, hi], sometimes an extreme.
inline int64_t pick_scalar(FuzzedDataProvider& fdp, int64_t lo, int64_t hi) {
  const uint8_t c = fdp.ConsumeIntegral<uint8_t>();
  if (c < 224) return fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
  switch (c % 8) {
    case 0: return lo - 1;
    case 1: return hi + 1;
    case 2: return 0;
    case 3: return -1;
    case 4: return std::numeric_limits<int64_t>::max();
    case 5: return std::numeric_limits<int64_t>::min();
    case 6: return std::numeric_limits<int32_t>::max();
    default: return fdp.ConsumeIntegral<int64_t>();
  }
}

// Floor division as Python's //, for b > 0.
inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// ---- Shared by the 1.2 targets (fuzz_step_inputs, fuzz_spec_decode) ----

inline Tensor absent() {
  Tensor t;
  t.exists = false;
  return t;
}
// Rare choices fire on the largest value of their range: a FuzzedDataProvider out of bytes
// answers the smallest, so a short input takes the plain path.
inline bool rare(FuzzedDataProvider& fdp, int one_in) {
  return fdp.ConsumeIntegralInRange<int>(0, one_in - 1) == one_in - 1;
}
// maybe_alias, rare in that sense.
inline void alias(FuzzedDataProvider& fdp, Tensor& out, std::initializer_list<Tensor*> others, int one_in = 6) {
  if (rare(fdp, one_in)) maybe_alias(fdp, out, others, 1);
}

// Huge broadcast views allowed (where the call reads an input by its values, or must refuse it).
constexpr Allow kHuge{true, true, true};

// a + b and a - b as two's complement (hostile values wrap in the harness, never overflow).
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

inline int64_t at2(const Tensor& t, int64_t r, int64_t c) { return Tensor::load(t.at({r, c}), t.elem); }

// Promise 4: no output shares a byte with an input or another output, except the pair
// (in_place_out, in_place_in) when it is the very same view.
inline bool any_overlap(std::initializer_list<const Tensor*> outs, std::initializer_list<const Tensor*> ins,
                 const Tensor* in_place_out = nullptr, const Tensor* in_place_in = nullptr) {
  const bool exempt = in_place_out && in_place_in && same_view(*in_place_out, *in_place_in);
  auto allowed = [&](const Tensor* a, const Tensor* b) {
    return exempt && ((a == in_place_out && b == in_place_in) || (a == in_place_in && b == in_place_out));
  };
  for (const Tensor* o : outs) {
    for (const Tensor* i : ins)
      if (overlaps(*o, *i) && !allowed(o, i)) return true;
    for (const Tensor* p : outs)
      if (p != o && overlaps(*o, *p) && !allowed(o, p)) return true;
  }
  return false;
}

// The args struct: sometimes NULL, sometimes copied over one of `outs` (refused).
template <class T>
struct Args {
  Struct<T> s;
  T* call = nullptr;
  bool over = false, null_args = false;
  size_t size;
  Args(FuzzedDataProvider& fdp, const T& init, size_t known)
      : s(init, pick_struct_size(fdp, known)), size(s.get()->struct_size) {
    null_args = rare(fdp, 64);
  }
  // Call once every field is set.
  void place(FuzzedDataProvider& fdp, std::initializer_list<const Tensor*> outs) {
    std::vector<const Tensor*> c;
    for (const Tensor* t : outs)
      if (t->exists) c.push_back(t);
    call = s.get();
    if (!c.empty() && rare(fdp, 12))
      call = maybe_struct_over_output(fdp, s, *c[fdp.ConsumeIntegralInRange<size_t>(0, c.size() - 1)], &over, 1);
  }
  bool ok(size_t known) const { return !null_args && !over && size >= known; }
  T* arg() { return null_args ? nullptr : call; }
};

// ---- Races: inputs another thread writes during a call (fuzz_concurrent_mutation and the
// race modes of fuzz_step_inputs and fuzz_spec_decode) ----
// Promise 5: a caller who races with a call gets unspecified outputs or a failure, never a write
// outside the outputs or a read outside the inputs. A race builds a valid host call (every tensor
// in guarded memory of its own), lets a mutator thread store fuzzer-chosen values into one input
// element while the call runs a few times, and checks memory safety only.
#if defined(__SANITIZE_THREAD__)
#define CATTN_FUZZ_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CATTN_FUZZ_UNDER_TSAN 1
#endif
#endif
// Under TSan the race is the point and TSan would report it: race() makes no call there (as
// tests/test_double_fetch.cpp skips).
#if defined(CATTN_FUZZ_UNDER_TSAN)
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif

// One thread for the whole process, woken per input: it stores values[0], values[1], ... into
// the element at `p` (1, 2, 4 or 8 bytes, naturally aligned), round and round, until stop().
class Mutator {
 public:
  static Mutator& instance() {
    static Mutator* m = new Mutator;  // never destroyed: the thread outlives every input
    return *m;
  }
  void start(uint8_t* p, int width, std::vector<int64_t> values) {
    std::lock_guard<std::mutex> lock(mu_);
    p_ = p;
    width_ = width;
    values_ = std::move(values);
    stop_.store(false, std::memory_order_relaxed);
    job_ = true;
    wake_.notify_one();
  }
  // Returns once the thread has stopped storing (so the element is ours again).
  void stop() {
    stop_.store(true, std::memory_order_release);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return !job_; });
  }

 private:
  Mutator() { std::thread([this] { run(); }).detach(); }
  template <class T>
  static void relaxed(T* p, int64_t v) {
    __atomic_store_n(p, static_cast<T>(v), __ATOMIC_RELAXED);
  }
  static void store(uint8_t* p, int width, int64_t v) {
    switch (width) {
      case 1: relaxed(reinterpret_cast<int8_t*>(p), v); break;
      case 2: relaxed(reinterpret_cast<int16_t*>(p), v); break;
      case 4: relaxed(reinterpret_cast<int32_t*>(p), v); break;
      default: relaxed(reinterpret_cast<int64_t*>(p), v); break;
    }
  }
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return job_; });
      uint8_t* const p = p_;
      const int width = width_;
      const std::vector<int64_t> values = values_;
      lock.unlock();
      while (!stop_.load(std::memory_order_acquire))
        for (const int64_t v : values) store(p, width, v);
      lock.lock();
      job_ = false;
      done_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::atomic<bool> stop_{false};
  bool job_ = false;
  uint8_t* p_ = nullptr;
  int width_ = 8;
  std::vector<int64_t> values_;
};

// A compact tensor in memory of its own for a race; inputs get an aligned byte offset, outputs
// sometimes a stride of 2 in their last dimension (gaps the call must not write) when the gapped
// tensor still fits the harness's payload limit. Callers keep their compact tensors within it.
inline Tensor race_tensor(FuzzedDataProvider& fdp, std::vector<int64_t> shape, DLDataType dtype,
                          bool output) {
  const int64_t elem = dtype.bits / 8;
  int64_t numel = 1;
  for (int64_t n : shape) numel *= std::max<int64_t>(n, 1);
  const bool gaps = output && fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  const int64_t step = gaps && elem * (2 * numel + 2) <= kMaxPayload ? 2 : 1;
  std::vector<int64_t> strides(shape.size());
  int64_t c = step;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = c;
    c *= std::max<int64_t>(shape[i], 1);
  }
  const uint64_t offset = static_cast<uint64_t>(elem * fdp.ConsumeIntegralInRange<int>(0, 2));
  Tensor t = make_tensor_with(std::move(shape), &strides, dtype, output, offset);
  FZ_CHECK(t.usable() && (t.numel == 0 || t.t.data),
           "the harness could not own a tensor: " + describe(t));
  return t;
}

// Values the mutator cycles through: the element's own value among extremes (of the element's
// width: INT64_MAX stored in an int32 would read as -1) and random ones, each as the element of
// `width` bytes holds it.
inline std::vector<int64_t> mutation_values(FuzzedDataProvider& fdp, int64_t original,
                                            int64_t typical, int width) {
  const int64_t hi = width >= 8 ? std::numeric_limits<int64_t>::max()
                                : (int64_t{1} << (8 * width - 1)) - 1;
  std::vector<int64_t> v{original};
  const int n = fdp.ConsumeIntegralInRange<int>(1, 7);
  for (int i = 0; i < n; ++i) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: v.push_back(hi); break;
      case 1: v.push_back(-hi - 1); break;
      case 2: v.push_back(wrap_add(original, fdp.ConsumeIntegralInRange<int64_t>(-3, 3))); break;
      case 3: v.push_back(-1); break;
      default: v.push_back(pick_value(fdp, typical)); break;
    }
  }
  std::vector<uint8_t> cell(8);
  for (int64_t& x : v) {  // as stored and read back
    Tensor::store(cell.data(), width, x);
    x = Tensor::load(cell.data(), width);
  }
  return v;
}

// A raced call: its tensors (an in-and-out tensor is an output; absent ones are skipped), the
// inputs the mutator may write, most telling first (a short input picks the first), and the
// scale of their typical values.
struct RaceCall {
  struct Mutable {
    Tensor* t;
    const char* name;
  };
  const char* fn = "";
  std::vector<Tensor*> inputs, outputs;
  std::vector<Mutable> mutable_inputs;
  int64_t typical = 64;
};

// Every byte of every buffer outside the outputs' elements, guards included, as it was
// (`before`: the buffers of call.inputs then call.outputs, present ones only).
inline void check_untouched(const RaceCall& call, const std::vector<std::vector<uint8_t>>& before) {
  size_t k = 0;
  for (const std::vector<Tensor*>* group : {&call.inputs, &call.outputs})
    for (const Tensor* t : *group) {
      if (!t->exists || !t->mem) continue;
      const std::vector<uint8_t>& was = before[k++];
      const std::vector<uint8_t>& now = t->mem->all();
      std::vector<bool> element(now.size(), false);
      if (t->output && t->t.data)
        for (int64_t i = 0; i < t->numel; ++i) {
          const size_t at = static_cast<size_t>(t->flat(i) - now.data());
          for (int64_t b = 0; b < t->elem; ++b) element[at + static_cast<size_t>(b)] = true;
        }
      for (size_t i = 0; i < now.size(); ++i)
        FZ_CHECK(element[i] || now[i] == was[i],
                 std::string(call.fn) + " wrote byte " + std::to_string(i) + " of the buffer of " +
                     (t->output ? "output " : "input ") + describe(*t) +
                     ", outside the outputs' elements");
    }
}

// The race: picks the element (a present input of call.mutable_inputs, an index), the values
// the mutator stores and the number of calls from the fuzzer's bytes; makes the calls
// (`invoke` returns one call's status) while the mutator runs; then checks each status and
// message, puts the element back and checks every byte outside the outputs' elements. No call
// when the chosen input is empty, or under TSan.
template <class Invoke>
void race(FuzzedDataProvider& fdp, const RaceCall& call, Invoke&& invoke) {
  std::vector<RaceCall::Mutable> candidates;
  for (const RaceCall::Mutable& m : call.mutable_inputs)
    if (m.t->exists && m.t->mem) candidates.push_back(m);
  FZ_CHECK(!candidates.empty(), std::string("a race of ") + call.fn + " with nothing to mutate");
  const RaceCall::Mutable& chosen =
      candidates[fdp.ConsumeIntegralInRange<size_t>(0, candidates.size() - 1)];
  Tensor& target = *chosen.t;
  if (target.numel == 0) return;
  const int64_t index = fdp.ConsumeIntegralInRange<int64_t>(0, target.numel - 1);
  uint8_t* const element = target.flat(index);
  const int64_t original = target.get(index);
  const int width = static_cast<int>(target.elem);
  std::vector<int64_t> values = mutation_values(fdp, original, call.typical, width);
  const int calls = fdp.ConsumeIntegralInRange<int>(1, 6);
  if (kUnderTsan) return;
  if (verbose()) {
    std::string v;
    for (int64_t x : values) v += " " + std::to_string(x);
    FZ_LOG("race: %s, %d calls, %s[%ld] (flat) takes%s\n", call.fn, calls, chosen.name,
           (long)index, v.c_str());
    for (const std::vector<Tensor*>* group : {&call.inputs, &call.outputs})
      for (const Tensor* t : *group)
        if (t->exists) FZ_LOG("  %s %s\n", t->output ? "out" : "in ", describe(*t).c_str());
  }

  std::vector<std::vector<uint8_t>> before;
  for (const std::vector<Tensor*>* group : {&call.inputs, &call.outputs})
    for (const Tensor* t : *group)
      if (t->exists && t->mem) before.push_back(t->mem->all());
  Mutator& mutator = Mutator::instance();
  mutator.start(element, width, std::move(values));
  for (int i = 0; i < calls; ++i) {
    const cattn_status_t s = invoke();
    check_status_valid(s);
    check_failure_message(s, call.fn);
    FZ_LOG("  -> %s %s\n", cattn_status_string(s), s == CATTN_OK ? "" : cattn_last_error_message());
  }
  mutator.stop();
  Tensor::store(element, target.elem, original);  // the mutated element as it was
  check_untouched(call, before);
}

}  // namespace cattn_fuzz
