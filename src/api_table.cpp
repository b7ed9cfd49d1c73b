// SPDX-License-Identifier: Apache-2.0
// Version queries and the append-only function table behind cattn_get_api.
#include "cattn.h"

namespace {

// Member order is the ABI: append only, never reorder or remove.
const cattn_api_t kApi = {
    sizeof(cattn_api_t),
    CATTN_VERSION_MAJOR,
    CATTN_VERSION_NUMBER,
    cattn_version,
    cattn_version_string,
    cattn_status_string,
    cattn_last_error_message,
    cattn_cuda_device_count,
    cattn_context_create,
    cattn_context_destroy,
    cattn_is_valid_kv_cache_layout,
    cattn_kv_cache_layout_name,
    cattn_context_set_kv_cache_layout_override,
    cattn_get_kv_cache_layout,
    cattn_get_dcp_local_seq_lens,
    cattn_get_pcp_query_restore_idx_size,
    cattn_get_pcp_query_restore_idx,
    cattn_fused_pcp_qkv_select,
    cattn_pcp_kv_allgather_and_restore_workspace_size,
    cattn_pcp_kv_allgather_and_restore,
    cattn_compute_causal_conv1d_metadata_size,
    cattn_compute_causal_conv1d_metadata,
    cattn_extend_all_queries_by_n,
    cattn_make_kv_sharing_fast_prefill_common_attn_metadata,
    cattn_make_local_attention_virtual_batches,
    cattn_local_attention_plan_destroy,
    cattn_local_attention_plan_get_shape,
    cattn_local_attention_plan_fill,
    cattn_local_attention_plan_make_block_table,
    cattn_mamba_get_block_table_tensor,
    cattn_get_per_layer_parameters,
    cattn_infer_global_hyperparameters,
    /* 1.0, NCCL */
    cattn_comm_get_unique_id,
    cattn_comm_create,
    cattn_comm_create_borrowed,
    cattn_comm_destroy,
    cattn_comm_get_rank,
    cattn_comm_get_size,
    /* 1.1 */
    cattn_make_local_attention_virtual_batches_size,
    cattn_compute_causal_conv1d_metadata_capturable,
    cattn_make_local_attention_virtual_batches_capturable,
    cattn_step_plan_create,
    cattn_step_plan_destroy,
    cattn_step_plan_get_shape,
    cattn_step_plan_workspace_size,
    cattn_step_plan_run,
    cattn_kv_cache_layout_from_name,
    cattn_kv_cache_layout_get_properties,
    cattn_get_flashinfer_layout_string,
    cattn_kv_cache_layout_strides,
    cattn_get_supported_kv_cache_layouts,
    cattn_context_set_kv_cache_layout_preset,
    cattn_resolve_kv_cache_layout,
    cattn_record_kv_cache_layout,
    cattn_get_resolved_kv_cache_layout,
    cattn_split_decodes_and_prefills,
    cattn_split_decodes_and_prefills_capturable,
    cattn_split_decodes_prefills_and_extends,
    cattn_split_decodes_prefills_and_extends_capturable,
    cattn_split_prefill_chunks,
    cattn_reorder_batch_to_split_decodes_and_prefills,
    /* 1.1, per-request metadata helpers */
    cattn_naive_query_lens,
    cattn_compute_num_computed_tokens,
    cattn_token_to_req_indices,
    cattn_unpadded,
    cattn_max_local_attention_virtual_batches,
    cattn_compute_mm_prefix_range_tensor,
    cattn_fill_mm_prefix_query_ranges,
    cattn_log2_lse_to_ln,
    cattn_fused_pcp_qkv_select_size,
    /* 1.2, step inputs */
    cattn_prepare_pos_seq_lens,
    cattn_gather_block_tables,
    cattn_compute_slot_mappings,
    cattn_combine_sampled_and_draft_tokens,
    cattn_step_batch_check,
    /* 1.2, speculative decoding */
    cattn_eagle_step_update_slot_mapping_and_metadata,
    cattn_eagle_prepare_inputs_padded,
    cattn_eagle_prepare_next_token_padded,
    cattn_compute_new_slot_mapping,
    cattn_copy_and_expand_eagle_inputs,
    cattn_update_num_computed_tokens_for_batch_change,
    cattn_step_inputs_size,
};

}  // namespace

extern "C" {

CATTN_API uint32_t cattn_version(void) { return CATTN_VERSION_NUMBER; }

CATTN_API const char* cattn_version_string(void) { return CATTN_VERSION_STRING; }

CATTN_API const cattn_api_t* cattn_get_api(uint32_t abi_major) {
  return abi_major == CATTN_VERSION_MAJOR ? &kApi : nullptr;
}

}  // extern "C"
