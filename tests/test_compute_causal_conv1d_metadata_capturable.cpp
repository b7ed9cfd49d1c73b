// SPDX-License-Identifier: Apache-2.0
// cattn_compute_causal_conv1d_metadata_capturable: the metadata computed on the device from the
// device query_start_loc. Captured once into a CUDA graph and replayed with a new random batch
// written before every replay (and the same plainly), bit-exact against the host
// implementation with CATTN_PAD_SLOT_ID past tot; outputs shorter than the programs; and the
// host-side checks (fake device memory, so they run without a GPU).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/replay.h"
#include "support/status_matchers.h"
#include "support/step_reference.h"

using namespace cattn_test;

namespace {

cattn_causal_conv1d_metadata_capturable_args_t device_args(const DLTensor* qsl, int64_t block_m,
                                                           DLTensor* const (&o)[6]) {
  cattn_causal_conv1d_metadata_capturable_args_t a =
      CATTN_CAUSAL_CONV1D_METADATA_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = qsl;
  a.block_m = block_m;
  a.nums = o[0];
  a.mlist = o[1];
  a.offsetlist = o[2];
  a.batch_ptr = o[3];
  a.token_chunk_offset_ptr = o[4];
  a.tot = o[5];
  return a;
}

#if defined(CATTN_TEST_WITH_CUDA)
// Replays of random steps at capacity (reqs, tokens) with per-program outputs of `len`.
void replay(const TensorLayout& in, const TensorLayout& out, int64_t reqs, int64_t tokens,
            int64_t block_m, int64_t len, uint64_t seed, const std::string& name) {
  std::mt19937_64 g(seed);
  const StepCaps caps{reqs, tokens, 1, 0};
  for (bool graph : {true, false}) {
    BufferPtr qsl = buffer({reqs + 1}, in), nums = buffer({reqs}, out), tot = buffer({1}, out);
    BufferPtr per_program[4] = {buffer({len}, out), buffer({len}, out), buffer({len}, out),
                                buffer({len}, out)};
    DLTensor* const o[6] = {nums->dl(),           per_program[0]->dl(), per_program[1]->dl(),
                            per_program[2]->dl(), per_program[3]->dl(), tot->dl()};
    const cattn_causal_conv1d_metadata_capturable_args_t base = device_args(qsl->dl(), block_m, o);
    StepBatch b;
    run_steps(
        graph, 24,
        [&](cudaStream_t s) {
          cattn_causal_conv1d_metadata_capturable_args_t a = base;
          a.stream = reinterpret_cast<cattn_stream_t>(s);
          return cattn_compute_causal_conv1d_metadata_capturable(&a);
        },
        [&](int step) {
          b = random_step(g, caps, {}, step);
          qsl->write(b.qsl);
          for (BufferPtr* p : {&nums, &tot, &per_program[0], &per_program[1], &per_program[2],
                               &per_program[3]})
            (*p)->reset();
        },
        [&](int, const std::string& where) {
          const Conv1dExpected e = expected_conv1d(b.qsl, block_m, len);
          EXPECT_EQ(nums->read(), e.nums) << where;
          EXPECT_EQ(per_program[0]->read(), e.mlist) << where << " mlist";
          EXPECT_EQ(per_program[1]->read(), e.offsetlist) << where << " offsetlist";
          EXPECT_EQ(per_program[2]->read(), e.mlist) << where << " batch_ptr";
          EXPECT_EQ(per_program[3]->read(), e.offsetlist) << where << " token_chunk_offset_ptr";
          EXPECT_EQ(tot->read(), std::vector<int64_t>{e.tot}) << where << " tot";
          return reqs + 4 * len + 1;
        },
        name);
  }
}
#endif

}  // namespace

TEST(compute_causal_conv1d_metadata_capturable_gpu, ReplaysNewBatches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The documented capacity cdiv(T, block_m) + B holds every batch.
  replay({i32()}, {i32()}, 40, 900, 8, 900 / 8 + 1 + 40, 1, "int32, block_m 8");
  replay({i64()}, {i64()}, 40, 900, 3, 300 + 40, 2, "int64, block_m 3");
  replay({i64(), 2, 1}, {i32(), 3, 1}, 17, 333, 5, 67 + 17 + 9, 3, "strided, longer outputs");
  replay({i32()}, {i64()}, 1, 64, 1, 64 + 1, 4, "one request, block_m 1");
#endif
}

TEST(compute_causal_conv1d_metadata_capturable_gpu, ShortOutputsKeepTheFirstPrograms) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // Fewer entries than programs: the first ones are written and tot reports them all.
  replay({i32()}, {i32()}, 24, 800, 4, 37, 5, "outputs of 37 entries");
#endif
}

TEST(compute_causal_conv1d_metadata_capturable_gpu, ChecksArgumentsOnTheHost) {
  HostTensor q = HostTensor::of({0, 10, 16, 17}, i32());
  HostTensor nums({3}, i32()), mlist({8}, i32()), tot({1}, i64()), q_host = q;
  DLTensor q_d = fake_cuda(q), nums_d = fake_cuda(nums), mlist_d = fake_cuda(mlist),
           tot_d = fake_cuda(tot);
  const auto before = mlist.bytes();
  DLTensor* const outs[6] = {&nums_d, &mlist_d, nullptr, nullptr, nullptr, &tot_d};
  auto expect_error = [&](const cattn_causal_conv1d_metadata_capturable_args_t& a,
                          cattn_status_t code, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_capturable(&a), code, needle);
    EXPECT_EQ(mlist.bytes(), before);
  };
  EXPECT_CATTN_ERROR(cattn_compute_causal_conv1d_metadata_capturable(nullptr),
                     CATTN_INVALID_ARGUMENT, "args");
  cattn_causal_conv1d_metadata_capturable_args_t a = device_args(&q_d, 8, outs);
  a.struct_size = 8;
  expect_error(a, CATTN_INVALID_ARGUMENT, "struct_size");
  expect_error(device_args(nullptr, 8, outs), CATTN_INVALID_ARGUMENT, "args->query_start_loc");
  expect_error(device_args(&q_d, 0, outs), CATTN_INVALID_ARGUMENT, "args->block_m");
  // Host tensors: the host call serves them.
  DLTensor* const host_outs[6] = {nums.dl(), mlist.dl(), nullptr, nullptr, nullptr, nullptr};
  expect_error(device_args(q_host.dl(), 8, host_outs), CATTN_INVALID_ARGUMENT,
               "cattn_compute_causal_conv1d_metadata)");
  expect_error(device_args(q_host.dl(), 8, outs), CATTN_INVALID_ARGUMENT, "different device");
  HostTensor empty({0}, i32()), two({2}, i32()), wide({3, 2}, i32());
  DLTensor empty_d = fake_cuda(empty), two_d = fake_cuda(two), wide_d = fake_cuda(wide);
  expect_error(device_args(&empty_d, 8, outs), CATTN_INVALID_ARGUMENT, "is empty");
  DLTensor* const short_nums[6] = {&two_d, &mlist_d, nullptr, nullptr, nullptr, nullptr};
  expect_error(device_args(&q_d, 8, short_nums), CATTN_INSUFFICIENT_SIZE, "args->nums");
  DLTensor* const two_tot[6] = {nullptr, &mlist_d, nullptr, nullptr, nullptr, &two_d};
  expect_error(device_args(&q_d, 8, two_tot), CATTN_INVALID_ARGUMENT, "args->tot");
  DLTensor* const wide_out[6] = {nullptr, &wide_d, nullptr, nullptr, nullptr, nullptr};
  expect_error(device_args(&q_d, 8, wide_out), CATTN_INVALID_ARGUMENT, "args->mlist");
  // Overlaps: an output on query_start_loc, two outputs on one buffer.
  DLTensor* const on_input[6] = {nullptr, &q_d, nullptr, nullptr, nullptr, nullptr};
  expect_error(device_args(&q_d, 8, on_input), CATTN_INVALID_ARGUMENT, "overlaps an input");
  DLTensor* const shared[6] = {nullptr, &mlist_d, nullptr, &mlist_d, nullptr, nullptr};
  expect_error(device_args(&q_d, 8, shared), CATTN_INVALID_ARGUMENT, "overlaps another output");
  int64_t zero = 0;
  DLTensor mlist_zero = mlist_d;
  mlist_zero.strides = &zero;
  DLTensor* const zero_stride[6] = {nullptr, &mlist_zero, nullptr, nullptr, nullptr, nullptr};
  expect_error(device_args(&q_d, 8, zero_stride), CATTN_INVALID_ARGUMENT, "zero stride");
  int64_t huge = int64_t{CATTN_MAX_BROADCAST_ELEMENTS} + 1;
  DLTensor q_broadcast = q_d;
  q_broadcast.shape = &huge;
  q_broadcast.strides = &zero;
  expect_error(device_args(&q_broadcast, 8, wide_out), CATTN_INVALID_ARGUMENT, "broadcast");
#if !defined(CATTN_TEST_WITH_CUDA)
  expect_error(device_args(&q_d, 8, outs), CATTN_NOT_SUPPORTED, "CPU-only");
#endif
}
