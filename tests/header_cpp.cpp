// SPDX-License-Identifier: Apache-2.0
// Compiles cattn.hpp alone (no CUDA header, no test support) with -Wall -Wextra -Wpedantic
// -Werror, as C++17 (an object file) and C++20 (a program), instantiating every template the
// header defines for both index types. The C++20 program also checks the std::span views.
#include "cattn.hpp"

#include <cstdio>
#include <vector>

void cattn_hpp_instantiate_all();

namespace {

template <class Out>
void instantiate_for() {
  const std::vector<int32_t> q{0, 2};
  const std::vector<int64_t> s{2};
  cattn::attn_metadata md;
  (void)cattn::get_dcp_local_seq_lens<Out>(s, 1, 0);
  (void)cattn::get_pcp_query_restore_idx<Out>(q);
  (void)cattn::compute_causal_conv1d_metadata<Out>(q);
  (void)cattn::extend_all_queries_by_n<Out>(md, 1);
  (void)cattn::make_kv_sharing_fast_prefill_common_attn_metadata<Out>(md);
  (void)cattn::make_local_attention_virtual_batches<Out>(4, 2, q, s, s);
  (void)cattn::local_attention_plan().make_block_table<Out>(s);
  (void)cattn::mamba_get_block_table_tensor<Out>(s, s, 0, 0, CATTN_MAMBA_CACHE_MODE_ALL);
  (void)cattn::reorder_batch_to_split_decodes_and_prefills<Out>(s, s, s);
  (void)cattn::naive_query_lens<Out>(q);
  (void)cattn::compute_num_computed_tokens<Out>(q, s);
  (void)cattn::token_to_req_indices<Out>(q, 2);
  (void)cattn::compute_mm_prefix_range_tensor<Out>(q, s);
  (void)cattn::compute_mm_prefix_range_tensor<Out>({{{0, 1}}});
  (void)cattn::fill_mm_prefix_query_ranges<Out>(q, s, q, s);
  (void)cattn::to_string(cattn::host_tensor<Out>({1}));
}

}  // namespace

void cattn_hpp_instantiate_all() {
  instantiate_for<int32_t>();
  instantiate_for<int64_t>();
  const std::vector<float> f{1.0f};
  const std::vector<double> d{1.0};
  (void)cattn::log2_lse_to_ln(f);
  (void)cattn::log2_lse_to_ln(d);
  (void)cattn::log2_lse_to_ln(cattn::tensor_view(f));
  const cattn::tensor_view<const float> v(f.data(), {1, 1, 1});
  (void)cattn::fused_pcp_qkv_select(v, v, v, std::vector<int32_t>{0, 0}, 1, 0);
  (void)cattn::split_prefill_chunks(std::vector<int32_t>{1}, 1);
  (void)cattn::to_string(cattn::split_prefill_chunks(std::vector<int32_t>{1}, 1));
  (void)cattn::get_supported_kv_cache_layouts({std::nullopt});
}

int main() {
  int failures = 0;
#if CATTN_HPP_HAVE_SPAN
  // A span of const elements is an input, a span of mutable ones an output.
  const std::vector<int64_t> cu{0, 8, 20};
  std::vector<int32_t> out(20);
  cattn::get_pcp_query_restore_idx(std::span<const int64_t>(cu), std::span<int32_t>(out));
  const std::vector<int64_t> want = cattn::get_pcp_query_restore_idx(cu);
  for (size_t i = 0; i < out.size(); ++i) failures += out[i] != want[i];
  const cattn::tensor_view<const int64_t> view(std::span<const int64_t, 3>(cu.data(), 3));
  failures += view.numel() != 3;
  static_assert(std::is_convertible_v<std::span<int64_t>, cattn::index_view>);
  static_assert(!std::is_convertible_v<std::span<const int64_t>, cattn::index_view>);
  static_assert(!std::is_convertible_v<std::span<float>, cattn::index_cview>);
  std::printf("cattn.hpp under C++20: std::span views %s\n", failures ? "FAILED" : "ok");
#else
  std::printf("cattn.hpp: no std::span in this standard library\n");
  failures = __cplusplus >= 202002L;  // the C++20 build must have them
#endif
  return failures ? 1 : 0;
}
