// SPDX-License-Identifier: Apache-2.0
// One KV-cache group's slot mapping (vLLM v1's compute_slot_mapping and MRV2's
// compute_slot_mappings). Entry point: argument checks and dispatch; the algorithm is
// host/step_inputs_host.cpp and kernels/step_inputs.cu.
#include "common/error.h"
#include "common/param_checks.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/step_inputs_device.h"

extern "C" {

CATTN_API cattn_status_t cattn_compute_slot_mappings(
    const cattn_compute_slot_mappings_args_t* args) {
  constexpr const char* fn = "cattn_compute_slot_mappings";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    cattn::require_reserved_zero(fn, "args->reserved0", args->reserved0);
    cattn::check_slot_mapping_contract(fn, "args->contract", args->contract);
    cattn::check_slot_mapping_params(fn, "args->", "args->", args->contract, args->block_size,
                                     args->kernel_block_size, args->dcp_size, args->dcp_rank,
                                     args->dcp_kv_cache_interleave_size);
    const bool v1 = args->contract == CATTN_SLOT_MAPPING_V1;
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg pos(fn, "args->positions", args->positions, Use::In);
    const TensorArg idx(fn, "args->idx_mapping", args->idx_mapping, Use::In, true);
    const TensorArg table(fn, "args->block_table", args->block_table, Use::In);
    const TensorArg out(fn, "args->slot_mapping", args->slot_mapping, Use::Out);
    const int64_t B = cattn::expect_query_start_loc(qsl);
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    pos.expect_ndim(1).expect_index_dtype();
    if (v1 && idx.present())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, idx.name(), "is set for the v1 contract",
                      "a tensor", "NULL (v1 reads the table by batch row)");
    if (!v1 && !idx.present())
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, idx.name(), "is NULL", "NULL",
                      "a tensor: MRV2 reads the table through it");
    if (idx.present()) cattn::expect_index_vector(idx, B);
    table.expect_ndim(2).expect_index_dtype();
    cattn::expect_slot_output(out, 0);  // its length is checked against the live total
    const cattn::Where where =
        cattn::require_same_device(fn, {&qsl, &nreq, &pos, &idx, &table, &out});
    cattn::StepInputsTensors t;
    t.rows = B;
    t.persistent_rows = table.size(0);
    t.given_qsl = &qsl, t.num_reqs = &nreq, t.given_positions = &pos;
    if (idx.present()) t.idx_mapping = &idx;
    t.num_groups = 1;
    cattn::StepInputsGroup& g = t.groups[0];
    g.table = &table, g.slots = &out, g.v1 = v1;
    g.block_size = args->block_size, g.kernel_block_size = args->kernel_block_size;
    t.dcp_size = args->dcp_size, t.dcp_rank = args->dcp_rank;
    t.dcp_interleave = args->dcp_kv_cache_interleave_size;
    cattn::run_step_inputs(fn, where, t, qsl, args->stream);
  });
}

}  // extern "C"
