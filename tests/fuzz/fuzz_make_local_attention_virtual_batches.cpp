// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 9: cattn_make_local_attention_virtual_batches, its size query
// cattn_make_local_attention_virtual_batches_size, and the plan calls (get_shape, fill,
// make_block_table, destroy). Random batches (zero-length requests and sequences included),
// chunk and block sizes (non-divisors and extremes too), block tables of any width and dtype,
// output tensors of every shape, dtype and layout; one plan serves every later call. The
// reference splits each request at chunk boundaries from first principles
// (tests/ref/make_local_attention_virtual_batches_ref.h).
//
// Beyond the small batches: plans of more than 4,096 virtual batches, from long queries over
// small chunks or from many requests (broadcast mirrors and block tables, up to kMaxBroadcast
// requests and past it, which is refused); the cap on the virtual
// batches (args->max_virtual_batches absent in a 1.0 struct, 0, exact, below, negative, and the
// cap derived from num_actual_tokens), checked by the size query and the create call alike. A
// plan is host memory of 40 bytes per virtual batch, so plans the library accepts with more than
// kMaxCreate virtual batches are only sized, not created. Fill and make_block_table outputs may
// lie over any tensor's memory: refused when they share a byte with the block table they read or
// with each other, accepted over the plan's mirrors (which those calls do not read). Destroyed
// plans, pointers of another kind and pointers never created are refused, and destroying one of
// them frees nothing.
#define CATTN_FUZZ_MAX_PAYLOAD (1 << 20)
#include <cstddef>

#include "fuzz_support.h"
#include "ref/make_local_attention_virtual_batches_ref.h"

using namespace cattn_fuzz;

namespace {

constexpr int64_t kMaxCreate = 1 << 13;  // the most virtual batches of a plan the target creates
// The 1.0 struct ends at `plan`; max_virtual_batches was appended in 1.1.
constexpr size_t kArgsSize10 = offsetof(cattn_local_attention_args_t, plan) + sizeof(void*);

bool index_nd(const Tensor& t, int nd) { return t.usable() && t.ndim() == nd && t.index(); }
bool same_dtype(const Tensor& a, const Tensor& b) { return cattn_fuzz::same_dtype(a.t.dtype, b.t.dtype); }

// A block table of `rows` x `cols` filled with `values` (cycled): from make_tensor when it fits
// the owned memory, else a broadcast view (every row the same) of one real row.
Tensor make_table(FuzzedDataProvider& fdp, int64_t rows, int64_t cols, DLDataType dtype, int64_t typical) {
  Tensor t;
  if (rows <= 4096) {
    t = make_tensor(fdp, {rows, cols}, dtype, false, {true, true, true});
  } else {
    const std::vector<int64_t> strides{0, 1};
    t = make_tensor_with({rows, cols}, &strides, dtype, false);
  }
  if (t.usable() && t.t.data) {
    // A broadcast table is filled through its distinct elements only.
    const int64_t n = t.broadcast ? std::min<int64_t>(t.numel, 64) : t.numel;
    std::vector<int64_t> vals(static_cast<size_t>(std::min<int64_t>(n, 1 << 16)));
    for (auto& v : vals) v = pick_value(fdp, typical);
    if (!t.broadcast) t.fill(vals);
    else
      for (int64_t c = 0; c < std::min<int64_t>(cols, 64); ++c) t.set(c, vals[static_cast<size_t>(c % static_cast<int64_t>(vals.size()))]);
  }
  return t;
}

// The expected image of a gathered block table, in the watch's image of out's buffer.
void gathered(Watch& w, const Tensor& out, const LocalPlanRef& plan, const Tensor& table, int64_t plan_cols) {
  const int64_t width = table.dim(1);
  for (size_t v = 0; v < plan.batches.size(); ++v)
    for (int64_t p = 0; p < plan.pages; ++p) {
      const int64_t col = static_cast<int64_t>(std::min<__int128>(static_cast<__int128>(plan.batches[v].first_page) + p, plan_cols - 1));
      w.put(out, static_cast<int64_t>(v) * plan.pages + p, table.get(plan.batches[v].request * width + col));
    }
}

// The size of a plan object plus the registry's allowance, learned from the first size query
// (plan_bytes = 8 * (5V + 1) + this).
int64_t g_plan_overhead = -1;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };
  // 0: long queries over small chunks; 1: many requests (broadcast mirrors); else small batches.
  const int mode = fdp.ConsumeIntegralInRange<int>(0, 31);
  int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  int64_t chunk = pick_scalar(fdp, 1, 16);
  if (mode <= 1 && fdp.ConsumeIntegralInRange<int>(0, 3) != 0) chunk = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
  int64_t block_size = pick_scalar(fdp, 1, 8);
  if (chunk >= 1 && chunk <= 16 && fdp.ConsumeIntegralInRange<int>(0, 3) != 0) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= chunk; ++d) if (chunk % d == 0) divisors.push_back(d);
    block_size = divisors[fdp.ConsumeIntegralInRange<size_t>(0, divisors.size() - 1)];
  }
  const int64_t cols = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  Tensor qsl, seq, table;
  if (mode == 1) {
    // Many requests without query tokens (a broadcast query_start_loc_cpu), each one virtual
    // batch; sequence lengths real (up to 2^16 requests) or broadcast too.
    const bool limit = fdp.ConsumeIntegral<uint8_t>() == 0x5C;  // a full scan up to the limit is slow
    const int64_t sizes[] = {4097, kMaxCreate, 1 << 16, kMaxBroadcast, int64_t{1} << 32, int64_t{1} << 40,
                             limit ? kMaxBroadcast - 1 - fdp.ConsumeIntegralInRange<int64_t>(0, 1) : kMaxBroadcast};
    const int c = fdp.ConsumeIntegralInRange<int>(0, 9);
    batch = c < 7 ? sizes[c] : fdp.ConsumeIntegralInRange<int64_t>(1000, kMaxCreate);
    qsl = make_broadcast_1d(batch + 1, dtype(), pick_value(fdp, 100));
    if (batch <= (1 << 16) && fdp.ConsumeBool()) {
      seq = make_tensor_with({batch}, nullptr, dtype(), false);
      const int64_t step = fdp.ConsumeIntegralInRange<int64_t>(0, 7), top = fdp.ConsumeIntegralInRange<int64_t>(1, 100);
      for (int64_t i = 0; seq.t.data && i < batch; ++i) seq.set(i, (i * step) % top);
      if (seq.t.data && fdp.ConsumeIntegralInRange<int>(0, 7) == 0) seq.set(fdp.ConsumeIntegralInRange<int64_t>(0, batch - 1), -1);
    } else {
      seq = make_broadcast_1d(batch, dtype(), fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? -1 : pick_value(fdp, 100));
    }
    table = make_table(fdp, batch, std::max<int64_t>(cols, 1), dtype(), 1000);
  } else {
    std::vector<int64_t> qsl_values, seq_values;
    if (mode == 0) {
      // A few long queries: thousands of virtual batches from a few bytes.
      batch = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
      qsl_values = cumulative(fdp, batch, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 1 << 12); }, true);
    } else {
      qsl_values = cumulative(fdp, batch, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 20); }, true);
    }
    seq_values.resize(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) {
      const __int128 q = static_cast<__int128>(qsl_values[static_cast<size_t>(i + 1)]) - qsl_values[static_cast<size_t>(i)];
      seq_values[static_cast<size_t>(i)] = fdp.ConsumeIntegralInRange<int>(0, 15) == 0
                                               ? pick_value(fdp, 60)
                                               : (q > 0 && q <= (1 << 20) ? static_cast<int64_t>(q) : 0) + fdp.ConsumeIntegralInRange<int64_t>(0, 40);
    }
    qsl = make_tensor(fdp, {batch + 1}, dtype(), false, {true, true, true});
    seq = make_tensor(fdp, {batch}, dtype(), false, {true, true, true});
    qsl.fill(qsl_values);
    seq.fill(seq_values);
    table = make_table(fdp, batch, cols, dtype(), 1000);
  }

  // Prediction for the plan: shapes, the scan limit, the values.
  const bool shapes_ok = chunk >= 1 && block_size >= 1 && chunk % block_size == 0 && host_index(seq, 1) &&
                         host_index(qsl, 1) && seq.dim(0) >= 1 && qsl.dim(0) == seq.dim(0) + 1 &&
                         index_nd(table, 2) && table.dim(0) == seq.dim(0) && table.dim(1) >= 1 &&
                         scan_bounded(qsl) && scan_bounded(seq);
  // The mirrors as the reference reads them: a huge broadcast pair by its closed form (no
  // request has query tokens, so each is one virtual batch when its length is >= 0).
  const bool closed_form = shapes_ok && constant_1d(qsl) && constant_1d(seq) && seq.numel > (1 << 20);
  std::vector<int64_t> qsl_seen, seq_seen;
  __int128 count = -1;
  if (closed_form) {
    count = seq.get(0) >= 0 ? seq.numel : -1;
  } else if (shapes_ok) {
    qsl_seen = qsl.values();
    seq_seen = seq.values();
    count = ref_local_count(qsl_seen, seq_seen, chunk);
  }

  static DLTensor dummy[2] = {};
  cattn_common_attn_metadata_t init = CATTN_COMMON_ATTN_METADATA_INIT;
  Struct<cattn_common_attn_metadata_t> meta(init, pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* m = meta.get();
  m->query_start_loc = &dummy[0];
  m->seq_lens = &dummy[1];
  m->query_start_loc_cpu = qsl.ptr();
  m->seq_lens_cpu = seq.ptr();
  m->block_table_tensor = table.ptr();
  const bool with_slots = fdp.ConsumeBool();
  Tensor slots = with_slots ? make_tensor(fdp, {fdp.ConsumeIntegralInRange<int64_t>(0, 8)}, dtype(), false) : Tensor();
  m->slot_mapping = with_slots ? slots.ptr() : nullptr;
  // num_actual_tokens, which caps the plan unless max_virtual_batches does: any value, or the
  // batch's token count (vLLM's), or 0.
  __int128 total_q = 0;
  for (size_t i = 0; i + 1 < qsl_seen.size(); ++i) total_q += static_cast<__int128>(qsl_seen[i + 1]) - qsl_seen[i];
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: m->num_actual_tokens = total_q >= 0 && total_q <= INT64_MAX ? static_cast<int64_t>(total_q) : 0; break;
    case 1: m->num_actual_tokens = 0; break;
    default: m->num_actual_tokens = pick_value(fdp, 200); break;
  }
  // args: the 1.1 struct (with max_virtual_batches) or a smaller one (a 1.0 caller's, which
  // lacks the field: whatever its bytes hold is not read).
  size_t args_size = pick_struct_size(fdp, CATTN_FUZZ_LOCAL_ATTENTION_ARGS_SIZES);
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) args_size = kArgsSize10;
  const bool has_cap = args_size >= sizeof(cattn_local_attention_args_t);
  Struct<cattn_local_attention_args_t> args(CATTN_LOCAL_ATTENTION_ARGS_INIT, args_size);
  cattn_local_attention_args_t* a = args.get();
  a->attn_chunk_size = chunk;
  a->block_size = block_size;
  a->metadata = m;
  a->plan = reinterpret_cast<cattn_local_attention_plan_t*>(uintptr_t{0x5A5A});  // never read
  const int64_t v_guess = count >= 0 && count < INT64_MAX ? static_cast<int64_t>(count) : 1;
  switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: case 1: case 2: a->max_virtual_batches = 0; break;
    case 3: a->max_virtual_batches = v_guess; break;
    case 4: a->max_virtual_batches = v_guess - 1; break;
    case 5: a->max_virtual_batches = v_guess + fdp.ConsumeIntegralInRange<int64_t>(1, 3); break;
    case 6: a->max_virtual_batches = fdp.ConsumeBool() ? -1 : std::numeric_limits<int64_t>::min(); break;
    case 7: a->max_virtual_batches = std::numeric_limits<int64_t>::max(); break;
    default: a->max_virtual_batches = pick_value(fdp, 64); break;
  }
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_snap = args.snapshot(), meta_snap = meta.snapshot();

  // The cap: the field when the struct has it and it is > 0 (negative is refused), else
  // 2 * B + cdiv(max(num_actual_tokens, 0), chunk), saturating.
  const int64_t field = has_cap ? a->max_virtual_batches : 0;
  __int128 cap = field;
  if (field == 0 && shapes_ok) {
    const __int128 tokens = std::max<int64_t>(m->num_actual_tokens, 0);
    cap = 2 * static_cast<__int128>(seq.dim(0)) + (tokens + chunk - 1) / chunk;
    if (cap > INT64_MAX) cap = INT64_MAX;
  }
  // plan_bytes = 8 * (5V + 1) + the plan object and registry allowance, within int64. The
  // allowance is learned from the first successful size query; until then a V within reach of
  // the limit leaves the outcome open.
  const __int128 plan_entries_bytes = count >= 0 ? (count * 5 + 1) * 8 : 0;
  const bool bytes_surely_fit = plan_entries_bytes + (g_plan_overhead >= 0 ? g_plan_overhead : 256 + 4096) <= INT64_MAX;
  const bool bytes_surely_overflow = plan_entries_bytes + (g_plan_overhead >= 0 ? g_plan_overhead : 256) > INT64_MAX;
  const bool base_ok = !null_args && struct_size_ok(args_size, CATTN_FUZZ_LOCAL_ATTENTION_ARGS_SIZES) &&
                       struct_size_ok(m->struct_size, CATTN_FUZZ_METADATA_SIZES) &&
                       field >= 0 && count >= 0 && count <= cap;
  const bool ok = base_ok && bytes_surely_fit;
  const bool undecided = base_ok && !bytes_surely_fit && !bytes_surely_overflow;
  FZ_LOG("mode %d chunk %ld bs %ld count %ld cap %ld field %ld (has %d) tokens %ld predicted %d\n  qsl %s\n  seq %s\n  table %s\n",
         mode, (long)chunk, (long)block_size, (long)count, (long)cap, (long)field, has_cap, (long)m->num_actual_tokens, ok,
         describe(qsl).c_str(), describe(seq).c_str(), describe(table).c_str());

  Watch w;
  for (const Tensor* t : {&qsl, &seq, &table, &slots}) w.add(t);
  {  // The size query: the same checks, no allocation.
    Bytes out(3 * sizeof(int64_t), kPoisonByte);
    const auto out_before = out.all();
    uint8_t* p = out.payload();
    const bool null_v = fdp.ConsumeIntegralInRange<int>(0, 7) == 0, null_p = fdp.ConsumeIntegralInRange<int>(0, 7) == 0,
               null_b = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
    const cattn_status_t s = cattn_make_local_attention_virtual_batches_size(
        null_args ? nullptr : a, null_v ? nullptr : reinterpret_cast<int64_t*>(p),
        null_p ? nullptr : reinterpret_cast<int64_t*>(p + 8), null_b ? nullptr : reinterpret_cast<size_t*>(p + 16));
    FZ_CHECK(meta.unchanged(meta_snap) && args.unchanged(args_snap), "the size query wrote a struct");
    if (!check_outcome(s, "cattn_make_local_attention_virtual_batches_size", undecided ? s == CATTN_OK : ok, w)) {
      FZ_CHECK(out.all() == out_before, "a failed size query wrote its outputs");
    } else {
      std::vector<uint8_t> image = out_before;
      const int64_t v = static_cast<int64_t>(count), pages = chunk / block_size;
      int64_t bytes = 0;
      std::memcpy(&bytes, p + 16, sizeof bytes);
      if (!null_v) std::memcpy(image.data() + kGuard, &v, 8);
      if (!null_p) std::memcpy(image.data() + kGuard + 8, &pages, 8);
      if (!null_b) {
        std::memcpy(image.data() + kGuard + 16, &bytes, 8);
        FZ_CHECK(bytes >= 0 && static_cast<__int128>(bytes) >= 40 * static_cast<__int128>(v),
                 "plan_bytes " + std::to_string(bytes) + " for " + std::to_string(v) + " virtual batches");
        const int64_t overhead = bytes - static_cast<int64_t>(plan_entries_bytes);
        FZ_CHECK(overhead >= 256 && overhead <= 256 + 4096, "plan_bytes beyond 8 * (5V + 1): " + std::to_string(overhead));
        if (g_plan_overhead < 0) g_plan_overhead = overhead;
        FZ_CHECK(overhead == g_plan_overhead, "plan_bytes - 8 * (5V + 1) changed from " + std::to_string(g_plan_overhead) +
                                                  " to " + std::to_string(overhead));
      }
      FZ_CHECK(out.all() == image, "the size query's outputs differ: " + first_difference(out.all(), image));
    }
    if (undecided) return 0;  // the allowance is known from now on
  }
  // A plan the library accepts but that is larger than the target creates: sized only.
  if (ok && count > kMaxCreate) return 0;

  const cattn_status_t s = cattn_make_local_attention_virtual_batches(null_args ? nullptr : a);
  FZ_CHECK(meta.unchanged(meta_snap), "the call wrote the metadata");
  if (!check_outcome(s, "cattn_make_local_attention_virtual_batches", ok, w)) {
    FZ_CHECK(args.unchanged(args_snap), "a failed call wrote args");
    // The plan calls refuse a NULL plan.
    FZ_CHECK(cattn_local_attention_plan_get_shape(nullptr, nullptr, nullptr) == CATTN_INVALID_ARGUMENT, "get_shape(NULL)");
    return 0;
  }
  check_images(w, "cattn_make_local_attention_virtual_batches");
  cattn_local_attention_plan_t* plan = a->plan;
  FZ_CHECK(plan != nullptr, "no plan");
  {
    cattn_local_attention_args_t e;
    std::memcpy(&e, args_snap.data() + kGuard, sizeof e);
    e.plan = plan;
    FZ_CHECK(args.equals(args_snap, e), "args changed beyond plan");
  }
  const LocalPlanRef ref = ref_local_plan(qsl_seen, seq_seen, chunk, block_size);
  const int64_t v_count = static_cast<int64_t>(ref.batches.size()), pages = ref.pages, plan_cols = table.dim(1);
  FZ_CHECK(v_count == count, "the reference plan disagrees with its count");
  const int64_t plan_batch = seq.dim(0);  // what the library saw (a mutation may have resized it)
  {
    int64_t got_v = -1, got_p = -1;
    FZ_CHECK(cattn_local_attention_plan_get_shape(plan, &got_v, &got_p) == CATTN_OK, "get_shape");
    FZ_CHECK(got_v == v_count && got_p == pages, "plan shape " + std::to_string(got_v) + "x" + std::to_string(got_p) +
                                                     ", expected " + std::to_string(v_count) + "x" + std::to_string(pages));
    FZ_CHECK(cattn_local_attention_plan_get_shape(plan, nullptr, nullptr) == CATTN_OK, "get_shape(NULLs)");
  }

  // fill: the gathered table comes from the metadata's table (or a wider new one).
  const bool wider = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  Tensor table2 = wider ? make_table(fdp, plan_batch, plan_cols + fdp.ConsumeIntegralInRange<int64_t>(-1, 3), table.t.dtype, 1000) : Tensor();
  if (wider) m->block_table_tensor = table2.ptr();
  Tensor& source = wider ? table2 : table;
  const DLDataType table_dtype = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? dtype() : table.t.dtype;
  Tensor o_qsl_cpu = make_tensor(fdp, {v_count + 1}, dtype(), true, {true, false});
  Tensor o_seq_cpu = make_tensor(fdp, {v_count}, dtype(), true, {true, false});
  Tensor o_computed = make_tensor(fdp, {v_count}, dtype(), true, {true, false});
  Tensor o_table = make_tensor(fdp, {v_count, pages}, table_dtype, true);
  const bool with_copies = fdp.ConsumeBool();
  Tensor o_qsl = with_copies ? make_tensor(fdp, {v_count + 1}, dtype(), true) : Tensor();
  Tensor o_seq = with_copies ? make_tensor(fdp, {v_count}, dtype(), true) : Tensor();
  // Outputs over the source table (refused), the plan's mirrors or the slot mapping (neither
  // is compared), or an earlier output (refused).
  {
    Tensor* outs[6] = {&o_table, &o_qsl_cpu, &o_seq_cpu, &o_computed, &o_qsl, &o_seq};
    for (int i = 0; i < 6; ++i)
      maybe_alias(fdp, *outs[i], {&source, &qsl, &seq, &slots, i > 0 ? outs[0] : nullptr, i > 1 ? outs[1] : nullptr,
                                  i > 2 ? outs[2] : nullptr, i > 3 ? outs[3] : nullptr, i > 4 ? outs[4] : nullptr},
                  8);
  }
  Struct<cattn_common_attn_metadata_t> out_meta(init, pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* o = out_meta.get();
  o->query_start_loc_cpu = o_qsl_cpu.ptr();
  o->seq_lens_cpu = o_seq_cpu.ptr();
  o->num_computed_tokens_cpu = o_computed.ptr();
  o->block_table_tensor = o_table.ptr();
  o->query_start_loc = with_copies ? o_qsl.ptr() : nullptr;
  o->seq_lens = with_copies ? o_seq.ptr() : nullptr;
  o->logits_indices_padded = &dummy[0];
  o->num_logits_indices = 3;
  const size_t fill_size = pick_struct_size(fdp, CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE);
  Struct<cattn_local_attention_fill_args_t> fill(CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT, fill_size);
  fill.get()->out = o;
  // The metadata, or the fill args, copied over the gathered table's memory now and then:
  // refused.
  bool meta_over_out = false, fill_over_out = false;
  fill.get()->metadata = maybe_struct_over_output(fdp, meta, o_table, &meta_over_out);
  cattn_local_attention_fill_args_t* fill_args =
      meta_over_out ? fill.get() : maybe_struct_over_output(fdp, fill, o_table, &fill_over_out);
  const bool null_plan = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const auto fill_snap = fill.snapshot(), out_snap = out_meta.snapshot();
  const cattn_common_attn_metadata_t m_now = meta.value();

  int64_t cum_q = 0;
  for (const auto& b : ref.batches) cum_q += b.q;
  bool fok = !null_plan && fill_size >= CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE &&
             struct_size_ok(m_now.struct_size, CATTN_FUZZ_METADATA_SIZES) &&
             struct_size_ok(o->struct_size, CATTN_FUZZ_METADATA_SIZES) && !meta_over_out && !fill_over_out;
  fok = fok && index_nd(source, 2) && source.dim(0) == plan_batch && source.dim(1) >= plan_cols && !source.device;
  fok = fok && (!with_slots || !slots.exists || (slots.usable() && !slots.device));
  fok = fok && o_table.usable() && o_table.ndim() == 2 && same_dtype(o_table, source) && writable(o_table) &&
        o_table.dim(0) == v_count && o_table.dim(1) == pages && !o_table.device;
  auto vec_ok = [](const Tensor& t, int64_t len, int64_t max_value) {
    return index_nd(t, 1) && !t.device && writable(t) && t.dim(0) == len && fits(t, max_value);
  };
  fok = fok && vec_ok(o_qsl_cpu, v_count + 1, cum_q) && vec_ok(o_seq_cpu, v_count, ref.max_k) &&
        vec_ok(o_computed, v_count, ref.max_computed);
  if (with_copies) {
    fok = fok && (!o_qsl.exists || vec_ok(o_qsl, v_count + 1, cum_q)) && (!o_seq.exists || vec_ok(o_seq, v_count, ref.max_k));
  }
  {  // Every output disjoint from the block table read, the slot mapping passed on (an input,
     // though only its pointer is used) and every other output.
    const Tensor* outs[6] = {&o_table, &o_qsl_cpu, &o_seq_cpu, &o_computed, with_copies ? &o_qsl : nullptr,
                             with_copies ? &o_seq : nullptr};
    for (int i = 0; i < 6 && fok; ++i) {
      if (!outs[i]) continue;
      fok = !overlaps(*outs[i], source) && !(with_slots && overlaps(*outs[i], slots));
      for (int j = 0; j < i && fok; ++j) fok = !outs[j] || !overlaps(*outs[i], *outs[j]);
    }
  }
  FZ_LOG("fill: V %ld P %ld wider %d copies %d null plan %d sizes %zu %zu %zu predicted %d\n", (long)v_count,
         (long)pages, wider, with_copies, null_plan, fill_size, (size_t)m_now.struct_size, (size_t)o->struct_size, fok);
  for (const Tensor* t : std::initializer_list<const Tensor*>{&source, &slots, &o_qsl_cpu, &o_seq_cpu, &o_computed, &o_table, &o_qsl, &o_seq})
    FZ_LOG("  %s\n", describe(*t).c_str());
  Watch fw;
  for (const Tensor* t : {&qsl, &seq, &table, &table2, &slots, &o_qsl_cpu, &o_seq_cpu, &o_computed, &o_table, &o_qsl, &o_seq})
    fw.add(t);
  const cattn_status_t fs = cattn_local_attention_plan_fill(null_plan ? nullptr : plan, fill_args);
  FZ_CHECK(fill.unchanged(fill_snap), "fill wrote its args");
  if (!check_outcome(fs, "cattn_local_attention_plan_fill", fok, fw)) {
    FZ_CHECK(out_meta.unchanged(out_snap), "a failed fill wrote out");
  } else {
    std::vector<int64_t> cu{0}, ks, comp;
    for (const auto& b : ref.batches) {
      cu.push_back(cu.back() + b.q);
      ks.push_back(b.k);
      comp.push_back(b.k - b.q);
    }
    auto expect_vec = [&](const Tensor& t, const std::vector<int64_t>& v) {
      if (!t.mem || !t.exists) return;
      for (size_t i = 0; i < v.size(); ++i) fw.put(t, static_cast<int64_t>(i), v[i]);
    };
    expect_vec(o_qsl_cpu, cu);
    expect_vec(o_seq_cpu, ks);
    expect_vec(o_computed, comp);
    if (with_copies) {
      expect_vec(o_qsl, cu);
      expect_vec(o_seq, ks);
    }
    gathered(fw, o_table, ref, source, plan_cols);
    check_images(fw, "cattn_local_attention_plan_fill");
    cattn_common_attn_metadata_t e;
    std::memcpy(&e, out_snap.data() + kGuard, sizeof e);
    e.slot_mapping = m_now.slot_mapping;
    e.logits_indices_padded = nullptr;
    e.num_reqs = v_count;
    e.num_actual_tokens = m_now.num_actual_tokens;
    e.max_query_len = ref.max_q;
    e.max_seq_len = ref.max_k;
    e.num_logits_indices = 0;
    e.causal = 1;
    e.reserved0 = 0;
    FZ_CHECK(out_meta.equals(out_snap, e), "fill's scalar fields differ");
  }

  // make_block_table with a fresh table (any width >= the plan's) into a fresh output, which
  // may lie over the plan-time table or mirrors (not read) or over the table it reads (refused).
  Tensor table3 = make_table(fdp, plan_batch, plan_cols + fdp.ConsumeIntegralInRange<int64_t>(-1, 2), table.t.dtype, 5000);
  Tensor out3 = make_tensor(fdp, {v_count, pages}, fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? dtype() : table.t.dtype, true);
  maybe_alias(fdp, out3, {&table3, &table, &qsl, &seq});
  const bool null_plan3 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool bok = !null_plan3 && index_nd(table3, 2) && !table3.device && table3.dim(0) == plan_batch &&
                   table3.dim(1) >= plan_cols && out3.usable() && !out3.device && out3.ndim() == 2 &&
                   same_dtype(out3, table3) && writable(out3) && out3.dim(0) == v_count && out3.dim(1) == pages &&
                   !overlaps(out3, table3);
  Watch bw;
  for (const Tensor* t : {&table3, &out3, &table, &qsl, &seq}) bw.add(t);
  const cattn_status_t bs = cattn_local_attention_plan_make_block_table(null_plan3 ? nullptr : plan, table3.cptr(), out3.ptr(), nullptr);
  if (check_outcome(bs, "cattn_local_attention_plan_make_block_table", bok, bw)) {
    gathered(bw, out3, ref, table3, plan_cols);
    check_images(bw, "cattn_local_attention_plan_make_block_table");
  }

  // Handles: a pointer of another kind and one never created are refused, and destroying them
  // frees nothing; so is the plan once destroyed, however often.
  static cattn_context_t* ctx = [] {
    cattn_context_t* c = nullptr;
    FZ_CHECK(cattn_context_create(&c) == CATTN_OK && c, "context_create");
    return c;
  }();
  auto refused = [](cattn_status_t st, const char* fn) {
    check_status_valid(st);
    check_failure_message(st, fn);
    FZ_CHECK(st == CATTN_INVALID_ARGUMENT, std::string(fn) + " on a handle that is no live plan: " + cattn_status_string(st));
  };
  // A forged handle: at an odd address, never created (read before the registry vouches for it,
  // a misaligned access UBSan reports).
  alignas(16) static unsigned char forged[64];
  const int handle_case = fdp.ConsumeIntegralInRange<int>(0, 4);
  auto* not_a_plan = handle_case == 0   ? reinterpret_cast<cattn_local_attention_plan_t*>(ctx)
                     : handle_case == 1 ? reinterpret_cast<cattn_local_attention_plan_t*>(meta.get())
                                        : reinterpret_cast<cattn_local_attention_plan_t*>(
                                              forged + 1 + fdp.ConsumeIntegralInRange<int>(0, 14));
  if (handle_case <= 2) {
    int64_t v = -5;
    refused(cattn_local_attention_plan_get_shape(not_a_plan, &v, nullptr), "cattn_local_attention_plan_get_shape");
    FZ_CHECK(v == -5, "get_shape of no plan wrote");
    cattn_local_attention_plan_destroy(not_a_plan);  // frees nothing (ASan would see a bad free)
    FZ_CHECK(std::strstr(cattn_last_error_message(), "cattn_local_attention_plan_destroy") != nullptr,
             "destroying no plan sets no message");
    FZ_CHECK(cattn_context_set_kv_cache_layout_override(ctx, CATTN_KV_CACHE_LAYOUT_NHD) == CATTN_OK,
             "the context no longer works after destroying it as a plan");
  }
  cattn_local_attention_plan_destroy(plan);
  cattn_local_attention_plan_destroy(nullptr);
  if (fdp.ConsumeBool()) {
    int64_t v = -5;
    refused(cattn_local_attention_plan_get_shape(plan, &v, nullptr), "cattn_local_attention_plan_get_shape");
    FZ_CHECK(v == -5, "get_shape of a destroyed plan wrote");
    const auto snap = fill.snapshot(), osnap = out_meta.snapshot();
    Watch dw;
    for (const Tensor* t : {&o_qsl_cpu, &o_seq_cpu, &o_computed, &o_table, &o_qsl, &o_seq, &out3}) dw.add(t);
    refused(cattn_local_attention_plan_fill(plan, fill.get()), "cattn_local_attention_plan_fill");
    FZ_CHECK(fill.unchanged(snap) && out_meta.unchanged(osnap) && dw.all_unchanged(), "fill of a destroyed plan wrote");
    refused(cattn_local_attention_plan_make_block_table(plan, table3.cptr(), out3.ptr(), nullptr),
            "cattn_local_attention_plan_make_block_table");
    FZ_CHECK(dw.all_unchanged(), "make_block_table of a destroyed plan wrote");
    cattn_local_attention_plan_destroy(plan);  // twice: frees nothing
    FZ_CHECK(std::strstr(cattn_last_error_message(), "cattn_local_attention_plan_destroy") != nullptr,
             "destroying a plan twice sets no message");
  }
  return 0;
}
