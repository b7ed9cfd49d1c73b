// SPDX-License-Identifier: Apache-2.0
// A step plan as an engine uses one: created once for its capacities, captured once in a CUDA
// graph, and replayed for every step with that step's batch written into the same device
// buffers. Each replay's outputs (every DCP rank's lengths, the PCP restore index and the
// counts) are checked against the host path: the same utilities called on host tensors.
// The host half always runs; the GPU half needs a CUDA build (CATTN_EXAMPLE_WITH_CUDA) and a
// GPU, and is skipped, with exit status 0, without them. Exit status 1: a mismatch or an error.
#include <cattn.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

constexpr int64_t kMaxReqs = 8, kMaxTokens = 64, kDcpSize = 2;  // the graph's capacities

// One step's batch, padded to kMaxReqs with zero-length requests, and its host-path results.
struct step {
  std::vector<int32_t> query_start_loc{0}, seq_lens;
  std::vector<int32_t> restore;   // cattn_get_pcp_query_restore_idx on the host
  cattn::host_tensor<int32_t> dcp;  // cattn_get_dcp_local_seq_lens, [kMaxReqs, kDcpSize]
};

static step make_step(const std::vector<int32_t>& query_lens, const std::vector<int32_t>& seqs) {
  step s;
  for (size_t i = 0; i < static_cast<size_t>(kMaxReqs); ++i) {  // padding: query 0, seq_len 0
    const int32_t len = i < query_lens.size() ? query_lens[i] : 0;
    s.query_start_loc.push_back(s.query_start_loc.back() + len);
    s.seq_lens.push_back(i < seqs.size() ? seqs[i] : 0);
  }
  s.restore = cattn::get_pcp_query_restore_idx<int32_t>(s.query_start_loc);
  s.dcp = cattn::get_dcp_local_seq_lens<int32_t>(s.seq_lens, kDcpSize, cattn::all_ranks);
  return s;
}

#if defined(CATTN_EXAMPLE_WITH_CUDA)
#include <cuda_runtime_api.h>

static void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e));
}
#define CUDA_CHECK(call) cuda_check((call), #call)

template <class T>
struct device_array {  // n elements of device memory, freed on scope exit
  T* p = nullptr;
  size_t n;
  explicit device_array(size_t count) : n(count) {
    void* raw = nullptr;
    CUDA_CHECK(cudaMalloc(&raw, n * sizeof(T) + 1));  // + 1: never a 0-byte allocation
    p = static_cast<T*>(raw);
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { cudaFree(p); }
  cattn::tensor_view<T> view(std::initializer_list<int64_t> shape, int dev) const {
    return cattn::tensor_view<T>(p, shape, cattn::cuda(dev));
  }
  std::vector<T> to_host(cudaStream_t s) const {  // a copy queued after the replay, then waited for
    std::vector<T> h(n);
    CUDA_CHECK(cudaMemcpyAsync(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return h;
  }
};

struct graph_objects {  // the stream, the captured graph and its executable, destroyed in reverse
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~graph_objects() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) cudaStreamDestroy(stream);
  }
};

// Captures one run of the plan and replays it for every step; returns the replays that matched.
static int replay_on_gpu(const std::vector<step>& steps) {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_DCP_LOCAL_SEQ_LENS | CATTN_STEP_PCP_QUERY_RESTORE_IDX;
  desc.max_num_reqs = kMaxReqs;
  desc.max_num_tokens = kMaxTokens;
  desc.dcp = {kDcpSize, CATTN_DCP_ALL_RANKS, 1};
  const cattn::step_plan plan(desc);
  const int64_t restore_cap = plan.shape().restore_capacity;  // kMaxTokens entries
  device_array<int32_t> qsl(kMaxReqs + 1), seq(kMaxReqs), restore(restore_cap),
      dcp(kMaxReqs * kDcpSize);
  device_array<int64_t> counts(CATTN_STEP_NUM_COUNTS);
  device_array<unsigned char> workspace(plan.workspace_size());  // 0 bytes in 1.1
  cattn::step_batch batch;
  batch.query_start_loc = qsl.view({kMaxReqs + 1}, dev);
  batch.seq_lens = seq.view({kMaxReqs}, dev);
  cattn::step_outputs out;
  out.pcp_query_restore_idx = restore.view({restore_cap}, dev);
  out.dcp_local_seq_lens = dcp.view({kMaxReqs, kDcpSize}, dev);
  out.counts = counts.view({CATTN_STEP_NUM_COUNTS}, dev);
  out.workspace = workspace.n > 0 ? workspace.p : nullptr;
  out.workspace_bytes = workspace.n;

  // Capture once: the graph records the buffers' addresses, never their contents.
  graph_objects g;
  CUDA_CHECK(cudaStreamCreate(&g.stream));
  CUDA_CHECK(cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeThreadLocal));
  try {
    plan.run(batch, out, g.stream);  // host checks, then one kernel enqueued: nothing runs yet
  } catch (...) {
    (void)cudaStreamEndCapture(g.stream, &g.graph);  // leave the stream usable, then report
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(g.stream, &g.graph));
  CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));

  int matched = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const step& s = steps[k];  // this step's batch into the captured buffers, then the replay
    CUDA_CHECK(cudaMemcpyAsync(qsl.p, s.query_start_loc.data(), (kMaxReqs + 1) * sizeof(int32_t),
                               cudaMemcpyHostToDevice, g.stream));
    CUDA_CHECK(cudaMemcpyAsync(seq.p, s.seq_lens.data(), kMaxReqs * sizeof(int32_t),
                               cudaMemcpyHostToDevice, g.stream));
    CUDA_CHECK(cudaGraphLaunch(g.exec, g.stream));
    const std::vector<int32_t> r = restore.to_host(g.stream), d = dcp.to_host(g.stream);
    const std::vector<int64_t> c = counts.to_host(g.stream);
    std::vector<int32_t> want_r = s.restore;  // past the step's size: the -1 sentinel
    want_r.resize(static_cast<size_t>(restore_cap), -1);
    const bool ok = r == want_r && d == s.dcp.values() &&
                    c[CATTN_STEP_COUNT_RESTORE_SIZE] == static_cast<int64_t>(s.restore.size()) &&
                    c[CATTN_STEP_COUNT_TOKENS] == s.query_start_loc.back();
    std::printf("GPU replay %zu: %s\n", k + 1, ok ? "matches the host path" : "DIFFERS");
    if (!ok) std::printf("  restore_idx %s\n  dcp lens %s\n", cattn::to_string(r).c_str(),
                         cattn::to_string(d).c_str());
    matched += ok;
  }
  return matched;
}
#endif

int main() try {
  // Three steps of one graph bucket: a mixed batch, a decode-only batch and a full one.
  const std::vector<step> steps = {
      make_step({1, 1, 6, 10}, {20, 9, 6, 30}),
      make_step({1, 1, 1, 1, 1, 1}, {21, 10, 7, 31, 5, 12}),
      make_step({4, 2, 8, 12, 6, 1, 1, 20}, {4, 40, 8, 12, 66, 11, 3, 20})};
  std::printf("libcattn %s\n", cattn::version_string());
  for (size_t k = 0; k < steps.size(); ++k) {
    std::printf("step %zu: query_start_loc %s, seq_lens %s\n", k + 1,
                cattn::to_string(steps[k].query_start_loc).c_str(),
                cattn::to_string(steps[k].seq_lens).c_str());
    std::printf("  host restore_idx %s\n  host dcp lens %s\n",
                cattn::to_string(steps[k].restore).c_str(), cattn::to_string(steps[k].dcp).c_str());
  }
#if defined(CATTN_EXAMPLE_WITH_CUDA)
  if (cattn::cuda_device_count() > 0) {
    const int matched = replay_on_gpu(steps);
    std::printf("%d of %zu replays of one captured graph matched the host path\n", matched,
                steps.size());
    return matched == static_cast<int>(steps.size()) ? 0 : 1;
  }
  std::printf("GPU half skipped: no CUDA device found\n");
#else
  std::printf("GPU half skipped: this example was built without CUDA\n");
#endif
  return 0;
} catch (const std::exception& e) {  // cattn::error and CUDA failures
  std::fprintf(stderr, "cuda_graph_step: %s\n", e.what());
  return 1;
}
