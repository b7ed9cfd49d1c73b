// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 7: cattn_extend_all_queries_by_n. Random batches and n, host mirrors
// present or not (separate tensors holding the same values or disagreeing ones, or the main
// tensor itself or its very view), outputs that are new tensors, the inputs themselves, views of
// them or of each other, or placed over any tensor's memory (new_slot_mapping's included, an
// argument whose pointer is passed on), `out` that is the metadata struct itself, the 1.1 upper
// bound (in place, its own tensor, over another's memory, or given on one side only), the
// metadata and args structs copied over an output, struct sizes at every version boundary,
// scalars near int64's limits and values that do not fit int32 outputs. Every alias is
// predicted from the rules (the very view of a tensor or of its mirror is allowed, any other
// shared byte refused). The reference is the definition: query_start_loc[i] + i * n,
// seq_lens + n, the bound + n, the scalars shifted, the other fields copied.
#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

constexpr const char* kFn = "cattn_extend_all_queries_by_n";

bool add_fits(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 12);
  const int64_t n = pick_scalar(fdp, 0, 4);
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };

  std::vector<int64_t> qsl_values = cumulative(fdp, batch, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 30); }, true);
  std::vector<int64_t> seq_values(static_cast<size_t>(batch));
  for (auto& v : seq_values) v = pick_value(fdp, 200);

  // Inputs: main tensors, and mirrors that are separate (holding the same values, or one value
  // off), the main tensor's own DLTensor, another DLTensor over the main tensor, or absent.
  Tensor qsl = make_tensor(fdp, {batch + 1}, dtype(), false);
  Tensor seq = make_tensor(fdp, {batch}, dtype(), false);
  qsl.fill(qsl_values);
  seq.fill(seq_values);
  const int qsl_mirror = fdp.ConsumeIntegralInRange<int>(0, 3);  // 0 none, 1 own, 2 = main, 3 view of main
  const int seq_mirror = fdp.ConsumeIntegralInRange<int>(0, 3);
  auto make_mirror = [&](int mode, Tensor& main, int64_t len, std::vector<int64_t> values) {
    if (mode == 3) return view_of(fdp, main, false);
    if (mode != 1) return Tensor();
    Tensor t = make_tensor(fdp, {len}, dtype(), false, {true, false});
    if (!values.empty() && fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {  // a mirror that disagrees
      int64_t& v = values[fdp.ConsumeIntegralInRange<size_t>(0, values.size() - 1)];
      v = static_cast<int64_t>(static_cast<uint64_t>(v) + (fdp.ConsumeBool() ? 1 : uint64_t{1} << 32));
    }
    t.fill(values);
    return t;
  };
  Tensor qsl_cpu = make_mirror(qsl_mirror, qsl, batch + 1, qsl_values);
  Tensor seq_cpu = make_mirror(seq_mirror, seq, batch, seq_values);
  const bool slot_given = fdp.ConsumeBool();
  Tensor slot = slot_given ? make_tensor(fdp, {fdp.ConsumeIntegralInRange<int64_t>(0, 9)}, dtype(), false) : Tensor();
  // Since 1.1: seq_lens_cpu_upper_bound, a host [B] extended like seq_lens, read from a 1.1
  // metadata struct and written to a 1.1 out (given on both sides, or - mutated - on one).
  const int upper_mode = fdp.ConsumeIntegralInRange<int>(0, 15);  // 0-7 none, 8-13 both, 14 in only, 15 out only
  const bool upper_in = upper_mode >= 8 && upper_mode <= 14, upper_out = upper_mode >= 8 && upper_mode != 14;
  Tensor upper = upper_in ? make_tensor(fdp, {batch}, dtype(), false, {true, false}) : Tensor();
  {
    std::vector<int64_t> v(static_cast<size_t>(batch));
    for (auto& x : v) x = pick_value(fdp, 200);
    upper.fill(v);
  }

  // DLTensor pointers of the inputs as the caller passes them.
  DLTensor* in_qsl_cpu_p = qsl_mirror == 0 ? nullptr : qsl_mirror == 2 ? qsl.ptr() : qsl_cpu.ptr();
  DLTensor* in_seq_cpu_p = seq_mirror == 0 ? nullptr : seq_mirror == 2 ? seq.ptr() : seq_cpu.ptr();

  // Outputs: in place (an input's own DLTensor: the main tensor's or its mirror's), a tensor of
  // their own (sometimes over another tensor's memory), or another DLTensor over an input or an
  // earlier output (mostly the same view). A mirror output exists when its input does (or,
  // mutated, when it does not).
  Tensor out_qsl, out_seq, out_qsl_cpu, out_seq_cpu;
  // kind: 0 the main input's DLTensor, 1 the mirror input's DLTensor, 2 a new tensor, 3 a view
  // of an input or earlier output.
  auto pick_out = [&](Tensor& out, int64_t len, bool host, std::initializer_list<Tensor*> views,
                      std::initializer_list<Tensor*> alias) -> int {
    const int c = fdp.ConsumeIntegralInRange<int>(0, 9);
    if (c <= 1) return c;
    if (c <= 3) {
      std::vector<Tensor*> v;
      for (Tensor* t : views)
        if (t && t->exists && t->mem) v.push_back(t);
      if (!v.empty()) {
        out = view_of(fdp, *v[fdp.ConsumeIntegralInRange<size_t>(0, v.size() - 1)], true);
        return 3;
      }
    }
    out = make_tensor(fdp, {len}, dtype(), true, {true, !host});
    maybe_alias(fdp, out, alias, 3);
    return 2;
  };
  Tensor* qsl_cpu_t = qsl_mirror == 1 || qsl_mirror == 3 ? &qsl_cpu : nullptr;
  Tensor* seq_cpu_t = seq_mirror == 1 || seq_mirror == 3 ? &seq_cpu : nullptr;
  int out_qsl_kind = pick_out(out_qsl, batch + 1, false, {&qsl, qsl_cpu_t}, {&qsl, &seq, qsl_cpu_t, seq_cpu_t, &slot});
  if (out_qsl_kind == 1 && qsl_mirror == 0) out_qsl_kind = 0;
  int out_seq_kind = pick_out(out_seq, batch, false, {&seq, seq_cpu_t},
                              {&qsl, &seq, qsl_cpu_t, seq_cpu_t, &slot, out_qsl_kind >= 2 ? &out_qsl : nullptr});
  if (out_seq_kind == 1 && seq_mirror == 0) out_seq_kind = 0;
  DLTensor* out_qsl_p = out_qsl_kind == 0 ? qsl.ptr() : out_qsl_kind == 1 ? in_qsl_cpu_p : out_qsl.ptr();
  DLTensor* out_seq_p = out_seq_kind == 0 ? seq.ptr() : out_seq_kind == 1 ? in_seq_cpu_p : out_seq.ptr();
  const bool flip_qsl_mirror = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool flip_seq_mirror = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool want_out_qsl_cpu = (qsl_mirror != 0) != flip_qsl_mirror;
  const bool want_out_seq_cpu = (seq_mirror != 0) != flip_seq_mirror;
  int out_qsl_cpu_kind = -1, out_seq_cpu_kind = -1;
  if (want_out_qsl_cpu)
    out_qsl_cpu_kind = pick_out(out_qsl_cpu, batch + 1, true, {&qsl, qsl_cpu_t, out_qsl_kind >= 2 ? &out_qsl : nullptr},
                                {&qsl, &seq, qsl_cpu_t, seq_cpu_t, &slot, out_qsl_kind >= 2 ? &out_qsl : nullptr,
                                 out_seq_kind >= 2 ? &out_seq : nullptr});
  if (want_out_seq_cpu)
    out_seq_cpu_kind = pick_out(out_seq_cpu, batch, true, {&seq, seq_cpu_t, out_seq_kind >= 2 ? &out_seq : nullptr},
                                {&qsl, &seq, qsl_cpu_t, seq_cpu_t, &slot, out_qsl_kind >= 2 ? &out_qsl : nullptr,
                                 out_seq_kind >= 2 ? &out_seq : nullptr, out_qsl_cpu_kind >= 2 ? &out_qsl_cpu : nullptr});
  // The mirror output in place: the mirror input's DLTensor (else the main input's).
  auto mirror_out_p = [](int kind, DLTensor* main, DLTensor* mirror, Tensor& own) -> DLTensor* {
    if (kind < 0) return nullptr;
    if (kind == 0) return main;
    if (kind == 1) return mirror ? mirror : main;
    return own.ptr();
  };
  DLTensor* out_qsl_cpu_p = mirror_out_p(out_qsl_cpu_kind, qsl.ptr(), in_qsl_cpu_p, out_qsl_cpu);
  // The bound's output: the input itself (in place), or its own tensor, sometimes over any
  // other tensor's memory.
  Tensor out_upper;
  const bool upper_in_place = upper_in && upper_out && fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  if (upper_out && !upper_in_place) {
    out_upper = make_tensor(fdp, {batch}, dtype(), true, {true, false});
    maybe_alias(fdp, out_upper, {&qsl, &seq, qsl_cpu_t, seq_cpu_t, &slot, &upper, out_qsl_kind >= 2 ? &out_qsl : nullptr,
                                 out_seq_kind >= 2 ? &out_seq : nullptr}, 3);
  }
  DLTensor* out_upper_p = !upper_out ? nullptr : upper_in_place ? upper.ptr() : out_upper.ptr();
  DLTensor* out_seq_cpu_p = mirror_out_p(out_seq_cpu_kind, seq.ptr(), in_seq_cpu_p, out_seq_cpu);
  std::vector<Tensor*> all = {&qsl, &seq, &qsl_cpu, &seq_cpu, &out_qsl, &out_seq, &out_qsl_cpu, &out_seq_cpu, &slot,
                              &upper, &out_upper};
  auto of = [&](const DLTensor* d) -> Tensor* {
    for (Tensor* t : all) if (t->mem && t->exists && &t->t == d) return t;
    return nullptr;
  };
  // Anything written in place is an output for the unchanged-input check.
  for (DLTensor* d : {out_qsl_p, out_seq_p, out_qsl_cpu_p, out_seq_cpu_p, out_upper_p}) if (Tensor* t = of(d)) t->output = true;

  cattn_common_attn_metadata_t m = CATTN_COMMON_ATTN_METADATA_INIT;
  Struct<cattn_common_attn_metadata_t> meta(m, pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  static DLTensor dummy[3] = {};  // copied through, never read
  cattn_common_attn_metadata_t* in = meta.get();
  in->query_start_loc = qsl.ptr();
  in->seq_lens = seq.ptr();
  in->query_start_loc_cpu = in_qsl_cpu_p;
  in->seq_lens_cpu = in_seq_cpu_p;
  in->num_computed_tokens_cpu = fdp.ConsumeBool() ? &dummy[0] : nullptr;
  in->block_table_tensor = fdp.ConsumeBool() ? &dummy[1] : nullptr;
  in->slot_mapping = &dummy[2];
  in->logits_indices_padded = fdp.ConsumeBool() ? &dummy[2] : nullptr;
  in->num_reqs = fdp.ConsumeIntegralInRange<int64_t>(-1, 20);
  in->num_actual_tokens = pick_value(fdp, 400);
  in->max_query_len = pick_value(fdp, 40);
  in->max_seq_len = pick_value(fdp, 400);
  in->num_logits_indices = fdp.ConsumeIntegralInRange<int64_t>(0, 9);
  in->causal = fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  in->seq_lens_cpu_upper_bound = upper_in ? upper.ptr() : nullptr;  // read from a 1.1 struct only
  // `out` may be the metadata struct itself when every output is its own input (then the
  // pointers the caller sets in out are the inputs' ones).
  const bool same_struct = out_qsl_p == in->query_start_loc && out_seq_p == in->seq_lens &&
                           out_qsl_cpu_p == in->query_start_loc_cpu && out_seq_cpu_p == in->seq_lens_cpu &&
                           out_upper_p == in->seq_lens_cpu_upper_bound &&
                           fdp.ConsumeIntegralInRange<int>(0, 1) == 0;
  Struct<cattn_common_attn_metadata_t> out_meta(CATTN_COMMON_ATTN_METADATA_INIT,
                                                pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* out = same_struct ? in : out_meta.get();
  out->query_start_loc = out_qsl_p;
  out->seq_lens = out_seq_p;
  out->query_start_loc_cpu = out_qsl_cpu_p;
  out->seq_lens_cpu = out_seq_cpu_p;
  out->seq_lens_cpu_upper_bound = out_upper_p;  // read from a 1.1 out only
  out->reserved0 = 5;  // the call writes 0

  const size_t args_size = pick_struct_size(fdp, CATTN_FUZZ_EXTEND_ARGS_SIZES);
  Struct<cattn_extend_all_queries_by_n_args_t> args(CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT, args_size);
  cattn_extend_all_queries_by_n_args_t* a = args.get();
  // The metadata or the args copied over an output's memory now and then: refused. (Never both:
  // the second copy could land on the first, and a struct of garbage pointers is not a defect.)
  bool meta_over_out = false, args_over_out = false;
  Tensor* seq_out = of(out_seq_p);
  a->metadata = same_struct || !seq_out ? in : maybe_struct_over_output(fdp, meta, *seq_out, &meta_over_out);
  a->n = n;
  a->new_slot_mapping = slot_given ? slot.ptr() : nullptr;
  a->out = out;
  Tensor* qsl_out = of(out_qsl_p);
  cattn_extend_all_queries_by_n_args_t* call_args =
      qsl_out && !meta_over_out ? maybe_struct_over_output(fdp, args, *qsl_out, &args_over_out) : a;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const cattn_common_attn_metadata_t in_before = meta.value();
  const auto meta_snap = meta.snapshot(), out_meta_snap = out_meta.snapshot(), args_snap = args.snapshot();

  // Prediction.
  bool ok = !null_args && struct_size_ok(args_size, CATTN_FUZZ_EXTEND_ARGS_SIZES) &&
            struct_size_ok(in_before.struct_size, CATTN_FUZZ_METADATA_SIZES) &&
            struct_size_ok(out->struct_size, CATTN_FUZZ_METADATA_SIZES) && n >= 0 &&
            in_before.reserved0 == 0 && !meta_over_out && !args_over_out;
  Tensor* tq = of(qsl.ptr());
  Tensor* ts = of(seq.ptr());
  Tensor* tqc = of(in_qsl_cpu_p);
  Tensor* tsc = of(in_seq_cpu_p);
  Tensor* toq = of(out_qsl_p);
  Tensor* tos = of(out_seq_p);
  Tensor* toqc = of(out_qsl_cpu_p);
  Tensor* tosc = of(out_seq_cpu_p);
  auto present = [](DLTensor* d) { return d != nullptr; };
  auto index1 = [](const Tensor* t) { return t && t->usable() && t->ndim() == 1 && t->index(); };
  int64_t b = 0;
  ok = ok && index1(ts) && index1(tq) && index1(toq) && index1(tos) && writable(*toq) && writable(*tos);
  if (ok) {
    b = ts->dim(0);
    ok = tq->dim(0) == b + 1 && toq->dim(0) == b + 1 && tos->dim(0) == b;
  }
  auto mirror_ok = [&](DLTensor* in_p, DLTensor* out_p, Tensor* ti, Tensor* to, int64_t len) {
    if (present(in_p) != present(out_p)) return false;
    if (!present(in_p)) return true;
    return index1(ti) && !ti->device && ti->dim(0) == len && index1(to) && !to->device &&
           writable(*to) && to->dim(0) == len;
  };
  ok = ok && mirror_ok(in_qsl_cpu_p, out_qsl_cpu_p, tqc, toqc, b + 1) &&
       mirror_ok(in_seq_cpu_p, out_seq_cpu_p, tsc, tosc, b);
  if (ok && slot_given && slot.exists) ok = slot.usable() && slot.ndim() == 1;
  // Aliases: an output of query_start_loc (or its mirror) may be the very view of
  // query_start_loc or of its mirror, otherwise it shares no byte with them; it never shares one
  // with seq_lens or its mirror; the same the other way round. Outputs of different tensors
  // never share a byte; a tensor's output and its mirror's output may be one view.
  if (ok) {
    const std::vector<Tensor*> in_q = {tq, tqc}, in_s = {ts, tsc}, out_q = {toq, toqc}, out_s = {tos, tosc};
    auto safe = [](Tensor* o, const std::vector<Tensor*>& own, const std::vector<Tensor*>& others) {
      if (!o) return true;
      for (Tensor* i : own)
        if (i && !same_view(*o, *i) && overlaps(*o, *i)) return false;
      for (Tensor* i : others)
        if (i && overlaps(*o, *i)) return false;
      return true;
    };
    for (Tensor* o : out_q) ok = ok && safe(o, in_q, in_s);
    for (Tensor* o : out_s) ok = ok && safe(o, in_s, in_q);
    for (Tensor* a : out_s)
      for (Tensor* b : out_q) ok = ok && !(a && b && overlaps(*a, *b));
    ok = ok && !(toqc && !same_view(*toq, *toqc) && overlaps(*toq, *toqc));
    ok = ok && !(tosc && !same_view(*tos, *tosc) && overlaps(*tos, *tosc));
    // new_slot_mapping is an argument (its pointer is passed on): no output over it.
    if (slot_given && slot.exists)
      for (Tensor* o : {toq, tos, toqc, tosc}) ok = ok && !(o && overlaps(*o, slot));
  }
  // The bound: a mirror pair read from a 1.1 input and written to a 1.1 out. A given input is
  // an argument (checked, recorded) even when a 1.0 out does not take the result.
  const bool in_11 = in_before.struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE_1_1;
  const bool out_11 = out->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE_1_1;
  Tensor* tu = in_11 && upper_in && upper.ptr() ? &upper : nullptr;  // a NULL input is absent
  Tensor* tou = out_11 && out_upper_p ? of(out_upper_p) : nullptr;
  if (ok && tu) ok = tu->usable();
  if (ok && tou) ok = tou->usable();
  if (ok && out_11) {
    ok = (tu != nullptr) == (tou != nullptr);
    if (ok && tu)
      ok = index1(tu) && !tu->device && tu->dim(0) == b && index1(tou) && !tou->device && writable(*tou) &&
           tou->dim(0) == b;
  }
  if (ok) {
    const std::vector<Tensor*> recorded_outs = {toq, tos, toqc, tosc};
    if (tu)
      for (Tensor* o : recorded_outs) ok = ok && !(o && overlaps(*o, *tu));
    if (tou) {
      for (Tensor* i : {tq, ts, tqc, tsc}) ok = ok && !(i && overlaps(*tou, *i));
      if (slot_given && slot.exists) ok = ok && !overlaps(*tou, slot);
      for (Tensor* o : recorded_outs) ok = ok && !(o && overlaps(*tou, *o));
      ok = ok && (same_view(*tou, *tu) || !overlaps(*tou, *tu));
    }
  }
  // One device for the main tensors and the slot mapping: this build serves only the host.
  for (Tensor* t : {tq, ts, toq, tos}) ok = ok && !t->device;
  if (ok && slot_given && slot.exists) ok = !slot.device;
  // On the host a mirror must hold its tensor's values, unless it is that very view.
  auto mirror_agrees = [](Tensor* main, Tensor* mirror) {
    if (!mirror || same_view(*main, *mirror)) return true;
    const std::vector<int64_t> a = main->values(), b = mirror->values();
    return a == b;
  };
  ok = ok && mirror_agrees(tq, tqc) && mirror_agrees(ts, tsc);
  int64_t tokens = 0, mq = 0, ms = 0, nb = 0;
  ok = ok && !__builtin_mul_overflow(n, b, &nb) && add_fits(in_before.num_actual_tokens, nb, &tokens) &&
       add_fits(in_before.max_query_len, n, &mq) && add_fits(in_before.max_seq_len, n, &ms);
  // Values: every shifted entry must exist in int64 and fit its output.
  struct Job { Tensor* src; Tensor* dst; int64_t add, per; };
  std::vector<Job> jobs;
  if (ok) {
    jobs.push_back({tq, toq, 0, n});
    jobs.push_back({ts, tos, n, 0});
    if (present(in_qsl_cpu_p)) jobs.push_back({tqc, toqc, 0, n});
    if (present(in_seq_cpu_p)) jobs.push_back({tsc, tosc, n, 0});
    if (tou) jobs.push_back({tu, tou, n, 0});
  }
  std::vector<std::vector<int64_t>> results;
  for (const Job& j : jobs) {
    std::vector<int64_t> r;
    const std::vector<int64_t> v = j.src->values();
    for (int64_t i = 0; ok && i < static_cast<int64_t>(v.size()); ++i) {
      int64_t d, x;
      ok = !__builtin_mul_overflow(i, j.per, &d) && add_fits(d, j.add, &d) && add_fits(v[static_cast<size_t>(i)], d, &x) && fits(*j.dst, x);
      r.push_back(x);
    }
    results.push_back(r);
  }
  FZ_LOG("n %ld b %ld mirrors %d/%d outputs %d/%d/%d/%d same_struct %d predicted %d\n", (long)n, (long)b,
         qsl_mirror, seq_mirror, out_qsl_kind, out_seq_kind, out_qsl_cpu_kind, out_seq_cpu_kind, same_struct, ok);
  FZ_LOG("  shared buffers: %d\n", [&] {
    int shared = 0;
    for (Tensor* t : {&out_qsl, &out_seq, &out_qsl_cpu, &out_seq_cpu}) shared += t->mem && t->mem.use_count() > 1;
    return shared;
  }());

  for (DLTensor* d : {qsl.ptr(), seq.ptr(), in_qsl_cpu_p, in_seq_cpu_p, out_qsl_p, out_seq_p, out_qsl_cpu_p, out_seq_cpu_p,
                      upper_in ? upper.ptr() : nullptr, out_upper_p})
    FZ_LOG("  %s\n", of(d) ? describe(*of(d)).c_str() : d ? "(unlisted)" : "NULL");
  FZ_LOG("  struct sizes %zu %zu %zu scalars %ld %ld %ld\n", args_size, (size_t)in_before.struct_size,
         (size_t)out->struct_size, (long)in_before.num_actual_tokens, (long)in_before.max_query_len,
         (long)in_before.max_seq_len);
  Watch w;
  for (Tensor* t : all) w.add(t);
  const cattn_status_t s = cattn_extend_all_queries_by_n(null_args ? nullptr : call_args);
  FZ_CHECK(args.unchanged(args_snap), "the call wrote its args struct");
  if (!check_outcome(s, kFn, ok, w)) {
    FZ_CHECK(meta.unchanged(meta_snap) && out_meta.unchanged(out_meta_snap), "a failed call wrote a metadata struct");
    return 0;
  }
  // Tensors: each output gets its job's values (memory shared by two jobs gets the same ones);
  // every other byte of every buffer stays.
  for (size_t k = 0; k < jobs.size(); ++k)
    for (size_t i = 0; i < results[k].size(); ++i) w.put(*jobs[k].dst, static_cast<int64_t>(i), results[k][i]);
  check_images(w, kFn);
  // The struct: documented fields set, the rest (the caller's tensors, struct_size) as it was.
  cattn_common_attn_metadata_t expect = same_struct ? in_before : out_meta.value();
  if (!same_struct) {
    std::memcpy(&expect, out_meta_snap.data() + kGuard, sizeof expect);
  }
  expect.num_computed_tokens_cpu = in_before.num_computed_tokens_cpu;
  expect.block_table_tensor = in_before.block_table_tensor;
  expect.slot_mapping = a->new_slot_mapping;
  expect.logits_indices_padded = in_before.logits_indices_padded;
  expect.num_reqs = in_before.num_reqs;
  expect.num_actual_tokens = tokens;
  expect.max_query_len = mq;
  expect.max_seq_len = ms;
  expect.num_logits_indices = in_before.num_logits_indices;
  expect.causal = in_before.causal;
  expect.reserved0 = 0;
  if (same_struct) FZ_CHECK(meta.equals(meta_snap, expect), "the metadata struct differs");
  else {
    FZ_CHECK(out_meta.equals(out_meta_snap, expect), "out differs");
    FZ_CHECK(meta.unchanged(meta_snap), "the input metadata changed");
  }
  return 0;
}
