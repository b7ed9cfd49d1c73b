// SPDX-License-Identifier: Apache-2.0
//! The request of every token (vLLM's CommonAttentionMetadata.token_to_req_indices).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/token_to_req_indices.md` of the libcattn repository; the items here document the Rust
//! side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::metadata::CommonAttnMetadata;
use crate::one_call::zeroed;
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// Writes the request index of every token into `buffer` (`[>= max(M, T)]`, int32/int64):
/// `buffer[0:M]` repeats request r `q[r]` times, `buffer[M:T]` is 0 (padding tokens map to
/// request 0), with M the mapped tokens and T `metadata.num_actual_tokens`. Reads
/// `query_start_loc`, `query_start_loc_cpu` (the host mirror M is taken from when given) and
/// `num_actual_tokens`. Nothing is cached: call it again whenever the batch changes.
pub fn token_to_req_indices(
    metadata: &CommonAttnMetadata<'_>,
    buffer: &mut TensorMut<'_>,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.token_to_req_indices(metadata, buffer, stream)
}

/// One call for a host batch: the request of each of `num_tokens` tokens (padding included,
/// mapped to request 0), of the element type of `query_start_loc` (`[B + 1]`, int32 or int64).
///
/// ```
/// assert_eq!(cattn::token_to_req_indices_vec(&[0, 2, 2, 5], 7)?, vec![0, 0, 2, 2, 2, 0, 0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn token_to_req_indices_vec<T: IndexElement>(
    query_start_loc: &[T],
    num_tokens: usize,
) -> Result<Vec<T>> {
    Api::linked()?.token_to_req_indices_vec(query_start_loc, num_tokens)
}

impl Api<'_> {
    /// [`token_to_req_indices_vec`] in this library.
    pub fn token_to_req_indices_vec<T: IndexElement>(
        self,
        query_start_loc: &[T],
        num_tokens: usize,
    ) -> Result<Vec<T>> {
        // The buffer holds max(M, T) entries, M the tokens query_start_loc maps; the library
        // checks M against its entries, so a decreasing one only shortens the buffer to T.
        let mapped = match (query_start_loc.first(), query_start_loc.last()) {
            (Some(&a), Some(&b)) => {
                usize::try_from(b.to_i64().saturating_sub(a.to_i64())).unwrap_or(0)
            }
            _ => 0,
        };
        let md = CommonAttnMetadata {
            query_start_loc: Some(TensorRef::from_slice(query_start_loc)),
            num_actual_tokens: i64::try_from(num_tokens).unwrap_or(i64::MAX),
            ..Default::default()
        };
        let mut out = zeroed("token_to_req_indices_vec", mapped.max(num_tokens))?;
        self.token_to_req_indices(&md, &mut TensorMut::from_slice(&mut out), Stream::DEFAULT)
            .map_err(|e| e.in_terms_of("token_to_req_indices_vec"))?;
        out.truncate(num_tokens);
        Ok(out)
    }

    /// [`token_to_req_indices`] in this library.
    pub fn token_to_req_indices(
        self,
        metadata: &CommonAttnMetadata<'_>,
        buffer: &mut TensorMut<'_>,
        stream: Stream,
    ) -> Result<()> {
        let md = metadata.to_raw();
        let raw = sys::cattn_token_to_req_indices_args_t {
            struct_size: size_of::<sys::cattn_token_to_req_indices_args_t>(),
            metadata: &md,
            buffer: buffer.as_raw(),
            stream: stream.as_raw(),
        };
        let f = entry!(self, token_to_req_indices)?;
        // SAFETY: the metadata and every view it points to live through the call; `buffer` is
        // borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "token_to_req_indices")
    }
}
