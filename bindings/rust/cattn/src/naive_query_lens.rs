// SPDX-License-Identifier: Apache-2.0
//! Per-request lengths of the metadata (vLLM's CommonAttentionMetadata.naive_query_lens and
//! compute_num_computed_tokens).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/naive_query_lens.md` and `docs/api/compute_num_computed_tokens.md` of the libcattn
//! repository; the items here document the Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::metadata::CommonAttnMetadata;
use crate::one_call::zeroed;
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// Writes the query lengths `query_start_loc[i + 1] - query_start_loc[i]` into `out` (`[B]`,
/// int32/int64). Reads only `metadata.query_start_loc`.
///
/// ```
/// use cattn::{naive_query_lens, CommonAttnMetadata, Stream, TensorMut, TensorRef};
/// let qsl = [0i32, 3, 3, 10];
/// let md = CommonAttnMetadata { query_start_loc: Some(TensorRef::from_slice(&qsl)), ..Default::default() };
/// let mut lens = [0i64; 3];
/// naive_query_lens(&md, &mut TensorMut::from_slice(&mut lens), Stream::DEFAULT)?;
/// assert_eq!(lens, [3, 0, 7]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn naive_query_lens(
    metadata: &CommonAttnMetadata<'_>,
    out: &mut TensorMut<'_>,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.naive_query_lens(metadata, out, stream)
}

/// Writes the tokens each request computed before this step, `seq_lens[i] - query_len[i]`,
/// into `out` (`[B]`). Reads `metadata.query_start_loc` and `metadata.seq_lens`; no cache is
/// kept between calls (vLLM caches it in the metadata object).
pub fn compute_num_computed_tokens(
    metadata: &CommonAttnMetadata<'_>,
    out: &mut TensorMut<'_>,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.compute_num_computed_tokens(metadata, out, stream)
}

/// One call for a host `query_start_loc` (`[B + 1]`, int32 or int64): the query length of each
/// request, of the same element type.
///
/// ```
/// assert_eq!(cattn::query_lens(&[0i32, 3, 3, 10])?, vec![3, 0, 7]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn query_lens<T: IndexElement>(query_start_loc: &[T]) -> Result<Vec<T>> {
    Api::linked()?.query_lens(query_start_loc)
}

/// One call for host slices of one element type (int32 or int64): the computed tokens of each
/// request, `seq_lens[i]` less its query length.
///
/// ```
/// assert_eq!(cattn::num_computed_tokens(&[0, 3, 4], &[10, 1])?, vec![7, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn num_computed_tokens<T: IndexElement>(
    query_start_loc: &[T],
    seq_lens: &[T],
) -> Result<Vec<T>> {
    Api::linked()?.num_computed_tokens(query_start_loc, seq_lens)
}

impl Api<'_> {
    /// [`query_lens`] in this library.
    pub fn query_lens<T: IndexElement>(self, query_start_loc: &[T]) -> Result<Vec<T>> {
        let md = CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
            ..Default::default()
        };
        let mut out = zeroed("query_lens", query_start_loc.len().saturating_sub(1))?;
        self.naive_query_lens(&md, &mut TensorMut::from_slice(&mut out), Stream::DEFAULT)
            .map_err(|e| e.in_terms_of("query_lens"))?;
        Ok(out)
    }

    /// [`num_computed_tokens`] in this library.
    pub fn num_computed_tokens<T: IndexElement>(
        self,
        query_start_loc: &[T],
        seq_lens: &[T],
    ) -> Result<Vec<T>> {
        let md = CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
            seq_lens: Some(TensorRef::from_slice(seq_lens)),
            ..Default::default()
        };
        let mut out = zeroed("num_computed_tokens", seq_lens.len())?;
        self.compute_num_computed_tokens(
            &md,
            &mut TensorMut::from_slice(&mut out),
            Stream::DEFAULT,
        )
        .map_err(|e| e.in_terms_of("num_computed_tokens"))?;
        Ok(out)
    }

    /// [`naive_query_lens`] in this library.
    pub fn naive_query_lens(
        self,
        metadata: &CommonAttnMetadata<'_>,
        out: &mut TensorMut<'_>,
        stream: Stream,
    ) -> Result<()> {
        let md = metadata.to_raw();
        let raw = args(&md, out, stream);
        let f = entry!(self, naive_query_lens)?;
        // SAFETY: the metadata and every view it points to live through the call; `out` is
        // borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "naive_query_lens")
    }

    /// [`compute_num_computed_tokens`] in this library.
    pub fn compute_num_computed_tokens(
        self,
        metadata: &CommonAttnMetadata<'_>,
        out: &mut TensorMut<'_>,
        stream: Stream,
    ) -> Result<()> {
        let md = metadata.to_raw();
        let raw = args(&md, out, stream);
        let f = entry!(self, compute_num_computed_tokens)?;
        // SAFETY: as for naive_query_lens.
        self.check_in(unsafe { f(&raw) }, "compute_num_computed_tokens")
    }
}

fn args(
    md: &sys::cattn_common_attn_metadata_t,
    out: &mut TensorMut<'_>,
    stream: Stream,
) -> sys::cattn_naive_query_lens_args_t {
    sys::cattn_naive_query_lens_args_t {
        struct_size: size_of::<sys::cattn_naive_query_lens_args_t>(),
        metadata: md,
        out: out.as_raw(),
        stream: stream.as_raw(),
    }
}
