// SPDX-License-Identifier: Apache-2.0
// The entries a step's per-token and per-logit outputs need (cattn_step_inputs_size), counted
// as the step-input calls count them (host/step_inputs_host.cpp), so that no caller sizes its
// outputs with its own arithmetic. Host tensors only.
#include "common/error.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"

extern "C" {

CATTN_API cattn_status_t cattn_step_inputs_size(cattn_step_inputs_size_args_t* args) {
  constexpr const char* fn = "cattn_step_inputs_size";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    // The counts are read, the two totals written: the struct is both.
    cattn::require_struct(fn, "args", args, Use::Out);
    cattn::check_num_new_sampled(fn, "args->", args->num_new_sampled_tokens);
    const TensorArg sched(fn, "args->num_scheduled_tokens", args->num_scheduled_tokens, Use::In,
                          true);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In, true);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg drafts(fn, "args->num_draft_tokens", args->num_draft_tokens, Use::In, true);
    if (sched.present() == qsl.present())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_scheduled_tokens",
                      sched.present() ? "is given with args->query_start_loc"
                                      : "is NULL and so is args->query_start_loc",
                      sched.present() ? "both" : "neither", "exactly one of the two");
    int64_t B;
    if (sched.present()) {
      sched.expect_ndim(1).expect_index_dtype();
      B = sched.size(0);
    } else {
      B = cattn::expect_query_start_loc(qsl);
    }
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    if (drafts.present()) cattn::expect_index_vector(drafts, B);
    for (const TensorArg* t : {&sched, &qsl, &nreq, &drafts})
      if (t->present()) t->expect_host();
    cattn::seal_arguments();
    cattn::StepInputsTensors t;
    t.rows = B;
    t.num_reqs = &nreq;
    if (sched.present()) t.num_scheduled = &sched;
    else t.given_qsl = &qsl;
    t.logits = true;
    t.num_draft = &drafts;
    t.new_sampled = args->num_new_sampled_tokens;
    const cattn::StepInputsTotals n = cattn::step_inputs_totals(fn, t);
    args->num_tokens = n.tokens;
    args->num_logits = n.logits;
  });
}

}  // extern "C"
