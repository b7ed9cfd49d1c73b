// SPDX-License-Identifier: Apache-2.0
//! The upper bound on local-attention virtual batches (vLLM's
//! max_local_attention_virtual_batches, since 1.1).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/max_local_attention_virtual_batches.md` of the libcattn repository; the items here
//! document the Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;

/// The bounds of [`max_local_attention_virtual_batches`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VirtualBatchBound {
    /// vLLM's bound, `min(2 * max_num_seqs + ceil(tokens / chunk), tokens)`; it does not hold
    /// for batches with zero-length rows (CUDA-graph padding).
    pub bound: i64,
    /// `min(2 * max_num_seqs + ceil(tokens / chunk), tokens + max_num_seqs)`, which holds for
    /// every batch: size buffers with it when padded rows occur.
    pub bound_with_empty_rows: i64,
}

/// Bounds the virtual batches that local attention with chunk `attn_chunk_size` makes of a
/// step of at most `max_num_seqs` requests and `max_num_batched_tokens` tokens.
///
/// ```
/// let b = cattn::max_local_attention_virtual_batches(16, 4, 4)?;
/// assert_eq!((b.bound, b.bound_with_empty_rows), (4, 8));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn max_local_attention_virtual_batches(
    attn_chunk_size: i64,
    max_num_seqs: i64,
    max_num_batched_tokens: i64,
) -> Result<VirtualBatchBound> {
    Api::linked()?.max_local_attention_virtual_batches(
        attn_chunk_size,
        max_num_seqs,
        max_num_batched_tokens,
    )
}

impl Api<'_> {
    /// [`max_local_attention_virtual_batches`] in this library.
    pub fn max_local_attention_virtual_batches(
        self,
        attn_chunk_size: i64,
        max_num_seqs: i64,
        max_num_batched_tokens: i64,
    ) -> Result<VirtualBatchBound> {
        let mut raw = sys::cattn_max_local_attention_virtual_batches_args_t {
            struct_size: size_of::<sys::cattn_max_local_attention_virtual_batches_args_t>(),
            attn_chunk_size,
            max_num_seqs,
            max_num_batched_tokens,
            bound: 0,
            bound_with_empty_rows: 0,
        };
        let f = entry!(self, max_local_attention_virtual_batches)?;
        // SAFETY: `raw` is a live, correctly sized struct for the duration of the call.
        self.check_in(
            unsafe { f(&mut raw) },
            "max_local_attention_virtual_batches",
        )?;
        Ok(VirtualBatchBound {
            bound: raw.bound,
            bound_with_empty_rows: raw.bound_with_empty_rows,
        })
    }
}
