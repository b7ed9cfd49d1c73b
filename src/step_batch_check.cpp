// SPDX-License-Identifier: Apache-2.0
// The padding contract's check (cattn_step_batch_check). Entry point: argument checks and
// dispatch; the algorithm is host/step_inputs_host.cpp and kernels/step_inputs.cu.
#include <optional>
#include <string>

#include "common/error.h"
#include "common/step_inputs.h"
#include "common/struct_arg.h"
#include "device/step_inputs_device.h"

namespace {
const char* const kTableNames[CATTN_MAX_KV_GROUPS] = {
    "args->block_tables[0]", "args->block_tables[1]", "args->block_tables[2]",
    "args->block_tables[3]", "args->block_tables[4]", "args->block_tables[5]",
    "args->block_tables[6]", "args->block_tables[7]"};
const char* const kSlotNames[CATTN_MAX_KV_GROUPS] = {
    "args->slot_mappings[0]", "args->slot_mappings[1]", "args->slot_mappings[2]",
    "args->slot_mappings[3]", "args->slot_mappings[4]", "args->slot_mappings[5]",
    "args->slot_mappings[6]", "args->slot_mappings[7]"};
}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_step_batch_check(const cattn_step_batch_check_args_t* args) {
  constexpr const char* fn = "cattn_step_batch_check";
  return cattn::guarded(fn, [&] {
    using cattn::TensorArg;
    using cattn::Use;
    cattn::require_struct(fn, "args", args);
    const TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, Use::In);
    const TensorArg nreq(fn, "args->num_reqs", args->num_reqs, Use::In, true);
    const TensorArg sl(fn, "args->seq_lens", args->seq_lens, Use::In, true);
    std::optional<TensorArg> tables[CATTN_MAX_KV_GROUPS], slots[CATTN_MAX_KV_GROUPS];
    for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
      tables[g].emplace(fn, kTableNames[g], args->block_tables[g], Use::In, true);
      slots[g].emplace(fn, kSlotNames[g], args->slot_mappings[g], Use::In, true);
    }
    const TensorArg status(fn, "args->status", args->status, Use::Out);
    const int64_t B = cattn::expect_query_start_loc(qsl);
    if (nreq.present()) cattn::expect_index_scalar(nreq);
    // Every input is read in full while status has three entries: broadcast views are bounded.
    if (sl.present()) cattn::expect_index_vector(sl, B), sl.expect_scan_bounded();
    cattn::StepBatchCheckTensors t;
    t.query_start_loc = &qsl, t.num_reqs = &nreq, t.seq_lens = &sl, t.status = &status;
    cattn::Where where = cattn::require_same_device(fn, {&qsl, &nreq, &sl, &status});
    for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
      if (tables[g]->present()) {
        tables[g]->expect_ndim(2).expect_index_dtype().expect_size(0, B).expect_scan_bounded();
        cattn::require_same_device(fn, {&qsl, &*tables[g]});
      }
      if (slots[g]->present()) {
        slots[g]->expect_ndim(1).expect_index_dtype().expect_scan_bounded();
        cattn::require_same_device(fn, {&qsl, &*slots[g]});
      }
      t.tables[g] = &*tables[g], t.slots[g] = &*slots[g];
    }
    status.expect_ndim(1).expect_index_dtype().expect_writable().expect_out_size(0, 3);
    cattn::seal_arguments();
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::step_batch_check_device(fn, t, args->stream);
      return;
    }
    cattn::step_batch_check_host(t);
  });
}

}  // extern "C"
