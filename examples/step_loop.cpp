// SPDX-License-Identifier: Apache-2.0
// An engine's step loop around the step plan's step inputs (libcattn 1.2).
//
// The engine keeps per-request state in R persistent rows: each row's num_computed_tokens and,
// for each of two KV-cache groups, its block table (kernel-block ids) and how many entries are
// in use. Every step a scheduler picks the rows that run (a changing subset of the persistent
// rows, with gaps) and how many tokens each runs: prompts in chunks, decodes with 0-2 draft
// tokens. The model runner then needs the step's attention inputs: query_start_loc, seq_lens,
// positions, each group's batch block table and slot mapping, the logits indices and
// token_to_req_indices, and the decode/prefill split. One step plan computes them all in one
// launch from the scheduler's numbers and the persistent state.
//
// GPU half: the plan is captured in a CUDA graph once per bucket (8, 32 or 128 batch rows; a
// step takes the smallest bucket that holds its live rows and pads the rest by setting
// num_reqs). Each step writes the scheduler's numbers into one pinned buffer, copies it to the
// device with one cudaMemcpyAsync, updates the persistent state on the device from pinned
// memory, and replays the bucket's graph. Every product is copied back and compared with the
// host path (the stand-alone calls on host tensors), and cattn_step_batch_check verifies the
// device batch against the padding contract.
// Host half (always): the same scheduler and the host path, checked for internal consistency.
// The GPU half needs a CUDA build (CATTN_EXAMPLE_WITH_CUDA) and a GPU; without them it is
// skipped. Exit status 1: a mismatch, an inconsistency or an error.
#include <cattn.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

/* ---- The engine's configuration ----------------------------------------------------------- */

constexpr int64_t kPersistentRows = 128;  // R: requests the engine keeps state for
constexpr int64_t kMaxModelLen = 512;     // longest sequence (prompt + output)
constexpr int64_t kMaxTokens = 512;       // token budget of a step: every bucket's capacity T
constexpr int64_t kMaxDrafts = 2;         // speculative tokens per decode row
constexpr int64_t kPrefillChunk = 96;     // longest prompt chunk of one request in one step
// Rows with at most this many tokens count as decodes (vLLM: 1 + speculative tokens).
constexpr int64_t kDecodeThreshold = 1 + kMaxDrafts;
constexpr int kSteps = 100;
constexpr std::array<int64_t, 3> kBuckets{8, 32, 128};  // CUDA-graph buckets: batch rows B
constexpr int64_t kMaxRows = kBuckets.back();

// The two KV-cache groups: 16-token blocks stored as 16-token kernel blocks, and 64-token
// blocks split into two 32-token kernel blocks (the tables hold kernel-block ids).
struct kv_group {
  int64_t block_size, kernel_block_size;
  constexpr int64_t ratio() const { return block_size / kernel_block_size; }
  constexpr int64_t width() const { return kMaxModelLen / kernel_block_size; }  // W: columns
};
constexpr int kGroups = 2;
constexpr std::array<kv_group, kGroups> kGroup{{{16, 16}, {64, 32}}};

constexpr uint32_t kProducts = CATTN_STEP_INPUTS | CATTN_STEP_BLOCK_TABLES |
                               CATTN_STEP_SLOT_MAPPINGS | CATTN_STEP_LOGITS_INDICES |
                               CATTN_STEP_TOKEN_TO_REQ | CATTN_STEP_SPLIT;

// A bucket's logits capacity: every row a decode with every draft, within the token budget.
constexpr int64_t logit_capacity(int64_t rows) {
  return std::min(rows * (1 + kMaxDrafts), kMaxTokens);
}
constexpr int64_t kMaxLogits = logit_capacity(kMaxRows);

// The smallest bucket that holds `live` rows.
int64_t bucket_for(int64_t live) {
  for (int64_t b : kBuckets)
    if (live <= b) return b;
  throw std::runtime_error("more live rows than the largest bucket");
}

// The plan of one bucket: capacities from the bucket, everything else from vLLM's defaults
// (CATTN_STEP_PLAN_DESC_INIT) but what this engine sets.
cattn_step_plan_desc_t plan_desc(int64_t rows) {
  cattn_step_plan_desc_t d = cattn::step_plan_desc();
  d.products = kProducts;
  d.max_num_reqs = rows;
  d.max_num_tokens = kMaxTokens;
  d.max_num_logits = logit_capacity(rows);
  d.max_num_persistent_reqs = kPersistentRows;
  d.inputs.num_kv_groups = kGroups;
  d.inputs.decode_threshold = kDecodeThreshold;
  for (int g = 0; g < kGroups; ++g)
    d.kv_groups[g] = {kGroup[g].block_size, kGroup[g].kernel_block_size, kGroup[g].width(),
                      CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT, 0};
  return d;
}

/* ---- The scheduler: requests, persistent rows, KV blocks ---------------------------------- */

// xorshift64*: the same steps on every machine (std:: distributions may differ).
struct rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % (hi - lo + 1)); }
};

// What the engine keeps per persistent row, host side. The GPU half keeps the same on the device
// and copies every change there before the step runs.
struct persistent_state {
  std::vector<int32_t> num_computed_tokens = std::vector<int32_t>(kPersistentRows, 0);  // [R]
  std::array<std::vector<int32_t>, kGroups> tables;      // [R, W_g] kernel-block ids
  std::array<std::vector<int32_t>, kGroups> num_blocks;  // [R] entries in use
  persistent_state() {
    for (int g = 0; g < kGroups; ++g) {
      tables[g].assign(static_cast<size_t>(kPersistentRows * kGroup[g].width()), 0);
      num_blocks[g].assign(kPersistentRows, 0);
    }
  }
};

// New entries of one row's table: what the engine copies to the device.
struct table_write {
  int group;
  int32_t row, first_col, count;
};

// One step as the scheduler decides it: the live rows in batch order (decodes first, as
// vLLM's split expects) and their token and draft counts.
struct scheduled_step {
  std::vector<int32_t> rows, num_tokens, num_drafts;
  std::vector<table_write> table_writes;
};

struct request {
  int64_t prompt_len, total_len;  // total: prompt + output tokens
  int32_t row;
};

class scheduler {
 public:
  scheduler() {
    for (int g = 0; g < kGroups; ++g)  // enough KV blocks for every row at kMaxModelLen
      for (int64_t b = kPersistentRows * kMaxModelLen / kGroup[g].block_size; b-- > 0;)
        free_blocks_[g].push_back(static_cast<int32_t>(b));
    for (int32_t r = 0; r < kPersistentRows; ++r) free_rows_.push_back(r);
  }
  const persistent_state& state() const { return state_; }

  // Admits this step's arrivals, gives each running request its tokens within the budget, and
  // allocates the KV blocks those tokens need.
  scheduled_step next(int step) {
    waiting_ += arrivals(step);
    while (waiting_ > 0 && !free_rows_.empty()) admit();
    scheduled_step s;
    int64_t budget = kMaxTokens;
    for (const request& r : running_)  // decodes first: they are latency-bound
      if (computed(r) >= r.prompt_len) {
        const int64_t q = std::min(1 + rng_.in(0, kMaxDrafts), r.total_len - computed(r));
        add(s, r, q, q - 1);  // every token past the first is a draft
        budget -= q;
      }
    for (const request& r : running_)  // then prompt chunks, while the budget lasts
      if (computed(r) < r.prompt_len && budget > 0) {
        const int64_t q = std::min({r.prompt_len - computed(r), kPrefillChunk, budget});
        add(s, r, q, 0);
        budget -= q;
      }
    order_decodes_first(s);
    return s;
  }

  // The step ran: its tokens are computed (every draft accepted, to keep the example short);
  // finished requests give back their row and blocks.
  void complete(const scheduled_step& s) {
    for (size_t b = 0; b < s.rows.size(); ++b)
      state_.num_computed_tokens[s.rows[b]] += s.num_tokens[b];
    for (size_t i = 0; i < running_.size();) {
      if (computed(running_[i]) >= running_[i].total_len) {
        release(running_[i].row);
        running_.erase(running_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }

 private:
  // A burst of arrivals in the middle pushes the batch past 32 rows; the trickle around it
  // keeps the small buckets in use.
  static int arrivals(int step) {
    if (step < 20) return step % 2 == 1 ? 1 : 0;
    if (step < 40) return 5;
    return step % 3 == 0 ? 1 : 0;
  }
  int64_t computed(const request& r) const { return state_.num_computed_tokens[r.row]; }

  // A waiting request takes a random free row: the batch's rows are a subset with gaps.
  void admit() {
    --waiting_;
    const size_t pick =
        static_cast<size_t>(rng_.in(0, static_cast<int64_t>(free_rows_.size()) - 1));
    const int32_t row = free_rows_[pick];
    free_rows_.erase(free_rows_.begin() + static_cast<long>(pick));
    const int64_t prompt = rng_.in(8, 400), output = rng_.in(4, 64);
    running_.push_back({prompt, prompt + output, row});
    state_.num_computed_tokens[row] = 0;
  }

  void add(scheduled_step& s, const request& r, int64_t q, int64_t drafts) {
    s.rows.push_back(r.row);
    s.num_tokens.push_back(static_cast<int32_t>(q));
    s.num_drafts.push_back(static_cast<int32_t>(drafts));
    for (int g = 0; g < kGroups; ++g) grow_table(s, g, r.row, computed(r) + q);
  }

  // Enough blocks of group g for `len` tokens, each KV block written as `ratio` kernel blocks.
  void grow_table(scheduled_step& s, int g, int32_t row, int64_t len) {
    const kv_group& k = kGroup[g];
    int32_t& in_use = state_.num_blocks[g][row];
    const int32_t first = in_use;
    for (int64_t kv = in_use / k.ratio(); kv * k.block_size < len; ++kv) {
      const int32_t block = free_blocks_[g].back();
      free_blocks_[g].pop_back();
      for (int64_t i = 0; i < k.ratio(); ++i)
        state_.tables[g][row * k.width() + in_use++] = static_cast<int32_t>(block * k.ratio() + i);
    }
    if (in_use > first) s.table_writes.push_back({g, row, first, in_use - first});
  }

  // The table entries stay as they are: num_blocks says how many are in use.
  void release(int32_t row) {
    for (int g = 0; g < kGroups; ++g) {
      const kv_group& k = kGroup[g];
      for (int32_t c = 0; c < state_.num_blocks[g][row]; c += static_cast<int32_t>(k.ratio()))
        free_blocks_[g].push_back(
            static_cast<int32_t>(state_.tables[g][row * k.width() + c] / k.ratio()));
      state_.num_blocks[g][row] = 0;
    }
    free_rows_.push_back(row);
  }

  // vLLM's split reads a batch whose decodes (at most kDecodeThreshold tokens) come first.
  static void order_decodes_first(scheduled_step& s) {
    std::vector<size_t> order(s.rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_partition(order.begin(), order.end(),
                          [&](size_t i) { return s.num_tokens[i] <= kDecodeThreshold; });
    const scheduled_step in = s;
    for (size_t i = 0; i < order.size(); ++i) {
      s.rows[i] = in.rows[order[i]];
      s.num_tokens[i] = in.num_tokens[order[i]];
      s.num_drafts[i] = in.num_drafts[order[i]];
    }
  }

  rng rng_{0x5eed2026};
  persistent_state state_;
  int waiting_ = 0;  // arrived, no free row yet
  std::vector<request> running_;
  std::vector<int32_t> free_rows_;
  std::array<std::vector<int32_t>, kGroups> free_blocks_;
};

/* ---- One step's inputs: the scheduler's numbers, packed and padded ------------------------ */

// The layout of the one buffer the scheduler's numbers travel in, for a bucket of `rows`:
// [num_scheduled_tokens: rows | idx_mapping: rows | num_draft_tokens: rows | num_reqs: 1].
// The device buffer has the same layout, so its slices are the batch's tensors.
struct packed_layout {
  int64_t rows;
  int64_t scheduled() const { return 0; }
  int64_t idx() const { return rows; }
  int64_t drafts() const { return 2 * rows; }
  int64_t num_reqs() const { return 3 * rows; }
  int64_t size() const { return 3 * rows + 1; }
};

// Rows past the live ones are padding: only num_reqs says so. Their entries are left as they
// were (the calls never read a padded row's inputs), so nothing is cleared.
void pack(const scheduled_step& s, const packed_layout& l, int32_t* buf) {
  const size_t live = s.rows.size();
  std::copy(s.num_tokens.begin(), s.num_tokens.end(), buf + l.scheduled());
  std::copy(s.rows.begin(), s.rows.end(), buf + l.idx());
  std::copy(s.num_drafts.begin(), s.num_drafts.end(), buf + l.drafts());
  buf[l.num_reqs()] = static_cast<int32_t>(live);
}

// The batch's tensors: slices of a packed buffer on `device`.
struct batch_views {
  cattn::tensor_view<const int32_t> num_scheduled_tokens, idx_mapping, num_draft_tokens, num_reqs;
};
batch_views slices(const int32_t* buf, const packed_layout& l, DLDevice device) {
  return {cattn::tensor_view<const int32_t>(buf + l.scheduled(), {l.rows}, device),
          cattn::tensor_view<const int32_t>(buf + l.idx(), {l.rows}, device),
          cattn::tensor_view<const int32_t>(buf + l.drafts(), {l.rows}, device),
          cattn::tensor_view<const int32_t>(buf + l.num_reqs(), {1}, device)};
}

/* ---- The host path ------------------------------------------------------------------------ */

// Every product of a step, at the device outputs' sizes, so the two compare as vectors.
struct step_products {
  std::vector<int32_t> query_start_loc, seq_lens, positions, num_computed_tokens;
  std::array<std::vector<int32_t>, kGroups> block_tables;
  std::array<std::vector<int64_t>, kGroups> slot_mappings;
  std::vector<int32_t> logits_indices, cu_num_logits, expanded_idx_mapping, expanded_local_pos,
      token_to_req_indices;
  std::vector<int64_t> counts;

  explicit step_products(int64_t rows)
      : query_start_loc(rows + 1), seq_lens(rows), positions(kMaxTokens),
        num_computed_tokens(rows), logits_indices(kMaxLogits), cu_num_logits(rows + 1),
        expanded_idx_mapping(kMaxLogits), expanded_local_pos(kMaxLogits),
        token_to_req_indices(kMaxTokens), counts(CATTN_STEP_NUM_COUNTS) {
    for (int g = 0; g < kGroups; ++g) {
      block_tables[g].resize(static_cast<size_t>(rows * kGroup[g].width()));
      slot_mappings[g].resize(kMaxTokens);
    }
  }
  int32_t total_tokens() const { return query_start_loc.back(); }
};

cattn::tensor_view<const int32_t> persistent_table(const persistent_state& st, int g) {
  return cattn::tensor_view(st.tables[g], {kPersistentRows, kGroup[g].width()});
}

cattn::slot_mapping_params slot_params(int g) {
  cattn::slot_mapping_params p;  // MRV2, one DCP rank: CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT
  p.block_size = kGroup[g].block_size;
  p.kernel_block_size = kGroup[g].kernel_block_size;
  return p;
}

// The counts the plan derives on the device, from the host products; the split from the host
// split of the live rows (entries of 1.1 products stay 0).
void host_counts(step_products& p, int64_t live) {
  int64_t max_q = 0, max_seq = 0;
  for (int64_t b = 0; b < live; ++b) {
    max_q = std::max<int64_t>(max_q, p.query_start_loc[b + 1] - p.query_start_loc[b]);
    max_seq = std::max<int64_t>(max_seq, p.seq_lens[b]);
  }
  cattn::split_options o;
  o.decode_threshold = kDecodeThreshold;
  const auto split = cattn::split_decodes_and_prefills(
      cattn::tensor_view(p.query_start_loc.data(), {live + 1}), o);
  p.counts[CATTN_STEP_COUNT_TOKENS] = p.total_tokens();
  p.counts[CATTN_STEP_COUNT_NUM_REQS] = live;
  p.counts[CATTN_STEP_COUNT_NUM_LOGITS] = p.cu_num_logits.back();
  p.counts[CATTN_STEP_COUNT_MAX_QUERY_LEN] = max_q;
  p.counts[CATTN_STEP_COUNT_MAX_SEQ_LEN] = max_seq;
  p.counts[CATTN_STEP_COUNT_SPLIT_DECODES] = split.num_decodes;
  p.counts[CATTN_STEP_COUNT_SPLIT_PREFILLS] = split.num_prefills;
  p.counts[CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS] = split.num_decode_tokens;
  p.counts[CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS] = split.num_prefill_tokens;
}

// The step's products from the stand-alone calls on host tensors. `gathered` holds each
// group's batch table as the last step left it: the gather keeps a live row's entries past its
// num_blocks as they are, on the device and here alike.
step_products host_products(const batch_views& v, int64_t rows, int64_t live,
                            const persistent_state& st,
                            std::array<std::vector<int32_t>, kGroups>& gathered) {
  step_products p(rows);
  cattn::prepare_pos_seq_lens(v.num_scheduled_tokens, v.idx_mapping, st.num_computed_tokens,
                              v.num_reqs,
                              {p.query_start_loc, p.seq_lens, p.positions, p.num_computed_tokens});
  for (int g = 0; g < kGroups; ++g) {
    std::copy_n(gathered[g].begin(), p.block_tables[g].size(), p.block_tables[g].begin());
    cattn::gather_block_tables(v.idx_mapping, v.num_reqs, persistent_table(st, g), st.num_blocks[g],
                               cattn::tensor_view(p.block_tables[g], {rows, kGroup[g].width()}));
    std::copy(p.block_tables[g].begin(), p.block_tables[g].end(), gathered[g].begin());
    cattn::compute_slot_mappings(slot_params(g), p.query_start_loc, v.num_reqs, p.positions,
                                 v.idx_mapping, persistent_table(st, g), p.slot_mappings[g]);
  }
  cattn::logits_outputs lo;
  lo.logits_indices = p.logits_indices;
  lo.cu_num_logits = p.cu_num_logits;
  lo.expanded_idx_mapping = p.expanded_idx_mapping;
  lo.expanded_local_pos = p.expanded_local_pos;
  cattn::combine_sampled_and_draft_tokens(p.query_start_loc, v.num_reqs, v.num_draft_tokens,
                                          v.idx_mapping, lo);
  // The 1.1 host call gives the live tokens' requests; the plan writes 0 past them.
  const auto t2r = cattn::token_to_req_indices<int32_t>(p.query_start_loc, p.total_tokens());
  std::copy(t2r.begin(), t2r.end(), p.token_to_req_indices.begin());
  host_counts(p, live);
  return p;
}

// The host products checked against the scheduler's numbers with plain arithmetic, and against
// the padding contract with cattn_step_batch_check on the host. Returns the problems found.
int check_consistency(const scheduled_step& s, const step_products& p, int64_t rows,
                      const persistent_state& st, int step) {
  int problems = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok && problems++ < 3) std::printf("step %d: host path inconsistent: %s\n", step, what);
  };
  const size_t live = s.rows.size();
  int64_t t = 0;
  for (size_t b = 0; b < live; ++b) {
    const int32_t row = s.rows[b], nct = st.num_computed_tokens[row], q = s.num_tokens[b];
    expect(p.query_start_loc[b] == t && p.seq_lens[b] == nct + q, "query_start_loc, seq_lens");
    for (int32_t j = 0; j < q; ++j, ++t) {
      const int64_t pos = nct + j;
      expect(p.positions[t] == pos, "positions");
      for (int g = 0; g < kGroups; ++g) {  // one DCP rank: table[row, pos / kbs] * kbs + offset
        const int64_t kbs = kGroup[g].kernel_block_size;
        const int64_t block = st.tables[g][row * kGroup[g].width() + pos / kbs];
        expect(p.slot_mappings[g][t] == block * kbs + pos % kbs, "slot_mappings");
      }
    }
    const int32_t logits = p.cu_num_logits[b + 1] - p.cu_num_logits[b];
    expect(logits == 1 + s.num_drafts[b], "cu_num_logits");
    expect(p.logits_indices[p.cu_num_logits[b]] == t - logits, "logits_indices");
  }
  for (int64_t b = static_cast<int64_t>(live); b < rows; ++b)
    expect(p.query_start_loc[b + 1] == t && p.seq_lens[b] == 0, "padded rows");
  // The padding contract, as the library itself checks it.
  const int64_t num_reqs = static_cast<int64_t>(live);
  cattn::step_check_inputs c;
  c.query_start_loc = p.query_start_loc;
  c.num_reqs = cattn::tensor_view<const int64_t>(&num_reqs, {1});
  c.seq_lens = p.seq_lens;
  for (int g = 0; g < kGroups; ++g) {
    c.block_tables[g] = cattn::tensor_view(p.block_tables[g], {rows, kGroup[g].width()});
    c.slot_mappings[g] = p.slot_mappings[g];
  }
  expect(cattn::step_batch_check(c).ok(), "cattn_step_batch_check");
  return problems;
}

/* ---- The GPU half ------------------------------------------------------------------------- */

#if defined(CATTN_EXAMPLE_WITH_CUDA)
#include <cuda_runtime_api.h>

void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e));
}
#define CUDA_CHECK(call) cuda_check((call), #call)

template <class T>
struct device_array {  // n zeroed elements of device memory
  T* p = nullptr;
  int64_t n;
  explicit device_array(int64_t count) : n(count) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), static_cast<size_t>(n) * sizeof(T)));
    CUDA_CHECK(cudaMemset(p, 0, static_cast<size_t>(n) * sizeof(T)));
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { cudaFree(p); }
  cattn::tensor_view<T> view(std::initializer_list<int64_t> shape, int dev) const {
    return cattn::tensor_view<T>(p, shape, cattn::cuda(dev));
  }
  void download(std::vector<T>& h, cudaStream_t s) const {  // the first h.size() elements
    CUDA_CHECK(cudaMemcpyAsync(h.data(), p, h.size() * sizeof(T), cudaMemcpyDeviceToHost, s));
  }
};

template <class T>
struct pinned_array {  // page-locked host memory: a cudaMemcpyAsync from it is truly async
  T* p = nullptr;
  explicit pinned_array(int64_t n) {
    CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), static_cast<size_t>(n) * sizeof(T)));
  }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;
  ~pinned_array() { cudaFreeHost(p); }
};

// Everything the GPU half holds: the persistent state on the device, the step-input buffers,
// the outputs (sized for the largest bucket; a bucket uses their first rows), and one captured
// graph per bucket.
class gpu_runner {
 public:
  gpu_runner() {
    CUDA_CHECK(cudaGetDevice(&dev_));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (int g = 0; g < kGroups; ++g) {
      tables_[g] = std::make_unique<device_array<int32_t>>(kPersistentRows * kGroup[g].width());
      num_blocks_[g] = std::make_unique<device_array<int32_t>>(kPersistentRows);
      out_tables_[g] = std::make_unique<device_array<int32_t>>(kMaxRows * kGroup[g].width());
      out_slots_[g] = std::make_unique<device_array<int64_t>>(kMaxTokens);
    }
  }
  ~gpu_runner() {
    for (auto& b : buckets_) {
      if (b.exec) cudaGraphExecDestroy(b.exec);
      if (b.graph) cudaGraphDestroy(b.graph);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }
  // The scheduler writes each step's numbers here, then one copy takes them to the device.
  int32_t* pinned_inputs() { return inputs_host_.p; }

  // Creates the bucket's plan and captures one run of it in a graph: the graph keeps the
  // buffers' addresses, so every later step only writes the buffers and replays.
  void capture(int64_t rows) {
    bucket& b = buckets_.emplace_back();
    b.rows = rows;
    b.plan = cattn::step_plan(plan_desc(rows));
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      b.plan.run(batch(rows), outputs(rows), stream_);  // checks, then one kernel recorded
    } catch (...) {
      (void)cudaStreamEndCapture(stream_, &b.graph);  // leave the stream usable, then report
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(stream_, &b.graph));
    CUDA_CHECK(cudaGraphInstantiate(&b.exec, b.graph, 0));
  }

  // One step on the device: the persistent state's changes and the step's numbers go up, the
  // bucket's graph replays, the batch check runs, and the products come back. Returns them.
  step_products run(const scheduled_step& s, int64_t rows, const persistent_state& st,
                    std::vector<int64_t>& status) {
    upload_state(s, st);
    const packed_layout l{rows};
    CUDA_CHECK(cudaMemcpyAsync(inputs_dev_.p, inputs_host_.p, l.size() * sizeof(int32_t),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaGraphLaunch(find(rows).exec, stream_));
    cattn::step_batch_check(check_inputs(rows), status_.view({3}, dev_), stream_);
    step_products p(rows);
    download(p);
    status_.download(status, stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // also frees the staging for the next step
    return p;
  }

 private:
  struct bucket {
    int64_t rows = 0;
    cattn::step_plan plan;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
  };
  bucket& find(int64_t rows) {
    for (auto& b : buckets_)
      if (b.rows == rows) return b;
    throw std::runtime_error("bucket not captured");
  }

  // An engine copies only what changed: every row's count (R ints) and blocks in use, and the
  // new table entries. Staged in pinned memory so the copies are asynchronous.
  void upload_state(const scheduled_step& s, const persistent_state& st) {
    staged_ = 0;
    stage(nct_.p, st.num_computed_tokens.data(), kPersistentRows);
    for (int g = 0; g < kGroups; ++g)
      stage(num_blocks_[g]->p, st.num_blocks[g].data(), kPersistentRows);
    for (const table_write& w : s.table_writes) {
      const int64_t at = w.row * kGroup[w.group].width() + w.first_col;
      stage(tables_[w.group]->p + at, st.tables[w.group].data() + at, w.count);
    }
  }
  void stage(int32_t* device_dst, const int32_t* src, int64_t n) {
    if (staged_ + n > kStaging) throw std::runtime_error("staging buffer full");
    std::memcpy(staging_.p + staged_, src, static_cast<size_t>(n) * sizeof(int32_t));
    CUDA_CHECK(cudaMemcpyAsync(device_dst, staging_.p + staged_,
                               static_cast<size_t>(n) * sizeof(int32_t), cudaMemcpyHostToDevice,
                               stream_));
    staged_ += n;
  }

  // The plan's inputs: the packed buffer's slices and the persistent state.
  cattn::step_batch batch(int64_t rows) const {
    const batch_views v = slices(inputs_dev_.p, packed_layout{rows}, cattn::cuda(dev_));
    cattn::step_batch b;
    b.num_scheduled_tokens = v.num_scheduled_tokens;
    b.idx_mapping = v.idx_mapping;
    b.num_draft_tokens = v.num_draft_tokens;
    b.num_reqs = v.num_reqs;
    b.num_computed_tokens = nct_.view({kPersistentRows}, dev_);
    for (int g = 0; g < kGroups; ++g) {
      b.kv_block_tables[g] = tables_[g]->view({kPersistentRows, kGroup[g].width()}, dev_);
      b.kv_num_blocks[g] = num_blocks_[g]->view({kPersistentRows}, dev_);
    }
    return b;
  }
  cattn::step_outputs outputs(int64_t rows) const {
    cattn::step_outputs o;
    o.query_start_loc = qsl_.view({rows + 1}, dev_);
    o.seq_lens = seq_.view({rows}, dev_);
    o.positions = pos_.view({kMaxTokens}, dev_);
    o.num_computed_tokens = out_nct_.view({rows}, dev_);
    for (int g = 0; g < kGroups; ++g) {
      o.block_tables[g] = out_tables_[g]->view({rows, kGroup[g].width()}, dev_);
      o.slot_mappings[g] = out_slots_[g]->view({kMaxTokens}, dev_);
    }
    o.logits_indices = logits_.view({kMaxLogits}, dev_);
    o.cu_num_logits = cu_logits_.view({rows + 1}, dev_);
    o.expanded_idx_mapping = expanded_idx_.view({kMaxLogits}, dev_);
    o.expanded_local_pos = expanded_pos_.view({kMaxLogits}, dev_);
    o.token_to_req_indices = t2r_.view({kMaxTokens}, dev_);
    o.counts = counts_.view({CATTN_STEP_NUM_COUNTS}, dev_);
    return o;
  }
  cattn::step_check_inputs check_inputs(int64_t rows) const {
    cattn::step_check_inputs c;
    c.query_start_loc = qsl_.view({rows + 1}, dev_);
    c.num_reqs = slices(inputs_dev_.p, packed_layout{rows}, cattn::cuda(dev_)).num_reqs;
    c.seq_lens = seq_.view({rows}, dev_);
    for (int g = 0; g < kGroups; ++g) {
      c.block_tables[g] = out_tables_[g]->view({rows, kGroup[g].width()}, dev_);
      c.slot_mappings[g] = out_slots_[g]->view({kMaxTokens}, dev_);
    }
    return c;
  }
  void download(step_products& p) const {
    qsl_.download(p.query_start_loc, stream_);
    seq_.download(p.seq_lens, stream_);
    pos_.download(p.positions, stream_);
    out_nct_.download(p.num_computed_tokens, stream_);
    for (int g = 0; g < kGroups; ++g) {
      out_tables_[g]->download(p.block_tables[g], stream_);
      out_slots_[g]->download(p.slot_mappings[g], stream_);
    }
    logits_.download(p.logits_indices, stream_);
    cu_logits_.download(p.cu_num_logits, stream_);
    expanded_idx_.download(p.expanded_idx_mapping, stream_);
    expanded_pos_.download(p.expanded_local_pos, stream_);
    t2r_.download(p.token_to_req_indices, stream_);
    counts_.download(p.counts, stream_);
  }

  // Per step at most: every row's count and blocks in use, and every table entry.
  static constexpr int64_t kStaging =
      kPersistentRows * (1 + kGroups + kGroup[0].width() + kGroup[1].width());
  int dev_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<bucket> buckets_;
  // Step inputs: one pinned buffer, one device buffer, the same layout.
  pinned_array<int32_t> inputs_host_{packed_layout{kMaxRows}.size()};
  device_array<int32_t> inputs_dev_{packed_layout{kMaxRows}.size()};
  // Persistent state and its pinned staging.
  device_array<int32_t> nct_{kPersistentRows};
  std::array<std::unique_ptr<device_array<int32_t>>, kGroups> tables_, num_blocks_;
  pinned_array<int32_t> staging_{kStaging};
  int64_t staged_ = 0;
  // Outputs.
  device_array<int32_t> qsl_{kMaxRows + 1}, seq_{kMaxRows}, pos_{kMaxTokens}, out_nct_{kMaxRows},
      logits_{kMaxLogits}, cu_logits_{kMaxRows + 1}, expanded_idx_{kMaxLogits},
      expanded_pos_{kMaxLogits}, t2r_{kMaxTokens};
  std::array<std::unique_ptr<device_array<int32_t>>, kGroups> out_tables_;
  std::array<std::unique_ptr<device_array<int64_t>>, kGroups> out_slots_;
  device_array<int64_t> counts_{CATTN_STEP_NUM_COUNTS}, status_{3};
};

// The products that differ, by name; 0 when the replay matched the host path.
int compare(const step_products& got, const step_products& want, const std::vector<int64_t>& status,
            int step) {
  std::vector<const char*> differ;
  auto same = [&](const auto& a, const auto& b, const char* name) {
    if (a != b) differ.push_back(name);
  };
  same(got.query_start_loc, want.query_start_loc, "query_start_loc");
  same(got.seq_lens, want.seq_lens, "seq_lens");
  same(got.positions, want.positions, "positions");
  same(got.num_computed_tokens, want.num_computed_tokens, "num_computed_tokens");
  for (int g = 0; g < kGroups; ++g) {
    same(got.block_tables[g], want.block_tables[g], g == 0 ? "block_tables[0]" : "block_tables[1]");
    same(got.slot_mappings[g], want.slot_mappings[g],
         g == 0 ? "slot_mappings[0]" : "slot_mappings[1]");
  }
  same(got.logits_indices, want.logits_indices, "logits_indices");
  same(got.cu_num_logits, want.cu_num_logits, "cu_num_logits");
  same(got.expanded_idx_mapping, want.expanded_idx_mapping, "expanded_idx_mapping");
  same(got.expanded_local_pos, want.expanded_local_pos, "expanded_local_pos");
  same(got.token_to_req_indices, want.token_to_req_indices, "token_to_req_indices");
  same(got.counts, want.counts, "counts");
  same(status, std::vector<int64_t>{0, 0, 0}, "cattn_step_batch_check status");
  for (const char* name : differ)
    std::printf("step %d: GPU %s differs from the host path\n", step, name);
  return static_cast<int>(differ.size());
}
#endif

/* ---- The loop ----------------------------------------------------------------------------- */

#if !defined(CATTN_EXAMPLE_WITH_CUDA)
class gpu_runner {};  // not built: the host half runs alone
#endif

// The GPU half, when this build and machine have one; otherwise why not.
std::unique_ptr<gpu_runner> start_gpu(std::string& skipped) {
#if defined(CATTN_EXAMPLE_WITH_CUDA)
  if (cattn::cuda_device_count() > 0) return std::make_unique<gpu_runner>();
  skipped = "no CUDA device found";
#else
  skipped = "this example was built without CUDA";
#endif
  return nullptr;
}

// A bucket's first step: its plan (and, with a GPU, its graph), one line printed.
void prepare_bucket(int64_t rows, int64_t live, int step, gpu_runner* gpu,
                    const std::string& skipped) {
  std::string how = "graph not captured (" + skipped + ")";
#if defined(CATTN_EXAMPLE_WITH_CUDA)
  if (gpu) {
    gpu->capture(rows);
    how = "graph captured";
  }
#endif
  if (!gpu) (void)cattn::step_plan(plan_desc(rows));  // plans need no GPU: checks the desc
  std::printf("step %d: bucket of %lld rows (%lld live): plan created, %s\n", step,
              static_cast<long long>(rows), static_cast<long long>(live), how.c_str());
}

int main() try {
  std::printf("libcattn %s\n", cattn::version_string());
  std::string skipped;
  const std::unique_ptr<gpu_runner> gpu = start_gpu(skipped);
  // The scheduler's numbers go into one buffer: pinned memory when the GPU half runs.
  std::vector<int32_t> packed_host(static_cast<size_t>(packed_layout{kMaxRows}.size()));
  int32_t* packed = packed_host.data();
#if defined(CATTN_EXAMPLE_WITH_CUDA)
  if (gpu) packed = gpu->pinned_inputs();
#endif

  scheduler sched;
  std::array<std::vector<int32_t>, kGroups> gathered;  // the batch tables the last step left
  for (int g = 0; g < kGroups; ++g)
    gathered[g].assign(static_cast<size_t>(kMaxRows * kGroup[g].width()), 0);
  std::vector<int64_t> buckets;
  int64_t tokens = 0;
  int problems = 0, mismatches = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const scheduled_step s = sched.next(step);
    const int64_t live = static_cast<int64_t>(s.rows.size());
    const int64_t rows = bucket_for(live);  // pad to the bucket: num_reqs = live
    if (std::find(buckets.begin(), buckets.end(), rows) == buckets.end()) {
      buckets.push_back(rows);
      prepare_bucket(rows, live, step, gpu.get(), skipped);
    }
    const packed_layout layout{rows};
    pack(s, layout, packed);
    const step_products want =
        host_products(slices(packed, layout, cattn::host()), rows, live, sched.state(), gathered);
    problems += check_consistency(s, want, rows, sched.state(), step);
#if defined(CATTN_EXAMPLE_WITH_CUDA)
    if (gpu) {
      std::vector<int64_t> status(3);
      const step_products got = gpu->run(s, rows, sched.state(), status);
      mismatches += compare(got, want, status, step);
    }
#endif
    tokens += want.total_tokens();
    sched.complete(s);
  }
  std::printf("host path: %d steps, %lld tokens, %zu buckets, %d inconsistencies\n", kSteps,
              static_cast<long long>(tokens), buckets.size(), problems);
  if (gpu)
    std::printf("GPU: %d steps, %lld tokens, %zu buckets, %d mismatches\n", kSteps,
                static_cast<long long>(tokens), buckets.size(), mismatches);
  else
    std::printf("GPU half skipped: %s\n", skipped.c_str());
  return problems == 0 && mismatches == 0 ? 0 : 1;
} catch (const std::exception& e) {  // cattn::error and CUDA failures
  std::fprintf(stderr, "step_loop: %s\n", e.what());
  return 1;
}
