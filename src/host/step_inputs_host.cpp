// SPDX-License-Identifier: Apache-2.0
// Host algorithm of the step inputs: the same products as kernels/step_inputs.cu, computed in
// two passes - every value is read and checked into local vectors first, and only then are the
// outputs written, so a refused batch leaves every output as it was.
#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/step_inputs.h"

namespace cattn {
namespace {

[[noreturn]] void refuse(const char* fn, const TensorArg& t, int64_t at, const std::string& what,
                         int64_t value, const std::string& want) {
  fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(), what.c_str(),
           "[" + std::to_string(at) + "] = " + std::to_string(value), want);
}

void require_room(const char* fn, const TensorArg* t, int64_t n) {
  if (present(t) && t->size(0) < n)
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn, t->name(), "is shorter than the live total",
             t->shape_string(), "at least " + std::to_string(n) + " elements");
}

void write_fitting(const char* fn, const TensorArg* t, const std::vector<int64_t>& v) {
  if (!present(t)) return;
  for (int64_t x : v) require_fits(fn, *t, x);
}

// The slot of `pos` for batch row b / persistent row r, or -1; refuses a column past the table.
int64_t slot_of(const char* fn, const StepInputsTensors& t, const StepInputsGroup& g,
                int64_t pos, int64_t b, int64_t r, int64_t token) {
  if (pos < 0) return -1;
  const int64_t row = g.v1 ? b : r;
  if (row < 0) return -1;
  const int64_t D = t.dcp_size, I = t.dcp_interleave, kbs = g.kernel_block_size;
  int64_t col, off;
  if (g.v1) {
    const int64_t V = g.block_size * D;
    const int64_t vbi = pos / V, vbo = pos % V;
    if ((vbo / I) % D != t.dcp_rank) return -1;
    const int64_t lbo = (vbo / (D * I)) * I + vbo % I;
    col = vbi * (g.block_size / kbs) + lbo / kbs;
    off = lbo % kbs;
  } else {
    const int64_t V = kbs * D;
    const int64_t o = pos % V;
    if ((o / I) % D != t.dcp_rank) return -1;
    col = pos / V;
    off = (o / (I * D)) * I + o % I;
  }
  if (row >= g.table->size(0) || col >= g.table->size(1))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, g.table->name(), "has no column for a token",
             "token " + std::to_string(token) + " at position " + std::to_string(pos) +
                 " -> row " + std::to_string(row) + ", column " + std::to_string(col),
             "a table with column " + std::to_string(col) + " (vLLM reads past it)");
  const IndexReader rd = reader_row(*g.table, row);
  return static_cast<int64_t>(static_cast<uint64_t>(rd[col]) * static_cast<uint64_t>(kbs) +
                              static_cast<uint64_t>(off));
}

}  // namespace

void step_inputs_host(const char* fn, const StepInputsTensors& t) {
  const int64_t B = t.rows, R = t.persistent_rows;
  int64_t n = B;
  if (present(t.num_reqs)) {
    n = reader1d(*t.num_reqs)[0];
    if (n < 0 || n > B) refuse(fn, *t.num_reqs, 0, "is out of range", n, "in [0, B = " + std::to_string(B) + "]");
  }
  // query_start_loc.
  std::vector<int64_t> s(static_cast<size_t>(B) + 1, 0);
  if (present(t.num_scheduled)) {
    const IndexReader q = reader1d(*t.num_scheduled);
    for (int64_t b = 0; b < n; ++b) {
      const int64_t v = q[b];
      if (v < 0) refuse(fn, *t.num_scheduled, b, "is negative", v, ">= 0");
      s[b + 1] = checked_add(fn, "the scheduled tokens' total", s[b], v);
    }
  } else if (present(t.given_qsl)) {
    const IndexReader q = reader1d(*t.given_qsl);
    for (int64_t b = 0; b <= n; ++b) {
      s[b] = q[b];
      if (b == 0 ? s[b] != 0 : s[b] < s[b - 1])
        refuse(fn, *t.given_qsl, b, b == 0 ? "does not start at 0" : "decreases", s[b],
               b == 0 ? "0" : ">= " + std::to_string(s[b - 1]));
    }
  }
  for (int64_t b = n; b < B; ++b) s[b + 1] = s[n];
  const int64_t total = s[n];
  // Persistent rows of the live rows.
  std::vector<int64_t> rows(static_cast<size_t>(n), -1);
  if (present(t.idx_mapping)) {
    const IndexReader idx = reader1d(*t.idx_mapping);
    for (int64_t b = 0; b < n; ++b) {
      rows[b] = idx[b];
      if (rows[b] < 0 || rows[b] >= R)
        refuse(fn, *t.idx_mapping, b, "names no persistent row", rows[b],
               "in [0, " + std::to_string(R) + ")");
    }
  }
  std::vector<int64_t> nct(static_cast<size_t>(B), 0);
  if (present(t.num_computed) && present(t.idx_mapping)) {
    const IndexReader c = reader1d(*t.num_computed);
    for (int64_t b = 0; b < n; ++b) nct[b] = c[rows[b]];
  }
  // seq_lens; the positions stay below them, so this check covers theirs too.
  std::vector<int64_t> seq(static_cast<size_t>(B), 0);
  for (int64_t b = 0; b < n; ++b)
    seq[b] = checked_add(fn, "args->num_computed_tokens: a count + the query", nct[b],
                         s[b + 1] - s[b]);
  // Per-token products.
  const bool tokens = present(t.positions) || present(t.token_to_req) ||
                      std::any_of(t.groups, t.groups + t.num_groups,
                                  [](const StepInputsGroup& g) { return present(g.slots); });
  std::vector<int64_t> pos, req;
  std::vector<std::vector<int64_t>> slots(static_cast<size_t>(t.num_groups));
  if (tokens) {
    require_room(fn, t.positions, total);
    require_room(fn, t.token_to_req, total);
    require_room(fn, t.given_positions, total);
    for (int g = 0; g < t.num_groups; ++g) require_room(fn, t.groups[g].slots, total);
    pos.assign(static_cast<size_t>(total), 0);
    req.assign(static_cast<size_t>(total), 0);
    const bool given = !present(t.num_scheduled) && present(t.given_positions);
    const IndexReader gp = given ? reader1d(*t.given_positions) : IndexReader{nullptr, 0, false};
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = s[b]; i < s[b + 1]; ++i) {
        req[i] = b;
        pos[i] = given ? gp[i] : nct[b] + (i - s[b]);
      }
    for (int g = 0; g < t.num_groups; ++g) {
      const StepInputsGroup& grp = t.groups[g];
      if (!present(grp.slots)) continue;
      require_room(fn, grp.slots, total);
      std::vector<int64_t>& out = slots[g];
      out.assign(static_cast<size_t>(grp.slots->size(0)), -1);
      for (int64_t i = 0; i < total; ++i)
        out[i] = slot_of(fn, t, grp, pos[i], req[i], rows.empty() ? -1 : rows[req[i]], i);
    }
  }
  // Gathered tables: the live rows' entries in use, padded rows all zero.
  std::vector<std::vector<int64_t>> gathered(static_cast<size_t>(t.num_groups));
  for (int g = 0; g < t.num_groups; ++g) {
    const StepInputsGroup& grp = t.groups[g];
    if (!present(grp.gathered)) continue;
    const int64_t W = grp.table->size(1);
    const IndexReader nb = present(grp.num_blocks) ? reader1d(*grp.num_blocks)
                                                   : IndexReader{nullptr, 0, false};
    std::vector<int64_t>& counts = gathered[g];
    counts.assign(static_cast<size_t>(n), W);
    for (int64_t b = 0; b < n; ++b)
      if (present(grp.num_blocks)) {
        counts[b] = nb[rows[b]];
        if (counts[b] < 0 || counts[b] > W)
          refuse(fn, *grp.num_blocks, rows[b], "is out of range", counts[b],
                 "in [0, " + std::to_string(W) + "] (the table's width)");
      }
    if (!grp.table->is_int64() || grp.gathered->is_int64()) continue;
    for (int64_t b = 0; b < n; ++b) {
      const IndexReader src = reader_row(*grp.table, rows[b]);
      for (int64_t c = 0; c < counts[b]; ++c) require_fits(fn, *grp.gathered, src[c]);
    }
  }
  // Logits and the token combination.
  std::vector<int64_t> cul;
  if (t.logits) {
    cul.assign(static_cast<size_t>(B) + 1, 0);
    const IndexReader d = present(t.num_draft) ? reader1d(*t.num_draft)
                                               : IndexReader{nullptr, 0, false};
    for (int64_t b = 0; b < n; ++b) {
      const int64_t drafts = present(t.num_draft) ? d[b] : 0;
      if (drafts < 0) refuse(fn, *t.num_draft, b, "is negative", drafts, ">= 0");
      cul[b + 1] = checked_add(fn, "the logits' total", cul[b],
                               checked_add(fn, "a row's logits", t.new_sampled, drafts));
    }
    for (int64_t b = n; b < B; ++b) cul[b + 1] = cul[n];
    require_room(fn, t.logits_indices, cul[n]);
    require_room(fn, t.expanded_idx, cul[n]);
    require_room(fn, t.expanded_pos, cul[n]);
    if (present(t.draft_tokens) && present(t.input_ids))
      for (int64_t b = 0; b < n; ++b) {
        const int64_t drafts = cul[b + 1] - cul[b] - t.new_sampled;
        if (drafts > t.draft_tokens->size(1))
          refuse(fn, *t.num_draft, b, "exceeds draft_tokens' columns", drafts,
                 "<= " + std::to_string(t.draft_tokens->size(1)));
      }
  }

  // The token ids the combination writes must fit input_ids (promise 2).
  if (present(t.input_ids) && !t.input_ids->is_int64()) {
    const IndexReader sl = reader1d(*t.comb_seq_lens), pl = reader1d(*t.prefill_len);
    const IndexReader last = reader1d(*t.last_sampled);
    const int64_t size = t.input_ids->size(0);
    for (int64_t b = 0; b < n; ++b) {  // the entries the write below makes, as it makes them
      const int64_t r = rows[b], nb = cul[b + 1] - cul[b], end = s[b + 1];
      if (sl[b] <= pl[r]) continue;
      if (t.new_sampled > 0 && static_cast<__int128>(sl[b]) - nb >= pl[r] && end - nb >= 0 &&
          end - nb < size)
        require_fits(fn, *t.input_ids, last[r]);
      const int64_t drafts = nb - t.new_sampled;
      const IndexReader dt = reader_row(*t.draft_tokens, r);
      for (int64_t k = 0; k < drafts; ++k)
        if (end - drafts + k >= 0 && end - drafts + k < size)
          require_fits(fn, *t.input_ids, dt[k]);
    }
  }

  // Checks done: fit the values to the outputs' dtypes, then write.
  write_fitting(fn, t.qsl, s);
  write_fitting(fn, t.seq_lens, seq);
  write_fitting(fn, t.batch_num_computed, nct);
  write_fitting(fn, t.positions, pos);
  write_fitting(fn, t.cu_num_logits, cul);
  std::vector<int64_t> li, ei, ep;
  if (t.logits) {
    const int64_t cap = std::max({present(t.logits_indices) ? t.logits_indices->size(0) : 0,
                                  present(t.expanded_idx) ? t.expanded_idx->size(0) : 0,
                                  present(t.expanded_pos) ? t.expanded_pos->size(0) : 0});
    li.assign(static_cast<size_t>(cap), 0), ei = li, ep = li;
    const IndexReader idx = present(t.idx_mapping) ? reader1d(*t.idx_mapping)
                                                   : IndexReader{nullptr, 0, false};
    for (int64_t b = 0; b < n; ++b) {
      const int64_t nb = cul[b + 1] - cul[b];
      for (int64_t j = 0; j < nb; ++j) {
        li[cul[b] + j] = s[b + 1] - nb + j;
        ei[cul[b] + j] = present(t.idx_mapping) ? idx[b] : 0;
        ep[cul[b] + j] = j;
      }
    }
    for (const TensorArg* o : {t.logits_indices, t.expanded_idx, t.expanded_pos}) {
      if (!present(o)) continue;
      const std::vector<int64_t>& v = o == t.logits_indices ? li : (o == t.expanded_idx ? ei : ep);
      for (int64_t k = 0; k < o->size(0); ++k) require_fits(fn, *o, v[k]);
    }
  }
  auto put = [](const TensorArg* o, const std::vector<int64_t>& v, int64_t count) {
    if (!present(o)) return;
    const IndexWriter w = writer1d(*o);
    for (int64_t i = 0; i < count; ++i) w.set(i, v[i]);
  };
  put(t.qsl, s, B + 1);
  put(t.seq_lens, seq, B);
  put(t.batch_num_computed, nct, B);
  if (tokens) {
    for (const TensorArg* o : {t.positions, t.token_to_req}) {
      if (!present(o)) continue;
      const IndexWriter w = writer1d(*o);
      const std::vector<int64_t>& v = o == t.positions ? pos : req;
      for (int64_t i = 0; i < o->size(0); ++i) w.set(i, i < total ? v[i] : 0);
    }
    for (int g = 0; g < t.num_groups; ++g)
      put(t.groups[g].slots, slots[g], present(t.groups[g].slots) ? t.groups[g].slots->size(0) : 0);
  }
  for (int g = 0; g < t.num_groups; ++g) {
    const StepInputsGroup& grp = t.groups[g];
    if (!present(grp.gathered)) continue;
    const int64_t W = grp.gathered->size(1);
    for (int64_t b = 0; b < B; ++b) {
      const IndexWriter dst = writer_row(*grp.gathered, b);
      if (b >= n) {
        for (int64_t c = 0; c < W; ++c) dst.set(c, 0);
        continue;
      }
      const IndexReader src = reader_row(*grp.table, rows[b]);
      for (int64_t c = 0; c < gathered[g][b]; ++c) dst.set(c, src[c]);
    }
  }
  if (t.logits) {
    put(t.cu_num_logits, cul, B + 1);
    put(t.logits_indices, li, present(t.logits_indices) ? t.logits_indices->size(0) : 0);
    put(t.expanded_idx, ei, present(t.expanded_idx) ? t.expanded_idx->size(0) : 0);
    put(t.expanded_pos, ep, present(t.expanded_pos) ? t.expanded_pos->size(0) : 0);
  }
  if (present(t.input_ids)) {
    const IndexReader sl = reader1d(*t.comb_seq_lens), pl = reader1d(*t.prefill_len);
    const IndexReader last = reader1d(*t.last_sampled);
    const IndexWriter ids = writer1d(*t.input_ids);
    const int64_t size = t.input_ids->size(0);
    for (int64_t b = 0; b < n; ++b) {
      const int64_t r = rows[b], nb = cul[b + 1] - cul[b], seq_len = sl[b], prefill = pl[r];
      if (seq_len <= prefill) continue;
      const int64_t end = s[b + 1];
      if (t.new_sampled > 0 && static_cast<__int128>(seq_len) - nb >= prefill && end - nb >= 0 &&
          end - nb < size)
        ids.set(end - nb, last[r]);
      const int64_t drafts = nb - t.new_sampled;
      const IndexReader dt = reader_row(*t.draft_tokens, r);
      for (int64_t k = 0; k < drafts; ++k)
        if (end - drafts + k >= 0 && end - drafts + k < size) ids.set(end - drafts + k, dt[k]);
    }
  }
}

void step_batch_check_host(const StepBatchCheckTensors& t) {
  const IndexReader q = reader1d(*t.query_start_loc);
  const int64_t B = t.query_start_loc->size(0) - 1;
  int field = 0;
  int64_t index = 0;
  int group = 0;
  auto report = [&](int f, int64_t i, int g) {
    if (field == 0 || f < field || (f == field && (i < index || (i == index && g < group))))
      field = f, index = i, group = g;
  };
  int64_t n = B;
  if (present(t.num_reqs)) {
    const int64_t v = reader1d(*t.num_reqs)[0];
    if (v < 0 || v > B) report(CATTN_STEP_CHECK_NUM_REQS, 0, 0);
    n = std::clamp<int64_t>(v, 0, B);
  }
  if (q[0] != 0) report(CATTN_STEP_CHECK_QUERY_START_LOC, 0, 0);
  const IndexReader sl = present(t.seq_lens) ? reader1d(*t.seq_lens) : IndexReader{nullptr, 0, false};
  for (int64_t b = 0; b < B; ++b) {
    const int64_t lo = q[b], hi = q[b + 1];
    if (b < n ? hi < lo : hi != lo) report(CATTN_STEP_CHECK_QUERY_START_LOC, b + 1, 0);
    // In 128 bits: hi - lo of hostile entries passes int64.
    if (present(t.seq_lens) &&
        (b < n ? static_cast<__int128>(sl[b]) < static_cast<__int128>(hi) - lo : sl[b] != 0))
      report(CATTN_STEP_CHECK_SEQ_LENS, b, 0);
  }
  const int64_t total = q[n];
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    if (present(t.tables[g]))
      for (int64_t b = n; b < std::min(B, t.tables[g]->size(0)); ++b) {
        const IndexReader row = reader_row(*t.tables[g], b);
        for (int64_t c = 0; c < t.tables[g]->size(1); ++c)
          if (row[c] != 0) report(CATTN_STEP_CHECK_BLOCK_TABLE, b, g);
      }
    if (present(t.slots[g])) {
      const IndexReader s = reader1d(*t.slots[g]);
      for (int64_t i = 0; i < t.slots[g]->size(0); ++i)
        if (i >= total ? s[i] != -1 : s[i] < -1) report(CATTN_STEP_CHECK_SLOT_MAPPING, i, g);
    }
  }
  const IndexWriter w = writer1d(*t.status);
  w.set(0, field);
  w.set(1, index);
  w.set(2, group);
}

}  // namespace cattn
