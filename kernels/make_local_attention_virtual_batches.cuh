// SPDX-License-Identifier: Apache-2.0
// Local-attention virtual batches computed on the device from the device query_start_loc and
// seq_lens, so that a captured graph computes them afresh on every replay. Request i with query
// length q and sequence length s (s < q, which the host path refuses, is taken as s = q) is cut
// at attention-chunk boundaries as on the host: q_first = min(C - (s - q) % C, q) query tokens
// in the first chunk, `last` keys in the last one (s % C, or C), 1 + cdiv(q - q_first, C)
// virtual batches. Each block of the slice but the last owns a range of virtual batches: it
// counts the requests' virtual batches (segment_walk.cuh) up to the end of its range, then
// writes the range's vectors and block-table rows, a tile at a time (a thread per virtual batch
// decodes its request once, then a thread per table element copies); entries past the batch's V
// are padding (cu_seqlens_q repeats the total, seqlens_k and num_computed are 0, block-table
// rows are 0), and a batch of more virtual batches than the outputs hold writes the first ones
// and reports its V. The last block reduces the counts.
#pragma once

#include <cub/block/block_reduce.cuh>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/make_local_attention_virtual_batches.h"
#include "kernels/segment_walk.cuh"

namespace cattn {
namespace kernels {

// A request's split (plain data: it is staged in shared memory).
struct LocalSplit {
  int64_t q_start, q, s, q_first, last, blocks;
};

__device__ __forceinline__ int64_t mod_nonneg(int64_t a, int64_t b) {
  return a - div_nonneg(a, b) * b;
}

__device__ __forceinline__ LocalSplit local_attention_split(const LocalAttentionCapturableParams& p,
                                                            int64_t i) {
  LocalSplit r;
  const int64_t c = p.chunk;
  r.q_start = load_index(p.query_start_loc, i);
  const int64_t q = load_index(p.query_start_loc, i + 1) - r.q_start;
  r.q = q > 0 ? q : 0;
  const int64_t s = load_index(p.seq_lens, i);
  r.s = s > r.q ? s : r.q;
  const int64_t first = c - mod_nonneg(r.s - r.q, c);
  r.q_first = first < r.q ? first : r.q;
  const int64_t tail = mod_nonneg(r.s, c);
  r.last = tail == 0 ? c : tail;
  const int64_t rest = r.q - r.q_first;
  r.blocks = rest > 0 ? div_nonneg(rest - 1, c) + 2 : 1;
  return r;
}

template <int kThreads>
struct LocalAttentionShared {
  SegmentScratch<kThreads> walk;
  int64_t row_source[kThreads];  // a tile's block-table rows: the request each comes from
  int64_t row_start[kThreads];   // and its first page
};

// The counts {V, max_query_len, max_seq_len} over every request, and cu_seqlens_q[0].
template <int kThreads>
__device__ void local_attention_counts(const LocalAttentionCapturableParams& p,
                                       LocalAttentionShared<kThreads>& sh) {
  const int64_t reqs = p.seq_lens.size[0], c = p.chunk;
  int64_t v = 0, max_q = 0, max_k = 0;
  batched_for<4>(threadIdx.x, reqs, kThreads,
                 [&](int64_t i) { return local_attention_split(p, i); },
                 [&](int64_t, const LocalSplit& r) {
                   const int64_t rest = r.q - r.q_first;
                   const int64_t mq =
                       r.blocks == 1 ? r.q_first
                                     : (r.blocks >= 3 ? c : (r.q_first > rest ? r.q_first : rest));
                   const int64_t mk = r.blocks > 1 ? c : r.last;
                   v += r.blocks;
                   max_q = mq > max_q ? mq : max_q;
                   max_k = mk > max_k ? mk : max_k;
                 });
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  const int64_t sv = Reduce(sh.walk.reduce).Sum(v);
  __syncthreads();
  const int64_t bq = Reduce(sh.walk.reduce).Reduce(max_q, MaxOp());
  __syncthreads();
  const int64_t bk = Reduce(sh.walk.reduce).Reduce(max_k, MaxOp());
  __syncthreads();
  if (threadIdx.x == 0) {
    store_count(p.counts, 0, sv);
    store_count(p.counts, 1, bq);
    store_count(p.counts, 2, bk);
    store_index(p.cu_seqlens_q, 0, 0);
  }
}

// Copies rows [t0, t0 + rows) of the gathered block table (at most kThreads, a tile):
// out[t0 + r, j] = block_table[source[r], min(start[r] + j, cols - 1)], or 0 when source is
// null (padding). A warp copies a segment of 32 * kUnroll columns of one row at a time: the
// row's base addresses are formed once per segment, each lane's kUnroll loads are in flight
// together, and an element costs a handful of instructions. Col is the column arithmetic's
// type: 32 bits whenever the widths and column strides allow it. T is both tables' element
// type (the host checks they match).
template <class T, class Col, int kThreads>
__device__ __forceinline__ void copy_table_rows_as(const LocalAttentionCapturableParams& p,
                                                   const int64_t* source, const int64_t* start,
                                                   int64_t t0, int64_t rows) {
  constexpr int kUnroll = 8, kSegment = 32 * kUnroll, kWarps = kThreads / 32;
  const Col pages = static_cast<Col>(p.pages), last = static_cast<Col>(p.cols - 1);
  const Col bs1 = static_cast<Col>(p.block_table.step[1]);
  const Col os1 = static_cast<Col>(p.out_table.step[1]);
  const int64_t segments = div_nonneg(p.pages + (kSegment - 1), kSegment);
  const int64_t units = rows * segments;
  const int lane = threadIdx.x & 31;
  for (int64_t u = threadIdx.x >> 5; u < units; u += kWarps) {
    const int64_t r = div_nonneg(u, segments);
    const Col j0 = static_cast<Col>((u - r * segments) * kSegment) + lane;
    T* dst = static_cast<T*>(p.out_table.data) + (t0 + r) * p.out_table.step[0];
    const T* src = source == nullptr ? nullptr
                   : static_cast<const T*>(p.block_table.data) + source[r] * p.block_table.step[0];
    const Col first = static_cast<Col>(start == nullptr || start[r] > p.cols - 1 ? p.cols - 1
                                                                                  : start[r]);
    T v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const Col j = j0 + 32 * k, col = first + j < last ? first + j : last;
      v[k] = src != nullptr && j < pages ? src[col * bs1] : T{0};
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const Col j = j0 + 32 * k;
      if (j < pages) dst[j * os1] = v[k];
    }
  }
}

// Shifts the window of four words that starts `o` (1-3) words into a and runs on into b.
__device__ __forceinline__ uint4 words_from(const uint4& a, const uint4& b, int o) {
  return o == 1 ? make_uint4(a.y, a.z, a.w, b.x)
                : (o == 2 ? make_uint4(a.z, a.w, b.x, b.y) : make_uint4(a.w, b.x, b.y, b.z));
}

// copy_table_rows_as for 4-byte tables whose columns are adjacent and whose rows start 16-byte
// aligned (the layout engines allocate): a lane moves four columns with one 16-byte load and
// one 16-byte store, a warp 128 * kVectors columns of one row. A row's window starts `first`
// columns in, so unless first is a multiple of four a lane's four columns straddle two source
// vectors; the upper one is the next lane's, passed by a shuffle, so every source vector is
// loaded once (the warp's last lane loads its own). Columns that would be capped at cols - 1
// or that end past `pages` go element by element, as in copy_table_rows_as.
template <int kThreads, int kVectors>
__device__ __forceinline__ void copy_table_rows_vec4(const LocalAttentionCapturableParams& p,
                                                     const int64_t* source, const int64_t* start,
                                                     int64_t t0, int64_t rows) {
  constexpr int kSegment = 128 * kVectors, kWarps = kThreads / 32;
  const int pages = static_cast<int>(p.pages), last = static_cast<int>(p.cols - 1);
  const int64_t segments = div_nonneg(p.pages + (kSegment - 1), kSegment);
  const int64_t units = rows * segments;
  const int lane = threadIdx.x & 31;
  for (int64_t u = threadIdx.x >> 5; u < units; u += kWarps) {
    const int64_t r = div_nonneg(u, segments);
    const int j0 = static_cast<int>(u - r * segments) * kSegment + 4 * lane;
    int32_t* dst = static_cast<int32_t*>(p.out_table.data) + (t0 + r) * p.out_table.step[0];
    const int32_t* src =
        static_cast<const int32_t*>(p.block_table.data) + source[r] * p.block_table.step[0];
    const int first = start[r] > last ? last : static_cast<int>(start[r]);
    const int o = first & 3;  // the same for every lane of the warp
    const uint4* vec = reinterpret_cast<const uint4*>(src) + ((first + j0) >> 2);
    uint4 a[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const int e = first + j0 + 128 * k;
      a[k] = (e & ~3) + 3 <= last ? vec[32 * k] : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const int j = j0 + 128 * k, e = first + j;
      // Whole vectors only, and none whose source columns would be capped (with o > 0, the
      // next source vector must lie within the row too).
      const bool whole = j + 4 <= pages && (o == 0 ? e + 3 <= last : (e & ~3) + 7 <= last);
      uint4 w = a[k];
      if (o != 0) {
        uint4 b;
        b.x = __shfl_down_sync(0xffffffffu, a[k].x, 1);
        b.y = __shfl_down_sync(0xffffffffu, a[k].y, 1);
        b.z = __shfl_down_sync(0xffffffffu, a[k].z, 1);
        b.w = __shfl_down_sync(0xffffffffu, a[k].w, 1);
        if (lane == 31 && whole) b = vec[32 * k + 1];
        w = words_from(a[k], b, o);
      }
      if (whole) {
        *reinterpret_cast<uint4*>(dst + j) = w;
      } else {
        for (int i = 0; i < 4 && j + i < pages; ++i)
          dst[j + i] = src[e + i < last ? e + i : last];
      }
    }
  }
}

// Whether copy_table_rows_vec4 may take the tables: 4-byte elements, unit column strides, and
// every row's first element 16-byte aligned.
__device__ __forceinline__ bool table_rows_vec4(const LocalAttentionCapturableParams& p) {
  auto rows_aligned = [](const void* data, int64_t row_step) {
    return (reinterpret_cast<uintptr_t>(data) & 15) == 0 && (row_step & 3) == 0;
  };
  return !p.out_table.i64 && p.out_table.step[1] == 1 && p.block_table.step[1] == 1 &&
         rows_aligned(p.out_table.data, p.out_table.step[0]) &&
         rows_aligned(p.block_table.data, p.block_table.step[0]);
}

template <int kThreads>
__device__ __forceinline__ void copy_table_rows(const LocalAttentionCapturableParams& p,
                                                const int64_t* source, const int64_t* start,
                                                int64_t t0, int64_t rows) {
  if (rows <= 0) return;
  // 32-bit columns when first + j, col * stride and j * stride cannot leave int32 (strides
  // are never negative).
  auto fits = [](int64_t n, int64_t stride) {
    return n < (int64_t{1} << 30) && stride <= INT32_MAX / (n > 1 ? n : 1);
  };
  const bool narrow = fits(p.pages, p.out_table.step[1]) && fits(p.cols, p.block_table.step[1]);
  if (narrow && source != nullptr && table_rows_vec4(p)) {
    copy_table_rows_vec4<kThreads, 2>(p, source, start, t0, rows);
  } else if (p.out_table.i64) {
    if (narrow) copy_table_rows_as<int64_t, int32_t, kThreads>(p, source, start, t0, rows);
    else copy_table_rows_as<int64_t, int64_t, kThreads>(p, source, start, t0, rows);
  } else {
    if (narrow) copy_table_rows_as<int32_t, int32_t, kThreads>(p, source, start, t0, rows);
    else copy_table_rows_as<int32_t, int64_t, kThreads>(p, source, start, t0, rows);
  }
}

// Zeroes rows [t0, t1) of the gathered table when they are one run of elements in memory
// (column stride 1, and row stride `pages` or a single row): 16-byte stores over the aligned
// middle and 4-byte words at the two ends (elements are 4 or 8 bytes, aligned to their size),
// a fraction of the instructions the gather spends per padding element. Returns false, having
// written nothing, for any other layout.
template <int kThreads>
__device__ __forceinline__ bool zero_contiguous_table_rows(const LocalAttentionCapturableParams& p,
                                                           int64_t t0, int64_t t1) {
  if (t1 <= t0) return true;
  const MutIndexMatrix& o = p.out_table;
  if (o.step[1] != 1 || (o.step[0] != p.pages && t1 - t0 > 1)) return false;
  const int64_t elem = o.i64 ? 8 : 4;
  char* const first = static_cast<char*>(o.data) + t0 * o.step[0] * elem;
  const int64_t bytes = (t1 - t0) * p.pages * elem;
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(first) & 15);
  const int64_t head = misaligned == 0 ? 0 : (16 - misaligned < bytes ? 16 - misaligned : bytes);
  const int64_t vectors = (bytes - head) >> 4, tail = head + (vectors << 4);
  for (int64_t i = threadIdx.x; i < head >> 2; i += kThreads)
    reinterpret_cast<uint32_t*>(first)[i] = 0u;
  uint4* const middle = reinterpret_cast<uint4*>(first + head);
  for (int64_t i = threadIdx.x; i < vectors; i += kThreads) middle[i] = make_uint4(0u, 0u, 0u, 0u);
  for (int64_t i = threadIdx.x; i < (bytes - tail) >> 2; i += kThreads)
    reinterpret_cast<uint32_t*>(first + tail)[i] = 0u;
  return true;
}

template <int kThreads>
__device__ __forceinline__ void make_local_attention_virtual_batches_capturable_blocks(
    const LocalAttentionCapturableParams& p, const BlockSlice& slice,
    LocalAttentionShared<kThreads>& sh) {
  // The last block of several reduces the counts while the others write the batches.
  const bool counter = slice.block == slice.blocks - 1;
  if (counter) local_attention_counts(p, sh);
  if (counter && slice.blocks > 1) return;
  const BlockSlice writers{slice.block, slice.blocks > 1 ? slice.blocks - 1 : 1};
  const int64_t reqs = p.seq_lens.size[0];
  const int64_t c = p.chunk;
  const int64_t q0 = reqs > 0 ? load_index(p.query_start_loc, 0) : 0;
  const int64_t cap = p.seqlens_k.size[0];
  const int64_t table_cap = p.out_table.data == nullptr ? 0
                            : (p.out_table.size[0] < cap ? p.out_table.size[0] : cap);
  int64_t v0, v1;
  block_range(cap, writers, v0, v1);
  const WalkEnd end = segment_chunks(
      sh.walk, reqs, v1, [&](int64_t i) { return local_attention_split(p, i).blocks; },
      [&](int64_t c0, int cnt) {
        const int64_t begin = sh.walk.prefix[0], end_v = sh.walk.prefix[cnt];
        const int64_t lo = v0 > begin ? v0 : begin, hi = v1 < end_v ? v1 : end_v;
        // Tiles of kThreads virtual batches: a thread per virtual batch decodes its request,
        // writes its vectors and notes where its block-table row comes from; then every
        // thread copies the tile's rows, a thread per element.
        for (int64_t t0 = lo; t0 < hi; t0 += kThreads) {
          const int64_t v = t0 + threadIdx.x, t1 = hi < t0 + kThreads ? hi : t0 + kThreads;
          if (v < t1) {
            const int slot = segment_slot(sh.walk, cnt, v);
            const LocalSplit r = local_attention_split(p, c0 + slot);
            const int64_t a = v - sh.walk.prefix[slot];
            const int64_t rest = r.q - r.q_first;
            const int64_t q_local = a == 0 ? r.q_first
                                           : (rest - c * (a - 1) < c ? rest - c * (a - 1) : c);
            const int64_t through = a == 0 ? r.q_first
                                           : (r.q_first + c * a < r.q ? r.q_first + c * a : r.q);
            const int64_t k_local = a == r.blocks - 1 ? r.last : c;
            store_index(p.cu_seqlens_q, v + 1, r.q_start - q0 + through);
            store_index(p.seqlens_k, v, k_local);
            if (p.num_computed.data != nullptr) store_index(p.num_computed, v, k_local - q_local);
            const int64_t first_key = r.s - ((r.blocks - 1 - a) * c + r.last);
            sh.row_source[threadIdx.x] = c0 + slot;
            sh.row_start[threadIdx.x] = first_key < 0 ? 0 : div_nonneg(first_key, p.block_size);
          }
          __syncthreads();
          copy_table_rows<kThreads>(p, sh.row_source, sh.row_start, t0,
                                    (t1 < table_cap ? t1 : table_cap) - t0);
          __syncthreads();
        }
      });
  if (!end.complete) return;
  // The padding past V (the walk ran off the end, so it knows V).
  const int64_t v_total = end.running, pad = v0 > v_total ? v0 : v_total;
  const int64_t total_q = reqs > 0 ? load_index(p.query_start_loc, reqs) - q0 : 0;
  for (int64_t v = pad + threadIdx.x; v < v1; v += kThreads) {
    store_index(p.cu_seqlens_q, v + 1, total_q);
    store_index(p.seqlens_k, v, 0);
    if (p.num_computed.data != nullptr) store_index(p.num_computed, v, 0);
  }
  const int64_t rows_end = v1 < table_cap ? v1 : table_cap;
  if (!zero_contiguous_table_rows<kThreads>(p, pad, rows_end))
    for (int64_t t0 = pad; t0 < rows_end; t0 += kThreads)
      copy_table_rows<kThreads>(p, nullptr, nullptr, t0,
                                (rows_end < t0 + kThreads ? rows_end : t0 + kThreads) - t0);
}

}  // namespace kernels
}  // namespace cattn
