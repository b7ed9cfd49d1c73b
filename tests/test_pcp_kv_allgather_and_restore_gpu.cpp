// SPDX-License-Identifier: Apache-2.0
// pcp_kv_allgather_and_restore on GPUs, byte-exact against a host reference (concatenate every
// rank's key[:n] rows, then index-select; out-of-range indices give zero rows): a world of one
// GPU, and of two GPUs with one thread per rank in this process, with communicators created
// concurrently from one unique id and with borrowed ncclComm_t's the test makes itself. Cases:
// bf16- and fp8-sized elements, MLA head sizes, decode rows restored twice, CUDA-graph slack
// rows past num_actual_tokens, strided (packed) inputs, misaligned outputs, int32/int64 and
// strided indices, n = 0 and M = 0, a non-default stream and CUDA-graph capture and replay.
// Poisoned bytes around each output must survive. Skips without a GPU or without NCCL.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
#include <dlfcn.h>
#endif

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

// --- NCCL, loaded the way libcattn loads it (same soname, so the same library instance) -------

// Mirrors of NCCL's types with the same layout and calling convention, so the test needs no
// nccl.h: ncclComm_t is a pointer, ncclUniqueId 128 bytes passed by value, ncclResult_t an enum.
struct NcclUniqueId {
  char internal[CATTN_COMM_UNIQUE_ID_BYTES];
};
struct NcclForTest {
  int (*CommInitRank)(void** comm, int nranks, NcclUniqueId id, int rank) = nullptr;
  int (*CommDestroy)(void* comm) = nullptr;
  int (*CommCount)(void* comm, int* count) = nullptr;
};

const NcclForTest* nccl_for_test() {
  static const NcclForTest* api = [] () -> const NcclForTest* {
    const char* env = std::getenv(CATTN_NCCL_LIBRARY_ENV);
    void* h = dlopen(env && *env ? env : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return nullptr;
    static NcclForTest a;
    a.CommInitRank = reinterpret_cast<decltype(a.CommInitRank)>(dlsym(h, "ncclCommInitRank"));
    a.CommDestroy = reinterpret_cast<decltype(a.CommDestroy)>(dlsym(h, "ncclCommDestroy"));
    a.CommCount = reinterpret_cast<decltype(a.CommCount)>(dlsym(h, "ncclCommCount"));
    if (!a.CommInitRank || !a.CommDestroy || !a.CommCount) return nullptr;
    return &a;
  }();
  return api;
}

#define SKIP_WITHOUT_GPUS_OR_NCCL(n)                                                         \
  do {                                                                                       \
    SKIP_WITHOUT_GPU();                                                                      \
    if (gpu_count() < (n)) GTEST_SKIP() << "needs " << (n) << " GPUs, found " << gpu_count(); \
    if (nccl_for_test() == nullptr) GTEST_SKIP() << "NCCL (libnccl.so.2) cannot be loaded";  \
  } while (0)

// --- threads, one per rank --------------------------------------------------------------------

// A reusable barrier that also tells every thread whether all of them succeeded, so that no
// rank enters a collective its peers have given up on (that would hang instead of failing).
class Agreement {
 public:
  explicit Agreement(int n) : n_(n) {}
  bool all(bool ok) {
    std::unique_lock<std::mutex> lock(m_);
    const uint64_t gen = gen_;
    ok_ = ok_ && ok;
    if (++arrived_ == n_) {
      result_ = ok_;
      ok_ = true;
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
      return result_;
    }
    cv_.wait(lock, [&] { return gen_ != gen; });
    return result_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, arrived_ = 0;
  uint64_t gen_ = 0;
  bool ok_ = true, result_ = true;
};

// Runs body(rank) on `world` threads, each with its rank's device current.
void on_ranks(int world, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&body, r] {
      if (cudaSetDevice(r) != cudaSuccess) {
        ADD_FAILURE() << "cudaSetDevice(" << r << ") failed";
        std::abort();  // the peers would wait for this rank forever
      }
      body(r);
    });
  for (auto& t : threads) t.join();
}

// Waits for `s`; a collective whose peer never arrives would block forever, so give up loudly.
bool wait_stream(cudaStream_t s, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) {
      ADD_FAILURE() << what << ": " << cudaGetErrorString(e);
      return false;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) {
      std::fprintf(stderr, "%s: timed out after 120 s (a rank is stuck in NCCL)\n", what.c_str());
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// A device copy of a HostTensor's whole storage on the current device (DeviceTensor is for
// device 0 only).
class RankTensor {
 public:
  RankTensor(HostTensor& h, int device) : h_(&h), device_(device), bytes_(h.bytes().size()) {
    if (cudaMalloc(&p_, bytes_) != cudaSuccess) throw std::bad_alloc();
    upload();
  }
  ~RankTensor() { cudaFree(p_); }
  RankTensor(const RankTensor&) = delete;
  RankTensor& operator=(const RankTensor&) = delete;
  void upload() { (void)cudaMemcpy(p_, h_->bytes().data(), bytes_, cudaMemcpyHostToDevice); }
  void download() { (void)cudaMemcpy(h_->raw().data(), p_, bytes_, cudaMemcpyDeviceToHost); }
  DLTensor* dl() {
    dl_ = *h_->dl();
    dl_.data = p_;
    dl_.device = {kDLCUDA, device_};
    return &dl_;
  }

 private:
  HostTensor* h_;
  int device_;
  size_t bytes_;
  void* p_ = nullptr;
  DLTensor dl_{};
};

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) throw std::bad_alloc();
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// --- cases ------------------------------------------------------------------------------------

struct Layout {
  int64_t step = 1;         // > 1: every stride multiplied (the last dim strided too)
  int64_t offset = 0;       // elements before the first one (byte_offset)
  int64_t inner_pad = 0;    // > 0: rows padded, last dim contiguous (a view of a wider buffer)
};

struct Case {
  std::string name;
  std::vector<int64_t> key_dims, value_dims;  // after the token dim
  int key_elem = 2, value_elem = 2;           // bytes per element
  int64_t n = 0, slack = 0;                   // rows = n + slack (CUDA-graph padding)
  Layout key_layout, value_layout, out_layout;
  std::vector<int64_t> idx;                   // restore index; may hold out-of-range entries
  bool idx64 = true;
  int64_t idx_step = 1;
};

HostTensor random_tensor(std::vector<int64_t> shape, int elem, const Layout& l, uint64_t seed) {
  HostTensor t(std::move(shape), dtype_bits(elem * 8), l.step, l.offset, l.inner_pad);
  std::mt19937_64 g(seed);
  auto& raw = t.raw();
  for (size_t i = 0; i < raw.size(); i += 8) {
    const uint64_t r = g();
    std::memcpy(&raw[i], &r, std::min<size_t>(8, raw.size() - i));
  }
  return t;
}

std::vector<int64_t> with_rows(int64_t rows, const std::vector<int64_t>& dims) {
  std::vector<int64_t> s{rows};
  s.insert(s.end(), dims.begin(), dims.end());
  return s;
}

int64_t row_elems(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
}

// The inputs of rank r (the same on every thread that asks).
HostTensor make_key(const Case& c, int r, size_t ci) {
  return random_tensor(with_rows(c.n + c.slack, c.key_dims), c.key_elem, c.key_layout,
                       1000 * ci + 2 * r);
}
HostTensor make_value(const Case& c, int r, size_t ci) {
  return random_tensor(with_rows(c.n + c.slack, c.value_dims), c.value_elem, c.value_layout,
                       1000 * ci + 2 * r + 1);
}

// Bytes of logical rows [0, rows) of `t` in row-major order.
std::vector<uint8_t> compact_rows(HostTensor& t, int64_t rows, int64_t per_row) {
  const int e = t.elem();
  std::vector<uint8_t> out(static_cast<size_t>(rows * per_row * e));
  for (int64_t i = 0; i < rows * per_row; ++i) std::memcpy(&out[i * e], t.at(i), e);
  return out;
}

// vLLM's answer: all ranks' first n rows concatenated, then index_select (zero rows where the
// index is out of range, as libcattn documents).
std::vector<uint8_t> expected_out(const Case& c, size_t ci, int world, bool is_key) {
  const auto& dims = is_key ? c.key_dims : c.value_dims;
  const int e = is_key ? c.key_elem : c.value_elem;
  const int64_t row = row_elems(dims) * e;
  std::vector<uint8_t> all;
  for (int r = 0; r < world; ++r) {
    HostTensor t = is_key ? make_key(c, r, ci) : make_value(c, r, ci);
    const auto rows = compact_rows(t, c.n, row_elems(dims));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  const int64_t total = world * c.n;
  std::vector<uint8_t> out(c.idx.size() * static_cast<size_t>(row), 0);
  for (size_t i = 0; i < c.idx.size(); ++i)
    if (c.idx[i] >= 0 && c.idx[i] < total)
      std::memcpy(&out[i * row], &all[c.idx[i] * row], static_cast<size_t>(row));
  return out;
}

// Checks an output's whole storage: the view holds `expect`, every byte around it is poison.
void check_output(HostTensor& out, const std::vector<uint8_t>& expect, int64_t offset_elems,
                  const std::string& what) {
  const auto& b = out.bytes();
  const size_t start = static_cast<size_t>(offset_elems * out.elem());
  ASSERT_GE(b.size(), start + expect.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < expect.size(); ++i)
    if (b[start + i] != expect[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " bytes differ from the reference, first at byte "
                     << first;
  for (size_t i = 0; i < b.size(); ++i)
    if (i < start || i >= start + expect.size())
      if (b[i] != kPoisonByte) {
        ADD_FAILURE() << what << ": byte " << i << " outside the view was written";
        break;
      }
}

std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 g(seed);
  std::shuffle(p.begin(), p.end(), g);
  return p;
}

Case named(const char* name) {
  Case c;
  c.name = name;
  return c;
}

// The cases for a world of W ranks (the same list on every rank).
std::vector<Case> cases_for(int world) {
  std::vector<Case> cs;
  const int64_t W = world;
  {
    Case c = named("bf16 H8 D128, a permutation, 5 slack rows");
    c.key_dims = c.value_dims = {8, 128};
    c.n = 37;
    c.slack = 5;
    c.idx = permutation(W * c.n, 1);
    cs.push_back(c);
  }
  {
    Case c = named("decode rows restored twice, int32 index");
    c.key_dims = c.value_dims = {2, 64};
    c.n = 6;
    c.slack = 2;
    for (int64_t i = 0; i < W * c.n; ++i) {
      c.idx.push_back(i);
      if (i % 3 == 0) c.idx.push_back(i);  // duplicated, as vLLM's decode tokens
    }
    c.idx64 = false;
    cs.push_back(c);
  }
  {
    Case c = named("fp8, MLA K 192 / V 128");
    c.key_dims = {4, 192};
    c.value_dims = {4, 128};
    c.key_elem = c.value_elem = 1;
    c.n = 50;
    c.slack = 3;
    c.idx = permutation(W * c.n, 2);
    cs.push_back(c);
  }
  {
    Case c = named("strided inputs: K a view of fused QKV rows, V with every stride doubled");
    c.key_dims = {4 * 64};
    c.value_dims = {4, 64};
    c.key_layout.inner_pad = 8 * 64;  // packed by whole rows
    c.key_layout.offset = 64;
    c.value_layout.step = 2;          // packed element by element
    c.n = 19;
    c.slack = 4;
    c.idx = permutation(W * c.n, 3);
    cs.push_back(c);
  }
  {
    Case c = named("out-of-range and negative indices give zero rows, strided int64 index");
    c.key_dims = {3, 16};
    c.value_dims = {3, 8};
    c.key_elem = 4;
    c.value_elem = 2;
    c.n = 5;
    c.idx = {0, -1, W * c.n, W * c.n - 1, INT64_MIN, int64_t{1} << 40, 2, W * c.n + 100};
    c.idx_step = 2;
    cs.push_back(c);
  }
  {
    Case c = named("misaligned outputs: 2-byte accesses only");
    c.key_dims = c.value_dims = {2, 40};
    c.n = 9;
    c.out_layout.offset = 1;
    c.idx = permutation(W * c.n, 4);
    cs.push_back(c);
  }
  {
    Case c = named("8-byte elements, 1-D value, odd head size");
    c.key_dims = {1, 5};
    c.value_dims = {};
    c.key_elem = 8;
    c.value_elem = 4;
    c.n = 11;
    c.slack = 1;
    c.idx = permutation(W * c.n, 5);
    cs.push_back(c);
  }
  {
    // 96 MiB per rank: this rank's rows are restored on the communicator's side stream while
    // the gather runs, the others' after it; duplicates and a zero row touch both launches.
    Case c = named("overlapped: 96 MiB per rank, duplicates and a zero row");
    c.key_dims = c.value_dims = {16, 128};
    c.n = 12289;
    c.slack = 2;
    c.idx = permutation(W * c.n, 6);
    c.idx.push_back(W * c.n - 1);
    c.idx.push_back(-1);
    c.idx.push_back(0);
    cs.push_back(c);
  }
  {
    // Past the overlap threshold with strided inputs: the side stream reads the packed rows.
    Case c = named("overlapped: strided 12 MiB per rank, int32 index");
    c.key_dims = {2 * 128};
    c.value_dims = {2, 128};
    c.key_layout.inner_pad = 2 * 128;
    c.value_layout.step = 2;
    c.n = 12001;
    c.slack = 3;
    c.idx = permutation(W * c.n, 7);
    c.idx64 = false;
    cs.push_back(c);
  }
  {
    Case c = named("n = 0: nothing gathered, every row zero");
    c.key_dims = c.value_dims = {2, 8};
    c.n = 0;
    c.slack = 3;
    c.idx = {0, 1, 2};
    cs.push_back(c);
  }
  {
    Case c = named("M = 0: the gather still runs on every rank, nothing restored");
    c.key_dims = c.value_dims = {2, 8};
    c.n = 4;
    cs.push_back(c);
  }
  {
    Case c = named("empty key rows, value still gathered");
    c.key_dims = {2, 0};
    c.value_dims = {2, 8};
    c.n = 7;
    c.idx = permutation(W * c.n, 6);
    cs.push_back(c);
  }
  {
    Case c = named("large: 2048 rows per rank, bf16 H8 D128");
    c.key_dims = c.value_dims = {8, 128};
    c.n = 2048;
    c.slack = 16;
    c.idx = permutation(W * c.n, 7);
    cs.push_back(c);
  }
  return cs;
}

enum class Mode { DefaultStream, NonBlockingStream, Graph };

// Runs one case on one rank and checks its outputs. The ranks agree (through `agree`) that all
// of them are ready before any enters the collective, so a failure ends the case everywhere
// instead of leaving a peer waiting in NCCL.
void run_case(const Case& c, size_t ci, int rank, int world, cattn_comm_t* comm, Mode mode,
              Agreement& agree) {
  SCOPED_TRACE("rank " + std::to_string(rank) + ", case: " + c.name);
  HostTensor key = make_key(c, rank, ci), value = make_value(c, rank, ci);
  HostTensor idx = HostTensor::of(c.idx, c.idx64 ? i64() : i32(), {}, c.idx_step);
  const int64_t m = static_cast<int64_t>(c.idx.size());
  HostTensor key_out(with_rows(m, c.key_dims), dtype_bits(c.key_elem * 8), 1, c.out_layout.offset);
  HostTensor value_out(with_rows(m, c.value_dims), dtype_bits(c.value_elem * 8), 1,
                       c.out_layout.offset);
  const std::vector<uint8_t> key_before = key.bytes(), value_before = value.bytes();

  RankTensor dkey(key, rank), dvalue(value, rank), didx(idx, rank), dko(key_out, rank),
      dvo(value_out, rank);
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = comm;
  a.key = dkey.dl();
  a.value = dvalue.dl();
  a.num_actual_tokens = c.n;
  a.restore_idx = didx.dl();
  a.key_out = dko.dl();
  a.value_out = dvo.dl();
  size_t ws_size = 0;
  const cattn_status_t qs = cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &ws_size);
  EXPECT_CATTN_OK(qs);
  auto align = [](int64_t b) { return (b + 255) / 256 * 256; };
  EXPECT_EQ(ws_size, static_cast<size_t>(
                         align(world * c.n * row_elems(c.key_dims) * c.key_elem) +
                         align(world * c.n * row_elems(c.value_dims) * c.value_elem)));
  DeviceBuffer ws(ws_size);
  a.workspace = ws.p;
  a.workspace_size = ws_size;

  cudaStream_t s = nullptr;
  if (mode != Mode::DefaultStream) {
    EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  }
  a.stream = s;
  // Uploads by cudaMemcpy may still be in flight for a non-blocking stream.
  bool ok = qs == CATTN_OK && cudaDeviceSynchronize() == cudaSuccess;
  if (!agree.all(ok)) {
    ADD_FAILURE() << "a rank could not prepare the case";
    if (s) cudaStreamDestroy(s);
    return;
  }

  cattn_status_t st;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  if (mode == Mode::Graph) {
    EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    st = cattn_pcp_kv_allgather_and_restore(&a);
    const std::string msg = cattn_last_error_message();
    EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    EXPECT_EQ(st, CATTN_OK) << cattn_status_string(st) << ": " << msg;
    ok = st == CATTN_OK && graph != nullptr &&
         cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (!agree.all(ok)) {
      ADD_FAILURE() << "a rank could not capture the call";
      if (exec) cudaGraphExecDestroy(exec);
      if (graph) cudaGraphDestroy(graph);
      cudaStreamDestroy(s);
      return;
    }
    // Two replays: the second must give the same answer from a workspace already used.
    for (int rep = 0; rep < 2; ++rep) EXPECT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  } else {
    st = cattn_pcp_kv_allgather_and_restore(&a);
    EXPECT_CATTN_OK(st);
    // A rank that failed has enqueued nothing, but its peer may have: waiting would hang.
    if (!agree.all(st == CATTN_OK)) {
      ADD_FAILURE() << "a rank's call failed; not waiting on the peers' collectives";
      std::fflush(stdout);
      std::abort();
    }
  }
  if (wait_stream(s, "rank " + std::to_string(rank) + " " + c.name)) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    dko.download();
    dvo.download();
    dkey.download();
    dvalue.download();
    check_output(key_out, expected_out(c, ci, world, true), c.out_layout.offset, "key_out");
    check_output(value_out, expected_out(c, ci, world, false), c.out_layout.offset, "value_out");
    EXPECT_TRUE(key.bytes() == key_before) << "key was modified";
    EXPECT_TRUE(value.bytes() == value_before) << "value was modified";
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (s) cudaStreamDestroy(s);
}

void run_all_cases(int rank, int world, cattn_comm_t* comm, Agreement& agree) {
  int32_t r = -1, n = -1;
  EXPECT_CATTN_OK(cattn_comm_get_rank(comm, &r));
  EXPECT_CATTN_OK(cattn_comm_get_size(comm, &n));
  EXPECT_EQ(r, rank);
  EXPECT_EQ(n, world);
  const std::vector<Case> cs = cases_for(world);
  for (size_t i = 0; i < cs.size(); ++i)
    run_case(cs[i], i, rank, world, comm,
             i % 2 == 0 ? Mode::NonBlockingStream : Mode::DefaultStream, agree);
  // The first and the strided case once more, captured in a CUDA graph.
  run_case(cs[0], 0, rank, world, comm, Mode::Graph, agree);
  run_case(cs[3], 3, rank, world, comm, Mode::Graph, agree);
  // The overlapped cases too: their fork to the side stream and join back must capture.
  for (size_t i = 0; i < cs.size(); ++i)
    if (cs[i].name.rfind("overlapped", 0) == 0)
      run_case(cs[i], i, rank, world, comm, Mode::Graph, agree);
}

// Every rank creates its communicator from one unique id, all at once, then runs the cases.
void run_world_created(int world) {
  cattn_comm_unique_id_t id;
  ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
  Agreement agree(world);
  on_ranks(world, [&](int rank) {
    cattn_comm_t* comm = nullptr;
    const cattn_status_t st = cattn_comm_create(&id, world, rank, rank, &comm);
    EXPECT_CATTN_OK(st);
    if (!agree.all(st == CATTN_OK)) {
      cattn_comm_destroy(comm);
      return;
    }
    int dev = -1;
    EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
    EXPECT_EQ(dev, rank) << "cattn_comm_create changed the current device";
    run_all_cases(rank, world, comm, agree);
    cattn_comm_destroy(comm);
  });
}

// The engine owns the NCCL communicator: the test makes it with NCCL itself and lends it.
void run_world_borrowed(int world) {
  cattn_comm_unique_id_t id;
  ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
  NcclUniqueId uid;
  std::memcpy(&uid, id.bytes, sizeof uid);
  const NcclForTest& nccl = *nccl_for_test();
  Agreement agree(world);
  on_ranks(world, [&](int rank) {
    void* raw = nullptr;
    const int init = nccl.CommInitRank(&raw, world, uid, rank);
    EXPECT_EQ(init, 0) << "ncclCommInitRank";
    cattn_comm_t* comm = nullptr;
    cattn_status_t st = CATTN_INTERNAL;
    if (init == 0) {
      st = cattn_comm_create_borrowed(raw, &comm);
      EXPECT_CATTN_OK(st);
    }
    if (agree.all(st == CATTN_OK)) run_all_cases(rank, world, comm, agree);
    cattn_comm_destroy(comm);
    if (raw != nullptr) {
      // Still alive after the handle is gone: libcattn did not destroy what it borrowed.
      int count = 0;
      EXPECT_EQ(nccl.CommCount(raw, &count), 0);
      EXPECT_EQ(count, world);
      EXPECT_EQ(nccl.CommDestroy(raw), 0);
    }
  });
}

}  // namespace
#endif

TEST(pcp_kv_allgather_and_restore_gpu, CommLifecycle) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(1);
  cattn_comm_unique_id_t id;
  ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
  cattn_comm_t* comm = nullptr;
  EXPECT_CATTN_ERROR(cattn_comm_create(&id, 1, 0, gpu_count(), &comm), CATTN_INVALID_ARGUMENT,
                     "cuda_device is not a visible device");
  EXPECT_EQ(comm, nullptr);
  ASSERT_CATTN_OK(cattn_comm_create(&id, 1, 0, 0, &comm));
  ASSERT_NE(comm, nullptr);
  int32_t rank = -1, size = -1;
  EXPECT_CATTN_OK(cattn_comm_get_rank(comm, &rank));
  EXPECT_CATTN_OK(cattn_comm_get_size(comm, &size));
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  cattn_comm_destroy(comm);
  cattn_comm_destroy(nullptr);
  if (gpu_count() >= 2) {
    // A communicator on device 0 made while device 1 is current leaves device 1 current.
    ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
    CATTN_CUDA_OK(cudaSetDevice(1));
    comm = nullptr;
    const cattn_status_t st = cattn_comm_create(&id, 1, 0, 0, &comm);
    int dev = -1;
    const cudaError_t e = cudaGetDevice(&dev);
    CATTN_CUDA_OK(cudaSetDevice(0));
    ASSERT_CATTN_OK(st);
    CATTN_CUDA_OK(e);
    EXPECT_EQ(dev, 1);
    cattn_comm_destroy(comm);
  }
#else
  SKIP_WITHOUT_GPU();
#endif
}

TEST(pcp_kv_allgather_and_restore_gpu, WorldOfOneCreated) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(1);
  run_world_created(1);
#else
  SKIP_WITHOUT_GPU();
#endif
}

TEST(pcp_kv_allgather_and_restore_gpu, WorldOfOneBorrowed) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(1);
  run_world_borrowed(1);
#else
  SKIP_WITHOUT_GPU();
#endif
}

TEST(pcp_kv_allgather_and_restore_gpu, TwoGpusCreated) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(2);
  run_world_created(2);
#else
  SKIP_WITHOUT_GPU();
#endif
}

TEST(pcp_kv_allgather_and_restore_gpu, TwoGpusBorrowed) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(2);
  run_world_borrowed(2);
#else
  SKIP_WITHOUT_GPU();
#endif
}

// Errors only a real communicator reaches: workspace, the comm's device, the index alignment.
// None of them may write an output or enter NCCL (a one-rank world would not notice, so the
// outputs are checked byte by byte).
TEST(pcp_kv_allgather_and_restore_gpu, ErrorsWithACommunicator) {
#if defined(CATTN_TEST_WITH_CUDA)
  SKIP_WITHOUT_GPUS_OR_NCCL(1);
  cattn_comm_unique_id_t id;
  ASSERT_CATTN_OK(cattn_comm_get_unique_id(&id));
  cattn_comm_t* comm = nullptr;
  ASSERT_CATTN_OK(cattn_comm_create(&id, 1, 0, 0, &comm));
  std::unique_ptr<cattn_comm_t, void (*)(cattn_comm_t*)> guard(comm, cattn_comm_destroy);

  HostTensor key({8, 2, 16}, dtype_bits(16)), value({8, 2, 8}, dtype_bits(16));
  HostTensor idx = HostTensor::of({3, 2, 1, 0}, i32());
  HostTensor key_out({4, 2, 16}, dtype_bits(16)), value_out({4, 2, 8}, dtype_bits(16));
  DeviceTensor dkey(key), dvalue(value), didx(idx), dko(key_out), dvo(value_out);
  cattn_pcp_kv_allgather_and_restore_args_t a = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  a.comm = comm;
  a.key = dkey.dl();
  a.value = dvalue.dl();
  a.num_actual_tokens = 4;
  a.restore_idx = didx.dl();
  a.key_out = dko.dl();
  a.value_out = dvo.dl();
  size_t need = 0;
  ASSERT_CATTN_OK(cattn_pcp_kv_allgather_and_restore_workspace_size(&a, &need));
  EXPECT_EQ(need, 256u + 256u);  // 4 rows * 64 B = 256 B of key, 4 * 32 B rounded up to 256
  DeviceBuffer ws(need + 512);
  a.workspace = ws.p;
  auto untouched = [&](const char* what) {
    CATTN_CUDA_OK(cudaDeviceSynchronize());
    HostTensor k2({4, 2, 16}, dtype_bits(16)), v2({4, 2, 8}, dtype_bits(16));
    const auto d2h = cudaMemcpyDeviceToHost;
    CATTN_CUDA_OK(cudaMemcpy(k2.raw().data(), dko.ptr(), k2.bytes().size(), d2h));
    CATTN_CUDA_OK(cudaMemcpy(v2.raw().data(), dvo.ptr(), v2.bytes().size(), d2h));
    EXPECT_TRUE(k2.bytes() == key_out.bytes() && v2.bytes() == value_out.bytes())
        << what << ": a failed call wrote an output";
  };

  a.workspace_size = need - 1;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INSUFFICIENT_SIZE,
                     "args->workspace_size is too small");
  untouched("small workspace");
  a.workspace_size = need;
  a.workspace = nullptr;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
                     "args->workspace is NULL");
  a.workspace = static_cast<char*>(ws.p) + 128;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
                     "args->workspace is not 256-byte aligned");
  untouched("unaligned workspace");
  // An output inside the workspace.
  a.workspace = ws.p;
  DLTensor inside = *dko.dl();
  inside.data = static_cast<char*>(ws.p) + 256;
  a.key_out = &inside;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
                     "args->key_out");
  a.key_out = dko.dl();
  // value_out overlapping key_out, and key_out overlapping key.
  DLTensor over = *dvo.dl();
  over.data = dko.ptr();
  a.value_out = &over;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
                     "args->value_out");
  a.value_out = dvo.dl();
  DLTensor key_alias = *dko.dl();
  key_alias.data = dkey.ptr();
  a.key_out = &key_alias;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
                     "args->key_out");
  a.key_out = dko.dl();
  untouched("overlaps");
  // A device int32 index off its alignment (the storage has room past the view for the shift).
  DLTensor odd = *didx.dl();
  odd.byte_offset = 2;
  a.restore_idx = &odd;
  EXPECT_CATTN_ERROR(cattn_pcp_kv_allgather_and_restore(&a), CATTN_NOT_SUPPORTED,
                     "args->restore_idx");
  a.restore_idx = didx.dl();
  untouched("misaligned index");
  // Tensors on another device than the communicator's.
  if (gpu_count() >= 2) {
    DLTensor k1 = *dkey.dl(), v1 = *dvalue.dl(), i1 = *didx.dl(), ko1 = *dko.dl(), vo1 = *dvo.dl();
    for (DLTensor* t : {&k1, &v1, &i1, &ko1, &vo1}) t->device.device_id = 1;
    a.key = &k1;
    a.value = &v1;
    a.restore_idx = &i1;
    a.key_out = &ko1;
    a.value_out = &vo1;
    EXPECT_CATTN_ERROR(
        cattn_pcp_kv_allgather_and_restore(&a), CATTN_INVALID_ARGUMENT,
        "args->key is not on the communicator's device (got cuda:1, expected cuda:0)");
    a.key = dkey.dl();
    a.value = dvalue.dl();
    a.restore_idx = didx.dl();
    a.key_out = dko.dl();
    a.value_out = dvo.dl();
  }
  // And the same arguments succeed (out[i] = key[3 - i]).
  a.workspace_size = need;
  ASSERT_CATTN_OK(cattn_pcp_kv_allgather_and_restore(&a));
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  dko.download();
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(std::memcmp(key_out.at(i * 32), key.at((3 - i) * 32), 64), 0) << "row " << i;
#else
  SKIP_WITHOUT_GPU();
#endif
}
