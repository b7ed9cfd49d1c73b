// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 8: cattn_make_kv_sharing_fast_prefill_common_attn_metadata. Random
// batches, logits indices (sorted, unsorted, negative, past the last request), counts, the
// optional host mirror and decode_max_and_total, the all-decode passthrough (also with `out` as
// the metadata struct itself). The reference counts, for every logits index, the request ends
// at or below it (vLLM's bucketize with right=True), then takes the cumulative sum. Outputs may
// lie over the inputs' or each other's memory (refused when they share a byte, except in the
// passthrough, which reads nothing); query_start_loc and logits_indices_padded may be broadcast
// views claiming kMaxBroadcast - 1 .. 2^40 entries (more than kMaxBroadcast is refused).
#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

constexpr const char* kFn = "cattn_make_kv_sharing_fast_prefill_common_attn_metadata";

// Copies the fields this header knows from `in` into `out` (struct_size excluded).
void copy_known(cattn_common_attn_metadata_t& out, const cattn_common_attn_metadata_t& in) {
  const size_t keep = out.struct_size;
  out = in;
  out.struct_size = keep;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int64_t reqs = fdp.ConsumeIntegralInRange<int64_t>(0, 12);
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };
  std::vector<int64_t> qsl_values = cumulative(fdp, reqs, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 20); }, true);
  // The last end, as a bound for typical indices (a mutated entry may be anything).
  const int64_t end = std::min<int64_t>(std::max<int64_t>(qsl_values.back(), 0), 1000);
  const int64_t nlogits = fdp.ConsumeIntegralInRange<int64_t>(0, 24);
  std::vector<int64_t> logits_values(static_cast<size_t>(nlogits));
  const bool sorted = fdp.ConsumeBool();
  for (auto& v : logits_values)
    v = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? pick_value(fdp, end + 2)
                                                    : fdp.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(end - 1, 0));
  if (sorted) std::sort(logits_values.begin(), logits_values.end());

  Tensor qsl = make_tensor(fdp, {reqs + 1}, dtype(), false, {true, true, true});
  qsl.fill(qsl_values);
  Tensor logits = make_tensor(fdp, {nlogits}, dtype(), false, {true, true, true});
  logits.fill(logits_values);
  // Outputs: their own memory, sometimes over an input's or an earlier output's, or
  // query_start_loc's very view (refused too).
  Tensor out_qsl = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? view_of(fdp, qsl, true)
                                                               : make_tensor(fdp, {reqs + 1}, dtype(), true);
  maybe_alias(fdp, out_qsl, {&qsl, &logits});
  const bool with_mirror = fdp.ConsumeBool();
  Tensor out_qsl_cpu = with_mirror ? make_tensor(fdp, {reqs + 1}, dtype(), true, {true, false}) : Tensor();
  if (with_mirror) maybe_alias(fdp, out_qsl_cpu, {&qsl, &logits, &out_qsl});
  const bool with_mt = fdp.ConsumeBool();
  Tensor max_total = with_mt ? make_tensor(fdp, {2}, dtype(), true) : Tensor();
  if (with_mt) maybe_alias(fdp, max_total, {&qsl, &logits, &out_qsl, &out_qsl_cpu});

  static DLTensor dummy[4] = {};  // copied through, never read
  cattn_common_attn_metadata_t init = CATTN_COMMON_ATTN_METADATA_INIT;
  Struct<cattn_common_attn_metadata_t> meta(init, pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* in = meta.get();
  in->query_start_loc = qsl.ptr();
  in->query_start_loc_cpu = &dummy[0];
  in->seq_lens = &dummy[1];
  in->seq_lens_cpu = fdp.ConsumeBool() ? &dummy[1] : nullptr;
  in->num_computed_tokens_cpu = &dummy[2];
  in->block_table_tensor = &dummy[3];
  in->slot_mapping = fdp.ConsumeBool() ? &dummy[3] : nullptr;
  in->logits_indices_padded = logits.ptr();
  in->num_reqs = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_value(fdp, reqs + 1) : reqs;
  in->num_actual_tokens = end;
  in->max_query_len = fdp.ConsumeIntegralInRange<int>(0, 5) == 0 ? 1 : pick_value(fdp, 20);
  in->max_seq_len = pick_value(fdp, 100);
  in->num_logits_indices = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_value(fdp, nlogits + 1)
                                                                      : fdp.ConsumeIntegralInRange<int64_t>(0, nlogits);
  in->causal = fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  in->reserved0 = fdp.ConsumeIntegralInRange<int32_t>(0, 1);
  const bool passthrough = in->max_query_len == 1;
  const bool same_struct = passthrough && fdp.ConsumeBool();
  Struct<cattn_common_attn_metadata_t> out_meta(init, pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* out = same_struct ? in : out_meta.get();
  if (!same_struct) {
    out->query_start_loc = out_qsl.ptr();
    out->query_start_loc_cpu = with_mirror ? out_qsl_cpu.ptr() : nullptr;
  }
  const size_t args_size = pick_struct_size(fdp, CATTN_FAST_PREFILL_METADATA_ARGS_SIZE);
  Struct<cattn_fast_prefill_metadata_args_t> args(CATTN_FAST_PREFILL_METADATA_ARGS_INIT, args_size);
  cattn_fast_prefill_metadata_args_t* a = args.get();
  a->metadata = in;
  a->out = out;
  a->decode_max_and_total = with_mt ? max_total.ptr() : nullptr;
  a->passthrough = 7;
  a->reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  // Past the passthrough the output tensors are arguments: the args struct copied over one of
  // them now and then (refused).
  bool args_over_out = false;
  cattn_fast_prefill_metadata_args_t* call_args =
      passthrough ? a : maybe_struct_over_output(fdp, args, out_qsl, &args_over_out);
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const cattn_common_attn_metadata_t in_before = meta.value();
  const cattn_common_attn_metadata_t out_before = out_meta.value();
  const auto meta_snap = meta.snapshot(), out_snap = out_meta.snapshot(), args_snap = args.snapshot();

  bool ok = !null_args && args_size >= CATTN_FAST_PREFILL_METADATA_ARGS_SIZE &&
            struct_size_ok(in_before.struct_size, CATTN_FUZZ_METADATA_SIZES) &&
            struct_size_ok(out->struct_size, CATTN_FUZZ_METADATA_SIZES) &&
            in_before.reserved0 == 0 && a->reserved0 == 0 && !args_over_out;
  std::vector<int64_t> counts;
  const int64_t count = in_before.num_logits_indices, nreq = in_before.num_reqs;
  if (ok && !passthrough) {
    auto index1 = [](const Tensor& t) { return t.usable() && t.ndim() == 1 && t.index(); };
    ok = index1(logits) && scan_bounded(logits) && count >= 0 && count <= logits.numel && nreq >= 1 &&
         nreq < INT64_MAX && index1(qsl) && scan_bounded(qsl) && qsl.dim(0) == nreq + 1 && index1(out_qsl) &&
         writable(out_qsl) && out_qsl.dim(0) == nreq + 1;
    if (ok && with_mirror && out_qsl_cpu.exists)
      ok = index1(out_qsl_cpu) && !out_qsl_cpu.device && writable(out_qsl_cpu) && out_qsl_cpu.dim(0) == nreq + 1;
    if (ok && with_mt && max_total.exists)
      ok = index1(max_total) && writable(max_total) && max_total.dim(0) == 2;
    // Host only in this build: a device tensor is either a mismatch or unservable.
    ok = ok && !qsl.device && !logits.device && !out_qsl.device && !(with_mt && max_total.exists && max_total.device);
    // Every present output disjoint from both inputs and from each other.
    const Tensor* outs[3] = {&out_qsl, with_mirror ? &out_qsl_cpu : nullptr, with_mt ? &max_total : nullptr};
    for (int i = 0; i < 3 && ok; ++i) {
      if (!outs[i]) continue;
      ok = !overlaps(*outs[i], qsl) && !overlaps(*outs[i], logits);
      for (int j = 0; j < i && ok; ++j) ok = !outs[j] || !overlaps(*outs[i], *outs[j]);
    }
    if (ok) {
      // The output bounds nreq; only the first `count` logits indices are read (the rest of a
      // broadcast view may claim any number).
      std::vector<int64_t> q, l;
      for (int64_t i = 0; i <= nreq; ++i) q.push_back(qsl.get(i));
      for (int64_t i = 0; i < count; ++i) l.push_back(logits.get(i));
      for (int64_t i = 0; ok && i < nreq; ++i) ok = q[static_cast<size_t>(i)] <= q[static_cast<size_t>(i + 1)];
      counts.assign(static_cast<size_t>(nreq), 0);
      for (int64_t i = 0; ok && i < count; ++i) {
        const int64_t x = l[static_cast<size_t>(i)];
        ok = x < q[static_cast<size_t>(nreq)];
        int64_t r = 0;
        for (int64_t j = 1; j <= nreq; ++j) r += q[static_cast<size_t>(j)] <= x;
        if (ok) ++counts[static_cast<size_t>(r)];
      }
    }
  }
  FZ_LOG("reqs %ld num_reqs %ld count %ld max_query_len %ld same %d predicted %d\n  qsl %s\n  logits %s\n  out %s\n",
         (long)reqs, (long)nreq, (long)count, (long)in_before.max_query_len, same_struct, ok,
         describe(qsl).c_str(), describe(logits).c_str(), describe(out_qsl).c_str());

  Watch w;
  for (const Tensor* t : {&qsl, &logits, &out_qsl, &out_qsl_cpu, &max_total}) w.add(t);
  const cattn_status_t s =
      cattn_make_kv_sharing_fast_prefill_common_attn_metadata(null_args ? nullptr : call_args);
  if (!check_outcome(s, kFn, ok, w)) {
    FZ_CHECK(args.unchanged(args_snap) && meta.unchanged(meta_snap) && out_meta.unchanged(out_snap),
             "a failed call wrote a struct");
    return 0;
  }
  cattn_fast_prefill_metadata_args_t expect_args;
  std::memcpy(&expect_args, args_snap.data() + kGuard, sizeof expect_args);
  expect_args.passthrough = passthrough ? 1 : 0;
  FZ_CHECK(args.equals(args_snap, expect_args), "args differ beyond passthrough");
  cattn_common_attn_metadata_t expect = same_struct ? in_before : out_before;
  if (passthrough) {
    copy_known(expect, in_before);
    FZ_CHECK(w.all_unchanged(), "the passthrough wrote a tensor");
  } else {
    int64_t running = 0, largest = 0;
    std::vector<int64_t> cum{0};
    for (int64_t c : counts) {
      running += c;
      largest = std::max(largest, c);
      cum.push_back(running);
    }
    for (Tensor* t : {&out_qsl, &out_qsl_cpu}) {
      if (!t->mem || !t->exists) continue;
      for (size_t i = 0; i < cum.size(); ++i) w.put(*t, static_cast<int64_t>(i), cum[i]);
    }
    if (with_mt && max_total.exists) {
      w.put(max_total, 0, largest);
      w.put(max_total, 1, count);
    }
    check_images(w, kFn);
    expect.seq_lens = in_before.seq_lens;
    expect.seq_lens_cpu = in_before.seq_lens_cpu;
    expect.num_computed_tokens_cpu = in_before.num_computed_tokens_cpu;
    expect.block_table_tensor = in_before.block_table_tensor;
    expect.slot_mapping = in_before.slot_mapping;
    expect.logits_indices_padded = nullptr;
    expect.num_reqs = nreq;
    expect.num_actual_tokens = count;
    expect.max_query_len = largest;
    expect.max_seq_len = in_before.max_seq_len;
    expect.num_logits_indices = 0;
    expect.causal = 1;
    expect.reserved0 = 0;
  }
  if (same_struct) {
    FZ_CHECK(meta.equals(meta_snap, expect), "the metadata struct differs");
  } else {
    FZ_CHECK(out_meta.equals(out_snap, expect), "out differs");
    FZ_CHECK(meta.unchanged(meta_snap), "the input metadata changed");
  }
  return 0;
}
