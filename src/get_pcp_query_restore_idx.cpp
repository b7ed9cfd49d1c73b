// SPDX-License-Identifier: Apache-2.0
// PCP query restore index (vLLM get_pcp_query_restore_idx). Entry points: argument
// checks and dispatch; the algorithm is in host/get_pcp_query_restore_idx_host.cpp.
#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/get_pcp_query_restore_idx_device.h"
#include "host/get_pcp_query_restore_idx_host.h"

extern "C" {

CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx_size(const DLTensor* cu_num_tokens,
                                                              int64_t* size) {
  constexpr const char* fn = "cattn_get_pcp_query_restore_idx_size";
  return cattn::guarded(fn, [&] {
    const cattn::TensorArg cu(fn, "cu_num_tokens", cu_num_tokens, cattn::Use::In);
    cu.expect_ndim(1).expect_index_dtype().expect_host().expect_scan_bounded();
    cattn::require_out_ptr(fn, "size", size);
    const int64_t n = cattn::get_pcp_query_restore_idx_size_host(fn, cu);
    cattn::seal_arguments();
    *size = n;
  });
}

CATTN_API cattn_status_t cattn_get_pcp_query_restore_idx(
    const cattn_pcp_query_restore_idx_args_t* args) {
  constexpr const char* fn = "cattn_get_pcp_query_restore_idx";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg cu(fn, "args->cu_num_tokens", args->cu_num_tokens, cattn::Use::In);
    const cattn::TensorArg out(fn, "args->restore_idx", args->restore_idx, cattn::Use::Out);
    cu.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    out.expect_ndim(1).expect_index_dtype().expect_writable();
    if (cattn::require_same_device(fn, {&cu, &out}) == cattn::Where::Cuda) {
      // The kernel reads cu_num_tokens while it writes the index.
      cattn::seal_arguments();
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::get_pcp_query_restore_idx_device(fn, cu, out, args->stream);
      return;
    }
    const int64_t size = cattn::get_pcp_query_restore_idx_size_host(fn, cu);
    out.expect_capacity(size);
    if (size > 0) cattn::require_fits(fn, out, size - 1);
    cattn::seal_arguments();
    cattn::get_pcp_query_restore_idx_host(cu, size, out);
  });
}

}  // extern "C"
