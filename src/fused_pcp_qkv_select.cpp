// SPDX-License-Identifier: Apache-2.0
// Fused PCP Q/K/V select (vLLM fused_pcp_qkv_select). Entry point: argument checks
// and dispatch; the host algorithm is in host/fused_pcp_qkv_select_host.cpp.
#include "common/error.h"
#include "common/struct_arg.h"
#include "common/tensor_arg.h"
#include "device/fused_pcp_qkv_select_device.h"
#include "host/fused_pcp_qkv_select_host.h"

namespace {

// The kernel addresses elements within a head as base + d, so the last dim must be packed;
// its stride is irrelevant when it holds at most one element.
void expect_unit_last_stride(const char* fn, const cattn::TensorArg& t) {
  if (t.size(2) > 1 && t.stride(2) != 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(), "has a non-unit stride in its last dim",
                    "strides[2] = " + std::to_string(t.stride(2)), "1");
}

// Outputs are allocated by the caller exactly as vLLM's wrapper allocates them.
void expect_output(const cattn::TensorArg& out, const cattn::TensorArg& src, int64_t rows) {
  out.expect_ndim(3)
      .expect_same_dtype(src)
      .expect_size(1, src.size(1))
      .expect_size(2, src.size(2))
      .expect_out_size(0, rows);
  // An empty output has no layout to check (and TensorArg's default strides for one do not
  // read as compact).
  if (out.numel() > 0) out.expect_contiguous();
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_fused_pcp_qkv_select(const cattn_fused_pcp_qkv_select_args_t* args) {
  constexpr const char* fn = "cattn_fused_pcp_qkv_select";
  return cattn::guarded(fn, [&] {
    cattn::require_struct(fn, "args", args);
    const cattn::TensorArg q(fn, "args->q", args->q, cattn::Use::In);
    const cattn::TensorArg k(fn, "args->k", args->k, cattn::Use::In);
    const cattn::TensorArg v(fn, "args->v", args->v, cattn::Use::In);
    const cattn::TensorArg qsl(fn, "args->query_start_loc", args->query_start_loc, cattn::Use::In);
    const cattn::TensorArg q_head(fn, "args->q_head", args->q_head, cattn::Use::Out);
    const cattn::TensorArg k_head(fn, "args->k_head", args->k_head, cattn::Use::Out);
    const cattn::TensorArg v_head(fn, "args->v_head", args->v_head, cattn::Use::Out);
    const cattn::TensorArg q_tail(fn, "args->q_tail", args->q_tail, cattn::Use::Out);
    const cattn::TensorArg k_tail(fn, "args->k_tail", args->k_tail, cattn::Use::Out);
    const cattn::TensorArg v_tail(fn, "args->v_tail", args->v_tail, cattn::Use::Out);

    for (const cattn::TensorArg* t : {&q, &k, &v}) {
      t->expect_ndim(3);
      expect_unit_last_stride(fn, *t);
    }
    k.expect_size(1, q.size(1));
    v.expect_size(1, q.size(1));
    qsl.expect_ndim(1).expect_index_dtype().expect_scan_bounded();
    if (qsl.numel() < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, qsl.name(), "is empty", qsl.shape_string(),
                      "[B + 1] entries, B >= 0");
    const int64_t world = args->pcp_world_size, rank = args->pcp_rank;
    if (world < 1)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->pcp_world_size", "is out of range",
                      std::to_string(world), ">= 1");
    if (rank < 0 || rank >= world)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->pcp_rank", "is out of range",
                      std::to_string(rank), "[0, " + std::to_string(world) + ")");

    const int64_t half_rows = q.size(0) / 2;
    const int64_t head_rows = cattn::checked_mul(fn, "k_head rows", half_rows, rank + 1);
    const int64_t tail_blocks = cattn::checked_mul(fn, "2 * pcp_world_size", 2, world) - rank;
    const int64_t tail_rows = cattn::checked_mul(fn, "k_tail rows", half_rows, tail_blocks);
    expect_output(q_head, q, half_rows);
    expect_output(k_head, k, head_rows);
    expect_output(v_head, v, head_rows);
    expect_output(q_tail, q, half_rows);
    expect_output(k_tail, k, tail_rows);
    expect_output(v_tail, v, tail_rows);

    const cattn::Where where = cattn::require_same_device(
        fn, {&q, &k, &v, &qsl, &q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail});
    // The host data checks read inputs only, so they may precede the overlap checks.
    const int64_t end = where == cattn::Where::Host
                            ? cattn::fused_pcp_qkv_select_check_host(fn, qsl, q, k, v, world)
                            : 0;
    // Both paths read query_start_loc and the inputs while they write the outputs.
    cattn::seal_arguments();
    if (where == cattn::Where::Cuda) {
      const cattn::TensorArg* outs[6] = {&q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail};
      if constexpr (!cattn::kCudaBuild) cattn::fail_no_cuda_path(fn);
      else cattn::fused_pcp_qkv_select_device(fn, q, k, v, qsl, outs, world, rank, args->stream);
      return;
    }
    cattn::fused_pcp_qkv_select_host(q, k, v, qsl, end, world, rank, q_head, k_head, v_head,
                                     q_tail, k_tail, v_tail);
  });
}

}  // extern "C"
