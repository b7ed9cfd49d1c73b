// SPDX-License-Identifier: Apache-2.0
// The step inputs' kernel (kernels/step_inputs.h). Every block first forms the batch's
// query_start_loc in shared memory - a scan of the live rows' scheduled counts, or the given
// one - and logits blocks the logits' running sum too, then runs its role: tokens (positions,
// token_to_req, slot mappings: a binary search finds each token's row), rows (query_start_loc,
// seq_lens, gathered tables, the token combination; the first row block also the counts) or
// logits. Re-forming the scan per block costs B/256 loads a thread and spares a second launch.
#include <cuda_runtime.h>

#include <climits>
#include <type_traits>

#include "kernels/index_access.cuh"
#include "kernels/launch_common.cuh"
#include "kernels/step_inputs.h"

namespace cattn {
namespace kernels {
namespace {

// A token a thread: each thread's work is a chain of dependent loads (its row's persistent
// row, its computed tokens, a table entry per group), so more threads in flight beat fewer
// threads doing several tokens; the scan each block repeats is B / 256 loads a thread.
constexpr int64_t kTokensPerBlock = kBlockThreads;
constexpr int64_t kLogitsPerBlock = 4 * kBlockThreads;
constexpr int64_t kRowsPerBlock = kBlockWarps;  // a warp per row
constexpr int64_t kMaxRoleBlocks = 1024;
// Gathered block-table rows: a warp per (group, row), 4 loads in flight a lane, 16 bytes each
// where the views allow: a row of 2,048 int32 blocks takes four rounds of load latency (more
// in flight spill at the 64 registers four resident blocks an SM allow).
constexpr int kGatherBatch = 4;
constexpr int kGatherQuads = 4;

__device__ __forceinline__ int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

__device__ __forceinline__ int64_t live_rows(const IndexSpan& num_reqs, int64_t rows) {
  return num_reqs.data == nullptr ? rows : clamp64(load_index(num_reqs, 0), 0, rows);
}

// Block-wide exclusive scan: s[b] = sum of value(i) for i < b, for b in [0, n], and s[b] =
// s[n] for b in (n, rows]. Each value is in [0, INT32_MAX]; sums saturate at INT32_MAX.
// The values are first loaded into s itself, kScanLoads a thread in flight (one round of load
// latency at B <= 1024), then each thread scans a contiguous chunk of s in place: a loop that
// loads and sums in turn would wait out one latency per value.
constexpr int kScanLoads = 4;
template <class Value>
__device__ void block_scan(int32_t* s, int64_t n, int64_t rows, Value value) {
  __shared__ long long warp_sums[kBlockWarps];
  batched_for<kScanLoads>(
      threadIdx.x, n, kBlockThreads, [&](int64_t b) { return static_cast<int32_t>(value(b)); },
      [&](int64_t b, int32_t v) { s[b] = v; });
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t per = (n + kBlockThreads - 1) / kBlockThreads;
  const int64_t lo = min(n, static_cast<int64_t>(threadIdx.x) * per), hi = min(n, lo + per);
  long long mine = 0;
  for (int64_t b = lo; b < hi; ++b) mine += s[b];
  long long incl = mine;
  for (int d = 1; d < 32; d <<= 1) {
    const long long v = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += v;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  long long before = 0, total = 0;
  for (int w = 0; w < kBlockWarps; ++w) {
    if (w < warp) before += warp_sums[w];
    total += warp_sums[w];
  }
  long long run = before + incl - mine;
  for (int64_t b = lo; b < hi; ++b) {  // each thread rewrites only its own chunk
    const int32_t v = s[b];
    s[b] = static_cast<int32_t>(min(run, static_cast<long long>(INT32_MAX)));
    run += v;
  }
  for (int64_t b = n + threadIdx.x; b <= rows; b += kBlockThreads)
    s[b] = static_cast<int32_t>(min(total, static_cast<long long>(INT32_MAX)));
  __syncthreads();
}

// The row b in [0, n) with s[b] <= t < s[b + 1] (t < s[n]), skipping empty rows.
__device__ __forceinline__ int64_t find_row(const int32_t* s, int64_t n, int64_t t) {
  int64_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (s[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

// A batch row's persistent row; -1 when it names none (out of range or absent mapping).
__device__ __forceinline__ int64_t persistent_row(const StepInputsParams& p, int64_t b) {
  if (p.idx_mapping.data == nullptr) return -1;
  const int64_t r = load_index(p.idx_mapping, b);
  return r >= 0 && r < p.persistent_rows ? r : -1;
}

__device__ __forceinline__ int64_t computed_of(const StepInputsParams& p, int64_t r) {
  return r >= 0 && p.num_computed.data != nullptr ? load_index(p.num_computed, r) : 0;
}

// The slot of position `pos` of batch row b (persistent row r) in group g, or -1.
__device__ int64_t slot_of(const StepInputsParams& p, const KvGroupView& g, int64_t pos,
                           int64_t b, int64_t r) {
  const int64_t row = g.v1 ? b : r;
  if (pos < 0 || row < 0 || row >= g.table.size[0]) return -1;
  const int64_t D = p.dcp_size, I = p.dcp_interleave, kbs = g.kernel_block_size;
  int64_t col, off;
  // Every operand is nonnegative: 32-bit division whenever the values fit.
  if (g.v1) {
    const int64_t V = g.block_size * D;
    const int64_t vbi = div_nonneg(pos, V), vbo = pos - vbi * V;
    const int64_t w = div_nonneg(vbo, I);
    if (w - div_nonneg(w, D) * D != p.dcp_rank) return -1;
    const int64_t lbo = div_nonneg(w, D) * I + (vbo - w * I);
    const int64_t lc = div_nonneg(lbo, kbs);
    col = vbi * div_nonneg(g.block_size, kbs) + lc;
    off = lbo - lc * kbs;
  } else {
    const int64_t V = kbs * D;
    const int64_t bi = div_nonneg(pos, V), o = pos - bi * V;
    const int64_t w = div_nonneg(o, I);
    if (w - div_nonneg(w, D) * D != p.dcp_rank) return -1;
    col = bi;
    off = div_nonneg(w, D) * I + (o - w * I);
  }
  if (col >= g.table.size[1]) return -1;
  return slot_of_block(load_index(g.table, row, col), kbs, off);
}

__device__ void step_tokens(const StepInputsParams& p, const int32_t* s, int64_t n,
                            const BlockSlice& slice) {
  const int64_t total = s[n];
  for (int64_t t = slice.thread(); t < p.token_cap; t += slice.threads()) {
    if (t >= total) {
      if (p.positions.data != nullptr && t < p.positions.size[0]) store_index(p.positions, t, 0);
      if (p.token_to_req.data != nullptr && t < p.token_to_req.size[0])
        store_index(p.token_to_req, t, 0);
      for (int g = 0; g < p.num_groups; ++g) {
        const MutIndexSpan& out = p.groups[g].slots;
        if (out.data != nullptr && t < out.size[0]) store_index(out, t, -1);
      }
      continue;
    }
    const int64_t b = find_row(s, n, t);
    const int64_t r = persistent_row(p, b);
    int64_t pos;
    if (p.num_scheduled.data != nullptr) {
      pos = computed_of(p, r) + (t - s[b]);
    } else {
      pos = t < p.given_positions.size[0] ? load_index(p.given_positions, t) : -1;
    }
    // Every group's table entry is loaded before anything is stored, so the loads overlap.
    int64_t slot[kMaxKvGroups];
#pragma unroll
    for (int g = 0; g < kMaxKvGroups; ++g)
      if (g < p.num_groups && p.groups[g].slots.data != nullptr)
        slot[g] = slot_of(p, p.groups[g], pos, b, r);
    if (p.positions.data != nullptr && t < p.positions.size[0]) store_index(p.positions, t, pos);
    if (p.token_to_req.data != nullptr && t < p.token_to_req.size[0])
      store_index(p.token_to_req, t, b);
#pragma unroll
    for (int g = 0; g < kMaxKvGroups; ++g) {
      const MutIndexSpan& out = p.groups[g].slots;
      if (g < p.num_groups && out.data != nullptr && t < out.size[0]) store_index(out, t, slot[g]);
    }
  }
}

// The logits row b owns: new_sampled plus its drafts (a negative draft count reads as 0).
__device__ __forceinline__ int64_t logits_of(const StepInputsParams& p, int64_t b) {
  const int64_t d = p.num_draft.data != nullptr ? load_index(p.num_draft, b) : 0;
  return clamp64(p.new_sampled + (d > 0 ? d : 0), 0, INT32_MAX);
}

__device__ void combine_row(const StepInputsParams& p, const int32_t* s, const int32_t* cul,
                            int64_t b, int lane) {
  const int64_t r = persistent_row(p, b);
  if (r < 0) return;
  const int64_t nb = cul[b + 1] - cul[b];
  const int64_t seq_len = load_index(p.comb_seq_lens, b);
  const int64_t prefill = load_index(p.prefill_len, r);
  if (seq_len <= prefill) return;
  const int64_t end = s[b + 1];
  const int64_t size = p.input_ids.size[0];
  if (lane == 0 && p.new_sampled > 0 && seq_len - nb >= prefill && end - nb >= 0 &&
      end - nb < size)
    store_index(p.input_ids, end - nb, load_index(p.last_sampled, r));
  const int64_t drafts = nb - p.new_sampled;
  for (int64_t k = lane; k < drafts && k < p.draft_tokens.size[1]; k += 32) {
    const int64_t at = end - drafts + k;
    if (at >= 0 && at < size) store_index(p.input_ids, at, load_index(p.draft_tokens, r, k));
  }
}

__device__ void step_rows(const StepInputsParams& p, const int32_t* s, const int32_t* cul,
                          int64_t n, const BlockSlice& slice) {
  const int lane = threadIdx.x % 32;
  const int64_t first = slice.block * kRowsPerBlock + threadIdx.x / 32;
  const int64_t warps = slice.blocks * kRowsPerBlock;
  for (int64_t b = first; b <= p.rows; b += warps) {
    if (lane == 0) {
      if (p.qsl.data != nullptr) store_index(p.qsl, b, s[b]);
      if (p.cu_num_logits.data != nullptr) store_index(p.cu_num_logits, b, cul[b]);
      if (b < p.rows && (p.seq_lens.data != nullptr || p.batch_num_computed.data != nullptr)) {
        const int64_t nct = b < n ? computed_of(p, persistent_row(p, b)) : 0;
        if (p.seq_lens.data != nullptr)
          store_index(p.seq_lens, b, b < n ? nct + (s[b + 1] - s[b]) : 0);
        if (p.batch_num_computed.data != nullptr) store_index(p.batch_num_computed, b, nct);
      }
    }
    if (b == p.rows) continue;
    if (p.input_ids.data != nullptr && b < n) combine_row(p, s, cul, b, lane);
  }
}

// Entries a 16-byte piece of a gathered table's row holds (4 int32, 2 int64) when the row can
// be copied in such pieces: one dtype for both views, unit column steps, rows starting on
// 16-byte boundaries (the common [R, W] table with W a multiple of 4); else 0.
__device__ __forceinline__ int64_t gather_piece(const KvGroupView& g) {
  const IndexMatrix& t = g.table;
  const MutIndexMatrix& o = g.gathered;
  const int64_t per = t.i64 ? 2 : 4;
  const bool ok = t.i64 == o.i64 && t.step[1] == 1 && o.step[1] == 1 && t.step[0] % per == 0 &&
                  o.step[0] % per == 0 && (reinterpret_cast<uintptr_t>(t.data) & 15) == 0 &&
                  (reinterpret_cast<uintptr_t>(o.data) & 15) == 0;
  return ok ? per : 0;
}

// The first entry of row `row` of a view, as bytes.
template <class View>
__device__ __forceinline__ auto row_bytes(const View& v, int64_t row) {
  using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<decltype(v.data)>>,
                                  const char, char>;
  return static_cast<Byte*>(v.data) + row * v.step[0] * (v.i64 ? 8 : 4);
}

// Gathered tables: item i is (group i % G, row i / G), a warp each: the warp copies the
// entries in use of a live row, or zeroes the full width of a padded row, in 16-byte pieces
// where gather_piece allows (kGatherQuads in flight a lane: 512 int32 entries a round), the
// rest an entry at a time (kGatherBatch in flight a lane).
__device__ void step_gather(const StepInputsParams& p, int64_t n, const BlockSlice& slice) {
  const int64_t G = p.num_groups, items = p.rows * G;
  const int lane = threadIdx.x % 32;
  const int64_t first = slice.block * kBlockWarps + threadIdx.x / 32;
  for (int64_t i = first; i < items; i += slice.blocks * kBlockWarps) {
    const int64_t b = i / G;
    const KvGroupView& grp = p.groups[i - b * G];
    if (grp.gathered.data == nullptr) continue;
    const MutIndexMatrix& out = grp.gathered;
    int64_t r = -1, count = out.size[1];  // a padded row: zero its width
    if (b < n) {
      r = persistent_row(p, b);
      if (r < 0 || r >= grp.table.size[0]) continue;
      const int64_t cols = min(out.size[1], grp.table.size[1]);
      count = grp.num_blocks.data == nullptr ? cols
              : r < grp.num_blocks.size[0]   ? clamp64(load_index(grp.num_blocks, r), 0, cols)
                                             : 0;
    }
    int64_t done = 0;
    if (const int64_t per = gather_piece(grp)) {
      uint4* dst = reinterpret_cast<uint4*>(row_bytes(out, b));
      const int64_t pieces = count / per;
      if (r < 0) {
        for (int64_t k = lane; k < pieces; k += 32) dst[k] = make_uint4(0, 0, 0, 0);
      } else {
        const uint4* src = reinterpret_cast<const uint4*>(row_bytes(grp.table, r));
        batched_for<kGatherQuads>(
            lane, pieces, 32, [&](int64_t k) { return src[k]; },
            [&](int64_t k, uint4 v) { dst[k] = v; });
      }
      done = per * pieces;
    }
    if (r < 0) {
      for (int64_t c = done + lane; c < count; c += 32) store_index(out, b, c, 0);
    } else {
      batched_for<kGatherBatch>(
          done + lane, count, 32, [&](int64_t c) { return load_index(grp.table, r, c); },
          [&](int64_t c, int64_t v) { store_index(out, b, c, v); });
    }
  }
}

// The counts: live rows, logits, the largest query and seq_len, the split (vLLM's
// split_decodes_and_prefills over the live rows, short extends as decodes).
__device__ void step_counts(const StepInputsParams& p, const int32_t* s, const int32_t* cul,
                            int64_t n) {
  if (!p.needs_qsl) {  // no query_start_loc in the plan (block tables alone): only num_reqs
    if (threadIdx.x == 0)
      for (int c = p.legacy_counts ? 0 : kInCountNumReqs; c < kInCounts; ++c)
        store_count(p.counts, c, c == kInCountNumReqs ? n : 0);
    return;
  }
  __shared__ long long max_q, max_seq;
  __shared__ unsigned long long first_pre;
  __shared__ int not_uniform;
  if (threadIdx.x == 0) {
    max_q = 0, max_seq = 0, first_pre = static_cast<unsigned long long>(n), not_uniform = 0;
  }
  __syncthreads();
  const int64_t q0 = n > 0 ? s[1] - s[0] : 0;
  long long mq = 0, ms = 0;
  unsigned long long fp = static_cast<unsigned long long>(n);
  bool nu = false;
  for (int64_t b = threadIdx.x; b < n; b += kBlockThreads) {
    const int64_t q = s[b + 1] - s[b];
    mq = max(mq, static_cast<long long>(q));
    if (p.num_scheduled.data != nullptr)
      ms = max(ms, static_cast<long long>(computed_of(p, persistent_row(p, b)) + q));
    const bool pre = p.require_uniform ? q != q0 : q > p.decode_threshold;
    if (pre && static_cast<unsigned long long>(b) < fp) fp = static_cast<unsigned long long>(b);
    if (q != q0 && q != 0) nu = true;
  }
  atomicMax(&max_q, mq);
  atomicMax(&max_seq, ms);
  atomicMin(&first_pre, fp);
  if (nu) atomicOr(&not_uniform, 1);
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (p.legacy_counts)
    for (int c = 0; c < kInCountNumReqs; ++c) store_count(p.counts, c, c == 0 ? s[n] : 0);
  store_count(p.counts, kInCountNumReqs, n);
  store_count(p.counts, kInCountNumLogits, p.logits ? cul[n] : 0);
  store_count(p.counts, kInCountMaxQueryLen, max_q);
  store_count(p.counts, kInCountMaxSeqLen, max_seq);
  int64_t r[4] = {0, 0, 0, 0};
  if (p.split) {
    const int64_t T = s[n], thr = p.decode_threshold;
    if (max_q <= thr && (!p.require_uniform || thr <= 1)) {
      r[0] = n, r[2] = T;
    } else if (n == 0) {
      r[0] = r[1] = r[2] = r[3] = -1;  // vLLM's IndexError
    } else if (q0 > thr) {
      r[1] = n, r[3] = T;
    } else if ((p.require_uniform && !not_uniform) ||
               first_pre == static_cast<unsigned long long>(n)) {
      r[0] = n, r[2] = T;
    } else {
      const int64_t f = static_cast<int64_t>(first_pre);
      r[0] = f, r[1] = n - f, r[2] = s[f], r[3] = T - s[f];
    }
  }
  for (int i = 0; i < 4; ++i) store_count(p.counts, kInCountSplit + i, r[i]);
}

__device__ void step_logits(const StepInputsParams& p, const int32_t* s, const int32_t* cul,
                            int64_t n, const BlockSlice& slice) {
  const int64_t total = cul[n];
  for (int64_t k = slice.thread(); k < p.logit_cap; k += slice.threads()) {
    int64_t index = 0, req = 0, local = 0;
    if (k < total) {
      const int64_t b = find_row(cul, n, k);
      local = k - cul[b];
      index = s[b + 1] - (cul[b + 1] - cul[b]) + local;
      req = p.idx_mapping.data != nullptr ? load_index(p.idx_mapping, b) : 0;
    }
    if (p.logits_indices.data != nullptr && k < p.logits_indices.size[0])
      store_index(p.logits_indices, k, index);
    if (p.expanded_idx.data != nullptr && k < p.expanded_idx.size[0])
      store_index(p.expanded_idx, k, req);
    if (p.expanded_pos.data != nullptr && k < p.expanded_pos.size[0])
      store_index(p.expanded_pos, k, local);
  }
}

// Four resident blocks an SM (at most 64 registers): a large step's grid in few waves.
__global__ void __launch_bounds__(kBlockThreads, 4) step_inputs_kernel(const StepInputsParams p) {
  extern __shared__ int32_t scans[];
  int32_t* s = scans;
  int32_t* cul = scans + p.rows + 1;
  const int64_t b = blockIdx.x;
  const bool is_rows = b >= p.token_blocks && b < p.token_blocks + p.row_blocks;
  const int64_t first_logit = p.token_blocks + p.row_blocks;
  const bool is_logits = b >= first_logit && b < first_logit + p.logit_blocks;
  const int64_t n = live_rows(p.num_reqs, p.rows);
  if (p.dependent && threadIdx.x == 0) allow_dependent_grids();
  if (b >= first_logit + p.logit_blocks) {  // gather blocks need no scan
    step_gather(p, n, BlockSlice{b - first_logit - p.logit_blocks, p.gather_blocks});
    return;
  }
  if (p.needs_qsl) {
    if (p.num_scheduled.data != nullptr)
      block_scan(s, n, p.rows, [&](int64_t i) {
        return clamp64(load_index(p.num_scheduled, i), 0, INT32_MAX);
      });
    else
      batched_for<kScanLoads>(
          threadIdx.x, p.rows + 1, kBlockThreads,
          [&](int64_t i) {
            return static_cast<int32_t>(clamp64(load_index(p.given_qsl, i < n ? i : n), 0, INT32_MAX));
          },
          [&](int64_t i, int32_t v) { s[i] = v; });
    __syncthreads();
  }
  if (p.logits && (is_rows || is_logits)) block_scan(cul, n, p.rows, [&](int64_t i) {
      return logits_of(p, i);
    });
  if (b < p.token_blocks) {
    step_tokens(p, s, n, BlockSlice{b, p.token_blocks});
  } else if (is_rows) {
    const int64_t rb = b - p.token_blocks;
    if (rb == 0 && (p.counts.device.data != nullptr || p.counts.mirror.data != nullptr))
      step_counts(p, s, cul, n);  // the plan's counts; a plan with counts has query_start_loc
    step_rows(p, s, cul, n, BlockSlice{rb, p.row_blocks});
  } else {
    step_logits(p, s, cul, n, BlockSlice{b - p.token_blocks - p.row_blocks, p.logit_blocks});
  }
}

int64_t capped_blocks(int64_t work, int64_t per_block) {
  if (work <= 0) return 0;
  const int64_t want = work / per_block + (work % per_block != 0);
  return want < kMaxRoleBlocks ? want : kMaxRoleBlocks;
}

// The padding-contract check: one block, a shared-memory minimum over (field, index, group).
__device__ __forceinline__ unsigned long long check_key(int field, int64_t index, int group) {
  const int64_t i = clamp64(index, 0, (int64_t{1} << 48) - 1);
  return (static_cast<unsigned long long>(field) << 56) |
         (static_cast<unsigned long long>(i) << 8) | static_cast<unsigned long long>(group);
}

__global__ void __launch_bounds__(kBlockThreads) step_batch_check_kernel(
    const StepBatchCheckParams p) {
  __shared__ unsigned long long first;
  if (threadIdx.x == 0) first = ~0ull;
  __syncthreads();
  const int64_t B = p.query_start_loc.size[0] - 1;
  unsigned long long mine = ~0ull;
  auto report = [&](int field, int64_t index, int group) {
    const unsigned long long k = check_key(field, index, group);
    if (k < mine) mine = k;
  };
  int64_t n = B;
  if (p.num_reqs.data != nullptr) {
    const int64_t v = load_index(p.num_reqs, 0);
    if (v < 0 || v > B) report(1, 0, 0);
    n = clamp64(v, 0, B);
  }
  if (threadIdx.x == 0 && load_index(p.query_start_loc, 0) != 0) report(2, 0, 0);
  for (int64_t b = threadIdx.x; b < B; b += kBlockThreads) {
    const int64_t lo = load_index(p.query_start_loc, b), hi = load_index(p.query_start_loc, b + 1);
    if (b < n ? hi < lo : hi != lo) report(2, b + 1, 0);
    if (p.seq_lens.data != nullptr) {
      const int64_t sl = load_index(p.seq_lens, b);
      if (b < n ? sl < hi - lo : sl != 0) report(3, b, 0);
    }
  }
  const int64_t total = load_index(p.query_start_loc, n);
  for (int g = 0; g < kMaxKvGroups; ++g) {
    const IndexMatrix& t = p.tables[g];
    if (t.data != nullptr) {
      const int64_t W = t.size[1], rows = min(t.size[0], B);
      for (int64_t i = threadIdx.x; n < rows && i < (rows - n) * W; i += kBlockThreads) {
        const int64_t b = n + i / W;
        if (load_index(t, b, i % W) != 0) report(4, b, g);
      }
    }
    const IndexSpan& sl = p.slots[g];
    if (sl.data != nullptr)
      for (int64_t i = threadIdx.x; i < sl.size[0]; i += kBlockThreads) {
        const int64_t v = load_index(sl, i);
        if (i >= total ? v != -1 : v < -1) report(5, i, g);
      }
    // A mapping shorter than the live total leaves its last tokens without a slot.
    if (sl.data != nullptr && threadIdx.x == 0 && sl.size[0] < total) report(5, sl.size[0], g);
  }
  atomicMin(&first, mine);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const bool ok = first == ~0ull;
  store_index(p.status, 0, ok ? 0 : static_cast<int64_t>(first >> 56));
  store_index(p.status, 1, ok ? 0 : static_cast<int64_t>((first >> 8) & ((1ull << 48) - 1)));
  store_index(p.status, 2, ok ? 0 : static_cast<int64_t>(first & 0xff));
}

}  // namespace

int64_t step_inputs_token_blocks(int64_t tokens) { return capped_blocks(tokens, kTokensPerBlock); }
int64_t step_inputs_row_blocks(int64_t rows) { return capped_blocks(rows + 1, kRowsPerBlock); }
int64_t step_inputs_gather_blocks(int64_t rows, int groups) {
  return capped_blocks(rows * groups, kBlockWarps);  // a warp per (group, row)
}
int64_t step_inputs_logit_blocks(int64_t logits) {
  return capped_blocks(logits, kLogitsPerBlock);
}
int64_t step_inputs_shared_bytes(int64_t rows) {
  return 2 * (rows + 1) * static_cast<int64_t>(sizeof(int32_t));
}

int launch_step_inputs(const StepInputsParams& p, void* stream, bool allow_dependents) {
  const int64_t blocks = p.token_blocks + p.row_blocks + p.logit_blocks + p.gather_blocks;
  if (blocks <= 0) return cudaSuccess;
  // Only the roles that read query_start_loc or the logits' sum keep scans.
  const int64_t shared = p.needs_qsl || p.logits ? step_inputs_shared_bytes(p.rows) : 0;
  if (shared > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        step_inputs_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  StepInputsParams q = p;
  q.dependent = allow_dependents;
  step_inputs_kernel<<<grid_size(blocks), kBlockThreads, static_cast<size_t>(shared),
                       static_cast<cudaStream_t>(stream)>>>(q);
  return cudaGetLastError();
}

int launch_step_batch_check(const StepBatchCheckParams& p, void* stream) {
  step_batch_check_kernel<<<1, kBlockThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
