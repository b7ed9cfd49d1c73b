// SPDX-License-Identifier: Apache-2.0
// Host algorithm for get_pcp_query_restore_idx.
//
// vLLM builds the concatenation [heads of all requests, tails of all requests] of original token
// positions and argsorts it. Sorting is unnecessary: in sorted order request i's head tokens come
// first (they precede its tail tokens, and requests are in order), so with h_i = len_i / 2,
// H_i = sum_{j<i} h_j and T = sum h_j, the sorted position 2*H_i + o holds concatenation index
// H_i + o (head) and 2*H_i + h_i + o holds T + H_i + o (tail). One pass, no scratch memory.
#include "host/get_pcp_query_restore_idx_host.h"

#include <algorithm>

namespace cattn {

int64_t get_pcp_query_restore_idx_size_host(const char* fn, const TensorArg& cu) {
  if (cu.numel() == 0) return 0;
  const IndexReader in = reader1d(cu);
  int64_t half_total = 0, start = in[0];
  // Each entry is read once, so the lengths below telescope to last - first.
  for (int64_t i = 0; i + 1 < cu.numel(); ++i) {
    const int64_t end = in[i + 1];
    if (end < start)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, cu.name(), "decreases",
               "[" + std::to_string(i) + "] = " + std::to_string(start) + " > [" +
                   std::to_string(i + 1) + "] = " + std::to_string(end),
               "non-decreasing cumulative token counts");
    // The difference of two int64 values may exceed INT64_MAX (e.g. from INT64_MIN to 0);
    // unsigned arithmetic holds it exactly, since it lies in [0, 2^64).
    const uint64_t len = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
    if (len > 1 && len % 2 != 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, cu.name(),
               "has a request of odd length that PCP cannot split into halves",
               "length " + std::to_string(len) + " for request " + std::to_string(i),
               "an even length, or 1 for a decode request");
    // Cannot overflow: the halves sum to at most (last - first) / 2 < 2^63.
    half_total += static_cast<int64_t>(len / 2);
    start = end;
  }
  return checked_mul(fn, "restore index size", half_total, 2);
}

namespace {

// Calls f(prefix, h) for every request with h > 0 half-length tokens, prefix being the halves
// before it. Each entry of cu_num_tokens is read once (a request starts where the previous
// one ended), and the halves are held within the checked total, so a caller that changes the
// input during the call gets wrong indices, never a write past the index's checked size.
template <class F>
void for_each_request(const TensorArg& cu, int64_t total, F&& f) {
  if (cu.numel() == 0) return;
  const IndexReader in = reader1d(cu);
  int64_t prefix = 0, start = in[0];
  for (int64_t i = 0; i + 1 < cu.numel(); ++i) {
    const int64_t end = in[i + 1];
    const uint64_t len = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
    start = end;
    // A "length" of 2^63 or more is a decrease: a length-0 request.
    const int64_t h = len < (uint64_t{1} << 63) ? std::min<int64_t>(len / 2, total - prefix) : 0;
    if (h > 0) f(prefix, h);
    prefix += h;
  }
}

}  // namespace

void get_pcp_query_restore_idx_host(const TensorArg& cu, int64_t size, const TensorArg& out) {
  const int64_t total = size / 2;
  auto fill = [&](auto* dst, int64_t step) {
    for_each_request(cu, total, [&](int64_t prefix, int64_t h) {
      auto* head = dst + 2 * prefix * step;
      auto* tail = head + h * step;
      for (int64_t o = 0; o < h; ++o) {
        head[o * step] = prefix + o;
        tail[o * step] = total + prefix + o;
      }
    });
    for (int64_t i = size; i < out.numel(); ++i) dst[i * step] = -1;
  };
  // Unaligned host tensors are legal in DLPack; typed stores need natural alignment, so fall
  // back to the byte-wise writer then.
  const bool aligned = reinterpret_cast<uintptr_t>(out.data()) % out.elem_bytes() == 0;
  if (aligned && out.is_int64()) {
    fill(reinterpret_cast<int64_t*>(out.data()), out.stride(0));
  } else if (aligned) {
    fill(reinterpret_cast<int32_t*>(out.data()), out.stride(0));
  } else {
    const IndexWriter w = writer1d(out);
    for_each_request(cu, total, [&](int64_t prefix, int64_t h) {
      for (int64_t o = 0; o < h; ++o) {
        w.set(2 * prefix + o, prefix + o);
        w.set(2 * prefix + h + o, total + prefix + o);
      }
    });
    for (int64_t i = size; i < out.numel(); ++i) w.set(i, -1);
  }
}

}  // namespace cattn
