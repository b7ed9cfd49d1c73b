// SPDX-License-Identifier: Apache-2.0
//! Extend every query by n tokens (vLLM's extend_all_queries_by_1, for any n).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/extend_all_queries_by_n.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result, Status};
use crate::metadata::{raw_init, CommonAttnMetadata, MetadataScalars};
use crate::one_call::{batch_scalars, zeroed};
use crate::tensor::{raw_in, raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The tensors [`extend_all_queries_by_n`] writes, each of its input's shape. A mirror is
/// given exactly when the input metadata has it.
#[derive(Debug)]
pub struct ExtendOutputs<'a> {
    /// `[B + 1]`, the batch's device.
    pub query_start_loc: TensorMut<'a>,
    /// `[B + 1]` host; `Some` exactly when the input has `query_start_loc_cpu`.
    pub query_start_loc_cpu: Option<TensorMut<'a>>,
    /// `[B]`, the batch's device.
    pub seq_lens: TensorMut<'a>,
    /// `[B]` host; `Some` exactly when the input has `seq_lens_cpu`.
    pub seq_lens_cpu: Option<TensorMut<'a>>,
}

/// The 1.1 outputs of [`extend_all_queries_by_n_with`], all optional (the default has none):
/// each is `[B]` except `positions`, and may be the very view of its input (in place).
#[derive(Debug, Default)]
pub struct ExtendNewerOutputs<'a> {
    /// `[B]` host: receives the input's `seq_lens_cpu_upper_bound` + n (as vLLM); `Some`
    /// exactly when the input has one.
    pub seq_lens_cpu_upper_bound: Option<TensorMut<'a>>,
    /// `[B]`, the batch's device: this DCP rank's lengths of the extended sequences (vLLM
    /// leaves them stale); `Some` exactly when the input has `dcp_local_seq_lens`.
    pub dcp_local_seq_lens: Option<TensorMut<'a>>,
    /// `[B]` host: their mirror (vLLM drops it); `Some` exactly when the input has
    /// `dcp_local_seq_lens_cpu`.
    pub dcp_local_seq_lens_cpu: Option<TensorMut<'a>>,
    /// Optional 1-D on the batch's device: the extended batch's token positions (0 past the
    /// last request's tokens). `None` drops the positions (vLLM keeps a stale tensor).
    pub positions: Option<TensorMut<'a>>,
}

/// The DCP group the metadata's `dcp_local_seq_lens` belong to (as for
/// [`get_dcp_local_seq_lens`](fn@crate::get_dcp_local_seq_lens) with one rank): needed by
/// [`extend_all_queries_by_n_with`] exactly when the input has DCP lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DcpGroup {
    /// `>= 1`.
    pub size: i64,
    /// In `[0, size)`.
    pub rank: i64,
    /// `>= 1`.
    pub kv_cache_interleave_size: i64,
}

/// Extends every request's query and sequence by `n` tokens: `query_start_loc[i] += i * n`,
/// `seq_lens += n`, `num_actual_tokens += n * B`, `max_query_len += n`, `max_seq_len += n`
/// (the mirrors too, unlike vLLM which leaves `seq_lens_cpu` behind). Reads
/// `metadata.query_start_loc`, `seq_lens` and their mirrors; `new_slot_mapping` (1-D, the
/// batch's device) is checked, not read, and becomes the new metadata's slot mapping (checked
/// on return). Returns the new metadata's scalars.
///
/// The 1.1 fields: the new metadata keeps the input's `is_prefilling`, `causal_per_req`,
/// encoder lengths and `max_logits_per_req` as they are (the last is in the returned scalars)
/// and has
/// no positions; a metadata with `seq_lens_cpu_upper_bound` or DCP lengths needs
/// [`extend_all_queries_by_n_with`], which has their outputs (this call fails with
/// [`Status::InvalidArgument`]).
///
/// ```
/// use cattn::{extend_all_queries_by_n, CommonAttnMetadata, ExtendOutputs, Stream, TensorMut,
///             TensorRef};
/// let (qsl, seq) = ([0i32, 15, 20, 28], [41i32, 31, 40]);
/// let md = CommonAttnMetadata {
///     query_start_loc: Some(TensorRef::from_slice(&qsl)),
///     seq_lens: Some(TensorRef::from_slice(&seq)),
///     num_reqs: 3, num_actual_tokens: 28, max_query_len: 15, max_seq_len: 41,
///     ..Default::default()
/// };
/// let (mut new_qsl, mut new_seq) = ([0i32; 4], [0i32; 3]);
/// let scalars = extend_all_queries_by_n(&md, 1, None, &mut ExtendOutputs {
///     query_start_loc: TensorMut::from_slice(&mut new_qsl),
///     query_start_loc_cpu: None,
///     seq_lens: TensorMut::from_slice(&mut new_seq),
///     seq_lens_cpu: None,
/// }, Stream::DEFAULT)?;
/// assert_eq!((new_qsl, new_seq), ([0, 16, 22, 31], [42, 32, 41]));
/// assert_eq!((scalars.num_actual_tokens, scalars.max_query_len), (31, 16));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn extend_all_queries_by_n(
    metadata: &CommonAttnMetadata<'_>,
    n: i64,
    new_slot_mapping: Option<&TensorRef<'_>>,
    out: &mut ExtendOutputs<'_>,
    stream: Stream,
) -> Result<MetadataScalars> {
    Api::linked()?.extend_all_queries_by_n(metadata, n, new_slot_mapping, out, stream)
}

/// [`extend_all_queries_by_n`] with the 1.1 fields: `newer` receives the extended
/// `seq_lens_cpu_upper_bound`, the DCP lengths recomputed from the extended `seq_lens` with
/// `dcp` (required when the input has `dcp_local_seq_lens` or `dcp_local_seq_lens_cpu`; the
/// input DCP tensors are not read) and, when given, the extended batch's positions.
///
/// Errors, besides [`extend_all_queries_by_n`]'s: [`Status::InvalidArgument`] for an output in
/// `newer` given without its input or the reverse, `dcp` missing or out of range, shapes,
/// dtypes and overlaps; [`Status::InsufficientSize`] for a short output. Since 1.1.
///
/// ```
/// use cattn::{extend_all_queries_by_n_with, CommonAttnMetadata, DcpGroup, ExtendNewerOutputs,
///             ExtendOutputs, Stream, TensorMut, TensorRef};
/// let (qsl, seq, upper, dcp) = ([0i32, 2, 5], [4i32, 6], [4i32, 8], [0i32; 2]);
/// let md = CommonAttnMetadata {
///     query_start_loc: Some(TensorRef::from_slice(&qsl)),
///     seq_lens: Some(TensorRef::from_slice(&seq)),
///     seq_lens_cpu_upper_bound: Some(TensorRef::from_slice(&upper)),
///     dcp_local_seq_lens: Some(TensorRef::from_slice(&dcp)),
///     num_reqs: 2, num_actual_tokens: 5, max_query_len: 3, max_seq_len: 6,
///     ..Default::default()
/// };
/// let (mut new_qsl, mut new_seq) = ([0i32; 3], [0i32; 2]);
/// let (mut new_upper, mut new_dcp, mut pos) = ([0i32; 2], [0i32; 2], [0i32; 7]);
/// extend_all_queries_by_n_with(&md, 1, None, &mut ExtendOutputs {
///     query_start_loc: TensorMut::from_slice(&mut new_qsl),
///     query_start_loc_cpu: None,
///     seq_lens: TensorMut::from_slice(&mut new_seq),
///     seq_lens_cpu: None,
/// }, &mut ExtendNewerOutputs {
///     seq_lens_cpu_upper_bound: Some(TensorMut::from_slice(&mut new_upper)),
///     dcp_local_seq_lens: Some(TensorMut::from_slice(&mut new_dcp)),
///     positions: Some(TensorMut::from_slice(&mut pos)),
///     ..Default::default()
/// }, Some(DcpGroup { size: 2, rank: 0, kv_cache_interleave_size: 1 }), Stream::DEFAULT)?;
/// assert_eq!((new_seq, new_upper, new_dcp), ([5, 7], [5, 9], [3, 4]));
/// assert_eq!(pos, [2, 3, 4, 3, 4, 5, 6]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn extend_all_queries_by_n_with(
    metadata: &CommonAttnMetadata<'_>,
    n: i64,
    new_slot_mapping: Option<&TensorRef<'_>>,
    out: &mut ExtendOutputs<'_>,
    newer: &mut ExtendNewerOutputs<'_>,
    dcp: Option<DcpGroup>,
    stream: Stream,
) -> Result<MetadataScalars> {
    Api::linked()?.extend_all_queries_by_n_with(
        metadata,
        n,
        new_slot_mapping,
        out,
        newer,
        dcp,
        stream,
    )
}

/// [`extend_all_queries_by_n`] in place, as vLLM does it: `tensors` are both the batch's
/// tensors and the outputs, and `scalars` its scalar fields. Returns the extended scalars
/// (`num_logits_indices`, `causal` and `max_logits_per_req` copied).
///
/// ```
/// use cattn::{extend_all_queries_by_n_in_place, ExtendOutputs, MetadataScalars, Stream,
///             TensorMut};
/// let (mut qsl, mut seq) = ([0i64, 3, 4], [5i64, 1]);
/// let before = MetadataScalars { num_reqs: 2, num_actual_tokens: 4, max_query_len: 3,
///                                max_seq_len: 5, ..Default::default() };
/// let after = extend_all_queries_by_n_in_place(&mut ExtendOutputs {
///     query_start_loc: TensorMut::from_slice(&mut qsl),
///     query_start_loc_cpu: None,
///     seq_lens: TensorMut::from_slice(&mut seq),
///     seq_lens_cpu: None,
/// }, &before, 2, None, Stream::DEFAULT)?;
/// assert_eq!((qsl, seq), ([0, 5, 8], [7, 3]));
/// assert_eq!((after.num_actual_tokens, after.max_seq_len), (8, 7));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn extend_all_queries_by_n_in_place(
    tensors: &mut ExtendOutputs<'_>,
    scalars: &MetadataScalars,
    n: i64,
    new_slot_mapping: Option<&TensorRef<'_>>,
    stream: Stream,
) -> Result<MetadataScalars> {
    Api::linked()?.extend_all_queries_by_n_in_place(tensors, scalars, n, new_slot_mapping, stream)
}

/// [`extend_all_queries_by_n_in_place`] with the 1.1 fields: `newer`'s
/// `seq_lens_cpu_upper_bound`, `dcp_local_seq_lens` and `dcp_local_seq_lens_cpu` are both the
/// batch's tensors and their outputs (as in [`extend_all_queries_by_n_with`], `dcp` is needed
/// with DCP lengths), and `positions`, when given, receives the extended batch's positions
/// (the old ones are not read). Since 1.1.
pub fn extend_all_queries_by_n_in_place_with(
    tensors: &mut ExtendOutputs<'_>,
    newer: &mut ExtendNewerOutputs<'_>,
    scalars: &MetadataScalars,
    n: i64,
    new_slot_mapping: Option<&TensorRef<'_>>,
    dcp: Option<DcpGroup>,
    stream: Stream,
) -> Result<MetadataScalars> {
    Api::linked()?.extend_all_queries_by_n_in_place_with(
        tensors,
        newer,
        scalars,
        n,
        new_slot_mapping,
        dcp,
        stream,
    )
}

/// A host batch extended by n tokens per request, owned ([`queries_extended_by_n`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExtendedQueries<T> {
    /// `[B + 1]`: `query_start_loc[i] + i * n`.
    pub query_start_loc: Vec<T>,
    /// `[B]`: `seq_lens + n`.
    pub seq_lens: Vec<T>,
    /// The extended batch's scalars.
    pub scalars: MetadataScalars,
}

/// Extends every request of a host batch by `n >= 0` tokens, in one call: `query_start_loc`
/// (`[B + 1]`) and `seq_lens` (`[B]`) of one element type, which the results have too, into new
/// `Vec`s. The input scalars are those of the slices (`num_reqs` = B, `num_actual_tokens` =
/// `query_start_loc[B]`, the longest query and sequence); the returned ones are extended.
///
/// ```
/// let e = cattn::queries_extended_by_n(&[0i32, 15, 20, 28], &[41, 31, 40], 1)?;
/// assert_eq!((e.query_start_loc, e.seq_lens), (vec![0, 16, 22, 31], vec![42, 32, 41]));
/// assert_eq!((e.scalars.num_actual_tokens, e.scalars.max_query_len), (31, 16));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn queries_extended_by_n<T: IndexElement>(
    query_start_loc: &[T],
    seq_lens: &[T],
    n: i64,
) -> Result<ExtendedQueries<T>> {
    Api::linked()?.queries_extended_by_n(query_start_loc, seq_lens, n)
}

impl ExtendOutputs<'_> {
    /// A raw metadata struct whose tensors are these and `newer`'s (the others unset).
    fn raw_tensors(
        &mut self,
        newer: &mut ExtendNewerOutputs<'_>,
    ) -> sys::cattn_common_attn_metadata_t {
        let mut md = raw_init();
        md.query_start_loc = self.query_start_loc.as_raw();
        md.query_start_loc_cpu = raw_out(self.query_start_loc_cpu.as_mut());
        md.seq_lens = self.seq_lens.as_raw();
        md.seq_lens_cpu = raw_out(self.seq_lens_cpu.as_mut());
        md.seq_lens_cpu_upper_bound = raw_out(newer.seq_lens_cpu_upper_bound.as_mut());
        md.dcp_local_seq_lens = raw_out(newer.dcp_local_seq_lens.as_mut());
        md.dcp_local_seq_lens_cpu = raw_out(newer.dcp_local_seq_lens_cpu.as_mut());
        md.positions = raw_out(newer.positions.as_mut());
        md
    }
}

impl Api<'_> {
    /// [`queries_extended_by_n`] in this library.
    pub fn queries_extended_by_n<T: IndexElement>(
        self,
        query_start_loc: &[T],
        seq_lens: &[T],
        n: i64,
    ) -> Result<ExtendedQueries<T>> {
        const FUNCTION: &str = "queries_extended_by_n";
        let scalars = batch_scalars(query_start_loc, Some(seq_lens));
        let md = CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
            seq_lens: Some(TensorRef::from_slice(seq_lens)),
            num_reqs: scalars.num_reqs,
            num_actual_tokens: scalars.num_actual_tokens,
            max_query_len: scalars.max_query_len,
            max_seq_len: scalars.max_seq_len,
            ..Default::default()
        };
        let mut qsl = zeroed(FUNCTION, query_start_loc.len())?;
        let mut seq = zeroed(FUNCTION, seq_lens.len())?;
        let scalars = self
            .extend_all_queries_by_n(
                &md,
                n,
                None,
                &mut ExtendOutputs {
                    query_start_loc: TensorMut::from_slice(&mut qsl),
                    query_start_loc_cpu: None,
                    seq_lens: TensorMut::from_slice(&mut seq),
                    seq_lens_cpu: None,
                },
                Stream::DEFAULT,
            )
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(ExtendedQueries {
            query_start_loc: qsl,
            seq_lens: seq,
            scalars,
        })
    }

    /// [`extend_all_queries_by_n`] in this library.
    pub fn extend_all_queries_by_n(
        self,
        metadata: &CommonAttnMetadata<'_>,
        n: i64,
        new_slot_mapping: Option<&TensorRef<'_>>,
        out: &mut ExtendOutputs<'_>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        let mut newer = ExtendNewerOutputs::default();
        self.extend_all_queries_by_n_with(
            metadata,
            n,
            new_slot_mapping,
            out,
            &mut newer,
            None,
            stream,
        )
        .map_err(|e| e.in_terms_of("extend_all_queries_by_n"))
    }

    /// [`extend_all_queries_by_n_with`] in this library.
    #[allow(clippy::too_many_arguments)]
    pub fn extend_all_queries_by_n_with(
        self,
        metadata: &CommonAttnMetadata<'_>,
        n: i64,
        new_slot_mapping: Option<&TensorRef<'_>>,
        out: &mut ExtendOutputs<'_>,
        newer: &mut ExtendNewerOutputs<'_>,
        dcp: Option<DcpGroup>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        let input = metadata.to_raw();
        let mut out_md = out.raw_tensors(newer);
        self.extend_raw(&input, &mut out_md, n, new_slot_mapping, dcp, stream)
            .map_err(|e| e.in_terms_of("extend_all_queries_by_n_with"))
    }

    /// [`extend_all_queries_by_n_in_place`] in this library.
    pub fn extend_all_queries_by_n_in_place(
        self,
        tensors: &mut ExtendOutputs<'_>,
        scalars: &MetadataScalars,
        n: i64,
        new_slot_mapping: Option<&TensorRef<'_>>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        let mut newer = ExtendNewerOutputs::default();
        self.extend_all_queries_by_n_in_place_with(
            tensors,
            &mut newer,
            scalars,
            n,
            new_slot_mapping,
            None,
            stream,
        )
        .map_err(|e| e.in_terms_of("extend_all_queries_by_n_in_place"))
    }

    /// [`extend_all_queries_by_n_in_place_with`] in this library.
    #[allow(clippy::too_many_arguments)]
    pub fn extend_all_queries_by_n_in_place_with(
        self,
        tensors: &mut ExtendOutputs<'_>,
        newer: &mut ExtendNewerOutputs<'_>,
        scalars: &MetadataScalars,
        n: i64,
        new_slot_mapping: Option<&TensorRef<'_>>,
        dcp: Option<DcpGroup>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        // The same tensors on both sides, which the library supports ("in place"); the old
        // positions are not read, so the input has none.
        let mut out_md = tensors.raw_tensors(newer);
        let mut input = out_md;
        input.positions = std::ptr::null_mut();
        scalars.store(&mut input);
        self.extend_raw(&input, &mut out_md, n, new_slot_mapping, dcp, stream)
            .map_err(|e| e.in_terms_of("extend_all_queries_by_n_in_place_with"))
    }

    fn extend_raw(
        self,
        input: &sys::cattn_common_attn_metadata_t,
        out_md: &mut sys::cattn_common_attn_metadata_t,
        n: i64,
        new_slot_mapping: Option<&TensorRef<'_>>,
        dcp: Option<DcpGroup>,
        stream: Stream,
    ) -> Result<MetadataScalars> {
        // The library only stores this pointer into out->slot_mapping; it never writes
        // through it.
        let slot_mapping = raw_in(new_slot_mapping).cast_mut();
        let raw = sys::cattn_extend_all_queries_by_n_args_t {
            struct_size: size_of::<sys::cattn_extend_all_queries_by_n_args_t>(),
            metadata: input,
            n,
            new_slot_mapping: slot_mapping,
            out: out_md,
            stream: stream.as_raw(),
            // dcp_size 0: not given.
            dcp_size: dcp.map_or(0, |g| g.size),
            dcp_rank: dcp.map_or(0, |g| g.rank),
            dcp_kv_cache_interleave_size: dcp.map_or(1, |g| g.kv_cache_interleave_size),
        };
        let f = entry!(self, extend_all_queries_by_n)?;
        // SAFETY: the input metadata, the output struct and every view they point to live
        // through the call; the output tensors are borrowed mutably by the caller.
        // Each caller words the library's message in its own terms (in_terms_of).
        self.check_in(unsafe { f(&raw) }, "")?;
        // The result's slot mapping is the caller's new_slot_mapping, which this API does not
        // hand back; check the contract instead, so that callers can rely on it.
        if out_md.slot_mapping != slot_mapping {
            return Err(Error::new(
                Status::Internal,
                "cattn: cattn_extend_all_queries_by_n did not set slot_mapping to \
                 new_slot_mapping",
            ));
        }
        Ok(MetadataScalars::of(out_md))
    }
}
