/* Prints, as JSON, the size of every struct that crosses libcattn's ABI and the offset of each of
 * its fields, as this compiler lays them out from cattn.h. bench/cattn_ctypes.py compares its
 * ctypes mirror against this output, so a field added, dropped or reordered in the header (or in
 * the mirror) is caught before any call is made with a misread struct. */
#include <stddef.h>
#include <stdio.h>

#include "cattn.h"

static int first_struct = 1;
static int first_field = 1;

static void begin(const char* name, size_t size) {
  printf("%s\n  \"%s\": {\"size\": %zu, \"fields\": {", first_struct ? "" : ",", name, size);
  first_struct = 0;
  first_field = 1;
}

static void field(const char* name, size_t offset) {
  printf("%s\"%s\": %zu", first_field ? "" : ", ", name, offset);
  first_field = 0;
}

static void end(void) { printf("}}"); }

#define BEGIN(T) begin(#T, sizeof(T))
#define FIELD(T, f) field(#f, offsetof(T, f))

int main(void) {
  printf("{");

  BEGIN(DLTensor);
  FIELD(DLTensor, data);
  FIELD(DLTensor, device);
  FIELD(DLTensor, ndim);
  FIELD(DLTensor, dtype);
  FIELD(DLTensor, shape);
  FIELD(DLTensor, strides);
  FIELD(DLTensor, byte_offset);
  end();

  BEGIN(cattn_common_attn_metadata_t);
  FIELD(cattn_common_attn_metadata_t, struct_size);
  FIELD(cattn_common_attn_metadata_t, query_start_loc);
  FIELD(cattn_common_attn_metadata_t, query_start_loc_cpu);
  FIELD(cattn_common_attn_metadata_t, seq_lens);
  FIELD(cattn_common_attn_metadata_t, seq_lens_cpu);
  FIELD(cattn_common_attn_metadata_t, num_computed_tokens_cpu);
  FIELD(cattn_common_attn_metadata_t, block_table_tensor);
  FIELD(cattn_common_attn_metadata_t, slot_mapping);
  FIELD(cattn_common_attn_metadata_t, logits_indices_padded);
  FIELD(cattn_common_attn_metadata_t, num_reqs);
  FIELD(cattn_common_attn_metadata_t, num_actual_tokens);
  FIELD(cattn_common_attn_metadata_t, max_query_len);
  FIELD(cattn_common_attn_metadata_t, max_seq_len);
  FIELD(cattn_common_attn_metadata_t, num_logits_indices);
  FIELD(cattn_common_attn_metadata_t, causal);
  FIELD(cattn_common_attn_metadata_t, reserved0);
  end();

  BEGIN(cattn_kv_cache_layout_args_t);
  FIELD(cattn_kv_cache_layout_args_t, struct_size);
  FIELD(cattn_kv_cache_layout_args_t, supported_mask);
  FIELD(cattn_kv_cache_layout_args_t, read_environment);
  FIELD(cattn_kv_cache_layout_args_t, env_value);
  FIELD(cattn_kv_cache_layout_args_t, connector_layout);
  FIELD(cattn_kv_cache_layout_args_t, layout);
  end();

  BEGIN(cattn_dcp_local_seq_lens_args_t);
  FIELD(cattn_dcp_local_seq_lens_args_t, struct_size);
  FIELD(cattn_dcp_local_seq_lens_args_t, seq_lens);
  FIELD(cattn_dcp_local_seq_lens_args_t, dcp_size);
  FIELD(cattn_dcp_local_seq_lens_args_t, dcp_rank);
  FIELD(cattn_dcp_local_seq_lens_args_t, dcp_kv_cache_interleave_size);
  FIELD(cattn_dcp_local_seq_lens_args_t, out);
  FIELD(cattn_dcp_local_seq_lens_args_t, stream);
  end();

  BEGIN(cattn_pcp_query_restore_idx_args_t);
  FIELD(cattn_pcp_query_restore_idx_args_t, struct_size);
  FIELD(cattn_pcp_query_restore_idx_args_t, cu_num_tokens);
  FIELD(cattn_pcp_query_restore_idx_args_t, restore_idx);
  FIELD(cattn_pcp_query_restore_idx_args_t, stream);
  end();

  BEGIN(cattn_fused_pcp_qkv_select_args_t);
  FIELD(cattn_fused_pcp_qkv_select_args_t, struct_size);
  FIELD(cattn_fused_pcp_qkv_select_args_t, q);
  FIELD(cattn_fused_pcp_qkv_select_args_t, k);
  FIELD(cattn_fused_pcp_qkv_select_args_t, v);
  FIELD(cattn_fused_pcp_qkv_select_args_t, query_start_loc);
  FIELD(cattn_fused_pcp_qkv_select_args_t, pcp_world_size);
  FIELD(cattn_fused_pcp_qkv_select_args_t, pcp_rank);
  FIELD(cattn_fused_pcp_qkv_select_args_t, q_head);
  FIELD(cattn_fused_pcp_qkv_select_args_t, k_head);
  FIELD(cattn_fused_pcp_qkv_select_args_t, v_head);
  FIELD(cattn_fused_pcp_qkv_select_args_t, q_tail);
  FIELD(cattn_fused_pcp_qkv_select_args_t, k_tail);
  FIELD(cattn_fused_pcp_qkv_select_args_t, v_tail);
  FIELD(cattn_fused_pcp_qkv_select_args_t, stream);
  end();

  BEGIN(cattn_pcp_kv_allgather_and_restore_args_t);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, struct_size);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, comm);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, key);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, value);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, num_actual_tokens);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, restore_idx);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, key_out);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, value_out);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, workspace);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, workspace_size);
  FIELD(cattn_pcp_kv_allgather_and_restore_args_t, stream);
  end();

  BEGIN(cattn_causal_conv1d_metadata_args_t);
  FIELD(cattn_causal_conv1d_metadata_args_t, struct_size);
  FIELD(cattn_causal_conv1d_metadata_args_t, query_start_loc_cpu);
  FIELD(cattn_causal_conv1d_metadata_args_t, block_m);
  FIELD(cattn_causal_conv1d_metadata_args_t, nums);
  FIELD(cattn_causal_conv1d_metadata_args_t, mlist);
  FIELD(cattn_causal_conv1d_metadata_args_t, offsetlist);
  FIELD(cattn_causal_conv1d_metadata_args_t, batch_ptr);
  FIELD(cattn_causal_conv1d_metadata_args_t, token_chunk_offset_ptr);
  FIELD(cattn_causal_conv1d_metadata_args_t, tot);
  FIELD(cattn_causal_conv1d_metadata_args_t, stream);
  end();

  BEGIN(cattn_extend_all_queries_by_n_args_t);
  FIELD(cattn_extend_all_queries_by_n_args_t, struct_size);
  FIELD(cattn_extend_all_queries_by_n_args_t, metadata);
  FIELD(cattn_extend_all_queries_by_n_args_t, n);
  FIELD(cattn_extend_all_queries_by_n_args_t, new_slot_mapping);
  FIELD(cattn_extend_all_queries_by_n_args_t, out);
  FIELD(cattn_extend_all_queries_by_n_args_t, stream);
  end();

  BEGIN(cattn_fast_prefill_metadata_args_t);
  FIELD(cattn_fast_prefill_metadata_args_t, struct_size);
  FIELD(cattn_fast_prefill_metadata_args_t, metadata);
  FIELD(cattn_fast_prefill_metadata_args_t, out);
  FIELD(cattn_fast_prefill_metadata_args_t, decode_max_and_total);
  FIELD(cattn_fast_prefill_metadata_args_t, passthrough);
  FIELD(cattn_fast_prefill_metadata_args_t, reserved0);
  FIELD(cattn_fast_prefill_metadata_args_t, stream);
  end();

  BEGIN(cattn_local_attention_args_t);
  FIELD(cattn_local_attention_args_t, struct_size);
  FIELD(cattn_local_attention_args_t, attn_chunk_size);
  FIELD(cattn_local_attention_args_t, block_size);
  FIELD(cattn_local_attention_args_t, metadata);
  FIELD(cattn_local_attention_args_t, plan);
  end();

  BEGIN(cattn_local_attention_fill_args_t);
  FIELD(cattn_local_attention_fill_args_t, struct_size);
  FIELD(cattn_local_attention_fill_args_t, metadata);
  FIELD(cattn_local_attention_fill_args_t, out);
  FIELD(cattn_local_attention_fill_args_t, stream);
  end();

  BEGIN(cattn_mamba_block_table_args_t);
  FIELD(cattn_mamba_block_table_args_t, struct_size);
  FIELD(cattn_mamba_block_table_args_t, block_table);
  FIELD(cattn_mamba_block_table_args_t, seq_lens);
  FIELD(cattn_mamba_block_table_args_t, block_size);
  FIELD(cattn_mamba_block_table_args_t, num_speculative_blocks);
  FIELD(cattn_mamba_block_table_args_t, mamba_cache_mode);
  FIELD(cattn_mamba_block_table_args_t, reserved0);
  FIELD(cattn_mamba_block_table_args_t, out);
  FIELD(cattn_mamba_block_table_args_t, stream);
  end();

  BEGIN(cattn_attention_layer_desc_t);
  FIELD(cattn_attention_layer_desc_t, struct_size);
  FIELD(cattn_attention_layer_desc_t, sliding_window_left);
  FIELD(cattn_attention_layer_desc_t, sliding_window_right);
  FIELD(cattn_attention_layer_desc_t, logits_soft_cap);
  FIELD(cattn_attention_layer_desc_t, scale);
  FIELD(cattn_attention_layer_desc_t, has_sliding_window);
  FIELD(cattn_attention_layer_desc_t, has_logits_soft_cap);
  FIELD(cattn_attention_layer_desc_t, has_sinks);
  FIELD(cattn_attention_layer_desc_t, reserved0);
  end();

  BEGIN(cattn_per_layer_parameters_t);
  FIELD(cattn_per_layer_parameters_t, struct_size);
  FIELD(cattn_per_layer_parameters_t, window_left);
  FIELD(cattn_per_layer_parameters_t, logits_soft_cap);
  FIELD(cattn_per_layer_parameters_t, sm_scale);
  FIELD(cattn_per_layer_parameters_t, has_logits_soft_cap);
  FIELD(cattn_per_layer_parameters_t, has_sinks);
  end();

  BEGIN(cattn_global_hyperparameters_t);
  FIELD(cattn_global_hyperparameters_t, struct_size);
  FIELD(cattn_global_hyperparameters_t, window_left);
  FIELD(cattn_global_hyperparameters_t, logits_soft_cap);
  FIELD(cattn_global_hyperparameters_t, sm_scale);
  FIELD(cattn_global_hyperparameters_t, has_logits_soft_cap);
  FIELD(cattn_global_hyperparameters_t, has_sinks);
  FIELD(cattn_global_hyperparameters_t, has_same_window_lefts);
  FIELD(cattn_global_hyperparameters_t, has_same_all_params);
  end();

  printf("\n}\n");
  return 0;
}
