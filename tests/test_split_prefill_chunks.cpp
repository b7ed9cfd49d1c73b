// SPDX-License-Identifier: Apache-2.0
// split_prefill_chunks: conformance against the upstream oracle's vectors in every layout,
// the size query, capacity, vLLM's assert as a status, and every error path with nothing
// written.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

constexpr int64_t kUnwritten = -777;

}  // namespace

TEST(split_prefill_chunks, OracleVectors) {
  const auto vec = load_vectors("split_prefill_chunks");
  ASSERT_GE(vec["cases"].size(), 50u);
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto seq = ints(c["seq_lens"]);
    std::vector<int64_t> flat;
    if (c.contains("chunks"))
      for (const auto& r : c["chunks"]) flat.push_back(r[0]), flat.push_back(r[1]);
    const int64_t rows = static_cast<int64_t>(flat.size() / 2);
    std::vector<DLDataType> types{c["dtype"] == "int64" ? i64() : i32()};
    if (all_fit_int32(seq)) types = {i32(), i64()};
    for (DLDataType t : types)
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3}) {
          if (out_t.bits == 32 && !all_fit_int32(flat)) continue;
          HostTensor s = HostTensor::of(seq, t, {}, step, step == 1 ? 0 : 1);
          cattn_split_prefill_chunks_args_t a = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
          a.seq_lens_cpu = s.dl();
          a.workspace_size = c["workspace_size"];
          a.request_offset = c["request_offset"];
          a.num_chunks = kUnwritten;
          if (c.contains("error")) {
            EXPECT_CATTN_ERROR(cattn_split_prefill_chunks(&a), CATTN_INVALID_ARGUMENT,
                               "seq_lens_cpu");
            EXPECT_EQ(a.num_chunks, kUnwritten);
            continue;
          }
          ASSERT_CATTN_OK(cattn_split_prefill_chunks(&a));  // the size query
          ASSERT_EQ(a.num_chunks, rows);
          // Two spare rows stay as they were.
          HostTensor out({rows + 2, 2}, out_t, step, step == 1 ? 0 : 2);
          for (int64_t i = 0; i < out.numel(); ++i) out.set(i, kUnwritten);
          a.chunks = out.dl();
          a.num_chunks = kUnwritten;
          ASSERT_CATTN_OK(cattn_split_prefill_chunks(&a));
          EXPECT_EQ(a.num_chunks, rows);
          auto got = out.values();
          std::vector<int64_t> expect = flat;
          expect.insert(expect.end(), 4, kUnwritten);
          EXPECT_EQ(got, expect);
        }
  }
}

TEST(split_prefill_chunks, Errors) {
  HostTensor s = HostTensor::of({3, 5, 2, 7, 1}, i32());
  HostTensor out({3, 2}, i64());
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, kUnwritten);
  const auto before = out.bytes();
  auto base = [&] {
    cattn_split_prefill_chunks_args_t a = CATTN_SPLIT_PREFILL_CHUNKS_ARGS_INIT;
    a.seq_lens_cpu = s.dl();
    a.workspace_size = 8;
    a.chunks = out.dl();
    a.num_chunks = kUnwritten;
    return a;
  };
  auto expect = [&](cattn_split_prefill_chunks_args_t a, cattn_status_t code,
                    const char* needle) {
    EXPECT_CATTN_ERROR(cattn_split_prefill_chunks(&a), code, needle);
    EXPECT_EQ(a.num_chunks, kUnwritten);
    EXPECT_EQ(out.bytes(), before);
  };
  EXPECT_CATTN_ERROR(cattn_split_prefill_chunks(nullptr), CATTN_INVALID_ARGUMENT, "args");
  auto a = base();
  a.struct_size = 8;
  expect(a, CATTN_INVALID_ARGUMENT, "struct_size");
  a = base();
  a.seq_lens_cpu = nullptr;
  expect(a, CATTN_INVALID_ARGUMENT, "seq_lens_cpu");
  a = base();
  a.workspace_size = -1;
  expect(a, CATTN_INVALID_ARGUMENT, "workspace_size");
  a = base();
  a.workspace_size = 6;
  expect(a, CATTN_INVALID_ARGUMENT, "seq_lens_cpu");
  HostTensor small({2, 2}, i64());
  a = base();
  a.chunks = small.dl();
  EXPECT_CATTN_ERROR(cattn_split_prefill_chunks(&a), CATTN_INSUFFICIENT_SIZE, "chunks");
  HostTensor three({3, 3}, i64());
  a = base();
  a.chunks = three.dl();
  expect(a, CATTN_INVALID_ARGUMENT, "chunks");
  a = base();
  a.request_offset = INT64_MAX - 2;
  expect(a, CATTN_INVALID_ARGUMENT, "request_offset");
  HostTensor out32({3, 2}, i32());
  a = base();
  a.chunks = out32.dl();
  a.request_offset = INT32_MAX - 2;
  expect(a, CATTN_INVALID_ARGUMENT, "chunks");
  // A chunks view over the lengths' own memory.
  HostTensor both({8}, i64());
  int64_t shape[2] = {3, 2};
  DLTensor alias = *both.dl();
  alias.ndim = 2;
  alias.shape = shape;
  alias.strides = nullptr;
  DLTensor lens = *both.dl();
  int64_t lshape[1] = {5};
  lens.shape = lshape;
  for (int i = 0; i < 5; ++i) both.set(i, 1);
  a = base();
  a.seq_lens_cpu = &lens;
  a.chunks = &alias;
  expect(a, CATTN_INVALID_ARGUMENT, "overlap");
  // A zero-stride output.
  int64_t zs[2] = {0, 1};
  DLTensor bcast = *out.dl();
  bcast.strides = zs;
  a = base();
  a.chunks = &bcast;
  expect(a, CATTN_INVALID_ARGUMENT, "zero stride");
  HostTensor sd = HostTensor::of({1}, i32());
  DLTensor* sdl = sd.dl();
  sdl->device = {kDLCUDA, 0};
  a = base();
  a.seq_lens_cpu = sdl;
  expect(a, CATTN_INVALID_ARGUMENT, "host memory");
}
