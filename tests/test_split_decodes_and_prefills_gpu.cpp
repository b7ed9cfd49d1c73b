// SPDX-License-Identifier: Apache-2.0
// The device splits (cattn_split_decodes_and_prefills_capturable,
// cattn_split_decodes_prefills_and_extends_capturable): the argument checks on any machine; on a
// GPU every upstream-oracle vector (the failures as their -1 sentinel), layouts, and CUDA-graph
// replays with new batches in the same buffers, checked against the host calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/replay.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

std::vector<int64_t> qsl_of(const std::vector<int64_t>& q) {
  std::vector<int64_t> out{0};
  for (int64_t v : q) out.push_back(out.back() + v);
  return out;
}

}  // namespace

// Checked before any device work, so these run without a GPU too.
TEST(split_decodes_and_prefills_capturable, ArgumentChecks) {
  HostTensor q = HostTensor::of({0, 1, 3}, i32());
  HostTensor flags = HostTensor::of({0, 1}, dtype_bits(8));
  HostTensor res({4}, i64());
  HostTensor res6({6}, i64());
  HostTensor ub = HostTensor::of({5, 2}, i32());
  DLTensor dq = fake_cuda(q), dflags = fake_cuda(flags), dres = fake_cuda(res),
           dres6 = fake_cuda(res6), dub = fake_cuda(ub);
  cattn_split_decodes_and_prefills_capturable_args_t a =
      CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = &dq;
  a.result = &dres;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(nullptr), CATTN_INVALID_ARGUMENT,
                     "args");
  auto b = a;
  b.query_start_loc = q.dl();
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "args->query_start_loc");
  b = a;
  b.result = &dq;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INSUFFICIENT_SIZE,
                     "args->result");
  b = a;
  b.decode_threshold = -3;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "decode_threshold");
  b = a;
  b.require_uniform = 7;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "require_uniform");
  b = a;
  b.is_prefilling = &dq;  // not one byte per request
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "args->is_prefilling");
  b = a;
  b.num_actual_tokens = &dq;  // not [1]
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "args->num_actual_tokens");
  DLTensor alias = dq;  // result over query_start_loc
  int64_t four[1] = {4};
  HostTensor big = HostTensor::of({0, 1, 3, 4, 5}, i32());
  DLTensor dbig = fake_cuda(big);
  alias = dbig;
  alias.shape = four;
  b = a;
  b.query_start_loc = &dbig;
  b.result = &alias;
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_INVALID_ARGUMENT,
                     "overlap");
  b = a;
  b.is_prefilling = &dflags;
  b.treat_short_extends_as_decodes = 0;
#if !defined(CATTN_TEST_WITH_CUDA)  // a CPU-only build refuses after every other check
  EXPECT_CATTN_ERROR(cattn_split_decodes_and_prefills_capturable(&b), CATTN_NOT_SUPPORTED,
                     "cattn_split_decodes_and_prefills_capturable");
#endif

  cattn_split_decodes_prefills_and_extends_capturable_args_t e =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_INIT;
  e.query_start_loc = &dq;
  e.seq_lens_upper_bound = &dub;
  e.result = &dres6;
  auto f = e;
  f.seq_lens_upper_bound = nullptr;
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends_capturable(&f),
                     CATTN_INVALID_ARGUMENT, "args->seq_lens_upper_bound");
  f = e;
  f.result = &dres;
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends_capturable(&f),
                     CATTN_INSUFFICIENT_SIZE, "args->result");
  f = e;
  f.seq_lens_upper_bound = ub.dl();
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends_capturable(&f),
                     CATTN_INVALID_ARGUMENT, "args->seq_lens_upper_bound");
  f = e;
  f.decode_threshold = int64_t{1} << 40;
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends_capturable(&f),
                     CATTN_INVALID_ARGUMENT, "decode_threshold");
#if !defined(CATTN_TEST_WITH_CUDA)
  EXPECT_CATTN_ERROR(cattn_split_decodes_prefills_and_extends_capturable(&e), CATTN_NOT_SUPPORTED,
                     "cattn_split_decodes_prefills_and_extends_capturable");
#endif
}

#if defined(CATTN_TEST_WITH_CUDA)

namespace {

// One split on the device with the scalars as device tensors; returns the result entries.
std::vector<int64_t> run_split(const nlohmann::json& c, DLDataType t, DLDataType out_t,
                               int64_t step) {
  HostTensor q = HostTensor::of(ints(c["query_start_loc"]), t, {}, step, step == 1 ? 0 : 1);
  HostTensor tok = HostTensor::of({c["num_actual_tokens"].get<int64_t>()}, i64());
  HostTensor mql = HostTensor::of({c["max_query_len"].get<int64_t>()}, i64());
  HostTensor res({4}, out_t, step, 0);
  DeviceTensor dq(q), dtok(tok), dmql(mql), dres(res);
  HostTensor flags;
  std::unique_ptr<DeviceTensor> dflags;
  cattn_split_decodes_and_prefills_capturable_args_t a =
      CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = dq.dl();
  if (!c["is_prefilling"].is_null()) {
    flags = HostTensor::of(ints(c["is_prefilling"]), dtype_bits(8), {}, step, 0);
    dflags = std::make_unique<DeviceTensor>(flags);
    a.is_prefilling = dflags->dl();
  }
  a.num_actual_tokens = dtok.dl();
  a.max_query_len = dmql.dl();
  a.decode_threshold = c["decode_threshold"];
  a.require_uniform = c["require_uniform"];
  a.treat_short_extends_as_decodes = c["treat_short_extends_as_decodes"];
  a.result = dres.dl();
  EXPECT_CATTN_OK(cattn_split_decodes_and_prefills_capturable(&a));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dres.download();
  return res.values();
}

std::vector<int64_t> run_extends(const nlohmann::json& c, DLDataType t, DLDataType out_t,
                                 int64_t step) {
  HostTensor q = HostTensor::of(ints(c["query_start_loc"]), t, {}, step, step == 1 ? 0 : 1);
  HostTensor ub = HostTensor::of(ints(c["upper_bound"]),
                                 c["upper_bound_dtype"] == "int64" ? i64() : i32(), {}, step, 0);
  HostTensor tok = HostTensor::of({c["num_actual_tokens"].get<int64_t>()}, i64());
  HostTensor mql = HostTensor::of({c["max_query_len"].get<int64_t>()}, i64());
  HostTensor res({6}, out_t, step, 0);
  DeviceTensor dq(q), dub(ub), dtok(tok), dmql(mql), dres(res);
  cattn_split_decodes_prefills_and_extends_capturable_args_t a =
      CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_INIT;
  a.query_start_loc = dq.dl();
  a.seq_lens_upper_bound = dub.dl();
  a.num_actual_tokens = dtok.dl();
  a.max_query_len = dmql.dl();
  a.decode_threshold = c["decode_threshold"];
  a.result = dres.dl();
  EXPECT_CATTN_OK(cattn_split_decodes_prefills_and_extends_capturable(&a));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dres.download();
  return res.values();
}

}  // namespace

TEST(split_decodes_and_prefills_capturable, OracleVectors) {
  SKIP_WITHOUT_GPU();
  const auto vec = load_vectors("split_decodes_and_prefills");
  int64_t checked = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    // vLLM's assert on a missing is_prefilling is the kernel's -1 entries (only the device can
    // tell whether step 4 is reached).
    const DLDataType t = c["dtype"] == "int64" ? i64() : i32();
    const bool fits32 = !c.contains("result") || all_fit_int32(ints(c["result"]));
    for (DLDataType out_t : {i32(), i64()})
      for (int64_t step : {1, 2}) {
        if (out_t.bits == 32 && !fits32) continue;
        const auto got = run_split(c, t, out_t, step);
        EXPECT_EQ(got, c.contains("error") ? std::vector<int64_t>(4, -1) : ints(c["result"]));
        ++checked;
      }
  }
  std::printf("[  device  ] split_decodes_and_prefills: %lld vector runs, 0 mismatches\n",
              static_cast<long long>(checked));
}

TEST(split_decodes_prefills_and_extends_capturable, OracleVectors) {
  SKIP_WITHOUT_GPU();
  const auto vec = load_vectors("split_decodes_prefills_and_extends");
  int64_t checked = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    if (c["upper_bound"].is_null()) continue;  // refused on the host
    const DLDataType t = c["dtype"] == "int64" ? i64() : i32();
    for (int64_t step : {1, 2}) {
      const auto got = run_extends(c, t, i64(), step);
      EXPECT_EQ(got, c.contains("error") ? std::vector<int64_t>(6, -1) : ints(c["result"]));
      ++checked;
    }
  }
  std::printf("[  device  ] split_decodes_prefills_and_extends: %lld vector runs, 0 mismatches\n",
              static_cast<long long>(checked));
}

// Captured once, replayed on new batches (zero-length padding rows to a fixed capacity), and
// checked against the host calls on the same data; T and max_query_len from the batch itself.
TEST(split_decodes_and_prefills_capturable, GraphReplay) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kCap = 96;
  const TensorLayout l32{i32()};
  for (bool graph : {false, true}) {
    auto q = buffer({kCap + 1}, l32);
    auto ub = buffer({kCap}, l32);
    auto flags = buffer({kCap}, TensorLayout{dtype_bits(8)});
    auto r4 = buffer({4}, TensorLayout{i64()});
    auto r6 = buffer({6}, TensorLayout{i64()});
    for (int mode = 0; mode < 3; ++mode) {
      std::mt19937_64 g(77 + mode);
      std::vector<int64_t> qv, ubv, fv;
      auto load = [&](int) {
        const int64_t live = std::uniform_int_distribution<int64_t>(0, kCap)(g);
        const int64_t nd = std::uniform_int_distribution<int64_t>(0, live)(g);
        std::vector<int64_t> lens(kCap, 0);
        ubv.assign(kCap, 0);
        fv.assign(kCap, 0);
        for (int64_t i = 0; i < live; ++i) {
          lens[i] = i < nd ? std::uniform_int_distribution<int64_t>(1, 2)(g)
                           : std::uniform_int_distribution<int64_t>(3, 40)(g);
          ubv[i] = lens[i] + (g() % 3 == 0 ? 0 : std::uniform_int_distribution<int64_t>(1, 99)(g));
          fv[i] = g() % 5 == 0;
        }
        qv = qsl_of(lens);
        q->write(qv);
        ub->write(ubv);
        flags->write(fv);
        r4->reset();
        r6->reset();
      };
      auto call = [&](cudaStream_t s) {
        if (mode < 2) {
          cattn_split_decodes_and_prefills_capturable_args_t a =
              CATTN_SPLIT_DECODES_AND_PREFILLS_CAPTURABLE_ARGS_INIT;
          a.query_start_loc = q->dl();
          a.is_prefilling = flags->dl();
          a.decode_threshold = 2;
          a.require_uniform = mode;
          a.treat_short_extends_as_decodes = mode == 0 ? 0 : 1;
          a.result = r4->dl();
          a.stream = reinterpret_cast<cattn_stream_t>(s);
          return cattn_split_decodes_and_prefills_capturable(&a);
        }
        cattn_split_decodes_prefills_and_extends_capturable_args_t a =
            CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_CAPTURABLE_ARGS_INIT;
        a.query_start_loc = q->dl();
        a.seq_lens_upper_bound = ub->dl();
        a.decode_threshold = 2;
        a.result = r6->dl();
        a.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_split_decodes_prefills_and_extends_capturable(&a);
      };
      auto check = [&](int, const std::string& where) -> int64_t {
        SCOPED_TRACE(where);
        HostTensor hq = HostTensor::of(qv, i32());
        int64_t mql = 0;
        for (int64_t i = 0; i < kCap; ++i) mql = std::max(mql, qv[i + 1] - qv[i]);
        if (mode < 2) {
          HostTensor hf = HostTensor::of(fv, dtype_bits(8));
          cattn_split_decodes_and_prefills_args_t h = CATTN_SPLIT_DECODES_AND_PREFILLS_ARGS_INIT;
          h.query_start_loc_cpu = hq.dl();
          h.is_prefilling_cpu = hf.dl();
          h.num_reqs = kCap;
          h.num_actual_tokens = qv[kCap];
          h.max_query_len = mql;
          h.decode_threshold = 2;
          h.require_uniform = mode;
          h.treat_short_extends_as_decodes = mode == 0 ? 0 : 1;
          EXPECT_CATTN_OK(cattn_split_decodes_and_prefills(&h));
          EXPECT_EQ(r4->read(), (std::vector<int64_t>{h.num_decodes, h.num_prefills,
                                                      h.num_decode_tokens,
                                                      h.num_prefill_tokens}));
          return 4;
        }
        HostTensor hub = HostTensor::of(ubv, i32());
        cattn_split_decodes_prefills_and_extends_args_t h =
            CATTN_SPLIT_DECODES_PREFILLS_AND_EXTENDS_ARGS_INIT;
        h.query_start_loc_cpu = hq.dl();
        h.seq_lens_cpu_upper_bound = hub.dl();
        h.num_reqs = kCap;
        h.num_actual_tokens = qv[kCap];
        h.max_query_len = mql;
        h.decode_threshold = 2;
        EXPECT_CATTN_OK(cattn_split_decodes_prefills_and_extends(&h));
        EXPECT_EQ(r6->read(),
                  (std::vector<int64_t>{h.num_decodes, h.num_extends, h.num_prefills,
                                        h.num_decode_tokens, h.num_extend_tokens,
                                        h.num_prefill_tokens}));
        return 6;
      };
      run_steps(graph, 12, call, load, check,
                mode < 2 ? "split_decodes_and_prefills mode " + std::to_string(mode)
                         : "split_decodes_prefills_and_extends");
    }
  }
}

#endif  // CATTN_TEST_WITH_CUDA
