// SPDX-License-Identifier: Apache-2.0
// Host algorithm for token_to_req_indices (and extend_all_queries_by_n's positions): one pass
// over the requests, each writing its run of tokens, then the padding. Every write position is
// bounded by the buffer's length again, so a query_start_loc that another thread changes after
// the checks gives wrong values, never a write out of bounds.
#include "host/token_to_req_indices_host.h"

#include <algorithm>
#include <string>

namespace cattn {

int64_t check_token_to_req_indices_host(const char* fn, const TensorArg& qsl,
                                        const TensorArg& qsl_cpu, int64_t num_tokens,
                                        const TensorArg& buffer) {
  const IndexReader q = reader1d(qsl);
  const int64_t batch = qsl.numel() - 1;
  int64_t total = 0;
  int64_t start = q[0];
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t end = q[r + 1];
    int64_t len;
    if (__builtin_sub_overflow(end, start, &len))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "gives a query length that overflows int64",
               "[" + std::to_string(r) + "] = " + std::to_string(start) + ", [" +
                   std::to_string(r + 1) + "] = " + std::to_string(end),
               "entries whose differences fit int64");
    if (len < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "gives a negative query length",
               "[" + std::to_string(r) + "] = " + std::to_string(start) + ", [" +
                   std::to_string(r + 1) + "] = " + std::to_string(end),
               "non-decreasing entries (torch.repeat_interleave refuses negative repeats)");
    if (__builtin_add_overflow(total, len, &total))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "gives a token count that overflows int64",
               "[" + std::to_string(r + 1) + "] = " + std::to_string(end),
               "query lengths whose sum fits int64");
    start = end;
  }
  int64_t mapped = total;
  if (qsl_cpu.present()) {
    mapped = reader1d(qsl_cpu)[batch];
    if (mapped != total)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl_cpu.name(),
               "gives a token count other than the query lengths' sum",
               "[" + std::to_string(batch) + "] = " + std::to_string(mapped),
               std::to_string(total) + " (torch.repeat_interleave's output_size must match)");
  }
  const int64_t need = std::max(mapped, num_tokens);
  if (buffer.numel() < need)
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn, buffer.name(), "is too short",
             std::to_string(buffer.numel()) + " entries",
             ">= max(mapped tokens, num_actual_tokens) = " + std::to_string(need));
  if (mapped > 0) require_fits(fn, buffer, batch - 1);
  return mapped;
}

void token_to_req_indices_host(const TensorArg& qsl, int64_t mapped, int64_t num_tokens,
                               const TensorArg& buffer) {
  const IndexReader q = reader1d(qsl);
  const IndexWriter w = writer1d(buffer);
  const int64_t cap = buffer.numel(), batch = qsl.numel() - 1;
  const int64_t limit = std::min(mapped, cap);
  int64_t t = 0;
  int64_t start = q[0];
  for (int64_t r = 0; r < batch && t < limit; ++r) {
    const int64_t end = q[r + 1];
    const int64_t len = static_cast<int64_t>(static_cast<uint64_t>(end) -
                                             static_cast<uint64_t>(start));
    const int64_t stop = len > 0 ? t + std::min(len, limit - t) : t;
    for (; t < stop; ++t) w.set(t, r);
    start = end;
  }
  const int64_t pad_end = std::min(std::max(mapped, num_tokens), cap);
  for (; t < pad_end; ++t) w.set(t, 0);
}

void check_token_positions_host(const char* fn, const TensorArg& qsl, const TensorArg& seq_lens,
                                int64_t extend_by, const TensorArg& positions) {
  const IndexReader q = reader1d(qsl), s = reader1d(seq_lens);
  const int64_t batch = seq_lens.numel();
  for (int64_t r = 0; r < batch; ++r) {
    int64_t len, first, last;
    if (__builtin_sub_overflow(q[r + 1], q[r], &len) ||
        __builtin_sub_overflow(s[r], len, &first) ||
        __builtin_add_overflow(len, extend_by, &len) ||
        __builtin_add_overflow(first, len, &last))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, positions.name(), "gets a position that overflows int64",
               "request " + std::to_string(r), "lengths whose differences fit int64");
    if (len <= 0) continue;
    require_fits(fn, positions, first);
    require_fits(fn, positions, last - 1);
  }
}

void token_positions_host(const TensorArg& qsl, const TensorArg& seq_lens,
                          const TensorArg& positions) {
  const IndexReader q = reader1d(qsl), s = reader1d(seq_lens);
  const IndexWriter w = writer1d(positions);
  const int64_t cap = positions.numel(), batch = seq_lens.numel();
  int64_t t = 0;
  for (int64_t r = 0; r < batch && t < cap; ++r) {
    const int64_t len = static_cast<int64_t>(static_cast<uint64_t>(q[r + 1]) -
                                             static_cast<uint64_t>(q[r]));
    if (len <= 0) continue;
    const uint64_t first = static_cast<uint64_t>(s[r]) - static_cast<uint64_t>(len);
    const int64_t stop = t + std::min(len, cap - t);
    for (int64_t j = 0; t < stop; ++t, ++j) w.set(t, static_cast<int64_t>(first + j));
  }
  for (; t < cap; ++t) w.set(t, 0);
}

}  // namespace cattn
