// SPDX-License-Identifier: Apache-2.0
// cattn.hpp's stream-taking overloads on device tensors: views made with cattn::cuda(n) over
// cudaMalloc'd memory, a non-blocking cudaStream_t (and the same stream as a void*), results
// copied back and compared with the one-call host helpers. Skips without a GPU.
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
      q, s, cattn::tensor_view(table, {3, 9}), 4, 2);
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

#endif  // CATTN_TEST_WITH_CUDA
