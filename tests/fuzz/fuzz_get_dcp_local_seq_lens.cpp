// SPDX-License-Identifier: Apache-2.0
// Fuzz target for utility 2: cattn_get_dcp_local_seq_lens. Random batches, group sizes, ranks
// (one or all), interleave sizes, output shapes ([B], [B, W], [B, 1]) and layouts, in-place
// calls on the very view of seq_lens (the same DLTensor, or another one describing that view),
// outputs over seq_lens' memory at any other offset (refused when they share a byte), broadcast
// views of seq_lens (no size limit: the output bounds the work); every outcome is predicted and
// a success is compared with the definition (tests/ref/get_dcp_local_seq_lens_ref.h). Since 1.1
// also the shape modes: CATTN_DCP_SHAPE_PRESERVE with seq_lens of 0 to 3 dimensions (out of
// their shape, plus [W] for all ranks), unknown modes, and 1.0-sized structs, which must keep
// the 1.0 contract whatever the mode field's bytes hold.
#include <cstddef>
#include <limits>

#include "fuzz_support.h"
#include "ref/get_dcp_local_seq_lens_ref.h"

using namespace cattn_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const char* fn = "cattn_get_dcp_local_seq_lens";
  const int64_t batch = fdp.ConsumeIntegralInRange<int64_t>(0, 16);
  const int64_t world = pick_scalar(fdp, 1, 8);
  const int64_t rank = fdp.ConsumeBool() ? CATTN_DCP_ALL_RANKS : pick_scalar(fdp, 0, world > 0 ? world - 1 : 0);
  const int64_t interleave = pick_scalar(fdp, 1, 64);
  const bool all = rank == CATTN_DCP_ALL_RANKS;
  const DLDataType seq_dtype = fdp.ConsumeBool() ? i64() : i32();
  const DLDataType out_dtype = fdp.ConsumeBool() ? i64() : i32();

  // The mode field and the struct size decide the contract: a 1.0-sized struct has no mode.
  const int mode_pick = fdp.ConsumeIntegralInRange<int>(0, 31);
  const int64_t mode = mode_pick < 15    ? CATTN_DCP_SHAPE_SQUEEZE
                       : mode_pick < 30  ? CATTN_DCP_SHAPE_PRESERVE
                       : mode_pick == 30 ? 2
                                         : -1;
  const size_t size10 = offsetof(cattn_dcp_local_seq_lens_args_t, shape_mode);
  const size_t struct_size = fdp.ConsumeIntegralInRange<int>(0, 15) == 0
                                 ? size10
                                 : pick_struct_size(fdp, CATTN_FUZZ_DCP_ARGS_SIZES);
  const bool v11 = struct_size >= CATTN_DCP_LOCAL_SEQ_LENS_ARGS_SIZE;
  const bool nd = v11 && mode == CATTN_DCP_SHAPE_PRESERVE;

  std::vector<int64_t> seq_shape{batch};
  if (nd) {
    seq_shape.assign(static_cast<size_t>(fdp.ConsumeIntegralInRange<int>(0, 3)), 0);
    for (auto& d : seq_shape) d = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
  }
  int64_t numel = 1;
  for (int64_t d : seq_shape) numel *= d;
  std::vector<int64_t> lens(static_cast<size_t>(numel));
  for (auto& l : lens) l = pick_value(fdp, 600);
  Tensor seq = make_tensor(fdp, seq_shape, seq_dtype, false, {true, true, true});
  seq.fill(lens);

  // All ranks of a group of one may also be asked for as [B, 1] (1.0); N-D always keeps it.
  const bool two_d = all && (nd || world != 1 || fdp.ConsumeBool());
  const int64_t cols = world >= 1 && world <= 8 ? world : 2;
  std::vector<int64_t> out_shape = seq_shape;
  if (two_d) out_shape.push_back(cols);
  // out: seq_lens' own DLTensor (in place), another DLTensor over seq_lens' memory (mostly the
  // same view), or a tensor of its own, sometimes placed over seq_lens' memory.
  const int out_kind = fdp.ConsumeIntegralInRange<int>(0, 15);
  const bool in_place = !two_d && out_kind == 0;
  const bool as_view = out_kind == 1 || out_kind == 2;
  Tensor out = in_place ? Tensor() : as_view ? view_of(fdp, seq, true) : make_tensor(fdp, out_shape, out_dtype, true);
  if (!in_place && !as_view) maybe_alias(fdp, out, {&seq});
  DLTensor* out_dl = in_place ? seq.ptr() : out.ptr();
  if (in_place) seq.output = true;  // written in place
  const Tensor& o = in_place ? seq : out;

  Struct<cattn_dcp_local_seq_lens_args_t> args(CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT, struct_size);
  args.get()->seq_lens = seq.cptr();
  args.get()->dcp_size = world;
  args.get()->dcp_rank = rank;
  args.get()->dcp_kv_cache_interleave_size = interleave;
  args.get()->out = out_dl;
  if (v11) args.get()->shape_mode = mode;
  const bool null_args = fdp.ConsumeIntegralInRange<int>(0, 63) == 0;
  // The args copied over out's memory now and then: refused.
  bool args_over_out = false;
  cattn_dcp_local_seq_lens_args_t* call_args = maybe_struct_over_output(fdp, args, o, &args_over_out);
  const std::vector<uint8_t> args_before = args.snapshot();

  // The prediction, from the header's contract.
  bool ok = !null_args && struct_size_ok(struct_size, CATTN_FUZZ_DCP_ARGS_SIZES) && !args_over_out;
  ok = ok && (!v11 || mode == CATTN_DCP_SHAPE_SQUEEZE || mode == CATTN_DCP_SHAPE_PRESERVE);
  ok = ok && seq.usable() && !seq.device && seq.index() && (nd || seq.ndim() == 1);
  ok = ok && o.usable() && !o.device && o.index() && writable(o);
  ok = ok && world >= 1 && interleave >= 1 && interleave <= std::numeric_limits<int32_t>::max() / world;
  ok = ok && (all || (rank >= 0 && rank < world));
  if (ok && nd) {
    const int extra = all ? 1 : 0;
    ok = o.ndim() == seq.ndim() + extra;
    for (int d = 0; ok && d < seq.ndim(); ++d) ok = o.dim(d) == seq.dim(d);
    if (ok && all) ok = o.dim(seq.ndim()) == world;
  } else if (ok) {
    if (all && (o.ndim() == 2 || world > 1))
      ok = o.ndim() == 2 && o.dim(0) == seq.dim(0) && o.dim(1) == world;
    else
      ok = o.ndim() == 1 && o.dim(0) == seq.dim(0);
  }
  // The one alias allowed: out is the very view of seq_lens.
  if (ok && !in_place) ok = same_view(out, seq) || !overlaps(out, seq);
  // Values only once the (owned) output bounds the batch.
  const std::vector<int64_t> seen = ok ? seq.values() : std::vector<int64_t>();
  if (ok)
    for (int64_t v : seen) ok = ok && v >= 0 && v <= std::numeric_limits<int32_t>::max();

  FZ_LOG("mode %ld struct_size %zu world %ld rank %ld interleave %ld in_place %d predicted %d\n  seq %s\n  out %s\n",
         (long)mode, struct_size, (long)world, (long)rank, (long)interleave, in_place, ok, describe(seq).c_str(),
         describe(o).c_str());
  Watch w;
  w.add(&seq);
  if (!in_place) w.add(&out);
  const cattn_status_t s = cattn_get_dcp_local_seq_lens(null_args ? nullptr : call_args);
  FZ_CHECK(args.unchanged(args_before), "the call wrote its args struct");
  if (!check_outcome(s, fn, ok, w)) return 0;

  const int64_t ranks = all ? world : 1;
  // The batch the library saw (a mutation may have resized seq_lens and out alike).
  for (int64_t b = 0; b < static_cast<int64_t>(seen.size()); ++b)
    for (int64_t c = 0; c < ranks; ++c)
      w.put(o, b * ranks + c, ref_dcp_local_len(seen[static_cast<size_t>(b)], world, all ? c : rank, interleave));
  FZ_LOG("  result %s\n", describe(o).c_str());
  check_images(w, fn);
  return 0;
}
