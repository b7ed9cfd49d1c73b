// SPDX-License-Identifier: Apache-2.0
//! A batch checked against the padding contract of the step inputs (since 1.2).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/step_inputs.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::fmt;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{raw_in, Stream, TensorMut, TensorRef};
use crate::MAX_KV_GROUPS;

/// The field of the first defect [`step_batch_check`] reports (`CATTN_STEP_CHECK_*`), a newtype
/// of the C code so that a code of a newer library passes through.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StepCheckField(i64);

impl StepCheckField {
    /// `CATTN_STEP_CHECK_OK`: the batch keeps the contract.
    pub const OK: StepCheckField = StepCheckField(sys::CATTN_STEP_CHECK_OK as i64);
    /// `CATTN_STEP_CHECK_NUM_REQS`: num_reqs is outside `[0, B]`.
    pub const NUM_REQS: StepCheckField = StepCheckField(sys::CATTN_STEP_CHECK_NUM_REQS as i64);
    /// `CATTN_STEP_CHECK_QUERY_START_LOC`: entry 0 is not 0, a live entry decreases, or a
    /// padded one differs from the total.
    pub const QUERY_START_LOC: StepCheckField =
        StepCheckField(sys::CATTN_STEP_CHECK_QUERY_START_LOC as i64);
    /// `CATTN_STEP_CHECK_SEQ_LENS`: a live row below its query length, or a padded row not 0.
    pub const SEQ_LENS: StepCheckField = StepCheckField(sys::CATTN_STEP_CHECK_SEQ_LENS as i64);
    /// `CATTN_STEP_CHECK_BLOCK_TABLE`: a padded block-table row with a nonzero entry.
    pub const BLOCK_TABLE: StepCheckField =
        StepCheckField(sys::CATTN_STEP_CHECK_BLOCK_TABLE as i64);
    /// `CATTN_STEP_CHECK_SLOT_MAPPING`: a slot not -1 from the live total on, or below -1
    /// before it.
    pub const SLOT_MAPPING: StepCheckField =
        StepCheckField(sys::CATTN_STEP_CHECK_SLOT_MAPPING as i64);

    /// The field of a raw code, known or not.
    pub const fn from_raw(raw: i64) -> StepCheckField {
        StepCheckField(raw)
    }

    /// The raw `CATTN_STEP_CHECK_*` code.
    pub const fn raw(self) -> i64 {
        self.0
    }
}

impl fmt::Debug for StepCheckField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            StepCheckField::OK => "OK",
            StepCheckField::NUM_REQS => "NUM_REQS",
            StepCheckField::QUERY_START_LOC => "QUERY_START_LOC",
            StepCheckField::SEQ_LENS => "SEQ_LENS",
            StepCheckField::BLOCK_TABLE => "BLOCK_TABLE",
            StepCheckField::SLOT_MAPPING => "SLOT_MAPPING",
            StepCheckField(raw) => return write!(f, "StepCheckField({raw})"),
        };
        write!(f, "StepCheckField::{name}")
    }
}

/// A batch check's report: the status tensor's three entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepCheckReport {
    /// The first defect's field, [`StepCheckField::OK`] when the batch keeps the contract.
    pub field: StepCheckField,
    /// Its index: a row, or a token for slot mappings.
    pub index: i64,
    /// Its KV-cache group.
    pub group: i64,
}

impl StepCheckReport {
    /// The report of a status tensor's entries (field, index, group), as the check wrote them.
    pub fn from_status(status: [i64; 3]) -> StepCheckReport {
        StepCheckReport {
            field: StepCheckField(status[0]),
            index: status[1],
            group: status[2],
        }
    }

    /// Whether the batch keeps the contract.
    pub fn is_ok(&self) -> bool {
        self.field == StepCheckField::OK
    }
}

/// The batch [`step_batch_check`] verifies (`cattn_step_batch_check_args_t` without its
/// output): int32/int64 tensors, all on the host or all on one GPU. B is `query_start_loc`'s
/// length - 1. Group g's table and slot mapping are entry g of the arrays.
#[derive(Clone, Debug)]
pub struct StepBatchCheckArgs<'a> {
    /// `[B + 1]`.
    pub query_start_loc: TensorRef<'a>,
    /// Optional `[1]`: the live rows; `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// Optional `[B]`.
    pub seq_lens: Option<TensorRef<'a>>,
    /// Optional each: `[B, W_g]`, the batch's tables.
    pub block_tables: [Option<TensorRef<'a>>; MAX_KV_GROUPS],
    /// Optional each: `[T]`, the groups' slot mappings.
    pub slot_mappings: [Option<TensorRef<'a>>; MAX_KV_GROUPS],
    /// For CUDA tensors.
    pub stream: Stream,
}

impl<'a> StepBatchCheckArgs<'a> {
    /// The check of `query_start_loc` alone, every row live; set the other fields to check
    /// them.
    pub fn new(query_start_loc: TensorRef<'a>) -> StepBatchCheckArgs<'a> {
        StepBatchCheckArgs {
            query_start_loc,
            num_reqs: None,
            seq_lens: None,
            block_tables: Default::default(),
            slot_mappings: Default::default(),
            stream: Stream::DEFAULT,
        }
    }
}

/// Verifies a batch against the padding contract and writes the first defect to `status`
/// (`[3]` int32/int64: field, index, group; `cattn_step_batch_check`, since 1.2): on the device
/// without a host sync (read it once the stream is done), on the host directly. A batch that
/// keeps the contract gets `{0, 0, 0}`. The call's result reports its arguments, never the
/// batch's values.
///
/// Errors: as [`crate::prepare_pos_seq_lens()`]; the message names the field
/// (`args.block_tables[1]`, `status`).
///
/// ```
/// use cattn::{step_batch_check, StepBatchCheckArgs, StepCheckField, StepCheckReport, TensorMut,
///             TensorRef};
/// let (qsl, live, seq) = ([0i32, 3, 4, 5], [2i64], [10i32, 1, 0]); // padded row 2 owns a token
/// let mut status = [0i64; 3];
/// step_batch_check(
///     &StepBatchCheckArgs {
///         num_reqs: Some(TensorRef::from_slice(&live)),
///         seq_lens: Some(TensorRef::from_slice(&seq)),
///         ..StepBatchCheckArgs::new(TensorRef::from_slice(&qsl))
///     },
///     &mut TensorMut::from_slice(&mut status),
/// )?;
/// let report = StepCheckReport::from_status(status);
/// assert_eq!(report.field, StepCheckField::QUERY_START_LOC);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn step_batch_check(args: &StepBatchCheckArgs<'_>, status: &mut TensorMut<'_>) -> Result<()> {
    Api::linked()?.step_batch_check(args, status)
}

/// One call for a batch of host tensors: [`step_batch_check`] into a status of its own, as a
/// report.
///
/// ```
/// use cattn::{step_batch_check_host, StepBatchCheckArgs, TensorRef};
/// let (qsl, seq) = ([0i32, 3, 4, 4], [10i32, 1, 0]);
/// let report = step_batch_check_host(&StepBatchCheckArgs {
///     seq_lens: Some(TensorRef::from_slice(&seq)),
///     ..StepBatchCheckArgs::new(TensorRef::from_slice(&qsl))
/// })?;
/// assert!(report.is_ok());
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn step_batch_check_host(args: &StepBatchCheckArgs<'_>) -> Result<StepCheckReport> {
    Api::linked()?.step_batch_check_host(args)
}

impl Api<'_> {
    /// [`step_batch_check_host`] in this library.
    pub fn step_batch_check_host(self, args: &StepBatchCheckArgs<'_>) -> Result<StepCheckReport> {
        let mut status = [0i64; 3];
        self.step_batch_check(args, &mut TensorMut::from_slice(&mut status))
            .map_err(|e| e.in_terms_of("step_batch_check_host"))?;
        Ok(StepCheckReport::from_status(status))
    }

    /// [`step_batch_check`] in this library.
    pub fn step_batch_check(
        self,
        args: &StepBatchCheckArgs<'_>,
        status: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_step_batch_check_args_t {
            query_start_loc: args.query_start_loc.as_raw(),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            seq_lens: raw_in(args.seq_lens.as_ref()),
            block_tables: std::array::from_fn(|g| raw_in(args.block_tables[g].as_ref())),
            slot_mappings: std::array::from_fn(|g| raw_in(args.slot_mappings[g].as_ref())),
            status: status.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_STEP_BATCH_CHECK_ARGS_INIT
        };
        let f = entry!(self, step_batch_check)?;
        // SAFETY: the views live through the call; `status` is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "step_batch_check")
    }
}
