// SPDX-License-Identifier: Apache-2.0
// Host algorithm for naive_query_lens and compute_num_computed_tokens: one pass, each
// query_start_loc entry read once per pass (the previous request's end is the next one's
// start).
#include "host/naive_query_lens_host.h"

#include <string>

namespace cattn {
namespace {

// The value of request i, or false when int64 cannot hold it.
bool length_of(int64_t start, int64_t end, const IndexReader* seq, int64_t i, int64_t* out) {
  int64_t q;
  if (__builtin_sub_overflow(end, start, &q)) return false;
  if (seq == nullptr) {
    *out = q;
    return true;
  }
  return !__builtin_sub_overflow((*seq)[i], q, out);
}

}  // namespace

void check_naive_query_lens_host(const char* fn, const TensorArg& qsl, const TensorArg* seq_lens,
                                 const TensorArg& out) {
  const IndexReader q = reader1d(qsl);
  IndexReader seq{};
  if (seq_lens != nullptr) seq = reader1d(*seq_lens);
  const int64_t batch = out.numel();
  int64_t start = batch > 0 ? q[0] : 0;
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t end = q[i + 1];
    int64_t v;
    if (!length_of(start, end, seq_lens != nullptr ? &seq : nullptr, i, &v))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens != nullptr ? seq_lens->name() : qsl.name(),
               "gives a length that overflows int64", "request " + std::to_string(i),
               "values whose differences fit int64");
    require_fits(fn, out, v);
    start = end;
  }
}

void naive_query_lens_host(const TensorArg& qsl, const TensorArg* seq_lens, const TensorArg& out) {
  const IndexReader q = reader1d(qsl);
  IndexReader seq{};
  if (seq_lens != nullptr) seq = reader1d(*seq_lens);
  const IndexWriter w = writer1d(out);
  const int64_t batch = out.numel();
  uint64_t start = batch > 0 ? static_cast<uint64_t>(q[0]) : 0;
  for (int64_t i = 0; i < batch; ++i) {
    // Checked already; modular arithmetic keeps a racing writer's values defined.
    const uint64_t end = static_cast<uint64_t>(q[i + 1]);
    uint64_t v = end - start;
    if (seq_lens != nullptr) v = static_cast<uint64_t>(seq[i]) - v;
    w.set(i, static_cast<int64_t>(v));
    start = end;
  }
}

}  // namespace cattn
