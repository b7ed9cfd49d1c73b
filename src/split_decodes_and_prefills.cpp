// SPDX-License-Identifier: Apache-2.0
// Decode/prefill(/extend) split points of an ordered batch (vLLM split_decodes_and_prefills
// and split_decodes_prefills_and_extends), on the host and on the device. Entry points:
// argument checks and dispatch; the algorithms are in host/split_decodes_and_prefills_host.cpp
// and kernels/split_decodes_and_prefills.cu.
#include <climits>
#include <string>

#include "common/error.h"
#include "common/param_checks.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/split_decodes_and_prefills_device.h"
#include "host/split_decodes_and_prefills_host.h"

namespace {

void check_threshold(const char* fn, int64_t thr) {
  if (thr < 0 || thr > INT32_MAX)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->decode_threshold", "is out of range",
                    std::to_string(thr), "0..2147483647");
}

void check_flag(const char* fn, const char* name, int32_t v) {
  if (v != 0 && v != 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is not a flag", std::to_string(v),
                    "0 or 1");
}

// query_start_loc of num_reqs + 1 entries: the caller's num_reqs (host calls), or B from the
// shape when `from_shape` (device calls). Returns B.
int64_t check_query_start_loc(const char* fn, const cattn::TensorArg& q, int64_t num_reqs,
                              bool from_shape = false) {
  q.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
  if (from_shape) {
    if (q.size(0) < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, q.name(), "is empty", q.shape_string(),
                      "B + 1 >= 1 entries");
    return q.size(0) - 1;
  }
  if (num_reqs < 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_reqs", "is negative",
                    std::to_string(num_reqs), ">= 0");
  if (q.size(0) - 1 != num_reqs)  // (num_reqs + 1 could overflow)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, q.name(), "does not have num_reqs + 1 entries",
                    q.shape_string(), "num_reqs + 1 = " + std::to_string(num_reqs) + " + 1");
  return num_reqs;
}

// One byte per request (bool, uint8 or int8), read in full.
void check_flags_tensor(const cattn::TensorArg& t, int64_t batch) {
  cattn::expect_flags(t, batch);
  t.expect_scan_bounded();
}

// A device scalar input: [1] int32/int64.
void check_scalar(const cattn::TensorArg& t) {
  if (t.present()) t.expect_ndim(1).expect_size(0, 1).expect_index_dtype();
}

// A count the caller gives: CATTN_FROM_QUERY_START_LOC, or at least 0 (used as given).
void check_count(const char* fn, const char* name, int64_t v) {
  if (v < 0 && v != CATTN_FROM_QUERY_START_LOC)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, name, "is negative", std::to_string(v),
                    ">= 0, or CATTN_FROM_QUERY_START_LOC (-1) to derive it");
}

cattn::SplitBatch host_batch(const char* fn, const cattn::TensorArg& q, int64_t num_reqs,
                             int64_t tokens, int64_t max_query_len, int64_t thr) {
  check_count(fn, "args->num_actual_tokens", tokens);
  check_count(fn, "args->max_query_len", max_query_len);
  cattn::SplitBatch b;
  b.qsl = cattn::reader1d(q);
  b.qsl_i64 = q.is_int64();
  b.num_reqs = num_reqs;
  b.num_tokens = tokens;
  b.max_query_len = max_query_len;
  b.threshold = thr;
  cattn::derive_unset_split_counts(b);
  return b;
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_split_decodes_and_prefills(
    cattn_split_decodes_and_prefills_args_t* args) {
  constexpr const char* fn = "cattn_split_decodes_and_prefills";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc_cpu", args->query_start_loc_cpu,
                             cattn::Use::In);
    const cattn::TensorArg isp(fn, "args->is_prefilling_cpu", args->is_prefilling_cpu,
                               cattn::Use::In, true);
    const int64_t B = check_query_start_loc(fn, q, args->num_reqs);
    q.expect_host();
    if (isp.present()) {
      check_flags_tensor(isp, B);
      isp.expect_host();
    }
    check_threshold(fn, args->decode_threshold);
    check_flag(fn, "args->require_uniform", args->require_uniform);
    check_flag(fn, "args->treat_short_extends_as_decodes", args->treat_short_extends_as_decodes);
    cattn::FlagReader flags;
    if (isp.present()) flags = {isp.data(), isp.stride(0)};
    int64_t r[4];
    cattn::split_decodes_and_prefills_host(
        fn, host_batch(fn, q, B, args->num_actual_tokens, args->max_query_len, args->decode_threshold),
        args->require_uniform != 0, args->treat_short_extends_as_decodes != 0, flags, r);
    args->num_decodes = r[0];
    args->num_prefills = r[1];
    args->num_decode_tokens = r[2];
    args->num_prefill_tokens = r[3];
  });
}

CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends(
    cattn_split_decodes_prefills_and_extends_args_t* args) {
  constexpr const char* fn = "cattn_split_decodes_prefills_and_extends";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc_cpu", args->query_start_loc_cpu,
                             cattn::Use::In);
    const cattn::TensorArg ub(fn, "args->seq_lens_cpu_upper_bound",
                              args->seq_lens_cpu_upper_bound, cattn::Use::In, true);
    const int64_t B = check_query_start_loc(fn, q, args->num_reqs);
    q.expect_host();
    if (ub.present()) ub.expect_ndim(1).expect_size(0, B).expect_index_dtype().expect_host()
                          .expect_scan_bounded();
    check_threshold(fn, args->decode_threshold);
    cattn::IndexReader bound{};
    if (ub.present()) bound = cattn::reader1d(ub);
    int64_t r[6];
    cattn::split_decodes_prefills_and_extends_host(
        fn, host_batch(fn, q, B, args->num_actual_tokens, args->max_query_len, args->decode_threshold),
        bound, ub.present(), r);
    args->num_decodes = r[0];
    args->num_extends = r[1];
    args->num_prefills = r[2];
    args->num_decode_tokens = r[3];
    args->num_extend_tokens = r[4];
    args->num_prefill_tokens = r[5];
  });
}

CATTN_API cattn_status_t cattn_split_decodes_and_prefills_capturable(
    const cattn_split_decodes_and_prefills_capturable_args_t* args) {
  constexpr const char* fn = "cattn_split_decodes_and_prefills_capturable";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc", args->query_start_loc, cattn::Use::In);
    const cattn::TensorArg isp(fn, "args->is_prefilling", args->is_prefilling, cattn::Use::In,
                               true);
    const cattn::TensorArg tokens(fn, "args->num_actual_tokens", args->num_actual_tokens,
                                  cattn::Use::In, true);
    const cattn::TensorArg mql(fn, "args->max_query_len", args->max_query_len, cattn::Use::In,
                               true);
    const cattn::TensorArg out(fn, "args->result", args->result, cattn::Use::Out);
    const int64_t B = check_query_start_loc(fn, q, 0, true);
    if (isp.present()) check_flags_tensor(isp, B);
    check_scalar(tokens);
    check_scalar(mql);
    out.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, 4);
    check_threshold(fn, args->decode_threshold);
    check_flag(fn, "args->require_uniform", args->require_uniform);
    check_flag(fn, "args->treat_short_extends_as_decodes", args->treat_short_extends_as_decodes);
    cattn::seal_arguments();
    cattn::require_same_device(fn, {&q, &isp, &tokens, &mql, &out});
    q.expect_cuda("cattn_split_decodes_and_prefills");
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
    else
      cattn::split_decodes_and_prefills_capturable(
          fn,
          {q, &isp, tokens, mql, args->decode_threshold, args->require_uniform != 0,
           args->treat_short_extends_as_decodes != 0, out},
          args->stream);
  });
}

CATTN_API cattn_status_t cattn_split_decodes_prefills_and_extends_capturable(
    const cattn_split_decodes_prefills_and_extends_capturable_args_t* args) {
  constexpr const char* fn = "cattn_split_decodes_prefills_and_extends_capturable";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc", args->query_start_loc, cattn::Use::In);
    const cattn::TensorArg ub(fn, "args->seq_lens_upper_bound", args->seq_lens_upper_bound,
                              cattn::Use::In);
    const cattn::TensorArg tokens(fn, "args->num_actual_tokens", args->num_actual_tokens,
                                  cattn::Use::In, true);
    const cattn::TensorArg mql(fn, "args->max_query_len", args->max_query_len, cattn::Use::In,
                               true);
    const cattn::TensorArg out(fn, "args->result", args->result, cattn::Use::Out);
    const int64_t B = check_query_start_loc(fn, q, 0, true);
    ub.expect_ndim(1).expect_size(0, B).expect_index_dtype().expect_scan_bounded();
    check_scalar(tokens);
    check_scalar(mql);
    out.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, 6);
    check_threshold(fn, args->decode_threshold);
    cattn::seal_arguments();
    cattn::require_same_device(fn, {&q, &ub, &tokens, &mql, &out});
    q.expect_cuda("cattn_split_decodes_prefills_and_extends");
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
    else
      cattn::split_decodes_prefills_and_extends_capturable(
          fn, {q, &ub, tokens, mql, args->decode_threshold, false, true, out}, args->stream);
  });
}

}  // extern "C"
