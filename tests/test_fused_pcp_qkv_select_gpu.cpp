// SPDX-License-Identifier: Apache-2.0
// fused_pcp_qkv_select on the device, bit-exact against the host implementation: random batches,
// every element width, MLA head dims, strided inputs and query_start_loc, poisoned outputs
// (every byte of the output storage, padding included, must equal the host run's), batches of
// up to 3000 requests with ragged and zero lengths, rows split into chunks, a non-default
// stream, CUDA-graph capture and replay, dependent launches back to back, a K tensor past 2^31
// elements, and a device query_start_loc holding garbage (writes stay in the outputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/select_rows.h"
#include "support/status_matchers.h"

using namespace cattn_test;

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

struct SelectCase {
  int64_t world, rank, heads, dq, dk, dv;
  int elem;               // bytes per element of q, k and v
  int64_t step;           // >1: strided inputs
  std::vector<int64_t> qsl;
  int64_t q_rows;         // >= qsl.back(); extra rows are CUDA-graph padding
  bool pad16 = false;     // strided inputs that keep 16-byte accesses (see random_tensor)
  int64_t qsl_step = 1;   // >1: query_start_loc is a strided view
  int qsl_bits = 0;       // 32 or 64; 0: either, drawn from the generator
};

// step > 1 makes a view of a wider buffer: the last dimension stays contiguous, the token and
// head dimensions are strided, and the first element sits at a byte offset (which narrows the
// kernel's accesses). pad16 pads each head and the start by 16 bytes instead, so the heads are
// strided yet every address stays 16-byte aligned: the strided path at full width.
HostTensor random_tensor(std::vector<int64_t> shape, int elem, int64_t step, std::mt19937_64& g,
                         bool pad16 = false) {
  const int64_t pad = pad16 ? 16 / elem : (step > 1 ? step * 3 : 0);
  HostTensor t(std::move(shape), dtype_bits(elem * 8), 1, pad16 ? 16 / elem : (step > 1 ? 2 : 0),
               pad);
  auto& raw = t.raw();
  for (size_t i = 0; i < raw.size(); i += 8) {
    const uint64_t r = g();
    std::memcpy(&raw[i], &r, std::min<size_t>(8, raw.size() - i));
  }
  return t;
}

// The select's arguments: inputs q, k, v and query_start_loc, and the outputs as out(i) for i
// = 0..5 in the order q_head, k_head, v_head, q_tail, k_tail, v_tail.
template <class Out>
cattn_fused_pcp_qkv_select_args_t select_args(DLTensor* q, DLTensor* k, DLTensor* v,
                                              DLTensor* qsl, int64_t world, int64_t rank,
                                              Out out) {
  cattn_fused_pcp_qkv_select_args_t a = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  a.q = q;
  a.k = k;
  a.v = v;
  a.query_start_loc = qsl;
  a.pcp_world_size = world;
  a.pcp_rank = rank;
  DLTensor** slots[6] = {&a.q_head, &a.k_head, &a.v_head, &a.q_tail, &a.k_tail, &a.v_tail};
  for (int i = 0; i < 6; ++i) *slots[i] = out(i);
  return a;
}

// Enqueues `calls` in order on `stream`, `times` times over, or with `graph` captures them once
// into a CUDA graph and launches it `times` times; then waits for the stream.
void enqueue_selects(cudaStream_t stream, bool graph, int times,
                     std::initializer_list<const cattn_fused_pcp_qkv_select_args_t*> calls) {
  if (graph) {
    cudaGraph_t gr;
    cudaGraphExec_t exec;
    CATTN_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (const auto* a : calls) ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(a));
    CATTN_CUDA_OK(cudaStreamEndCapture(stream, &gr));
    CATTN_CUDA_OK(cudaGraphInstantiate(&exec, gr, 0));
    for (int rep = 0; rep < times; ++rep) CATTN_CUDA_OK(cudaGraphLaunch(exec, stream));
    CATTN_CUDA_OK(cudaGraphExecDestroy(exec));
    CATTN_CUDA_OK(cudaGraphDestroy(gr));
  } else {
    for (int rep = 0; rep < times; ++rep)
      for (const auto* a : calls) ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(a));
  }
  CATTN_CUDA_OK(cudaStreamSynchronize(stream));
  CATTN_CUDA_OK(cudaGetLastError());
}

// Runs one case on host and device; compares every byte of every output's storage.
void check_case(const SelectCase& c, std::mt19937_64& g, cudaStream_t stream = nullptr,
                bool graph = false) {
  const int64_t n2 = c.q_rows / 2;
  const int64_t kv_rows = c.world * c.qsl.back() + 3;
  HostTensor q = random_tensor({c.q_rows, c.heads, c.dq}, c.elem, c.step, g, c.pad16);
  HostTensor k = random_tensor({kv_rows, c.heads, c.dk}, c.elem, c.step, g, c.pad16);
  HostTensor v = random_tensor({kv_rows, c.heads, c.dv}, c.elem, c.step, g, c.pad16);
  const bool qsl64 = c.qsl_bits == 0 ? g() % 2 == 1 : c.qsl_bits == 64;
  HostTensor qsl = HostTensor::of(c.qsl, qsl64 ? i64() : i32(), {}, c.qsl_step);
  auto out = [&](int64_t rows, int64_t d) {
    return HostTensor({rows, c.heads, d}, dtype_bits(c.elem * 8));
  };
  std::vector<HostTensor> host_out, dev_out;
  for (int pass = 0; pass < 2; ++pass) {
    auto& o = pass == 0 ? host_out : dev_out;
    const auto rows = cattn_test::select_rows(c.q_rows, c.world, c.rank);
    const int64_t dims[6] = {c.dq, c.dk, c.dv, c.dq, c.dk, c.dv};
    for (int i = 0; i < 6; ++i) o.push_back(out(rows[i], dims[i]));
  }
  cattn_fused_pcp_qkv_select_args_t a =
      select_args(q.dl(), k.dl(), v.dl(), qsl.dl(), c.world, c.rank,
                  [&](int i) { return host_out[static_cast<size_t>(i)].dl(); });
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));

  DeviceTensor dq(q), dk(k), dv(v), dqsl(qsl);
  std::vector<std::unique_ptr<DeviceTensor>> douts;
  for (auto& t : dev_out) douts.push_back(std::make_unique<DeviceTensor>(t));
  a = select_args(dq.dl(), dk.dl(), dv.dl(), dqsl.dl(), c.world, c.rank,
                  [&](int i) { return douts[static_cast<size_t>(i)]->dl(); });
  a.stream = reinterpret_cast<cattn_stream_t>(stream);
  ASSERT_NO_FATAL_FAILURE(enqueue_selects(stream, graph, graph ? 2 : 1, {&a}));
  const char* names[6] = {"q_head", "k_head", "v_head", "q_tail", "k_tail", "v_tail"};
  for (int i = 0; i < 6; ++i) {
    douts[i]->download();
    ASSERT_TRUE(dev_out[i].bytes() == host_out[i].bytes()) << names[i] << " differs from host";
  }
}

std::vector<int64_t> random_qsl(std::mt19937_64& g, int b, int64_t max_half) {
  std::vector<int64_t> qsl{0};
  for (int i = 0; i < b; ++i)
    qsl.push_back(qsl.back() + 2 * static_cast<int64_t>(g() % (max_half + 1)));
  return qsl;
}

// B requests of random even lengths summing to exactly T: B - 1 cut points drawn uniformly over
// the T / 2 request halves, so equal cuts give zero-length requests (many of them when B is
// close to T / 2) and the lengths are as ragged as a serving batch's.
std::vector<int64_t> random_cut_qsl(std::mt19937_64& g, int b, int64_t T) {
  std::vector<int64_t> cuts{0, T / 2};
  for (int i = 1; i < b; ++i) cuts.push_back(static_cast<int64_t>(g() % (T / 2 + 1)));
  std::sort(cuts.begin(), cuts.end());
  for (auto& x : cuts) x *= 2;
  return cuts;
}

// A decode-heavy batch: most requests 0 or 2 tokens, a few long prefills take the rest of T.
std::vector<int64_t> skewed_qsl(std::mt19937_64& g, int b, int64_t T) {
  std::vector<int64_t> len(static_cast<size_t>(b));
  int64_t used = 0;
  for (auto& x : len) used += (x = 2 * static_cast<int64_t>(g() % 2));
  const int64_t rest = (T - used) / 2;  // halves left for the prefills
  for (int i = 0; i < 4 && i < b; ++i) {
    len[static_cast<size_t>(g() % len.size())] += 2 * (i < 3 ? rest / 4 : rest - 3 * (rest / 4));
  }
  std::vector<int64_t> qsl{0};
  for (int64_t x : len) qsl.push_back(qsl.back() + x);
  return qsl;
}

// A row shape of the suites below: heads, q/k/v head dims, bytes per element.
struct RowShape {
  int64_t heads, dq, dk, dv;
  int elem;
};

// A case of `sh` at world size `world`, its rank drawn from `g`; compact inputs. The caller
// sets query_start_loc, q_rows and any layout.
SelectCase shape_case(const RowShape& sh, int64_t world, std::mt19937_64& g) {
  SelectCase c;
  c.world = world;
  c.rank = static_cast<int64_t>(g() % world);
  c.heads = sh.heads;
  c.dq = sh.dq;
  c.dk = sh.dk;
  c.dv = sh.dv;
  c.elem = sh.elem;
  c.step = 1;
  return c;
}

// A row shape and its inputs' layout: 0 compact, 1 strided at 16 bytes (pad16), 2 strided with
// a narrow offset.
struct LayoutShape {
  RowShape row;
  int layout;
};

// Every shape at every world size (rank drawn from `g`) over the requests qsl_of(row) draws, q
// with two padding rows past them.
template <class QslOf>
void check_layouts(const std::vector<LayoutShape>& shapes, std::initializer_list<int64_t> worlds,
                   std::mt19937_64& g, QslOf qsl_of) {
  int iter = 0;
  for (const LayoutShape& sh : shapes) {
    for (int64_t world : worlds) {
      SelectCase c = shape_case(sh.row, world, g);
      c.step = sh.layout == 2 ? 2 : 1;
      c.pad16 = sh.layout == 1;
      c.qsl = qsl_of(sh.row);
      c.q_rows = c.qsl.back() + 2;
      SCOPED_TRACE("shape " + std::to_string(iter++) + ", W" + std::to_string(world));
      check_case(c, g);
    }
  }
}

}  // namespace
#endif

TEST(fused_pcp_qkv_select_gpu, RandomAgainstHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(11);
  const int elems[] = {1, 2, 4, 8};
  for (int iter = 0; iter < 40; ++iter) {
    SelectCase c;
    c.world = int64_t{1} << (g() % 4);
    c.rank = static_cast<int64_t>(g() % c.world);
    c.heads = 1 + static_cast<int64_t>(g() % 5);
    c.elem = elems[g() % 4];
    const int64_t dims[] = {8, 64, 128, 192, 3, 72};
    c.dq = dims[g() % 6];
    c.dk = iter % 3 == 0 ? c.dq : dims[g() % 6];
    c.dv = dims[g() % 6];
    c.step = iter % 4 == 1 ? 2 : 1;
    c.qsl = random_qsl(g, static_cast<int>(g() % 9), 40);
    c.q_rows = c.qsl.back() + 2 * static_cast<int64_t>(g() % 3);
    SCOPED_TRACE("iter " + std::to_string(iter));
    check_case(c, g);
  }
#endif
}

// Batches large enough that every row kind spans many work items: 16-byte-aligned rows from
// 64 B (many rows per item, runs cut at request and block edges) to 24 KiB (rows cut into
// pieces, the last one partial), many requests including empty ones, and padded outputs.
TEST(fused_pcp_qkv_select_gpu, ManyItemsAndLongRows) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(12);
  const RowShape shapes[] = {{1, 32, 32, 32, 2},    {2, 64, 64, 64, 2},
                             {4, 192, 192, 128, 1}, {8, 128, 128, 128, 2},
                             {64, 192, 192, 128, 2}, {3, 16, 32, 48, 4}};
  int iter = 0;
  for (const RowShape& sh : shapes) {
    for (int64_t world : {2, 4}) {
      SelectCase c = shape_case(sh, world, g);
      c.qsl = random_qsl(g, sh.heads >= 64 ? 3 : 60, sh.heads >= 64 ? 24 : 150);
      c.q_rows = c.qsl.back() + 4;
      SCOPED_TRACE("iter " + std::to_string(iter++));
      check_case(c, g);
    }
  }
#endif
}

// The serving-batch class: hundreds to a thousand requests, most of them short (so nearly every
// row is a different request from its neighbour, and the kernel's request lookup is exercised
// on every row), at bf16 and fp8, W 2, 4 and 8 with the first, last and a middle rank,
// contiguous and strided inputs, and CUDA-graph padding rows past query_start_loc[B].
TEST(fused_pcp_qkv_select_gpu, ManyRequestsAgainstHost) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(17);
  struct Shape {
    int64_t world, rank;
    int reqs;
    int64_t T, heads;
    int elem;
    int layout;  // 0 compact, 1 strided at 16 bytes (pad16), 2 strided with a narrow offset
    bool skewed;
  };
  const Shape shapes[] = {
      {2, 1, 512, 4096, 8, 2, 0, false},    {2, 0, 256, 2048, 32, 2, 0, false},
      {4, 3, 64, 8192, 8, 2, 0, false},     {8, 5, 1024, 2048, 8, 2, 0, false},
      {8, 0, 1024, 4096, 8, 1, 0, false},   {4, 2, 1024, 2048, 8, 1, 1, false},
      {2, 1, 1024, 2048, 8, 2, 1, false},   {8, 7, 256, 2048, 8, 2, 2, false},
      {4, 1, 512, 4096, 32, 1, 0, true},    {2, 0, 1024, 4096, 8, 2, 0, true},
      {8, 3, 33, 2048, 8, 2, 0, false},     {4, 0, 1023, 2048, 8, 1, 1, true},
      // More than 1,024 requests: the warp search takes one more round of buckets.
      {4, 1, 1025, 4096, 8, 2, 0, false},   {2, 1, 3000, 8192, 8, 1, 0, true},
  };
  int iter = 0;
  for (const Shape& sh : shapes) {
    SelectCase c;
    c.world = sh.world;
    c.rank = sh.rank;
    c.heads = sh.heads;
    c.dq = c.dk = c.dv = 128;
    c.elem = sh.elem;
    c.step = sh.layout == 2 ? 2 : 1;
    c.pad16 = sh.layout == 1;
    c.qsl = sh.skewed ? skewed_qsl(g, sh.reqs, sh.T) : random_cut_qsl(g, sh.reqs, sh.T);
    ASSERT_EQ(c.qsl.back(), sh.T);
    c.q_rows = sh.T + 4;
    SCOPED_TRACE("shape " + std::to_string(iter++) + ": W" + std::to_string(sh.world) + " r" +
                 std::to_string(sh.rank) + " reqs" + std::to_string(sh.reqs) + " T" +
                 std::to_string(sh.T));
    check_case(c, g);
  }
#endif
}

// Rows on both sides of the joint-turn bound: the kernel copies q's two halves, and K's and V's
// row t, in one turn and one round of loads when both pairs fit 32 x 4 vectors at the access
// width (fused_pcp_qkv_select_joint), and row by row otherwise. At the bound exactly (fp8 H8
// D128, 16-byte vectors), just past it in K + V only and in q only, with K and V rows of
// different sizes, strided heads, narrow accesses, and ragged batches of many requests.
TEST(fused_pcp_qkv_select_gpu, RowsAtTheJointTurnBound) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(23);
  check_layouts(
      {
          {{8, 128, 128, 128, 1}, 0},  // q 2 x 64, K + V 128: joint, at the bound
          {{8, 128, 128, 128, 1}, 1},  // the same, heads strided
          {{4, 192, 160, 96, 1}, 0},   // K 40 and V 24 vectors: joint, K and V rows unequal
          {{8, 128, 144, 128, 1}, 0},  // K + V 136 vectors: past the bound, row by row
          {{9, 128, 128, 128, 1}, 0},  // q 2 x 72 vectors: past the bound, row by row
          {{4, 64, 64, 64, 2}, 1},     // bf16, strided: joint
          {{4, 3, 5, 7, 2}, 0},        // 2-byte and narrower accesses: joint
          {{16, 8, 8, 8, 2}, 2},       // strided with a narrow offset: 4-byte accesses, at the bound
      },
      {2, 8}, g, [&](const RowShape&) { return random_cut_qsl(g, 300, 1024); });
#endif
}

// Rows on both sides of the chunk bound: a row longer than one round of loads (32 x 4 vectors
// at the access width) is split into chunks that separate warp turns copy, the last one
// partial. Rows of 129 and 130 vectors (one vector past the bound), exactly at it, chunk edges
// inside a strided head, K and V rows with different chunk counts, 24 KiB rows (12 chunks),
// and 1-, 2-, 4- and 16-byte accesses, over ragged batches of many requests.
TEST(fused_pcp_qkv_select_gpu, RowsSplitIntoChunks) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(31);
  check_layouts(
      {
          {{1, 1032, 1024, 1040, 2}, 0},  // 16 B: q 129 vectors, K 128 (one chunk), V 130
          {{3, 344, 352, 336, 2}, 1},     // heads of 43/44/42 vectors, strided: edges in a head
          {{5, 128, 192, 64, 4}, 0},      // q 160, K 240, V 80 vectors: 2, 2 and 1 chunks
          {{3, 100, 100, 100, 8}, 1},     // fp64, strided: 150 vectors
          {{64, 192, 192, 128, 2}, 0},    // 24 KiB and 16 KiB rows: 12 and 8 chunks
          {{2, 129, 131, 127, 1}, 0},     // 1-byte accesses: 258, 262 and 254 vectors
          {{8, 66, 70, 62, 2}, 2},        // narrow offset: 2-byte accesses, 4 to 5 chunks
      },
      {2, 4}, g,
      [&](const RowShape& row) {
        return row.heads >= 64 ? random_cut_qsl(g, 6, 48) : random_cut_qsl(g, 40, 400);
      });
#endif
}

// On sm_90 the kernel is a programmatic dependent launch: it may be scheduled while the kernel
// before it on the stream drains, and must wait for it before reading. Two selects queued back
// to back on one stream, the second reading what the first writes (its q, k and v are the
// first's q_head, k_tail and v_tail; its query_start_loc is the first's halved), then the same
// pair captured in a CUDA graph and replayed: the second's outputs must equal the host's.
TEST(fused_pcp_qkv_select_gpu, DependentLaunchesReadWhatTheKernelBeforeWrote) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(37);
  cudaStream_t s;
  CATTN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int64_t world = 2, rank = 1, heads = 8, d = 128;
  // Request lengths are multiples of 4, so the halved boundaries stay even.
  std::vector<int64_t> qsl1 = random_cut_qsl(g, 300, 8192);
  for (auto& x : qsl1) x *= 2;
  std::vector<int64_t> qsl2 = qsl1;
  for (auto& x : qsl2) x /= 2;
  const int64_t n = qsl1.back();
  auto outs = [&](int64_t nq) {
    std::vector<HostTensor> o;
    for (int64_t rows : cattn_test::select_rows(nq, world, rank))
      o.emplace_back(std::vector<int64_t>{rows, heads, d}, dtype_bits(16));
    return o;
  };
  HostTensor q = random_tensor({n, heads, d}, 2, 1, g);
  HostTensor k = random_tensor({world * n, heads, d}, 2, 1, g);
  HostTensor v = random_tensor({world * n, heads, d}, 2, 1, g);
  HostTensor hq1 = HostTensor::of(qsl1, i32()), hq2 = HostTensor::of(qsl2, i32());
  // Host: the first select, then the second over its outputs.
  std::vector<HostTensor> h1 = outs(n), h2 = outs(n / 2);
  cattn_fused_pcp_qkv_select_args_t a = select_args(
      q.dl(), k.dl(), v.dl(), hq1.dl(), world, rank, [&](int i) { return h1[size_t(i)].dl(); });
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));
  a = select_args(h1[0].dl(), h1[4].dl(), h1[5].dl(), hq2.dl(), world, rank,
                  [&](int i) { return h2[size_t(i)].dl(); });
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));
  for (bool graph : {false, true}) {
    SCOPED_TRACE(graph ? "graph" : "stream");
    std::vector<HostTensor> o1 = outs(n), o2 = outs(n / 2);
    DeviceTensor dq(q), dk(k), dv(v), dq1(hq1), dq2(hq2);
    std::vector<std::unique_ptr<DeviceTensor>> d1, d2;
    for (auto& t : o1) d1.push_back(std::make_unique<DeviceTensor>(t));
    for (auto& t : o2) d2.push_back(std::make_unique<DeviceTensor>(t));
    cattn_fused_pcp_qkv_select_args_t first = select_args(
        dq.dl(), dk.dl(), dv.dl(), dq1.dl(), world, rank, [&](int i) { return d1[size_t(i)]->dl(); });
    cattn_fused_pcp_qkv_select_args_t second =
        select_args(d1[0]->dl(), d1[4]->dl(), d1[5]->dl(), dq2.dl(), world, rank,
                    [&](int i) { return d2[size_t(i)]->dl(); });
    first.stream = second.stream = reinterpret_cast<cattn_stream_t>(s);
    ASSERT_NO_FATAL_FAILURE(enqueue_selects(s, graph, graph ? 1 : 3, {&first, &second}));
    for (int i = 0; i < 6; ++i) {
      d2[size_t(i)]->download();
      ASSERT_TRUE(o2[size_t(i)].bytes() == h2[size_t(i)].bytes()) << "output " << i << " differs";
    }
  }
  CATTN_CUDA_OK(cudaStreamDestroy(s));
#endif
}

// query_start_loc as a strided view, int32 and int64: the search's int32 instantiation reads
// entries at 32-bit element offsets i * stride, bounded by the launcher's int32 check. Batches
// of one to 1,100 requests (one and two rounds of the warp search), joint turns (fp8 H8) and
// row by row (bf16 H8).
TEST(fused_pcp_qkv_select_gpu, StridedQueryStartLoc) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(29);
  int iter = 0;
  for (int reqs : {1, 40, 1100}) {
    for (int elem : {1, 2}) {
      for (int bits : {32, 64}) {
        SelectCase c = shape_case({8, 128, 128, 128, elem}, 4, g);
        c.qsl = random_cut_qsl(g, reqs, 2400);
        c.q_rows = c.qsl.back() + 2;
        c.qsl_step = iter % 2 == 0 ? 3 : 7;
        c.qsl_bits = bits;
        SCOPED_TRACE("case " + std::to_string(iter++) + ": reqs" + std::to_string(reqs));
        check_case(c, g);
      }
    }
  }
#endif
}

// query_start_loc on the device is not checked (the header says so): negative, odd,
// decreasing and huge entries, over enough requests that the warp search takes two rounds,
// must leave every output byte outside the outputs untouched and make no fault (the
// sanitizer run checks the reads).
TEST(fused_pcp_qkv_select_gpu, GarbageDeviceQueryStartLocStaysInBounds) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(21);
  const int64_t world = 4, rank = 1, heads = 2, d = 64, nq = 256;
  const int64_t n2 = nq / 2;
  // Rounds 4-5 (1,500 requests) take the warp search through one more round of buckets.
  for (int round = 0; round < 6; ++round) {
    std::vector<int64_t> bad(round < 4 ? 301 : 1501);
    for (auto& x : bad) {
      switch (g() % 6) {
        case 0: x = -static_cast<int64_t>(g() % 1000) - 1; break;
        case 1: x = int64_t{1} << (31 + g() % 30); break;
        case 2: x = round % 2 ? INT64_MIN : INT64_MAX; break;
        default: x = static_cast<int64_t>(g() % (nq + 40)); break;  // odd, past Nq, unsorted
      }
    }
    // Sorted, yet negative and huge.
    if (round == 3 || round == 5) std::sort(bad.begin(), bad.end());
    HostTensor qsl = HostTensor::of(bad, i64());
    HostTensor q = random_tensor({nq, heads, d}, 2, 1, g);
    HostTensor k = random_tensor({world * nq, heads, d}, 2, 1, g);
    HostTensor v = random_tensor({world * nq, heads, d}, 2, 1, g);
    // Each output is a view 64 elements into its storage: the storage before and after it
    // (poisoned) must come back unchanged.
    std::vector<HostTensor> outs;
    for (int64_t rows : cattn_test::select_rows(nq, world, rank))
      outs.emplace_back(std::vector<int64_t>{rows, heads, d}, dtype_bits(16), 1, 64);
    DeviceTensor dq(q), dk(k), dv(v), dqsl(qsl);
    std::vector<std::unique_ptr<DeviceTensor>> douts;
    for (auto& t : outs) douts.push_back(std::make_unique<DeviceTensor>(t));
    cattn_fused_pcp_qkv_select_args_t a =
        select_args(dq.dl(), dk.dl(), dv.dl(), dqsl.dl(), world, rank,
                    [&](int i) { return douts[static_cast<size_t>(i)]->dl(); });
    ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));
    CATTN_CUDA_OK(cudaDeviceSynchronize());
    CATTN_CUDA_OK(cudaGetLastError());
    for (int i = 0; i < 6; ++i) {
      HostTensor& t = outs[static_cast<size_t>(i)];
      const size_t first = 64 * 2, view = static_cast<size_t>(t.numel()) * 2;
      douts[static_cast<size_t>(i)]->download();
      const auto& b = t.bytes();
      for (size_t j = 0; j < b.size(); ++j)
        if (j < first || j >= first + view)
          ASSERT_EQ(b[j], kPoisonByte) << "round " << round << ": output " << i
                                       << " written outside its view at byte " << j;
    }
  }
#endif
}

TEST(fused_pcp_qkv_select_gpu, EdgeCases) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(5);
  // Empty batch, zero-length requests, one request, MLA dims, fp8.
  check_case({2, 1, 4, 128, 128, 128, 2, 1, {0}, 0}, g);
  check_case({2, 0, 4, 128, 128, 128, 2, 1, {0, 0, 8, 8}, 8}, g);
  check_case({4, 3, 16, 192, 192, 128, 2, 1, {0, 64}, 64}, g);
  check_case({8, 5, 16, 192, 192, 128, 1, 1, {0, 6, 40, 42}, 48}, g);
  check_case({1, 0, 2, 5, 7, 9, 1, 1, {0, 10, 12}, 12}, g);
#endif
}

TEST(fused_pcp_qkv_select_gpu, NonDefaultStreamAndGraph) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  std::mt19937_64 g(6);
  cudaStream_t s;
  CATTN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  check_case({2, 1, 8, 128, 128, 128, 2, 1, {0, 32, 96, 100}, 100}, g, s, false);
  check_case({4, 2, 8, 192, 192, 128, 2, 2, {0, 32, 96, 100}, 104}, g, s, true);
  CATTN_CUDA_OK(cudaStreamDestroy(s));
#endif
}

TEST(fused_pcp_qkv_select_gpu, RowsPastTheInt32Bound) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // 8 ranks of 4.2M one-byte tokens: K and V hold 33.6M rows, past the bound below which the
  // kernel keeps its row arithmetic in 32 bits (fused_pcp_qkv_select_fits_int32), so the 64-bit
  // instantiation runs; every other case of this suite takes the 32-bit one.
  std::mt19937_64 g(98);
  check_case({8, 7, 1, 1, 1, 1, 1, 1, {0, 1200000, 4200000}, 4200000}, g);
#endif
}

TEST(fused_pcp_qkv_select_gpu, PastTwoToThe31Elements) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // K has 8 * 11000 rows x 128 heads x 192 = 2.16e9 fp8 elements, past int32 offsets. The
  // check is against the host implementation, byte for byte, on real data.
  size_t free_b = 0, total_b = 0;
  CATTN_CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < (size_t{12} << 30)) GTEST_SKIP() << "needs 12 GiB of free device memory";
  std::mt19937_64 g(99);
  check_case({8, 3, 128, 192, 192, 8, 1, 1, {0, 4000, 11000}, 11000}, g);
#endif
}

TEST(fused_pcp_qkv_select_gpu, OverlapsAreRefusedBeforeAnyLaunch) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  // The hostile-input probe on the device: q_tail placed over query_start_loc (and, next, over
  // q itself) in one cudaMalloc'd buffer is refused on the host; the buffer stays as it was.
  HostTensor all({128}, dtype_bits(32));
  for (int64_t i = 0; i < 128; ++i) all.set(i, i);
  DeviceTensor dev(all);
  auto view = [&](int64_t first, std::vector<int64_t> shape) {
    DLTensor t = *dev.dl();
    t.byte_offset = static_cast<uint64_t>(first * 4);
    t.ndim = static_cast<int32_t>(shape.size());
    return std::make_pair(t, std::move(shape));
  };
  auto q = view(0, {4, 1, 2}), qsl = view(8, {3}), k = view(16, {8, 1, 2}), v = view(32, {8, 1, 2});
  auto qh = view(48, {2, 1, 2}), kh = view(52, {2, 1, 2}), vh = view(56, {2, 1, 2}),
       qt = view(60, {2, 1, 2}), kt = view(64, {8, 1, 2}), vt = view(80, {8, 1, 2});
  for (auto* p : {&q, &qsl, &k, &v, &qh, &kh, &vh, &qt, &kt, &vt}) p->first.shape = p->second.data();
  qsl.first.dtype = i32();
  // query_start_loc {0, 2, 4} as int32
  all.set(8, 0);
  all.set(9, 2);
  all.set(10, 4);
  dev.upload();
  DLTensor* outs[6] = {&qh.first, &kh.first, &vh.first, &qt.first, &kt.first, &vt.first};
  cattn_fused_pcp_qkv_select_args_t a = select_args(&q.first, &k.first, &v.first, &qsl.first, 2,
                                                    0, [&](int i) { return outs[i]; });
  for (int64_t over : {8, 1}) {
    qt.first.byte_offset = static_cast<uint64_t>(over * 4);
    EXPECT_CATTN_ERROR(cattn_fused_pcp_qkv_select(&a), CATTN_INVALID_ARGUMENT,
                       "args->q_tail overlaps an input");
  }
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  const auto before = all.bytes();
  dev.download();
  EXPECT_EQ(all.bytes(), before) << "a refused call wrote device memory";
  // Placed apart, the same call runs.
  qt.first.byte_offset = 60 * 4;
  ASSERT_CATTN_OK(cattn_fused_pcp_qkv_select(&a));
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  dev.download();
  EXPECT_EQ(all.get(60), 2);  // q row 1 heads request 0's tail
#endif
}
