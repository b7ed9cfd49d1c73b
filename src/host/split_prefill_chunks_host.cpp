// SPDX-License-Identifier: Apache-2.0
// Host algorithm of split_prefill_chunks: vLLM's greedy packing, a chunk taking requests while
// the running sum stays within the workspace. The sum is kept in 128 bits, so negative or huge
// lengths (which vLLM, in Python ints, accepts) never overflow. Every length is <= the
// workspace, so each chunk takes at least one request; the writing pass forces that progress
// too, and stops at the counted number of rows, so a length changed by a racing writer can
// change the bounds but never the rows written.
#include "host/split_prefill_chunks_host.h"

#include <string>

namespace cattn {
namespace {

// Calls row(start, end) for each chunk, at most `limit` times; returns the chunks found.
template <class Row>
int64_t walk_chunks(const IndexReader& in, int64_t n, int64_t workspace, int64_t limit,
                    Row&& row) {
  int64_t i = 0, chunks = 0;
  while (i < n && chunks < limit) {
    const int64_t start = i;
    __int128 total = 0;
    while (i < n) {
      const int64_t s = in[i];
      if (total + s > workspace && i > start) break;
      total += s;
      ++i;
    }
    row(start, i);
    ++chunks;
  }
  return chunks;
}

}  // namespace

int64_t split_prefill_chunks_count_host(const char* fn, const TensorArg& seq_lens,
                                        int64_t workspace_size) {
  const IndexReader in = reader1d(seq_lens);
  const int64_t n = seq_lens.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = in[i];
    if (s > workspace_size)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(),
               "has a length larger than workspace_size (vLLM asserts)",
               "[" + std::to_string(i) + "] = " + std::to_string(s),
               "<= " + std::to_string(workspace_size));
  }
  return walk_chunks(in, n, workspace_size, n, [](int64_t, int64_t) {});
}

void split_prefill_chunks_host(const TensorArg& seq_lens, int64_t workspace_size,
                               int64_t request_offset, int64_t num_chunks,
                               const TensorArg& chunks) {
  const IndexReader in = reader1d(seq_lens);
  int64_t k = 0;
  walk_chunks(in, seq_lens.numel(), workspace_size, num_chunks, [&](int64_t start, int64_t end) {
    const IndexWriter row = writer_row(chunks, k++);
    row.set(0, start + request_offset);
    row.set(1, end + request_offset);
  });
}

}  // namespace cattn
