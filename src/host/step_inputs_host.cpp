// SPDX-License-Identifier: Apache-2.0
// Host algorithm of the step inputs: the same products as kernels/step_inputs.cu, in two passes
// that run the same walk. The check pass computes every value and refuses one out of range; the
// write pass computes them again from the inputs, runs every check again and writes. Nothing is
// staged between the passes (promise 8: no allocation), and every element access goes through
// a bounded accessor: an input that changes between the passes (a caller's race, promise 5)
// gives other values or a failure, never an access outside a tensor. A refused batch leaves
// every output as it was.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "common/error.h"
#include "common/step_inputs.h"

namespace cattn {
namespace {

[[noreturn]] void refuse(const char* fn, const TensorArg& t, int64_t at, const std::string& what,
                         int64_t value, const std::string& want) {
  fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(), what.c_str(),
           "[" + std::to_string(at) + "] = " + std::to_string(value), want);
}

void require_room(const char* fn, const TensorArg* t, int64_t n, const char* total) {
  if (present(t) && t->size(0) < n)
    fail_arg(CATTN_INSUFFICIENT_SIZE, fn, t->name(),
             ("is shorter than the " + std::string(total)).c_str(), t->shape_string(),
             "at least " + std::to_string(n) + " elements");
}

void fits(const char* fn, const TensorArg* t, int64_t v) {
  if (present(t)) require_fits(fn, *t, v);
}

IndexReader reader_if(const TensorArg* t) { return present(t) ? reader1d(*t) : IndexReader{}; }
IndexWriter writer_if(const TensorArg* t, bool write) {
  return write && present(t) ? writer1d(*t) : IndexWriter{};
}

// One live batch row as the walk reads it.
struct Row {
  int64_t start = 0, end = 0;  // its tokens [start, end)
  int64_t r = -1;              // its persistent row (-1 without idx_mapping)
  int64_t nct = 0, seq = 0;    // num_computed_tokens and seq_len
  int64_t logits = 0, nb = 0;  // its first logit and its logit count
};

// Reads the live rows in order, each value once, refusing one out of range.
class Rows {
 public:
  Rows(const char* fn, const StepInputsTensors& t)
      : fn_(fn), t_(t), sched_(reader_if(t.num_scheduled)), qsl_(reader_if(t.given_qsl)),
        idx_(reader_if(t.idx_mapping)), comp_(reader_if(t.num_computed)),
        draft_(reader_if(t.num_draft)) {
    n_ = t.rows;
    if (present(t.num_reqs)) {
      n_ = reader1d(*t.num_reqs)[0];
      if (n_ < 0 || n_ > t.rows)
        refuse(fn, *t.num_reqs, 0, "is out of range", n_,
               "in [0, B = " + std::to_string(t.rows) + "]");
    }
    if (present(t.given_qsl) && !present(t.num_scheduled)) {
      end_ = qsl_[0];
      if (end_ != 0) refuse(fn, *t.given_qsl, 0, "does not start at 0", end_, "0");
    }
  }
  int64_t live() const { return n_; }
  int64_t total() const { return end_; }         // after the last row: the tokens
  int64_t logits_total() const { return cul_; }  // and the logits

  Row next() {
    Row w;
    const int64_t b = b_++;
    w.start = end_;
    if (present(t_.num_scheduled)) {
      const int64_t v = sched_[b];
      if (v < 0) refuse(fn_, *t_.num_scheduled, b, "is negative", v, ">= 0");
      w.end = checked_add(fn_, "the scheduled tokens' total", w.start, v);
    } else if (present(t_.given_qsl)) {
      w.end = qsl_[b + 1];
      if (w.end < w.start)
        refuse(fn_, *t_.given_qsl, b + 1, "decreases", w.end, ">= " + std::to_string(w.start));
    } else {
      w.end = w.start;
    }
    end_ = w.end;
    if (present(t_.idx_mapping)) {
      w.r = idx_[b];
      if (w.r < 0 || w.r >= t_.persistent_rows)
        refuse(fn_, *t_.idx_mapping, b, "names no persistent row", w.r,
               "in [0, " + std::to_string(t_.persistent_rows) + ")");
      if (present(t_.num_computed)) {
        w.nct = comp_[w.r];
        if (w.nct < 0) refuse(fn_, *t_.num_computed, w.r, "is negative", w.nct, ">= 0");
      }
    }
    w.seq = checked_add(fn_, "args->num_computed_tokens: a count + the query", w.nct,
                        w.end - w.start);
    if (t_.logits) {
      const int64_t drafts = present(t_.num_draft) ? draft_[b] : 0;
      if (drafts < 0) refuse(fn_, *t_.num_draft, b, "is negative", drafts, ">= 0");
      w.nb = checked_add(fn_, "a row's logits", t_.new_sampled, drafts);
      w.logits = cul_;
      cul_ = checked_add(fn_, "the logits' total", cul_, w.nb);
    }
    return w;
  }

 private:
  const char* fn_;
  const StepInputsTensors& t_;
  IndexReader sched_, qsl_, idx_, comp_, draft_;
  int64_t n_ = 0, b_ = 0, end_ = 0, cul_ = 0;
};

// The slot of `pos` for batch row b / persistent row r, or -1; refuses a position, a column or
// a block the slot cannot be formed from.
int64_t slot_of(const char* fn, const StepInputsTensors& t, const StepInputsGroup& g,
                int64_t pos, int64_t b, int64_t r, int64_t token) {
  if (pos < 0) {  // a given position only: vLLM computes a slot from the wrong block
    if (present(t.given_positions))
      refuse(fn, *t.given_positions, token, "is negative", pos, ">= 0");
    return -1;
  }
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
  const int64_t block = reader_row(*g.table, row)[col];
  int64_t slot;
  if (block < 0 || __builtin_mul_overflow(block, kbs, &slot) ||
      __builtin_add_overflow(slot, off, &slot))
    fail_arg(CATTN_INVALID_ARGUMENT, fn, g.table->name(), "holds a block without a slot",
             "[" + std::to_string(row) + ", " + std::to_string(col) + "] = " +
                 std::to_string(block) + " for token " + std::to_string(token),
             "a block id >= 0 whose slot (block x " + std::to_string(kbs) + " + " +
                 std::to_string(off) + ") fits int64");
  return slot;
}

bool has_tokens(const StepInputsTensors& t) {
  return present(t.positions) || present(t.token_to_req) ||
         std::any_of(t.groups, t.groups + t.num_groups,
                     [](const StepInputsGroup& g) { return present(g.slots); });
}

// The room the per-token and per-logit outputs need: a first read of the rows.
void check_room(const char* fn, const StepInputsTensors& t) {
  Rows rows(fn, t);
  for (int64_t b = 0; b < rows.live(); ++b) rows.next();
  if (has_tokens(t)) {
    const int64_t total = rows.total();
    require_room(fn, t.positions, total, "live total");
    require_room(fn, t.token_to_req, total, "live total");
    require_room(fn, t.given_positions, total, "live total");
    for (int g = 0; g < t.num_groups; ++g) require_room(fn, t.groups[g].slots, total, "live total");
  }
  if (t.logits)
    for (const TensorArg* o : {t.logits_indices, t.expanded_idx, t.expanded_pos})
      require_room(fn, o, rows.logits_total(), "total logits");
}

// A live row's token ids (the token combination), as vLLM places them: its drafts in its last
// drafts tokens and, when its first logit is past the prompt, its last sampled token before
// them; entries outside input_ids are skipped (the loops cover only those inside).
void combine_row(const char* fn, const StepInputsTensors& t, const Row& w, int64_t b,
                 bool write) {
  const int64_t drafts = w.nb - t.new_sampled;
  if (drafts > t.draft_tokens->size(1))
    refuse(fn, *t.num_draft, b, "exceeds draft_tokens' columns", drafts,
           "<= " + std::to_string(t.draft_tokens->size(1)));
  const int64_t seq_len = reader1d(*t.comb_seq_lens)[b];
  const int64_t prefill = reader1d(*t.prefill_len)[w.r];
  if (seq_len <= prefill) return;
  const TensorArg& ids = *t.input_ids;
  const IndexWriter out = writer_if(&ids, write);
  const int64_t size = ids.size(0), end = w.end;
  const int64_t first = end - w.nb;
  if (t.new_sampled > 0 && static_cast<__int128>(seq_len) - w.nb >= prefill && first >= 0 &&
      first < size) {
    const int64_t id = reader1d(*t.last_sampled)[w.r];
    write ? out.set(first, id) : require_fits(fn, ids, id);
  }
  const IndexReader dt = reader_row(*t.draft_tokens, w.r);
  const int64_t at = end - drafts;  // the first draft's entry
  for (int64_t k = std::max<int64_t>(0, -at); k < drafts && at + k < size; ++k)
    write ? out.set(at + k, dt[k]) : require_fits(fn, ids, dt[k]);
}

// The shortest of the given outputs (or inputs) a row's entries go to, or NULL.
const TensorArg* shortest(std::initializer_list<const TensorArg*> ts) {
  const TensorArg* s = nullptr;
  for (const TensorArg* t : ts)
    if (present(t) && (s == nullptr || t->size(0) < s->size(0))) s = t;
  return s;
}

// One pass: every product of every live row, then the padding.
void walk(const char* fn, const StepInputsTensors& t, bool write) {
  const int64_t B = t.rows;
  Rows rows(fn, t);
  const int64_t n = rows.live();
  const bool tokens = has_tokens(t);
  // check_room measured the rows in a read of their own; a row read again here may have grown
  // (promise 5), so each row's end is held to the room again before its entries are walked
  // (the check pass writes nothing that would stop a longer walk).
  const TensorArg* token_room = shortest({t.positions, t.token_to_req, t.given_positions});
  for (int g = 0; g < t.num_groups; ++g) token_room = shortest({token_room, t.groups[g].slots});
  const TensorArg* logit_room = shortest({t.logits_indices, t.expanded_idx, t.expanded_pos});
  const IndexReader given_pos =
      !present(t.num_scheduled) ? reader_if(t.given_positions) : IndexReader{};
  const IndexWriter qsl = writer_if(t.qsl, write), seq = writer_if(t.seq_lens, write);
  const IndexWriter nct = writer_if(t.batch_num_computed, write);
  const IndexWriter pos = writer_if(t.positions, write), req = writer_if(t.token_to_req, write);
  const IndexWriter cul = writer_if(t.cu_num_logits, write);
  const IndexWriter li = writer_if(t.logits_indices, write);
  const IndexWriter ei = writer_if(t.expanded_idx, write), ep = writer_if(t.expanded_pos, write);
  IndexWriter slots[CATTN_MAX_KV_GROUPS];
  for (int g = 0; g < t.num_groups; ++g) slots[g] = writer_if(t.groups[g].slots, write);
  const bool per_logit = t.logits && (present(t.logits_indices) || present(t.expanded_idx) ||
                                      present(t.expanded_pos));
  if (write && present(t.qsl)) qsl.set(0, 0);
  if (write && t.logits && present(t.cu_num_logits)) cul.set(0, 0);
  if (n > 0) fits(fn, t.token_to_req, n - 1);
  for (int64_t b = 0; b < n; ++b) {
    const Row w = rows.next();
    if (tokens && token_room && w.end > token_room->size(0))
      fail_index(token_room, w.end - 1, token_room->size(0));
    if (t.logits && logit_room && w.logits + w.nb > logit_room->size(0))
      fail_index(logit_room, w.logits + w.nb - 1, logit_room->size(0));
    if (write) {
      if (present(t.qsl)) qsl.set(b + 1, w.end);
      if (present(t.seq_lens)) seq.set(b, w.seq);
      if (present(t.batch_num_computed)) nct.set(b, w.nct);
      if (t.logits && present(t.cu_num_logits)) cul.set(b + 1, w.logits + w.nb);
    } else {
      fits(fn, t.qsl, w.end);
      fits(fn, t.seq_lens, w.seq);
      fits(fn, t.batch_num_computed, w.nct);
      if (t.logits) fits(fn, t.cu_num_logits, w.logits + w.nb);
    }
    // Tokens: positions (nct + j, or the given ones), the token map and every group's slots.
    for (int64_t i = w.start; tokens && i < w.end; ++i) {
      const int64_t p = present(t.given_positions) && !present(t.num_scheduled)
                            ? given_pos[i]
                            : w.nct + (i - w.start);
      if (present(t.positions)) write ? pos.set(i, p) : require_fits(fn, *t.positions, p);
      if (write && present(t.token_to_req)) req.set(i, b);
      for (int g = 0; g < t.num_groups; ++g) {
        const StepInputsGroup& grp = t.groups[g];
        if (!present(grp.slots)) continue;
        const int64_t slot = slot_of(fn, t, grp, p, b, w.r, i);
        if (write) slots[g].set(i, slot);
      }
    }
    // Gathered tables: the row's entries in use.
    for (int g = 0; g < t.num_groups; ++g) {
      const StepInputsGroup& grp = t.groups[g];
      if (!present(grp.gathered)) continue;
      const int64_t W = grp.table->size(1);
      int64_t count = W;
      if (present(grp.num_blocks)) {
        count = reader1d(*grp.num_blocks)[w.r];
        if (count < 0 || count > W)
          refuse(fn, *grp.num_blocks, w.r, "is out of range", count,
                 "in [0, " + std::to_string(W) + "] (the table's width)");
      }
      const IndexReader src = reader_row(*grp.table, w.r);
      const IndexWriter dst = write ? writer_row(*grp.gathered, b) : IndexWriter{};
      for (int64_t c = 0; c < count; ++c)
        write ? dst.set(c, src[c]) : require_fits(fn, *grp.gathered, src[c]);
    }
    // Logits: the last nb tokens of the row's query.
    for (int64_t j = 0; per_logit && j < w.nb; ++j) {
      const int64_t k = w.logits + j, index = w.end - w.nb + j, row = w.r < 0 ? 0 : w.r;
      if (!write) {
        fits(fn, t.logits_indices, index);
        fits(fn, t.expanded_idx, row);
        fits(fn, t.expanded_pos, j);
        continue;
      }
      if (present(t.logits_indices)) li.set(k, index);
      if (present(t.expanded_idx)) ei.set(k, row);
      if (present(t.expanded_pos)) ep.set(k, j);
    }
    if (present(t.input_ids)) combine_row(fn, t, w, b, write);
  }
  if (!write) return;
  // Padding: rows from n on and entries past the live totals.
  for (int64_t b = n; b < B; ++b) {
    if (present(t.qsl)) qsl.set(b + 1, rows.total());
    if (present(t.seq_lens)) seq.set(b, 0);
    if (present(t.batch_num_computed)) nct.set(b, 0);
    if (t.logits && present(t.cu_num_logits)) cul.set(b + 1, rows.logits_total());
    for (int g = 0; g < t.num_groups; ++g)
      if (present(t.groups[g].gathered)) {
        const IndexWriter dst = writer_row(*t.groups[g].gathered, b);
        for (int64_t c = 0; c < t.groups[g].gathered->size(1); ++c) dst.set(c, 0);
      }
  }
  auto pad = [](const TensorArg* o, const IndexWriter& w, int64_t from, int64_t v) {
    if (present(o))
      for (int64_t i = from; i < o->size(0); ++i) w.set(i, v);
  };
  if (tokens) {
    pad(t.positions, pos, rows.total(), 0);
    pad(t.token_to_req, req, rows.total(), 0);
    for (int g = 0; g < t.num_groups; ++g) pad(t.groups[g].slots, slots[g], rows.total(), -1);
  }
  if (t.logits) {
    pad(t.logits_indices, li, rows.logits_total(), 0);
    pad(t.expanded_idx, ei, rows.logits_total(), 0);
    pad(t.expanded_pos, ep, rows.logits_total(), 0);
  }
}

}  // namespace

StepInputsTotals step_inputs_totals(const char* fn, const StepInputsTensors& t) {
  Rows rows(fn, t);
  for (int64_t b = 0; b < rows.live(); ++b) rows.next();
  return {rows.total(), t.logits ? rows.logits_total() : 0};
}

void step_inputs_host(const char* fn, const StepInputsTensors& t) {
  // The room is measured once: the write pass holds each row to it again as it walks.
  check_room(fn, t);
  walk(fn, t, false);
  walk(fn, t, true);
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
  int64_t lo = q[0], total = lo;
  if (lo != 0) report(CATTN_STEP_CHECK_QUERY_START_LOC, 0, 0);
  const IndexReader sl = reader_if(t.seq_lens);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t hi = q[b + 1];
    if (b < n ? hi < lo : hi != lo) report(CATTN_STEP_CHECK_QUERY_START_LOC, b + 1, 0);
    // In 128 bits: hi - lo of hostile entries passes int64.
    if (present(t.seq_lens) &&
        (b < n ? static_cast<__int128>(sl[b]) < static_cast<__int128>(hi) - lo : sl[b] != 0))
      report(CATTN_STEP_CHECK_SEQ_LENS, b, 0);
    if (b + 1 == n) total = hi;  // the live total, as read once
    lo = hi;
  }
  for (int g = 0; g < CATTN_MAX_KV_GROUPS; ++g) {
    if (present(t.tables[g]))
      for (int64_t b = n; b < std::min(B, t.tables[g]->size(0)); ++b) {
        const IndexReader row = reader_row(*t.tables[g], b);
        for (int64_t c = 0; c < t.tables[g]->size(1); ++c)
          if (row[c] != 0) report(CATTN_STEP_CHECK_BLOCK_TABLE, b, g);
      }
    if (present(t.slots[g])) {
      const IndexReader s = reader1d(*t.slots[g]);
      const int64_t size = t.slots[g]->size(0);
      for (int64_t i = 0; i < size; ++i)
        if (i >= total ? s[i] != -1 : s[i] < -1) report(CATTN_STEP_CHECK_SLOT_MAPPING, i, g);
      // A mapping shorter than the live total leaves its last tokens without a slot.
      if (size < total) report(CATTN_STEP_CHECK_SLOT_MAPPING, size, g);
    }
  }
  const IndexWriter w = writer1d(*t.status);
  w.set(0, field);
  w.set(1, index);
  w.set(2, group);
}

}  // namespace cattn
