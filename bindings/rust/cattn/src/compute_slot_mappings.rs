// SPDX-License-Identifier: Apache-2.0
//! The KV-cache slot of every token of one KV-cache group (vLLM's compute_slot_mappings, model
//! runner v2 and v1; since 1.2).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/step_inputs.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::fmt;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{flatten_rows, len_i64, reported_len, zeroed};
use crate::step_inputs_size::StepInputsSizeArgs;
use crate::tensor::{raw_in, IndexElement, Stream, TensorMut, TensorRef};

/// Which of vLLM's slot-mapping contracts (`cattn_slot_mapping_contract_t`). A newtype of the C
/// value, so that a value of a newer header passes through (the library refuses what it does
/// not know). The default is the header's (`CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT`: MRV2).
///
/// ```
/// use cattn::SlotMappingContract;
/// assert_eq!(SlotMappingContract::default(), SlotMappingContract::MRV2);
/// assert_eq!(SlotMappingContract::V1.raw(), cattn::sys::CATTN_SLOT_MAPPING_V1 as i32);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotMappingContract(i32);

impl SlotMappingContract {
    /// `CATTN_SLOT_MAPPING_MRV2`: model runner v2; the table row of batch row b is the
    /// persistent row `idx_mapping[b]`.
    pub const MRV2: SlotMappingContract = SlotMappingContract(sys::CATTN_SLOT_MAPPING_MRV2 as i32);
    /// `CATTN_SLOT_MAPPING_V1`: v1; the table row is the batch row (no `idx_mapping`).
    pub const V1: SlotMappingContract = SlotMappingContract(sys::CATTN_SLOT_MAPPING_V1 as i32);

    /// The contract of a raw C value, known or not.
    pub const fn from_raw(raw: i32) -> SlotMappingContract {
        SlotMappingContract(raw)
    }

    /// The raw C value.
    pub const fn raw(self) -> i32 {
        self.0
    }
}

impl Default for SlotMappingContract {
    fn default() -> Self {
        SlotMappingContract(sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT.contract)
    }
}

impl fmt::Debug for SlotMappingContract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SlotMappingContract::MRV2 => f.write_str("SlotMappingContract::MRV2"),
            SlotMappingContract::V1 => f.write_str("SlotMappingContract::V1"),
            SlotMappingContract(raw) => write!(f, "SlotMappingContract({raw})"),
        }
    }
}

/// A KV-cache group's slot mode (`cattn_slot_mode_t`, vLLM's SlotMappingMode), a newtype of the
/// C value as [`SlotMappingContract`]. The default is the header's
/// (`CATTN_STEP_PLAN_DESC_INIT`'s groups: TOKEN_TO_KV_SLOT).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotMode(i32);

impl SlotMode {
    /// `CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT`: attention groups, a slot per token.
    pub const TOKEN_TO_KV_SLOT: SlotMode = SlotMode(sys::CATTN_SLOT_MODE_TOKEN_TO_KV_SLOT as i32);
    /// `CATTN_SLOT_MODE_NONE`: Mamba groups, no slot mapping.
    pub const NONE: SlotMode = SlotMode(sys::CATTN_SLOT_MODE_NONE as i32);

    /// The mode of a raw C value, known or not.
    pub const fn from_raw(raw: i32) -> SlotMode {
        SlotMode(raw)
    }

    /// The raw C value.
    pub const fn raw(self) -> i32 {
        self.0
    }
}

impl Default for SlotMode {
    fn default() -> Self {
        SlotMode(sys::CATTN_STEP_PLAN_DESC_INIT.kv_groups[0].slot_mode)
    }
}

impl fmt::Debug for SlotMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SlotMode::TOKEN_TO_KV_SLOT => f.write_str("SlotMode::TOKEN_TO_KV_SLOT"),
            SlotMode::NONE => f.write_str("SlotMode::NONE"),
            SlotMode(raw) => write!(f, "SlotMode({raw})"),
        }
    }
}

/// The parameters of one group's slot mapping (the scalars of
/// `cattn_compute_slot_mappings_args_t`). The default is `CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT`'s:
/// MRV2, one DCP rank, block sizes 0 (set them: the library refuses 0).
///
/// ```
/// let p = cattn::SlotMappingParams { block_size: 16, kernel_block_size: 16, ..Default::default() };
/// let init = cattn::sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
/// assert_eq!((p.dcp_size, p.dcp_rank), (init.dcp_size, init.dcp_rank));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotMappingParams {
    /// Which of vLLM's contracts.
    pub contract: SlotMappingContract,
    /// The group's block size, `>= 1`.
    pub block_size: i64,
    /// Divides `block_size`: the unit of the table's block ids.
    pub kernel_block_size: i64,
    /// `>= 1`.
    pub dcp_size: i64,
    /// In `[0, dcp_size)`.
    pub dcp_rank: i64,
    /// `>= 1`, divides the contract's block.
    pub dcp_kv_cache_interleave_size: i64,
}

impl Default for SlotMappingParams {
    fn default() -> Self {
        let init = sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT;
        SlotMappingParams {
            contract: SlotMappingContract(init.contract),
            block_size: init.block_size,
            kernel_block_size: init.kernel_block_size,
            dcp_size: init.dcp_size,
            dcp_rank: init.dcp_rank,
            dcp_kv_cache_interleave_size: init.dcp_kv_cache_interleave_size,
        }
    }
}

/// The inputs of [`compute_slot_mappings`]: int32/int64 tensors, all on the host or all on
/// one GPU.
#[derive(Clone, Debug)]
pub struct ComputeSlotMappingsArgs<'a> {
    /// The contract, block sizes and DCP.
    pub params: SlotMappingParams,
    /// `[B + 1]`.
    pub query_start_loc: TensorRef<'a>,
    /// Optional `[1]`: the live rows in `[0, B]` (host: refused outside; device: clamped); `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// `[N]`, N at least the live total (v1: the padded count).
    pub positions: TensorRef<'a>,
    /// `[B]` with [`SlotMappingContract::MRV2`]; `None` with V1.
    pub idx_mapping: Option<TensorRef<'a>>,
    /// `[rows, W]`: the persistent rows (MRV2) or the batch's (V1).
    pub block_table: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Writes the KV-cache slot of every live token of one group into `slot_mapping` (`[T_cap]`
/// int64, T_cap at least the live total; `cattn_compute_slot_mappings`, since 1.2):
/// `table[row, col] * kernel_block_size + offset` with the row, column and offset of the
/// contract, [`crate::PAD_SLOT_ID`] (-1) for a token another DCP rank stores and for every
/// entry from the live total on. 64-bit arithmetic (vLLM's MRV2 wraps at 2^31). Host tensors run
/// synchronously; CUDA tensors enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::prepare_pos_seq_lens()`], and [`crate::Status::InvalidArgument`] for
/// the parameters (contract, block sizes, DCP), named as `args.params.block_size` and the like.
///
/// ```
/// use cattn::{compute_slot_mappings, ComputeSlotMappingsArgs, SlotMappingParams, Stream,
///             TensorMut, TensorRef};
/// // One request on persistent row 1, tokens at positions 3..7, kernel blocks of 4 tokens.
/// let (qsl, pos, idx) = ([0i32, 4], [3i32, 4, 5, 6, 0], [1i32]);
/// let table = [9i32, 9, 7, 2]; // 2 persistent rows of 2 blocks
/// let mut slots = [0i64; 5];
/// compute_slot_mappings(
///     &ComputeSlotMappingsArgs {
///         params: SlotMappingParams { block_size: 4, kernel_block_size: 4, ..Default::default() },
///         query_start_loc: TensorRef::from_slice(&qsl),
///         num_reqs: None,
///         positions: TensorRef::from_slice(&pos),
///         idx_mapping: Some(TensorRef::from_slice(&idx)),
///         block_table: TensorRef::new(&table, &[2, 2])?,
///         stream: Stream::DEFAULT,
///     },
///     &mut TensorMut::from_slice(&mut slots),
/// )?;
/// assert_eq!(slots, [7 * 4 + 3, 2 * 4, 2 * 4 + 1, 2 * 4 + 2, -1]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_slot_mappings(
    args: &ComputeSlotMappingsArgs<'_>,
    slot_mapping: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.compute_slot_mappings(args, slot_mapping)
}

/// One call for host slices of one element type (int32 or int64): the slot of each of the live
/// tokens (the total [`crate::step_inputs_size()`] counts), [`crate::PAD_SLOT_ID`] for a token
/// another DCP rank stores, for the batch `query_start_loc` (`[B + 1]`) with `num_reqs` live
/// rows (`None` = B), their `positions` (`[N]`, N at least the live total), the table
/// `block_table` (rows of one length: persistent rows with MRV2, batch rows with V1) and
/// `idx_mapping` (`[B]`, MRV2 only).
///
/// ```
/// use cattn::{compute_slot_mappings_host, SlotMappingParams};
/// let params = SlotMappingParams { block_size: 4, kernel_block_size: 4, ..Default::default() };
/// let table = vec![vec![9i64, 9], vec![7, 2]];
/// let slots = compute_slot_mappings_host(&params, &[0, 4], None, &[3, 4, 5, 6, 0], Some(&[1]),
///                                        &table)?;
/// assert_eq!(slots, [31, 8, 9, 10]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_slot_mappings_host<T: IndexElement, R: AsRef<[T]>>(
    params: &SlotMappingParams,
    query_start_loc: &[T],
    num_reqs: Option<i64>,
    positions: &[T],
    idx_mapping: Option<&[T]>,
    block_table: &[R],
) -> Result<Vec<i64>> {
    Api::linked()?.compute_slot_mappings_host(
        params,
        query_start_loc,
        num_reqs,
        positions,
        idx_mapping,
        block_table,
    )
}

impl Api<'_> {
    /// [`compute_slot_mappings_host`] in this library.
    pub fn compute_slot_mappings_host<T: IndexElement, R: AsRef<[T]>>(
        self,
        params: &SlotMappingParams,
        query_start_loc: &[T],
        num_reqs: Option<i64>,
        positions: &[T],
        idx_mapping: Option<&[T]>,
        block_table: &[R],
    ) -> Result<Vec<i64>> {
        const FUNCTION: &str = "compute_slot_mappings_host";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let live = num_reqs.map(|n| [n]);
        let args = ComputeSlotMappingsArgs {
            params: *params,
            query_start_loc: TensorRef::from_slice(query_start_loc),
            num_reqs: live.as_ref().map(|n| TensorRef::from_slice(n)),
            positions: TensorRef::from_slice(positions),
            idx_mapping: idx_mapping.map(TensorRef::from_slice),
            block_table: TensorRef::new(&table, &[len_i64(block_table.len()), len_i64(cols)])?,
            stream: Stream::DEFAULT,
        };
        // The library counts the live tokens (its size query): a slot for each.
        let sizes = self
            .step_inputs_size(&StepInputsSizeArgs {
                query_start_loc: Some(args.query_start_loc.clone()),
                num_reqs: args.num_reqs.clone(),
                ..Default::default()
            })
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let tokens = reported_len(FUNCTION, "a token total", sizes.num_tokens)?;
        let mut out = zeroed::<i64>(FUNCTION, tokens)?;
        self.compute_slot_mappings(&args, &mut TensorMut::from_slice(&mut out))
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(out)
    }

    /// [`compute_slot_mappings`] in this library.
    pub fn compute_slot_mappings(
        self,
        args: &ComputeSlotMappingsArgs<'_>,
        slot_mapping: &mut TensorMut<'_>,
    ) -> Result<()> {
        let p = &args.params;
        let raw = sys::cattn_compute_slot_mappings_args_t {
            contract: p.contract.raw(),
            block_size: p.block_size,
            kernel_block_size: p.kernel_block_size,
            dcp_size: p.dcp_size,
            dcp_rank: p.dcp_rank,
            dcp_kv_cache_interleave_size: p.dcp_kv_cache_interleave_size,
            query_start_loc: args.query_start_loc.as_raw(),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            positions: args.positions.as_raw(),
            idx_mapping: raw_in(args.idx_mapping.as_ref()),
            block_table: args.block_table.as_raw(),
            slot_mapping: slot_mapping.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT
        };
        let f = entry!(self, compute_slot_mappings)?;
        // SAFETY: the views live through the call; `slot_mapping` is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "compute_slot_mappings")
    }
}
