// SPDX-License-Identifier: Apache-2.0
// EAGLE's speculative-decoding calls on the GPU: every vector of tests/vectors/spec_decode.json
// (vLLM's dtypes and int64), one drafter step of all six calls captured in a CUDA graph and
// replayed with new data before each replay (compared with the host calls on the same data),
// the batch change's shared-memory staging at its row limit, and hostile values (no fault, no
// byte written past an output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/device_maker.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/spec_decode_case.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

using namespace cattn_test;

TEST(spec_decode_gpu, VectorsOnDevice) {
  SKIP_WITHOUT_GPU();
  const char* fns[] = {"eagle_step_update_slot_mapping_and_metadata",
                       "eagle_prepare_inputs_padded", "eagle_prepare_next_token_padded",
                       "compute_new_slot_mapping", "copy_and_expand_eagle_inputs",
                       "update_num_computed_tokens_for_batch_change"};
  int total = 0;
  for (const char* f : fns) {
    DeviceMaker d;
    TensorMaker m = d.maker();
    const auto [cases, bad] = run_spec_decode_vectors(m, f);
    EXPECT_EQ(bad, 0) << f;
    std::printf("[ spec_decode_gpu ] %-46s %3d cases, %d mismatches\n", f, cases, bad);
    total += cases;
  }
  EXPECT_EQ(total, 142);
}

// One drafter step's six calls at fixed shapes; each step draws new values.
struct DrafterStep {
  static constexpr int64_t B = 48, W = 8, S = 5, P = 3, N = 2, QMAX = 6, T_CAP = B * QMAX;
  static constexpr int64_t kBs = 16, kMml = 100, kVocab = 1000, kIbs = 64, kPrev = 40, kM = 64;
  std::mt19937_64 rng{20261204};
  std::map<std::string, std::unique_ptr<Twin>> t;
  int64_t n_tokens = 0;  // compute_new_slot_mapping's positions this step

  Twin& add(const std::string& name, std::vector<int64_t> shape, DLDataType dt) {
    t[name] = std::make_unique<Twin>(std::move(shape), dt);
    return *t[name];
  }
  int64_t r(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  std::vector<int64_t> rv(int64_t n, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = r(lo, hi);
    return v;
  }

  DrafterStep() {
    const DLDataType b8{6, 8, 1};
    add("e1_pos", {B}, i64()), add("e1_table", {B, W}, i32()), add("e1_seq", {B}, i32());
    add("e1_clamped", {B}, i64()), add("e1_slots", {kIbs + 3}, i64());
    add("e2_cu", {B}, i32()), add("e2_valid", {B}, i32()), add("e2_qsl", {B + 1}, i32());
    add("e2_idx", {B}, i32()), add("e2_rej", {B}, i32());
    add("e3_sampled", {B, S}, i32()), add("e3_discard", {B}, b8), add("e3_backup", {B}, i32());
    add("e3_next", {B}, i32()), add("e3_valid", {B}, i32());
    add("e4_qsl", {B + 1}, i32()), add("e4_table", {B, W}, i32());
    add("e4_pos", {T_CAP + B * N}, i64()), add("e4_rej", {T_CAP + B * N}, b8);
    add("e4_slots", {T_CAP + B * N}, i64());
    add("e6_ids", {T_CAP}, i32()), add("e6_pos", {T_CAP}, i64()), add("e6_next", {B}, i32());
    add("e6_qsl", {B + 1}, i32()), add("e6_qel", {B}, i32());
    add("e6_out_ids", {T_CAP + B * P}, i32()), add("e6_out_pos", {T_CAP + B * P}, i64());
    add("e6_out_rej", {T_CAP + B * P}, b8), add("e6_out_msk", {T_CAP + B * P}, b8);
    add("e6_out_new", {B * P}, i32()), add("e6_out_hid", {T_CAP}, i32());
    add("e8_nct", {kM}, i32()), add("e8_acc", {B}, i32()), add("e8_prev", {B}, i64());
    add("e8_valid", {kPrev}, i32()), add("e8_drafts", {kPrev}, i32()), add("e8_cpu", {B}, i32());
  }

  // New values for every input; every output poisoned alike on both sides.
  void draw() {
    t["e1_pos"]->fill(rv(B, -1, kMml + 2));
    t["e1_table"]->fill(rv(B * W, 0, 5000));
    t["e1_seq"]->fill(rv(B, 1, kMml));
    std::vector<int64_t> d = rv(B, 0, QMAX - 1), cu(B), valid(B), q(B), qsl(B + 1, 0);
    for (int64_t i = 0; i < B; ++i) {
      cu[i] = (i ? cu[i - 1] : 0) + d[i];
      valid[i] = r(0, d[i] + 1);
      q[i] = d[i] + 1;
      qsl[i + 1] = qsl[i] + q[i];
    }
    t["e2_cu"]->fill(cu), t["e2_valid"]->fill(valid), t["e2_qsl"]->fill(qsl);
    t["e3_sampled"]->fill(rv(B * S, -1, kVocab + 2));
    t["e3_discard"]->fill(rv(B, -6, 1));  // mostly 0; any nonzero byte is set
    for (int64_t i = 0; i < B; ++i)
      if (t["e3_discard"]->host.get(i) < -1) t["e3_discard"]->host.set(i, 0);
    t["e3_backup"]->fill(rv(B, 0, kVocab - 1));
    const int64_t T = qsl[B];
    n_tokens = T + B * N;
    t["e4_qsl"]->fill(qsl), t["e4_table"]->fill(rv(B * W, 0, 5000));
    std::vector<int64_t> pos = rv(T_CAP + B * N, 0, kMml + 3);
    t["e4_pos"]->fill(pos), t["e4_rej"]->fill(rv(T_CAP + B * N, 0, 1));
    t["e6_ids"]->fill(rv(T_CAP, 0, kVocab - 1)), t["e6_next"]->fill(rv(B, 0, kVocab - 1));
    std::vector<int64_t> tpos(T_CAP), qel(B);
    for (int64_t i = 0; i < B; ++i) {
      const int64_t start = r(0, 3000);
      for (int64_t j = qsl[i]; j < qsl[i + 1]; ++j) tpos[j] = start + j - qsl[i];
      qel[i] = qsl[i + 1] - 1 - r(0, q[i] - 1);
    }
    t["e6_pos"]->fill(tpos), t["e6_qsl"]->fill(qsl), t["e6_qel"]->fill(qel);
    std::vector<int64_t> prev(B, -1), perm(kPrev);
    for (int64_t i = 0; i < kPrev; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t i = 0; i < B; ++i)
      if (i < kPrev && r(0, 4) > 0) prev[i] = perm[i];
    t["e8_nct"]->fill(rv(kM, 0, 5000)), t["e8_acc"]->fill(rv(B, 0, 8)), t["e8_prev"]->fill(prev);
    std::vector<int64_t> drafts = rv(kPrev, 0, 7), v(kPrev);
    for (int64_t i = 0; i < kPrev; ++i) v[i] = r(0, drafts[i] + 1);
    t["e8_valid"]->fill(v), t["e8_drafts"]->fill(drafts), t["e8_cpu"]->fill(rv(B, 0, 5000));
    for (const char* o : {"e1_clamped", "e1_slots", "e2_idx", "e2_rej", "e3_next", "e3_valid",
                          "e4_slots", "e6_out_ids", "e6_out_pos", "e6_out_rej", "e6_out_msk",
                          "e6_out_new", "e6_out_hid"})
      t[o]->fill(std::vector<int64_t>(t[o]->host.numel(), 3));
    for (auto& [name, twin] : t) twin->upload();
  }

  // The six calls on the device copies (host = false) or the host copies.
  cattn_status_t run(bool host, cattn_stream_t stream) {
    auto x = [&](const char* n) { return host ? t[n]->h() : t[n]->d(); };
    cattn_eagle_step_update_slot_mapping_and_metadata_args_t a1 =
        CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
    a1.block_size = kBs, a1.max_model_len = kMml, a1.input_batch_size = kIbs;
    a1.positions = x("e1_pos"), a1.block_table = x("e1_table"), a1.seq_lens = x("e1_seq");
    a1.out_clamped_positions = x("e1_clamped"), a1.out_slot_mapping = x("e1_slots");
    a1.stream = stream;
    cattn_eagle_prepare_next_token_padded_args_t a3 =
        CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
    a3.vocab_size = kVocab, a3.sampled_token_ids = x("e3_sampled");
    a3.discard_request_mask = x("e3_discard"), a3.backup_next_token_ids = x("e3_backup");
    a3.next_token_ids = x("e3_next"), a3.valid_sampled_tokens_count = x("e3_valid");
    a3.stream = stream;
    cattn_eagle_prepare_inputs_padded_args_t a2 = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
    a2.cu_num_draft_tokens = x("e2_cu"), a2.valid_sampled_tokens_count = x("e2_valid");
    a2.query_start_loc = x("e2_qsl"), a2.token_indices_to_sample = x("e2_idx");
    a2.num_rejected_tokens = x("e2_rej"), a2.stream = stream;
    cattn_copy_and_expand_eagle_inputs_args_t a6 = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
    a6.padding_token_id = 0, a6.parallel_drafting_token_id = kVocab + 1;
    a6.num_padding_slots_per_request = P, a6.shift_input_ids = 1;
    a6.target_token_ids = x("e6_ids"), a6.target_positions = x("e6_pos");
    a6.next_token_ids = x("e6_next"), a6.query_start_loc = x("e6_qsl");
    a6.query_end_loc = x("e6_qel"), a6.out_input_ids = x("e6_out_ids");
    a6.out_positions = x("e6_out_pos"), a6.out_is_rejected_token_mask = x("e6_out_rej");
    a6.out_is_masked_token_mask = x("e6_out_msk"), a6.out_new_token_indices = x("e6_out_new");
    a6.out_hidden_state_mapping = x("e6_out_hid"), a6.stream = stream;
    // The host needs one position per extended token exactly; the device copy is the whole
    // buffer, whose entries past the extended batch get -1.
    DLTensor pos_h = *t["e4_pos"]->h(), rej_h = *t["e4_rej"]->h();
    int64_t n_shape = n_tokens;
    pos_h.shape = &n_shape, rej_h.shape = &n_shape;
    cattn_compute_new_slot_mapping_args_t a4 = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
    a4.block_size = kBs, a4.num_new_tokens = N, a4.max_model_len = kMml;
    a4.query_start_loc = x("e4_qsl"), a4.block_table = x("e4_table");
    a4.new_positions = host ? &pos_h : x("e4_pos");
    a4.is_rejected_token_mask = host ? &rej_h : x("e4_rej");
    a4.new_slot_mapping = x("e4_slots"), a4.stream = stream;
    cattn_update_num_computed_tokens_for_batch_change_args_t a8 =
        CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
    a8.num_computed_tokens = x("e8_nct"), a8.num_accepted_tokens = x("e8_acc");
    a8.prev_positions = x("e8_prev"), a8.valid_sampled_token_count = x("e8_valid");
    a8.prev_num_draft_tokens = x("e8_drafts"), a8.cpu_num_computed_tokens = x("e8_cpu");
    a8.stream = stream;
    cattn_status_t s;
    if ((s = cattn_eagle_step_update_slot_mapping_and_metadata(&a1)) != CATTN_OK) return s;
    if ((s = cattn_eagle_prepare_next_token_padded(&a3)) != CATTN_OK) return s;
    if ((s = cattn_eagle_prepare_inputs_padded(&a2)) != CATTN_OK) return s;
    if ((s = cattn_copy_and_expand_eagle_inputs(&a6)) != CATTN_OK) return s;
    if ((s = cattn_compute_new_slot_mapping(&a4)) != CATTN_OK) return s;
    return cattn_update_num_computed_tokens_for_batch_change(&a8);
  }

  // Device results against the host's; returns mismatching tensors.
  int compare(int step) {
    int bad = 0;
    for (auto& [name, twin] : t) {
      std::vector<int64_t> got = twin->device_values(), want = twin->host.values();
      if (name == "e4_slots")  // past the extended batch: the device's -1, the host's fill
        for (size_t k = static_cast<size_t>(n_tokens); k < want.size(); ++k) want[k] = -1;
      if (got != want) {
        ++bad;
        size_t i = 0;
        while (i < got.size() && got[i] == want[i]) ++i;
        ADD_FAILURE() << "replay " << step << ": " << name << " differs at " << i << ": got "
                      << got[i] << ", want " << want[i];
      }
    }
    return bad;
  }
};

TEST(spec_decode_gpu, DrafterStepGraphReplaysWithNewData) {
  SKIP_WITHOUT_GPU();
  DrafterStep step;
  step.draw();
  cudaStream_t s;
  CATTN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CATTN_CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const cattn_status_t captured = step.run(false, reinterpret_cast<cattn_stream_t>(s));
  CATTN_CUDA_OK(cudaStreamEndCapture(s, &g));
  ASSERT_EQ(captured, CATTN_OK) << cattn_last_error_message();
  size_t nodes = 0;
  CATTN_CUDA_OK(cudaGraphGetNodes(g, nullptr, &nodes));
  EXPECT_EQ(nodes, 6u);  // one kernel per call
  cudaGraphExec_t exec;
  CATTN_CUDA_OK(cudaGraphInstantiate(&exec, g, 0));
  int bad = 0;
  const int kReplays = 24;
  for (int i = 0; i < kReplays; ++i) {
    step.draw();
    CATTN_CUDA_OK(cudaGraphLaunch(exec, s));
    CATTN_CUDA_OK(cudaStreamSynchronize(s));
    ASSERT_EQ(step.run(true, nullptr), CATTN_OK) << cattn_last_error_message();
    bad += step.compare(i);
  }
  std::printf("[ spec_decode_gpu ] %d replays of a 6-call drafter step, %d mismatching tensors\n",
              kReplays, bad);
  EXPECT_EQ(bad, 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

// The batch change stages every new count in shared memory: at 8192 int64 rows that is 64 KiB,
// past the default 48 KiB a kernel may use; one row more is CATTN_NOT_SUPPORTED.
TEST(spec_decode_gpu, BatchChangeAtItsRowLimit) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 8192;
  std::mt19937_64 rng(7);
  std::vector<int64_t> perm(n), nct(n), acc(n), valid(n), drafts(n), cpu(n);
  for (int64_t i = 0; i < n; ++i) {
    perm[i] = i, nct[i] = rng() % 100000, acc[i] = rng() % 8, drafts[i] = rng() % 4;
    valid[i] = rng() % 5, cpu[i] = rng() % 100000;
  }
  std::shuffle(perm.begin(), perm.end(), rng);
  for (int64_t i = 0; i < n; i += 7) perm[i] = -1;
  HostTensor hn = HostTensor::of(nct, i64()), ha = HostTensor::of(acc, i64());
  HostTensor dn = HostTensor::of(nct, i64()), da = HostTensor::of(acc, i64());
  HostTensor prev = HostTensor::of(perm, i64()), v = HostTensor::of(valid, i64());
  HostTensor d = HostTensor::of(drafts, i64()), c = HostTensor::of(cpu, i64());
  cattn_update_num_computed_tokens_for_batch_change_args_t a =
      CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
  a.num_computed_tokens = hn.dl(), a.num_accepted_tokens = ha.dl(), a.prev_positions = prev.dl();
  a.valid_sampled_token_count = v.dl(), a.prev_num_draft_tokens = d.dl();
  a.cpu_num_computed_tokens = c.dl();
  ASSERT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_OK);
  DeviceTensor gn(dn), ga(da), gp(prev), gv(v), gd(d), gc(c);
  a.num_computed_tokens = gn.dl(), a.num_accepted_tokens = ga.dl(), a.prev_positions = gp.dl();
  a.valid_sampled_token_count = gv.dl(), a.prev_num_draft_tokens = gd.dl();
  a.cpu_num_computed_tokens = gc.dl();
  ASSERT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_OK)
      << cattn_last_error_message();
  CATTN_CUDA_OK(cudaDeviceSynchronize());
  gn.download(), ga.download();
  EXPECT_EQ(dn.values(), hn.values());
  EXPECT_EQ(da.values(), ha.values());
  std::vector<int64_t> more(n + 1, -1);
  HostTensor big_prev = HostTensor::of(more, i64()), big_n = HostTensor::of(more, i64());
  HostTensor big_a = HostTensor::of(more, i64()), big_c = HostTensor::of(more, i64());
  DeviceTensor bp(big_prev), bn(big_n), ba(big_a), bc(big_c);
  a.prev_positions = bp.dl(), a.num_computed_tokens = bn.dl(), a.num_accepted_tokens = ba.dl();
  a.cpu_num_computed_tokens = bc.dl();
  EXPECT_EQ(cattn_update_num_computed_tokens_for_batch_change(&a), CATTN_NOT_SUPPORTED);
}

// Hostile values on the device: no fault, and the poison after every output (HostTensor keeps
// 16 bytes past each view, copied to and from the device) is intact.
TEST(spec_decode_gpu, HostileValuesStayInBounds) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(99);
  auto wild = [&](int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    const int64_t picks[] = {0, 1, -1, -2, 7, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN,
                             int64_t{1} << 40, -(int64_t{1} << 40)};
    for (auto& x : v) x = rng() % 3 ? picks[rng() % 11] : static_cast<int64_t>(rng() % 64);
    return v;
  };
  auto intact = [](HostTensor& t, const std::vector<uint8_t>& before) {
    const auto& b = t.bytes();
    return std::equal(b.end() - 16, b.end(), before.end() - 16);
  };
  int faults = 0, overruns = 0;
  for (int round = 0; round < 50; ++round) {
    const int64_t B = 1 + rng() % 20, W = 1 + rng() % 4, n = 1 + rng() % 40;
    HostTensor pos = HostTensor::of(wild(B), i64()), table = HostTensor::of(wild(B * W), i32(),
                                                                             {B, W});
    HostTensor seq = HostTensor::of(wild(B), i32()), cp({B}, i64()), slots({B + 2}, i64());
    HostTensor qsl = HostTensor::of(wild(B + 1), i64()), qel = HostTensor::of(wild(B), i64());
    HostTensor ids = HostTensor::of(wild(n), i32()), tpos = HostTensor::of(wild(n), i64());
    HostTensor nxt = HostTensor::of(wild(B), i32()), npos = HostTensor::of(wild(n), i64());
    HostTensor oi({n}, i32()), op({n}, i64()), orj({n}, {kDLUInt, 8, 1}), on({B * 2}, i32());
    HostTensor oh({n}, i32()), ns({n}, i64());
    std::vector<HostTensor*> outs = {&seq, &cp, &slots, &oi, &op, &orj, &on, &oh, &ns};
    std::vector<std::vector<uint8_t>> before;
    for (HostTensor* o : outs) before.push_back(o->bytes());
    std::map<HostTensor*, std::unique_ptr<DeviceTensor>> dev;
    auto D = [&](HostTensor& h) {
      if (!dev.count(&h)) dev[&h] = std::make_unique<DeviceTensor>(h);
      return dev[&h]->dl();
    };
    cattn_eagle_step_update_slot_mapping_and_metadata_args_t a1 =
        CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
    a1.block_size = 1 + rng() % 64, a1.max_model_len = 1 + rng() % 1000, a1.input_batch_size = B + 2;
    a1.positions = D(pos), a1.block_table = D(table), a1.seq_lens = D(seq);
    a1.out_clamped_positions = D(cp), a1.out_slot_mapping = D(slots);
    EXPECT_EQ(cattn_eagle_step_update_slot_mapping_and_metadata(&a1), CATTN_OK);
    cattn_copy_and_expand_eagle_inputs_args_t a6 = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
    a6.num_padding_slots_per_request = 2, a6.shift_input_ids = static_cast<int32_t>(rng() % 2);
    a6.target_token_ids = D(ids), a6.target_positions = D(tpos), a6.next_token_ids = D(nxt);
    a6.query_start_loc = D(qsl), a6.query_end_loc = D(qel), a6.out_input_ids = D(oi);
    a6.out_positions = D(op), a6.out_is_rejected_token_mask = D(orj);
    a6.out_new_token_indices = D(on), a6.out_hidden_state_mapping = D(oh);
    EXPECT_EQ(cattn_copy_and_expand_eagle_inputs(&a6), CATTN_OK) << cattn_last_error_message();
    cattn_compute_new_slot_mapping_args_t a4 = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
    a4.block_size = 1 + rng() % 64, a4.num_new_tokens = rng() % 4;
    a4.max_model_len = 1 + rng() % 1000;
    a4.query_start_loc = D(qsl), a4.block_table = D(table), a4.new_positions = D(npos);
    a4.new_slot_mapping = D(ns);
    EXPECT_EQ(cattn_compute_new_slot_mapping(&a4), CATTN_OK) << cattn_last_error_message();
    if (cudaDeviceSynchronize() != cudaSuccess) ++faults;
    for (size_t i = 0; i < outs.size(); ++i) {
      dev[outs[i]]->download();
      if (!intact(*outs[i], before[i])) ++overruns;
    }
  }
  EXPECT_EQ(faults, 0);
  EXPECT_EQ(overruns, 0);
}

// Where the host refuses a block (below 0, or a slot past int64), the device writes slot -1.
TEST(spec_decode_gpu, BlocksWithoutASlotGiveMinusOne) {
  SKIP_WITHOUT_GPU();
  DeviceMaker dm;
  TensorMaker m = dm.maker();
  const int64_t top = (INT64_MAX - 4) / 16;
  HostTensor pos = HostTensor::of({3, 3, 3, 3}, i64());  // next position 4: column 0, offset 4
  HostTensor table = HostTensor::of({-2, int64_t{1} << 62, top, 9}, i64(), {4, 1});
  HostTensor seq = HostTensor::of({4, 4, 4, 4}, i64()), cp({4}, i64()), slots({4}, i64());
  cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
      CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
  a.block_size = 16, a.max_model_len = 100;
  a.positions = m.make(pos), a.block_table = m.make(table), a.seq_lens = m.make(seq);
  a.out_clamped_positions = m.make(cp), a.out_slot_mapping = m.make(slots);
  ASSERT_CATTN_OK(cattn_eagle_step_update_slot_mapping_and_metadata(&a));
  // compute_new_slot_mapping: one request per table row, one token each (N = 1, no query).
  HostTensor qsl = HostTensor::of({0, 0, 0, 0, 0}, i64());
  HostTensor npos = HostTensor::of({4, 4, 4, 4}, i64());
  HostTensor ns({4}, i64());
  cattn_compute_new_slot_mapping_args_t n = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  n.block_size = 16, n.num_new_tokens = 1, n.max_model_len = 100;
  n.query_start_loc = m.make(qsl), n.block_table = m.make(table), n.new_positions = m.make(npos);
  n.new_slot_mapping = m.make(ns);
  ASSERT_CATTN_OK(cattn_compute_new_slot_mapping(&n));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  m.download(slots), m.download(ns);
  const std::vector<int64_t> want{-1, -1, top * 16 + 4, 9 * 16 + 4};
  EXPECT_EQ(slots.values(), want);
  EXPECT_EQ(ns.values(), want);
}

}  // namespace
#endif  // CATTN_TEST_WITH_CUDA
