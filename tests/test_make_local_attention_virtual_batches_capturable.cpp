// SPDX-License-Identifier: Apache-2.0
// cattn_make_local_attention_virtual_batches_capturable: the virtual batches computed on the device
// from the device query_start_loc and seq_lens. Captured once into a CUDA graph and replayed
// with a new random batch written before every replay (and the same plainly), bit-exact
// against the host plan with the documented padding past V; outputs below the batch's virtual
// batches; and the host-side checks (fake device memory, so they run without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/replay.h"
#include "support/status_matchers.h"
#include "support/step_reference.h"

using namespace cattn_test;

namespace {

struct LocalTensors {
  DLTensor *qsl, *seq_lens, *table, *qsl_out, *seq_out, *computed, *table_out, *counts;
};

cattn_local_attention_capturable_args_t device_args(int64_t chunk, int64_t block_size,
                                                    const LocalTensors& t) {
  cattn_local_attention_capturable_args_t a = CATTN_LOCAL_ATTENTION_CAPTURABLE_ARGS_INIT;
  a.attn_chunk_size = chunk;
  a.block_size = block_size;
  a.query_start_loc = t.qsl;
  a.seq_lens = t.seq_lens;
  a.block_table = t.table;
  a.query_start_loc_out = t.qsl_out;
  a.seq_lens_out = t.seq_out;
  a.num_computed_tokens_out = t.computed;
  a.block_table_out = t.table_out;
  a.counts = t.counts;
  return a;
}

int64_t capacity(int64_t reqs, int64_t tokens, int64_t chunk) {
  return std::min(2 * reqs + (tokens + chunk - 1) / chunk, tokens + reqs);
}

#if defined(CATTN_TEST_WITH_CUDA)
void replay(const TensorLayout& in, const TensorLayout& out, const StepCaps& caps, int64_t chunk,
            int64_t block_size, int64_t cap, uint64_t seed, const std::string& name) {
  std::mt19937_64 g(seed);
  const int64_t pages = chunk / block_size;
  for (bool graph : {true, false}) {
    BufferPtr qsl = buffer({caps.reqs + 1}, in), seq = buffer({caps.reqs}, in),
              table = buffer({caps.reqs, caps.cols}, in);
    TensorLayout table_layout = out;
    table_layout.t = in.t;
    BufferPtr qsl_out = buffer({cap + 1}, out), seq_out = buffer({cap}, out),
              computed = buffer({cap}, out), table_out = buffer({cap, pages}, table_layout),
              counts = buffer({3}, out);
    const LocalTensors t{qsl->dl(),     seq->dl(),      table->dl(),     qsl_out->dl(),
                         seq_out->dl(), computed->dl(), table_out->dl(), counts->dl()};
    const cattn_local_attention_capturable_args_t base = device_args(chunk, block_size, t);
    StepBatch b;
    run_steps(
        graph, 24,
        [&](cudaStream_t s) {
          cattn_local_attention_capturable_args_t a = base;
          a.stream = reinterpret_cast<cattn_stream_t>(s);
          return cattn_make_local_attention_virtual_batches_capturable(&a);
        },
        [&](int step) {
          b = random_step(g, caps, {}, step);
          qsl->write(b.qsl);
          seq->write(b.seq_lens);
          table->write(b.table);
          for (BufferPtr* p : {&qsl_out, &seq_out, &computed, &table_out, &counts}) (*p)->reset();
        },
        [&](int, const std::string& where) {
          // The host plan at a capacity that holds the batch, cut to the outputs' capacity.
          const LocalExpected e =
              expected_local(b, chunk, block_size, capacity(b.reqs, b.qsl.back(), chunk));
          const size_t n = static_cast<size_t>(cap);
          EXPECT_EQ(qsl_out->read(), padded(e.qsl, n + 1, e.qsl.back())) << where;
          EXPECT_EQ(seq_out->read(), padded(e.seq_lens, n, 0)) << where;
          EXPECT_EQ(computed->read(), padded(e.computed, n, 0)) << where;
          EXPECT_EQ(table_out->read(), padded(e.table, n * pages, 0)) << where;
          EXPECT_EQ(counts->read(),
                    (std::vector<int64_t>{e.virtual_batches, e.max_query_len, e.max_seq_len}))
              << where << " counts";
          return 3 * cap + 1 + cap * pages + 3;
        },
        name);
  }
}
#endif

}  // namespace

TEST(make_local_attention_virtual_batches_capturable_gpu, ReplaysNewBatches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  replay({i32()}, {i32()}, {40, 900, 12, 0}, 16, 4, capacity(40, 900, 16), 1, "int32, C 16");
  replay({i64()}, {i64()}, {40, 900, 30, 0}, 64, 16, capacity(40, 900, 64), 2, "int64, C 64");
  replay({i64(), 2, 1}, {i32(), 3, 1}, {13, 400, 5, 0}, 8, 8, capacity(13, 400, 8) + 7, 3,
         "strided, longer outputs");
  replay({i32()}, {i64()}, {1, 300, 3, 0}, 4, 2, capacity(1, 300, 4), 4, "one request");
  // A chunk of 1: every query token its own virtual batch, the token bound the smaller one.
  replay({i32()}, {i32()}, {20, 120, 4, 0}, 1, 1, capacity(20, 120, 1), 5, "C 1");
#endif
}

// 4-byte tables with aligned rows are gathered four columns at a time: windows that start at
// every column modulo 4, windows capped at the row's end, and the layouts that must fall back
// to element copies (a table 4 bytes off its alignment, output rows of 129 entries) or keep the
// vectors with padded rows (132 entries).
TEST(make_local_attention_virtual_batches_capturable_gpu, WideTablesInEveryAlignment) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const StepCaps caps{24, 3000, 300, 0};
  const int64_t cap = capacity(24, 3000, 512);
  replay({i32()}, {i32()}, caps, 512, 4, cap, 7, "128 pages, aligned rows");
  replay({i32(), 1, 1}, {i32()}, caps, 512, 4, cap, 8, "128 pages, table off by 4 bytes");
  replay({i32()}, {i32(), 1, 0, 4}, caps, 512, 4, cap, 9, "128 pages, output rows of 132");
  replay({i32()}, {i32(), 1, 0, 1}, caps, 512, 4, cap, 10, "128 pages, output rows of 129");
  replay({i32()}, {i32()}, {3, 3000, 1100, 0}, 4096, 4, capacity(3, 3000, 4096), 11,
         "1024 pages, two segments a row");
#endif
}

TEST(make_local_attention_virtual_batches_capturable_gpu, ShortOutputsKeepTheFirstVirtualBatches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  replay({i32()}, {i32()}, {30, 900, 6, 0}, 8, 4, 21, 6, "outputs of 21 virtual batches");
#endif
}

TEST(make_local_attention_virtual_batches_capturable_gpu, ChecksArgumentsOnTheHost) {
  HostTensor q = HostTensor::of({0, 3, 5}, i32()), s = HostTensor::of({7, 2}, i32()),
             bt({2, 4}, i32()), qo({9}, i32()), so({8}, i32()), co({8}, i32()),
             to({8, 2}, i32()), cn({3}, i64());
  DLTensor q_d = fake_cuda(q), s_d = fake_cuda(s), bt_d = fake_cuda(bt), qo_d = fake_cuda(qo),
           so_d = fake_cuda(so), co_d = fake_cuda(co), to_d = fake_cuda(to), cn_d = fake_cuda(cn);
  const LocalTensors good{&q_d, &s_d, &bt_d, &qo_d, &so_d, &co_d, &to_d, &cn_d};
  const auto before = so.bytes();
  auto expect_error = [&](const cattn_local_attention_capturable_args_t& a, cattn_status_t code,
                          const char* needle) {
    EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches_capturable(&a), code, needle);
    EXPECT_EQ(so.bytes(), before);
  };
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches_capturable(nullptr),
                     CATTN_INVALID_ARGUMENT, "args");
  expect_error(device_args(0, 1, good), CATTN_INVALID_ARGUMENT, "args->attn_chunk_size");
  expect_error(device_args(4, 0, good), CATTN_INVALID_ARGUMENT, "args->block_size");
  expect_error(device_args(4, 3, good), CATTN_INVALID_ARGUMENT, "does not divide");
  LocalTensors t = good;
  t.qsl = nullptr;
  expect_error(device_args(4, 2, t), CATTN_INVALID_ARGUMENT, "args->query_start_loc");
  HostTensor q4 = HostTensor::of({0, 1, 2, 3}, i32()), bt3({3, 4}, i32()), bt0({2, 0}, i32()),
             qo_short({8}, i32()), co_short({7}, i32()), to_wide({8, 3}, i32()),
             to_i64({8, 2}, i64()), cn2({2}, i32());
  DLTensor q4_d = fake_cuda(q4), bt3_d = fake_cuda(bt3), bt0_d = fake_cuda(bt0),
           qo_short_d = fake_cuda(qo_short), co_short_d = fake_cuda(co_short),
           to_wide_d = fake_cuda(to_wide), to_i64_d = fake_cuda(to_i64), cn2_d = fake_cuda(cn2);
  DLTensor s_on_output = s_d;  // seq_lens read from seq_lens_out's memory
  s_on_output.data = so_d.data;
  const struct {
    DLTensor* LocalTensors::*field;
    DLTensor* value;
    cattn_status_t code;
    const char* needle;
  } cases[] = {
      {&LocalTensors::qsl, &q4_d, CATTN_INVALID_ARGUMENT, "args->query_start_loc"},
      {&LocalTensors::table, &bt3_d, CATTN_INVALID_ARGUMENT, "args->block_table"},
      {&LocalTensors::table, &bt0_d, CATTN_INVALID_ARGUMENT, "has no columns"},
      {&LocalTensors::qsl_out, &qo_short_d, CATTN_INSUFFICIENT_SIZE, "args->query_start_loc_out"},
      {&LocalTensors::computed, &co_short_d, CATTN_INVALID_ARGUMENT,
       "args->num_computed_tokens_out"},
      {&LocalTensors::table_out, &to_wide_d, CATTN_INVALID_ARGUMENT, "args->block_table_out"},
      {&LocalTensors::table_out, &to_i64_d, CATTN_INVALID_ARGUMENT, "args->block_table_out"},
      {&LocalTensors::counts, &cn2_d, CATTN_INSUFFICIENT_SIZE, "args->counts"},
      {&LocalTensors::seq_lens, &s_on_output, CATTN_INVALID_ARGUMENT, "overlaps an input"},
      {&LocalTensors::computed, &so_d, CATTN_INVALID_ARGUMENT, "overlaps another output"},
      {&LocalTensors::seq_lens, s.dl(), CATTN_INVALID_ARGUMENT, "different device"},
  };
  for (const auto& c : cases) {
    LocalTensors e = good;
    e.*c.field = c.value;
    SCOPED_TRACE(c.needle);
    expect_error(device_args(4, 2, e), c.code, c.needle);
  }
  // Host tensors: the plan calls serve them.
  const LocalTensors host{q.dl(), s.dl(), bt.dl(), qo.dl(), so.dl(), co.dl(), to.dl(), cn.dl()};
  expect_error(device_args(4, 2, host), CATTN_INVALID_ARGUMENT, "is not device memory");
#if !defined(CATTN_TEST_WITH_CUDA)
  expect_error(device_args(4, 2, good), CATTN_NOT_SUPPORTED, "CPU-only");
#endif
}
