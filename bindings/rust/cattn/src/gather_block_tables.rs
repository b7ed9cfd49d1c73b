// SPDX-License-Identifier: Apache-2.0
//! The batch's block table gathered from the persistent one (model runner v2's
//! gather_block_tables; since 1.2).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/step_inputs.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{area, flatten_rows, into_rows, len_i64, zeroed};
use crate::tensor::{raw_in, IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`gather_block_tables`] (`cattn_gather_block_tables_args_t`): int32/int64
/// tensors, all on the host or all on one GPU. B is `idx_mapping`'s length.
#[derive(Clone, Debug)]
pub struct GatherBlockTablesArgs<'a> {
    /// `[B]`: the persistent row of each batch row (padded rows are not read).
    pub idx_mapping: TensorRef<'a>,
    /// Optional `[1]`: the live rows in `[0, B]` (host: refused outside; device: clamped); `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// `[R, W]`: the persistent table (kernel-block ids).
    pub block_table: TensorRef<'a>,
    /// Optional `[R]`: the entries in use of each persistent row in `[0, W]` (host: refused outside; device: clamped); `None`
    /// = W.
    pub num_blocks: Option<TensorRef<'a>>,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Copies each live row's persistent block-table row into the batch's table `out` (`[B, W]`,
/// int32/int64; `cattn_gather_block_tables`, since 1.2): `out[b, 0:n] =
/// block_table[idx_mapping[b], 0:n]`, n the row's `num_blocks`. Entries of a live row past n
/// are left as they are (as vLLM does); padded rows are 0 across the full width. Host tensors
/// run synchronously; CUDA tensors enqueue one kernel on `args.stream`.
///
/// Errors: as [`crate::prepare_pos_seq_lens()`]; the message names the field
/// (`args.idx_mapping`, `out`).
///
/// ```
/// use cattn::{gather_block_tables, GatherBlockTablesArgs, Stream, TensorMut, TensorRef};
/// let table = [10i32, 11, 12, 20, 21, 22, 30, 31, 32]; // 3 persistent rows of 3 blocks
/// let (idx, used, live) = ([2i32, 0, 1], [3i32, 1, 2], [2i64]);
/// let mut out = [-1i32; 9];
/// gather_block_tables(
///     &GatherBlockTablesArgs {
///         idx_mapping: TensorRef::from_slice(&idx),
///         num_reqs: Some(TensorRef::from_slice(&live)),
///         block_table: TensorRef::new(&table, &[3, 3])?,
///         num_blocks: Some(TensorRef::from_slice(&used)),
///         stream: Stream::DEFAULT,
///     },
///     &mut TensorMut::new(&mut out, &[3, 3])?,
/// )?;
/// // Row 0 reads persistent row 2 (2 blocks in use), row 1 row 0 (3 blocks), row 2 is padding.
/// assert_eq!(out, [30, 31, -1, 10, 11, 12, 0, 0, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn gather_block_tables(
    args: &GatherBlockTablesArgs<'_>,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.gather_block_tables(args, out)
}

/// One call for a host persistent table of R rows of one length W (int32 or int64, the
/// result's element type): the batch's table, B rows of W entries for the B entries of
/// `idx_mapping`. `num_blocks` (`[R]`, `None` = every entry) bounds each row's entries in use;
/// the entries past them, and the padded rows past `num_reqs` (`None` = B), are 0 here (the
/// helper's output starts zeroed).
///
/// ```
/// let table = vec![[10i64, 11, 12], [20, 21, 22], [30, 31, 32]];
/// let rows = cattn::gather_block_tables_host(&[2, 0, 1], Some(2), &table, Some(&[3, 1, 2]))?;
/// assert_eq!(rows, [[30, 31, 0], [10, 11, 12], [0, 0, 0]]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn gather_block_tables_host<T: IndexElement, R: AsRef<[T]>>(
    idx_mapping: &[T],
    num_reqs: Option<i64>,
    block_table: &[R],
    num_blocks: Option<&[T]>,
) -> Result<Vec<Vec<T>>> {
    Api::linked()?.gather_block_tables_host(idx_mapping, num_reqs, block_table, num_blocks)
}

impl Api<'_> {
    /// [`gather_block_tables_host`] in this library.
    pub fn gather_block_tables_host<T: IndexElement, R: AsRef<[T]>>(
        self,
        idx_mapping: &[T],
        num_reqs: Option<i64>,
        block_table: &[R],
        num_blocks: Option<&[T]>,
    ) -> Result<Vec<Vec<T>>> {
        const FUNCTION: &str = "gather_block_tables_host";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let (rows, b) = (block_table.len(), idx_mapping.len());
        let mut out = zeroed::<T>(FUNCTION, area(FUNCTION, "idx_mapping", b, cols)?)?;
        let live = num_reqs.map(|n| [n]);
        let args = GatherBlockTablesArgs {
            idx_mapping: TensorRef::from_slice(idx_mapping),
            num_reqs: live.as_ref().map(|n| TensorRef::from_slice(n)),
            block_table: TensorRef::new(&table, &[len_i64(rows), len_i64(cols)])?,
            num_blocks: num_blocks.map(TensorRef::from_slice),
            stream: Stream::DEFAULT,
        };
        let shape = [len_i64(b), len_i64(cols)];
        self.gather_block_tables(&args, &mut TensorMut::new(&mut out, &shape)?)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(into_rows(&out, b, cols))
    }

    /// [`gather_block_tables`] in this library.
    pub fn gather_block_tables(
        self,
        args: &GatherBlockTablesArgs<'_>,
        out: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_gather_block_tables_args_t {
            idx_mapping: args.idx_mapping.as_raw(),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            block_table: args.block_table.as_raw(),
            num_blocks: raw_in(args.num_blocks.as_ref()),
            out: out.as_raw(),
            stream: args.stream.as_raw(),
            ..sys::CATTN_GATHER_BLOCK_TABLES_ARGS_INIT
        };
        let f = entry!(self, gather_block_tables)?;
        // SAFETY: the views live through the call; `out` is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "gather_block_tables")
    }
}
