// SPDX-License-Identifier: Apache-2.0
#include "common/tensor_arg.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

namespace cattn {
namespace {

std::string dtype_string(DLDataType d) {
  const char* code = d.code == kDLInt     ? "int"
                     : d.code == kDLUInt  ? "uint"
                     : d.code == kDLFloat ? "float"
                     : d.code == kDLBfloat ? "bfloat"
                                           : "code";
  std::string s = code + std::to_string(d.bits);
  if (d.code > kDLBfloat) s = "code" + std::to_string(d.code) + "/" + std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

constexpr int kMaxNdim = 8;

// No 64-bit platform the library builds for maps user memory in the top 2^52 bytes of the
// address space: x86-64 keeps its kernel there (user pointers have bit 63 clear, with or
// without linear address masking), and AArch64 user addresses have at most 52 bits below a
// top-byte tag. A view reaching into it is a wrapped or made-up pointer, refused before any
// byte is touched.
constexpr unsigned __int128 kAddressLimit =
    (static_cast<unsigned __int128>(1) << 64) - (static_cast<unsigned __int128>(1) << 52);

std::string hex_address(uintptr_t a) {
  char buf[2 + 16 + 1];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

}  // namespace

int64_t checked_mul(const char* fn, const char* what, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fail(CATTN_INVALID_ARGUMENT, fn, std::string(what) + " overflows int64");
  return r;
}

int64_t checked_add(const char* fn, const char* what, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fail(CATTN_INVALID_ARGUMENT, fn, std::string(what) + " overflows int64");
  return r;
}

int64_t checked_sub(const char* fn, const char* what, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    fail(CATTN_INVALID_ARGUMENT, fn, std::string(what) + " overflows int64");
  return r;
}

TensorArg::TensorArg(const char* fn, const char* name, const DLTensor* t, Use use, bool optional)
    : fn_(fn), name_(name), t_(t), use_(use) {
  if (t == nullptr) {
    if (optional) return;
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is NULL", "NULL", "a DLTensor");
  }
  if (t->ndim < 0 || t->ndim > kMaxNdim)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has an unsupported ndim", std::to_string(t->ndim),
             "0.." + std::to_string(kMaxNdim));
  if (t->ndim > 0 && t->shape == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has a NULL shape", "NULL", "ndim sizes");
  const int32_t device_type = device_type_of(t->device);
  if (device_type == kDLCPU || device_type == kDLCUDAHost)
    where_ = Where::Host;
  else if (device_type == kDLCUDA || device_type == kDLCUDAManaged)
    where_ = Where::Cuda;
  else
    fail_arg(CATTN_NOT_SUPPORTED, fn, name, "is on an unsupported device",
             "device_type " + std::to_string(device_type), "kDLCPU, kDLCUDAHost or kDLCUDA");
  if (t->device.device_id < 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has a negative device_id",
             std::to_string(t->device.device_id), ">= 0");
  const DLDataType d = t->dtype;
  // A vector dtype (lanes != 1) is a wrong dtype like any other: no call takes one, whatever
  // the build. An element width no call handles is a request this build cannot serve.
  if (d.lanes != 1)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has the wrong dtype", dtype_string(d),
             "one lane");
  if (d.bits != 8 && d.bits != 16 && d.bits != 32 && d.bits != 64)
    fail_arg(CATTN_NOT_SUPPORTED, fn, name, "has an unsupported dtype", dtype_string(d),
             "8, 16, 32 or 64 bits");
  elem_bytes_ = d.bits / 8;

  numel_ = 1;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has a negative dimension",
               "shape[" + std::to_string(i) + "] = " + std::to_string(t->shape[i]), ">= 0");
    numel_ = checked_mul(fn, name, numel_, t->shape[i]);
  }
  checked_mul(fn, name, numel_, elem_bytes_);
  // Compact strides unless given; negative strides are refused so that the byte span below is
  // simply [byte_offset, byte_offset + span]. An empty tensor has no element to place, so any
  // strides describe it (DLPack leaves them free, numpy gives zeros): they are replaced by
  // compact ones.
  int64_t compact = 1;
  bool broadcast = false;
  for (int i = t->ndim - 1; i >= 0; --i) {
    strides_[i] = t->strides && numel_ > 0 ? t->strides[i] : compact;
    broadcast = broadcast || (strides_[i] == 0 && t->shape[i] > 1);
    if (strides_[i] < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has a negative stride",
               "strides[" + std::to_string(i) + "] = " + std::to_string(strides_[i]), ">= 0");
    // The stride of a dimension that never advances (size <= 1, or no element at all) may be
    // anything in DLPack, and the span check below never bounds it, so scaling it to bytes
    // (reader1d, row offsets) could overflow. Capping it keeps every comparison the checks
    // make (zero, one, a compact value) as it was while making the scaling safe.
    constexpr int64_t kUnboundedStrideCap = int64_t{1} << 32;
    if (t->shape[i] <= 1 || numel_ == 0) strides_[i] = std::min(strides_[i], kUnboundedStrideCap);
    compact = numel_ == 0 ? compact : compact * t->shape[i];
  }
  broadcast_ = broadcast;
  // The byte span, refused past kMaxSpanBytes whatever the element size: checked after each
  // term, so the 128-bit sum never overflows.
  unsigned __int128 span = 0;
  if (numel_ > 0) {
    for (int i = 0; i < t->ndim; ++i) {
      span += static_cast<unsigned __int128>(t->shape[i] - 1) *
              static_cast<unsigned __int128>(strides_[i]);
      if (span > static_cast<unsigned __int128>(kMaxSpanBytes)) fail_span();
    }
    span = (span + 1) * static_cast<unsigned __int128>(elem_bytes_);
    if (span > static_cast<unsigned __int128>(kMaxSpanBytes)) fail_span();
    if (t->data == nullptr)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "has NULL data", "NULL",
               "memory for " + std::to_string(numel_) + " elements");
  }
  // The view's end in 128 bits (data + byte_offset + span cannot wrap there), whatever the
  // element size, against the top of the memory a process can map.
  const uintptr_t data = reinterpret_cast<uintptr_t>(t->data);
  const unsigned __int128 end = static_cast<unsigned __int128>(data) + t->byte_offset + span;
  if (t->byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      end > kAddressLimit)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "addresses past the end of memory",
             "data " + hex_address(data) + ", byte_offset " + std::to_string(t->byte_offset) +
                 ", " + std::to_string(static_cast<uint64_t>(span)) + " bytes",
             "a view that ends below 2^64 - 2^52, where user memory can lie");
  // Integer arithmetic: an empty tensor may have NULL data and a nonzero byte_offset, and
  // offsetting a null pointer is undefined even when the result is never dereferenced.
  data_ = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(t->data) + t->byte_offset);
  span_bytes_ = static_cast<int64_t>(span);

  // What the call reads of the descriptor (strides only when an element exists), and the
  // elements it reads or writes.
  call_ = &current_call();
  const size_t dims = static_cast<size_t>(t->ndim) * sizeof(int64_t);
  call_->add(Part::DLTensor, name, t, sizeof(DLTensor), Use::In, t);
  call_->add(Part::Shape, name, t->shape, dims, Use::In, t);
  if (t->strides != nullptr && numel_ > 0)
    call_->add(Part::Strides, name, t->strides, dims, Use::In, t);
  call_->add(Part::Data, name, data_, static_cast<size_t>(span_bytes_), use, t);
}

void TensorArg::fail_unsealed() const {
  fail(CATTN_INTERNAL, fn_, std::string(name_) + " is written before the overlap check");
}

void TensorArg::fail_span() const {
  std::string strides = "[";
  for (int i = 0; i < t_->ndim; ++i) strides += (i ? ", " : "") + std::to_string(strides_[i]);
  fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "spans more bytes than an address space holds",
           "shape " + shape_string() + ", strides " + strides + "], " +
               std::to_string(elem_bytes_) + "-byte elements",
           "a view of at most 2^57 bytes");
}

bool TensorArg::is_contiguous() const {
  if (numel_ == 0) return true;  // no element, no layout to get wrong
  int64_t expect = 1;
  for (int i = t_->ndim - 1; i >= 0; --i) {
    if (t_->shape[i] != 1 && strides_[i] != expect) return false;
    expect *= t_->shape[i];
  }
  return true;
}

std::string TensorArg::shape_string() const {
  std::string s = "[";
  for (int i = 0; i < t_->ndim; ++i) s += (i ? ", " : "") + std::to_string(t_->shape[i]);
  return s + "]";
}

const TensorArg& TensorArg::expect_ndim(int n) const {
  if (t_->ndim != n)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "has the wrong ndim",
             std::to_string(t_->ndim) + " " + shape_string(), std::to_string(n));
  return *this;
}

const TensorArg& TensorArg::expect_size(int d, int64_t n) const {
  if (t_->shape[d] != n)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_,
             ("has the wrong size in dim " + std::to_string(d)).c_str(), shape_string(),
             std::to_string(n));
  return *this;
}

const TensorArg& TensorArg::expect_out_size(int d, int64_t n) const {
  if (t_->shape[d] != n)
    fail_arg(t_->shape[d] < n ? CATTN_INSUFFICIENT_SIZE : CATTN_INVALID_ARGUMENT, fn_, name_,
             ("has the wrong size in dim " + std::to_string(d)).c_str(), shape_string(),
             std::to_string(n));
  return *this;
}

const TensorArg& TensorArg::expect_capacity(int64_t n) const {
  expect_ndim(1);
  if (t_->shape[0] < n)
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn_, name_, "is too small", shape_string(),
             "at least " + std::to_string(n) + " elements");
  return *this;
}

const TensorArg& TensorArg::expect_index_dtype() const {
  const DLDataType d = t_->dtype;
  if (d.code != kDLInt || d.lanes != 1 || (d.bits != 32 && d.bits != 64))
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "has the wrong dtype", dtype_string(d),
             "int32 or int64");
  return *this;
}

const TensorArg& TensorArg::expect_same_dtype(const TensorArg& other) const {
  const DLDataType a = t_->dtype, b = other.t_->dtype;
  if (a.code != b.code || a.bits != b.bits || a.lanes != b.lanes)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "has the wrong dtype", dtype_string(a),
             dtype_string(b) + " like " + other.name_);
  return *this;
}

const TensorArg& TensorArg::expect_host() const {
  if (where_ != Where::Host)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "is not host memory",
             "device_type " + std::to_string(device_type_of(t_->device)),
             "kDLCPU or kDLCUDAHost (a host mirror)");
  return *this;
}

const TensorArg& TensorArg::expect_cuda(const char* host_call) const {
  if (where_ != Where::Cuda)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "is not device memory",
             "device_type " + std::to_string(device_type_of(t_->device)),
             std::string("kDLCUDA or kDLCUDAManaged (host tensors go to ") + host_call + ")");
  return *this;
}

const TensorArg& TensorArg::expect_writable() const {
  if (numel_ == 0) return *this;  // nothing is written
  for (int i = 0; i < t_->ndim; ++i)
    if (strides_[i] == 0 && t_->shape[i] > 1)
      fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "is an output with a zero stride",
               "strides[" + std::to_string(i) + "] = 0", "a stride >= 1");
  return *this;
}

const TensorArg& TensorArg::expect_scan_bounded() const {
  // A zero stride lets a few bytes claim any number of elements, and a call that reads every
  // element while writing less (a size query, a plan, a count) would then work in proportion
  // to the claim rather than to memory.
  if (broadcast_ && numel_ > kMaxBroadcastElements)
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_,
             "is a broadcast view (a zero stride) of too many elements to scan",
             std::to_string(numel_) + " elements " + shape_string(),
             "at most CATTN_MAX_BROADCAST_ELEMENTS (" +
                 std::to_string(kMaxBroadcastElements) + ") in a view with a zero stride");
  return *this;
}

const TensorArg& TensorArg::expect_contiguous() const {
  if (!is_contiguous())
    fail_arg(CATTN_INVALID_ARGUMENT, fn_, name_, "is not contiguous", "strided " + shape_string(),
             "compact row-major");
  return *this;
}

Where require_same_device(const char* fn, std::initializer_list<const TensorArg*> args) {
  const TensorArg* first = nullptr;
  for (const TensorArg* a : args) {
    if (!a->present()) continue;
    if (first == nullptr) {
      first = a;
      continue;
    }
    const bool same = a->where() == first->where() &&
                      (a->where() == Where::Host || a->device_id() == first->device_id());
    if (!same)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, a->name(), "is on a different device",
               std::string(a->is_cuda() ? "cuda:" + std::to_string(a->device_id()) : "host"),
               std::string("the device of ") + first->name() + " (" +
                   (first->is_cuda() ? "cuda:" + std::to_string(first->device_id()) : "host") +
                   ")");
  }
  return first ? first->where() : Where::Host;
}

void fail_index(const TensorArg* a, int64_t i, int64_t n) {
  // Reached only when a value the checks passed reads differently now (or by a defect): the
  // access is refused rather than made.
  fail_arg(CATTN_INVALID_ARGUMENT, a ? a->fn() : "libcattn", a ? a->name() : "a tensor",
           "is indexed outside its elements: an input changed during the call",
           "index " + std::to_string(i),
           "an index in [0, " + std::to_string(n) + ") from inputs that do not change while "
           "the call reads them");
}

namespace {

// Elements along the last dimension (a 0-D tensor holds one).
int64_t last_extent(const TensorArg& a) { return a.ndim() ? a.size(a.ndim() - 1) : 1; }
int64_t last_step(const TensorArg& a) {
  return a.ndim() ? a.stride(a.ndim() - 1) * a.elem_bytes() : 0;
}
// Element positions in a view's byte span, in units of its element size.
int64_t span_elements(const TensorArg& a) {
  return a.elem_bytes() ? a.span_bytes() / a.elem_bytes() : 0;
}
// The byte offset of row r (checked against the rows); an empty tensor has no element to reach,
// its data may be NULL and its strides are ignored, so its rows are not offset.
int64_t row_offset(const TensorArg& a, int64_t r) {
  if (static_cast<uint64_t>(r) >= static_cast<uint64_t>(a.size(0))) fail_index(&a, r, a.size(0));
  return a.numel() == 0 ? 0 : r * a.stride(0) * a.elem_bytes();
}

}  // namespace

IndexReader reader1d(const TensorArg& a) {
  return {a.data(), last_step(a), a.numel() ? last_extent(a) : 0, a.is_int64(), &a};
}
IndexWriter writer1d(const TensorArg& a) {
  return {a.data(), last_step(a), a.numel() ? last_extent(a) : 0, a.is_int64(), &a};
}
IndexReader reader_row(const TensorArg& a, int64_t r) {
  const int64_t off = row_offset(a, r);
  return {a.data() + off, a.stride(1) * a.elem_bytes(), a.size(1), a.is_int64(), &a};
}
IndexWriter writer_row(const TensorArg& a, int64_t r) {
  const int64_t off = row_offset(a, r);
  return {a.data() + off, a.stride(1) * a.elem_bytes(), a.size(1), a.is_int64(), &a};
}
IndexReader reader_span(const TensorArg& a) {
  return {a.data(), a.elem_bytes(), span_elements(a), a.is_int64(), &a};
}
IndexWriter writer_span(const TensorArg& a) {
  return {a.data(), a.elem_bytes(), span_elements(a), a.is_int64(), &a};
}
IndexWriter writer_row2(const TensorArg& a, int64_t r, int64_t j) {
  const int64_t off = row_offset(a, r);
  if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(a.size(1))) fail_index(&a, j, a.size(1));
  return {a.data() + off + j * a.stride(1) * a.elem_bytes(), a.stride(2) * a.elem_bytes(),
          a.size(2), a.is_int64(), &a};
}

bool read_flag(const TensorArg& a, int64_t i) {
  if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(a.size(0))) fail_index(&a, i, a.size(0));
  return a.data()[i * a.stride(0)] != 0;
}
void write_flag(const TensorArg& a, int64_t i, bool v) {
  if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(a.size(0))) fail_index(&a, i, a.size(0));
  a.data()[i * a.stride(0)] = v;
}

int64_t index_dtype_max(const TensorArg& a) {
  return a.is_int64() ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
}

void fail_does_not_fit(const char* fn, const TensorArg& a, int64_t value) {
  fail_arg(CATTN_INVALID_ARGUMENT, fn, a.name(), "cannot hold a result value",
             std::to_string(value), "a value that fits int32 (pass an int64 tensor)");
}

bool same_view(const TensorArg& a, const TensorArg& b) {
  if (!a.present() || !b.present() || a.address() != b.address() || a.where() != b.where() ||
      (a.is_cuda() && a.device_id() != b.device_id()) || a.ndim() != b.ndim())
    return false;
  const DLDataType x = a.raw()->dtype, y = b.raw()->dtype;
  if (x.code != y.code || x.bits != y.bits || x.lanes != y.lanes) return false;
  for (int i = 0; i < a.ndim(); ++i)
    if (a.size(i) != b.size(i) || (a.size(i) > 1 && a.stride(i) != b.stride(i))) return false;
  return true;
}

void allow_in_place(const TensorArg& out, const TensorArg& in) {
  if (same_view(out, in))
    current_call().allow_in_place(out.raw(), in.raw(), in.is_output() ? Use::Out : Use::In);
}

}  // namespace cattn
