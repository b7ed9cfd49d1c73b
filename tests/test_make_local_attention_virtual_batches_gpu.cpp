// SPDX-License-Identifier: Apache-2.0
// The local-attention plan on the device: cattn_local_attention_plan_fill with a device block
// table (gathered on the device, device copies of query_start_loc and seq_lens uploaded from
// the plan, host mirrors written on the host) and cattn_local_attention_plan_make_block_table,
// both bit-exact against the host implementation, three ways (default stream, non-blocking
// stream, graph replay), with poisoned outputs whose padding must stay untouched; plans of more
// virtual batches than one launch's parameters hold (several launches); and the host-side
// checks that still guard device calls.
#include <gtest/gtest.h>

#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

// The number of virtual batches one launch carries (kernels/param_chunk.h); a plan above it
// needs several launches.
constexpr int64_t kOneLaunch = 3840;

HostTensor poisoned(std::vector<int64_t> shape, const TensorLayout& l) {
  return HostTensor(std::move(shape), l.t, l.step, l.offset, l.inner_pad);
}

struct Case {
  std::vector<int64_t> q, s;  // the planned batch's query_start_loc_cpu and seq_lens_cpu
  int64_t cols = 8;           // block table columns at plan time
  int64_t chunk = 4, block_size = 2;
  TensorLayout table;               // the block table (and so the gathered one's dtype)
  TensorLayout out_table;           // the gathered table's layout (dtype: table's)
  TensorLayout mirrors;             // out query_start_loc_cpu, seq_lens_cpu, num_computed_tokens_cpu
  TensorLayout device_vectors;      // out query_start_loc, seq_lens
  bool device_copies = true;
  bool slots = true;          // a device slot_mapping to pass through
  int64_t extra_cols = 3;     // the table make_block_table gathers from is this much wider
};

std::vector<int64_t> table_values(std::mt19937_64& g, int64_t n, bool wide) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v)
    x = wide && g() % 3 == 0 ? static_cast<int64_t>(g() >> 2) - (int64_t{1} << 60)
                             : static_cast<int64_t>(g() % 1000000);
  return v;
}

// The outputs of one fill.
struct Filled {
  HostTensor qsl_cpu, seq_lens_cpu, computed, table, qsl, seq_lens;
  Filled(const Case& c, int64_t v, int64_t p) {
    TensorLayout t = c.out_table;
    t.t = c.table.t;
    qsl_cpu = poisoned({v + 1}, c.mirrors);
    seq_lens_cpu = poisoned({v}, c.mirrors);
    computed = poisoned({v}, c.mirrors);
    table = poisoned({v, p}, t);
    qsl = poisoned({v + 1}, c.device_vectors);
    seq_lens = poisoned({v}, c.device_vectors);
  }
};

void expect_fill_scalars(const cattn_common_attn_metadata_t& got,
                         const cattn_common_attn_metadata_t& want, DLTensor* slots,
                         const char* way) {
  EXPECT_EQ(got.num_reqs, want.num_reqs) << way;
  EXPECT_EQ(got.num_actual_tokens, want.num_actual_tokens) << way;
  EXPECT_EQ(got.max_query_len, want.max_query_len) << way;
  EXPECT_EQ(got.max_seq_len, want.max_seq_len) << way;
  EXPECT_EQ(got.causal, 1) << way;
  EXPECT_EQ(got.reserved0, 0) << way;
  EXPECT_EQ(got.logits_indices_padded, nullptr) << way;
  EXPECT_EQ(got.num_logits_indices, 0) << way;
  EXPECT_EQ(got.slot_mapping, slots) << way;
}

void check_case(const Case& c, std::mt19937_64& g) {
  const int64_t b = static_cast<int64_t>(c.s.size());
  HostTensor qsl_cpu = HostTensor::of(c.q, i64()), seq_lens_cpu = HostTensor::of(c.s, i32());
  const bool wide = c.table.t.bits == 64;
  HostTensor table = laid_out(table_values(g, b * c.cols, wide), {b, c.cols}, c.table);
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc_cpu = qsl_cpu.dl();
  in.seq_lens_cpu = seq_lens_cpu.dl();
  in.block_table_tensor = table.dl();
  in.num_reqs = b;
  in.num_actual_tokens = c.q.back() - c.q.front();
  cattn_local_attention_args_t pa = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  pa.attn_chunk_size = c.chunk;
  pa.block_size = c.block_size;
  pa.metadata = &in;
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&pa));
  cattn_local_attention_plan_t* const plan = pa.plan;
  int64_t v = 0, p = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &v, &p));

  // fill: the host result, then the device one.
  Filled want(c, v, p);
  cattn_common_attn_metadata_t want_md = CATTN_COMMON_ATTN_METADATA_INIT;
  want_md.query_start_loc_cpu = want.qsl_cpu.dl();
  want_md.seq_lens_cpu = want.seq_lens_cpu.dl();
  want_md.num_computed_tokens_cpu = want.computed.dl();
  want_md.block_table_tensor = want.table.dl();
  want_md.query_start_loc = c.device_copies ? want.qsl.dl() : nullptr;
  want_md.seq_lens = c.device_copies ? want.seq_lens.dl() : nullptr;
  cattn_local_attention_fill_args_t fa = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  fa.metadata = &in;
  fa.out = &want_md;
  ASSERT_CATTN_OK(cattn_local_attention_plan_fill(plan, &fa));

  Filled got(c, v, p);
  const Filled poison(c, v, p);
  HostTensor slots = HostTensor::of({1, 2, 3}, i64());
  DeviceTensor table_d(table), out_table_d(got.table), qsl_d(got.qsl), seq_lens_d(got.seq_lens),
      slots_d(slots);
  cattn_common_attn_metadata_t dev_in = in;
  dev_in.block_table_tensor = table_d.dl();
  dev_in.slot_mapping = c.slots ? slots_d.dl() : nullptr;
  cattn_common_attn_metadata_t got_md;
  run_three_ways(
      [&](cudaStream_t s) {
        cattn_local_attention_fill_args_t a = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
        a.metadata = &dev_in;
        a.out = &got_md;
        a.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_local_attention_plan_fill(plan, &a);
      },
      [&] {
        got.qsl_cpu.raw() = poison.qsl_cpu.bytes();
        got.seq_lens_cpu.raw() = poison.seq_lens_cpu.bytes();
        got.computed.raw() = poison.computed.bytes();
        got.table.raw() = poison.table.bytes();
        got.qsl.raw() = poison.qsl.bytes();
        got.seq_lens.raw() = poison.seq_lens.bytes();
        for (DeviceTensor* d : {&out_table_d, &qsl_d, &seq_lens_d}) d->upload();
        got_md = CATTN_COMMON_ATTN_METADATA_INIT;
        got_md.query_start_loc_cpu = got.qsl_cpu.dl();
        got_md.seq_lens_cpu = got.seq_lens_cpu.dl();
        got_md.num_computed_tokens_cpu = got.computed.dl();
        got_md.block_table_tensor = out_table_d.dl();
        got_md.query_start_loc = c.device_copies ? qsl_d.dl() : nullptr;
        got_md.seq_lens = c.device_copies ? seq_lens_d.dl() : nullptr;
      },
      [&](const char* way) {
        for (DeviceTensor* d : {&out_table_d, &qsl_d, &seq_lens_d}) d->download();
        EXPECT_TRUE(got.table.bytes() == want.table.bytes()) << way;
        EXPECT_TRUE(got.qsl_cpu.bytes() == want.qsl_cpu.bytes()) << way;
        EXPECT_TRUE(got.seq_lens_cpu.bytes() == want.seq_lens_cpu.bytes()) << way;
        EXPECT_TRUE(got.computed.bytes() == want.computed.bytes()) << way;
        if (c.device_copies) {
          EXPECT_TRUE(got.qsl.bytes() == want.qsl.bytes()) << way;
          EXPECT_TRUE(got.seq_lens.bytes() == want.seq_lens.bytes()) << way;
        } else {  // not asked for: not written
          EXPECT_TRUE(got.qsl.bytes() == poison.qsl.bytes()) << way;
          EXPECT_TRUE(got.seq_lens.bytes() == poison.seq_lens.bytes()) << way;
        }
        expect_fill_scalars(got_md, want_md, dev_in.slot_mapping, way);
        EXPECT_EQ(got_md.block_table_tensor, out_table_d.dl()) << way;
      });

  // make_block_table from another, wider table in its own layout.
  TensorLayout other = c.out_table;
  other.t = c.table.t;
  HostTensor table2 = laid_out(table_values(g, b * (c.cols + c.extra_cols), wide),
                           {b, c.cols + c.extra_cols}, other);
  HostTensor want_g = poisoned({v, p}, c.table), got_g = poisoned({v, p}, c.table);
  ASSERT_CATTN_OK(cattn_local_attention_plan_make_block_table(plan, table2.dl(), want_g.dl(), nullptr));
  DeviceTensor table2_d(table2);
  PoisonedOutput g_d(got_g);
  run_three_ways(
      [&](cudaStream_t s) {
        return cattn_local_attention_plan_make_block_table(plan, table2_d.dl(), g_d.dl(),
                                                           reinterpret_cast<cattn_stream_t>(s));
      },
      {{&g_d, &want_g}});
  cattn_local_attention_plan_destroy(plan);
}

TensorLayout random_layout(std::mt19937_64& g) {
  TensorLayout l;
  l.t = g() % 2 ? i32() : i64();
  switch (g() % 3) {
    case 0: break;
    case 1: l.step = 2; l.offset = 1; break;
    default: l.inner_pad = 1 + static_cast<int64_t>(g() % 3); l.offset = 2; break;
  }
  return l;
}

// A 1-D layout: inner padding means nothing for vectors.
TensorLayout random_vector_layout(std::mt19937_64& g) {
  TensorLayout l = random_layout(g);
  if (l.inner_pad > 0) {
    l.inner_pad = 0;
    l.step = 3;
  }
  return l;
}

std::vector<int64_t> cumulative(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> q{0};
  for (int64_t l : lengths) q.push_back(q.back() + l);
  return q;
}

}  // namespace
#endif

TEST(make_local_attention_virtual_batches_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(23);
  {
    SCOPED_TRACE("three requests, chunk 4, block 2");
    Case c;
    c.q = {0, 4, 14, 19};
    c.s = {6, 17, 9};
    c.cols = 9;
    check_case(c, g);
  }
  {
    SCOPED_TRACE("one request, int64 everywhere, strided");
    Case c;
    c.q = {0, 13};
    c.s = {21};
    c.cols = 6;  // later pages clip to the last column
    c.table = {i64(), 2, 1};
    c.out_table = {i64(), 1, 0, 2};
    c.mirrors = {i64(), 2, 1};
    c.device_vectors = {i64(), 3, 2};
    check_case(c, g);
  }
  {
    SCOPED_TRACE("zero-length requests (one with seq_len 0: pages from column 0)");
    Case c;
    c.q = {0, 0, 5, 5, 6};
    c.s = {0, 9, 7, 1};
    c.chunk = 8;
    c.block_size = 4;
    c.device_vectors = {i64()};
    check_case(c, g);
  }
  {
    SCOPED_TRACE("decode only, no device copies, no slot mapping");
    Case c;
    c.q = {0, 1, 2, 3};
    c.s = {5, 9, 1};
    c.cols = 3;
    c.device_copies = false;
    c.slots = false;
    check_case(c, g);
  }
  {
    SCOPED_TRACE("chunk of one block");
    Case c;
    c.q = {0, 7, 9};
    c.s = {7, 30};
    c.chunk = 3;
    c.block_size = 3;
    c.cols = 10;
    c.table = {i64()};
    check_case(c, g);
  }
  for (int iter = 0; iter < 30; ++iter) {
    Case c;
    const int64_t b = 1 + static_cast<int64_t>(g() % (iter < 20 ? 12 : 400));
    std::vector<int64_t> lengths;
    for (int64_t i = 0; i < b; ++i) {
      const int kind = static_cast<int>(g() % 4);
      const int64_t q = kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int64_t>(g() % 90);
      lengths.push_back(q);
      c.s.push_back(q + (g() % 4 == 0 ? 0 : static_cast<int64_t>(g() % 100)));
    }
    c.q = cumulative(lengths);
    c.block_size = 1 + static_cast<int64_t>(g() % 8);
    c.chunk = c.block_size * (1 + static_cast<int64_t>(g() % 6));
    c.cols = 1 + static_cast<int64_t>(g() % 60);
    c.table = random_layout(g);
    c.out_table = random_layout(g);
    c.mirrors = random_vector_layout(g);
    c.device_vectors = random_vector_layout(g);
    c.device_copies = g() % 4 != 0;
    c.slots = g() % 2 == 0;
    c.extra_cols = static_cast<int64_t>(g() % 4);
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c, g);
  }
#endif
}

TEST(make_local_attention_virtual_batches_gpu, ManyVirtualBatchesTakeSeveralLaunches) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(29);
  for (int64_t cols : {int64_t{64}, int64_t{10001}}) {
    // One request of 20000 query tokens in chunks of 4: 5000 virtual batches, pages from 0 to
    // 9998 (clipped to the last column when the table is narrower).
    SCOPED_TRACE("one long request, cols " + std::to_string(cols));
    Case c;
    c.q = {0, 20000};
    c.s = {20000};
    c.cols = cols;
    c.table = {i32(), 1, 1};
    c.mirrors = {i32(), 2};
    c.device_vectors = {i64(), 1, 3};
    check_case(c, g);
  }
  {
    // Many requests, several virtual batches each, crossing launch boundaries mid-request.
    SCOPED_TRACE("many requests");
    Case c;
    std::vector<int64_t> lengths;
    for (int i = 0; i < 1500; ++i) {
      const int64_t q = static_cast<int64_t>(g() % 40);
      lengths.push_back(q);
      c.s.push_back(q + static_cast<int64_t>(g() % 50));
    }
    c.q = cumulative(lengths);
    c.chunk = 8;
    c.block_size = 2;
    c.cols = 48;
    c.table = {i64(), 1, 0, 2};
    c.out_table = {i64(), 2, 1};
    c.device_vectors = {i32(), 2};
    check_case(c, g);
  }
  {
    // Sanity of the sizes above: the plan really is larger than one launch's parameters.
    HostTensor q = HostTensor::of({0, 20000}, i64()), s = HostTensor::of({20000}, i64());
    HostTensor t = HostTensor::of(std::vector<int64_t>(64, 0), i32(), {1, 64});
    cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
    in.query_start_loc_cpu = q.dl();
    in.seq_lens_cpu = s.dl();
    in.block_table_tensor = t.dl();
    in.num_actual_tokens = 20000;
    cattn_local_attention_args_t pa = CATTN_LOCAL_ATTENTION_ARGS_INIT;
    pa.attn_chunk_size = 4;
    pa.block_size = 2;
    pa.metadata = &in;
    ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&pa));
    int64_t v = 0;
    ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(pa.plan, &v, nullptr));
    EXPECT_EQ(v, 5000);
    EXPECT_GT(v, kOneLaunch);
    cattn_local_attention_plan_destroy(pa.plan);
  }
#endif
}

TEST(make_local_attention_virtual_batches_gpu, HostChecksStillGuardDeviceCalls) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // Everything a device call writes comes from the plan, so its range checks happen on the
  // host before any launch: a failed call leaves every output, device or host, untouched.
  const int64_t q = int64_t{1} << 32;
  HostTensor qsl_cpu = HostTensor::of({0, q}, i64()), seq_lens_cpu = HostTensor::of({q}, i64());
  HostTensor table = HostTensor::of({0, 1, 2, 3}, i32(), {1, 4});
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc_cpu = qsl_cpu.dl();
  in.seq_lens_cpu = seq_lens_cpu.dl();
  in.block_table_tensor = table.dl();
  cattn_local_attention_args_t pa = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  pa.attn_chunk_size = int64_t{1} << 40;
  pa.block_size = int64_t{1} << 38;
  pa.metadata = &in;
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&pa));
  cattn_local_attention_plan_t* const plan = pa.plan;

  HostTensor out_qsl_cpu({2}, i64()), out_seq_lens_cpu({1}, i64()), computed({1}, i64());
  HostTensor out_table({1, 4}, i32()), out_qsl({2}, i32()), out_seq_lens({1}, i64());
  const auto before = std::vector<std::vector<uint8_t>>{
      out_qsl_cpu.bytes(), out_seq_lens_cpu.bytes(), computed.bytes(),
      out_table.bytes(),   out_qsl.bytes(),          out_seq_lens.bytes()};
  DeviceTensor table_d(table), out_table_d(out_table), out_qsl_d(out_qsl),
      out_seq_lens_d(out_seq_lens);
  cattn_common_attn_metadata_t dev_in = in;
  dev_in.block_table_tensor = table_d.dl();
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  out.query_start_loc_cpu = out_qsl_cpu.dl();
  out.seq_lens_cpu = out_seq_lens_cpu.dl();
  out.num_computed_tokens_cpu = computed.dl();
  out.block_table_tensor = out_table_d.dl();
  out.query_start_loc = out_qsl_d.dl();  // int32 cannot hold 2^32
  out.seq_lens = out_seq_lens_d.dl();
  cattn_local_attention_fill_args_t fa = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  fa.metadata = &dev_in;
  fa.out = &out;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &fa), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc cannot hold");
  // A host tensor among the device ones.
  out.query_start_loc = nullptr;
  out.seq_lens = out_seq_lens.dl();
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &fa), CATTN_INVALID_ARGUMENT,
                     "different device");
  out.seq_lens = out_seq_lens_d.dl();
  // The gathered table may not overlap its source on the device either.
  out.block_table_tensor = table_d.dl();
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &fa), CATTN_INVALID_ARGUMENT,
                     "overlaps");
  EXPECT_CATTN_ERROR(
      cattn_local_attention_plan_make_block_table(plan, table_d.dl(), table_d.dl(), nullptr),
      CATTN_INVALID_ARGUMENT, "overlaps");
  out.block_table_tensor = out_table_d.dl();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (DeviceTensor* d : {&out_table_d, &out_qsl_d, &out_seq_lens_d}) d->download();
  EXPECT_EQ((std::vector<std::vector<uint8_t>>{out_qsl_cpu.bytes(), out_seq_lens_cpu.bytes(),
                                                computed.bytes(), out_table.bytes(),
                                                out_qsl.bytes(), out_seq_lens.bytes()}),
            before);
  // Fixed (no int32 device copy), the call goes through.
  ASSERT_CATTN_OK(cattn_local_attention_plan_fill(plan, &fa));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (DeviceTensor* d : {&out_table_d, &out_qsl_d, &out_seq_lens_d}) d->download();
  EXPECT_EQ(out_qsl_cpu.values(), (std::vector<int64_t>{0, q}));
  EXPECT_EQ(out_seq_lens_cpu.values(), (std::vector<int64_t>{q}));
  EXPECT_EQ(computed.values(), (std::vector<int64_t>{0}));
  EXPECT_EQ(out_seq_lens.values(), (std::vector<int64_t>{q}));
  EXPECT_EQ(out_table.values(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(out_qsl.bytes(), before[4]);  // not asked for: untouched
  cattn_local_attention_plan_destroy(plan);
#endif
}
