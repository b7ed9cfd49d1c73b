// SPDX-License-Identifier: Apache-2.0
//! The slots of a batch whose requests each grew by N tokens (vLLM's
//! vllm/v1/spec_decode/utils.py compute_new_slot_mapping; since 1.2).
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

/// The inputs of [`compute_new_slot_mapping`] (`cattn_compute_new_slot_mapping_args_t`):
/// int32/int64 tensors (the mask one byte per entry), all on the host or all on one GPU. B is
/// `block_table`'s rows.
#[derive(Clone, Debug)]
pub struct ComputeNewSlotMappingArgs<'a> {
    /// The KV-cache block size, `>= 1`.
    pub block_size: i64,
    /// N `>= 0`: the tokens added to every request.
    pub num_new_tokens: i64,
    /// The model's context length, `>= 1`.
    pub max_model_len: i64,
    /// `[B + 1]`: the batch before the extension.
    pub query_start_loc: TensorRef<'a>,
    /// `[B, W]`: each request's block ids.
    pub block_table: TensorRef<'a>,
    /// `[n]`, n = `query_start_loc[B] - query_start_loc[0] + B * N`: the positions of the
    /// extended batch's tokens, request by request.
    pub new_positions: TensorRef<'a>,
    /// Optional `[n]` flags (`bool`, `u8` or `i8`; [`TensorRef::from_bools`]): the rejected
    /// tokens; `None` = none.
    pub is_rejected_token_mask: Option<TensorRef<'a>>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Writes the slot of each of the n tokens of a batch whose requests each grew by N tokens into
/// `new_slot_mapping` (`[>= n]` int64; `cattn_compute_new_slot_mapping`, since 1.2): token k of
/// request r (requests own `q_r + N` consecutive tokens) at position p gets
/// [`crate::PAD_SLOT_ID`] (-1) when rejected or `p >= max_model_len`, else
/// `table[f / W][f % W] * block_size + p % block_size` with `f = r * W + p / block_size` (vLLM
/// indexes the flattened table, so a narrow table reads the next row's blocks). Entries from n
/// on are left as they are. 64-bit arithmetic (vLLM wraps at 2^31). Host tensors run
/// synchronously; CUDA tensors enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::eagle_step_update_slot_mapping_and_metadata()`]; on the host
/// [`crate::Status::InvalidArgument`] for n other than the tokens' count, a negative position
/// or f past the table (the device writes -1 for those); the message names the field
/// (`args.new_positions`, `new_slot_mapping`).
///
/// ```
/// use cattn::{compute_new_slot_mapping, ComputeNewSlotMappingArgs, Stream, TensorMut,
///             TensorRef};
/// // Requests of 2 and 1 tokens, each grown by 1; blocks of 4 tokens, a 10-token model.
/// let (qsl, table, pos) = ([0i32, 2, 3], [3i32, 4, 5, 6, 7, 8], [8i64, 9, 10, 3, 4]);
/// let rejected = [false, true, false, false, false];
/// let mut slots = [0i64; 5];
/// compute_new_slot_mapping(
///     &ComputeNewSlotMappingArgs {
///         block_size: 4,
///         num_new_tokens: 1,
///         max_model_len: 10,
///         query_start_loc: TensorRef::from_slice(&qsl),
///         block_table: TensorRef::new(&table, &[2, 3])?,
///         new_positions: TensorRef::from_slice(&pos),
///         is_rejected_token_mask: Some(TensorRef::from_bools(&rejected)),
///         stream: Stream::DEFAULT,
///     },
///     &mut TensorMut::from_slice(&mut slots),
/// )?;
/// // Token 1 is rejected, token 2 past the model's length.
/// assert_eq!(slots, [5 * 4, -1, -1, 6 * 4 + 3, 7 * 4]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_new_slot_mapping(
    args: &ComputeNewSlotMappingArgs<'_>,
    new_slot_mapping: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.compute_new_slot_mapping(args, new_slot_mapping)
}

/// One call for host slices of one element type (int32 or int64): the slot of each entry of
/// `new_positions` (`[n]`) for the batch `query_start_loc` (`[B + 1]`, before the extension)
/// whose requests each grew by `num_new_tokens`, with the table `block_table` (B rows of one
/// length) and the rejected tokens `is_rejected_token_mask` (`[n]`, `None` = none).
///
/// ```
/// let table = [[3i64, 4, 5], [6, 7, 8]];
/// let slots = cattn::compute_new_slot_mapping_host(4, 1, 10, &[0, 2, 3], &table,
///                                                  &[8, 9, 10, 3, 4], None)?;
/// assert_eq!(slots, [20, 21, -1, 27, 28]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_new_slot_mapping_host<T: IndexElement, R: AsRef<[T]>>(
    block_size: i64,
    num_new_tokens: i64,
    max_model_len: i64,
    query_start_loc: &[T],
    block_table: &[R],
    new_positions: &[T],
    is_rejected_token_mask: Option<&[bool]>,
) -> Result<Vec<i64>> {
    Api::linked()?.compute_new_slot_mapping_host(
        block_size,
        num_new_tokens,
        max_model_len,
        query_start_loc,
        block_table,
        new_positions,
        is_rejected_token_mask,
    )
}

impl Api<'_> {
    /// [`compute_new_slot_mapping_host`] in this library.
    #[allow(clippy::too_many_arguments)]
    pub fn compute_new_slot_mapping_host<T: IndexElement, R: AsRef<[T]>>(
        self,
        block_size: i64,
        num_new_tokens: i64,
        max_model_len: i64,
        query_start_loc: &[T],
        block_table: &[R],
        new_positions: &[T],
        is_rejected_token_mask: Option<&[bool]>,
    ) -> Result<Vec<i64>> {
        const FUNCTION: &str = "compute_new_slot_mapping_host";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let args = ComputeNewSlotMappingArgs {
            block_size,
            num_new_tokens,
            max_model_len,
            query_start_loc: TensorRef::from_slice(query_start_loc),
            block_table: TensorRef::new(&table, &[len_i64(block_table.len()), len_i64(cols)])?,
            new_positions: TensorRef::from_slice(new_positions),
            is_rejected_token_mask: is_rejected_token_mask.map(TensorRef::from_bools),
            stream: Stream::DEFAULT,
        };
        let mut out = zeroed::<i64>(FUNCTION, new_positions.len())?;
        self.compute_new_slot_mapping(&args, &mut TensorMut::from_slice(&mut out))
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(out)
    }

    /// [`compute_new_slot_mapping`] in this library.
    pub fn compute_new_slot_mapping(
        self,
        args: &ComputeNewSlotMappingArgs<'_>,
        new_slot_mapping: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_compute_new_slot_mapping_args_t {
            block_size: args.block_size,
            num_new_tokens: args.num_new_tokens,
            max_model_len: args.max_model_len,
            query_start_loc: args.query_start_loc.as_raw(),
            block_table: args.block_table.as_raw(),
            new_positions: args.new_positions.as_raw(),
            is_rejected_token_mask: raw_in(args.is_rejected_token_mask.as_ref()),
            new_slot_mapping: new_slot_mapping.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_COMPUTE_NEW_SLOT_MAPPING_ARGS_INIT
        };
        let f = entry!(self, compute_new_slot_mapping)?;
        // SAFETY: the views live through the call; `new_slot_mapping` is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "compute_new_slot_mapping")
    }
}
