// Fuzz target for utility 9: cattn_make_local_attention_virtual_batches and the plan calls
// (get_shape, fill, make_block_table, destroy). Random batches (zero-length requests and
// sequences included), chunk and block sizes (non-divisors and extremes too), block tables of
// any width and dtype, output tensors of every shape, dtype and layout; one plan serves every
// later call. The reference splits each request at chunk boundaries from first principles
// (ref_make_local_attention_virtual_batches.h).
//
// Batches whose plan would hold more than kMaxVirtual virtual batches are turned into refused
// ones (a sequence shorter than its query) before the call: the plan is host memory of
// O(virtual batches), which the values alone decide, and a fuzzer must not ask for gigabytes.
#include "fuzz_support.h"
#include "ref_make_local_attention_virtual_batches.h"

using namespace cattn_fuzz;

namespace {

constexpr int64_t kMaxVirtual = 4096;

bool index_nd(const Tensor& t, int nd) { return t.usable() && t.ndim() == nd && t.index(); }
bool same_dtype(const Tensor& a, const Tensor& b) {
  return a.t.dtype.code == b.t.dtype.code && a.t.dtype.bits == b.t.dtype.bits && a.t.dtype.lanes == b.t.dtype.lanes;
}

// The expected image of a gathered block table.
std::vector<uint8_t> gathered(const std::vector<uint8_t>& before, const Tensor& out, const LocalPlanRef& plan,
                              const Tensor& table, int64_t plan_cols) {
  std::vector<uint8_t> image = before;
  const std::vector<int64_t> t = table.values();
  const int64_t width = table.dim(1);
  for (size_t v = 0; v < plan.batches.size(); ++v)
    for (int64_t p = 0; p < plan.pages; ++p) {
      const int64_t col = static_cast<int64_t>(std::min<__int128>(static_cast<__int128>(plan.batches[v].first_page) + p, plan_cols - 1));
      Tensor::put(image, out, static_cast<int64_t>(v) * plan.pages + p,
                  t[static_cast<size_t>(plan.batches[v].request * width + col)]);
    }
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  const int64_t chunk = pick_scalar(fdp, 1, 16);
  int64_t block_size = pick_scalar(fdp, 1, 8);
  if (chunk >= 1 && chunk <= 16 && fdp.ConsumeIntegralInRange<int>(0, 3) != 0) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= chunk; ++d) if (chunk % d == 0) divisors.push_back(d);
    block_size = divisors[fdp.ConsumeIntegralInRange<size_t>(0, divisors.size() - 1)];
  }
  std::vector<int64_t> qsl_values = cumulative(fdp, batch, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 20); }, true);
  std::vector<int64_t> seq_values(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) {
    const __int128 q = static_cast<__int128>(qsl_values[static_cast<size_t>(i + 1)]) - qsl_values[static_cast<size_t>(i)];
    seq_values[static_cast<size_t>(i)] = fdp.ConsumeIntegralInRange<int>(0, 15) == 0
                                             ? pick_value(fdp, 60)
                                             : (q > 0 && q < 1000 ? static_cast<int64_t>(q) : 0) + fdp.ConsumeIntegralInRange<int64_t>(0, 40);
  }
  const int64_t cols = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? 0 : fdp.ConsumeIntegralInRange<int64_t>(1, 6);
  Tensor qsl = make_tensor(fdp, {batch + 1}, dtype(), false);
  Tensor seq = make_tensor(fdp, {batch}, dtype(), false);
  Tensor table = make_tensor(fdp, {batch, cols}, dtype(), false);
  qsl.fill(qsl_values);
  seq.fill(seq_values);
  std::vector<int64_t> table_values(static_cast<size_t>(batch * cols));
  for (auto& v : table_values) v = pick_value(fdp, 1000);
  table.fill(table_values);

  // Prediction for the plan.
  const bool shapes_ok = chunk >= 1 && block_size >= 1 && chunk % block_size == 0 && host_index(seq, 1) &&
                         host_index(qsl, 1) && seq.dim(0) >= 1 && qsl.dim(0) == seq.dim(0) + 1 &&
                         index_nd(table, 2) && table.dim(0) == seq.dim(0) && table.dim(1) >= 1;
  __int128 count = shapes_ok ? ref_local_count(qsl.values(), seq.values(), chunk) : -1;
  if (count > kMaxVirtual) {  // see the top of the file
    seq.set(seq.numel - 1, -1);
    count = ref_local_count(qsl.values(), seq.values(), chunk);
  }

  static DLTensor dummy[2] = {};
  cattn_common_attn_metadata_t init = CATTN_COMMON_ATTN_METADATA_INIT;
  Struct<cattn_common_attn_metadata_t> meta(init, pick_struct_size(fdp, CATTN_COMMON_ATTN_METADATA_SIZE));
  cattn_common_attn_metadata_t* m = meta.get();
  m->query_start_loc = &dummy[0];
  m->seq_lens = &dummy[1];
  m->query_start_loc_cpu = qsl.ptr();
  m->seq_lens_cpu = seq.ptr();
  m->block_table_tensor = table.ptr();
  const bool with_slots = fdp.ConsumeBool();
  Tensor slots = with_slots ? make_tensor(fdp, {fdp.ConsumeIntegralInRange<int64_t>(0, 8)}, dtype(), false) : Tensor();
  m->slot_mapping = with_slots ? slots.ptr() : nullptr;
  m->num_actual_tokens = pick_value(fdp, 200);
  const size_t args_size = pick_struct_size(fdp, CATTN_LOCAL_ATTENTION_ARGS_SIZE);
  Struct<cattn_local_attention_args_t> args(CATTN_LOCAL_ATTENTION_ARGS_INIT, args_size);
  cattn_local_attention_args_t* a = args.get();
  a->attn_chunk_size = chunk;
  a->block_size = block_size;
  a->metadata = m;
  a->plan = reinterpret_cast<cattn_local_attention_plan_t*>(uintptr_t{0x5A5A});  // never read
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_snap = args.snapshot(), meta_snap = meta.snapshot();
  const bool ok = !null_args && args_size >= CATTN_LOCAL_ATTENTION_ARGS_SIZE &&
                  m->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE && count >= 0;
  FZ_LOG("chunk %ld bs %ld count %ld predicted %d\n  qsl %s\n  seq %s\n  table %s\n", (long)chunk, (long)block_size,
         (long)count, ok, describe(qsl).c_str(), describe(seq).c_str(), describe(table).c_str());

  Watch w;
  for (const Tensor* t : {&qsl, &seq, &table, &slots}) w.add(t);
  const cattn_status_t s = cattn_make_local_attention_virtual_batches(null_args ? nullptr : a);
  FZ_CHECK(meta.unchanged(meta_snap), "the call wrote the metadata");
  if (!check_outcome(s, "cattn_make_local_attention_virtual_batches", ok, w)) {
    FZ_CHECK(args.unchanged(args_snap), "a failed call wrote args");
    // The plan calls refuse a NULL plan.
    FZ_CHECK(cattn_local_attention_plan_get_shape(nullptr, nullptr, nullptr) == CATTN_INVALID_ARGUMENT, "get_shape(NULL)");
    return 0;
  }
  cattn_local_attention_plan_t* plan = a->plan;
  FZ_CHECK(plan != nullptr, "no plan");
  {
    cattn_local_attention_args_t e;
    std::memcpy(&e, args_snap.data() + kGuard, sizeof e);
    e.plan = plan;
    FZ_CHECK(args.equals(args_snap, e), "args changed beyond plan");
  }
  const LocalPlanRef ref = ref_local_plan(qsl.values(), seq.values(), chunk, block_size);
  const int64_t v_count = static_cast<int64_t>(ref.batches.size()), pages = ref.pages, plan_cols = table.dim(1);
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
  Tensor table2 = wider ? make_tensor(fdp, {plan_batch, plan_cols + fdp.ConsumeIntegralInRange<int64_t>(-1, 3)}, table.t.dtype, false) : Tensor();
  if (wider) {
    std::vector<int64_t> vals(static_cast<size_t>(std::max<int64_t>(table2.numel, 0)));
    for (auto& v : vals) v = pick_value(fdp, 1000);
    table2.fill(vals);
    m->block_table_tensor = table2.ptr();
  }
  const Tensor& source = wider ? table2 : table;
  const DLDataType table_dtype = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? dtype() : table.t.dtype;
  Tensor o_qsl_cpu = make_tensor(fdp, {v_count + 1}, dtype(), true, {true, false});
  Tensor o_seq_cpu = make_tensor(fdp, {v_count}, dtype(), true, {true, false});
  Tensor o_computed = make_tensor(fdp, {v_count}, dtype(), true, {true, false});
  Tensor o_table = make_tensor(fdp, {v_count, pages}, table_dtype, true);
  const bool with_copies = fdp.ConsumeBool();
  Tensor o_qsl = with_copies ? make_tensor(fdp, {v_count + 1}, dtype(), true) : Tensor();
  Tensor o_seq = with_copies ? make_tensor(fdp, {v_count}, dtype(), true) : Tensor();
  Struct<cattn_common_attn_metadata_t> out_meta(init, pick_struct_size(fdp, CATTN_COMMON_ATTN_METADATA_SIZE));
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
  fill.get()->metadata = m;
  fill.get()->out = o;
  const bool null_plan = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const auto fill_snap = fill.snapshot(), out_snap = out_meta.snapshot();
  const cattn_common_attn_metadata_t m_now = meta.value();

  int64_t cum_q = 0;
  for (const auto& b : ref.batches) cum_q += b.q;
  bool fok = !null_plan && fill_size >= CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE &&
             m_now.struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE && o->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE;
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
  FZ_LOG("fill: V %ld P %ld wider %d copies %d null plan %d sizes %zu %zu %zu predicted %d\n", (long)v_count,
         (long)pages, wider, with_copies, null_plan, fill_size, (size_t)m_now.struct_size, (size_t)o->struct_size, fok);
  for (const Tensor* t : std::initializer_list<const Tensor*>{&source, &slots, &o_qsl_cpu, &o_seq_cpu, &o_computed, &o_table, &o_qsl, &o_seq})
    FZ_LOG("  %s\n", describe(*t).c_str());
  Watch fw;
  for (const Tensor* t : {&qsl, &seq, &table, &table2, &slots, &o_qsl_cpu, &o_seq_cpu, &o_computed, &o_table, &o_qsl, &o_seq})
    fw.add(t);
  const cattn_status_t fs = cattn_local_attention_plan_fill(null_plan ? nullptr : plan, fill.get());
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
    auto expect_vec = [&](const Tensor& t, const std::vector<int64_t>& v, const char* what) {
      if (!t.mem || !t.exists) return;
      std::vector<uint8_t> image = fw.before(&t);
      for (size_t i = 0; i < v.size(); ++i) Tensor::put(image, t, static_cast<int64_t>(i), v[i]);
      FZ_CHECK(t.mem->all() == image, std::string(what) + " differs: " + first_difference(t.mem->all(), image));
    };
    expect_vec(o_qsl_cpu, cu, "query_start_loc_cpu");
    expect_vec(o_seq_cpu, ks, "seq_lens_cpu");
    expect_vec(o_computed, comp, "num_computed_tokens_cpu");
    if (with_copies) {
      expect_vec(o_qsl, cu, "query_start_loc");
      expect_vec(o_seq, ks, "seq_lens");
    }
    const std::vector<uint8_t> image = gathered(fw.before(&o_table), o_table, ref, source, plan_cols);
    FZ_CHECK(o_table.mem->all() == image, "block_table_tensor differs: " + first_difference(o_table.mem->all(), image));
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

  // make_block_table with a fresh table (any width >= the plan's) into a fresh output.
  Tensor table3 = make_tensor(fdp, {plan_batch, plan_cols + fdp.ConsumeIntegralInRange<int64_t>(-1, 2)}, table.t.dtype, false);
  {
    std::vector<int64_t> vals(static_cast<size_t>(std::max<int64_t>(table3.numel, 0)));
    for (auto& v : vals) v = pick_value(fdp, 5000);
    table3.fill(vals);
  }
  Tensor out3 = make_tensor(fdp, {v_count, pages}, fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? dtype() : table.t.dtype, true);
  const bool null_plan3 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool bok = !null_plan3 && index_nd(table3, 2) && !table3.device && table3.dim(0) == plan_batch &&
                   table3.dim(1) >= plan_cols && out3.usable() && !out3.device && out3.ndim() == 2 &&
                   same_dtype(out3, table3) && writable(out3) && out3.dim(0) == v_count && out3.dim(1) == pages;
  Watch bw;
  bw.add(&table3);
  bw.add(&out3);
  const cattn_status_t bs = cattn_local_attention_plan_make_block_table(null_plan3 ? nullptr : plan, table3.cptr(), out3.ptr(), nullptr);
  if (check_outcome(bs, "cattn_local_attention_plan_make_block_table", bok, bw)) {
    const std::vector<uint8_t> image = gathered(bw.before(&out3), out3, ref, table3, plan_cols);
    FZ_CHECK(out3.mem->all() == image, "make_block_table differs: " + first_difference(out3.mem->all(), image));
  }
  cattn_local_attention_plan_destroy(plan);
  cattn_local_attention_plan_destroy(nullptr);
  return 0;
}
