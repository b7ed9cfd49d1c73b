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

namespace cattn {
namespace {

constexpr int64_t kRegionMask = 3, kVisited = 4, kShift = 3;

int region_of(int64_t s, int64_t c, int64_t p, int64_t thr) {
  if (c <= 0) return 3;   // no context yet: a prefill, whatever its length
  if (s > thr) return 2;  // long extend
  return c >= p ? 0 : 1;  // decode, or a short extend still prefilling
}

}  // namespace

ReorderResult reorder_batch_to_split_decodes_and_prefills_host(
    const TensorArg& scheduled, const TensorArg& computed, const TensorArg& prompt,
    int64_t threshold, const TensorArg& index_map, const TensorArg& swaps) {
  const int64_t B = scheduled.numel();
  const IndexReader s = reader1d(scheduled), c = reader1d(computed), p = reader1d(prompt);
  const IndexReader wr = reader1d(index_map);
  const IndexWriter ww = writer1d(index_map);
  ReorderResult r;
  for (int64_t i = 0; i < B; ++i) {
    const int g = region_of(s[i], c[i], p[i], threshold);
    ++r.counts[g];
    ww.set(i, g);
  }
  int64_t start[5] = {0};
  for (int g = 0; g < 4; ++g) start[g + 1] = start[g] + r.counts[g];
  auto target = [&](int64_t i) {
    int g = 0;
    while (i >= start[g + 1]) ++g;
    return g;
  };
  auto region = [&](int64_t i) { return static_cast<int>(wr[i] & kRegionMask); };
  auto misplaced = [&](int64_t i) { return region(i) != target(i); };

  // The permutation: correctly placed positions keep their request; region g's misplaced
  // requests fill the misplaced positions of g's run in order.
  for (int64_t i = 0; i < B; ++i)
    if (!misplaced(i)) ww.set(i, wr[i] | (i << kShift));
    else r.changed = true;
  if (!r.changed) {
    for (int64_t i = 0; i < B; ++i) ww.set(i, i);
    return r;
  }
  for (int g = 0; g < 4; ++g) {
    int64_t src = 0, dst = start[g];
    for (;;) {
      while (src < B && !(region(src) == g && target(src) != g)) ++src;
      while (dst < start[g + 1] && region(dst) == g) ++dst;
      if (src >= B || dst >= start[g + 1]) break;
      ww.set(dst, wr[dst] | (src << kShift));
      ++src, ++dst;
    }
  }
  auto next = [&](int64_t i) { return wr[i] >> kShift; };

  // vLLM's swaps: cycle leaders in dict order (region by region, batch order).
  for (int g = 0; g < 4; ++g)
    for (int64_t lead = 0; lead < B; ++lead) {
      const int64_t w = wr[lead];
      if ((w & kRegionMask) != g || (w & kVisited) || !misplaced(lead)) continue;
      int64_t len = 1;
      ww.set(lead, w | kVisited);
      for (int64_t x = next(lead); x != lead && len < B; x = next(x), ++len)
        ww.set(x, wr[x] | kVisited);
      if (swaps.present()) {
        int64_t k = r.num_swaps + len - 2;  // P^1(lead) is the last swap of the cycle
        for (int64_t x = next(lead); x != lead && k >= r.num_swaps; x = next(x), --k) {
          const IndexWriter row = writer_row(swaps, k);
          row.set(0, lead);
          row.set(1, x);
        }
      }
      r.num_swaps += len - 1;
    }
  for (int64_t i = 0; i < B; ++i) ww.set(i, next(i));
  return r;
}

}  // namespace cattn
