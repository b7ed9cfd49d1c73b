//! Per-request lengths of the metadata (vLLM's CommonAttentionMetadata.naive_query_lens and
//! compute_num_computed_tokens).

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::metadata::CommonAttnMetadata;
use crate::tensor::{Stream, TensorMut, TensorRef};

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

/// One call for host slices: the computed tokens of each request.
///
/// ```
/// assert_eq!(cattn::num_computed_tokens(&[0, 3, 4], &[10, 1])?, vec![7, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn num_computed_tokens(query_start_loc: &[i64], seq_lens: &[i64]) -> Result<Vec<i64>> {
    let md = CommonAttnMetadata {
        query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
        seq_lens: Some(TensorRef::from_slice(seq_lens)),
        ..Default::default()
    };
    let mut out = vec![0i64; seq_lens.len()];
    compute_num_computed_tokens(&md, &mut TensorMut::from_slice(&mut out), Stream::DEFAULT)?;
    Ok(out)
}

impl Api<'_> {
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
        self.check(unsafe { f(&raw) })
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
        self.check(unsafe { f(&raw) })
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
