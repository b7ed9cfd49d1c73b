/* SPDX-License-Identifier: Apache-2.0 */
/* A drafter step's metadata on the host, C99 against cattn.h alone: a verified batch of 3
 * requests (2 decodes with 2 drafts each, 1 prefill chunk), EAGLE with parallel drafting (P = 2,
 * the shift): next tokens, tokens to sample, the drafter's input tokens and their slots, in the
 * order vLLM runs them (query_end_loc = query_start_loc[1:] - 1 - rejected between them). */
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
  int64_t sampled[3 * 3] = {11, 12, -1, 21, 22, 23, 31, -1, -1}, backup[3] = {7, 8, 9};
  int64_t cu_drafts[3] = {2, 4, 4}, qsl[4] = {0, 3, 6, 10}, table[3 * 8], next[3], valid[3];
  int64_t ids[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  int64_t tpos[10] = {40, 41, 42, 70, 71, 72, 0, 1, 2, 3};
  int64_t sample[3], rejected[3], end[3], in_ids[13], in_pos[13], slots[13];
  uint8_t rej[13]; /* one-byte flags */
  tensor a[6], o[10];
  for (int i = 0; i < 3 * 8; ++i) table[i] = 10 * i;
  cattn_eagle_prepare_next_token_padded_args_t e3 =
      CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT;
  e3.vocab_size = 32000, e3.sampled_token_ids = host(&a[0], sampled, 3, 3);
  e3.backup_next_token_ids = host(&a[1], backup, 3, 0);
  e3.next_token_ids = host(&o[0], next, 3, 0);
  e3.valid_sampled_tokens_count = host(&o[1], valid, 3, 0);
  CHECK(cattn_eagle_prepare_next_token_padded(&e3));
  cattn_eagle_prepare_inputs_padded_args_t e2 = CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT;
  e2.cu_num_draft_tokens = host(&a[2], cu_drafts, 3, 0), e2.valid_sampled_tokens_count = &o[1].t;
  e2.query_start_loc = host(&a[3], qsl, 4, 0), e2.num_rejected_tokens = host(&o[3], rejected, 3, 0);
  e2.token_indices_to_sample = host(&o[2], sample, 3, 0);
  CHECK(cattn_eagle_prepare_inputs_padded(&e2));
  for (int i = 0; i < 3; ++i) end[i] = qsl[i + 1] - 1 - rejected[i];
  cattn_copy_and_expand_eagle_inputs_args_t e6 = CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
  e6.parallel_drafting_token_id = 32000, e6.num_padding_slots_per_request = 2;
  e6.shift_input_ids = 1; /* padding_token_id 0: the initialiser's */
  e6.target_token_ids = host(&a[4], ids, 10, 0), e6.target_positions = host(&a[5], tpos, 10, 0);
  e6.next_token_ids = &o[0].t, e6.query_start_loc = &a[3].t;
  e6.query_end_loc = host(&o[4], end, 3, 0);
  e6.out_input_ids = host(&o[5], in_ids, 13, 0), e6.out_positions = host(&o[6], in_pos, 13, 0);
  e6.out_is_rejected_token_mask = host(&o[9], (int64_t*)rej, 13, 0);
  o[9].t.dtype.code = 6, o[9].t.dtype.bits = 8; /* kDLBool */
  CHECK(cattn_copy_and_expand_eagle_inputs(&e6)); /* 10 + 3 x (P - 1) = 13 tokens */
  cattn_compute_new_slot_mapping_args_t e4 = CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT;
  e4.block_size = 16, e4.num_new_tokens = 1, e4.max_model_len = 4096;
  e4.query_start_loc = &a[3].t, e4.block_table = host(&o[7], table, 3, 8);
  e4.new_positions = &o[6].t, e4.is_rejected_token_mask = &o[9].t;
  e4.new_slot_mapping = host(&o[8], slots, 13, 0);
  CHECK(cattn_compute_new_slot_mapping(&e4));

  printf("libcattn %s\n", cattn_version_string());
  show("next tokens     ", next, 3), show("valid counts    ", valid, 3);
  show("to sample       ", sample, 3), show("rejected        ", rejected, 3);
  show("drafter ids     ", in_ids, 13), show("drafter pos     ", in_pos, 13);
  show("drafter slots   ", slots, 13);
  return 0;
}
