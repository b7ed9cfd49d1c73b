// Utility 6: causal-conv1d launch metadata (vLLM compute_causal_conv1d_metadata). Entry points:
// argument checks and dispatch; the algorithm is in
// host/compute_causal_conv1d_metadata_host.cpp.
#include <algorithm>

#include "common/error.h"
#include "common/tensor_arg.h"
#include "host/compute_causal_conv1d_metadata_host.h"

#if defined(CATTN_HAVE_CUDA)
#include "common/cuda_launch.h"
#include "kernels/compute_causal_conv1d_metadata.h"
#include "kernels/upload_index.h"
#endif

namespace {

// The launch-array length vLLM allocates: MAX_NUM_PROGRAMS = max(1024, tot) * 2.
constexpr int64_t kMinPrograms = 1024;

#if defined(CATTN_HAVE_CUDA)
// Device outputs from the host mirror: the program offsets are planned here from
// query_start_loc_cpu (already validated, so no difference or sum overflows) and travel to the
// device inside kernel parameters, kParamChunk - 1 requests per launch, so nothing is read
// back, allocated or synchronised and the launches can be captured. The PAD tails follow as
// fills; every launch writes a range no other one touches.
void compute_causal_conv1d_metadata_cuda(const char* fn, const cattn::TensorArg& q,
                                         int64_t block_m, const cattn::CausalConv1dCounts& c,
                                         const cattn::TensorArg* const (&outs)[5],
                                         void* stream) {
  const cattn::TensorArg& nums = *outs[0];
  const cattn::TensorArg* any = nullptr;
  for (const cattn::TensorArg* o : outs)
    if (o->present() && any == nullptr) any = o;
  cattn::DeviceScope dev(fn, *any);

  // About 30 KiB: on the stack rather than the heap, so a call costs no host allocation.
  cattn::kernels::CausalConv1dParams p;
  cattn::kernels::MutIndexSpan* spans[5] = {&p.nums, &p.mlist, &p.offsetlist, &p.batch_ptr,
                                            &p.token_chunk_offset_ptr};
  for (int i = 0; i < 5; ++i)
    if (outs[i]->present()) *spans[i] = cattn::mut_index_span(*outs[i]);
  const bool per_program = p.mlist.data || p.offsetlist.data || p.batch_ptr.data ||
                           p.token_chunk_offset_ptr.data;

  // Each entry is read once (a request starts where the previous one ended) and the offsets
  // are held within the checked tot, so a mirror changed during the call cannot make a launch
  // write past the outputs.
  const cattn::IndexReader in = cattn::reader1d(q);
  constexpr int64_t kPerLaunch = cattn::kernels::kParamChunk - 1;
  int64_t offset = 0, start = c.batch > 0 ? in[0] : 0;
  for (int64_t first = 0; first < c.batch; first += kPerLaunch) {
    const int64_t n = std::min(kPerLaunch, c.batch - first);
    p.prefix.first = first;
    p.prefix.count = static_cast<int32_t>(n + 1);
    p.prefix.v[0] = offset;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t end = in[first + i + 1];
      int64_t len;
      if (__builtin_sub_overflow(end, start, &len) || len < 0) len = 0;
      start = end;
      // ceil, as vLLM's -(-len // block_m)
      offset += std::min(len / block_m + (len % block_m != 0), c.tot - offset);
      p.prefix.v[i + 1] = offset;
    }
    // A chunk of zero-length requests has only nums to write.
    if (!nums.present() && !(per_program && offset > p.prefix.v[0])) continue;
    cattn::check_launch(fn, cattn::kernels::launch_compute_causal_conv1d_metadata(p, stream),
                        stream);
  }
  for (const cattn::kernels::MutIndexSpan* pad : {&p.batch_ptr, &p.token_chunk_offset_ptr})
    if (pad->data != nullptr)
      cattn::check_launch(fn,
                          cattn::kernels::launch_fill_index(*pad, c.tot, pad->size,
                                                            CATTN_PAD_SLOT_ID, dev.shape(),
                                                            stream),
                          stream);
}
#endif

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
#if defined(CATTN_HAVE_CUDA)
      compute_causal_conv1d_metadata_cuda(fn, q, args->block_m, c, outs, args->stream);
      args->tot = c.tot;
      return;
#else
      cattn::fail_no_cuda_path(fn);
#endif
    }

    cattn::compute_causal_conv1d_metadata_host(q, args->block_m, c, nums, mlist, offsetlist,
                                               batch_ptr, chunk_ptr);
    args->tot = c.tot;
  });
}

}  // extern "C"
