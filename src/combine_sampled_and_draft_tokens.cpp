// SPDX-License-Identifier: Apache-2.0
// A step's logits indices and, optionally, its sampled and draft tokens in input_ids (MRV2's
// combine_sampled_and_draft_tokens and expand_idx_mapping). Entry point: argument checks and
// dispatch; the algorithm is host/step_inputs_host.cpp and kernels/step_inputs.cu.
#include "common/error.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/step_inputs_device.h"

extern "C" {

CATTN_API cattn_status_t cattn_combine_sampled_and_draft_tokens(
    const cattn_combine_sampled_and_draft_tokens_args_t* args) {
  constexpr const char* fn = "cattn_combine_sampled_and_draft_tokens";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::check_num_new_sampled(fn, "args->", args->num_new_sampled_tokens);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg nd(fn, "args->num_draft_tokens", args->num_draft_tokens, Use::In, true);
    const TensorArg idx(fn, "args->idx_mapping", args->idx_mapping, Use::In, true);
    const TensorArg sl(fn, "args->seq_lens", args->seq_lens, Use::In, true);
    const TensorArg pl(fn, "args->prefill_len", args->prefill_len, Use::In, true);
    const TensorArg last(fn, "args->last_sampled_tokens", args->last_sampled_tokens, Use::In,
                         true);
    const TensorArg dt(fn, "args->draft_tokens", args->draft_tokens, Use::In, true);
    const TensorArg li(fn, "args->logits_indices", args->logits_indices, Use::Out);
    const TensorArg cu(fn, "args->cu_num_logits", args->cu_num_logits, Use::Out, true);
    const TensorArg ei(fn, "args->expanded_idx_mapping", args->expanded_idx_mapping, Use::Out,
                       true);
    const TensorArg ep(fn, "args->expanded_local_pos", args->expanded_local_pos, Use::Out, true);
    const TensorArg ids(fn, "args->input_ids", args->input_ids, Use::Out, true);
    const int64_t B = cattn::expect_query_start_loc(qsl);
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    if (nd.present()) cattn::expect_index_vector(nd, B);
    if ((ei.present() || ids.present()) && !idx.present())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, idx.name(), "is NULL", "NULL",
                      "a tensor: expanded_idx_mapping and input_ids read it");
    if (idx.present()) cattn::expect_index_vector(idx, B);
    // The token combination takes its four inputs together.
    const TensorArg* comb[] = {&sl, &pl, &last, &dt};
    for (const TensorArg* c : comb)
      if (c->present() != ids.present())
        cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, c->name(),
                        ids.present() ? "is NULL" : "is set without input_ids",
                        c->present() ? "a tensor" : "NULL",
                        "seq_lens, prefill_len, last_sampled_tokens and draft_tokens all set "
                        "with input_ids, all NULL without");
    int64_t R = 0;
    if (ids.present()) {
      cattn::expect_index_vector(sl, B);
      pl.expect_ndim(1).expect_index_dtype();
      R = pl.size(0);
      cattn::expect_index_vector(last, R);
      dt.expect_ndim(2).expect_index_dtype().expect_size(0, R);
      ids.expect_ndim(1).expect_index_dtype().expect_writable();
    }
    cattn::expect_index_output(li, 0);
    if (cu.present()) cu.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, B + 1);
    if (ei.present()) cattn::expect_index_output(ei, 0);
    if (ep.present()) cattn::expect_index_output(ep, 0);
    const cattn::Where where = cattn::require_same_device(
        fn, {&qsl, &nreq, &nd, &idx, &sl, &pl, &last, &dt, &li, &cu, &ei, &ep, &ids});
    cattn::StepInputsTensors t;
    t.rows = B;
    t.persistent_rows = ids.present() ? R : INT64_MAX;
    t.given_qsl = &qsl, t.num_reqs = &nreq;
    if (idx.present()) t.idx_mapping = &idx;
    t.logits = true;
    t.new_sampled = args->num_new_sampled_tokens;
    t.num_draft = &nd, t.cu_num_logits = &cu, t.logits_indices = &li;
    t.expanded_idx = &ei, t.expanded_pos = &ep;
    if (ids.present()) {
      t.comb_seq_lens = &sl, t.prefill_len = &pl, t.last_sampled = &last, t.draft_tokens = &dt;
      t.input_ids = &ids;
    }
    cattn::run_step_inputs(fn, where, t, qsl, args->stream);
  });
}

}  // extern "C"
