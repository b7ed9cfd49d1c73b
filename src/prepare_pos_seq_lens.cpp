// SPDX-License-Identifier: Apache-2.0
// A step's query_start_loc, seq_lens and positions from the scheduled counts (vLLM's host
// cumsum and MRV2's prepare_pos_seq_lens). Entry point: argument checks and dispatch; the
// algorithm is host/step_inputs_host.cpp and kernels/step_inputs.cu.
#include "common/error.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/step_inputs_device.h"

extern "C" {

CATTN_API cattn_status_t cattn_prepare_pos_seq_lens(const cattn_prepare_pos_seq_lens_args_t* args) {
  constexpr const char* fn = "cattn_prepare_pos_seq_lens";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    const TensorArg sched(fn, "args->num_scheduled_tokens", args->num_scheduled_tokens, Use::In);
    const TensorArg idx(fn, "args->idx_mapping", args->idx_mapping, Use::In);
    const TensorArg nct(fn, "args->num_computed_tokens", args->num_computed_tokens, Use::In);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::Out);
    const TensorArg seq(fn, "args->seq_lens", args->seq_lens, Use::Out);
    const TensorArg pos(fn, "args->positions", args->positions, Use::Out, true);
    const TensorArg bnct(fn, "args->batch_num_computed_tokens", args->batch_num_computed_tokens,
                         Use::Out, true);
    sched.expect_ndim(1).expect_index_dtype();
    const int64_t B = sched.size(0);
    cattn::expect_index_vector(idx, B);
    nct.expect_ndim(1).expect_index_dtype();
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    qsl.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, B + 1);
    seq.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, B);
    if (pos.present()) cattn::expect_index_output(pos, 0);
    if (bnct.present())
      bnct.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, B);
    const cattn::Where where =
        cattn::require_same_device(fn, {&sched, &idx, &nct, &nreq, &qsl, &seq, &pos, &bnct});
    cattn::StepInputsTensors t;
    t.rows = B;
    t.persistent_rows = nct.size(0);
    t.num_scheduled = &sched, t.idx_mapping = &idx, t.num_computed = &nct, t.num_reqs = &nreq;
    t.qsl = &qsl, t.seq_lens = &seq, t.positions = &pos, t.batch_num_computed = &bnct;
    cattn::run_step_inputs(fn, where, t, sched, args->stream);
  });
}

}  // extern "C"
