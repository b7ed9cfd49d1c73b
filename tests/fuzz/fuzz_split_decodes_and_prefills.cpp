// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the split and reorder family: cattn_split_decodes_and_prefills,
// cattn_split_decodes_prefills_and_extends, cattn_split_prefill_chunks and
// cattn_reorder_batch_to_split_decodes_and_prefills (the first byte picks the call). Random
// batches with extreme values, layouts, structural mutations, outputs placed over inputs'
// memory, struct sizes and scalars. Every call: a valid status, a message naming the function
// on failure, inputs never written, nothing written on failure. A success is checked against
// what must hold whatever the data: the split counts sum to the batch, chunk bounds tile
// [offset, offset + n), the index map is a permutation that sorts the regions and equals the
// swaps applied first to last.
#include <algorithm>
#include <climits>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

void fail_check(bool ok, const char* what) { FZ_CHECK(ok, what); }

// Generic outcome checks (no prediction of success).
bool outcome(cattn_status_t s, const char* fn, const Watch& w) {
  check_status_valid(s);
  check_failure_message(s, fn);
  FZ_CHECK(w.inputs_unchanged(), std::string(fn) + " wrote an input");
  if (s != CATTN_OK) FZ_CHECK(w.all_unchanged(), std::string(fn) + " failed but wrote an output");
  return s == CATTN_OK;
}

DLDataType pick_dtype(FuzzedDataProvider& fdp) { return fdp.ConsumeBool() ? i64() : i32(); }

void fuzz_split(FuzzedDataProvider& fdp, bool extends) {
  const char* fn = extends ? "cattn_split_decodes_prefills_and_extends"
                           : "cattn_split_decodes_and_prefills";
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 24);
  const std::vector<int64_t> qsl =
      cumulative(fdp, B, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 12); }, true);
  Tensor q = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, {true, true, true});
  q.fill(qsl);
  const bool second = fdp.ConsumeIntegralInRange<int>(0, 7) != 0;
  Tensor other = extends ? make_tensor(fdp, {B}, pick_dtype(fdp), false)
                         : make_tensor(fdp, {B}, DLDataType{kDLUInt, 8, 1}, false);
  std::vector<int64_t> vals(static_cast<size_t>(B));
  for (auto& v : vals) v = extends ? pick_value(fdp, 30) : fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  other.fill(vals);
  if (!second) other.exists = false;
  const int64_t num_reqs = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_scalar(fdp, -2, 30) : B;
  // Counts as given, or left for the call to derive (CATTN_FROM_QUERY_START_LOC, the _INIT value).
  const int tokens_kind = fdp.ConsumeIntegralInRange<int>(0, 3);
  const int64_t tokens = tokens_kind == 0 ? CATTN_FROM_QUERY_START_LOC
                         : tokens_kind == 1 ? pick_value(fdp, 300)
                                            : qsl.back();
  const int64_t mql = fdp.ConsumeIntegralInRange<int>(0, 3) == 0 ? CATTN_FROM_QUERY_START_LOC
                                                                 : pick_scalar(fdp, 0, 16);
  const int64_t thr = pick_scalar(fdp, 0, 8);
  Watch w;
  w.add(&q);
  w.add(&other);
  cattn_status_t s;
  int64_t r[6] = {0};
  if (extends) {
    const size_t ss = pick_struct_size(fdp, CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_SIZE);
    Struct<cattn_split_decodes_prefills_and_extends_args_t> args(
        CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT, ss);
    auto* a = args.get();
    a->query_start_loc_cpu = q.cptr();
    a->seq_lens_cpu_upper_bound = other.cptr();
    a->num_reqs = num_reqs;
    a->num_actual_tokens = tokens;
    a->max_query_len = mql;
    a->decode_threshold = thr;
    const auto before = args.snapshot();
    s = cattn_split_decodes_prefills_and_extends(a);
    if (s != CATTN_OK) FZ_CHECK(args.unchanged(before), "failed but wrote its args struct");
    r[0] = a->num_decodes, r[1] = a->num_extends, r[2] = a->num_prefills;
    r[3] = a->num_decode_tokens, r[4] = a->num_extend_tokens, r[5] = a->num_prefill_tokens;
  } else {
    const size_t ss = pick_struct_size(fdp, CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_SIZE);
    Struct<cattn_split_decodes_and_prefills_args_t> args(
        CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT, ss);
    auto* a = args.get();
    a->query_start_loc_cpu = q.cptr();
    a->is_prefilling_cpu = other.cptr();
    a->num_reqs = num_reqs;
    a->num_actual_tokens = tokens;
    a->max_query_len = mql;
    a->decode_threshold = thr;
    a->require_uniform = fdp.ConsumeIntegralInRange<int32_t>(-1, 2) == 1;
    a->treat_short_extends_as_decodes = fdp.ConsumeIntegralInRange<int32_t>(0, 3) != 0;
    const auto before = args.snapshot();
    s = cattn_split_decodes_and_prefills(a);
    if (s != CATTN_OK) FZ_CHECK(args.unchanged(before), "failed but wrote its args struct");
    r[0] = a->num_decodes, r[1] = a->num_prefills;
  }
  if (!outcome(s, fn, w)) return;
  if (extends)
    fail_check(r[0] >= 0 && r[1] >= 0 && r[2] >= 0 && r[0] + r[1] + r[2] <= num_reqs,
               "extends split counts out of range");
  else
    FZ_CHECK(r[0] >= 0 && r[1] >= 0 && r[0] + r[1] == num_reqs,
             "split counts do not sum to B: " + std::to_string(r[0]) + " + " +
                 std::to_string(r[1]) + " for " + std::to_string(num_reqs) + ", " + describe(q));
}

void fuzz_chunks(FuzzedDataProvider& fdp) {
  const char* fn = "cattn_split_prefill_chunks";
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 24);
  const int64_t ws = pick_scalar(fdp, 0, 40);
  Tensor seq = make_tensor(fdp, {n}, pick_dtype(fdp), false, {true, true, true});
  std::vector<int64_t> lens(static_cast<size_t>(n));
  for (auto& l : lens) l = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? pick_value(fdp, 40)
                                                                      : fdp.ConsumeIntegralInRange<int64_t>(0, 40);
  seq.fill(lens);
  const int64_t rows = fdp.ConsumeIntegralInRange<int64_t>(0, 26);
  Tensor out = make_tensor(fdp, {rows, 2}, pick_dtype(fdp), true);
  maybe_alias(fdp, out, {&seq});
  if (fdp.ConsumeIntegralInRange<int>(0, 5) == 0) out.exists = false;
  const int64_t off = fdp.ConsumeBool() ? 0 : pick_scalar(fdp, -5, 50);
  const size_t ss = pick_struct_size(fdp, CATTN_SPLIT_PREFILL_CHUNKS_ARGS_SIZE);
  Struct<cattn_split_prefill_chunks_args_t> args(CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT, ss);
  auto* a = args.get();
  a->seq_lens_cpu = seq.cptr();
  a->workspace_size = ws;
  a->request_offset = off;
  a->chunks = out.ptr();
  // The args copied over the chunks' memory now and then: refused.
  bool over = false;
  a = maybe_struct_over_output(fdp, args, out, &over);
  Watch w;
  w.add(&seq);
  w.add(&out);
  const auto before = args.snapshot();
  const cattn_status_t s = cattn_split_prefill_chunks(a);
  if (s != CATTN_OK) FZ_CHECK(args.unchanged(before), "failed but wrote its args struct");
  FZ_CHECK(!over || s != CATTN_OK, "accepted chunks over its args struct");
  if (!outcome(s, fn, w) || !out.exists || seq.broadcast) return;
  // The chunks tile [off, off + n) in order, each of at least one request.
  int64_t at = off;
  for (int64_t k = 0; k < a->num_chunks; ++k) {
    const int64_t start = Tensor::load(out.at({k, 0}), out.elem);
    const int64_t end = Tensor::load(out.at({k, 1}), out.elem);
    fail_check(start == at && end > start, "chunks do not tile the batch");
    at = end;
  }
  fail_check(at == off + seq.numel, "chunks do not cover the batch");
}

void fuzz_reorder(FuzzedDataProvider& fdp) {
  const char* fn = "cattn_reorder_batch_to_split_decodes_and_prefills";
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 32);
  Tensor s = make_tensor(fdp, {B}, pick_dtype(fdp), false, {true, true, true});
  Tensor c = make_tensor(fdp, {B}, pick_dtype(fdp), false);
  Tensor p = make_tensor(fdp, {B}, pick_dtype(fdp), false);
  std::vector<int64_t> sv(static_cast<size_t>(B)), cv(sv.size()), pv(sv.size());
  for (size_t i = 0; i < sv.size(); ++i) {
    sv[i] = fdp.ConsumeIntegralInRange<int>(0, 9) == 0 ? pick_value(fdp, 8) : fdp.ConsumeIntegralInRange<int64_t>(0, 8);
    cv[i] = fdp.ConsumeIntegralInRange<int>(0, 9) == 0 ? pick_value(fdp, 8) : fdp.ConsumeIntegralInRange<int64_t>(0, 8);
    pv[i] = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  }
  s.fill(sv);
  c.fill(cv);
  p.fill(pv);
  Tensor map = make_tensor(fdp, {B}, pick_dtype(fdp), true);
  Tensor swaps = make_tensor(fdp, {std::max<int64_t>(B - 1, 0) + fdp.ConsumeIntegralInRange<int64_t>(-1, 2), 2},
                             pick_dtype(fdp), true);
  maybe_alias(fdp, map, {&s, &c, &p});
  maybe_alias(fdp, swaps, {&s, &map});
  if (fdp.ConsumeIntegralInRange<int>(0, 5) == 0) swaps.exists = false;
  const size_t ss = pick_struct_size(fdp, CATTN_REORDER_BATCH_ARGS_SIZE);
  Struct<cattn_reorder_batch_args_t> args(CATTN_REORDER_BATCH_ARGS_INIT, ss);
  auto* a = args.get();
  a->num_scheduled_tokens = s.cptr();
  a->num_computed_tokens = c.cptr();
  a->num_prompt_tokens = p.cptr();
  a->decode_threshold = pick_scalar(fdp, 0, 8);
  a->index_map = map.ptr();
  a->swaps = swaps.ptr();
  a->reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  // The args copied over the index map's memory now and then: refused.
  bool over = false;
  a = maybe_struct_over_output(fdp, args, map, &over);
  const bool plain = s.usable() && c.usable() && p.usable() && !s.broadcast && !c.broadcast &&
                     !p.broadcast && s.t.data && c.t.data && p.t.data;
  const std::vector<int64_t> sv2 = plain ? s.values() : std::vector<int64_t>();
  const std::vector<int64_t> cv2 = plain ? c.values() : std::vector<int64_t>();
  const std::vector<int64_t> pv2 = plain ? p.values() : std::vector<int64_t>();
  Watch w;
  w.add(&s);
  w.add(&c);
  w.add(&p);
  w.add(&map);
  w.add(&swaps);
  const auto before = args.snapshot();
  const cattn_status_t st = cattn_reorder_batch_to_split_decodes_and_prefills(a);
  if (st != CATTN_OK) FZ_CHECK(args.unchanged(before), "failed but wrote its args struct");
  FZ_CHECK(!over || st != CATTN_OK, "accepted an index map over its args struct");
  if (!outcome(st, fn, w) || !plain) return;
  // A permutation that sorts the regions, and the swaps reproduce it.
  const int64_t n = static_cast<int64_t>(sv2.size());
  std::vector<int64_t> perm(static_cast<size_t>(n)), order(static_cast<size_t>(n));
  std::vector<bool> seen(static_cast<size_t>(n), false);
  int last = 0;
  const int64_t thr = a->decode_threshold;
  for (int64_t i = 0; i < n; ++i) {
    perm[i] = map.get(i);
    fail_check(perm[i] >= 0 && perm[i] < n && !seen[perm[i]], "index map is not a permutation");
    seen[perm[i]] = true;
    const int64_t j = perm[i];
    const int g = cv2[j] <= 0 ? 3 : sv2[j] > thr ? 2 : cv2[j] >= pv2[j] ? 0 : 1;
    fail_check(g >= last, "index map does not sort the regions");
    last = g;
    order[i] = i;
  }
  if (!swaps.exists) return;
  fail_check(a->num_swaps >= 0 && a->num_swaps <= std::max<int64_t>(n - 1, 0), "num_swaps out of range");
  for (int64_t k = 0; k < a->num_swaps; ++k) {
    const int64_t x = Tensor::load(swaps.at({k, 0}), swaps.elem);
    const int64_t y = Tensor::load(swaps.at({k, 1}), swaps.elem);
    fail_check(x >= 0 && x < n && y >= 0 && y < n, "swap out of range");
    std::swap(order[x], order[y]);
  }
  fail_check(order == perm, "the swaps do not give the index map");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: fuzz_split(fdp, false); break;
    case 1: fuzz_split(fdp, true); break;
    case 2: fuzz_chunks(fdp); break;
    default: fuzz_reorder(fdp); break;
  }
  return 0;
}
