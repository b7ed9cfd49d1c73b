// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the step inputs (1.2): cattn_prepare_pos_seq_lens (and cattn_step_inputs_size
// on every batch it accepts), cattn_gather_block_tables,
// cattn_compute_slot_mappings, cattn_combine_sampled_and_draft_tokens and
// cattn_step_batch_check (the first value FuzzedDataProvider draws, the input's last byte,
// picks the call). Random batches of B rows with a num_reqs scalar inside and outside [0, B]
// (or none), persistent rows that idx_mapping misses, negative and int64-edge counts, totals
// past the outputs, rows whose logits outnumber their query, block sizes, kernel block sizes
// and DCP parameters at and past their limits, contracts and reserved fields as arbitrary
// integers; tensors int32/int64, strided, broadcast (huge where the call may be given one),
// empty, structurally broken or marked CUDA (refused by this CPU-only build); outputs over
// inputs' and each other's memory and over the args struct; every struct_size boundary.
//
// Every call: a valid status, a message naming the function on failure, inputs never written,
// nothing written on failure, success exactly when the header's rules allow it. A success is
// checked against the header's definitions byte for byte (padding contract included: padded
// rows repeat the total, seq_lens 0, gathered rows 0, positions 0 and slots -1 past the live
// total), and the products of prepare_pos_seq_lens, gather_block_tables and
// compute_slot_mappings are handed to cattn_step_batch_check, which must report them as the
// reference does: {0, 0, 0} for a batch built from sane values.
//
// Race mode (an input whose first byte is 0x6d, kRaceMode): a valid host call of one of the five
// while another thread writes one element of one of its inputs (num_reqs, query_start_loc,
// num_scheduled_tokens, idx_mapping, num_draft_tokens, positions, ...); memory safety only, as
// fuzz_concurrent_mutation checks it. Every other input keeps the format above.
#include <array>
#include <cstring>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

DLDataType pick_dtype(FuzzedDataProvider& fdp) { return fdp.ConsumeBool() ? i64() : i32(); }
// Now and then every tensor of a call is marked CUDA (g_cuda): this CPU-only build must then
// answer a call whose arguments pass every check with CATTN_NOT_SUPPORTED, before any kernel
// and without reading a value (promise 7), and refuse any other one.
bool g_cuda = false;
bool index_nd(const Tensor& t, int nd) {
  return t.usable() && t.ndim() == nd && t.index() && (g_cuda || !t.device);
}
bool index1(const Tensor& t) { return index_nd(t, 1); }
void to_cuda(std::initializer_list<Tensor*> ts) {
  if (!g_cuda) return;
  // Only valid tensors: a broken one may point at a placeholder smaller than its claim.
  for (Tensor* t : ts)
    if (t->usable()) {
      set_device(t->t.device, kDLCUDA, 0);
      derive(*t);
    }
}
// After the call: its status for the reproducer output (CATTN_FUZZ_VERBOSE=1) and, with every
// tensor on CUDA, the arguments' verdict.
void check_cuda(cattn_status_t s, const char* fn, bool args_ok) {
  FZ_LOG("  -> %s %s\n", cattn_status_string(s), s == CATTN_OK ? "" : cattn_last_error_message());
  if (g_cuda && args_ok)
    FZ_CHECK(s == CATTN_NOT_SUPPORTED, std::string(fn) + " on CUDA tensors in a CPU-only build returned " +
                                           cattn_status_string(s) + ", expected CATTN_NOT_SUPPORTED");
}
bool is_int64_dtype(const Tensor& t) {
  return t.t.dtype.code == kDLInt && t.t.dtype.bits == 64 && t.t.dtype.lanes == 1;
}

// A count: mostly in [0, typical], sometimes negative or extreme.
int64_t count_value(FuzzedDataProvider& fdp, int64_t typical) {
  return fdp.ConsumeIntegralInRange<int>(0, 11) == 0 ? pick_value(fdp, typical)
                                                      : fdp.ConsumeIntegralInRange<int64_t>(0, typical);
}
// A row of [0, rows): mostly one, sometimes outside.
int64_t row_value(FuzzedDataProvider& fdp, int64_t rows) {
  if (rows <= 0 || fdp.ConsumeIntegralInRange<int>(0, 13) == 0) return pick_value(fdp, rows + 1);
  return fdp.ConsumeIntegralInRange<int64_t>(0, rows - 1);
}

// num_reqs: absent (NULL = B) or a [1] scalar, mostly in [0, B].
Tensor make_num_reqs(FuzzedDataProvider& fdp, int64_t B) {
  if (fdp.ConsumeIntegralInRange<int>(0, 2) == 0) return absent();
  int64_t v = fdp.ConsumeIntegralInRange<int64_t>(0, B);
  if (rare(fdp, 8)) v = pick_scalar(fdp, -1, B + 1);
  Tensor t = make_tensor(fdp, {1}, pick_dtype(fdp), false, kHuge);
  t.fill({v});
  return t;
}
bool num_reqs_ok(const Tensor& t) { return !t.exists || (index1(t) && t.dim(0) == 1); }
// The live rows as the host path reads them; false when num_reqs is outside [0, B].
bool live_rows(const Tensor& nreq, int64_t B, int64_t* n) {
  *n = nreq.exists ? nreq.get(0) : B;
  return *n >= 0 && *n <= B;
}




// ---- cattn_step_batch_check's reference: the first defect as {field, index, group} ----
struct CheckIn {
  const Tensor* qsl = nullptr;
  const Tensor* nreq = nullptr;
  const Tensor* sl = nullptr;
  const Tensor* tables[CATTN_MAX_KV_GROUPS] = {};
  const Tensor* slots[CATTN_MAX_KV_GROUPS] = {};
};
bool given(const Tensor* t) { return t != nullptr && t->exists; }

std::array<int64_t, 3> reference_check(const CheckIn& in) {
  std::array<int64_t, 3> r{0, 0, 0};
  auto report = [&](int64_t f, int64_t i, int64_t g) {
    const std::array<int64_t, 3> c{f, i, g};
    if (r[0] == 0 || c < r) r = c;
  };
  const Tensor& q = *in.qsl;
  const int64_t B = q.dim(0) - 1;
  int64_t n = B;
  if (given(in.nreq)) {
    const int64_t v = in.nreq->get(0);
    if (v < 0 || v > B) report(CATTN_STEP_CHECK_NUM_REQS, 0, 0);
    n = std::min(std::max<int64_t>(v, 0), B);
  }
  if (q.get(0) != 0) report(CATTN_STEP_CHECK_QUERY_START_LOC, 0, 0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t lo = q.get(b), hi = q.get(b + 1);
    if (b < n ? hi < lo : hi != lo) report(CATTN_STEP_CHECK_QUERY_START_LOC, b + 1, 0);
    if (given(in.sl)) {
      const int64_t v = in.sl->get(b);
      if (b < n ? static_cast<__int128>(v) < static_cast<__int128>(hi) - lo : v != 0)
        report(CATTN_STEP_CHECK_SEQ_LENS, b, 0);
    }
  }
  const int64_t total = q.get(n);
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    if (given(in.tables[g]))
      for (int64_t b = n; b < B; ++b)
        for (int64_t c = 0; c < in.tables[g]->dim(1); ++c)
          if (at2(*in.tables[g], b, c) != 0) report(CATTN_STEP_CHECK_BLOCK_TABLE, b, g);
    if (given(in.slots[g]))
      for (int64_t i = 0; i < in.slots[g]->numel; ++i) {
        const int64_t v = in.slots[g]->get(i);
        if (i >= total ? v != -1 : v < -1) report(CATTN_STEP_CHECK_SLOT_MAPPING, i, g);
      }
    // A mapping shorter than the live total: reported at its length.
    if (given(in.slots[g]) && in.slots[g]->numel < total)
      report(CATTN_STEP_CHECK_SLOT_MAPPING, in.slots[g]->numel, g);
  }
  return r;
}

// Hands a batch a call produced to cattn_step_batch_check (a fresh int64 status): it must
// accept the arguments and report what the reference reports.
std::array<int64_t, 3> cross_check(const CheckIn& in, const char* producer) {
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  a.query_start_loc = in.qsl->cptr();
  a.num_reqs = given(in.nreq) ? in.nreq->cptr() : nullptr;
  a.seq_lens = given(in.sl) ? in.sl->cptr() : nullptr;
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    a.block_tables[g] = given(in.tables[g]) ? in.tables[g]->cptr() : nullptr;
    a.slot_mappings[g] = given(in.slots[g]) ? in.slots[g]->cptr() : nullptr;
  }
  Tensor status = make_tensor_with({3}, nullptr, i64(), true);
  a.status = status.ptr();
  const cattn_status_t s = cattn_step_batch_check(&a);
  FZ_CHECK(s == CATTN_OK, std::string("cattn_step_batch_check refused the batch ") + producer +
                              " wrote: " + cattn_status_string(s));
  const std::array<int64_t, 3> got{status.get(0), status.get(1), status.get(2)};
  const std::array<int64_t, 3> want = reference_check(in);
  FZ_CHECK(got == want, std::string("cattn_step_batch_check on ") + producer + "'s batch: {" +
                            std::to_string(got[0]) + ", " + std::to_string(got[1]) + ", " +
                            std::to_string(got[2]) + "}, expected {" + std::to_string(want[0]) +
                            ", " + std::to_string(want[1]) + ", " + std::to_string(want[2]) + "}");
  return got;
}

// ---- cattn_prepare_pos_seq_lens ----
void fuzz_prepare(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_prepare_pos_seq_lens";
  g_cuda = rare(fdp, 16);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 10);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(0, 10);
  std::vector<int64_t> q(static_cast<size_t>(B)), idx(q.size()), nct(static_cast<size_t>(R));
  int64_t est = 0;
  for (auto& v : q) {
    v = count_value(fdp, 6);
    if (v > 0 && v < 1000) est += v;
  }
  for (auto& v : idx) v = row_value(fdp, R);
  for (auto& v : nct) v = count_value(fdp, 40);
  Tensor sched = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  sched.fill(q);
  Tensor imap = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  imap.fill(idx);
  Tensor computed = make_tensor(fdp, {R}, pick_dtype(fdp), false, kHuge);
  computed.fill(nct);
  Tensor nreq = make_num_reqs(fdp, B);
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), true);
  Tensor seq = make_tensor(fdp, {B}, pick_dtype(fdp), true);
  const int64_t tcap = std::max<int64_t>(0, est + fdp.ConsumeIntegralInRange<int64_t>(-2, 6));
  Tensor pos = fdp.ConsumeIntegralInRange<int>(0, 3) == 0 ? absent() : make_tensor(fdp, {tcap}, pick_dtype(fdp), true);
  Tensor bnct = fdp.ConsumeBool() ? absent() : make_tensor(fdp, {B}, pick_dtype(fdp), true);
  alias(fdp, qsl, {&sched, &imap, &computed, &nreq});
  alias(fdp, seq, {&sched, &imap, &computed, &qsl});
  if (pos.exists) alias(fdp, pos, {&sched, &computed, &qsl, &seq});
  if (bnct.exists) alias(fdp, bnct, {&imap, &computed, &seq, &pos});
  to_cuda({&sched, &imap, &computed, &nreq, &qsl, &seq, &pos, &bnct});

  Args<cattn_prepare_pos_seq_lens_args_t> args(fdp, CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT,
                                               CATTN_PREPARE_POS_SEQ_LENS_ARGS_SIZE);
  auto* a = args.s.get();
  a->num_scheduled_tokens = sched.cptr();
  a->idx_mapping = imap.cptr();
  a->num_computed_tokens = computed.cptr();
  a->num_reqs = nreq.cptr();
  a->query_start_loc = qsl.ptr();
  a->seq_lens = seq.ptr();
  a->positions = pos.ptr();
  a->batch_num_computed_tokens = bnct.ptr();
  args.place(fdp, {&qsl, &seq, &pos, &bnct});

  bool ok = args.ok(CATTN_PREPARE_POS_SEQ_LENS_ARGS_SIZE) && index1(sched) && index1(imap) &&
            index1(computed) && num_reqs_ok(nreq);
  const int64_t b_rows = ok ? sched.dim(0) : 0;
  ok = ok && imap.dim(0) == b_rows;
  ok = ok && index1(qsl) && writable(qsl) && qsl.dim(0) == b_rows + 1;
  ok = ok && index1(seq) && writable(seq) && seq.dim(0) == b_rows;
  if (pos.exists) ok = ok && index1(pos) && writable(pos);
  if (bnct.exists) ok = ok && index1(bnct) && writable(bnct) && bnct.dim(0) == b_rows;
  ok = ok && !any_overlap({&qsl, &seq, &pos, &bnct}, {&sched, &imap, &computed, &nreq});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  int64_t n = 0, total = 0;
  bool sane = true;  // every live num_computed_tokens >= 0: seq_lens hold their queries
  std::vector<int64_t> s, seqv, nctv, posv;
  if (ok) ok = live_rows(nreq, b_rows, &n);
  if (ok) {
    s.assign(static_cast<size_t>(b_rows + 1), 0);
    seqv.assign(static_cast<size_t>(b_rows), 0);
    nctv = seqv;
    for (int64_t b = 0; ok && b < n; ++b) {
      const int64_t v = sched.get(b);
      ok = v >= 0 && !__builtin_add_overflow(s[b], v, &s[b + 1]);
    }
    for (int64_t b = n; ok && b < b_rows; ++b) s[b + 1] = s[n];
    total = ok ? s[n] : 0;
    for (int64_t b = 0; ok && b < n; ++b) {
      const int64_t r = imap.get(b);
      ok = r >= 0 && r < computed.dim(0);
      if (ok) nctv[b] = computed.get(r);
      ok = ok && nctv[b] >= 0;  // a negative count is refused
      sane = sane && nctv[b] >= 0;
    }
    // A seq_len past int64 does not fit its output: refused.
    bool seq_wrap = false;
    for (int64_t b = 0; ok && b < n; ++b)
      seq_wrap = __builtin_add_overflow(nctv[b], s[b + 1] - s[b], &seqv[b]) || seq_wrap;
    ok = ok && !seq_wrap;
    if (ok && pos.exists) {
      ok = pos.dim(0) >= total;
      for (int64_t b = 0; ok && b < n; ++b)
        for (int64_t j = 0; j < s[b + 1] - s[b]; ++j) posv.push_back(nctv[b] + j);
    }
    for (int64_t v : s) ok = ok && fits(qsl, v);
    for (int64_t v : seqv) ok = ok && fits(seq, v);
    if (bnct.exists)
      for (int64_t v : nctv) ok = ok && fits(bnct, v);
    if (pos.exists)
      for (int64_t v : posv) ok = ok && fits(pos, v);
  }
  FZ_LOG("prepare_pos_seq_lens: B %ld R %ld n %ld total %ld predicted %d\n", (long)B, (long)R,
         (long)n, (long)total, ok);
  for (Tensor* t : {&sched, &imap, &computed, &nreq, &qsl, &seq, &pos, &bnct}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&sched, &imap, &computed, &nreq, &qsl, &seq, &pos, &bnct}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_prepare_pos_seq_lens(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_cuda(st, fn, args_ok);
  if (!check_outcome(st, fn, ok, w)) return;
  // cattn_step_inputs_size counts what the call just accepted: the same live total.
  cattn_step_inputs_size_args_t size = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  size.num_scheduled_tokens = sched.cptr();
  size.num_reqs = nreq.cptr();
  FZ_CHECK(cattn_step_inputs_size(&size) == CATTN_OK && size.num_tokens == total,
           "cattn_step_inputs_size differs from the live total prepare_pos_seq_lens accepted");
  for (int64_t i = 0; i <= b_rows; ++i) w.put(qsl, i, s[i]);
  for (int64_t i = 0; i < b_rows; ++i) w.put(seq, i, seqv[i]);
  if (bnct.exists)
    for (int64_t i = 0; i < b_rows; ++i) w.put(bnct, i, nctv[i]);
  if (pos.exists)
    for (int64_t i = 0; i < pos.dim(0); ++i) w.put(pos, i, i < total ? posv[i] : 0);
  check_images(w, fn);
  // The padding contract, read back from the outputs.
  FZ_CHECK(qsl.get(0) == 0, "query_start_loc[0] is not 0");
  for (int64_t b = 0; b < b_rows; ++b) {
    FZ_CHECK(qsl.get(b + 1) >= qsl.get(b), "query_start_loc decreases");
    if (b >= n) FZ_CHECK(qsl.get(b + 1) == total && seq.get(b) == 0, "a padded row is not empty");
  }
  if (pos.exists)
    for (int64_t i = total; i < pos.dim(0); ++i) FZ_CHECK(pos.get(i) == 0, "a position past the total is not 0");
  CheckIn in;
  in.qsl = &qsl, in.nreq = &nreq, in.sl = &seq;
  const auto rep = cross_check(in, fn);
  if (sane) FZ_CHECK(rep[0] == CATTN_STEP_CHECK_OK, "the batch check flags prepare_pos_seq_lens' batch");
}

// ---- cattn_gather_block_tables ----
void fuzz_gather(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_gather_block_tables";
  g_cuda = rare(fdp, 16);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  std::vector<int64_t> idx(static_cast<size_t>(B)), nb(static_cast<size_t>(R)), table(static_cast<size_t>(R * W));
  for (auto& v : idx) v = row_value(fdp, R);
  for (auto& v : nb) v = count_value(fdp, W);
  for (auto& v : table) v = pick_value(fdp, 1000);
  Tensor imap = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  imap.fill(idx);
  Tensor nreq = make_num_reqs(fdp, B);
  Tensor tab = make_tensor(fdp, {R, W}, pick_dtype(fdp), false, kHuge);
  tab.fill(table);
  Tensor blocks = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? absent()
                                                              : make_tensor(fdp, {R}, pick_dtype(fdp), false, kHuge);
  blocks.fill(nb);
  // As many rows as a huge idx_mapping claims, now and then (an empty table's out owns no byte).
  const int64_t out_rows = imap.usable() && imap.broadcast && fdp.ConsumeBool() ? imap.dim(0) : B;
  Tensor out = make_tensor(fdp, {out_rows, W}, pick_dtype(fdp), true);
  alias(fdp, out, {&imap, &nreq, &tab, &blocks});
  to_cuda({&imap, &nreq, &tab, &blocks, &out});

  Args<cattn_gather_block_tables_args_t> args(fdp, CATTN_GATHER_BLOCK_TABLES_ARGS_INIT,
                                              CATTN_GATHER_BLOCK_TABLES_ARGS_SIZE);
  auto* a = args.s.get();
  a->idx_mapping = imap.cptr();
  a->num_reqs = nreq.cptr();
  a->block_table = tab.cptr();
  a->num_blocks = blocks.cptr();
  a->out = out.ptr();
  args.place(fdp, {&out});

  bool ok = args.ok(CATTN_GATHER_BLOCK_TABLES_ARGS_SIZE) && index1(imap) && num_reqs_ok(nreq) &&
            index_nd(tab, 2);
  ok = ok && (!blocks.exists || (index1(blocks) && blocks.dim(0) == tab.dim(0)));
  const int64_t b_rows = ok ? imap.dim(0) : 0, width = ok ? tab.dim(1) : 0;
  ok = ok && index_nd(out, 2) && writable(out) && out.dim(0) == b_rows && out.dim(1) == width;
  ok = ok && !any_overlap({&out}, {&imap, &nreq, &tab, &blocks});
  // Promise 3: idx_mapping is read in full (its live rows) where out may be empty (W = 0), so
  // a broadcast view past the limit is refused.
  ok = ok && scan_bounded(imap);
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  int64_t n = 0;
  std::vector<int64_t> rows, counts;
  if (ok) ok = live_rows(nreq, b_rows, &n);
  for (int64_t b = 0; ok && b < n; ++b) {
    const int64_t r = imap.get(b);
    ok = r >= 0 && r < tab.dim(0);
    if (!ok) break;
    const int64_t c = blocks.exists ? blocks.get(r) : width;
    ok = c >= 0 && c <= width;
    for (int64_t k = 0; ok && k < c; ++k) ok = fits(out, at2(tab, r, k));
    rows.push_back(r);
    counts.push_back(c);
  }
  FZ_LOG("gather_block_tables: B %ld R %ld W %ld n %ld predicted %d\n", (long)B, (long)R, (long)W, (long)n, ok);
  for (Tensor* t : {&imap, &nreq, &tab, &blocks, &out}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&imap, &nreq, &tab, &blocks, &out}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_gather_block_tables(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_cuda(st, fn, args_ok);
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t b = 0; b < b_rows; ++b)
    if (b < n) {
      for (int64_t c = 0; c < counts[b]; ++c) w.put(out, b * width + c, at2(tab, rows[b], c));
    } else {
      for (int64_t c = 0; c < width; ++c) w.put(out, b * width + c, 0);
    }
  check_images(w, fn);
  for (int64_t b = n; b < b_rows; ++b)
    for (int64_t c = 0; c < width; ++c) FZ_CHECK(at2(out, b, c) == 0, "a padded row is not 0");
  if (b_rows + 1 > 4096) return;
  Tensor zeros = make_tensor_with({b_rows + 1}, nullptr, i64(), false);  // an empty batch's qsl
  CheckIn in;
  in.qsl = &zeros, in.nreq = &nreq;
  in.tables[fdp.ConsumeIntegralInRange<int>(0, CATTN_MAX_KV_GROUPS - 1)] = &out;
  FZ_CHECK(cross_check(in, fn)[0] == CATTN_STEP_CHECK_OK, "the batch check flags a gathered table");
}

// ---- cattn_compute_slot_mappings ----
// The slot of position p (batch row b, persistent row r) by the header's definitions; *refuse
// set for a negative position, when the table has no column for it, and for a block below 0
// or whose slot passes int64; *sane is kept for the checks that follow.
constexpr int kNoColumn = 1, kNegativePosition = 2, kNoSlot = 3;
int64_t reference_slot(const cattn_compute_slot_mappings_args_t& a, const Tensor& table, int64_t p,
                       int64_t b, int64_t r, int* refuse, bool* sane) {
  if (p < 0) {
    *refuse = kNegativePosition;
    return 0;
  }
  const bool v1 = a.contract == CATTN_SLOT_MAPPING_V1;
  const int64_t D = a.dcp_size, I = a.dcp_kv_cache_interleave_size, kbs = a.kernel_block_size;
  int64_t row, col, off;
  if (v1) {
    const int64_t V = a.block_size * D, vbi = p / V, vbo = p % V;
    if ((vbo / I) % D != a.dcp_rank) return -1;
    const int64_t lbo = (vbo / (D * I)) * I + vbo % I;
    row = b;
    col = vbi * (a.block_size / kbs) + lbo / kbs;
    off = lbo % kbs;
  } else {
    const int64_t V = kbs * D, o = p % V;
    if ((o / I) % D != a.dcp_rank) return -1;
    row = r;
    col = p / V;
    off = (o / (I * D)) * I + o % I;
  }
  if (row >= table.dim(0) || col >= table.dim(1)) {
    *refuse = kNoColumn;
    return 0;
  }
  const int64_t e = at2(table, row, col);
  if (e < 0 || e > (kI64Max - off) / kbs) {
    *refuse = kNoSlot;
    *sane = false;
    return 0;
  }
  return static_cast<int64_t>(static_cast<uint64_t>(e) * static_cast<uint64_t>(kbs) + static_cast<uint64_t>(off));
}

void fuzz_slots(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_compute_slot_mappings";
  g_cuda = rare(fdp, 16);
  cattn_compute_slot_mappings_args_t init = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  init.contract = rare(fdp, 16) ? fdp.ConsumeIntegral<int32_t>()
                                                               : fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  init.reserved0 = rare(fdp, 32) ? fdp.ConsumeIntegral<int32_t>() : 0;
  // Parameters at and past their limits (block sizes and interleave 2^31, dcp_size 2^16).
  auto edge = [&](int64_t lo, int64_t hi, int64_t limit) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 23)) {
      case 21: return limit;
      case 22: return limit + 1;
      case 23: return limit - 1;
      default: return pick_scalar(fdp, lo, hi);
    }
  };
  init.kernel_block_size = edge(1, 4, int64_t{1} << 31);
  const bool divides = init.kernel_block_size >= 1 && init.kernel_block_size <= (int64_t{1} << 31) &&
                       !rare(fdp, 8);
  init.block_size = divides ? init.kernel_block_size * fdp.ConsumeIntegralInRange<int64_t>(1, 3)
                            : edge(1, 16, int64_t{1} << 31);
  init.dcp_size = rare(fdp, 3) ? edge(1, 4, int64_t{1} << 16) : 1;
  const int64_t dsz = init.dcp_size >= 1 && init.dcp_size <= 4 ? init.dcp_size : 1;
  init.dcp_rank = pick_scalar(fdp, 0, dsz - 1);
  init.dcp_kv_cache_interleave_size = rare(fdp, 3) ? edge(1, 4, int64_t{1} << 31) : 1;
  const bool v1 = init.contract == CATTN_SLOT_MAPPING_V1;

  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  std::vector<int64_t> qv = cumulative(fdp, B, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 5); }, true);
  // Now and then a total far past every output, which only a huge positions view can hold.
  if (B > 0 && rare(fdp, 16))
    qv[B] = int64_t{1} << (4 * fdp.ConsumeIntegralInRange<int>(4, 10));
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  Tensor nreq = make_num_reqs(fdp, B);
  // v1 reads the table by batch row: B rows, now and then one more or one fewer.
  int64_t R = 0;
  if (v1) {
    const int64_t off = fdp.ConsumeIntegralInRange<int64_t>(-1, 1);
    R = std::max<int64_t>(0, B + off * (fdp.ConsumeIntegralInRange<int>(0, 3) == 0));
  } else {
    R = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  }
  const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  std::vector<int64_t> table(static_cast<size_t>(R * W));
  for (auto& v : table)
    v = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_value(fdp, 1000) : fdp.ConsumeIntegralInRange<int64_t>(0, 1000);
  Tensor tab = make_tensor(fdp, {R, W}, pick_dtype(fdp), false, kHuge);
  tab.fill(table);
  const bool with_idx = v1 == rare(fdp, 16);
  Tensor imap = absent();
  if (with_idx) {
    std::vector<int64_t> idx(static_cast<size_t>(B));
    for (auto& v : idx) v = row_value(fdp, R);
    imap = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
    imap.fill(idx);
  }
  const int64_t est = qv.back() >= 0 && qv.back() <= 200 ? qv.back() : 8;
  // Positions: mostly inside the table's reach (W kernel blocks of every DCP rank), sometimes
  // anywhere.
  const int64_t kbs = init.kernel_block_size;
  const int64_t reach = kbs >= 1 && kbs <= 64 && init.dcp_size >= 1 && init.dcp_size <= 4 ? kbs * init.dcp_size * W + 2 : 64;
  std::vector<int64_t> pv(static_cast<size_t>(std::max<int64_t>(est + 4, 0)));
  for (auto& v : pv)
    v = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_value(fdp, reach) : fdp.ConsumeIntegralInRange<int64_t>(0, reach);
  const int64_t n_pos = std::max<int64_t>(0, est + fdp.ConsumeIntegralInRange<int64_t>(-1, 3));
  Tensor pos = make_tensor(fdp, {n_pos}, pick_dtype(fdp), false, kHuge);
  pos.fill(pv);
  Tensor out = make_tensor(fdp, {std::max<int64_t>(0, est + fdp.ConsumeIntegralInRange<int64_t>(-1, 4))},
                           rare(fdp, 16) ? i32() : i64(), true);
  alias(fdp, out, {&qsl, &nreq, &pos, &imap, &tab});
  to_cuda({&qsl, &nreq, &pos, &imap, &tab, &out});

  Args<cattn_compute_slot_mappings_args_t> args(fdp, init, CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_SIZE);
  auto* a = args.s.get();
  a->query_start_loc = qsl.cptr();
  a->num_reqs = nreq.cptr();
  a->positions = pos.cptr();
  a->idx_mapping = imap.cptr();
  a->block_table = tab.cptr();
  a->slot_mapping = out.ptr();
  args.place(fdp, {&out});

  const cattn_compute_slot_mappings_args_t& p = init;
  const int64_t lim31 = int64_t{1} << 31;
  bool ok = args.ok(CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_SIZE) && p.reserved0 == 0 &&
            (p.contract == CATTN_SLOT_MAPPING_MRV2 || v1) && p.block_size >= 1 &&
            p.kernel_block_size >= 1 && p.block_size % p.kernel_block_size == 0 && p.dcp_size >= 1 &&
            p.dcp_kv_cache_interleave_size >= 1 && p.dcp_rank >= 0 && p.dcp_rank < p.dcp_size &&
            (v1 ? p.block_size : p.kernel_block_size) <= lim31 && p.dcp_size <= (int64_t{1} << 16) &&
            p.dcp_kv_cache_interleave_size <= lim31 &&
            // the interleave divides the contract's block
            (v1 ? p.block_size : p.kernel_block_size) % p.dcp_kv_cache_interleave_size == 0;
  ok = ok && index1(qsl) && scan_bounded(qsl) && qsl.dim(0) >= 1;
  const int64_t b_rows = ok ? qsl.dim(0) - 1 : 0;
  ok = ok && num_reqs_ok(nreq) && index1(pos) && index_nd(tab, 2);
  ok = ok && (v1 ? !imap.exists : index1(imap) && imap.dim(0) == b_rows);
  ok = ok && out.usable() && (g_cuda || !out.device) && out.ndim() == 1 && writable(out) && is_int64_dtype(out);
  ok = ok && !any_overlap({&out}, {&qsl, &nreq, &pos, &imap, &tab});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  int64_t n = 0, total = 0;
  bool sane = true;
  std::vector<int64_t> s, slots;
  if (ok) ok = live_rows(nreq, b_rows, &n);
  if (ok) {
    s.assign(static_cast<size_t>(n + 1), 0);
    for (int64_t b = 0; ok && b <= n; ++b) {
      s[b] = qsl.get(b);
      ok = b == 0 ? s[b] == 0 : s[b] >= s[b - 1];
    }
    total = ok ? s[n] : 0;
    std::vector<int64_t> rows(static_cast<size_t>(n), -1);
    for (int64_t b = 0; ok && b < n && !v1; ++b) {
      rows[b] = imap.get(b);
      ok = rows[b] >= 0 && rows[b] < tab.dim(0);
    }
    // Promise 8: slot_mapping's length is checked before any total-sized work.
    ok = ok && pos.dim(0) >= total && out.dim(0) >= total;
    for (int64_t b = 0; ok && b < n; ++b)
      for (int64_t i = s[b]; ok && i < s[b + 1]; ++i) {
        int refuse = 0;
        slots.push_back(reference_slot(p, tab, pos.get(i), b, rows[b], &refuse, &sane));
        ok = refuse == 0;
      }
  }
  FZ_LOG("compute_slot_mappings: contract %d reserved %d bs %ld kbs %ld dcp %ld/%ld I %ld B %ld n %ld total %ld predicted %d\n",
         p.contract, p.reserved0, (long)p.block_size, (long)p.kernel_block_size, (long)p.dcp_rank,
         (long)p.dcp_size, (long)p.dcp_kv_cache_interleave_size, (long)B, (long)n, (long)total, ok);
  for (Tensor* t : {&qsl, &nreq, &pos, &imap, &tab, &out}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&qsl, &nreq, &pos, &imap, &tab, &out}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_compute_slot_mappings(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_cuda(st, fn, args_ok);
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t i = 0; i < out.dim(0); ++i) w.put(out, i, i < total ? slots[i] : CATTN_PAD_SLOT_ID);
  check_images(w, fn);
  for (int64_t i = 0; i < out.dim(0); ++i)
    FZ_CHECK(i < total ? (!sane || out.get(i) >= -1) : out.get(i) == -1, "a slot breaks the padding contract");
  CheckIn in;
  in.qsl = &qsl, in.nreq = &nreq;
  in.slots[fdp.ConsumeIntegralInRange<int>(0, CATTN_MAX_KV_GROUPS - 1)] = &out;
  const auto rep = cross_check(in, fn);
  // query_start_loc is the caller's: its padded entries are never read, so only a flat one
  // makes a clean batch.
  for (int64_t b = n; b < b_rows; ++b) sane = sane && qsl.get(b + 1) == total;
  if (sane) FZ_CHECK(rep[0] == CATTN_STEP_CHECK_OK, "the batch check flags a slot mapping");
}

// ---- cattn_combine_sampled_and_draft_tokens ----
// One of the token combination's inputs (seq_lens, prefill_len, last_sampled_tokens,
// draft_tokens): present with input_ids, or now and then the other way round.
Tensor comb_input(FuzzedDataProvider& fdp, bool with_ids, std::vector<int64_t> shape, int64_t typical) {
  if (with_ids == rare(fdp, 32)) return absent();
  Tensor t = make_tensor(fdp, shape, pick_dtype(fdp), false, kHuge);
  std::vector<int64_t> v(static_cast<size_t>(std::max<int64_t>(shape[0], 0) * (shape.size() > 1 ? shape[1] : 1)));
  for (auto& x : v)
    x = fdp.ConsumeIntegralInRange<int>(0, 11) == 0 ? pick_value(fdp, typical) : fdp.ConsumeIntegralInRange<int64_t>(0, typical);
  t.fill(v);
  return t;
}

void fuzz_combine(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_combine_sampled_and_draft_tokens";
  g_cuda = rare(fdp, 16);
  cattn_combine_sampled_and_draft_tokens_args_t init = CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  init.num_new_sampled_tokens = rare(fdp, 16) ? pick_scalar(fdp, 0, 1)
                                                                             : fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  const int64_t ns = init.num_new_sampled_tokens;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t S = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  const std::vector<int64_t> qv = cumulative(fdp, B, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 6); }, true);
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  Tensor nreq = make_num_reqs(fdp, B);
  std::vector<int64_t> drafts(static_cast<size_t>(B));
  int64_t est = 0;
  for (auto& v : drafts) {
    v = count_value(fdp, S + (fdp.ConsumeIntegralInRange<int>(0, 7) == 0));
    if (v >= 0 && v < 100) est += v + 1;
  }
  Tensor nd = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? absent() : make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  nd.fill(drafts);
  const bool with_ids = fdp.ConsumeBool();
  const bool with_idx = with_ids ? !rare(fdp, 32) : fdp.ConsumeBool();
  Tensor imap = absent();
  if (with_idx) {
    std::vector<int64_t> idx(static_cast<size_t>(B));
    for (auto& v : idx) v = row_value(fdp, with_ids ? R : 10);
    imap = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
    imap.fill(idx);
  }
  Tensor sl = comb_input(fdp, with_ids, {B}, 40), pl = comb_input(fdp, with_ids, {R}, 40);
  Tensor last = comb_input(fdp, with_ids, {R}, 50000), dt = comb_input(fdp, with_ids, {R, S}, 50000);
  const int64_t qtotal = qv.back() >= 0 && qv.back() <= 200 ? qv.back() : 8;
  auto cap = [&](int64_t n) { return std::max<int64_t>(0, n + fdp.ConsumeIntegralInRange<int64_t>(-1, 3)); };
  Tensor li = make_tensor(fdp, {cap(est)}, pick_dtype(fdp), true);
  Tensor cu = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? absent() : make_tensor(fdp, {B + 1}, pick_dtype(fdp), true);
  Tensor ei = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? absent() : make_tensor(fdp, {cap(est)}, pick_dtype(fdp), true);
  Tensor ep = fdp.ConsumeIntegralInRange<int>(0, 2) == 0 ? absent() : make_tensor(fdp, {cap(est)}, pick_dtype(fdp), true);
  Tensor ids = with_ids ? make_tensor(fdp, {cap(qtotal)}, pick_dtype(fdp), true) : absent();
  alias(fdp, li, {&qsl, &nd, &imap, &sl});
  if (cu.exists) alias(fdp, cu, {&qsl, &nreq, &li});
  if (ei.exists) alias(fdp, ei, {&imap, &li, &cu});
  if (ep.exists) alias(fdp, ep, {&nd, &ei});
  if (ids.exists) alias(fdp, ids, {&last, &dt, &pl, &li});
  to_cuda({&qsl, &nreq, &nd, &imap, &sl, &pl, &last, &dt, &li, &cu, &ei, &ep, &ids});

  Args<cattn_combine_sampled_and_draft_tokens_args_t> args(fdp, init, CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_SIZE);
  auto* a = args.s.get();
  a->query_start_loc = qsl.cptr();
  a->num_reqs = nreq.cptr();
  a->num_draft_tokens = nd.cptr();
  a->idx_mapping = imap.cptr();
  a->seq_lens = sl.cptr();
  a->prefill_len = pl.cptr();
  a->last_sampled_tokens = last.cptr();
  a->draft_tokens = dt.cptr();
  a->logits_indices = li.ptr();
  a->cu_num_logits = cu.ptr();
  a->expanded_idx_mapping = ei.ptr();
  a->expanded_local_pos = ep.ptr();
  a->input_ids = ids.ptr();
  args.place(fdp, {&li, &cu, &ei, &ep, &ids});

  bool ok = args.ok(CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_SIZE) && (ns == 0 || ns == 1);
  ok = ok && index1(qsl) && scan_bounded(qsl) && qsl.dim(0) >= 1;
  const int64_t b_rows = ok ? qsl.dim(0) - 1 : 0;
  ok = ok && num_reqs_ok(nreq) && (!nd.exists || (index1(nd) && nd.dim(0) == b_rows));
  ok = ok && (imap.exists || (!ei.exists && !ids.exists));
  ok = ok && (!imap.exists || (index1(imap) && imap.dim(0) == b_rows));
  for (const Tensor* c : {&sl, &pl, &last, &dt}) ok = ok && c->exists == ids.exists;
  if (ok && ids.exists)
    ok = index1(sl) && sl.dim(0) == b_rows && index1(pl) && index1(last) && last.dim(0) == pl.dim(0) &&
         index_nd(dt, 2) && dt.dim(0) == pl.dim(0) && index1(ids) && writable(ids);
  ok = ok && index1(li) && writable(li);
  ok = ok && (!cu.exists || (index1(cu) && writable(cu) && cu.dim(0) == b_rows + 1));
  for (const Tensor* o : {&ei, &ep}) ok = ok && (!o->exists || (index1(*o) && writable(*o)));
  ok = ok && !any_overlap({&li, &cu, &ei, &ep, &ids}, {&qsl, &nreq, &nd, &imap, &sl, &pl, &last, &dt});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  int64_t n = 0;
  bool above_query = false;  // a live row with more logits than query tokens: vLLM's indices
  std::vector<int64_t> s, cul, rows;
  std::vector<std::pair<int64_t, int64_t>> id_writes;  // (token, id) in the order written
  if (ok) ok = live_rows(nreq, b_rows, &n);
  if (ok) {
    s.assign(static_cast<size_t>(b_rows + 1), 0);
    for (int64_t b = 0; ok && b <= n; ++b) {
      s[b] = qsl.get(b);
      ok = b == 0 ? s[b] == 0 : s[b] >= s[b - 1];
    }
    for (int64_t b = n; ok && b < b_rows; ++b) s[b + 1] = s[n];
    const int64_t persistent = ids.exists ? pl.dim(0) : kI64Max;
    for (int64_t b = 0; ok && b < n && imap.exists; ++b) {
      rows.push_back(imap.get(b));
      ok = rows[b] >= 0 && rows[b] < persistent;
    }
    cul.assign(static_cast<size_t>(b_rows + 1), 0);
    for (int64_t b = 0; ok && b < n; ++b) {
      const int64_t d = nd.exists ? nd.get(b) : 0;
      int64_t nb = 0;
      // A row's logits, or the total, past int64 are refused (they fit no output).
      ok = d >= 0 && !__builtin_add_overflow(ns, d, &nb) &&
           !__builtin_add_overflow(cul[b], nb, &cul[b + 1]);
      above_query = above_query || (ok && nb > s[b + 1] - s[b]);
    }
    // Every row's drafts fit draft_tokens' columns (checked once every count is summed).
    for (int64_t b = 0; ok && ids.exists && b < n; ++b) ok = cul[b + 1] - cul[b] - ns <= dt.dim(1);
    for (int64_t b = n; ok && b < b_rows; ++b) cul[b + 1] = cul[n];
    const int64_t total = ok ? cul[n] : 0;
    ok = ok && li.dim(0) >= total && (!ei.exists || ei.dim(0) >= total) && (!ep.exists || ep.dim(0) >= total);
    if (ok && cu.exists)
      for (int64_t v : cul) ok = ok && fits(cu, v);
    for (int64_t b = 0; ok && b < n; ++b) {
      const int64_t nb = cul[b + 1] - cul[b];
      for (int64_t j = 0; ok && j < nb; ++j)
        ok = fits(li, s[b + 1] - nb + j) && (!ei.exists || fits(ei, rows[b])) && (!ep.exists || fits(ep, j));
    }
    for (int64_t b = 0; ok && ids.exists && b < n; ++b) {
      const int64_t r = rows[b], nb = cul[b + 1] - cul[b], seq_len = sl.get(b), prefill = pl.get(r);
      if (seq_len <= prefill) continue;
      const int64_t end = s[b + 1], size = ids.dim(0);
      if (ns > 0 && static_cast<__int128>(seq_len) - nb >= prefill && end - nb >= 0 && end - nb < size)
        id_writes.push_back({end - nb, last.get(r)});
      const int64_t d = nb - ns;
      for (int64_t k = 0; k < d; ++k)
        if (end - d + k >= 0 && end - d + k < size) id_writes.push_back({end - d + k, at2(dt, r, k)});
    }
  }
  // Promise 2: a token id that does not fit input_ids is an error.
  bool ids_fit = true;
  for (const auto& wr : id_writes) ids_fit = ids_fit && fits(ids, wr.second);
  ok = ok && ids_fit;
  FZ_LOG("combine: ns %ld B %ld R %ld S %ld n %ld ids %d above_query %d predicted %d\n", (long)ns, (long)B,
         (long)R, (long)S, (long)n, with_ids, above_query, ok);
  for (Tensor* t : {&qsl, &nreq, &nd, &imap, &sl, &pl, &last, &dt, &li, &cu, &ei, &ep, &ids})
    FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&qsl, &nreq, &nd, &imap, &sl, &pl, &last, &dt, &li, &cu, &ei, &ep, &ids}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_combine_sampled_and_draft_tokens(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_cuda(st, fn, args_ok);
  if (!check_outcome(st, fn, ok, w)) return;
  if (cu.exists)
    for (int64_t i = 0; i <= b_rows; ++i) w.put(cu, i, cul[i]);
  const int64_t total = cul[n];
  for (const Tensor* o : {&li, &ei, &ep})
    if (o->exists)
      for (int64_t k = total; k < o->dim(0); ++k) w.put(*o, k, 0);
  for (int64_t b = 0; b < n; ++b) {
    const int64_t nb = cul[b + 1] - cul[b];
    for (int64_t j = 0; j < nb; ++j) {
      w.put(li, cul[b] + j, s[b + 1] - nb + j);
      if (ei.exists) w.put(ei, cul[b] + j, rows[b]);
      if (ep.exists) w.put(ep, cul[b] + j, j);
    }
  }
  for (const auto& wr : id_writes) w.put(ids, wr.first, wr.second);
  check_images(w, fn);
  if (cu.exists) {
    FZ_CHECK(cu.get(0) == 0, "cu_num_logits[0] is not 0");
    for (int64_t b = 0; b < b_rows; ++b)
      FZ_CHECK(b < n ? cu.get(b + 1) >= cu.get(b) : cu.get(b + 1) == total, "cu_num_logits breaks the padding contract");
  }
  for (int64_t k = total; k < li.dim(0); ++k) FZ_CHECK(li.get(k) == 0, "a logit past the total is not 0");
}

// ---- cattn_step_batch_check ----
void fuzz_check(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_step_batch_check";
  g_cuda = rare(fdp, 16);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  std::vector<int64_t> qv = cumulative(fdp, B, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 5); }, true);
  Tensor nreq = make_num_reqs(fdp, B);
  const int64_t n_guess = nreq.exists && nreq.usable() && nreq.t.data && nreq.numel > 0
                              ? std::min(std::max<int64_t>(nreq.get(0), 0), B) : B;
  // Mostly a batch that keeps the contract: padded rows flat.
  if (!rare(fdp, 4))
    for (int64_t b = n_guess; b < B; ++b) qv[b + 1] = qv[n_guess];
  if (rare(fdp, 16)) qv[fdp.ConsumeIntegralInRange<size_t>(0, qv.size() - 1)] = pick_value(fdp, 40);
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  const int64_t total = qv[n_guess];
  Tensor sl = absent();
  if (fdp.ConsumeBool()) {
    std::vector<int64_t> v(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b)
      v[b] = fdp.ConsumeIntegralInRange<int>(0, 11) == 0 ? pick_value(fdp, 40)
             : b < n_guess ? wrap_add(wrap_sub(qv[b + 1], qv[b]), fdp.ConsumeIntegralInRange<int64_t>(0, 30)) : 0;
    sl = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
    sl.fill(v);
  }
  Tensor tables[CATTN_MAX_KV_GROUPS], slots[CATTN_MAX_KV_GROUPS];
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    tables[g] = absent();
    slots[g] = absent();
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
      std::vector<int64_t> v(static_cast<size_t>(B * W));
      for (int64_t i = 0; i < B * W; ++i)
        v[i] = i / W >= n_guess && fdp.ConsumeIntegralInRange<int>(0, 7) != 0 ? 0 : pick_value(fdp, 100);
      tables[g] = make_tensor(fdp, {B, W}, pick_dtype(fdp), false, kHuge);
      tables[g].fill(v);
    }
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      const int64_t t0 = total >= 0 && total < 100 ? total : 4;
      const int64_t T = std::max<int64_t>(0, t0 + fdp.ConsumeIntegralInRange<int64_t>(-1, 4));
      std::vector<int64_t> v(static_cast<size_t>(T));
      for (int64_t i = 0; i < T; ++i)
        v[i] = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? wrap_sub(pick_value(fdp, 100), 1)
               : i >= total ? -1 : fdp.ConsumeIntegralInRange<int64_t>(-1, 500);
      slots[g] = make_tensor(fdp, {T}, pick_dtype(fdp), false, kHuge);
      slots[g].fill(v);
    }
  }
  Tensor status = make_tensor(fdp, {3}, pick_dtype(fdp), true);
  const int victim = fdp.ConsumeIntegralInRange<int>(0, 2 * CATTN_MAX_KV_GROUPS + 2);
  Tensor* target = victim == 0 ? &qsl : victim == 1 ? &nreq : victim == 2 ? &sl
                   : victim < 3 + CATTN_MAX_KV_GROUPS ? &tables[victim - 3] : &slots[victim - 3 - CATTN_MAX_KV_GROUPS];
  alias(fdp, status, {target}, 4);
  to_cuda({&qsl, &nreq, &sl, &status});
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) to_cuda({&tables[g], &slots[g]});

  Args<cattn_step_batch_check_args_t> args(fdp, CATTN_STEP_BATCH_CHECK_ARGS_INIT, CATTN_STEP_BATCH_CHECK_ARGS_SIZE);
  auto* a = args.s.get();
  a->query_start_loc = qsl.cptr();
  a->num_reqs = nreq.cptr();
  a->seq_lens = sl.cptr();
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    a->block_tables[g] = tables[g].cptr();
    a->slot_mappings[g] = slots[g].cptr();
  }
  a->status = status.ptr();
  args.place(fdp, {&status});

  bool ok = args.ok(CATTN_STEP_BATCH_CHECK_ARGS_SIZE) && index1(qsl) && qsl.dim(0) >= 1;
  const int64_t b_rows = ok ? qsl.dim(0) - 1 : 0;
  ok = ok && num_reqs_ok(nreq) && (!sl.exists || (index1(sl) && sl.dim(0) == b_rows));
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    ok = ok && (!tables[g].exists || (index_nd(tables[g], 2) && tables[g].dim(0) == b_rows));
    ok = ok && (!slots[g].exists || index1(slots[g]));
  }
  ok = ok && index1(status) && writable(status) && status.dim(0) == 3;
  bool overlap = false;
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g)
    overlap = overlap || overlaps(status, tables[g]) || overlaps(status, slots[g]);
  ok = ok && !overlap && !any_overlap({&status}, {&qsl, &nreq, &sl});
  // Promise 3: every input is read in full while three values are written, so a broadcast
  // view past the limit is refused.
  bool bounded = scan_bounded(qsl) && scan_bounded(sl);
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) bounded = bounded && scan_bounded(tables[g]) && scan_bounded(slots[g]);
  // Promise 3: every input is scanned in full, so a broadcast view past the limit is refused.
  ok = ok && bounded;
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  std::array<int64_t, 3> want{0, 0, 0};
  if (ok) {
    CheckIn in;
    in.qsl = &qsl, in.nreq = &nreq, in.sl = &sl;
    for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) in.tables[g] = &tables[g], in.slots[g] = &slots[g];
    want = reference_check(in);
    for (int64_t v : want) ok = ok && fits(status, v);
  }
  FZ_LOG("step_batch_check: B %ld predicted %d want {%ld, %ld, %ld}\n", (long)B, ok, (long)want[0],
         (long)want[1], (long)want[2]);
  FZ_LOG("  qsl %s\n  num_reqs %s\n  seq_lens %s\n  status %s\n", describe(qsl).c_str(), describe(nreq).c_str(),
         describe(sl).c_str(), describe(status).c_str());
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g)
    if (tables[g].exists || slots[g].exists)
      FZ_LOG("  group %d table %s\n    slots %s\n", g, describe(tables[g]).c_str(), describe(slots[g]).c_str());
  Watch w;
  for (Tensor* t : {&qsl, &nreq, &sl, &status}) w.add(t);
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) w.add(&tables[g]), w.add(&slots[g]);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_step_batch_check(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_cuda(st, fn, args_ok);
  if (!check_outcome(st, fn, ok, w)) return;
  for (int i = 0; i < 3; ++i) w.put(status, i, want[i]);
  check_images(w, fn);
  FZ_CHECK(status.get(0) >= CATTN_STEP_CHECK_OK && status.get(0) <= CATTN_STEP_CHECK_SLOT_MAPPING,
           "status field outside 0..5");
}

// ---- Race mode: a valid host call while another thread writes one of its inputs ----
// An input whose first byte is kRaceMode (no seed of the call modes starts with it) picks a call
// from the rest as the call modes do and builds a valid host call of it, every tensor in
// guarded memory of its own (race_tensor); race() (fuzz_support.h) then picks an element of an
// input - the ones that place writes first: num_reqs, query_start_loc, num_scheduled_tokens,
// idx_mapping, num_draft_tokens, positions, num_blocks, seq_lens, prefill_len - and the values
// another thread stores into it while the call runs a few times. Memory safety only: outputs and
// statuses may vary under the race (promise 5).
// No call below has two arguments that draw from the fuzzer's bytes: the order in which a call's
// arguments are evaluated is unspecified, and an input must mean the same to every compiler.
constexpr uint8_t kRaceMode = 0x6d;

Tensor race_in(FuzzedDataProvider& fdp, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  Tensor t = race_tensor(fdp, std::move(shape), pick_dtype(fdp), false);
  t.fill(v);
  return t;
}
Tensor race_out(FuzzedDataProvider& fdp, std::vector<int64_t> shape) {
  return race_tensor(fdp, std::move(shape), pick_dtype(fdp), true);
}
// Absent, or a [1] scalar in [0, B].
Tensor race_num_reqs(FuzzedDataProvider& fdp, int64_t B) {
  if (fdp.ConsumeBool()) return absent();
  return race_in(fdp, {1}, {fdp.ConsumeIntegralInRange<int64_t>(0, B)});
}
// `n` values of [lo, hi].
std::vector<int64_t> race_values(FuzzedDataProvider& fdp, int64_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
  return v;
}
// [0, l0, l0 + l1, ...] of B rows, the first `live` of them of lengths drawn by `len`, the
// rest empty (the padding contract).
template <class Len>
std::vector<int64_t> race_qsl(int64_t B, int64_t live, Len len) {
  std::vector<int64_t> v{0};
  for (int64_t b = 0; b < B; ++b) v.push_back(v.back() + (b < live ? len(b) : 0));
  return v;
}
int64_t live_of(const Tensor& nreq, int64_t B) { return nreq.exists ? nreq.get(0) : B; }

void race_prepare(FuzzedDataProvider& fdp) {
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 12);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(1, 12);
  const std::vector<int64_t> q = race_values(fdp, B, 0, 8);
  Tensor sched = race_in(fdp, {B}, q);
  Tensor imap = race_in(fdp, {B}, race_values(fdp, B, 0, R - 1));
  Tensor computed = race_in(fdp, {R}, race_values(fdp, R, 0, 64));
  Tensor nreq = race_num_reqs(fdp, B);
  int64_t total = 0;
  for (int64_t v : q) total += v;
  Tensor qsl = race_out(fdp, {B + 1}), seq = race_out(fdp, {B});
  const int64_t n_pos = total + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  Tensor pos = fdp.ConsumeBool() ? race_out(fdp, {n_pos}) : absent();
  Tensor bnct = fdp.ConsumeBool() ? race_out(fdp, {B}) : absent();
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = sched.cptr();
  a.idx_mapping = imap.cptr();
  a.num_computed_tokens = computed.cptr();
  a.num_reqs = nreq.cptr();
  a.query_start_loc = qsl.ptr();
  a.seq_lens = seq.ptr();
  a.positions = pos.ptr();
  a.batch_num_computed_tokens = bnct.ptr();
  RaceCall call;
  call.fn = "cattn_prepare_pos_seq_lens";
  call.inputs = {&sched, &imap, &computed, &nreq};
  call.outputs = {&qsl, &seq, &pos, &bnct};
  call.mutable_inputs = {{&nreq, "num_reqs"}, {&sched, "num_scheduled_tokens"},
                         {&imap, "idx_mapping"}, {&computed, "num_computed_tokens"}};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_prepare_pos_seq_lens(&a); });
}

void race_gather(FuzzedDataProvider& fdp) {
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 10);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(1, 10);
  const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  Tensor imap = race_in(fdp, {B}, race_values(fdp, B, 0, R - 1));
  Tensor nreq = race_num_reqs(fdp, B);
  Tensor tab = race_in(fdp, {R, W}, race_values(fdp, R * W, 0, 1000));
  Tensor blocks = fdp.ConsumeBool() ? race_in(fdp, {R}, race_values(fdp, R, 0, W)) : absent();
  Tensor out = race_out(fdp, {B, W});
  cattn_gather_block_tables_args_t a = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
  a.idx_mapping = imap.cptr();
  a.num_reqs = nreq.cptr();
  a.block_table = tab.cptr();
  a.num_blocks = blocks.cptr();
  a.out = out.ptr();
  RaceCall call;
  call.fn = "cattn_gather_block_tables";
  call.inputs = {&imap, &nreq, &tab, &blocks};
  call.outputs = {&out};
  call.mutable_inputs = {{&nreq, "num_reqs"}, {&imap, "idx_mapping"}, {&blocks, "num_blocks"},
                         {&tab, "block_table"}};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_gather_block_tables(&a); });
}

void race_slots(FuzzedDataProvider& fdp) {
  cattn_compute_slot_mappings_args_t a = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  const bool v1 = fdp.ConsumeBool();
  a.contract = v1 ? CATTN_SLOT_MAPPING_V1 : CATTN_SLOT_MAPPING_MRV2;
  const int64_t kbs = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
  const int64_t ratio = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  const int64_t dcp = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  a.kernel_block_size = kbs;
  a.block_size = kbs * ratio;
  a.dcp_size = dcp;
  a.dcp_rank = fdp.ConsumeIntegralInRange<int64_t>(0, dcp - 1);
  a.dcp_kv_cache_interleave_size = 1;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  Tensor nreq = race_num_reqs(fdp, B);
  const int64_t live = live_of(nreq, B);
  const std::vector<int64_t> qv =
      race_qsl(B, live, [&](int64_t) { return fdp.ConsumeIntegralInRange<int64_t>(0, 5); });
  Tensor qsl = race_in(fdp, {B + 1}, qv);
  // Positions inside the table's reach: V1 reads its batch rows by virtual blocks of
  // block_size x dcp_size tokens, ratio columns each; MRV2 persistent rows by kernel blocks of
  // kernel_block_size x dcp_size tokens.
  const int64_t rows = v1 ? B : fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t W = v1 ? ratio * fdp.ConsumeIntegralInRange<int64_t>(1, 3)
                       : fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  const int64_t reach = v1 ? W / ratio * a.block_size * dcp : W * kbs * dcp;
  Tensor tab = race_in(fdp, {rows, W}, race_values(fdp, rows * W, 0, 1000));
  Tensor imap = v1 ? absent() : race_in(fdp, {B}, race_values(fdp, B, 0, rows - 1));
  const int64_t total = qv.back();
  const int64_t n_pos = total + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  Tensor pos = race_in(fdp, {n_pos}, race_values(fdp, total + 3, 0, reach - 1));
  Tensor out = race_tensor(fdp, {total + fdp.ConsumeIntegralInRange<int64_t>(0, 3)}, i64(), true);
  a.query_start_loc = qsl.cptr();
  a.num_reqs = nreq.cptr();
  a.positions = pos.cptr();
  a.idx_mapping = imap.cptr();
  a.block_table = tab.cptr();
  a.slot_mapping = out.ptr();
  RaceCall call;
  call.fn = "cattn_compute_slot_mappings";
  call.inputs = {&qsl, &nreq, &pos, &imap, &tab};
  call.outputs = {&out};
  call.mutable_inputs = {{&nreq, "num_reqs"}, {&qsl, "query_start_loc"}, {&pos, "positions"},
                         {&imap, "idx_mapping"}, {&tab, "block_table"}};
  call.typical = 32;
  race(fdp, call, [&] { return cattn_compute_slot_mappings(&a); });
}

void race_combine(FuzzedDataProvider& fdp) {
  cattn_combine_sampled_and_draft_tokens_args_t a =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  const int64_t ns = fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  a.num_new_sampled_tokens = ns;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t R = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t S = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  Tensor nreq = race_num_reqs(fdp, B);
  const int64_t live = live_of(nreq, B);
  const std::vector<int64_t> drafts = race_values(fdp, B, 0, S);
  // Each live row's query holds its logits (mostly).
  const std::vector<int64_t> qv = race_qsl(B, live, [&](int64_t b) {
    return ns + drafts[static_cast<size_t>(b)] + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  });
  Tensor qsl = race_in(fdp, {B + 1}, qv);
  Tensor nd = race_in(fdp, {B}, drafts);
  Tensor imap = race_in(fdp, {B}, race_values(fdp, B, 0, R - 1));
  // Mostly the token combination (input_ids and its four inputs) too.
  const bool ids_too = !rare(fdp, 4);
  Tensor sl = ids_too ? race_in(fdp, {B}, race_values(fdp, B, 0, 40)) : absent();
  Tensor pl = ids_too ? race_in(fdp, {R}, race_values(fdp, R, 0, 40)) : absent();
  Tensor last = ids_too ? race_in(fdp, {R}, race_values(fdp, R, 0, 50000)) : absent();
  Tensor dt = ids_too ? race_in(fdp, {R, S}, race_values(fdp, R * S, 0, 50000)) : absent();
  int64_t logits = 0;
  for (int64_t b = 0; b < live; ++b) logits += ns + drafts[static_cast<size_t>(b)];
  Tensor li = race_out(fdp, {logits + fdp.ConsumeIntegralInRange<int64_t>(0, 2)});
  Tensor cu = fdp.ConsumeBool() ? race_out(fdp, {B + 1}) : absent();
  Tensor ei = fdp.ConsumeBool() ? race_out(fdp, {logits}) : absent();
  Tensor ep = fdp.ConsumeBool() ? race_out(fdp, {logits}) : absent();
  Tensor ids = ids_too ? race_out(fdp, {qv.back() + fdp.ConsumeIntegralInRange<int64_t>(0, 2)})
                       : absent();
  a.query_start_loc = qsl.cptr();
  a.num_reqs = nreq.cptr();
  a.num_draft_tokens = nd.cptr();
  a.idx_mapping = imap.cptr();
  a.seq_lens = sl.cptr();
  a.prefill_len = pl.cptr();
  a.last_sampled_tokens = last.cptr();
  a.draft_tokens = dt.cptr();
  a.logits_indices = li.ptr();
  a.cu_num_logits = cu.ptr();
  a.expanded_idx_mapping = ei.ptr();
  a.expanded_local_pos = ep.ptr();
  a.input_ids = ids.ptr();
  RaceCall call;
  call.fn = "cattn_combine_sampled_and_draft_tokens";
  call.inputs = {&qsl, &nreq, &nd, &imap, &sl, &pl, &last, &dt};
  call.outputs = {&li, &cu, &ei, &ep, &ids};
  call.mutable_inputs = {{&nreq, "num_reqs"},  {&qsl, "query_start_loc"},
                         {&nd, "num_draft_tokens"}, {&imap, "idx_mapping"},
                         {&sl, "seq_lens"}, {&pl, "prefill_len"},
                         {&last, "last_sampled_tokens"}, {&dt, "draft_tokens"}};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_combine_sampled_and_draft_tokens(&a); });
}

constexpr const char* kTableNames[CATTN_MAX_KV_GROUPS] = {
    "block_tables[0]", "block_tables[1]", "block_tables[2]", "block_tables[3]",
    "block_tables[4]", "block_tables[5]", "block_tables[6]", "block_tables[7]"};
constexpr const char* kSlotNames[CATTN_MAX_KV_GROUPS] = {
    "slot_mappings[0]", "slot_mappings[1]", "slot_mappings[2]", "slot_mappings[3]",
    "slot_mappings[4]", "slot_mappings[5]", "slot_mappings[6]", "slot_mappings[7]"};
void race_check(FuzzedDataProvider& fdp) {
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  Tensor nreq = race_num_reqs(fdp, B);
  const int64_t live = live_of(nreq, B);
  const std::vector<int64_t> qv =
      race_qsl(B, live, [&](int64_t) { return fdp.ConsumeIntegralInRange<int64_t>(0, 5); });
  Tensor qsl = race_in(fdp, {B + 1}, qv);
  Tensor sl = absent();
  if (fdp.ConsumeBool()) {
    std::vector<int64_t> v(static_cast<size_t>(B), 0);
    for (int64_t b = 0; b < live; ++b)
      v[b] = qv[b + 1] - qv[b] + fdp.ConsumeIntegralInRange<int64_t>(0, 30);
    sl = race_in(fdp, {B}, v);
  }
  const int64_t total = qv[live];
  Tensor tables[CATTN_MAX_KV_GROUPS], slots[CATTN_MAX_KV_GROUPS];
  cattn_step_batch_check_args_t a = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  RaceCall call;
  call.fn = "cattn_step_batch_check";
  call.inputs = {&qsl, &nreq, &sl};
  call.mutable_inputs = {{&nreq, "num_reqs"}, {&qsl, "query_start_loc"}, {&sl, "seq_lens"}};
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    tables[g] = absent();
    slots[g] = absent();
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
      std::vector<int64_t> v = race_values(fdp, B * W, 0, 100);
      for (int64_t i = live * W; i < B * W; ++i) v[i] = 0;  // padded rows 0
      tables[g] = race_in(fdp, {B, W}, v);
    }
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      const int64_t T = total + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
      std::vector<int64_t> v = race_values(fdp, T, -1, 500);
      for (int64_t i = total; i < T; ++i) v[i] = -1;
      slots[g] = race_in(fdp, {T}, v);
    }
    a.block_tables[g] = tables[g].cptr();
    a.slot_mappings[g] = slots[g].cptr();
    call.inputs.push_back(&tables[g]);
    call.inputs.push_back(&slots[g]);
    call.mutable_inputs.push_back({&tables[g], kTableNames[g]});
    call.mutable_inputs.push_back({&slots[g], kSlotNames[g]});
  }
  Tensor status = race_out(fdp, {3});
  a.query_start_loc = qsl.cptr();
  a.num_reqs = nreq.cptr();
  a.seq_lens = sl.cptr();
  a.status = status.ptr();
  call.outputs = {&status};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_step_batch_check(&a); });
}

void race_mode(FuzzedDataProvider& fdp) {
  if (kUnderTsan) return;  // TSan would report the race itself
  g_cuda = false;
  switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: race_prepare(fdp); break;
    case 1: race_gather(fdp); break;
    case 2: race_slots(fdp); break;
    case 3: race_combine(fdp); break;
    default: race_check(fdp); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0 && data[0] == kRaceMode) {
    FuzzedDataProvider fdp(data + 1, size - 1);
    race_mode(fdp);
    return 0;
  }
  FuzzedDataProvider fdp(data, size);
  switch (fdp.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: fuzz_prepare(fdp); break;
    case 1: fuzz_gather(fdp); break;
    case 2: fuzz_slots(fdp); break;
    case 3: fuzz_combine(fdp); break;
    default: fuzz_check(fdp); break;
  }
  return 0;
}
