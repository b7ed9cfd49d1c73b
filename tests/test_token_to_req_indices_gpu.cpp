// SPDX-License-Identifier: Apache-2.0
// token_to_req_indices on the device: bit-exact against the host path on the oracle's vectors
// three ways, with poisoned buffers whose entries past max(M, T) must stay untouched; one
// kernel captured once and replayed with new batches in the same buffers (M read on the
// device every replay); the device's bounds where the host would refuse; and the host checks
// that still guard device calls.
#include <gtest/gtest.h>

#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/replay.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

cattn_status_t run(const cattn_common_attn_metadata_t* md, DLTensor* buffer,
                   cattn_stream_t stream) {
  cattn_token_to_req_indices_args_t a = CATTN_TOKEN_TO_REQ_INDICES_ARGS_INIT;
  a.metadata = md;
  a.buffer = buffer;
  a.stream = stream;
  return cattn_token_to_req_indices(&a);
}

}  // namespace

TEST(token_to_req_indices_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const auto vec = load_vectors("token_to_req_indices");
  int cases = 0;
  for (const auto& c : vec["cases"]) {
    if (c.contains("error")) continue;
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), q_cpu = ints(c["query_start_loc_cpu"]);
    const int64_t len = c["buffer_len"];
    for (DLDataType t : {i32(), i64()})
      for (bool mirror : {true, false}) {
        HostTensor qsl = HostTensor::of(q, t, {}, 2, 1), qsl_cpu = HostTensor::of(q_cpu, t);
        HostTensor want({len}, t.bits == 32 ? i64() : i32(), 2, 1);
        HostTensor got({len}, t.bits == 32 ? i64() : i32(), 2, 1);
        cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
        md.query_start_loc = qsl.dl();
        md.query_start_loc_cpu = mirror ? qsl_cpu.dl() : nullptr;
        md.num_actual_tokens = c["num_actual_tokens"];
        ASSERT_CATTN_OK(run(&md, want.dl(), nullptr));
        DeviceTensor qsl_d(qsl);
        PoisonedOutput buf_d(got);
        md.query_start_loc = qsl_d.dl();
        run_three_ways(
            [&](cudaStream_t st) {
              return run(&md, buf_d.dl(), reinterpret_cast<cattn_stream_t>(st));
            },
            {{&buf_d, &want}});
        ++cases;
      }
  }
  EXPECT_GT(cases, 80);
#endif
}

TEST(token_to_req_indices_gpu, GraphReplaysNewBatches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  constexpr int64_t kReqs = 257, kTokens = 4096, kCap = kTokens + 64;
  std::mt19937_64 g(41);
  for (bool graph : {true, false}) {
    BufferPtr qsl = buffer({kReqs + 1}, {i64(), 1, 2});
    BufferPtr buf = buffer({kCap}, {i32(), 2, 1});
    cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
    md.query_start_loc = qsl->dl();
    md.num_actual_tokens = kTokens;  // the padded token count a captured graph keeps
    std::vector<int64_t> q;
    run_steps(
        graph, 8,
        [&](cudaStream_t st) { return run(&md, buf->dl(), reinterpret_cast<cattn_stream_t>(st)); },
        [&](int step) {
          // New lengths each step, at most kTokens in all, zero-length padding rows at the end.
          const int64_t live = step == 0 ? 0 : 1 + static_cast<int64_t>(g() % kReqs);
          q.assign(1, 0);
          for (int64_t i = 0; i < kReqs; ++i) {
            int64_t len = i < live ? static_cast<int64_t>(g() % 33) : 0;
            if (q.back() + len > kTokens) len = 0;
            q.push_back(q.back() + len);
          }
          qsl->write(q);
          buf->reset();
        },
        [&](int, const std::string& where) {
          const auto got = buf->read();
          int64_t t = 0;
          for (int64_t r = 0; r < kReqs; ++r)
            for (int64_t j = q[r]; j < q[r + 1]; ++j, ++t)
              EXPECT_EQ(got[t], r) << where << " at token " << t;
          for (; t < kTokens; ++t) EXPECT_EQ(got[t], 0) << where << " padding at " << t;
          // Past max(M, T) nothing is written: the poison stays.
          const auto poison = got[kCap - 1];
          for (int64_t i = kTokens; i < kCap; ++i) EXPECT_EQ(got[i], poison) << where;
          return kCap;
        },
        "token_to_req_indices");
  }
#endif
}

TEST(token_to_req_indices_gpu, DeviceBoundsWhereTheHostWouldRefuse) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // More mapped tokens than the buffer holds (no mirror to check against): the kernel writes
  // the buffer's entries only. A decreasing entry is an empty request.
  HostTensor qsl = HostTensor::of({0, 5, 3, 12}, i32());
  HostTensor guard({16}, i32());
  DeviceTensor qsl_d(qsl), guard_d(guard);
  DLTensor buf = *guard_d.dl();
  int64_t len = 8;
  buf.shape = &len;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl_d.dl();
  md.num_actual_tokens = 4;
  ASSERT_CATTN_OK(run(&md, &buf, nullptr));
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  const auto poison = guard.values()[15];
  guard_d.download();
  const auto got = guard.values();
  for (int64_t i = 0; i < 8; ++i) EXPECT_GE(got[i], 0) << i;
  for (int64_t i = 0; i < 8; ++i) EXPECT_LE(got[i], 2) << i;
  for (int64_t i = 8; i < 16; ++i) EXPECT_EQ(got[i], poison) << "written past the buffer at " << i;
  EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + 3), (std::vector<int64_t>(3, 0)));
#endif
}

TEST(token_to_req_indices_gpu, HostChecksStillGuardDeviceCalls) {
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), mirror = HostTensor::of({0, 2, 9}, i32());
  HostTensor buf({8}, i32());
  DLTensor q_d = fake_cuda(qsl), b_d = fake_cuda(buf);
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = &q_d;
  md.query_start_loc_cpu = mirror.dl();
  md.num_actual_tokens = 4;
  // The mirror's M (9) does not fit the buffer: vLLM asserts, libcattn refuses on the host.
  EXPECT_CATTN_ERROR(run(&md, &b_d, nullptr), CATTN_INSUFFICIENT_SIZE, "args->buffer");
  md.query_start_loc_cpu = nullptr;
  md.num_actual_tokens = 9;
  EXPECT_CATTN_ERROR(run(&md, &b_d, nullptr), CATTN_INSUFFICIENT_SIZE, "args->buffer");
  md.num_actual_tokens = 4;
  DLTensor mirror_d = fake_cuda(mirror);
  md.query_start_loc_cpu = &mirror_d;
  EXPECT_CATTN_ERROR(run(&md, &b_d, nullptr), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu");
  md.query_start_loc_cpu = nullptr;
  EXPECT_CATTN_ERROR(run(&md, buf.dl(), nullptr), CATTN_INVALID_ARGUMENT, "device");
}
