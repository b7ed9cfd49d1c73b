// SPDX-License-Identifier: Apache-2.0
// Benchmark of the PCP all-gather + restore (cattn_pcp_kv_allgather_and_restore) on W GPUs of
// one host, one thread per GPU, against its ceiling measured in the same run on the same NCCL
// communicator: two bare ncclAllGather calls moving the same bytes (what the seed issues before
// its two index_selects), and the same two inside one NCCL group.
//
// Each timing is CUDA events around one call on every rank, the ranks released together by a
// host barrier; the table shows rank 0's median in microseconds. key/value are [T + 5, H, D]
// (5 rows of CUDA-graph slack), T = num_actual_tokens per rank, the restore index a random
// permutation of the W * T gathered rows, or, for the "PCP index" rows, the one vLLM's prefill
// context parallelism builds: R equal requests, each cut into 2W chunks, rank w holding chunks
// w and 2W - 1 - w of every request (head-tail balancing), restored to token order. Before
// timing, a few restored rows are compared with the bare all-gather's rows.
//
//   bench_allgather [--ranks W] [--reps N] [--filter SUBSTRING]
// Needs >= W GPUs (default 2) and NCCL (libnccl.so.2, or the file CATTN_NCCL_LIBRARY names);
// without them it prints a note and exits 0.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "bench_tensor.h"
#include "cattn.hpp"
#include "common/error.h"
#include "device/nccl_loader.h"

// The bare NCCL calls come from the library's own loader (src/device/nccl_loader.cpp, compiled
// into this program): it opens the library libcattn opens (the same soname, or the file
// CATTN_NCCL_LIBRARY names), so both sides run on one NCCL instance, with the same version
// check. The loader reports a failure through cattn::fail, which libcattn defines in
// src/common/error.cpp (not linked here: its C entry points are libcattn's); this definition
// throws the same Failure.
namespace cattn {
[[noreturn]] void fail(cattn_status_t code, const char* fn, const std::string& what) {
  throw Failure{code, std::string(fn) + ": " + what};
}
}  // namespace cattn

namespace {

using bench::dl_tensor;

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(m_);
    const uint64_t gen = gen_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return gen_ != gen; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, arrived_ = 0;
  uint64_t gen_ = 0;
};

struct Shape {
  const char* name;
  int64_t T, H, D;
  int64_t pcp_requests = 0;  // 0: a random permutation; R: the PCP index of R requests
};

// vLLM's PCP restore order for R equal requests of 2W chunks of c = T / (2R) tokens each: on
// rank w, request q's head chunk (chunk w) sits at 2cq and its tail chunk (chunk 2W-1-w) at
// 2cq + c; the output lists every request's chunks 0..2W-1 in order.
std::vector<int64_t> pcp_restore_index(int64_t world, int64_t T, int64_t R) {
  const int64_t c = T / (2 * R);
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(world * T));
  for (int64_t q = 0; q < R; ++q)
    for (int64_t j = 0; j < 2 * world; ++j) {
      const int64_t w = j < world ? j : 2 * world - 1 - j;
      const int64_t at = w * T + 2 * c * q + (j < world ? 0 : c);
      for (int64_t t = 0; t < c; ++t) idx.push_back(at + t);
    }
  return idx;
}

struct Timing {
  double cattn_us = 0, bare_us = 0, grouped_us = 0;
};

int g_reps = 30;
const char* g_filter = nullptr;

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t n, int byte) {
    BENCH_CUDA_CHECK(cudaMalloc(&p, n ? n : 1));
    // Not zeros, so nothing can take a zero-page shortcut.
    BENCH_CUDA_CHECK(cudaMemset(p, byte, n));
  }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

double median(std::vector<float> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Times `op` on every rank: warm-up, then g_reps runs, each released by the barrier and timed
// alone with events on the rank's stream. Returns this rank's median in microseconds.
double time_op(cudaStream_t s, Barrier& bar, const std::function<void()>& op) {
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) {
    bar.wait();
    op();
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  std::vector<float> t;
  for (int i = 0; i < g_reps; ++i) {
    bar.wait();
    BENCH_CUDA_CHECK(cudaEventRecord(a, s));
    op();
    BENCH_CUDA_CHECK(cudaEventRecord(b, s));
    BENCH_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

Timing run_shape(const Shape& sh, int rank, int world, ncclComm_t raw, cattn_comm_t* comm,
                 const cattn::NcclApi& nccl, cudaStream_t s, Barrier& bar) {
  const int64_t slack = 5, elem = 2;  // bf16
  const int64_t rows = sh.T + slack, M = world * sh.T;
  const size_t row_bytes = static_cast<size_t>(sh.H * sh.D * elem);
  const size_t send = sh.T * row_bytes, gathered = M * row_bytes;
  DevBuf key(rows * row_bytes, 0x11 + rank), value(rows * row_bytes, 0x22 + rank);
  DevBuf key_out(gathered, 0x5a), value_out(gathered, 0x5a);
  DevBuf bare_k(gathered, 0x5a), bare_v(gathered, 0x5a);
  // Distinct rows, so that the check below can tell them apart: row i starts with i.
  {
    std::vector<int64_t> head(rows);
    std::iota(head.begin(), head.end(), int64_t{rank} << 32);
    for (void* p : {key.p, value.p})
      BENCH_CUDA_CHECK(cudaMemcpy2D(p, row_bytes, head.data(), sizeof(int64_t), sizeof(int64_t),
                                    rows, cudaMemcpyHostToDevice));
  }
  std::vector<int64_t> perm(M);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(sh.T));  // the same on every rank
  if (sh.pcp_requests > 0) perm = pcp_restore_index(world, sh.T, sh.pcp_requests);
  DevBuf idx(M * sizeof(int64_t), 0);
  BENCH_CUDA_CHECK(cudaMemcpy(idx.p, perm.data(), M * sizeof(int64_t), cudaMemcpyHostToDevice));

  const DLDataType bf16{kDLBfloat, 16, 1};
  const DLDevice gpu = cattn::cuda(rank);
  const std::vector<int64_t> kshape{rows, sh.H, sh.D}, oshape{M, sh.H, sh.D};
  dl_tensor tk(bench::raw_view(key.p, kshape, bf16, gpu));
  dl_tensor tv(bench::raw_view(value.p, kshape, bf16, gpu));
  dl_tensor tko(bench::raw_view(key_out.p, oshape, bf16, gpu));
  dl_tensor tvo(bench::raw_view(value_out.p, oshape, bf16, gpu));
  dl_tensor ti(cattn::tensor_view<const int64_t>(static_cast<const int64_t*>(idx.p), {M}, gpu));
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = comm;
  a.key = tk.get();
  a.value = tv.get();
  a.num_actual_tokens = sh.T;
  a.restore_idx = ti.get();
  a.key_out = tko.get();
  a.value_out = tvo.get();
  a.stream = s;
  size_t ws_bytes = 0;
  BENCH_CATTN_CHECK(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &ws_bytes));
  DevBuf ws(ws_bytes, 0);
  a.workspace = ws.p;
  a.workspace_size = ws_bytes;

  auto cattn_call = [&] { BENCH_CATTN_CHECK(cattn_pcp_kv_allgather_and_restore(&a)); };
  auto bare = [&] {
    BENCH_NCCL_CHECK(nccl, nccl.AllGather(key.p, bare_k.p, send, ncclUint8, raw, s));
    BENCH_NCCL_CHECK(nccl, nccl.AllGather(value.p, bare_v.p, send, ncclUint8, raw, s));
  };
  auto grouped = [&] {
    BENCH_NCCL_CHECK(nccl, nccl.GroupStart());
    bare();
    BENCH_NCCL_CHECK(nccl, nccl.GroupEnd());
  };

  // Correctness spot check: restored row i must be gathered row perm[i].
  bar.wait();
  cattn_call();
  bare();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int64_t i : {int64_t{0}, M / 2, M - 1}) {
    int64_t got = -1, want = -2;
    BENCH_CUDA_CHECK(cudaMemcpy(&got, static_cast<char*>(key_out.p) + i * row_bytes, 8,
                                cudaMemcpyDeviceToHost));
    BENCH_CUDA_CHECK(cudaMemcpy(&want, static_cast<char*>(bare_k.p) + perm[i] * row_bytes, 8,
                                cudaMemcpyDeviceToHost));
    if (got != want) {
      std::fprintf(stderr, "%s: rank %d row %lld: restored %llx, gathered %llx\n", sh.name, rank,
                   (long long)i, (unsigned long long)got, (unsigned long long)want);
      std::exit(5);
    }
  }

  Timing t;
  t.cattn_us = time_op(s, bar, cattn_call);
  t.bare_us = time_op(s, bar, bare);
  t.grouped_us = time_op(s, bar, grouped);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int world = 2;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) g_reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) world = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) g_filter = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--ranks W] [--reps N] [--filter SUBSTRING]\n", argv[0]);
      return 1;
    }
  }
  int32_t gpus = 0;
  BENCH_CATTN_CHECK(cattn_cuda_device_count(&gpus));
  if (world < 2 || gpus < world) {
    std::printf("bench_allgather: needs %d GPUs (--ranks >= 2), found %d; nothing to measure\n",
                world, gpus);
    return 0;
  }
  const cattn::NcclApi* loaded = nullptr;
  try {
    loaded = &cattn::nccl("bench_allgather");
  } catch (const cattn::Failure& f) {
    std::printf("%s; nothing to measure\n", f.message.c_str());
    return 0;
  }
  const cattn::NcclApi& nccl = *loaded;

  const Shape shapes[] = {
      {"T16 H8 D128", 16, 8, 128},       {"T256 H8 D128", 256, 8, 128},
      {"T4096 H8 D128", 4096, 8, 128},   {"T65536 H8 D128", 65536, 8, 128},
      {"T8192 H16 D192", 8192, 16, 192},
      {"T65536 H8 D128, PCP index of 8 requests", 65536, 8, 128, 8},
      {"T8192 H16 D192, PCP index of 8 requests", 8192, 16, 192, 8},
  };
  std::vector<const Shape*> todo;
  for (const Shape& sh : shapes)
    if (g_filter == nullptr || std::strstr(sh.name, g_filter) != nullptr) todo.push_back(&sh);

  cattn_comm_unique_id_t id;
  BENCH_CATTN_CHECK(cattn_comm_get_unique_id(&id));
  ncclUniqueId uid;
  std::memcpy(&uid, id.bytes, sizeof uid);
  std::vector<Timing> rank0(todo.size());
  Barrier bar(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      BENCH_CUDA_CHECK(cudaSetDevice(r));
      // One NCCL communicator per rank, made by the "engine" and lent to libcattn, so both
      // columns run on the very same communicator.
      ncclComm_t raw = nullptr;
      BENCH_NCCL_CHECK(nccl, nccl.CommInitRank(&raw, world, uid, r));
      cattn_comm_t* comm = nullptr;
      BENCH_CATTN_CHECK(cattn_comm_create_borrowed(raw, &comm));
      cudaStream_t s;
      BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (size_t i = 0; i < todo.size(); ++i) {
        const Timing t = run_shape(*todo[i], r, world, raw, comm, nccl, s, bar);
        if (r == 0) rank0[i] = t;
      }
      BENCH_CUDA_CHECK(cudaStreamDestroy(s));
      cattn_comm_destroy(comm);
      BENCH_NCCL_CHECK(nccl, nccl.CommDestroy(raw));
    });
  for (auto& t : threads) t.join();

  std::printf("pcp_kv_allgather_and_restore, W = %d GPUs, bf16, median of %d (rank 0), us\n\n",
              world, g_reps);
  std::printf("| case | MiB per rank (K+V) | libcattn | bare 2x all-gather | bare grouped |"
              " libcattn / bare 2x |\n|---|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < todo.size(); ++i) {
    const Shape& sh = *todo[i];
    const double mib = 2.0 * sh.T * sh.H * sh.D * 2 / (1 << 20);
    const Timing& t = rank0[i];
    std::printf("| W%d %s bf16 | %.4g | %.1f | %.1f | %.1f | %.2f |\n", world, sh.name, mib,
                t.cattn_us, t.bare_us, t.grouped_us, t.cattn_us / t.bare_us);
  }
  return 0;
}
