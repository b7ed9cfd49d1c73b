// Causal-conv1d launch metadata (vLLM compute_causal_conv1d_metadata). Entry points:
// argument checks and dispatch; the algorithm is in
// host/compute_causal_conv1d_metadata_host.cpp.
#include <algorithm>

#include "common/error.h"
#include "common/tensor_arg.h"
#include "device/compute_causal_conv1d_metadata_device.h"
#include "host/compute_causal_conv1d_metadata_host.h"

namespace {

// The launch-array length vLLM allocates: MAX_NUM_PROGRAMS = max(1024, tot) * 2.
constexpr int64_t kMinPrograms = 1024;

const cattn::TensorArg& check_query_start_loc(const char* fn, const cattn::TensorArg& q,
                                              int64_t block_m) {
  q.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
  if (block_m < 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "block_m", "is out of range",
                    std::to_string(block_m), ">= 1");
  return q;
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata_size(
    const DLTensor* query_start_loc_cpu, int64_t block_m, int64_t* tot, int64_t* capacity) {
  constexpr const char* fn = "cattn_compute_causal_conv1d_metadata_size";
  return cattn::guarded(fn, [&] {
    const cattn::TensorArg q(fn, "query_start_loc_cpu", query_start_loc_cpu);
    check_query_start_loc(fn, q, block_m);
    const auto c = cattn::compute_causal_conv1d_metadata_count_host(fn, q, block_m);
    const int64_t cap = cattn::checked_mul(fn, "capacity", std::max(kMinPrograms, c.tot), 2);
    if (tot != nullptr) *tot = c.tot;
    if (capacity != nullptr) *capacity = cap;
  });
}

CATTN_API cattn_status_t cattn_compute_causal_conv1d_metadata(
    cattn_causal_conv1d_metadata_args_t* args) {
  constexpr const char* fn = "cattn_compute_causal_conv1d_metadata";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args, sizeof(cattn_causal_conv1d_metadata_args_t));
    const cattn::TensorArg q(fn, "args->query_start_loc_cpu", args->query_start_loc_cpu);
    check_query_start_loc(fn, q, args->block_m);
    const cattn::TensorArg nums(fn, "args->nums", args->nums, true);
    const cattn::TensorArg mlist(fn, "args->mlist", args->mlist, true);
    const cattn::TensorArg offsetlist(fn, "args->offsetlist", args->offsetlist, true);
    const cattn::TensorArg batch_ptr(fn, "args->batch_ptr", args->batch_ptr, true);
    const cattn::TensorArg chunk_ptr(fn, "args->token_chunk_offset_ptr",
                                     args->token_chunk_offset_ptr, true);
    const cattn::TensorArg* outs[] = {&nums, &mlist, &offsetlist, &batch_ptr, &chunk_ptr};
    for (const cattn::TensorArg* o : outs)
      if (o->present()) o->expect_ndim(1).expect_index_dtype().expect_writable();
    // The host path rereads query_start_loc_cpu while it writes each output.
    cattn::require_disjoint_outputs(fn, {&nums, &mlist, &offsetlist, &batch_ptr, &chunk_ptr},
                                    {&q});
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

}  // extern "C"
