// SPDX-License-Identifier: Apache-2.0
// Host algorithm for extend_all_queries_by_n: element-wise shifts of query_start_loc (+ i * n)
// and seq_lens (+ n) and of their host mirrors.
//
// The main tensor and its mirror are walked in one loop rather than two so that in-place calls
// stay correct even when the caller passes the same memory as both (a host-only batch often
// uses one tensor for query_start_loc and query_start_loc_cpu): both inputs are read at index
// i before either output is written there, so no element is shifted twice.
#include "host/extend_all_queries_by_n_host.h"

#include <climits>
#include <string>

namespace cattn {
namespace {

int64_t shifted(const char* fn, const TensorArg& in, int64_t value, int64_t i, int64_t add,
                int64_t add_per_index) {
  int64_t delta, out;
  if (__builtin_mul_overflow(i, add_per_index, &delta) ||
      __builtin_add_overflow(delta, add, &delta) || __builtin_add_overflow(value, delta, &out))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, in.name(), "gives a result that overflows int64",
             "[" + std::to_string(i) + "] = " + std::to_string(value),
             "a value that stays within int64 after the extension");
  return out;
}

}  // namespace

void check_extended_pair_host(const char* fn, const ExtendedPair& p) {
  const IndexReader in = reader1d(p.in);
  for (int64_t i = 0; i < p.in.numel(); ++i)
    require_fits(fn, p.out, shifted(fn, p.in, in[i], i, p.add, p.add_per_index));
  if (!p.mirror_in.present()) return;
  const IndexReader mirror = reader1d(p.mirror_in);
  for (int64_t i = 0; i < p.mirror_in.numel(); ++i)
    require_fits(fn, p.mirror_out, shifted(fn, p.mirror_in, mirror[i], i, p.add, p.add_per_index));
}

void check_mirror_host(const char* fn, const TensorArg& main, const TensorArg& mirror) {
  if (!mirror.present() || same_view(main, mirror)) return;
  const IndexReader a = reader1d(main), b = reader1d(mirror);
  for (int64_t i = 0; i < main.numel(); ++i)
    if (a[i] != b[i])
      fail_arg(CATTN_INVALID_ARGUMENT, fn, mirror.name(), "disagrees with its device tensor",
               "[" + std::to_string(i) + "] = " + std::to_string(b[i]) + " against " +
                   std::to_string(a[i]) + " in " + main.name(),
               "a mirror holding the same values");
}

namespace {
// The checked value plus delta; wraps instead of overflowing should the caller have changed
// the value since the check (a race whose values are unspecified, but never undefined).
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
}  // namespace

void write_extended_pair_host(const ExtendedPair& p) {
  const IndexReader in = reader1d(p.in);
  const IndexWriter out = writer1d(p.out);
  const int64_t n = p.in.numel();
  if (!p.mirror_in.present()) {
    for (int64_t i = 0; i < n; ++i) out.set(i, wrapping_add(in[i], p.add + i * p.add_per_index));
    return;
  }
  const IndexReader mirror_in = reader1d(p.mirror_in);
  const IndexWriter mirror_out = writer1d(p.mirror_out);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t delta = p.add + i * p.add_per_index;
    const int64_t a = in[i], b = mirror_in[i];
    out.set(i, wrapping_add(a, delta));
    mirror_out.set(i, wrapping_add(b, delta));
  }
}

void check_extended_dcp_lens_host(const char* fn, const TensorArg& seq_lens, int64_t n) {
  const IndexReader in = reader1d(seq_lens);
  for (int64_t b = 0; b < seq_lens.numel(); ++b) {
    int64_t s;
    const bool overflows = __builtin_add_overflow(in[b], n, &s);
    if (!overflows && s < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(), "gives a negative extended length",
               "[" + std::to_string(b) + "] = " + std::to_string(in[b]) + " + " + std::to_string(n),
               ">= 0");
    if (overflows || s > INT32_MAX)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(),
               "gives an extended length outside [0, INT32_MAX]",
               "[" + std::to_string(b) + "] = " + std::to_string(in[b]) + " + " + std::to_string(n),
               "0..2147483647 (the DCP lengths are computed in int32, as in vLLM)");
  }
}

}  // namespace cattn
