// SPDX-License-Identifier: Apache-2.0
// Causal-conv1d launch metadata (vLLM compute_causal_conv1d_metadata). Entry points:
// argument checks and dispatch; the algorithm is in
// host/compute_causal_conv1d_metadata_host.cpp.
#include <algorithm>

#include "common/error.h"
#include "common/param_checks.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/compute_causal_conv1d_metadata_device.h"
#include "host/compute_causal_conv1d_metadata_host.h"

namespace {

// The launch-array length vLLM allocates: MAX_NUM_PROGRAMS = max(1024, tot) * 2.
constexpr int64_t kMinPrograms = 1024;

const cattn::TensorArg& check_query_start_loc(const char* fn, const cattn::TensorArg& q,
                                              const char* prefix, int64_t block_m) {
  q.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
  cattn::check_block_m(fn, prefix, block_m);
  return q;
}

// The five outputs both compute calls take, as their args structs name them.
struct Conv1dOutputs {
  template <class Args>
  Conv1dOutputs(const char* fn, const Args* args)
      : nums(fn, "args->nums", args->nums, kOut, true),
        mlist(fn, "args->mlist", args->mlist, kOut, true),
        offsetlist(fn, "args->offsetlist", args->offsetlist, kOut, true),
        batch_ptr(fn, "args->batch_ptr", args->batch_ptr, kOut, true),
        chunk_ptr(fn, "args->token_chunk_offset_ptr", args->token_chunk_offset_ptr, kOut, true) {}
  static constexpr cattn::Use kOut = cattn::Use::Out;
  Conv1dOutputs(const Conv1dOutputs&) = delete;
  Conv1dOutputs& operator=(const Conv1dOutputs&) = delete;
  const cattn::TensorArg nums, mlist, offsetlist, batch_ptr, chunk_ptr;
  const cattn::TensorArg* const all[5] = {&nums, &mlist, &offsetlist, &batch_ptr, &chunk_ptr};
};

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_size(
    const DLTensor* query_start_loc_cpu, int64_t block_m, int64_t* tot, int64_t* capacity) {
  constexpr const char* fn = "cattn_compute_causal_conv1d_metadata_size";
  return cattn::guarded(fn, [&] {
    const cattn::TensorArg q(fn, "query_start_loc_cpu", query_start_loc_cpu, cattn::Use::In);
    check_query_start_loc(fn, q, "", block_m);
    cattn::optional_out_ptr("tot", tot);
    cattn::optional_out_ptr("capacity", capacity);
    const auto c = cattn::compute_causal_conv1d_metadata_count_host(fn, q, block_m);
    const int64_t cap = cattn::checked_mul(fn, "capacity", std::max(kMinPrograms, c.tot), 2);
    cattn::seal_arguments();
    if (tot != nullptr) *tot = c.tot;
    if (capacity != nullptr) *capacity = cap;
  });
}

CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata(
    cattn_causal_conv1d_metadata_args_t* args) {
  constexpr const char* fn = "cattn_compute_causal_conv1d_metadata";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc_cpu", args->query_start_loc_cpu,
                             cattn::Use::In);
    check_query_start_loc(fn, q, "args->", args->block_m);
    const Conv1dOutputs given(fn, args);
    const cattn::TensorArg &nums = given.nums, &mlist = given.mlist;
    const cattn::TensorArg &offsetlist = given.offsetlist, &batch_ptr = given.batch_ptr,
                           &chunk_ptr = given.chunk_ptr;
    const auto& outs = given.all;
    for (const cattn::TensorArg* o : outs)
      if (o->present()) o->expect_ndim(1).expect_index_dtype().expect_writable();
    // The host path rereads query_start_loc_cpu while it writes each output.
    cattn::seal_arguments();
    // query_start_loc_cpu is a host mirror, so only the outputs decide the device.
    const cattn::Where where =
        cattn::require_same_device(fn, {&nums, &mlist, &offsetlist, &batch_ptr, &chunk_ptr});

    const auto c = cattn::compute_causal_conv1d_metadata_count_host(fn, q, args->block_m);
    if (nums.present()) {
      nums.expect_out_size(0, c.batch);
      cattn::require_fits(fn, nums, c.max_num);
    }
    for (const cattn::TensorArg* o : {&mlist, &batch_ptr})
      if (o->present()) {
        o->expect_capacity(c.tot);
        if (c.tot > 0) cattn::require_fits(fn, *o, c.batch - 1);
      }
    for (const cattn::TensorArg* o : {&offsetlist, &chunk_ptr})
      if (o->present()) {
        o->expect_capacity(c.tot);
        if (c.tot > 0) cattn::require_fits(fn, *o, c.max_num - 1);
      }
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::compute_causal_conv1d_metadata_device(fn, q, args->block_m, c, outs,
                                                         args->stream);
      args->tot = c.tot;
      return;
    }

    cattn::compute_causal_conv1d_metadata_host(q, args->block_m, c, nums, mlist, offsetlist,
                                               batch_ptr, chunk_ptr);
    args->tot = c.tot;
  });
}

CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_capturable(
    const cattn_causal_conv1d_metadata_capturable_args_t* args) {
  constexpr const char* fn = "cattn_compute_causal_conv1d_metadata_capturable";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->query_start_loc", args->query_start_loc, cattn::Use::In);
    q.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    if (q.size(0) < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->query_start_loc", "is empty",
                      q.shape_string(), "B + 1 >= 1 entries");
    cattn::check_block_m(fn, "args->", args->block_m);
    const Conv1dOutputs given(fn, args);
    const cattn::TensorArg &nums = given.nums, &mlist = given.mlist;
    const cattn::TensorArg &offsetlist = given.offsetlist, &batch_ptr = given.batch_ptr,
                           &chunk_ptr = given.chunk_ptr;
    const cattn::TensorArg tot(fn, "args->tot", args->tot, cattn::Use::Out, true);
    const auto& outs = given.all;
    cattn::check_causal_conv1d_device_outputs(outs, tot, q.size(0) - 1);
    // Every block reads all of query_start_loc while others write.
    cattn::seal_arguments();
    cattn::require_same_device(fn, {&q, &nums, &mlist, &offsetlist, &batch_ptr, &chunk_ptr, &tot});
    q.expect_cuda("cattn_compute_causal_conv1d_metadata");
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
    else
      cattn::compute_causal_conv1d_metadata_capturable(fn, q, args->block_m, outs, tot,
                                                       args->stream);
  });
}

}  // extern "C"
