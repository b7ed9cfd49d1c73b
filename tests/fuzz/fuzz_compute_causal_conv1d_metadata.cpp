// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 6: cattn_compute_causal_conv1d_metadata_size and
// cattn_compute_causal_conv1d_metadata. Random batches (the empty tensor included), block sizes,
// any subset of the five outputs with their own dtypes, lengths and layouts; every outcome is
// predicted and a success compared with vLLM's loop (tests/ref/compute_causal_conv1d_metadata_ref.h),
// the PAD tails and the untouched entries past tot included. Totals around 2^62 programs (the
// most both calls accept is 2^62 - 1), outputs over query_start_loc_cpu's or each other's memory
// (refused when they share a byte), query_start_loc_cpu as a broadcast view claiming
// kMaxBroadcast - 1 .. 2^40 entries (more than kMaxBroadcast is refused).
#include "fuzz_support.h"
#include "ref/compute_causal_conv1d_metadata_ref.h"

using namespace cattn_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 20);
  const bool empty_tensor = batch == 0 && fdp.ConsumeBool();  // [0]: vLLM's empty batch
  int64_t block_m = pick_scalar(fdp, 1, 16);
  std::vector<int64_t> qsl = cumulative(
      fdp, batch, [&] { return fdp.ConsumeIntegralInRange<int64_t>(0, 40); }, true);
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) {
    // Near the limit: requests of lengths that are multiples of block_m totalling 2^62 - 2 ..
    // 2^62 + 1 programs, from INT64_MIN when the span needs it.
    block_m = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
    __int128 left = ((__int128{1} << 62) + fdp.ConsumeIntegralInRange<int>(-2, 1)) * block_m;
    __int128 at = left > INT64_MAX ? INT64_MIN : 0;
    if (at + left <= INT64_MAX) {
      const __int128 piece = INT64_MAX / block_m * block_m;
      qsl.assign(1, static_cast<int64_t>(at));
      while (left > 0) {
        const __int128 l = left < piece ? left : piece;
        at += l;
        left -= l;
        qsl.push_back(static_cast<int64_t>(at));
      }
      batch = static_cast<int64_t>(qsl.size()) - 1;
    }
  }
  Tensor q = make_tensor(fdp, {empty_tensor ? 0 : batch + 1}, fdp.ConsumeBool() ? i64() : i32(), false,
                         {true, true, true});
  q.fill(qsl);
  // A broadcast query_start_loc_cpu holds one value: no request has a token.
  const bool huge = constant_1d(q);
  const std::vector<int64_t> seen = values_or_pair(q);
  const bool q_ok = host_index(q, 1) && scan_bounded(q) && block_m >= 1;
  auto ref = q_ok ? ref_causal_conv1d(seen, block_m, 1 << 12) : std::nullopt;
  // The requests the library sees (nums' length).
  const int64_t requests = huge ? q.numel - 1 : ref ? static_cast<int64_t>(ref->nums.size()) : batch;
  if (huge && ref && requests <= (1 << 16)) ref->nums.assign(static_cast<size_t>(requests), 0);

  {  // Size query.
    Bytes tot(sizeof(int64_t), kPoisonByte), cap(sizeof(int64_t), kPoisonByte);
    const bool null_tot = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
    const bool null_cap = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
    const auto tot_before = tot.all(), cap_before = cap.all();
    Watch w;
    w.add(&q);
    const cattn_status_t s = cattn_compute_causal_conv1d_metadata_size(
        q.cptr(), block_m, null_tot ? nullptr : reinterpret_cast<int64_t*>(tot.payload()),
        null_cap ? nullptr : reinterpret_cast<int64_t*>(cap.payload()));
    const __int128 want_cap = ref ? (ref->tot > 1024 ? ref->tot : 1024) * 2 : 0;
    const bool ok = ref && want_cap <= INT64_MAX;
    if (check_outcome(s, "cattn_compute_causal_conv1d_metadata_size", ok, w)) {
      auto image = [](std::vector<uint8_t> b, int64_t v) {
        std::memcpy(b.data() + kGuard, &v, sizeof v);
        return b;
      };
      FZ_CHECK(tot.all() == (null_tot ? tot_before : image(tot_before, static_cast<int64_t>(ref->tot))),
               "tot differs");
      FZ_CHECK(cap.all() == (null_cap ? cap_before : image(cap_before, static_cast<int64_t>(want_cap))),
               "capacity differs");
    } else {
      FZ_CHECK(tot.all() == tot_before && cap.all() == cap_before, "a failed size query wrote");
    }
  }

  // The outputs, each present or not, sized around what the batch needs.
  const int64_t tot = ref && ref->tot <= 1024 ? static_cast<int64_t>(ref->tot) : 8;
  auto length = [&](int64_t need) {
    const int c = fdp.ConsumeIntegralInRange<int>(0, 7);
    return c == 7 ? std::max<int64_t>(0, need - 1) : c >= 5 ? need + c : need;
  };
  const char* names[5] = {"nums", "mlist", "offsetlist", "batch_ptr", "token_chunk_offset_ptr"};
  Tensor outs[5];
  bool present[5];
  for (int i = 0; i < 5; ++i) {
    present[i] = fdp.ConsumeIntegralInRange<int>(0, 3) != 0;
    const int64_t need = i == 0 ? std::min<int64_t>(requests, 1 << 20) : tot;
    if (present[i]) outs[i] = make_tensor(fdp, {length(need)}, fdp.ConsumeBool() ? i64() : i32(), true);
  }
  // Outputs over query_start_loc_cpu's or an earlier output's memory.
  for (int i = 0; i < 5; ++i)
    if (present[i])
      maybe_alias(fdp, outs[i], {&q, i > 0 && present[0] ? &outs[0] : nullptr, i > 1 && present[1] ? &outs[1] : nullptr,
                                 i > 2 && present[2] ? &outs[2] : nullptr, i > 3 && present[3] ? &outs[3] : nullptr},
                  8);
  const size_t struct_size = pick_struct_size(fdp, CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE);
  Struct<cattn_causal_conv1d_metadata_args_t> args(CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT, struct_size);
  cattn_causal_conv1d_metadata_args_t* a = args.get();
  a->query_start_loc_cpu = q.cptr();
  a->block_m = block_m;
  DLTensor** slots[5] = {&a->nums, &a->mlist, &a->offsetlist, &a->batch_ptr, &a->token_chunk_offset_ptr};
  for (int i = 0; i < 5; ++i) *slots[i] = present[i] ? outs[i].ptr() : nullptr;
  a->tot = -77;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_before = args.snapshot();

  bool ok = !null_args && struct_size >= CATTN_CAUSAL_CONV1D_METADATA_ARGS_SIZE && ref.has_value();
  for (int i = 0; i < 5 && ok; ++i) {
    if (!present[i] || !outs[i].exists) continue;
    const Tensor& o = outs[i];
    ok = host_index(o, 1) && writable(o);
    if (!ok) break;
    const int64_t max_num = ref->max_num;
    const int64_t b = requests;
    if (i == 0) ok = o.dim(0) == b && fits(o, max_num);
    else ok = o.dim(0) >= ref->tot && (ref->tot == 0 || fits(o, i == 1 || i == 3 ? b - 1 : max_num - 1));
  }
  // Every present output disjoint from query_start_loc_cpu and from every other one.
  for (int i = 0; i < 5 && ok; ++i) {
    if (!present[i]) continue;
    ok = !overlaps(outs[i], q);
    for (int j = 0; j < i && ok; ++j) ok = !present[j] || !overlaps(outs[i], outs[j]);
  }
  FZ_LOG("block_m %ld predicted %d\n  q %s\n", (long)block_m, ok, describe(q).c_str());
  for (int i = 0; i < 5; ++i) if (present[i]) FZ_LOG("  %s %s\n", names[i], describe(outs[i]).c_str());

  Watch w;
  w.add(&q);
  for (int i = 0; i < 5; ++i) if (present[i]) w.add(&outs[i]);
  const cattn_status_t s = cattn_compute_causal_conv1d_metadata(null_args ? nullptr : a);
  if (!check_outcome(s, "cattn_compute_causal_conv1d_metadata", ok, w)) {
    FZ_CHECK(args.unchanged(args_before), "a failed call wrote its args struct");
    return 0;
  }
  cattn_causal_conv1d_metadata_args_t expect_args = *reinterpret_cast<const cattn_causal_conv1d_metadata_args_t*>(args_before.data() + kGuard);
  expect_args.tot = static_cast<int64_t>(ref->tot);
  FZ_CHECK(args.equals(args_before, expect_args), "the call wrote its args struct beyond tot");
  for (int i = 0; i < 5; ++i) {
    if (!present[i] || !outs[i].exists) continue;
    const Tensor& o = outs[i];
    const std::vector<int64_t>& src = i == 0 ? ref->nums : (i == 1 || i == 3) ? ref->mlist : ref->offsetlist;
    for (int64_t j = 0; j < o.numel; ++j) {
      if (j < static_cast<int64_t>(src.size())) w.put(o, j, src[static_cast<size_t>(j)]);
      else if (i >= 3) w.put(o, j, CATTN_PAD_SLOT_ID);  // launch arrays are padded
    }
  }
  check_images(w, "cattn_compute_causal_conv1d_metadata");
  return 0;
}
