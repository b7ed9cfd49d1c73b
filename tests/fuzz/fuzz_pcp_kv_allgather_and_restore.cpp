// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 5's host-side argument validation: cattn_pcp_kv_allgather_and_restore,
// its workspace query, and the communicator calls (cattn_comm_*). This build is CPU-only, so no
// call can succeed: each must return CATTN_INVALID_ARGUMENT (or CATTN_NOT_SUPPORTED for an
// unsupported dtype or device) for a malformed argument and exactly CATTN_NOT_SUPPORTED when
// every argument is well formed, without writing any output. A non-NULL communicator is a
// one-byte heap block, so a library that dereferenced it would trip AddressSanitizer.
#include "fuzz_support.h"

using namespace cattn_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  // A forged communicator: a pointer no create call returned, at an odd address (never read).
  std::unique_ptr<char, void (*)(void*)> fake(static_cast<char*>(std::malloc(16)), std::free);
  cattn_comm_t* comm = reinterpret_cast<cattn_comm_t*>(fake.get() + 1 + fdp.ConsumeIntegralInRange<int>(0, 6));

  // Communicator calls.
  {
    Bytes id(sizeof(cattn_comm_unique_id_t), kPoisonByte);
    const auto before = id.all();
    const bool null_id = fdp.ConsumeBool();
    const cattn_status_t s = cattn_comm_get_unique_id(null_id ? nullptr : reinterpret_cast<cattn_comm_unique_id_t*>(id.payload()));
    check_status_valid(s);
    check_failure_message(s, "cattn_comm_get_unique_id");
    FZ_CHECK(s == (null_id ? CATTN_INVALID_ARGUMENT : CATTN_NOT_SUPPORTED), "get_unique_id status");
    FZ_CHECK(id.all() == before, "get_unique_id wrote the id");

    const int32_t nranks = static_cast<int32_t>(pick_scalar(fdp, 1, 8));
    const int32_t rank = static_cast<int32_t>(pick_scalar(fdp, 0, 7));
    const int32_t device = static_cast<int32_t>(pick_scalar(fdp, 0, 3));
    const bool null_uid = fdp.ConsumeIntegralInRange<int>(0, 7) == 0, null_out = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
    Bytes out(sizeof(cattn_comm_t*), kPoisonByte);
    const auto out_before = out.all();
    const cattn_status_t c = cattn_comm_create(null_uid ? nullptr : reinterpret_cast<cattn_comm_unique_id_t*>(id.payload()),
                                               nranks, rank, device,
                                               null_out ? nullptr : reinterpret_cast<cattn_comm_t**>(out.payload()));
    check_status_valid(c);
    check_failure_message(c, "cattn_comm_create");
    const bool well_formed = !null_uid && !null_out && nranks >= 1 && rank >= 0 && rank < nranks && device >= 0;
    FZ_CHECK(c == (well_formed ? CATTN_NOT_SUPPORTED : CATTN_INVALID_ARGUMENT), "comm_create status");
    FZ_CHECK(out.all() == out_before, "comm_create wrote out");

    const bool null_nccl = fdp.ConsumeBool(), null_out2 = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
    const cattn_status_t b = cattn_comm_create_borrowed(null_nccl ? nullptr : fake.get(),
                                                        null_out2 ? nullptr : reinterpret_cast<cattn_comm_t**>(out.payload()));
    check_status_valid(b);
    check_failure_message(b, "cattn_comm_create_borrowed");
    FZ_CHECK(b == (!null_nccl && !null_out2 ? CATTN_NOT_SUPPORTED : CATTN_INVALID_ARGUMENT), "create_borrowed status");
    FZ_CHECK(out.all() == out_before, "create_borrowed wrote out");

    Bytes value(sizeof(int32_t), kPoisonByte);
    const auto value_before = value.all();
    const bool null_comm = fdp.ConsumeBool(), null_value = fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
    int32_t* vp = null_value ? nullptr : reinterpret_cast<int32_t*>(value.payload());
    const cattn_comm_t* cp = null_comm ? nullptr : comm;
    const cattn_status_t expect = !null_comm && !null_value ? CATTN_NOT_SUPPORTED : CATTN_INVALID_ARGUMENT;
    FZ_CHECK(cattn_comm_get_rank(cp, vp) == expect, "comm_get_rank status");
    FZ_CHECK(cattn_comm_get_size(cp, vp) == expect, "comm_get_size status");
    FZ_CHECK(value.all() == value_before, "get_rank/get_size wrote");
    cattn_comm_destroy(nullptr);
  }

  // The all-gather and its workspace query.
  const int64_t tokens = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  const int64_t n = pick_scalar(fdp, 0, tokens);
  const int ndim = fdp.ConsumeIntegralInRange<int>(1, 3);
  std::vector<int64_t> kshape{tokens}, vshape{tokens};
  for (int d = 1; d < ndim; ++d) {
    kshape.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
    vshape.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
  }
  const int bits[] = {8, 16, 32, 64};
  const DLDataType kd{kDLFloat, static_cast<uint8_t>(bits[fdp.ConsumeIntegralInRange<int>(0, 3)]), 1};
  const DLDataType vd{kDLBfloat, static_cast<uint8_t>(bits[fdp.ConsumeIntegralInRange<int>(0, 3)]), 1};
  const bool on_device = fdp.ConsumeBool();  // mark every tensor kDLCUDA (never reaches a kernel here)
  Allow allow;
  Tensor key = make_tensor(fdp, kshape, kd, false, allow);
  Tensor value = make_tensor(fdp, vshape, vd, false, allow);
  const int64_t m = fdp.ConsumeIntegralInRange<int64_t>(0, 8);
  Tensor idx = make_tensor(fdp, {m}, fdp.ConsumeBool() ? i64() : i32(), false, allow);
  std::vector<int64_t> ko = kshape, vo = vshape;
  ko[0] = vo[0] = m;
  Tensor key_out = make_tensor(fdp, ko, kd, true, allow);
  Tensor value_out = make_tensor(fdp, vo, vd, true, allow);
  // Outputs over the inputs' or each other's memory: the overlap checks belong to the device
  // path, so here too the well-formed call is CATTN_NOT_SUPPORTED, and nothing is written.
  maybe_alias(fdp, key_out, {&key, &value, &idx});
  maybe_alias(fdp, value_out, {&key, &value, &idx, &key_out});
  if (on_device)
    for (Tensor* t : {&key, &value, &idx, &key_out, &value_out}) {
      t->t.device = {kDLCUDA, 0};
      t->device = true;
    }

  const size_t args_size = pick_struct_size(fdp, CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE);
  Struct<cattn_pcp_kv_allgather_and_restore_args_t> args(CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT, args_size);
  cattn_pcp_kv_allgather_and_restore_args_t* a = args.get();
  const bool null_comm = fdp.ConsumeIntegralInRange<int>(0, 7) == 0;
  a->comm = null_comm ? nullptr : comm;
  a->key = key.cptr();
  a->value = value.cptr();
  a->num_actual_tokens = n;
  a->restore_idx = idx.cptr();
  a->key_out = key_out.ptr();
  a->value_out = value_out.ptr();
  a->workspace = fdp.ConsumeBool() ? nullptr : fake.get();
  a->workspace_size = fdp.ConsumeIntegral<size_t>();
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const auto args_snap = args.snapshot();

  auto same_dtype = [](const Tensor& x, const Tensor& y) {
    return x.t.dtype.code == y.t.dtype.code && x.t.dtype.bits == y.t.dtype.bits && x.t.dtype.lanes == y.t.dtype.lanes;
  };
  auto compact = [](const Tensor& t) {
    if (t.numel == 0) return true;
    int64_t e = 1;
    for (int d = t.ndim() - 1; d >= 0; --d) {
      if (t.dim(d) != 1 && t.stride(d) != e) return false;
      e *= t.dim(d);
    }
    return true;
  };
  // Structure the library checks in both calls.
  const bool base = !null_args && args_size >= CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_SIZE && key.usable() &&
                    value.usable() && key.ndim() >= 1 && value.ndim() >= 1 && value.dim(0) == key.dim(0) &&
                    n >= 0 && n <= key.dim(0);
  {
    Bytes ws(sizeof(size_t), kPoisonByte);
    const auto before = ws.all();
    const bool null_size = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
    Watch w;
    for (const Tensor* t : {&key, &value}) w.add(t);
    const cattn_status_t s = cattn_pcp_kv_allgather_and_restore_workspace_size(null_args ? nullptr : a,
                                                                                null_size ? nullptr : reinterpret_cast<size_t*>(ws.payload()));
    check_outcome(s, "cattn_pcp_kv_allgather_and_restore_workspace_size", false, w);
    if (base && !null_size && !null_comm)
      FZ_CHECK(s == CATTN_NOT_SUPPORTED, std::string("workspace query of well-formed args: ") + cattn_status_string(s));
    FZ_CHECK(ws.all() == before, "the workspace query wrote *size");
  }
  bool well_formed = base && idx.usable() && idx.ndim() == 1 && idx.index() && !null_comm;
  for (auto [o, src] : {std::pair<const Tensor*, const Tensor*>{&key_out, &key}, {&value_out, &value}}) {
    if (!well_formed) break;
    well_formed = o->usable() && o->ndim() == src->ndim() && same_dtype(*o, *src) && o->dim(0) == idx.dim(0) && compact(*o);
    for (int d = 1; well_formed && d < src->ndim(); ++d) well_formed = o->dim(d) == src->dim(d);
  }
  // One device for everything (all host is NOT_SUPPORTED too: NCCL needs device memory).
  auto where = [](const Tensor& t) { return t.device ? 100 + t.t.device.device_id : 0; };
  for (const Tensor* t : {&key, &value, &idx, &key_out, &value_out}) well_formed = well_formed && where(*t) == where(key);
  Watch w;
  for (const Tensor* t : {&key, &value, &idx, &key_out, &value_out}) w.add(t);
  const cattn_status_t s = cattn_pcp_kv_allgather_and_restore(null_args ? nullptr : a);
  check_outcome(s, "cattn_pcp_kv_allgather_and_restore", false, w);
  if (well_formed)
    FZ_CHECK(s == CATTN_NOT_SUPPORTED, std::string("all-gather of well-formed args: ") + cattn_status_string(s));
  FZ_CHECK(args.unchanged(args_snap), "the call wrote its args");
  return 0;
}
