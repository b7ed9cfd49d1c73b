// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the per-request metadata helpers: cattn_token_to_req_indices,
// cattn_naive_query_lens, cattn_compute_num_computed_tokens and cattn_unpadded. Random batches
// (decreasing starts and values near the int64 limits included), mutated tensors, mirrors
// that disagree, buffers and outputs of any length placed over the inputs' memory, 1.0 and
// odd struct sizes. The success of each call is predicted from the header's rules, and its
// outputs from the definitions (repeat_interleave plus zero padding; the differences); a
// failed call writes nothing.
#include "fuzz_support.h"

using namespace cattn_fuzz;

namespace {

bool index1(const Tensor& t) { return t.usable() && !t.device && t.ndim() == 1 && t.index(); }

std::vector<int64_t> starts(FuzzedDataProvider& fdp, int64_t batch) {
  std::vector<int64_t> q{fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? pick_value(fdp, 5) : 0};
  for (int64_t i = 0; i < batch; ++i) {
    int64_t v;
    if (fdp.ConsumeIntegralInRange<int>(0, 20) == 0) v = pick_value(fdp, 50);  // out of order
    else if (__builtin_add_overflow(q.back(), fdp.ConsumeIntegralInRange<int64_t>(0, 6), &v)) v = 0;
    q.push_back(v);
  }
  return q;
}

int fuzz_token_to_req_indices(FuzzedDataProvider& fdp) {
  constexpr const char* kFn = "cattn_token_to_req_indices";
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 10);
  const std::vector<int64_t> q = starts(fdp, batch);
  Tensor qsl = make_tensor(fdp, {batch + 1}, dtype(), false);
  qsl.fill(q);
  const int mirror_mode = fdp.ConsumeIntegralInRange<int>(0, 2);  // none, agreeing, its own
  Tensor mirror;
  if (mirror_mode > 0) {
    mirror = make_tensor(fdp, {batch + 1}, dtype(), false, {true, false});
    std::vector<int64_t> m = q;
    if (mirror_mode == 2) m.back() = pick_value(fdp, 60);
    mirror.fill(m);
  }
  const int64_t num_tokens = pick_scalar(fdp, 0, 70);
  Tensor buf = make_tensor(fdp, {fdp.ConsumeIntegralInRange<int64_t>(0, 80)}, dtype(), true);
  maybe_alias(fdp, buf, {&qsl, &mirror}, 3);

  cattn_common_attn_metadata_t init = CATTN_COMMON_ATTN_METADATA_INIT;
  Struct<cattn_common_attn_metadata_t> meta(init, fdp.ConsumeBool()
                                                      ? CATTN_COMMON_ATTN_METADATA_SIZE_1_0
                                                      : pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  meta.get()->query_start_loc = qsl.ptr();
  meta.get()->query_start_loc_cpu = mirror_mode > 0 ? mirror.ptr() : nullptr;
  meta.get()->num_actual_tokens = num_tokens;
  const size_t args_size = pick_struct_size(fdp, CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE);
  Struct<cattn_token_to_req_indices_args_t> args(CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT, args_size);
  // The metadata or the args copied over the buffer now and then (the 1.1 probe's case):
  // refused.
  bool meta_over_buf = false, args_over_buf = false;
  args.get()->metadata = maybe_struct_over_output(fdp, meta, buf, &meta_over_buf);
  args.get()->buffer = buf.ptr();
  cattn_token_to_req_indices_args_t* call_args =
      meta_over_buf ? args.get() : maybe_struct_over_output(fdp, args, buf, &args_over_buf);

  bool ok = args_size >= CATTN_TOKEN_TO_REQ_INDICES_ARGS_SIZE &&
            struct_size_ok(meta.get()->struct_size, CATTN_FUZZ_METADATA_SIZES) &&
            !meta_over_buf && !args_over_buf;
  ok = ok && index1(qsl) && scan_bounded(qsl) && qsl.dim(0) >= 1;
  const bool has_mirror = mirror_mode > 0 && mirror.exists;  // a NULL mirror is no mirror
  if (ok && has_mirror) ok = index1(mirror) && mirror.dim(0) == qsl.dim(0);
  ok = ok && index1(buf) && writable(buf) && num_tokens >= 0;
  ok = ok && !overlaps(buf, qsl) && !(has_mirror && overlaps(buf, mirror));
  int64_t mapped = 0;
  std::vector<int64_t> qv;
  if (ok) {
    qv = values_or_pair(qsl);
    if (constant_1d(qsl)) qv.assign(static_cast<size_t>(qsl.numel), qsl.get(0));
    const int64_t b = static_cast<int64_t>(qv.size()) - 1;
    for (int64_t r = 0; ok && r < b; ++r) {
      int64_t len;
      ok = !__builtin_sub_overflow(qv[r + 1], qv[r], &len) && len >= 0 &&
           !__builtin_add_overflow(mapped, len, &mapped);
    }
    if (ok && has_mirror) ok = mirror.get(mirror.numel - 1) == mapped;
    ok = ok && buf.numel >= std::max(mapped, num_tokens);
    if (ok && mapped > 0) ok = fits(buf, b - 1);
  }
  FZ_LOG("token_to_req_indices: sizes %zu %zu mirror %d T %ld mapped %ld predicted %d\n", args_size,
         (size_t)meta.get()->struct_size, mirror_mode, (long)num_tokens, (long)mapped, ok);
  for (Tensor* t : {&qsl, &mirror, &buf}) FZ_LOG("  %s\n", describe(*t).c_str());
  Watch w;
  for (Tensor* t : {&qsl, &mirror, &buf}) w.add(t);
  const cattn_status_t s = cattn_token_to_req_indices(call_args);
  if (!check_outcome(s, kFn, ok, w)) return 0;
  int64_t t = 0;
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(qv.size()); ++r)
    for (int64_t j = qv[r]; j < qv[r + 1]; ++j) w.put(buf, t++, r);
  for (; t < std::max(mapped, num_tokens); ++t) w.put(buf, t, 0);
  check_images(w, kFn);
  return 0;
}

int fuzz_query_lens(FuzzedDataProvider& fdp, bool computed) {
  const char* fn = computed ? "cattn_compute_num_computed_tokens" : "cattn_naive_query_lens";
  auto dtype = [&] { return fdp.ConsumeBool() ? i64() : i32(); };
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 10);
  Tensor qsl = make_tensor(fdp, {batch + 1}, dtype(), false);
  qsl.fill(starts(fdp, batch));
  Tensor seq = make_tensor(fdp, {batch}, dtype(), false);
  std::vector<int64_t> sv(static_cast<size_t>(batch));
  for (auto& v : sv) v = pick_value(fdp, 90);
  seq.fill(sv);
  const bool in_place = computed && fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  Tensor own = in_place ? Tensor() : make_tensor(fdp, {batch}, dtype(), true);
  if (!in_place) maybe_alias(fdp, own, {&qsl, &seq}, 3);
  Tensor& out = in_place ? seq : own;
  if (in_place) seq.output = true;
  Struct<cattn_common_attn_metadata_t> meta(CATTN_COMMON_ATTN_METADATA_INIT,
                                            pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  meta.get()->query_start_loc = qsl.ptr();
  meta.get()->seq_lens = seq.ptr();
  meta.get()->reserved0 = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? 1 : 0;
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  bool meta_over_out = false;
  a.metadata = in_place ? meta.get() : maybe_struct_over_output(fdp, meta, own, &meta_over_out);
  a.out = out.ptr();

  bool ok = struct_size_ok(meta.get()->struct_size, CATTN_FUZZ_METADATA_SIZES) &&
            meta.get()->reserved0 == 0 && !meta_over_out && index1(qsl) && scan_bounded(qsl);
  int64_t b = 0;
  if (ok && computed) {
    ok = index1(seq);
    if (ok) b = seq.dim(0);
    ok = ok && qsl.dim(0) == b + 1;
  } else if (ok) {
    ok = qsl.dim(0) >= 1;
    b = ok ? qsl.dim(0) - 1 : 0;
  }
  ok = ok && index1(out) && writable(out) && out.dim(0) == b && !overlaps(out, qsl);
  if (ok && computed && !in_place) ok = !overlaps(out, seq) || same_view(out, seq);
  std::vector<int64_t> want;
  if (ok) {
    for (int64_t i = 0; ok && i < b; ++i) {
      int64_t len, v;
      ok = !__builtin_sub_overflow(qsl.get(i + 1), qsl.get(i), &len);
      v = len;
      if (ok && computed) ok = !__builtin_sub_overflow(seq.get(i), len, &v);
      ok = ok && fits(out, v);
      want.push_back(v);
    }
  }
  Watch w;
  for (Tensor* t : {&qsl, &seq, &own}) w.add(t);
  const cattn_status_t s =
      computed ? cattn_compute_num_computed_tokens(&a) : cattn_naive_query_lens(&a);
  if (!check_outcome(s, fn, ok, w)) return 0;
  for (size_t i = 0; i < want.size(); ++i) w.put(out, static_cast<int64_t>(i), want[i]);
  check_images(w, fn);
  return 0;
}

// Places a copy of `init` (sizeof(T) bytes) at `offset` of `arena`; returns it.
template <class T>
T* place(Bytes& arena, size_t offset, const T& init) {
  std::memcpy(arena.payload() + offset, &init, sizeof(T));
  return reinterpret_cast<T*>(arena.payload() + offset);
}

// unpadded touches no tensor data: a failure leaves both structs as they were, a success
// cuts every first dimension and keeps everything else of each view. Now and then the four
// structs (args, metadata, out, storage) share one arena at offsets the fuzzer picks - apart,
// touching or overlapping, as in the 1.1 probe's cases: any two that overlap must be refused.
int fuzz_unpadded(FuzzedDataProvider& fdp) {
  constexpr const char* kFn = "cattn_unpadded";
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t tokens = fdp.ConsumeIntegralInRange<int64_t>(0, 20);
  Tensor qsl = make_tensor(fdp, {batch + 1}, i32(), false);
  Tensor seq = make_tensor(fdp, {batch}, i64(), false);
  Tensor table = make_tensor(fdp, {batch, 3}, i32(), false);
  Tensor slots = make_tensor(fdp, {tokens}, i64(), false);
  Tensor positions = make_tensor(fdp, {tokens}, i64(), false);
  Tensor upper = make_tensor(fdp, {batch}, i32(), false);
  Struct<cattn_common_attn_metadata_t> meta(CATTN_COMMON_ATTN_METADATA_INIT,
                                            pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  cattn_common_attn_metadata_t* m = meta.get();
  m->query_start_loc = qsl.ptr();
  m->seq_lens = seq.ptr();
  m->block_table_tensor = table.ptr();
  m->slot_mapping = slots.ptr();
  m->positions = positions.ptr();
  m->seq_lens_cpu_upper_bound = upper.ptr();
  Struct<cattn_common_attn_metadata_t> out(CATTN_COMMON_ATTN_METADATA_INIT,
                                           pick_struct_size(fdp, CATTN_FUZZ_METADATA_SIZES));
  Struct<cattn_unpadded_storage_t> storage(cattn_unpadded_storage_t{},
                                           pick_struct_size(fdp, CATTN_UNPADDED_STORAGE_SIZE));
  cattn_unpadded_args_t args_init = CATTN_UNPADDED_ARGS_INIT;
  cattn_unpadded_args_t* ap = &args_init;
  ap->metadata = m;
  ap->out = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? m : out.get();
  ap->storage = storage.get();
  ap->num_actual_reqs = pick_scalar(fdp, 0, batch + 1);
  ap->num_actual_tokens = pick_scalar(fdp, 0, tokens + 1);

  // The arena: storage at kBefore, the others placed over it, around it or apart. Placed in
  // the order storage, out, metadata, args, each over the bytes of the ones before; the call
  // reads only struct_size of storage and out, so they may take any bytes, but it follows the
  // pointers of args and the metadata, so those two never overlap each other (garbage pointers
  // would be the caller's fault, not the library's).
  constexpr size_t kStorage = sizeof(cattn_unpadded_storage_t), kMeta = sizeof(cattn_common_attn_metadata_t);
  constexpr size_t kArgs = sizeof(cattn_unpadded_args_t), kBefore = 512;
  Bytes arena(kBefore + kStorage + 1024, kGuardByte);
  const bool in_arena = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  bool overlap = ap->out == m;
  if (in_arena) {
    // 8-aligned offsets: the storage's first bytes, its middle, its end, just past it, or
    // anywhere before it (partly over it).
    auto offset = [&](size_t bytes) -> size_t {
      const size_t choices[] = {kBefore, kBefore + 8, kBefore + 64, kBefore + 72, kBefore + 128,
                                kBefore + kStorage - bytes, kBefore + kStorage - 8, kBefore + kStorage,
                                kBefore + kStorage + 8, 8 * fdp.ConsumeIntegralInRange<size_t>(0, 63)};
      return choices[fdp.ConsumeIntegralInRange<size_t>(0, 9)];
    };
    // A storage starting inside the metadata at +64 gets md->logits_indices_padded, which the
    // call copies without reading, as its struct_size (the probe's SIZE_MAX case).
    if (fdp.ConsumeBool())
      m->logits_indices_padded = reinterpret_cast<DLTensor*>(uintptr_t{CATTN_UNPADDED_STORAGE_SIZE});
    auto* st = place(arena, kBefore, *storage.get());
    const bool out_is_meta = ap->out == m;
    auto* op = out_is_meta ? nullptr : place(arena, offset(kMeta), *out.get());
    const size_t m_at = offset(kMeta);
    auto* mp = place(arena, m_at, *m);
    if (out_is_meta) op = mp;
    ap->metadata = mp;
    ap->out = op;
    ap->storage = st;
    size_t a_at = offset(kArgs);
    if (a_at < m_at + kMeta && m_at < a_at + kArgs) a_at = kBefore + kStorage + 512;  // apart
    auto* aa = place(arena, a_at, *ap);
    // The bytes the library reads of each, from the struct_size each holds once all are placed.
    const uintptr_t base = reinterpret_cast<uintptr_t>(arena.payload());
    struct Range { uintptr_t at, bytes; };
    auto range = [&](const void* q, size_t size_field, size_t known) {
      return Range{reinterpret_cast<uintptr_t>(q) - base, std::min(size_field, known)};
    };
    const Range r[4] = {range(st, st->struct_size, kStorage), range(mp, mp->struct_size, kMeta),
                        range(op, op->struct_size, kMeta), range(aa, aa->struct_size, kArgs)};
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < i; ++j)
        if (r[i].bytes > 0 && r[j].bytes > 0 && r[i].at < r[j].at + r[j].bytes && r[j].at < r[i].at + r[i].bytes)
          overlap = true;
    ap = aa;
  }
  const cattn_common_attn_metadata_t* m_call = ap->metadata;
  const cattn_common_attn_metadata_t* o_call = ap->out;
  const auto out_snap = out.snapshot(), storage_snap = storage.snapshot(), meta_snap = meta.snapshot(),
             arena_snap = arena.all();
  const cattn_status_t s = cattn_unpadded(ap);
  check_status_valid(s);
  check_failure_message(s, kFn);
  FZ_CHECK(meta.unchanged(meta_snap), "cattn_unpadded wrote its input struct");
  if (s != CATTN_OK) {
    FZ_CHECK(out.unchanged(out_snap) && storage.unchanged(storage_snap) && arena.all() == arena_snap,
             "a failed cattn_unpadded wrote its outputs");
    return 0;
  }
  FZ_CHECK(!overlap, "cattn_unpadded accepted structs that overlap");
  FZ_CHECK(o_call != m_call, "cattn_unpadded accepted its input struct as out");
  FZ_CHECK(arena.guards_intact(), "cattn_unpadded wrote past the arena");
  if (in_arena) return 0;  // the views' sources are checked below for structs apart
  const cattn_common_attn_metadata_t* o = out.get();
  FZ_CHECK(o->num_reqs == ap->num_actual_reqs && o->num_actual_tokens == ap->num_actual_tokens,
           "cattn_unpadded: wrong counts");
  auto cut = [&](const DLTensor* view, const Tensor& src, int64_t n) {
    if (!src.exists) {
      FZ_CHECK(view == nullptr, "cattn_unpadded: a NULL field became a view");
      return;
    }
    FZ_CHECK(view != nullptr && view->shape[0] == n && view->ndim == src.t.ndim &&
                 view->data == src.t.data && view->byte_offset == src.t.byte_offset,
             "cattn_unpadded: a view differs from its source");
    for (int d = 1; d < view->ndim; ++d)
      FZ_CHECK(view->shape[d] == src.t.shape[d], "cattn_unpadded: an inner dimension changed");
  };
  cut(o->query_start_loc, qsl, ap->num_actual_reqs + 1);
  cut(o->seq_lens, seq, ap->num_actual_reqs);
  cut(o->block_table_tensor, table, ap->num_actual_reqs);
  cut(o->slot_mapping, slots, ap->num_actual_tokens);
  if (m->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE_1_1 &&
      o->struct_size >= CATTN_COMMON_ATTN_METADATA_SIZE_1_1) {
    cut(o->positions, positions, ap->num_actual_tokens);
    cut(o->seq_lens_cpu_upper_bound, upper, ap->num_actual_reqs);
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return fuzz_token_to_req_indices(fdp);
    case 1: return fuzz_query_lens(fdp, false);
    case 2: return fuzz_query_lens(fdp, true);
    default: return fuzz_unpadded(fdp);
  }
}
