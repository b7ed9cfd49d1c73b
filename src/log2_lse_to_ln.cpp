// SPDX-License-Identifier: Apache-2.0
// log2_lse_to_ln (vLLM's base-2 to natural log-sum-exp conversion). Entry point: argument
// checks and dispatch; the element product is in kernels/log2_lse_to_ln.h.
#include <string>

#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/log2_lse_to_ln_device.h"
#include "host/log2_lse_to_ln_host.h"

namespace {

cattn::kernels::LseType lse_type(const cattn::TensorArg& a) {
  const DLDataType d = a.raw()->dtype;
  if (d.lanes == 1) {
    if (d.code == kDLFloat && d.bits == 16) return cattn::kernels::LseType::F16;
    if (d.code == kDLBfloat && d.bits == 16) return cattn::kernels::LseType::BF16;
    if (d.code == kDLFloat && d.bits == 32) return cattn::kernels::LseType::F32;
    if (d.code == kDLFloat && d.bits == 64) return cattn::kernels::LseType::F64;
  }
  cattn::fail_arg(CATTN_INVALID_ARGUMENT, a.fn(), a.name(), "has the wrong dtype",
                  "code " + std::to_string(d.code) + " bits " + std::to_string(d.bits) +
                      " lanes " + std::to_string(d.lanes),
                  "float16, bfloat16, float32 or float64");
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_log2_lse_to_ln(const cattn_log2_lse_to_ln_args_t* args) {
  constexpr const char* fn = "cattn_log2_lse_to_ln";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg lse(fn, "args->lse", args->lse, cattn::Use::In);
    const cattn::TensorArg out(fn, "args->out", args->out, cattn::Use::Out);
    const cattn::kernels::LseType type = lse_type(lse);
    out.expect_same_dtype(lse).expect_ndim(lse.ndim());
    for (int d = 0; d < lse.ndim(); ++d) out.expect_size(d, lse.size(d));
    out.expect_writable();
    const int64_t rounding = args->half_rounding;
    if (rounding != CATTN_LSE_ROUNDING_TORCH && rounding != CATTN_LSE_ROUNDING_TORCH1_CPU)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->half_rounding", "is not a known value",
                      std::to_string(rounding),
                      "CATTN_LSE_ROUNDING_TORCH (0) or CATTN_LSE_ROUNDING_TORCH1_CPU (1)");
    const cattn::Where where = cattn::require_same_device(fn, {&lse, &out});
    // Element i is read just before it is written, so the very same view is safe; any other
    // overlap would overwrite elements not yet read.
    cattn::allow_in_place(out, lse);
    cattn::seal_arguments();
    const bool is_half =
        type == cattn::kernels::LseType::F16 || type == cattn::kernels::LseType::BF16;
    const float half_mul =
        is_half ? cattn::kernels::half_multiplier(type, rounding == CATTN_LSE_ROUNDING_TORCH1_CPU)
                : 0.f;
    if (where == cattn::Where::Cuda) {
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::log2_lse_to_ln_device(fn, lse, type, half_mul, out, args->stream);
      return;
    }
    cattn::log2_lse_to_ln_host(lse, type, half_mul, out);
  });
}

}  // extern "C"
