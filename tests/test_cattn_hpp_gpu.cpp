// SPDX-License-Identifier: Apache-2.0
// cattn.hpp's stream-taking overloads on device tensors: views made with cattn::cuda(n) over
// cudaMalloc'd memory, a non-blocking cudaStream_t (and the same stream as a void*), results
// copied back and compared with the one-call host helpers (the step inputs and the step plan's
// 1.2 products also with values computed by hand). Skips without a GPU.
#include "cattn.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/device_tensor.h"

#if defined(CATTN_TEST_WITH_CUDA)
#include <cuda_runtime_api.h>

using namespace cattn_test;

namespace {

// Device memory holding a copy of `values`, freed with the object.
template <class T>
class device_buffer {
 public:
  explicit device_buffer(const std::vector<T>& values) : n_(values.size()) {
    if (cudaMalloc(&ptr_, bytes()) != cudaSuccess) throw std::bad_alloc();
    cudaMemcpy(ptr_, values.data(), bytes(), cudaMemcpyHostToDevice);
  }
  explicit device_buffer(size_t n, T fill = T{}) : device_buffer(std::vector<T>(n, fill)) {}
  ~device_buffer() { cudaFree(ptr_); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  cattn::tensor_view<T> view(int device) {
    return cattn::tensor_view<T>(static_cast<T*>(ptr_), {static_cast<int64_t>(n_)},
                                 cattn::cuda(device));
  }
  // The same memory as a [rows, n / rows] matrix.
  cattn::tensor_view<T> view(int device, int64_t rows) {
    return cattn::tensor_view<T>(static_cast<T*>(ptr_), {rows, static_cast<int64_t>(n_) / rows},
                                 cattn::cuda(device));
  }
  void upload(const std::vector<T>& values) {
    cudaMemcpy(ptr_, values.data(), bytes(), cudaMemcpyHostToDevice);
  }
  std::vector<T> download() const {
    std::vector<T> out(n_);
    cudaMemcpy(out.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
    return out;
  }

 private:
  size_t bytes() const { return n_ * sizeof(T); }
  void* ptr_ = nullptr;
  size_t n_;
};

class cattn_hpp_gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
    ASSERT_EQ(cudaGetDevice(&device_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

TEST_F(cattn_hpp_gpu, RestoreIndexAndDcpLengthsOnAStream) {
  const std::vector<int32_t> cu{0, 1, 2, 6, 12, 14, 22, 23, 33};
  const std::vector<int64_t> want = cattn::get_pcp_query_restore_idx(cu);
  device_buffer<int32_t> d_cu(cu);
  device_buffer<int64_t> d_idx(want.size() + 3, 7);
  // cudaStream_t is cattn_stream_t: it converts to stream_ref as it is.
  cattn::get_pcp_query_restore_idx(d_cu.view(device_), d_idx.view(device_), stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  std::vector<int64_t> got = d_idx.download();
  EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + static_cast<long>(want.size())), want);
  EXPECT_EQ(got.back(), -1);  // past the size: -1

  const std::vector<int32_t> seq{9, 17, 4, 10, 34, 8, 5, 12};
  const auto host = cattn::get_dcp_local_seq_lens(seq, 2, cattn::all_ranks);
  device_buffer<int32_t> d_seq(seq);
  device_buffer<int64_t> d_out(seq.size() * 2);
  cattn::get_dcp_local_seq_lens(
      d_seq.view(device_),
      cattn::tensor_view<int64_t>(d_out.view(device_).data(), {8, 2}, cattn::cuda(device_)), 2,
      cattn::all_ranks, 1, static_cast<void*>(stream_));
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(d_out.download(), host.values());
}

TEST_F(cattn_hpp_gpu, DeviceComputedConv1dAndLocalAttention) {
  const std::vector<int32_t> qsl{0, 10, 16, 17};
  const auto host = cattn::compute_causal_conv1d_metadata<int32_t>(qsl);
  device_buffer<int32_t> d_qsl(qsl), d_nums(3), d_mlist(8, 99), d_tot(1);
  cattn::causal_conv1d_metadata_capturable_outputs out;
  out.nums = d_nums.view(device_);
  out.mlist = d_mlist.view(device_);
  out.tot = d_tot.view(device_);
  cattn::compute_causal_conv1d_metadata_capturable(d_qsl.view(device_), 8, out, stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(d_nums.download(), host.nums);
  const std::vector<int32_t> mlist = d_mlist.download();
  EXPECT_EQ(std::vector<int32_t>(mlist.begin(), mlist.begin() + host.tot), host.mlist);
  EXPECT_EQ(mlist.back(), CATTN_PAD_SLOT_ID);
  EXPECT_EQ(d_tot.download()[0], host.tot);

  // Local attention on the device against the one-call host plan (SPEC's first vector).
  const std::vector<int32_t> q{0, 4, 14, 19}, s{6, 17, 9};
  std::vector<int32_t> table(27);
  for (int32_t i = 0; i < 27; ++i) table[static_cast<size_t>(i)] = i;
  const auto plan = cattn::make_local_attention_virtual_batches<int32_t>(
      4, 2, q, s, cattn::tensor_view(table, {3, 9}));
  const int64_t cap = 10;
  device_buffer<int32_t> d_q(q), d_s(s), d_table(table), d_qo(cap + 1), d_so(cap), d_counts(3);
  cattn::local_attention_capturable_outputs lo;
  lo.query_start_loc_out = d_qo.view(device_);
  lo.seq_lens_out = d_so.view(device_);
  lo.counts = d_counts.view(device_);
  cattn::make_local_attention_virtual_batches_capturable(
      4, 2, d_q.view(device_), d_s.view(device_),
      cattn::tensor_view<int32_t>(d_table.view(device_).data(), {3, 9}, cattn::cuda(device_)), lo,
      stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<int32_t> counts = d_counts.download();
  ASSERT_EQ(counts[0], plan.scalars.num_reqs);
  const std::vector<int32_t> qo = d_qo.download(), so = d_so.download();
  EXPECT_EQ(std::vector<int32_t>(qo.begin(), qo.begin() + counts[0] + 1), plan.query_start_loc);
  EXPECT_EQ(std::vector<int32_t>(so.begin(), so.begin() + counts[0]), plan.seq_lens);
}

TEST_F(cattn_hpp_gpu, LseInPlaceOnTheDevice) {
  const std::vector<float> lse{1.0f, -2.5f, 0.0f, 8.0f};
  const std::vector<float> want = cattn::log2_lse_to_ln(lse);
  device_buffer<float> d(lse);
  cattn::log2_lse_to_ln_in_place(d.view(device_), CATTN_LSE_ROUNDING_TORCH, stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(d.download(), want);
}

// The step-inputs batch of test_cattn_hpp.cpp (R = 4 persistent rows, B = 4 rows, 3 live), on
// the device: each call on a stream against the values computed there by hand.
namespace step_case {
const std::vector<int32_t> num_computed{5, 0, 12, 3};
const std::vector<int32_t> idx{2, 0, 3, 1}, scheduled{1, 3, 2, 9}, drafts{0, 2, 0, 5};
const std::vector<int32_t> table{10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42};  // [4, 3]
const std::vector<int32_t> num_blocks{2, 1, 3, 1};
const std::vector<int32_t> table1{1, 2, 3, 4, 5, 6, 7, 8};  // a second group's [4, 2]
}  // namespace step_case

TEST_F(cattn_hpp_gpu, StepInputsOnAStream) {
  using namespace step_case;
  device_buffer<int32_t> d_nc(num_computed), d_idx(idx), d_sched(scheduled), d_drafts(drafts),
      d_table(table), d_nb(num_blocks), d_nr(std::vector<int32_t>{3});
  device_buffer<int32_t> d_qsl(5, -9), d_seq(4, -9), d_pos(8, -9), d_bnc(4, -9), d_gather(12, -9);
  device_buffer<int64_t> d_slots(8, 99), d_status(3, 9);
  device_buffer<int32_t> d_logits(8, 77), d_cu(5, 77), d_exp(8, 77), d_local(8, 77);
  const int dev = device_;
  cattn::prepare_pos_seq_lens(d_sched.view(dev), d_idx.view(dev), d_nc.view(dev), d_nr.view(dev),
                              {d_qsl.view(dev), d_seq.view(dev), d_pos.view(dev), d_bnc.view(dev)},
                              stream_);
  cattn::gather_block_tables(d_idx.view(dev), d_nr.view(dev), d_table.view(dev, 4),
                             d_nb.view(dev), d_gather.view(dev, 4), stream_);
  cattn::slot_mapping_params p;
  p.block_size = 16;
  p.kernel_block_size = 8;
  cattn::compute_slot_mappings(p, d_qsl.view(dev), d_nr.view(dev), d_pos.view(dev),
                               d_idx.view(dev), d_table.view(dev, 4), d_slots.view(dev),
                               static_cast<void*>(stream_));
  cattn::logits_outputs lo;
  lo.logits_indices = d_logits.view(dev);
  lo.cu_num_logits = d_cu.view(dev);
  lo.expanded_idx_mapping = d_exp.view(dev);
  lo.expanded_local_pos = d_local.view(dev);
  cattn::combine_sampled_and_draft_tokens(d_qsl.view(dev), d_nr.view(dev), d_drafts.view(dev),
                                          d_idx.view(dev), lo, {}, stream_);
  cattn::step_check_inputs check;
  check.query_start_loc = d_qsl.view(dev);
  check.num_reqs = d_nr.view(dev);
  check.seq_lens = d_seq.view(dev);
  check.block_tables[0] = d_gather.view(dev, 4);
  check.slot_mappings[0] = d_slots.view(dev);
  cattn::step_batch_check(check, d_status.view(dev), stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);

  // The same values as the host path (test_cattn_hpp.cpp's hand-computed ones).
  const auto host = cattn::prepare_pos_seq_lens<int32_t>(scheduled, idx, num_computed, 3);
  EXPECT_EQ(d_qsl.download(), host.query_start_loc);
  EXPECT_EQ(d_seq.download(), (std::vector<int32_t>{13, 8, 5, 0}));
  EXPECT_EQ(d_pos.download(), (std::vector<int32_t>{12, 5, 6, 7, 3, 4, 0, 0}));
  EXPECT_EQ(d_bnc.download(), (std::vector<int32_t>{12, 5, 3, 0}));
  EXPECT_EQ(d_gather.download(),
            (std::vector<int32_t>{30, 31, 32, 10, 11, -9, 40, -9, -9, 0, 0, 0}));  // left as is
  EXPECT_EQ(d_slots.download(), (std::vector<int64_t>{252, 85, 86, 87, 323, 324, -1, -1}));
  EXPECT_EQ(d_logits.download(), (std::vector<int32_t>{0, 1, 2, 3, 5, 0, 0, 0}));
  EXPECT_EQ(d_cu.download(), (std::vector<int32_t>{0, 1, 4, 5, 5}));
  EXPECT_EQ(d_exp.download(), (std::vector<int32_t>{2, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(d_local.download(), (std::vector<int32_t>{0, 0, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(d_status.download(), (std::vector<int64_t>{0, 0, 0}));

  // A padded row's seq_len made nonzero on the device: the check reports it, without a throw.
  d_seq.upload(std::vector<int32_t>{13, 8, 5, 4});
  cattn::step_batch_check(check, d_status.view(dev), stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(d_status.download(), (std::vector<int64_t>{CATTN_STEP_CHECK_SEQ_LENS, 3, 0}));
}

TEST_F(cattn_hpp_gpu, StepPlanComputesTheStepInputs) {
  using namespace step_case;
  cattn_step_plan_desc_t desc = cattn::step_plan_desc();
  desc.products = CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES | CATTN_STEP_SLOT_MAPPINGS |
                  CATTN_STEP_LOGITS_INDICES | CATTN_STEP_TOKEN_TO_REQ | CATTN_STEP_SPLIT;
  desc.max_num_reqs = 4;
  desc.max_num_tokens = 8;
  desc.max_num_logits = 8;
  desc.max_num_persistent_reqs = 4;
  desc.inputs.num_kv_groups = 2;
  desc.kv_groups[0] = {16, 8, 3, CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  desc.kv_groups[1] = {16, 16, 2, CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  const cattn::step_plan plan(desc);
  const int dev = device_;
  device_buffer<int32_t> d_nc(num_computed), d_idx(idx), d_sched(scheduled), d_drafts(drafts),
      d_table(table), d_table1(table1), d_nb(num_blocks), d_nr(std::vector<int32_t>{3});
  device_buffer<int32_t> o_qsl(5), o_seq(4), o_pos(8), o_nc(4), o_bt0(12), o_bt1(8), o_li(8),
      o_cu(5), o_exp(8), o_local(8), o_t2r(8);
  device_buffer<int64_t> o_sm0(8), o_sm1(8), o_counts(CATTN_STEP_NUM_COUNTS);
  cattn::step_batch batch;
  batch.num_reqs = d_nr.view(dev);
  batch.num_scheduled_tokens = d_sched.view(dev);
  batch.idx_mapping = d_idx.view(dev);
  batch.num_computed_tokens = d_nc.view(dev);
  batch.num_draft_tokens = d_drafts.view(dev);
  batch.kv_block_tables[0] = d_table.view(dev, 4);
  batch.kv_block_tables[1] = d_table1.view(dev, 4);
  batch.kv_num_blocks[0] = d_nb.view(dev);  // group 1: every column
  cattn::step_outputs out;
  out.query_start_loc = o_qsl.view(dev);
  out.seq_lens = o_seq.view(dev);
  out.positions = o_pos.view(dev);
  out.num_computed_tokens = o_nc.view(dev);
  out.block_tables[0] = o_bt0.view(dev, 4);
  out.block_tables[1] = o_bt1.view(dev, 4);
  out.slot_mappings[0] = o_sm0.view(dev);
  out.slot_mappings[1] = o_sm1.view(dev);
  out.logits_indices = o_li.view(dev);
  out.cu_num_logits = o_cu.view(dev);
  out.expanded_idx_mapping = o_exp.view(dev);
  out.expanded_local_pos = o_local.view(dev);
  out.token_to_req_indices = o_t2r.view(dev);
  out.counts = o_counts.view(dev);
  plan.run(batch, out, stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);

  // Against the stand-alone host calls.
  const auto host = cattn::prepare_pos_seq_lens<int32_t>(scheduled, idx, num_computed, 3);
  std::vector<int32_t> positions = host.positions;
  positions.resize(8, 0);
  EXPECT_EQ(o_qsl.download(), host.query_start_loc);
  EXPECT_EQ(o_seq.download(), host.seq_lens);
  EXPECT_EQ(o_pos.download(), positions);
  EXPECT_EQ(o_nc.download(), host.batch_num_computed_tokens);
  EXPECT_EQ(o_bt0.download(),
            cattn::gather_block_tables<int32_t>(idx, 3, cattn::tensor_view(table, {4, 3}),
                                                num_blocks)
                .values());
  EXPECT_EQ(o_bt1.download(), (std::vector<int32_t>{5, 6, 1, 2, 7, 8, 0, 0}));
  cattn::slot_mapping_params p0, p1;
  p0.block_size = 16;
  p0.kernel_block_size = 8;
  p1.block_size = p1.kernel_block_size = 16;
  std::vector<int64_t> want0(8), want1(8);
  cattn::compute_slot_mappings(p0, host.query_start_loc, std::vector<int32_t>{3}, positions, idx,
                               cattn::tensor_view(table, {4, 3}), want0);
  cattn::compute_slot_mappings(p1, host.query_start_loc, std::vector<int32_t>{3}, positions, idx,
                               cattn::tensor_view(table1, {4, 2}), want1);
  EXPECT_EQ(o_sm0.download(), want0);
  EXPECT_EQ(o_sm1.download(), want1);
  EXPECT_EQ(want1, (std::vector<int64_t>{92, 21, 22, 23, 115, 116, -1, -1}));
  EXPECT_EQ(o_li.download(), (std::vector<int32_t>{0, 1, 2, 3, 5, 0, 0, 0}));
  EXPECT_EQ(o_cu.download(), (std::vector<int32_t>{0, 1, 4, 5, 5}));
  EXPECT_EQ(o_exp.download(), (std::vector<int32_t>{2, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(o_local.download(), (std::vector<int32_t>{0, 0, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(o_t2r.download(), (std::vector<int32_t>{0, 1, 1, 1, 2, 2, 0, 0}));
  std::vector<int64_t> counts(CATTN_STEP_NUM_COUNTS, 0);
  counts[CATTN_STEP_COUNT_TOKENS] = 6;
  counts[CATTN_STEP_COUNT_NUM_REQS] = 3;
  counts[CATTN_STEP_COUNT_NUM_LOGITS] = 5;
  counts[CATTN_STEP_COUNT_MAX_QUERY_LEN] = 3;
  counts[CATTN_STEP_COUNT_MAX_SEQ_LEN] = 13;
  counts[CATTN_STEP_COUNT_SPLIT_DECODES] = 1;  // decode_threshold 1: query lengths 1 | 3, 2
  counts[CATTN_STEP_COUNT_SPLIT_PREFILLS] = 2;
  counts[CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS] = 1;
  counts[CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS] = 5;
  EXPECT_EQ(o_counts.download(), counts);

  // The same plan with 2 live rows, num_reqs changed on the device only.
  d_nr.upload(std::vector<int32_t>{2});
  plan.run(batch, out, stream_);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(o_qsl.download(), (std::vector<int32_t>{0, 1, 4, 4, 4}));
  EXPECT_EQ(o_seq.download(), (std::vector<int32_t>{13, 8, 0, 0}));
  EXPECT_EQ(o_bt1.download(), (std::vector<int32_t>{5, 6, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(o_sm0.download(), (std::vector<int64_t>{252, 85, 86, 87, -1, -1, -1, -1}));
  EXPECT_EQ(o_t2r.download(), (std::vector<int32_t>{0, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(o_counts.download()[CATTN_STEP_COUNT_NUM_REQS], 2);
}

#endif  // CATTN_TEST_WITH_CUDA
