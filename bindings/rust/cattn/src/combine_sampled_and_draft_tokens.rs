// SPDX-License-Identifier: Apache-2.0
//! A step's logits indices, and the sampled and draft tokens put into its input ids (model
//! runner v2's combine_sampled_and_draft_tokens and expand_idx_mapping; since 1.2).
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

/// The inputs of [`combine_sampled_and_draft_tokens`]
/// (`cattn_combine_sampled_and_draft_tokens_args_t`): int32/int64 tensors, all on the host or
/// all on one GPU. The token combination's four inputs go together, with `out.input_ids`.
#[derive(Clone, Debug)]
pub struct CombineSampledAndDraftTokensArgs<'a> {
    /// Logits per row besides its drafts, 0 or 1; `None` is the header's default
    /// (`CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT`: 1, vLLM's).
    pub num_new_sampled_tokens: Option<i64>,
    /// `[B + 1]`.
    pub query_start_loc: TensorRef<'a>,
    /// Optional `[1]`: the live rows in `[0, B]` (host: refused outside; device: clamped); `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// Optional `[B]`: the drafts of each row; `None` = 0.
    pub num_draft_tokens: Option<TensorRef<'a>>,
    /// `[B]`: needed by `out.expanded_idx_mapping` and `out.input_ids`, else may be `None`.
    pub idx_mapping: Option<TensorRef<'a>>,
    /// `[B]` (the token combination).
    pub seq_lens: Option<TensorRef<'a>>,
    /// `[R]`: the prompt length of each persistent row (the token combination).
    pub prefill_len: Option<TensorRef<'a>>,
    /// `[R]` (the token combination).
    pub last_sampled_tokens: Option<TensorRef<'a>>,
    /// `[R, S]`, S at least every row's drafts (the token combination).
    pub draft_tokens: Option<TensorRef<'a>>,
    /// For CUDA tensors.
    pub stream: Stream,
}

impl<'a> CombineSampledAndDraftTokensArgs<'a> {
    /// The args of a batch `query_start_loc` with the header's defaults: every row live, no
    /// drafts, the default sampled tokens, no token combination.
    pub fn new(query_start_loc: TensorRef<'a>) -> CombineSampledAndDraftTokensArgs<'a> {
        CombineSampledAndDraftTokensArgs {
            num_new_sampled_tokens: None,
            query_start_loc,
            num_reqs: None,
            num_draft_tokens: None,
            idx_mapping: None,
            seq_lens: None,
            prefill_len: None,
            last_sampled_tokens: None,
            draft_tokens: None,
            stream: Stream::DEFAULT,
        }
    }
}

/// Where [`combine_sampled_and_draft_tokens`] writes (int32/int64, on the inputs' device).
#[derive(Debug)]
pub struct CombineSampledAndDraftTokensOutputs<'a> {
    /// `[L_cap]`, at least the total logits: `qsl[b + 1] - n_b + j`; 0 past the total.
    pub logits_indices: TensorMut<'a>,
    /// Optional `[B + 1]`: the running sum of the rows' logits.
    pub cu_num_logits: Option<TensorMut<'a>>,
    /// Optional `[L_cap]`: `idx_mapping[b]` of each logit.
    pub expanded_idx_mapping: Option<TensorMut<'a>>,
    /// Optional `[L_cap]`: j of each logit.
    pub expanded_local_pos: Option<TensorMut<'a>>,
    /// Optional `[T]` token ids: each decode row's sampled and draft tokens go in, other
    /// entries are left as they are.
    pub input_ids: Option<TensorMut<'a>>,
}

/// Computes a step's logits (`cattn_combine_sampled_and_draft_tokens`, since 1.2): live row b
/// owns `n_b = num_new_sampled_tokens + drafts[b]` logits, the last n_b tokens of its query,
/// `logits_indices[cu[b] + j] = qsl[b + 1] - n_b + j`, expanded_idx_mapping `idx_mapping[b]`,
/// expanded_local_pos j; 0 past the total. With `input_ids` (and the four token inputs), a row
/// past its prompt gets its drafts and last sampled token as the header describes. A row with
/// n_b above its query is refused on the host, clamped to its query on the device.
///
/// Errors: as [`crate::prepare_pos_seq_lens()`]; the message names the field
/// (`args.num_draft_tokens`, `out.logits_indices`).
///
/// ```
/// use cattn::{combine_sampled_and_draft_tokens, CombineSampledAndDraftTokensArgs,
///             CombineSampledAndDraftTokensOutputs, TensorMut, TensorRef};
/// let (qsl, drafts) = ([0i32, 3, 4], [2i32, 0]);
/// let (mut logits, mut cu) = ([9i32; 5], [0i32; 3]);
/// combine_sampled_and_draft_tokens(
///     &CombineSampledAndDraftTokensArgs {
///         num_draft_tokens: Some(TensorRef::from_slice(&drafts)),
///         ..CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(&qsl))
///     },
///     &mut CombineSampledAndDraftTokensOutputs {
///         logits_indices: TensorMut::from_slice(&mut logits),
///         cu_num_logits: Some(TensorMut::from_slice(&mut cu)),
///         expanded_idx_mapping: None,
///         expanded_local_pos: None,
///         input_ids: None,
///     },
/// )?;
/// assert_eq!((logits, cu), ([0, 1, 2, 3, 0], [0, 3, 4]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn combine_sampled_and_draft_tokens(
    args: &CombineSampledAndDraftTokensArgs<'_>,
    out: &mut CombineSampledAndDraftTokensOutputs<'_>,
) -> Result<()> {
    Api::linked()?.combine_sampled_and_draft_tokens(args, out)
}

/// What [`combine_sampled_and_draft_tokens_host`] returns, of the element type of its slices:
/// one entry per logit in the three logit vectors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepLogits<T> {
    /// The token index of each logit.
    pub logits_indices: Vec<T>,
    /// `[B + 1]`: the running sum of the rows' logits.
    pub cu_num_logits: Vec<T>,
    /// The persistent row of each logit's request (empty without `idx_mapping`).
    pub expanded_idx_mapping: Vec<T>,
    /// The position of each logit within its request's logits.
    pub expanded_local_pos: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the logits of the batch
/// `query_start_loc` (`[B + 1]`) with `num_reqs` live rows (`None` = B), `num_draft_tokens`
/// drafts per row (`None` = 0) and `num_new_sampled_tokens` (`None` = the header's default, 1).
/// `expanded_idx_mapping` is computed when `idx_mapping` (`[B]`) is given. The logit vectors are
/// as long as the total logits the library counts ([`crate::step_inputs_size()`]).
///
/// ```
/// let l = cattn::combine_sampled_and_draft_tokens_host(None, &[0i64, 3, 4, 4], Some(2),
///                                                      Some(&[2, 0, 0]), Some(&[5, 1, 0]))?;
/// assert_eq!(l.logits_indices, [0, 1, 2, 3]);
/// assert_eq!(l.cu_num_logits, [0, 3, 4, 4]);
/// assert_eq!(l.expanded_idx_mapping, [5, 5, 5, 1]);
/// assert_eq!(l.expanded_local_pos, [0, 1, 2, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn combine_sampled_and_draft_tokens_host<T: IndexElement>(
    num_new_sampled_tokens: Option<i64>,
    query_start_loc: &[T],
    num_reqs: Option<i64>,
    num_draft_tokens: Option<&[T]>,
    idx_mapping: Option<&[T]>,
) -> Result<StepLogits<T>> {
    Api::linked()?.combine_sampled_and_draft_tokens_host(
        num_new_sampled_tokens,
        query_start_loc,
        num_reqs,
        num_draft_tokens,
        idx_mapping,
    )
}

impl Api<'_> {
    /// [`combine_sampled_and_draft_tokens_host`] in this library.
    pub fn combine_sampled_and_draft_tokens_host<T: IndexElement>(
        self,
        num_new_sampled_tokens: Option<i64>,
        query_start_loc: &[T],
        num_reqs: Option<i64>,
        num_draft_tokens: Option<&[T]>,
        idx_mapping: Option<&[T]>,
    ) -> Result<StepLogits<T>> {
        const FUNCTION: &str = "combine_sampled_and_draft_tokens_host";
        let live = num_reqs.map(|n| [n]);
        let args = CombineSampledAndDraftTokensArgs {
            num_new_sampled_tokens,
            num_reqs: live.as_ref().map(|n| TensorRef::from_slice(n)),
            num_draft_tokens: num_draft_tokens.map(TensorRef::from_slice),
            idx_mapping: idx_mapping.map(TensorRef::from_slice),
            ..CombineSampledAndDraftTokensArgs::new(TensorRef::from_slice(query_start_loc))
        };
        // The library counts the live rows' logits (its size query): the outputs' length.
        let sizes = self
            .step_inputs_size(&StepInputsSizeArgs {
                num_new_sampled_tokens,
                query_start_loc: Some(args.query_start_loc.clone()),
                num_reqs: args.num_reqs.clone(),
                num_draft_tokens: args.num_draft_tokens.clone(),
                ..Default::default()
            })
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let total = reported_len(FUNCTION, "a logit total", sizes.num_logits)?;
        let mut logits = zeroed::<T>(FUNCTION, total)?;
        let mut cu = zeroed::<T>(FUNCTION, query_start_loc.len())?;
        let mut expanded = zeroed::<T>(FUNCTION, if idx_mapping.is_some() { total } else { 0 })?;
        let mut local = zeroed::<T>(FUNCTION, total)?;
        self.combine_sampled_and_draft_tokens(
            &args,
            &mut CombineSampledAndDraftTokensOutputs {
                logits_indices: TensorMut::from_slice(&mut logits),
                cu_num_logits: Some(TensorMut::from_slice(&mut cu)),
                expanded_idx_mapping: idx_mapping.map(|_| TensorMut::from_slice(&mut expanded)),
                expanded_local_pos: Some(TensorMut::from_slice(&mut local)),
                input_ids: None,
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(StepLogits {
            logits_indices: logits,
            cu_num_logits: cu,
            expanded_idx_mapping: expanded,
            expanded_local_pos: local,
        })
    }

    /// [`combine_sampled_and_draft_tokens`] in this library.
    pub fn combine_sampled_and_draft_tokens(
        self,
        args: &CombineSampledAndDraftTokensArgs<'_>,
        out: &mut CombineSampledAndDraftTokensOutputs<'_>,
    ) -> Result<()> {
        let init = sys::CATTN_COMBINE_SAMPLED_AND_DRAFT_TOKENS_ARGS_INIT;
        let raw = sys::cattn_combine_sampled_and_draft_tokens_args_t {
            num_new_sampled_tokens: args
                .num_new_sampled_tokens
                .unwrap_or(init.num_new_sampled_tokens),
            query_start_loc: args.query_start_loc.as_raw(),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            num_draft_tokens: raw_in(args.num_draft_tokens.as_ref()),
            idx_mapping: raw_in(args.idx_mapping.as_ref()),
            seq_lens: raw_in(args.seq_lens.as_ref()),
            prefill_len: raw_in(args.prefill_len.as_ref()),
            last_sampled_tokens: raw_in(args.last_sampled_tokens.as_ref()),
            draft_tokens: raw_in(args.draft_tokens.as_ref()),
            logits_indices: out.logits_indices.as_raw(),
            cu_num_logits: raw_out(out.cu_num_logits.as_mut()),
            expanded_idx_mapping: raw_out(out.expanded_idx_mapping.as_mut()),
            expanded_local_pos: raw_out(out.expanded_local_pos.as_mut()),
            input_ids: raw_out(out.input_ids.as_mut()),
            stream: args.stream.as_raw(),
            ..init
        };
        let f = entry!(self, combine_sampled_and_draft_tokens)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "combine_sampled_and_draft_tokens")
    }
}
