// SPDX-License-Identifier: Apache-2.0
// Host algorithm for make_local_attention_virtual_batches.
//
// vLLM splits every request into the attention chunks its query touches, with numpy over
// repeat/arange arrays. Per request i with query length q, sequence length s and chunk C:
//   q_first = min(C - (s - q) % C, q)          query tokens in the first (partial) chunk
//   last    = C + (s % -C)                      keys in the last chunk: s % C, or C when 0
//   blocks  = 1 + cdiv(q - q_first, C)          virtual batches of the request
// and virtual batch a of `blocks` (r = blocks - 1 - a counting from the end) has
//   query length  q_first (a == 0), else min(q - q_first - C * (a - 1), C)
//   key length    last (a == blocks - 1), else C
//   first key     s - (r * C + last), first page = first key // block_size.
// Here the same quantities are produced by two passes over the requests (count, then fill), so
// the work is O(B + V) and nothing is allocated beyond the plan's own arrays, whose size the
// count fixes before anything is allocated. The fill pass validates what it reads afresh and
// writes only within the counted arrays, so a caller that changes the mirrors during the call
// gets an error, never a write out of bounds.
//
// Where vLLM differs: a zero-length request with s == 0 has last = C and a first key of -C, so
// its pages start at -C / block_size and numpy/torch indexing wraps them around to the end of
// the block-table row. Here they start at column 0; nothing else changes.
#include "host/make_local_attention_virtual_batches_host.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace cattn {
namespace {

struct RequestSplit {
  int64_t q_first;  // query tokens in the first chunk
  int64_t last;     // keys in the last chunk
  int64_t blocks;   // virtual batches
};

// q and s are validated: 0 <= q <= s.
RequestSplit split_request(int64_t chunk, int64_t s, int64_t q) {
  RequestSplit r;
  r.q_first = std::min(chunk - (s - q) % chunk, q);
  r.last = s % chunk == 0 ? chunk : s % chunk;  // numpy's C + (s % -C) for s >= 0
  const int64_t rest = q - r.q_first;
  r.blocks = 1 + rest / chunk + (rest % chunk != 0);
  return r;
}

}  // namespace

namespace {

std::string entry(int64_t i, int64_t v) {
  return "[" + std::to_string(i) + "] = " + std::to_string(v);
}

// Walks the requests once, reading each element of the mirrors once (a request's start is the
// previous request's end, carried), validates each request and calls emit(i, q, s, split).
// Returns the number of virtual batches.
template <class Emit>
int64_t walk_requests(const char* fn, int64_t chunk, const TensorArg& qsl,
                      const TensorArg& seq_lens, Emit&& emit) {
  const IndexReader starts = reader1d(qsl);
  const IndexReader lens = reader1d(seq_lens);
  const int64_t batch = seq_lens.numel();
  int64_t virtual_batches = 0, total_q = 0, a = starts[0];
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t b = starts[i + 1];
    if (b < a)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "decreases",
               entry(i, a) + " > " + entry(i + 1, b), "non-decreasing query start locations");
    int64_t q;
    if (__builtin_sub_overflow(b, a, &q))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "has a query length that overflows int64",
               entry(i, a) + ", " + entry(i + 1, b), "a difference within int64");
    total_q = checked_add(fn, "the total query length", total_q, q);
    const int64_t s = lens[i];
    if (s < 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(), "has a negative length", entry(i, s),
               ">= 0");
    if (s < q)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, seq_lens.name(), "is shorter than the query",
               entry(i, s) + " with query length " + std::to_string(q),
               "a sequence length >= its query length");
    const RequestSplit r = split_request(chunk, s, q);
    virtual_batches = checked_add(fn, "the number of virtual batches", virtual_batches, r.blocks);
    emit(i, q, s, r);
    a = b;
  }
  return virtual_batches;
}

// How much the registry's node for one handle and the allocator's rounding may add.
constexpr int64_t kHandleOverheadBytes = 256;

}  // namespace

int64_t count_local_attention_host(const char* fn, int64_t chunk, const TensorArg& qsl,
                                   const TensorArg& seq_lens) {
  return walk_requests(fn, chunk, qsl, seq_lens, [](int64_t, int64_t, int64_t, RequestSplit) {});
}

int64_t local_attention_plan_bytes(const char* fn, int64_t virtual_batches) {
  // cu_seqlens_q holds V + 1 entries, the four other arrays V each.
  const int64_t entries = checked_add(
      fn, "the plan's entries", checked_mul(fn, "the plan's entries", virtual_batches, 5), 1);
  return checked_add(fn, "the plan's bytes",
                     checked_mul(fn, "the plan's bytes", entries, int64_t{sizeof(int64_t)}),
                     int64_t{sizeof(LocalAttentionPlan)} + kHandleOverheadBytes);
}

void plan_local_attention_host(const char* fn, int64_t chunk, int64_t block_size,
                               const TensorArg& qsl, const TensorArg& seq_lens,
                               int64_t virtual_batches, LocalAttentionPlan& plan) {
  const auto n = static_cast<size_t>(virtual_batches);
  plan.cu_seqlens_q.resize(n + 1);
  plan.seqlens_k.resize(n);
  plan.num_computed.resize(n);
  plan.batch_index.resize(n);
  plan.block_start.resize(n);
  plan.batch = seq_lens.numel();
  plan.virtual_batches = virtual_batches;
  plan.pages = chunk / block_size;

  auto changed = [&] {
    fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "changed while the call read it",
             "a different number of virtual batches on a second reading",
             std::to_string(virtual_batches) + " (mirrors no other thread writes during the call)");
  };
  int64_t v = 0, running = 0;
  plan.cu_seqlens_q[0] = 0;
  const int64_t again = walk_requests(fn, chunk, qsl, seq_lens, [&](int64_t i, int64_t q, int64_t s,
                                                                   const RequestSplit& r) {
    if (r.blocks > virtual_batches - v) changed();
    for (int64_t a = 0; a < r.blocks; ++a, ++v) {
      const int64_t q_local = a == 0 ? r.q_first : std::min(q - r.q_first - chunk * (a - 1), chunk);
      const int64_t k_local = a == r.blocks - 1 ? r.last : chunk;
      const int64_t first_key = s - ((r.blocks - 1 - a) * chunk + r.last);
      running += q_local;
      const auto at = static_cast<size_t>(v);
      plan.cu_seqlens_q[at + 1] = running;
      plan.seqlens_k[at] = k_local;
      plan.num_computed[at] = k_local - q_local;
      plan.batch_index[at] = i;
      // first_key < 0 only for s == 0 (see the top of the file): clamp instead of wrapping.
      plan.block_start[at] = first_key < 0 ? 0 : first_key / block_size;
      plan.max_query_len = std::max(plan.max_query_len, q_local);
      plan.max_seq_len = std::max(plan.max_seq_len, k_local);
      plan.max_computed = std::max(plan.max_computed, k_local - q_local);
    }
  });
  if (again != virtual_batches) changed();
}

void write_local_attention_metadata_host(const LocalAttentionPlan& plan, const TensorArg& qsl_cpu,
                                         const TensorArg& seq_lens_cpu,
                                         const TensorArg& computed_cpu, const TensorArg& qsl,
                                         const TensorArg& seq_lens) {
  auto write = [](const TensorArg& t, const std::vector<int64_t>& values) {
    if (!t.present()) return;
    const IndexWriter w = writer1d(t);
    for (size_t i = 0; i < values.size(); ++i) w.set(static_cast<int64_t>(i), values[i]);
  };
  write(qsl_cpu, plan.cu_seqlens_q);
  write(qsl, plan.cu_seqlens_q);
  write(seq_lens_cpu, plan.seqlens_k);
  write(seq_lens, plan.seqlens_k);
  write(computed_cpu, plan.num_computed);
}

namespace {

// Per virtual batch the gathered row is a run of the source row, columns [start, cols), cut
// to P entries, then (vLLM's clip to cols - 1) the last column repeated. The run is one memcpy
// when both rows are contiguous, which is the common case and the bulk of the output bytes.
template <int kBytes>
void gather_rows(const LocalAttentionPlan& plan, const TensorArg& table, const TensorArg& out) {
  const int64_t src_row = table.stride(0) * kBytes, src_col = table.stride(1) * kBytes;
  const int64_t dst_row = out.stride(0) * kBytes, dst_col = out.stride(1) * kBytes;
  const bool contiguous = table.stride(1) == 1 && out.stride(1) == 1;
  for (int64_t v = 0; v < plan.virtual_batches; ++v) {
    const char* src = table.data() + plan.batch_index[v] * src_row;
    char* dst = out.data() + v * dst_row;
    const int64_t start = plan.block_start[v];
    const int64_t direct = std::max<int64_t>(0, std::min(plan.cols - start, plan.pages));
    // A first page at or past the row's end (a long sequence over a narrow table) reads only
    // the clipped last column below; its offset is never formed, since start * kBytes can
    // overflow for such pages.
    if (direct > 0 && contiguous) {
      std::memcpy(dst, src + start * kBytes, static_cast<size_t>(direct * kBytes));
    } else {
      for (int64_t p = 0; p < direct; ++p)
        std::memcpy(dst + p * dst_col, src + (start + p) * src_col, kBytes);
    }
    if (direct == plan.pages) continue;
    char last[kBytes];
    std::memcpy(last, src + (plan.cols - 1) * src_col, kBytes);
    for (int64_t p = direct; p < plan.pages; ++p) std::memcpy(dst + p * dst_col, last, kBytes);
  }
}

}  // namespace

void gather_local_block_table_host(const LocalAttentionPlan& plan, const TensorArg& table,
                                   const TensorArg& out) {
  // Byte copies of the table's own dtype (the output has the same one); no alignment needed.
  if (table.elem_bytes() == 8)
    gather_rows<8>(plan, table, out);
  else
    gather_rows<4>(plan, table, out);
}

}  // namespace cattn
