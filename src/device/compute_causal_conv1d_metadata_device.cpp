// SPDX-License-Identifier: Apache-2.0
// Device side of compute_causal_conv1d_metadata: the program offsets are planned from
// query_start_loc_cpu (already validated, so no difference or sum overflows) and travel to the
// device inside kernel parameters, one launch per kernels::kParamChunk - 1 requests, so nothing
// is read back, allocated or synchronised and the launches can be captured. The PAD tails
// follow as fills; every launch writes a range no other one touches.
#include <algorithm>

#include "device/compute_causal_conv1d_metadata_device.h"
#include "device/cuda_launch.h"
#include "kernels/compute_causal_conv1d_metadata.h"
#include "kernels/write_param_chunk.h"

namespace cattn {

void compute_causal_conv1d_metadata_device(const char* fn, const TensorArg& q, int64_t block_m,
                                           const CausalConv1dCounts& c,
                                           const TensorArg* const (&outs)[5], void* stream) {
  const TensorArg& nums = *outs[0];
  const TensorArg* any = nullptr;
  for (const TensorArg* o : outs)
    if (o->present() && any == nullptr) any = o;
  DeviceScope dev(fn, *any);

  // About 30 KiB: on the stack rather than the heap, so a call costs no host allocation.
  kernels::CausalConv1dParams p;
  kernels::MutIndexSpan* spans[5] = {&p.nums, &p.mlist, &p.offsetlist, &p.batch_ptr,
                                     &p.token_chunk_offset_ptr};
  for (int i = 0; i < 5; ++i)
    if (outs[i]->present()) *spans[i] = index_view(*outs[i]);
  const bool per_program = p.mlist.data || p.offsetlist.data || p.batch_ptr.data ||
                           p.token_chunk_offset_ptr.data;

  // Each entry is read once (a request starts where the previous one ended) and the offsets
  // are held within the checked tot, so a mirror changed during the call cannot make a launch
  // write past the outputs.
  const IndexReader in = reader1d(q);
  constexpr int64_t kPerLaunch = kernels::kParamChunk - 1;
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
    check_launch(fn, kernels::launch_compute_causal_conv1d_metadata(p, dev.shape(), stream),
                 stream);
  }
  for (const kernels::MutIndexSpan* pad : {&p.batch_ptr, &p.token_chunk_offset_ptr})
    if (pad->data != nullptr)
      check_launch(fn,
                   kernels::launch_fill_index(*pad, c.tot, pad->size[0], CATTN_PAD_SLOT_ID,
                                              dev.shape(), stream),
                   stream);
}

kernels::CausalConv1dCapturableParams causal_conv1d_capturable_params(
    const TensorArg& q, int64_t block_m, const TensorArg* const (&outs)[5], const TensorArg& tot) {
  kernels::CausalConv1dCapturableParams p;
  p.query_start_loc = index_view(q);
  p.block_m = block_m;
  kernels::MutIndexSpan* spans[5] = {&p.nums, &p.mlist, &p.offsetlist, &p.batch_ptr,
                                     &p.token_chunk_offset_ptr};
  for (int i = 0; i < 5; ++i)
    if (outs[i]->present()) *spans[i] = index_view(*outs[i]);
  if (tot.present()) p.tot.device = index_view(tot);
  return p;
}

void compute_causal_conv1d_metadata_capturable(const char* fn, const TensorArg& q, int64_t block_m,
                                               const TensorArg* const (&outs)[5],
                                               const TensorArg& tot, void* stream) {
  DeviceScope dev(fn, q);
  const kernels::CausalConv1dCapturableParams p =
      causal_conv1d_capturable_params(q, block_m, outs, tot);
  check_launch(fn,
               kernels::launch_compute_causal_conv1d_metadata_capturable(p, dev.shape(), stream),
               stream);
}

}  // namespace cattn
