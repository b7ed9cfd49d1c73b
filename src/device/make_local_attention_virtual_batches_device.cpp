// SPDX-License-Identifier: Apache-2.0
// Device side of the local-attention plan's fill and block-table gather.
#include <algorithm>

#include "device/cuda_launch.h"
#include "device/make_local_attention_virtual_batches_device.h"
#include "kernels/make_local_attention_virtual_batches.h"
#include "kernels/write_param_chunk.h"

namespace cattn {
namespace {

using kernels::kParamChunk;

// Host-planned values to a device vector, kParamChunk per launch, through `scratch` (a launch
// copies its parameters, so one buffer serves every launch).
void upload_vector(const char* fn, const TensorArg& out, const std::vector<int64_t>& values,
                   kernels::ParamChunk& scratch, void* stream) {
  const kernels::MutIndexSpan span = index_view(out);
  const int64_t n = static_cast<int64_t>(values.size());
  for (int64_t first = 0; first < n; first += kParamChunk) {
    const int64_t count = std::min<int64_t>(kParamChunk, n - first);
    scratch.first = first;
    scratch.count = static_cast<int32_t>(count);
    std::copy(values.begin() + first, values.begin() + first + count, scratch.v);
    check_launch(fn, kernels::launch_write_param_chunk(span, scratch, stream), stream);
  }
}

}  // namespace

void make_local_attention_virtual_batches_device(const char* fn, const LocalAttentionPlan& plan,
                                                 const TensorArg& table,
                                                 const TensorArg& out_table,
                                                 const TensorArg* query_start_loc,
                                                 const TensorArg* seq_lens, void* stream) {
  DeviceScope dev(fn, table);
  // About 30 KiB: on the stack rather than the heap, so a call costs no host allocation.
  kernels::LocalBlockTableParams p;
  if (query_start_loc != nullptr && query_start_loc->present())
    upload_vector(fn, *query_start_loc, plan.cu_seqlens_q, p.batch_and_start, stream);
  if (seq_lens != nullptr && seq_lens->present())
    upload_vector(fn, *seq_lens, plan.seqlens_k, p.batch_and_start, stream);

  p.block_table = index_view(table);
  p.out = index_view(out_table);
  p.cols = plan.cols;
  const int64_t last_col = plan.cols - 1;
  for (int64_t first = 0; first < plan.virtual_batches; first += kParamChunk) {
    const int64_t count = std::min<int64_t>(kParamChunk, plan.virtual_batches - first);
    p.batch_and_start.first = first;
    p.batch_and_start.count = static_cast<int32_t>(count);
    for (int64_t i = 0; i < count; ++i) {
      const size_t v = static_cast<size_t>(first + i);
      p.batch_and_start.v[i] =
          (plan.batch_index[v] << 32) | std::min(plan.block_start[v], last_col);
    }
    check_launch(fn, kernels::launch_make_local_attention_virtual_batches(p, dev.shape(), stream),
                 stream);
  }
}

kernels::LocalAttentionCapturableParams local_attention_capturable_params(
    const LocalAttentionCapturableTensors& t, int64_t chunk, int64_t block_size) {
  kernels::LocalAttentionCapturableParams p;
  p.query_start_loc = index_view(t.query_start_loc);
  p.seq_lens = index_view(t.seq_lens);
  p.block_table = index_view(t.block_table);
  p.cu_seqlens_q = index_view(t.query_start_loc_out);
  p.seqlens_k = index_view(t.seq_lens_out);
  if (t.num_computed_tokens_out.present()) p.num_computed = index_view(t.num_computed_tokens_out);
  if (t.block_table_out.present()) p.out_table = index_view(t.block_table_out);
  p.chunk = chunk;
  p.block_size = block_size;
  p.pages = chunk / block_size;
  p.cols = t.block_table.size(1);
  return p;
}

void make_local_attention_virtual_batches_capturable(const char* fn,
                                                     const LocalAttentionCapturableTensors& t,
                                                     int64_t chunk, int64_t block_size,
                                                     const TensorArg& counts, void* stream) {
  DeviceScope dev(fn, t.query_start_loc);
  kernels::LocalAttentionCapturableParams p =
      local_attention_capturable_params(t, chunk, block_size);
  if (counts.present()) p.counts.device = index_view(counts);
  check_launch(
      fn, kernels::launch_make_local_attention_virtual_batches_capturable(p, dev.shape(), stream),
      stream);
}

}  // namespace cattn
