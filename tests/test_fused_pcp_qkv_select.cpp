// SPDX-License-Identifier: Apache-2.0
// fused_pcp_qkv_select: conformance against vectors from an emulation of the seed's Triton
// kernel, an independent element-wise reference (tests/ref) on random shapes, element widths,
// layouts, world sizes and ranks, and every error path.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "cattn.h"
#include "ref/fused_pcp_qkv_select_ref.h"
#include "support/canary.h"
#include "support/host_tensor.h"
#include "support/refused_untouched.h"
#include "support/select_rows.h"
#include "support/status_matchers.h"
#include "support/vectors.h"

using namespace cattn_test;

namespace {

DLDataType width_dtype(int bytes) {
  // The call treats elements as opaque bytes; vary the type code to show that.
  switch (bytes) {
    case 1: return {kDLUInt, 8, 1};        // fp8 stand-in
    case 2: return {kDLBfloat, 16, 1};
    case 4: return {kDLFloat, 32, 1};
    default: return {kDLFloat, 64, 1};
  }
}

// Deterministic content of input element `idx` (its compact flat index) of input `salt`.
uint64_t pattern(int salt, int64_t idx) {
  uint64_t x = static_cast<uint64_t>(idx) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(salt);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

// An [n, h, d] tensor over poisoned bytes. Padding between heads and between tokens (in
// elements), a leading offset and a last-dim stride make strided views of a wider buffer. The
// DLTensor is kept, so tests may edit its fields (device, dtype, ...) before a call.
class Tensor3 {
 public:
  Tensor3(int64_t n, int64_t h, int64_t d, DLDataType dtype, int64_t row_pad = 0,
          int64_t head_pad = 0, int64_t offset = 0, int64_t d_stride = 1)
      : shape_{n, h, d}, elem_(dtype.bits / 8), offset_(offset) {
    strides_[2] = d_stride;
    strides_[1] = d * d_stride + head_pad;
    strides_[0] = h * strides_[1] + row_pad;
    int64_t span = offset;
    if (n > 0 && h > 0 && d > 0)
      span += (n - 1) * strides_[0] + (h - 1) * strides_[1] + (d - 1) * strides_[2] + 1;
    bytes_.assign(static_cast<size_t>(span * elem_ + 8), kPoisonByte);
    t_.device = {kDLCPU, 0};
    t_.ndim = 3;
    t_.dtype = dtype;
    t_.byte_offset = static_cast<uint64_t>(offset * elem_);
    compact_ = row_pad == 0 && head_pad == 0 && d_stride == 1;
  }
  Tensor3(const Tensor3&) = delete;
  Tensor3& operator=(const Tensor3&) = delete;

  DLTensor* dl() {
    t_.data = bytes_.data();
    t_.shape = shape_;
    t_.strides = compact_ ? nullptr : strides_;
    return &t_;
  }
  uint8_t* at(int64_t i, int64_t j, int64_t l) {
    return bytes_.data() + (offset_ + i * strides_[0] + j * strides_[1] + l * strides_[2]) * elem_;
  }
  void fill(int salt) {
    for (int64_t i = 0; i < shape_[0]; ++i)
      for (int64_t j = 0; j < shape_[1]; ++j)
        for (int64_t l = 0; l < shape_[2]; ++l) {
          const uint64_t x = pattern(salt, (i * shape_[1] + j) * shape_[2] + l);
          std::memcpy(at(i, j, l), &x, static_cast<size_t>(elem_));
        }
  }
  RefView3 view() {
    return {bytes_.data() + offset_ * elem_, shape_[0], shape_[1], shape_[2],
            strides_[0], strides_[1], strides_[2], elem_};
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  int elem() const { return elem_; }
  int64_t numel() const { return shape_[0] * shape_[1] * shape_[2]; }

 private:
  int64_t shape_[3], strides_[3];
  int elem_;
  int64_t offset_;
  bool compact_;
  std::vector<uint8_t> bytes_;
  DLTensor t_{};
};

struct Layout {
  int64_t row_pad = 0, head_pad = 0, offset = 0;
};

// One call's tensors: inputs filled, outputs compact and poisoned, sized as vLLM allocates.
struct Problem {
  std::vector<int64_t> qsl;
  int64_t world, rank;
  Tensor3 q, k, v;
  HostTensor qsl_t;
  std::array<int64_t, 6> rows;  // before the outputs: they are sized from it
  Tensor3 q_head, k_head, v_head, q_tail, k_tail, v_tail;

  Problem(std::vector<int64_t> qsl_, int64_t w, int64_t r, int64_t nq, int64_t nkv, int64_t h,
          int64_t dq, int64_t dk, int64_t dv, int eq, int ek, int ev, Layout lq = {},
          Layout lk = {}, Layout lv = {}, DLDataType qsl_type = i32(), int64_t qsl_step = 1)
      : qsl(std::move(qsl_)),
        world(w),
        rank(r),
        q(nq, h, dq, width_dtype(eq), lq.row_pad, lq.head_pad, lq.offset),
        k(nkv, h, dk, width_dtype(ek), lk.row_pad, lk.head_pad, lk.offset),
        v(nkv, h, dv, width_dtype(ev), lv.row_pad, lv.head_pad, lv.offset),
        qsl_t(HostTensor::of(qsl, qsl_type, {}, qsl_step, qsl_step == 1 ? 0 : 1)),
        rows(cattn_test::select_rows(nq, w, r)),
        q_head(rows[0], h, dq, width_dtype(eq)),
        k_head(rows[1], h, dk, width_dtype(ek)),
        v_head(rows[2], h, dv, width_dtype(ev)),
        q_tail(rows[3], h, dq, width_dtype(eq)),
        k_tail(rows[4], h, dk, width_dtype(ek)),
        v_tail(rows[5], h, dv, width_dtype(ev)) {
    q.fill(1);
    k.fill(2);
    v.fill(3);
  }
  cattn_fused_pcp_qkv_select_args_t args() {
    cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
    a.q = q.dl();
    a.k = k.dl();
    a.v = v.dl();
    a.query_start_loc = qsl_t.dl();
    a.pcp_world_size = world;
    a.pcp_rank = rank;
    a.q_head = q_head.dl();
    a.k_head = k_head.dl();
    a.v_head = v_head.dl();
    a.q_tail = q_tail.dl();
    a.k_tail = k_tail.dl();
    a.v_tail = v_tail.dl();
    return a;
  }
  cattn_status_t run() {
    const auto a = args();
    return cattn_fused_pcp_qkv_select(&a);
  }
  Tensor3* outputs(int i) {
    Tensor3* o[] = {&q_head, &k_head, &v_head, &q_tail, &k_tail, &v_tail};
    return o[i];
  }
  std::vector<std::vector<uint8_t>> output_bytes() {
    std::vector<std::vector<uint8_t>> b;
    for (int i = 0; i < 6; ++i) b.push_back(outputs(i)->bytes());
    return b;
  }
};

// Checks a compact output against the emulation's source indices (-1 = never written).
void expect_matches(const Tensor3& out, int salt, const std::vector<int64_t>& src_idx,
                    const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(static_cast<int64_t>(src_idx.size()), out.numel());
  const int e = out.elem();
  for (size_t p = 0; p < src_idx.size(); ++p) {
    uint8_t want[8];
    if (src_idx[p] < 0) {
      std::memset(want, kPoisonByte, sizeof want);
    } else {
      const uint64_t x = pattern(salt, src_idx[p]);
      std::memcpy(want, &x, sizeof want);
    }
    ASSERT_EQ(std::memcmp(out.bytes().data() + p * e, want, static_cast<size_t>(e)), 0)
        << "element " << p << " (source index " << src_idx[p] << ")";
  }
}

void run_reference(Problem& p, Tensor3 (&ref)[6]) {
  fused_pcp_qkv_select_ref(p.q.view(), p.k.view(), p.v.view(), p.qsl, p.world, p.rank,
                           ref[0].view(), ref[1].view(), ref[2].view(), ref[3].view(),
                           ref[4].view(), ref[5].view());
}

}  // namespace

TEST(fused_pcp_qkv_select, TritonEmulationVectors) {
  const auto vec = load_vectors("fused_pcp_qkv_select");
  ASSERT_GT(vec["cases"].size(), 20u);
  const int widths[][3] = {{1, 1, 1}, {2, 2, 2}, {4, 4, 4}, {8, 8, 8}, {2, 1, 4}, {8, 2, 1}};
  const Layout strided[] = {{0, 0, 0}, {3, 0, 1}, {5, 2, 3}};
  for (const auto& c : vec["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto qs = ints(c["q_shape"]), ks = ints(c["k_shape"]), vs = ints(c["v_shape"]);
    for (const auto& w : widths)
      for (int li = 0; li < 3; ++li) {
        SCOPED_TRACE("widths " + std::to_string(w[0]) + "/" + std::to_string(w[1]) + "/" +
                     std::to_string(w[2]) + " layout " + std::to_string(li));
        const Layout& l = strided[li];
        Problem p(ints(c["query_start_loc"]), c["pcp_world_size"].get<int64_t>(),
                  c["pcp_rank"].get<int64_t>(), qs[0], ks[0], qs[1], qs[2], ks[2], vs[2], w[0],
                  w[1], w[2], l, l, l, li == 2 ? i64() : i32(), li == 1 ? 2 : 1);
        ASSERT_EQ(vs[0], ks[0]);
        ASSERT_CATTN_OK(p.run());
        expect_matches(p.q_head, 1, ints(c["q_head"]), "q_head");
        expect_matches(p.q_tail, 1, ints(c["q_tail"]), "q_tail");
        expect_matches(p.k_head, 2, ints(c["k_head"]), "k_head");
        expect_matches(p.k_tail, 2, ints(c["k_tail"]), "k_tail");
        expect_matches(p.v_head, 3, ints(c["v_head"]), "v_head");
        expect_matches(p.v_tail, 3, ints(c["v_tail"]), "v_tail");
      }
  }
}

// The size query against numbers worked by hand from the header's formulas.
TEST(fused_pcp_qkv_select, SizeQuery) {
  struct Case {
    int64_t nq, world, rank, q, head, tail;
  };
  const int64_t big = int64_t{1} << 62;
  const Case cases[] = {{0, 1, 0, 0, 0, 0},          {1, 1, 0, 0, 0, 0},
                        {5, 1, 0, 2, 2, 4},          {16, 2, 0, 8, 8, 32},
                        {16, 4, 1, 8, 16, 56},       {16, 4, 3, 8, 32, 40},
                        {30, 8, 7, 15, 120, 135},    {big, 1, 0, big / 2, big / 2, big}};
  for (const Case& c : cases) {
    int64_t q = -7, head = -7, tail = -7;
    ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select_size(c.nq, c.world, c.rank, &q, &head, &tail));
    EXPECT_EQ(q, c.q) << c.nq << " " << c.world << " " << c.rank;
    EXPECT_EQ(head, c.head) << c.nq << " " << c.world << " " << c.rank;
    EXPECT_EQ(tail, c.tail) << c.nq << " " << c.world << " " << c.rank;
  }
  int64_t out[3] = {-7, -7, -7};
  auto refused = [&](int64_t nq, int64_t world, int64_t rank, int64_t* a, int64_t* b,
                     int64_t* c, const char* needle) {
    EXPECT_CATTN_ERROR(cattn_fused_pcp_qkv_select_size(nq, world, rank, a, b, c),
                       CATTN_INVALID_ARGUMENT, needle);
    EXPECT_EQ(out[0], -7);
    EXPECT_EQ(out[1], -7);
    EXPECT_EQ(out[2], -7);
  };
  refused(-2, 1, 0, &out[0], &out[1], &out[2], "num_q_rows is negative");
  refused(4, 0, 0, &out[0], &out[1], &out[2], "pcp_world_size is out of range");
  refused(4, 2, 2, &out[0], &out[1], &out[2], "pcp_rank is out of range");
  refused(4, 2, -1, &out[0], &out[1], &out[2], "pcp_rank is out of range");
  refused(big + 2, 4, 0, &out[0], &out[1], &out[2], "k_tail rows overflows int64");
  refused(4, std::numeric_limits<int64_t>::max(), 0, &out[0], &out[1], &out[2],
          "overflows int64");
  // Exact arithmetic: 2 x pcp_world_size passes int64 in both, the row counts do not.
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  ASSERT_EQ(cattn_fused_pcp_qkv_select_size(1, i64max, i64max - 1, &out[0], &out[1], &out[2]),
            CATTN_OK);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 0);
  const int64_t w = (int64_t{1} << 62) + 5;
  ASSERT_EQ(cattn_fused_pcp_qkv_select_size(3, w, w - 1, &out[0], &out[1], &out[2]), CATTN_OK);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], w);
  EXPECT_EQ(out[2], w + 1);
  out[0] = out[1] = out[2] = -7;
  refused(4, 1, 0, nullptr, &out[1], &out[2], "q_rows is NULL");
  refused(4, 1, 0, &out[0], &out[1], nullptr, "kv_tail_rows is NULL");
  refused(4, 1, 0, &out[0], &out[0], &out[2], "overlaps");
}

TEST(fused_pcp_qkv_select, RandomAgainstReference) {
  std::mt19937_64 g(2024);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(g() % static_cast<uint64_t>(n)); };
  int iterations = 0;
  for (int64_t world : {1, 2, 4, 8})
    for (int64_t rank = 0; rank < world; ++rank)
      for (int rep = 0; rep < 6; ++rep, ++iterations) {
        const int64_t batch = rep == 0 ? 0 : rep == 1 ? 1 : pick(7);
        std::vector<int64_t> qsl{2 * pick(3)};
        for (int64_t i = 0; i < batch; ++i)
          qsl.push_back(qsl.back() + (pick(4) == 0 ? 0 : 2 * pick(21)));
        const int64_t nq = qsl.back() + pick(5);  // padding rows past qsl[B]
        const int64_t nkv = world * qsl.back() + pick(4);
        const bool mla = pick(5) == 0;
        const int64_t h = mla ? 1 + pick(2) : 1 + pick(4);
        const int64_t dq = mla ? 192 : 1 + pick(9), dk = mla ? 192 : 1 + pick(9),
                      dv = mla ? 128 : 1 + pick(9);
        const int ew[] = {1, 2, 4, 8};
        auto layout = [&] {
          return pick(2) ? Layout{} : Layout{pick(4), pick(3), pick(3)};
        };
        SCOPED_TRACE("W=" + std::to_string(world) + " r=" + std::to_string(rank) +
                     " rep=" + std::to_string(rep));
        Problem p(qsl, world, rank, nq, nkv, h, dq, dk, dv, ew[pick(4)], ew[pick(4)],
                  ew[pick(4)], layout(), layout(), layout(), pick(2) ? i32() : i64(),
                  1 + pick(2));
        int64_t rows_q = 0, rows_head = 0, rows_tail = 0;
        ASSERT_CATTN_OK(
            cattn_fused_pcp_qkv_select_size(nq, world, rank, &rows_q, &rows_head, &rows_tail));
        Tensor3 ref[6] = {{rows_q, h, dq, width_dtype(p.q.elem())},
                          {rows_head, h, dk, width_dtype(p.k.elem())},
                          {rows_head, h, dv, width_dtype(p.v.elem())},
                          {rows_q, h, dq, width_dtype(p.q.elem())},
                          {rows_tail, h, dk, width_dtype(p.k.elem())},
                          {rows_tail, h, dv, width_dtype(p.v.elem())}};
        run_reference(p, ref);
        ASSERT_CATTN_OK(p.run());
        for (int i = 0; i < 6; ++i) ASSERT_EQ(p.outputs(i)->bytes(), ref[i].bytes()) << i;
        // Rows past qsl[B] / 2 (the kernel's CUDA-graph padding) are never written.
        const int64_t used = qsl.back() / 2;
        const uint8_t* tail = p.q_head.bytes().data() + used * h * dq * p.q.elem();
        for (const uint8_t* b = tail; b < p.q_head.bytes().data() + p.q_head.bytes().size(); ++b)
          ASSERT_EQ(*b, kPoisonByte);
      }
  EXPECT_EQ(iterations, 6 * 15);
}

TEST(fused_pcp_qkv_select, MlaDimsAndPackedHeads) {
  // DeepSeek MLA: Dq = Dk = 192, Dv = 128, bf16 Q/K and fp8 V, K a view with padded rows
  // (heads packed, tokens not), V with padded heads (one copy per head).
  const std::vector<int64_t> qsl{0, 16, 16, 40};
  for (int64_t rank = 0; rank < 2; ++rank) {
    Problem p(qsl, 2, rank, 44, 2 * 40 + 2, 4, 192, 192, 128, 2, 2, 1, {}, {7, 0, 0},
              {0, 32, 5});
    Tensor3 ref[6] = {{22, 4, 192, width_dtype(2)}, {22 * (rank + 1), 4, 192, width_dtype(2)},
                      {22 * (rank + 1), 4, 128, width_dtype(1)}, {22, 4, 192, width_dtype(2)},
                      {22 * (4 - rank), 4, 192, width_dtype(2)},
                      {22 * (4 - rank), 4, 128, width_dtype(1)}};
    run_reference(p, ref);
    ASSERT_CATTN_OK(p.run());
    for (int i = 0; i < 6; ++i) EXPECT_EQ(p.outputs(i)->bytes(), ref[i].bytes()) << i;
  }
}

TEST(fused_pcp_qkv_select, Errors) {
  Problem p({0, 4, 8}, 2, 1, 10, 16, 2, 4, 4, 3, 2, 2, 2);
  const auto before = p.output_bytes();
  auto expect_error = [&](const cattn_fused_pcp_qkv_select_args_t& a, cattn_status_t code,
                          const char* needle) {
    EXPECT_CATTN_ERROR(cattn_fused_pcp_qkv_select(&a), code, needle);
  };

  EXPECT_CATTN_ERROR(cattn_fused_pcp_qkv_select(nullptr), CATTN_INVALID_ARGUMENT, "args");
  auto a = p.args();
  a.struct_size = sizeof(size_t);
  expect_error(a, CATTN_INVALID_ARGUMENT, "struct_size");

  // Every tensor is required.
  const DLTensor* cattn_fused_pcp_qkv_select_args_t::*inputs[] = {
      &cattn_fused_pcp_qkv_select_args_t::q, &cattn_fused_pcp_qkv_select_args_t::k,
      &cattn_fused_pcp_qkv_select_args_t::v, &cattn_fused_pcp_qkv_select_args_t::query_start_loc};
  const char* input_names[] = {"args->q", "args->k", "args->v", "args->query_start_loc"};
  for (int i = 0; i < 4; ++i) {
    a = p.args();
    a.*inputs[i] = nullptr;
    expect_error(a, CATTN_INVALID_ARGUMENT, input_names[i]);
  }
  DLTensor* cattn_fused_pcp_qkv_select_args_t::*outputs[] = {
      &cattn_fused_pcp_qkv_select_args_t::q_head, &cattn_fused_pcp_qkv_select_args_t::k_head,
      &cattn_fused_pcp_qkv_select_args_t::v_head, &cattn_fused_pcp_qkv_select_args_t::q_tail,
      &cattn_fused_pcp_qkv_select_args_t::k_tail, &cattn_fused_pcp_qkv_select_args_t::v_tail};
  const char* output_names[] = {"args->q_head", "args->k_head", "args->v_head",
                                "args->q_tail", "args->k_tail", "args->v_tail"};
  for (int i = 0; i < 6; ++i) {
    a = p.args();
    a.*outputs[i] = nullptr;
    expect_error(a, CATTN_INVALID_ARGUMENT, output_names[i]);
  }

  // Input shapes, strides and dtypes.
  {
    Tensor3 q_strided_d(10, 2, 4, width_dtype(2), 0, 0, 0, 2);
    a = p.args();
    a.q = q_strided_d.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->q has a non-unit stride in its last dim");
    Tensor3 k_heads(16, 3, 4, width_dtype(2));
    a = p.args();
    a.k = k_heads.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->k has the wrong size in dim 1");
    Tensor3 v_heads(16, 1, 3, width_dtype(2));
    a = p.args();
    a.v = v_heads.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->v has the wrong size in dim 1");
    HostTensor q2d({10, 8}, width_dtype(2));
    a = p.args();
    a.q = q2d.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->q has the wrong ndim");
    a = p.args();
    p.v.dl()->dtype = {kDLFloat, 16, 2};
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->v has the wrong dtype (got float16x2,");
    p.v.dl()->dtype = width_dtype(2);
  }

  // query_start_loc: shape, dtype, contents.
  {
    HostTensor empty({0}, i32()), two_d = HostTensor::of({0, 4, 8, 8}, i32(), {2, 2}),
                                  flt = HostTensor::of({0, 4, 8}, f32());
    a = p.args();
    a.query_start_loc = empty.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->query_start_loc is empty");
    a.query_start_loc = two_d.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->query_start_loc has the wrong ndim");
    a.query_start_loc = flt.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->query_start_loc has the wrong dtype");
    const std::pair<std::vector<int64_t>, const char*> bad[] = {
        {{-2, 4, 8}, "negative entry"}, {{0, 3, 8}, "odd entry"},   {{0, 5, 8}, "odd entry"},
        {{0, 8, 4}, "decreases"},      {{0, 4, 12}, "ends past"},  {{2, 4, 0}, "decreases"}};
    for (const auto& b : bad) {
      HostTensor t = HostTensor::of(b.first, i64());
      a = p.args();
      a.query_start_loc = t.dl();
      expect_error(a, CATTN_INVALID_ARGUMENT, b.second);
    }
    // K and V must hold W * qsl[B] rows.
    Tensor3 k_short(15, 2, 4, width_dtype(2)), v_short(15, 2, 3, width_dtype(2));
    a = p.args();
    a.k = k_short.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->k has too few rows");
    a = p.args();
    a.v = v_short.dl();
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->v has too few rows");
  }

  // World size and rank.
  a = p.args();
  a.pcp_world_size = 0;
  a.pcp_rank = 0;
  expect_error(a, CATTN_INVALID_ARGUMENT, "args->pcp_world_size");
  a = p.args();
  a.pcp_rank = -1;
  expect_error(a, CATTN_INVALID_ARGUMENT, "args->pcp_rank");
  a.pcp_rank = 2;
  expect_error(a, CATTN_INVALID_ARGUMENT, "args->pcp_rank");
  a = p.args();
  a.pcp_world_size = std::numeric_limits<int64_t>::max() / 2 + 1;
  expect_error(a, CATTN_INVALID_ARGUMENT, "k_tail rows overflows int64");

  // Outputs: dtype, ndim, H, D, rows, layout.
  {
    Tensor3 wrong_dtype(5, 2, 4, width_dtype(4)), wrong_h(5, 1, 4, width_dtype(2)),
        wrong_d(5, 2, 5, width_dtype(2)), too_short(4, 2, 4, width_dtype(2)),
        too_long(6, 2, 4, width_dtype(2)), strided(5, 2, 4, width_dtype(2), 1),
        kv_short(14, 2, 4, width_dtype(2)), v_wrong_d(10, 2, 4, width_dtype(2));
    HostTensor flat({40}, width_dtype(2));
    const std::tuple<DLTensor* cattn_fused_pcp_qkv_select_args_t::*, DLTensor*, cattn_status_t,
                     const char*>
        cases[] = {
            {outputs[0], wrong_dtype.dl(), CATTN_INVALID_ARGUMENT, "args->q_head has the wrong dtype"},
            {outputs[3], wrong_h.dl(), CATTN_INVALID_ARGUMENT, "args->q_tail has the wrong size in dim 1"},
            {outputs[0], wrong_d.dl(), CATTN_INVALID_ARGUMENT, "args->q_head has the wrong size in dim 2"},
            {outputs[0], too_short.dl(), CATTN_INSUFFICIENT_SIZE, "args->q_head has the wrong size in dim 0"},
            {outputs[3], too_long.dl(), CATTN_INVALID_ARGUMENT, "args->q_tail has the wrong size in dim 0"},
            {outputs[0], strided.dl(), CATTN_INVALID_ARGUMENT, "args->q_head is not contiguous"},
            {outputs[0], flat.dl(), CATTN_INVALID_ARGUMENT, "args->q_head has the wrong ndim"},
            {outputs[4], kv_short.dl(), CATTN_INSUFFICIENT_SIZE, "args->k_tail"},
            {outputs[1], kv_short.dl(), CATTN_INVALID_ARGUMENT, "args->k_head has the wrong size in dim 0"},
            {outputs[2], v_wrong_d.dl(), CATTN_INVALID_ARGUMENT, "args->v_head has the wrong size in dim 2"},
            {outputs[5], v_wrong_d.dl(), CATTN_INVALID_ARGUMENT, "args->v_tail has the wrong size in dim 2"},
        };
    for (const auto& c : cases) {
      a = p.args();
      a.*std::get<0>(c) = std::get<1>(c);
      expect_error(a, std::get<2>(c), std::get<3>(c));
    }
  }

  // Devices: a mix is an error; all on a GPU is checked fully before any launch.
  {
    a = p.args();
    p.k.dl()->device = {kDLCUDA, 0};
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->k is on a different device");
    p.k.dl()->device = {kDLCPU, 0};
    p.v_tail.dl()->device = {kDLCUDA, 1};
    expect_error(a, CATTN_INVALID_ARGUMENT, "args->v_tail is on a different device");
    p.v_tail.dl()->device = {kDLOpenCL, 0};
    expect_error(a, CATTN_NOT_SUPPORTED, "args->v_tail is on an unsupported device");
    p.v_tail.dl()->device = {kDLCPU, 0};

    Problem gpu({0, 4, 8}, 2, 1, 10, 16, 2, 4, 4, 3, 2, 2, 2);
    auto ga = gpu.args();
    for (const DLTensor* t : {ga.q, ga.k, ga.v, ga.query_start_loc})
      const_cast<DLTensor*>(t)->device = {kDLCUDA, 0};
    for (DLTensor* t : {ga.q_head, ga.k_head, ga.v_head, ga.q_tail, ga.k_tail, ga.v_tail})
      t->device = {kDLCUDA, 0};
    const int64_t rank = ga.pcp_rank;
    ga.pcp_rank = 5;
    expect_error(ga, CATTN_INVALID_ARGUMENT, "args->pcp_rank");
    ga.pcp_rank = rank;
    // These "device" tensors are host memory: only where no GPU can run the kernel may the call
    // get past validation (the device tests in test_fused_pcp_qkv_select_gpu.cpp cover a GPU).
    int32_t gpus = 0;
    ASSERT_EQ(cattn_cuda_device_count(&gpus), CATTN_OK);
    if (gpus == 0) {
      const cattn_status_t s = cattn_fused_pcp_qkv_select(&ga);
      EXPECT_EQ(s, CATTN_NOT_SUPPORTED) << cattn_status_string(s) << ": "
                                        << cattn_last_error_message();
    }
  }
  EXPECT_EQ(p.output_bytes(), before) << "a failed call wrote to an output";

  // W * qsl[B] overflowing int64 needs outputs of 2^62 rows: since 1.1 such views are refused
  // before the size checks (no view spans more than 2^57 bytes), and the memory of these fake
  // outputs is never touched.
  {
    const int64_t world = int64_t{1} << 59, rank = world - 1;
    HostTensor qsl = HostTensor::of({0, 16}, i64());
    Tensor3 q(16, 1, 1, width_dtype(1)), k(16, 1, 1, width_dtype(1)), v(16, 1, 1, width_dtype(1));
    int64_t half_shape[3] = {8, 1, 1}, head_shape[3] = {8 * world, 1, 1},
            tail_shape[3] = {8 * (world + 1), 1, 1};
    DLTensor fake[6];
    int64_t* shapes[6] = {half_shape, head_shape, head_shape, half_shape, tail_shape, tail_shape};
    for (int i = 0; i < 6; ++i) {
      fake[i] = DLTensor{};
      fake[i].data = reinterpret_cast<void*>(0x1000);
      fake[i].device = {kDLCPU, 0};
      fake[i].ndim = 3;
      fake[i].dtype = width_dtype(1);
      fake[i].shape = shapes[i];
    }
    cattn_fused_pcp_qkv_select_args_t b = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
    b.q = q.dl();
    b.k = k.dl();
    b.v = v.dl();
    b.query_start_loc = qsl.dl();
    b.pcp_world_size = world;
    b.pcp_rank = rank;
    b.q_head = &fake[0];
    b.k_head = &fake[1];
    b.v_head = &fake[2];
    b.q_tail = &fake[3];
    b.k_tail = &fake[4];
    b.v_tail = &fake[5];
    expect_error(b, CATTN_INVALID_ARGUMENT,
                 "args->k_head spans more bytes than an address space holds");
  }
}

TEST(fused_pcp_qkv_select, DegenerateBatches) {
  // Empty batch, only zero-length requests, and Nq = 1 (no output rows at all): success,
  // nothing written.
  for (const auto& qsl : {std::vector<int64_t>{0}, std::vector<int64_t>{0, 0, 0},
                          std::vector<int64_t>{4, 4}}) {
    for (int64_t nq : {1, 6}) {
      if (qsl.back() > nq) continue;
      Problem p(qsl, 2, 0, nq, 2 * qsl.back() + 1, 2, 4, 4, 4, 2, 2, 2);
      const auto before = p.output_bytes();
      ASSERT_CATTN_OK(p.run());
      EXPECT_EQ(p.output_bytes(), before);
    }
  }
  // A world past 2^62 (2W overflows) with no request rows: the size query accepts it exactly,
  // and the call does nothing, with no 2W formed (UBSan watches).
  const int64_t big = (int64_t{1} << 62) + 5;
  for (const auto& wr : {std::array<int64_t, 2>{INT64_MAX, INT64_MAX - 1}, {big, big - 1}})
    for (const auto& qsl : {std::vector<int64_t>{0}, std::vector<int64_t>{0, 0, 0}}) {
      Problem p(qsl, wr[0], wr[1], 1, 1, 2, 4, 4, 4, 2, 2, 2);
      const auto before = p.output_bytes();
      ASSERT_CATTN_OK(p.run());
      EXPECT_EQ(p.output_bytes(), before);
    }
}

// ------------------------------------------------------------------------------------------
// Hostile input: outputs placed over inputs or over each other, in canaried caller memory.

namespace {

// The probe's batch: q [4, 1, 2] int32, query_start_loc {0, 2, 4} in a 16-byte buffer, W = 2,
// r = 0. Every tensor lives in one canaried buffer, so a test can place any output over any
// other tensor by its byte offset.
struct AliasedSelect {
  static constexpr size_t kQ = 0, kQsl = 32, kQHead = 48, kKHead = 64, kVHead = 80, kQTail = 96,
                          kK = 112, kV = 176, kKTail = 240, kVTail = 304, kEnd = 368;
  CanaryBuffer mem{kEnd};
  View q{mem.payload(), kQ, {4, 1, 2}, i32()}, qsl{mem.payload(), kQsl, {3}, i32()};
  View k{mem.payload(), kK, {8, 1, 2}, i32()}, v{mem.payload(), kV, {8, 1, 2}, i32()};
  std::unique_ptr<View> outs[6];
  AliasedSelect() {
    const int32_t q_values[8] = {1, 2, -2, -1073741824, 5, 6, 7, 8};
    for (int i = 0; i < 8; ++i) mem.store<int32_t>(kQ + 4 * i, q_values[i]);
    for (int i = 0; i < 3; ++i) mem.store<int32_t>(kQsl + 4 * i, 2 * i);
    for (int i = 0; i < 16; ++i) mem.store<int32_t>(kK + 4 * i, 100 + i);
    for (int i = 0; i < 16; ++i) mem.store<int32_t>(kV + 4 * i, 200 + i);
    place(0, kQHead);
    place(1, kKHead);
    place(2, kVHead);
    place(3, kQTail);
    place(4, kKTail);
    place(5, kVTail);
  }
  // Output i (q_head, k_head, v_head, q_tail, k_tail, v_tail) at a byte offset.
  void place(int i, size_t offset) {
    const int64_t rows[6] = {2, 2, 2, 2, 8, 8};
    outs[i] = std::make_unique<View>(mem.payload(), offset, std::vector<int64_t>{rows[i], 1, 2},
                                     i32());
  }
  cattn_fused_pcp_qkv_select_args_t args() {
    cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
    a.q = q.dl();
    a.k = k.dl();
    a.v = v.dl();
    a.query_start_loc = qsl.dl();
    a.pcp_world_size = 2;
    a.pcp_rank = 0;
    a.q_head = outs[0]->dl();
    a.k_head = outs[1]->dl();
    a.v_head = outs[2]->dl();
    a.q_tail = outs[3]->dl();
    a.k_tail = outs[4]->dl();
    a.v_tail = outs[5]->dl();
    return a;
  }
  void mark_cuda() {
    for (View* t : {&q, &qsl, &k, &v}) t->t.device = {kDLCUDA, 0};
    for (auto& o : outs) o->t.device = {kDLCUDA, 0};
  }
};

}  // namespace

TEST(fused_pcp_qkv_select_hostile, DisjointPlacementRuns) {
  AliasedSelect s;
  auto a = s.args();
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));
  EXPECT_TRUE(s.mem.canaries_intact());
  EXPECT_EQ(s.mem.load<int32_t>(AliasedSelect::kQTail), -2);  // request 0's tail: q row 1
}

TEST(fused_pcp_qkv_select_hostile, OverlapsAreRefusedWithNothingWritten) {
  struct Case {
    const char* what;
    int output;
    size_t offset;
    const char* needle;
  };
  const Case cases[] = {
      // The probe's wild write: q_tail over query_start_loc's 16 bytes (was a 4 GiB memcpy).
      {"q_tail over query_start_loc", 3, AliasedSelect::kQsl,
       "args->q_tail overlaps an input (got memory shared with args->query_start_loc"},
      {"q_tail over q by half a row", 3, AliasedSelect::kQ + 4,
       "args->q_tail overlaps an input (got memory shared with args->q"},
      {"q_head over q's first rows", 0, AliasedSelect::kQ,
       "args->q_head overlaps an input (got memory shared with args->q"},
      {"k_tail over k", 4, AliasedSelect::kK + 8, "args->k_tail overlaps an input"},
      {"v_head over v_tail", 2, AliasedSelect::kVTail + 4,
       "args->v_tail overlaps another output (got memory shared with args->v_head"},
      {"q_tail over k_head's last byte", 3, AliasedSelect::kKHead + 15,
       "args->q_tail overlaps another output (got memory shared with args->k_head"},
  };
  for (bool cuda : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (cuda ? " (CUDA-marked)" : " (host)"));
      AliasedSelect s;
      s.place(c.output, c.offset);
      if (cuda) s.mark_cuda();
      const auto before = s.mem.snapshot();
      auto a = s.args();
      EXPECT_CATTN_ERROR(cattn_fused_pcp_qkv_select(&a), CATTN_INVALID_ARGUMENT, c.needle);
      EXPECT_TRUE(s.mem.unchanged(before)) << "a refused call wrote";
      EXPECT_TRUE(s.mem.canaries_intact());
    }
  }
}

// ------------------------------------------------------------------------------------------
// Refused untouched (tests/support/refused_untouched.h): Fused PCP Q/K/V select

namespace {
using namespace cattn_test::refused_untouched;

struct Fused : Base {
  HostTensor q{{4, 2, 3}, dtype_bits(16)}, k{{8, 2, 3}, dtype_bits(16)}, v{{8, 2, 2}, dtype_bits(16)};
  HostTensor qsl = in_tensor({0, 2, 4}, i32());
  HostTensor outs[6] = {out_tensor({2, 2, 3}, dtype_bits(16)), out_tensor({2, 2, 3}, dtype_bits(16)),
                        out_tensor({2, 2, 2}, dtype_bits(16)), out_tensor({2, 2, 3}, dtype_bits(16)),
                        out_tensor({8, 2, 3}, dtype_bits(16)), out_tensor({8, 2, 2}, dtype_bits(16))};
  Guarded<cattn_fused_pcp_qkv_select_args_t> args{CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT};
  bool null_args = false;
  Fused() {
    tensors = {&q, &k, &v, &qsl, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4], &outs[5]};
    structs = {&args.bytes()};
    for (HostTensor* t : {&q, &k, &v})
      for (int64_t i = 0; i < t->numel(); ++i) t->set(i, i);
    args->pcp_world_size = 2;
  }
  void wire() {
    cattn_fused_pcp_qkv_select_args_t* a = args.get();
    a->q = q.dl();
    a->k = k.dl();
    a->v = v.dl();
    a->query_start_loc = qsl.dl();
    DLTensor** o[6] = {&a->q_head, &a->k_head, &a->v_head, &a->q_tail, &a->k_tail, &a->v_tail};
    const char* names[6] = {"args->q_head", "args->k_head", "args->v_head", "args->q_tail", "args->k_tail", "args->v_tail"};
    for (int i = 0; i < 6; ++i) *o[i] = outs[i].dl();
    slots = {{"args->q", q.dl(), [a] { a->q = nullptr; }},
             {"args->k", k.dl(), [a] { a->k = nullptr; }},
             {"args->v", v.dl(), [a] { a->v = nullptr; }},
             {"args->query_start_loc", qsl.dl(), [a] { a->query_start_loc = nullptr; }}};
    for (int i = 0; i < 6; ++i) {
      DLTensor** field = o[i];
      slots.push_back({names[i], outs[i].dl(), [field] { *field = nullptr; }});
    }
  }
  cattn_status_t call() { return cattn_fused_pcp_qkv_select(null_args ? nullptr : args.get()); }
};

TEST(refused_untouched, FusedPcpQkvSelect) {
  using V = Variant<Fused>;
  const cattn_status_t I = CATTN_INVALID_ARGUMENT;
  std::vector<V> v = {
      {"NULL args", I, "args is NULL", [](Fused& s) { s.null_args = true; }, nullptr},
      {"small struct_size", I, "args has struct_size too small", nullptr, [](Fused& s) { s.args->struct_size = 16; }},
      {"q 2-D", I, "args->q has the wrong ndim", [](Fused& s) { s.q = HostTensor({4, 6}, dtype_bits(16)); }, nullptr},
      {"q strided last dim", I, "args->q has a non-unit stride in its last dim", [](Fused& s) { s.q = HostTensor({4, 2, 3}, dtype_bits(16), 2); }, nullptr},
      {"k with 3 heads", I, "args->k has the wrong size in dim 1", [](Fused& s) { s.k = HostTensor({8, 3, 3}, dtype_bits(16)); }, nullptr},
      {"query_start_loc empty", I, "args->query_start_loc is empty", [](Fused& s) { s.qsl = in_tensor({}, i32(), {0}); }, nullptr},
      {"query_start_loc float", I, "args->query_start_loc has the wrong dtype", nullptr, [](Fused& s) { s.slots[3].t->dtype = {kDLFloat, 32, 1}; }},
      {"world 0", I, "args->pcp_world_size is out of range", nullptr, [](Fused& s) { s.args->pcp_world_size = 0; }},
      {"rank 2 of 2", I, "args->pcp_rank is out of range", nullptr, [](Fused& s) { s.args->pcp_rank = 2; }},
      {"rank -1", I, "args->pcp_rank is out of range", nullptr, [](Fused& s) { s.args->pcp_rank = -1; }},
      {"world overflowing", I, "overflows int64", nullptr, [](Fused& s) { s.args->pcp_world_size = kI64Max; }},
      {"q_head 1 row", CATTN_INSUFFICIENT_SIZE, "args->q_head has the wrong size in dim 0", [](Fused& s) { s.outs[0] = out_tensor({1, 2, 3}, dtype_bits(16)); }, nullptr},
      {"k_tail 9 rows", I, "args->k_tail has the wrong size in dim 0", [](Fused& s) { s.outs[4] = out_tensor({9, 2, 3}, dtype_bits(16)); }, nullptr},
      {"v_head head size 3", I, "args->v_head has the wrong size in dim 2", [](Fused& s) { s.outs[2] = out_tensor({2, 2, 3}, dtype_bits(16)); }, nullptr},
      {"k_tail int16", I, "args->k_tail has the wrong dtype", nullptr, [](Fused& s) { s.args->k_tail->dtype = {kDLInt, 16, 1}; }},
      {"q_tail strided", I, "args->q_tail is not contiguous", [](Fused& s) { s.outs[3] = HostTensor({2, 2, 3}, dtype_bits(16), 2); }, nullptr},
      {"odd start", I, "args->query_start_loc has an odd entry", [](Fused& s) { s.qsl = in_tensor({0, 1, 4}, i32()); }, nullptr},
      {"negative start", I, "args->query_start_loc has a negative entry", [](Fused& s) { s.qsl = in_tensor({-2, 2, 4}, i32()); }, nullptr},
      {"decreasing", I, "args->query_start_loc decreases", [](Fused& s) { s.qsl = in_tensor({0, 4, 2}, i32()); }, nullptr},
      {"past the queries", I, "args->query_start_loc ends past the queries", [](Fused& s) { s.qsl = in_tensor({0, 2, 6}, i32()); }, nullptr},
      {"k too short", I, "args->k has too few rows for the batch", [](Fused& s) { s.k = HostTensor({6, 2, 3}, dtype_bits(16)); }, nullptr},
  };
  if (cpu_only_build())
    v.push_back({"every tensor on a GPU", CATTN_NOT_SUPPORTED, "CPU-only", nullptr, [](Fused& s) {
                   for (Slot& x : s.slots) x.t->device = {kDLCUDA, 0};
                 }});
  sweep<Fused>("cattn_fused_pcp_qkv_select", structural<Fused>() + v);
}

}  // namespace
