// SPDX-License-Identifier: Apache-2.0
// Host algorithms of split_decodes_and_prefills and split_decodes_prefills_and_extends.
//
// Both find a split point in one pass over query_start_loc: each entry is read once, the
// query length of request i being the difference of two neighbours, computed in the tensor's
// own width with wrap-around (vLLM subtracts int32 tensors). The token counts vLLM forms from
// Python ints are exact here too, and an int64 overflow, where vLLM's Python int would grow,
// is an error instead of a wrong value.
#include "host/split_decodes_and_prefills_host.h"

#include <cstdint>
#include <string>

namespace cattn {
namespace {

// a - b in the width of the index tensor, wrapping as torch's integer arithmetic does.
int64_t wrapping_sub(int64_t a, int64_t b, bool i64) {
  if (i64) return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

int64_t sub_or_fail(const char* fn, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_actual_tokens",
             "gives a token count that overflows int64",
             std::to_string(a) + " - " + std::to_string(b), "a count within int64");
  return r;
}

[[noreturn]] void fail_empty_batch(const char* fn) {
  fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_reqs",
           "is 0 while max_query_len exceeds decode_threshold (vLLM raises on the empty batch)",
           "0", ">= 1");
}

// A compact, aligned query_start_loc is read through a typed pointer (the common case, and
// what the loops are fast for); any other layout through IndexReader.
template <class T>
struct Compact {
  const T* p;
  int64_t operator[](int64_t i) const { return p[i]; }
};

template <class F>
void with_reader(const SplitBatch& b, F&& body) {
  const auto at = reinterpret_cast<uintptr_t>(b.qsl.p);
  if (b.qsl_i64 && b.qsl.step == 8 && at % alignof(int64_t) == 0)
    return body(Compact<int64_t>{reinterpret_cast<const int64_t*>(b.qsl.p)});
  if (!b.qsl_i64 && b.qsl.step == 4 && at % alignof(int32_t) == 0)
    return body(Compact<int32_t>{reinterpret_cast<const int32_t*>(b.qsl.p)});
  body(b.qsl);
}

}  // namespace

void derive_unset_split_counts(SplitBatch& b) {
  with_reader(b, [&](const auto& q) {
    if (b.num_tokens == CATTN_FROM_QUERY_START_LOC) b.num_tokens = q[b.num_reqs];
    if (b.max_query_len == CATTN_FROM_QUERY_START_LOC) {
      int64_t longest = 0;
      for (int64_t i = 0; i < b.num_reqs; ++i) {
        const int64_t len = wrapping_sub(q[i + 1], q[i], b.qsl_i64);
        if (i == 0 || len > longest) longest = len;
      }
      b.max_query_len = longest;
    }
  });
}

void split_decodes_and_prefills_host(const char* fn, const SplitBatch& b, bool require_uniform,
                                     bool treat_short_extends_as_decodes,
                                     const FlagReader& is_prefilling, int64_t out[4]) {
  const int64_t B = b.num_reqs, T = b.num_tokens, thr = b.threshold;
  auto set = [&](int64_t d, int64_t p, int64_t dt, int64_t pt) {
    out[0] = d, out[1] = p, out[2] = dt, out[3] = pt;
  };
  if (b.max_query_len <= thr && (!require_uniform || thr <= 1) &&
      treat_short_extends_as_decodes)
    return set(B, 0, T, 0);
  if (B == 0) fail_empty_batch(fn);
  int64_t prev = b.qsl[0];
  const int64_t first = b.qsl[1];
  const int64_t q0 = wrapping_sub(first, prev, b.qsl_i64);
  if (q0 > thr) return set(0, B, 0, T);
  if (!treat_short_extends_as_decodes && is_prefilling.p == nullptr)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->is_prefilling_cpu",
             "is NULL while treat_short_extends_as_decodes is 0 (vLLM asserts)", "NULL",
             "a [num_reqs] tensor");
  // One pass: the first prefill, and (require_uniform) whether every row is q[0] or padding;
  // it stops once nothing later can change the result.
  int64_t f = -1, f_start = 0;
  bool uniform_or_padding = true;
  const bool need_uniform = require_uniform && treat_short_extends_as_decodes;
  with_reader(b, [&](const auto& qsl) {
    for (int64_t i = 0; i < B; ++i) {
      const int64_t next = qsl[i + 1];
      const int64_t q = wrapping_sub(next, prev, b.qsl_i64);
      bool pre = require_uniform ? q != q0 : q > thr;
      if (require_uniform && q != q0 && q != 0) uniform_or_padding = false;
      if (!treat_short_extends_as_decodes) pre = pre || is_prefilling[i];
      if (pre && f < 0) {
        f = i, f_start = prev;
        if (!need_uniform || !uniform_or_padding) break;
      } else if (need_uniform && f >= 0 && !uniform_or_padding) {
        break;
      }
      prev = next;
    }
  });
  if (require_uniform && treat_short_extends_as_decodes && uniform_or_padding)
    return set(B, 0, T, 0);
  if (f < 0) return set(B, 0, T, 0);
  set(f, B - f, f_start, sub_or_fail(fn, T, f_start));
}

void split_decodes_prefills_and_extends_host(const char* fn, const SplitBatch& b,
                                             const IndexReader& upper_bound,
                                             bool upper_bound_present, int64_t out[6]) {
  const int64_t B = b.num_reqs, T = b.num_tokens, thr = b.threshold;
  auto set = [&](int64_t d, int64_t e, int64_t p, int64_t dt, int64_t et, int64_t pt) {
    out[0] = d, out[1] = e, out[2] = p, out[3] = dt, out[4] = et, out[5] = pt;
  };
  if (b.max_query_len <= thr) return set(B, 0, 0, T, 0, 0);
  if (!upper_bound_present)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->seq_lens_cpu_upper_bound",
             "is NULL while max_query_len exceeds decode_threshold (vLLM asserts)", "NULL",
             "a [num_reqs] tensor");
  if (B == 0) fail_empty_batch(fn);
  // e: the first prefill-or-extend, p: the first prefill (no context); -1 while none.
  int64_t e = -1, p = -1, e_start = 0, p_start = 0;
  int64_t prev = b.qsl[0];
  const int64_t start0 = prev;
  with_reader(b, [&](const auto& qsl) {
    for (int64_t i = 0; i < B && p < 0; ++i) {  // p found: e is found too (p implies e)
      const int64_t next = qsl[i + 1];
      const int64_t q = wrapping_sub(next, prev, b.qsl_i64);
      if (q > thr) {
        if (e < 0) e = i, e_start = prev;
        if (upper_bound[i] == q) p = i, p_start = prev;
      }
      prev = next;
    }
  });
  // vLLM's argmax of an all-False mask is 0: with no extend the decode count is 0 and the
  // decode tokens are query_start_loc[0].
  if (e < 0) return set(0, 0, 0, start0, 0, 0);
  const int64_t rest = sub_or_fail(fn, T, e_start);
  if (p < 0) return set(e, B - e, 0, e_start, rest, 0);
  // vLLM forms these two as 0-d tensors of query_start_loc's dtype.
  int64_t prefill_tokens, extend_tokens;
  if (b.qsl_i64) {
    prefill_tokens = sub_or_fail(fn, T, p_start);
    extend_tokens = sub_or_fail(fn, rest, prefill_tokens);
  } else {
    prefill_tokens = wrapping_sub(T, p_start, false);
    extend_tokens = wrapping_sub(rest, prefill_tokens, false);
  }
  set(e, p - e, B - p, e_start, extend_tokens, prefill_tokens);
}

}  // namespace cattn
