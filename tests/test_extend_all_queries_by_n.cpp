// SPDX-License-Identifier: Apache-2.0
// extend_all_queries_by_n: conformance against the seed oracle's vectors (n = 1 is vLLM's
// extend_all_queries_by_1, other n the seed applied n times), int32/int64 and strided layouts,
// in place and out of place, host mirrors, and every error path.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <utility>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// Stand-ins for the fields the call copies without reading: only their addresses matter.
DLTensor g_block_table{}, g_num_computed{}, g_logits{}, g_old_slots{};

struct Batch {
  HostTensor qsl, seq_lens, qsl_cpu, seq_lens_cpu;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;

  Batch(const std::vector<int64_t>& q, const std::vector<int64_t>& s, DLDataType t,
        int64_t step = 1, bool mirrors = true)
      : qsl(HostTensor::of(q, t, {}, step, step == 1 ? 0 : 1)),
        seq_lens(HostTensor::of(s, t, {}, step, step == 1 ? 0 : 2)),
        qsl_cpu(HostTensor::of(q, t, {}, step)),
        seq_lens_cpu(HostTensor::of(s, t, {}, step)) {
    md.query_start_loc = qsl.dl();
    md.seq_lens = seq_lens.dl();
    md.query_start_loc_cpu = mirrors ? qsl_cpu.dl() : nullptr;
    md.seq_lens_cpu = mirrors ? seq_lens_cpu.dl() : nullptr;
    md.num_computed_tokens_cpu = &g_num_computed;
    md.block_table_tensor = &g_block_table;
    md.slot_mapping = &g_old_slots;
    md.logits_indices_padded = &g_logits;
    md.num_reqs = static_cast<int64_t>(s.size());
    md.num_logits_indices = 3;
    md.causal = 0;  // copied, whatever it is
  }
  // Output tensors of the same shapes in dtype t (poisoned).
  static Batch outputs(int64_t b, DLDataType t, int64_t step, bool mirrors) {
    Batch o(std::vector<int64_t>(static_cast<size_t>(b + 1)),
            std::vector<int64_t>(static_cast<size_t>(b)), t, step, mirrors);
    o.qsl = HostTensor({b + 1}, t, step);
    o.seq_lens = HostTensor({b}, t, step, 1);
    o.qsl_cpu = HostTensor({b + 1}, t, step, 2);
    o.seq_lens_cpu = HostTensor({b}, t, step);
    o.md = CATTN_COMMON_ATTN_METADATA_INIT;
    o.md.query_start_loc = o.qsl.dl();
    o.md.seq_lens = o.seq_lens.dl();
    o.md.query_start_loc_cpu = mirrors ? o.qsl_cpu.dl() : nullptr;
    o.md.seq_lens_cpu = mirrors ? o.seq_lens_cpu.dl() : nullptr;
    return o;
  }
};

cattn_status_t run(const cattn_common_attn_metadata_t* in, cattn_common_attn_metadata_t* out,
                   int64_t n, DLTensor* slots) {
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = in;
  a.out = out;
  a.n = n;
  a.new_slot_mapping = slots;
  return cattn_extend_all_queries_by_n(&a);
}

// Fields the call copies or derives without reading tensors.
void expect_scalars(const cattn_common_attn_metadata_t& out, const nlohmann::json& c,
                    DLTensor* slots) {
  const auto& e = c["expect"];
  EXPECT_EQ(out.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
  EXPECT_EQ(out.max_query_len, e["max_query_len"].get<int64_t>());
  EXPECT_EQ(out.max_seq_len, e["max_seq_len"].get<int64_t>());
  EXPECT_EQ(out.num_reqs, c["num_reqs"].get<int64_t>());
  EXPECT_EQ(out.slot_mapping, slots);
  EXPECT_EQ(out.block_table_tensor, &g_block_table);
  EXPECT_EQ(out.num_computed_tokens_cpu, &g_num_computed);
  EXPECT_EQ(out.logits_indices_padded, &g_logits);
  EXPECT_EQ(out.num_logits_indices, 3);
  EXPECT_EQ(out.causal, 0);
  EXPECT_EQ(out.reserved0, 0);
}

}  // namespace

TEST(extend_all_queries_by_n, OracleVectorsOutOfPlace) {
  const auto vec = load_vectors("extend_all_queries_by_n");
  ASSERT_GT(vec["cases"].size(), 15u);
  HostTensor slots = HostTensor::of({7, 8, 9}, i64());
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const auto& e = c["expect"];
    const int64_t b = static_cast<int64_t>(s.size());
    for (DLDataType in_t : {i32(), i64()})
      for (DLDataType out_t : {i32(), i64()})
        for (int64_t step : {1, 3})
          for (bool mirrors : {true, false}) {
            Batch in(q, s, in_t, step, mirrors);
            in.md.num_actual_tokens = c["num_actual_tokens"];
            in.md.max_query_len = c["max_query_len"];
            in.md.max_seq_len = c["max_seq_len"];
            Batch out = Batch::outputs(b, out_t, step, mirrors);
            out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE + 64;  // newer caller: kept
            ASSERT_CATTN_OK(run(&in.md, &out.md, c["n"], slots.dl()));
            EXPECT_EQ(out.md.struct_size, CATTN_COMMON_ATTN_METADATA_SIZE + 64);
            EXPECT_EQ(out.qsl.values(), ints(e["query_start_loc"]));
            EXPECT_EQ(out.seq_lens.values(), ints(e["seq_lens"]));
            if (mirrors) {
              EXPECT_EQ(out.qsl_cpu.values(), ints(e["query_start_loc_cpu"]));
              // Updated, unlike vLLM whose seq_lens_cpu stays at the old lengths.
              EXPECT_EQ(out.seq_lens_cpu.values(), ints(e["seq_lens"]));
              EXPECT_EQ(out.md.query_start_loc_cpu, out.qsl_cpu.dl());
            } else {
              EXPECT_EQ(out.md.query_start_loc_cpu, nullptr);
              EXPECT_EQ(out.md.seq_lens_cpu, nullptr);
            }
            EXPECT_EQ(out.md.query_start_loc, out.qsl.dl());
            expect_scalars(out.md, c, slots.dl());
            // The input is untouched.
            EXPECT_EQ(in.qsl.values(), q);
            EXPECT_EQ(in.seq_lens.values(), s);
          }
  }
}

TEST(extend_all_queries_by_n, OracleVectorsInPlace) {
  const auto vec = load_vectors("extend_all_queries_by_n");
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const auto& e = c["expect"];
    for (DLDataType t : {i32(), i64()})
      for (bool same_struct : {true, false}) {
        Batch b(q, s, t, 2);
        b.md.num_actual_tokens = c["num_actual_tokens"];
        b.md.max_query_len = c["max_query_len"];
        b.md.max_seq_len = c["max_seq_len"];
        cattn_common_attn_metadata_t separate = b.md;  // same tensors, another struct
        cattn_common_attn_metadata_t* out = same_struct ? &b.md : &separate;
        ASSERT_CATTN_OK(run(&b.md, out, c["n"], nullptr));
        EXPECT_EQ(b.qsl.values(), ints(e["query_start_loc"]));
        EXPECT_EQ(b.seq_lens.values(), ints(e["seq_lens"]));
        EXPECT_EQ(b.qsl_cpu.values(), ints(e["query_start_loc_cpu"]));
        EXPECT_EQ(b.seq_lens_cpu.values(), ints(e["seq_lens"]));
        expect_scalars(*out, c, nullptr);
      }
  }
}

TEST(extend_all_queries_by_n, MirrorSharingMemoryIsExtendedOnce) {
  // A host-only batch may pass one tensor as both query_start_loc and its mirror.
  HostTensor q = HostTensor::of({0, 3, 4, 9}, i64());
  HostTensor s = HostTensor::of({5, 1, 7}, i32());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = md.query_start_loc_cpu = q.dl();
  md.seq_lens = md.seq_lens_cpu = s.dl();
  ASSERT_CATTN_OK(run(&md, &md, 2, nullptr));
  EXPECT_EQ(q.values(), (std::vector<int64_t>{0, 5, 8, 15}));
  EXPECT_EQ(s.values(), (std::vector<int64_t>{7, 3, 9}));
  // Swapped roles (mirror of one is the main tensor of the other) read before writing too.
  HostTensor q2 = HostTensor::of({0, 1, 2}, i32());
  HostTensor q2_cpu = HostTensor::of({0, 1, 2}, i64());
  HostTensor s2 = HostTensor::of({1, 1}, i32());
  md.query_start_loc = q2.dl();
  md.query_start_loc_cpu = q2_cpu.dl();
  md.seq_lens = md.seq_lens_cpu = s2.dl();
  cattn_common_attn_metadata_t out = md;
  out.query_start_loc = q2_cpu.dl();
  out.query_start_loc_cpu = q2.dl();
  ASSERT_CATTN_OK(run(&md, &out, 1, nullptr));
  EXPECT_EQ(q2_cpu.values(), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(q2.values(), (std::vector<int64_t>{0, 2, 4}));
  // A mirror that disagrees with its tensor is refused before anything is written.
  HostTensor q3 = HostTensor::of({0, 1, 2}, i32());
  HostTensor q3_cpu = HostTensor::of({0, 1, 3}, i32());
  md.query_start_loc = q3.dl();
  md.query_start_loc_cpu = q3_cpu.dl();
  out = md;
  EXPECT_CATTN_ERROR(run(&md, &out, 1, nullptr), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu disagrees with its device tensor");
  EXPECT_EQ(q3.values(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(q3_cpu.values(), (std::vector<int64_t>{0, 1, 3}));
}

TEST(extend_all_queries_by_n, RandomAgainstFormula) {
  std::mt19937_64 g(11);
  for (int iter = 0; iter < 100; ++iter) {
    const int64_t b = static_cast<int64_t>(g() % 200);
    const int64_t n = static_cast<int64_t>(g() % 20);
    std::vector<int64_t> q{0}, s;
    for (int64_t i = 0; i < b; ++i) {
      const int64_t len = static_cast<int64_t>(g() % 50);
      q.push_back(q.back() + len);
      s.push_back(len + static_cast<int64_t>(g() % 100000));
    }
    Batch in(q, s, (iter & 1) ? i64() : i32(), 1 + iter % 3);
    in.md.num_actual_tokens = q.back();
    Batch out = Batch::outputs(b, (iter & 2) ? i64() : i32(), 1 + iter % 2, true);
    ASSERT_CATTN_OK(run(&in.md, &out.md, n, nullptr));
    for (int64_t i = 0; i <= b; ++i) {
      ASSERT_EQ(out.qsl.get(i), q[i] + i * n);
      ASSERT_EQ(out.qsl_cpu.get(i), q[i] + i * n);
    }
    for (int64_t i = 0; i < b; ++i) {
      ASSERT_EQ(out.seq_lens.get(i), s[i] + n);
      ASSERT_EQ(out.seq_lens_cpu.get(i), s[i] + n);
    }
    EXPECT_EQ(out.md.num_actual_tokens, q.back() + n * b);
  }
}

TEST(extend_all_queries_by_n, Int32EdgeStillFits) {
  // The largest int32 result is accepted; one more is rejected before anything is written.
  const int64_t top = INT32_MAX;
  Batch in({0, top - 1}, {top - 2}, i64());
  Batch out = Batch::outputs(1, i32(), 1, true);
  ASSERT_CATTN_OK(run(&in.md, &out.md, 1, nullptr));
  EXPECT_EQ(out.qsl.values(), (std::vector<int64_t>{0, top}));
  EXPECT_EQ(out.seq_lens.values(), (std::vector<int64_t>{top - 1}));

  Batch out2 = Batch::outputs(1, i32(), 1, true);
  const auto before = {out2.qsl.bytes(), out2.seq_lens.bytes(), out2.qsl_cpu.bytes(),
                       out2.seq_lens_cpu.bytes()};
  EXPECT_CATTN_ERROR(run(&in.md, &out2.md, 2, nullptr), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc");
  const auto after = {out2.qsl.bytes(), out2.seq_lens.bytes(), out2.qsl_cpu.bytes(),
                      out2.seq_lens_cpu.bytes()};
  EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin()));
  // Only the seq_lens mirror overflows (its output is int32, the main one int64): still
  // nothing written anywhere.
  Batch in3({0, 1}, {top}, i64());
  Batch out3 = Batch::outputs(1, i32(), 1, true);
  out3.seq_lens = HostTensor({1}, i64());
  out3.md.seq_lens = out3.seq_lens.dl();
  const auto q_before = out3.qsl.bytes();
  EXPECT_CATTN_ERROR(run(&in3.md, &out3.md, 1, nullptr), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens_cpu");
  EXPECT_EQ(out3.qsl.bytes(), q_before);
}

TEST(extend_all_queries_by_n, Errors) {
  Batch in({0, 2, 5}, {4, 6}, i32());
  Batch out = Batch::outputs(2, i32(), 1, true);
  const auto untouched = out.qsl.bytes();
  const auto out_md = out.md;
  auto expect_untouched = [&] {
    EXPECT_EQ(out.qsl.bytes(), untouched);
    EXPECT_EQ(std::memcmp(&out.md, &out_md, sizeof out_md), 0) << "out struct was written";
  };

  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(nullptr), CATTN_INVALID_ARGUMENT, "args");
  cattn_extend_all_queries_by_n_args_t a = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  a.metadata = &in.md;
  a.out = &out.md;
  a.struct_size = sizeof(size_t);
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "struct_size");
  a.struct_size = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_SIZE;
  a.metadata = nullptr;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "args->metadata");
  a.metadata = &in.md;
  a.out = nullptr;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "args->out");
  a.out = &out.md;
  in.md.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata has struct_size");
  in.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
  out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE_1_0 - 8;  // below the oldest
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out has struct_size");
  out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
  a.n = -1;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "args->n");
  a.n = 1;
  expect_untouched();

  // NULL tensors.
  struct Field { DLTensor** slot; const char* name; };
  for (Field f : {Field{&in.md.query_start_loc, "args->metadata->query_start_loc"},
                  Field{&in.md.seq_lens, "args->metadata->seq_lens"},
                  Field{&out.md.query_start_loc, "args->out->query_start_loc"},
                  Field{&out.md.seq_lens, "args->out->seq_lens"}}) {
    DLTensor* keep = *f.slot;
    *f.slot = nullptr;
    EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, f.name);
    *f.slot = keep;
  }
  // Mirror present on one side only.
  out.md.query_start_loc_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu is NULL");
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  in.md.seq_lens_cpu = nullptr;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens_cpu is set without a source");
  in.md.seq_lens_cpu = in.seq_lens_cpu.dl();
  expect_untouched();

  // Shapes: query_start_loc must be [B + 1] with B from seq_lens.
  HostTensor q_short = HostTensor::of({0, 2}, i32());
  in.md.query_start_loc = q_short.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc has the wrong size");
  in.md.query_start_loc = in.qsl.dl();
  HostTensor q_cpu_long = HostTensor::of({0, 2, 5, 6}, i32());
  in.md.query_start_loc_cpu = q_cpu_long.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu has the wrong size");
  in.md.query_start_loc_cpu = in.qsl_cpu.dl();
  HostTensor s_2d = HostTensor::of({4, 6}, i32(), {1, 2});
  in.md.seq_lens = s_2d.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "ndim");
  in.md.seq_lens = in.seq_lens.dl();
  HostTensor s_f = HostTensor::of({4, 6}, f32());
  in.md.seq_lens = s_f.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "dtype");
  in.md.seq_lens = in.seq_lens.dl();
  HostTensor o_small({2}, i32()), o_big({4}, i32()), o_sl_small({1}, i32());
  out.md.query_start_loc = o_small.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INSUFFICIENT_SIZE,
                     "args->out->query_start_loc");
  out.md.query_start_loc = o_big.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc");
  out.md.query_start_loc = out.qsl.dl();
  out.md.seq_lens_cpu = o_sl_small.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INSUFFICIENT_SIZE,
                     "args->out->seq_lens_cpu");
  out.md.seq_lens_cpu = out.seq_lens_cpu.dl();
  HostTensor o_f({3}, f32());
  out.md.query_start_loc = o_f.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "dtype");
  out.md.query_start_loc = out.qsl.dl();
  // An output whose elements share memory cannot be written.
  int64_t zero_stride = 0;
  out.qsl.dl()->strides = &zero_stride;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "zero stride");
  out.md.query_start_loc = out.qsl.dl();  // dl() resets the strides
  HostTensor slots_2d = HostTensor::of({1, 2, 3, 4}, i64(), {2, 2});
  a.new_slot_mapping = slots_2d.dl();
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->new_slot_mapping");
  a.new_slot_mapping = nullptr;
  expect_untouched();

  // Overlaps other than an output being exactly its input (or that input's mirror).
  DLTensor q_tail = *in.qsl.dl();  // query_start_loc[1:], the size of seq_lens
  int64_t two = 2;
  q_tail.shape = &two;
  q_tail.byte_offset += 4;
  out.md.seq_lens = &q_tail;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens overlaps");
  out.md.seq_lens = out.seq_lens.dl();
  DLTensor q_as_i64 = *in.qsl.dl();  // same address, another dtype: not an exact alias
  q_as_i64.dtype = i64();
  out.md.query_start_loc = &q_as_i64;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc overlaps");
  out.md.query_start_loc = out.qsl.dl();
  EXPECT_EQ(in.qsl.values(), (std::vector<int64_t>{0, 2, 5}));
  expect_untouched();

  // Devices: a mirror must be host memory; the others must agree.
  in.qsl_cpu.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu is not host memory");
  in.md.query_start_loc_cpu = in.qsl_cpu.dl();
  out.qsl_cpu.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu is not host memory");
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  out.seq_lens.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "different device");
  out.md.seq_lens = out.seq_lens.dl();
  HostTensor slots = HostTensor::of({1, 2}, i64());
  a.new_slot_mapping = slots.dl();
  slots.dl()->device = {kDLCUDA, 1};  // after dl(), which resets the device
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->new_slot_mapping is on a different device");
  a.new_slot_mapping = nullptr;
  expect_untouched();

  // CUDA tensors with host mirrors: what the host can check (the scalars, the mirrors' values)
  // is checked before any launch. These "device" tensors are host memory, so only where no GPU
  // can run the kernel may a call get past validation (test_extend_all_queries_by_n_gpu.cpp
  // covers a GPU).
  for (HostTensor* t : {&in.qsl, &in.seq_lens, &out.qsl, &out.seq_lens}) t->dl()->device = {kDLCUDA, 0};
  const auto mirrors_before = std::make_pair(out.qsl_cpu.bytes(), out.seq_lens_cpu.bytes());
  in.md.max_query_len = INT64_MAX;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "max_query_len");
  in.md.max_query_len = 0;
  in.seq_lens_cpu.set(1, INT32_MAX);  // + 1 does not fit the int32 output mirror
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->seq_lens_cpu");
  in.seq_lens_cpu.set(1, 6);
  in.qsl_cpu.set(2, INT32_MAX - 1);  // + 2 * n does not fit either
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu");
  in.qsl_cpu.set(2, 5);
  int32_t gpus = 0;
  ASSERT_EQ(cattn_cuda_device_count(&gpus), CATTN_OK);
  if (gpus == 0) {
    const cattn_status_t s = cattn_extend_all_queries_by_n(&a);
    EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s) << ": "
                                      << cattn_last_error_message();
  }
  EXPECT_EQ(std::make_pair(out.qsl_cpu.bytes(), out.seq_lens_cpu.bytes()), mirrors_before);
  for (HostTensor* t : {&in.qsl, &in.seq_lens, &out.qsl, &out.seq_lens}) t->dl();
  expect_untouched();

  // Overflow of int64 arithmetic, in the data and in the scalars.
  Batch huge({0, INT64_MAX}, {1}, i64());
  Batch out64 = Batch::outputs(1, i64(), 1, true);
  const auto before64 = out64.qsl.bytes();
  EXPECT_CATTN_ERROR(run(&huge.md, &out64.md, 1, nullptr), CATTN_INVALID_ARGUMENT,
                     "overflows int64");
  EXPECT_EQ(out64.qsl.bytes(), before64);
  in.md.max_seq_len = INT64_MAX;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "max_seq_len");
  in.md.max_seq_len = 0;
  in.md.num_actual_tokens = INT64_MAX - 1;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT,
                     "num_actual_tokens");
  in.md.num_actual_tokens = 0;
  a.n = INT64_MAX;
  EXPECT_CATTN_ERROR(cattn_extend_all_queries_by_n(&a), CATTN_INVALID_ARGUMENT, "overflows");
  expect_untouched();
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Extend queries

namespace {
using namespace cattn_test::refused_untouched;

struct Extend : Base {
  HostTensor qsl = in_tensor({0, 3, 7}, i64()), seq = in_tensor({5, 9}, i32());
  HostTensor qsl_cpu = in_tensor({0, 3, 7}, i32()), seq_cpu = in_tensor({5, 9}, i64());
  HostTensor slot_map = in_tensor({1, 2, 3, 4}, i64());
  HostTensor o_qsl = out_tensor({3}, i64()), o_seq = out_tensor({2}, i64());
  HostTensor o_qsl_cpu = out_tensor({3}, i32()), o_seq_cpu = out_tensor({2}, i64());
  Guarded<cattn_common_attn_metadata_t> in{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_extend_all_queries_by_n_args_t> args{CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT};
  bool null_args = false;
  Extend() {
    tensors = {&qsl, &seq, &qsl_cpu, &seq_cpu, &slot_map, &o_qsl, &o_seq, &o_qsl_cpu, &o_seq_cpu};
    structs = {&in.bytes(), &out.bytes(), &args.bytes()};
    in->num_reqs = 2;
    in->num_actual_tokens = 7;
    in->max_query_len = 4;
    in->max_seq_len = 9;
    args->n = 2;
  }
  void wire() {
    in->query_start_loc = qsl.dl();
    in->seq_lens = seq.dl();
    in->query_start_loc_cpu = qsl_cpu.dl();
    in->seq_lens_cpu = seq_cpu.dl();
    out->query_start_loc = o_qsl.dl();
    out->seq_lens = o_seq.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    out->seq_lens_cpu = o_seq_cpu.dl();
    args->metadata = in.get();
    args->out = out.get();
    args->new_slot_mapping = slot_map.dl();
    cattn_common_attn_metadata_t* i = in.get();
    cattn_common_attn_metadata_t* o = out.get();
    cattn_extend_all_queries_by_n_args_t* a = args.get();
    // Mirrors come in pairs, so a NULL one is an error only on one side (tested below).
    slots = {{"args->metadata->query_start_loc", qsl.dl(), [i] { i->query_start_loc = nullptr; }},
             {"args->metadata->seq_lens", seq.dl(), [i] { i->seq_lens = nullptr; }},
             {"args->metadata->query_start_loc_cpu", qsl_cpu.dl(), nullptr, false},
             {"args->metadata->seq_lens_cpu", seq_cpu.dl(), nullptr, false},
             {"args->new_slot_mapping", slot_map.dl(), nullptr},
             {"args->out->query_start_loc", o_qsl.dl(), [o] { o->query_start_loc = nullptr; }},
             {"args->out->seq_lens", o_seq.dl(), [o] { o->seq_lens = nullptr; }},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), [o] { o->query_start_loc_cpu = nullptr; }, false},
             {"args->out->seq_lens_cpu", o_seq_cpu.dl(), [o] { o->seq_lens_cpu = nullptr; }, false}};
    (void)a;
  }
  cattn_status_t call() { return cattn_extend_all_queries_by_n(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, ExtendAllQueriesByN) {
  using V = Variant<Extend>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Extend& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Extend& s) { s.args->struct_size = 8; }},
      {"NULL metadata", I, "args->metadata is NULL", nullptr, [](Extend& s) { s.args->metadata = nullptr; }},
      {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](Extend& s) { s.in->struct_size = 64; }},
      {"NULL out", I, "args->out is NULL", nullptr, [](Extend& s) { s.args->out = nullptr; }},
      {"out struct_size", I, "args->out has struct_size too small", nullptr, [](Extend& s) { s.out->struct_size = 0; }},
      {"n -1", I, "args->n is negative", nullptr, [](Extend& s) { s.args->n = -1; }},
      {"seq_lens 2-D", I, "args->metadata->seq_lens has the wrong ndim", [](Extend& s) { s.seq = in_tensor({5, 9}, i32(), {1, 2}); }, nullptr},
      {"query_start_loc of 4", I, "args->metadata->query_start_loc has the wrong size in dim 0", [](Extend& s) { s.qsl = in_tensor({0, 3, 7, 9}, i64()); }, nullptr},
      {"query_start_loc float", I, "args->metadata->query_start_loc has the wrong dtype", nullptr, [](Extend& s) { s.in->query_start_loc->dtype = {kDLFloat, 64, 1}; }},
      {"out seq_lens [1]", CATTN_INSUFFICIENT_SIZE, "args->out->seq_lens has the wrong size", [](Extend& s) { s.o_seq = out_tensor({1}, i64()); }, nullptr},
      {"out seq_lens [3]", I, "args->out->seq_lens has the wrong size", [](Extend& s) { s.o_seq = out_tensor({3}, i64()); }, nullptr},
      {"out query_start_loc zero stride", I, "args->out->query_start_loc is an output with a zero stride", nullptr, [](Extend& s) {
         s.scratch_strides = {0};
         s.out->query_start_loc->strides = s.scratch_strides.data();
       }},
      {"mirror output missing", I, "args->out->query_start_loc_cpu is NULL", nullptr, [](Extend& s) { s.out->query_start_loc_cpu = nullptr; }},
      {"mirror output without input", I, "args->out->seq_lens_cpu is set without a source", nullptr, [](Extend& s) { s.in->seq_lens_cpu = nullptr; }},
      {"mirror of 3", I, "args->metadata->seq_lens_cpu has the wrong size", [](Extend& s) { s.seq_cpu = in_tensor({5, 9, 1}, i64()); }, nullptr},
      {"mirror on a GPU", I, "args->metadata->query_start_loc_cpu is not host memory", nullptr, [](Extend& s) { s.in->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
      {"mirror output on a GPU", I, "args->out->seq_lens_cpu is not host memory", nullptr, [](Extend& s) { s.out->seq_lens_cpu->device = {kDLCUDA, 0}; }},
      {"slot mapping 2-D", I, "args->new_slot_mapping has the wrong ndim", [](Extend& s) { s.slot_map = in_tensor({1, 2, 3, 4}, i64(), {2, 2}); }, nullptr},
      {"out seq_lens overlapping seq_lens", I, "args->out->seq_lens overlaps an input", nullptr, [](Extend& s) { s.out->seq_lens = s.overlap_view(s.seq, 1, {2}); }},
      {"out query_start_loc overlapping seq_lens_cpu", I, "args->out->query_start_loc overlaps an input", nullptr, [](Extend& s) {
         s.out->query_start_loc = s.overlap_view(s.seq_cpu, 0, {3});
         s.out->query_start_loc->dtype = i64();
       }},
      {"num_actual_tokens overflowing", I, "num_actual_tokens + n * B overflows int64", nullptr, [](Extend& s) { s.in->num_actual_tokens = kI64Max; }},
      {"max_query_len overflowing", I, "max_query_len + n overflows int64", nullptr, [](Extend& s) { s.in->max_query_len = kI64Max - 1; }},
      {"max_seq_len overflowing", I, "max_seq_len + n overflows int64", nullptr, [](Extend& s) { s.in->max_seq_len = kI64Max; }},
      {"n x B overflowing", I, "n * B overflows int64", nullptr, [](Extend& s) { s.args->n = kI64Max; }},
      {"seq_lens value overflowing", I, "args->metadata->seq_lens gives a result that overflows int64", [](Extend& s) {
         s.seq = in_tensor({5, kI64Max - 1}, i64());
         s.seq_cpu = in_tensor({5, kI64Max - 1}, i64());
       }, nullptr},
      {"value past an int32 output", I, "args->out->query_start_loc_cpu cannot hold a result value", [](Extend& s) {
         s.qsl = in_tensor({0, 3, std::numeric_limits<int32_t>::max()}, i64());
         s.qsl_cpu = in_tensor({0, 3, std::numeric_limits<int32_t>::max()}, i64());
       }, nullptr},
      {"mirror disagreeing", I, "args->metadata->seq_lens_cpu disagrees with its device tensor", [](Extend& s) { s.seq_cpu = in_tensor({5, 8}, i64()); }, nullptr},
      {"out seq_lens over out query_start_loc", I, "args->out->query_start_loc overlaps another output (got memory shared with args->out->seq_lens", nullptr, [](Extend& s) {
         s.out->seq_lens = s.overlap_view(s.o_qsl, 1, {2});
         s.out->seq_lens->dtype = i64();
       }},
  };
  if (cpu_only_build())
    v.push_back({"main tensors on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Extend& s) {
                   for (const char* n : {"args->metadata->query_start_loc", "args->metadata->seq_lens", "args->new_slot_mapping",
                                         "args->out->query_start_loc", "args->out->seq_lens"})
                     s.slot(n)->device = {kDLCUDA, 0};
                 }});
  sweep<Extend>("cattn_extend_all_queries_by_n", structural<Extend>() + v);
}

}  // namespace
