// SPDX-License-Identifier: Apache-2.0
// Host algorithms of EAGLE's speculative-decoding metadata. Each runs in two passes: the first
// reads every value the call depends on and refuses one out of range, the second computes and
// writes, so a refused call leaves every output as it was.
#include <algorithm>
#include <string>

#include "common/error.h"
#include "common/spec_decode.h"

namespace cattn {
namespace {

[[noreturn]] void refuse(const char* fn, const TensorArg& t, int64_t at, const std::string& what,
                         int64_t value, const std::string& want) {
  fail_arg(CATTN_INVALID_ARGUMENT, fn, t.name(), what.c_str(),
           "[" + std::to_string(at) + "] = " + std::to_string(value), want);
}

// block * block_size + pos % block_size for pos >= 0, refusing a negative block and an int64
// overflow (the device writes -1 for both).
int64_t slot_of(const char* fn, int64_t block, int64_t pos, int64_t block_size) {
  if (block < 0)
    fail_arg(CATTN_INVALID_ARGUMENT, fn, "args->block_table", "holds a negative block id",
             std::to_string(block) + " for position " + std::to_string(pos), "a block id >= 0");
  return checked_add(fn, "args->block_table: a slot (block x block_size + offset)",
                     checked_mul(fn, "args->block_table: a slot (block x block_size)", block,
                                 block_size),
                     pos % block_size);
}

}  // namespace

void eagle_step_host(const char* fn, const EagleStepTensors& t) {
  const IndexReader pos = reader1d(*t.positions), seq = reader1d(*t.seq_lens);
  const int64_t W = t.table->size(1);
  for (int pass = 0; pass < 2; ++pass) {
    const IndexWriter clamped = pass ? writer1d(*t.clamped) : IndexWriter{};
    const IndexWriter slots = pass ? writer1d(*t.slots) : IndexWriter{};
    const IndexWriter seq_out = pass ? writer1d(*t.seq_lens) : IndexWriter{};
    for (int64_t i = 0; i < t.rows; ++i) {
      const int64_t p = pos[i];
      if (p < -1)  // vLLM would read before the row
        refuse(fn, *t.positions, i, "is below -1", p, ">= -1");
      const int64_t next = checked_add(fn, "args->positions: a position + 1", p, 1);
      const bool out = next >= t.max_model_len;
      int64_t slot = -1, s = 1;
      if (!out) {
        const int64_t col = std::min(next / t.block_size, W - 1);
        slot = slot_of(fn, reader_row(*t.table, i)[col], next, t.block_size);
        s = checked_add(fn, "args->seq_lens: a length + 1", seq[i], 1);
      }
      s = std::min(s, t.max_model_len);
      if (pass == 0) {
        require_fits(fn, *t.clamped, out ? 0 : next);
        require_fits(fn, *t.seq_lens, s);
        continue;
      }
      clamped.set(i, out ? 0 : next);
      slots.set(i, slot);
      seq_out.set(i, s);
    }
    for (int64_t i = t.rows; pass == 1 && i < t.input_batch_size; ++i) slots.set(i, -1);
  }
}

void eagle_prepare_inputs_host(const char* fn, const EaglePrepareInputsTensors& t) {
  const IndexReader cu = reader1d(*t.cu_num_draft_tokens), valid = reader1d(*t.valid_count);
  const IndexReader qsl = reader1d(*t.query_start_loc);
  for (int pass = 0; pass < 2; ++pass) {
    const IndexWriter idx = pass ? writer1d(*t.token_indices) : IndexWriter{};
    const IndexWriter rej = pass ? writer1d(*t.num_rejected) : IndexWriter{};
    for (int64_t i = 0; i < t.rows; ++i) {
      const int64_t drafts =
          i == 0 ? cu[0]
                 : checked_sub(fn, "args->cu_num_draft_tokens: a request's drafts", cu[i], cu[i - 1]);
      int64_t r = 0;
      if (drafts > 0) {
        const int64_t v = valid[i];
        const int64_t most = checked_add(fn, "args->cu_num_draft_tokens: drafts + 1", drafts, 1);
        // More valid tokens than drafts + 1 would reject a negative count (and sample past the
        // request), fewer than none more than it has.
        if (v < 0 || v > most)
          refuse(fn, *t.valid_count, i, "is outside the request's drafts + 1", v,
                 "in [0, " + std::to_string(most) + "]");
        r = most - v;
      }
      const int64_t sample =
          checked_sub(fn, "args->token_indices_to_sample: query_start_loc - 1 - rejected",
              checked_sub(fn, "args->query_start_loc: an entry - 1", qsl[i + 1], 1), r);
      if (pass == 0) {
        require_fits(fn, *t.token_indices, sample);
        require_fits(fn, *t.num_rejected, r);
        continue;
      }
      idx.set(i, sample);
      rej.set(i, r);
    }
  }
}

void eagle_next_token_host(const char* fn, const EagleNextTokenTensors& t) {
  const IndexReader backup = reader1d(*t.backup);
  const int64_t S = t.sampled->size(1);
  for (int pass = 0; pass < 2; ++pass) {
    const IndexWriter next_out = pass ? writer1d(*t.next_tokens) : IndexWriter{};
    const IndexWriter valid_out = pass ? writer1d(*t.valid_count) : IndexWriter{};
    for (int64_t i = 0; i < t.rows; ++i) {
      int64_t valid = 0, next = backup[i];
      if (!flag_at(t.discard, i) && S > 0) {
        const IndexReader row = reader_row(*t.sampled, i);
        for (int64_t j = 0; j < S; ++j) {
          const int64_t tok = row[j];
          if (tok != -1 && tok < t.vocab_size) ++valid, next = tok;
        }
      }
      if (pass == 0) {
        require_fits(fn, *t.next_tokens, next);
        require_fits(fn, *t.valid_count, valid);
        continue;
      }
      next_out.set(i, next);
      valid_out.set(i, valid);
    }
  }
}

void new_slot_mapping_host(const char* fn, const NewSlotMappingTensors& t) {
  const int64_t B = t.rows, N = t.num_new_tokens, W = t.table->size(1);
  const IndexReader qsl = reader1d(*t.query_start_loc), pos = reader1d(*t.positions);
  // Request r's token count, q + N, from two query_start_loc entries read once per walk.
  auto count_of = [&](int64_t r, int64_t lo, int64_t hi) {
    const int64_t q = checked_sub(fn, "args->query_start_loc: a query length", hi, lo);
    if (q < 0) refuse(fn, *t.query_start_loc, r + 1, "decreases", hi, ">= " + std::to_string(lo));
    return checked_add(fn, "args->num_new_tokens: q + N", q, N);
  };
  for (int pass = 0; pass < 2; ++pass) {
    // The extended requests' token counts must cover the positions exactly (vLLM's
    // repeat_interleave raises otherwise).
    int64_t total = 0, lo = qsl[0];
    for (int64_t r = 0; r < B; ++r) {
      const int64_t hi = qsl[r + 1];
      total = checked_add(fn, "args->num_new_tokens: the extended token count", total,
                          count_of(r, lo, hi));
      lo = hi;
    }
    if (total != t.positions->size(0))
      fail_arg(CATTN_INVALID_ARGUMENT, fn, t.positions->name(),
               "does not hold one position per extended token", t.positions->shape_string(),
               "[" + std::to_string(total) + "] (query lengths + num_new_tokens per request)");
    const IndexWriter out = pass ? writer1d(*t.slots) : IndexWriter{};
    int64_t k = 0;
    lo = qsl[0];
    for (int64_t r = 0; r < B; ++r) {
      const int64_t hi = qsl[r + 1], count = count_of(r, lo, hi);
      lo = hi;
      for (int64_t j = 0; j < count; ++j, ++k) {
        const int64_t p = pos[k];
        int64_t slot = -1;
        if (!flag_at(t.rejected, k) && p < t.max_model_len) {
          if (p < 0) refuse(fn, *t.positions, k, "is negative", p, ">= 0 (or the token rejected)");
          // vLLM indexes the flattened table: a column past the row reads the next row.
          const int64_t col = p / t.block_size;
          if (W == 0 || col >= B * W || r > (B * W - 1 - col) / W)
            fail_arg(CATTN_INVALID_ARGUMENT, fn, t.table->name(), "has no block for a token",
                     "token " + std::to_string(k) + " of request " + std::to_string(r) +
                         " at position " + std::to_string(p) + " -> flat entry " +
                         std::to_string(r) + " x " + std::to_string(W) + " + " +
                         std::to_string(col),
                     "an entry inside the table's " + std::to_string(B * W));
          const int64_t f = r * W + col;
          slot = slot_of(fn, reader_row(*t.table, f / W)[f % W], p, t.block_size);
        }
        if (pass == 1) out.set(k, slot);
      }
    }
  }
}

namespace {

// Request i of a verified batch, its bounds read once and checked: it has tokens, lies inside
// the targets, and its query_end_loc inside it.
struct Request {
  int64_t start, end, last;
};
Request request_at(const char* fn, const CopyExpandTensors& t, const IndexReader& qsl,
                   const IndexReader& qel, int64_t i, int64_t start) {
  const int64_t end = qsl[i + 1], last = qel[i];
  if (end <= start)
    refuse(fn, *t.query_start_loc, i + 1, "leaves a request without tokens", end,
           "> " + std::to_string(start));
  if (last < start || last >= end)
    refuse(fn, *t.query_end_loc, i, "is outside its request", last,
           "in [" + std::to_string(start) + ", " + std::to_string(end) + ")");
  const int64_t targets = std::min(t.target_ids->size(0), t.target_positions->size(0));
  if (end > targets)
    refuse(fn, *t.query_start_loc, i + 1, "passes the targets", end,
           "<= " + std::to_string(targets));
  return {start, end, last};
}

}  // namespace

void copy_and_expand_host(const char* fn, const CopyExpandTensors& t) {
  const int64_t B = t.rows, P = t.slots_per_request, shift = t.shift ? 1 : 0;
  const IndexReader qsl = reader1d(*t.query_start_loc), qel = reader1d(*t.query_end_loc);
  const IndexReader ids = reader1d(*t.target_ids), tpos = reader1d(*t.target_positions);
  const IndexReader next = reader1d(*t.next_ids);
  for (int pass = 0; pass < 2; ++pass) {
    const bool w = pass == 1;
    // Every request's bounds first, for the outputs' sizes; the walk below reads them again
    // and checks them again as it goes.
    // query_start_loc[0] is read once a pass and starts both walks.
    const int64_t first = qsl[0];
    const int64_t targets = std::min(t.target_ids->size(0), t.target_positions->size(0));
    if (first < 0) refuse(fn, *t.query_start_loc, 0, "is negative", first, ">= 0");
    if (first > targets)
      refuse(fn, *t.query_start_loc, 0, "passes the targets", first,
             "<= " + std::to_string(targets));
    int64_t T = first;
    for (int64_t i = 0; i < B; ++i) T = request_at(fn, t, qsl, qel, i, T).end;
    const int64_t n_out = checked_add(fn, "args->query_start_loc: the output tokens", T,
                                      checked_mul(fn, "args->next_token_ids: B x P", B, P - shift));
    for (const TensorArg* o : {t.input_ids, t.positions, t.rejected, t.masked})
      if (present(o) && o->size(0) < n_out)
        fail_arg(CATTN_INSUFFICIENT_SIZE, fn, o->name(), "is shorter than the output tokens",
                 o->shape_string(), "at least " + std::to_string(n_out) + " elements");
    if (shift && present(t.hidden_map) && t.hidden_map->size(0) < T)
      fail_arg(CATTN_INSUFFICIENT_SIZE, fn, t.hidden_map->name(),
               "is shorter than the input tokens", t.hidden_map->shape_string(),
               "at least " + std::to_string(T) + " elements");
    const IndexWriter out_ids = w ? writer1d(*t.input_ids) : IndexWriter{};
    const IndexWriter out_pos = w ? writer1d(*t.positions) : IndexWriter{};
    const IndexWriter out_new =
        w && present(t.new_token_indices) ? writer1d(*t.new_token_indices) : IndexWriter{};
    const IndexWriter out_hid =
        w && shift && present(t.hidden_map) ? writer1d(*t.hidden_map) : IndexWriter{};
    int64_t start = first;
    for (int64_t i = 0; i < B; ++i) {
      const Request rq = request_at(fn, t, qsl, qel, i, start);
      start = rq.end;
      const int64_t s = rq.start, q = rq.end - s, rejected = rq.end - 1 - rq.last;
      const int64_t valid = q - rejected - shift;
      int64_t total = q + P - shift;
      if (t.max_tokens > 0) total = std::min(total, t.max_tokens);
      const int64_t out_start = s + i * (P - shift);
      for (int64_t j = 0; j < total; ++j) {
        const int64_t o = out_start + j;
        // The rejected tail's position is 0: start + j is formed for the others only.
        const int64_t p = j < valid + P ? checked_add(fn, "args->target_positions: a position + "
                                                          "offset", tpos[s], j)
                                        : 0;
        int64_t id;
        if (j < valid) id = ids[s + shift + j];
        else if (j == valid) id = next[i];
        else if (j < valid + P) id = t.parallel_id;
        else id = t.pad_id;
        if (!w) {
          require_fits(fn, *t.input_ids, id);
          require_fits(fn, *t.positions, p);
          if (present(t.new_token_indices)) require_fits(fn, *t.new_token_indices, o);
          if (shift && present(t.hidden_map)) require_fits(fn, *t.hidden_map, o);
          continue;
        }
        out_ids.set(o, id);
        out_pos.set(o, p);
        if (present(t.rejected)) write_flag(*t.rejected, o, j >= valid + P);
        if (present(t.masked)) write_flag(*t.masked, o, j > valid && j < valid + P);
        if (j >= valid && j < valid + P && present(t.new_token_indices))
          out_new.set(i * P + (j - valid), o);
        if (shift && j < q && present(t.hidden_map)) out_hid.set(s + j, o);
      }
    }
  }
}

void batch_change_host(const char* fn, const BatchChangeTensors& t) {
  const int64_t n = t.rows, M = t.num_computed->size(0), n_prev = t.valid_count->size(0);
  const IndexReader prev = reader1d(*t.prev_positions), valid = reader1d(*t.valid_count);
  const IndexReader drafts = reader1d(*t.prev_drafts), cpu = reader1d(*t.cpu_num_computed);
  const IndexReader nct = reader1d(*t.num_computed), acc = reader1d(*t.num_accepted);
  // Row k's previous row g, read once and checked (-1 for a new request), and whether its
  // counts carry over.
  auto prev_row = [&](int64_t k) {
    const int64_t g = prev[k];
    if (g >= n_prev || g >= M)
      refuse(fn, *t.prev_positions, k, "names no previous row", g,
             "< " + std::to_string(std::min(n_prev, M)) + ", or negative for a new request");
    return g < 0 ? int64_t{-1} : g;
  };
  auto carried = [&](int64_t g) { return g >= 0 && drafts[g] > 0; };
  auto new_count = [&](int64_t g) {
    return checked_add(fn, "args->num_computed_tokens: a count + valid", nct[g], valid[g]);
  };
  for (int64_t k = 0; k < n; ++k) {
    const int64_t g = prev_row(k);
    if (!carried(g)) {
      require_fits(fn, *t.num_computed, cpu[k]);
      continue;
    }
    const int64_t count = new_count(g);
    require_fits(fn, *t.num_computed, count);
    require_fits(fn, *t.num_accepted, valid[g]);
    // The new counts are staged in num_accepted_tokens (below), so it must hold them.
    if (!t.num_accepted->is_int64() && !fits_int32(count))
      refuse(fn, *t.num_accepted, k, "is int32 and cannot stage a new count", count,
             "int64 num_accepted_tokens, or counts below 2^31");
  }
  // Every carried row reads the previous layout: its new count goes to its own
  // num_accepted_tokens entry (whose value is rewritten anyway) before any count is written,
  // so no scratch memory is needed.
  const IndexWriter nct_out = writer1d(*t.num_computed), acc_out = writer1d(*t.num_accepted);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t g = prev_row(k);
    if (carried(g)) acc_out.set(k, new_count(g));
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t g = prev_row(k);
    if (!carried(g)) {
      nct_out.set(k, cpu[k]);
      continue;
    }
    nct_out.set(k, acc[k]);
    acc_out.set(k, valid[g]);
  }
}

}  // namespace cattn
