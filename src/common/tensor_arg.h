/* SPDX-License-Identifier: Apache-2.0 */
// Validated views of caller-supplied DLTensors. Constructing a TensorArg checks everything that
// can be checked without reading data (NULLs, ndim, shapes, strides, dtype sanity, device kind,
// byte span) and records the tensor's memory with the call (common/call_args.h) as an input or
// an output; the expect_* methods add per-argument requirements. Every failure names the
// function and the argument.
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "cattn.h"
#include "common/call_args.h"
#include "common/error.h"

namespace cattn {

enum class Where { Host, Cuda };

// The device type of a caller's DLDevice as an integer. A C caller may store any value in the
// enum field (newer DLPack releases add types), and loading an out-of-range value as the C++
// enum is undefined, so the field is read as its bytes.
inline int32_t device_type_of(const DLDevice& d) {
  int32_t v;
  static_assert(sizeof v == sizeof d.device_type, "DLDeviceType is int-sized");
  std::memcpy(&v, &d.device_type, sizeof v);
  return v;
}

// CATTN_MAX_BROADCAST_ELEMENTS, except in the fuzz build (tests/fuzz), which lowers it so
// that a scan up to the limit costs what an ordinary input costs and the campaign's executions
// go to the checks around it rather than to long loops.
#ifdef CATTN_FUZZ_MAX_BROADCAST_ELEMENTS
constexpr int64_t kMaxBroadcastElements = CATTN_FUZZ_MAX_BROADCAST_ELEMENTS;
#else
constexpr int64_t kMaxBroadcastElements = CATTN_MAX_BROADCAST_ELEMENTS;
#endif

// The largest byte span a view may claim (shape, strides and element size): past any canonical
// virtual address range, so no real view reaches it, and small enough that every offset inside
// a view fits int64 with room to spare.
constexpr int64_t kMaxSpanBytes = int64_t{1} << 57;

class TensorArg {
 public:
  // A NULL tensor is an error unless `optional` is set, in which case present() is false and
  // nothing else may be called. `use` says whether the call reads the elements or writes them:
  // the elements, the DLTensor struct and its shape and stride arrays are recorded with the
  // current call, and an output's data() is refused until the call's seal().
  TensorArg(const char* fn, const char* name, const DLTensor* t, Use use, bool optional = false);

  bool present() const { return t_ != nullptr; }
  const DLTensor* raw() const { return t_; }
  const char* name() const { return name_; }
  const char* fn() const { return fn_; }
  int ndim() const { return t_->ndim; }
  int64_t size(int d) const { return t_->shape[d]; }
  int64_t stride(int d) const { return strides_[d]; }  // in elements
  int64_t numel() const { return numel_; }
  int elem_bytes() const { return elem_bytes_; }
  Where where() const { return where_; }
  bool is_cuda() const { return where_ == Where::Cuda; }
  int device_id() const { return t_->device.device_id; }
  bool is_int64() const { return t_->dtype.code == kDLInt && t_->dtype.bits == 64; }
  bool is_output() const { return use_ == Use::Out; }
  // First element's address (data + byte_offset), to read or write elements: an output's only
  // once the call has sealed its arguments (CATTN_INTERNAL before).
  char* data() const {
    if (use_ == Use::Out && !call_->sealed()) fail_unsealed();
    return data_;
  }
  // The same address, for comparing views; never for access.
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(data_); }
  int64_t span_bytes() const { return span_bytes_; }
  // True when the tensor is compact row-major.
  bool is_contiguous() const;

  const TensorArg& expect_ndim(int n) const;
  // Input shape requirement: mismatch is CATTN_INVALID_ARGUMENT.
  const TensorArg& expect_size(int d, int64_t n) const;
  // Output shape requirement: smaller is CATTN_INSUFFICIENT_SIZE, larger CATTN_INVALID_ARGUMENT.
  const TensorArg& expect_out_size(int d, int64_t n) const;
  // 1-D output with at least `n` elements (CATTN_INSUFFICIENT_SIZE otherwise).
  const TensorArg& expect_capacity(int64_t n) const;
  // int32 or int64, one lane.
  const TensorArg& expect_index_dtype() const;
  const TensorArg& expect_same_dtype(const TensorArg& other) const;
  const TensorArg& expect_host() const;
  // Device memory (kDLCUDA or kDLCUDAManaged); `host_call` names what serves host tensors.
  const TensorArg& expect_cuda(const char* host_call) const;
  // Outputs: no zero strides, so no two elements share memory.
  const TensorArg& expect_writable() const;
  const TensorArg& expect_contiguous() const;
  // Inputs a call reads in full without writing as many outputs (query_start_loc and the like):
  // a broadcast view (a zero stride over a dimension of more than one element) may hold at
  // most kMaxBroadcastElements elements, so the work stays proportional to memory.
  const TensorArg& expect_scan_bounded() const;
  std::string shape_string() const;

 private:
  [[noreturn]] void fail_unsealed() const;
  [[noreturn]] void fail_span() const;

  const char* fn_;
  const char* name_;
  const DLTensor* t_;
  CallArgs* call_ = nullptr;
  Use use_ = Use::In;
  int64_t strides_[8] = {0};
  int64_t numel_ = 0;
  int elem_bytes_ = 0;
  Where where_ = Where::Host;
  bool broadcast_ = false;  // a zero stride over a dimension of more than one element
  char* data_ = nullptr;
  int64_t span_bytes_ = 0;  // bytes from data_ to one past the last element (0 if empty)
};

// True for an optional tensor argument that is given (not NULL, not absent).
inline bool present(const TensorArg* t) { return t != nullptr && t->present(); }

// Fails unless every present tensor lives on the same device (all host, or all on one GPU).
// Returns that device kind; Host when no tensor is present.
Where require_same_device(const char* fn, std::initializer_list<const TensorArg*> args);

// Strided element access to int32/int64 index tensors (host memory only), bounds-checked.
// Every host path reads and writes tensor elements through these (or through a path-specific
// typed accessor with the same bound), so an index formed from a value that changed since it
// was checked (a caller's data race, promise 5) ends the call with CATTN_INVALID_ARGUMENT
// instead of reaching memory outside the tensor. The check is one predictable compare; the
// failure path is out of line.
[[noreturn]] void fail_index(const TensorArg* a, int64_t i, int64_t n);
struct IndexReader {
  const char* p = nullptr;
  int64_t step = 0;  // bytes between consecutive elements
  int64_t n = 0;     // elements reachable: [0, n)
  bool i64 = false;
  const TensorArg* arg = nullptr;  // names the tensor in a failure
  int64_t operator[](int64_t i) const {
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(n)) fail_index(arg, i, n);
    const char* e = p + i * step;
    if (i64) {
      int64_t v;
      std::memcpy(&v, e, sizeof v);
      return v;
    }
    int32_t v;
    std::memcpy(&v, e, sizeof v);
    return v;
  }
  // The elements from k on (query_start_loc[1:] and the like).
  IndexReader from(int64_t k) const {
    if (static_cast<uint64_t>(k) > static_cast<uint64_t>(n)) fail_index(arg, k, n);
    return {n > k ? p + k * step : p, step, n - k, i64, arg};
  }
};
struct IndexWriter {
  char* p = nullptr;
  int64_t step = 0;
  int64_t n = 0;
  bool i64 = false;
  const TensorArg* arg = nullptr;
  void set(int64_t i, int64_t v) const {
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(n)) fail_index(arg, i, n);
    char* e = p + i * step;
    if (i64) {
      std::memcpy(e, &v, sizeof v);
    } else {
      const int32_t w = static_cast<int32_t>(v);
      std::memcpy(e, &w, sizeof w);
    }
  }
};
// 1-D views (a 0-D tensor is one element); for a 2-D tensor, reader_row(r) gives row r (r
// checked against the rows). reader_span and writer_span reach every element position of the
// view's memory in units of its element size, for paths that compute strided offsets
// themselves (common/strided.h): the bound is then the view's byte span.
IndexReader reader1d(const TensorArg& a);
IndexWriter writer1d(const TensorArg& a);
IndexReader reader_row(const TensorArg& a, int64_t r);
IndexWriter writer_row(const TensorArg& a, int64_t r);
IndexReader reader_span(const TensorArg& a);
IndexWriter writer_span(const TensorArg& a);
// The last dimension of a 3-D view at [r, j, :].
IndexWriter writer_row2(const TensorArg& a, int64_t r, int64_t j);
// One-byte flags (bool, uint8, int8) of a 1-D view, bounds-checked like the index accessors.
bool read_flag(const TensorArg& a, int64_t i);
void write_flag(const TensorArg& a, int64_t i, bool v);

// Largest value the index dtype of `a` can hold.
int64_t index_dtype_max(const TensorArg& a);
// Fails (CATTN_INVALID_ARGUMENT) if `value` does not fit the index dtype of output `a`.
[[noreturn]] void fail_does_not_fit(const char* fn, const TensorArg& a, int64_t value);
// True when `value` is an int32.
constexpr bool fits_int32(int64_t value) { return value >= INT32_MIN && value <= INT32_MAX; }

inline void require_fits(const char* fn, const TensorArg& a, int64_t value) {
  if (!a.is_int64() && !fits_int32(value)) fail_does_not_fit(fn, a, value);
}

// True when `a` and `b` are the same view of the same memory: same device, first element,
// dtype, shape and strides (strides of size-1 dimensions are ignored).
bool same_view(const TensorArg& a, const TensorArg& b);

// Declares output `out` may be exactly input (or other output) `in`, in place: when both are
// present and the same view, the call's overlap rule lets that pair share memory. Any other
// overlap of either is still refused when the call seals.
void allow_in_place(const TensorArg& out, const TensorArg& in);

// Overflow-checked arithmetic for sizes; throws CATTN_INVALID_ARGUMENT naming `what`.
int64_t checked_mul(const char* fn, const char* what, int64_t a, int64_t b);
int64_t checked_add(const char* fn, const char* what, int64_t a, int64_t b);
int64_t checked_sub(const char* fn, const char* what, int64_t a, int64_t b);

}  // namespace cattn
