// SPDX-License-Identifier: Apache-2.0
// Fuzz target for EAGLE's speculative-decoding metadata (1.2):
// cattn_eagle_step_update_slot_mapping_and_metadata, cattn_eagle_prepare_inputs_padded,
// cattn_eagle_prepare_next_token_padded, cattn_compute_new_slot_mapping,
// cattn_copy_and_expand_eagle_inputs and cattn_update_num_computed_tokens_for_batch_change (the
// first value FuzzedDataProvider draws, the input's last byte, picks the call). Random batches
// of B rows: positions at, below and past -1 and max_model_len, block tables narrower than the
// positions' reach (the flattened table read into the next row), decreasing cumulative sums,
// query_end_loc outside its request, targets shorter than query_start_loc, prev_positions past
// both previous tables, values at the int32 and int64 edges; block sizes, max_model_len,
// num_new_tokens, P, shift and reserved fields as arbitrary integers; tensors int32/int64 (flag
// tensors bool/uint8/int8), strided, broadcast (huge where the call may be given one), empty,
// structurally broken or marked CUDA (refused by this CPU-only build); outputs over inputs' and
// each other's memory and over the args struct, out_clamped_positions as positions' very view
// or a near miss of it; every struct_size boundary.
//
// Every call: a status among the ones the header documents (CATTN_NOT_SUPPORTED only where a
// tensor is on a device or has a width this build cannot serve), a message naming the function
// and then the argument (the args struct or one of its fields) on failure, inputs never written,
// nothing written on failure (guard bytes, poison between strided elements and entries past the
// documented ranges included), success exactly when the header's rules allow it. A success is
// checked byte for byte against a reference written from the header's formulas: only the
// documented outputs change, only within their documented ranges (slots B to
// input_batch_size - 1 get -1, entries from B on are left; new_slot_mapping[0, n); the counts
// [0, n) of the batch change, the accepted ones of carried rows only).
//
// Intermediates: each formula is evaluated in int64 as the header writes it, left to right, and
// an intermediate that overflows int64 is refused ("a value out of range"); copy_and_expand's
// rejected tail has position 0, so `target_positions[start] + j` must fit only before it.
//
// Race mode (an input whose first byte is 0x6d, kRaceMode): a valid host call of one of the six
// while another thread writes one element of one of its inputs (query_start_loc, query_end_loc,
// prev_positions, positions, the masks, the in-and-out counts, ...); memory safety only, as
// fuzz_concurrent_mutation checks it. Every other input keeps the format above.
#include <cctype>
#include <cstring>

#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
// DLPack's kDLBool, which older dlpack.h releases do not name.
constexpr uint8_t kBoolCode = 6;

DLDataType pick_dtype(FuzzedDataProvider& fdp) { return fdp.ConsumeBool() ? i64() : i32(); }
// One byte per entry: bool, uint8 or int8.
DLDataType pick_flag_dtype(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: return {kBoolCode, 8, 1};
    case 1: return {kDLUInt, 8, 1};
    default: return {kDLInt, 8, 1};
  }
}
bool is_flag_dtype(DLDataType d) {
  return d.bits == 8 && d.lanes == 1 && (d.code == kBoolCode || d.code == kDLUInt || d.code == kDLInt);
}
// Now and then every tensor of a call is marked CUDA (g_cuda): this CPU-only build must then
// answer a call whose arguments pass every check with CATTN_NOT_SUPPORTED, before any kernel
// and without reading a value (promise 7), and refuse any other one.
bool g_cuda = false;
bool index_nd(const Tensor& t, int nd) {
  return t.usable() && t.ndim() == nd && t.index() && (g_cuda || !t.device);
}
bool index1(const Tensor& t) { return index_nd(t, 1); }
// A 1-D index output: writable (no zero stride).
bool index_out(const Tensor& t) { return index1(t) && writable(t); }
// A 1-D flag tensor (an output: writable).
bool flags1(const Tensor& t) {
  return t.usable() && t.ndim() == 1 && is_flag_dtype(t.t.dtype) && (g_cuda || !t.device);
}
bool flags_out(const Tensor& t) { return flags1(t) && writable(t); }
bool is_int64_dtype(const Tensor& t) {
  return t.t.dtype.code == kDLInt && t.t.dtype.bits == 64 && t.t.dtype.lanes == 1;
}
// A slot-mapping output: 1-D int64, writable.
bool slot_out(const Tensor& t) {
  return t.usable() && t.ndim() == 1 && is_int64_dtype(t) && writable(t) && (g_cuda || !t.device);
}
void to_cuda(std::initializer_list<Tensor*> ts) {
  if (!g_cuda) return;
  // Only valid tensors: a broken one may point at a placeholder smaller than its claim.
  for (Tensor* t : ts)
    if (t->usable()) {
      set_device(t->t.device, kDLCUDA, 0);
      derive(*t);
    }
}

// A value: mostly in [lo, hi], sometimes anything (-1, the int32 and int64 edges, ...).
int64_t val(FuzzedDataProvider& fdp, int64_t lo, int64_t hi) {
  return rare(fdp, 12) ? pick_value(fdp, hi) : fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
}
// An output's length for `n` entries: mostly n to n + 2, sometimes one short.
int64_t cap(FuzzedDataProvider& fdp, int64_t n) {
  if (n < 0 || n > 4096) n = 4;
  return rare(fdp, 10) ? std::max<int64_t>(0, n - 1) : n + fdp.ConsumeIntegralInRange<int64_t>(0, 2);
}

int64_t wrap_minus_one(int64_t a) { return wrap_add(a, -1); }

// int64 arithmetic that reports overflow instead of wrapping.
bool add_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }
bool sub_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_sub_overflow(a, b, r); }
bool mul_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }
// block * block_size + pos % block_size (pos >= 0), each step in int64.
bool slot_ok(int64_t block, int64_t pos, int64_t block_size, int64_t* slot) {
  int64_t m;  // a negative block has no slot, as one past int64 has none
  return block >= 0 && mul_ok(block, block_size, &m) && add_ok(m, pos % block_size, slot);
}

// Flag i of a present flag tensor (nonzero = set); an absent one reads as unset.
bool flag(const Tensor& t, int64_t i) { return t.exists && t.get(i) != 0; }



// The checks this target adds to check_outcome's, for a call whose tensors are `all`:
// - the status is one the header documents for these calls (CUDA_ERROR never: no device
//   here), CATTN_NOT_SUPPORTED only where some tensor is on a device or of a width the build
//   cannot serve;
// - with every tensor on CUDA and valid arguments, CATTN_NOT_SUPPORTED;
// - a failure's message is "<fn>: args..." naming the struct itself or one of `fields` (the
//   CPU-only build's answer to CUDA tensors names no argument).
void check_call(cattn_status_t s, const char* fn, bool args_ok, std::initializer_list<const Tensor*> all,
                std::initializer_list<const char*> fields) {
  FZ_LOG("  -> %s %s\n", cattn_status_string(s), s == CATTN_OK ? "" : cattn_last_error_message());
  int code;
  std::memcpy(&code, &s, sizeof code);
  FZ_CHECK(code == CATTN_OK || code == CATTN_INVALID_ARGUMENT || code == CATTN_INSUFFICIENT_SIZE ||
               code == CATTN_NOT_SUPPORTED,
           std::string(fn) + " returned " + cattn_status_string(s) + ", which its declaration does not list");
  bool cuda = false, unservable = false;
  for (const Tensor* t : all) {
    if (!t->exists) continue;
    const int32_t type = t->device_type();
    cuda = cuda || cuda_type(type);
    unservable = unservable || (!host_type(type) && !cuda_type(type)) ||
                 !(t->t.dtype.bits == 8 || t->t.dtype.bits == 16 || t->t.dtype.bits == 32 || t->t.dtype.bits == 64);
  }
  if (s == CATTN_NOT_SUPPORTED)
    FZ_CHECK(cuda || unservable, std::string(fn) + " returned CATTN_NOT_SUPPORTED for host tensors of valid widths");
  if (g_cuda && args_ok)
    FZ_CHECK(s == CATTN_NOT_SUPPORTED, std::string(fn) + " on CUDA tensors in a CPU-only build returned " +
                                           cattn_status_string(s) + ", expected CATTN_NOT_SUPPORTED");
  if (s == CATTN_OK) return;
  const std::string m = cattn_last_error_message();
  if (s == CATTN_NOT_SUPPORTED && cuda && m.find(": CUDA tensors need") != std::string::npos) return;
  const std::string head = std::string(fn) + ": args";
  FZ_CHECK(m.compare(0, head.size(), head) == 0, std::string("the message does not name an argument of ") + fn);
  const std::string rest = m.substr(head.size());
  bool named = rest.empty() || rest[0] == ' ';  // the struct itself
  for (const char* f : fields) {
    const std::string a = std::string("->") + f;
    if (rest.compare(0, a.size(), a) == 0 &&
        (rest.size() == a.size() || !(std::isalnum(static_cast<unsigned char>(rest[a.size()])) || rest[a.size()] == '_')))
      named = true;
  }
  FZ_CHECK(named, std::string("the message names no field of ") + fn + "'s args");
}

// ---- cattn_eagle_step_update_slot_mapping_and_metadata ----
void fuzz_eagle_step(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_eagle_step_update_slot_mapping_and_metadata";
  g_cuda = rare(fdp, 16);
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t init =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  init.block_size = pick_scalar(fdp, 1, 8);
  init.max_model_len = pick_scalar(fdp, 1, 40);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t W = rare(fdp, 8) ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 5);
  init.input_batch_size = fdp.ConsumeBool()  ? 0
                          : rare(fdp, 8)     ? pick_scalar(fdp, 0, B + 2)
                                             : B + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  const int64_t mml = init.max_model_len;
  const int64_t reach = mml >= 1 && mml <= 64 ? mml + 1 : 48;
  std::vector<int64_t> pv(static_cast<size_t>(B)), sv(pv.size()), tv(static_cast<size_t>(B * W));
  for (auto& v : pv) v = rare(fdp, 12) ? wrap_minus_one(pick_value(fdp, reach)) : fdp.ConsumeIntegralInRange<int64_t>(-1, reach);
  for (auto& v : sv) v = val(fdp, 0, reach);
  for (auto& v : tv) v = val(fdp, 0, 1000);
  Tensor pos = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  pos.fill(pv);
  Tensor tab = make_tensor(fdp, {B, W}, pick_dtype(fdp), false, kHuge);
  tab.fill(tv);
  Tensor seq = make_tensor(fdp, {B}, pick_dtype(fdp), true);
  // out_clamped_positions: now and then positions' very view, or a near miss of it.
  const bool in_place = pos.usable() && pos.t.data && rare(fdp, 4);
  Tensor clamped = in_place ? view_of(fdp, pos, true) : make_tensor(fdp, {cap(fdp, B)}, pick_dtype(fdp), true);
  const int64_t ibs_guess = init.input_batch_size >= B && init.input_batch_size <= B + 8 ? init.input_batch_size : B;
  Tensor slots = make_tensor(fdp, {cap(fdp, ibs_guess)}, rare(fdp, 16) ? i32() : i64(), true);
  alias(fdp, seq, {&pos, &tab});
  if (!in_place) alias(fdp, clamped, {&pos, &tab, &seq});
  alias(fdp, slots, {&pos, &tab, &seq, &clamped});
  seq.fill(sv);  // in and out: its values are written where it now lies
  to_cuda({&pos, &tab, &seq, &clamped, &slots});

  Args<cattn_eagle_step_update_slot_mapping_and_metadata_args_t> args(
      fdp, init, CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_SIZE);
  auto* a = args.s.get();
  a->positions = pos.cptr();
  a->block_table = tab.cptr();
  a->seq_lens = seq.ptr();
  a->out_clamped_positions = clamped.ptr();
  a->out_slot_mapping = slots.ptr();
  args.place(fdp, {&seq, &clamped, &slots});

  const auto& p = init;
  bool ok = args.ok(CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_SIZE) && p.block_size >= 1 &&
            p.max_model_len >= 1 && index1(pos);
  const int64_t b_rows = ok ? pos.dim(0) : 0;
  ok = ok && index_nd(tab, 2) && tab.dim(0) == b_rows && (b_rows == 0 || tab.dim(1) >= 1);
  ok = ok && index_out(seq) && seq.dim(0) == b_rows;
  ok = ok && index_out(clamped) && clamped.dim(0) >= b_rows;
  const int64_t ibs = p.input_batch_size == 0 ? b_rows : p.input_batch_size;
  ok = ok && ibs >= b_rows && slot_out(slots) && slots.dim(0) >= ibs;
  // Row i reads positions[i] before it writes out_clamped_positions[i]: the very view is allowed.
  ok = ok && !any_overlap({&seq, &clamped, &slots}, {&pos, &tab}, &clamped, &pos);
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  std::vector<int64_t> cl, sl, sq;
  for (int64_t i = 0; ok && i < b_rows; ++i) {
    const int64_t pi = pos.get(i);
    int64_t next = 0, slot = -1, s = 1;
    ok = pi >= -1 && add_ok(pi, 1, &next);  // below -1, vLLM would read before the row
    const bool out = next >= p.max_model_len;
    if (ok && !out) {
      const int64_t col = std::min(next / p.block_size, tab.dim(1) - 1);
      ok = slot_ok(at2(tab, i, col), next, p.block_size, &slot) && add_ok(seq.get(i), 1, &s);
      s = std::min(s, p.max_model_len);
    }
    ok = ok && fits(clamped, out ? 0 : next) && fits(seq, s);
    cl.push_back(out ? 0 : next);
    sl.push_back(slot);
    sq.push_back(s);
  }
  FZ_LOG("eagle_step: bs %ld mml %ld ibs %ld B %ld W %ld in_place %d predicted %d\n", (long)p.block_size,
         (long)p.max_model_len, (long)p.input_batch_size, (long)B, (long)W, in_place, ok);
  for (Tensor* t : {&pos, &tab, &seq, &clamped, &slots}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&pos, &tab, &seq, &clamped, &slots}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_eagle_step_update_slot_mapping_and_metadata(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&pos, &tab, &seq, &clamped, &slots},
             {"block_size", "max_model_len", "input_batch_size", "positions", "block_table", "seq_lens",
              "out_clamped_positions", "out_slot_mapping"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t i = 0; i < b_rows; ++i) {
    w.put(clamped, i, cl[i]);
    w.put(slots, i, sl[i]);
    w.put(seq, i, sq[i]);
  }
  for (int64_t i = b_rows; i < ibs; ++i) w.put(slots, i, CATTN_PAD_SLOT_ID);
  check_images(w, fn);
}

// ---- cattn_eagle_prepare_inputs_padded ----
void fuzz_prepare_inputs(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_eagle_prepare_inputs_padded";
  g_cuda = rare(fdp, 16);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  // Drafts per request, their inclusive sum, accepted + 1 per request, and a verified batch
  // whose queries hold the drafts and the bonus (mostly).
  std::vector<int64_t> d(static_cast<size_t>(B)), cu, valid, qv{0};
  int64_t sum = rare(fdp, 8) ? val(fdp, 0, 8) : 0;
  for (auto& x : d) {
    x = rare(fdp, 10) ? pick_value(fdp, 4) : fdp.ConsumeIntegralInRange<int64_t>(0, 4);
    sum = wrap_add(sum, x);
    cu.push_back(sum);
    valid.push_back(val(fdp, 0, x >= 0 && x < 8 ? x + 1 : 1));
  }
  if (!cu.empty() && rare(fdp, 12)) cu[fdp.ConsumeIntegralInRange<size_t>(0, cu.size() - 1)] = pick_value(fdp, 20);
  qv[0] = rare(fdp, 8) ? val(fdp, 0, 8) : 0;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t need = d[i] >= 0 && d[i] < 8 ? d[i] + 1 : 1;
    qv.push_back(wrap_add(qv.back(), rare(fdp, 6) ? val(fdp, 0, 9) : need));
  }
  for (int64_t k = fdp.ConsumeIntegralInRange<int64_t>(0, 2); k > 0; --k) qv.push_back(val(fdp, 0, 60));
  if (rare(fdp, 12)) qv[fdp.ConsumeIntegralInRange<size_t>(0, qv.size() - 1)] = pick_value(fdp, 40);
  Tensor cut = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  cut.fill(cu);
  Tensor vt = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  vt.fill(valid);
  Tensor qsl = make_tensor(fdp, {static_cast<int64_t>(qv.size())}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  Tensor idx = make_tensor(fdp, {cap(fdp, B)}, pick_dtype(fdp), true);
  Tensor rej = make_tensor(fdp, {cap(fdp, B)}, pick_dtype(fdp), true);
  alias(fdp, idx, {&cut, &vt, &qsl});
  alias(fdp, rej, {&cut, &vt, &qsl, &idx});
  to_cuda({&cut, &vt, &qsl, &idx, &rej});

  Args<cattn_eagle_prepare_inputs_padded_args_t> args(fdp, CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT,
                                                      CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_SIZE);
  auto* a = args.s.get();
  a->cu_num_draft_tokens = cut.cptr();
  a->valid_sampled_tokens_count = vt.cptr();
  a->query_start_loc = qsl.cptr();
  a->token_indices_to_sample = idx.ptr();
  a->num_rejected_tokens = rej.ptr();
  args.place(fdp, {&idx, &rej});

  bool ok = args.ok(CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_SIZE) && index1(cut);
  const int64_t b_rows = ok ? cut.dim(0) : 0;
  ok = ok && index1(vt) && vt.dim(0) == b_rows && index1(qsl) && qsl.dim(0) >= b_rows + 1;
  ok = ok && index_out(idx) && idx.dim(0) >= b_rows && index_out(rej) && rej.dim(0) >= b_rows;
  ok = ok && !any_overlap({&idx, &rej}, {&cut, &vt, &qsl});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  // The header's definitions: d from the inclusive sum, rejected = d > 0 ? d + 1 - valid : 0,
  // the token to sample query_start_loc[i + 1] - 1 - rejected.
  std::vector<int64_t> sample, rejected;
  for (int64_t i = 0; ok && i < b_rows; ++i) {
    int64_t di = cut.get(0), r = 0, t1 = 0, s = 0, q1 = 0;
    if (i > 0) ok = sub_ok(cut.get(i), cut.get(i - 1), &di);
    // A valid count outside [0, d + 1] (a negative rejected count) is refused.
    if (ok && di > 0)
      ok = add_ok(di, 1, &t1) && vt.get(i) >= 0 && vt.get(i) <= t1 && sub_ok(t1, vt.get(i), &r);
    ok = ok && sub_ok(qsl.get(i + 1), 1, &q1) && sub_ok(q1, r, &s);
    ok = ok && fits(idx, s) && fits(rej, r);
    sample.push_back(s);
    rejected.push_back(r);
  }
  FZ_LOG("eagle_prepare_inputs_padded: B %ld predicted %d\n", (long)B, ok);
  for (Tensor* t : {&cut, &vt, &qsl, &idx, &rej}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&cut, &vt, &qsl, &idx, &rej}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_eagle_prepare_inputs_padded(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&cut, &vt, &qsl, &idx, &rej},
             {"cu_num_draft_tokens", "valid_sampled_tokens_count", "query_start_loc", "token_indices_to_sample",
              "num_rejected_tokens"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t i = 0; i < b_rows; ++i) {
    w.put(idx, i, sample[i]);
    w.put(rej, i, rejected[i]);
  }
  check_images(w, fn);
}

// ---- cattn_eagle_prepare_next_token_padded ----
void fuzz_next_token(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_eagle_prepare_next_token_padded";
  g_cuda = rare(fdp, 16);
  cattn_eagle_prepare_next_token_padded_args_t init = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  init.vocab_size = pick_scalar(fdp, 1, 50);
  const int64_t vocab = init.vocab_size;
  const int64_t top = vocab >= 0 && vocab <= 64 ? vocab + 2 : 50;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t S = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  // The rejection sampler's layout: an accepted prefix, -1 after it; sometimes holes, tokens
  // at or past vocab_size and other negatives.
  std::vector<int64_t> sampled(static_cast<size_t>(B * S), -1), backup(static_cast<size_t>(B)), discard;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t accepted = fdp.ConsumeIntegralInRange<int64_t>(0, S);
    const bool holes = rare(fdp, 4);
    for (int64_t j = 0; j < S; ++j)
      if (j < accepted || holes) sampled[b * S + j] = val(fdp, -1, top);
    backup[b] = val(fdp, 0, top);
  }
  const bool with_discard = !rare(fdp, 3);
  for (int64_t b = 0; b < B; ++b) discard.push_back(rare(fdp, 5) ? fdp.ConsumeIntegralInRange<int64_t>(1, 255) : 0);
  Tensor st_ids = make_tensor(fdp, {B, S}, pick_dtype(fdp), false, kHuge);
  st_ids.fill(sampled);
  Tensor disc = with_discard ? make_tensor(fdp, {B}, pick_flag_dtype(fdp), false, kHuge) : absent();
  disc.fill(discard);
  Tensor bk = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  bk.fill(backup);
  Tensor next = make_tensor(fdp, {cap(fdp, B)}, pick_dtype(fdp), true);
  Tensor valid = make_tensor(fdp, {cap(fdp, B)}, pick_dtype(fdp), true);
  alias(fdp, next, {&st_ids, &disc, &bk});
  alias(fdp, valid, {&st_ids, &disc, &bk, &next});
  to_cuda({&st_ids, &disc, &bk, &next, &valid});

  Args<cattn_eagle_prepare_next_token_padded_args_t> args(fdp, init, CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_SIZE);
  auto* a = args.s.get();
  a->sampled_token_ids = st_ids.cptr();
  a->discard_request_mask = disc.cptr();
  a->backup_next_token_ids = bk.cptr();
  a->next_token_ids = next.ptr();
  a->valid_sampled_tokens_count = valid.ptr();
  args.place(fdp, {&next, &valid});

  bool ok = args.ok(CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_SIZE) && vocab >= 1 && index_nd(st_ids, 2);
  const int64_t b_rows = ok ? st_ids.dim(0) : 0, cols = ok ? st_ids.dim(1) : 0;
  ok = ok && (!disc.exists || (flags1(disc) && disc.dim(0) == b_rows));
  ok = ok && index1(bk) && bk.dim(0) == b_rows;
  ok = ok && index_out(next) && next.dim(0) >= b_rows && index_out(valid) && valid.dim(0) >= b_rows;
  ok = ok && !any_overlap({&next, &valid}, {&st_ids, &disc, &bk});
  // Promise 3: sampled_token_ids is read in full (every column of a row) where one value per
  // row is written, so a broadcast view past the limit is refused.
  ok = ok && scan_bounded(st_ids);
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  // A discarded request: its backup and 0 valid; otherwise the tokens other than -1 and below
  // vocab_size count, and the next token is the valid one at the highest column (the backup
  // when none is).
  std::vector<int64_t> nt, vc;
  for (int64_t b = 0; ok && b < b_rows; ++b) {
    int64_t count = 0, tok = bk.get(b);
    if (!flag(disc, b))
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t v = at2(st_ids, b, j);
        if (v != -1 && v < vocab) ++count, tok = v;
      }
    ok = fits(next, tok) && fits(valid, count);
    nt.push_back(tok);
    vc.push_back(count);
  }
  FZ_LOG("eagle_prepare_next_token_padded: vocab %ld B %ld S %ld predicted %d\n", (long)vocab, (long)B, (long)S, ok);
  for (Tensor* t : {&st_ids, &disc, &bk, &next, &valid}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&st_ids, &disc, &bk, &next, &valid}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_eagle_prepare_next_token_padded(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&st_ids, &disc, &bk, &next, &valid},
             {"vocab_size", "sampled_token_ids", "discard_request_mask", "backup_next_token_ids", "next_token_ids",
              "valid_sampled_tokens_count"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t b = 0; b < b_rows; ++b) {
    w.put(next, b, nt[b]);
    w.put(valid, b, vc[b]);
  }
  check_images(w, fn);
}

// ---- cattn_compute_new_slot_mapping ----
void fuzz_new_slots(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_compute_new_slot_mapping";
  g_cuda = rare(fdp, 16);
  cattn_compute_new_slot_mapping_args_t init = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  init.block_size = pick_scalar(fdp, 1, 8);
  init.num_new_tokens = pick_scalar(fdp, 0, 3);
  init.max_model_len = pick_scalar(fdp, 1, 48);
  const int64_t bs = init.block_size, N = init.num_new_tokens, mml = init.max_model_len;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  // Mostly as wide as max_model_len needs; sometimes narrower (the flattened table is read
  // into the next row) or empty.
  const int64_t want_w = bs >= 1 && bs <= 64 && mml >= 1 && mml <= 64 ? (mml + bs - 1) / bs : 3;
  const int64_t W = rare(fdp, 4) ? fdp.ConsumeIntegralInRange<int64_t>(0, 6) : want_w;
  std::vector<int64_t> tv(static_cast<size_t>(B * W));
  for (auto& v : tv) v = val(fdp, 0, 1000);
  std::vector<int64_t> qv = cumulative(fdp, B, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 4); }, true);
  const __int128 n_sane = static_cast<__int128>(qv.back()) - qv[0] + B * (N >= 0 && N <= 8 ? N : 1);
  const int64_t n_guess = n_sane >= 0 && n_sane <= 256 ? static_cast<int64_t>(n_sane) : 8;
  const int64_t n = std::max<int64_t>(0, n_guess + (rare(fdp, 10) ? fdp.ConsumeIntegralInRange<int64_t>(-1, 1) : 0));
  // Positions: mostly inside the table's reach or around max_model_len, sometimes anywhere.
  const int64_t reach = mml >= 1 && mml <= 64 ? mml + 2 : 64;
  std::vector<int64_t> pv(static_cast<size_t>(n)), rv(pv.size());
  for (auto& v : pv) v = rare(fdp, 12) ? wrap_minus_one(pick_value(fdp, reach)) : fdp.ConsumeIntegralInRange<int64_t>(0, reach);
  const bool with_mask = !rare(fdp, 3);
  for (auto& v : rv) v = rare(fdp, 4) ? fdp.ConsumeIntegralInRange<int64_t>(1, 255) : 0;
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  Tensor tab = make_tensor(fdp, {B, W}, pick_dtype(fdp), false, kHuge);
  tab.fill(tv);
  Tensor pos = make_tensor(fdp, {n}, pick_dtype(fdp), false, kHuge);
  pos.fill(pv);
  Tensor mask = with_mask ? make_tensor(fdp, {n}, pick_flag_dtype(fdp), false, kHuge) : absent();
  mask.fill(rv);
  Tensor out = make_tensor(fdp, {cap(fdp, n)}, rare(fdp, 16) ? i32() : i64(), true);
  alias(fdp, out, {&qsl, &tab, &pos, &mask});
  to_cuda({&qsl, &tab, &pos, &mask, &out});

  Args<cattn_compute_new_slot_mapping_args_t> args(fdp, init, CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_SIZE);
  auto* a = args.s.get();
  a->query_start_loc = qsl.cptr();
  a->block_table = tab.cptr();
  a->new_positions = pos.cptr();
  a->is_rejected_token_mask = mask.cptr();
  a->new_slot_mapping = out.ptr();
  args.place(fdp, {&out});

  bool ok = args.ok(CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_SIZE) && bs >= 1 && N >= 0 && mml >= 1 && index_nd(tab, 2);
  const int64_t b_rows = ok ? tab.dim(0) : 0, width = ok ? tab.dim(1) : 0;
  ok = ok && index1(qsl) && scan_bounded(qsl) && static_cast<__int128>(qsl.dim(0)) == b_rows + __int128{1} &&
       index1(pos);
  const int64_t n_pos = ok ? pos.dim(0) : 0;
  ok = ok && (!mask.exists || (flags1(mask) && mask.dim(0) == n_pos));
  ok = ok && slot_out(out) && out.dim(0) >= n_pos;
  ok = ok && !any_overlap({&out}, {&qsl, &tab, &pos, &mask});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  // The requests own q_r + N consecutive tokens each, and n must be their count.
  __int128 total = 0;
  for (int64_t r = 0; ok && r < b_rows; ++r) {
    int64_t q = 0;
    ok = sub_ok(qsl.get(r + 1), qsl.get(r), &q) && q >= 0;
    total += static_cast<__int128>(q) + N;
  }
  ok = ok && total == n_pos;
  // Token k of request r at position p: -1 when rejected or p >= max_model_len, else
  // table[f / W][f % W] * block_size + p % block_size with f = r * W + p / block_size, refused
  // when p < 0 or f is past the table.
  std::vector<int64_t> slot_v;
  for (int64_t r = 0, k = 0; ok && r < b_rows; ++r) {
    const int64_t count = qsl.get(r + 1) - qsl.get(r) + N;
    for (int64_t j = 0; ok && j < count; ++j, ++k) {
      const int64_t pk = pos.get(k);
      int64_t slot = -1;
      if (!flag(mask, k) && pk < mml) {
        ok = pk >= 0;
        const __int128 f = static_cast<__int128>(r) * width + (ok ? pk / bs : 0);
        ok = ok && f < static_cast<__int128>(b_rows) * width;
        if (ok) {
          const int64_t fi = static_cast<int64_t>(f);
          ok = slot_ok(at2(tab, fi / width, fi % width), pk, bs, &slot);
        }
      }
      slot_v.push_back(slot);
    }
  }
  FZ_LOG("compute_new_slot_mapping: bs %ld N %ld mml %ld B %ld W %ld n %ld predicted %d\n", (long)bs, (long)N,
         (long)mml, (long)B, (long)W, (long)n, ok);
  for (Tensor* t : {&qsl, &tab, &pos, &mask, &out}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&qsl, &tab, &pos, &mask, &out}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_compute_new_slot_mapping(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&qsl, &tab, &pos, &mask, &out},
             {"block_size", "num_new_tokens", "max_model_len", "query_start_loc", "block_table", "new_positions",
              "is_rejected_token_mask", "new_slot_mapping"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t k = 0; k < n_pos; ++k) w.put(out, k, slot_v[k]);
  check_images(w, fn);
}

// ---- cattn_copy_and_expand_eagle_inputs ----
void fuzz_expand(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_copy_and_expand_eagle_inputs";
  g_cuda = rare(fdp, 16);
  cattn_copy_and_expand_eagle_inputs_args_t init = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  if (rare(fdp, 12)) {
    const int64_t edges[] = {0, -1, 65536, 65537, kI64Max, pick_scalar(fdp, 1, 3)};
    init.num_padding_slots_per_request = edges[fdp.ConsumeIntegralInRange<int>(0, 5)];
  } else {
    init.num_padding_slots_per_request = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  }
  init.shift_input_ids = rare(fdp, 16) ? fdp.ConsumeIntegral<int32_t>() : fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  init.reserved0 = rare(fdp, 32) ? fdp.ConsumeIntegral<int32_t>() : 0;
  init.max_tokens_per_request = rare(fdp, 4) ? pick_scalar(fdp, 1, 8) : 0;
  init.padding_token_id = val(fdp, 0, 100);
  init.parallel_drafting_token_id = val(fdp, 0, 100);
  const int64_t P = init.num_padding_slots_per_request;
  const int64_t Pg = P >= 1 && P <= 8 ? P : 1, sg = init.shift_input_ids == 1 ? 1 : 0;
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  // A verified batch: requests of 1 to 5 tokens (sometimes none), a rejected tail in each,
  // query_end_loc the last valid token; sometimes any value anywhere.
  std::vector<int64_t> qv = cumulative(fdp, B, [&] { return rare(fdp, 16) ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 5); }, true);
  std::vector<int64_t> qel;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t q = wrap_sub(qv[i + 1], qv[i]);
    int64_t e = wrap_minus_one(qv[i + 1]);
    if (q > 0 && q <= 8) e -= fdp.ConsumeIntegralInRange<int64_t>(0, q - 1);
    if (rare(fdp, 16)) e = rare(fdp, 2) ? pick_value(fdp, 40) : wrap_sub(qv[fdp.ConsumeBool() ? i + 1 : i], fdp.ConsumeBool());
    qel.push_back(e);
  }
  const int64_t T = qv.back() >= 0 && qv.back() <= 256 ? qv.back() : 8;
  std::vector<int64_t> ids(static_cast<size_t>(T + 2)), tpos(ids.size()), nxt(static_cast<size_t>(B));
  for (auto& v : ids) v = val(fdp, 0, 100);
  for (auto& v : nxt) v = val(fdp, 0, 100);
  // Positions count up from a start, now and then anywhere, or a few below INT64_MAX (where a
  // request's `start + j` passes int64 within its tokens).
  int64_t start = fdp.ConsumeIntegralInRange<int64_t>(0, 4000);
  if (rare(fdp, 12)) start = kI64Max - fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  for (size_t k = 0; k < tpos.size(); ++k) {
    if (rare(fdp, 8)) start = wrap_sub(pick_value(fdp, 4000), static_cast<int64_t>(k));
    tpos[k] = wrap_add(start, static_cast<int64_t>(k));
  }
  Tensor tids = make_tensor(fdp, {T + (rare(fdp, 8) ? fdp.ConsumeIntegralInRange<int64_t>(-1, 2) : 0)}, pick_dtype(fdp), false, kHuge);
  tids.fill(ids);
  Tensor tp = make_tensor(fdp, {T + (rare(fdp, 8) ? fdp.ConsumeIntegralInRange<int64_t>(-1, 2) : 0)}, pick_dtype(fdp), false, kHuge);
  tp.fill(tpos);
  Tensor nt = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  nt.fill(nxt);
  Tensor qsl = make_tensor(fdp, {B + 1}, pick_dtype(fdp), false, kHuge);
  qsl.fill(qv);
  Tensor qe = make_tensor(fdp, {B}, pick_dtype(fdp), false, kHuge);
  qe.fill(qel);
  const int64_t n_out = T + B * (Pg - sg);
  Tensor oid = make_tensor(fdp, {cap(fdp, n_out)}, pick_dtype(fdp), true);
  Tensor opos = make_tensor(fdp, {cap(fdp, n_out)}, pick_dtype(fdp), true);
  Tensor orej = rare(fdp, 3) ? absent() : make_tensor(fdp, {cap(fdp, n_out)}, pick_flag_dtype(fdp), true);
  Tensor omsk = rare(fdp, 3) ? absent() : make_tensor(fdp, {cap(fdp, n_out)}, pick_flag_dtype(fdp), true);
  Tensor onew = rare(fdp, 3) ? absent() : make_tensor(fdp, {cap(fdp, B * Pg)}, pick_dtype(fdp), true);
  Tensor ohid = rare(fdp, 3) ? absent() : make_tensor(fdp, {cap(fdp, T)}, pick_dtype(fdp), true);
  alias(fdp, oid, {&tids, &tp, &nt, &qsl, &qe});
  alias(fdp, opos, {&tids, &tp, &qsl, &oid});
  if (orej.exists) alias(fdp, orej, {&qe, &oid, &opos});
  if (omsk.exists) alias(fdp, omsk, {&tids, &orej, &opos});
  if (onew.exists) alias(fdp, onew, {&nt, &qsl, &oid, &omsk});
  if (ohid.exists) alias(fdp, ohid, {&tp, &qe, &opos, &onew});
  to_cuda({&tids, &tp, &nt, &qsl, &qe, &oid, &opos, &orej, &omsk, &onew, &ohid});

  Args<cattn_copy_and_expand_eagle_inputs_args_t> args(fdp, init, CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_SIZE);
  auto* a = args.s.get();
  a->target_token_ids = tids.cptr();
  a->target_positions = tp.cptr();
  a->next_token_ids = nt.cptr();
  a->query_start_loc = qsl.cptr();
  a->query_end_loc = qe.cptr();
  a->out_input_ids = oid.ptr();
  a->out_positions = opos.ptr();
  a->out_is_rejected_token_mask = orej.ptr();
  a->out_is_masked_token_mask = omsk.ptr();
  a->out_new_token_indices = onew.ptr();
  a->out_hidden_state_mapping = ohid.ptr();
  args.place(fdp, {&oid, &opos, &orej, &omsk, &onew, &ohid});

  const auto& p = init;
  bool ok = args.ok(CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_SIZE) && p.reserved0 == 0 && P >= 1 && P <= 65536 &&
            (p.shift_input_ids == 0 || p.shift_input_ids == 1) && p.max_tokens_per_request >= 0;
  const int64_t shift = p.shift_input_ids == 1 ? 1 : 0;
  ok = ok && index1(tids) && index1(tp) && index1(nt);
  const int64_t b_rows = ok ? nt.dim(0) : 0;
  ok = ok && index1(qsl) && scan_bounded(qsl) && qsl.dim(0) == b_rows + 1 && index1(qe) && qe.dim(0) == b_rows;
  ok = ok && index_out(oid) && index_out(opos);
  ok = ok && (!orej.exists || flags_out(orej)) && (!omsk.exists || flags_out(omsk));
  ok = ok && (!onew.exists || (index_out(onew) && static_cast<__int128>(onew.dim(0)) >= static_cast<__int128>(b_rows) * P));
  ok = ok && (!ohid.exists || index_out(ohid));
  ok = ok && !any_overlap({&oid, &opos, &orej, &omsk, &onew, &ohid}, {&tids, &tp, &nt, &qsl, &qe});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  // Refused: a negative query_start_loc, a request without tokens, query_end_loc outside its
  // request, query_start_loc[B] past the targets, outputs shorter than n_out (hidden state
  // mapping: than query_start_loc[B], with shift).
  ok = ok && qsl.get(0) >= 0;
  for (int64_t i = 0; ok && i < b_rows; ++i) {
    const int64_t lo = qsl.get(i), hi = qsl.get(i + 1), e = qe.get(i);
    ok = hi > lo && e >= lo && e < hi;
  }
  const int64_t tokens = ok ? qsl.get(b_rows) : 0;
  ok = ok && tokens <= tids.dim(0) && tokens <= tp.dim(0);
  const __int128 outs = static_cast<__int128>(tokens) + static_cast<__int128>(b_rows) * (static_cast<__int128>(P) - shift);
  ok = ok && outs <= kI64Max;
  for (const Tensor* o : {&oid, &opos, &orej, &omsk}) ok = ok && (!o->exists || o->dim(0) >= outs);
  ok = ok && (!shift || !ohid.exists || ohid.dim(0) >= tokens);
  // Request i's tokens: its valid ones (from query_start_loc[i] + shift), the bonus, P - 1
  // parallel-drafting tokens, the rejected tail (padding token, position 0); positions count up
  // from the request's first target position; at most max_tokens_per_request of them.
  struct Write {
    int64_t o, id, pos, rej, msk, new_at, hid_at;
  };
  std::vector<Write> writes;
  for (int64_t i = 0; ok && i < b_rows; ++i) {
    const int64_t s = qsl.get(i), q = qsl.get(i + 1) - s;
    const int64_t valid = qe.get(i) - s + 1 - shift;
    int64_t total = q + P - shift;
    if (p.max_tokens_per_request > 0) total = std::min(total, p.max_tokens_per_request);
    const int64_t out_start = s + i * (P - shift), p0 = tp.get(s);
    for (int64_t j = 0; ok && j < total; ++j) {
      Write wr{out_start + j, 0, 0, j >= valid + P, j > valid && j < valid + P, -1, -1};
      // The rejected tail's position is 0: start + j is formed (and must fit) before it only.
      int64_t pj = 0;
      ok = j >= valid + P || add_ok(p0, j, &pj);
      if (j < valid) wr.id = tids.get(s + shift + j);
      else if (j == valid) wr.id = nt.get(i);
      else if (j < valid + P) wr.id = p.parallel_drafting_token_id;
      else wr.id = p.padding_token_id;
      wr.pos = j < valid + P ? pj : 0;
      if (j >= valid && j < valid + P) wr.new_at = i * P + (j - valid);
      if (shift && j < q) wr.hid_at = s + j;
      ok = ok && fits(oid, wr.id) && fits(opos, wr.pos);
      ok = ok && (!onew.exists || fits(onew, wr.o)) && (!shift || !ohid.exists || fits(ohid, wr.o));
      writes.push_back(wr);
    }
  }
  FZ_LOG("copy_and_expand: P %ld shift %d reserved %d max_tokens %ld pad %ld par %ld B %ld T %ld predicted %d\n",
         (long)P, p.shift_input_ids, p.reserved0, (long)p.max_tokens_per_request, (long)p.padding_token_id,
         (long)p.parallel_drafting_token_id, (long)B, (long)T, ok);
  for (Tensor* t : {&tids, &tp, &nt, &qsl, &qe, &oid, &opos, &orej, &omsk, &onew, &ohid}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&tids, &tp, &nt, &qsl, &qe, &oid, &opos, &orej, &omsk, &onew, &ohid}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_copy_and_expand_eagle_inputs(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&tids, &tp, &nt, &qsl, &qe, &oid, &opos, &orej, &omsk, &onew, &ohid},
             {"padding_token_id", "parallel_drafting_token_id", "num_padding_slots_per_request",
              "max_tokens_per_request", "shift_input_ids", "reserved0", "target_token_ids", "target_positions",
              "next_token_ids", "query_start_loc", "query_end_loc", "out_input_ids", "out_positions",
              "out_is_rejected_token_mask", "out_is_masked_token_mask", "out_new_token_indices",
              "out_hidden_state_mapping"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (const Write& wr : writes) {
    w.put(oid, wr.o, wr.id);
    w.put(opos, wr.o, wr.pos);
    if (orej.exists) w.put(orej, wr.o, wr.rej);
    if (omsk.exists) w.put(omsk, wr.o, wr.msk);
    if (onew.exists && wr.new_at >= 0) w.put(onew, wr.new_at, wr.o);
    if (ohid.exists && wr.hid_at >= 0) w.put(ohid, wr.hid_at, wr.o);
  }
  check_images(w, fn);
}

// ---- cattn_update_num_computed_tokens_for_batch_change ----
void fuzz_batch_change(FuzzedDataProvider& fdp) {
  constexpr const char* fn = "cattn_update_num_computed_tokens_for_batch_change";
  g_cuda = rare(fdp, 16);
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t n_prev = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  // num_computed_tokens: mostly covering both batches; sometimes just the new one (previous
  // rows past it are refused) or shorter than it.
  int64_t M = std::max(n, n_prev) + fdp.ConsumeIntegralInRange<int64_t>(0, 2);
  if (rare(fdp, 4)) M = n;
  if (rare(fdp, 10)) M = std::max<int64_t>(0, n - 1);
  std::vector<int64_t> nct(static_cast<size_t>(M)), acc(static_cast<size_t>(n)), prev(acc.size()), cpu(acc.size());
  std::vector<int64_t> valid(static_cast<size_t>(n_prev)), drafts(valid.size());
  for (auto& v : nct) v = val(fdp, 0, 5000);
  for (auto& v : acc) v = val(fdp, 0, 8);
  for (auto& v : prev) {
    if (rare(fdp, 12)) v = pick_value(fdp, n_prev);
    else v = n_prev > 0 && !rare(fdp, 4) ? fdp.ConsumeIntegralInRange<int64_t>(0, n_prev - 1) : -1;
  }
  for (auto& v : cpu) v = val(fdp, 0, 5000);
  for (size_t g = 0; g < valid.size(); ++g) {
    drafts[g] = rare(fdp, 4) ? 0 : val(fdp, 1, 7);
    valid[g] = val(fdp, 0, drafts[g] >= 0 && drafts[g] < 8 ? drafts[g] + 1 : 1);
  }
  Tensor prev_t = make_tensor(fdp, {n}, pick_dtype(fdp), false, kHuge);
  prev_t.fill(prev);
  Tensor valid_t = make_tensor(fdp, {n_prev}, pick_dtype(fdp), false, kHuge);
  valid_t.fill(valid);
  Tensor drafts_t = make_tensor(fdp, {n_prev}, pick_dtype(fdp), false, kHuge);
  drafts_t.fill(drafts);
  Tensor cpu_t = make_tensor(fdp, {n}, pick_dtype(fdp), false, kHuge);
  cpu_t.fill(cpu);
  Tensor nct_t = make_tensor(fdp, {M}, pick_dtype(fdp), true);
  Tensor acc_t = make_tensor(fdp, {n}, pick_dtype(fdp), true);
  alias(fdp, nct_t, {&prev_t, &valid_t, &drafts_t, &cpu_t});
  alias(fdp, acc_t, {&prev_t, &valid_t, &drafts_t, &cpu_t, &nct_t});
  // In and out: their values are written where they now lie.
  nct_t.fill(nct);
  acc_t.fill(acc);
  to_cuda({&prev_t, &valid_t, &drafts_t, &cpu_t, &nct_t, &acc_t});

  Args<cattn_update_num_computed_tokens_for_batch_change_args_t> args(
      fdp, CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT,
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_SIZE);
  auto* a = args.s.get();
  a->num_computed_tokens = nct_t.ptr();
  a->num_accepted_tokens = acc_t.ptr();
  a->prev_positions = prev_t.cptr();
  a->valid_sampled_token_count = valid_t.cptr();
  a->prev_num_draft_tokens = drafts_t.cptr();
  a->cpu_num_computed_tokens = cpu_t.cptr();
  args.place(fdp, {&nct_t, &acc_t});

  bool ok = args.ok(CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_SIZE) && index1(prev_t);
  const int64_t rows = ok ? prev_t.dim(0) : 0;
  ok = ok && index_out(nct_t) && nct_t.dim(0) >= rows && index_out(acc_t) && acc_t.dim(0) == rows;
  ok = ok && index1(valid_t) && index1(drafts_t) && drafts_t.dim(0) == valid_t.dim(0);
  ok = ok && index1(cpu_t) && cpu_t.dim(0) == rows;
  ok = ok && !any_overlap({&nct_t, &acc_t}, {&prev_t, &valid_t, &drafts_t, &cpu_t});
  const bool args_ok = ok;
  ok = ok && !g_cuda;
  // Row k with g = prev_positions[k] >= 0 and prev_num_draft_tokens[g] > 0 gets
  // num_computed_tokens[g] (before the call) + valid[g] and num_accepted_tokens[k] = valid[g];
  // any other row cpu_num_computed_tokens[k] and keeps its accepted count. g past M or n_prev is
  // refused.
  std::vector<int64_t> new_nct, new_acc;
  std::vector<bool> carried;
  for (int64_t k = 0; ok && k < rows; ++k) {
    const int64_t g = prev_t.get(k);
    ok = g < valid_t.dim(0) && g < nct_t.dim(0);
    const bool c = ok && g >= 0 && drafts_t.get(g) > 0;
    int64_t v = 0;
    if (ok) ok = c ? add_ok(nct_t.get(g), valid_t.get(g), &v) : (v = cpu_t.get(k), true);
    ok = ok && fits(nct_t, v) && (!c || fits(acc_t, valid_t.get(g)));
    // The host stages a carried row's new count in its num_accepted_tokens entry: an int32 one
    // must hold it.
    ok = ok && (!c || fits(acc_t, v));
    new_nct.push_back(v);
    new_acc.push_back(c ? valid_t.get(g) : 0);
    carried.push_back(c);
  }
  FZ_LOG("batch_change: n %ld n_prev %ld M %ld predicted %d\n", (long)n, (long)n_prev, (long)M, ok);
  for (Tensor* t : {&nct_t, &acc_t, &prev_t, &valid_t, &drafts_t, &cpu_t}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&nct_t, &acc_t, &prev_t, &valid_t, &drafts_t, &cpu_t}) w.add(t);
  const auto args_before = args.s.snapshot();
  const cattn_status_t st = cattn_update_num_computed_tokens_for_batch_change(args.arg());
  FZ_CHECK(args.s.unchanged(args_before), "the call wrote its args struct");
  check_call(st, fn, args_ok, {&nct_t, &acc_t, &prev_t, &valid_t, &drafts_t, &cpu_t},
             {"num_computed_tokens", "num_accepted_tokens", "prev_positions", "valid_sampled_token_count",
              "prev_num_draft_tokens", "cpu_num_computed_tokens"});
  if (!check_outcome(st, fn, ok, w)) return;
  for (int64_t k = 0; k < rows; ++k) {
    w.put(nct_t, k, new_nct[k]);
    if (carried[k]) w.put(acc_t, k, new_acc[k]);
  }
  check_images(w, fn);
}

// ---- Race mode: a valid host call while another thread writes one of its inputs ----
// An input whose first byte is kRaceMode (no seed of the call modes starts with it) picks a call
// from the rest as the call modes do and builds a valid host call of it, every tensor in
// guarded memory of its own (race_tensor); race() (fuzz_support.h) then picks an element of an
// input - the ones that place reads and writes first: query_start_loc, query_end_loc,
// prev_positions, positions, cu_num_draft_tokens, valid_sampled_tokens_count, the masks, the
// in-and-out counts - and the values another thread stores into it while the call runs a few
// times. Memory safety only: outputs and statuses may vary under the race (promise 5).
// No call below has two arguments that draw from the fuzzer's bytes: the order in which a call's
// arguments are evaluated is unspecified, and an input must mean the same to every compiler.
constexpr uint8_t kRaceMode = 0x6d;

Tensor race_in(FuzzedDataProvider& fdp, std::vector<int64_t> shape, const std::vector<int64_t>& v,
               DLDataType dtype) {
  Tensor t = race_tensor(fdp, std::move(shape), dtype, false);
  t.fill(v);
  return t;
}
Tensor race_in(FuzzedDataProvider& fdp, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return race_in(fdp, std::move(shape), v, pick_dtype(fdp));
}
Tensor race_out(FuzzedDataProvider& fdp, std::vector<int64_t> shape, DLDataType dtype) {
  return race_tensor(fdp, std::move(shape), dtype, true);
}
Tensor race_out(FuzzedDataProvider& fdp, std::vector<int64_t> shape) {
  return race_out(fdp, std::move(shape), pick_dtype(fdp));
}
// An in-and-out tensor: an output (the call may write its elements) holding `v`.
Tensor race_in_out(FuzzedDataProvider& fdp, std::vector<int64_t> shape,
                   const std::vector<int64_t>& v) {
  Tensor t = race_out(fdp, std::move(shape));
  t.fill(v);
  return t;
}
// `n` values of [lo, hi].
std::vector<int64_t> race_values(FuzzedDataProvider& fdp, int64_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
  return v;
}
// A length with room to spare: n to n + 2.
int64_t room(FuzzedDataProvider& fdp, int64_t n) {
  return n + fdp.ConsumeIntegralInRange<int64_t>(0, 2);
}

void race_eagle_step(FuzzedDataProvider& fdp) {
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  a.block_size = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  a.max_model_len = fdp.ConsumeIntegralInRange<int64_t>(1, 40);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t W = fdp.ConsumeIntegralInRange<int64_t>(1, 5);
  a.input_batch_size = fdp.ConsumeBool() ? 0 : B + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  Tensor pos = race_in(fdp, {B}, race_values(fdp, B, -1, a.max_model_len));
  Tensor tab = race_in(fdp, {B, W}, race_values(fdp, B * W, 0, 1000));
  Tensor seq = race_in_out(fdp, {B}, race_values(fdp, B, 0, a.max_model_len));
  Tensor clamped = race_out(fdp, {room(fdp, B)});
  Tensor slots = race_out(fdp, {room(fdp, std::max(B, a.input_batch_size))}, i64());
  a.positions = pos.cptr();
  a.block_table = tab.cptr();
  a.seq_lens = seq.ptr();
  a.out_clamped_positions = clamped.ptr();
  a.out_slot_mapping = slots.ptr();
  RaceCall call;
  call.fn = "cattn_eagle_step_update_slot_mapping_and_metadata";
  call.inputs = {&pos, &tab};
  call.outputs = {&seq, &clamped, &slots};
  call.mutable_inputs = {{&pos, "positions"}, {&seq, "seq_lens"}, {&tab, "block_table"}};
  call.typical = 48;
  race(fdp, call, [&] { return cattn_eagle_step_update_slot_mapping_and_metadata(&a); });
}

void race_prepare_inputs(FuzzedDataProvider& fdp) {
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  // Drafts per request, their inclusive sum, accepted + 1, and queries holding drafts + bonus.
  std::vector<int64_t> cu, valid, qv{0};
  int64_t sum = 0;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t d = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
    sum += d;
    cu.push_back(sum);
    valid.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, d + 1));
    qv.push_back(qv.back() + d + 1);
  }
  for (int64_t k = fdp.ConsumeIntegralInRange<int64_t>(0, 2); k > 0; --k) qv.push_back(qv.back());
  Tensor cut = race_in(fdp, {B}, cu);
  Tensor vt = race_in(fdp, {B}, valid);
  Tensor qsl = race_in(fdp, {static_cast<int64_t>(qv.size())}, qv);
  Tensor idx = race_out(fdp, {room(fdp, B)}), rej = race_out(fdp, {room(fdp, B)});
  cattn_eagle_prepare_inputs_padded_args_t a = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  a.cu_num_draft_tokens = cut.cptr();
  a.valid_sampled_tokens_count = vt.cptr();
  a.query_start_loc = qsl.cptr();
  a.token_indices_to_sample = idx.ptr();
  a.num_rejected_tokens = rej.ptr();
  RaceCall call;
  call.fn = "cattn_eagle_prepare_inputs_padded";
  call.inputs = {&cut, &vt, &qsl};
  call.outputs = {&idx, &rej};
  call.mutable_inputs = {{&cut, "cu_num_draft_tokens"}, {&vt, "valid_sampled_tokens_count"},
                         {&qsl, "query_start_loc"}};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_eagle_prepare_inputs_padded(&a); });
}

void race_next_token(FuzzedDataProvider& fdp) {
  cattn_eagle_prepare_next_token_padded_args_t a = CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  a.vocab_size = fdp.ConsumeIntegralInRange<int64_t>(1, 50);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t S = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  Tensor st_ids = race_in(fdp, {B, S}, race_values(fdp, B * S, -1, a.vocab_size + 1));
  Tensor disc = absent();
  if (fdp.ConsumeBool()) {
    const DLDataType flag_dtype = pick_flag_dtype(fdp);
    disc = race_in(fdp, {B}, race_values(fdp, B, 0, 1), flag_dtype);
  }
  Tensor bk = race_in(fdp, {B}, race_values(fdp, B, 0, a.vocab_size));
  Tensor next = race_out(fdp, {room(fdp, B)}), valid = race_out(fdp, {room(fdp, B)});
  a.sampled_token_ids = st_ids.cptr();
  a.discard_request_mask = disc.cptr();
  a.backup_next_token_ids = bk.cptr();
  a.next_token_ids = next.ptr();
  a.valid_sampled_tokens_count = valid.ptr();
  RaceCall call;
  call.fn = "cattn_eagle_prepare_next_token_padded";
  call.inputs = {&st_ids, &disc, &bk};
  call.outputs = {&next, &valid};
  call.mutable_inputs = {{&st_ids, "sampled_token_ids"}, {&disc, "discard_request_mask"},
                         {&bk, "backup_next_token_ids"}};
  call.typical = 64;
  race(fdp, call, [&] { return cattn_eagle_prepare_next_token_padded(&a); });
}

void race_new_slots(FuzzedDataProvider& fdp) {
  cattn_compute_new_slot_mapping_args_t a = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  a.block_size = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  a.num_new_tokens = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  a.max_model_len = fdp.ConsumeIntegralInRange<int64_t>(1, 48);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  // As wide as max_model_len needs: every position below it has a block in its own row.
  const int64_t W = (a.max_model_len + a.block_size - 1) / a.block_size +
                    fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  std::vector<int64_t> qv{fdp.ConsumeIntegralInRange<int64_t>(0, 3)};
  for (int64_t r = 0; r < B; ++r)
    qv.push_back(qv.back() + fdp.ConsumeIntegralInRange<int64_t>(0, 4));
  const int64_t n = qv.back() - qv.front() + B * a.num_new_tokens;
  Tensor qsl = race_in(fdp, {B + 1}, qv);
  Tensor tab = race_in(fdp, {B, W}, race_values(fdp, B * W, 0, 1000));
  Tensor pos = race_in(fdp, {n}, race_values(fdp, n, 0, a.max_model_len + 1));
  Tensor mask = absent();
  if (fdp.ConsumeBool()) {
    std::vector<int64_t> m = race_values(fdp, n, 0, 3);
    for (auto& x : m) x = x == 3;  // a quarter rejected
    const DLDataType flag_dtype = pick_flag_dtype(fdp);
    mask = race_in(fdp, {n}, m, flag_dtype);
  }
  Tensor out = race_out(fdp, {room(fdp, n)}, i64());
  a.query_start_loc = qsl.cptr();
  a.block_table = tab.cptr();
  a.new_positions = pos.cptr();
  a.is_rejected_token_mask = mask.cptr();
  a.new_slot_mapping = out.ptr();
  RaceCall call;
  call.fn = "cattn_compute_new_slot_mapping";
  call.inputs = {&qsl, &tab, &pos, &mask};
  call.outputs = {&out};
  call.mutable_inputs = {{&qsl, "query_start_loc"}, {&pos, "new_positions"},
                         {&mask, "is_rejected_token_mask"}, {&tab, "block_table"}};
  call.typical = 48;
  race(fdp, call, [&] { return cattn_compute_new_slot_mapping(&a); });
}

void race_expand(FuzzedDataProvider& fdp) {
  cattn_copy_and_expand_eagle_inputs_args_t a = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  const int64_t P = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  const int64_t shift = fdp.ConsumeIntegralInRange<int64_t>(0, 1);
  a.num_padding_slots_per_request = P;
  a.shift_input_ids = static_cast<int32_t>(shift);
  a.max_tokens_per_request = fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  a.padding_token_id = fdp.ConsumeIntegralInRange<int64_t>(0, 100);
  a.parallel_drafting_token_id = fdp.ConsumeIntegralInRange<int64_t>(0, 100);
  const int64_t B = fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  // A verified batch: requests of 1 to 5 tokens, query_end_loc the last valid one.
  std::vector<int64_t> qv{fdp.ConsumeIntegralInRange<int64_t>(0, 2)}, qel;
  for (int64_t i = 0; i < B; ++i) {
    const int64_t q = fdp.ConsumeIntegralInRange<int64_t>(1, 5);
    qel.push_back(qv.back() + fdp.ConsumeIntegralInRange<int64_t>(0, q - 1));
    qv.push_back(qv.back() + q);
  }
  const int64_t T = qv.back();
  const int64_t start = fdp.ConsumeIntegralInRange<int64_t>(0, 4000);
  std::vector<int64_t> tpos(static_cast<size_t>(T + 2));
  for (size_t k = 0; k < tpos.size(); ++k) tpos[k] = start + static_cast<int64_t>(k);
  const int64_t n_ids = room(fdp, T);
  Tensor tids = race_in(fdp, {n_ids}, race_values(fdp, T + 2, 0, 100));
  Tensor tp = race_in(fdp, {room(fdp, T)}, tpos);
  Tensor nt = race_in(fdp, {B}, race_values(fdp, B, 0, 100));
  Tensor qsl = race_in(fdp, {B + 1}, qv);
  Tensor qe = race_in(fdp, {B}, qel);
  const int64_t n_out = T + B * (P - shift);
  Tensor oid = race_out(fdp, {room(fdp, n_out)}), opos = race_out(fdp, {room(fdp, n_out)});
  auto flags_out = [&] {
    const int64_t len = room(fdp, n_out);
    return race_out(fdp, {len}, pick_flag_dtype(fdp));
  };
  Tensor orej = fdp.ConsumeBool() ? flags_out() : absent();
  Tensor omsk = fdp.ConsumeBool() ? flags_out() : absent();
  Tensor onew = fdp.ConsumeBool() ? race_out(fdp, {room(fdp, B * P)}) : absent();
  Tensor ohid = fdp.ConsumeBool() ? race_out(fdp, {room(fdp, T)}) : absent();
  a.target_token_ids = tids.cptr();
  a.target_positions = tp.cptr();
  a.next_token_ids = nt.cptr();
  a.query_start_loc = qsl.cptr();
  a.query_end_loc = qe.cptr();
  a.out_input_ids = oid.ptr();
  a.out_positions = opos.ptr();
  a.out_is_rejected_token_mask = orej.ptr();
  a.out_is_masked_token_mask = omsk.ptr();
  a.out_new_token_indices = onew.ptr();
  a.out_hidden_state_mapping = ohid.ptr();
  RaceCall call;
  call.fn = "cattn_copy_and_expand_eagle_inputs";
  call.inputs = {&tids, &tp, &nt, &qsl, &qe};
  call.outputs = {&oid, &opos, &orej, &omsk, &onew, &ohid};
  call.mutable_inputs = {{&qsl, "query_start_loc"}, {&qe, "query_end_loc"},
                         {&tp, "target_positions"}, {&tids, "target_token_ids"},
                         {&nt, "next_token_ids"}};
  call.typical = 32;
  race(fdp, call, [&] { return cattn_copy_and_expand_eagle_inputs(&a); });
}

void race_batch_change(FuzzedDataProvider& fdp) {
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t n_prev = fdp.ConsumeIntegralInRange<int64_t>(1, 8);
  const int64_t M = std::max(n, n_prev) + fdp.ConsumeIntegralInRange<int64_t>(0, 2);
  Tensor prev = race_in(fdp, {n}, race_values(fdp, n, -1, n_prev - 1));
  Tensor valid = race_in(fdp, {n_prev}, race_values(fdp, n_prev, 0, 8));
  Tensor drafts = race_in(fdp, {n_prev}, race_values(fdp, n_prev, 0, 7));
  Tensor cpu = race_in(fdp, {n}, race_values(fdp, n, 0, 5000));
  Tensor nct = race_in_out(fdp, {M}, race_values(fdp, M, 0, 5000));
  Tensor acc = race_in_out(fdp, {n}, race_values(fdp, n, 0, 8));
  cattn_update_num_computed_tokens_for_batch_change_args_t a =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  a.num_computed_tokens = nct.ptr();
  a.num_accepted_tokens = acc.ptr();
  a.prev_positions = prev.cptr();
  a.valid_sampled_token_count = valid.cptr();
  a.prev_num_draft_tokens = drafts.cptr();
  a.cpu_num_computed_tokens = cpu.cptr();
  RaceCall call;
  call.fn = "cattn_update_num_computed_tokens_for_batch_change";
  call.inputs = {&prev, &valid, &drafts, &cpu};
  call.outputs = {&nct, &acc};
  call.mutable_inputs = {{&prev, "prev_positions"}, {&drafts, "prev_num_draft_tokens"},
                         {&valid, "valid_sampled_token_count"}, {&nct, "num_computed_tokens"},
                         {&cpu, "cpu_num_computed_tokens"}, {&acc, "num_accepted_tokens"}};
  call.typical = 16;
  race(fdp, call, [&] { return cattn_update_num_computed_tokens_for_batch_change(&a); });
}

void race_mode(FuzzedDataProvider& fdp) {
  if (kUnderTsan) return;  // TSan would report the race itself
  g_cuda = false;
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: race_eagle_step(fdp); break;
    case 1: race_prepare_inputs(fdp); break;
    case 2: race_next_token(fdp); break;
    case 3: race_new_slots(fdp); break;
    case 4: race_expand(fdp); break;
    default: race_batch_change(fdp); break;
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
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: fuzz_eagle_step(fdp); break;
    case 1: fuzz_prepare_inputs(fdp); break;
    case 2: fuzz_next_token(fdp); break;
    case 3: fuzz_new_slots(fdp); break;
    case 4: fuzz_expand(fdp); break;
    default: fuzz_batch_change(fdp); break;
  }
  return 0;
}
