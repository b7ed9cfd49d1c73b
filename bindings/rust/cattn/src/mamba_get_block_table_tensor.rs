// SPDX-License-Identifier: Apache-2.0
//! The Mamba block table (vLLM's mamba_get_block_table_tensor).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/mamba_get_block_table_tensor.md` of the libcattn repository; the items here document
//! the Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{area, flatten_rows, into_rows, len_i64, zeroed};
use crate::tensor::{raw_in, IndexElement, Stream, TensorMut, TensorRef};

/// vLLM's mamba_cache_mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MambaCacheMode {
    /// "none": the block table as it is.
    #[default]
    None,
    /// "all": the block table as it is.
    All,
    /// "align": the columns of each request's last block and its speculative blocks.
    Align,
}

impl MambaCacheMode {
    pub(crate) fn to_raw(self) -> i32 {
        let raw = match self {
            MambaCacheMode::None => sys::CATTN_MAMBA_CACHE_MODE_NONE,
            MambaCacheMode::All => sys::CATTN_MAMBA_CACHE_MODE_ALL,
            MambaCacheMode::Align => sys::CATTN_MAMBA_CACHE_MODE_ALIGN,
        };
        // The C field is int32_t; the enum's values are 0-2.
        raw as i32
    }
}

/// The inputs of [`mamba_get_block_table_tensor`].
#[derive(Clone, Debug)]
pub struct MambaBlockTableArgs<'a> {
    /// `[B, M]` int32/int64.
    pub block_table: TensorRef<'a>,
    /// `[B]` int32/int64; needed by [`MambaCacheMode::Align`] only.
    pub seq_lens: Option<TensorRef<'a>>,
    /// `>= 1` (align only).
    pub block_size: i64,
    /// `>= 0` (align only).
    pub num_speculative_blocks: i64,
    /// vLLM's mamba_cache_mode.
    pub mode: MambaCacheMode,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Selects the block-table columns Mamba kernels use. Align: `out[b, j] =
/// block_table[b, max((seq_lens[b] - 1) // block_size, 0) + j]` for `j <= nspec`, `out`
/// `[B, 1 + nspec]`; the other modes copy the table (`out` `[B, M]`). A column past a row is an
/// error on the host.
///
/// ```
/// use cattn::{mamba_get_block_table_tensor, MambaBlockTableArgs, MambaCacheMode, Stream,
///             TensorMut, TensorRef};
/// let table: Vec<i64> = (0..12).collect();
/// let seq = [16i32, 17, 1];
/// let mut out = [0i64; 9];
/// mamba_get_block_table_tensor(&MambaBlockTableArgs {
///     block_table: TensorRef::new(&table, &[3, 4])?,
///     seq_lens: Some(TensorRef::from_slice(&seq)),
///     block_size: 16,
///     num_speculative_blocks: 2,
///     mode: MambaCacheMode::Align,
///     stream: Stream::DEFAULT,
/// }, &mut TensorMut::new(&mut out, &[3, 3])?)?;
/// assert_eq!(out, [0, 1, 2, 5, 6, 7, 8, 9, 10]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn mamba_get_block_table_tensor(
    args: &MambaBlockTableArgs<'_>,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.mamba_get_block_table_tensor(args, out)
}

/// The block-table columns Mamba kernels use, for a host block table of B rows of one length
/// (int32 or int64, the result's element type), in one call. [`MambaCacheMode::Align`] reads
/// `seq_lens` (`[B]`) and gives rows of `1 + num_speculative_blocks` entries; the other modes
/// copy the table (vLLM returns the tensor itself) and read neither `seq_lens` nor the two
/// sizes.
///
/// ```
/// use cattn::{mamba_block_table, MambaCacheMode};
/// let table: Vec<[i64; 4]> = vec![[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]];
/// let cols = mamba_block_table(&table, Some(&[16, 17, 1]), 16, 2, MambaCacheMode::Align)?;
/// assert_eq!(cols, vec![vec![0, 1, 2], vec![5, 6, 7], vec![8, 9, 10]]);
/// assert_eq!(mamba_block_table(&table, None, 0, 0, MambaCacheMode::All)?[1], [4, 5, 6, 7]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn mamba_block_table<T: IndexElement, R: AsRef<[T]>>(
    block_table: &[R],
    seq_lens: Option<&[T]>,
    block_size: i64,
    num_speculative_blocks: i64,
    mode: MambaCacheMode,
) -> Result<Vec<Vec<T>>> {
    Api::linked()?.mamba_block_table(
        block_table,
        seq_lens,
        block_size,
        num_speculative_blocks,
        mode,
    )
}

impl Api<'_> {
    /// [`mamba_block_table`] in this library.
    pub fn mamba_block_table<T: IndexElement, R: AsRef<[T]>>(
        self,
        block_table: &[R],
        seq_lens: Option<&[T]>,
        block_size: i64,
        num_speculative_blocks: i64,
        mode: MambaCacheMode,
    ) -> Result<Vec<Vec<T>>> {
        const FUNCTION: &str = "mamba_block_table";
        let (table, cols) = flatten_rows(FUNCTION, "block_table", block_table)?;
        let rows = block_table.len();
        let out_cols = match mode {
            // A negative count gets an output without columns, which the library refuses in
            // the name of the count.
            MambaCacheMode::Align => {
                usize::try_from(num_speculative_blocks).map_or(0, |n| n.saturating_add(1))
            }
            MambaCacheMode::None | MambaCacheMode::All => cols,
        };
        let mut out = zeroed(
            FUNCTION,
            area(FUNCTION, "num_speculative_blocks", rows, out_cols)?,
        )?;
        let args = MambaBlockTableArgs {
            block_table: TensorRef::new(&table, &[len_i64(rows), len_i64(cols)])?,
            // Given only where it is read: the copy modes would check a given one.
            seq_lens: seq_lens
                .filter(|_| mode == MambaCacheMode::Align)
                .map(TensorRef::from_slice),
            block_size,
            num_speculative_blocks,
            mode,
            stream: Stream::DEFAULT,
        };
        let shape = [len_i64(rows), len_i64(out_cols)];
        self.mamba_get_block_table_tensor(&args, &mut TensorMut::new(&mut out, &shape)?)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(into_rows(&out, rows, out_cols))
    }

    /// [`mamba_get_block_table_tensor`] in this library.
    pub fn mamba_get_block_table_tensor(
        self,
        args: &MambaBlockTableArgs<'_>,
        out: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_mamba_block_table_args_t {
            struct_size: size_of::<sys::cattn_mamba_block_table_args_t>(),
            block_table: args.block_table.as_raw(),
            seq_lens: raw_in(args.seq_lens.as_ref()),
            block_size: args.block_size,
            num_speculative_blocks: args.num_speculative_blocks,
            mamba_cache_mode: args.mode.to_raw(),
            reserved0: 0,
            out: out.as_raw(),
            stream: args.stream.as_raw(),
        };
        let f = entry!(self, mamba_get_block_table_tensor)?;
        // SAFETY: the views live through the call; `out` is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "mamba_get_block_table_tensor")
    }
}
