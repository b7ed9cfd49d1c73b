// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 4: cattn_fused_pcp_qkv_select. Random batches of even (and, mutated,
// odd or negative) lengths, world sizes and ranks, head counts and head sizes that differ
// between q, k and v, element widths of 1-8 bytes (and unsupported ones), strided inputs (and
// last-dim strides the call must refuse), outputs with too few or too many rows or a
// non-compact layout. A success is compared byte for byte with the unit tests' reference
// (tests/ref/fused_pcp_qkv_select_ref.cpp), including the rows past query_start_loc[B] / 2
// that must stay unwritten. Outputs may lie over the inputs' or each other's memory (refused
// when they share a byte); query_start_loc may be a broadcast view claiming kMaxBroadcast - 1 .. 2^40
// entries (more than kMaxBroadcast is refused), q/k/v broadcast views of any
// size (not refused: the outputs bound the work).
#include "fuzz_support.h"
#include "ref/fused_pcp_qkv_select_ref.h"

using namespace cattn_fuzz;

namespace {

constexpr const char* kFn = "cattn_fused_pcp_qkv_select";

bool compact(const Tensor& t) {
  if (t.numel == 0) return true;
  int64_t expect = 1;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (t.dim(d) != 1 && t.stride(d) != expect) return false;
    expect *= t.dim(d);
  }
  return true;
}

bool same_dtype(const Tensor& a, const Tensor& b) { return cattn_fuzz::same_dtype(a.t.dtype, b.t.dtype); }

// `data`: where the tensor's data pointer points (in its memory, or in an image of it).
cattn_test::RefView3 view(const Tensor& t, uint8_t* data) {
  static uint8_t nothing[1];  // for an empty tensor without data (never read or written)
  if (t.t.data == nullptr) return {nothing, t.dim(0), t.dim(1), t.dim(2), 0, 0, 0, static_cast<int>(t.elem)};
  return {data + t.t.byte_offset, t.dim(0), t.dim(1), t.dim(2), t.stride(0), t.stride(1), t.stride(2),
          static_cast<int>(t.elem)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  const int64_t world = pick_scalar(fdp, 1, 3);
  const int64_t rank = pick_scalar(fdp, 0, world >= 1 && world <= 3 ? world - 1 : 0);
  const int64_t w = world >= 1 && world <= 3 ? world : 1, r = rank >= 0 && rank < w ? rank : 0;
  const int64_t heads = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  const int64_t dq = fdp.ConsumeIntegralInRange<int64_t>(0, 4), dk = fdp.ConsumeIntegralInRange<int64_t>(0, 4),
                dv = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  auto elem_dtype = [&] {
    const int bits[] = {8, 16, 32, 64};
    return DLDataType{static_cast<uint8_t>(fdp.ConsumeIntegralInRange<int>(0, 2)),
                      static_cast<uint8_t>(bits[fdp.ConsumeIntegralInRange<int>(0, 3)]), 1};
  };
  const DLDataType tq = elem_dtype(), tk = elem_dtype(), tv = elem_dtype();

  std::vector<int64_t> qsl_values = cumulative(fdp, batch, [&] { return 2 * fdp.ConsumeIntegralInRange<int64_t>(0, 6); }, true);
  // An odd first start makes every start odd: shift them down to even ones (most of the time).
  if (qsl_values[0] % 2 != 0 && qsl_values[0] > 0 && qsl_values[0] <= 64 && fdp.ConsumeIntegralInRange<int>(0, 7) != 0)
    for (auto& x : qsl_values)
      if (x > std::numeric_limits<int64_t>::min()) x -= 1;
  const int64_t end = std::min<int64_t>(std::max<int64_t>(qsl_values.back(), 0), 64);
  const int64_t nq = end + (fdp.ConsumeIntegralInRange<int>(0, 3) == 3 ? fdp.ConsumeIntegralInRange<int64_t>(0, 3) : 0);
  const int64_t kv_rows = std::max<int64_t>(0, w * end + (fdp.ConsumeIntegralInRange<int>(0, 7) == 7 ? fdp.ConsumeIntegralInRange<int64_t>(-2, 2) : 0));

  const Allow huge{true, true, true};
  Tensor q = make_tensor(fdp, {nq, heads, dq}, tq, false, huge);
  Tensor k = make_tensor(fdp, {kv_rows, heads, dk}, tk, false, huge);
  Tensor v = make_tensor(fdp, {kv_rows, heads, dv}, tv, false, huge);
  for (Tensor* t : {&q, &k, &v})  // any bytes will do: rows are moved as bytes
    for (size_t i = 0; i < t->mem->payload_size(); ++i) t->mem->payload()[i] = static_cast<uint8_t>(i * 131 + 7);
  Tensor qsl = make_tensor(fdp, {batch + 1}, fdp.ConsumeBool() ? i64() : i32(), false, huge);
  qsl.fill(qsl_values);

  // The outputs' rows from the library's size query (w and r are in range here).
  int64_t q_rows = 0, head_rows = 0, tail_rows = 0;
  FZ_CHECK(cattn_fused_pcp_qkv_select_size(nq, w, r, &q_rows, &head_rows, &tail_rows) == CATTN_OK,
           "size query");
  auto rows = [&](int64_t want) {  // output rows: exact, or one off
    const int c = fdp.ConsumeIntegralInRange<int>(0, 15);
    return c == 15 ? want + 1 : c == 14 && want > 0 ? want - 1 : want;
  };
  Tensor q_head = make_tensor(fdp, {rows(q_rows), heads, dq}, tq, true);
  Tensor k_head = make_tensor(fdp, {rows(head_rows), heads, dk}, tk, true);
  Tensor v_head = make_tensor(fdp, {rows(head_rows), heads, dv}, tv, true);
  Tensor q_tail = make_tensor(fdp, {rows(q_rows), heads, dq}, tq, true);
  Tensor k_tail = make_tensor(fdp, {rows(tail_rows), heads, dk}, tk, true);
  Tensor v_tail = make_tensor(fdp, {rows(tail_rows), heads, dv}, tv, true);
  Tensor* outs[6] = {&q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail};
  const Tensor* srcs[6] = {&q, &k, &v, &q, &k, &v};
  // Outputs over an input's or an earlier output's memory.
  for (int i = 0; i < 6; ++i)
    maybe_alias(fdp, *outs[i], {&q, &k, &v, &qsl, i > 0 ? outs[0] : nullptr, i > 1 ? outs[1] : nullptr,
                                i > 2 ? outs[2] : nullptr, i > 3 ? outs[3] : nullptr, i > 4 ? outs[4] : nullptr},
                12);

  const size_t args_size = pick_struct_size(fdp, CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE);
  Struct<cattn_fused_pcp_qkv_select_args_t> args(CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT, args_size);
  cattn_fused_pcp_qkv_select_args_t* a = args.get();
  a->q = q.cptr();
  a->k = k.cptr();
  a->v = v.cptr();
  a->query_start_loc = qsl.cptr();
  a->pcp_world_size = world;
  a->pcp_rank = rank;
  a->q_head = q_head.ptr();
  a->k_head = k_head.ptr();
  a->v_head = v_head.ptr();
  a->q_tail = q_tail.ptr();
  a->k_tail = k_tail.ptr();
  a->v_tail = v_tail.ptr();
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_snap = args.snapshot();

  // Prediction.
  bool ok = !null_args && args_size >= CATTN_FUSED_PCP_QKV_SELECT_ARGS_SIZE;
  for (const Tensor* t : {&q, &k, &v, &qsl, &q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail})
    ok = ok && t->usable() && !t->device;
  for (const Tensor* t : {&q, &k, &v})
    ok = ok && t->ndim() == 3 && (t->dim(2) <= 1 || t->stride(2) == 1);
  ok = ok && k.dim(1) == q.dim(1) && v.dim(1) == q.dim(1) && qsl.ndim() == 1 && qsl.index() && qsl.numel >= 1 &&
       scan_bounded(qsl) && world >= 1 && rank >= 0 && rank < world;
  if (ok) {
    // The call's own W and r (possibly out of range or overflowing): the size query decides.
    int64_t hr = 0, want_head = 0, want_tail = 0;
    ok = cattn_fused_pcp_qkv_select_size(q.dim(0), world, rank, &hr, &want_head, &want_tail) == CATTN_OK;
    const int64_t want[6] = {hr, want_head, want_head, hr, want_tail, want_tail};
    for (int i = 0; ok && i < 6; ++i) {
      const Tensor& o = *outs[i];
      ok = o.ndim() == 3 && same_dtype(o, *srcs[i]) && o.dim(1) == srcs[i]->dim(1) &&
           o.dim(2) == srcs[i]->dim(2) && o.dim(0) == want[i] && compact(o);
    }
  }
  // Every output disjoint from every input and from every other output.
  for (int i = 0; i < 6 && ok; ++i) {
    for (const Tensor* in : {&q, &k, &v, &qsl}) ok = ok && !overlaps(*outs[i], *in);
    for (int j = 0; j < i; ++j) ok = ok && !overlaps(*outs[i], *outs[j]);
  }
  std::vector<int64_t> starts;
  if (ok) {
    // A huge query_start_loc is a broadcast view: every start the same, as two such entries.
    starts = values_or_pair(qsl);
    for (size_t i = 0; ok && i < starts.size(); ++i)
      ok = starts[i] >= 0 && starts[i] % 2 == 0 && (i == 0 || starts[i] >= starts[i - 1]);
    int64_t need = 0;
    ok = ok && starts.back() <= q.dim(0) && !__builtin_mul_overflow(world, starts.back(), &need) &&
         k.dim(0) >= need && v.dim(0) >= need;
  }
  FZ_LOG("W %ld r %ld predicted %d\n  q %s\n  k %s\n  v %s\n  qsl %s\n", (long)world, (long)rank, ok,
         describe(q).c_str(), describe(k).c_str(), describe(v).c_str(), describe(qsl).c_str());
  for (int i = 0; i < 6; ++i) FZ_LOG("  out %d %s\n", i, describe(*outs[i]).c_str());

  Watch watch;
  for (const Tensor* t : {&q, &k, &v, &qsl, &q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail}) watch.add(t);
  const cattn_status_t s = cattn_fused_pcp_qkv_select(null_args ? nullptr : a);
  FZ_CHECK(args.unchanged(args_snap), "the call wrote its args struct");
  if (!check_outcome(s, kFn, ok, watch)) return 0;

  if (world > 1024) {
    // Outputs of half * (2W - r) rows fit only with half = 0: no request has a token to move
    // (and the reference would walk 2W empty blocks per request).
    check_images(watch, kFn);
    return 0;
  }
  // Each output's view into the expected image of its buffer (outputs sharing a buffer share it).
  auto out_view = [&](int i) {
    const Tensor& o = *outs[i];
    if (o.t.data == nullptr) return view(o, nullptr);  // empty, nothing to write
    std::vector<uint8_t>& image = watch.image(o);
    return view(o, image.data() + (static_cast<uint8_t*>(o.t.data) - o.mem->all().data()));
  };
  auto in_view = [](const Tensor& t) { return view(t, static_cast<uint8_t*>(t.t.data)); };
  cattn_test::fused_pcp_qkv_select_ref(in_view(q), in_view(k), in_view(v), starts, world, rank, out_view(0),
                                       out_view(1), out_view(2), out_view(3), out_view(4), out_view(5));
  check_images(watch, kFn);
  return 0;
}
