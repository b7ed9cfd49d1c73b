// SPDX-License-Identifier: Apache-2.0
// Host algorithm for make_kv_sharing_fast_prefill_common_attn_metadata.
//
// vLLM computes request_ids = bucketize(logits_indices, query_start_loc[1:], right=True), i.e.
// the number of request ends <= each index, then bincounts them and takes a cumulative sum. We
// count straight into the output query_start_loc (slot r + 1 counts request r) and turn the
// counts into the cumulative sum in place, so no scratch memory is needed.
//
// Logits indices are normally sorted (they are token positions in batch order), so each search
// starts from the previous answer and gallops forward: a sorted run costs O(n + B) in total.
// An index smaller than its predecessor falls back to a binary search below the previous
// answer, so unsorted input is O(n log B) and still correct.
#include "host/make_kv_sharing_fast_prefill_common_attn_metadata_host.h"

#include <algorithm>
#include <string>

namespace cattn {
namespace {

// First j in [lo, hi) with ends[j] > x, or hi.
int64_t upper_bound(const IndexReader& ends, int64_t lo, int64_t hi, int64_t x) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (ends[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace

void check_fast_prefill_host(const char* fn, const TensorArg& qsl, const TensorArg& logits,
                             int64_t count) {
  const IndexReader q = reader1d(qsl);
  const int64_t num_reqs = qsl.numel() - 1;
  for (int64_t i = 0; i < num_reqs; ++i)
    if (q[i + 1] < q[i])
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "decreases",
               "[" + std::to_string(i) + "] = " + std::to_string(q[i]) + " > [" +
                   std::to_string(i + 1) + "] = " + std::to_string(q[i + 1]),
               "non-decreasing query start locations");
  const int64_t end = q[num_reqs];
  const IndexReader li = reader1d(logits);
  for (int64_t i = 0; i < count; ++i)
    if (li[i] >= end)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, logits.name(),
               "holds an index past the last request",
               "[" + std::to_string(i) + "] = " + std::to_string(li[i]),
               "an index < query_start_loc[num_reqs] = " + std::to_string(end));
}

int64_t make_fast_prefill_query_start_loc_host(const TensorArg& qsl, const TensorArg& logits,
                                               int64_t count, const TensorArg& out,
                                               const TensorArg& out_cpu) {
  const IndexReader q = reader1d(qsl);
  const IndexReader ends = q.from(1);  // query_start_loc[1:]
  const int64_t num_reqs = qsl.numel() - 1;
  const IndexReader li = reader1d(logits);
  const IndexReader counts_in = reader1d(out);
  const IndexWriter counts = writer1d(out);

  for (int64_t r = 0; r <= num_reqs; ++r) counts.set(r, 0);
  int64_t request = 0, previous = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t x = li[i];
    if (i > 0 && x < previous) {
      request = upper_bound(ends, 0, request, x);
    } else {
      // Gallop: invariant ends[lo - 1] <= x; stop at the first probe past x (or the end).
      int64_t lo = request, hi = request, step = 1;
      while (hi < num_reqs && ends[hi] <= x) {
        lo = hi + 1;
        hi = std::min(num_reqs, lo + step);
        step *= 2;
      }
      request = upper_bound(ends, lo, hi, x);
    }
    previous = x;
    // Checked beforehand: every index lies before the last end, so request < num_reqs; an index
    // the caller changed during the call may not, and is left out of every count (as on the
    // device) rather than counted past the output.
    if (request >= num_reqs) continue;
    counts.set(request + 1, counts_in[request + 1] + 1);
  }

  int64_t running = 0, largest = 0;
  for (int64_t r = 1; r <= num_reqs; ++r) {
    const int64_t c = counts_in[r];
    largest = std::max(largest, c);
    running += c;
    counts.set(r, running);
  }
  if (out_cpu.present()) {
    const IndexWriter mirror = writer1d(out_cpu);
    for (int64_t r = 0; r <= num_reqs; ++r) mirror.set(r, counts_in[r]);
  }
  return largest;
}

}  // namespace cattn
