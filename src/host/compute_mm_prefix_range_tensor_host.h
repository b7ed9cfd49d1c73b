/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
#include <cstdint>

#include "common/tensor_arg.h"

namespace cattn {

// Multimodal prefix ranges in CSR form: request r's (start, end) pairs are rows offsets[r] ..
// offsets[r + 1] - 1 of ranges. Constructing one checks the shapes, dtypes and offsets
// (from 0, non-decreasing, within the rows of ranges) of host tensors; `requests` is the
// number of requests the offsets must describe (offsets has requests + 1 entries), -1 for any.
class MmPrefixRanges {
 public:
  MmPrefixRanges(const char* fn, const TensorArg& offsets, const TensorArg& ranges,
                 int64_t requests);
  int64_t requests() const { return requests_; }
  int64_t begin(int64_t r) const { return off_[r]; }
  int64_t end(int64_t r) const { return off_[r + 1]; }
  int64_t start_of(int64_t k) const { return reader_row(ranges_, k)[0]; }
  int64_t end_of(int64_t k) const { return reader_row(ranges_, k)[1]; }

 private:
  const TensorArg& ranges_;
  IndexReader off_;
  int64_t requests_ = 0;
};

// compute_mm_prefix_range_tensor's shape: the padded ranges per request, and whether vLLM
// returns None. Also checks that every listed value fits int32.
struct MmPrefixShape {
  int64_t max_ranges = 0;
  bool is_none = true;
};
MmPrefixShape mm_prefix_range_shape(const char* fn, const MmPrefixRanges& ranges);
// Writes the padded [requests, max_ranges, 2] tensor into a checked out.
void compute_mm_prefix_range_tensor_host(const MmPrefixRanges& ranges, int64_t max_ranges,
                                         const TensorArg& out);

// fill_mm_prefix_query_ranges after the tensor checks: checks the values (query_start_loc
// from 0 and non-decreasing, capacity, written values fitting out) before writing anything,
// then fills out and returns the rows written (0 or query_start_loc[B]).
int64_t fill_mm_prefix_query_ranges_host(const char* fn, const MmPrefixRanges& ranges,
                                         const TensorArg& query_start_loc,
                                         const TensorArg& seq_lens, const TensorArg& out);

}  // namespace cattn
