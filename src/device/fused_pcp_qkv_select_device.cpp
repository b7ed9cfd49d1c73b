// SPDX-License-Identifier: Apache-2.0
// Device side of fused_pcp_qkv_select: the kernel's byte-level view of each operand.
#include "device/fused_pcp_qkv_select_device.h"

#include <climits>

#include "device/cuda_launch.h"
#include "kernels/fused_pcp_qkv_select.h"

namespace cattn {
namespace {

kernels::SelectOperand operand(const char* fn, const TensorArg& src, const TensorArg& head,
                               const TensorArg& tail) {
  kernels::SelectOperand o;
  const int64_t e = src.elem_bytes();
  o.src = src.data();
  o.src_rows = src.size(0);
  o.src_row_stride = src.stride(0) * e;
  o.src_head_stride = src.stride(1) * e;
  // An empty tensor's sizes are unbounded ([0, 0, INT64_MAX] is valid); it has no bytes.
  o.head_bytes = src.numel() == 0 ? 0 : src.size(2) * e;
  // The kernel counts a row's vectors in 32 bits; a token row over 2 GiB is not a real shape.
  if (src.numel() > 0 && src.size(1) * o.head_bytes > INT32_MAX)
    fail_arg(CATTN_NOT_SUPPORTED, fn, src.name(), "has token rows too large for the kernel",
             std::to_string(src.size(1) * o.head_bytes) + " bytes", "< 2^31 bytes");
  o.dst_head = head.data();
  o.dst_head_rows = head.size(0);
  o.dst_tail = tail.data();
  o.dst_tail_rows = tail.size(0);
  return o;
}

}  // namespace

void fused_pcp_qkv_select_device(const char* fn, const TensorArg& q, const TensorArg& k,
                                 const TensorArg& v, const TensorArg& qsl,
                                 const TensorArg* const (&outs)[6], int64_t world_size,
                                 int64_t rank, void* stream) {
  kernels::FusedSelectParams p;
  p.q = operand(fn, q, *outs[0], *outs[3]);
  p.k = operand(fn, k, *outs[1], *outs[4]);
  p.v = operand(fn, v, *outs[2], *outs[5]);
  p.query_start_loc = index_view(qsl);
  p.num_reqs = qsl.numel() - 1;
  p.world = world_size;
  p.rank = rank;
  if (q.size(1) > INT32_MAX)
    fail_arg(CATTN_NOT_SUPPORTED, fn, "args->q", "has too many heads", std::to_string(q.size(1)),
             "< 2^31");
  p.heads = static_cast<int32_t>(q.size(1));
  DeviceScope dev(fn, q);
  check_launch(fn, kernels::launch_fused_pcp_qkv_select(p, dev.shape(), stream), stream);
}

}  // namespace cattn
