// SPDX-License-Identifier: Apache-2.0
//! A step's query_start_loc, seq_lens and positions from the scheduled token counts (vLLM's
//! host cumsum and model runner v2's prepare_pos_seq_lens; since 1.2).
//!
//! The step-input calls (this one, [`crate::gather_block_tables()`],
//! [`crate::compute_slot_mappings()`], [`crate::combine_sampled_and_draft_tokens()`] and
//! [`crate::step_batch_check()`]) share the header's padding contract: a batch has B rows, the
//! first `num_reqs` live and the rest padding, and a padded row is an empty request in every
//! product (its query_start_loc entry repeats the total, its seq_len is 0, it owns no token;
//! positions past the live total are 0).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/step_inputs.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{reported_len, zeroed};
use crate::step_inputs_size::StepInputsSizeArgs;
use crate::tensor::{raw_in, raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`prepare_pos_seq_lens`] (`cattn_prepare_pos_seq_lens_args_t`): int32/int64
/// tensors, all on the host or all on one GPU. B is `num_scheduled_tokens`' length.
#[derive(Clone, Debug)]
pub struct PreparePosSeqLensArgs<'a> {
    /// `[B]`: the query length of each batch row.
    pub num_scheduled_tokens: TensorRef<'a>,
    /// `[B]`: the persistent row of each batch row (padded rows are not read).
    pub idx_mapping: TensorRef<'a>,
    /// `[R]`: the computed tokens of each persistent row.
    pub num_computed_tokens: TensorRef<'a>,
    /// Optional `[1]`: the live rows in `[0, B]` (host: refused outside; device: clamped); `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Where [`prepare_pos_seq_lens`] writes (int32/int64, on the inputs' device).
#[derive(Debug)]
pub struct PreparePosSeqLensOutputs<'a> {
    /// `[B + 1]`: the running sum of the live rows' scheduled tokens; padded rows repeat the
    /// total.
    pub query_start_loc: TensorMut<'a>,
    /// `[B]`: `num_computed_tokens[idx_mapping[b]] + num_scheduled_tokens[b]`; 0 for padded
    /// rows.
    pub seq_lens: TensorMut<'a>,
    /// Optional `[T_cap]`, at least the live total: `nct + j` for token j of row b; 0 past the
    /// total.
    pub positions: Option<TensorMut<'a>>,
    /// Optional `[B]`: the batch's num_computed_tokens (0 for padded rows).
    pub batch_num_computed_tokens: Option<TensorMut<'a>>,
}

/// Computes a step's query_start_loc, seq_lens, positions and the batch's num_computed_tokens
/// from the scheduled counts (`cattn_prepare_pos_seq_lens`, since 1.2), padded rows per the
/// padding contract. Host tensors run synchronously; CUDA tensors enqueue one kernel on
/// `args.stream` (no sync, capturable).
///
/// Errors: [`crate::Status::InvalidArgument`] for a malformed or missing tensor, mixed devices, an
/// overlap, and on the host a value out of range (a negative count, an `idx_mapping` entry
/// outside the persistent rows), the message naming the field (`args.idx_mapping`,
/// `out.positions`); [`crate::Status::InsufficientSize`] for an output shorter than its shape
/// (on the host: `positions` shorter than the total); [`crate::Status::NotSupported`] for CUDA
/// tensors in a CPU-only build; [`crate::Status::CudaError`].
///
/// ```
/// use cattn::{prepare_pos_seq_lens, PreparePosSeqLensArgs, PreparePosSeqLensOutputs, Stream,
///             TensorMut, TensorRef};
/// let (sched, idx, nct) = ([3i32, 1, 0], [2i32, 0, 0], [5i32, 0, 7]);
/// let num_reqs = [2i64];
/// let (mut qsl, mut seq, mut pos) = ([0i32; 4], [0i32; 3], [0i32; 6]);
/// prepare_pos_seq_lens(
///     &PreparePosSeqLensArgs {
///         num_scheduled_tokens: TensorRef::from_slice(&sched),
///         idx_mapping: TensorRef::from_slice(&idx),
///         num_computed_tokens: TensorRef::from_slice(&nct),
///         num_reqs: Some(TensorRef::from_slice(&num_reqs)),
///         stream: Stream::DEFAULT,
///     },
///     &mut PreparePosSeqLensOutputs {
///         query_start_loc: TensorMut::from_slice(&mut qsl),
///         seq_lens: TensorMut::from_slice(&mut seq),
///         positions: Some(TensorMut::from_slice(&mut pos)),
///         batch_num_computed_tokens: None,
///     },
/// )?;
/// assert_eq!((qsl, seq, pos), ([0, 3, 4, 4], [10, 6, 0], [7, 8, 9, 5, 0, 0]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn prepare_pos_seq_lens(
    args: &PreparePosSeqLensArgs<'_>,
    out: &mut PreparePosSeqLensOutputs<'_>,
) -> Result<()> {
    Api::linked()?.prepare_pos_seq_lens(args, out)
}

/// What [`prepare_pos_seq_lens_host`] returns: a step's inputs, of the element type of its
/// slices.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepInputs<T> {
    /// `[B + 1]`.
    pub query_start_loc: Vec<T>,
    /// `[B]`.
    pub seq_lens: Vec<T>,
    /// One entry per live token: `query_start_loc[B]` entries.
    pub positions: Vec<T>,
    /// `[B]`: the batch's num_computed_tokens.
    pub num_computed_tokens: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): a step's query_start_loc,
/// seq_lens, positions (one per live token) and num_computed_tokens, from the scheduled counts
/// (`[B]`), the persistent row of each batch row (`[B]`) and each persistent row's computed
/// tokens (`[R]`). `num_reqs` is the live rows (`None` = B; the host path refuses a value
/// outside `[0, B]`). The library computes the total it sizes `positions` with.
///
/// ```
/// // Rows 0 and 1 live (persistent rows 2 and 0), row 2 padding.
/// let s = cattn::prepare_pos_seq_lens_host(&[3i32, 1, 0], &[2, 0, 0], &[5, 0, 7], Some(2))?;
/// assert_eq!(s.query_start_loc, [0, 3, 4, 4]);
/// assert_eq!(s.seq_lens, [10, 6, 0]);
/// assert_eq!(s.positions, [7, 8, 9, 5]);
/// assert_eq!(s.num_computed_tokens, [7, 5, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn prepare_pos_seq_lens_host<T: IndexElement>(
    num_scheduled_tokens: &[T],
    idx_mapping: &[T],
    num_computed_tokens: &[T],
    num_reqs: Option<i64>,
) -> Result<StepInputs<T>> {
    Api::linked()?.prepare_pos_seq_lens_host(
        num_scheduled_tokens,
        idx_mapping,
        num_computed_tokens,
        num_reqs,
    )
}

impl Api<'_> {
    /// [`prepare_pos_seq_lens_host`] in this library.
    pub fn prepare_pos_seq_lens_host<T: IndexElement>(
        self,
        num_scheduled_tokens: &[T],
        idx_mapping: &[T],
        num_computed_tokens: &[T],
        num_reqs: Option<i64>,
    ) -> Result<StepInputs<T>> {
        const FUNCTION: &str = "prepare_pos_seq_lens_host";
        let b = num_scheduled_tokens.len();
        let live = num_reqs.map(|n| [n]);
        let args = PreparePosSeqLensArgs {
            num_scheduled_tokens: TensorRef::from_slice(num_scheduled_tokens),
            idx_mapping: TensorRef::from_slice(idx_mapping),
            num_computed_tokens: TensorRef::from_slice(num_computed_tokens),
            num_reqs: live.as_ref().map(|n| TensorRef::from_slice(n)),
            stream: Stream::DEFAULT,
        };
        // The library counts the live rows' tokens (its size query); positions are sized
        // from that, and one call writes everything.
        let sizes = self
            .step_inputs_size(&StepInputsSizeArgs {
                num_scheduled_tokens: Some(args.num_scheduled_tokens.clone()),
                num_reqs: args.num_reqs.clone(),
                ..Default::default()
            })
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let mut qsl = zeroed::<T>(FUNCTION, b.saturating_add(1))?;
        let mut seq = zeroed::<T>(FUNCTION, b)?;
        let mut nct = zeroed::<T>(FUNCTION, b)?;
        let tokens = reported_len(FUNCTION, "a token total", sizes.num_tokens)?;
        let mut pos = zeroed::<T>(FUNCTION, tokens)?;
        self.prepare_pos_seq_lens(
            &args,
            &mut PreparePosSeqLensOutputs {
                query_start_loc: TensorMut::from_slice(&mut qsl),
                seq_lens: TensorMut::from_slice(&mut seq),
                positions: Some(TensorMut::from_slice(&mut pos)),
                batch_num_computed_tokens: Some(TensorMut::from_slice(&mut nct)),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(StepInputs {
            query_start_loc: qsl,
            seq_lens: seq,
            positions: pos,
            num_computed_tokens: nct,
        })
    }

    /// [`prepare_pos_seq_lens`] in this library.
    pub fn prepare_pos_seq_lens(
        self,
        args: &PreparePosSeqLensArgs<'_>,
        out: &mut PreparePosSeqLensOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_prepare_pos_seq_lens_args_t {
            num_scheduled_tokens: args.num_scheduled_tokens.as_raw(),
            idx_mapping: args.idx_mapping.as_raw(),
            num_computed_tokens: args.num_computed_tokens.as_raw(),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            query_start_loc: out.query_start_loc.as_raw(),
            seq_lens: out.seq_lens.as_raw(),
            positions: raw_out(out.positions.as_mut()),
            batch_num_computed_tokens: raw_out(out.batch_num_computed_tokens.as_mut()),
            stream: args.stream.as_raw(),
            ..sys::CATTN_PREPARE_POS_SEQ_LENS_ARGS_INIT
        };
        let f = entry!(self, prepare_pos_seq_lens)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "prepare_pos_seq_lens")
    }
}
