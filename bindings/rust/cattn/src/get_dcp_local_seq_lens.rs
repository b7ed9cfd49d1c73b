// SPDX-License-Identifier: Apache-2.0
//! DCP local sequence lengths (vLLM's get_dcp_local_seq_lens).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/get_dcp_local_seq_lens.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result};
use crate::one_call::{area, into_rows, len_i64, zeroed};
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// Which DCP ranks to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DcpRank {
    /// Every rank (vLLM's `dcp_rank=None`): the output is `[B, dcp_size]` (or `[B]` when
    /// `dcp_size` is 1).
    All,
    /// One rank in `[0, dcp_size)`: the output is `[B]`.
    Rank(i64),
}

impl DcpRank {
    /// The C `dcp_rank`: the rank, or `CATTN_DCP_ALL_RANKS` (-1). In C a rank of -1 means
    /// every rank; here that is [`DcpRank::All`], so a negative [`DcpRank::Rank`] can only be a
    /// mistake, refused in the name of `function`'s `argument`.
    pub(crate) fn to_raw(self, function: &str, argument: &str) -> Result<i64> {
        match self {
            DcpRank::All => Ok(i64::from(sys::CATTN_DCP_ALL_RANKS)),
            DcpRank::Rank(r) if r >= 0 => Ok(r),
            DcpRank::Rank(r) => Err(Error::argument(
                function,
                argument,
                "is negative",
                format_args!("DcpRank::Rank({r})"),
                "a rank in [0, dcp_size) or DcpRank::All",
            )),
        }
    }
}

/// The inputs of [`get_dcp_local_seq_lens`].
#[derive(Clone, Debug)]
pub struct DcpLocalSeqLensArgs<'a> {
    /// `[B]` int32/int64, values in `[0, i32::MAX]`.
    pub seq_lens: TensorRef<'a>,
    /// `>= 1`.
    pub dcp_size: i64,
    /// One rank, or every rank.
    pub dcp_rank: DcpRank,
    /// `>= 1`, and `dcp_size * dcp_kv_cache_interleave_size <= i32::MAX`.
    pub dcp_kv_cache_interleave_size: i64,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// Computes how many KV tokens of each request each DCP rank stores, the KV cache being dealt
/// out round-robin in runs of `dcp_kv_cache_interleave_size` tokens. `out` is int32/int64,
/// `[B]` or `[B, dcp_size]` (see [`DcpRank`]).
///
/// ```
/// use cattn::{get_dcp_local_seq_lens, DcpLocalSeqLensArgs, DcpRank, Stream, TensorMut, TensorRef};
/// let seq_lens = [16i32, 10, 17, 33];
/// let mut local = [0i32; 8];
/// let args = DcpLocalSeqLensArgs {
///     seq_lens: TensorRef::from_slice(&seq_lens),
///     dcp_size: 2,
///     dcp_rank: DcpRank::All,
///     dcp_kv_cache_interleave_size: 4,
///     stream: Stream::DEFAULT,
/// };
/// get_dcp_local_seq_lens(&args, &mut TensorMut::new(&mut local, &[4, 2])?)?;
/// assert_eq!(local, [8, 8, 6, 4, 9, 8, 17, 16]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_dcp_local_seq_lens(
    args: &DcpLocalSeqLensArgs<'_>,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.get_dcp_local_seq_lens(args, out)
}

/// [`get_dcp_local_seq_lens`] with vLLM's newest shapes (since 1.1): `seq_lens` may have any
/// shape `S` (0 to 8 dimensions for one rank, 0 to 7 for all); `out` is `S` for one rank and `S + [dcp_size]` for
/// [`DcpRank::All`], the rank axis kept even when `dcp_size` is 1.
///
/// ```
/// use cattn::{get_dcp_local_seq_lens_nd, DcpLocalSeqLensArgs, DcpRank, Stream, TensorMut, TensorRef};
/// let seq_lens = [17i64, 4, 0, 9];
/// let mut local = [0i64; 4];
/// let args = DcpLocalSeqLensArgs {
///     seq_lens: TensorRef::new(&seq_lens, &[2, 2])?,
///     dcp_size: 1,
///     dcp_rank: DcpRank::All,
///     dcp_kv_cache_interleave_size: 1,
///     stream: Stream::DEFAULT,
/// };
/// get_dcp_local_seq_lens_nd(&args, &mut TensorMut::new(&mut local, &[2, 2, 1])?)?;
/// assert_eq!(local, seq_lens);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_dcp_local_seq_lens_nd(
    args: &DcpLocalSeqLensArgs<'_>,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.get_dcp_local_seq_lens_nd(args, out)
}

/// One DCP rank's lengths of host `seq_lens` (int32 or int64, values in `[0, i32::MAX]`), in
/// one call: `dcp_size >= 1`, `dcp_rank` in `[0, dcp_size)`, the KV cache dealt out in runs of
/// `dcp_kv_cache_interleave_size` tokens. The lengths have the element type of `seq_lens`.
///
/// ```
/// // Rank 1 of 2, runs of 4 tokens.
/// assert_eq!(cattn::dcp_local_seq_lens(&[16, 10, 17, 33], 2, 1, 4)?, vec![8, 4, 8, 16]);
/// // A negative rank is refused before the library is called.
/// let err = cattn::dcp_local_seq_lens(&[16i64], 2, -1, 4).unwrap_err();
/// assert!(err.message().starts_with("cattn::dcp_local_seq_lens: dcp_rank is negative"));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn dcp_local_seq_lens<T: IndexElement>(
    seq_lens: &[T],
    dcp_size: i64,
    dcp_rank: i64,
    dcp_kv_cache_interleave_size: i64,
) -> Result<Vec<T>> {
    Api::linked()?.dcp_local_seq_lens(seq_lens, dcp_size, dcp_rank, dcp_kv_cache_interleave_size)
}

/// Every DCP rank's lengths of host `seq_lens`, in one call: row `b` holds request `b`'s
/// `dcp_size` lengths, rank 0 first (vLLM's `[B, dcp_size]` result of `dcp_rank=None`, the
/// rank axis kept when `dcp_size` is 1).
///
/// ```
/// let lens = cattn::dcp_local_seq_lens_all_ranks(&[16i32, 10, 17, 33], 2, 4)?;
/// assert_eq!(lens, vec![vec![8, 8], vec![6, 4], vec![9, 8], vec![17, 16]]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn dcp_local_seq_lens_all_ranks<T: IndexElement>(
    seq_lens: &[T],
    dcp_size: i64,
    dcp_kv_cache_interleave_size: i64,
) -> Result<Vec<Vec<T>>> {
    Api::linked()?.dcp_local_seq_lens_all_ranks(seq_lens, dcp_size, dcp_kv_cache_interleave_size)
}

impl Api<'_> {
    /// [`dcp_local_seq_lens`] in this library.
    pub fn dcp_local_seq_lens<T: IndexElement>(
        self,
        seq_lens: &[T],
        dcp_size: i64,
        dcp_rank: i64,
        dcp_kv_cache_interleave_size: i64,
    ) -> Result<Vec<T>> {
        const FUNCTION: &str = "dcp_local_seq_lens";
        let dcp_rank = DcpRank::Rank(dcp_rank);
        // Checked here so that the message names this function's argument.
        dcp_rank.to_raw(FUNCTION, "dcp_rank")?;
        let mut out = zeroed(FUNCTION, seq_lens.len())?;
        let args = DcpLocalSeqLensArgs {
            seq_lens: TensorRef::from_slice(seq_lens),
            dcp_size,
            dcp_rank,
            dcp_kv_cache_interleave_size,
            stream: Stream::DEFAULT,
        };
        self.get_dcp_local_seq_lens(&args, &mut TensorMut::from_slice(&mut out))
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(out)
    }

    /// [`dcp_local_seq_lens_all_ranks`] in this library.
    pub fn dcp_local_seq_lens_all_ranks<T: IndexElement>(
        self,
        seq_lens: &[T],
        dcp_size: i64,
        dcp_kv_cache_interleave_size: i64,
    ) -> Result<Vec<Vec<T>>> {
        const FUNCTION: &str = "dcp_local_seq_lens_all_ranks";
        // A dcp_size the library refuses gets an output without columns, so that the library
        // names the value rather than this crate failing to shape an output for it.
        let ranks = usize::try_from(dcp_size).unwrap_or(0);
        let mut out = zeroed(FUNCTION, area(FUNCTION, "dcp_size", seq_lens.len(), ranks)?)?;
        let args = DcpLocalSeqLensArgs {
            seq_lens: TensorRef::from_slice(seq_lens),
            dcp_size,
            dcp_rank: DcpRank::All,
            dcp_kv_cache_interleave_size,
            stream: Stream::DEFAULT,
        };
        let shape = [len_i64(seq_lens.len()), len_i64(ranks)];
        self.get_dcp_local_seq_lens_nd(&args, &mut TensorMut::new(&mut out, &shape)?)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(into_rows(&out, seq_lens.len(), ranks))
    }

    /// [`get_dcp_local_seq_lens`] in this library.
    pub fn get_dcp_local_seq_lens(
        self,
        args: &DcpLocalSeqLensArgs<'_>,
        out: &mut TensorMut<'_>,
    ) -> Result<()> {
        self.dcp_local_seq_lens_raw(args, out, sys::CATTN_DCP_SHAPE_SQUEEZE)
    }

    /// [`get_dcp_local_seq_lens_nd`] in this library.
    pub fn get_dcp_local_seq_lens_nd(
        self,
        args: &DcpLocalSeqLensArgs<'_>,
        out: &mut TensorMut<'_>,
    ) -> Result<()> {
        self.dcp_local_seq_lens_raw(args, out, sys::CATTN_DCP_SHAPE_PRESERVE)
    }

    fn dcp_local_seq_lens_raw(
        self,
        args: &DcpLocalSeqLensArgs<'_>,
        out: &mut TensorMut<'_>,
        shape_mode: sys::cattn_dcp_shape_mode_t,
    ) -> Result<()> {
        let function = if shape_mode == sys::CATTN_DCP_SHAPE_PRESERVE {
            "get_dcp_local_seq_lens_nd"
        } else {
            "get_dcp_local_seq_lens"
        };
        let dcp_rank = args.dcp_rank.to_raw(function, "args.dcp_rank")?;
        let raw = sys::cattn_dcp_local_seq_lens_args_t {
            struct_size: size_of::<sys::cattn_dcp_local_seq_lens_args_t>(),
            seq_lens: args.seq_lens.as_raw(),
            dcp_size: args.dcp_size,
            dcp_rank,
            dcp_kv_cache_interleave_size: args.dcp_kv_cache_interleave_size,
            out: out.as_raw(),
            stream: args.stream.as_raw(),
            shape_mode: i64::from(shape_mode),
        };
        let f = entry!(self, get_dcp_local_seq_lens)?;
        // SAFETY: every pointer in `raw` refers to a live view for the duration of the call;
        // `out` is borrowed mutably, so nothing else observes its memory meanwhile.
        self.check_in(unsafe { f(&raw) }, function)
    }
}
