// SPDX-License-Identifier: Apache-2.0
//! Each request's next token and valid sampled-token count after rejection sampling (vLLM's
//! vllm/v1/spec_decode/utils.py eagle_prepare_next_token_padded; since 1.2).
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
use crate::one_call::{flatten_rows, len_i64, zeroed};
use crate::tensor::{raw_in, IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`eagle_prepare_next_token_padded`]
/// (`cattn_eagle_prepare_next_token_padded_args_t`): int32/int64 tensors (the mask one byte per
/// entry), all on the host or all on one GPU. B is `sampled_token_ids`' rows.
#[derive(Clone, Debug)]
pub struct EaglePrepareNextTokenPaddedArgs<'a> {
    /// A token at or past it is not valid.
    pub vocab_size: i64,
    /// `[B, S]`: the rejection sampler's tokens, -1 rejected (a strided view may pass fewer
    /// columns than its rows hold).
    pub sampled_token_ids: TensorRef<'a>,
    /// Optional `[B]` flags (`bool`, `u8` or `i8`; [`TensorRef::from_bools`]): the discarded
    /// requests; `None` = none.
    pub discard_request_mask: Option<TensorRef<'a>>,
    /// `[B]`: the token of a request without a valid one.
    pub backup_next_token_ids: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Where [`eagle_prepare_next_token_padded`] writes (int32/int64, on the inputs' device);
/// entries from B on are left as they are.
#[derive(Debug)]
pub struct EaglePrepareNextTokenPaddedOutputs<'a> {
    /// `[>= B]`: the valid token at the highest column, or the backup.
    pub next_token_ids: TensorMut<'a>,
    /// `[>= B]`: the sampled tokens other than -1 and below `vocab_size`; 0 for a discarded
    /// request.
    pub valid_sampled_tokens_count: TensorMut<'a>,
}

/// Per request (`cattn_eagle_prepare_next_token_padded`, since 1.2): a discarded one gets its
/// backup token and 0 valid; otherwise valid counts the sampled tokens other than -1 and below
/// `vocab_size` (vLLM counts other negatives as valid), and the next token is the valid one at
/// the highest column, or the backup when none is. Host tensors run synchronously; CUDA
/// tensors enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::eagle_prepare_inputs_padded()`]; the message names the field
/// (`args.sampled_token_ids`, `out.next_token_ids`).
///
/// ```
/// use cattn::{eagle_prepare_next_token_padded, EaglePrepareNextTokenPaddedArgs,
///             EaglePrepareNextTokenPaddedOutputs, Stream, TensorMut, TensorRef};
/// let sampled = [5i32, 7, -1, -1, -1, -1, 3, 100, 4]; // 3 requests of 3 tokens
/// let (backup, discard) = ([11i32, 12, 13], [false, false, true]);
/// let (mut next, mut valid) = ([0i32; 3], [0i32; 3]);
/// eagle_prepare_next_token_padded(
///     &EaglePrepareNextTokenPaddedArgs {
///         vocab_size: 50,
///         sampled_token_ids: TensorRef::new(&sampled, &[3, 3])?,
///         discard_request_mask: Some(TensorRef::from_bools(&discard)),
///         backup_next_token_ids: TensorRef::from_slice(&backup),
///         stream: Stream::DEFAULT,
///     },
///     &mut EaglePrepareNextTokenPaddedOutputs {
///         next_token_ids: TensorMut::from_slice(&mut next),
///         valid_sampled_tokens_count: TensorMut::from_slice(&mut valid),
///     },
/// )?;
/// // Row 1 has no valid token: its backup; row 2 is discarded.
/// assert_eq!((next, valid), ([7, 12, 13], [2, 0, 0]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_prepare_next_token_padded(
    args: &EaglePrepareNextTokenPaddedArgs<'_>,
    out: &mut EaglePrepareNextTokenPaddedOutputs<'_>,
) -> Result<()> {
    Api::linked()?.eagle_prepare_next_token_padded(args, out)
}

/// What [`eagle_prepare_next_token_padded_host`] returns, of the element type of its slices:
/// one entry per request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EagleNextTokens<T> {
    /// Each request's next token.
    pub next_token_ids: Vec<T>,
    /// Each request's valid sampled tokens.
    pub valid_sampled_tokens_count: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the next tokens of the B
/// requests of `sampled_token_ids` (B rows of one length S), with the discarded requests
/// `discard_request_mask` (`[B]`, `None` = none), `backup_next_token_ids` (`[B]`) and
/// `vocab_size`.
///
/// ```
/// let sampled = [[5i64, 7, -1], [-1, -1, -1], [3, 100, 4]];
/// let n = cattn::eagle_prepare_next_token_padded_host(50, &sampled, None, &[11, 12, 13])?;
/// assert_eq!(n.next_token_ids, [7, 12, 4]);
/// assert_eq!(n.valid_sampled_tokens_count, [2, 0, 2]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_prepare_next_token_padded_host<T: IndexElement, R: AsRef<[T]>>(
    vocab_size: i64,
    sampled_token_ids: &[R],
    discard_request_mask: Option<&[bool]>,
    backup_next_token_ids: &[T],
) -> Result<EagleNextTokens<T>> {
    Api::linked()?.eagle_prepare_next_token_padded_host(
        vocab_size,
        sampled_token_ids,
        discard_request_mask,
        backup_next_token_ids,
    )
}

impl Api<'_> {
    /// [`eagle_prepare_next_token_padded_host`] in this library.
    pub fn eagle_prepare_next_token_padded_host<T: IndexElement, R: AsRef<[T]>>(
        self,
        vocab_size: i64,
        sampled_token_ids: &[R],
        discard_request_mask: Option<&[bool]>,
        backup_next_token_ids: &[T],
    ) -> Result<EagleNextTokens<T>> {
        const FUNCTION: &str = "eagle_prepare_next_token_padded_host";
        let (sampled, cols) = flatten_rows(FUNCTION, "sampled_token_ids", sampled_token_ids)?;
        let b = sampled_token_ids.len();
        let args = EaglePrepareNextTokenPaddedArgs {
            vocab_size,
            sampled_token_ids: TensorRef::new(&sampled, &[len_i64(b), len_i64(cols)])?,
            discard_request_mask: discard_request_mask.map(TensorRef::from_bools),
            backup_next_token_ids: TensorRef::from_slice(backup_next_token_ids),
            stream: Stream::DEFAULT,
        };
        let mut next = zeroed::<T>(FUNCTION, b)?;
        let mut valid = zeroed::<T>(FUNCTION, b)?;
        self.eagle_prepare_next_token_padded(
            &args,
            &mut EaglePrepareNextTokenPaddedOutputs {
                next_token_ids: TensorMut::from_slice(&mut next),
                valid_sampled_tokens_count: TensorMut::from_slice(&mut valid),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(EagleNextTokens {
            next_token_ids: next,
            valid_sampled_tokens_count: valid,
        })
    }

    /// [`eagle_prepare_next_token_padded`] in this library.
    pub fn eagle_prepare_next_token_padded(
        self,
        args: &EaglePrepareNextTokenPaddedArgs<'_>,
        out: &mut EaglePrepareNextTokenPaddedOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_eagle_prepare_next_token_padded_args_t {
            vocab_size: args.vocab_size,
            sampled_token_ids: args.sampled_token_ids.as_raw(),
            discard_request_mask: raw_in(args.discard_request_mask.as_ref()),
            backup_next_token_ids: args.backup_next_token_ids.as_raw(),
            next_token_ids: out.next_token_ids.as_raw(),
            valid_sampled_tokens_count: out.valid_sampled_tokens_count.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_EAGLE_PREPARE_NEXT_TOKEN_PADDED_ARGS_INIT
        };
        let f = entry!(self, eagle_prepare_next_token_padded)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "eagle_prepare_next_token_padded")
    }
}
