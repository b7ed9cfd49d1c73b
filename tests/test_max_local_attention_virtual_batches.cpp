// SPDX-License-Identifier: Apache-2.0
// max_local_attention_virtual_batches: the upstream oracle's bounds (random and edge cases),
// the virtual batches real batches make against both bounds, int64 limits, and errors.
#include <gtest/gtest.h>

#include <limits>

#include "cattn.h"
#include "support/refused_untouched.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

cattn_max_local_attention_virtual_batches_args_t bound_of(int64_t c, int64_t seqs, int64_t tok) {
  cattn_max_local_attention_virtual_batches_args_t a =
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT;
  a.attn_chunk_size = c;
  a.max_num_seqs = seqs;
  a.max_num_batched_tokens = tok;
  EXPECT_CATTN_OK(cattn_max_local_attention_virtual_batches(&a));
  return a;
}

}  // namespace

TEST(max_local_attention_virtual_batches, OracleVectors) {
  const auto vec = load_vectors("max_local_attention_virtual_batches");
  ASSERT_GE(vec["cases"].size(), 30u);
  int with_batches = 0, broken = 0;
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const int64_t chunk = c["attn_chunk_size"], seqs = c["max_num_seqs"],
                  tokens = c["max_num_batched_tokens"];
    const auto a = bound_of(chunk, seqs, tokens);
    EXPECT_EQ(a.bound, c["bound"].get<int64_t>());
    EXPECT_GE(a.bound_with_empty_rows, a.bound);
    if (c.contains("virtual_batches")) {
      ++with_batches;
      const int64_t vb = c["virtual_batches"];
      // The padded bound holds for every batch; vLLM's only when no row is empty.
      EXPECT_LE(vb, a.bound_with_empty_rows);
      bool empty_row = false;
      for (const auto& q : c["query_lens"]) empty_row = empty_row || q.get<int64_t>() == 0;
      if (!empty_row) EXPECT_LE(vb, a.bound);
      if (vb > a.bound) {
        ++broken;
        EXPECT_TRUE(empty_row);
      }
    }
  }
  EXPECT_GE(with_batches, 20);
  EXPECT_EQ(broken, 2);  // the two zero-length-row cases of the generator
}

TEST(max_local_attention_virtual_batches, Formula) {
  // min(2 * 4 + ceil(4 / 16), 4) = 4 (vLLM's test); the padded bound is min(9, 8).
  auto a = bound_of(16, 4, 4);
  EXPECT_EQ(a.bound, 4);
  EXPECT_EQ(a.bound_with_empty_rows, 8);
  a = bound_of(16, 1, 0);  // one padding row, no tokens: vLLM says 0, the batch makes 1
  EXPECT_EQ(a.bound, 0);
  EXPECT_EQ(a.bound_with_empty_rows, 1);
  a = bound_of(1024, 2, 10000);  // 4 + 10 = 14 < 10000
  EXPECT_EQ(a.bound, 14);
  EXPECT_EQ(a.bound_with_empty_rows, 14);
  a = bound_of(3, 0, 10);  // ceil(10 / 3) = 4
  EXPECT_EQ(a.bound, 4);
}

TEST(max_local_attention_virtual_batches, Int64Limits) {
  auto a = bound_of(1, kI64Max, kI64Max);  // 2 * seqs overflows: the cap decides
  EXPECT_EQ(a.bound, kI64Max);
  EXPECT_EQ(a.bound_with_empty_rows, kI64Max);
  a = bound_of(kI64Max, 3, kI64Max);  // 6 + 1
  EXPECT_EQ(a.bound, 7);
  EXPECT_EQ(a.bound_with_empty_rows, 7);
  a = bound_of(2, kI64Max / 2, 10);
  EXPECT_EQ(a.bound, 10);
  EXPECT_EQ(a.bound_with_empty_rows, kI64Max / 2 + 10);
  a = bound_of(1, 0, kI64Max);  // ceil(T / 1) with T = INT64_MAX, no T + C - 1 overflow
  EXPECT_EQ(a.bound, kI64Max);
  a = bound_of(7, 5, kI64Max);  // 2^63 - 1 is a multiple of 7: T / 7 + 10
  EXPECT_EQ(a.bound, kI64Max / 7 + 10);
  a = bound_of(10, 5, kI64Max);  // ceil(T / 10) + 10
  EXPECT_EQ(a.bound, kI64Max / 10 + 1 + 10);
}

TEST(max_local_attention_virtual_batches, Errors) {
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(nullptr), CATTN_INVALID_ARGUMENT,
                     "args is NULL");
  cattn_max_local_attention_virtual_batches_args_t a =
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT;
  a.bound = a.bound_with_empty_rows = -77;
  a.struct_size = CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE - 1;
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "struct_size");
  a.struct_size = CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE;
  a.attn_chunk_size = 0;  // vLLM divides by zero
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "args->attn_chunk_size");
  a.attn_chunk_size = -4;
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "args->attn_chunk_size");
  a.attn_chunk_size = 4;
  a.max_num_seqs = -1;
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "args->max_num_seqs");
  a.max_num_seqs = 1;
  a.max_num_batched_tokens = std::numeric_limits<int64_t>::min();
  EXPECT_CATTN_ERROR(cattn_max_local_attention_virtual_batches(&a), CATTN_INVALID_ARGUMENT,
                     "args->max_num_batched_tokens");
  EXPECT_EQ(a.bound, -77);  // nothing written on failure
  EXPECT_EQ(a.bound_with_empty_rows, -77);
  a.max_num_batched_tokens = 5;
  a.struct_size = CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE + 32;  // a newer header
  EXPECT_CATTN_OK(cattn_max_local_attention_virtual_batches(&a));
  EXPECT_EQ(a.bound, 4);  // min(2 + 2, 5)
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): max_local_attention_virtual_batches

namespace {
using namespace cattn_test::refused_untouched;

struct Bound : Base {
  Guarded<cattn_max_local_attention_virtual_batches_args_t> args{
      CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_INIT};
  bool null_args = false;
  Bound() {
    structs = {&args.bytes()};
    args->attn_chunk_size = 16;
    args->max_num_seqs = 4;
    args->max_num_batched_tokens = 64;
  }
  void wire() {}
  cattn_status_t call() {
    return cattn_max_local_attention_virtual_batches(null_args ? nullptr : args.get());
  }
};

}  // namespace

TEST(refused_untouched, MaxLocalAttentionVirtualBatches) {
  using V = Variant<Bound>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Bound& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Bound& s) {
         s.args->struct_size = CATTN_MAX_LOCAL_ATTENTION_VIRTUAL_BATCHES_ARGS_SIZE - 8;
       }},
      {"chunk 0", I, "args->attn_chunk_size is out of range", nullptr, [](Bound& s) { s.args->attn_chunk_size = 0; }},
      {"chunk INT64_MIN", I, "args->attn_chunk_size", nullptr, [](Bound& s) { s.args->attn_chunk_size = kI64Min; }},
      {"seqs -1", I, "args->max_num_seqs is negative (got -1, expected >= 0)", nullptr, [](Bound& s) { s.args->max_num_seqs = -1; }},
      {"tokens INT64_MIN", I, "args->max_num_batched_tokens", nullptr,
       [](Bound& s) { s.args->max_num_batched_tokens = kI64Min; }},
  };
  sweep<Bound>("cattn_max_local_attention_virtual_batches", v);
}
