// SPDX-License-Identifier: Apache-2.0
// The step inputs on the GPU: the five calls on every vector of tests/vectors/step_inputs.json
// (int32 and int64), the step plan's step-input products on the same vectors, the plan with
// 1.1 products reading what it computed (two launches), replays of one captured plan with a
// new random batch before each (compared with the host calls), and hostile values on the
// device (no fault, the batch check reports them).
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "cattn.h"
#include "support/device_maker.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/step_inputs_case.h"
#include "support/vectors.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

using namespace cattn_test;

TEST(step_inputs_gpu, VectorsOnDeviceInt32AndInt64) {
  SKIP_WITHOUT_GPU();
  const auto v = load_vectors("step_inputs");
  int cases = 0, bad = 0;
  for (const auto& c : v["cases"]) {
    for (DLDataType dt : {i64(), i32()}) {
      if (dt.bits == 32 && c.value("mrv2_wraps", false)) continue;
      DeviceMaker d;
      TensorMaker m = d.maker();
      bad += run_step_inputs_case(c, dt, m);
    }
    ++cases;
  }
  EXPECT_GE(cases, 50);
  EXPECT_EQ(bad, 0);
}

// A plan's step-input products over one vector case; returns mismatches.
int run_plan_case(const nlohmann::json& c) {
  const std::string name = c["name"].get<std::string>();
  const int64_t B = c["B"], R = c["R"], T = c["T_cap"];
  const auto& e = c["expected"];
  const auto& groups = c["groups"];
  const int64_t L = ints(e["logits_indices"]).size() + 3;
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_INPUT_PRODUCTS;
  d.max_num_reqs = B, d.max_num_tokens = T, d.max_num_logits = L, d.max_num_persistent_reqs = R;
  d.inputs.num_kv_groups = static_cast<int32_t>(groups.size());
  d.inputs.dcp_size = c["dcp"]["size"], d.inputs.dcp_rank = c["dcp"]["rank"];
  d.inputs.dcp_kv_cache_interleave_size = c["dcp"]["interleave"];
  for (size_t g = 0; g < groups.size(); ++g) {
    d.kv_groups[g].block_size = groups[g]["block_size"];
    d.kv_groups[g].kernel_block_size = groups[g]["kernel_block_size"];
    d.kv_groups[g].max_num_blocks = static_cast<int64_t>(groups[g]["table"][0].size());
    d.kv_groups[g].slot_mode = groups[g]["slot_mode"];
  }
  cattn_step_plan_t* plan = nullptr;
  EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  if (plan == nullptr) return 1;
  DeviceMaker dm;
  TensorMaker m = dm.maker();
  HostTensor sched = HostTensor::of(ints(c["num_scheduled_tokens"]), i32());
  HostTensor idx = HostTensor::of(ints(c["idx_mapping"]), i32());
  HostTensor nct = HostTensor::of(ints(c["num_computed_tokens"]), i64());
  HostTensor nreq = HostTensor::of({c["num_reqs"].get<int64_t>()}, i32());
  HostTensor nd = HostTensor::of(ints(c["num_draft_tokens"]), i32());
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.num_reqs = m.make(nreq), b.num_scheduled_tokens = m.make(sched), b.idx_mapping = m.make(idx);
  b.num_computed_tokens = m.make(nct), b.num_draft_tokens = m.make(nd);
  HostTensor qsl({B + 1}, i32()), seq({B}, i32()), pos({T}, i64()), t2r({T}, i32());
  HostTensor li({L}, i64()), cu({B + 1}, i32()), ei({L}, i32()), ep({L}, i32());
  HostTensor counts({CATTN_STEP_NUM_COUNTS}, i64());
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  o.query_start_loc = m.make(qsl), o.seq_lens = m.make(seq), o.positions = m.make(pos);
  o.token_to_req_indices = m.make(t2r), o.logits_indices = m.make(li), o.cu_num_logits = m.make(cu);
  o.expanded_idx_mapping = m.make(ei), o.expanded_local_pos = m.make(ep);
  o.counts = m.make(counts);
  std::vector<std::unique_ptr<HostTensor>> keep;
  std::vector<std::pair<HostTensor*, std::vector<int64_t>>> want;
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t W = groups[g]["table"][0].size();
    keep.push_back(std::make_unique<HostTensor>(HostTensor::of(row_major(groups[g]["table"]), i32(), {R, W})));
    b.kv_block_tables[g] = m.make(*keep.back());
    keep.push_back(std::make_unique<HostTensor>(HostTensor::of(ints(groups[g]["num_blocks"]), i32())));
    b.kv_num_blocks[g] = m.make(*keep.back());
    keep.push_back(std::make_unique<HostTensor>(HostTensor::of(row_major(groups[g]["gather_init"]), i32(), {B, W})));
    o.block_tables[g] = m.make(*keep.back());
    want.push_back({keep.back().get(), row_major(e["block_tables"][g])});
    if (groups[g]["slot_mode"].get<int>() == 0) {
      keep.push_back(std::make_unique<HostTensor>(HostTensor::of(std::vector<int64_t>(T, 5), i64())));
      o.slot_mappings[g] = m.make(*keep.back());
      const char* key = c.value("mrv2_wraps", false) && e.contains("slot_mappings_mrv2_int64") &&
                                !e["slot_mappings_mrv2_int64"][g].is_null()
                            ? "slot_mappings_mrv2_int64"
                            : "slot_mappings_mrv2";
      want.push_back({keep.back().get(), unwritten_as(ints(e[key][g]), -1)});
    }
  }
  EXPECT_CATTN_OK(cattn_step_plan_run(plan, &b, &o, nullptr));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cattn_step_plan_destroy(plan);
  const std::vector<int64_t> q = ints(e["query_start_loc"]);
  const int64_t n = c["num_reqs"];
  std::vector<int64_t> req(T, 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t t = q[r]; t < q[r + 1]; ++t) req[t] = r;
  std::vector<int64_t> lw = ints(e["logits_indices"]), ew = ints(e["expanded_idx_mapping"]),
                       pw = ints(e["expanded_local_pos"]), cw = ints(e["cu_num_logits"]);
  lw.resize(L, 0), ew.resize(L, 0), pw.resize(L, 0), cw.resize(B + 1, cw.back());
  int64_t max_q = 0, max_seq = 0;
  const std::vector<int64_t> sw = unwritten_as(ints(e["seq_lens"]), 0);
  for (int64_t r = 0; r < n; ++r) max_q = std::max(max_q, q[r + 1] - q[r]), max_seq = std::max(max_seq, sw[r]);
  want.push_back({&qsl, q});
  want.push_back({&seq, sw});
  want.push_back({&pos, unwritten_as(ints(e["positions"]), 0)});
  want.push_back({&t2r, req});
  want.push_back({&li, lw});
  want.push_back({&ei, ew});
  want.push_back({&ep, pw});
  want.push_back({&cu, cw});
  int bad = 0;
  for (auto& [t, w] : want) {
    m.download(*t);
    if (t->values() != w) {
      ++bad;
      ADD_FAILURE() << name << ": a plan output differs from the vectors";
    }
  }
  m.download(counts);
  const std::vector<int64_t> got = counts.values();
  const std::vector<int64_t> first = {q[n], 0, 0, 0, 0, 0, 0, 0, n, cw[n], max_q, max_seq};
  if (!std::equal(first.begin(), first.end(), got.begin())) {
    ++bad;
    ADD_FAILURE() << name << ": counts differ";
  }
  return bad;
}

TEST(step_inputs_gpu, PlanMatchesTheVectors) {
  SKIP_WITHOUT_GPU();
  const auto v = load_vectors("step_inputs");
  int bad = 0, cases = 0;
  for (const auto& c : v["cases"]) bad += run_plan_case(c), ++cases;
  EXPECT_GE(cases, 50);
  EXPECT_EQ(bad, 0);
}

// A random step: B rows of which num_reqs live, R persistent rows, two groups.
struct RandomStep {
  int64_t n;
  std::vector<int64_t> sched, idx, nct, drafts;
  std::vector<std::vector<int64_t>> tables, num_blocks;
};

RandomStep random_step(std::mt19937_64& rng, int64_t B, int64_t R, int64_t T,
                       const std::vector<int64_t>& widths, int64_t kbs, int64_t live = -1) {
  RandomStep s;
  s.n = live >= 0 ? live : std::uniform_int_distribution<int64_t>(0, B)(rng);
  std::vector<int64_t> rows(R);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  s.sched.assign(B, 0), s.idx.assign(B, -3), s.drafts.assign(B, 0), s.nct.assign(R, 0);
  int64_t budget = T;
  for (int64_t b = 0; b < B; ++b) {
    s.idx[b] = rows[b];
    if (b >= s.n) {
      s.sched[b] = 99;  // garbage the padding contract says is never read
      continue;
    }
    const bool decode = rng() % 3 != 0;
    const int64_t want = decode ? 1 + static_cast<int64_t>(rng() % 4)
                                : 1 + static_cast<int64_t>(rng() % 300);
    s.sched[b] = std::min(want, budget);
    budget -= s.sched[b];
    s.drafts[b] = decode && s.sched[b] > 1 ? s.sched[b] - 1 : 0;
  }
  for (int64_t r = 0; r < R; ++r) s.nct[r] = static_cast<int64_t>(rng() % 500);
  for (int64_t W : widths) {
    std::vector<int64_t> t(R * W), nb(R);
    for (int64_t r = 0; r < R; ++r) {
      nb[r] = std::min<int64_t>(W, (s.nct[r] + 300 + 4) / kbs + 1);
      for (int64_t c = 0; c < W; ++c) t[r * W + c] = static_cast<int64_t>(rng() % 100000);
    }
    s.tables.push_back(t), s.num_blocks.push_back(nb);
  }
  return s;
}

// One captured plan (all step-input products, two groups), replayed with a new random batch
// written into the same buffers before each replay; each replay compared with the host calls
// and checked against the padding contract on the device.
TEST(step_inputs_gpu, GraphReplaysNewBatches) {
  SKIP_WITHOUT_GPU();
  const int64_t B = 48, R = 96, T = 2048, kbs = 16, L = 4 * B;
  // Wide enough for every position a step makes (computed < 500, queries <= 300 tokens).
  const std::vector<int64_t> widths = {64, 56};
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_INPUT_PRODUCTS;
  d.max_num_reqs = B, d.max_num_tokens = T, d.max_num_logits = L, d.max_num_persistent_reqs = R;
  d.inputs.num_kv_groups = 2;
  for (int g = 0; g < 2; ++g) {
    d.kv_groups[g].block_size = g == 0 ? 16 : 32;
    d.kv_groups[g].kernel_block_size = kbs;
    d.kv_groups[g].max_num_blocks = widths[g];
  }
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  std::mt19937_64 rng(31);
  RandomStep s = random_step(rng, B, R, T, widths, kbs);
  HostTensor sched = HostTensor::of(s.sched, i32()), idx = HostTensor::of(s.idx, i32());
  HostTensor nct = HostTensor::of(s.nct, i32()), nreq = HostTensor::of({s.n}, i32());
  HostTensor nd = HostTensor::of(s.drafts, i32());
  HostTensor t0 = HostTensor::of(s.tables[0], i32(), {R, widths[0]});
  HostTensor t1 = HostTensor::of(s.tables[1], i32(), {R, widths[1]});
  HostTensor n0 = HostTensor::of(s.num_blocks[0], i32()), n1 = HostTensor::of(s.num_blocks[1], i32());
  DeviceTensor d_sched(sched), d_idx(idx), d_nct(nct), d_nreq(nreq), d_nd(nd), d_t0(t0), d_t1(t1),
      d_n0(n0), d_n1(n1);
  HostTensor qsl({B + 1}, i32()), seq({B}, i32()), pos({T}, i64()), t2r({T}, i32());
  HostTensor g0({B, widths[0]}, i32()), g1({B, widths[1]}, i32()), s0({T}, i64()), s1({T}, i64());
  HostTensor li({L}, i64()), cu({B + 1}, i32()), counts({CATTN_STEP_NUM_COUNTS}, i64());
  DeviceTensor o_qsl(qsl), o_seq(seq), o_pos(pos), o_t2r(t2r), o_g0(g0), o_g1(g1), o_s0(s0),
      o_s1(s1), o_li(li), o_cu(cu), o_counts(counts);
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.num_reqs = d_nreq.dl(), b.num_scheduled_tokens = d_sched.dl(), b.idx_mapping = d_idx.dl();
  b.num_computed_tokens = d_nct.dl(), b.num_draft_tokens = d_nd.dl();
  b.kv_block_tables[0] = d_t0.dl(), b.kv_block_tables[1] = d_t1.dl();
  b.kv_num_blocks[0] = d_n0.dl(), b.kv_num_blocks[1] = d_n1.dl();
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  o.query_start_loc = o_qsl.dl(), o.seq_lens = o_seq.dl(), o.positions = o_pos.dl();
  o.token_to_req_indices = o_t2r.dl(), o.block_tables[0] = o_g0.dl(), o.block_tables[1] = o_g1.dl();
  o.slot_mappings[0] = o_s0.dl(), o.slot_mappings[1] = o_s1.dl();
  o.logits_indices = o_li.dl(), o.cu_num_logits = o_cu.dl(), o.counts = o_counts.dl();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_CATTN_OK(cattn_step_plan_run(plan, &b, &o, reinterpret_cast<cattn_stream_t>(stream)));
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  int replays = 0, mismatches = 0;
  for (int step = 0; step < 24; ++step) {
    // Step 3 is an empty batch, step 4 has no padding row.
    s = random_step(rng, B, R, T, widths, kbs, step == 3 ? 0 : (step == 4 ? B : -1));
    for (HostTensor* t : {&qsl, &seq, &pos, &t2r, &g0, &g1, &s0, &s1, &li, &cu, &counts})
      std::fill(t->raw().begin(), t->raw().end(), 0x5A);
    for (DeviceTensor* t : {&o_qsl, &o_seq, &o_pos, &o_t2r, &o_g0, &o_g1, &o_s0, &o_s1, &o_li,
                            &o_cu, &o_counts})
      t->upload();
    sched = HostTensor::of(s.sched, i32()), idx = HostTensor::of(s.idx, i32());
    nct = HostTensor::of(s.nct, i32()), nreq = HostTensor::of({s.n}, i32());
    nd = HostTensor::of(s.drafts, i32());
    t0 = HostTensor::of(s.tables[0], i32(), {R, widths[0]});
    t1 = HostTensor::of(s.tables[1], i32(), {R, widths[1]});
    n0 = HostTensor::of(s.num_blocks[0], i32()), n1 = HostTensor::of(s.num_blocks[1], i32());
    for (DeviceTensor* t : {&d_sched, &d_idx, &d_nct, &d_nreq, &d_nd, &d_t0, &d_t1, &d_n0, &d_n1})
      t->upload();
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ++replays;
    // The host calls on the same inputs.
    HostTensor hq({B + 1}, i32()), hs({B}, i32()), hp({T}, i64());
    cattn_prepare_pos_seq_lens_args_t pa = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
    pa.num_scheduled_tokens = sched.dl(), pa.idx_mapping = idx.dl(), pa.num_computed_tokens = nct.dl();
    pa.num_reqs = nreq.dl(), pa.query_start_loc = hq.dl(), pa.seq_lens = hs.dl(), pa.positions = hp.dl();
    ASSERT_CATTN_OK(cattn_prepare_pos_seq_lens(&pa));
    std::vector<std::pair<DeviceTensor*, std::vector<int64_t>>> cmp = {
        {&o_qsl, hq.values()}, {&o_seq, hs.values()}, {&o_pos, hp.values()}};
    HostTensor* tables[2] = {&t0, &t1};
    HostTensor* nbs[2] = {&n0, &n1};
    DeviceTensor* gathered[2] = {&o_g0, &o_g1};
    DeviceTensor* slots[2] = {&o_s0, &o_s1};
    for (int g = 0; g < 2; ++g) {
      HostTensor hg({B, widths[g]}, i32());
      std::fill(hg.raw().begin(), hg.raw().end(), 0x5A);
      cattn_gather_block_tables_args_t ga = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
      ga.idx_mapping = idx.dl(), ga.num_reqs = nreq.dl(), ga.block_table = tables[g]->dl();
      ga.num_blocks = nbs[g]->dl(), ga.out = hg.dl();
      ASSERT_CATTN_OK(cattn_gather_block_tables(&ga));
      HostTensor hsl({T}, i64());
      cattn_compute_slot_mappings_args_t sa = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
      sa.block_size = d.kv_groups[g].block_size, sa.kernel_block_size = kbs;
      sa.query_start_loc = hq.dl(), sa.num_reqs = nreq.dl(), sa.positions = hp.dl();
      sa.idx_mapping = idx.dl(), sa.block_table = tables[g]->dl(), sa.slot_mapping = hsl.dl();
      ASSERT_CATTN_OK(cattn_compute_slot_mappings(&sa));
      cmp.push_back({gathered[g], hg.values()});
      cmp.push_back({slots[g], hsl.values()});
    }
    HostTensor hl({L}, i64()), hc({B + 1}, i32());
    cattn_combine_sampled_and_draft_tokens_args_t ca = CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
    ca.query_start_loc = hq.dl(), ca.num_reqs = nreq.dl(), ca.num_draft_tokens = nd.dl();
    ca.logits_indices = hl.dl(), ca.cu_num_logits = hc.dl();
    ASSERT_CATTN_OK(cattn_combine_sampled_and_draft_tokens(&ca));
    cmp.push_back({&o_li, hl.values()});
    cmp.push_back({&o_cu, hc.values()});
    std::vector<int64_t> req(T, 0);
    const std::vector<int64_t> qv = hq.values();
    for (int64_t r = 0; r < s.n; ++r)
      for (int64_t t = qv[r]; t < qv[r + 1]; ++t) req[t] = r;
    cmp.push_back({&o_t2r, req});
    for (auto& [dev, want] : cmp) {
      dev->download();
      HostTensor* h = dev == &o_qsl ? &qsl : dev == &o_seq ? &seq : dev == &o_pos ? &pos
                      : dev == &o_t2r ? &t2r : dev == &o_g0 ? &g0 : dev == &o_g1 ? &g1
                      : dev == &o_s0 ? &s0 : dev == &o_s1 ? &s1 : dev == &o_li ? &li : &cu;
      // Gathered entries past a row's count are left as they were (poison on both sides).
      if (h->values() != want) ++mismatches;
    }
    // The padding contract on the device outputs.
    HostTensor status({3}, i64());
    DeviceTensor d_status(status);
    cattn_step_batch_check_args_t ka = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
    ka.query_start_loc = o_qsl.dl(), ka.num_reqs = d_nreq.dl(), ka.seq_lens = o_seq.dl();
    ka.block_tables[0] = o_g0.dl(), ka.block_tables[1] = o_g1.dl();
    ka.slot_mappings[0] = o_s0.dl(), ka.slot_mappings[1] = o_s1.dl(), ka.status = d_status.dl();
    ASSERT_CATTN_OK(cattn_step_batch_check(&ka));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    d_status.download();
    EXPECT_EQ(status.values(), (std::vector<int64_t>{0, 0, 0})) << "replay " << step;
  }
  EXPECT_EQ(replays, 24);
  EXPECT_EQ(mismatches, 0);
  std::printf("[ replays ] step inputs: %d replays, %d mismatches\n", replays, mismatches);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cattn_step_plan_destroy(plan);
}

// The 1.1 products read what the plan computed: extend and the Mamba table (copy mode) after
// the step inputs, in one run (two launches, the second dependent on sm_90).
TEST(step_inputs_gpu, OneOneProductsReadTheComputedInputs) {
  SKIP_WITHOUT_GPU();
  const int64_t B = 6, R = 10, T = 64, W = 8;
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES | CATTN_STEP_EXTEND_QUERIES |
               CATTN_STEP_MAMBA_BLOCK_TABLE;
  d.max_num_reqs = B, d.max_num_tokens = T, d.max_num_blocks_per_req = W;
  d.max_num_persistent_reqs = R, d.extend.n = 2;
  d.inputs.num_kv_groups = 1;
  d.kv_groups[0].block_size = 16, d.kv_groups[0].kernel_block_size = 16;
  d.kv_groups[0].max_num_blocks = W;
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  DeviceMaker dm;
  TensorMaker m = dm.maker();
  HostTensor sched = HostTensor::of({3, 1, 7, 1, 50, 50}, i32());
  HostTensor idx = HostTensor::of({4, 0, 9, 2, 1, 1}, i32());
  HostTensor nct = HostTensor::of({5, 0, 17, 0, 30, 0, 0, 0, 0, 2}, i32());
  HostTensor nreq = HostTensor::of({4}, i32());
  std::vector<int64_t> tv(R * W);
  std::iota(tv.begin(), tv.end(), 100);
  HostTensor table = HostTensor::of(tv, i32(), {R, W});
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  b.num_reqs = m.make(nreq), b.num_scheduled_tokens = m.make(sched), b.idx_mapping = m.make(idx);
  b.num_computed_tokens = m.make(nct), b.kv_block_tables[0] = m.make(table);
  HostTensor qsl({B + 1}, i32()), seq({B}, i32()), gathered({B, W}, i32());
  HostTensor eq({B + 1}, i32()), es({B}, i32()), mamba({B, W}, i32());
  std::fill(gathered.raw().begin(), gathered.raw().end(), 0);
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  o.query_start_loc = m.make(qsl), o.seq_lens = m.make(seq), o.block_tables[0] = m.make(gathered);
  o.extend_query_start_loc = m.make(eq), o.extend_seq_lens = m.make(es);
  o.mamba_block_table = m.make(mamba);
  ASSERT_CATTN_OK(cattn_step_plan_run(plan, &b, &o, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (HostTensor* t : {&qsl, &seq, &gathered, &eq, &es, &mamba}) m.download(*t);
  EXPECT_EQ(qsl.values(), (std::vector<int64_t>{0, 3, 4, 11, 12, 12, 12}));
  EXPECT_EQ(seq.values(), (std::vector<int64_t>{33, 6, 9, 18, 0, 0}));
  EXPECT_EQ(eq.values(), (std::vector<int64_t>{0, 5, 8, 17, 20, 22, 24}));
  EXPECT_EQ(es.values(), (std::vector<int64_t>{35, 8, 11, 20, 2, 2}));
  EXPECT_EQ(mamba.values(), gathered.values());
  EXPECT_EQ(gathered.values()[W], 100);  // row 1 is persistent row 0
  cattn_step_plan_destroy(plan);
}

// Hostile values on the device: negative counts, rows outside the persistent state, totals past
// the outputs. Nothing faults (compute-sanitizer runs this), nothing is written out of bounds,
// and the batch check reports the batch.
TEST(step_inputs_gpu, HostileValuesStayInBounds) {
  SKIP_WITHOUT_GPU();
  DeviceMaker dm;
  TensorMaker m = dm.maker();
  HostTensor sched = HostTensor::of({-5, 4000, 3}, i32());
  HostTensor idx = HostTensor::of({-1, 2, 1000}, i64());
  HostTensor nct = HostTensor::of({1, 2, 3}, i32());
  HostTensor nreq = HostTensor::of({99}, i32());
  HostTensor qsl({4}, i32()), seq({3}, i32()), pos({16}, i64());
  cattn_prepare_pos_seq_lens_args_t a = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  a.num_scheduled_tokens = m.make(sched), a.idx_mapping = m.make(idx);
  a.num_computed_tokens = m.make(nct), a.num_reqs = m.make(nreq);
  a.query_start_loc = m.make(qsl), a.seq_lens = m.make(seq), a.positions = m.make(pos);
  ASSERT_CATTN_OK(cattn_prepare_pos_seq_lens(&a));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  m.download(qsl), m.download(pos);  // the device's results, passed on below
  HostTensor table = HostTensor::of(std::vector<int64_t>(3 * 2, 7), i32(), {3, 2});
  HostTensor slots({16}, i64());
  cattn_compute_slot_mappings_args_t s = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  s.block_size = 4, s.kernel_block_size = 4;
  s.query_start_loc = m.make(qsl), s.num_reqs = m.make(nreq), s.positions = m.make(pos);
  s.idx_mapping = m.make(idx), s.block_table = m.make(table), s.slot_mapping = m.make(slots);
  ASSERT_CATTN_OK(cattn_compute_slot_mappings(&s));
  HostTensor status({3}, i64());
  cattn_step_batch_check_args_t k = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  k.query_start_loc = m.make(qsl), k.num_reqs = m.make(nreq), k.status = m.make(status);
  ASSERT_CATTN_OK(cattn_step_batch_check(&k));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  m.download(slots), m.download(status);
  EXPECT_EQ(qsl.values(), (std::vector<int64_t>{0, 0, 4000, 4003}));
  EXPECT_EQ(status.values()[0], CATTN_STEP_CHECK_NUM_REQS);
  for (int64_t v : slots.values()) EXPECT_GE(v, -1);
}

// Where the host refuses a block (below 0, or a slot past int64), the device writes -1; the
// batch check reports a slot mapping shorter than the live total at its length.
TEST(step_inputs_gpu, BlocksWithoutASlotGiveMinusOne) {
  SKIP_WITHOUT_GPU();
  DeviceMaker dm;
  TensorMaker m = dm.maker();
  const int64_t top = (INT64_MAX - 5) / 16;
  HostTensor qsl = HostTensor::of({0, 4}, i64()), idx = HostTensor::of({0}, i64());
  HostTensor pos = HostTensor::of({5, 21, 37, 53}, i64());
  HostTensor table = HostTensor::of({-3, int64_t{1} << 60, top, 7}, i64(), {1, 4});
  HostTensor slots({6}, i64());
  cattn_compute_slot_mappings_args_t s = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
  s.block_size = 16, s.kernel_block_size = 16;
  s.query_start_loc = m.make(qsl), s.positions = m.make(pos), s.idx_mapping = m.make(idx);
  s.block_table = m.make(table), s.slot_mapping = m.make(slots);
  ASSERT_CATTN_OK(cattn_compute_slot_mappings(&s));
  HostTensor status({3}, i64()), q2 = HostTensor::of({0, 3, 5}, i64());
  HostTensor short_slots = HostTensor::of({10, 11, 12, 13}, i64());
  cattn_step_batch_check_args_t k = CATTN_STEP_BATCH_CHECK_ARGS_INIT;
  k.query_start_loc = m.make(q2), k.slot_mappings[1] = m.make(short_slots);
  k.status = m.make(status);
  ASSERT_CATTN_OK(cattn_step_batch_check(&k));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  m.download(slots), m.download(status);
  EXPECT_EQ(slots.values(), (std::vector<int64_t>{-1, -1, top * 16 + 5, 7 * 16 + 5, -1, -1}));
  EXPECT_EQ(status.values(), (std::vector<int64_t>{CATTN_STEP_CHECK_SLOT_MAPPING, 4, 1}));
}

// A plan of every product (the seven 1.1 and the six step-input products) and eight KV-cache
// groups (one of them without slots), captured once and replayed with new batches: the step
// inputs of every group against the host calls, DCP and extend (which read the computed
// query_start_loc and seq_lens) against theirs; the other 1.1 products run on the computed
// inputs every replay (compute-sanitizer checks their accesses).
TEST(step_inputs_gpu, EveryProductWithEightGroupsReplays) {
  SKIP_WITHOUT_GPU();
  constexpr int G = CATTN_MAX_KV_GROUPS;
  const int64_t B = 40, R = 64, T = 1536, kbs = 16, L = 96;
  std::vector<int64_t> widths(G);
  for (int g = 0; g < G; ++g) widths[g] = 56 + 2 * g;  // every position a step makes fits
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_ALL_PRODUCTS | CATTN_STEP_INPUT_PRODUCTS;
  d.max_num_reqs = B, d.max_num_tokens = T, d.max_num_logits = L, d.max_num_persistent_reqs = R;
  d.max_num_blocks_per_req = widths[0];
  d.dcp = {2, CATTN_DCP_ALL_RANKS, 1};
  d.mamba = {64, 2, CATTN_MAMBA_CACHE_MODE_ALIGN, 0};
  d.local_attention = {32, 16};
  d.extend = {2};
  d.inputs.num_kv_groups = G;
  d.inputs.table_group = 0;
  for (int g = 0; g < G; ++g)
    d.kv_groups[g] = {g % 2 ? 32 : 16, kbs, widths[g],
                      g == G - 1 ? CATTN_SLOT_MODE_NONE : CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
  ASSERT_CATTN_OK(cattn_step_plan_get_shape(plan, &sh));
  std::deque<HostTensor> host;
  std::deque<DeviceTensor> dev;
  auto make = [&](std::vector<int64_t> shape, DLDataType t) {
    host.emplace_back(shape, t);
    std::fill(host.back().raw().begin(), host.back().raw().end(), 0x5A);
    dev.emplace_back(host.back());
    return std::make_pair(&host.back(), &dev.back());
  };
  // Inputs (rewritten each replay) and outputs.
  auto sched = make({B}, i32()), idx = make({B}, i32()), nct = make({R}, i32());
  auto nreq = make({1}, i32()), nd = make({B}, i32()), logits = make({L}, i32());
  std::vector<std::pair<HostTensor*, DeviceTensor*>> tables, nbs, gathered, slots;
  cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
  cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
  b.num_scheduled_tokens = sched.second->dl(), b.idx_mapping = idx.second->dl();
  b.num_computed_tokens = nct.second->dl(), b.num_reqs = nreq.second->dl();
  b.num_draft_tokens = nd.second->dl(), b.logits_indices = logits.second->dl();
  for (int g = 0; g < G; ++g) {
    tables.push_back(make({R, widths[g]}, i32())), nbs.push_back(make({R}, i32()));
    gathered.push_back(make({B, widths[g]}, i32()));
    b.kv_block_tables[g] = tables[g].second->dl(), b.kv_num_blocks[g] = nbs[g].second->dl();
    o.block_tables[g] = gathered[g].second->dl();
    if (g < G - 1) {
      slots.push_back(make({T}, i64()));
      o.slot_mappings[g] = slots[g].second->dl();
    }
  }
  auto qsl = make({B + 1}, i32()), seq = make({B}, i32()), pos = make({T}, i64());
  auto li = make({L}, i64()), cu = make({B + 1}, i32()), t2r = make({T}, i32());
  auto dcp = make({B, 2}, i32()), eq = make({B + 1}, i32()), es = make({B}, i32());
  auto counts = make({CATTN_STEP_NUM_COUNTS}, i64());
  o.query_start_loc = qsl.second->dl(), o.seq_lens = seq.second->dl();
  o.positions = pos.second->dl(), o.logits_indices = li.second->dl();
  o.cu_num_logits = cu.second->dl(), o.token_to_req_indices = t2r.second->dl();
  o.dcp_local_seq_lens = dcp.second->dl(), o.extend_query_start_loc = eq.second->dl();
  o.extend_seq_lens = es.second->dl(), o.counts = counts.second->dl();
  o.pcp_query_restore_idx = make({sh.restore_capacity}, i32()).second->dl();
  o.mamba_block_table = make({B, sh.mamba_columns}, i32()).second->dl();
  o.conv1d_nums = make({B}, i32()).second->dl();
  for (DLTensor** p : {&o.conv1d_mlist, &o.conv1d_offsetlist, &o.conv1d_batch_ptr,
                       &o.conv1d_token_chunk_offset_ptr})
    *p = make({sh.conv1d_capacity}, i32()).second->dl();
  o.local_query_start_loc = make({sh.local_capacity + 1}, i32()).second->dl();
  o.local_seq_lens = make({sh.local_capacity}, i32()).second->dl();
  o.local_num_computed_tokens = make({sh.local_capacity}, i32()).second->dl();
  o.local_block_table = make({sh.local_capacity, sh.local_pages}, i32()).second->dl();
  o.decode_query_start_loc = make({B + 1}, i32()).second->dl();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const cattn_status_t captured =
      cattn_step_plan_run(plan, &b, &o, reinterpret_cast<cattn_stream_t>(stream));
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_CATTN_OK(captured);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  std::mt19937_64 rng(88);
  int replays = 0, mismatches = 0;
  auto put = [](std::pair<HostTensor*, DeviceTensor*> t, const std::vector<int64_t>& v) {
    for (int64_t i = 0; i < t.first->numel(); ++i) t.first->set(i, v[static_cast<size_t>(i)]);
    t.second->upload();
  };
  for (int step = 0; step < 16; ++step) {
    const RandomStep s = random_step(rng, B, R, T, widths, kbs, step == 2 ? 0 : -1);
    put(sched, s.sched), put(idx, s.idx), put(nct, s.nct), put(nreq, {s.n}), put(nd, s.drafts);
    std::vector<int64_t> lv(L);
    for (auto& v : lv) v = static_cast<int64_t>(rng() % T);
    std::sort(lv.begin(), lv.end());
    put(logits, lv);
    for (int g = 0; g < G; ++g) put(tables[g], s.tables[g]), put(nbs[g], s.num_blocks[g]);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ++replays;
    auto got = [](std::pair<HostTensor*, DeviceTensor*> t) {
      t.second->download();
      return t.first->values();
    };
    // The host calls on the same inputs.
    HostTensor hq({B + 1}, i32()), hs({B}, i32()), hp({T}, i64());
    std::fill(hp.raw().begin(), hp.raw().end(), 0x5A);
    cattn_prepare_pos_seq_lens_args_t pa = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
    pa.num_scheduled_tokens = sched.first->dl(), pa.idx_mapping = idx.first->dl();
    pa.num_computed_tokens = nct.first->dl(), pa.num_reqs = nreq.first->dl();
    pa.query_start_loc = hq.dl(), pa.seq_lens = hs.dl(), pa.positions = hp.dl();
    ASSERT_CATTN_OK(cattn_prepare_pos_seq_lens(&pa));
    mismatches += got(qsl) != hq.values();
    mismatches += got(seq) != hs.values();
    const std::vector<int64_t> pv = got(pos), hpv = hp.values();
    const int64_t live_tokens = hq.values()[B];
    mismatches += !std::equal(hpv.begin(), hpv.begin() + live_tokens, pv.begin());
    for (int g = 0; g < G; ++g) {
      HostTensor hg({B, widths[g]}, i32());
      hg.raw() = gathered[g].first->raw();  // entries past a row's count are left
      cattn_gather_block_tables_args_t ga = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
      ga.idx_mapping = idx.first->dl(), ga.num_reqs = nreq.first->dl();
      ga.block_table = tables[g].first->dl(), ga.num_blocks = nbs[g].first->dl(), ga.out = hg.dl();
      ASSERT_CATTN_OK(cattn_gather_block_tables(&ga));
      gathered[g].second->download();
      mismatches += gathered[g].first->values() != hg.values();
      if (g == G - 1) continue;
      HostTensor hsl({T}, i64());
      cattn_compute_slot_mappings_args_t sa = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
      sa.block_size = d.kv_groups[g].block_size, sa.kernel_block_size = kbs;
      sa.query_start_loc = hq.dl(), sa.num_reqs = nreq.first->dl(), sa.positions = hp.dl();
      sa.idx_mapping = idx.first->dl(), sa.block_table = tables[g].first->dl();
      sa.slot_mapping = hsl.dl();
      ASSERT_CATTN_OK(cattn_compute_slot_mappings(&sa));
      mismatches += got(slots[g]) != hsl.values();
    }
    HostTensor hd({B, 2}, i32());
    cattn_dcp_local_seq_lens_args_t da = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
    da.seq_lens = hs.dl(), da.dcp_size = 2, da.dcp_rank = CATTN_DCP_ALL_RANKS;
    da.dcp_kv_cache_interleave_size = 1, da.out = hd.dl();
    ASSERT_CATTN_OK(cattn_get_dcp_local_seq_lens(&da));
    mismatches += got(dcp) != hd.values();
    std::vector<int64_t> weq = hq.values(), wes = hs.values();
    for (int64_t i = 0; i <= B; ++i) weq[i] += 2 * i;
    for (auto& v : wes) v += 2;
    mismatches += got(eq) != weq;
    mismatches += got(es) != wes;
    const std::vector<int64_t> cv = got(counts);
    mismatches += cv[CATTN_STEP_COUNT_TOKENS] != live_tokens;
    mismatches += cv[CATTN_STEP_COUNT_NUM_REQS] != s.n;
  }
  std::printf("[ replays ] every product, %d groups: %d replays, %d mismatches\n", G, replays,
              mismatches);
  EXPECT_EQ(replays, 16);
  EXPECT_EQ(mismatches, 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cattn_step_plan_destroy(plan);
}

}  // namespace
#else
TEST(step_inputs_gpu, NeedsCuda) { GTEST_SKIP() << "built without CUDA (CATTN_WITH_CUDA=OFF)"; }
#endif
