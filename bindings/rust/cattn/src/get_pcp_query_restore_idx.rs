// SPDX-License-Identifier: Apache-2.0
//! The PCP query restore index (vLLM's get_pcp_query_restore_idx).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/get_pcp_query_restore_idx.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{reported_len, zeroed};
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// The exact length of the restore index for a host `cu_num_tokens` (`[R + 1]`,
/// int32/int64): twice the sum of the per-request half lengths.
///
/// ```
/// let cu = [0i64, 8, 20];
/// assert_eq!(cattn::get_pcp_query_restore_idx_size(&(&cu).into())?, 20);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_pcp_query_restore_idx_size(cu_num_tokens: &TensorRef<'_>) -> Result<i64> {
    Api::linked()?.get_pcp_query_restore_idx_size(cu_num_tokens)
}

/// Computes the index that restores the original token order after every request's tokens
/// were split into a head half and a tail half and concatenated as `[all heads, all tails]`
/// (vLLM's argsort result, in O(n)). `restore_idx` needs at least
/// [`get_pcp_query_restore_idx_size`] entries; the ones past it are set to -1.
///
/// ```
/// use cattn::{get_pcp_query_restore_idx, Stream, TensorMut, TensorRef};
/// let cu = [0i32, 8, 20];
/// let mut idx = [0i32; 22];
/// get_pcp_query_restore_idx(&TensorRef::from_slice(&cu), &mut TensorMut::from_slice(&mut idx),
///                           Stream::DEFAULT)?;
/// assert_eq!(idx[..8], [0, 1, 2, 3, 10, 11, 12, 13]);
/// assert_eq!(idx[20..], [-1, -1]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_pcp_query_restore_idx(
    cu_num_tokens: &TensorRef<'_>,
    restore_idx: &mut TensorMut<'_>,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.get_pcp_query_restore_idx(cu_num_tokens, restore_idx, stream)
}

/// The restore index of host cumulative token counts (`[R + 1]`, int32 or int64), sized and
/// computed in one call: the size query, an output of exactly that length, the call. The
/// index has the element type of `cu_num_tokens`.
///
/// ```
/// assert_eq!(cattn::pcp_query_restore_idx(&[0, 4])?, vec![0, 1, 2, 3]);
/// // Length-1 (decode) requests take no part.
/// assert!(cattn::pcp_query_restore_idx(&[0i64, 1, 2])?.is_empty());
/// // An odd length above 1 is refused, with the library's message in this function's terms.
/// let err = cattn::pcp_query_restore_idx(&[0, 3]).unwrap_err();
/// assert!(err.message().starts_with("cattn::pcp_query_restore_idx: cu_num_tokens "));
/// assert!(err.c_message().starts_with("cattn_get_pcp_query_restore_idx_size: cu_num_tokens "));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn pcp_query_restore_idx<T: IndexElement>(cu_num_tokens: &[T]) -> Result<Vec<T>> {
    Api::linked()?.pcp_query_restore_idx(cu_num_tokens)
}

impl Api<'_> {
    /// [`get_pcp_query_restore_idx_size`] in this library.
    pub fn get_pcp_query_restore_idx_size(self, cu_num_tokens: &TensorRef<'_>) -> Result<i64> {
        let f = entry!(self, get_pcp_query_restore_idx_size)?;
        let mut size = 0i64;
        // SAFETY: the tensor and `size` are valid for the call.
        self.check_in(
            unsafe { f(cu_num_tokens.as_raw(), &mut size) },
            "get_pcp_query_restore_idx_size",
        )?;
        Ok(size)
    }

    /// [`pcp_query_restore_idx`] in this library.
    pub fn pcp_query_restore_idx<T: IndexElement>(self, cu_num_tokens: &[T]) -> Result<Vec<T>> {
        const FUNCTION: &str = "pcp_query_restore_idx";
        let cu = TensorRef::from_slice(cu_num_tokens);
        let size = self
            .get_pcp_query_restore_idx_size(&cu)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let len = reported_len(FUNCTION, "a restore-index size", size)?;
        let mut idx = zeroed(FUNCTION, len)?;
        self.get_pcp_query_restore_idx(&cu, &mut TensorMut::from_slice(&mut idx), Stream::DEFAULT)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(idx)
    }

    /// [`get_pcp_query_restore_idx`] in this library.
    pub fn get_pcp_query_restore_idx(
        self,
        cu_num_tokens: &TensorRef<'_>,
        restore_idx: &mut TensorMut<'_>,
        stream: Stream,
    ) -> Result<()> {
        let raw = sys::cattn_pcp_query_restore_idx_args_t {
            struct_size: size_of::<sys::cattn_pcp_query_restore_idx_args_t>(),
            cu_num_tokens: cu_num_tokens.as_raw(),
            restore_idx: restore_idx.as_raw(),
            stream: stream.as_raw(),
        };
        let f = entry!(self, get_pcp_query_restore_idx)?;
        // SAFETY: the views live through the call; the output is borrowed mutably.
        self.check_in(unsafe { f(&raw) }, "get_pcp_query_restore_idx")
    }
}
