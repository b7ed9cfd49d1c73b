// SPDX-License-Identifier: Apache-2.0
// Device side of split_decodes_and_prefills and split_decodes_prefills_and_extends.
#include "device/cuda_launch.h"
#include "device/split_decodes_and_prefills_device.h"
#include "kernels/split_decodes_and_prefills.h"

namespace cattn {
namespace {

void launch(const char* fn, const SplitCapturableArgs& a, bool extends, void* stream) {
  DeviceScope dev(fn, a.query_start_loc);
  kernels::SplitParams p;
  p.query_start_loc = index_view(a.query_start_loc);
  if (extends) {
    p.upper_bound = index_view(*a.second);
  } else if (a.second->present()) {
    p.is_prefilling = reinterpret_cast<const uint8_t*>(a.second->data());
    p.flag_step = a.second->stride(0);
  }
  if (a.num_actual_tokens.present()) p.num_tokens = index_view(a.num_actual_tokens);
  if (a.max_query_len.present()) p.max_query_len = index_view(a.max_query_len);
  p.threshold = a.threshold;
  p.require_uniform = a.require_uniform;
  p.treat_short_extends_as_decodes = a.treat_short_extends_as_decodes;
  p.extends = extends;
  p.result = index_view(a.result);
  check_launch(fn, kernels::launch_split_decodes_and_prefills(p, stream), stream);
}

}  // namespace

void split_decodes_and_prefills_capturable(const char* fn, const SplitCapturableArgs& a,
                                           void* stream) {
  launch(fn, a, false, stream);
}

void split_decodes_prefills_and_extends_capturable(const char* fn, const SplitCapturableArgs& a,
                                                   void* stream) {
  launch(fn, a, true, stream);
}

}  // namespace cattn
