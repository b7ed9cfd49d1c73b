/* SPDX-License-Identifier: Apache-2.0 */
/* A step's attention inputs on the host, C99 against cattn.h alone: 6 requests (4 decodes with
 * drafts, 2 prefill chunks) over 8 persistent rows, two KV-cache groups (blocks of 16 and 32
 * tokens), vLLM's model runner v2 contract: query_start_loc, seq_lens, positions, each group's
 * batch block table and slot mapping, and the logits indices, outputs sized by the library. */
#include <cattn.h>
#include <stdio.h>

#define CHECK(call) \
  if ((call) != CATTN_OK) return fprintf(stderr, "%s\n", cattn_last_error_message()), 1
typedef struct { DLTensor t; int64_t shape[2]; } tensor; /* a DLTensor that owns its shape */
static DLTensor* host(tensor* x, int64_t* data, int64_t rows, int64_t cols) { /* cols 0: 1-D */
  DLTensor t = {data, {kDLCPU, 0}, cols ? 2 : 1, {kDLInt, 64, 1}, x->shape, NULL, 0};
  x->t = t, x->shape[0] = rows, x->shape[1] = cols;
  return &x->t;
}
static void show(const char* label, const int64_t* v, int64_t n) {
  printf("%s", label);
  for (int64_t i = 0; i < n; ++i) printf("%s%lld", i ? " " : "", (long long)v[i]);
  printf("\n");
}

int main(void) {
  int64_t sched[6] = {3, 1, 4, 2, 20, 12}, drafts[6] = {2, 0, 3, 1, 0, 0};
  int64_t idx[6] = {5, 0, 7, 2, 1, 4}, computed[8] = {40, 9, 17, 0, 0, 33, 0, 30};
  int64_t tables[2][8 * 4], qsl[7], seq[6], gathered[2][6 * 4], pos[64], slots[2][64];
  int64_t logits[64];
  tensor in[6], out[9];
  for (int i = 0; i < 8 * 4; ++i) tables[0][i] = 100 + i, tables[1][i] = 500 + i;
  cattn_step_inputs_size_args_t size = CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
  size.num_scheduled_tokens = host(&in[0], sched, 6, 0);
  size.num_draft_tokens = host(&in[1], drafts, 6, 0);
  CHECK(cattn_step_inputs_size(&size)); /* the live tokens and logits: outputs' sizes */
  cattn_prepare_pos_seq_lens_args_t prep = CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT;
  prep.num_scheduled_tokens = &in[0].t, prep.idx_mapping = host(&in[2], idx, 6, 0);
  prep.num_computed_tokens = host(&in[3], computed, 8, 0);
  prep.query_start_loc = host(&out[0], qsl, 7, 0), prep.seq_lens = host(&out[1], seq, 6, 0);
  prep.positions = host(&out[2], pos, size.num_tokens, 0);
  CHECK(cattn_prepare_pos_seq_lens(&prep));
  for (int g = 0; g < 2; ++g) {
    cattn_gather_block_tables_args_t gather = CATTN_GATHER_BLOCK_TABLES_ARGS_INIT;
    gather.idx_mapping = &in[2].t, gather.block_table = host(&in[4 + g], tables[g], 8, 4);
    gather.out = host(&out[3 + g], gathered[g], 6, 4);
    CHECK(cattn_gather_block_tables(&gather));
    cattn_compute_slot_mappings_args_t sm = CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
    sm.block_size = sm.kernel_block_size = g ? 32 : 16;
    sm.query_start_loc = &out[0].t, sm.positions = &out[2].t, sm.idx_mapping = &in[2].t;
    sm.block_table = &in[4 + g].t;
    sm.slot_mapping = host(&out[5 + g], slots[g], size.num_tokens, 0);
    CHECK(cattn_compute_slot_mappings(&sm));
  }
  cattn_combine_sampled_and_draft_tokens_args_t comb =
      CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
  comb.query_start_loc = &out[0].t, comb.num_draft_tokens = &in[1].t;
  comb.logits_indices = host(&out[7], logits, size.num_logits, 0);
  CHECK(cattn_combine_sampled_and_draft_tokens(&comb));

  printf("libcattn %s\ntokens %lld, logits %lld\n", cattn_version_string(),
         (long long)size.num_tokens, (long long)size.num_logits);
  show("query_start_loc ", qsl, 7), show("seq_lens        ", seq, 6);
  show("positions       ", pos, size.num_tokens), show("block table 0   ", gathered[0], 24);
  show("slots 0         ", slots[0], size.num_tokens);
  show("slots 1         ", slots[1], size.num_tokens);
  show("logits_indices  ", logits, size.num_logits);
  return 0;
}
