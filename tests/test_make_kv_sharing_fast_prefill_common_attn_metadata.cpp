// SPDX-License-Identifier: Apache-2.0
// make_kv_sharing_fast_prefill_common_attn_metadata: conformance against the seed oracle's
// vectors (including the cases where the seed fails), an independent linear-scan reference on
// random batches, int32/int64 and strided layouts, the all-decode passthrough, and every error.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "cattn.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/reserved_memory.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// Stand-ins for the fields the call only copies.
DLTensor g_seq_lens{}, g_seq_lens_cpu{}, g_computed{}, g_block_table{}, g_slots{}, g_qsl_cpu{};

DLDataType dtype_named(const std::string& s) { return s == "int64" ? i64() : i32(); }
DLDataType other(DLDataType t) { return t.bits == 64 ? i32() : i64(); }

struct Input {
  HostTensor qsl, logits;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  Input(const std::vector<int64_t>& q, const std::vector<int64_t>* l, int64_t count,
        int64_t max_query_len, DLDataType qt, DLDataType lt, int64_t step = 1)
      : qsl(HostTensor::of(q, qt, {}, step, step == 1 ? 0 : 1)) {
    if (l) logits = HostTensor::of(*l, lt, {}, step, 2);
    md.query_start_loc = qsl.dl();
    md.query_start_loc_cpu = &g_qsl_cpu;
    md.seq_lens = &g_seq_lens;
    md.seq_lens_cpu = &g_seq_lens_cpu;
    md.num_computed_tokens_cpu = &g_computed;
    md.block_table_tensor = &g_block_table;
    md.slot_mapping = &g_slots;
    md.logits_indices_padded = l ? logits.dl() : nullptr;
    md.num_reqs = static_cast<int64_t>(q.size()) - 1;
    md.num_actual_tokens = 1234;
    md.max_query_len = max_query_len;
    md.max_seq_len = 4321;
    md.num_logits_indices = count;
    md.causal = 0;
    md.reserved0 = 0;
  }
};

struct Output {
  HostTensor qsl, qsl_cpu, max_and_total;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_fast_prefill_metadata_args_t args = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  Output(int64_t num_reqs, DLDataType t, int64_t step, bool mirror, bool scalars)
      : qsl({num_reqs + 1}, t, step), qsl_cpu({num_reqs + 1}, other(t), step, 1),
        max_and_total({2}, t, step) {
    md.query_start_loc = qsl.dl();
    md.query_start_loc_cpu = mirror ? qsl_cpu.dl() : nullptr;
    args.out = &md;
    args.decode_max_and_total = scalars ? max_and_total.dl() : nullptr;
    args.passthrough = -7;
  }
  cattn_status_t run(const cattn_common_attn_metadata_t* in) {
    args.metadata = in;
    return cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&args);
  }
  std::vector<std::vector<uint8_t>> bytes() const {
    return {qsl.bytes(), qsl_cpu.bytes(), max_and_total.bytes()};
  }
};

// Request of each index, the obvious way: how many request ends are <= it.
std::vector<int64_t> linear_reference(const std::vector<int64_t>& qsl,
                                      const std::vector<int64_t>& logits, int64_t count,
                                      int64_t* largest) {
  const size_t r = qsl.size() - 1;
  std::vector<int64_t> c(r, 0);
  for (int64_t i = 0; i < count; ++i) {
    size_t req = 0;
    for (size_t j = 1; j <= r; ++j) req += qsl[j] <= logits[i];
    c.at(req) += 1;
  }
  std::vector<int64_t> out{0};
  *largest = 0;
  for (int64_t v : c) {
    out.push_back(out.back() + v);
    *largest = std::max(*largest, v);
  }
  return out;
}

}  // namespace

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, OracleVectors) {
  const auto vec = load_vectors("make_kv_sharing_fast_prefill_common_attn_metadata");
  ASSERT_GT(vec["cases"].size(), 25u);
  int passthroughs = 0, errors = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]);
    const bool has_logits = !c["logits_indices_padded"].is_null();
    const std::vector<int64_t> l = has_logits ? ints(c["logits_indices_padded"])
                                              : std::vector<int64_t>{};
    const int64_t count = c["num_logits_indices"].is_null() ? 0 : c["num_logits_indices"].get<int64_t>();
    const int64_t num_reqs = c["num_reqs"];
    const DLDataType qt0 = dtype_named(c["dtypes"][0]), lt0 = dtype_named(c["dtypes"][1]);
    for (DLDataType qt : {qt0, other(qt0)})
      for (DLDataType lt : {lt0, other(lt0)})
        for (DLDataType ot : {i32(), i64()})
          for (int64_t step : {1, 3})
            for (int variant = 0; variant < 2; ++variant) {
              Input in(q, has_logits ? &l : nullptr, count, c["max_query_len"], qt, lt, step);
              Output out(std::max<int64_t>(num_reqs, 0), ot, step, variant == 0, variant == 0);
              out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE + 8;
              const auto before = out.bytes();
              if (c.contains("seed_error")) {
                EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->metadata->");
                EXPECT_EQ(out.bytes(), before);
                EXPECT_EQ(out.args.passthrough, -7);
                EXPECT_EQ(out.md.num_reqs, 0);
                ++errors;
                continue;
              }
              ASSERT_CATTN_OK(out.run(&in.md));
              const auto& e = c["expect"];
              EXPECT_EQ(out.md.struct_size, CATTN_COMMON_ATTN_METADATA_SIZE + 8);
              if (c["passthrough"].get<bool>()) {
                ++passthroughs;
                EXPECT_EQ(out.args.passthrough, 1);
                cattn_common_attn_metadata_t want = in.md;
                want.struct_size = out.md.struct_size;
                EXPECT_EQ(std::memcmp(&out.md, &want, sizeof want), 0);
                EXPECT_EQ(out.bytes(), before) << "passthrough wrote a tensor";
                continue;
              }
              EXPECT_EQ(out.args.passthrough, 0);
              EXPECT_EQ(out.qsl.values(), ints(e["query_start_loc"]));
              EXPECT_EQ(out.md.query_start_loc, out.qsl.dl());
              if (variant == 0) {
                EXPECT_EQ(out.qsl_cpu.values(), ints(e["query_start_loc_cpu"]));
                EXPECT_EQ(out.max_and_total.values(),
                          (std::vector<int64_t>{e["max_query_len"], e["num_actual_tokens"]}));
              } else {
                EXPECT_EQ(out.md.query_start_loc_cpu, nullptr);
              }
              EXPECT_EQ(out.md.max_query_len, e["max_query_len"].get<int64_t>());
              EXPECT_EQ(out.md.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
              EXPECT_EQ(out.md.num_reqs, num_reqs);
              EXPECT_EQ(out.md.causal, 1);
              EXPECT_FALSE(e["has_logits_indices"].get<bool>());
              EXPECT_EQ(out.md.logits_indices_padded, nullptr);
              EXPECT_EQ(out.md.num_logits_indices, 0);
              EXPECT_EQ(out.md.seq_lens, &g_seq_lens);
              EXPECT_EQ(out.md.seq_lens_cpu, &g_seq_lens_cpu);
              EXPECT_EQ(out.md.num_computed_tokens_cpu, &g_computed);
              EXPECT_EQ(out.md.block_table_tensor, &g_block_table);
              EXPECT_EQ(out.md.slot_mapping, &g_slots);
              EXPECT_EQ(out.md.max_seq_len, 4321);
              EXPECT_EQ(in.qsl.values(), q) << "input modified";
            }
  }
  EXPECT_GT(passthroughs, 0);
  EXPECT_GT(errors, 0);
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, RandomAgainstLinearScan) {
  std::mt19937_64 g(99);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t b = 1 + static_cast<int64_t>(g() % 64);
    std::vector<int64_t> q{static_cast<int64_t>(g() % 3)};
    for (int64_t i = 0; i < b; ++i) q.push_back(q.back() + static_cast<int64_t>(g() % 6));
    const int64_t n = static_cast<int64_t>(g() % 80);
    std::vector<int64_t> l;
    for (int64_t i = 0; i < n; ++i)
      l.push_back(static_cast<int64_t>(g() % static_cast<uint64_t>(q.back() + 4)) - 3);
    for (auto& x : l) x = std::min(x, q.back() - 1);
    if (iter % 2) std::sort(l.begin(), l.end());  // the usual, galloping case
    if (iter % 5 == 0) std::reverse(l.begin(), l.end());
    const int64_t count = n == 0 ? 0 : static_cast<int64_t>(g() % static_cast<uint64_t>(n + 1));
    int64_t largest = 0;
    const auto want = linear_reference(q, l, count, &largest);
    Input in(q, &l, count, 7, (iter & 1) ? i64() : i32(), (iter & 2) ? i64() : i32(),
             1 + iter % 2);
    Output out(b, (iter & 4) ? i64() : i32(), 1 + iter % 3, true, true);
    ASSERT_CATTN_OK(out.run(&in.md));
    ASSERT_EQ(out.qsl.values(), want);
    ASSERT_EQ(out.qsl_cpu.values(), want);
    ASSERT_EQ(out.md.max_query_len, largest);
    ASSERT_EQ(out.md.num_actual_tokens, count);
    ASSERT_EQ(out.max_and_total.values(), (std::vector<int64_t>{largest, count}));
  }
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, PassthroughIntoTheSameStruct) {
  const std::vector<int64_t> q{0, 1, 2};
  Input in(q, nullptr, 0, 1, i32(), i32());
  cattn_common_attn_metadata_t copy = in.md;
  cattn_fast_prefill_metadata_args_t a = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  a.metadata = &in.md;
  a.out = &in.md;
  ASSERT_CATTN_OK(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a));
  EXPECT_EQ(a.passthrough, 1);
  EXPECT_EQ(std::memcmp(&copy, &in.md, sizeof copy), 0);
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, Errors) {
  const std::vector<int64_t> q{0, 15, 20, 28}, l{14, 18, 19, 27};
  Input in(q, &l, 4, 15, i32(), i64());
  Output out(3, i32(), 1, true, true);
  const auto before = out.bytes();
  const auto out_md = out.md;
  auto expect_untouched = [&] {
    EXPECT_EQ(out.bytes(), before);
    EXPECT_EQ(std::memcmp(&out.md, &out_md, sizeof out_md), 0) << "out struct was written";
    EXPECT_EQ(out.args.passthrough, -7);
  };
  auto& a = out.args;
  a.metadata = &in.md;
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(nullptr),
                     CATTN_INVALID_ARGUMENT, "args");
  a.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "args has struct_size");
  a.struct_size = CATTN_FAST_PREFILL_METADATA_ARGS_SIZE;
  a.metadata = nullptr;
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "args->metadata");
  a.metadata = &in.md;
  a.out = nullptr;
  EXPECT_CATTN_ERROR(cattn_make_kv_sharing_fast_prefill_common_attn_metadata(&a),
                     CATTN_INVALID_ARGUMENT, "args->out");
  a.out = &out.md;
  in.md.struct_size = 16;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->metadata has struct_size");
  in.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
  out.md.struct_size = 16;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->out has struct_size");
  out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
  expect_untouched();

  // Scalars.
  in.md.logits_indices_padded = nullptr;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->logits_indices_padded is NULL");
  in.md.logits_indices_padded = in.logits.dl();
  in.md.num_logits_indices = -1;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->num_logits_indices is negative (got -1, expected >= 0)");
  in.md.num_logits_indices = 5;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->num_logits_indices is out of range");
  in.md.num_logits_indices = 4;
  for (int64_t bad : {int64_t{0}, int64_t{-2}}) {
    in.md.num_reqs = bad;
    EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->metadata->num_reqs");
  }
  in.md.num_reqs = 2;  // query_start_loc has 4 entries
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc has the wrong size");
  in.md.num_reqs = 3;
  expect_untouched();

  // Tensors: ndim, dtype, sizes.
  HostTensor l2d = HostTensor::of({1, 2, 3, 4}, i64(), {2, 2});
  in.md.logits_indices_padded = l2d.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "ndim");
  HostTensor lf = HostTensor::of({1, 2, 3, 4}, f32());
  in.md.logits_indices_padded = lf.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "dtype");
  in.md.logits_indices_padded = in.logits.dl();
  in.md.query_start_loc = nullptr;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->metadata->query_start_loc");
  in.md.query_start_loc = in.qsl.dl();
  out.md.query_start_loc = nullptr;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc");
  HostTensor small({3}, i32()), big({5}, i32()), flt({4}, f32());
  out.md.query_start_loc = small.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc");
  out.md.query_start_loc = big.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc");
  out.md.query_start_loc = flt.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "dtype");
  out.md.query_start_loc = out.qsl.dl();
  out.md.query_start_loc_cpu = small.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc_cpu");
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  HostTensor one({1}, i64());
  a.decode_max_and_total = one.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INSUFFICIENT_SIZE, "args->decode_max_and_total");
  a.decode_max_and_total = out.max_and_total.dl();
  expect_untouched();

  // Data-dependent: decreasing boundaries, an index at or past the end.
  HostTensor dec = HostTensor::of({0, 15, 10, 28}, i32());
  in.md.query_start_loc = dec.dl();
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "decreases");
  in.md.query_start_loc = in.qsl.dl();
  in.logits.set(3, 28);
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "past the last request");
  in.logits.set(3, 27);
  expect_untouched();

  // Aliasing: the output doubles as scratch, so it may not overlap an input.
  out.md.query_start_loc = in.md.query_start_loc;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "overlaps");
  out.md.query_start_loc = out.qsl.dl();
  DLTensor logits_head = *in.md.logits_indices_padded;  // a [2] view of the logits
  int64_t two = 2;
  logits_head.shape = &two;
  a.decode_max_and_total = &logits_head;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "overlaps");
  a.decode_max_and_total = out.max_and_total.dl();
  EXPECT_EQ(in.logits.values(), (std::vector<int64_t>{14, 18, 19, 27}));
  EXPECT_EQ(in.qsl.values(), q);
  expect_untouched();

  // Devices.
  out.qsl_cpu.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu is not host memory");
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  out.max_and_total.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "different device");
  out.max_and_total.dl();
  for (HostTensor* t : {&in.qsl, &in.logits, &out.qsl, &out.max_and_total})
    t->dl()->device = {kDLCUDA, 0};
  a.decode_max_and_total = nullptr;
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT, "args->decode_max_and_total");
  a.decode_max_and_total = out.max_and_total.dl();
  out.max_and_total.dl()->device = {kDLCUDA, 0};
  // A host mirror would have to wait for the device.
  EXPECT_CATTN_ERROR(out.run(&in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu is set with CUDA tensors");
  out.md.query_start_loc_cpu = nullptr;
  // These "device" tensors are host memory: only where no GPU can run the kernel may the call
  // get past validation (test_make_kv_sharing_fast_prefill_common_attn_metadata_gpu.cpp covers
  // a GPU).
  int32_t gpus = 0;
  ASSERT_EQ(cattn_cuda_device_count(&gpus), CATTN_OK);
  if (gpus == 0) {
    const cattn_status_t s = out.run(&in.md);
    EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s) << ": "
                                      << cattn_last_error_message();
  }
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  for (HostTensor* t : {&in.qsl, &in.logits, &out.qsl, &out.max_and_total}) t->dl();
  expect_untouched();
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, Int32OutputOverflowRejected) {
  // 2^31 logits indices would total past int32. They span 16 GiB of reserved address space
  // that the fit check keeps the call from reading (a stride-0 view of one value would be
  // refused as a broadcast too large to scan).
  const int64_t big = int64_t{1} << 31;
  HostTensor q = HostTensor::of({0, 4}, i64());
  HostTensor zero = HostTensor::of({0}, i64());
  ReservedMemory space(static_cast<size_t>(big) * sizeof(int64_t));
  ASSERT_NE(space.data(), nullptr);
  DLTensor logits = *zero.dl();
  int64_t shape = big;
  logits.data = space.data();
  logits.byte_offset = 0;
  logits.shape = &shape;
  logits.strides = nullptr;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = q.dl();
  md.logits_indices_padded = &logits;
  md.num_logits_indices = big;
  md.num_reqs = 1;
  md.max_query_len = 4;
  Output out(1, i32(), 1, false, false);
  const auto before = out.bytes();
  EXPECT_CATTN_ERROR(out.run(&md), CATTN_INVALID_ARGUMENT, "int32");
  EXPECT_EQ(out.bytes(), before);
  Output out64(1, i64(), 1, true, false);
  out64.md.query_start_loc_cpu = out64.qsl_cpu.dl();  // int32: still too small
  EXPECT_CATTN_ERROR(out64.run(&md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc_cpu");

  // The same bound is checked for device outputs, before any launch (these "device" tensors
  // are host memory that the check keeps every kernel away from).
  Output cuda_out(1, i32(), 1, false, true);
  const auto cuda_before = cuda_out.bytes();
  DLTensor q_dev = *q.dl(), logits_dev = logits;
  q_dev.device = logits_dev.device = {kDLCUDA, 0};
  md.query_start_loc = &q_dev;
  md.logits_indices_padded = &logits_dev;
  cuda_out.qsl.dl()->device = cuda_out.max_and_total.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cuda_out.run(&md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc");
  EXPECT_EQ(cuda_out.bytes(), cuda_before);
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata, HugeBroadcastIsNotScanned) {
  // 8 real bytes claiming 2^40 logits indices: refused from the shape, not scanned for hours.
  HostTensor q = HostTensor::of({0, 4}, i64());
  HostTensor zero = HostTensor::of({0}, i64());
  DLTensor logits = *zero.dl();
  int64_t shape = int64_t{1} << 40, stride = 0;
  logits.shape = &shape;
  logits.strides = &stride;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = q.dl();
  md.logits_indices_padded = &logits;
  md.num_logits_indices = shape;
  md.num_reqs = 1;
  md.max_query_len = 4;
  Output out(1, i64(), 1, false, false);
  const auto before = out.bytes();
  EXPECT_CATTN_ERROR(out.run(&md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->logits_indices_padded is a broadcast view");
  EXPECT_EQ(out.bytes(), before);
  // Up to the limit a broadcast is fine: 2^24 copies of index 0 all count for request 0.
  shape = CATTN_MAX_BROADCAST_ELEMENTS;
  md.num_logits_indices = shape;
  ASSERT_CATTN_OK(out.run(&md));
  EXPECT_EQ(out.qsl.values(), (std::vector<int64_t>{0, CATTN_MAX_BROADCAST_ELEMENTS}));
}

TEST(make_kv_sharing_fast_prefill_common_attn_metadata_hostile, ScalarsOverTheOutputAreRefused) {
  // The probe: decode_max_and_total aliasing out->query_start_loc returned OK.
  HostTensor q = HostTensor::of({0, 15, 20, 28}, i64());
  HostTensor logits = HostTensor::of({14, 18, 19, 27}, i64());
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc = q.dl();
  md.logits_indices_padded = logits.dl();
  md.num_logits_indices = 4;
  md.num_reqs = 3;
  md.max_query_len = 15;
  Output out(3, i64(), 1, false, true);
  DLTensor scalars = *out.qsl.dl();  // {max, total} over entries 2 and 3 of the output
  int64_t two[1] = {2};
  scalars.shape = two;
  scalars.byte_offset = 2 * sizeof(int64_t);
  out.args.decode_max_and_total = &scalars;
  const auto before = out.bytes();
  EXPECT_CATTN_ERROR(out.run(&md), CATTN_INVALID_ARGUMENT,
                     "args->decode_max_and_total overlaps another output (got memory shared "
                     "with args->out->query_start_loc");
  EXPECT_EQ(out.bytes(), before);
  // Apart, the same call runs (SPEC's vector).
  out.args.decode_max_and_total = out.max_and_total.dl();
  ASSERT_CATTN_OK(out.run(&md));
  EXPECT_EQ(out.qsl.values(), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(out.max_and_total.values(), (std::vector<int64_t>{2, 4}));
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): KV-sharing fast prefill

namespace {
using namespace cattn_test::refused_untouched;

struct FastPrefill : Base {
  HostTensor qsl = in_tensor({0, 3, 7, 12}, i64()), logits = in_tensor({2, 6, 11, 0}, i32());
  HostTensor o_qsl = out_tensor({4}, i32()), o_qsl_cpu = out_tensor({4}, i64()), max_total = out_tensor({2}, i64());
  Guarded<cattn_common_attn_metadata_t> in{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_fast_prefill_metadata_args_t> args{CATTN_FAST_PREFILL_METADATA_ARGS_INIT};
  bool null_args = false;
  FastPrefill() {
    tensors = {&qsl, &logits, &o_qsl, &o_qsl_cpu, &max_total};
    structs = {&in.bytes(), &out.bytes(), &args.bytes()};
    in->num_reqs = 3;
    in->max_query_len = 5;
    in->num_logits_indices = 3;
    args->passthrough = 9;
  }
  void wire() {
    in->query_start_loc = qsl.dl();
    in->logits_indices_padded = logits.dl();
    out->query_start_loc = o_qsl.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    args->metadata = in.get();
    args->out = out.get();
    args->decode_max_and_total = max_total.dl();
    cattn_common_attn_metadata_t* i = in.get();
    cattn_common_attn_metadata_t* o = out.get();
    slots = {{"args->metadata->logits_indices_padded", logits.dl(), [i] { i->logits_indices_padded = nullptr; }},
             {"args->metadata->query_start_loc", qsl.dl(), [i] { i->query_start_loc = nullptr; }},
             {"args->out->query_start_loc", o_qsl.dl(), [o] { o->query_start_loc = nullptr; }},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), nullptr, false},
             {"args->decode_max_and_total", max_total.dl(), nullptr}};
  }
  cattn_status_t call() {
    return cattn_make_kv_sharing_fast_prefill_common_attn_metadata(null_args ? nullptr : args.get());
  }
};

TEST(refused_untouched, MakeKvSharingFastPrefillCommonAttnMetadata) {
  using V = Variant<FastPrefill>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](FastPrefill& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](FastPrefill& s) { s.args->struct_size = 8; }},
      {"NULL metadata", I, "args->metadata is NULL", nullptr, [](FastPrefill& s) { s.args->metadata = nullptr; }},
      {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](FastPrefill& s) { s.in->struct_size = 8; }},
      {"NULL out", I, "args->out is NULL", nullptr, [](FastPrefill& s) { s.args->out = nullptr; }},
      {"out struct_size", I, "args->out has struct_size too small", nullptr, [](FastPrefill& s) { s.out->struct_size = 8; }},
      {"count -1", I, "args->metadata->num_logits_indices is negative", nullptr, [](FastPrefill& s) { s.in->num_logits_indices = -1; }},
      {"count 5", I, "args->metadata->num_logits_indices is out of range", nullptr, [](FastPrefill& s) { s.in->num_logits_indices = 5; }},
      {"num_reqs 0", I, "args->metadata->num_reqs is not positive", nullptr, [](FastPrefill& s) { s.in->num_reqs = 0; }},
      {"num_reqs 4", I, "args->metadata->query_start_loc has the wrong size", nullptr, [](FastPrefill& s) { s.in->num_reqs = 4; }},
      {"num_reqs INT64_MAX", I, "num_reqs + 1 overflows int64", nullptr, [](FastPrefill& s) { s.in->num_reqs = kI64Max; }},
      {"logits 2-D", I, "args->metadata->logits_indices_padded has the wrong ndim", [](FastPrefill& s) { s.logits = in_tensor({2, 6, 11, 0}, i32(), {2, 2}); }, nullptr},
      {"out query_start_loc [3]", CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc has the wrong size", [](FastPrefill& s) { s.o_qsl = out_tensor({3}, i32()); }, nullptr},
      {"out query_start_loc [5]", I, "args->out->query_start_loc has the wrong size", [](FastPrefill& s) { s.o_qsl = out_tensor({5}, i32()); }, nullptr},
      {"mirror on a GPU", I, "args->out->query_start_loc_cpu is not host memory", nullptr, [](FastPrefill& s) { s.out->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
      {"decode_max_and_total [1]", CATTN_INSUFFICIENT_SIZE, "args->decode_max_and_total has the wrong size", [](FastPrefill& s) { s.max_total = out_tensor({1}, i64()); }, nullptr},
      {"decode_max_and_total [3]", I, "args->decode_max_and_total has the wrong size", [](FastPrefill& s) { s.max_total = out_tensor({3}, i64()); }, nullptr},
      {"decode_max_and_total uint8", I, "args->decode_max_and_total has the wrong dtype", nullptr, [](FastPrefill& s) { s.args->decode_max_and_total->dtype = {kDLUInt, 64, 1}; }},
      {"out overlapping query_start_loc", I, "args->out->query_start_loc overlaps an input", nullptr, [](FastPrefill& s) {
         s.out->query_start_loc = s.overlap_view(s.qsl, 1, {4});
       }},
      {"decreasing", I, "args->metadata->query_start_loc decreases", [](FastPrefill& s) { s.qsl = in_tensor({0, 3, 2, 12}, i64()); }, nullptr},
      {"index past the last request", I, "args->metadata->logits_indices_padded holds an index past the last request", [](FastPrefill& s) { s.logits = in_tensor({2, 12, 11, 0}, i32()); }, nullptr},
      {"device tensors without decode_max_and_total", I, "args->decode_max_and_total is NULL", nullptr, [](FastPrefill& s) {
         s.args->decode_max_and_total = nullptr;
         for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc", "args->out->query_start_loc"})
           s.slot(n)->device = {kDLCUDA, 0};
       }},
      {"device tensors with a host mirror", I, "args->out->query_start_loc_cpu is set with CUDA tensors", nullptr, [](FastPrefill& s) {
         for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc", "args->out->query_start_loc",
                               "args->decode_max_and_total"})
           s.slot(n)->device = {kDLCUDA, 0};
       }},
  };
  if (cpu_only_build())
    v.push_back({"device tensors", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](FastPrefill& s) {
                   s.out->query_start_loc_cpu = nullptr;
                   for (const char* n : {"args->metadata->logits_indices_padded", "args->metadata->query_start_loc",
                                         "args->out->query_start_loc", "args->decode_max_and_total"})
                     s.slot(n)->device = {kDLCUDA, 0};
                 }});
  sweep<FastPrefill>("cattn_make_kv_sharing_fast_prefill_common_attn_metadata", structural<FastPrefill>() + v);
}

}  // namespace
