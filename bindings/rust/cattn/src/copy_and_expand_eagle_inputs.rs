// SPDX-License-Identifier: Apache-2.0
//! The drafter's inputs expanded from a verified batch, with parallel drafting (vLLM's
//! vllm/v1/spec_decode/utils.py copy_and_expand_eagle_inputs; since 1.2).
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
use crate::one_call::{len_i64, zeroed};
use crate::tensor::{raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The scalars of [`copy_and_expand_eagle_inputs`] (of
/// `cattn_copy_and_expand_eagle_inputs_args_t`). The default is
/// `CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT`'s: token ids 0, P = 1 (the bonus token
/// only), no limit, no shift.
///
/// ```
/// let p = cattn::CopyAndExpandEagleParams::default();
/// let init = cattn::sys::CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
/// assert_eq!(p.num_padding_slots_per_request, init.num_padding_slots_per_request);
/// assert_eq!((p.max_tokens_per_request, p.shift_input_ids), (None, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopyAndExpandEagleParams {
    /// The token of each request's rejected tail.
    pub padding_token_id: i64,
    /// The token of slots 2 to P (the parallel drafts).
    pub parallel_drafting_token_id: i64,
    /// P `>= 1`: the bonus token plus the parallel drafts.
    pub num_padding_slots_per_request: i64,
    /// A request's output tokens from this index on are not written (vLLM's `num_blocks *
    /// BLOCK_SIZE_TOKENS`); `None` = no limit (the header's 0, which `Some(0)` passes too).
    pub max_tokens_per_request: Option<i64>,
    /// Drop each request's first token (s = 1).
    pub shift_input_ids: bool,
}

impl Default for CopyAndExpandEagleParams {
    fn default() -> Self {
        let init = sys::CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
        CopyAndExpandEagleParams {
            padding_token_id: init.padding_token_id,
            parallel_drafting_token_id: init.parallel_drafting_token_id,
            num_padding_slots_per_request: init.num_padding_slots_per_request,
            max_tokens_per_request: (init.max_tokens_per_request != 0)
                .then_some(init.max_tokens_per_request),
            shift_input_ids: init.shift_input_ids != 0,
        }
    }
}

/// The inputs of [`copy_and_expand_eagle_inputs`]
/// (`cattn_copy_and_expand_eagle_inputs_args_t`): int32/int64 tensors, all on the host or all
/// on one GPU. B is `next_token_ids`' length.
#[derive(Clone, Debug)]
pub struct CopyAndExpandEagleInputsArgs<'a> {
    /// The token ids, P, the limit and the shift.
    pub params: CopyAndExpandEagleParams,
    /// `[T]`: the verified batch's tokens.
    pub target_token_ids: TensorRef<'a>,
    /// `[T']`: their positions.
    pub target_positions: TensorRef<'a>,
    /// `[B]`: each request's bonus token.
    pub next_token_ids: TensorRef<'a>,
    /// `[B + 1]`.
    pub query_start_loc: TensorRef<'a>,
    /// `[B]`: each request's last valid token.
    pub query_end_loc: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Where [`copy_and_expand_eagle_inputs`] writes (on the inputs' device): n_out =
/// `query_start_loc[B] + B * (P - s)` output tokens. Entries past what the call writes are left
/// as they are.
#[derive(Debug)]
pub struct CopyAndExpandEagleInputsOutputs<'a> {
    /// `[>= n_out]` int32/int64: the drafter's token ids.
    pub input_ids: TensorMut<'a>,
    /// `[>= n_out]` int32/int64: their positions (0 for a rejected token).
    pub positions: TensorMut<'a>,
    /// Optional `[>= n_out]` flags (`u8` or `i8`, written 0 or 1): the rejected tail.
    pub is_rejected_token_mask: Option<TensorMut<'a>>,
    /// Optional `[>= n_out]` flags (`u8` or `i8`, written 0 or 1): the parallel drafts.
    pub is_masked_token_mask: Option<TensorMut<'a>>,
    /// Optional `[>= B * P]` int32/int64: entry `i * P + k` is the output index of request i's
    /// new token k.
    pub new_token_indices: Option<TensorMut<'a>>,
    /// Optional `[>= query_start_loc[B]]` int32/int64, written only with
    /// `shift_input_ids`: each input token's output index.
    pub hidden_state_mapping: Option<TensorMut<'a>>,
}

/// The drafter's inputs from a verified batch, with parallel drafting
/// (`cattn_copy_and_expand_eagle_inputs`, since 1.2): request i owns the output tokens
/// `[query_start_loc[i] + i * (P - s), + q_i + P - s)`: its v valid tokens (from
/// `query_start_loc[i] + s`), the bonus `next_token_ids[i]`, P - 1 parallel-drafting tokens
/// (masked), then its rejected tail (padding token, position 0, rejected); positions count up
/// from the request's first target position. Host tensors run synchronously; CUDA tensors
/// enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::eagle_step_update_slot_mapping_and_metadata()`]; on the host
/// [`crate::Status::InvalidArgument`] for a `query_end_loc` outside its request, a request
/// without tokens or `query_start_loc` past the targets; the message names the field
/// (`args.query_end_loc`, `args.params.num_padding_slots_per_request`, `out.input_ids`).
///
/// ```
/// use cattn::{copy_and_expand_eagle_inputs, CopyAndExpandEagleInputsArgs,
///             CopyAndExpandEagleInputsOutputs, CopyAndExpandEagleParams, Stream, TensorMut,
///             TensorRef};
/// // Two requests of 3 and 2 tokens; request 1's last token was rejected.
/// let (ids, pos) = ([10i32, 11, 12, 20, 21], [4i32, 5, 6, 8, 9]);
/// let (next, qsl, qel) = ([99i32, 98], [0i32, 3, 5], [2i32, 3]);
/// let (mut out_ids, mut out_pos, mut masked) = ([0i32; 9], [0i32; 9], [0u8; 9]);
/// copy_and_expand_eagle_inputs(
///     &CopyAndExpandEagleInputsArgs {
///         params: CopyAndExpandEagleParams {
///             padding_token_id: 77,
///             parallel_drafting_token_id: 5,
///             num_padding_slots_per_request: 2,
///             ..Default::default()
///         },
///         target_token_ids: TensorRef::from_slice(&ids),
///         target_positions: TensorRef::from_slice(&pos),
///         next_token_ids: TensorRef::from_slice(&next),
///         query_start_loc: TensorRef::from_slice(&qsl),
///         query_end_loc: TensorRef::from_slice(&qel),
///         stream: Stream::DEFAULT,
///     },
///     &mut CopyAndExpandEagleInputsOutputs {
///         input_ids: TensorMut::from_slice(&mut out_ids),
///         positions: TensorMut::from_slice(&mut out_pos),
///         is_rejected_token_mask: None,
///         is_masked_token_mask: Some(TensorMut::from_slice(&mut masked)),
///         new_token_indices: None,
///         hidden_state_mapping: None,
///     },
/// )?;
/// assert_eq!(out_ids, [10, 11, 12, 99, 5, 20, 98, 5, 77]);
/// assert_eq!(out_pos, [4, 5, 6, 7, 8, 8, 9, 10, 0]);
/// assert_eq!(masked, [0, 0, 0, 0, 1, 0, 0, 1, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn copy_and_expand_eagle_inputs(
    args: &CopyAndExpandEagleInputsArgs<'_>,
    out: &mut CopyAndExpandEagleInputsOutputs<'_>,
) -> Result<()> {
    Api::linked()?.copy_and_expand_eagle_inputs(args, out)
}

/// What [`copy_and_expand_eagle_inputs_host`] returns, of the element type of its slices.
/// Entries the call does not write (past `max_tokens_per_request`) are 0 (`false`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EagleDraftInputs<T> {
    /// `[n_out]`: the drafter's token ids.
    pub input_ids: Vec<T>,
    /// `[n_out]`: their positions.
    pub positions: Vec<T>,
    /// `[n_out]`: the rejected tail.
    pub is_rejected_token_mask: Vec<bool>,
    /// `[n_out]`: the parallel drafts.
    pub is_masked_token_mask: Vec<bool>,
    /// `[B * P]`: the output index of each request's new tokens.
    pub new_token_indices: Vec<T>,
    /// `[query_start_loc[B]]` with `shift_input_ids`: each input token's output index; empty
    /// without.
    pub hidden_state_mapping: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the drafter's inputs of the
/// B requests of `next_token_ids` (`[B]`), from the verified batch's `target_token_ids`,
/// `target_positions`, `query_start_loc` (`[B + 1]`) and `query_end_loc` (`[B]`). The outputs'
/// length, n_out = `query_start_loc[B] + B * (P - s)`, comes from the slices (a
/// `query_start_loc[B]` past the targets counts as the targets' length; the library refuses
/// it).
///
/// ```
/// use cattn::CopyAndExpandEagleParams;
/// let params = CopyAndExpandEagleParams {
///     padding_token_id: 77,
///     parallel_drafting_token_id: 5,
///     num_padding_slots_per_request: 2,
///     shift_input_ids: true,
///     ..Default::default()
/// };
/// let d = cattn::copy_and_expand_eagle_inputs_host(&params, &[10i64, 11, 12, 20, 21],
///                                                  &[4, 5, 6, 8, 9], &[99, 98], &[0, 3, 5],
///                                                  &[2, 4])?;
/// // Each request drops its first token: 2 + 1 (bonus) + 1 (parallel draft) per request.
/// assert_eq!(d.input_ids, [11, 12, 99, 5, 21, 98, 5]);
/// assert_eq!(d.positions, [4, 5, 6, 7, 8, 9, 10]);
/// assert_eq!(d.new_token_indices, [2, 3, 5, 6]);
/// assert_eq!(d.hidden_state_mapping, [0, 1, 2, 4, 5]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn copy_and_expand_eagle_inputs_host<T: IndexElement>(
    params: &CopyAndExpandEagleParams,
    target_token_ids: &[T],
    target_positions: &[T],
    next_token_ids: &[T],
    query_start_loc: &[T],
    query_end_loc: &[T],
) -> Result<EagleDraftInputs<T>> {
    Api::linked()?.copy_and_expand_eagle_inputs_host(
        params,
        target_token_ids,
        target_positions,
        next_token_ids,
        query_start_loc,
        query_end_loc,
    )
}

/// The largest P the one-call helper sizes its outputs for; a larger one is sized as this, so
/// that the library, which refuses it, names `num_padding_slots_per_request` rather than an
/// output. (The header's own limit is lower.)
const HELPER_MAX_SLOTS_PER_REQUEST: i64 = 1 << 20;

impl Api<'_> {
    /// [`copy_and_expand_eagle_inputs_host`] in this library.
    pub fn copy_and_expand_eagle_inputs_host<T: IndexElement>(
        self,
        params: &CopyAndExpandEagleParams,
        target_token_ids: &[T],
        target_positions: &[T],
        next_token_ids: &[T],
        query_start_loc: &[T],
        query_end_loc: &[T],
    ) -> Result<EagleDraftInputs<T>> {
        const FUNCTION: &str = "copy_and_expand_eagle_inputs_host";
        let b = len_i64(next_token_ids.len());
        let tokens = query_start_loc.last().map_or(0, |t| t.to_i64());
        let tokens = tokens.clamp(0, len_i64(target_token_ids.len()));
        let per_request = (params.num_padding_slots_per_request
            - i64::from(params.shift_input_ids))
        .clamp(0, HELPER_MAX_SLOTS_PER_REQUEST);
        let slots = params
            .num_padding_slots_per_request
            .clamp(0, HELPER_MAX_SLOTS_PER_REQUEST);
        // A size past memory saturates, and allocating it fails with OutOfMemory.
        let n_out = usize::try_from(b.saturating_mul(per_request).saturating_add(tokens))
            .unwrap_or(usize::MAX);
        let n_new = usize::try_from(b.saturating_mul(slots)).unwrap_or(usize::MAX);
        let n_hidden = if params.shift_input_ids {
            usize::try_from(tokens).unwrap_or(0)
        } else {
            0
        };
        let mut input_ids = zeroed::<T>(FUNCTION, n_out)?;
        let mut positions = zeroed::<T>(FUNCTION, n_out)?;
        let mut rejected = zeroed::<u8>(FUNCTION, n_out)?;
        let mut masked = zeroed::<u8>(FUNCTION, n_out)?;
        let mut new_token_indices = zeroed::<T>(FUNCTION, n_new)?;
        let mut hidden = zeroed::<T>(FUNCTION, n_hidden)?;
        self.copy_and_expand_eagle_inputs(
            &CopyAndExpandEagleInputsArgs {
                params: *params,
                target_token_ids: TensorRef::from_slice(target_token_ids),
                target_positions: TensorRef::from_slice(target_positions),
                next_token_ids: TensorRef::from_slice(next_token_ids),
                query_start_loc: TensorRef::from_slice(query_start_loc),
                query_end_loc: TensorRef::from_slice(query_end_loc),
                stream: Stream::DEFAULT,
            },
            &mut CopyAndExpandEagleInputsOutputs {
                input_ids: TensorMut::from_slice(&mut input_ids),
                positions: TensorMut::from_slice(&mut positions),
                is_rejected_token_mask: Some(TensorMut::from_slice(&mut rejected)),
                is_masked_token_mask: Some(TensorMut::from_slice(&mut masked)),
                new_token_indices: Some(TensorMut::from_slice(&mut new_token_indices)),
                hidden_state_mapping: params
                    .shift_input_ids
                    .then(|| TensorMut::from_slice(&mut hidden)),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(EagleDraftInputs {
            input_ids,
            positions,
            is_rejected_token_mask: rejected.iter().map(|&f| f != 0).collect(),
            is_masked_token_mask: masked.iter().map(|&f| f != 0).collect(),
            new_token_indices,
            hidden_state_mapping: hidden,
        })
    }

    /// [`copy_and_expand_eagle_inputs`] in this library.
    pub fn copy_and_expand_eagle_inputs(
        self,
        args: &CopyAndExpandEagleInputsArgs<'_>,
        out: &mut CopyAndExpandEagleInputsOutputs<'_>,
    ) -> Result<()> {
        let p = &args.params;
        let init = sys::CATTN_COPY_AND_EXPAND_EAGLE_INPUTS_ARGS_INIT;
        let raw = sys::cattn_copy_and_expand_eagle_inputs_args_t {
            padding_token_id: p.padding_token_id,
            parallel_drafting_token_id: p.parallel_drafting_token_id,
            num_padding_slots_per_request: p.num_padding_slots_per_request,
            max_tokens_per_request: p
                .max_tokens_per_request
                .unwrap_or(init.max_tokens_per_request),
            shift_input_ids: i32::from(p.shift_input_ids),
            target_token_ids: args.target_token_ids.as_raw(),
            target_positions: args.target_positions.as_raw(),
            next_token_ids: args.next_token_ids.as_raw(),
            query_start_loc: args.query_start_loc.as_raw(),
            query_end_loc: args.query_end_loc.as_raw(),
            out_input_ids: out.input_ids.as_raw(),
            out_positions: out.positions.as_raw(),
            out_is_rejected_token_mask: raw_out(out.is_rejected_token_mask.as_mut()),
            out_is_masked_token_mask: raw_out(out.is_masked_token_mask.as_mut()),
            out_new_token_indices: raw_out(out.new_token_indices.as_mut()),
            out_hidden_state_mapping: raw_out(out.hidden_state_mapping.as_mut()),
            stream: args.stream.as_raw(),
            ..init
        };
        let f = entry!(self, copy_and_expand_eagle_inputs)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "copy_and_expand_eagle_inputs")
    }
}
