// SPDX-License-Identifier: Apache-2.0
// Host algorithm for compute_causal_conv1d_metadata.
//
// vLLM builds mlist with np.repeat and offsetlist with a Python loop that extends a list one
// range per request, then copies both into PAD-filled launch arrays. Every output here is a
// sequence of per-request runs (request i contributes nums_i entries), so each is written in one
// pass over the requests that stores its runs directly: O(B + tot) per output, no scratch
// memory, and the per-request counts are recomputed from query_start_loc_cpu rather than kept,
// so nothing is allocated.
#include "host/compute_causal_conv1d_metadata_host.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace cattn {
namespace {

// ceil(len / block_m) for len >= 0, vLLM's -(-len // block_m), without the len + block_m - 1
// that could overflow.
inline int64_t programs(int64_t len, int64_t block_m) {
  return len / block_m + (len % block_m != 0);
}

template <class T>
struct TypedStore {
  T* p;
  int64_t step;  // elements
  void set(int64_t i, int64_t v) const { p[i * step] = static_cast<T>(v); }
};

// Calls f with the fastest store that is valid for output `a`: typed stores need natural
// alignment, which DLPack does not promise, so misaligned tensors take the byte-wise writer.
template <class F>
void with_store(const TensorArg& a, F&& f) {
  const bool aligned = reinterpret_cast<uintptr_t>(a.data()) % a.elem_bytes() == 0;
  if (aligned && a.is_int64())
    f(TypedStore<int64_t>{reinterpret_cast<int64_t*>(a.data()), a.stride(0)});
  else if (aligned)
    f(TypedStore<int32_t>{reinterpret_cast<int32_t*>(a.data()), a.stride(0)});
  else
    f(writer1d(a));
}

// Calls f(i, pos, n) for every request i: its n programs occupy [pos, pos + n). Each entry of
// query_start_loc_cpu is read once (a request starts where the previous one ended), and every
// run is held within the `tot` programs the count pass found, so a caller that changes the
// mirror during the call gets wrong values, never a write past the checked sizes.
template <class F>
void for_each_run(const IndexReader& qsl, const CausalConv1dCounts& c, int64_t block_m, F&& f) {
  if (c.batch == 0) return;  // query_start_loc_cpu may be empty
  int64_t pos = 0, start = qsl[0];
  for (int64_t i = 0; i < c.batch; ++i) {
    const int64_t end = qsl[i + 1];
    int64_t len;
    if (__builtin_sub_overflow(end, start, &len) || len < 0) len = 0;
    const int64_t n = std::min(programs(len, block_m), c.tot - pos);
    f(i, pos, n);
    pos += n;
    start = end;
  }
}

enum class Run { RequestIndex, ChunkIndex };

// Writes request i's nums_i programs as a run (its index repeated, or 0..nums_i-1), then
// CATTN_PAD_SLOT_ID from tot up to `pad_to`.
void write_runs(const TensorArg& out, const IndexReader& qsl, const CausalConv1dCounts& c,
                int64_t block_m, Run kind, int64_t pad_to) {
  with_store(out, [&](auto s) {
    for_each_run(qsl, c, block_m, [&](int64_t i, int64_t pos, int64_t n) {
      if (kind == Run::RequestIndex)
        for (int64_t o = 0; o < n; ++o) s.set(pos + o, i);
      else
        for (int64_t o = 0; o < n; ++o) s.set(pos + o, o);
    });
    for (int64_t j = c.tot; j < pad_to; ++j) s.set(j, CATTN_PAD_SLOT_ID);
  });
}

}  // namespace

CausalConv1dCounts compute_causal_conv1d_metadata_count_host(const char* fn, const TensorArg& q,
                                                              int64_t block_m) {
  const IndexReader in = reader1d(q);
  CausalConv1dCounts c{std::max<int64_t>(q.numel() - 1, 0), 0, 0};
  for (int64_t i = 0; i < c.batch; ++i) {
    const int64_t a = in[i], b = in[i + 1];
    // vLLM gives 0 programs to a decrease smaller than block_m and crashes in np.repeat on a
    // larger one; any decrease is a malformed cumulative count, so it is rejected outright.
    if (b < a)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, q.name(), "decreases",
               "[" + std::to_string(i) + "] = " + std::to_string(a) + " > [" +
                   std::to_string(i + 1) + "] = " + std::to_string(b),
               "non-decreasing cumulative query lengths");
    int64_t len;
    if (__builtin_sub_overflow(b, a, &len))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, q.name(), "has a request length that overflows int64",
               "[" + std::to_string(i) + "] = " + std::to_string(a) + ", [" +
                   std::to_string(i + 1) + "] = " + std::to_string(b),
               "differences that fit int64");
    const int64_t n = programs(len, block_m);
    c.tot = checked_add(fn, "the number of programs", c.tot, n);
    c.max_num = std::max(c.max_num, n);
  }
  // The size query's capacity, 2 * max(1024, tot), must fit int64 too, so that it and the
  // compute call accept the same batches.
  if (c.tot > std::numeric_limits<int64_t>::max() / 2)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, q.name(), "needs too many programs",
             std::to_string(c.tot) + " programs",
             "at most 2^62 - 1 (the launch arrays' capacity, 2 * tot, must fit int64)");
  return c;
}

void compute_causal_conv1d_metadata_host(const TensorArg& q, int64_t block_m,
                                         const CausalConv1dCounts& c, const TensorArg& nums,
                                         const TensorArg& mlist, const TensorArg& offsetlist,
                                         const TensorArg& batch_ptr,
                                         const TensorArg& token_chunk_offset_ptr) {
  const IndexReader in = reader1d(q);
  if (nums.present())
    with_store(nums, [&](auto s) {
      for_each_run(in, c, block_m, [&](int64_t i, int64_t, int64_t n) { s.set(i, n); });
    });
  if (mlist.present()) write_runs(mlist, in, c, block_m, Run::RequestIndex, c.tot);
  if (offsetlist.present()) write_runs(offsetlist, in, c, block_m, Run::ChunkIndex, c.tot);
  if (batch_ptr.present())
    write_runs(batch_ptr, in, c, block_m, Run::RequestIndex, batch_ptr.numel());
  if (token_chunk_offset_ptr.present())
    write_runs(token_chunk_offset_ptr, in, c, block_m, Run::ChunkIndex,
               token_chunk_offset_ptr.numel());
}

}  // namespace cattn
