// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the multimodal prefix helpers: cattn_compute_mm_prefix_range_tensor (with its
// size query) and cattn_fill_mm_prefix_query_ranges. Random CSR ranges (counts, values near the
// int32/int64 limits, degenerate and (0, 0) pairs), offsets and query_start_loc that may not
// start at 0 or may decrease, any layouts and structural mutations, None, outputs of any shape
// and placed over the inputs, capacities around T, reserved fields; every outcome is predicted
// and a success compared with the definitions written here per token, not per span: a query
// token at absolute position p = ctx + j carries the last range of its request with
// start < end and start <= p <= end (the inclusive end), or (-1, -1).
#include <algorithm>
#include <limits>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

using i128 = __int128;

bool fits32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// The CSR pair as the fuzzer built it: offsets (mostly valid, from per-request counts) and
// [n, 2] ranges.
struct Ranges {
  Tensor offsets, ranges;
  bool none = false;
};

Ranges make_ranges(FuzzedDataProvider& fdp, int64_t requests) {
  Ranges r;
  std::vector<int64_t> off{0};
  for (int64_t i = 0; i < requests; ++i) off.push_back(off.back() + fdp.ConsumeIntegralInRange<int64_t>(0, 3));
  const int64_t rows = off.back() + (fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? 1 : 0);
  // Sometimes break the offsets' invariants.
  const int breakage = fdp.ConsumeIntegralInRange<int>(0, 31);
  if (breakage == 0 && !off.empty()) off[0] = 1;
  if (breakage == 1 && off.size() > 2) std::swap(off[1], off[2]);
  if (breakage == 2) off.back() += 2;
  std::vector<int64_t> flat;
  for (int64_t k = 0; k < rows; ++k) {
    const int kind = fdp.ConsumeIntegralInRange<int>(0, 7);
    // a + offset wraps (two's complement), so extreme pairs of either order turn up.
    int64_t a = pick_value(fdp, 40);
    const uint64_t wrapped = static_cast<uint64_t>(a) + static_cast<uint64_t>(pick_value(fdp, 30));
    int64_t b = kind == 0 ? a : kind == 1 ? 0 : static_cast<int64_t>(wrapped);
    if (kind == 1) a = 0;  // a (0, 0) pair
    flat.push_back(a);
    flat.push_back(b);
  }
  const DLDataType od = fdp.ConsumeBool() ? i64() : i32(), rd = fdp.ConsumeBool() ? i64() : i32();
  r.offsets = make_tensor(fdp, {static_cast<int64_t>(off.size())}, od, false);
  r.offsets.fill(off);
  r.ranges = make_tensor(fdp, {rows, 2}, rd, false);
  r.ranges.fill(flat);
  r.none = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
  return r;
}

// Whether the CSR tensors pass the library's checks for `requests` (-1: any); fills what it read.
bool csr_ok(const Ranges& r, int64_t requests, std::vector<int64_t>& off, std::vector<std::pair<int64_t, int64_t>>& pairs) {
  const Tensor &o = r.offsets, &g = r.ranges;
  if (!host_index(o, 1) || !scan_bounded(o) || o.dim(0) < 1) return false;
  if (!host_index(g, 2) || !scan_bounded(g) || g.dim(1) != 2) return false;
  if (requests >= 0 && o.dim(0) != requests + 1) return false;
  off = o.values();
  if (off[0] != 0) return false;
  for (size_t i = 1; i < off.size(); ++i)
    if (off[i] < off[i - 1]) return false;
  if (off.back() > g.dim(0)) return false;
  for (int64_t k = 0; k < off.back(); ++k)
    pairs.push_back({Tensor::load(g.at({k, 0}), g.elem), Tensor::load(g.at({k, 1}), g.elem)});
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const bool fill = fdp.ConsumeBool();
  const int64_t requests = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  Ranges r = make_ranges(fdp, requests);
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;

  if (!fill) {
    const char* fn = "cattn_compute_mm_prefix_range_tensor";
    // out: absent (the size query), or [S, m, 2] for some m near the right one.
    const bool query = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
    const int64_t m = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
    Tensor out = query ? Tensor() : make_tensor(fdp, {requests, m, 2}, fdp.ConsumeBool() ? i64() : i32(), true);
    if (query) out.exists = false;
    else maybe_alias(fdp, out, {&r.offsets, &r.ranges});
    const size_t struct_size = pick_struct_size(fdp, CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE);
    Struct<cattn_mm_prefix_range_tensor_args_t> args(CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_INIT, struct_size);
    auto* a = args.get();
    a->range_offsets = r.none ? nullptr : r.offsets.cptr();
    a->ranges = r.none ? nullptr : r.ranges.cptr();
    a->out = out.ptr();
    a->reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
    a->max_ranges = -3;
    a->is_none = -3;
    const std::vector<uint8_t> before = args.snapshot();

    const bool given = a->range_offsets != nullptr || a->ranges != nullptr;
    bool ok = !null_args && struct_size >= CATTN_MM_PREFIX_RANGE_TENSOR_ARGS_SIZE && a->reserved0 == 0;
    ok = ok && (a->range_offsets == nullptr) == (a->ranges == nullptr);
    ok = ok && (!given || (r.offsets.usable() && r.ranges.usable()));
    ok = ok && (!out.exists || (out.usable() && !out.device));
    std::vector<int64_t> off;
    std::vector<std::pair<int64_t, int64_t>> pairs;
    if (ok && given) ok = csr_ok(r, -1, off, pairs);
    int64_t max_ranges = 0;
    bool none = true;
    if (ok && given) {
      for (const auto& p : pairs) ok = ok && fits32(p.first) && fits32(p.second);
      for (size_t i = 0; i + 1 < off.size(); ++i) {
        const int64_t n = off[i + 1] - off[i];
        none = none && (n == 0 || (n == 1 && pairs[static_cast<size_t>(off[i])] == std::pair<int64_t, int64_t>{0, 0}));
        max_ranges = std::max<int64_t>(max_ranges, std::max<int64_t>(n, 1));
      }
      if (none) max_ranges = 0;
    }
    const int64_t seqs = given && ok ? static_cast<int64_t>(off.size()) - 1 : 0;
    const bool writes = ok && given && !none && out.exists;
    if (writes) {
      ok = out.index() && out.ndim() == 3 && writable(out) && out.dim(0) == seqs &&
           out.dim(1) == max_ranges && out.dim(2) == 2;
    }
    // out is an argument whenever it is given, written or not: it may not overlap the ranges.
    if (ok && given && out.exists) ok = !overlaps(out, r.offsets) && !overlaps(out, r.ranges);
    FZ_LOG("compute: requests %ld none %d given %d predicted %d max_ranges %ld\n", (long)requests,
           r.none, given, ok, (long)max_ranges);
    Watch w;
    w.add(&r.offsets);
    w.add(&r.ranges);
    if (out.exists) w.add(&out);
    const cattn_status_t s = cattn_compute_mm_prefix_range_tensor(null_args ? nullptr : a);
    if (!check_outcome(s, fn, ok, w)) {
      FZ_CHECK(args.unchanged(before), "a failure wrote the args struct");
      return 0;
    }
    cattn_mm_prefix_range_tensor_args_t want = args.value();
    want.max_ranges = max_ranges;
    want.is_none = none ? 1 : 0;
    FZ_CHECK(args.equals(before, want), "max_ranges / is_none differ from the definition");
    if (ok && given && !none && out.exists)
      for (int64_t q = 0; q < seqs; ++q)
        for (int64_t j = 0; j < max_ranges; ++j) {
          const int64_t k = off[static_cast<size_t>(q)] + j;
          const bool listed = k < off[static_cast<size_t>(q) + 1];
          const auto p = listed ? pairs[static_cast<size_t>(k)] : std::pair<int64_t, int64_t>{0, 0};
          w.put(out, (q * max_ranges + j) * 2, p.first);
          w.put(out, (q * max_ranges + j) * 2 + 1, p.second);
        }
    check_images(w, fn);
    return 0;
  }

  const char* fn = "cattn_fill_mm_prefix_query_ranges";
  std::vector<int64_t> qlens(static_cast<size_t>(requests)), qsl{0}, seq;
  for (auto& q : qlens) {
    q = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
    qsl.push_back(qsl.back() + q);
    seq.push_back(fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? pick_value(fdp, 60) : q + fdp.ConsumeIntegralInRange<int64_t>(0, 40));
  }
  const int qbreak = fdp.ConsumeIntegralInRange<int>(0, 31);
  if (qbreak == 0) qsl[0] = 1;
  if (qbreak == 1 && qsl.size() > 2) std::swap(qsl[1], qsl[2]);
  const int64_t total = qsl.back();
  const int64_t capacity = std::max<int64_t>(0, total + fdp.ConsumeIntegralInRange<int64_t>(-2, 3));
  Tensor qt = make_tensor(fdp, {static_cast<int64_t>(qsl.size())}, fdp.ConsumeBool() ? i64() : i32(), false);
  qt.fill(qsl);
  Tensor st = make_tensor(fdp, {requests}, fdp.ConsumeBool() ? i64() : i32(), false);
  st.fill(seq);
  Tensor out = make_tensor(fdp, {capacity, 2}, fdp.ConsumeBool() ? i64() : i32(), true);
  maybe_alias(fdp, out, {&r.offsets, &r.ranges, &qt, &st});
  const size_t struct_size = pick_struct_size(fdp, CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE);
  Struct<cattn_fill_mm_prefix_query_ranges_args_t> args(CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_INIT, struct_size);
  auto* a = args.get();
  a->range_offsets = r.none ? nullptr : r.offsets.cptr();
  a->ranges = r.none ? nullptr : r.ranges.cptr();
  a->query_start_loc_cpu = qt.cptr();
  a->seq_lens_cpu = st.cptr();
  a->out = out.ptr();
  a->rows = -3;
  const std::vector<uint8_t> before = args.snapshot();

  const bool given = a->range_offsets != nullptr || a->ranges != nullptr;
  bool ok = !null_args && struct_size >= CATTN_FILL_MM_PREFIX_QUERY_RANGES_ARGS_SIZE;
  ok = ok && (a->range_offsets == nullptr) == (a->ranges == nullptr);
  ok = ok && (!given || (r.offsets.usable() && r.ranges.usable()));
  ok = ok && host_index(qt, 1) && scan_bounded(qt) && qt.dim(0) >= 1;
  const int64_t b = ok ? qt.dim(0) - 1 : 0;
  ok = ok && host_index(st, 1) && scan_bounded(st) && st.dim(0) == b;
  ok = ok && out.usable() && !out.device && out.index() && out.ndim() == 2 && writable(out) && out.dim(1) == 2;
  ok = ok && !overlaps(out, qt) && !overlaps(out, st) && (!given || (!overlaps(out, r.offsets) && !overlaps(out, r.ranges)));
  std::vector<int64_t> off, q, sl;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t rows = 0;
  if (ok && given) ok = csr_ok(r, b, off, pairs);
  if (ok && given) {
    q = qt.values();
    sl = st.values();
    ok = q[0] == 0;
    for (int64_t i = 0; ok && i < b; ++i) ok = q[static_cast<size_t>(i) + 1] >= q[static_cast<size_t>(i)];
    const int64_t t = ok ? q[static_cast<size_t>(b)] : 0;
    if (ok && t > 0) {
      ok = t <= out.dim(0);
      // Per token: the last covering range of its request.
      bool any = false;
      for (int64_t i = 0; ok && i < b; ++i) {
        const int64_t len = q[static_cast<size_t>(i) + 1] - q[static_cast<size_t>(i)];
        const i128 ctx = i128{sl[static_cast<size_t>(i)]} - len;
        for (int64_t j = 0; j < len; ++j)
          for (int64_t k = off[static_cast<size_t>(i)]; k < off[static_cast<size_t>(i) + 1]; ++k) {
            const auto& p = pairs[static_cast<size_t>(k)];
            const i128 pos = ctx + j;
            if (p.first < p.second && p.first <= pos && pos <= p.second) {
              any = true;
              if (!out.i64()) ok = ok && fits32(p.first) && fits32(p.second);
            }
          }
      }
      rows = ok && any ? t : 0;
    }
  }
  FZ_LOG("fill: requests %ld none %d given %d total %ld capacity %ld predicted %d rows %ld\n",
         (long)requests, r.none, given, (long)total, (long)capacity, ok, (long)rows);
  Watch w;
  w.add(&r.offsets);
  w.add(&r.ranges);
  w.add(&qt);
  w.add(&st);
  w.add(&out);
  const cattn_status_t s = cattn_fill_mm_prefix_query_ranges(null_args ? nullptr : a);
  if (!check_outcome(s, fn, ok, w)) {
    FZ_CHECK(args.unchanged(before), "a failure wrote the args struct");
    return 0;
  }
  cattn_fill_mm_prefix_query_ranges_args_t want = args.value();
  want.rows = rows;
  FZ_CHECK(args.equals(before, want), "rows differs from the definition");
  for (int64_t i = 0; rows > 0 && i < b; ++i) {
    const int64_t len = q[static_cast<size_t>(i) + 1] - q[static_cast<size_t>(i)];
    const i128 ctx = i128{sl[static_cast<size_t>(i)]} - len;
    for (int64_t j = 0; j < len; ++j) {
      std::pair<int64_t, int64_t> v{-1, -1};
      for (int64_t k = off[static_cast<size_t>(i)]; k < off[static_cast<size_t>(i) + 1]; ++k) {
        const auto& p = pairs[static_cast<size_t>(k)];
        const i128 pos = ctx + j;
        if (p.first < p.second && p.first <= pos && pos <= p.second) v = p;
      }
      const int64_t row = q[static_cast<size_t>(i)] + j;
      w.put(out, row * 2, v.first);
      w.put(out, row * 2 + 1, v.second);
    }
  }
  check_images(w, fn);
  return 0;
}
