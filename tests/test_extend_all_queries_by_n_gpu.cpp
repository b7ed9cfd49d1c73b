// SPDX-License-Identifier: Apache-2.0
// extend_all_queries_by_n on the device: query_start_loc and seq_lens extended by one launch,
// bit-exact against the host implementation, three ways (default stream, non-blocking stream,
// graph replay), out of place and in place, with poisoned outputs whose padding must stay
// untouched; the host mirrors updated on the host in the same call; the documented wrap of
// device values that do not fit an int32 output; and the host-side checks that still guard
// device calls.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "cattn.h"
#include "support/gpu_ways.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

// Stand-ins for the fields the call copies without reading: only their addresses matter.
DLTensor g_block_table{}, g_num_computed{}, g_logits{}, g_old_slots{};

struct Case {
  std::vector<int64_t> q, s;  // query_start_loc [B + 1], seq_lens [B]
  int64_t n = 1;
  DLDataType in_t = i32(), out_t = i32();  // out_t is ignored in place
  int64_t step = 1;
  bool mirrors = true;
  bool in_place = false;
  bool same_struct = false;  // in place only: out is the metadata struct itself
  bool slots = false;        // pass a device new_slot_mapping
};

// The tensors of one call. Main tensors are uploaded to the device; mirrors stay on the host.
struct Tensors {
  HostTensor qsl, lens, qsl_cpu, lens_cpu;              // inputs
  HostTensor out_qsl, out_lens, out_qsl_cpu, out_lens_cpu;  // outputs (unused in place)

  explicit Tensors(const Case& c) {
    const int64_t b = static_cast<int64_t>(c.s.size());
    const int64_t off = c.step > 1 ? 1 : 0;
    qsl = HostTensor::of(c.q, c.in_t, {}, c.step, off);
    lens = HostTensor::of(c.s, c.in_t, {}, c.step, 2 * off);
    qsl_cpu = HostTensor::of(c.q, c.in_t, {}, c.step);
    lens_cpu = HostTensor::of(c.s, c.in_t, {}, c.step, off);
    out_qsl = HostTensor({b + 1}, c.out_t, c.step, off);
    out_lens = HostTensor({b}, c.out_t, c.step);
    out_qsl_cpu = HostTensor({b + 1}, c.out_t, c.step, 2 * off);
    out_lens_cpu = HostTensor({b}, c.out_t, c.step);
  }
  HostTensor& result_qsl(const Case& c) { return c.in_place ? qsl : out_qsl; }
  HostTensor& result_lens(const Case& c) { return c.in_place ? lens : out_lens; }
  HostTensor& result_qsl_cpu(const Case& c) { return c.in_place ? qsl_cpu : out_qsl_cpu; }
  HostTensor& result_lens_cpu(const Case& c) { return c.in_place ? lens_cpu : out_lens_cpu; }
};

cattn_common_attn_metadata_t input_struct(const Case& c, DLTensor* qsl, DLTensor* lens,
                                          DLTensor* qsl_cpu, DLTensor* lens_cpu) {
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl;
  md.seq_lens = lens;
  md.query_start_loc_cpu = c.mirrors ? qsl_cpu : nullptr;
  md.seq_lens_cpu = c.mirrors ? lens_cpu : nullptr;
  md.num_computed_tokens_cpu = &g_num_computed;
  md.block_table_tensor = &g_block_table;
  md.slot_mapping = &g_old_slots;
  md.logits_indices_padded = &g_logits;
  md.num_reqs = static_cast<int64_t>(c.s.size());
  md.num_actual_tokens = c.q.back() - c.q.front();
  md.max_query_len = 3;
  md.max_seq_len = 11;
  md.num_logits_indices = 2;
  md.causal = 0;
  return md;
}

cattn_common_attn_metadata_t output_struct(const Case& c, DLTensor* qsl, DLTensor* lens,
                                           DLTensor* qsl_cpu, DLTensor* lens_cpu) {
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = qsl;
  md.seq_lens = lens;
  md.query_start_loc_cpu = c.mirrors ? qsl_cpu : nullptr;
  md.seq_lens_cpu = c.mirrors ? lens_cpu : nullptr;
  return md;
}

void expect_same_scalars(const cattn_common_attn_metadata_t& got,
                         const cattn_common_attn_metadata_t& want, const char* way) {
  EXPECT_EQ(got.num_reqs, want.num_reqs) << way;
  EXPECT_EQ(got.num_actual_tokens, want.num_actual_tokens) << way;
  EXPECT_EQ(got.max_query_len, want.max_query_len) << way;
  EXPECT_EQ(got.max_seq_len, want.max_seq_len) << way;
  EXPECT_EQ(got.num_logits_indices, want.num_logits_indices) << way;
  EXPECT_EQ(got.causal, want.causal) << way;
  EXPECT_EQ(got.reserved0, 0) << way;
  EXPECT_EQ(got.block_table_tensor, &g_block_table) << way;
  EXPECT_EQ(got.num_computed_tokens_cpu, &g_num_computed) << way;
  EXPECT_EQ(got.logits_indices_padded, &g_logits) << way;
}

void check_case(const Case& c) {
  // The host result, computed on copies laid out exactly like the device call's tensors.
  Tensors want(c);
  {
    cattn_common_attn_metadata_t in = input_struct(c, want.qsl.dl(), want.lens.dl(),
                                                   want.qsl_cpu.dl(), want.lens_cpu.dl());
    cattn_common_attn_metadata_t out =
        c.in_place ? output_struct(c, want.qsl.dl(), want.lens.dl(), want.qsl_cpu.dl(),
                                   want.lens_cpu.dl())
                   : output_struct(c, want.out_qsl.dl(), want.out_lens.dl(),
                                   want.out_qsl_cpu.dl(), want.out_lens_cpu.dl());
    cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
    a.metadata = &in;
    a.out = c.same_struct ? &in : &out;
    a.n = c.n;
    ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  }
  cattn_common_attn_metadata_t want_md;
  {
    // The scalars of a host call (struct fields do not depend on where the tensors live).
    cattn_common_attn_metadata_t in = input_struct(c, nullptr, nullptr, nullptr, nullptr);
    want_md = in;
    want_md.num_actual_tokens += c.n * static_cast<int64_t>(c.s.size());
    want_md.max_query_len += c.n;
    want_md.max_seq_len += c.n;
  }

  Tensors got(c);
  const Tensors pristine(c);
  DeviceTensor qsl_d(got.qsl), lens_d(got.lens), out_qsl_d(got.out_qsl), out_lens_d(got.out_lens);
  HostTensor slots = HostTensor::of({4, 5, 6}, i64());
  DeviceTensor slots_d(slots);
  DLTensor* const new_slots = c.slots ? slots_d.dl() : nullptr;
  cattn_common_attn_metadata_t in_md, out_md;
  run_three_ways(
      [&](cudaStream_t s) {
        cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
        a.metadata = &in_md;
        a.out = c.same_struct ? &in_md : &out_md;
        a.n = c.n;
        a.new_slot_mapping = new_slots;
        a.stream = reinterpret_cast<cattn_stream_t>(s);
        return cattn_extend_all_queries_by_n(&a);
      },
      // Everything back to the pristine inputs and poisoned outputs: in place, the previous
      // way's result is the next one's input otherwise.
      [&] {
        got.qsl.raw() = pristine.qsl.bytes();
        got.lens.raw() = pristine.lens.bytes();
        got.qsl_cpu.raw() = pristine.qsl_cpu.bytes();
        got.lens_cpu.raw() = pristine.lens_cpu.bytes();
        got.out_qsl.raw() = pristine.out_qsl.bytes();
        got.out_lens.raw() = pristine.out_lens.bytes();
        got.out_qsl_cpu.raw() = pristine.out_qsl_cpu.bytes();
        got.out_lens_cpu.raw() = pristine.out_lens_cpu.bytes();
        for (DeviceTensor* d : {&qsl_d, &lens_d, &out_qsl_d, &out_lens_d}) d->upload();
        in_md = input_struct(c, qsl_d.dl(), lens_d.dl(), got.qsl_cpu.dl(), got.lens_cpu.dl());
        out_md = c.in_place ? output_struct(c, qsl_d.dl(), lens_d.dl(), got.qsl_cpu.dl(),
                                            got.lens_cpu.dl())
                            : output_struct(c, out_qsl_d.dl(), out_lens_d.dl(),
                                            got.out_qsl_cpu.dl(), got.out_lens_cpu.dl());
      },
      [&](const char* way) {
        for (DeviceTensor* d : {&qsl_d, &lens_d, &out_qsl_d, &out_lens_d}) d->download();
        EXPECT_TRUE(got.result_qsl(c).bytes() == want.result_qsl(c).bytes()) << way;
        EXPECT_TRUE(got.result_lens(c).bytes() == want.result_lens(c).bytes()) << way;
        EXPECT_TRUE(got.result_qsl_cpu(c).bytes() == want.result_qsl_cpu(c).bytes()) << way;
        EXPECT_TRUE(got.result_lens_cpu(c).bytes() == want.result_lens_cpu(c).bytes()) << way;
        if (!c.in_place) {  // the inputs are read only
          EXPECT_TRUE(got.qsl.bytes() == pristine.qsl.bytes()) << way;
          EXPECT_TRUE(got.lens.bytes() == pristine.lens.bytes()) << way;
          EXPECT_TRUE(got.qsl_cpu.bytes() == pristine.qsl_cpu.bytes()) << way;
          EXPECT_TRUE(got.lens_cpu.bytes() == pristine.lens_cpu.bytes()) << way;
        }
        const cattn_common_attn_metadata_t& md = c.same_struct ? in_md : out_md;
        expect_same_scalars(md, want_md, way);
        EXPECT_EQ(md.slot_mapping, new_slots) << way;
        EXPECT_EQ(md.query_start_loc, c.in_place ? qsl_d.dl() : out_qsl_d.dl()) << way;
      });
}

std::vector<int64_t> cumulative(const std::vector<int64_t>& lengths, int64_t first) {
  std::vector<int64_t> q{first};
  for (int64_t l : lengths) q.push_back(q.back() + l);
  return q;
}

}  // namespace
#endif

TEST(extend_all_queries_by_n_gpu, MatchesHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  {
    SCOPED_TRACE("SPEC-like batch, n = 1");
    check_case({{0, 3, 5, 9}, {7, 2, 10}, 1, i32(), i32()});
  }
  {
    SCOPED_TRACE("empty batch");
    check_case({{0}, {}, 2, i32(), i64()});
    check_case({{0}, {}, 2, i64(), i64(), 2, false});
  }
  {
    SCOPED_TRACE("one request");
    check_case({{0, 5}, {9}, 3, i64(), i32(), 2});
  }
  {
    SCOPED_TRACE("zero-length requests and n = 0");
    check_case({{0, 0, 4, 4, 4}, {0, 6, 3, 0}, 0, i32(), i64()});
    check_case({{0, 0, 4, 4, 4}, {0, 6, 3, 0}, 5, i64(), i32(), 3, false});
  }
  {
    SCOPED_TRACE("decode only");
    check_case({{0, 1, 2, 3}, {10, 1, 4}, 1, i64(), i64(), 1, true, false, false, true});
  }
  {
    SCOPED_TRACE("int64 values beyond int32");
    const int64_t big = int64_t{1} << 40;
    check_case({{big, big + 7, big + 9}, {big + 100, 3}, 1000, i64(), i64(), 2});
  }
  std::mt19937_64 g(7);
  for (int iter = 0; iter < 40; ++iter) {
    Case c;
    const int64_t b = static_cast<int64_t>(g() % (iter < 30 ? 60 : 5000));
    std::vector<int64_t> lengths;
    for (int64_t i = 0; i < b; ++i) {
      const int kind = static_cast<int>(g() % 4);
      lengths.push_back(kind == 0 ? 0 : kind == 1 ? 1 : static_cast<int64_t>(g() % 500));
    }
    c.q = cumulative(lengths, static_cast<int64_t>(g() % 3));
    for (int64_t l : lengths) c.s.push_back(l + static_cast<int64_t>(g() % 1000));
    c.n = static_cast<int64_t>(g() % 4);
    c.in_t = g() % 2 ? i32() : i64();
    c.out_t = g() % 2 ? i32() : i64();
    c.step = 1 + static_cast<int64_t>(g() % 3);
    c.mirrors = g() % 3 != 0;
    c.slots = g() % 2 == 0;
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c);
  }
  {
    SCOPED_TRACE("more requests than one pass of the grid");
    Case c;
    c.q = cumulative(std::vector<int64_t>(300000, 2), 0);
    c.s.assign(300000, 9);
    c.n = 2;
    c.in_t = i64();
    check_case(c);
  }
#endif
}

TEST(extend_all_queries_by_n_gpu, InPlace) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  for (DLDataType t : {i32(), i64()})
    for (int64_t step : {1, 2})
      for (bool mirrors : {true, false})
        for (bool same_struct : {false, true}) {
          SCOPED_TRACE(std::to_string(t.bits) + "-bit, step " + std::to_string(step) +
                       (mirrors ? ", mirrors" : "") + (same_struct ? ", same struct" : ""));
          Case c{{0, 3, 3, 10, 11}, {5, 0, 8, 20}, 2, t, t, step, mirrors, true, same_struct};
          check_case(c);
          c.q = cumulative(std::vector<int64_t>(4000, 3), 1);
          c.s.assign(4000, 6);
          c.n = 1;
          check_case(c);
        }
#endif
}

TEST(extend_all_queries_by_n_gpu, DeviceValuesAreNotRangeChecked) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The host rejects a result that does not fit an int32 output; device values are not read
  // on the host, so the kernel stores the low 32 bits (as documented in the header).
  HostTensor qsl = HostTensor::of({0, 1, 2}, i64());
  HostTensor lens = HostTensor::of({INT32_MAX, 7}, i64());
  HostTensor out_qsl({3}, i32()), out_lens({2}, i32());
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc = qsl.dl();
  in.seq_lens = lens.dl();
  out.query_start_loc = out_qsl.dl();
  out.seq_lens = out_lens.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in;
  a.out = &out;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens");
  DeviceTensor qsl_d(qsl), lens_d(lens), out_qsl_d(out_qsl), out_lens_d(out_lens);
  in.query_start_loc = qsl_d.dl();
  in.seq_lens = lens_d.dl();
  out.query_start_loc = out_qsl_d.dl();
  out.seq_lens = out_lens_d.dl();
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_qsl_d.download();
  out_lens_d.download();
  EXPECT_EQ(out_qsl.values(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(out_lens.values(), (std::vector<int64_t>{INT32_MIN, 8}));
#endif
}

TEST(extend_all_queries_by_n_gpu, HostChecksStillGuardDeviceCalls) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // Mirrors are host memory and are range-checked before the launch: a failing call leaves the
  // device outputs and the mirrors untouched. So do the scalar checks.
  HostTensor qsl = HostTensor::of({0, 2, 5}, i32()), lens = HostTensor::of({4, 6}, i32());
  HostTensor qsl_cpu = HostTensor::of({0, 2, 5}, i32());
  HostTensor lens_cpu = HostTensor::of({4, INT32_MAX}, i32());
  HostTensor out_qsl({3}, i32()), out_lens({2}, i32()), out_qsl_cpu({3}, i32()),
      out_lens_cpu({2}, i32());
  const auto poison3 = out_qsl.bytes(), poison2 = out_lens.bytes();
  DeviceTensor qsl_d(qsl), lens_d(lens), out_qsl_d(out_qsl), out_lens_d(out_lens);
  cattn_common_attn_metadata_t in = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_common_attn_metadata_t out = CATTN_COMMON_ATTN_METADATA_INIT;
  in.query_start_loc = qsl_d.dl();
  in.seq_lens = lens_d.dl();
  in.query_start_loc_cpu = qsl_cpu.dl();
  in.seq_lens_cpu = lens_cpu.dl();
  out.query_start_loc = out_qsl_d.dl();
  out.seq_lens = out_lens_d.dl();
  out.query_start_loc_cpu = out_qsl_cpu.dl();
  out.seq_lens_cpu = out_lens_cpu.dl();
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in;
  a.out = &out;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens_cpu");
  lens_cpu.set(1, 6);
  in.max_seq_len = INT64_MAX;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "max_seq_len");
  in.max_seq_len = 0;
  // A host mirror in place of a device tensor is a device mix.
  out.seq_lens = out_lens_cpu.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "different device");
  out.seq_lens = out_lens_d.dl();
  // Partial overlap of device tensors (seq_lens written over query_start_loc[1:]).
  DLTensor q_tail = *qsl_d.dl();
  int64_t two = 2;
  q_tail.shape = &two;
  q_tail.byte_offset += 4;
  out.seq_lens = &q_tail;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "overlaps");
  out.seq_lens = out_lens_d.dl();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_qsl_d.download();
  out_lens_d.download();
  EXPECT_EQ(out_qsl.bytes(), poison3);
  EXPECT_EQ(out_lens.bytes(), poison2);
  EXPECT_EQ(out_qsl_cpu.bytes(), poison3);
  EXPECT_EQ(out_lens_cpu.bytes(), poison2);
  // And the same call, fixed, goes through.
  ASSERT_CATTN_OK(cattn_extend_all_queries_by_n(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_qsl_d.download();
  out_lens_d.download();
  EXPECT_EQ(out_qsl.values(), (std::vector<int64_t>{0, 3, 7}));
  EXPECT_EQ(out_lens.values(), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(out_qsl_cpu.values(), (std::vector<int64_t>{0, 3, 7}));
  EXPECT_EQ(out_lens_cpu.values(), (std::vector<int64_t>{5, 7}));
#endif
}
