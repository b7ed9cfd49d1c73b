// SPDX-License-Identifier: Apache-2.0
// Device side of pcp_kv_allgather_and_restore: the workspace plan, the pack kernel, the NCCL
// group and the restore kernel(s), all enqueued on the caller's stream.
//
// Workspace: [K_all: W * n key rows][V_all: W * n value rows], each piece 256-byte aligned.
// A contiguous key[:n] is sent from where it is; a strided one is packed straight into this
// rank's slot of K_all, which NCCL then gathers in place (sendbuff = recvbuff + rank * count),
// so packing needs no extra space and the size query does not depend on layouts.
#include "device/pcp_kv_allgather_and_restore_device.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "common/comm_handle.h"
#include "common/cuda_runtime.h"
#include "device/cuda_launch.h"
#include "device/nccl_loader.h"
#include "kernels/pcp_kv_allgather_and_restore.h"

namespace cattn {
namespace {

constexpr int64_t kWorkspaceAlign = 256;

int64_t align_up(const char* fn, int64_t bytes) {
  return checked_add(fn, "workspace size", bytes, kWorkspaceAlign - 1) &
         ~(kWorkspaceAlign - 1);
}

// Bytes of one token row: every dimension but the first.
int64_t row_bytes(const char* fn, const TensorArg& t) {
  int64_t b = t.elem_bytes();
  for (int d = 1; d < t.ndim(); ++d) b = checked_mul(fn, t.name(), b, t.size(d));
  return b;
}

// From this many bytes of key + value rows per rank, the rows move as point-to-point sends and
// receives (in the same single NCCL group) and this rank's own rows are restored on the
// communicator's side stream while they travel; smaller transfers keep the all-gather and one
// launch, where the fork and join would be a large share of the time (docs/performance-history.md
// has the measurements behind the switch).
constexpr int64_t kOverlapMinBytes = int64_t{8} << 20;

struct WorkspacePlan {
  int64_t key_bytes = 0;    // W * n key rows, before alignment
  int64_t value_bytes = 0;
  int64_t value_offset = 0; // where V_all starts
  int64_t total = 0;
};

WorkspacePlan plan_workspace(const char* fn, const TensorArg& key, const TensorArg& value,
                             int64_t n, int64_t world) {
  const int64_t rows = checked_mul(fn, "W * num_actual_tokens", world, n);
  WorkspacePlan w;
  w.key_bytes = checked_mul(fn, "gathered key bytes", rows, row_bytes(fn, key));
  w.value_bytes = checked_mul(fn, "gathered value bytes", rows, row_bytes(fn, value));
  w.value_offset = align_up(fn, w.key_bytes);
  w.total = checked_add(fn, "workspace size", w.value_offset, align_up(fn, w.value_bytes));
  return w;
}

// Describes src[:n] as runs of contiguous bytes for the pack kernel. Returns false when the
// rows are already one contiguous block (or empty), i.e. they can be sent as they are.
bool plan_pack(const TensorArg& t, int64_t n, char* dst,
               kernels::PackOperand& o) {
  const int64_t elem = t.elem_bytes();
  if (n == 0 || t.numel() == 0) return false;
  struct Dim {
    int64_t size, stride;  // stride in bytes
  };
  std::vector<Dim> dims;  // outermost first; size-1 dimensions dropped, mergeable ones merged
  for (int d = 0; d < t.ndim(); ++d) {
    const Dim cur{d == 0 ? n : t.size(d), t.stride(d) * elem};
    if (cur.size == 1) continue;
    if (!dims.empty() && dims.back().stride == cur.stride * cur.size) {
      dims.back() = {dims.back().size * cur.size, cur.stride};
      continue;
    }
    dims.push_back(cur);
  }
  int64_t run = elem;
  if (!dims.empty() && dims.back().stride == elem) {
    run = dims.back().size * elem;
    dims.pop_back();
  }
  if (dims.empty()) return false;
  o.src = t.data();
  o.dst = dst;
  o.run_bytes = run;
  o.ndim = static_cast<int32_t>(dims.size());
  o.runs = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    o.sizes[i] = dims[i].size;
    o.strides[i] = dims[i].stride;
    o.runs *= dims[i].size;
  }
  return true;
}

}  // namespace

void pcp_kv_allgather_and_restore_device(const char* fn,
                                         const cattn_pcp_kv_allgather_and_restore_args_t* a,
                                         const TensorArg& key, const TensorArg& value,
                                         const TensorArg& idx, const TensorArg& key_out,
                                         const TensorArg& value_out) {
  const cattn_comm_t* comm = a->comm;
  if (key.device_id() != comm->device)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->key", "is not on the communicator's device",
                    "cuda:" + std::to_string(key.device_id()),
                    "cuda:" + std::to_string(comm->device));
  const int64_t n = a->num_actual_tokens;
  const WorkspacePlan plan = plan_workspace(fn, key, value, n, comm->size);
  if (a->workspace_size < static_cast<uint64_t>(plan.total))
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn, "args->workspace_size", "is too small",
                    std::to_string(a->workspace_size),
                    ">= " + std::to_string(plan.total) +
                        " bytes (cattn_pcp_kv_allgather_and_restore_workspace_size)");
  char* ws = static_cast<char*>(a->workspace);
  int64_t ws_shape[1] = {plan.total};
  DLTensor ws_dl{};
  if (plan.total > 0) {
    if (ws == nullptr)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->workspace", "is NULL", "NULL",
                      std::to_string(plan.total) + " bytes of device memory");
    if (reinterpret_cast<uintptr_t>(ws) % kWorkspaceAlign != 0)
      fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->workspace", "is not 256-byte aligned",
                      "address % 256 = " +
                          std::to_string(reinterpret_cast<uintptr_t>(ws) % kWorkspaceAlign),
                      "0 (as cudaMalloc returns)");
    ws_dl.data = ws;
    ws_dl.device = {kDLCUDA, key.device_id()};
    ws_dl.ndim = 1;
    ws_dl.dtype = {kDLUInt, 8, 1};
    ws_dl.shape = ws_shape;
  }
  const TensorArg work(fn, "args->workspace", plan.total > 0 ? &ws_dl : nullptr, Use::Out, true);
  // The pack kernel and NCCL write the workspace while key and value are read, and the restore
  // kernel reads it and restore_idx while it writes the outputs.
  seal_arguments();

  kernels::RestoreParams rp;
  rp.restore_idx = index_view(idx);  // may refuse a misaligned index: before any work
  const NcclApi& api = nccl(fn);
  const auto nc = static_cast<ncclComm_t>(comm->nccl);

  char* const k_all = ws;
  char* const v_all = ws + plan.value_offset;
  const int64_t k_count = n * row_bytes(fn, key);  // this rank's bytes; W times fit, so these do
  const int64_t v_count = n * row_bytes(fn, value);
  kernels::PackParams pp;
  const char* k_send = key.data();
  const char* v_send = value.data();
  if (plan_pack(key, n, k_all + comm->rank * k_count, pp.op[pp.count])) {
    k_send = pp.op[pp.count].dst;
    ++pp.count;
  }
  if (plan_pack(value, n, v_all + comm->rank * v_count, pp.op[pp.count])) {
    v_send = pp.op[pp.count].dst;
    ++pp.count;
  }

  DeviceScope dev(fn, key);
  const cudaStream_t stream = a->stream;  // cattn_stream_t is cudaStream_t
  if (pp.count > 0)
    check_launch(fn, kernels::launch_pcp_kv_pack(pp, dev.shape(), stream), stream);
  // Every rank has the same n and row sizes, so every rank leaves out the same empty gathers.
  const int64_t k_row = row_bytes(fn, key), v_row = row_bytes(fn, value);
  // From kOverlapMinBytes the transfer is point-to-point: this rank's rows go straight to every
  // peer's slot, and nothing is written to its own slot (ncclAllGather would copy them there,
  // a local copy that nobody reads, since they are restored from what was sent).
  const bool overlap = k_count + v_count >= kOverlapMinBytes;
  if (k_count > 0 || v_count > 0) {
    // Forked before the gather: the side stream needs the packed rows, not the transfer.
    if (overlap)
      check_cuda(fn, cudaEventRecord(static_cast<cudaEvent_t>(comm->fork_event), stream));
    check_nccl(api, fn, "ncclGroupStart", api.GroupStart(), nc);
    ncclResult_t first = ncclSuccess;
    const char* failed = nullptr;
    auto note = [&](ncclResult_t r, const char* what) {
      if (r != ncclSuccess && first == ncclSuccess) {
        first = r;
        failed = what;
      }
    };
    const struct {
      const char* send;
      char* all;
      int64_t count;
      const char* gather_name;
      const char* send_name;
      const char* recv_name;
    } ops[2] = {{k_send, k_all, k_count, "ncclAllGather (key)", "ncclSend (key)", "ncclRecv (key)"},
                {v_send, v_all, v_count, "ncclAllGather (value)", "ncclSend (value)",
                 "ncclRecv (value)"}};
    for (const auto& op : ops) {
      if (op.count == 0) continue;
      const auto bytes = static_cast<size_t>(op.count);
      if (!overlap) {
        note(api.AllGather(op.send, op.all, bytes, ncclUint8, nc, stream), op.gather_name);
        continue;
      }
      for (int32_t peer = 0; peer < comm->size; ++peer) {
        if (peer == comm->rank) continue;
        note(api.Send(op.send, bytes, ncclUint8, peer, nc, stream), op.send_name);
        note(api.Recv(op.all + peer * op.count, bytes, ncclUint8, peer, nc, stream), op.recv_name);
      }
    }
    // The group is closed whatever happened inside it; an open group would swallow the
    // caller's later NCCL calls on this thread.
    const ncclResult_t re = api.GroupEnd();
    if (failed != nullptr) check_nccl(api, fn, failed, first, nc);
    if (re == ncclInProgress)
      wait_nccl_ready(api, fn, "ncclGroupEnd", nc);  // nonblocking communicator
    else
      check_nccl(api, fn, "ncclGroupEnd", re, nc);
  }

  rp.key = {k_all, key_out.data(), k_row};
  rp.value = {v_all, value_out.data(), v_row};
  rp.total_rows = comm->size * n;
  rp.per_rank = n;
  rp.rank = comm->rank;
  if (!overlap) {
    check_launch(fn, kernels::launch_pcp_kv_restore(rp, dev.shape(), stream),
                        stream);
    return;
  }
  // This rank's rows on the side stream, enqueued after the NCCL group so that NCCL's kernel is
  // placed first, on half a CTA per SM so that it keeps its SMs; the other rows on `stream`
  // once the gather is done; then `stream` joins the side stream. Events order everything, so
  // the sequence stays asynchronous and capturable.
  const auto side = static_cast<cudaStream_t>(comm->side_stream);
  kernels::RestoreParams own = rp;
  own.own = kernels::kRestoreOwnOnly;
  own.own_key = k_send;
  own.own_value = v_send;
  own.max_blocks = dev.shape().sm_count / 2 > 0 ? dev.shape().sm_count / 2 : 1;
  check_cuda(fn, cudaStreamWaitEvent(side, static_cast<cudaEvent_t>(comm->fork_event), 0));
  check_launch(fn, kernels::launch_pcp_kv_restore(own, dev.shape(), side), side);
  kernels::RestoreParams peers = rp;
  peers.own = kernels::kRestoreOwnSkip;
  check_launch(fn, kernels::launch_pcp_kv_restore(peers, dev.shape(), stream),
                      stream);
  const auto join = static_cast<cudaEvent_t>(comm->join_event);
  check_cuda(fn, cudaEventRecord(join, side));
  check_cuda(fn, cudaStreamWaitEvent(stream, join, 0));
}

size_t pcp_kv_allgather_and_restore_workspace_device(const char* fn, const TensorArg& key,
                                                     const TensorArg& value, int64_t n,
                                                     int64_t world_size) {
  return static_cast<size_t>(plan_workspace(fn, key, value, n, world_size).total);
}

}  // namespace cattn
