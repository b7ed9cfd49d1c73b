// SPDX-License-Identifier: Apache-2.0
//! The step plan (`cattn_step_plan_*`, since 1.1): a whole engine step's metadata in one kernel
//! launch, replayable in a CUDA graph.
//!
//! A [`StepPlan`] is made from a [`StepPlanDesc`] - the [`StepProducts`] to compute, their
//! parameters and the capacities of a batch - on the host, without a GPU. It keeps only those on
//! the host; every per-step count (requests in use, tokens, programs, virtual batches, logits
//! indices) is derived on the device from the batch's tensors. Capture [`StepPlan::run`] once
//! per batch-size bucket, write each step's batch into the same buffers, and replay: every
//! output is recomputed from the new contents. Engines pad a batch to its graph's size with
//! zero-length requests (`query_start_loc` repeating its last entry, seq_len 0); each product
//! treats those as its utility does an empty request.
//!
//! Each product gives the values of its own utility's device path:
//!
//! | [`StepProducts`] | the utility |
//! |---|---|
//! | `DCP_LOCAL_SEQ_LENS` | [`crate::get_dcp_local_seq_lens()`] |
//! | `PCP_QUERY_RESTORE_IDX` | [`crate::get_pcp_query_restore_idx()`] |
//! | `MAMBA_BLOCK_TABLE` | [`crate::mamba_get_block_table_tensor()`] |
//! | `CAUSAL_CONV1D_METADATA` | [`crate::compute_causal_conv1d_metadata_capturable()`] |
//! | `LOCAL_ATTENTION` | [`crate::make_local_attention_virtual_batches_capturable()`] |
//! | `FAST_PREFILL` | [`crate::make_kv_sharing_fast_prefill_common_attn_metadata()`] |
//! | `EXTEND_QUERIES` | [`crate::extend_all_queries_by_n()`] |
//! | `INPUTS` (1.2) | [`crate::prepare_pos_seq_lens()`] |
//! | `BLOCK_TABLES` (1.2) | [`crate::gather_block_tables()`], every group |
//! | `SLOT_MAPPINGS` (1.2) | [`crate::compute_slot_mappings()`], every TOKEN_TO_KV_SLOT group |
//! | `LOGITS_INDICES` (1.2) | [`crate::combine_sampled_and_draft_tokens()`] (no input ids) |
//! | `TOKEN_TO_REQ` (1.2) | [`crate::token_to_req_indices()`] of the live tokens |
//! | `SPLIT` (1.2) | [`crate::split_decodes_and_prefills()`] of the live rows, to the counts |
//! | `DRAFT_NEXT_TOKEN` (1.2) | [`crate::eagle_prepare_next_token_padded()`] |
//! | `DRAFT_PREPARE_INPUTS` (1.2) | [`crate::eagle_prepare_inputs_padded()`] |
//! | `DRAFT_EXPAND` (1.2) | [`crate::copy_and_expand_eagle_inputs()`] |
//! | `DRAFT_SLOT_MAPPING` (1.2) | [`crate::compute_new_slot_mapping()`], N = P - shift |
//! | `DRAFT_STEP` (1.2) | [`crate::eagle_step_update_slot_mapping_and_metadata()`] |
//! | `BATCH_CHANGE` (1.2) | [`crate::update_num_computed_tokens_for_batch_change()`] |
//!
//! With the step-input products (1.2) the plan computes the batch's query_start_loc, seq_lens
//! and block tables itself, from the scheduler's counts and the persistent state
//! ([`StepBatch::num_scheduled_tokens`], [`StepBatch::idx_mapping`], ...), under the padding
//! contract of [`mod@crate::prepare_pos_seq_lens`]'s module, and the 1.1 products read those.
//!
//! The drafter products (1.2, [`StepProducts::DRAFT_PRODUCTS`]) read the verified batch and the
//! rejection sampler's output, a later point of an engine step than the step-input products, so
//! a plan selects one or the other. `DRAFT_NEXT_TOKEN` to `DRAFT_SLOT_MAPPING` are one chain
//! (each needs the ones before it); `DRAFT_STEP` and `BATCH_CHANGE` run between steps and are
//! their plan's only product. Their parameters are
//! [`StepPlanDesc::draft`] ([`StepDraftParams`]), their tensors the `StepBatch` and
//! `StepOutputs` fields from `sampled_token_ids` and `next_token_ids` on; the library checks
//! the rules, the bindings pass the values through.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/step_plan.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::fmt;
use std::mem::size_of;
use std::ops::{BitAnd, BitOr, BitOrAssign};
use std::ptr::NonNull;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::compute_slot_mappings::{SlotMappingContract, SlotMode};
use crate::error::{Error, Result, Status};
use crate::get_dcp_local_seq_lens::DcpRank;
use crate::mamba_get_block_table_tensor::MambaCacheMode;
use crate::pcp_kv_allgather_and_restore::Workspace;
use crate::tensor::{raw_in, raw_out, Stream, TensorMut, TensorRef};
use crate::MAX_KV_GROUPS;

/// A set of step-plan products (`CATTN_STEP_*` bits), combined with `|`.
///
/// ```
/// use cattn::StepProducts;
/// let p = StepProducts::CAUSAL_CONV1D_METADATA | StepProducts::LOCAL_ATTENTION;
/// assert!(p.contains(StepProducts::LOCAL_ATTENTION));
/// assert!(!p.contains(StepProducts::FAST_PREFILL));
/// assert_eq!(p.bits(), cattn::sys::CATTN_STEP_CAUSAL_CONV1D_METADATA
///                      | cattn::sys::CATTN_STEP_LOCAL_ATTENTION);
/// assert_eq!(StepProducts::from_bits(1 << 19), None);
/// assert!(StepProducts::INPUT_PRODUCTS.contains(StepProducts::INPUTS | StepProducts::SPLIT));
/// assert!(!StepProducts::ALL.contains(StepProducts::INPUTS)); // ALL keeps 1.1's meaning
/// assert!(StepProducts::DRAFT_PRODUCTS.contains(StepProducts::DRAFT_NEXT_TOKEN));
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct StepProducts(u32);

impl StepProducts {
    /// `CATTN_STEP_DCP_LOCAL_SEQ_LENS`: get_dcp_local_seq_lens.
    pub const DCP_LOCAL_SEQ_LENS: StepProducts = StepProducts(sys::CATTN_STEP_DCP_LOCAL_SEQ_LENS);
    /// `CATTN_STEP_PCP_QUERY_RESTORE_IDX`: get_pcp_query_restore_idx.
    pub const PCP_QUERY_RESTORE_IDX: StepProducts =
        StepProducts(sys::CATTN_STEP_PCP_QUERY_RESTORE_IDX);
    /// `CATTN_STEP_MAMBA_BLOCK_TABLE`: mamba_get_block_table_tensor.
    pub const MAMBA_BLOCK_TABLE: StepProducts = StepProducts(sys::CATTN_STEP_MAMBA_BLOCK_TABLE);
    /// `CATTN_STEP_CAUSAL_CONV1D_METADATA`: compute_causal_conv1d_metadata_capturable.
    pub const CAUSAL_CONV1D_METADATA: StepProducts =
        StepProducts(sys::CATTN_STEP_CAUSAL_CONV1D_METADATA);
    /// `CATTN_STEP_LOCAL_ATTENTION`: make_local_attention_virtual_batches_capturable.
    pub const LOCAL_ATTENTION: StepProducts = StepProducts(sys::CATTN_STEP_LOCAL_ATTENTION);
    /// `CATTN_STEP_FAST_PREFILL`: make_kv_sharing_fast_prefill_common_attn_metadata (always the
    /// decode batch: the utility's `max_query_len == 1` passthrough is the caller's decision).
    pub const FAST_PREFILL: StepProducts = StepProducts(sys::CATTN_STEP_FAST_PREFILL);
    /// `CATTN_STEP_EXTEND_QUERIES`: extend_all_queries_by_n.
    pub const EXTEND_QUERIES: StepProducts = StepProducts(sys::CATTN_STEP_EXTEND_QUERIES);
    /// `CATTN_STEP_INPUTS` (1.2): query_start_loc, seq_lens, positions and
    /// num_computed_tokens from the scheduled counts (prepare_pos_seq_lens); the 1.1 products
    /// then read the computed query_start_loc and seq_lens.
    pub const INPUTS: StepProducts = StepProducts(sys::CATTN_STEP_INPUTS);
    /// `CATTN_STEP_BLOCK_TABLES` (1.2): every group's batch block table (gather_block_tables);
    /// the 1.1 products then read group `inputs.table_group`'s.
    pub const BLOCK_TABLES: StepProducts = StepProducts(sys::CATTN_STEP_BLOCK_TABLES);
    /// `CATTN_STEP_SLOT_MAPPINGS` (1.2): every TOKEN_TO_KV_SLOT group's slot mapping
    /// (compute_slot_mappings).
    pub const SLOT_MAPPINGS: StepProducts = StepProducts(sys::CATTN_STEP_SLOT_MAPPINGS);
    /// `CATTN_STEP_LOGITS_INDICES` (1.2): the logits indices
    /// (combine_sampled_and_draft_tokens, no input ids).
    pub const LOGITS_INDICES: StepProducts = StepProducts(sys::CATTN_STEP_LOGITS_INDICES);
    /// `CATTN_STEP_TOKEN_TO_REQ` (1.2): token_to_req_indices of the live tokens, 0 past them.
    pub const TOKEN_TO_REQ: StepProducts = StepProducts(sys::CATTN_STEP_TOKEN_TO_REQ);
    /// `CATTN_STEP_SPLIT` (1.2): the decode/prefill split of the live rows, to the counts
    /// (split_decodes_and_prefills with treat_short_extends_as_decodes).
    pub const SPLIT: StepProducts = StepProducts(sys::CATTN_STEP_SPLIT);
    /// `CATTN_STEP_ALL_PRODUCTS`: the seven products of 1.1 (the header keeps 1.1's value, so
    /// that code selecting "every product" keeps the products it was written for).
    pub const ALL: StepProducts = StepProducts(sys::CATTN_STEP_ALL_PRODUCTS);
    /// `CATTN_STEP_INPUT_PRODUCTS` (1.2): the six step-input products, [`StepProducts::INPUTS`]
    /// to [`StepProducts::SPLIT`].
    pub const INPUT_PRODUCTS: StepProducts = StepProducts(sys::CATTN_STEP_INPUT_PRODUCTS);
    /// `CATTN_STEP_DRAFT_NEXT_TOKEN` (1.2): the drafter's next tokens and valid counts from the
    /// rejection sampler's output (eagle_prepare_next_token_padded). The drafter products read
    /// the verified batch and the sampler's output: a plan selects them or the step-input
    /// products, not both.
    pub const DRAFT_NEXT_TOKEN: StepProducts = StepProducts(sys::CATTN_STEP_DRAFT_NEXT_TOKEN);
    /// `CATTN_STEP_DRAFT_PREPARE_INPUTS` (1.2): the tokens to sample and rejected counts
    /// (eagle_prepare_inputs_padded); needs [`StepProducts::DRAFT_NEXT_TOKEN`].
    pub const DRAFT_PREPARE_INPUTS: StepProducts =
        StepProducts(sys::CATTN_STEP_DRAFT_PREPARE_INPUTS);
    /// `CATTN_STEP_DRAFT_EXPAND` (1.2): the drafter's input tokens
    /// (copy_and_expand_eagle_inputs); needs [`StepProducts::DRAFT_PREPARE_INPUTS`].
    pub const DRAFT_EXPAND: StepProducts = StepProducts(sys::CATTN_STEP_DRAFT_EXPAND);
    /// `CATTN_STEP_DRAFT_SLOT_MAPPING` (1.2): the slots of the drafter's input tokens
    /// (compute_new_slot_mapping, N = P - shift); needs [`StepProducts::DRAFT_EXPAND`].
    pub const DRAFT_SLOT_MAPPING: StepProducts = StepProducts(sys::CATTN_STEP_DRAFT_SLOT_MAPPING);
    /// `CATTN_STEP_DRAFT_STEP` (1.2): one drafting step's positions, slots and seq_lens
    /// (eagle_step_update_slot_mapping_and_metadata), run between draft steps: the plan's only
    /// product.
    pub const DRAFT_STEP: StepProducts = StepProducts(sys::CATTN_STEP_DRAFT_STEP);
    /// `CATTN_STEP_BATCH_CHANGE` (1.2): the async-scheduling counts across a batch change
    /// (update_num_computed_tokens_for_batch_change): the plan's only product.
    pub const BATCH_CHANGE: StepProducts = StepProducts(sys::CATTN_STEP_BATCH_CHANGE);
    /// `CATTN_STEP_DRAFT_PRODUCTS` (1.2): the six drafter products,
    /// [`StepProducts::DRAFT_NEXT_TOKEN`] to [`StepProducts::BATCH_CHANGE`].
    pub const DRAFT_PRODUCTS: StepProducts = StepProducts(sys::CATTN_STEP_DRAFT_PRODUCTS);

    /// Every bit this header names.
    const KNOWN: u32 = sys::CATTN_STEP_ALL_PRODUCTS
        | sys::CATTN_STEP_INPUT_PRODUCTS
        | sys::CATTN_STEP_DRAFT_PRODUCTS;

    const NAMED: [(StepProducts, &'static str); 19] = [
        (StepProducts::DCP_LOCAL_SEQ_LENS, "DCP_LOCAL_SEQ_LENS"),
        (StepProducts::PCP_QUERY_RESTORE_IDX, "PCP_QUERY_RESTORE_IDX"),
        (StepProducts::MAMBA_BLOCK_TABLE, "MAMBA_BLOCK_TABLE"),
        (
            StepProducts::CAUSAL_CONV1D_METADATA,
            "CAUSAL_CONV1D_METADATA",
        ),
        (StepProducts::LOCAL_ATTENTION, "LOCAL_ATTENTION"),
        (StepProducts::FAST_PREFILL, "FAST_PREFILL"),
        (StepProducts::EXTEND_QUERIES, "EXTEND_QUERIES"),
        (StepProducts::INPUTS, "INPUTS"),
        (StepProducts::BLOCK_TABLES, "BLOCK_TABLES"),
        (StepProducts::SLOT_MAPPINGS, "SLOT_MAPPINGS"),
        (StepProducts::LOGITS_INDICES, "LOGITS_INDICES"),
        (StepProducts::TOKEN_TO_REQ, "TOKEN_TO_REQ"),
        (StepProducts::SPLIT, "SPLIT"),
        (StepProducts::DRAFT_NEXT_TOKEN, "DRAFT_NEXT_TOKEN"),
        (StepProducts::DRAFT_PREPARE_INPUTS, "DRAFT_PREPARE_INPUTS"),
        (StepProducts::DRAFT_EXPAND, "DRAFT_EXPAND"),
        (StepProducts::DRAFT_SLOT_MAPPING, "DRAFT_SLOT_MAPPING"),
        (StepProducts::DRAFT_STEP, "DRAFT_STEP"),
        (StepProducts::BATCH_CHANGE, "BATCH_CHANGE"),
    ];

    /// No product (which a plan refuses: it needs at least one).
    pub const fn empty() -> StepProducts {
        StepProducts(0)
    }

    /// The set of these bits, or `None` when one of them is not a product of this header.
    pub const fn from_bits(bits: u32) -> Option<StepProducts> {
        if bits & !StepProducts::KNOWN == 0 {
            Some(StepProducts(bits))
        } else {
            None
        }
    }

    /// The set of these bits, unknown ones kept (a newer library's product; this one refuses
    /// them when the plan is created).
    pub const fn from_bits_retain(bits: u32) -> StepProducts {
        StepProducts(bits)
    }

    /// The raw `CATTN_STEP_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether no bit is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every product of `other` is in `self`.
    pub const fn contains(self, other: StepProducts) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for StepProducts {
    type Output = StepProducts;
    fn bitor(self, rhs: StepProducts) -> StepProducts {
        StepProducts(self.0 | rhs.0)
    }
}

impl BitOrAssign for StepProducts {
    fn bitor_assign(&mut self, rhs: StepProducts) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for StepProducts {
    type Output = StepProducts;
    fn bitand(self, rhs: StepProducts) -> StepProducts {
        StepProducts(self.0 & rhs.0)
    }
}

impl fmt::Debug for StepProducts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StepProducts(")?;
        let mut rest = self.0;
        let mut first = true;
        for (product, name) in StepProducts::NAMED {
            if self.contains(product) {
                f.write_str(if first { "" } else { " | " })?;
                f.write_str(name)?;
                rest &= !product.0;
                first = false;
            }
        }
        if rest != 0 || first {
            write!(f, "{}{rest:#x}", if first { "" } else { " | " })?;
        }
        f.write_str(")")
    }
}

/// The number of entries of a plan's counts vector (`CATTN_STEP_NUM_COUNTS`): what a plan with
/// a 1.2 product writes.
pub const STEP_NUM_COUNTS: usize = sys::CATTN_STEP_NUM_COUNTS as usize;

/// The counts vector's length for a plan of 1.1 products only (`CATTN_STEP_NUM_COUNTS_1_1`:
/// entries 0 to 7).
pub const STEP_NUM_COUNTS_1_1: usize = sys::CATTN_STEP_NUM_COUNTS_1_1 as usize;

/// An entry of a plan's counts vector ([`StepOutputs::counts`] and `counts_host`): a per-step
/// value derived on the device (`CATTN_STEP_COUNT_*`). The entry of a product the plan does not
/// compute is 0.
///
/// ```
/// use cattn::StepCount;
/// let counts = [19i64, 0, 4, 8, 2, 4, 0, 0, 3, 3, 7, 12, 2, 1, 2, 17];
/// assert_eq!(counts[StepCount::LocalVirtualBatches.index()], 8);
/// assert_eq!(counts[StepCount::SplitPrefillTokens.index()], 17);
/// assert_eq!(StepCount::ALL.len(), cattn::STEP_NUM_COUNTS);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepCount {
    /// `CATTN_STEP_COUNT_TOKENS`: `query_start_loc[B] - query_start_loc[0]`.
    Tokens,
    /// `CATTN_STEP_COUNT_RESTORE_SIZE`: restore-index entries in use.
    RestoreSize,
    /// `CATTN_STEP_COUNT_CONV1D_PROGRAMS`: causal-conv1d programs (`tot`).
    Conv1dPrograms,
    /// `CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES`: V.
    LocalVirtualBatches,
    /// `CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN`: over the virtual batches.
    LocalMaxQueryLen,
    /// `CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN`: over the virtual batches.
    LocalMaxSeqLen,
    /// `CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN`: of fast prefill's decode batch.
    DecodeMaxQueryLen,
    /// `CATTN_STEP_COUNT_DECODE_TOKENS`: of fast prefill's decode batch.
    DecodeTokens,
    /// `CATTN_STEP_COUNT_NUM_REQS` (1.2): the live rows, num_reqs (step inputs).
    NumReqs,
    /// `CATTN_STEP_COUNT_NUM_LOGITS` (1.2): the logits ([`StepProducts::LOGITS_INDICES`]).
    NumLogits,
    /// `CATTN_STEP_COUNT_MAX_QUERY_LEN` (1.2): the largest live query length.
    MaxQueryLen,
    /// `CATTN_STEP_COUNT_MAX_SEQ_LEN` (1.2): the largest live seq_len
    /// ([`StepProducts::INPUTS`]).
    MaxSeqLen,
    /// `CATTN_STEP_COUNT_SPLIT_DECODES` (1.2): [`StepProducts::SPLIT`]'s num_decodes.
    SplitDecodes,
    /// `CATTN_STEP_COUNT_SPLIT_PREFILLS` (1.2): [`StepProducts::SPLIT`]'s num_prefills.
    SplitPrefills,
    /// `CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS` (1.2): [`StepProducts::SPLIT`]'s
    /// num_decode_tokens.
    SplitDecodeTokens,
    /// `CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS` (1.2): [`StepProducts::SPLIT`]'s
    /// num_prefill_tokens.
    SplitPrefillTokens,
}

impl StepCount {
    /// Every entry, in the order of the counts vector.
    pub const ALL: [StepCount; STEP_NUM_COUNTS] = [
        StepCount::Tokens,
        StepCount::RestoreSize,
        StepCount::Conv1dPrograms,
        StepCount::LocalVirtualBatches,
        StepCount::LocalMaxQueryLen,
        StepCount::LocalMaxSeqLen,
        StepCount::DecodeMaxQueryLen,
        StepCount::DecodeTokens,
        StepCount::NumReqs,
        StepCount::NumLogits,
        StepCount::MaxQueryLen,
        StepCount::MaxSeqLen,
        StepCount::SplitDecodes,
        StepCount::SplitPrefills,
        StepCount::SplitDecodeTokens,
        StepCount::SplitPrefillTokens,
    ];

    /// The entry's index in the counts vector.
    pub const fn index(self) -> usize {
        (match self {
            StepCount::Tokens => sys::CATTN_STEP_COUNT_TOKENS,
            StepCount::RestoreSize => sys::CATTN_STEP_COUNT_RESTORE_SIZE,
            StepCount::Conv1dPrograms => sys::CATTN_STEP_COUNT_CONV1D_PROGRAMS,
            StepCount::LocalVirtualBatches => sys::CATTN_STEP_COUNT_LOCAL_VIRTUAL_BATCHES,
            StepCount::LocalMaxQueryLen => sys::CATTN_STEP_COUNT_LOCAL_MAX_QUERY_LEN,
            StepCount::LocalMaxSeqLen => sys::CATTN_STEP_COUNT_LOCAL_MAX_SEQ_LEN,
            StepCount::DecodeMaxQueryLen => sys::CATTN_STEP_COUNT_DECODE_MAX_QUERY_LEN,
            StepCount::DecodeTokens => sys::CATTN_STEP_COUNT_DECODE_TOKENS,
            StepCount::NumReqs => sys::CATTN_STEP_COUNT_NUM_REQS,
            StepCount::NumLogits => sys::CATTN_STEP_COUNT_NUM_LOGITS,
            StepCount::MaxQueryLen => sys::CATTN_STEP_COUNT_MAX_QUERY_LEN,
            StepCount::MaxSeqLen => sys::CATTN_STEP_COUNT_MAX_SEQ_LEN,
            StepCount::SplitDecodes => sys::CATTN_STEP_COUNT_SPLIT_DECODES,
            StepCount::SplitPrefills => sys::CATTN_STEP_COUNT_SPLIT_PREFILLS,
            StepCount::SplitDecodeTokens => sys::CATTN_STEP_COUNT_SPLIT_DECODE_TOKENS,
            StepCount::SplitPrefillTokens => sys::CATTN_STEP_COUNT_SPLIT_PREFILL_TOKENS,
        }) as usize
    }
}

/// The parameters of [`StepProducts::DCP_LOCAL_SEQ_LENS`] (`cattn_step_dcp_params_t`), as
/// [`crate::get_dcp_local_seq_lens()`] takes them. The default is vLLM's: one rank, every rank,
/// interleave 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepDcpParams {
    /// `>= 1`.
    pub dcp_size: i64,
    /// One rank in `[0, dcp_size)` (output `[B]`) or every rank (output `[B, dcp_size]`).
    pub dcp_rank: DcpRank,
    /// `>= 1`, and `dcp_size * dcp_kv_cache_interleave_size <= i32::MAX`.
    pub dcp_kv_cache_interleave_size: i64,
}

impl Default for StepDcpParams {
    fn default() -> Self {
        let init = sys::CATTN_STEP_PLAN_DESC_INIT.dcp;
        StepDcpParams {
            dcp_size: init.dcp_size,
            dcp_rank: if init.dcp_rank == i64::from(sys::CATTN_DCP_ALL_RANKS) {
                DcpRank::All
            } else {
                DcpRank::Rank(init.dcp_rank)
            },
            dcp_kv_cache_interleave_size: init.dcp_kv_cache_interleave_size,
        }
    }
}

/// The parameters of [`StepProducts::MAMBA_BLOCK_TABLE`] (`cattn_step_mamba_params_t`), as
/// [`crate::mamba_get_block_table_tensor()`] takes them. The default: block size 1, no
/// speculative blocks, mode none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepMambaParams {
    /// `>= 1` (align only).
    pub block_size: i64,
    /// `>= 0` (align only).
    pub num_speculative_blocks: i64,
    /// vLLM's mamba_cache_mode.
    pub mode: MambaCacheMode,
}

impl Default for StepMambaParams {
    fn default() -> Self {
        let init = sys::CATTN_STEP_PLAN_DESC_INIT.mamba;
        StepMambaParams {
            block_size: init.block_size,
            num_speculative_blocks: init.num_speculative_blocks,
            mode: MambaCacheMode::None,
        }
    }
}

/// The parameters of [`StepProducts::CAUSAL_CONV1D_METADATA`] (`cattn_step_conv1d_params_t`).
/// The default is vLLM's `block_m` of 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepConv1dParams {
    /// Tokens per program, `>= 1`.
    pub block_m: i64,
}

impl Default for StepConv1dParams {
    fn default() -> Self {
        StepConv1dParams {
            block_m: sys::CATTN_STEP_PLAN_DESC_INIT.conv1d.block_m,
        }
    }
}

/// The parameters of [`StepProducts::LOCAL_ATTENTION`]
/// (`cattn_step_local_attention_params_t`). They have no default: the default (0, 0) is
/// refused when the product is selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepLocalAttentionParams {
    /// C, `>= 1`.
    pub attn_chunk_size: i64,
    /// `>= 1`, divides `attn_chunk_size`.
    pub block_size: i64,
}

/// The parameters of [`StepProducts::EXTEND_QUERIES`] (`cattn_step_extend_params_t`). The
/// default adds 1 token, as vLLM's extend_all_queries_by_1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepExtendParams {
    /// Tokens added to every request, `>= 0`.
    pub n: i64,
}

impl Default for StepExtendParams {
    fn default() -> Self {
        StepExtendParams {
            n: sys::CATTN_STEP_PLAN_DESC_INIT.extend.n,
        }
    }
}

/// What a [`StepPlan`] computes and the capacities of the batches it takes
/// (`cattn_step_plan_desc_t`). The default is `CATTN_STEP_PLAN_DESC_INIT`: every product's
/// parameters at vLLM's defaults, no product and zero capacities - set `products` and the
/// capacities. The parameters of the products not selected are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepPlanDesc {
    /// At least one product.
    pub products: StepProducts,
    /// `>= 1`: rows of a batch's per-request tensors (B, padding rows included).
    pub max_num_reqs: i64,
    /// `>= 0`: tokens a batch holds (T).
    pub max_num_tokens: i64,
    /// `>= 1`: columns of a batch's block table (mamba, local attention).
    pub max_num_blocks_per_req: i64,
    /// `>= 0`: entries of a batch's logits indices (fast prefill).
    pub max_num_logits: i64,
    /// The parameters of [`StepProducts::DCP_LOCAL_SEQ_LENS`].
    pub dcp: StepDcpParams,
    /// The parameters of [`StepProducts::MAMBA_BLOCK_TABLE`].
    pub mamba: StepMambaParams,
    /// The parameters of [`StepProducts::CAUSAL_CONV1D_METADATA`].
    pub conv1d: StepConv1dParams,
    /// The parameters of [`StepProducts::LOCAL_ATTENTION`].
    pub local_attention: StepLocalAttentionParams,
    /// The parameters of [`StepProducts::EXTEND_QUERIES`].
    pub extend: StepExtendParams,
    /// R (1.2): the persistent request rows (num_computed_tokens, MRV2 tables), `>= 1` with a
    /// product that reads them.
    pub max_num_persistent_reqs: i64,
    /// The parameters of the step-input products (1.2, [`StepProducts::INPUTS`] to
    /// [`StepProducts::SPLIT`]).
    pub inputs: StepInputsParams,
    /// Each KV-cache group's geometry (1.2): the first `inputs.num_kv_groups` are read.
    pub kv_groups: [KvGroupParams; MAX_KV_GROUPS],
    /// The parameters of the drafter products (1.2, [`StepProducts::DRAFT_NEXT_TOKEN`] to
    /// [`StepProducts::DRAFT_STEP`]).
    pub draft: StepDraftParams,
}

/// One KV-cache group's geometry (`cattn_kv_group_params_t`, since 1.2). The default is
/// `CATTN_STEP_PLAN_DESC_INIT`'s: all zero, a TOKEN_TO_KV_SLOT group (set the sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KvGroupParams {
    /// The group's block size in tokens, `>= 1`.
    pub block_size: i64,
    /// Divides `block_size`: the unit of the group's tables.
    pub kernel_block_size: i64,
    /// W: columns of the group's tables, `>= 1`.
    pub max_num_blocks: i64,
    /// Whether the group has slot mappings.
    pub slot_mode: SlotMode,
}

impl Default for KvGroupParams {
    fn default() -> Self {
        let init = sys::CATTN_STEP_PLAN_DESC_INIT.kv_groups[0];
        KvGroupParams {
            block_size: init.block_size,
            kernel_block_size: init.kernel_block_size,
            max_num_blocks: init.max_num_blocks,
            slot_mode: SlotMode::from_raw(init.slot_mode),
        }
    }
}

/// The parameters of the step-input products (`cattn_step_inputs_params_t`, since 1.2). The
/// default is `CATTN_STEP_PLAN_DESC_INIT`'s: no group (set `num_kv_groups` with a product that
/// reads groups), MRV2, one DCP rank, one new sampled token, decode threshold 1, no uniformity
/// required, table group 0.
///
/// ```
/// let p = cattn::StepInputsParams::default();
/// let init = cattn::sys::CATTN_STEP_PLAN_DESC_INIT.inputs;
/// assert_eq!((p.num_new_sampled_tokens, p.dcp_size), (init.num_new_sampled_tokens, init.dcp_size));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepInputsParams {
    /// The groups in [`StepPlanDesc::kv_groups`]: 1 to [`crate::MAX_KV_GROUPS`].
    pub num_kv_groups: i32,
    /// The slot mappings' contract.
    pub slot_mapping_contract: SlotMappingContract,
    /// The slot mappings' DCP world, `>= 1`.
    pub dcp_size: i64,
    /// This rank, in `[0, dcp_size)`.
    pub dcp_rank: i64,
    /// `>= 1`.
    pub dcp_kv_cache_interleave_size: i64,
    /// Logits per row besides its drafts: 0 or 1.
    pub num_new_sampled_tokens: i64,
    /// [`StepProducts::SPLIT`]: 0 to `i32::MAX`.
    pub decode_threshold: i64,
    /// [`StepProducts::SPLIT`]: vLLM's require_uniform.
    pub require_uniform: bool,
    /// The group whose gathered table the 1.1 products read.
    pub table_group: i32,
}

impl Default for StepInputsParams {
    fn default() -> Self {
        let init = sys::CATTN_STEP_PLAN_DESC_INIT.inputs;
        StepInputsParams {
            num_kv_groups: init.num_kv_groups,
            slot_mapping_contract: SlotMappingContract::from_raw(init.slot_mapping_contract),
            dcp_size: init.dcp_size,
            dcp_rank: init.dcp_rank,
            dcp_kv_cache_interleave_size: init.dcp_kv_cache_interleave_size,
            num_new_sampled_tokens: init.num_new_sampled_tokens,
            decode_threshold: init.decode_threshold,
            require_uniform: init.require_uniform != 0,
            table_group: init.table_group,
        }
    }
}

/// The parameters of the drafter products (`cattn_step_draft_params_t`, since 1.2), as the
/// speculative-decoding calls take them. The default is `CATTN_STEP_PLAN_DESC_INIT`'s: P 1 and
/// every other field 0 (no vocabulary, block size or model length: set those the selected
/// products read), no token limit, no shift.
///
/// ```
/// let p = cattn::StepDraftParams::default();
/// let init = cattn::sys::CATTN_STEP_PLAN_DESC_INIT.draft;
/// assert_eq!(p.num_padding_slots_per_request, init.num_padding_slots_per_request);
/// assert_eq!((p.vocab_size, p.shift_input_ids), (0, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepDraftParams {
    /// [`StepProducts::DRAFT_NEXT_TOKEN`]: `>= 1`.
    pub vocab_size: i64,
    /// [`StepProducts::DRAFT_EXPAND`]: P in `[1, 65536]`, the bonus token plus the parallel
    /// drafts.
    pub num_padding_slots_per_request: i64,
    /// [`StepProducts::DRAFT_EXPAND`]: the token of each request's rejected tail.
    pub padding_token_id: i64,
    /// [`StepProducts::DRAFT_EXPAND`]: the token of slots 2 to P.
    pub parallel_drafting_token_id: i64,
    /// [`StepProducts::DRAFT_EXPAND`]: `>= 0`; 0 = no limit (as the call's).
    pub max_tokens_per_request: i64,
    /// [`StepProducts::DRAFT_SLOT_MAPPING`], [`StepProducts::DRAFT_STEP`]: `>= 1`.
    pub block_size: i64,
    /// [`StepProducts::DRAFT_SLOT_MAPPING`], [`StepProducts::DRAFT_STEP`]: `>= 1`.
    pub max_model_len: i64,
    /// [`StepProducts::DRAFT_EXPAND`]: drop each request's first token (s = 1).
    pub shift_input_ids: bool,
}

impl Default for StepDraftParams {
    fn default() -> Self {
        let init = sys::CATTN_STEP_PLAN_DESC_INIT.draft;
        StepDraftParams {
            vocab_size: init.vocab_size,
            num_padding_slots_per_request: init.num_padding_slots_per_request,
            padding_token_id: init.padding_token_id,
            parallel_drafting_token_id: init.parallel_drafting_token_id,
            max_tokens_per_request: init.max_tokens_per_request,
            block_size: init.block_size,
            max_model_len: init.max_model_len,
            shift_input_ids: init.shift_input_ids != 0,
        }
    }
}

impl StepPlanDesc {
    /// The raw struct. Fails only for a negative [`DcpRank::Rank`] (in C a rank of -1 means
    /// every rank, which here is [`DcpRank::All`]).
    pub fn to_raw(&self) -> Result<sys::cattn_step_plan_desc_t> {
        let dcp_rank = self
            .dcp
            .dcp_rank
            .to_raw("step_plan_create", "desc.dcp.dcp_rank")?;
        Ok(sys::cattn_step_plan_desc_t {
            struct_size: size_of::<sys::cattn_step_plan_desc_t>(),
            products: self.products.bits(),
            reserved0: 0,
            max_num_reqs: self.max_num_reqs,
            max_num_tokens: self.max_num_tokens,
            max_num_blocks_per_req: self.max_num_blocks_per_req,
            max_num_logits: self.max_num_logits,
            dcp: sys::cattn_step_dcp_params_t {
                dcp_size: self.dcp.dcp_size,
                dcp_rank,
                dcp_kv_cache_interleave_size: self.dcp.dcp_kv_cache_interleave_size,
            },
            mamba: sys::cattn_step_mamba_params_t {
                block_size: self.mamba.block_size,
                num_speculative_blocks: self.mamba.num_speculative_blocks,
                mamba_cache_mode: self.mamba.mode.to_raw(),
                reserved0: 0,
            },
            conv1d: sys::cattn_step_conv1d_params_t {
                block_m: self.conv1d.block_m,
            },
            local_attention: sys::cattn_step_local_attention_params_t {
                attn_chunk_size: self.local_attention.attn_chunk_size,
                block_size: self.local_attention.block_size,
            },
            extend: sys::cattn_step_extend_params_t { n: self.extend.n },
            max_num_persistent_reqs: self.max_num_persistent_reqs,
            inputs: sys::cattn_step_inputs_params_t {
                num_kv_groups: self.inputs.num_kv_groups,
                slot_mapping_contract: self.inputs.slot_mapping_contract.raw(),
                dcp_size: self.inputs.dcp_size,
                dcp_rank: self.inputs.dcp_rank,
                dcp_kv_cache_interleave_size: self.inputs.dcp_kv_cache_interleave_size,
                num_new_sampled_tokens: self.inputs.num_new_sampled_tokens,
                decode_threshold: self.inputs.decode_threshold,
                require_uniform: i32::from(self.inputs.require_uniform),
                table_group: self.inputs.table_group,
            },
            kv_groups: self.kv_groups.map(|g| sys::cattn_kv_group_params_t {
                block_size: g.block_size,
                kernel_block_size: g.kernel_block_size,
                max_num_blocks: g.max_num_blocks,
                slot_mode: g.slot_mode.raw(),
                reserved0: 0,
            }),
            draft: sys::cattn_step_draft_params_t {
                vocab_size: self.draft.vocab_size,
                num_padding_slots_per_request: self.draft.num_padding_slots_per_request,
                padding_token_id: self.draft.padding_token_id,
                parallel_drafting_token_id: self.draft.parallel_drafting_token_id,
                max_tokens_per_request: self.draft.max_tokens_per_request,
                block_size: self.draft.block_size,
                max_model_len: self.draft.max_model_len,
                shift_input_ids: i32::from(self.draft.shift_input_ids),
                reserved0: 0,
            },
        })
    }
}

/// The capacities a plan's outputs must hold, derived from its desc
/// (`cattn_step_plan_shape_t`). An output may be longer; every entry past the step's values is
/// written with its sentinel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepPlanShape {
    /// `max_num_tokens`: restore-index entries.
    pub restore_capacity: i64,
    /// `cdiv(max_num_tokens, block_m) + max_num_reqs`: causal-conv1d programs.
    pub conv1d_capacity: i64,
    /// `min(2 * max_num_reqs + cdiv(max_num_tokens, C), max_num_tokens + max_num_reqs)`:
    /// virtual batches (see [`crate::make_local_attention_virtual_batches_capturable()`]).
    pub local_capacity: i64,
    /// `C / block_size`: columns of the local block table.
    pub local_pages: i64,
    /// Align: `1 + num_speculative_blocks`; the copy modes: 0 (the batch block table's
    /// columns).
    pub mamba_columns: i64,
    /// `max_num_tokens + max_num_reqs * (P - shift_input_ids)` (1.2,
    /// [`StepProducts::DRAFT_EXPAND`]): the drafter's input tokens.
    pub draft_token_capacity: i64,
}

/// One step's batch (`cattn_step_batch_t`): int32/int64 tensors in device memory of one GPU.
/// B is `query_start_loc`'s length - 1, at most `max_num_reqs`, padding rows included. A tensor
/// a selected product needs is required; the others may be `None` and are not read.
#[derive(Clone, Debug, Default)]
pub struct StepBatch<'a> {
    /// `[B + 1]`, `1 <= B + 1 <= max_num_reqs + 1` (all products but DCP and mamba).
    pub query_start_loc: Option<TensorRef<'a>>,
    /// `[B]` (DCP, mamba align, local attention, extend).
    pub seq_lens: Option<TensorRef<'a>>,
    /// `[B, cols]`, `1 <= cols <= max_num_blocks_per_req` (mamba, local attention).
    pub block_table: Option<TensorRef<'a>>,
    /// `[R + 1]`, `R <= max_num_reqs`: the PCP restore index's input; `None` =
    /// `query_start_loc`.
    pub cu_num_tokens: Option<TensorRef<'a>>,
    /// `[L]`, `L <= max_num_logits` (fast prefill).
    pub logits_indices: Option<TensorRef<'a>>,
    /// `[1]`: how many of `logits_indices` to read, clamped to `[0, L]` on the device; `None` =
    /// all L (fast prefill).
    pub num_logits_indices: Option<TensorRef<'a>>,
    /// `[1]` (1.2): the live rows, clamped to `[0, B]`; `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// `[B]` ([`StepProducts::INPUTS`], 1.2): B is then its length, and `query_start_loc`,
    /// `seq_lens` and `block_table` must be `None` (the plan computes them).
    pub num_scheduled_tokens: Option<TensorRef<'a>>,
    /// `[B]` (1.2): the persistent row of each batch row (inputs, tables, MRV2).
    pub idx_mapping: Option<TensorRef<'a>>,
    /// `[R]` ([`StepProducts::INPUTS`], 1.2).
    pub num_computed_tokens: Option<TensorRef<'a>>,
    /// Optional `[B]` ([`StepProducts::LOGITS_INDICES`], 1.2): the drafts of each row.
    pub num_draft_tokens: Option<TensorRef<'a>>,
    /// `[N]` (1.2): the positions slot mappings read without [`StepProducts::INPUTS`].
    pub positions: Option<TensorRef<'a>>,
    /// Per group (1.2): `[R, W]` persistent rows (MRV2), `[B, W]` batch rows (V1 slot
    /// mappings).
    pub kv_block_tables: [Option<TensorRef<'a>>; MAX_KV_GROUPS],
    /// Per group, optional (1.2): `[R]` entries in use ([`StepProducts::BLOCK_TABLES`]).
    pub kv_num_blocks: [Option<TensorRef<'a>>; MAX_KV_GROUPS],
    // 1.2, the drafter products. B: the verified batch's `query_start_loc` length - 1 (the chain
    // DRAFT_NEXT_TOKEN to DRAFT_SLOT_MAPPING, whose DRAFT_SLOT_MAPPING reads `block_table`
    // `[B, W]`), `positions`' length (DRAFT_STEP, which reads `positions`, `block_table` and
    // `seq_lens`), `prev_positions`' length n (BATCH_CHANGE).
    /// `[B, S]`, -1 rejected ([`StepProducts::DRAFT_NEXT_TOKEN`], 1.2).
    pub sampled_token_ids: Option<TensorRef<'a>>,
    /// Optional `[B]` flags, one byte each ([`StepProducts::DRAFT_NEXT_TOKEN`], 1.2).
    pub discard_request_mask: Option<TensorRef<'a>>,
    /// `[B]` ([`StepProducts::DRAFT_NEXT_TOKEN`], 1.2).
    pub backup_next_token_ids: Option<TensorRef<'a>>,
    /// `[B]` inclusive sum ([`StepProducts::DRAFT_PREPARE_INPUTS`], 1.2).
    pub cu_num_draft_tokens: Option<TensorRef<'a>>,
    /// `[T]`, `T <= max_num_tokens` ([`StepProducts::DRAFT_EXPAND`], 1.2).
    pub target_token_ids: Option<TensorRef<'a>>,
    /// `[T']` ([`StepProducts::DRAFT_EXPAND`], 1.2).
    pub target_positions: Option<TensorRef<'a>>,
    /// `[n]` previous row of each row, negative = new ([`StepProducts::BATCH_CHANGE`], 1.2; it
    /// also reads `num_computed_tokens`, `[M >= n]`).
    pub prev_positions: Option<TensorRef<'a>>,
    /// `[n]` ([`StepProducts::BATCH_CHANGE`], 1.2).
    pub num_accepted_tokens: Option<TensorRef<'a>>,
    /// `[n_prev]` ([`StepProducts::BATCH_CHANGE`], 1.2).
    pub valid_sampled_token_count: Option<TensorRef<'a>>,
    /// `[n_prev]` ([`StepProducts::BATCH_CHANGE`], 1.2).
    pub prev_num_draft_tokens: Option<TensorRef<'a>>,
    /// `[n]` ([`StepProducts::BATCH_CHANGE`], 1.2).
    pub cpu_num_computed_tokens: Option<TensorRef<'a>>,
}

/// Where a [`StepPlan::run`] writes (`cattn_step_outputs_t`): int32/int64 tensors in device
/// memory on the batch's GPU, except `counts_host`. Every output of a selected product is
/// required unless marked optional; every output of a product the plan does not compute must be
/// `None`. Capacities come from [`StepPlan::shape`]; a capacity output may be longer, and every
/// entry past the step's values is written with its sentinel. No output may overlap an input
/// or another output (the products run side by side in one grid, so none may alias its input
/// in place), except four of the drafter products' (1.2), which may be the very view of their
/// input (the same address, dtype, shape and strides; on the device, so both views come from
/// the unsafe [`TensorRef::from_raw_parts`] / [`TensorMut::from_raw_parts`]):
/// `draft_positions` and `draft_seq_lens` of `batch.positions` and `batch.seq_lens`
/// ([`StepProducts::DRAFT_STEP`]), `carried_num_computed_tokens` and
/// `carried_num_accepted_tokens` of `batch.num_computed_tokens` and `batch.num_accepted_tokens`
/// ([`StepProducts::BATCH_CHANGE`]).
#[derive(Debug, Default)]
pub struct StepOutputs<'a> {
    /// `[B]` one rank, `[B, dcp_size]` every rank.
    pub dcp_local_seq_lens: Option<TensorMut<'a>>,
    /// `[>= restore_capacity]`; -1 past the size.
    pub pcp_query_restore_idx: Option<TensorMut<'a>>,
    /// Align: `[B, 1 + num_speculative_blocks]`; the copy modes: `[B, cols]`.
    pub mamba_block_table: Option<TensorMut<'a>>,
    /// Optional `[B]`.
    pub conv1d_nums: Option<TensorMut<'a>>,
    /// Optional `[>= conv1d_capacity]`; [`crate::PAD_SLOT_ID`] past `tot`, as the next three.
    pub conv1d_mlist: Option<TensorMut<'a>>,
    /// Optional, as `conv1d_mlist`.
    pub conv1d_offsetlist: Option<TensorMut<'a>>,
    /// Optional, as `conv1d_mlist`.
    pub conv1d_batch_ptr: Option<TensorMut<'a>>,
    /// Optional, as `conv1d_mlist`.
    pub conv1d_token_chunk_offset_ptr: Option<TensorMut<'a>>,
    /// `[V_cap + 1]`, `V_cap >= local_capacity`; past V it repeats the total.
    pub local_query_start_loc: Option<TensorMut<'a>>,
    /// `[V_cap]`; 0 past V.
    pub local_seq_lens: Option<TensorMut<'a>>,
    /// Optional `[V_cap]`; 0 past V.
    pub local_num_computed_tokens: Option<TensorMut<'a>>,
    /// Optional `[V_cap, local_pages]` of the batch block table's dtype; rows past V are 0.
    pub local_block_table: Option<TensorMut<'a>>,
    /// `[B + 1]`: fast prefill's decode query_start_loc.
    pub decode_query_start_loc: Option<TensorMut<'a>>,
    /// `[B + 1]`.
    pub extend_query_start_loc: Option<TensorMut<'a>>,
    /// `[B]`.
    pub extend_seq_lens: Option<TensorMut<'a>>,
    /// Optional `[STEP_NUM_COUNTS]` on the device, indexed by [`StepCount`].
    pub counts: Option<TensorMut<'a>>,
    /// Optional `[STEP_NUM_COUNTS]` host mirror of `counts` in pinned memory mapped for the
    /// device ([`crate::Device::CudaHost`]: `cudaHostAlloc`, `cudaMallocHost`, or
    /// `cudaHostRegister` with `cudaHostRegisterMapped`), written by the kernel and valid once
    /// the caller has synchronised the stream. Such a view comes from the unsafe
    /// [`TensorMut::from_raw_parts`], whose contract then covers the kernel's writes: nothing
    /// else may read or write the memory until the stream's work is done.
    pub counts_host: Option<TensorMut<'a>>,
    /// At least [`StepPlan::workspace_size`] bytes (0 for every plan of 1.1: the default, no
    /// workspace, will do).
    pub workspace: Workspace<'a>,
    /// `[B + 1]` ([`StepProducts::INPUTS`], 1.2).
    pub query_start_loc: Option<TensorMut<'a>>,
    /// `[B]` ([`StepProducts::INPUTS`], 1.2).
    pub seq_lens: Option<TensorMut<'a>>,
    /// Optional `[>= max_num_tokens]` ([`StepProducts::INPUTS`], 1.2); 0 past the total.
    pub positions: Option<TensorMut<'a>>,
    /// Optional `[B]` ([`StepProducts::INPUTS`], 1.2).
    pub num_computed_tokens: Option<TensorMut<'a>>,
    /// `[B, W]` per group ([`StepProducts::BLOCK_TABLES`], 1.2).
    pub block_tables: [Option<TensorMut<'a>>; MAX_KV_GROUPS],
    /// int64 `[>= max_num_tokens]` per TOKEN_TO_KV_SLOT group, `None` for NONE groups
    /// ([`StepProducts::SLOT_MAPPINGS`], 1.2).
    pub slot_mappings: [Option<TensorMut<'a>>; MAX_KV_GROUPS],
    /// `[>= max_num_logits]` ([`StepProducts::LOGITS_INDICES`], 1.2).
    pub logits_indices: Option<TensorMut<'a>>,
    /// Optional `[B + 1]` ([`StepProducts::LOGITS_INDICES`], 1.2).
    pub cu_num_logits: Option<TensorMut<'a>>,
    /// Optional `[>= max_num_logits]` ([`StepProducts::LOGITS_INDICES`], 1.2).
    pub expanded_idx_mapping: Option<TensorMut<'a>>,
    /// Optional `[>= max_num_logits]` ([`StepProducts::LOGITS_INDICES`], 1.2).
    pub expanded_local_pos: Option<TensorMut<'a>>,
    /// `[>= max_num_tokens]` ([`StepProducts::TOKEN_TO_REQ`], 1.2).
    pub token_to_req_indices: Option<TensorMut<'a>>,
    // 1.2, the drafter products. "Tokens": at least `draft_token_capacity` entries; past the
    // step's `query_start_loc[B] + B * (P - shift)` the ids are `padding_token_id`, positions 0,
    // tokens rejected and not masked, slots -1.
    /// `[>= B]` ([`StepProducts::DRAFT_NEXT_TOKEN`], 1.2).
    pub next_token_ids: Option<TensorMut<'a>>,
    /// Optional `[>= B]` ([`StepProducts::DRAFT_NEXT_TOKEN`], 1.2).
    pub valid_sampled_tokens_count: Option<TensorMut<'a>>,
    /// `[>= B]` ([`StepProducts::DRAFT_PREPARE_INPUTS`], 1.2).
    pub token_indices_to_sample: Option<TensorMut<'a>>,
    /// Optional `[>= B]` ([`StepProducts::DRAFT_PREPARE_INPUTS`], 1.2).
    pub num_rejected_tokens: Option<TensorMut<'a>>,
    /// Tokens ([`StepProducts::DRAFT_EXPAND`], 1.2).
    pub draft_input_ids: Option<TensorMut<'a>>,
    /// Tokens ([`StepProducts::DRAFT_EXPAND`], 1.2); `[>= B]` clamped positions
    /// ([`StepProducts::DRAFT_STEP`]: may be `batch.positions`' very view).
    pub draft_positions: Option<TensorMut<'a>>,
    /// Optional tokens, flags of one byte (`u8`/`i8`) ([`StepProducts::DRAFT_EXPAND`], 1.2).
    pub is_rejected_token_mask: Option<TensorMut<'a>>,
    /// Optional tokens, flags of one byte (`u8`/`i8`) ([`StepProducts::DRAFT_EXPAND`], 1.2).
    pub is_masked_token_mask: Option<TensorMut<'a>>,
    /// Optional `[>= max_num_reqs * P]`, -1 past `B * P` ([`StepProducts::DRAFT_EXPAND`],
    /// 1.2).
    pub new_token_indices: Option<TensorMut<'a>>,
    /// Optional `[>= max_num_tokens]`, -1 past `query_start_loc[B]`
    /// ([`StepProducts::DRAFT_EXPAND`] with `shift_input_ids`, 1.2; `None` without it).
    pub hidden_state_mapping: Option<TensorMut<'a>>,
    /// int64: tokens ([`StepProducts::DRAFT_SLOT_MAPPING`], 1.2); `[>= B]`, -1 past B
    /// ([`StepProducts::DRAFT_STEP`]).
    pub draft_slot_mapping: Option<TensorMut<'a>>,
    /// `[B]` ([`StepProducts::DRAFT_STEP`], 1.2): may be `batch.seq_lens`' very view.
    pub draft_seq_lens: Option<TensorMut<'a>>,
    /// `[>= n]`, `[0, n)` written ([`StepProducts::BATCH_CHANGE`], 1.2): may be
    /// `batch.num_computed_tokens`' very view.
    pub carried_num_computed_tokens: Option<TensorMut<'a>>,
    /// `[n]` ([`StepProducts::BATCH_CHANGE`], 1.2): may be `batch.num_accepted_tokens`' very
    /// view.
    pub carried_num_accepted_tokens: Option<TensorMut<'a>>,
}

/// A step plan (`cattn_step_plan_t`): the products, their parameters, the capacities and the
/// launch layout they fix. Immutable; destroyed when dropped. Creation needs no GPU.
///
/// ```
/// use cattn::{MambaCacheMode, StepLocalAttentionParams, StepMambaParams, StepPlan,
///             StepPlanDesc, StepProducts};
/// let plan = StepPlan::new(&StepPlanDesc {
///     products: StepProducts::CAUSAL_CONV1D_METADATA
///         | StepProducts::LOCAL_ATTENTION
///         | StepProducts::MAMBA_BLOCK_TABLE,
///     max_num_reqs: 4,
///     max_num_tokens: 64,
///     max_num_blocks_per_req: 16,
///     local_attention: StepLocalAttentionParams { attn_chunk_size: 16, block_size: 4 },
///     mamba: StepMambaParams { block_size: 16, num_speculative_blocks: 2,
///                              mode: MambaCacheMode::Align },
///     ..Default::default()
/// })?;
/// let shape = plan.shape();
/// assert_eq!(shape.conv1d_capacity, 64 / 8 + 4);
/// assert_eq!(shape.local_capacity, (2 * 4 + 64 / 16).min(64 + 4));
/// assert_eq!((shape.local_pages, shape.mamba_columns), (4, 3));
/// assert_eq!(plan.workspace_size(), 0);
///
/// // A parameter out of range is named in the message.
/// let err = StepPlan::new(&StepPlanDesc {
///     products: StepProducts::CAUSAL_CONV1D_METADATA,
///     max_num_reqs: 4,
///     max_num_blocks_per_req: 1,
///     conv1d: cattn::StepConv1dParams { block_m: 0 },
///     ..Default::default()
/// }).unwrap_err();
/// assert_eq!(err.status(), cattn::Status::InvalidArgument);
/// assert!(err.message().contains("desc.conv1d.block_m"));
/// # Ok::<(), cattn::Error>(())
/// ```
pub struct StepPlan<'l> {
    raw: NonNull<sys::cattn_step_plan_t>,
    api: Api<'l>,
    // Queried once at creation: the plan is immutable, so they never change.
    shape: StepPlanShape,
    workspace_size: usize,
}

// SAFETY: a plan is immutable after creation but for its memo of the last checked run, which
// the library keeps behind a lock, and is not tied to a thread; Drop destroys it with
// exclusive access ("not while a run on it is being enqueued; runs already enqueued do not need
// the plan", cattn.h).
unsafe impl Send for StepPlan<'_> {}
// SAFETY: the only call a shared &StepPlan allows is cattn_step_plan_run (the shape and the
// workspace size are cached), and the header allows it on several threads at once: "one plan
// may run on several threads at once". Destruction needs ownership (Drop).
unsafe impl Sync for StepPlan<'_> {}

/// Creates a step plan from `desc` in the linked library; the same as [`StepPlan::new`], under
/// the C name (`cattn_step_plan_create`).
///
/// Errors: [`Status::InvalidArgument`] for no product or an unknown bit, products the library
/// does not combine (1.2: drafter and step-input products together, `DRAFT_STEP` or
/// `BATCH_CHANGE` with another product, a drafter chain product without the one before it), a
/// capacity out of range, a selected product's parameter out of range (the message names it,
/// as `desc->dcp.dcp_size` or `desc->draft.vocab_size`), capacities whose derived sizes overflow
/// i64; [`Status::OutOfMemory`]. Since 1.1.
pub fn step_plan_create(desc: &StepPlanDesc) -> Result<StepPlan<'static>> {
    Api::linked()?.step_plan_create(desc)
}

impl StepPlan<'static> {
    /// Creates a step plan from `desc` in the linked library (host work, no CUDA call); see
    /// [`step_plan_create`].
    pub fn new(desc: &StepPlanDesc) -> Result<StepPlan<'static>> {
        Api::linked()?
            .step_plan_create(desc)
            .map_err(|e| e.in_terms_of("StepPlan::new"))
    }
}

impl<'l> StepPlan<'l> {
    /// The capacities the plan's outputs must hold (`cattn_step_plan_get_shape`).
    pub fn shape(&self) -> StepPlanShape {
        self.shape
    }

    /// The device workspace a run needs, in bytes (`cattn_step_plan_workspace_size`): 0 for
    /// every plan of 1.1, which computes each prefix sum within each block and keeps no state
    /// between blocks or replays.
    pub fn workspace_size(&self) -> usize {
        self.workspace_size
    }

    /// Computes every product of the plan from the batch's device tensors in one kernel launch
    /// on `stream` (`cattn_step_plan_run`).
    ///
    /// Everything that needs no device data is checked on the host first: shapes, dtypes,
    /// devices, the capacities, the outputs' sizes, and that no output overlaps an input or
    /// another output (but for the drafter outputs that may be their input's very view: see
    /// [`StepOutputs`]). What needs the data is handled on the device, by each product as its
    /// utility documents: a batch of more tokens than `max_num_tokens` fills a capacity output
    /// with what fits while the counts still report the step's full values; a decreasing
    /// `query_start_loc` entry counts as an empty request; local attention takes seq_lens
    /// shorter than their queries as the queries' lengths; an int32 output keeps a value's low
    /// 32 bits.
    ///
    /// One kernel and no other CUDA work: no host sync, no allocation, capturable, and correct
    /// on every replay with new tensor contents. A captured graph keeps the tensors' addresses,
    /// so their memory must outlive it.
    ///
    /// Errors: [`Status::InvalidArgument`] for a required tensor missing, an output of an
    /// unselected product set, shapes, dtypes, devices (host tensors other than `counts_host`,
    /// a `counts_host` that is not [`crate::Device::CudaHost`]), a batch past a capacity, an
    /// overlap, a workspace below the workspace size, counts for a `DRAFT_STEP` or
    /// `BATCH_CHANGE` plan (which writes none); [`Status::InsufficientSize`] for an
    /// output shorter than its capacity; [`Status::NotSupported`] in a CPU-only build or
    /// without a usable device; [`Status::CudaError`]. Since 1.1.
    ///
    /// ```
    /// use cattn::{StepBatch, StepOutputs, StepPlan, StepPlanDesc, StepProducts, Status,
    ///             Stream, TensorMut, TensorRef};
    /// let plan = StepPlan::new(&StepPlanDesc {
    ///     products: StepProducts::PCP_QUERY_RESTORE_IDX,
    ///     max_num_reqs: 2, max_num_tokens: 20, max_num_blocks_per_req: 1,
    ///     ..Default::default()
    /// })?;
    /// // Host tensors are refused: the plan runs on the device.
    /// let cu = [0i32, 8, 20];
    /// let mut idx = [0i32; 20];
    /// let err = plan.run(
    ///     &StepBatch { query_start_loc: Some(TensorRef::from_slice(&cu)), ..Default::default() },
    ///     &mut StepOutputs {
    ///         pcp_query_restore_idx: Some(TensorMut::from_slice(&mut idx)),
    ///         ..Default::default()
    ///     },
    ///     Stream::DEFAULT,
    /// ).unwrap_err();
    /// assert_eq!(err.status(), Status::InvalidArgument);
    /// assert!(err.message().contains("batch.query_start_loc is not device memory"));
    /// # Ok::<(), cattn::Error>(())
    /// ```
    ///
    /// On the device (the pointers are CUDA allocations of the caller's, `counts_host` mapped
    /// pinned memory):
    ///
    /// ```no_run
    /// # use std::ffi::c_void;
    /// use cattn::{DataType, Device, StepBatch, StepCount, StepOutputs, StepPlan, StepPlanDesc,
    ///             StepProducts, Stream, TensorMut, TensorRef, STEP_NUM_COUNTS};
    /// # let (d_qsl, d_mlist, h_counts): (*const c_void, *mut c_void, *mut c_void) =
    /// #     unimplemented!();
    /// # let stream = Stream::DEFAULT;
    /// let plan = StepPlan::new(&StepPlanDesc {
    ///     products: StepProducts::CAUSAL_CONV1D_METADATA,
    ///     max_num_reqs: 256, max_num_tokens: 8192, max_num_blocks_per_req: 1,
    ///     ..Default::default()
    /// })?;
    /// let cap = plan.shape().conv1d_capacity;
    /// // SAFETY: memory of these shapes and devices, alive until the stream's work (and any
    /// // graph captured from it) is done with it.
    /// let (qsl, mlist, counts_host) = unsafe {(
    ///     TensorRef::from_raw_parts(d_qsl, Device::Cuda(0), DataType::I32, &[257], None, 0),
    ///     TensorMut::from_raw_parts(d_mlist, Device::Cuda(0), DataType::I32, &[cap], None, 0),
    ///     TensorMut::from_raw_parts(h_counts, Device::CudaHost, DataType::I64,
    ///                               &[STEP_NUM_COUNTS as i64], None, 0),
    /// )};
    /// plan.run(
    ///     &StepBatch { query_start_loc: Some(qsl), ..Default::default() },
    ///     &mut StepOutputs {
    ///         conv1d_mlist: Some(mlist),
    ///         counts_host: Some(counts_host),
    ///         ..Default::default()
    ///     },
    ///     stream,
    /// )?;
    /// // After synchronising the stream: the programs are at
    /// // counts_host[StepCount::Conv1dPrograms.index()].
    /// # Ok::<(), cattn::Error>(())
    /// ```
    pub fn run(
        &self,
        batch: &StepBatch<'_>,
        outputs: &mut StepOutputs<'_>,
        stream: Stream,
    ) -> Result<()> {
        let raw_batch = sys::cattn_step_batch_t {
            struct_size: size_of::<sys::cattn_step_batch_t>(),
            query_start_loc: raw_in(batch.query_start_loc.as_ref()),
            seq_lens: raw_in(batch.seq_lens.as_ref()),
            block_table: raw_in(batch.block_table.as_ref()),
            cu_num_tokens: raw_in(batch.cu_num_tokens.as_ref()),
            logits_indices: raw_in(batch.logits_indices.as_ref()),
            num_logits_indices: raw_in(batch.num_logits_indices.as_ref()),
            num_reqs: raw_in(batch.num_reqs.as_ref()),
            num_scheduled_tokens: raw_in(batch.num_scheduled_tokens.as_ref()),
            idx_mapping: raw_in(batch.idx_mapping.as_ref()),
            num_computed_tokens: raw_in(batch.num_computed_tokens.as_ref()),
            num_draft_tokens: raw_in(batch.num_draft_tokens.as_ref()),
            positions: raw_in(batch.positions.as_ref()),
            kv_block_tables: std::array::from_fn(|g| raw_in(batch.kv_block_tables[g].as_ref())),
            kv_num_blocks: std::array::from_fn(|g| raw_in(batch.kv_num_blocks[g].as_ref())),
            sampled_token_ids: raw_in(batch.sampled_token_ids.as_ref()),
            discard_request_mask: raw_in(batch.discard_request_mask.as_ref()),
            backup_next_token_ids: raw_in(batch.backup_next_token_ids.as_ref()),
            cu_num_draft_tokens: raw_in(batch.cu_num_draft_tokens.as_ref()),
            target_token_ids: raw_in(batch.target_token_ids.as_ref()),
            target_positions: raw_in(batch.target_positions.as_ref()),
            prev_positions: raw_in(batch.prev_positions.as_ref()),
            num_accepted_tokens: raw_in(batch.num_accepted_tokens.as_ref()),
            valid_sampled_token_count: raw_in(batch.valid_sampled_token_count.as_ref()),
            prev_num_draft_tokens: raw_in(batch.prev_num_draft_tokens.as_ref()),
            cpu_num_computed_tokens: raw_in(batch.cpu_num_computed_tokens.as_ref()),
        };
        let o = outputs;
        let (workspace, workspace_bytes) = o.workspace.as_raw();
        let raw_outputs = sys::cattn_step_outputs_t {
            struct_size: size_of::<sys::cattn_step_outputs_t>(),
            dcp_local_seq_lens: raw_out(o.dcp_local_seq_lens.as_mut()),
            pcp_query_restore_idx: raw_out(o.pcp_query_restore_idx.as_mut()),
            mamba_block_table: raw_out(o.mamba_block_table.as_mut()),
            conv1d_nums: raw_out(o.conv1d_nums.as_mut()),
            conv1d_mlist: raw_out(o.conv1d_mlist.as_mut()),
            conv1d_offsetlist: raw_out(o.conv1d_offsetlist.as_mut()),
            conv1d_batch_ptr: raw_out(o.conv1d_batch_ptr.as_mut()),
            conv1d_token_chunk_offset_ptr: raw_out(o.conv1d_token_chunk_offset_ptr.as_mut()),
            local_query_start_loc: raw_out(o.local_query_start_loc.as_mut()),
            local_seq_lens: raw_out(o.local_seq_lens.as_mut()),
            local_num_computed_tokens: raw_out(o.local_num_computed_tokens.as_mut()),
            local_block_table: raw_out(o.local_block_table.as_mut()),
            decode_query_start_loc: raw_out(o.decode_query_start_loc.as_mut()),
            extend_query_start_loc: raw_out(o.extend_query_start_loc.as_mut()),
            extend_seq_lens: raw_out(o.extend_seq_lens.as_mut()),
            counts: raw_out(o.counts.as_mut()),
            counts_host: raw_out(o.counts_host.as_mut()),
            workspace,
            workspace_bytes,
            query_start_loc: raw_out(o.query_start_loc.as_mut()),
            seq_lens: raw_out(o.seq_lens.as_mut()),
            positions: raw_out(o.positions.as_mut()),
            num_computed_tokens: raw_out(o.num_computed_tokens.as_mut()),
            block_tables: raw_outs(&mut o.block_tables),
            slot_mappings: raw_outs(&mut o.slot_mappings),
            logits_indices: raw_out(o.logits_indices.as_mut()),
            cu_num_logits: raw_out(o.cu_num_logits.as_mut()),
            expanded_idx_mapping: raw_out(o.expanded_idx_mapping.as_mut()),
            expanded_local_pos: raw_out(o.expanded_local_pos.as_mut()),
            token_to_req_indices: raw_out(o.token_to_req_indices.as_mut()),
            next_token_ids: raw_out(o.next_token_ids.as_mut()),
            valid_sampled_tokens_count: raw_out(o.valid_sampled_tokens_count.as_mut()),
            token_indices_to_sample: raw_out(o.token_indices_to_sample.as_mut()),
            num_rejected_tokens: raw_out(o.num_rejected_tokens.as_mut()),
            draft_input_ids: raw_out(o.draft_input_ids.as_mut()),
            draft_positions: raw_out(o.draft_positions.as_mut()),
            is_rejected_token_mask: raw_out(o.is_rejected_token_mask.as_mut()),
            is_masked_token_mask: raw_out(o.is_masked_token_mask.as_mut()),
            new_token_indices: raw_out(o.new_token_indices.as_mut()),
            hidden_state_mapping: raw_out(o.hidden_state_mapping.as_mut()),
            draft_slot_mapping: raw_out(o.draft_slot_mapping.as_mut()),
            draft_seq_lens: raw_out(o.draft_seq_lens.as_mut()),
            carried_num_computed_tokens: raw_out(o.carried_num_computed_tokens.as_mut()),
            carried_num_accepted_tokens: raw_out(o.carried_num_accepted_tokens.as_mut()),
        };
        let f = entry!(self.api, step_plan_run)?;
        // SAFETY: the plan is alive; the batch's and the outputs' views and the workspace live
        // through the call, the outputs and the workspace borrowed mutably, and their device
        // memory is vouched for by whoever made them (from_raw_parts, Workspace::from_raw).
        self.api.check_in(
            unsafe { f(self.raw.as_ptr(), &raw_batch, &raw_outputs, stream.as_raw()) },
            "StepPlan::run",
        )
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *const sys::cattn_step_plan_t {
        self.raw.as_ptr()
    }

    /// The library the plan belongs to.
    pub fn api(&self) -> Api<'l> {
        self.api
    }
}

/// The raw pointers of a group array of optional outputs.
fn raw_outs(
    outputs: &mut [Option<TensorMut<'_>>; MAX_KV_GROUPS],
) -> [*mut sys::DLTensor; MAX_KV_GROUPS] {
    let mut raw = [std::ptr::null_mut(); MAX_KV_GROUPS];
    for (r, o) in raw.iter_mut().zip(outputs.iter_mut()) {
        *r = raw_out(o.as_mut());
    }
    raw
}

impl<'l> Api<'l> {
    /// [`step_plan_create`] in this library.
    pub fn step_plan_create(self, desc: &StepPlanDesc) -> Result<StepPlan<'l>> {
        let raw_desc = desc.to_raw()?;
        let create = entry!(self, step_plan_create)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the desc and `raw` are valid host pointers for the call; the library does
        // not keep the desc.
        self.check_in(unsafe { create(&raw_desc, &mut raw) }, "step_plan_create")?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "cattn: cattn_step_plan_create returned CATTN_OK and no plan",
            )
        })?;
        // Owned from here: an error below drops (destroys) it.
        let mut plan = StepPlan {
            raw,
            api: self,
            shape: StepPlanShape::default(),
            workspace_size: 0,
        };
        let get_shape = entry!(self, step_plan_get_shape)?;
        let mut shape = sys::CATTN_STEP_PLAN_SHAPE_INIT;
        // SAFETY: a live plan and a valid, sized host struct.
        self.check(unsafe { get_shape(raw.as_ptr(), &mut shape) })?;
        plan.shape = StepPlanShape {
            restore_capacity: shape.restore_capacity,
            conv1d_capacity: shape.conv1d_capacity,
            local_capacity: shape.local_capacity,
            local_pages: shape.local_pages,
            mamba_columns: shape.mamba_columns,
            draft_token_capacity: shape.draft_token_capacity,
        };
        let workspace_size = entry!(self, step_plan_workspace_size)?;
        // SAFETY: a live plan and a valid host pointer.
        self.check(unsafe { workspace_size(raw.as_ptr(), &mut plan.workspace_size) })?;
        Ok(plan)
    }
}

impl Drop for StepPlan<'_> {
    fn drop(&mut self) {
        // A table without the destroy entry cannot have made the plan.
        if let Ok(destroy) = entry!(self.api, step_plan_destroy) {
            // SAFETY: the plan came from this library and is destroyed once, with exclusive
            // access; no run is being enqueued on it (that needs &self).
            unsafe { destroy(self.raw.as_ptr()) }
        }
    }
}

impl fmt::Debug for StepPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepPlan")
            .field("raw", &self.raw)
            .field("shape", &self.shape)
            .field("workspace_size", &self.workspace_size)
            .finish()
    }
}
