// SPDX-License-Identifier: Apache-2.0
// The step plan's drafter products on the GPU against the speculative-decoding calls' host
// paths run in vLLM's order on the same data: the chain (next token -> prepare inputs -> copy
// and expand -> new slot mapping, query_end_loc = query_start_loc[1:] - 1 - rejected between
// them) in one launch, captured once and replayed with new data, int32 and int64 tensors, every
// output compared whole (the sentinels past the step included); the drafting step and the batch
// change as their own plans, in place and apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

using namespace cattn_test;

const DLDataType kFlag{6, 8, 1};  // kDLBool

struct Tensors {
  std::mt19937_64 rng;
  std::map<std::string, std::unique_ptr<Twin>> t;
  explicit Tensors(uint64_t seed) : rng(seed) {}
  Twin& add(const std::string& name, std::vector<int64_t> shape, DLDataType dt) {
    t[name] = std::make_unique<Twin>(std::move(shape), dt);
    return *t[name];
  }
  Twin& operator[](const std::string& n) { return *t.at(n); }
  int64_t r(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  std::vector<int64_t> rv(int64_t n, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = r(lo, hi);
    return v;
  }
  void poison(const std::vector<std::string>& names, int64_t v) {
    for (const auto& n : names) t.at(n)->fill(std::vector<int64_t>(t.at(n)->host.numel(), v));
  }
  void upload() {
    for (auto& [name, twin] : t) twin->upload();
  }
  // The device copy of `name` against `want`; returns 1 on a difference.
  int compare(const std::string& name, const std::vector<int64_t>& want, int step) {
    const std::vector<int64_t> got = t.at(name)->device_values();
    if (got == want) return 0;
    size_t i = 0;
    while (i < got.size() && got[i] == want[i]) ++i;
    ADD_FAILURE() << "replay " << step << ": " << name << " differs at " << i << " of "
                  << got.size() << ": got " << got[i] << ", want " << want[i];
    return 1;
  }
};

// The drafter chain of a verified batch of B = 48 requests (capacity 64), 1 + d tokens each
// (d <= 3 drafts), P = 3 with the shift, a [B, 16] table of blocks of 16, max_model_len 256.
struct Chain {
  static constexpr int64_t kReqs = 64, B = 48, S = 4, W = 16, P = 3, T_CAP = 256;
  static constexpr int64_t kBs = 16, kMml = 256, kVocab = 1000, kPad = 5, kPar = 1001;
  const DLDataType it;  // the index tensors' dtype
  Tensors x;
  cattn_step_plan_t* plan = nullptr;
  int64_t cap = 0;
  std::vector<int64_t> qsl;

  explicit Chain(DLDataType index_type, uint64_t seed) : it(index_type), x(seed) {
    cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
    d.products = CATTN_STEP_DRAFT_NEXT_TOKEN | CATTN_STEP_DRAFT_PREPARE_INPUTS |
                 CATTN_STEP_DRAFT_EXPAND | CATTN_STEP_DRAFT_SLOT_MAPPING;
    d.max_num_reqs = kReqs, d.max_num_tokens = T_CAP, d.max_num_blocks_per_req = W;
    d.draft = {kVocab, P, kPad, kPar, 0, kBs, kMml, 1, 0};
    EXPECT_CATTN_OK(cattn_step_plan_create(&d, &plan));
    cattn_step_plan_shape_t sh = CATTN_STEP_PLAN_SHAPE_INIT;
    EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan, &sh));
    cap = sh.draft_token_capacity;
    x.add("qsl", {B + 1}, it), x.add("sampled", {B, S}, it), x.add("discard", {B}, kFlag);
    x.add("backup", {B}, it), x.add("cu", {B}, it), x.add("ids", {T_CAP}, it);
    x.add("tpos", {T_CAP}, i64()), x.add("table", {B, W}, it);
    // Outputs (the plan's on the device; the host calls' on the host copies).
    x.add("next", {B}, it), x.add("valid", {B}, it), x.add("idx", {B}, it), x.add("rej", {B}, it);
    x.add("out_ids", {cap}, it), x.add("out_pos", {cap}, i64()), x.add("rejm", {cap}, kFlag);
    x.add("mskm", {cap}, kFlag), x.add("new", {kReqs * P}, it), x.add("hid", {T_CAP}, it);
    x.add("slots", {cap}, i64()), x.add("qel", {B}, it);
  }
  ~Chain() { cattn_step_plan_destroy(plan); }

  // A new verified batch; every output poisoned.
  void draw() {
    qsl.assign(B + 1, 0);
    std::vector<int64_t> d(B), cu(B), sampled(B * S, -1), discard(B, 0), tpos(T_CAP, 0);
    for (int64_t i = 0; i < B; ++i) {
      d[i] = x.r(0, S - 1);
      cu[i] = (i ? cu[i - 1] : 0) + d[i];
      qsl[i + 1] = qsl[i] + d[i] + 1;
      // A discarded request (a partial prefill) has no drafts; the others sample at least one
      // token, then accept a prefix of their drafts (a -1 ends it), some past the vocabulary.
      if (d[i] == 0 && x.r(0, 3) == 0) discard[i] = 1;
      const int64_t accepted = x.r(0, d[i]);
      for (int64_t j = 0; j <= accepted; ++j)
        sampled[i * S + j] = x.r(0, 9) == 0 && j > 0 ? kVocab + x.r(0, 5) : x.r(0, kVocab - 1);
      const int64_t start = x.r(0, kMml + 8);
      for (int64_t j = qsl[i]; j < qsl[i + 1]; ++j) tpos[j] = start + j - qsl[i];
    }
    x["qsl"].fill(qsl), x["sampled"].fill(sampled), x["discard"].fill(discard);
    x["backup"].fill(x.rv(B, 0, kVocab - 1)), x["cu"].fill(cu);
    x["ids"].fill(x.rv(T_CAP, 0, kVocab - 1)), x["tpos"].fill(tpos);
    x["table"].fill(x.rv(B * W, 0, 1 << 20));
    x.poison({"next", "valid", "idx", "rej", "out_ids", "out_pos", "new", "hid", "slots", "qel"},
             -7);
    x.poison({"rejm", "mskm"}, 0x5a);
    x.upload();
  }

  cattn_status_t run(cattn_stream_t stream) {
    cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
    b.query_start_loc = x["qsl"].d(), b.block_table = x["table"].d();
    b.sampled_token_ids = x["sampled"].d(), b.discard_request_mask = x["discard"].d();
    b.backup_next_token_ids = x["backup"].d(), b.cu_num_draft_tokens = x["cu"].d();
    b.target_token_ids = x["ids"].d(), b.target_positions = x["tpos"].d();
    cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
    o.next_token_ids = x["next"].d(), o.valid_sampled_tokens_count = x["valid"].d();
    o.token_indices_to_sample = x["idx"].d(), o.num_rejected_tokens = x["rej"].d();
    o.draft_input_ids = x["out_ids"].d(), o.draft_positions = x["out_pos"].d();
    o.is_rejected_token_mask = x["rejm"].d(), o.is_masked_token_mask = x["mskm"].d();
    o.new_token_indices = x["new"].d(), o.hidden_state_mapping = x["hid"].d();
    o.draft_slot_mapping = x["slots"].d();
    return cattn_step_plan_run(plan, &b, &o, stream);
  }

  // The four calls' host paths in vLLM's order; then every plan output against them.
  int check(int step) {
    auto h = [&](const char* n) { return x[n].h(); };
    cattn_eagle_prepare_next_token_padded_args_t a3 =
        CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
    a3.vocab_size = kVocab, a3.sampled_token_ids = h("sampled");
    a3.discard_request_mask = h("discard"), a3.backup_next_token_ids = h("backup");
    a3.next_token_ids = h("next"), a3.valid_sampled_tokens_count = h("valid");
    EXPECT_CATTN_OK(cattn_eagle_prepare_next_token_padded(&a3));
    cattn_eagle_prepare_inputs_padded_args_t a2 = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
    a2.cu_num_draft_tokens = h("cu"), a2.valid_sampled_tokens_count = h("valid");
    a2.query_start_loc = h("qsl"), a2.token_indices_to_sample = h("idx");
    a2.num_rejected_tokens = h("rej");
    EXPECT_CATTN_OK(cattn_eagle_prepare_inputs_padded(&a2));
    for (int64_t i = 0; i < B; ++i)  // vLLM's glue between the calls
      x["qel"].host.set(i, qsl[i + 1] - 1 - x["rej"].host.get(i));
    cattn_copy_and_expand_eagle_inputs_args_t a6 = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
    a6.padding_token_id = kPad, a6.parallel_drafting_token_id = kPar;
    a6.num_padding_slots_per_request = P, a6.shift_input_ids = 1;
    a6.target_token_ids = h("ids"), a6.target_positions = h("tpos");
    a6.next_token_ids = h("next"), a6.query_start_loc = h("qsl"), a6.query_end_loc = h("qel");
    a6.out_input_ids = h("out_ids"), a6.out_positions = h("out_pos");
    a6.out_is_rejected_token_mask = h("rejm"), a6.out_is_masked_token_mask = h("mskm");
    a6.out_new_token_indices = h("new"), a6.out_hidden_state_mapping = h("hid");
    EXPECT_CATTN_OK(cattn_copy_and_expand_eagle_inputs(&a6));
    const int64_t n = qsl[B] + B * (P - 1);
    DLTensor pos_n = *h("out_pos"), rej_n = *h("rejm");
    int64_t n_shape = n;
    pos_n.shape = &n_shape, rej_n.shape = &n_shape;
    cattn_compute_new_slot_mapping_args_t a4 = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
    a4.block_size = kBs, a4.num_new_tokens = P - 1, a4.max_model_len = kMml;
    a4.query_start_loc = h("qsl"), a4.block_table = h("table"), a4.new_positions = &pos_n;
    a4.is_rejected_token_mask = &rej_n, a4.new_slot_mapping = h("slots");
    EXPECT_CATTN_OK(cattn_compute_new_slot_mapping(&a4));
    // Past the step's tokens the plan writes its sentinels.
    auto want = [&](const char* name, int64_t from, int64_t v) {
      std::vector<int64_t> w = x[name].host.values();
      for (size_t k = static_cast<size_t>(from); k < w.size(); ++k) w[k] = v;
      return w;
    };
    int bad = 0;
    for (const char* o : {"next", "valid", "idx", "rej"})
      bad += x.compare(o, x[o].host.values(), step);
    bad += x.compare("out_ids", want("out_ids", n, kPad), step);
    bad += x.compare("out_pos", want("out_pos", n, 0), step);
    bad += x.compare("rejm", want("rejm", n, 1), step);
    bad += x.compare("mskm", want("mskm", n, 0), step);
    bad += x.compare("slots", want("slots", n, -1), step);
    bad += x.compare("new", want("new", B * P, -1), step);
    bad += x.compare("hid", want("hid", qsl[B], -1), step);
    return bad;
  }
};

TEST(step_plan_draft_gpu, ChainReplaysNewBatchesInOneLaunch) {
  SKIP_WITHOUT_GPU();
  for (const DLDataType it : {i32(), i64()}) {
    Chain c(it, it.bits == 32 ? 2026 : 1207);
    c.draw();
    cudaStream_t s;
    CATTN_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // A plain run first, then one capture replayed with a new batch before each replay.
    ASSERT_CATTN_OK(c.run(reinterpret_cast<cattn_stream_t>(s)));
    CATTN_CUDA_OK(cudaStreamSynchronize(s));
    int bad = c.check(-1);
    cudaGraph_t g;
    CATTN_CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    const cattn_status_t captured = c.run(reinterpret_cast<cattn_stream_t>(s));
    CATTN_CUDA_OK(cudaStreamEndCapture(s, &g));
    ASSERT_CATTN_OK(captured);
    size_t nodes = 0;
    CATTN_CUDA_OK(cudaGraphGetNodes(g, nullptr, &nodes));
    EXPECT_EQ(nodes, 1u);  // the whole chain in one kernel
    cudaGraphExec_t exec;
    CATTN_CUDA_OK(cudaGraphInstantiate(&exec, g, 0));
    const int kReplays = 120;
    for (int i = 0; i < kReplays; ++i) {
      c.draw();
      CATTN_CUDA_OK(cudaGraphLaunch(exec, s));
      CATTN_CUDA_OK(cudaStreamSynchronize(s));
      bad += c.check(i);
    }
    std::printf("[ step_plan_draft_gpu ] int%d: 1 run + %d replays of the drafter chain, %d "
                "mismatching tensors\n",
                it.bits, kReplays, bad);
    EXPECT_EQ(bad, 0);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
  }
}

// CATTN_STEP_DRAFT_STEP as its own plan: in place on positions and seq_lens, and apart, against
// the call's host path; slots past B get -1 up to the output's end.
TEST(step_plan_draft_gpu, DraftStepMatchesTheCall) {
  SKIP_WITHOUT_GPU();
  const int64_t B = 40, W = 8, kIbs = 64, kBs = 16, kMml = 100;
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_DRAFT_STEP;
  d.max_num_reqs = 64, d.max_num_blocks_per_req = W;
  d.draft.block_size = kBs, d.draft.max_model_len = kMml;
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  int bad = 0;
  for (int in_place = 0; in_place < 2; ++in_place) {
    Tensors x(99 + in_place);
    x.add("pos", {B}, i64()), x.add("table", {B, W}, i32()), x.add("seq", {B}, i32());
    x.add("clamped", {B}, i64()), x.add("seq_out", {B}, i32()), x.add("slots", {kIbs}, i64());
    for (int step = 0; step < 8; ++step) {
      x["pos"].fill(x.rv(B, -1, kMml + 2)), x["table"].fill(x.rv(B * W, 0, 5000));
      x["seq"].fill(x.rv(B, 1, kMml)), x.poison({"clamped", "seq_out", "slots"}, -3);
      x.upload();
      cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
      b.positions = x["pos"].d(), b.block_table = x["table"].d(), b.seq_lens = x["seq"].d();
      cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
      o.draft_positions = in_place ? x["pos"].d() : x["clamped"].d();
      o.draft_seq_lens = in_place ? x["seq"].d() : x["seq_out"].d();
      o.draft_slot_mapping = x["slots"].d();
      ASSERT_CATTN_OK(cattn_step_plan_run(plan, &b, &o, nullptr));
      CATTN_CUDA_OK(cudaDeviceSynchronize());
      // The call on the host copies, in place when the plan ran in place.
      if (!in_place) x["clamped"].host.raw() = x["pos"].host.raw();
      if (!in_place) x["seq_out"].host.raw() = x["seq"].host.raw();
      cattn_eagle_step_update_slot_mapping_and_metadata_args_t a =
          CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
      a.block_size = kBs, a.max_model_len = kMml, a.input_batch_size = kIbs;
      a.positions = in_place ? x["pos"].h() : x["clamped"].h();
      a.block_table = x["table"].h();
      a.seq_lens = in_place ? x["seq"].h() : x["seq_out"].h();
      a.out_clamped_positions = const_cast<DLTensor*>(a.positions);
      a.out_slot_mapping = x["slots"].h();
      ASSERT_CATTN_OK(cattn_eagle_step_update_slot_mapping_and_metadata(&a));
      for (const char* n : in_place ? std::vector<const char*>{"pos", "seq", "slots"}
                                    : std::vector<const char*>{"clamped", "seq_out", "slots"})
        bad += x.compare(n, x[n].host.values(), step);
    }
  }
  EXPECT_EQ(bad, 0);
  cattn_step_plan_destroy(plan);
}

// CATTN_STEP_BATCH_CHANGE as its own plan, in place and apart, at its row limit (8192).
TEST(step_plan_draft_gpu, BatchChangeMatchesTheCall) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 8192, M = 8200, n_prev = 8000;
  cattn_step_plan_desc_t d = CATTN_STEP_PLAN_DESC_INIT;
  d.products = CATTN_STEP_BATCH_CHANGE;
  d.max_num_reqs = n;
  cattn_step_plan_t* plan = nullptr;
  ASSERT_CATTN_OK(cattn_step_plan_create(&d, &plan));
  int bad = 0;
  for (int in_place = 0; in_place < 2; ++in_place) {
    Tensors x(7 + in_place);
    x.add("nct", {M}, i64()), x.add("acc", {n}, i32()), x.add("prev", {n}, i64());
    x.add("valid", {n_prev}, i32()), x.add("drafts", {n_prev}, i32()), x.add("cpu", {n}, i64());
    x.add("nct_out", {n}, i64()), x.add("acc_out", {n}, i32());
    std::vector<int64_t> perm(n_prev), prev(n, -1);
    for (int64_t i = 0; i < n_prev; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), x.rng);
    for (int64_t i = 0; i < n; ++i)
      if (i < n_prev && x.r(0, 6) > 0) prev[i] = perm[i];
    x["nct"].fill(x.rv(M, 0, 100000)), x["acc"].fill(x.rv(n, 0, 8)), x["prev"].fill(prev);
    x["valid"].fill(x.rv(n_prev, 0, 4)), x["drafts"].fill(x.rv(n_prev, 0, 3));
    x["cpu"].fill(x.rv(n, 0, 100000)), x.poison({"nct_out", "acc_out"}, -3);
    x.upload();
    cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
    b.prev_positions = x["prev"].d(), b.num_computed_tokens = x["nct"].d();
    b.num_accepted_tokens = x["acc"].d(), b.valid_sampled_token_count = x["valid"].d();
    b.prev_num_draft_tokens = x["drafts"].d(), b.cpu_num_computed_tokens = x["cpu"].d();
    cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
    o.carried_num_computed_tokens = in_place ? x["nct"].d() : x["nct_out"].d();
    o.carried_num_accepted_tokens = in_place ? x["acc"].d() : x["acc_out"].d();
    ASSERT_CATTN_OK(cattn_step_plan_run(plan, &b, &o, nullptr));
    CATTN_CUDA_OK(cudaDeviceSynchronize());
    // The call on the host copies, in place (it reads the previous layout before writing).
    HostTensor nct = x["nct"].host, acc = x["acc"].host;
    cattn_update_num_computed_tokens_for_batch_change_args_t a =
        CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT;
    a.num_computed_tokens = nct.dl(), a.num_accepted_tokens = acc.dl();
    a.prev_positions = x["prev"].h(), a.valid_sampled_token_count = x["valid"].h();
    a.prev_num_draft_tokens = x["drafts"].h(), a.cpu_num_computed_tokens = x["cpu"].h();
    ASSERT_CATTN_OK(cattn_update_num_computed_tokens_for_batch_change(&a));
    std::vector<int64_t> want_nct = nct.values(), want_acc = acc.values();
    if (!in_place) want_nct.resize(n);
    bad += x.compare(in_place ? "nct" : "nct_out", want_nct, in_place);
    bad += x.compare(in_place ? "acc" : "acc_out", want_acc, in_place);
    if (!in_place) {  // the inputs are left as they were
      bad += x.compare("nct", x["nct"].host.values(), 0);
      bad += x.compare("acc", x["acc"].host.values(), 0);
    }
  }
  EXPECT_EQ(bad, 0);
  cattn_step_plan_destroy(plan);
}

}  // namespace
#else
TEST(step_plan_draft_gpu, NeedsCuda) { GTEST_SKIP() << "built without CUDA (CATTN_WITH_CUDA=OFF)"; }
#endif
