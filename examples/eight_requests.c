/* SPDX-License-Identifier: Apache-2.0 */
/* eight_requests.cpp in C99 against cattn.h alone: the same batch, calls and printed lines,
 * over the caller's own host arrays (int64 throughout) described as DLTensors. */
#include <cattn.h>
#include <stdio.h>

#define CHECK(c) if ((c) != CATTN_OK) return fprintf(stderr, "%s\n", cattn_last_error_message()), 1
typedef struct { DLTensor t; int64_t shape[2]; } tensor; /* a DLTensor that owns its shape */
static DLTensor* host(tensor* x, int64_t* data, int64_t rows, int64_t cols) { /* cols 0: 1-D */
  x->t = (DLTensor){data, {kDLCPU, 0}, cols ? 2 : 1, {kDLInt, 64, 1}, x->shape, NULL, 0};
  return x->shape[0] = rows, x->shape[1] = cols, &x->t;
}
/* Prints "label [a, b]", or "label [[a, b], [c, d]]" for rows of cols > 0 entries. */
static void show(const char* label, const int64_t* v, int64_t rows, int64_t cols, long long tot) {
  printf("%s [", label);
  for (int64_t i = 0; i < rows * (cols ? cols : 1); ++i)
    printf("%s%s%lld", i == 0 ? "" : cols && i % cols == 0 ? "], " : ", ",
           cols && i % cols == 0 ? "[" : "", (long long)v[i]);
  printf(tot < 0 ? "%s]\n" : "%s] (tot %lld)\n", cols ? "]" : "", tot);
}

int main(void) {
  /* Query lengths 1 1 4 6 2 8 1 10: three decodes, the rest prefill chunks of their sequences. */
  int64_t qsl[9] = {0, 1, 2, 6, 12, 14, 22, 23, 33}, seq[8] = {9, 17, 4, 10, 34, 8, 5, 12};
  int64_t table[8 * 9], restore[33], dcp[8 * 2], nums[8], mlist[33], offs[33], tot, cap, n, v, p;
  int64_t lq[22], lk[21], lc[21], lt[21 * 2]; /* V <= 2 * 8 + cdiv(33, 8) virtual batches */
  tensor q, s, b, o[9];
  cattn_pcp_query_restore_idx_args_t pcp = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  cattn_dcp_local_seq_lens_args_t all = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT; /* every rank */
  cattn_causal_conv1d_metadata_args_t conv = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  cattn_common_attn_metadata_t md = CATTN_COMMON_ATTN_METADATA_INIT, local = md;
  cattn_local_attention_args_t plan = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  cattn_local_attention_fill_args_t fill = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  for (int i = 0; i < 8 * 9; ++i) table[i] = i; /* [8 requests, 9 blocks of 4 tokens] */

  CHECK(cattn_get_pcp_query_restore_idx_size(host(&q, qsl, 9, 0), &n));
  pcp.cu_num_tokens = &q.t, pcp.restore_idx = host(&o[0], restore, n, 0);
  CHECK(cattn_get_pcp_query_restore_idx(&pcp));
  all.seq_lens = host(&s, seq, 8, 0), all.dcp_size = 2, all.out = host(&o[1], dcp, 8, 2);
  CHECK(cattn_get_dcp_local_seq_lens(&all)); /* out: [B, dcp_size] */
  CHECK(cattn_compute_causal_conv1d_metadata_size(&q.t, 8, &tot, &cap));
  conv.query_start_loc_cpu = &q.t, conv.block_m = 8, conv.nums = host(&o[2], nums, 8, 0);
  conv.mlist = host(&o[3], mlist, tot, 0), conv.offsetlist = host(&o[4], offs, tot, 0);
  CHECK(cattn_compute_causal_conv1d_metadata(&conv)); /* batch_ptr (cap entries) not asked */
  md.query_start_loc_cpu = &q.t, md.seq_lens_cpu = &s.t, md.num_reqs = 8;
  md.block_table_tensor = host(&b, table, 8, 9), md.num_actual_tokens = 33;
  plan.attn_chunk_size = 8, plan.block_size = 4, plan.metadata = &md;
  CHECK(cattn_make_local_attention_virtual_batches(&plan));
  CHECK(cattn_local_attention_plan_get_shape(plan.plan, &v, &p));
  local.query_start_loc_cpu = host(&o[5], lq, v + 1, 0), local.seq_lens_cpu = host(&o[6], lk, v, 0);
  local.num_computed_tokens_cpu = host(&o[7], lc, v, 0);
  local.block_table_tensor = host(&o[8], lt, v, p);
  fill.metadata = &md, fill.out = &local;
  CHECK(cattn_local_attention_plan_fill(plan.plan, &fill));
  cattn_local_attention_plan_destroy(plan.plan);

  printf("libcattn %s\n", cattn_version_string());
  show("pcp restore_idx ", restore, n, 0, -1);
  show("dcp lens [B, 2] ", dcp, 8, 2, -1);
  show("conv1d nums     ", nums, 8, 0, (long long)tot);
  show("conv1d mlist    ", mlist, tot, 0, -1);
  show("conv1d offsets  ", offs, tot, 0, -1);
  printf("conv1d batch_ptr %lld entries\n", (long long)cap);
  show("local cu_q      ", lq, v + 1, 0, -1);
  show("local k lens    ", lk, v, 0, -1);
  show("local table     ", lt, v, p, -1);
  return 0;
}
