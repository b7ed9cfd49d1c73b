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
// Needs >= W GPUs (default 2) and NCCL (libnccl.so.2); without them it prints a note and exits 0.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
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

#include "cattn.h"

namespace {

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));  \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)
#define CATTN_CK(x)                                                                            \
  do {                                                                                         \
    cattn_status_t s_ = (x);                                                                   \
    if (s_ != CATTN_OK) {                                                                      \
      std::fprintf(stderr, "%s: %s\n", cattn_status_string(s_), cattn_last_error_message());  \
      std::exit(3);                                                                            \
    }                                                                                          \
  } while (0)
#define NCCL_CK(x)                                                                             \
  do {                                                                                         \
    ncclResult_t r_ = (x);                                                                     \
    if (r_ != ncclSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: NCCL error %d\n", __FILE__, __LINE__, #x, (int)r_);      \
      std::exit(4);                                                                            \
    }                                                                                          \
  } while (0)

// The bare NCCL calls, from the library libcattn loads too (same soname: same instance).
struct Nccl {
  decltype(&ncclCommInitRank) CommInitRank = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
};

bool load_nccl(Nccl& n) {
  void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  n.CommInitRank = reinterpret_cast<decltype(n.CommInitRank)>(dlsym(h, "ncclCommInitRank"));
  n.CommDestroy = reinterpret_cast<decltype(n.CommDestroy)>(dlsym(h, "ncclCommDestroy"));
  n.AllGather = reinterpret_cast<decltype(n.AllGather)>(dlsym(h, "ncclAllGather"));
  n.GroupStart = reinterpret_cast<decltype(n.GroupStart)>(dlsym(h, "ncclGroupStart"));
  n.GroupEnd = reinterpret_cast<decltype(n.GroupEnd)>(dlsym(h, "ncclGroupEnd"));
  return n.CommInitRank && n.CommDestroy && n.AllGather && n.GroupStart && n.GroupEnd;
}

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
    CK(cudaMalloc(&p, n ? n : 1));
    CK(cudaMemset(p, byte, n));  // not zeros, so nothing can take a zero-page shortcut
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
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) {
    bar.wait();
    op();
    CK(cudaStreamSynchronize(s));
  }
  std::vector<float> t;
  for (int i = 0; i < g_reps; ++i) {
    bar.wait();
    CK(cudaEventRecord(a, s));
    op();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1000.f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

Timing run_shape(const Shape& sh, int rank, int world, ncclComm_t raw, cattn_comm_t* comm,
                 const Nccl& nccl, cudaStream_t s, Barrier& bar) {
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
    CK(cudaMemcpy2D(key.p, row_bytes, head.data(), sizeof(int64_t), sizeof(int64_t), rows,
                    cudaMemcpyHostToDevice));
    CK(cudaMemcpy2D(value.p, row_bytes, head.data(), sizeof(int64_t), sizeof(int64_t), rows,
                    cudaMemcpyHostToDevice));
  }
  std::vector<int64_t> perm(M);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(sh.T));  // the same on every rank
  if (sh.pcp_requests > 0) perm = pcp_restore_index(world, sh.T, sh.pcp_requests);
  DevBuf idx(M * sizeof(int64_t), 0);
  CK(cudaMemcpy(idx.p, perm.data(), M * sizeof(int64_t), cudaMemcpyHostToDevice));

  const DLDataType bf16{kDLBfloat, 16, 1};
  int64_t kshape[3] = {rows, sh.H, sh.D}, oshape[3] = {M, sh.H, sh.D}, ishape[1] = {M};
  DLTensor tk{key.p, {kDLCUDA, rank}, 3, bf16, kshape, nullptr, 0};
  DLTensor tv{value.p, {kDLCUDA, rank}, 3, bf16, kshape, nullptr, 0};
  DLTensor tko{key_out.p, {kDLCUDA, rank}, 3, bf16, oshape, nullptr, 0};
  DLTensor tvo{value_out.p, {kDLCUDA, rank}, 3, bf16, oshape, nullptr, 0};
  DLTensor ti{idx.p, {kDLCUDA, rank}, 1, {kDLInt, 64, 1}, ishape, nullptr, 0};
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = comm;
  a.key = &tk;
  a.value = &tv;
  a.num_actual_tokens = sh.T;
  a.restore_idx = &ti;
  a.key_out = &tko;
  a.value_out = &tvo;
  a.stream = s;
  size_t ws_bytes = 0;
  CATTN_CK(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &ws_bytes));
  DevBuf ws(ws_bytes, 0);
  a.workspace = ws.p;
  a.workspace_size = ws_bytes;

  auto cattn_call = [&] { CATTN_CK(cattn_pcp_kv_allgather_and_restore(&a)); };
  auto bare = [&] {
    NCCL_CK(nccl.AllGather(key.p, bare_k.p, send, ncclUint8, raw, s));
    NCCL_CK(nccl.AllGather(value.p, bare_v.p, send, ncclUint8, raw, s));
  };
  auto grouped = [&] {
    NCCL_CK(nccl.GroupStart());
    bare();
    NCCL_CK(nccl.GroupEnd());
  };

  // Correctness spot check: restored row i must be gathered row perm[i].
  bar.wait();
  cattn_call();
  bare();
  CK(cudaStreamSynchronize(s));
  for (int64_t i : {int64_t{0}, M / 2, M - 1}) {
    int64_t got = -1, want = -2;
    CK(cudaMemcpy(&got, static_cast<char*>(key_out.p) + i * row_bytes, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&want, static_cast<char*>(bare_k.p) + perm[i] * row_bytes, 8,
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
  CATTN_CK(cattn_cuda_device_count(&gpus));
  if (world < 2 || gpus < world) {
    std::printf("bench_allgather: needs %d GPUs (--ranks >= 2), found %d; nothing to measure\n",
                world, gpus);
    return 0;
  }
  Nccl nccl;
  if (!load_nccl(nccl)) {
    std::printf("bench_allgather: NCCL (libnccl.so.2) cannot be loaded; nothing to measure\n");
    return 0;
  }

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
  CATTN_CK(cattn_comm_get_unique_id(&id));
  ncclUniqueId uid;
  std::memcpy(&uid, id.bytes, sizeof uid);
  std::vector<Timing> rank0(todo.size());
  Barrier bar(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      // One NCCL communicator per rank, made by the "engine" and lent to libcattn, so both
      // columns run on the very same communicator.
      ncclComm_t raw = nullptr;
      NCCL_CK(nccl.CommInitRank(&raw, world, uid, r));
      cattn_comm_t* comm = nullptr;
      CATTN_CK(cattn_comm_create_borrowed(raw, &comm));
      cudaStream_t s;
      CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (size_t i = 0; i < todo.size(); ++i) {
        const Timing t = run_shape(*todo[i], r, world, raw, comm, nccl, s, bar);
        if (r == 0) rank0[i] = t;
      }
      CK(cudaStreamDestroy(s));
      cattn_comm_destroy(comm);
      NCCL_CK(nccl.CommDestroy(raw));
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
