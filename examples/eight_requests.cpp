// SPDX-License-Identifier: Apache-2.0
// One batch of 8 requests through cattn.hpp: the PCP restore index, every DCP rank's lengths,
// the causal-conv1d metadata and the local-attention virtual batches, printed.
#include <cattn.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main() try {
  using cattn::to_string;
  // Query lengths 1 1 4 6 2 8 1 10: three decodes, the rest prefill chunks of their sequences.
  const std::vector<int32_t> query_start_loc{0, 1, 2, 6, 12, 14, 22, 23, 33};
  const std::vector<int32_t> seq_lens{9, 17, 4, 10, 34, 8, 5, 12};
  std::vector<int32_t> block_table(8 * 9);  // [8 requests, 9 blocks of 4 tokens]
  std::iota(block_table.begin(), block_table.end(), 0);

  const auto restore = cattn::get_pcp_query_restore_idx(query_start_loc);
  const auto dcp = cattn::get_dcp_local_seq_lens(seq_lens, 2, cattn::all_ranks);
  const auto conv = cattn::compute_causal_conv1d_metadata(query_start_loc);
  const auto local = cattn::make_local_attention_virtual_batches(
      8, 4, query_start_loc, seq_lens, cattn::tensor_view(block_table, {8, 9}));

  std::printf("libcattn %s\n", cattn::version_string());
  std::printf("pcp restore_idx  %s\n", to_string(restore).c_str());
  std::printf("dcp lens [B, 2]  %s\n", to_string(dcp).c_str());
  std::printf("conv1d nums      %s (tot %lld)\n", to_string(conv.nums).c_str(), (long long)conv.tot);
  std::printf("conv1d mlist     %s\n", to_string(conv.mlist).c_str());
  std::printf("conv1d offsets   %s\n", to_string(conv.offsetlist).c_str());
  std::printf("conv1d batch_ptr %zu entries\n", conv.batch_ptr.size());
  std::printf("local cu_q       %s\n", to_string(local.query_start_loc).c_str());
  std::printf("local k lens     %s\n", to_string(local.seq_lens).c_str());
  std::printf("local table      %s\n", to_string(local.block_table).c_str());
  return 0;
} catch (const cattn::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
