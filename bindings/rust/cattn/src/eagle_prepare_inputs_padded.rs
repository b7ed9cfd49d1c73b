// SPDX-License-Identifier: Apache-2.0
//! The token each request of a verified batch samples from, and its rejected drafts (vLLM's
//! vllm/v1/spec_decode/utils.py eagle_prepare_inputs_padded; since 1.2).
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
use crate::one_call::zeroed;
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`eagle_prepare_inputs_padded`] (`cattn_eagle_prepare_inputs_padded_args_t`):
/// int32/int64 tensors, all on the host or all on one GPU. B is `cu_num_draft_tokens`' length.
#[derive(Clone, Debug)]
pub struct EaglePrepareInputsPaddedArgs<'a> {
    /// `[B]`: the INCLUSIVE running sum of each request's drafts (its first entry is request
    /// 0's drafts, not 0).
    pub cu_num_draft_tokens: TensorRef<'a>,
    /// `[B]`: each request's accepted drafts + 1 (0: discarded).
    pub valid_sampled_tokens_count: TensorRef<'a>,
    /// `[>= B + 1]`: the verified batch's.
    pub query_start_loc: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Where [`eagle_prepare_inputs_padded`] writes (int32/int64, on the inputs' device); entries
/// from B on are left as they are.
#[derive(Debug)]
pub struct EaglePrepareInputsPaddedOutputs<'a> {
    /// `[>= B]`: `query_start_loc[i + 1] - 1 - rejected`.
    pub token_indices_to_sample: TensorMut<'a>,
    /// `[>= B]`: `d > 0 ? d + 1 - valid : 0`, d the request's drafts.
    pub num_rejected_tokens: TensorMut<'a>,
}

/// Per request of a verified batch (`cattn_eagle_prepare_inputs_padded`, since 1.2): d = its
/// drafts (from the inclusive sum), rejected = `d > 0 ? d + 1 - valid : 0`, the token to sample
/// `query_start_loc[i + 1] - 1 - rejected`. Host tensors run synchronously; CUDA tensors
/// enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::eagle_step_update_slot_mapping_and_metadata()`], and on the host
/// [`crate::Status::InvalidArgument`] for a result that does not fit its output's dtype; the
/// message names the field (`args.cu_num_draft_tokens`, `out.num_rejected_tokens`).
///
/// ```
/// use cattn::{eagle_prepare_inputs_padded, EaglePrepareInputsPaddedArgs,
///             EaglePrepareInputsPaddedOutputs, Stream, TensorMut, TensorRef};
/// // Requests of 2, 0 and 3 drafts; 2, 0 and 1 of them accepted.
/// let (cu, valid, qsl) = ([2i32, 2, 5], [3i32, 1, 2], [0i32, 3, 4, 8]);
/// let (mut idx, mut rejected) = ([0i32; 3], [0i32; 3]);
/// eagle_prepare_inputs_padded(
///     &EaglePrepareInputsPaddedArgs {
///         cu_num_draft_tokens: TensorRef::from_slice(&cu),
///         valid_sampled_tokens_count: TensorRef::from_slice(&valid),
///         query_start_loc: TensorRef::from_slice(&qsl),
///         stream: Stream::DEFAULT,
///     },
///     &mut EaglePrepareInputsPaddedOutputs {
///         token_indices_to_sample: TensorMut::from_slice(&mut idx),
///         num_rejected_tokens: TensorMut::from_slice(&mut rejected),
///     },
/// )?;
/// assert_eq!((idx, rejected), ([2, 3, 5], [0, 0, 2]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_prepare_inputs_padded(
    args: &EaglePrepareInputsPaddedArgs<'_>,
    out: &mut EaglePrepareInputsPaddedOutputs<'_>,
) -> Result<()> {
    Api::linked()?.eagle_prepare_inputs_padded(args, out)
}

/// What [`eagle_prepare_inputs_padded_host`] returns, of the element type of its slices: one
/// entry per request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EaglePreparedInputs<T> {
    /// The token each request samples from.
    pub token_indices_to_sample: Vec<T>,
    /// Each request's rejected drafts.
    pub num_rejected_tokens: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the tokens to sample and the
/// rejected drafts of the B requests of `cu_num_draft_tokens` (`[B]`, inclusive running sum),
/// with `valid_sampled_tokens_count` (`[B]`) and the verified batch's `query_start_loc`
/// (`[>= B + 1]`).
///
/// ```
/// let p = cattn::eagle_prepare_inputs_padded_host(&[2i64, 2, 5], &[3, 1, 2], &[0, 3, 4, 8])?;
/// assert_eq!(p.token_indices_to_sample, [2, 3, 5]);
/// assert_eq!(p.num_rejected_tokens, [0, 0, 2]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_prepare_inputs_padded_host<T: IndexElement>(
    cu_num_draft_tokens: &[T],
    valid_sampled_tokens_count: &[T],
    query_start_loc: &[T],
) -> Result<EaglePreparedInputs<T>> {
    Api::linked()?.eagle_prepare_inputs_padded_host(
        cu_num_draft_tokens,
        valid_sampled_tokens_count,
        query_start_loc,
    )
}

impl Api<'_> {
    /// [`eagle_prepare_inputs_padded_host`] in this library.
    pub fn eagle_prepare_inputs_padded_host<T: IndexElement>(
        self,
        cu_num_draft_tokens: &[T],
        valid_sampled_tokens_count: &[T],
        query_start_loc: &[T],
    ) -> Result<EaglePreparedInputs<T>> {
        const FUNCTION: &str = "eagle_prepare_inputs_padded_host";
        let b = cu_num_draft_tokens.len();
        let mut idx = zeroed::<T>(FUNCTION, b)?;
        let mut rejected = zeroed::<T>(FUNCTION, b)?;
        self.eagle_prepare_inputs_padded(
            &EaglePrepareInputsPaddedArgs {
                cu_num_draft_tokens: TensorRef::from_slice(cu_num_draft_tokens),
                valid_sampled_tokens_count: TensorRef::from_slice(valid_sampled_tokens_count),
                query_start_loc: TensorRef::from_slice(query_start_loc),
                stream: Stream::DEFAULT,
            },
            &mut EaglePrepareInputsPaddedOutputs {
                token_indices_to_sample: TensorMut::from_slice(&mut idx),
                num_rejected_tokens: TensorMut::from_slice(&mut rejected),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(EaglePreparedInputs {
            token_indices_to_sample: idx,
            num_rejected_tokens: rejected,
        })
    }

    /// [`eagle_prepare_inputs_padded`] in this library.
    pub fn eagle_prepare_inputs_padded(
        self,
        args: &EaglePrepareInputsPaddedArgs<'_>,
        out: &mut EaglePrepareInputsPaddedOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_eagle_prepare_inputs_padded_args_t {
            cu_num_draft_tokens: args.cu_num_draft_tokens.as_raw(),
            valid_sampled_tokens_count: args.valid_sampled_tokens_count.as_raw(),
            query_start_loc: args.query_start_loc.as_raw(),
            token_indices_to_sample: out.token_indices_to_sample.as_raw(),
            num_rejected_tokens: out.num_rejected_tokens.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_EAGLE_PREPARE_INPUTS_PADDED_ARGS_INIT
        };
        let f = entry!(self, eagle_prepare_inputs_padded)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "eagle_prepare_inputs_padded")
    }
}
