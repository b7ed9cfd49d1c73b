// SPDX-License-Identifier: Apache-2.0
// Device side of the step inputs: kernel views of the checked tensors and the launch.
#include "device/step_inputs_device.h"

#include <algorithm>

#include "device/cuda_launch.h"

namespace cattn {
namespace {

namespace k = kernels;

template <class View>
View view_of(const TensorArg* t) {
  return present(t) ? static_cast<View>(index_view(*t)) : View{};
}

int64_t length(const TensorArg* t) { return present(t) ? t->size(0) : 0; }

}  // namespace

k::StepInputsParams step_inputs_params(const StepInputsTensors& t) {
  k::StepInputsParams p;
  p.rows = t.rows;
  p.persistent_rows = t.persistent_rows;
  p.num_reqs = view_of<k::IndexSpan>(t.num_reqs);
  p.num_scheduled = view_of<k::IndexSpan>(t.num_scheduled);
  p.given_qsl = view_of<k::IndexSpan>(t.given_qsl);
  p.idx_mapping = view_of<k::IndexSpan>(t.idx_mapping);
  p.num_computed = view_of<k::IndexSpan>(t.num_computed);
  p.given_positions = view_of<k::IndexSpan>(t.given_positions);
  p.positions = view_of<k::MutIndexSpan>(t.positions);
  p.token_to_req = view_of<k::MutIndexSpan>(t.token_to_req);
  p.qsl = view_of<k::MutIndexSpan>(t.qsl);
  p.seq_lens = view_of<k::MutIndexSpan>(t.seq_lens);
  p.batch_num_computed = view_of<k::MutIndexSpan>(t.batch_num_computed);
  int64_t token_cap = std::max(length(t.positions), length(t.token_to_req));
  bool rows = present(t.qsl) || present(t.seq_lens) || present(t.batch_num_computed);
  bool gather = false;
  p.num_groups = t.num_groups;
  for (int g = 0; g < t.num_groups; ++g) {
    const StepInputsGroup& s = t.groups[g];
    k::KvGroupView& v = p.groups[g];
    v.table = view_of<k::IndexMatrix>(s.table);
    v.num_blocks = view_of<k::IndexSpan>(s.num_blocks);
    v.gathered = view_of<k::MutIndexMatrix>(s.gathered);
    v.slots = view_of<k::MutIndexSpan>(s.slots);
    v.block_size = s.block_size;
    v.kernel_block_size = s.kernel_block_size;
    v.v1 = s.v1;
    token_cap = std::max(token_cap, length(s.slots));
    gather = gather || present(s.gathered);
  }
  p.token_cap = token_cap;
  p.dcp_size = t.dcp_size;
  p.dcp_rank = t.dcp_rank;
  p.dcp_interleave = t.dcp_interleave;
  p.logits = t.logits;
  p.new_sampled = t.new_sampled;
  p.num_draft = view_of<k::IndexSpan>(t.num_draft);
  p.cu_num_logits = view_of<k::MutIndexSpan>(t.cu_num_logits);
  p.logits_indices = view_of<k::MutIndexSpan>(t.logits_indices);
  p.expanded_idx = view_of<k::MutIndexSpan>(t.expanded_idx);
  p.expanded_pos = view_of<k::MutIndexSpan>(t.expanded_pos);
  p.logit_cap = std::max({length(t.logits_indices), length(t.expanded_idx),
                          length(t.expanded_pos)});
  p.comb_seq_lens = view_of<k::IndexSpan>(t.comb_seq_lens);
  p.prefill_len = view_of<k::IndexSpan>(t.prefill_len);
  p.last_sampled = view_of<k::IndexSpan>(t.last_sampled);
  p.draft_tokens = view_of<k::IndexMatrix>(t.draft_tokens);
  p.input_ids = view_of<k::MutIndexSpan>(t.input_ids);
  rows = rows || present(t.cu_num_logits) || present(t.input_ids);
  p.token_blocks = k::step_inputs_token_blocks(token_cap);
  p.row_blocks = rows ? k::step_inputs_row_blocks(t.rows) : 0;
  p.logit_blocks = t.logits ? k::step_inputs_logit_blocks(p.logit_cap) : 0;
  p.gather_blocks = gather ? k::step_inputs_gather_blocks(t.rows, t.num_groups) : 0;
  p.needs_qsl = present(t.num_scheduled) || present(t.given_qsl);
  return p;
}

void step_inputs_device(const char* fn, const StepInputsTensors& t, const TensorArg& any,
                        void* stream) {
  DeviceScope dev(fn, any);
  check_launch(fn, k::launch_step_inputs(step_inputs_params(t), stream, false), stream);
}

void step_batch_check_device(const char* fn, const StepBatchCheckTensors& t, void* stream) {
  DeviceScope dev(fn, *t.query_start_loc);
  k::StepBatchCheckParams p;
  p.query_start_loc = index_view(*t.query_start_loc);
  p.num_reqs = view_of<k::IndexSpan>(t.num_reqs);
  p.seq_lens = view_of<k::IndexSpan>(t.seq_lens);
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    p.tables[g] = view_of<k::IndexMatrix>(t.tables[g]);
    p.slots[g] = view_of<k::IndexSpan>(t.slots[g]);
  }
  p.status = index_view(*t.status);
  check_launch(fn, k::launch_step_batch_check(p, stream), stream);
}

}  // namespace cattn
