// SPDX-License-Identifier: Apache-2.0
//! The metadata of one batch (`cattn_common_attn_metadata_t`, vLLM's
//! CommonAttentionMetadata), as extend_all_queries_by_n, make_kv_sharing_fast_prefill_common_attn_metadata and make_local_attention_virtual_batches read it.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/common_attn_metadata.md` of the libcattn repository; the items here document the Rust
//! side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::tensor::TensorRef;

/// `CATTN_NOT_GIVEN`, which bindgen cannot evaluate (a cast in the header).
pub(crate) const NOT_GIVEN: i64 = -1;

/// The metadata of one batch, borrowed by the calls that read it.
///
/// Every tensor is optional because each utility reads only some of them (its documentation
/// says which); the scalars are copied as they are. The default has every tensor unset, every
/// count 0, `causal` true and `max_logits_per_req` not given, as
/// `CATTN_COMMON_ATTN_METADATA_INIT`.
///
/// The fields from `positions` on are vLLM's newer CommonAttentionMetadata fields (libcattn
/// 1.1): the struct is always passed to the library as a 1.1 struct, and the calls that handle
/// them say how (extend_all_queries_by_n, make_kv_sharing_fast_prefill_common_attn_metadata,
/// the local-attention fill, unpadded); `None` is vLLM's None.
///
/// ```
/// use cattn::{CommonAttnMetadata, TensorRef};
/// let qsl = [0i32, 3, 7];
/// let seq_lens = [5i32, 4];
/// let md = CommonAttnMetadata {
///     query_start_loc: Some(TensorRef::from_slice(&qsl)),
///     seq_lens: Some(TensorRef::from_slice(&seq_lens)),
///     num_reqs: 2,
///     num_actual_tokens: 7,
///     max_query_len: 4,
///     max_seq_len: 5,
///     ..Default::default()
/// };
/// assert!(md.causal);
/// ```
#[derive(Clone, Debug)]
pub struct CommonAttnMetadata<'a> {
    /// `[num_reqs + 1]` cumulative query lengths.
    pub query_start_loc: Option<TensorRef<'a>>,
    /// Host mirror of `query_start_loc`.
    pub query_start_loc_cpu: Option<TensorRef<'a>>,
    /// `[num_reqs]` sequence (context + query) lengths.
    pub seq_lens: Option<TensorRef<'a>>,
    /// Host mirror of `seq_lens`.
    pub seq_lens_cpu: Option<TensorRef<'a>>,
    /// `[num_reqs]` host tensor of computed (context) tokens.
    pub num_computed_tokens_cpu: Option<TensorRef<'a>>,
    /// `[num_reqs, max_blocks_per_req]`.
    pub block_table_tensor: Option<TensorRef<'a>>,
    /// `[num_actual_tokens (+ padding)]`.
    pub slot_mapping: Option<TensorRef<'a>>,
    /// `[>= num_logits_indices]`.
    pub logits_indices_padded: Option<TensorRef<'a>>,
    /// The requests of the batch, B.
    pub num_reqs: i64,
    /// The tokens of the batch, T (CUDA-graph padding included where the engine pads).
    pub num_actual_tokens: i64,
    /// The longest query.
    pub max_query_len: i64,
    /// The longest sequence (context + query).
    pub max_seq_len: i64,
    /// Meaningful only with `logits_indices_padded`.
    pub num_logits_indices: i64,
    /// vLLM's `causal` when it is a bool (see `causal_per_req` for a tensor).
    pub causal: bool,
    /// `[num_actual_tokens (+ padding)]` token positions. Since 1.1.
    pub positions: Option<TensorRef<'a>>,
    /// `[num_reqs]` bool (8-bit): true while the request is still in its prompt. Since 1.1.
    pub is_prefilling: Option<TensorRef<'a>>,
    /// `[num_reqs]` bool: vLLM's `causal` when it is a tensor; when set it takes precedence
    /// over `causal`. Since 1.1.
    pub causal_per_req: Option<TensorRef<'a>>,
    /// `[num_reqs]` this DCP rank's sequence lengths. Since 1.1.
    pub dcp_local_seq_lens: Option<TensorRef<'a>>,
    /// Host mirror of `dcp_local_seq_lens`. Since 1.1.
    pub dcp_local_seq_lens_cpu: Option<TensorRef<'a>>,
    /// `[num_reqs]` host: an upper bound of `seq_lens` (exact for prefill rows). Since 1.1.
    pub seq_lens_cpu_upper_bound: Option<TensorRef<'a>>,
    /// `[num_reqs]` cross-attention encoder lengths. Since 1.1.
    pub encoder_seq_lens: Option<TensorRef<'a>>,
    /// Host mirror of `encoder_seq_lens`. Since 1.1.
    pub encoder_seq_lens_cpu: Option<TensorRef<'a>>,
    /// The most logits indices of one request; `None` (vLLM's None) is passed as
    /// `CATTN_NOT_GIVEN`, and the library also reads `Some(v)` with `v <= 0` as not given.
    /// Since 1.1.
    pub max_logits_per_req: Option<i64>,
}

impl Default for CommonAttnMetadata<'_> {
    fn default() -> Self {
        CommonAttnMetadata {
            query_start_loc: None,
            query_start_loc_cpu: None,
            seq_lens: None,
            seq_lens_cpu: None,
            num_computed_tokens_cpu: None,
            block_table_tensor: None,
            slot_mapping: None,
            logits_indices_padded: None,
            num_reqs: 0,
            num_actual_tokens: 0,
            max_query_len: 0,
            max_seq_len: 0,
            num_logits_indices: 0,
            causal: true,
            positions: None,
            is_prefilling: None,
            causal_per_req: None,
            dcp_local_seq_lens: None,
            dcp_local_seq_lens_cpu: None,
            seq_lens_cpu_upper_bound: None,
            encoder_seq_lens: None,
            encoder_seq_lens_cpu: None,
            max_logits_per_req: None,
        }
    }
}

/// A tensor field of the raw struct: the C field is `DLTensor*` for inputs and outputs alike,
/// and the library never writes through an input's pointer.
fn field(t: &Option<TensorRef<'_>>) -> *mut sys::DLTensor {
    t.as_ref()
        .map_or(std::ptr::null_mut(), |t| t.as_raw().cast_mut())
}

impl CommonAttnMetadata<'_> {
    /// The raw struct (a 1.1 one), pointing into `self`'s tensors: valid while `self` lives.
    pub fn to_raw(&self) -> sys::cattn_common_attn_metadata_t {
        sys::cattn_common_attn_metadata_t {
            struct_size: size_of::<sys::cattn_common_attn_metadata_t>(),
            query_start_loc: field(&self.query_start_loc),
            query_start_loc_cpu: field(&self.query_start_loc_cpu),
            seq_lens: field(&self.seq_lens),
            seq_lens_cpu: field(&self.seq_lens_cpu),
            num_computed_tokens_cpu: field(&self.num_computed_tokens_cpu),
            block_table_tensor: field(&self.block_table_tensor),
            slot_mapping: field(&self.slot_mapping),
            logits_indices_padded: field(&self.logits_indices_padded),
            num_reqs: self.num_reqs,
            num_actual_tokens: self.num_actual_tokens,
            max_query_len: self.max_query_len,
            max_seq_len: self.max_seq_len,
            num_logits_indices: self.num_logits_indices,
            causal: i32::from(self.causal),
            reserved0: 0,
            positions: field(&self.positions),
            is_prefilling: field(&self.is_prefilling),
            causal_per_req: field(&self.causal_per_req),
            dcp_local_seq_lens: field(&self.dcp_local_seq_lens),
            dcp_local_seq_lens_cpu: field(&self.dcp_local_seq_lens_cpu),
            seq_lens_cpu_upper_bound: field(&self.seq_lens_cpu_upper_bound),
            encoder_seq_lens: field(&self.encoder_seq_lens),
            encoder_seq_lens_cpu: field(&self.encoder_seq_lens_cpu),
            max_logits_per_req: self.max_logits_per_req.unwrap_or(NOT_GIVEN),
        }
    }
}

/// The scalar fields of a metadata struct a call wrote (its tensors are the caller's own), or
/// of a batch an in-place call reads.
///
/// The default is `CATTN_COMMON_ATTN_METADATA_INIT`'s: every count 0, `causal` true and
/// `max_logits_per_req` not given.
///
/// ```
/// let s = cattn::MetadataScalars { num_reqs: 2, max_query_len: 3, ..Default::default() };
/// assert!(s.causal && s.max_logits_per_req.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetadataScalars {
    /// The requests of the batch, B.
    pub num_reqs: i64,
    /// The tokens of the batch, T (CUDA-graph padding included where the engine pads).
    pub num_actual_tokens: i64,
    /// The longest query.
    pub max_query_len: i64,
    /// The longest sequence (context + query).
    pub max_seq_len: i64,
    /// The logits indices in use; meaningful only with `logits_indices_padded`.
    pub num_logits_indices: i64,
    /// vLLM's `causal` when it is a bool.
    pub causal: bool,
    /// The most logits indices of one request; `None` is vLLM's None (`CATTN_NOT_GIVEN`, and
    /// any value `<= 0` the library reads back). Since 1.1.
    pub max_logits_per_req: Option<i64>,
}

impl Default for MetadataScalars {
    fn default() -> Self {
        MetadataScalars {
            num_reqs: 0,
            num_actual_tokens: 0,
            max_query_len: 0,
            max_seq_len: 0,
            num_logits_indices: 0,
            causal: true,
            max_logits_per_req: None,
        }
    }
}

impl MetadataScalars {
    pub(crate) fn of(raw: &sys::cattn_common_attn_metadata_t) -> MetadataScalars {
        MetadataScalars {
            num_reqs: raw.num_reqs,
            num_actual_tokens: raw.num_actual_tokens,
            max_query_len: raw.max_query_len,
            max_seq_len: raw.max_seq_len,
            num_logits_indices: raw.num_logits_indices,
            causal: raw.causal != 0,
            max_logits_per_req: given(raw.max_logits_per_req),
        }
    }

    /// Writes these scalars into a raw struct.
    pub(crate) fn store(&self, raw: &mut sys::cattn_common_attn_metadata_t) {
        raw.num_reqs = self.num_reqs;
        raw.num_actual_tokens = self.num_actual_tokens;
        raw.max_query_len = self.max_query_len;
        raw.max_seq_len = self.max_seq_len;
        raw.num_logits_indices = self.num_logits_indices;
        raw.causal = i32::from(self.causal);
        raw.max_logits_per_req = self.max_logits_per_req.unwrap_or(NOT_GIVEN);
    }
}

/// An optional int64 field as the library reads it: 0 or negative is not given.
pub(crate) fn given(raw: i64) -> Option<i64> {
    (raw > 0).then_some(raw)
}

/// Which of the 1.1 tensor fields a metadata struct that a call wrote has. Each tensor set is
/// one of the caller's own (an input's, copied, or an output it gave), so only its presence is
/// reported. (The 1.1 scalar, `max_logits_per_req`, is in [`MetadataScalars`].)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NewerFields {
    /// `positions` is set.
    pub positions: bool,
    /// `is_prefilling` is set.
    pub is_prefilling: bool,
    /// `causal_per_req` is set.
    pub causal_per_req: bool,
    /// `dcp_local_seq_lens` is set.
    pub dcp_local_seq_lens: bool,
    /// `dcp_local_seq_lens_cpu` is set.
    pub dcp_local_seq_lens_cpu: bool,
    /// `seq_lens_cpu_upper_bound` is set.
    pub seq_lens_cpu_upper_bound: bool,
    /// `encoder_seq_lens` is set.
    pub encoder_seq_lens: bool,
    /// `encoder_seq_lens_cpu` is set.
    pub encoder_seq_lens_cpu: bool,
}

impl NewerFields {
    pub(crate) fn of(raw: &sys::cattn_common_attn_metadata_t) -> NewerFields {
        NewerFields {
            positions: !raw.positions.is_null(),
            is_prefilling: !raw.is_prefilling.is_null(),
            causal_per_req: !raw.causal_per_req.is_null(),
            dcp_local_seq_lens: !raw.dcp_local_seq_lens.is_null(),
            dcp_local_seq_lens_cpu: !raw.dcp_local_seq_lens_cpu.is_null(),
            seq_lens_cpu_upper_bound: !raw.seq_lens_cpu_upper_bound.is_null(),
            encoder_seq_lens: !raw.encoder_seq_lens.is_null(),
            encoder_seq_lens_cpu: !raw.encoder_seq_lens_cpu.is_null(),
        }
    }
}

/// An empty raw struct (all NULL, causal 1, max_logits_per_req not given), as `CATTN_COMMON_ATTN_METADATA_INIT`.
pub(crate) fn raw_init() -> sys::cattn_common_attn_metadata_t {
    CommonAttnMetadata::default().to_raw()
}
