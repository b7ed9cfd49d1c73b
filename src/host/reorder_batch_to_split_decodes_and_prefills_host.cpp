// SPDX-License-Identifier: Apache-2.0
// Host algorithm of reorder_batch_to_split_decodes_and_prefills, without allocating.
//
// vLLM sorts the misplaced positions stably by region and moves the k-th of them in that order
// to the k-th misplaced position in ascending order. Because the target regions form
// contiguous runs, that is: the j-th misplaced request of region r (in batch order) goes to the
// j-th misplaced position of region r's run. So one two-pointer walk per region builds the
// permutation.
//
// The index map is the working memory: each entry holds (old position << 3) | visited << 2 |
// region of the request first at that position. The regions are computed once from the inputs
// (each element read once), so the permutation is a permutation whatever a racing writer does.
// vLLM then applies the permutation by cycle-walking a dict of moves in insertion order (the
// misplaced requests, region by region, in batch order): the cycle led by src swaps src with
// M(src), M^2(src), ... where M is old -> new position. With P = the index map (new -> old),
// M^k(src) = P^(L-k)(src) in a cycle of length L, so the swaps are the P-walk from src in
// reverse: one walk counts and marks the cycle, a second writes it back to front.
#include "host/reorder_batch_to_split_decodes_and_prefills_host.h"

#include <cstdint>

namespace cattn {
namespace {

constexpr int64_t kRegionMask = 3, kVisited = 4, kShift = 3;

// No context yet: a prefill (3), whatever its length; else a long extend (2) above the
// threshold, a decode (0) once the prompt is computed, a short extend (1) before. Branch-free:
// the regions of a batch come in no predictable order.
int region_of(int64_t s, int64_t c, int64_t p, int64_t thr) {
  const int has_context = c > 0, long_extend = s > thr, done = c >= p;
  const int with_context = long_extend * 2 + (1 - long_extend) * (1 - done);
  return 3 - has_context * (3 - with_context);
}

// The index map as working memory: a compact int64 tensor directly, any other through the
// strided accessors.
struct CompactMap {
  int64_t* p;
  int64_t get(int64_t i) const { return p[i]; }
  void set(int64_t i, int64_t v) const { p[i] = v; }
};
struct StridedMap {
  IndexReader r;
  IndexWriter w;
  int64_t get(int64_t i) const { return r[i]; }
  void set(int64_t i, int64_t v) const { w.set(i, v); }
};

template <class Map>
void plan(const Map& m, int64_t B, const int64_t (&start)[5], const TensorArg& swaps,
          ReorderResult& r) {
  auto region = [&](int64_t i) { return static_cast<int>(m.get(i) & kRegionMask); };
  // Correctly placed positions keep their request.
  for (int g = 0; g < 4; ++g)
    for (int64_t i = start[g]; i < start[g + 1]; ++i) {
      const int64_t w = m.get(i);
      if ((w & kRegionMask) == g) m.set(i, w | (i << kShift));
      else r.changed = true;
    }
  if (!r.changed) {
    for (int64_t i = 0; i < B; ++i) m.set(i, i);
    return;
  }
  // Region g's misplaced requests (region g outside g's run), in batch order, fill the
  // misplaced positions of g's run in order: one pass over the batch, a cursor per region.
  int64_t dst[4] = {start[0], start[1], start[2], start[3]};
  for (int t = 0; t < 4; ++t)
    for (int64_t i = start[t]; i < start[t + 1]; ++i) {
      const int g = region(i);
      if (g == t) continue;
      int64_t& d = dst[g];
      while (d < start[g + 1] && region(d) == g) ++d;
      if (d >= start[g + 1]) continue;  // cannot happen: the counts match by construction
      m.set(d, m.get(d) | (i << kShift));
      ++d;
    }
  auto next = [&](int64_t i) { return m.get(i) >> kShift; };
  // vLLM's swaps: cycle leaders in its dict order, region by region in batch order. Region g's
  // misplaced requests in batch order are the requests assigned to the misplaced positions of
  // g's run in ascending order, so one walk over each run visits them in that order.
  const bool write_swaps = swaps.present();
  for (int g = 0; g < 4; ++g)
    for (int64_t d = start[g]; d < start[g + 1]; ++d) {
      if (region(d) == g) continue;  // correctly placed
      const int64_t lead = next(d);
      const int64_t w = m.get(lead);
      if (w & kVisited) continue;
      int64_t len = 1;
      m.set(lead, w | kVisited);
      for (int64_t x = next(lead); x != lead && len < B; x = next(x), ++len)
        m.set(x, m.get(x) | kVisited);
      if (write_swaps) {
        int64_t k = r.num_swaps + len - 2;  // P^1(lead) is the last swap of the cycle
        for (int64_t x = next(lead); x != lead && k >= r.num_swaps; x = next(x), --k) {
          const IndexWriter row = writer_row(swaps, k);
          row.set(0, lead);
          row.set(1, x);
        }
      }
      r.num_swaps += len - 1;
    }
  for (int64_t i = 0; i < B; ++i) m.set(i, next(i));
}

// An input read through a typed pointer when it is compact and aligned, else IndexReader.
template <class T>
struct CompactIn {
  const T* p;
  int64_t operator[](int64_t i) const { return p[i]; }
};

template <class F>
void with_input(const TensorArg& t, F&& body) {
  const bool compact = t.numel() <= 1 || t.stride(0) == 1;
  const auto at = reinterpret_cast<uintptr_t>(t.data());
  if (compact && t.is_int64() && at % alignof(int64_t) == 0)
    return body(CompactIn<int64_t>{reinterpret_cast<const int64_t*>(t.data())});
  if (compact && !t.is_int64() && at % alignof(int32_t) == 0)
    return body(CompactIn<int32_t>{reinterpret_cast<const int32_t*>(t.data())});
  body(reader1d(t));
}

template <class Map>
ReorderResult reorder(const Map& m, const TensorArg& scheduled, const TensorArg& computed,
                      const TensorArg& prompt, int64_t threshold, const TensorArg& swaps) {
  const int64_t B = scheduled.numel();
  ReorderResult r;
  with_input(scheduled, [&](const auto& s) {
    with_input(computed, [&](const auto& c) {
      with_input(prompt, [&](const auto& p) {
        for (int64_t i = 0; i < B; ++i) {
          const int g = region_of(s[i], c[i], p[i], threshold);
          ++r.counts[g];
          m.set(i, g);
        }
      });
    });
  });
  int64_t start[5] = {0};
  for (int g = 0; g < 4; ++g) start[g + 1] = start[g] + r.counts[g];
  plan(m, B, start, swaps, r);
  return r;
}

}  // namespace

ReorderResult reorder_batch_to_split_decodes_and_prefills_host(
    const TensorArg& scheduled, const TensorArg& computed, const TensorArg& prompt,
    int64_t threshold, const TensorArg& index_map, const TensorArg& swaps) {
  const bool aligned = reinterpret_cast<uintptr_t>(index_map.data()) % alignof(int64_t) == 0;
  const bool compact = index_map.numel() <= 1 || index_map.stride(0) == 1;
  if (index_map.is_int64() && aligned && compact)
    return reorder(CompactMap{reinterpret_cast<int64_t*>(index_map.data())}, scheduled, computed,
                   prompt, threshold, swaps);
  return reorder(StridedMap{reader1d(index_map), writer1d(index_map)}, scheduled, computed,
                 prompt, threshold, swaps);
}

}  // namespace cattn
