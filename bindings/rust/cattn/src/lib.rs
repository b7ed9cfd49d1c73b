// SPDX-License-Identifier: Apache-2.0
//! Safe Rust API of libcattn: vLLM's attention-backend metadata utilities behind a C ABI.
//!
//! Every utility of `cattn.h` has a module named after vLLM's function and a free function of
//! the same name (re-exported here). What each call computes, its rules and statuses, the
//! parity with vLLM, worked examples and the history are documented once, in the libcattn
//! repository's `docs/api/<utility>.md` pages (index: `docs/api/README.md`; the rules every
//! call shares: `docs/api/conventions.md`); each module names its page, and the items here
//! document the Rust side: types, errors, panics and safety. The conventions:
//!
//! - Every fallible call returns [`Result`]; an [`Error`] carries the [`Status`] and the
//!   library's message for it (`"<function>: <argument> <problem> (got X, expected Y)"`), the
//!   function and argument named in Rust terms where the crate's table of names covers the call
//!   ([`Error::message`]) and as the library wrote it ([`Error::c_message`]). A failed call has
//!   written nothing to its outputs.
//! - Tensors are borrowed views: [`TensorRef`] for inputs and [`TensorMut`] for outputs, made
//!   safely from host slices (shapes are checked against the slice) or, `unsafe`ly, from device
//!   pointers. Host tensors run the host implementation synchronously; CUDA tensors are
//!   enqueued on the call's [`Stream`].
//! - Handles ([`Context`], [`LocalAttentionPlan`], [`StepPlan`], [`Comm`]) free themselves when
//!   dropped and are `Send`/`Sync` as the thread-safety rules of `docs/api/conventions.md`
//!   allow.
//! - For CUDA graphs (since 1.1): [`compute_causal_conv1d_metadata_capturable`] and
//!   [`make_local_attention_virtual_batches_capturable`] compute on the device what their host
//!   calls plan on the host, and a [`StepPlan`] computes a whole step's metadata in one launch
//!   (module [`step_plan`]).
//! - The step inputs (since 1.2): [`prepare_pos_seq_lens()`], [`gather_block_tables()`],
//!   [`compute_slot_mappings()`], [`combine_sampled_and_draft_tokens()`] and
//!   [`step_batch_check()`] compute what an engine builds every step before attention from the
//!   scheduler's output, under one padding contract (module [`mod@prepare_pos_seq_lens`]); the
//!   step plan computes the same in its launch. [`step_inputs_size()`] counts the live tokens
//!   and logits their outputs need.
//! - Speculative decoding (since 1.2): [`eagle_step_update_slot_mapping_and_metadata()`],
//!   [`eagle_prepare_inputs_padded()`], [`eagle_prepare_next_token_padded()`],
//!   [`compute_new_slot_mapping()`], [`copy_and_expand_eagle_inputs()`] and
//!   [`update_num_computed_tokens_for_batch_change()`] compute EAGLE's per-step metadata
//!   (vLLM's spec_decode/utils.py); their masks are one byte per entry
//!   ([`TensorRef::from_bools`]; module [`mod@eagle_step_update_slot_mapping_and_metadata`]).
//! - Every host utility also has a one-call helper that takes host slices and returns owned
//!   `Vec`s: it makes the size query, allocates the outputs, converts between `usize` and the
//!   library's `i64` and passes the default stream itself ([`pcp_query_restore_idx`],
//!   [`dcp_local_seq_lens`], [`dcp_local_seq_lens_all_ranks`], [`causal_conv1d_metadata`],
//!   [`local_attention_virtual_batches`], [`mamba_block_table`], [`queries_extended_by_n`],
//!   [`kv_sharing_fast_prefill_metadata`], [`split_query_start_loc`],
//!   [`split_query_start_loc_with_extends`], [`split_prefill_chunks`],
//!   [`reorder_batch_to_split_decodes_and_prefills`], [`query_lens`], [`num_computed_tokens`],
//!   [`token_to_req_indices_vec`], [`mm_prefix_range_tensor`], [`mm_prefix_query_ranges`],
//!   [`pcp_qkv_halves`], [`log2_lse_to_ln_vec`], [`resolve_layout`], and for the step inputs
//!   of 1.2 [`prepare_pos_seq_lens_host`], [`gather_block_tables_host`],
//!   [`compute_slot_mappings_host`], [`combine_sampled_and_draft_tokens_host`],
//!   [`step_batch_check_host`], [`eagle_step_update_slot_mapping_and_metadata_host`],
//!   [`eagle_prepare_inputs_padded_host`], [`eagle_prepare_next_token_padded_host`],
//!   [`compute_new_slot_mapping_host`], [`copy_and_expand_eagle_inputs_host`] and
//!   [`update_num_computed_tokens_for_batch_change_host`]; the layout, per-layer and
//!   bound utilities return owned values already). Their index and length slices are of one
//!   [`IndexElement`] type, `i32` or `i64`, which the results keep; another element type does
//!   not compile. Their parameters come in the order of the C args struct's fields, as the C++
//!   and Go helpers' do.
//! - Calls go through the library's function table ([`Api`]): the linked library's for the
//!   free functions, or one loaded at run time with [`dynamic::Library`]; the one-call helpers
//!   are methods of [`Api`] too.
//!
//! ```
//! // The PCP restore index of two requests of 8 and 12 tokens (int64 in, int64 out).
//! let idx = cattn::pcp_query_restore_idx(&[0i64, 8, 20])?;
//! assert_eq!(idx[..8], [0, 1, 2, 3, 10, 11, 12, 13]);
//!
//! // Every DCP rank's share of three int32 sequence lengths, one row per request.
//! let dcp = cattn::dcp_local_seq_lens_all_ranks(&[16i32, 10, 17], 2, 4)?;
//! assert_eq!(dcp, [[8, 8], [6, 4], [9, 8]]);
//!
//! // Errors carry the status and the library's message, in Rust terms (and as written).
//! let err = cattn::pcp_query_restore_idx(&[0, 3]).unwrap_err();
//! assert_eq!(err.status(), cattn::Status::InvalidArgument);
//! assert!(err.message().starts_with("cattn::pcp_query_restore_idx: cu_num_tokens "));
//! assert!(err.c_message().starts_with("cattn_get_pcp_query_restore_idx_size: cu_num_tokens "));
//! # Ok::<(), cattn::Error>(())
//! ```
//!
//! Linking: with the default feature `link`, `cattn-sys` finds libcattn through
//! `CATTN_LIB_DIR` or `pkg-config`; at run time the loader must find `libcattn.so.<ABI
//! major>` (e.g. through `LD_LIBRARY_PATH`). Without it (`default-features = false`) nothing is
//! linked: load the library with [`dynamic::Library`] and call its [`Api`]; [`Api::linked`], and
//! so every free function, then fails with [`Status::NotSupported`].

#![deny(missing_docs)]

mod api;
mod comm;
mod context;
mod error;
mod metadata;
mod names;
mod one_call;
mod tensor;

pub mod combine_sampled_and_draft_tokens;
pub mod compute_causal_conv1d_metadata;
pub mod compute_mm_prefix_range_tensor;
pub mod compute_new_slot_mapping;
pub mod compute_slot_mappings;
pub mod copy_and_expand_eagle_inputs;
pub mod eagle_prepare_inputs_padded;
pub mod eagle_prepare_next_token_padded;
pub mod eagle_step_update_slot_mapping_and_metadata;
pub mod extend_all_queries_by_n;
pub mod fused_pcp_qkv_select;
pub mod gather_block_tables;
pub mod get_dcp_local_seq_lens;
pub mod get_kv_cache_layout;
pub mod get_pcp_query_restore_idx;
pub mod get_per_layer_parameters;
pub mod kv_cache_layout;
pub mod log2_lse_to_ln;
pub mod make_kv_sharing_fast_prefill_common_attn_metadata;
pub mod make_local_attention_virtual_batches;
pub mod mamba_get_block_table_tensor;
pub mod max_local_attention_virtual_batches;
pub mod naive_query_lens;
pub mod pcp_kv_allgather_and_restore;
pub mod prepare_pos_seq_lens;
pub mod split_decodes_and_prefills;
pub mod step_batch_check;
pub mod step_inputs_size;
pub mod step_plan;
pub mod token_to_req_indices;
pub mod unpadded;
pub mod update_num_computed_tokens_for_batch_change;

#[cfg(unix)]
pub mod dynamic;

pub use cattn_sys as sys;

pub use api::Api;
pub use comm::{comm_get_unique_id, Comm, CommUniqueId};
pub use context::Context;
pub use error::{Error, Result, Status};
pub use metadata::{CommonAttnMetadata, MetadataScalars, NewerFields};
pub use tensor::{DataType, Device, Element, IndexElement, Stream, TensorMut, TensorRef};

pub use combine_sampled_and_draft_tokens::{
    combine_sampled_and_draft_tokens, combine_sampled_and_draft_tokens_host,
    CombineSampledAndDraftTokensArgs, CombineSampledAndDraftTokensOutputs, StepLogits,
};
pub use compute_causal_conv1d_metadata::{
    causal_conv1d_metadata, compute_causal_conv1d_metadata,
    compute_causal_conv1d_metadata_capturable, compute_causal_conv1d_metadata_size,
    CausalConv1dCapturableOutputs, CausalConv1dMetadata, CausalConv1dOutputs, CausalConv1dSize,
};
pub use compute_mm_prefix_range_tensor::{
    compute_mm_prefix_range_tensor, compute_mm_prefix_range_tensor_size,
    fill_mm_prefix_query_ranges, mm_prefix_query_ranges, mm_prefix_range_tensor,
    MmPrefixRangeTensor, MmPrefixRanges,
};
pub use compute_new_slot_mapping::{
    compute_new_slot_mapping, compute_new_slot_mapping_host, ComputeNewSlotMappingArgs,
};
pub use compute_slot_mappings::{
    compute_slot_mappings, compute_slot_mappings_host, ComputeSlotMappingsArgs,
    SlotMappingContract, SlotMappingParams, SlotMode,
};
pub use copy_and_expand_eagle_inputs::{
    copy_and_expand_eagle_inputs, copy_and_expand_eagle_inputs_host, CopyAndExpandEagleInputsArgs,
    CopyAndExpandEagleInputsOutputs, CopyAndExpandEagleParams, EagleDraftInputs,
};
pub use eagle_prepare_inputs_padded::{
    eagle_prepare_inputs_padded, eagle_prepare_inputs_padded_host, EaglePrepareInputsPaddedArgs,
    EaglePrepareInputsPaddedOutputs, EaglePreparedInputs,
};
pub use eagle_prepare_next_token_padded::{
    eagle_prepare_next_token_padded, eagle_prepare_next_token_padded_host, EagleNextTokens,
    EaglePrepareNextTokenPaddedArgs, EaglePrepareNextTokenPaddedOutputs,
};
pub use eagle_step_update_slot_mapping_and_metadata::{
    eagle_step_update_slot_mapping_and_metadata, eagle_step_update_slot_mapping_and_metadata_host,
    EagleStep, EagleStepUpdateSlotMappingAndMetadataArgs,
    EagleStepUpdateSlotMappingAndMetadataOutputs,
};
pub use extend_all_queries_by_n::{
    extend_all_queries_by_n, extend_all_queries_by_n_in_place,
    extend_all_queries_by_n_in_place_with, extend_all_queries_by_n_with, queries_extended_by_n,
    DcpGroup, ExtendNewerOutputs, ExtendOutputs, ExtendedQueries,
};
pub use fused_pcp_qkv_select::{
    fused_pcp_qkv_select, fused_pcp_qkv_select_size, pcp_qkv_halves, FusedPcpQkvSelectArgs,
    FusedPcpQkvSelectOutputs, FusedPcpQkvSelectRows, HeadRows, PcpQkvHalves,
};
pub use gather_block_tables::{
    gather_block_tables, gather_block_tables_host, GatherBlockTablesArgs,
};
pub use get_dcp_local_seq_lens::{
    dcp_local_seq_lens, dcp_local_seq_lens_all_ranks, get_dcp_local_seq_lens,
    get_dcp_local_seq_lens_nd, DcpLocalSeqLensArgs, DcpRank,
};
pub use get_kv_cache_layout::{
    get_kv_cache_layout, is_valid_kv_cache_layout, KvCacheLayout, KvCacheLayoutArgs,
    SupportedLayouts, UserSetting,
};
pub use get_pcp_query_restore_idx::{
    get_pcp_query_restore_idx, get_pcp_query_restore_idx_size, pcp_query_restore_idx,
};
pub use get_per_layer_parameters::{
    get_per_layer_parameters, infer_global_hyperparameters, AttentionLayerDesc,
    GlobalHyperparameters, PerLayerParameters,
};
pub use kv_cache_layout::{
    get_supported_kv_cache_layouts, resolve_kv_cache_layout, resolve_layout, CacheLayout, HncShape,
    LayoutProperties, LayoutSetting, LayoutStrides, ResolveArgs, Resolved,
};
pub use log2_lse_to_ln::{
    log2_lse_to_ln, log2_lse_to_ln_f32, log2_lse_to_ln_f64, log2_lse_to_ln_half,
    log2_lse_to_ln_in_place, log2_lse_to_ln_vec, HalfType, LseElement, LseRounding,
};
pub use make_kv_sharing_fast_prefill_common_attn_metadata::{
    kv_sharing_fast_prefill_metadata, make_kv_sharing_fast_prefill_common_attn_metadata,
    FastPrefillBatch, FastPrefillMetadata, FastPrefillOutputs,
};
pub use make_local_attention_virtual_batches::{
    local_attention_virtual_batches, make_local_attention_virtual_batches,
    make_local_attention_virtual_batches_capturable, make_local_attention_virtual_batches_size,
    make_local_attention_virtual_batches_with_args, LocalAttentionArgs, LocalAttentionBatches,
    LocalAttentionCapturableArgs, LocalAttentionCapturableOutputs, LocalAttentionOutputs,
    LocalAttentionPlan, LocalAttentionPlanSize, PlanShape,
};
pub use mamba_get_block_table_tensor::{
    mamba_block_table, mamba_get_block_table_tensor, MambaBlockTableArgs, MambaCacheMode,
};
pub use max_local_attention_virtual_batches::{
    max_local_attention_virtual_batches, VirtualBatchBound,
};
pub use naive_query_lens::{
    compute_num_computed_tokens, naive_query_lens, num_computed_tokens, query_lens,
};
pub use pcp_kv_allgather_and_restore::{
    pcp_kv_allgather_and_restore, pcp_kv_allgather_and_restore_workspace_size, PcpKvAllgatherArgs,
    PcpKvAllgatherOutputs, Workspace,
};
pub use prepare_pos_seq_lens::{
    prepare_pos_seq_lens, prepare_pos_seq_lens_host, PreparePosSeqLensArgs,
    PreparePosSeqLensOutputs, StepInputs,
};
pub use split_decodes_and_prefills::{
    reorder_batch_to_split_decodes_and_prefills, split_decodes_and_prefills,
    split_decodes_and_prefills_capturable, split_decodes_prefills_and_extends,
    split_decodes_prefills_and_extends_capturable, split_prefill_chunks, split_query_start_loc,
    split_query_start_loc_with_extends, DecodeExtendPrefillSplit, DecodePrefillSplit, ReorderPlan,
    SplitBatch, SplitCapturableArgs, SplitOptions, FROM_QUERY_START_LOC,
};
pub use step_batch_check::{
    step_batch_check, step_batch_check_host, StepBatchCheckArgs, StepCheckField, StepCheckReport,
};
pub use step_inputs_size::{step_inputs_size, StepInputsSize, StepInputsSizeArgs};
pub use step_plan::{
    step_plan_create, KvGroupParams, StepBatch, StepConv1dParams, StepCount, StepDcpParams,
    StepDraftParams, StepExtendParams, StepInputsParams, StepLocalAttentionParams, StepMambaParams,
    StepOutputs, StepPlan, StepPlanDesc, StepPlanShape, StepProducts, STEP_NUM_COUNTS,
    STEP_NUM_COUNTS_1_1,
};
pub use token_to_req_indices::{token_to_req_indices, token_to_req_indices_vec};
pub use unpadded::unpadded;
pub use update_num_computed_tokens_for_batch_change::{
    update_num_computed_tokens_for_batch_change, update_num_computed_tokens_for_batch_change_host,
    BatchChangeCounts, UpdateNumComputedTokensForBatchChangeArgs,
    UpdateNumComputedTokensForBatchChangeOutputs,
};

/// `CATTN_PAD_SLOT_ID`: the value written past the programs in use (compute_causal_conv1d_metadata), for a
/// column past a row on the device (mamba_get_block_table_tensor), for a slot another DCP
/// rank stores or past the live tokens (compute_slot_mappings), and for a slot past the model's
/// length, rejected or of a padding row (the speculative-decoding calls).
pub const PAD_SLOT_ID: i64 = sys::CATTN_PAD_SLOT_ID as i64;

/// `CATTN_MAX_KV_GROUPS` (1.2): the most KV-cache groups one step plan or batch check handles,
/// the length of their per-group arrays.
pub const MAX_KV_GROUPS: usize = sys::CATTN_MAX_KV_GROUPS as usize;

/// The version of the header these bindings were generated from, MAJOR * 10000 + MINOR * 100
/// + PATCH; compare it with [`version`].
pub const HEADER_VERSION: u32 = sys::CATTN_VERSION_NUMBER;

/// The version the linked library was built as (`cattn_version`).
///
/// ```
/// assert_eq!(cattn::version()?, cattn::HEADER_VERSION);
/// let major = cattn::sys::CATTN_VERSION_MAJOR;
/// assert!(cattn::version_string()?.starts_with(&format!("{major}.")));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn version() -> Result<u32> {
    Api::linked()?.version()
}

/// The linked library's version as "MAJOR.MINOR.PATCH" (`cattn_version_string`).
pub fn version_string() -> Result<String> {
    Api::linked()?.version_string()
}

/// How many CUDA devices the linked library can use (0 in a CPU-only build, without a driver or
/// without a device).
pub fn cuda_device_count() -> Result<i32> {
    Api::linked()?.cuda_device_count()
}

#[cfg(test)]
mod tests {
    /// The crates carry the version of the header they were generated from: a version bump of
    /// libcattn regenerates cattn-sys and bumps the workspace version with it.
    #[test]
    fn crate_version_follows_the_header() {
        let header = std::str::from_utf8(&crate::sys::CATTN_VERSION_STRING[..])
            .unwrap()
            .trim_end_matches('\0');
        assert_eq!(
            env!("CARGO_PKG_VERSION"),
            header,
            "set version in bindings/rust/Cargo.toml to the header's CATTN_VERSION_STRING"
        );
    }
}
