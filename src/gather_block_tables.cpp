// SPDX-License-Identifier: Apache-2.0
// The batch's block table from the persistent one (MRV2's gather_block_tables). Entry point:
// argument checks and dispatch; the algorithm is host/step_inputs_host.cpp and
// kernels/step_inputs.cu.
#include "common/error.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/step_inputs_device.h"

extern "C" {

CATTN_API cattn_status_t cattn_gather_block_tables(const cattn_gather_block_tables_args_t* args) {
  constexpr const char* fn = "cattn_gather_block_tables";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    const TensorArg idx(fn, "args->idx_mapping", args->idx_mapping, Use::In);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg table(fn, "args->block_table", args->block_table, Use::In);
    const TensorArg nb(fn, "args->num_blocks", args->num_blocks, Use::In, true);
    const TensorArg out(fn, "args->out", args->out, Use::Out);
    // idx_mapping is read in full while out may be empty (W = 0): broadcast views are bounded.
    idx.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    const int64_t B = idx.size(0);
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    table.expect_ndim(2).expect_index_dtype();
    if (nb.present()) cattn::expect_index_vector(nb, table.size(0));
    out.expect_ndim(2).expect_index_dtype().expect_writable();
    out.expect_out_size(0, B).expect_out_size(1, table.size(1));
    const cattn::Where where = cattn::require_same_device(fn, {&idx, &nreq, &table, &nb, &out});
    cattn::StepInputsTensors t;
    t.rows = B;
    t.persistent_rows = table.size(0);
    t.idx_mapping = &idx, t.num_reqs = &nreq;
    t.num_groups = 1;
    t.groups[0].table = &table, t.groups[0].num_blocks = &nb, t.groups[0].gathered = &out;
    cattn::run_step_inputs(fn, where, t, idx, args->stream);
  });
}

}  // extern "C"
