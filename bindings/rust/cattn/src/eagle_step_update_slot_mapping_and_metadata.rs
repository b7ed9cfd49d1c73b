// SPDX-License-Identifier: Apache-2.0
//! One EAGLE drafting step's positions, slots and sequence lengths (vLLM's
//! vllm/v1/spec_decode/utils.py eagle_step_update_slot_mapping_and_metadata; since 1.2).
//!
//! The speculative-decoding calls (this one, [`crate::eagle_prepare_inputs_padded()`],
//! [`crate::eagle_prepare_next_token_padded()`], [`crate::compute_new_slot_mapping()`],
//! [`crate::copy_and_expand_eagle_inputs()`] and
//! [`crate::update_num_computed_tokens_for_batch_change()`]) share the header's rules: flag
//! tensors (masks) hold one byte per entry (`bool`, `u8` or `i8`, nonzero = set; see
//! [`TensorRef::from_bools`]); on the host a value that would make vLLM read or write out of
//! bounds is refused, naming the tensor and the index; on the device nothing is read or written
//! out of bounds whatever the values; slots are int64 and exact where vLLM wraps at 2^31.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/spec_decode.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{flatten_rows, len_i64, zeroed};
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`eagle_step_update_slot_mapping_and_metadata`]
/// (`cattn_eagle_step_update_slot_mapping_and_metadata_args_t`): int32/int64 tensors, all on
/// the host or all on one GPU. B is `positions`' length.
#[derive(Clone, Debug)]
pub struct EagleStepUpdateSlotMappingAndMetadataArgs<'a> {
    /// The KV-cache block size, `>= 1`.
    pub block_size: i64,
    /// The model's context length, `>= 1`.
    pub max_model_len: i64,
    /// The slot-mapping entries written, the batch plus CUDA-graph padding (`>= B`); `None` is
    /// the header's default (`CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT`: 0,
    /// which means B).
    pub input_batch_size: Option<i64>,
    /// `[B]`: the step's positions (M-RoPE: row 0).
    pub positions: TensorRef<'a>,
    /// `[B, W]`, W >= 1: each row's block ids (a strided view may pass fewer columns than its
    /// storage holds).
    pub block_table: TensorRef<'a>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// What [`eagle_step_update_slot_mapping_and_metadata`] updates and writes (int32/int64, on the
/// inputs' device).
#[derive(Debug)]
pub struct EagleStepUpdateSlotMappingAndMetadataOutputs<'a> {
    /// `[B]`, read and updated in place: `min(seq_len + 1, max_model_len)`, or
    /// `min(1, max_model_len)` for a row past the model's length.
    pub seq_lens: TensorMut<'a>,
    /// `[>= B]`: each row's next position, 0 past the model's length; entries from B on are
    /// left as they are.
    pub clamped_positions: TensorMut<'a>,
    /// `[>= input_batch_size]` int64: each row's slot, [`crate::PAD_SLOT_ID`] (-1) past the
    /// model's length and for rows B to `input_batch_size - 1`; later entries are left.
    pub slot_mapping: TensorMut<'a>,
}

/// One EAGLE drafting step (`cattn_eagle_step_update_slot_mapping_and_metadata`, since 1.2):
/// for row i, `p = positions[i] + 1`; when `p < max_model_len` the clamped position is p, the
/// slot `block_table[i, min(p / block_size, W - 1)] * block_size + p % block_size` and
/// `seq_lens[i] = min(seq_lens[i] + 1, max_model_len)`; otherwise 0, -1 and
/// `min(1, max_model_len)`. Slots B to `input_batch_size - 1` get -1. Host tensors run
/// synchronously; CUDA tensors enqueue one kernel on `args.stream` (no sync, capturable).
///
/// The header lets `out.clamped_positions` be `args.positions`' very view (in place): views of
/// host slices cannot alias, but two views of the same device memory made with
/// [`TensorRef::from_raw_parts`] and [`TensorMut::from_raw_parts`] with one layout can.
///
/// Errors: [`crate::Status::InvalidArgument`] for a malformed tensor, mixed devices, an
/// overlap, a size out of range, and on the host a value that would make vLLM read outside
/// the table, the message naming the field (`args.block_table`, `out.slot_mapping`);
/// [`crate::Status::InsufficientSize`] for an output shorter than its shape;
/// [`crate::Status::NotSupported`] for CUDA tensors in a CPU-only build;
/// [`crate::Status::CudaError`].
///
/// ```
/// use cattn::{eagle_step_update_slot_mapping_and_metadata,
///             EagleStepUpdateSlotMappingAndMetadataArgs as Args,
///             EagleStepUpdateSlotMappingAndMetadataOutputs as Outputs, Stream, TensorMut,
///             TensorRef};
/// // Two requests, blocks of 4 tokens, a 16-token model; row 1 reaches the model's length.
/// let (positions, table) = ([5i64, 15], [7i32, 8, 9, 10, 1, 2, 3, 4]);
/// let mut seq_lens = [6i32, 16];
/// let (mut clamped, mut slots) = ([0i64; 2], [99i64; 4]);
/// eagle_step_update_slot_mapping_and_metadata(
///     &Args {
///         block_size: 4,
///         max_model_len: 16,
///         input_batch_size: Some(3), // one CUDA-graph padding row
///         positions: TensorRef::from_slice(&positions),
///         block_table: TensorRef::new(&table, &[2, 4])?,
///         stream: Stream::DEFAULT,
///     },
///     &mut Outputs {
///         seq_lens: TensorMut::from_slice(&mut seq_lens),
///         clamped_positions: TensorMut::from_slice(&mut clamped),
///         slot_mapping: TensorMut::from_slice(&mut slots),
///     },
/// )?;
/// assert_eq!((clamped, seq_lens), ([6, 0], [7, 1]));
/// assert_eq!(slots, [8 * 4 + 2, -1, -1, 99]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_step_update_slot_mapping_and_metadata(
    args: &EagleStepUpdateSlotMappingAndMetadataArgs<'_>,
    out: &mut EagleStepUpdateSlotMappingAndMetadataOutputs<'_>,
) -> Result<()> {
    Api::linked()?.eagle_step_update_slot_mapping_and_metadata(args, out)
}

/// What [`eagle_step_update_slot_mapping_and_metadata_host`] returns, of the element type of
/// its slices.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EagleStep<T> {
    /// `[B]`: each row's next position, 0 past the model's length.
    pub clamped_positions: Vec<T>,
    /// `[max(input_batch_size, B)]`: each row's slot, -1 past the model's length and for the
    /// padding rows.
    pub slot_mapping: Vec<i64>,
    /// `[B]`: the updated sequence lengths.
    pub seq_lens: Vec<T>,
}

/// One call for host slices of one element type (int32 or int64): the step of the B rows of
/// `positions` (`[B]`) with the table `block_table` (B rows of one length W >= 1) and
/// `seq_lens` (`[B]`, copied: the result holds the updated ones). `input_batch_size` is the
/// slot-mapping entries written (`None` = B).
///
/// ```
/// let table = [[7i64, 8, 9, 10], [1, 2, 3, 4]];
/// let s = cattn::eagle_step_update_slot_mapping_and_metadata_host(4, 16, Some(3), &[5, 15],
///                                                                 &table, &[6, 16])?;
/// assert_eq!(s.clamped_positions, [6, 0]);
/// assert_eq!(s.slot_mapping, [34, -1, -1]);
/// assert_eq!(s.seq_lens, [7, 1]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn eagle_step_update_slot_mapping_and_metadata_host<T: IndexElement, R: AsRef<[T]>>(
    block_size: i64,
    max_model_len: i64,
    input_batch_size: Option<i64>,
    positions: &[T],
    block_table: &[R],
    seq_lens: &[T],
) -> Result<EagleStep<T>> {
    Api::linked()?.eagle_step_update_slot_mapping_and_metadata_host(
        block_size,
        max_model_len,
        input_batch_size,
        positions,
        block_table,
        seq_lens,
    )
}

impl Api<'_> {
    /// [`eagle_step_update_slot_mapping_and_metadata_host`] in this library.
    pub fn eagle_step_update_slot_mapping_and_metadata_host<T: IndexElement, R: AsRef<[T]>>(
        self,
        block_size: i64,
        max_model_len: i64,
        input_batch_size: Option<i64>,
        positions: &[T],
        block_table: &[R],
        seq_lens: &[T],
    ) -> Result<EagleStep<T>> {
        const FUNCTION: &str = "eagle_step_update_slot_mapping_and_metadata_host";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let b = positions.len();
        // Room for every entry the library writes; a size it refuses (below B) gets B entries,
        // so that the message names input_batch_size rather than the output.
        let slots = input_batch_size
            .and_then(|n| usize::try_from(n).ok())
            .map_or(b, |n| n.max(b));
        let args = EagleStepUpdateSlotMappingAndMetadataArgs {
            block_size,
            max_model_len,
            input_batch_size,
            positions: TensorRef::from_slice(positions),
            block_table: TensorRef::new(&table, &[len_i64(block_table.len()), len_i64(cols)])?,
            stream: Stream::DEFAULT,
        };
        let mut seq = seq_lens.to_vec();
        let mut clamped = zeroed::<T>(FUNCTION, b)?;
        let mut slot_mapping = zeroed::<i64>(FUNCTION, slots)?;
        self.eagle_step_update_slot_mapping_and_metadata(
            &args,
            &mut EagleStepUpdateSlotMappingAndMetadataOutputs {
                seq_lens: TensorMut::from_slice(&mut seq),
                clamped_positions: TensorMut::from_slice(&mut clamped),
                slot_mapping: TensorMut::from_slice(&mut slot_mapping),
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(EagleStep {
            clamped_positions: clamped,
            slot_mapping,
            seq_lens: seq,
        })
    }

    /// [`eagle_step_update_slot_mapping_and_metadata`] in this library.
    pub fn eagle_step_update_slot_mapping_and_metadata(
        self,
        args: &EagleStepUpdateSlotMappingAndMetadataArgs<'_>,
        out: &mut EagleStepUpdateSlotMappingAndMetadataOutputs<'_>,
    ) -> Result<()> {
        let init = sys::CATTN_EAGLE_STEP_UPDATE_SLOT_MAPPING_AND_METADATA_ARGS_INIT;
        let raw = sys::cattn_eagle_step_update_slot_mapping_and_metadata_args_t {
            block_size: args.block_size,
            max_model_len: args.max_model_len,
            input_batch_size: args.input_batch_size.unwrap_or(init.input_batch_size),
            positions: args.positions.as_raw(),
            block_table: args.block_table.as_raw(),
            seq_lens: out.seq_lens.as_raw(),
            out_clamped_positions: out.clamped_positions.as_raw(),
            out_slot_mapping: out.slot_mapping.as_raw(),
            stream: args.stream.as_raw(),
            ..init
        };
        let f = entry!(self, eagle_step_update_slot_mapping_and_metadata)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check_in(
            unsafe { f(&raw) },
            "eagle_step_update_slot_mapping_and_metadata",
        )
    }
}
