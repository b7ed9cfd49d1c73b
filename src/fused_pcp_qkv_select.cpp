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

// The outputs' row counts (cattn_fused_pcp_qkv_select_size): the one place they are derived.
struct SelectRows {
  int64_t q, kv_head, kv_tail;
};
SelectRows select_rows(const char* fn, const char* world_name, const char* rank_name,
                       int64_t num_q_rows, int64_t world, int64_t rank) {
  if (world < 1)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, world_name, "is out of range",
                    std::to_string(world), ">= 1");
  if (rank < 0 || rank >= world)
    cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, rank_name, "is out of range",
                    std::to_string(rank), "[0, " + std::to_string(world) + ")");
  // Exact: 2 * world may pass int64 where half * (2 * world - rank) does not (half is 0 for
  // fewer than two rows, and a large rank brings the factor back down).
  const int64_t half = num_q_rows / 2;
  const __int128 tail = static_cast<__int128>(half) * (2 * static_cast<__int128>(world) - rank);
  if (tail > INT64_MAX)
    cattn::fail(CATTN_INVALID_ARGUMENT, fn, "k_tail rows overflows int64 (half the q rows x "
                "(2 x pcp_world_size - pcp_rank))");
  return {half, cattn::checked_mul(fn, "k_head rows", half, rank + 1),
          static_cast<int64_t>(tail)};
}

}  // namespace

extern "C" {

CATTN_API cattn_status_t cattn_fused_pcp_qkv_select_size(int64_t num_q_rows,
                                                         int64_t pcp_world_size,
                                                         int64_t pcp_rank, int64_t* q_rows,
                                                         int64_t* kv_head_rows,
                                                         int64_t* kv_tail_rows) {
  constexpr const char* fn = "cattn_fused_pcp_qkv_select_size";
  return cattn::guarded(fn, [&] {
    if (num_q_rows < 0)
      cattn::fail_arg(CATTN_INVALID_ARGUMENT, fn, "num_q_rows", "is negative",
                      std::to_string(num_q_rows), ">= 0");
    cattn::require_out_ptr(fn, "q_rows", q_rows);
    cattn::require_out_ptr(fn, "kv_head_rows", kv_head_rows);
    cattn::require_out_ptr(fn, "kv_tail_rows", kv_tail_rows);
    const SelectRows rows =
        select_rows(fn, "pcp_world_size", "pcp_rank", num_q_rows, pcp_world_size, pcp_rank);
    cattn::seal_arguments();
    *q_rows = rows.q;
    *kv_head_rows = rows.kv_head;
    *kv_tail_rows = rows.kv_tail;
  });
}

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
    const SelectRows rows =
        select_rows(fn, "args->pcp_world_size", "args->pcp_rank", q.size(0), world, rank);
    expect_output(q_head, q, rows.q);
    expect_output(k_head, k, rows.kv_head);
    expect_output(v_head, v, rows.kv_head);
    expect_output(q_tail, q, rows.q);
    expect_output(k_tail, k, rows.kv_tail);
    expect_output(v_tail, v, rows.kv_tail);

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
