// SPDX-License-Identifier: Apache-2.0
//! The unpadded metadata of a padded batch (vLLM's CommonAttentionMetadata.unpadded).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/unpadded.md` of the libcattn repository; the items here document the Rust side: types,
//! errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::metadata::{given, raw_init, CommonAttnMetadata};
use crate::tensor::TensorRef;

/// The metadata of the first `num_actual_reqs` requests and `num_actual_tokens` tokens: every
/// per-request and per-token view cut to its first entries (same memory), the logits indices
/// and the other scalars kept. No data is read or written; a cut past a tensor's length is an
/// error. The 1.1 per-request and per-token fields (positions and `seq_lens_cpu_upper_bound`
/// included, which vLLM drops) are cut too, and `max_logits_per_req` is kept.
///
/// ```
/// use cattn::{unpadded, CommonAttnMetadata, TensorRef};
/// let qsl = [0i32, 3, 7, 7];
/// let seq = [5i32, 9, 0];
/// let md = CommonAttnMetadata {
///     query_start_loc: Some(TensorRef::from_slice(&qsl)),
///     seq_lens: Some(TensorRef::from_slice(&seq)),
///     num_reqs: 3,
///     ..Default::default()
/// };
/// let u = unpadded(&md, 7, 2)?;
/// assert_eq!(u.query_start_loc.unwrap().shape(), &[3]);
/// assert_eq!(u.num_reqs, 2);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn unpadded<'a>(
    metadata: &CommonAttnMetadata<'a>,
    num_actual_tokens: i64,
    num_actual_reqs: i64,
) -> Result<CommonAttnMetadata<'a>> {
    Api::linked()?.unpadded(metadata, num_actual_tokens, num_actual_reqs)
}

/// The view `src` with its first dimension cut to what the library's `view` says.
fn cut<'a>(src: &Option<TensorRef<'a>>, view: *const sys::DLTensor) -> Option<TensorRef<'a>> {
    let src = src.as_ref()?;
    if view.is_null() {
        return None;
    }
    // SAFETY: `view` is one of the library's views in the storage, alive until the caller
    // returns; it has at least one dimension (the library refuses rank 0).
    let first = unsafe { *(*view).shape };
    let mut shape = src.shape().to_vec();
    shape[0] = first;
    // SAFETY: `src` is a valid view for 'a, and the cut (first <= src's first dimension, as
    // the library checked) reaches a subset of its elements.
    let raw = unsafe { &*src.as_raw() };
    Some(unsafe {
        TensorRef::from_raw_parts(
            raw.data,
            src.device(),
            src.dtype(),
            &shape,
            src.strides(),
            raw.byte_offset,
        )
    })
}

impl Api<'_> {
    /// [`unpadded`] in this library.
    pub fn unpadded<'a>(
        self,
        metadata: &CommonAttnMetadata<'a>,
        num_actual_tokens: i64,
        num_actual_reqs: i64,
    ) -> Result<CommonAttnMetadata<'a>> {
        let input = metadata.to_raw();
        let mut out = raw_init();
        // SAFETY: the storage is plain integers; all zeroes is a valid value.
        let mut storage: Box<sys::cattn_unpadded_storage_t> =
            Box::new(unsafe { std::mem::zeroed() });
        storage.struct_size = size_of::<sys::cattn_unpadded_storage_t>();
        let raw = sys::cattn_unpadded_args_t {
            struct_size: size_of::<sys::cattn_unpadded_args_t>(),
            metadata: &input,
            num_actual_tokens,
            num_actual_reqs,
            out: &mut out,
            storage: &mut *storage,
        };
        let f = entry!(self, unpadded)?;
        // SAFETY: the input metadata and its views live through the call; out and storage are
        // exclusively ours.
        self.check_in(unsafe { f(&raw) }, "unpadded")?;
        let m = metadata;
        Ok(CommonAttnMetadata {
            query_start_loc: cut(&m.query_start_loc, out.query_start_loc),
            query_start_loc_cpu: cut(&m.query_start_loc_cpu, out.query_start_loc_cpu),
            seq_lens: cut(&m.seq_lens, out.seq_lens),
            seq_lens_cpu: cut(&m.seq_lens_cpu, out.seq_lens_cpu),
            num_computed_tokens_cpu: cut(&m.num_computed_tokens_cpu, out.num_computed_tokens_cpu),
            block_table_tensor: cut(&m.block_table_tensor, out.block_table_tensor),
            slot_mapping: cut(&m.slot_mapping, out.slot_mapping),
            logits_indices_padded: m.logits_indices_padded.clone(),
            num_reqs: out.num_reqs,
            num_actual_tokens: out.num_actual_tokens,
            max_query_len: out.max_query_len,
            max_seq_len: out.max_seq_len,
            num_logits_indices: out.num_logits_indices,
            causal: out.causal != 0,
            positions: cut(&m.positions, out.positions),
            is_prefilling: cut(&m.is_prefilling, out.is_prefilling),
            causal_per_req: cut(&m.causal_per_req, out.causal_per_req),
            dcp_local_seq_lens: cut(&m.dcp_local_seq_lens, out.dcp_local_seq_lens),
            dcp_local_seq_lens_cpu: cut(&m.dcp_local_seq_lens_cpu, out.dcp_local_seq_lens_cpu),
            seq_lens_cpu_upper_bound: cut(
                &m.seq_lens_cpu_upper_bound,
                out.seq_lens_cpu_upper_bound,
            ),
            encoder_seq_lens: cut(&m.encoder_seq_lens, out.encoder_seq_lens),
            encoder_seq_lens_cpu: cut(&m.encoder_seq_lens_cpu, out.encoder_seq_lens_cpu),
            max_logits_per_req: given(out.max_logits_per_req),
        })
    }
}
