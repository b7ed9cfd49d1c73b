// SPDX-License-Identifier: Apache-2.0
// naive_query_lens and compute_num_computed_tokens on the device: bit-exact against the host
// path on the oracle's vectors three ways (default stream, non-blocking stream, graph replay)
// with poisoned outputs, in place over seq_lens, a graph captured once and replayed with new
// batches, and the host checks that still guard device calls.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/replay.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

cattn_status_t run(bool computed, const cattn_common_attn_metadata_t* md, DLTensor* out,
                   cattn_stream_t stream) {
  cattn_naive_query_lens_args_t a = CATTN_NAIVE_QUERY_LENS_ARGS_INIT;
  a.metadata = md;
  a.out = out;
  a.stream = stream;
  return computed ? cattn_compute_num_computed_tokens(&a) : cattn_naive_query_lens(&a);
}

}  // namespace

TEST(naive_query_lens_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const auto vec = load_vectors("naive_query_lens");
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const bool wide = c["dtype"] == "int64";
    for (int computed = 0; computed < 2; ++computed)
      for (int64_t step : {1, 2}) {
        const DLDataType t = wide ? i64() : (step == 1 ? i32() : i64());
        HostTensor qsl = HostTensor::of(q, t, {}, step, 1), seq = HostTensor::of(s, t, {}, step);
        HostTensor want({static_cast<int64_t>(s.size())}, i64(), step, 1);
        HostTensor got({static_cast<int64_t>(s.size())}, i64(), step, 1);
        cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
        md.query_start_loc = qsl.dl();
        md.seq_lens = seq.dl();
        ASSERT_CATTN_OK(run(computed, &md, want.dl(), nullptr));
        DeviceTensor qsl_d(qsl), seq_d(seq);
        PoisonedOutput out_d(got);
        cattn_common_attn_metadata_t dmd = CATTN_COMMON_ATTN_METADATA_INIT;
        dmd.query_start_loc = qsl_d.dl();
        dmd.seq_lens = seq_d.dl();
        run_three_ways(
            [&](cudaStream_t st) {
              return run(computed, &dmd, out_d.dl(), reinterpret_cast<cattn_stream_t>(st));
            },
            {{&out_d, &want}});
      }
  }
#endif
}

TEST(naive_query_lens_gpu, InPlaceAndWrapping) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The device does not refuse values: a difference that leaves int64 wraps, and an int32 out
  // keeps the low 32 bits.
  HostTensor qsl = HostTensor::of({INT64_MIN, INT64_MAX, 0}, i64());
  HostTensor out({2}, i32());
  DeviceTensor qsl_d(qsl), out_d(out);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl_d.dl();
  ASSERT_CATTN_OK(run(false, &md, out_d.dl(), nullptr));
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  out_d.download();
  EXPECT_EQ(out.values(), (std::vector<int64_t>{-1, 1}));
  // compute_num_computed_tokens over seq_lens' very view.
  HostTensor q2 = HostTensor::of({0, 3, 4, 9}, i32()), s2 = HostTensor::of({5, 1, 7}, i64());
  DeviceTensor q2_d(q2), s2_d(s2);
  md.query_start_loc = q2_d.dl();
  md.seq_lens = s2_d.dl();
  ASSERT_CATTN_OK(run(true, &md, s2_d.dl(), nullptr));
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  s2_d.download();
  EXPECT_EQ(s2.values(), (std::vector<int64_t>{2, 0, 2}));
#endif
}

TEST(naive_query_lens_gpu, GraphReplaysNewBatches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  constexpr int64_t kCap = 300;
  for (int computed = 0; computed < 2; ++computed) {
    std::mt19937_64 g(31 + computed);
    for (bool graph : {true, false}) {
      BufferPtr qsl = buffer({kCap + 1}, {i32(), 2, 1}), seq = buffer({kCap}, {i64()});
      BufferPtr out = buffer({kCap}, {i64(), 1, 3});
      cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
      md.query_start_loc = qsl->dl();
      md.seq_lens = seq->dl();
      std::vector<int64_t> q, s;
      run_steps(
          graph, 6,
          [&](cudaStream_t st) {
            return run(computed, &md, out->dl(), reinterpret_cast<cattn_stream_t>(st));
          },
          [&](int) {
            // A batch padded to capacity with zero-length rows, new every step.
            const int64_t live = 1 + static_cast<int64_t>(g() % kCap);
            q.assign(1, 0);
            s.clear();
            for (int64_t i = 0; i < kCap; ++i) {
              const int64_t len = i < live ? static_cast<int64_t>(g() % 40) : 0;
              q.push_back(q.back() + len);
              s.push_back(i < live ? len + static_cast<int64_t>(g() % 5000) : 0);
            }
            qsl->write(q);
            seq->write(s);
            out->reset();
          },
          [&](int, const std::string& where) {
            const auto got = out->read();
            for (int64_t i = 0; i < kCap; ++i) {
              const int64_t len = q[i + 1] - q[i];
              EXPECT_EQ(got[i], computed ? s[i] - len : len) << where << " at " << i;
            }
            return kCap;
          },
          computed ? "compute_num_computed_tokens" : "naive_query_lens");
    }
  }
#endif
}

TEST(naive_query_lens_gpu, HostChecksStillGuardDeviceCalls) {
  // Runs without a GPU too: everything here fails before the device is touched.
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), out({2}, i32()), host_out({2}, i32());
  DLTensor q_d = fake_cuda(qsl), out_d = fake_cuda(out);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = &q_d;
  EXPECT_CATTN_ERROR(run(false, &md, host_out.dl(), nullptr), CATTN_INVALID_ARGUMENT, "device");
  HostTensor small({1}, i32());
  DLTensor small_d = fake_cuda(small);
  EXPECT_CATTN_ERROR(run(false, &md, &small_d, nullptr), CATTN_INSUFFICIENT_SIZE, "args->out");
  EXPECT_CATTN_ERROR(run(true, &md, &out_d, nullptr), CATTN_INVALID_ARGUMENT,
                     "args->metadata->seq_lens");
}
