//! The Mamba block table (vLLM's mamba_get_block_table_tensor).

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{raw_in, Stream, TensorMut, TensorRef};

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

impl Api<'_> {
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
        self.check(unsafe { f(&raw) })
    }
}
