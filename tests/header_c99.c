/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles cattn.h alone as strict C99 and uses its initialiser macros. */
#include "cattn.h"

#include <string.h>

int cattn_header_c99_probe(void);
int cattn_header_c99_probe(void) {
  /* The header's dlsym pattern, warning-free under -pedantic. */
  void* sym = (void*)CATTN_SONAME;
  cattn_get_api_fn get_api = NULL;
  memcpy(&get_api, &sym, sizeof get_api);
  cattn_common_attn_metadata_t m = CATTN_COMMON_ATTN_METADATA_INIT;
  cattn_kv_cache_layout_args_t a = CATTN_KV_CACHE_LAYOUT_ARGS_INIT;
  cattn_dcp_local_seq_lens_args_t d = CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT;
  cattn_pcp_query_restore_idx_args_t r = CATTN_PCP_QUERY_RESTORE_IDX_ARGS_INIT;
  cattn_fused_pcp_qkv_select_args_t f = CATTN_FUSED_PCP_QKV_SELECT_ARGS_INIT;
  cattn_pcp_kv_allgather_and_restore_args_t g = CATTN_PCP_KV_ALLGATHER_AND_RESTORE_ARGS_INIT;
  cattn_causal_conv1d_metadata_args_t c = CATTN_CAUSAL_CONV1D_METADATA_ARGS_INIT;
  cattn_extend_all_queries_by_n_args_t e = CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT;
  cattn_fast_prefill_metadata_args_t p = CATTN_FAST_PREFILL_METADATA_ARGS_INIT;
  cattn_local_attention_args_t l = CATTN_LOCAL_ATTENTION_ARGS_INIT;
  cattn_local_attention_fill_args_t lf = CATTN_LOCAL_ATTENTION_FILL_ARGS_INIT;
  cattn_mamba_block_table_args_t mb = CATTN_MAMBA_BLOCK_TABLE_ARGS_INIT;
  cattn_attention_layer_desc_t ld = CATTN_ATTENTION_LAYER_DESC_INIT;
  cattn_per_layer_parameters_t pl = CATTN_PER_LAYER_PARAMETERS_INIT;
  cattn_global_hyperparameters_t gh = CATTN_GLOBAL_HYPERPARAMETERS_INIT;
  return (int)(m.struct_size + a.struct_size + d.struct_size + r.struct_size + f.struct_size +
               g.struct_size + c.struct_size + e.struct_size + p.struct_size + l.struct_size +
               lf.struct_size + mb.struct_size + ld.struct_size + pl.struct_size +
               gh.struct_size);
}
