// SPDX-License-Identifier: Apache-2.0
//! The async-scheduling token counts carried across a batch change (vLLM's
//! vllm/v1/spec_decode/utils.py update_num_computed_tokens_for_batch_change; since 1.2).
//!
//! The speculative-decoding calls share the rules of
//! [`mod@crate::eagle_step_update_slot_mapping_and_metadata`].
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/spec_decode.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`update_num_computed_tokens_for_batch_change`]
/// (`cattn_update_num_computed_tokens_for_batch_change_args_t`): int32/int64 tensors, all on the
/// host or all on one GPU. n is `prev_positions`' length, n_prev the previous batch's rows.
#[derive(Clone, Debug)]
pub struct UpdateNumComputedTokensForBatchChangeArgs<'a> {
    /// `[n]`: each row's row in the previous batch, negative for a new request.
    pub prev_positions: TensorRef<'a>,
    /// `[n_prev]`: each previous row's valid sampled tokens.
    pub valid_sampled_token_count: TensorRef<'a>,
    /// `[n_prev]`: each previous row's drafts.
    pub prev_num_draft_tokens: TensorRef<'a>,
    /// `[n]`: the scheduler's counts.
    pub cpu_num_computed_tokens: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// The counts [`update_num_computed_tokens_for_batch_change`] reads and rewrites in place
/// (int32/int64, on the inputs' device).
#[derive(Debug)]
pub struct UpdateNumComputedTokensForBatchChangeOutputs<'a> {
    /// `[M >= n]`, in the previous batch's layout on entry; entries `[0, n)` are rewritten,
    /// the rest left.
    pub num_computed_tokens: TensorMut<'a>,
    /// `[n]`: rewritten for the rows that carry their count, kept for the others.
    pub num_accepted_tokens: TensorMut<'a>,
}

/// Carries the async-scheduling counts across a batch change
/// (`cattn_update_num_computed_tokens_for_batch_change`, since 1.2): row k with
/// `g = prev_positions[k] >= 0` and `prev_num_draft_tokens[g] > 0` gets
/// `num_computed_tokens[g] + valid[g]` (the value before this call: a reordering reads the
/// previous layout) and `num_accepted_tokens[k] = valid[g]`; any other row gets
/// `cpu_num_computed_tokens[k]` and keeps its accepted count. Host tensors run synchronously;
/// CUDA tensors enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::eagle_step_update_slot_mapping_and_metadata()`]; on the host
/// [`crate::Status::InvalidArgument`] for a g past M or n_prev (the device treats such a row as
/// new); on the device [`crate::Status::NotSupported`] past 8192 rows. The message names the
/// field (`args.prev_positions`, `out.num_computed_tokens`).
///
/// ```
/// use cattn::{update_num_computed_tokens_for_batch_change,
///             UpdateNumComputedTokensForBatchChangeArgs as Args,
///             UpdateNumComputedTokensForBatchChangeOutputs as Counts, Stream, TensorMut,
///             TensorRef};
/// // Row 0 was previous row 2 (no drafts), row 1 is new, row 2 was previous row 0.
/// let (prev, valid, drafts, cpu) = ([2i64, -1, 0], [3i32, 0, 2], [4i32, 0, 0], [7i32, 8, 9]);
/// let (mut nct, mut accepted) = ([100i32, 200, 300, 400], [9i32, 9, 9]);
/// update_num_computed_tokens_for_batch_change(
///     &Args {
///         prev_positions: TensorRef::from_slice(&prev),
///         valid_sampled_token_count: TensorRef::from_slice(&valid),
///         prev_num_draft_tokens: TensorRef::from_slice(&drafts),
///         cpu_num_computed_tokens: TensorRef::from_slice(&cpu),
///         stream: Stream::DEFAULT,
///     },
///     &mut Counts {
///         num_computed_tokens: TensorMut::from_slice(&mut nct),
///         num_accepted_tokens: TensorMut::from_slice(&mut accepted),
///     },
/// )?;
/// assert_eq!((nct, accepted), ([7, 8, 100 + 3, 400], [9, 9, 3]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn update_num_computed_tokens_for_batch_change(
    args: &UpdateNumComputedTokensForBatchChangeArgs<'_>,
    out: &mut UpdateNumComputedTokensForBatchChangeOutputs<'_>,
) -> Result<()> {
    Api::linked()?.update_num_computed_tokens_for_batch_change(args, out)
}

/// What [`update_num_computed_tokens_for_batch_change_host`] returns, of the element type of
/// its slices: both counts after the change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BatchChangeCounts<T> {
    /// `[M]`: entries `[0, n)` rewritten, the rest as given.
    pub num_computed_tokens: Vec<T>,
    /// `[n]`.
    pub num_accepted_tokens: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the counts after a batch
/// change, from `num_computed_tokens` (`[M >= n]`, the previous layout) and
/// `num_accepted_tokens` (`[n]`), both copied, with `prev_positions` (`[n]`),
/// `valid_sampled_token_count` and `prev_num_draft_tokens` (`[n_prev]`) and
/// `cpu_num_computed_tokens` (`[n]`).
///
/// ```
/// let c = cattn::update_num_computed_tokens_for_batch_change_host(
///     &[100i64, 200, 300, 400], &[9, 9, 9], &[2, -1, 0], &[3, 0, 2], &[4, 0, 0], &[7, 8, 9])?;
/// assert_eq!(c.num_computed_tokens, [7, 8, 103, 400]);
/// assert_eq!(c.num_accepted_tokens, [9, 9, 3]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn update_num_computed_tokens_for_batch_change_host<T: IndexElement>(
    num_computed_tokens: &[T],
    num_accepted_tokens: &[T],
    prev_positions: &[T],
    valid_sampled_token_count: &[T],
    prev_num_draft_tokens: &[T],
    cpu_num_computed_tokens: &[T],
) -> Result<BatchChangeCounts<T>> {
    Api::linked()?.update_num_computed_tokens_for_batch_change_host(
        num_computed_tokens,
        num_accepted_tokens,
        prev_positions,
        valid_sampled_token_count,
        prev_num_draft_tokens,
        cpu_num_computed_tokens,
    )
}

impl Api<'_> {
    /// [`update_num_computed_tokens_for_batch_change_host`] in this library.
    pub fn update_num_computed_tokens_for_batch_change_host<T: IndexElement>(
        self,
        num_computed_tokens: &[T],
        num_accepted_tokens: &[T],
        prev_positions: &[T],
        valid_sampled_token_count: &[T],
        prev_num_draft_tokens: &[T],
        cpu_num_computed_tokens: &[T],
    ) -> Result<BatchChangeCounts<T>> {
        const FUNCTION: &str = "update_num_computed_tokens_for_batch_change_host";
        let mut nct = num_computed_tokens.to_vec();
        let mut accepted = num_accepted_tokens.to_vec();
        self.update_num_computed_tokens_for_batch_change(
            &UpdateNumComputedTokensForBatchChangeArgs {
                prev_positions: TensorRef::from_slice(prev_positions),
                valid_sampled_token_count: TensorRef::from_slice(valid_sampled_token_count),
                prev_num_draft_tokens: TensorRef::from_slice(prev_num_draft_tokens),
                cpu_num_computed_tokens: TensorRef::from_slice(cpu_num_computed_tokens),
                stream: Stream::DEFAULT,
            },
            &mut UpdateNumComputedTokensForBatchChangeOutputs {
                num_computed_tokens: TensorMut::from_slice(&mut nct),
                num_accepted_tokens: TensorMut::from_slice(&mut accepted),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(BatchChangeCounts {
            num_computed_tokens: nct,
            num_accepted_tokens: accepted,
        })
    }

    /// [`update_num_computed_tokens_for_batch_change`] in this library.
    pub fn update_num_computed_tokens_for_batch_change(
        self,
        args: &UpdateNumComputedTokensForBatchChangeArgs<'_>,
        out: &mut UpdateNumComputedTokensForBatchChangeOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_update_num_computed_tokens_for_batch_change_args_t {
            num_computed_tokens: out.num_computed_tokens.as_raw(),
            num_accepted_tokens: out.num_accepted_tokens.as_raw(),
            prev_positions: args.prev_positions.as_raw(),
            valid_sampled_token_count: args.valid_sampled_token_count.as_raw(),
            prev_num_draft_tokens: args.prev_num_draft_tokens.as_raw(),
            cpu_num_computed_tokens: args.cpu_num_computed_tokens.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_UPDATE_NUM_COMPUTED_TOKENS_FOR_BATCH_CHANGE_ARGS_INIT
        };
        let f = entry!(self, update_num_computed_tokens_for_batch_change)?;
        // SAFETY: the views live through the call; the counts are borrowed mutably.
        self.check_in(
            unsafe { f(&raw) },
            "update_num_computed_tokens_for_batch_change",
        )
    }
}
