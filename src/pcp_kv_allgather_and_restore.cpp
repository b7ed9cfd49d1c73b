// SPDX-License-Identifier: Apache-2.0
// PCP all-gather + restore (vLLM pcp_kv_allgather_and_restore). Entry points: argument checks
// and dispatch; the workspace plan and the NCCL + kernel sequence are in
// device/pcp_kv_allgather_and_restore_device.cpp. There is no host path: NCCL moves device
// memory.
#include <string>

#include "common/comm_handle.h"
#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/pcp_kv_allgather_and_restore_device.h"

namespace {

// Checks what both entry points read: key, value and num_actual_tokens.
void check_inputs(const char* fn, const cattn::TensorArg& key, const cattn::TensorArg& value,
                  int64_t n) {
  for (const cattn::TensorArg* t : {&key, &value})
    if (t->ndim() < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, t->name(), "has no token dimension", "ndim 0",
                      "ndim >= 1, [tokens, ...]");
  value.expect_size(0, key.size(0));
  if (n < 0)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_actual_tokens", "is negative",
                    std::to_string(n), ">= 0");
  if (n > key.size(0))
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->num_actual_tokens", "is out of range",
                    std::to_string(n), "[0, " + std::to_string(key.size(0)) + "] (key's dim 0)");
}

void require_comm(const char* fn, const cattn_comm_t* comm) {
  cattn::require_comm(fn, "args->comm", comm);
}

// Outputs are allocated by the caller as vLLM's index_select returns them: [M, src's other
// dims], src's dtype, compact.
void expect_output(const cattn::TensorArg& out, const cattn::TensorArg& src, int64_t rows) {
  out.expect_ndim(src.ndim()).expect_same_dtype(src);
  for (int d = 1; d < src.ndim(); ++d) out.expect_size(d, src.size(d));
  out.expect_out_size(0, rows);
  if (out.numel() > 0) out.expect_contiguous();
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore_workspace_size(
    const cattn_pcp_kv_allgather_and_restore_args_t* args, size_t* size) {
  constexpr const char* fn = "cattn_pcp_kv_allgather_and_restore_workspace_size";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    cattn::require_out_ptr(fn, "size", size);
    const cattn::TensorArg key(fn, "args->key", args->key, cattn::Use::In);
    const cattn::TensorArg value(fn, "args->value", args->value, cattn::Use::In);
    check_inputs(fn, key, value, args->num_actual_tokens);
    require_comm(fn, args->comm);
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    else {
      const size_t bytes = cattn::pcp_kv_allgather_and_restore_workspace_device(
          fn, key, value, args->num_actual_tokens, args->comm->size);
      cattn::seal_arguments();
      *size = bytes;
    }
  });
}

CATTN_API cattn_status_t cattn_pcp_kv_allgather_and_restore(
    const cattn_pcp_kv_allgather_and_restore_args_t* args) {
  constexpr const char* fn = "cattn_pcp_kv_allgather_and_restore";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg key(fn, "args->key", args->key, cattn::Use::In);
    const cattn::TensorArg value(fn, "args->value", args->value, cattn::Use::In);
    const cattn::TensorArg idx(fn, "args->restore_idx", args->restore_idx, cattn::Use::In);
    const cattn::TensorArg key_out(fn, "args->key_out", args->key_out, cattn::Use::Out);
    const cattn::TensorArg value_out(fn, "args->value_out", args->value_out, cattn::Use::Out);
    check_inputs(fn, key, value, args->num_actual_tokens);
    idx.expect_ndim(1).expect_index_dtype();
    const int64_t m = idx.size(0);
    expect_output(key_out, key, m);
    expect_output(value_out, value, m);
    if (cattn::require_same_device(fn, {&key, &value, &idx, &key_out, &value_out}) ==
        cattn::Where::Host)
      cattn::fail_arg(CATTN_NOT_SUPPORTED, fn, "args->key", "is host memory",
                      "device_type " + std::to_string(cattn::device_type_of(args->key->device)),
                      "kDLCUDA tensors (NCCL gathers device memory; there is no host path)");
    require_comm(fn, args->comm);
    if constexpr (!cattn::kCudaBuild) cattn::fail_no_nccl_path(fn);
    else cattn::pcp_kv_allgather_and_restore_device(fn, args, key, value, idx, key_out, value_out);
  });
}

}  // extern "C"
