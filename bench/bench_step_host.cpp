// SPDX-License-Identifier: Apache-2.0
// The host work of one cattn_step_plan_run, on a machine without a GPU: the step plan of all
// seven products at bench_gpu's B = 1024 shapes, its tensors descriptors only (device
// addresses that are never dereferenced). Without a device the run stops where the launch
// would be (CATTN_NOT_SUPPORTED: a CPU-only build after the checks, a CUDA build at the
// device query), so every row below ends in the same refusal, and the differences between
// rows are what the run does before it:
//
//   checked        every call differs from the last (two descriptor sets, alternating), so
//                  each one takes every host check and, in a CUDA build, the device query
//   repeated       the same descriptors every call: answered from the plan's memo
//   refused first  batch NULL: the entry point, the handle check and the refusal alone
//
//   bench_step_host [--calls N]
// Refuses to run where a device is present (a CUDA build would launch on the fake addresses):
// bench_gpu measures the run there.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "bench_tensor.h"
#include "cattn.hpp"
#include "step_plan_desc.h"

namespace {

// Fake device tensors: views of addresses that are never dereferenced, each 1 GiB-aligned and
// 1 GiB from the next so that none overlaps another.
class Tensors {
 public:
  DLTensor* make(const std::vector<int64_t>& shape, DLDataType dt,
                 DLDevice dev = cattn::cuda(0)) {
    const uintptr_t gib = static_cast<uintptr_t>(next_++) << 30;
    const auto* at = reinterpret_cast<const void*>((uintptr_t{1} << 40) + gib);
    return all_.emplace_back(bench::raw_view(at, shape, dt, dev)).get();
  }

 private:
  std::deque<bench::dl_tensor> all_;
  int next_ = 1;
};

// Median ns per call over 21 rounds of `calls` calls.
double ns_per_call(int calls, const std::function<void(int)>& call) {
  std::vector<double> rounds;
  for (int r = 0; r < 21; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call(i);
    rounds.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
        calls);
  }
  std::nth_element(rounds.begin(), rounds.begin() + 10, rounds.end());
  return rounds[10];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 20000;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) calls = std::atoi(argv[++i]);
  int32_t devices = 0;
  if (cattn_cuda_device_count(&devices) != CATTN_OK || devices > 0) {
    std::printf("bench_step_host: a CUDA device is present; its fake tensors would be launched "
                "on. Run it from a CPU-only build or a machine without a GPU (bench_gpu times "
                "the run on a device).\n");
    return 0;
  }
  const int64_t B = 1024, T = 61765, cols = 16384 / 16 + 4, L = 1024 + 512;
  const cattn_step_plan_desc_t d = bench_step_plan_desc(B, T, cols, L);
  cattn_step_plan_t* plan = nullptr;
  cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
  if (cattn_step_plan_create(&d, &plan) != CATTN_OK ||
      cattn_step_plan_get_shape(plan, &sh) != CATTN_OK) {
    std::fprintf(stderr, "bench_step_host: %s\n", cattn_last_error_message());
    return 1;
  }
  const DLDataType i32{kDLInt, 32, 1}, i64{kDLInt, 64, 1};
  Tensors ts;
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.query_start_loc = ts.make({B + 1}, i32);
  b.seq_lens = ts.make({B}, i32);
  b.block_table = ts.make({B, cols}, i32);
  b.cu_num_tokens = ts.make({B + 1}, i32);
  b.logits_indices = ts.make({L}, i32);
  cattn_step_outputs_t o = bench_step_plan_outputs(
      B, sh, [&](std::vector<int64_t> shape, DLDataType dt) { return ts.make(shape, dt); });
  // Each row with and without the mirror (kDLCUDAHost: its mapping is queried on a device).
  DLTensor* mirror = ts.make({CATTN_STEP_NUM_COUNTS}, i64, cattn::cuda_host());
  DLTensor* other_counts = ts.make({CATTN_STEP_NUM_COUNTS}, i64);
  DLTensor* const counts = o.counts;

  const cattn_status_t expect = cattn_step_plan_run(plan, &b, &o, nullptr);
  if (expect == CATTN_OK || (std::strstr(cattn_last_error_message(), "CPU-only") == nullptr &&
                                 std::strstr(cattn_last_error_message(), "no usable") == nullptr)) {
    std::fprintf(stderr, "bench_step_host: the valid run answered %s: %s\n",
                 cattn_status_string(expect), cattn_last_error_message());
    return 1;
  }
  auto run = [&](const cattn_step_batch_t* bb) {
    if (cattn_step_plan_run(plan, bb, &o, nullptr) == CATTN_OK) std::abort();
  };
  std::printf("| %-54s | %8s |\n", "cattn_step_plan_run, all 7 products, B1024 (host only)",
              "ns/call");
  std::printf("|%s|%s|\n", std::string(56, '-').c_str(), std::string(10, '-').c_str());
  cattn_step_plan_shape_t shape = CATTN_STEP_PLAN_SHAPE_INIT;
  const double floor = ns_per_call(calls, [&](int) { cattn_step_plan_get_shape(plan, &shape); });
  std::printf("| %-54s | %8.1f |\n", "cattn_step_plan_get_shape (entry + handle check)", floor);
  const double refused = ns_per_call(calls, [&](int) { run(nullptr); });
  std::printf("| %-54s | %8.1f |\n", "refused first (batch NULL)", refused);
  for (bool with_mirror : {false, true}) {
    o.counts_host = with_mirror ? mirror : nullptr;
    const char* m = with_mirror ? ", counts_host" : "";
    const double checked = ns_per_call(calls, [&](int i) {
      o.counts = i % 2 ? other_counts : counts;
      run(&b);
    });
    o.counts = counts;
    const double repeated = ns_per_call(calls, [&](int) { run(&b); });
    std::printf("| %-54s | %8.1f |\n", (std::string("checked") + m).c_str(), checked);
    std::printf("| %-54s | %8.1f |\n", (std::string("repeated") + m).c_str(), repeated);
    std::printf("| %-54s | %8.1f |\n", (std::string("  saved by the memo") + m).c_str(),
                checked - repeated);
  }
  cattn_step_plan_destroy(plan);
  return 0;
}
