// SPDX-License-Identifier: Apache-2.0
// Host algorithms of compute_mm_prefix_range_tensor and fill_mm_prefix_query_ranges.
//
// Both validate everything in a first pass and write in a second, so that a failure leaves
// the caller's memory as it was and no scratch list of spans is allocated. The query-range
// arithmetic is done in 128 bits: ranges, lengths and offsets are caller int64 values that
// vLLM combines as Python integers, which never overflow.
#include "host/compute_mm_prefix_range_tensor_host.h"

#include <algorithm>
#include <string>

namespace cattn {
namespace {

using i128 = __int128;

std::string at(const char* what, int64_t i) { return std::string(what) + "[" + std::to_string(i) + "]"; }

}  // namespace

MmPrefixRanges::MmPrefixRanges(const char* fn, const TensorArg& offsets, const TensorArg& ranges,
                               int64_t requests)
    : ranges_(ranges) {
  offsets.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
  ranges.expect_ndim(2).expect_index_dtype().expect_host().expect_size(1, 2).expect_scan_bounded();
  if (offsets.size(0) < 1)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, offsets.name(), "is empty", offsets.shape_string(),
             "[num_seqs + 1]");
  if (requests >= 0) offsets.expect_size(0, requests + 1);
  requests_ = offsets.size(0) - 1;
  off_ = reader1d(offsets);
  if (off_[0] != 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, offsets.name(), "does not start at 0",
             at("", 0) + " = " + std::to_string(off_[0]), "0");
  for (int64_t r = 0; r < requests_; ++r)
    if (off_[r + 1] < off_[r])
      fail_arg(CATTN_INVALID_ARGUMENT, fn, offsets.name(), "decreases",
               at("", r + 1) + " = " + std::to_string(off_[r + 1]),
               ">= " + std::to_string(off_[r]));
  if (off_[requests_] > ranges.size(0))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, offsets.name(), "points past the rows of ranges",
             at("", requests_) + " = " + std::to_string(off_[requests_]),
             "<= " + std::to_string(ranges.size(0)));
}

MmPrefixShape mm_prefix_range_shape(const char* fn, const MmPrefixRanges& m) {
  MmPrefixShape s;
  for (int64_t r = 0; r < m.requests(); ++r) {
    const int64_t n = m.end(r) - m.begin(r);
    for (int64_t k = m.begin(r); k < m.end(r); ++k)
      for (const int64_t v : {m.start_of(k), m.end_of(k)})
        if (!fits_int32(v))
          fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->ranges", "holds a value outside int32",
                   at("", k) + " = " + std::to_string(v), "-2147483648..2147483647");
    // vLLM replaces an empty list by [(0, 0)] and calls the result None when every request's
    // list is then exactly [(0, 0)].
    const bool trivial = n == 0 || (n == 1 && m.start_of(m.begin(r)) == 0 &&
                                    m.end_of(m.begin(r)) == 0);
    s.is_none = s.is_none && trivial;
    s.max_ranges = std::max<int64_t>(s.max_ranges, std::max<int64_t>(n, 1));
  }
  if (s.is_none) s.max_ranges = 0;
  return s;
}

void compute_mm_prefix_range_tensor_host(const MmPrefixRanges& m, int64_t max_ranges,
                                         const TensorArg& out) {
  for (int64_t r = 0; r < m.requests(); ++r)
    for (int64_t j = 0; j < max_ranges; ++j) {
      const int64_t k = m.begin(r) + j;
      const bool listed = k < m.end(r);
      const IndexWriter w = writer_row2(out, r, j);
      w.set(0, listed ? m.start_of(k) : 0);
      w.set(1, listed ? m.end_of(k) : 0);
    }
}

namespace {

// The query rows [first, last] (absolute, inclusive) that range k of request r covers, when
// it covers any.
struct Span {
  int64_t first = 0, last = -1;
  bool any() const { return first <= last; }
};

Span span_of(const MmPrefixRanges& m, int64_t k, int64_t token_start, int64_t query_len,
             int64_t seq_len) {
  const i128 start = m.start_of(k), end = m.end_of(k);
  if (start >= end || query_len <= 0) return {};
  const i128 context = i128{seq_len} - query_len;
  const i128 first = std::max<i128>(start - context, 0);
  const i128 last = std::min<i128>(end - context, i128{query_len} - 1);
  if (first > last) return {};
  // 0 <= first <= last < query_len, so both rows lie in [token_start, token_start + q).
  return {token_start + static_cast<int64_t>(first), token_start + static_cast<int64_t>(last)};
}

}  // namespace

int64_t fill_mm_prefix_query_ranges_host(const char* fn, const MmPrefixRanges& m,
                                         const TensorArg& qsl, const TensorArg& seq_lens,
                                         const TensorArg& out) {
  const IndexReader q = reader1d(qsl), seq = reader1d(seq_lens);
  const int64_t batch = m.requests();
  if (q[0] != 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "does not start at 0",
             "[0] = " + std::to_string(q[0]), "0");
  for (int64_t r = 0; r < batch; ++r)
    if (q[r + 1] < q[r])
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "decreases",
               at("", r + 1) + " = " + std::to_string(q[r + 1]), ">= " + std::to_string(q[r]));
  const int64_t total = q[batch];
  if (total <= 0) return 0;
  if (total > out.size(0))
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn, out.name(), "holds fewer rows than the query tokens",
             out.shape_string(), "at least " + std::to_string(total) + " rows");
  bool any = false;
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t k = m.begin(r); k < m.end(r); ++k) {
      if (!span_of(m, k, q[r], q[r + 1] - q[r], seq[r]).any()) continue;
      any = true;
      for (const int64_t v : {m.start_of(k), m.end_of(k)})
        if (!out.is_int64() && !fits_int32(v))
          fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->ranges",
                   "holds a value an int32 out cannot store", at("", k) + " = " + std::to_string(v),
                   "-2147483648..2147483647, or an int64 out");
    }
  if (!any) return 0;
  for (int64_t t = 0; t < total; ++t) {
    const IndexWriter w = writer_row(out, t);
    w.set(0, -1);
    w.set(1, -1);
  }
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t k = m.begin(r); k < m.end(r); ++k) {
      const Span s = span_of(m, k, q[r], q[r + 1] - q[r], seq[r]);
      for (int64_t t = s.first; t <= s.last; ++t) {
        const IndexWriter w = writer_row(out, t);
        w.set(0, m.start_of(k));
        w.set(1, m.end_of(k));
      }
    }
  return total;
}

}  // namespace cattn
