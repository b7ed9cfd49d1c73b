// Shared pieces of the libFuzzer targets: tensors built structurally from the fuzzer's bytes,
// memory the harness owns (with guard zones), snapshots for "a failed call wrote nothing", and
// the checks every target makes.
//
// The one rule every generator keeps: a tensor the library may read or write claims only memory
// the harness owns. The library cannot know a buffer's real size and is entitled to trust shape x
// stride x element size; so a tensor whose claimed extent would not fit the buffer the harness is
// willing to allocate gets NULL data instead (which the library must refuse when it has
// elements), and extents that overflow are passed as they are (the library must refuse those
// from the numbers alone). Everything else - values, shapes against each other, dtypes, devices,
// scalars, struct sizes - is the fuzzer's to choose.
#pragma once

#include <dlpack/dlpack.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
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
  FZ_CHECK(static_cast<int>(s) >= 0 && static_cast<int>(s) < CATTN_STATUS_COUNT_,
           "status " + std::to_string(static_cast<int>(s)) + " outside [0, CATTN_STATUS_COUNT_)");
}

// A failed call must leave a message naming its function; a successful one changes nothing we
// can check about the message (it may keep an older one).
inline void check_failure_message(cattn_status_t s, const char* fn) {
  if (s == CATTN_OK) return;
  FZ_CHECK(std::strstr(cattn_last_error_message(), fn) != nullptr,
           std::string("message does not name ") + fn);
}

constexpr size_t kGuard = 16;          // guard bytes on each side of every buffer
constexpr uint8_t kGuardByte = 0xC3;   // guard zone content
constexpr uint8_t kPoisonByte = 0xA5;  // initial content of output payloads
constexpr int64_t kMaxPayload = 1 << 16;  // largest tensor payload the harness allocates

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

// What a generator may do to a tensor beyond a legal layout.
struct Allow {
  bool perturb = true;  // structural mutations (NULL, ndim, dtype, device, strides, ...)
  bool cuda = true;     // may be marked as device memory
};

// A caller-side tensor: the DLTensor, its shape/stride arrays and the bytes behind it.
struct Tensor {
  bool exists = true;   // false: passed as NULL
  bool bad = false;     // structurally invalid: the library must refuse any call that validates it
  bool device = false;  // marked kDLCUDA/kDLCUDAManaged (a CPU-only build cannot serve it)
  bool perturbed = false;  // anything beyond a legal layout was done to it
  bool output = false;
  std::vector<int64_t> shape, strides;  // storage (may be longer than ndim)
  std::unique_ptr<Bytes> mem;
  DLTensor t{};
  int64_t elem = 0;    // bytes per element as the library sees a valid dtype; 0 if invalid
  int64_t numel = 0;   // when !bad

  DLTensor* ptr() { return exists ? &t : nullptr; }
  const DLTensor* cptr() const { return exists ? &t : nullptr; }
  bool usable() const { return exists && !bad; }
  bool index() const { return is_index_dtype(t.dtype); }
  bool i64() const { return t.dtype.bits == 64; }
  int ndim() const { return t.ndim; }
  int64_t dim(int d) const { return t.shape[d]; }
  int64_t stride(int d) const {
    if (t.strides) return t.strides[d];
    int64_t s = 1;
    for (int i = t.ndim - 1; i > d; --i) s *= t.shape[i];
    return s;
  }
  // Address of element (i, j, k...) for a usable tensor with data.
  uint8_t* at(std::initializer_list<int64_t> idx) const {
    int64_t off = 0;
    int d = 0;
    for (int64_t i : idx) off += i * stride(d++);
    return static_cast<uint8_t*>(t.data) + t.byte_offset + off * elem;
  }
  // Row-major element i of a usable tensor.
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
  void fill(const std::vector<int64_t>& values) const {
    if (!usable() || elem == 0 || t.data == nullptr) return;
    for (int64_t i = 0; i < numel && i < static_cast<int64_t>(values.size()); ++i)
      set(i, values[static_cast<size_t>(i)]);
  }
  std::vector<int64_t> values() const {
    std::vector<int64_t> v;
    if (!usable() || t.data == nullptr) return v;
    for (int64_t i = 0; i < numel; ++i) v.push_back(get(i));
    return v;
  }
  std::vector<uint8_t> snapshot() const { return mem ? mem->all() : std::vector<uint8_t>(); }
  bool unchanged(const std::vector<uint8_t>& s) const { return !mem || mem->all() == s; }
  // Expected bytes after a call: a copy of `before` with element i (row-major) set to v.
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
       std::to_string(t.t.dtype.lanes) + " dev " + std::to_string(t.t.device.device_type) + ":" +
       std::to_string(t.t.device.device_id) + " off " + std::to_string(t.t.byte_offset) +
       (t.t.data ? "" : " data NULL") + (t.bad ? " (bad)" : "");
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
// (byte_offset + span in bytes) when it is acceptable.
inline bool structurally_bad(const DLTensor& t, int64_t* numel_out, __int128* extent_out) {
  if (t.ndim < 0 || t.ndim > 8) return true;
  if (t.ndim > 0 && t.shape == nullptr) return true;
  switch (t.device.device_type) {
    case kDLCPU: case kDLCUDAHost: case kDLCUDA: case kDLCUDAManaged: break;
    default: return true;
  }
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
  for (int i = 0; i < t.ndim; ++i) {
    const int64_t s = t.strides ? t.strides[i] : 0;
    if (t.strides && s < 0) return true;
  }
  if (numel > 0) {
    int64_t compact = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      const int64_t s = t.strides ? t.strides[i] : compact;
      const __int128 term = static_cast<__int128>(t.shape[i] - 1) * s;
      if (term > std::numeric_limits<int64_t>::max()) return true;
      span += term;
      if (span > std::numeric_limits<int64_t>::max()) return true;
      compact *= t.shape[i];
    }
    span = (span + 1) * elem;
    if (span > std::numeric_limits<int64_t>::max()) return true;
    if (t.data == nullptr) return true;
  }
  if (t.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return true;
  *numel_out = static_cast<int64_t>(numel);
  *extent_out = static_cast<__int128>(t.byte_offset) + span;
  return false;
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
  DLDevice device{kDLCPU, 0};
  uint64_t byte_offset = 0;
  enum Stride { Default, Null, Zero, Negative, Huge, HugeOne };
  Stride stride_mut = Default;
  int stride_dim = 0;
  bool null_shape = false, null_data = false, huge_offset = false;

  const uint8_t p = allow.perturb ? fdp.ConsumeIntegral<uint8_t>() : 0;
  if (p >= 176) {
    x.perturbed = true;
    switch ((p - 176) % 40) {
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
      case 18: device = {kDLCUDAHost, 0}; break;
      case 19: device = {kDLCUDA, 0}; break;
      case 20: device = {kDLCUDA, 1}; break;
      case 21: device = {kDLCUDAManaged, 0}; break;
      case 22: device = {kDLOpenCL, 0}; break;
      case 23: device = {kDLROCM, 0}; break;
      case 24: device = {kDLCPU, -1}; break;
      case 25: device = {kDLCPU, 7}; break;
      case 26: case 27: case 28: case 29: case 30: case 31: {
        // One dimension resized: emptied, one off, or far beyond any buffer.
        if (shape.empty()) break;
        const size_t d = fdp.ConsumeIntegralInRange<size_t>(0, shape.size() - 1);
        const int64_t choices[] = {0, shape[d] < std::numeric_limits<int64_t>::max() ? shape[d] + 1 : 0,
                                   shape[d] > 0 ? shape[d] - 1 : 1, -1,
                                   std::numeric_limits<int64_t>::max(), int64_t{1} << 40};
        shape[d] = choices[(p - 176) % 40 - 26];
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
    if (!allow.cuda && (device.device_type == kDLCUDA || device.device_type == kDLCUDAManaged))
      device = {kDLCPU, 0};
    if (stride_mut != Default && !shape.empty())
      stride_dim = fdp.ConsumeIntegralInRange<int>(0, static_cast<int>(shape.size()) - 1);
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
    // which is fine: such tensors are refused anyway.
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
  x.t.device = device;
  x.t.byte_offset = byte_offset;
  x.device = device.device_type == kDLCUDA || device.device_type == kDLCUDAManaged;

  // Allocate exactly what the tensor claims, when that is acceptable and small enough; otherwise
  // a tensor with elements gets NULL data, which makes it one the library must refuse.
  int64_t numel = 0;
  __int128 extent = 0;
  x.t.data = reinterpret_cast<void*>(uintptr_t{1});  // placeholder for the structural check
  const bool bad_shape = structurally_bad(x.t, &numel, &extent);
  x.t.data = nullptr;
  size_t payload = 0;
  if (!bad_shape && extent <= kMaxPayload) payload = static_cast<size_t>(extent);
  else if (bad_shape || numel == 0) payload = 16;  // something to point at; never touched
  x.mem = std::make_unique<Bytes>(payload, output ? kPoisonByte : 0);
  const bool owned = !bad_shape && extent <= kMaxPayload;
  if (!null_data && (owned || numel == 0 || bad_shape)) x.t.data = x.mem->payload();
  // A NULL-data tensor whose extent we do not own stays NULL: refused by the library when it
  // has elements, harmless when it has none.
  if (!owned && numel > 0 && !bad_shape) x.t.data = nullptr;
  x.bad = structurally_bad(x.t, &x.numel, &extent);
  // A bad tensor may still point at the small placeholder buffer; the library refuses it from
  // its numbers before reading anything.
  x.elem = valid_width(dtype) ? dtype.bits / 8 : 0;
  if (x.bad) x.numel = 0;
  return x;
}

// A struct the library reads or writes, placed at the start of owned bytes with guard zones and
// room for a struct_size larger than the known one (a newer caller's struct).
template <class T>
class Struct {
 public:
  // size: the struct_size to store (>= sizeof(T) gets that many owned bytes).
  Struct(const T& init, size_t struct_size)
      : mem_(std::max(sizeof(T), struct_size), kGuardByte) {
    // Keep T's alignment: payload() is kGuard (16) bytes into a vector, which is 16-aligned.
    std::memcpy(mem_.payload(), &init, sizeof(T));
    T* p = get();
    p->struct_size = struct_size;
  }
  T* get() { return reinterpret_cast<T*>(mem_.payload()); }
  std::vector<uint8_t> snapshot() const { return mem_.all(); }
  bool unchanged(const std::vector<uint8_t>& s) const { return mem_.all() == s; }
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

// struct_size values: mostly the known size, sometimes smaller (must be refused) or larger (a
// newer header; accepted).
inline size_t pick_struct_size(FuzzedDataProvider& fdp, size_t known) {
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

// Index values: mostly small and non-negative, sometimes extreme.
inline int64_t pick_value(FuzzedDataProvider& fdp, int64_t typical_max) {
  const uint8_t c = fdp.ConsumeIntegral<uint8_t>();
  if (c < 224) return fdp.ConsumeIntegralInRange<int64_t>(0, typical_max);
  switch (c % 8) {
    case 0: return -1;
    case 1: return std::numeric_limits<int32_t>::max();
    case 2: return int64_t{std::numeric_limits<int32_t>::max()} + 1;
    case 3: return std::numeric_limits<int64_t>::max();
    case 4: return std::numeric_limits<int64_t>::min();
    case 5: return std::numeric_limits<int32_t>::min();
    case 6: return -fdp.ConsumeIntegralInRange<int64_t>(1, typical_max + 1);
    default: return fdp.ConsumeIntegral<int64_t>();
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

// Byte ranges [first, last) a usable tensor's elements may touch (empty when no element).
inline bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.usable() || !b.usable() || a.numel == 0 || b.numel == 0 || !a.t.data || !b.t.data)
    return false;
  auto range = [](const Tensor& x, uintptr_t* lo, uintptr_t* hi) {
    int64_t span = 1;
    for (int d = 0; d < x.t.ndim; ++d) span += (x.t.shape[d] - 1) * x.stride(d);
    *lo = reinterpret_cast<uintptr_t>(x.t.data) + x.t.byte_offset;
    *hi = *lo + static_cast<uintptr_t>(span * x.elem);
  };
  uintptr_t a0, a1, b0, b1;
  range(a, &a0, &a1);
  range(b, &b0, &b1);
  return a0 < b1 && b0 < a1;
}

// Tracks every buffer of a call for the "a failed call wrote nothing" and "inputs unchanged"
// checks.
class Watch {
 public:
  void add(const Tensor* t) { if (t->mem) items_.push_back({t, t->snapshot()}); }
  bool all_unchanged() const {
    for (const auto& i : items_)
      if (!i.first->unchanged(i.second)) return false;
    return true;
  }
  // Inputs only (tensors not marked as outputs).
  bool inputs_unchanged() const {
    for (const auto& i : items_)
      if (!i.first->output && !i.first->unchanged(i.second)) return false;
    return true;
  }
  const std::vector<uint8_t>& before(const Tensor* t) const {
    for (const auto& i : items_)
      if (i.first == t) return i.second;
    std::abort();
  }

 private:
  std::vector<std::pair<const Tensor*, std::vector<uint8_t>>> items_;
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

// A usable host tensor of `ndim` dimensions and an int32/int64 dtype.
inline bool host_index(const Tensor& t, int ndim) {
  return t.usable() && !t.device && t.ndim() == ndim && t.index();
}
// ... that an output may be: no zero stride in a dimension of more than one element.
inline bool writable(const Tensor& t) {
  if (t.t.strides == nullptr) return true;  // compact strides never repeat an element
  for (int d = 0; d < t.ndim(); ++d)
    if (t.dim(d) > 1 && t.stride(d) == 0) return false;
  return true;
}

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

}  // namespace cattn_fuzz
