// SPDX-License-Identifier: Apache-2.0
// make_local_attention_virtual_batches and its plan: conformance against the seed oracle's
// vectors (SPEC's among them, and the one documented difference for seq_len-0 requests), an
// independent token-walk reference on random batches, re-gathering other block tables, use of
// one plan from many threads, and every error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <thread>

#include "cattn.h"
#include "support/count_allocations.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

// The slot mapping is only passed through, but it is checked for its device like any tensor.
DLTensor* g_slot_mapping() {
  static HostTensor t = HostTensor::of({5, 6, 7}, i64());
  static DLTensor* const dl = t.dl();
  return dl;
}

std::vector<int64_t> flatten(const nlohmann::json& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows)
    for (const auto& v : r) out.push_back(v.get<int64_t>());
  return out;
}

struct Batch {
  HostTensor qsl_cpu, seq_lens_cpu, table;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  Batch(const std::vector<int64_t>& q, const std::vector<int64_t>& s,
        const std::vector<int64_t>& table_values, int64_t cols, DLDataType qt, DLDataType tt,
        int64_t step = 1)
      : qsl_cpu(HostTensor::of(q, qt, {}, step, step == 1 ? 0 : 1)),
        seq_lens_cpu(HostTensor::of(s, qt, {}, step)),
        table(HostTensor::of(table_values, tt, {static_cast<int64_t>(s.size()), cols}, step, 3)) {
    md.query_start_loc_cpu = qsl_cpu.dl();
    md.seq_lens_cpu = seq_lens_cpu.dl();
    md.block_table_tensor = table.dl();
    md.slot_mapping = g_slot_mapping();
    md.num_reqs = static_cast<int64_t>(s.size());
    md.num_actual_tokens = q.back() - q.front();
    md.logits_indices_padded = g_slot_mapping();  // must not survive into the virtual batches
    md.num_logits_indices = 5;
  }
};

cattn_local_attention_plan_t* make_plan(const cattn_common_attn_metadata_t* md, int64_t chunk,
                                        int64_t block_size, cattn_status_t* status = nullptr) {
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  a.attn_chunk_size = chunk;
  a.block_size = block_size;
  a.metadata = md;
  const cattn_status_t s = cattn_make_local_attention_virtual_batches(&a);
  if (status) *status = s;
  EXPECT_TRUE(s == CATTN_OK || status) << cattn_last_error_message();
  return a.plan;
}

struct Filled {
  HostTensor qsl_cpu, seq_lens_cpu, computed, table, qsl, seq_lens;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  Filled(int64_t v, int64_t p, DLDataType table_t, DLDataType t, int64_t step = 1,
         bool device_copies = true)
      : qsl_cpu({v + 1}, t, step), seq_lens_cpu({v}, t, step, 1), computed({v}, t, step),
        table({v, p}, table_t, step, 2), qsl({v + 1}, t.bits == 64 ? i32() : i64(), step),
        seq_lens({v}, t.bits == 64 ? i32() : i64(), step) {
    md.query_start_loc_cpu = qsl_cpu.dl();
    md.seq_lens_cpu = seq_lens_cpu.dl();
    md.num_computed_tokens_cpu = computed.dl();
    md.block_table_tensor = table.dl();
    md.query_start_loc = device_copies ? qsl.dl() : nullptr;
    md.seq_lens = device_copies ? seq_lens.dl() : nullptr;
    md.max_query_len = -1;
  }
  cattn_status_t fill(const cattn_local_attention_plan_t* plan,
                      const cattn_common_attn_metadata_t* in) {
    cattn_local_attention_fill_args_t a = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
    a.metadata = in;
    a.out = &md;
    return cattn_local_attention_plan_fill(plan, &a);
  }
  std::vector<std::vector<uint8_t>> bytes() const {
    return {qsl_cpu.bytes(), seq_lens_cpu.bytes(), computed.bytes(),
            table.bytes(),   qsl.bytes(),          seq_lens.bytes()};
  }
};

// The split described from scratch: walk each request's query tokens (absolute positions
// s - q .. s - 1) and cut wherever a chunk boundary falls.
struct Virtual {
  int64_t q, k, batch, first_page;
};
std::vector<Virtual> token_walk(const std::vector<int64_t>& qsl, const std::vector<int64_t>& s,
                                int64_t chunk, int64_t bs) {
  std::vector<Virtual> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t q = qsl[i + 1] - qsl[i], ctx = s[i] - q;
    if (q == 0) {  // one empty virtual batch covering the last chunk of keys
      const int64_t k = s[i] % chunk == 0 ? chunk : s[i] % chunk;
      out.push_back({0, k, static_cast<int64_t>(i), std::max<int64_t>(s[i] - k, 0) / bs});
      continue;
    }
    int64_t pos = ctx;
    while (pos < s[i]) {
      const int64_t chunk_start = pos / chunk * chunk;
      const int64_t end = std::min(chunk_start + chunk, s[i]);
      out.push_back({end - pos, end - chunk_start, static_cast<int64_t>(i), chunk_start / bs});
      pos = end;
    }
  }
  return out;
}

}  // namespace

TEST(make_local_attention_virtual_batches, OracleVectors) {
  const auto vec = load_vectors("make_local_attention_virtual_batches");
  ASSERT_GT(vec["cases"].size(), 25u);
  int differing = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto q = ints(c["query_start_loc"]), s = ints(c["seq_lens"]);
    const auto table = flatten(c["block_table"]);
    const int64_t cols = static_cast<int64_t>(c["block_table"][0].size());
    const auto& e = c["expect"];
    const int64_t v = e["num_reqs"], p = e["pages"];
    const auto want_table = flatten(e["block_table"]);
    if (c.contains("seed_block_table")) {
      // The vectors themselves: libcattn differs from the seed exactly on the listed rows.
      ++differing;
      std::vector<int64_t> rows;
      for (int64_t r = 0; r < v; ++r)
        if (c["seed_block_table"][r] != e["block_table"][r]) rows.push_back(r);
      EXPECT_EQ(rows, ints(c["differs_from_seed_rows"]));
      EXPECT_FALSE(rows.empty());
    }
    for (DLDataType qt : {i32(), i64()})
      for (DLDataType tt : {i32(), i64()})
        for (int64_t step : {1, 2}) {
          Batch in(q, s, table, cols, qt, tt, step);
          cattn_local_attention_plan_t* plan =
              make_plan(&in.md, c["attn_chunk_size"], c["block_size"]);
          ASSERT_NE(plan, nullptr);
          int64_t got_v = -1, got_p = -1;
          ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &got_v, &got_p));
          EXPECT_EQ(got_v, v);
          EXPECT_EQ(got_p, p);
          Filled out(v, p, tt, qt.bits == 64 ? i32() : i64(), step);
          out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE + 24;
          ASSERT_CATTN_OK(out.fill(plan, &in.md));
          EXPECT_EQ(out.md.struct_size, CATTN_COMMON_ATTN_METADATA_SIZE + 24);
          EXPECT_EQ(out.qsl_cpu.values(), ints(e["query_start_loc"]));
          EXPECT_EQ(out.qsl.values(), ints(e["query_start_loc"]));
          EXPECT_EQ(out.seq_lens_cpu.values(), ints(e["seq_lens"]));
          EXPECT_EQ(out.seq_lens.values(), ints(e["seq_lens"]));
          EXPECT_EQ(out.computed.values(), ints(e["num_computed_tokens"]));
          EXPECT_EQ(out.table.values(), want_table);
          EXPECT_EQ(out.md.num_reqs, v);
          EXPECT_EQ(out.md.num_actual_tokens, e["num_actual_tokens"].get<int64_t>());
          EXPECT_EQ(out.md.max_query_len, e["max_query_len"].get<int64_t>());
          EXPECT_EQ(out.md.max_seq_len, e["max_seq_len"].get<int64_t>());
          EXPECT_EQ(out.md.slot_mapping, g_slot_mapping());
          EXPECT_EQ(out.md.causal, 1);
          EXPECT_EQ(out.md.logits_indices_padded, nullptr);
          EXPECT_EQ(out.md.num_logits_indices, 0);
          EXPECT_EQ(out.md.query_start_loc_cpu, out.qsl_cpu.dl());
          EXPECT_EQ(out.md.block_table_tensor, out.table.dl());
          // The closure on its own gives the same table.
          HostTensor again({v, p}, tt, 3 - step);
          ASSERT_CATTN_OK(cattn_local_attention_plan_make_block_table(plan, in.table.dl(),
                                                                      again.dl(), nullptr));
          EXPECT_EQ(again.values(), want_table);
          cattn_local_attention_plan_destroy(plan);
        }
  }
  EXPECT_GE(differing, 2);
}

TEST(make_local_attention_virtual_batches, RandomAgainstTokenWalk) {
  std::mt19937_64 g(5);
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t bs = int64_t{1} << (g() % 5);
    const int64_t chunk = bs * (1 + static_cast<int64_t>(g() % 6));
    const int64_t b = 1 + static_cast<int64_t>(g() % 50);
    const bool decode_only = iter % 7 == 0;
    std::vector<int64_t> q{static_cast<int64_t>(g() % 3)}, s;
    for (int64_t i = 0; i < b; ++i) {
      const int64_t len = decode_only ? 1 : static_cast<int64_t>(g() % (3 * chunk + 2));
      q.push_back(q.back() + len);
      // seq_len >= 1 here: for seq_len 0 the reference and the seed disagree by design.
      s.push_back(std::max<int64_t>(1, len + static_cast<int64_t>(g() % (4 * chunk))));
    }
    const int64_t cols = 1 + *std::max_element(s.begin(), s.end()) / bs +
                         static_cast<int64_t>(g() % 3) - 1;
    std::vector<int64_t> table(static_cast<size_t>(b * cols));
    for (auto& x : table) x = static_cast<int64_t>(g() % 1000000);
    Batch in(q, s, table, cols, (iter & 1) ? i64() : i32(), (iter & 2) ? i64() : i32());
    cattn_local_attention_plan_t* plan = make_plan(&in.md, chunk, bs);
    ASSERT_NE(plan, nullptr);
    const auto want = token_walk(q, s, chunk, bs);
    const int64_t v = static_cast<int64_t>(want.size()), p = chunk / bs;
    Filled out(v, p, (iter & 2) ? i64() : i32(), (iter & 4) ? i64() : i32(), 1 + iter % 2,
               iter % 3 == 0);
    ASSERT_CATTN_OK(out.fill(plan, &in.md));
    int64_t cu = 0, max_q = 0, max_k = 0;
    ASSERT_EQ(out.qsl_cpu.get(0), 0);
    for (int64_t i = 0; i < v; ++i) {
      const Virtual& w = want[static_cast<size_t>(i)];
      cu += w.q;
      max_q = std::max(max_q, w.q);
      max_k = std::max(max_k, w.k);
      ASSERT_EQ(out.qsl_cpu.get(i + 1), cu) << i;
      ASSERT_EQ(out.seq_lens_cpu.get(i), w.k) << i;
      ASSERT_EQ(out.computed.get(i), w.k - w.q) << i;
      for (int64_t j = 0; j < p; ++j)
        ASSERT_EQ(out.table.get(i * p + j),
                  table[static_cast<size_t>(w.batch * cols + std::min(w.first_page + j, cols - 1))]);
    }
    EXPECT_EQ(out.md.max_query_len, max_q);
    EXPECT_EQ(out.md.max_seq_len, max_k);
    if (iter % 3 != 0) EXPECT_EQ(out.md.query_start_loc, nullptr);
    cattn_local_attention_plan_destroy(plan);
  }
}

TEST(make_local_attention_virtual_batches, MakeBlockTableFromAnotherTable) {
  // SPEC's first batch; later steps hand in a new, wider table with other page ids.
  const std::vector<int64_t> q{0, 4, 14, 19}, s{6, 17, 9};
  std::vector<int64_t> t0(27);
  for (size_t i = 0; i < t0.size(); ++i) t0[i] = static_cast<int64_t>(i);
  Batch in(q, s, t0, 9, i32(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  std::vector<int64_t> t1(3 * 12);
  for (size_t i = 0; i < t1.size(); ++i) t1[i] = 1000 + static_cast<int64_t>(i);
  HostTensor wider = HostTensor::of(t1, i64(), {3, 12}, 2);
  HostTensor out({8, 2}, i64());
  ASSERT_CATTN_OK(cattn_local_attention_plan_make_block_table(plan, wider.dl(), out.dl(), nullptr));
  // Columns as planned ([0,1],[2,3],[2,3],[4,5],[6,7],[8,8],[2,3],[4,5]), rows from the new table.
  EXPECT_EQ(out.values(), (std::vector<int64_t>{1000, 1001, 1002, 1003, 1014, 1015, 1016, 1017,
                                                1018, 1019, 1020, 1020, 1026, 1027, 1028, 1029}));
  HostTensor narrow = HostTensor::of(std::vector<int64_t>(24, 0), i64(), {3, 8});
  const auto before = out.bytes();
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, narrow.dl(), out.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "fewer columns");
  EXPECT_EQ(out.bytes(), before);
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, ZeroSeqLenClampsWhereTheSeedWouldFail) {
  // pages (4) > columns (3): the seed's wrapped index -4 is out of range for the row and
  // torch raises; libcattn starts at column 0 and clips as usual.
  Batch in({0, 0, 2}, {0, 3}, {10, 11, 12, 20, 21, 22}, 3, i32(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 1);
  ASSERT_NE(plan, nullptr);
  Filled out(2, 4, i32(), i32());
  ASSERT_CATTN_OK(out.fill(plan, &in.md));
  EXPECT_EQ(out.table.values(), (std::vector<int64_t>{10, 11, 12, 12, 20, 21, 22, 22}));
  EXPECT_EQ(out.seq_lens_cpu.values(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(out.computed.values(), (std::vector<int64_t>{4, 1}));
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, PlanSharedByThreads) {
  const std::vector<int64_t> q{0, 4, 14, 19}, s{6, 17, 9};
  std::vector<int64_t> t(3 * 9);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int64_t>(i);
  Batch in(q, s, t, 9, i64(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  const std::vector<int64_t> want_table{0, 1, 2, 3, 11, 12, 13, 14, 15, 16, 17, 17, 20, 21, 22, 23};
  std::vector<int> failures(8, 0);
  DLTensor* const table_dl = in.table.dl();  // dl() writes, so not from the threads
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th)
    threads.emplace_back([&, th] {
      for (int rep = 0; rep < 200; ++rep) {
        Filled out(8, 2, i32(), th % 2 ? i64() : i32());
        HostTensor table({8, 2}, i32());
        if (out.fill(plan, &in.md) != CATTN_OK ||
            cattn_local_attention_plan_make_block_table(plan, table_dl, table.dl(), nullptr) !=
                CATTN_OK ||
            out.qsl_cpu.values() != std::vector<int64_t>{0, 2, 4, 5, 9, 13, 14, 18, 19} ||
            out.seq_lens_cpu.values() != std::vector<int64_t>{4, 2, 4, 4, 4, 1, 4, 1} ||
            out.table.values() != want_table || table.values() != want_table)
          ++failures[static_cast<size_t>(th)];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(8, 0));
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, DestroyAndShapeEdges) {
  cattn_local_attention_plan_destroy(nullptr);  // a no-op
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_get_shape(nullptr, nullptr, nullptr),
                     CATTN_INVALID_ARGUMENT, "plan");
  Batch in({0, 8}, {12}, {0, 1, 2, 3, 4, 5}, 6, i32(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  int64_t v = -1;
  EXPECT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &v, nullptr));
  EXPECT_EQ(v, 2);
  int64_t p = -1;
  EXPECT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, nullptr, &p));
  EXPECT_EQ(p, 2);
  // The plan does not keep the metadata: changing the input afterwards changes nothing.
  in.seq_lens_cpu.set(0, 100);
  Filled out(2, 2, i32(), i32());
  ASSERT_CATTN_OK(out.fill(plan, &in.md));
  EXPECT_EQ(out.seq_lens_cpu.values(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(out.table.values(), (std::vector<int64_t>{2, 3, 4, 5}));
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, PlanErrors) {
  Batch in({0, 4, 14, 19}, {6, 17, 9}, std::vector<int64_t>(27, 1), 9, i32(), i32());
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  auto sentinel = reinterpret_cast<cattn_local_attention_plan_t*>(0x1234);
  a.attn_chunk_size = 4;
  a.block_size = 2;
  a.metadata = &in.md;
  a.plan = sentinel;
  auto expect = [&](cattn_status_t code, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&a), code, needle);
    EXPECT_EQ(a.plan, sentinel) << "a failed call wrote args->plan";
  };
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(nullptr), CATTN_INVALID_ARGUMENT,
                     "args");
  a.struct_size = 8;
  expect(CATTN_INVALID_ARGUMENT, "args has struct_size");
  a.struct_size = CATTN_LOCAL_ATTENTION_ARGS_SIZE;
  for (int64_t bad : {int64_t{0}, int64_t{-4}}) {
    a.attn_chunk_size = bad;
    expect(CATTN_INVALID_ARGUMENT, "args->attn_chunk_size");
  }
  a.attn_chunk_size = 4;
  for (int64_t bad : {int64_t{0}, int64_t{-2}}) {
    a.block_size = bad;
    expect(CATTN_INVALID_ARGUMENT, "args->block_size");
  }
  a.block_size = 3;
  expect(CATTN_INVALID_ARGUMENT, "does not divide");
  a.block_size = 8;
  expect(CATTN_INVALID_ARGUMENT, "does not divide");
  a.block_size = 2;
  a.metadata = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->metadata");
  a.metadata = &in.md;
  in.md.struct_size = 8;
  expect(CATTN_INVALID_ARGUMENT, "args->metadata has struct_size");
  in.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;

  in.md.query_start_loc_cpu = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->query_start_loc_cpu is NULL");
  in.md.query_start_loc_cpu = in.qsl_cpu.dl();
  in.md.seq_lens_cpu = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->seq_lens_cpu is NULL");
  in.md.seq_lens_cpu = in.seq_lens_cpu.dl();
  in.qsl_cpu.dl()->device = {kDLCUDA, 0};
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->query_start_loc_cpu is not host memory");
  in.qsl_cpu.dl();
  in.seq_lens_cpu.dl()->device = {kDLCUDA, 0};
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->seq_lens_cpu is not host memory");
  in.seq_lens_cpu.dl();
  HostTensor q_short = HostTensor::of({0, 4, 14}, i32());
  in.md.query_start_loc_cpu = q_short.dl();
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->query_start_loc_cpu has the wrong size");
  HostTensor q_dec = HostTensor::of({0, 4, 3, 8}, i32());
  in.md.query_start_loc_cpu = q_dec.dl();
  expect(CATTN_INVALID_ARGUMENT, "decreases");
  HostTensor q_long = HostTensor::of({0, 4, 14, 30}, i64());
  in.md.query_start_loc_cpu = q_long.dl();
  expect(CATTN_INVALID_ARGUMENT, "shorter than the query");
  HostTensor q_f = HostTensor::of({0, 4, 14, 19}, f32());
  in.md.query_start_loc_cpu = q_f.dl();
  expect(CATTN_INVALID_ARGUMENT, "dtype");
  HostTensor q_ovf = HostTensor::of({INT64_MIN, 0, 1, 2}, i64());
  in.md.query_start_loc_cpu = q_ovf.dl();
  expect(CATTN_INVALID_ARGUMENT, "overflows int64");
  in.md.query_start_loc_cpu = in.qsl_cpu.dl();

  HostTensor empty_s({0}, i32());
  HostTensor zero_q = HostTensor::of({0}, i32());
  in.md.seq_lens_cpu = empty_s.dl();
  in.md.query_start_loc_cpu = zero_q.dl();
  expect(CATTN_INVALID_ARGUMENT, "empty batch");
  in.md.seq_lens_cpu = in.seq_lens_cpu.dl();
  in.md.query_start_loc_cpu = in.qsl_cpu.dl();

  in.md.block_table_tensor = nullptr;
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->block_table_tensor is NULL");
  HostTensor t1d = HostTensor::of({1, 2, 3}, i32());
  in.md.block_table_tensor = t1d.dl();
  expect(CATTN_INVALID_ARGUMENT, "ndim");
  HostTensor t_rows = HostTensor::of(std::vector<int64_t>(8, 0), i32(), {2, 4});
  in.md.block_table_tensor = t_rows.dl();
  expect(CATTN_INVALID_ARGUMENT, "args->metadata->block_table_tensor has the wrong size in dim 0");
  HostTensor t_nocols({3, 0}, i32());
  in.md.block_table_tensor = t_nocols.dl();
  expect(CATTN_INVALID_ARGUMENT, "no columns");
  HostTensor t_f = HostTensor::of(std::vector<int64_t>(9, 0), f32(), {3, 3});
  in.md.block_table_tensor = t_f.dl();
  expect(CATTN_INVALID_ARGUMENT, "dtype");
  // The block table may live on the GPU: the plan only reads its column count.
  in.md.block_table_tensor = in.table.dl();
  in.table.dl()->device = {kDLCUDA, 0};
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&a));
  ASSERT_NE(a.plan, sentinel);
  cattn_local_attention_plan_destroy(a.plan);
}

TEST(make_local_attention_virtual_batches, FillAndGatherErrors) {
  Batch in({0, 4, 14, 19}, {6, 17, 9}, std::vector<int64_t>(27, 1), 9, i32(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  Filled out(8, 2, i32(), i32());
  const auto before = out.bytes();
  const auto out_md = out.md;
  auto expect_untouched = [&] {
    EXPECT_EQ(out.bytes(), before);
    EXPECT_EQ(std::memcmp(&out.md, &out_md, sizeof out_md), 0) << "out struct was written";
  };
  cattn_local_attention_fill_args_t a = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  a.metadata = &in.md;
  a.out = &out.md;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(nullptr, &a), CATTN_INVALID_ARGUMENT, "plan");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, nullptr), CATTN_INVALID_ARGUMENT, "args");
  a.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &a), CATTN_INVALID_ARGUMENT,
                     "args has struct_size");
  a.struct_size = CATTN_LOCAL_ATTENTION_FILL_ARGS_SIZE;
  a.metadata = nullptr;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &a), CATTN_INVALID_ARGUMENT,
                     "args->metadata");
  a.metadata = &in.md;
  a.out = nullptr;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &a), CATTN_INVALID_ARGUMENT, "args->out");
  a.out = &out.md;
  out.md.struct_size = 8;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_fill(plan, &a), CATTN_INVALID_ARGUMENT,
                     "args->out has struct_size");
  out.md.struct_size = CATTN_COMMON_ATTN_METADATA_SIZE;
  expect_untouched();

  // Required outputs.
  struct Field { DLTensor** slot; const char* name; };
  for (Field f : {Field{&out.md.query_start_loc_cpu, "args->out->query_start_loc_cpu"},
                  Field{&out.md.seq_lens_cpu, "args->out->seq_lens_cpu"},
                  Field{&out.md.num_computed_tokens_cpu, "args->out->num_computed_tokens_cpu"},
                  Field{&out.md.block_table_tensor, "args->out->block_table_tensor"},
                  Field{&in.md.block_table_tensor, "args->metadata->block_table_tensor"}}) {
    DLTensor* keep = *f.slot;
    *f.slot = nullptr;
    EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, f.name);
    *f.slot = keep;
  }
  expect_untouched();
  // Sizes.
  HostTensor v7({7}, i32()), v9({9}, i32()), v8({8}, i32()), t82_64({8, 2}, i64()),
      t83({8, 3}, i32()), t72({7, 2}, i32());
  out.md.query_start_loc_cpu = v8.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INSUFFICIENT_SIZE,
                     "args->out->query_start_loc_cpu");
  out.md.query_start_loc_cpu = out.qsl_cpu.dl();
  out.md.seq_lens_cpu = v7.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INSUFFICIENT_SIZE, "args->out->seq_lens_cpu");
  out.md.seq_lens_cpu = out.seq_lens_cpu.dl();
  out.md.num_computed_tokens_cpu = v9.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->num_computed_tokens_cpu");
  out.md.num_computed_tokens_cpu = out.computed.dl();
  out.md.seq_lens = v9.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "args->out->seq_lens");
  out.md.seq_lens = out.seq_lens.dl();
  out.md.block_table_tensor = t72.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INSUFFICIENT_SIZE,
                     "args->out->block_table_tensor");
  out.md.block_table_tensor = t83.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->block_table_tensor");
  out.md.block_table_tensor = t82_64.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "dtype");
  out.md.block_table_tensor = out.table.dl();
  expect_untouched();
  // The source table: rows of the planned batch, at least the planned columns.
  HostTensor narrow = HostTensor::of(std::vector<int64_t>(24, 0), i32(), {3, 8});
  in.md.block_table_tensor = narrow.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "fewer columns");
  HostTensor rows4 = HostTensor::of(std::vector<int64_t>(36, 0), i32(), {4, 9});
  in.md.block_table_tensor = rows4.dl();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "wrong size in dim 0");
  in.md.block_table_tensor = in.table.dl();
  // The gathered table may not overlap its source.
  DLTensor view = *in.table.dl();
  int64_t shape82[2] = {8, 2}, strides82[2] = {2, 1};
  view.shape = shape82;
  view.strides = strides82;
  out.md.block_table_tensor = &view;
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "overlaps");
  out.md.block_table_tensor = out.table.dl();
  expect_untouched();
  // Devices.
  out.computed.dl()->device = {kDLCUDAHost, 0};  // pinned host memory is host memory
  out.qsl_cpu.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc_cpu is not host memory");
  out.qsl_cpu.dl();
  out.seq_lens.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "different device");
  out.seq_lens.dl();
  HostTensor slots({4}, i64());
  in.md.slot_mapping = slots.dl();
  slots.dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT,
                     "args->metadata->slot_mapping is on a different device");
  in.md.slot_mapping = g_slot_mapping();
  expect_untouched();
  // These "device" tensors are host memory: only where no GPU can run the kernels may a call
  // get past validation (test_make_local_attention_virtual_batches_gpu.cpp covers a GPU).
  int32_t gpus = 0;
  ASSERT_EQ(cattn_cuda_device_count(&gpus), CATTN_OK);
  for (HostTensor* t : {&in.table, &out.table, &out.qsl, &out.seq_lens}) t->dl()->device = {kDLCUDA, 0};
  in.md.slot_mapping = nullptr;  // the host stand-in would be on the wrong device now
  out.md.num_computed_tokens_cpu = v7.dl();  // the host mirrors are still checked first
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INSUFFICIENT_SIZE,
                     "args->out->num_computed_tokens_cpu");
  out.md.num_computed_tokens_cpu = out.computed.dl();
  if (gpus == 0) {
    const cattn_status_t s = out.fill(plan, &in.md);
    EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s) << ": "
                                      << cattn_last_error_message();
  }
  in.md.slot_mapping = g_slot_mapping();
  for (HostTensor* t : {&in.table, &out.table, &out.qsl, &out.seq_lens}) t->dl();
  out.computed.dl();
  expect_untouched();
  ASSERT_CATTN_OK(out.fill(plan, &in.md));  // and the same arguments are otherwise fine

  // make_block_table.
  HostTensor g({8, 2}, i32());
  const auto g_before = g.bytes();
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(nullptr, in.table.dl(), g.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "plan");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, nullptr, g.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "block_table");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, in.table.dl(), nullptr, nullptr),
                     CATTN_INVALID_ARGUMENT, "out");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, in.table.dl(), t72.dl(), nullptr),
                     CATTN_INSUFFICIENT_SIZE, "out");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, in.table.dl(), t82_64.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "dtype");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, rows4.dl(), g.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "block_table has the wrong size");
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, in.table.dl(), &view, nullptr),
                     CATTN_INVALID_ARGUMENT, "overlaps");
  DLTensor* table_on_gpu = in.table.dl();
  table_on_gpu->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, table_on_gpu, g.dl(), nullptr),
                     CATTN_INVALID_ARGUMENT, "different device");
  DLTensor* g_on_gpu = g.dl();
  g_on_gpu->device = {kDLCUDA, 0};
  if (gpus == 0) {
    const cattn_status_t s2 =
        cattn_local_attention_plan_make_block_table(plan, table_on_gpu, g_on_gpu, nullptr);
    EXPECT_EQ(s2, CATTN_NOT_SUPPORTED) << cattn_status_string(s2) << ": "
                                       << cattn_last_error_message();
  }
  EXPECT_EQ(g.bytes(), g_before);
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, Int32OutputOverflowRejected) {
  // One request of 2^32 query tokens in chunks of 2^40: two tiny virtual batches whose
  // cumulative query length needs int64.
  const int64_t q = int64_t{1} << 32;
  Batch in({0, q}, {q}, {0, 1, 2, 3}, 4, i64(), i32());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, int64_t{1} << 40, int64_t{1} << 38);
  ASSERT_NE(plan, nullptr);
  int64_t v = 0, p = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &v, &p));
  ASSERT_EQ(v, 1);
  ASSERT_EQ(p, 4);
  Filled out(1, 4, i32(), i32());
  const auto before = out.bytes();
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc_cpu");
  EXPECT_EQ(out.bytes(), before);
  Filled out64(1, 4, i32(), i64());  // device copies are int32 there: still rejected
  EXPECT_CATTN_ERROR(out64.fill(plan, &in.md), CATTN_INVALID_ARGUMENT, "args->out->query_start_loc");
  // The device copies get the same check before any launch (these "device" tensors are host
  // memory that the check keeps every kernel away from).
  const auto before64 = out64.bytes();
  for (HostTensor* t : {&in.table, &out64.table, &out64.qsl, &out64.seq_lens})
    t->dl()->device = {kDLCUDA, 0};
  in.md.slot_mapping = nullptr;
  EXPECT_CATTN_ERROR(out64.fill(plan, &in.md), CATTN_INVALID_ARGUMENT,
                     "args->out->query_start_loc cannot hold");
  EXPECT_EQ(out64.bytes(), before64);
  in.md.slot_mapping = g_slot_mapping();
  for (HostTensor* t : {&in.table, &out64.table, &out64.qsl, &out64.seq_lens}) t->dl();
  out64.md.query_start_loc = nullptr;
  out64.md.seq_lens = nullptr;
  ASSERT_CATTN_OK(out64.fill(plan, &in.md));
  EXPECT_EQ(out64.qsl_cpu.values(), (std::vector<int64_t>{0, q}));
  EXPECT_EQ(out64.seq_lens_cpu.values(), (std::vector<int64_t>{q}));
  EXPECT_EQ(out64.table.values(), (std::vector<int64_t>{0, 1, 2, 3}));
  cattn_local_attention_plan_destroy(plan);
}

TEST(make_local_attention_virtual_batches, DeviceGatherNeeds31BitColumns) {
  // The device gather packs (request, first page) into one int64, 31 bits each, with first
  // pages clipped to cols - 1: a plan over more than 2^31 columns is served on the host only.
  // The block table's data is never read here (a plan reads its column count, and the device
  // call fails before any launch), so one element with zero strides stands behind a huge shape.
  const int64_t cols = (int64_t{1} << 31) + 1;
  int32_t storage[1] = {0};
  int64_t shape[2] = {2, cols}, strides[2] = {0, 0};
  DLTensor wide{};
  wide.data = storage;
  wide.device = {kDLCPU, 0};
  wide.ndim = 2;
  wide.dtype = i32();
  wide.shape = shape;
  wide.strides = strides;
  Batch in({0, 3, 4}, {5, 1}, {0, 0}, 1, i32(), i32());
  in.md.block_table_tensor = &wide;
  in.md.slot_mapping = nullptr;
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  int64_t v = 0, p = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(plan, &v, &p));
  ASSERT_EQ(v, 3);
  ASSERT_EQ(p, 2);
  wide.device = {kDLCUDA, 0};
  HostTensor g({v, p}, i32());
  const auto g_before = g.bytes();
  DLTensor* g_on_gpu = g.dl();
  g_on_gpu->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, &wide, g_on_gpu, nullptr),
                     CATTN_NOT_SUPPORTED, "too many planned columns");
  Filled out(v, p, i32(), i32());
  const auto before = out.bytes();
  for (HostTensor* t : {&out.table, &out.qsl, &out.seq_lens}) t->dl()->device = {kDLCUDA, 0};
  EXPECT_CATTN_ERROR(out.fill(plan, &in.md), CATTN_NOT_SUPPORTED, "too many planned columns");
  EXPECT_EQ(g.bytes(), g_before);
  EXPECT_EQ(out.bytes(), before);
  cattn_local_attention_plan_destroy(plan);
}

// ------------------------------------------------------------------------------------------
// Hostile input: a plan whose size data values alone decide, stride-0 mirrors, handle misuse,
// and every allocation bounded by the size query.

namespace {

struct PlanArgs {
  int64_t qsl[2], seq[1], table[1] = {7};
  int64_t qsl_shape[1] = {2}, seq_shape[1] = {1}, table_shape[2] = {1, 1};
  DLTensor qsl_t{}, seq_t{}, table_t{};
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  // The probe: one request of 2^k query tokens and chunk 1, so V = 2^k.
  explicit PlanArgs(int k) : qsl{0, int64_t{1} << k}, seq{int64_t{1} << k} {
    auto wire = [](DLTensor& t, void* data, int ndim, int64_t* shape) {
      t.data = data;
      t.device = {kDLCPU, 0};
      t.ndim = ndim;
      t.dtype = {kDLInt, 64, 1};
      t.shape = shape;
    };
    wire(qsl_t, qsl, 1, qsl_shape);
    wire(seq_t, seq, 1, seq_shape);
    wire(table_t, table, 2, table_shape);
    md.query_start_loc_cpu = &qsl_t;
    md.seq_lens_cpu = &seq_t;
    md.block_table_tensor = &table_t;
    a.attn_chunk_size = 1;
    a.block_size = 1;
    a.metadata = &md;
  }
};

}  // namespace

TEST(make_local_attention_virtual_batches_hostile, PlanBoundedOnlyByValuesIsRefused) {
  const bool counted = library_allocations_counted();  // before any count is armed
  // The probe's input: query_start_loc_cpu {0, 2^k}, seq_lens_cpu {2^k}, chunk 1, block 1, a
  // 1x1 table, num_actual_tokens left 0. It planned 658 MB (k = 24), 5.25 GB (k = 27), and
  // asked for 40 GiB (k = 30); now the derived cap 2 * B + cdiv(0, 1) = 2 refuses it before
  // anything is allocated, in the size query and the create call alike.
  for (int k : {24, 27, 30}) {
    SCOPED_TRACE(k);
    PlanArgs p(k);
    p.a.plan = reinterpret_cast<cattn_local_attention_plan_t*>(uintptr_t{0x5a5a});
    int64_t v = -1;
    size_t bytes = 1;
    CountAllocations count;
    EXPECT_CATTN_ERROR(
        cattn_make_local_attention_virtual_batches_size(&p.a, &v, nullptr, &bytes),
        CATTN_INVALID_ARGUMENT,
        "args->metadata->num_actual_tokens caps the virtual batches below what the batch needs");
    EXPECT_EQ(v, -1);
    EXPECT_EQ(bytes, 1u);
    EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&p.a), CATTN_INVALID_ARGUMENT,
                       "caps the virtual batches");
    EXPECT_EQ(p.a.plan, reinterpret_cast<cattn_local_attention_plan_t*>(uintptr_t{0x5a5a}));
    // Only the two error messages were allocated, nothing near V * 40 bytes.
    if (counted) EXPECT_LT(count.bytes(), size_t{16384});
  }
}

TEST(make_local_attention_virtual_batches_hostile, SizeQueryReportsWithoutAllocating) {
  SKIP_UNLESS_ALLOCATIONS_COUNTED();
  PlanArgs p(30);
  p.a.max_virtual_batches = int64_t{1} << 31;  // an explicit cap above the batch's need
  int64_t v = 0, pages = 0;
  size_t bytes = 0;
  {
    CountAllocations count;
    ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches_size(&p.a, &v, &pages, &bytes));
    EXPECT_EQ(count.bytes(), 0u);
  }
  EXPECT_EQ(v, int64_t{1} << 30);
  EXPECT_EQ(pages, 1);
  EXPECT_GE(bytes, size_t{40} << 30);  // what the create call would allocate: say no to it
  // A cap below the need is refused, naming the field.
  p.a.max_virtual_batches = (int64_t{1} << 30) - 1;
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches_size(&p.a, &v, &pages, &bytes),
                     CATTN_INVALID_ARGUMENT, "args->max_virtual_batches caps the virtual batches");
  p.a.max_virtual_batches = -1;
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&p.a), CATTN_INVALID_ARGUMENT,
                     "args->max_virtual_batches is negative");
}

TEST(make_local_attention_virtual_batches_hostile, AllocationWithinTheSizeQuery) {
  SKIP_UNLESS_ALLOCATIONS_COUNTED();
  // Plans past 4,096 virtual batches up to the cap: the create call allocates no more than
  // the size query reports, and a cap of exactly V is enough.
  for (int k : {12, 13, 16}) {
    SCOPED_TRACE(k);
    PlanArgs p(k);
    p.md.num_actual_tokens = int64_t{1} << k;  // derived cap 2 + 2^k
    int64_t v = 0;
    size_t bytes = 0;
    ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches_size(&p.a, &v, nullptr, &bytes));
    ASSERT_EQ(v, int64_t{1} << k);
    p.a.max_virtual_batches = v;
    size_t allocated = 0;
    {
      CountAllocations count;
      ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&p.a));
      allocated = count.bytes();
    }
    EXPECT_LE(allocated, bytes);
    EXPECT_GE(allocated, static_cast<size_t>(v) * 40);
    int64_t got = 0;
    ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(p.a.plan, &got, nullptr));
    EXPECT_EQ(got, v);
    cattn_local_attention_plan_destroy(p.a.plan);
    p.a.max_virtual_batches = v - 1;
    EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&p.a), CATTN_INVALID_ARGUMENT,
                       "args->max_virtual_batches");
  }
}

TEST(make_local_attention_virtual_batches_hostile, HugeBroadcastMirrorsAreRefused) {
  // 2^26 zero-length requests stored in 3 elements (stride-0 mirrors) planned 2.56 GB.
  int64_t zero[1] = {0}, table[1] = {0};
  const int64_t b = int64_t{1} << 26;
  int64_t qsl_shape[1] = {b + 1}, seq_shape[1] = {b}, table_shape[2] = {b, 1};
  int64_t zero_stride[2] = {0, 0};
  DLTensor qsl{zero, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, qsl_shape, zero_stride, 0};
  DLTensor seq{zero, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, seq_shape, zero_stride, 0};
  DLTensor tab{table, {kDLCPU, 0}, 2, {kDLInt, 64, 1}, table_shape, zero_stride, 0};
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT;
  md.query_start_loc_cpu = &qsl;
  md.seq_lens_cpu = &seq;
  md.block_table_tensor = &tab;
  md.num_actual_tokens = b;
  cattn_local_attention_args_t a = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  a.attn_chunk_size = 4;
  a.block_size = 2;
  a.metadata = &md;
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "is a broadcast view (a zero stride) of too many elements to scan");
  EXPECT_EQ(a.plan, nullptr);
  // One element past the limit is refused; smaller broadcast mirrors plan as any others.
  qsl_shape[0] = CATTN_MAX_BROADCAST_ELEMENTS + 1;
  seq_shape[0] = table_shape[0] = CATTN_MAX_BROADCAST_ELEMENTS;
  EXPECT_CATTN_ERROR(cattn_make_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "args->metadata->query_start_loc_cpu is a broadcast view");
  qsl_shape[0] = (1 << 16) + 1;
  seq_shape[0] = table_shape[0] = 1 << 16;
  ASSERT_CATTN_OK(cattn_make_local_attention_virtual_batches(&a));
  int64_t v = 0;
  ASSERT_CATTN_OK(cattn_local_attention_plan_get_shape(a.plan, &v, nullptr));
  EXPECT_EQ(v, 1 << 16);
  cattn_local_attention_plan_destroy(a.plan);
}

TEST(make_local_attention_virtual_batches_hostile, DestroyedPlansAreRecognised) {
  Batch in({0, 3, 4}, {5, 1}, {0, 1, 2, 3}, 2, i64(), i64());
  cattn_local_attention_plan_t* plan = make_plan(&in.md, 4, 2);
  ASSERT_NE(plan, nullptr);
  cattn_local_attention_plan_destroy(plan);
  int64_t v = -1;
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_get_shape(plan, &v, nullptr),
                     CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  EXPECT_EQ(v, -1);
  HostTensor g({3, 2}, i64());
  const auto before = g.bytes();
  EXPECT_CATTN_ERROR(cattn_local_attention_plan_make_block_table(plan, in.table.dl(), g.dl(),
                                                                 nullptr),
                     CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  EXPECT_EQ(g.bytes(), before);
  // A second destroy frees nothing and says so; a context is not a plan either.
  cattn_local_attention_plan_destroy(plan);
  EXPECT_NE(std::string(cattn_last_error_message()).find("cattn_local_attention_plan_destroy"),
            std::string::npos);
  cattn_context_t* ctx = nullptr;
  ASSERT_CATTN_OK(cattn_context_create(&ctx));
  EXPECT_CATTN_ERROR(
      cattn_local_attention_plan_get_shape(reinterpret_cast<cattn_local_attention_plan_t*>(ctx),
                                           &v, nullptr),
      CATTN_INVALID_ARGUMENT, "plan is not a live handle");
  cattn_context_destroy(ctx);
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Local-attention virtual batches: the plan,
// its shape, fill, make_block_table

namespace {
using namespace cattn_test::refused_untouched;

struct LocalMake : Base {
  HostTensor qsl = in_tensor({0, 3, 10}, i32()), seq = in_tensor({7, 12}, i64());
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32(), {2, 4});
  Guarded<cattn_common_attn_metadata_t> md{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_local_attention_args_t> args{CATTN_LOCAL_ATTENTION_ARGS_INIT};
  bool null_args = false;
  LocalMake() {
    tensors = {&qsl, &seq, &table};
    structs = {&md.bytes(), &args.bytes()};
    args->attn_chunk_size = 4;
    args->block_size = 2;
    md->num_actual_tokens = 10;
  }
  void wire() {
    md->query_start_loc_cpu = qsl.dl();
    md->seq_lens_cpu = seq.dl();
    md->block_table_tensor = table.dl();
    args->metadata = md.get();
    cattn_common_attn_metadata_t* m = md.get();
    slots = {{"args->metadata->query_start_loc_cpu", qsl.dl(), [m] { m->query_start_loc_cpu = nullptr; }, false},
             {"args->metadata->seq_lens_cpu", seq.dl(), [m] { m->seq_lens_cpu = nullptr; }, false},
             {"args->metadata->block_table_tensor", table.dl(), [m] { m->block_table_tensor = nullptr; }, false}};
  }
  cattn_status_t call() {
    const cattn_status_t s = cattn_make_local_attention_virtual_batches(null_args ? nullptr : args.get());
    if (s == CATTN_OK) cattn_local_attention_plan_destroy(args->plan);
    return s;
  }
};

// A plan of the batch above (3 virtual batches of 2 pages) for the calls that use one.
struct PlanHolder {
  cattn_local_attention_plan_t* plan = nullptr;
  PlanHolder() {
    LocalMake m;
    m.wire();
    EXPECT_CATTN_OK(cattn_make_local_attention_virtual_batches(m.args.get()));
    plan = m.args->plan;
  }
  ~PlanHolder() { cattn_local_attention_plan_destroy(plan); }
};

struct LocalShape : Base {
  PlanHolder holder;
  Guarded<int64_t> v{-1}, p{-1};
  bool null_plan = false;
  LocalShape() { structs = {&v.bytes(), &p.bytes()}; }
  void wire() {}
  cattn_status_t call() {
    return cattn_local_attention_plan_get_shape(null_plan ? nullptr : holder.plan, v.get(), p.get());
  }
};

struct LocalFill : Base {
  PlanHolder holder;
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32(), {2, 4}), slots_in = in_tensor({4, 5}, i64());
  HostTensor o_qsl_cpu = out_tensor({4}, i64()), o_seq_cpu = out_tensor({3}, i32()), o_comp = out_tensor({3}, i64());
  HostTensor o_table = out_tensor({3, 2}, i32()), o_qsl = out_tensor({4}, i32()), o_seq = out_tensor({3}, i64());
  Guarded<cattn_common_attn_metadata_t> md{CATTN_COMMON_ATTN_METADATA_INIT}, out{CATTN_COMMON_ATTN_METADATA_INIT};
  Guarded<cattn_local_attention_fill_args_t> args{CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT};
  bool null_args = false, null_plan = false;
  LocalFill() {
    tensors = {&table, &slots_in, &o_qsl_cpu, &o_seq_cpu, &o_comp, &o_table, &o_qsl, &o_seq};
    structs = {&md.bytes(), &out.bytes(), &args.bytes()};
  }
  void wire() {
    md->block_table_tensor = table.dl();
    md->slot_mapping = slots_in.dl();
    out->query_start_loc_cpu = o_qsl_cpu.dl();
    out->seq_lens_cpu = o_seq_cpu.dl();
    out->num_computed_tokens_cpu = o_comp.dl();
    out->block_table_tensor = o_table.dl();
    out->query_start_loc = o_qsl.dl();
    out->seq_lens = o_seq.dl();
    args->metadata = md.get();
    args->out = out.get();
    cattn_common_attn_metadata_t* m = md.get();
    cattn_common_attn_metadata_t* o = out.get();
    slots = {{"args->metadata->block_table_tensor", table.dl(), [m] { m->block_table_tensor = nullptr; }},
             {"args->metadata->slot_mapping", slots_in.dl(), nullptr},
             {"args->out->query_start_loc_cpu", o_qsl_cpu.dl(), [o] { o->query_start_loc_cpu = nullptr; }, false},
             {"args->out->seq_lens_cpu", o_seq_cpu.dl(), [o] { o->seq_lens_cpu = nullptr; }, false},
             {"args->out->num_computed_tokens_cpu", o_comp.dl(), [o] { o->num_computed_tokens_cpu = nullptr; }, false},
             {"args->out->block_table_tensor", o_table.dl(), [o] { o->block_table_tensor = nullptr; }},
             {"args->out->query_start_loc", o_qsl.dl(), nullptr},
             {"args->out->seq_lens", o_seq.dl(), nullptr}};
  }
  cattn_status_t call() {
    return cattn_local_attention_plan_fill(null_plan ? nullptr : holder.plan, null_args ? nullptr : args.get());
  }
};

struct LocalGather : Base {
  PlanHolder holder;
  HostTensor table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i64(), {2, 4}), out = out_tensor({3, 2}, i64());
  const DLTensor* table_p = nullptr;
  DLTensor* out_p = nullptr;
  bool null_plan = false;
  LocalGather() { tensors = {&table, &out}; }
  void wire() {
    table_p = table.dl();
    out_p = out.dl();
    slots = {{"block_table", table.dl(), [this] { table_p = nullptr; }},
             {"out", out.dl(), [this] { out_p = nullptr; }}};
  }
  cattn_status_t call() {
    return cattn_local_attention_plan_make_block_table(null_plan ? nullptr : holder.plan, table_p, out_p, nullptr);
  }
};

TEST(refused_untouched, MakeLocalAttentionVirtualBatches) {
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  {
    using V = Variant<LocalMake>;
    std::vector<V> v = {
        {"NULL args", I, "args is NULL", [](LocalMake& s) { s.null_args = true; }, nullptr},
        {"small struct_size", I, "args has struct_size too small", nullptr, [](LocalMake& s) { s.args->struct_size = 8; }},
        {"chunk 0", I, "args->attn_chunk_size is not positive", nullptr, [](LocalMake& s) { s.args->attn_chunk_size = 0; }},
        {"block 0", I, "args->block_size is not positive", nullptr, [](LocalMake& s) { s.args->block_size = 0; }},
        {"block 3", I, "args->block_size does not divide args->attn_chunk_size", nullptr, [](LocalMake& s) { s.args->block_size = 3; }},
        {"NULL metadata", I, "args->metadata is NULL", nullptr, [](LocalMake& s) { s.args->metadata = nullptr; }},
        {"metadata struct_size", I, "args->metadata has struct_size too small", nullptr, [](LocalMake& s) { s.md->struct_size = 8; }},
        {"query_start_loc_cpu on a GPU", I, "args->metadata->query_start_loc_cpu is not host memory", nullptr, [](LocalMake& s) { s.md->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens_cpu on a GPU", I, "args->metadata->seq_lens_cpu is not host memory", nullptr, [](LocalMake& s) { s.md->seq_lens_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens_cpu float", I, "args->metadata->seq_lens_cpu has the wrong dtype", nullptr, [](LocalMake& s) { s.md->seq_lens_cpu->dtype = {kDLFloat, 64, 1}; }},
        {"empty batch", I, "args->metadata->seq_lens_cpu describes an empty batch", [](LocalMake& s) {
           s.seq = in_tensor({}, i64(), {0});
           s.qsl = in_tensor({0}, i32());
           s.table = in_tensor({}, i32(), {0, 4});
         }, nullptr},
        {"query_start_loc_cpu of 4", I, "args->metadata->query_start_loc_cpu has the wrong size", [](LocalMake& s) { s.qsl = in_tensor({0, 3, 10, 11}, i32()); }, nullptr},
        {"table 1-D", I, "args->metadata->block_table_tensor has the wrong ndim", [](LocalMake& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8}, i32()); }, nullptr},
        {"table of 3 rows", I, "args->metadata->block_table_tensor has the wrong size in dim 0", [](LocalMake& s) { s.table = in_tensor({1, 2, 3}, i32(), {3, 1}); }, nullptr},
        {"table without columns", I, "args->metadata->block_table_tensor has no columns", [](LocalMake& s) { s.table = in_tensor({}, i32(), {2, 0}); }, nullptr},
        {"decreasing", I, "args->metadata->query_start_loc_cpu decreases", [](LocalMake& s) { s.qsl = in_tensor({0, 3, 2}, i32()); }, nullptr},
        {"query length past int64", I, "args->metadata->query_start_loc_cpu has a query length that overflows int64", [](LocalMake& s) {
           s.qsl = in_tensor({kI64Min, 0, kI64Max}, i64());
         }, nullptr},
        {"sequence shorter than its query", I, "args->metadata->seq_lens_cpu is shorter than the query", [](LocalMake& s) { s.seq = in_tensor({2, 12}, i64()); }, nullptr},
        {"negative sequence length", I, "args->metadata->seq_lens_cpu has a negative length (got [0] = -1, expected >= 0)", [](LocalMake& s) { s.seq = in_tensor({-1, 12}, i64()); }, nullptr},
    };
    sweep<LocalMake>("cattn_make_local_attention_virtual_batches", structural<LocalMake>() + v);
  }
  {
    using V = Variant<LocalShape>;
    sweep<LocalShape>("cattn_local_attention_plan_get_shape",
                      {{"NULL plan", I, "plan is NULL", [](LocalShape& s) { s.null_plan = true; }, nullptr}});
  }
  {
    using V = Variant<LocalFill>;
    std::vector<V> v = {
        {"NULL plan", I, "plan is NULL", [](LocalFill& s) { s.null_plan = true; }, nullptr},
        {"NULL args", I, "args is NULL", [](LocalFill& s) { s.null_args = true; }, nullptr},
        {"small struct_size", I, "args has struct_size too small", nullptr, [](LocalFill& s) { s.args->struct_size = 8; }},
        {"NULL metadata", I, "args->metadata is NULL", nullptr, [](LocalFill& s) { s.args->metadata = nullptr; }},
        {"NULL out", I, "args->out is NULL", nullptr, [](LocalFill& s) { s.args->out = nullptr; }},
        {"out struct_size", I, "args->out has struct_size too small", nullptr, [](LocalFill& s) { s.out->struct_size = 8; }},
        {"table of 3 rows", I, "args->metadata->block_table_tensor has the wrong size in dim 0", [](LocalFill& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, i32(), {3, 4}); }, nullptr},
        {"table narrower than planned", I, "args->metadata->block_table_tensor has fewer columns than the plan's", [](LocalFill& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6}, i32(), {2, 3}); }, nullptr},
        {"gathered table int64", I, "args->out->block_table_tensor has the wrong dtype", nullptr, [](LocalFill& s) { s.out->block_table_tensor->dtype = i64(); }},
        {"gathered table [2, 2]", CATTN_INSUFFICIENT_SIZE, "args->out->block_table_tensor has the wrong size in dim 0", [](LocalFill& s) { s.o_table = out_tensor({2, 2}, i32()); }, nullptr},
        {"gathered table [3, 3]", I, "args->out->block_table_tensor has the wrong size in dim 1", [](LocalFill& s) { s.o_table = out_tensor({3, 3}, i32()); }, nullptr},
        {"gathered table zero stride", I, "args->out->block_table_tensor is an output with a zero stride", nullptr, [](LocalFill& s) {
           s.scratch_strides = {0, 1};
           s.out->block_table_tensor->strides = s.scratch_strides.data();
         }},
        {"query_start_loc_cpu [3]", CATTN_INSUFFICIENT_SIZE, "args->out->query_start_loc_cpu has the wrong size", [](LocalFill& s) { s.o_qsl_cpu = out_tensor({3}, i64()); }, nullptr},
        {"query_start_loc_cpu on a GPU", I, "args->out->query_start_loc_cpu is not host memory", nullptr, [](LocalFill& s) { s.out->query_start_loc_cpu->device = {kDLCUDA, 0}; }},
        {"seq_lens copy [4]", I, "args->out->seq_lens has the wrong size", [](LocalFill& s) { s.o_seq = out_tensor({4}, i64()); }, nullptr},
        {"num_computed_tokens_cpu float", I, "args->out->num_computed_tokens_cpu has the wrong dtype", nullptr, [](LocalFill& s) { s.out->num_computed_tokens_cpu->dtype = {kDLFloat, 64, 1}; }},
        {"output overlapping the table", I, "overlaps an input", nullptr, [](LocalFill& s) {
           s.out->seq_lens = s.overlap_view(s.table, 2, {3});
         }},
    };
    if (cpu_only_build())
      v.push_back({"device tables", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](LocalFill& s) {
                     for (const char* n : {"args->metadata->block_table_tensor", "args->metadata->slot_mapping",
                                           "args->out->block_table_tensor", "args->out->query_start_loc", "args->out->seq_lens"})
                       s.slot(n)->device = {kDLCUDA, 0};
                   }});
    sweep<LocalFill>("cattn_local_attention_plan_fill", structural<LocalFill>() + v);
  }
  using V = Variant<LocalGather>;
  std::vector<V> v = {
      {"NULL plan", I, "plan is NULL", [](LocalGather& s) { s.null_plan = true; }, nullptr},
      {"table of 1 row", I, "block_table has the wrong size in dim 0", [](LocalGather& s) { s.table = in_tensor({1, 2, 3, 4}, i64(), {1, 4}); }, nullptr},
      {"table narrower than planned", I, "block_table has fewer columns than the plan's", [](LocalGather& s) { s.table = in_tensor({1, 2, 3, 4, 5, 6}, i64(), {2, 3}); }, nullptr},
      {"out int32", I, "out has the wrong dtype", nullptr, [](LocalGather& s) { s.out_p->dtype = i32(); }},
      {"out [2, 2]", CATTN_INSUFFICIENT_SIZE, "out has the wrong size in dim 0", [](LocalGather& s) { s.out = out_tensor({2, 2}, i64()); }, nullptr},
      {"out [3, 3]", I, "out has the wrong size in dim 1", [](LocalGather& s) { s.out = out_tensor({3, 3}, i64()); }, nullptr},
      {"out overlapping the table", I, "out overlaps an input", nullptr, [](LocalGather& s) { s.out_p = s.overlap_view(s.table, 1, {3, 2}); }},
  };
  if (cpu_only_build())
    v.push_back({"both on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](LocalGather& s) {
                   s.slots[0].t->device = s.slots[1].t->device = {kDLCUDA, 0};
                 }});
  sweep<LocalGather>("cattn_local_attention_plan_make_block_table", structural<LocalGather>() + v);
}

}  // namespace
