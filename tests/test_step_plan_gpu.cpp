// SPDX-License-Identifier: Apache-2.0
// Step plan on the GPU: each product alone and all seven at once, captured once into a CUDA
// graph and replayed with a new random step written into the same buffers before every replay
// (and the same without graphs), every output element compared with the host implementations
// and every padding entry with its sentinel. Outputs are poisoned before each run, so a value
// left from an earlier step fails.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cattn.h"
#include "support/device_tensor.h"
#include "support/host_tensor.h"
#include "support/status_matchers.h"
#include "support/replay.h"
#include "support/step_reference.h"

#if defined(CATTN_TEST_WITH_CUDA)
namespace {

using namespace cattn_test;

// The counts' host mirror in mapped pinned memory.
class PinnedCounts {
 public:
  PinnedCounts() {
    if (cudaHostAlloc(reinterpret_cast<void**>(&p_), CATTN_STEP_NUM_COUNTS * sizeof(int64_t),
                      cudaHostAllocMapped) !=
        cudaSuccess)
      throw std::bad_alloc();
    t_.data = p_;
    t_.device = {kDLCUDAHost, 0};
    t_.ndim = 1;
    t_.dtype = i64();
    t_.shape = shape_;
  }
  ~PinnedCounts() { cudaFreeHost(p_); }
  void reset() { std::fill(p_, p_ + CATTN_STEP_NUM_COUNTS, int64_t{0x5a5a5a5a5a5a5a5a}); }
  std::vector<int64_t> values() const { return std::vector<int64_t>(p_, p_ + CATTN_STEP_NUM_COUNTS); }
  DLTensor* dl() { return &t_; }

 private:
  int64_t* p_ = nullptr;
  int64_t shape_[1] = {CATTN_STEP_NUM_COUNTS};
  DLTensor t_{};
};

struct Layouts {
  TensorLayout in, out;
};

bool selects(const cattn_step_plan_desc_t& d, uint32_t bit) { return (d.products & bit) != 0; }

// A plan with every buffer it reads and writes, at its capacities.
class StepRig {
 public:
  StepRig(const cattn_step_plan_desc_t& desc, const Layouts& l, bool restore_from_qsl = false)
      : d_(desc), restore_from_qsl_(restore_from_qsl) {
    EXPECT_CATTN_OK(cattn_step_plan_create(&d_, &plan_));
    EXPECT_CATTN_OK(cattn_step_plan_get_shape(plan_, &shape_));
    caps_ = {d_.max_num_reqs, d_.max_num_tokens, d_.max_num_blocks_per_req, d_.max_num_logits};
    const int64_t b = caps_.reqs;
    auto in = [&](std::vector<int64_t> s) { return buffer(std::move(s), l.in); };
    auto out = [&](std::vector<int64_t> s) { return buffer(std::move(s), l.out); };
    qsl_ = in({b + 1});
    seq_ = in({b});
    table_ = in({b, caps_.cols});
    cu_ = in({b + 1});
    logits_ = in({caps_.logits});
    num_logits_ = in({1});
    if (selects(d_, CATTN_STEP_DCP_LOCAL_SEQ_LENS)) {
      const bool wide = d_.dcp.dcp_rank == CATTN_DCP_ALL_RANKS && d_.dcp.dcp_size > 1;
      dcp_ = wide ? out({b, d_.dcp.dcp_size}) : out({b});
    }
    if (selects(d_, CATTN_STEP_PCP_QUERY_RESTORE_IDX)) restore_ = out({shape_.restore_capacity});
    if (selects(d_, CATTN_STEP_MAMBA_BLOCK_TABLE))
      mamba_ = out({b, shape_.mamba_columns > 0 ? shape_.mamba_columns : caps_.cols});
    if (selects(d_, CATTN_STEP_CAUSAL_CONV1D_METADATA)) {
      nums_ = out({b});
      for (BufferPtr* p : {&mlist_, &offsetlist_, &batch_ptr_, &chunk_ptr_})
        *p = out({shape_.conv1d_capacity});
    }
    if (selects(d_, CATTN_STEP_LOCAL_ATTENTION)) {
      const int64_t v = shape_.local_capacity;
      local_qsl_ = out({v + 1});
      local_seq_ = out({v});
      local_computed_ = out({v});
      TensorLayout t = l.out;
      t.t = l.in.t;  // the gathered table keeps the source table's dtype
      local_table_ = std::make_unique<Buffer>(std::vector<int64_t>{v, shape_.local_pages}, t);
    }
    if (selects(d_, CATTN_STEP_FAST_PREFILL)) decode_qsl_ = out({b + 1});
    if (selects(d_, CATTN_STEP_EXTEND_QUERIES)) {
      ext_qsl_ = out({b + 1});
      ext_seq_ = out({b});
    }
    counts_ = out({CATTN_STEP_NUM_COUNTS});
  }
  ~StepRig() { cattn_step_plan_destroy(plan_); }

  const StepCaps& caps() const { return caps_; }
  const cattn_step_plan_t* plan() const { return plan_; }

  cattn_step_batch_t batch() {
    cattn_step_batch_t b = CATTN_STEP_BATCH_INIT;
    b.query_start_loc = qsl_->dl();
    b.seq_lens = seq_->dl();
    b.block_table = table_->dl();
    b.cu_num_tokens = restore_from_qsl_ ? nullptr : cu_->dl();
    b.logits_indices = logits_->dl();
    b.num_logits_indices = num_logits_->dl();
    return b;
  }
  cattn_step_outputs_t outputs() {
    cattn_step_outputs_t o = CATTN_STEP_OUTPUTS_INIT;
    auto dl = [](BufferPtr& p) { return p ? p->dl() : nullptr; };
    o.dcp_local_seq_lens = dl(dcp_);
    o.pcp_query_restore_idx = dl(restore_);
    o.mamba_block_table = dl(mamba_);
    o.conv1d_nums = dl(nums_);
    o.conv1d_mlist = dl(mlist_);
    o.conv1d_offsetlist = dl(offsetlist_);
    o.conv1d_batch_ptr = dl(batch_ptr_);
    o.conv1d_token_chunk_offset_ptr = dl(chunk_ptr_);
    o.local_query_start_loc = dl(local_qsl_);
    o.local_seq_lens = dl(local_seq_);
    o.local_num_computed_tokens = dl(local_computed_);
    o.local_block_table = dl(local_table_);
    o.decode_query_start_loc = dl(decode_qsl_);
    o.extend_query_start_loc = dl(ext_qsl_);
    o.extend_seq_lens = dl(ext_seq_);
    o.counts = counts_->dl();
    o.counts_host = pinned_.dl();
    return o;
  }
  cattn_status_t run(cudaStream_t s) {
    const cattn_step_batch_t b = batch();
    const cattn_step_outputs_t o = outputs();
    return cattn_step_plan_run(plan_, &b, &o, reinterpret_cast<cattn_stream_t>(s));
  }
  // A run whose counts mirror is `counts_host` instead of the rig's own.
  cattn_status_t run_into(cudaStream_t s, DLTensor* counts_host) {
    const cattn_step_batch_t b = batch();
    cattn_step_outputs_t o = outputs();
    o.counts_host = counts_host;
    return cattn_step_plan_run(plan_, &b, &o, reinterpret_cast<cattn_stream_t>(s));
  }
  std::vector<int64_t> own_mirror() const { return pinned_.values(); }

  void load(const StepBatch& b) {
    qsl_->write(b.qsl);
    seq_->write(b.seq_lens);
    table_->write(b.table);
    cu_->write(b.cu);
    logits_->write(b.logits);
    num_logits_->write({b.num_logits});
    for (BufferPtr* p : all_outputs())
      if (*p) (*p)->reset();
    pinned_.reset();
  }

  // Compares every output with the host implementations; returns the elements compared.
  int64_t check(const StepBatch& b, const std::string& where) {
    int64_t compared = 0;
    auto expect = [&](BufferPtr& buf, const std::vector<int64_t>& want, const char* what) {
      const std::vector<int64_t> got = buf->read();
      EXPECT_EQ(got, want) << where << ": " << what;
      compared += static_cast<int64_t>(want.size());
    };
    std::vector<int64_t> counts(CATTN_STEP_NUM_COUNTS, 0);
    counts[CATTN_STEP_COUNT_TOKENS] = b.qsl.back() - b.qsl.front();
    if (dcp_) expect(dcp_, expected_dcp(b, d_.dcp), "dcp_local_seq_lens");
    if (restore_) {
      int64_t size = 0;
      expect(restore_, expected_restore(restore_from_qsl_ ? b.qsl : b.cu,
                                        shape_.restore_capacity, &size),
             "pcp_query_restore_idx");
      counts[CATTN_STEP_COUNT_RESTORE_SIZE] = size;
    }
    if (mamba_) expect(mamba_, expected_mamba(b, d_.mamba), "mamba_block_table");
    if (nums_) {
      const Conv1dExpected e = expected_conv1d(b.qsl, d_.conv1d.block_m, shape_.conv1d_capacity);
      expect(nums_, e.nums, "conv1d_nums");
      expect(mlist_, e.mlist, "conv1d_mlist");
      expect(batch_ptr_, e.mlist, "conv1d_batch_ptr");
      expect(offsetlist_, e.offsetlist, "conv1d_offsetlist");
      expect(chunk_ptr_, e.offsetlist, "conv1d_token_chunk_offset_ptr");
      counts[CATTN_STEP_COUNT_CONV1D_PROGRAMS] = e.tot;
    }
    if (local_qsl_) {
      const LocalExpected e = expected_local(b, d_.local_attention.attn_chunk_size,
                                             d_.local_attention.block_size, shape_.local_capacity);
      expect(local_qsl_, e.qsl, "local_query_start_loc");
      expect(local_seq_, e.seq_lens, "local_seq_lens");
      expect(local_computed_, e.computed, "local_num_computed_tokens");
      expect(local_table_, e.table, "local_block_table");
      counts[CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES] = e.virtual_batches;
      counts[CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN] = e.max_query_len;
      counts[CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN] = e.max_seq_len;
    }
    if (decode_qsl_) {
      int64_t scalars[2] = {0, 0};
      expect(decode_qsl_, expected_fast_prefill(b, scalars), "decode_query_start_loc");
      counts[CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN] = scalars[0];
      counts[CATTN_STEP_COUNT_DECODE_TOKENS] = scalars[1];
    }
    if (ext_qsl_) {
      std::vector<int64_t> q, s;
      expected_extend(b, d_.extend.n, q, s);
      expect(ext_qsl_, q, "extend_query_start_loc");
      expect(ext_seq_, s, "extend_seq_lens");
    }
    expect(counts_, counts, "counts");
    EXPECT_EQ(pinned_.values(), counts) << where << ": counts_host";
    return compared + CATTN_STEP_NUM_COUNTS;
  }

 private:
  std::vector<BufferPtr*> all_outputs() {
    return {&dcp_,       &restore_,   &mamba_,     &nums_,      &mlist_,
            &offsetlist_, &batch_ptr_, &chunk_ptr_, &local_qsl_, &local_seq_,
            &local_computed_, &local_table_, &decode_qsl_, &ext_qsl_, &ext_seq_, &counts_};
  }

  cattn_step_plan_desc_t d_;
  bool restore_from_qsl_;
  cattn_step_plan_t* plan_ = nullptr;
  cattn_step_plan_shape_t shape_ = CATTN_STEP_PLAN_SHAPE_INIT;
  StepCaps caps_;
  BufferPtr qsl_, seq_, table_, cu_, logits_, num_logits_;
  BufferPtr dcp_, restore_, mamba_, nums_, mlist_, offsetlist_, batch_ptr_, chunk_ptr_;
  BufferPtr local_qsl_, local_seq_, local_computed_, local_table_, decode_qsl_, ext_qsl_, ext_seq_;
  BufferPtr counts_;
  PinnedCounts pinned_;
};

constexpr int kSteps = 24;

// Runs kSteps random steps through the rig: captured once and replayed, or run plainly.
void run_rig_steps(StepRig& rig, std::mt19937_64& g, const StepRules& rules, bool graph,
                   const std::string& name) {
  StepBatch b;
  run_steps(
      graph, kSteps, [&](cudaStream_t s) { return rig.run(s); },
      [&](int step) {
        b = random_step(g, rig.caps(), rules, step);
        rig.load(b);
      },
      [&](int, const std::string& where) {
        return rig.check(b, where + " (" + std::to_string(b.live) + " live of " +
                                std::to_string(b.reqs) + ")");
      },
      name);
}

// ALIGN reads columns up to (seq_len - 1) / block_size + nspec, which the host requires to be
// in the row.
StepRules rules_for(const cattn_step_plan_desc_t& d) {
  StepRules r;
  if (selects(d, CATTN_STEP_MAMBA_BLOCK_TABLE) &&
      d.mamba.mamba_cache_mode == CATTN_MAMBA_CACHE_MODE_ALIGN)
    r.max_seq_len =
        (d.max_num_blocks_per_req - d.mamba.num_speculative_blocks) * d.mamba.block_size;
  return r;
}

void replay_and_run(const cattn_step_plan_desc_t& d, const Layouts& l, const std::string& name,
                    uint64_t seed, bool restore_from_qsl = false) {
  StepRules rules = rules_for(d);
  rules.even_queries = restore_from_qsl;
  std::mt19937_64 g(seed);
  for (bool graph : {true, false}) {
    StepRig rig(d, l, restore_from_qsl);
    run_rig_steps(rig, g, rules, graph, name);
  }
}

const Layouts kInt32{{i32()}, {i32()}};
const Layouts kInt64{{i64()}, {i64()}};
const Layouts kMixed{{i64(), 2, 1}, {i32(), 3, 2}};

}  // namespace
#endif

TEST(step_plan_gpu, EachProductReplaysNewSteps) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const char* names[] = {"dcp_local_seq_lens",  "pcp_query_restore_idx", "mamba_block_table",
                         "causal_conv1d",       "local_attention",       "fast_prefill",
                         "extend_queries"};
  for (int k = 0; k < 7; ++k) {
    const cattn_step_plan_desc_t d = test_step_desc(1u << k);
    replay_and_run(d, kInt32, names[k], 100 + k);
    replay_and_run(d, kMixed, std::string(names[k]) + " strided", 200 + k);
  }
#endif
}

TEST(step_plan_gpu, ProductVariantsReplayNewSteps) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_DCP_LOCAL_SEQ_LENS);
  d.dcp = {4, 1, 3};
  replay_and_run(d, kInt64, "dcp one rank", 300);
  d.dcp = {1, CATTN_DCP_ALL_RANKS, 1};
  replay_and_run(d, kInt32, "dcp size 1", 301);
  d = test_step_desc(CATTN_STEP_MAMBA_BLOCK_TABLE);
  d.mamba.mamba_cache_mode = CATTN_MAMBA_CACHE_MODE_NONE;
  replay_and_run(d, kInt64, "mamba copy", 302);
  d = test_step_desc(CATTN_STEP_PCP_QUERY_RESTORE_IDX);
  replay_and_run(d, kInt32, "restore from query_start_loc", 303, /*restore_from_qsl=*/true);
  d = test_step_desc(CATTN_STEP_LOCAL_ATTENTION | CATTN_STEP_CAUSAL_CONV1D_METADATA);
  d.local_attention = {16, 16};
  d.conv1d = {1};
  replay_and_run(d, kInt64, "local one page, conv1d block_m 1", 304);
  d = test_step_desc(CATTN_STEP_LOCAL_ATTENTION);
  d.local_attention = {512, 4};
  d.max_num_blocks_per_req = 300;
  replay_and_run(d, kInt32, "local 128 pages", 306);
  replay_and_run(d, kMixed, "local 128 pages strided", 307);
  d = test_step_desc(CATTN_STEP_ALL_PRODUCTS);
  d.max_num_reqs = 1;
  d.max_num_tokens = 700;
  d.max_num_logits = 4;
  replay_and_run(d, kInt32, "all products, one request", 305);
#endif
}

TEST(step_plan_gpu, AllProductsReplayNewSteps) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  const cattn_step_plan_desc_t d = test_step_desc(CATTN_STEP_ALL_PRODUCTS);
  replay_and_run(d, kInt32, "all products int32", 400);
  replay_and_run(d, kInt64, "all products int64", 401);
  replay_and_run(d, kMixed, "all products strided", 402);
#endif
}

TEST(step_plan_gpu, RefusesUnmappedHostCounts) {
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  StepRig rig(test_step_desc(CATTN_STEP_EXTEND_QUERIES), kInt32);
  std::vector<int64_t> pageable(CATTN_STEP_NUM_COUNTS, 7);
  int64_t shape[1] = {CATTN_STEP_NUM_COUNTS};
  DLTensor host{pageable.data(), {kDLCUDAHost, 0}, 1, i64(), shape, nullptr, 0};
  const cattn_step_batch_t b = rig.batch();
  cattn_step_outputs_t o = rig.outputs();
  o.counts_host = &host;
  EXPECT_CATTN_ERROR(cattn_step_plan_run(rig.plan(), &b, &o, nullptr), CATTN_INVALID_ARGUMENT,
                     "outputs->counts_host");
  EXPECT_EQ(pageable, std::vector<int64_t>(CATTN_STEP_NUM_COUNTS, 7));
#endif
}

TEST(step_plan_gpu, ChecksEveryNewCountsHost) {
  // A run described as the last checked one keeps its counts_host mapping; every other
  // counts_host is checked and written through its own mapping.
  SKIP_WITHOUT_GPU();
#if defined(CATTN_TEST_WITH_CUDA)
  StepRig rig(test_step_desc(CATTN_STEP_EXTEND_QUERIES | CATTN_STEP_FAST_PREFILL), kInt32);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::mt19937_64 g(600);
  const std::vector<int64_t> poison(CATTN_STEP_NUM_COUNTS, int64_t{0x5a5a5a5a5a5a5a5a});
  PinnedCounts other;
  std::vector<int64_t> pageable(CATTN_STEP_NUM_COUNTS, 7);
  int64_t shape[1] = {CATTN_STEP_NUM_COUNTS};
  DLTensor unmapped{pageable.data(), {kDLCUDAHost, 0}, 1, i64(), shape, nullptr, 0};
  for (int step = 0; step < 6; ++step) {
    const std::string where = "step " + std::to_string(step);
    SCOPED_TRACE(where);
    const StepBatch b = random_step(g, rig.caps(), StepRules{}, step);
    rig.load(b);
    other.reset();
    // Steps alternate the rig's mirror and the other one; every step also offers memory
    // that is not mapped, which is refused whatever ran before.
    EXPECT_CATTN_ERROR(rig.run_into(s, &unmapped), CATTN_INVALID_ARGUMENT,
                       "outputs->counts_host");
    EXPECT_EQ(pageable, std::vector<int64_t>(CATTN_STEP_NUM_COUNTS, 7)) << where;
    const bool own = step % 3 != 1;
    ASSERT_CATTN_OK(own ? rig.run(s) : rig.run_into(s, other.dl()));
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    if (own) {
      rig.check(b, where);  // the rig's mirror among the rest
      EXPECT_EQ(other.values(), poison) << where << ": the other mirror was written";
    } else {
      const std::vector<int64_t> counts = other.values();
      EXPECT_NE(counts, poison) << where;
      EXPECT_EQ(rig.own_mirror(), poison) << where << ": the rig's mirror was written";
      EXPECT_EQ(counts[CATTN_STEP_COUNT_TOKENS], b.qsl.back() - b.qsl.front()) << where;
    }
  }
  cudaStreamDestroy(s);
#endif
}
