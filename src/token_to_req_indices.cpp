// SPDX-License-Identifier: Apache-2.0
// The request of every token (vLLM CommonAttentionMetadata.token_to_req_indices). Entry point:
// argument checks and dispatch; the algorithm is in host/token_to_req_indices_host.cpp. vLLM
// caches the mapping in the metadata object; libcattn keeps nothing between calls.
#include <algorithm>
#include <string>

#include "common/error.h"
#include "common/metadata.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/token_to_req_indices_device.h"
#include "host/token_to_req_indices_host.h"

extern "C" {

CATTN_API cattn_status_t cattn_token_to_req_indices(const cattn_token_to_req_indices_args_t* args) {
  constexpr const char* fn = "cattn_token_to_req_indices";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn_common_attn_metadata_t md =
        cattn::read_metadata(fn, "args->metadata", args->metadata);
    const cattn::TensorArg qsl(fn, "args->metadata->query_start_loc", md.query_start_loc,
                               cattn::Use::In);
    const cattn::TensorArg qsl_cpu(fn, "args->metadata->query_start_loc_cpu",
                                   md.query_start_loc_cpu, cattn::Use::In, true);
    const cattn::TensorArg buffer(fn, "args->buffer", args->buffer, cattn::Use::Out);
    qsl.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    if (qsl.size(0) < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is empty", "0 entries",
                      ">= 1 entry (num_reqs + 1)");
    const int64_t batch = qsl.size(0) - 1;
    if (qsl_cpu.present()) qsl_cpu.expect_ndim(1).expect_index_dtype().expect_host()
        .expect_size(0, batch + 1);
    buffer.expect_ndim(1).expect_index_dtype().expect_writable();
    const int64_t num_tokens = md.num_actual_tokens;
    if (num_tokens < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->metadata->num_actual_tokens",
                      "is negative", std::to_string(num_tokens), ">= 0");
    const cattn::Where where = cattn::require_same_device(fn, {&qsl, &buffer});
    cattn::seal_arguments();

    if (where == cattn::Where::Cuda) {
      // The device data is not read back: the mirror's total (vLLM's M) sizes the check when
      // it is given, T alone otherwise; the kernel never writes past the buffer.
      int64_t need = num_tokens;
      if (qsl_cpu.present()) need = std::max(need, cattn::reader1d(qsl_cpu)[batch]);
      if (buffer.numel() < need)
        cattn::fail_arg(CATTN_INSUFFICIENT_SIZE, fn, buffer.name(), "is too short",
                        std::to_string(buffer.numel()) + " entries",
                        ">= max(query_start_loc_cpu[num_reqs], num_actual_tokens) = " +
                            std::to_string(need));
      if (batch > 0) cattn::require_fits(fn, buffer, batch - 1);
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::token_to_req_indices_device(fn, qsl, nullptr, num_tokens, buffer, args->stream);
      return;
    }
    // The host path reads query_start_loc itself; the mirror, when given, is what vLLM reads
    // for M.
    const int64_t mapped =
        cattn::check_token_to_req_indices_host(fn, qsl, qsl_cpu, num_tokens, buffer);
    cattn::token_to_req_indices_host(qsl, mapped, num_tokens, buffer);
  });
}

}  // extern "C"
