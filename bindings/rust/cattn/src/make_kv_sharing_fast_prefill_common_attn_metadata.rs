// SPDX-License-Identifier: Apache-2.0
//! KV-sharing fast-prefill metadata (vLLM's
//! make_kv_sharing_fast_prefill_common_attn_metadata).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md` of the libcattn repository; the
//! items here document the Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::metadata::{raw_init, CommonAttnMetadata, MetadataScalars, NewerFields};
use crate::one_call::{batch_scalars, len_i64, zeroed};
use crate::tensor::{raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The tensors [`make_kv_sharing_fast_prefill_common_attn_metadata`] writes.
#[derive(Debug)]
pub struct FastPrefillOutputs<'a> {
    /// `[num_reqs + 1]` on the input's device: the decode batch's query_start_loc.
    pub query_start_loc: TensorMut<'a>,
    /// Optional host mirror of it (host path only).
    pub query_start_loc_cpu: Option<TensorMut<'a>>,
    /// `[2]` int32/int64 on the input's device: `{max_query_len, num_actual_tokens}` of the
    /// decode batch. Required for CUDA tensors; optional on the host.
    pub decode_max_and_total: Option<TensorMut<'a>>,
}

/// What [`make_kv_sharing_fast_prefill_common_attn_metadata`] made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FastPrefillMetadata {
    /// True when the input's `max_query_len` is 1: vLLM returns the metadata unchanged, the
    /// scalars are the input's and no tensor was written.
    pub passthrough: bool,
    /// The new metadata's scalars (on the CUDA path `max_query_len` and `num_actual_tokens`
    /// are -1: read `decode_max_and_total`).
    pub scalars: MetadataScalars,
    /// The new metadata's 1.1 tensor fields: of the input's it keeps only
    /// `seq_lens_cpu_upper_bound`, as vLLM does, and `scalars.max_logits_per_req` is not given
    /// (the passthrough keeps every field). Since 1.1.
    pub newer: NewerFields,
}

/// Builds the decode-only metadata of KV-sharing fast prefill: each request keeps only the
/// tokens whose logits are needed (the first `num_logits_indices` entries of
/// `logits_indices_padded`). Reads `metadata.query_start_loc` and `logits_indices_padded`.
///
/// Since 1.1, a given `metadata.max_logits_per_req` (`Some(v)`, `v > 0`) is the new
/// `max_query_len`, trusted as vLLM trusts it (`decode_max_and_total` still receives the
/// computed largest count); not given, the largest count is computed as in 1.0.
///
/// ```
/// use cattn::{make_kv_sharing_fast_prefill_common_attn_metadata as fast_prefill,
///             CommonAttnMetadata, FastPrefillOutputs, Stream, TensorMut, TensorRef};
/// let (qsl, logits) = ([0i32, 15, 20, 28], [14i32, 18, 19, 27]);
/// let md = CommonAttnMetadata {
///     query_start_loc: Some(TensorRef::from_slice(&qsl)),
///     logits_indices_padded: Some(TensorRef::from_slice(&logits)),
///     num_logits_indices: 4, num_reqs: 3, max_query_len: 15,
///     ..Default::default()
/// };
/// let mut decode_qsl = [0i32; 4];
/// let made = fast_prefill(&md, &mut FastPrefillOutputs {
///     query_start_loc: TensorMut::from_slice(&mut decode_qsl),
///     query_start_loc_cpu: None,
///     decode_max_and_total: None,
/// }, Stream::DEFAULT)?;
/// assert!(!made.passthrough);
/// assert_eq!(decode_qsl, [0, 1, 3, 4]);
/// assert_eq!((made.scalars.max_query_len, made.scalars.num_actual_tokens), (2, 4));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn make_kv_sharing_fast_prefill_common_attn_metadata(
    metadata: &CommonAttnMetadata<'_>,
    out: &mut FastPrefillOutputs<'_>,
    stream: Stream,
) -> Result<FastPrefillMetadata> {
    Api::linked()?.make_kv_sharing_fast_prefill_common_attn_metadata(metadata, out, stream)
}

/// The decode-only batch of KV-sharing fast prefill for a host batch, owned
/// ([`kv_sharing_fast_prefill_metadata`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FastPrefillBatch<T> {
    /// True when every query has one token: vLLM returns the metadata unchanged, and so are
    /// `query_start_loc` (a copy of the input's) and the scalars.
    pub passthrough: bool,
    /// `[B + 1]`: the decode batch's cumulative query lengths.
    pub query_start_loc: Vec<T>,
    /// The decode batch's scalars (`num_actual_tokens` = the logits indices, `max_query_len`
    /// = the most of one request).
    pub scalars: MetadataScalars,
}

/// The decode-only batch of KV-sharing fast prefill for a host `query_start_loc` (`[B + 1]`)
/// and the logits indices in use, in one call; the result has their element type. The input's
/// `max_query_len` is the longest query of `query_start_loc` (so a batch of one-token queries
/// passes through).
///
/// ```
/// let f = cattn::kv_sharing_fast_prefill_metadata(&[0i32, 15, 20, 28], &[14, 18, 19, 27])?;
/// assert!(!f.passthrough);
/// assert_eq!(f.query_start_loc, [0, 1, 3, 4]);
/// assert_eq!((f.scalars.max_query_len, f.scalars.num_actual_tokens), (2, 4));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn kv_sharing_fast_prefill_metadata<T: IndexElement>(
    query_start_loc: &[T],
    logits_indices: &[T],
) -> Result<FastPrefillBatch<T>> {
    Api::linked()?.kv_sharing_fast_prefill_metadata(query_start_loc, logits_indices)
}

impl Api<'_> {
    /// [`kv_sharing_fast_prefill_metadata`] in this library.
    pub fn kv_sharing_fast_prefill_metadata<T: IndexElement>(
        self,
        query_start_loc: &[T],
        logits_indices: &[T],
    ) -> Result<FastPrefillBatch<T>> {
        const FUNCTION: &str = "kv_sharing_fast_prefill_metadata";
        let scalars = batch_scalars(query_start_loc, None);
        let md = CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
            logits_indices_padded: Some(TensorRef::from_slice(logits_indices)),
            num_logits_indices: len_i64(logits_indices.len()),
            num_reqs: scalars.num_reqs,
            num_actual_tokens: scalars.num_actual_tokens,
            max_query_len: scalars.max_query_len,
            ..Default::default()
        };
        let mut qsl = zeroed(FUNCTION, query_start_loc.len())?;
        let made = self
            .make_kv_sharing_fast_prefill_common_attn_metadata(
                &md,
                &mut FastPrefillOutputs {
                    query_start_loc: TensorMut::from_slice(&mut qsl),
                    query_start_loc_cpu: None,
                    decode_max_and_total: None,
                },
                Stream::DEFAULT,
            )
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        if made.passthrough {
            // Nothing was written: the metadata is the input's.
            qsl.copy_from_slice(query_start_loc);
        }
        Ok(FastPrefillBatch {
            passthrough: made.passthrough,
            query_start_loc: qsl,
            scalars: made.scalars,
        })
    }

    /// [`make_kv_sharing_fast_prefill_common_attn_metadata`] in this library.
    pub fn make_kv_sharing_fast_prefill_common_attn_metadata(
        self,
        metadata: &CommonAttnMetadata<'_>,
        out: &mut FastPrefillOutputs<'_>,
        stream: Stream,
    ) -> Result<FastPrefillMetadata> {
        let input = metadata.to_raw();
        let mut out_md = raw_init();
        out_md.query_start_loc = out.query_start_loc.as_raw();
        out_md.query_start_loc_cpu = raw_out(out.query_start_loc_cpu.as_mut());
        let mut raw = sys::cattn_fast_prefill_metadata_args_t {
            struct_size: size_of::<sys::cattn_fast_prefill_metadata_args_t>(),
            metadata: &input,
            out: &mut out_md,
            decode_max_and_total: raw_out(out.decode_max_and_total.as_mut()),
            passthrough: 0,
            reserved0: 0,
            stream: stream.as_raw(),
        };
        let f = entry!(self, make_kv_sharing_fast_prefill_common_attn_metadata)?;
        // SAFETY: the input metadata, the output struct and every view they point to live
        // through the call; the output tensors are borrowed mutably.
        self.check_in(
            unsafe { f(&mut raw) },
            "make_kv_sharing_fast_prefill_common_attn_metadata",
        )?;
        Ok(FastPrefillMetadata {
            passthrough: raw.passthrough != 0,
            scalars: MetadataScalars::of(&out_md),
            newer: NewerFields::of(&out_md),
        })
    }
}
