// SPDX-License-Identifier: Apache-2.0
// examples/step_inputs.c through cattn.hpp's one-call helpers: the same 6 requests, two KV-cache
// groups and printed lines, the outputs sized and allocated by the helpers.
#include <cattn.hpp>

#include <cstdio>
#include <vector>

template <class V>
static void show(const char* label, const V& v) {
  std::printf("%s", label);
  for (size_t i = 0; i < v.size(); ++i) std::printf("%s%lld", i ? " " : "", (long long)v[i]);
  std::printf("\n");
}

int main() try {
  const std::vector<int64_t> sched{3, 1, 4, 2, 20, 12}, drafts{2, 0, 3, 1, 0, 0};
  const std::vector<int64_t> idx{5, 0, 7, 2, 1, 4}, computed{40, 9, 17, 0, 0, 33, 0, 30};
  std::vector<int64_t> tables[2] = {std::vector<int64_t>(32), std::vector<int64_t>(32)};
  for (int i = 0; i < 32; ++i) tables[0][i] = 100 + i, tables[1][i] = 500 + i;
  const auto size = cattn::step_inputs_size(1, sched, {}, {}, drafts);
  const auto step = cattn::prepare_pos_seq_lens(sched, idx, computed);
  std::vector<int64_t> slots[2];
  cattn::host_tensor<int64_t> gathered[2];
  for (int g = 0; g < 2; ++g) {
    const auto table = cattn::tensor_view(tables[g], {8, 4});
    gathered[g] = cattn::gather_block_tables(idx, std::nullopt, table);
    cattn::slot_mapping_params p;
    p.block_size = p.kernel_block_size = g ? 32 : 16;
    slots[g] = cattn::compute_slot_mappings(p, step.query_start_loc, std::nullopt, step.positions,
                                            idx, table);
  }
  const auto logits = cattn::combine_sampled_and_draft_tokens(1, step.query_start_loc,
                                                              std::nullopt, drafts);

  std::printf("libcattn %s\ntokens %lld, logits %lld\n", cattn::version_string(),
              (long long)size.num_tokens, (long long)size.num_logits);
  show("query_start_loc ", step.query_start_loc), show("seq_lens        ", step.seq_lens);
  show("positions       ", step.positions);
  show("block table 0   ", gathered[0]);
  show("slots 0         ", slots[0]), show("slots 1         ", slots[1]);
  show("logits_indices  ", logits.logits_indices);
  return 0;
} catch (const cattn::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
