// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 3: cattn_get_pcp_query_restore_idx_size and
// cattn_get_pcp_query_restore_idx. The harness predicts from the tensors it built whether each
// call must succeed, checks the status against that, and compares a successful result with an
// argsort reference; a failed call must leave every output byte (guards included) as it was.
// cu_num_tokens may be a broadcast view claiming kMaxBroadcast - 1 .. 2^40 elements (more than
// kMaxBroadcast is refused), restore_idx may lie over cu_num_tokens' memory
// (refused when they share a byte).
#include "fuzz_support.h"
#include "ref/get_pcp_query_restore_idx_ref.h"

using namespace cattn_fuzz;

namespace {

// Whether a tensor is usable as a 1-D host index tensor for this utility.
bool good_index_1d(const Tensor& t) {
  return t.usable() && t.ndim() == 1 && t.index() && !t.device;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const int64_t reqs = fdp.ConsumeIntegralInRange<int64_t>(0, 24);
  const DLDataType cu_dtype = fdp.ConsumeBool() ? i64() : i32();
  const DLDataType out_dtype = fdp.ConsumeBool() ? i64() : i32();
  std::vector<int64_t> values = cumulative(
      fdp, reqs,
      [&] {
        switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
          case 0: return int64_t{1};  // decode
          case 1: return int64_t{0};
          case 7: return fdp.ConsumeIntegralInRange<int64_t>(0, 9);  // odd ones refused
          default: return 2 * fdp.ConsumeIntegralInRange<int64_t>(1, 12);
        }
      },
      true);

  Tensor cu = make_tensor(fdp, {reqs + 1}, cu_dtype, false, {true, true, true});
  cu.fill(values);
  // What the library reads (dtype-truncated); a huge view is a 1-D broadcast, every entry the
  // same, which gives the result of two such entries.
  const std::vector<int64_t> seen = values_or_pair(cu);
  const bool cu_ok = good_index_1d(cu) && scan_bounded(cu);
  const auto ref_size = cu_ok ? ref_pcp_query_restore_size(seen) : std::nullopt;

  // Size query, with the result in guarded memory (or NULL).
  {
    Bytes out_size(sizeof(int64_t), kPoisonByte);
    const bool null_size = fdp.ConsumeIntegralInRange<int>(0, 31) == 0;
    const std::vector<uint8_t> before = out_size.all();
    Watch w;
    w.add(&cu);
    const cattn_status_t s = cattn_get_pcp_query_restore_idx_size(
        cu.cptr(), null_size ? nullptr : reinterpret_cast<int64_t*>(out_size.payload()));
    check_status_valid(s);
    check_failure_message(s, "cattn_get_pcp_query_restore_idx_size");
    FZ_CHECK(w.inputs_unchanged(), "the size query wrote its input");
    const bool must_ok = ref_size && !null_size && *ref_size <= INT64_MAX;
    FZ_CHECK((s == CATTN_OK) == must_ok,
             std::string("size query status ") + cattn_status_string(s) + " vs expected " +
                 (must_ok ? "OK" : "failure"));
    if (s == CATTN_OK) {
      int64_t got;
      std::memcpy(&got, out_size.payload(), sizeof got);
      FZ_CHECK(got == static_cast<int64_t>(*ref_size), "size differs from the reference");
      std::vector<uint8_t> image = before;
      std::memcpy(image.data() + kGuard, &got, sizeof got);
      FZ_CHECK(out_size.all() == image, "the size query wrote outside *size");
    } else {
      FZ_CHECK(out_size.all() == before, "a failed size query wrote *size");
    }
  }

  // The index itself, into a capacity around the exact size.
  int64_t want = ref_size && *ref_size <= (1 << 12) ? static_cast<int64_t>(*ref_size) : 4;
  want += fdp.ConsumeIntegralInRange<int64_t>(0, 3) == 3 ? fdp.ConsumeIntegralInRange<int64_t>(-2, 3) : 0;
  // restore_idx: its own memory, sometimes placed over cu_num_tokens', or another DLTensor over
  // cu_num_tokens (its very view is refused too).
  Tensor out = fdp.ConsumeIntegralInRange<int>(0, 31) == 0 ? view_of(fdp, cu, true)
                                                           : make_tensor(fdp, {std::max<int64_t>(want, 0)}, out_dtype, true);
  maybe_alias(fdp, out, {&cu});
  const size_t struct_size = pick_struct_size(fdp, CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE);
  Struct<cattn_pcp_query_restore_idx_args_t> args(CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT,
                                                  struct_size);
  args.get()->cu_num_tokens = cu.cptr();
  args.get()->restore_idx = out.ptr();
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  const std::vector<uint8_t> args_before = args.snapshot();
  Watch w;
  w.add(&cu);
  w.add(&out);

  FZ_LOG("cu %s\nout %s\n", describe(cu).c_str(), describe(out).c_str());
  const cattn_status_t s = cattn_get_pcp_query_restore_idx(null_args ? nullptr : args.get());
  check_status_valid(s);
  check_failure_message(s, "cattn_get_pcp_query_restore_idx");
  FZ_CHECK(args.unchanged(args_before), "the call wrote its args struct");
  FZ_CHECK(w.inputs_unchanged(), "the call wrote cu_num_tokens");

  // Writable 1-D index output on the host, holding the size and every index.
  const bool out_ok = out.usable() && out.ndim() == 1 && out.index() && !out.device &&
                      (out.numel <= 1 || out.stride(0) != 0);
  std::optional<std::vector<int64_t>> expect;
  if (!null_args && struct_size >= CATTN_PCP_QUERY_RESTORE_IDX_ARGS_SIZE && cu_ok && out_ok &&
      ref_size && *ref_size <= out.numel && (*ref_size == 0 || fits(out, static_cast<int64_t>(*ref_size) - 1)) &&
      !overlaps(out, cu))
    expect = ref_pcp_query_restore_idx(seen);
  FZ_CHECK((s == CATTN_OK) == expect.has_value(),
           std::string("status ") + cattn_status_string(s) + " vs expected " +
               (expect ? "OK" : "failure"));
  if (s != CATTN_OK) {
    FZ_CHECK(w.all_unchanged(), "a failed call wrote an output");
    return 0;
  }
  for (int64_t i = 0; i < out.numel; ++i)
    w.put(out, i, i < static_cast<int64_t>(expect->size()) ? (*expect)[i] : -1);
  check_images(w, "cattn_get_pcp_query_restore_idx");
  return 0;
}
