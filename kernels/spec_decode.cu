// SPDX-License-Identifier: Apache-2.0
// EAGLE's speculative-decoding metadata (vLLM's spec_decode/utils.py), one kernel per call.
// Values are the caller's: every read is bounded by its view and every write by its output, so
// a hostile value changes what is written, never where (kernels/spec_decode.h).
#include <cuda_runtime.h>

#include "kernels/spec_decode.cuh"

namespace cattn {
namespace kernels {
namespace {

using namespace spec;

__global__ void eagle_step_kernel(const EagleStepParams p) {
  const BlockSlice slice = whole_grid();
  for (int64_t i = slice.thread(); i < p.input_batch_size; i += slice.threads()) {
    if (i >= p.rows) {  // CUDA-graph padding
      store_index(p.slots, i, -1);
      continue;
    }
    const int64_t next = wrap_add(load_index(p.positions, i), 1);
    // At or past max_model_len (or below 0, where vLLM would read before the table): position
    // 0, no slot, a one-token sequence.
    const bool out = next >= p.max_model_len || next < 0;
    int64_t slot = -1, seq = 1;
    if (!out) {
      int64_t col = div_nonneg(next, p.block_size);
      if (col > p.block_table.size[1] - 1) col = p.block_table.size[1] - 1;  // vLLM's clamp
      slot = slot_in(load_index(p.block_table, i, col), next, p.block_size);
      seq = wrap_add(p.seq_lens_in.data != nullptr ? load_index(p.seq_lens_in, i)
                                                   : load_inout(p.seq_lens, i),
                     1);
    }
    if (seq > p.max_model_len) seq = p.max_model_len;
    store_index(p.clamped, i, out ? 0 : next);
    store_index(p.slots, i, slot);
    store_index(p.seq_lens, i, seq);
  }
}

__global__ void eagle_prepare_inputs_kernel(const EaglePrepareInputsParams p) {
  const BlockSlice slice = whole_grid();
  for (int64_t i = slice.thread(); i < p.rows; i += slice.threads()) {
    const int64_t cu = load_index(p.cu_num_draft_tokens, i);
    const int64_t drafts = i == 0 ? cu : wrap_sub(cu, load_index(p.cu_num_draft_tokens, i - 1));
    const int64_t rejected =
        drafts > 0 ? wrap_sub(wrap_add(drafts, 1), load_index(p.valid_count, i)) : 0;
    const int64_t last = wrap_sub(load_index(p.query_start_loc, i + 1), 1);
    store_index(p.token_indices, i, wrap_sub(last, rejected));
    store_index(p.num_rejected, i, rejected);
  }
}

__global__ void eagle_next_token_kernel(const EagleNextTokenParams p) {
  const BlockSlice slice = whole_grid();
  for (int64_t i = slice.thread(); i < p.rows; i += slice.threads()) {
    int64_t valid = 0, next = 0;
    bool found = false;
    if (!flag_at(p.discard, i)) {
      for (int64_t j = 0; j < p.sampled.size[1]; ++j) {
        const int64_t t = load_index(p.sampled, i, j);
        if (t != -1 && t < p.vocab_size) ++valid, next = t, found = true;
      }
    }
    store_index(p.next_tokens, i, found ? next : load_index(p.backup, i));
    store_index(p.valid_count, i, valid);
  }
}

__global__ void new_slot_mapping_kernel(const NewSlotMappingParams p) {
  const BlockSlice slice = whole_grid();
  const int64_t n = p.positions.size[0];
  const int64_t B = p.rows, N = p.num_new_tokens;
  const int64_t base = B > 0 ? load_index(p.query_start_loc, 0) : 0;
  // Request r owns tokens [start(r), start(r + 1)).
  auto start = [&](int64_t r) {
    return wrap_add(wrap_sub(load_index(p.query_start_loc, r), base), wrap_mul(r, N));
  };
  const int64_t end = B > 0 ? start(B) : 0;
  for (int64_t k = slice.thread(); k < n; k += slice.threads()) {
    int64_t slot = -1;
    const int64_t pos = load_index(p.positions, k);
    if (B > 0 && k < end && !flag_at(p.rejected, k) && pos >= 0 && pos < p.max_model_len) {
      int64_t lo = 0, hi = B - 1;  // the last r with start(r) <= k
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (start(mid) <= k) lo = mid;
        else hi = mid - 1;
      }
      slot = new_slot(p.block_table, B, lo, pos, false, p.block_size, p.max_model_len);
    }
    store_index(p.slots, k, slot);
  }
}

// A warp per request; lanes stride over its output tokens.
__global__ void copy_and_expand_kernel(const CopyExpandParams p) {
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kBlockWarps;
  const int lane = threadIdx.x % 32;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kBlockWarps + threadIdx.x / 32; i < p.rows;
       i += warps) {
    // query_start_loc clamped to [0, span]: a valid batch is unchanged (its entries are at
    // most the output count), and a hostile one cannot make a warp loop past the memory.
    ExpandRequest r;
    r.i = i;
    r.s = clamp64(load_index(p.query_start_loc, i), 0, p.span);
    r.e = clamp64(load_index(p.query_start_loc, i + 1), r.s, p.span);
    r.end_loc = load_index(p.query_end_loc, i);
    r.bonus = load_index(p.next_ids, i);
    expand_request(r, p.target_ids, p.target_positions, p.input_ids, p.positions, p.rejected,
                   p.masked, p.new_token_indices, p.hidden_map, p.slots_per_request, p.shift,
                   p.max_tokens, p.pad_id, p.parallel_id, nullptr, lane);
  }
}

// One block: every new count is staged in shared memory before any is written, since row k
// may read the count row k' rewrites (a reordered batch).
__global__ void batch_change_kernel(const BatchChangeParams p) {
  extern __shared__ int64_t staged[];
  const bool separate = p.computed_in.data != nullptr;
  const int64_t M = separate ? p.computed_in.size[0] : p.num_computed.size[0];
  const int64_t n_prev = p.valid_count.size[0];
  for (int64_t k = threadIdx.x; k < p.rows; k += blockDim.x) {
    const int64_t g = load_index(p.prev_positions, k);
    // A row past the previous batch (host: refused) is a new one.
    const bool carried = g >= 0 && g < n_prev && g < M && load_index(p.prev_drafts, g) > 0;
    if (carried) {
      const int64_t valid = load_index(p.valid_count, g);
      staged[k] = wrap_add(separate ? load_index(p.computed_in, g) : load_inout(p.num_computed, g),
                           valid);
      store_index(p.num_accepted, k, valid);
    } else {
      staged[k] = load_index(p.cpu_num_computed, k);
      if (p.accepted_in.data != nullptr) store_index(p.num_accepted, k, load_index(p.accepted_in, k));
    }
  }
  __syncthreads();
  for (int64_t k = threadIdx.x; k < p.rows; k += blockDim.x)
    store_index(p.num_computed, k, staged[k]);
}

}  // namespace

int launch_eagle_step_update_slot_mapping_and_metadata(const EagleStepParams& p,
                                                       const DeviceShape& dev, void* stream) {
  return launch_elementwise(eagle_step_kernel, p.input_batch_size, dev, stream, p);
}

int launch_eagle_prepare_inputs_padded(const EaglePrepareInputsParams& p, const DeviceShape& dev,
                                       void* stream) {
  return launch_elementwise(eagle_prepare_inputs_kernel, p.rows, dev, stream, p);
}

int launch_eagle_prepare_next_token_padded(const EagleNextTokenParams& p, const DeviceShape& dev,
                                           void* stream) {
  return launch_elementwise(eagle_next_token_kernel, p.rows, dev, stream, p);
}

int launch_compute_new_slot_mapping(const NewSlotMappingParams& p, const DeviceShape& dev,
                                    void* stream) {
  return launch_elementwise(new_slot_mapping_kernel, p.positions.size[0], dev, stream, p);
}

int launch_copy_and_expand_eagle_inputs(const CopyExpandParams& p, const DeviceShape& dev,
                                        void* stream) {
  if (p.rows <= 0) return cudaSuccess;
  const unsigned blocks = grid_size(ceil_div(p.rows, kBlockWarps));
  copy_and_expand_kernel<<<blocks, kBlockThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  (void)dev;
  return cudaGetLastError();
}

int launch_update_num_computed_tokens_for_batch_change(const BatchChangeParams& p,
                                                       const DeviceShape& dev, void* stream) {
  (void)dev;
  if (p.rows <= 0) return cudaSuccess;
  const size_t bytes = static_cast<size_t>(p.rows) * sizeof(int64_t);
  // Past the default 48 KiB a kernel must opt in (sm_80 and sm_90 hold 64 KiB per block).
  if (bytes > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        batch_change_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != cudaSuccess) return e;
  }
  batch_change_kernel<<<1, 1024, bytes, static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace kernels
}  // namespace cattn
