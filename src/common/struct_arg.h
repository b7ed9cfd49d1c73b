/* SPDX-License-Identifier: Apache-2.0 */
// Versioned structs as arguments: the one struct_size rule (promise 9 of cattn.h) and their
// place in the call's memory (common/call_args.h). Also the plain host arguments a call reads
// or writes through a pointer: output scalars, arrays and strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cattn.h"
#include "common/call_args.h"
#include "common/error.h"

namespace cattn {

// The struct_size of each released version of a struct, oldest first. A struct that grew in a
// release lists every size; the rest have one. A struct_size below the oldest is too small; one
// between two versions was written by no header and is refused the same way; the newest or
// larger (a newer header's struct) is read as the newest, and nothing past it is touched.
template <class T>
struct StructSizes {
  static constexpr size_t kSizes[] = {sizeof(T)};
};
template <>
struct StructSizes<cattn_common_attn_metadata_t> {
  static constexpr size_t kSizes[] = {CATTN_COMMON_ATTN_METADATA_SIZE_1_0,
                                      CATTN_COMMON_ATTN_METADATA_SIZE_1_1};
};
template <>
struct StructSizes<cattn_extend_all_queries_by_n_args_t> {
  static constexpr size_t kSizes[] = {CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE_1_0,
                                      sizeof(cattn_extend_all_queries_by_n_args_t)};
};
template <>
struct StructSizes<cattn_local_attention_args_t> {
  // The 1.0 struct ends at `plan`; max_virtual_batches was appended in 1.1.
  static constexpr size_t kSizes[] = {offsetof(cattn_local_attention_args_t, plan) + sizeof(void*),
                                      sizeof(cattn_local_attention_args_t)};
};
template <>
struct StructSizes<cattn_dcp_local_seq_lens_args_t> {
  // The 1.0 struct ends before shape_mode.
  static constexpr size_t kSizes[] = {offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode),
                                      sizeof(cattn_dcp_local_seq_lens_args_t)};
};

template <>
struct StructSizes<cattn_step_plan_desc_t> {
  static constexpr size_t kSizes[] = {CATTN_STEP_PLAN_DESC_SIZE_1_1,
                                      sizeof(cattn_step_plan_desc_t)};
};
template <>
struct StructSizes<cattn_step_plan_shape_t> {
  static constexpr size_t kSizes[] = {CATTN_STEP_PLAN_SHAPE_SIZE_1_1,
                                      sizeof(cattn_step_plan_shape_t)};
};
template <>
struct StructSizes<cattn_step_batch_t> {
  static constexpr size_t kSizes[] = {CATTN_STEP_BATCH_SIZE_1_1, sizeof(cattn_step_batch_t)};
};
template <>
struct StructSizes<cattn_step_outputs_t> {
  static constexpr size_t kSizes[] = {CATTN_STEP_OUTPUTS_SIZE_1_1, sizeof(cattn_step_outputs_t)};
};

// The oldest size of T and the newest.
template <class T>
constexpr size_t oldest_size() {
  return StructSizes<T>::kSizes[0];
}
template <class T>
constexpr size_t newest_size() {
  return StructSizes<T>::kSizes[sizeof(StructSizes<T>::kSizes) / sizeof(size_t) - 1];
}

// Fails unless `size` is a struct_size of T's versions or past the newest (see StructSizes).
void require_struct_size(const char* fn, const char* arg, size_t size, const size_t* sizes,
                         size_t count);

// Checks `s` - not NULL, a struct_size the rule above accepts - and records the bytes the call
// reads (Use::In) or writes (Use::Out) of it, min(struct_size, sizeof(T)), with the current
// call. An args struct whose out fields the call fills after every read is recorded as In.
// Returns those bytes.
template <class T>
size_t require_struct(const char* fn, const char* arg, const T* s, Use use = Use::In) {
  if (s == nullptr) fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a pointer");
  const size_t size = s->struct_size;
  constexpr size_t kCount = sizeof(StructSizes<T>::kSizes) / sizeof(size_t);
  require_struct_size(fn, arg, size, StructSizes<T>::kSizes, kCount);
  const size_t bytes = size < sizeof(T) ? size : sizeof(T);
  current_call().add(Part::Struct, arg, s, bytes, use, s);
  return bytes;
}

// True when the caller's struct holds T's newest fields.
template <class T>
bool has_newest(const T* s) {
  return s->struct_size >= newest_size<T>();
}

// Fails (CATTN_INVALID_ARGUMENT) unless a reserved field is 0.
inline void require_reserved_zero(const char* fn, const char* arg, int64_t value) {
  if (value != 0) fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is not 0", std::to_string(value), "0");
}

// A host pointer a call writes one value (or `count` values) to: not NULL, recorded as an
// output of the call. For size queries, counts and handles returned through a pointer.
template <class T>
T* require_out_ptr(const char* fn, const char* arg, T* p, size_t count = 1) {
  if (p == nullptr) fail_arg(CATTN_INVALID_ARGUMENT, fn, arg, "is NULL", "NULL", "a pointer");
  current_call().add(Part::Data, arg, p, sizeof(T) * count, Use::Out, p);
  return p;
}

// As require_out_ptr for a pointer that may be NULL (nothing written then).
template <class T>
T* optional_out_ptr(const char* arg, T* p) {
  if (p != nullptr) current_call().add(Part::Data, arg, p, sizeof(T), Use::Out, p);
  return p;
}

// Records a host array or string the call reads: `bytes` from `p` (nothing for NULL).
inline void record_input(const char* arg, const void* p, size_t bytes) {
  if (p != nullptr) current_call().add(Part::Data, arg, p, bytes, Use::In, p);
}

}  // namespace cattn
