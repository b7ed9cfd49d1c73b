// SPDX-License-Identifier: Apache-2.0
// compute_mm_prefix_range_tensor and fill_mm_prefix_query_ranges (vLLM's multimodal prefix
// range helpers). Entry points: argument checks and dispatch; the algorithms are in
// host/compute_mm_prefix_range_tensor_host.cpp. Host only: vLLM builds both on the host too.
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "host/compute_mm_prefix_range_tensor_host.h"

namespace {

// The ranges of a call: absent together (vLLM's None) or present together.
bool ranges_given(const char* fn, const DLTensor* offsets, const DLTensor* ranges) {
  if ((offsets == nullptr) != (ranges == nullptr))
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, offsets ? "args->ranges" : "args->range_offsets",
                    "is NULL while the other CSR tensor is not", "NULL",
                    "range_offsets and ranges both given, or both NULL for None");
  return offsets != nullptr;
}

void require_host_out(const cattn::TensorArg& out) {
  if (out.where() != cattn::Where::Host)
    cattn::fail_arg(CATTN_NOT_SUPPORTED, out.fn(), out.name(), "is device memory",
                    "device_type " + std::to_string(cattn::device_type_of(out.raw()->device)),
                    "host memory (kDLCPU or kDLCUDAHost); copy the result to the device");
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_compute_mm_prefix_range_tensor(
    cattn_mm_prefix_range_tensor_args_t* args) {
  constexpr const char* fn = "cattn_compute_mm_prefix_range_tensor";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    if (args->reserved0 != 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->reserved0", "is not 0",
                      std::to_string(args->reserved0), "0");
    const bool given = ranges_given(fn, args->range_offsets, args->ranges);
    const cattn::TensorArg offsets(fn, "args->range_offsets", args->range_offsets, cattn::Use::In,
                                   true);
    const cattn::TensorArg ranges(fn, "args->ranges", args->ranges, cattn::Use::In, true);
    const cattn::TensorArg out(fn, "args->out", args->out, cattn::Use::Out, true);
    if (out.present()) require_host_out(out);
    cattn::MmPrefixShape shape;
    if (given) {
      const cattn::MmPrefixRanges m(fn, offsets, ranges, -1);
      shape = cattn::mm_prefix_range_shape(fn, m);
      if (out.present() && !shape.is_none) {
        out.expect_ndim(3).expect_index_dtype().expect_writable();
        out.expect_out_size(0, m.requests())
            .expect_out_size(1, shape.max_ranges)
            .expect_out_size(2, 2);
        cattn::seal_arguments();
        cattn::compute_mm_prefix_range_tensor_host(m, shape.max_ranges, out);
      }
    }
    cattn::seal_arguments();  // (out, when not written)
    args->max_ranges = shape.max_ranges;
    args->is_none = shape.is_none ? 1 : 0;
  });
}

CATTN_API cattn_status_t cattn_fill_mm_prefix_query_ranges(
    cattn_fill_mm_prefix_query_ranges_args_t* args) {
  constexpr const char* fn = "cattn_fill_mm_prefix_query_ranges";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const bool given = ranges_given(fn, args->range_offsets, args->ranges);
    const cattn::TensorArg offsets(fn, "args->range_offsets", args->range_offsets, cattn::Use::In,
                                   true);
    const cattn::TensorArg ranges(fn, "args->ranges", args->ranges, cattn::Use::In, true);
    const cattn::TensorArg qsl(fn, "args->query_start_loc_cpu", args->query_start_loc_cpu,
                               cattn::Use::In);
    const cattn::TensorArg seq(fn, "args->seq_lens_cpu", args->seq_lens_cpu, cattn::Use::In);
    const cattn::TensorArg out(fn, "args->out", args->out, cattn::Use::Out);
    qsl.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
    if (qsl.size(0) < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is empty", qsl.shape_string(),
                      "[B + 1]");
    const int64_t batch = qsl.size(0) - 1;
    seq.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded().expect_size(
        0, batch);
    require_host_out(out);
    out.expect_ndim(2).expect_index_dtype().expect_writable().expect_size(1, 2);
    cattn::seal_arguments();
    int64_t rows = 0;
    if (given) {
      const cattn::MmPrefixRanges m(fn, offsets, ranges, batch);
      rows = cattn::fill_mm_prefix_query_ranges_host(fn, m, qsl, seq, out);
    }
    args->rows = rows;
  });
}

}  // extern "C"
