// SPDX-License-Identifier: Apache-2.0
// Host algorithm for fused_pcp_qkv_select.
//
// vLLM's Triton kernel gives each (request, seq block s in [0, 2W)) pair one program: s < 2
// copies a Q half, and every s copies K/V block s (rows W*start + s*half, half rows long) to the
// head outputs when s <= r and to the tail outputs when s < 2W - r. The destinations of blocks
// 0..r (head) and 0..2W-r-1 (tail) are consecutive, as are their sources, so per request each
// output receives one contiguous run of rows: Q halves of `half` rows, k/v_head the first
// (r+1)*half rows of the request's K/V segment, k/v_tail its first (2W-r)*half rows. A run is
// one memcpy when the source is compact, one per token when only heads are packed, and one per
// (token, head) otherwise. Element width never matters: rows are moved as bytes. All offsets
// are 64-bit byte counts derived from sizes the entry point bounded.
#include "host/fused_pcp_qkv_select_host.h"

#include <algorithm>
#include <cstring>

namespace cattn {
namespace {

// Rows of a [N, H, D] input with a unit last-dim stride, in bytes.
struct RowSource {
  const char* base;
  int64_t token_stride;  // bytes between tokens
  int64_t head_stride;   // bytes between heads
  int64_t heads;
  int64_t head_bytes;    // D * element size
};

RowSource rows_of(const TensorArg& t) {
  // An empty tensor's sizes are unbounded ([0, 0, INT64_MAX] is valid): it has no rows to copy.
  if (t.numel() == 0) return {t.data(), 0, 0, 0, 0};
  const int64_t e = t.elem_bytes();
  return {t.data(), t.stride(0) * e, t.stride(1) * e, t.size(1), t.size(2) * e};
}

// Copies `count` tokens starting at source token `first` to a compact destination.
void copy_rows(char* dst, const RowSource& src, int64_t first, int64_t count) {
  const int64_t token_bytes = src.heads * src.head_bytes;
  if (count <= 0 || token_bytes == 0) return;
  const char* s = src.base + first * src.token_stride;
  const bool heads_packed = src.heads == 1 || src.head_stride == src.head_bytes;
  if (heads_packed && (count == 1 || src.token_stride == token_bytes)) {
    std::memcpy(dst, s, static_cast<size_t>(count * token_bytes));
  } else if (heads_packed) {
    for (int64_t t = 0; t < count; ++t)
      std::memcpy(dst + t * token_bytes, s + t * src.token_stride,
                  static_cast<size_t>(token_bytes));
  } else {
    for (int64_t t = 0; t < count; ++t)
      for (int64_t h = 0; h < src.heads; ++h)
        std::memcpy(dst + t * token_bytes + h * src.head_bytes,
                    s + t * src.token_stride + h * src.head_stride,
                    static_cast<size_t>(src.head_bytes));
  }
}

// Address of token `row` in a compact [rows, H, D] output.
char* out_row(const TensorArg& out, int64_t row) {
  if (out.numel() == 0) return out.data();  // nothing is written to it
  return out.data() + row * out.size(1) * out.size(2) * out.elem_bytes();
}

}  // namespace

int64_t fused_pcp_qkv_select_check_host(const char* fn, const TensorArg& qsl, const TensorArg& q,
                                        const TensorArg& k, const TensorArg& v,
                                        int64_t world_size) {
  const IndexReader in = reader1d(qsl);
  const int64_t batch = qsl.numel() - 1;
  auto at = [&](int64_t i) { return "[" + std::to_string(i) + "] = " + std::to_string(in[i]); };
  for (int64_t i = 0; i <= batch; ++i) {
    const int64_t x = in[i];
    if (x < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "has a negative entry", at(i), ">= 0");
    if (x % 2 != 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(),
               "has an odd entry, so a request cannot be split into halves", at(i),
               "even query start locations (even request lengths)");
    if (i > 0 && x < in[i - 1])
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "decreases", at(i) + " < " + at(i - 1),
               "non-decreasing query start locations");
  }
  const int64_t end = in[batch];
  if (end > q.size(0))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "ends past the queries",
             "[" + std::to_string(batch) + "] = " + std::to_string(end),
             "<= q.shape[0] = " + std::to_string(q.size(0)));
  const int64_t kv_rows = checked_mul(fn, "pcp_world_size * query_start_loc[B]", world_size, end);
  for (const TensorArg* t : {&k, &v})
    if (t->size(0) < kv_rows)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, t->name(), "has too few rows for the batch",
               t->shape_string(),
               "at least pcp_world_size * query_start_loc[B] = " + std::to_string(kv_rows));
  return end;
}

void fused_pcp_qkv_select_host(const TensorArg& q, const TensorArg& k, const TensorArg& v,
                               const TensorArg& qsl, int64_t end, int64_t world_size,
                               int64_t rank, const TensorArg& q_head, const TensorArg& k_head,
                               const TensorArg& v_head, const TensorArg& q_tail,
                               const TensorArg& k_tail, const TensorArg& v_tail) {
  const IndexReader in = reader1d(qsl);
  const RowSource qs = rows_of(q), ks = rows_of(k), vs = rows_of(v);
  const int64_t head_blocks = rank + 1;
  // 2W - r fits whenever a request has rows: W * query_start_loc[B] was checked, so a world
  // past 2^62 leaves every request empty (the size query accepts such a world exactly).
  int64_t tail_blocks;
  if (__builtin_add_overflow(world_size, world_size - rank, &tail_blocks)) return;
  // Every entry is read once here (a request starts where the previous one ended) and held
  // within [previous entry, end], the bounds the check established: should the caller change
  // query_start_loc during the call, rows come out wrong but never out of bounds (the sizes
  // below then stay within what [0, end] allows, which the output shapes cover).
  int64_t next = std::clamp<int64_t>(in[0], 0, end);
  for (int64_t i = 0; i + 1 < qsl.numel(); ++i) {
    const int64_t start = next;
    next = std::clamp<int64_t>(in[i + 1], start, end);
    const int64_t half = (next - start) / 2;
    if (half == 0) continue;
    const int64_t dst = start / 2;
    copy_rows(out_row(q_head, dst), qs, start, half);
    copy_rows(out_row(q_tail, dst), qs, start + half, half);
    const int64_t kv_src = world_size * start;
    copy_rows(out_row(k_head, dst * head_blocks), ks, kv_src, head_blocks * half);
    copy_rows(out_row(v_head, dst * head_blocks), vs, kv_src, head_blocks * half);
    copy_rows(out_row(k_tail, dst * tail_blocks), ks, kv_src, tail_blocks * half);
    copy_rows(out_row(v_tail, dst * tail_blocks), vs, kv_src, tail_blocks * half);
  }
}

}  // namespace cattn
