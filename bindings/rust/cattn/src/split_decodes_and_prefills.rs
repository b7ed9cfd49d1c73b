// SPDX-License-Identifier: Apache-2.0
//! Batch splitting and reordering (vLLM's split_decodes_and_prefills,
//! split_decodes_prefills_and_extends, split_prefill_chunks and
//! reorder_batch_to_split_decodes_and_prefills).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/split_decodes_and_prefills.md`, `docs/api/split_prefill_chunks.md` and
//! `docs/api/reorder_batch_to_split_decodes_and_prefills.md` of the libcattn repository; the items
//! here document the Rust side: types, errors, panics and safety.

use std::mem::size_of;
use std::ptr;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{area, len_i64, reported_len, zeroed};
use crate::tensor::{IndexElement, Stream, TensorMut, TensorRef};

/// `CATTN_FROM_QUERY_START_LOC` (which bindgen cannot evaluate: a cast in the header): as a
/// split's [`SplitBatch::num_actual_tokens`] or [`SplitBatch::max_query_len`], the library
/// derives the value from `query_start_loc_cpu` (`query_start_loc[B]`, the longest query).
pub const FROM_QUERY_START_LOC: i64 = -1;

/// The batch a split reads: the fields of vLLM's `CommonAttentionMetadata` it uses.
#[derive(Clone, Debug)]
pub struct SplitBatch<'a> {
    /// Host `[num_reqs + 1]` int32/int64.
    pub query_start_loc_cpu: TensorRef<'a>,
    /// `B >= 0`.
    pub num_reqs: i64,
    /// `T`, may include CUDA-graph padding; [`FROM_QUERY_START_LOC`] for `query_start_loc[B]`,
    /// derived by the library.
    pub num_actual_tokens: i64,
    /// The metadata's longest query, used as given (not checked against the tensor);
    /// [`FROM_QUERY_START_LOC`] for the longest query of `query_start_loc_cpu`, derived by the
    /// library.
    pub max_query_len: i64,
}

impl<'a> SplitBatch<'a> {
    /// The batch of a host `query_start_loc_cpu` alone (`[B + 1]`): `num_reqs` B, and
    /// `num_actual_tokens` and `max_query_len` [`FROM_QUERY_START_LOC`], derived by the
    /// library.
    ///
    /// ```
    /// use cattn::{split_decodes_and_prefills, SplitBatch, SplitOptions, TensorRef};
    /// let qsl = [0i64, 1, 2, 7, 15];
    /// let batch = SplitBatch::from_query_start_loc(TensorRef::from_slice(&qsl));
    /// assert_eq!(batch.num_reqs, 4);
    /// let s = split_decodes_and_prefills(&batch, &SplitOptions::default())?;
    /// assert_eq!((s.num_decodes, s.num_prefill_tokens), (2, 13));
    /// # Ok::<(), cattn::Error>(())
    /// ```
    pub fn from_query_start_loc(query_start_loc_cpu: TensorRef<'a>) -> SplitBatch<'a> {
        SplitBatch {
            num_reqs: query_start_loc_cpu
                .shape()
                .first()
                .map_or(0, |&n| n.saturating_sub(1).max(0)),
            query_start_loc_cpu,
            num_actual_tokens: FROM_QUERY_START_LOC,
            max_query_len: FROM_QUERY_START_LOC,
        }
    }
}

/// The options of [`split_decodes_and_prefills`]; `Default` is vLLM's defaults.
#[derive(Clone, Debug)]
pub struct SplitOptions<'a> {
    /// `[0, i32::MAX]`; vLLM's default 1.
    pub decode_threshold: i64,
    /// Decodes must all have the same query length (vLLM's `require_uniform`, default false).
    pub require_uniform: bool,
    /// vLLM's default `true`.
    pub treat_short_extends_as_decodes: bool,
    /// `[num_reqs]`, one byte per request (u8/i8, nonzero = still prefilling), on the host for
    /// the host call and on the device for the device call; read only when
    /// `treat_short_extends_as_decodes` is false.
    pub is_prefilling: Option<TensorRef<'a>>,
}

impl Default for SplitOptions<'_> {
    fn default() -> Self {
        SplitOptions {
            decode_threshold: 1,
            require_uniform: false,
            treat_short_extends_as_decodes: true,
            is_prefilling: None,
        }
    }
}

/// The result of [`split_decodes_and_prefills`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DecodePrefillSplit {
    /// The leading requests that are decodes.
    pub num_decodes: i64,
    /// The requests after them.
    pub num_prefills: i64,
    /// The decodes' tokens.
    pub num_decode_tokens: i64,
    /// The prefills' tokens.
    pub num_prefill_tokens: i64,
}

/// The result of [`split_decodes_prefills_and_extends`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DecodeExtendPrefillSplit {
    /// The leading requests that are decodes.
    pub num_decodes: i64,
    /// The extends after them (chunked prefills with context).
    pub num_extends: i64,
    /// The prefills after those (no context).
    pub num_prefills: i64,
    /// The decodes' tokens.
    pub num_decode_tokens: i64,
    /// The extends' tokens.
    pub num_extend_tokens: i64,
    /// The prefills' tokens.
    pub num_prefill_tokens: i64,
}

/// The reorder vLLM applies to a batch ([`reorder_batch_to_split_decodes_and_prefills`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReorderPlan {
    /// vLLM's return value: the batch is not in decode, short extend, long extend, prefill
    /// order.
    pub changed: bool,
    /// `index_map[i]`: the position before the reorder of the request at position `i` after.
    pub index_map: Vec<i64>,
    /// vLLM's `swap_states(a, b)` calls, in its order.
    pub swaps: Vec<(i64, i64)>,
    /// Requests per region: decode, short extend, long extend, prefill.
    pub counts: [i64; 4],
}

/// Splits an ordered batch at its first prefill (vLLM's `split_decodes_and_prefills`, quirks
/// included; see `cattn_split_decodes_and_prefills` in cattn.h).
///
/// ```
/// use cattn::{split_decodes_and_prefills, SplitBatch, SplitOptions, TensorRef};
/// let qsl = [0i32, 2, 3, 6, 10, 15, 21, 28, 36];
/// let batch = SplitBatch {
///     query_start_loc_cpu: TensorRef::from_slice(&qsl),
///     num_reqs: 8,
///     num_actual_tokens: 36,
///     max_query_len: cattn::FROM_QUERY_START_LOC, // the library's: the longest query, 8
/// };
/// let opts = SplitOptions { decode_threshold: 4, ..SplitOptions::default() };
/// let s = split_decodes_and_prefills(&batch, &opts)?;
/// assert_eq!((s.num_decodes, s.num_prefills, s.num_decode_tokens, s.num_prefill_tokens),
///            (4, 4, 10, 26));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn split_decodes_and_prefills(
    batch: &SplitBatch<'_>,
    opts: &SplitOptions<'_>,
) -> Result<DecodePrefillSplit> {
    Api::linked()?.split_decodes_and_prefills(batch, opts)
}

/// One call for the common case: the split of a host `query_start_loc` (`[B + 1]`, int32 or
/// int64; T = its last entry, max_query_len = the longest query) at `decode_threshold`, vLLM's
/// other defaults.
///
/// ```
/// let s = cattn::split_query_start_loc(&[0i32, 1, 2, 7, 15], 1)?;
/// assert_eq!((s.num_decodes, s.num_prefills, s.num_decode_tokens, s.num_prefill_tokens),
///            (2, 2, 2, 13));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn split_query_start_loc<T: IndexElement>(
    query_start_loc: &[T],
    decode_threshold: i64,
) -> Result<DecodePrefillSplit> {
    Api::linked()?.split_query_start_loc(query_start_loc, decode_threshold)
}

/// One call for the common case of [`split_decodes_prefills_and_extends`]: the split of a host
/// `query_start_loc` (`[B + 1]`; T = its last entry, max_query_len = the longest query) with
/// the sequence lengths' upper bounds (`[B]`, of the same element type) at `decode_threshold`.
///
/// ```
/// // Two decodes, an extend (4 of 9 tokens new) and a prefill (8 of 8).
/// let s = cattn::split_query_start_loc_with_extends(&[0i64, 1, 2, 6, 14], &[30, 12, 9, 8], 1)?;
/// assert_eq!((s.num_decodes, s.num_extends, s.num_prefills), (2, 1, 1));
/// assert_eq!((s.num_decode_tokens, s.num_extend_tokens, s.num_prefill_tokens), (2, 4, 8));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn split_query_start_loc_with_extends<T: IndexElement>(
    query_start_loc: &[T],
    seq_lens_upper_bound: &[T],
    decode_threshold: i64,
) -> Result<DecodeExtendPrefillSplit> {
    Api::linked()?.split_query_start_loc_with_extends(
        query_start_loc,
        seq_lens_upper_bound,
        decode_threshold,
    )
}

/// Splits an ordered batch into decodes, extends and prefills (vLLM's
/// `split_decodes_prefills_and_extends`, quirks included). `seq_lens_cpu_upper_bound` is host
/// `[num_reqs]`; `None` fails past the first step, as vLLM's assert.
pub fn split_decodes_prefills_and_extends(
    batch: &SplitBatch<'_>,
    seq_lens_cpu_upper_bound: Option<&TensorRef<'_>>,
    decode_threshold: i64,
) -> Result<DecodeExtendPrefillSplit> {
    Api::linked()?.split_decodes_prefills_and_extends(
        batch,
        seq_lens_cpu_upper_bound,
        decode_threshold,
    )
}

/// Splits prefill requests (their host lengths, int32 or int64) into chunks that fit
/// `workspace_size` tokens (vLLM's `split_prefill_chunks`); returns the half-open bounds plus
/// `request_offset`, in one call (the size query, then the chunks).
///
/// ```
/// let chunks = cattn::split_prefill_chunks(&[3, 5, 2, 7, 1], 8, 0)?;
/// assert_eq!(chunks, vec![(0, 2), (2, 3), (3, 5)]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn split_prefill_chunks<T: IndexElement>(
    seq_lens: &[T],
    workspace_size: i64,
    request_offset: i64,
) -> Result<Vec<(i64, i64)>> {
    Api::linked()?.split_prefill_chunks(seq_lens, workspace_size, request_offset)
}

/// How vLLM's `reorder_batch_to_split_decodes_and_prefills` reorders a batch of per-request
/// scheduled, computed and prompt token counts (host slices of one element type, int32 or
/// int64); the engine applies the plan. One call: the index map and the swaps are allocated
/// here, at their largest sizes.
///
/// ```
/// let plan = cattn::reorder_batch_to_split_decodes_and_prefills(
///     &[100, 1, 1, 10, 1], &[0, 50, 60, 50, 0], &[100, 100, 60, 100, 1], 1)?;
/// assert!(plan.changed);
/// assert_eq!(plan.index_map, vec![2, 1, 3, 0, 4]);
/// assert_eq!(plan.swaps, vec![(2, 0), (2, 3)]);
/// assert_eq!(plan.counts, [1, 1, 1, 2]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn reorder_batch_to_split_decodes_and_prefills<T: IndexElement>(
    num_scheduled_tokens: &[T],
    num_computed_tokens: &[T],
    num_prompt_tokens: &[T],
    decode_threshold: i64,
) -> Result<ReorderPlan> {
    Api::linked()?.reorder_batch_to_split_decodes_and_prefills(
        num_scheduled_tokens,
        num_computed_tokens,
        num_prompt_tokens,
        decode_threshold,
    )
}

/// The device split of a batch on the GPU: `result` is a device `[4]` int32/int64 tensor
/// (num_decodes, num_prefills, num_decode_tokens, num_prefill_tokens), written by one kernel on
/// `stream` (capturable). `num_actual_tokens` / `max_query_len`: device `[1]` tensors, or `None`
/// for `query_start_loc[B]` / the longest query.
pub struct SplitCapturableArgs<'a> {
    /// Device `[B + 1]` int32/int64; pad a captured batch with zero-length rows.
    pub query_start_loc: TensorRef<'a>,
    /// Device `[1]`: T; `None` for `query_start_loc[B]`.
    pub num_actual_tokens: Option<TensorRef<'a>>,
    /// Device `[1]`; `None` for the longest query (0 when B is 0).
    pub max_query_len: Option<TensorRef<'a>>,
    /// The stream the kernel is enqueued on.
    pub stream: Stream,
}

/// `cattn_split_decodes_and_prefills_capturable`; `opts.is_prefilling` is the device
/// `is_prefilling` tensor.
pub fn split_decodes_and_prefills_capturable(
    args: &SplitCapturableArgs<'_>,
    opts: &SplitOptions<'_>,
    result: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.split_decodes_and_prefills_capturable(args, opts, result)
}

/// `cattn_split_decodes_prefills_and_extends_capturable`: `result` is a device `[6]` tensor.
pub fn split_decodes_prefills_and_extends_capturable(
    args: &SplitCapturableArgs<'_>,
    seq_lens_upper_bound: &TensorRef<'_>,
    decode_threshold: i64,
    result: &mut TensorMut<'_>,
) -> Result<()> {
    Api::linked()?.split_decodes_prefills_and_extends_capturable(
        args,
        seq_lens_upper_bound,
        decode_threshold,
        result,
    )
}

/// The batch of a host `query_start_loc` alone: B its length less one, T and max_query_len
/// derived by the library.
fn batch_of<T: IndexElement>(qsl: &[T]) -> SplitBatch<'_> {
    SplitBatch::from_query_start_loc(TensorRef::from_slice(qsl))
}

fn opt_raw(t: Option<&TensorRef<'_>>) -> *const sys::DLTensor {
    t.map_or(ptr::null(), TensorRef::as_raw)
}

impl Api<'_> {
    /// [`split_query_start_loc`] in this library.
    pub fn split_query_start_loc<T: IndexElement>(
        self,
        query_start_loc: &[T],
        decode_threshold: i64,
    ) -> Result<DecodePrefillSplit> {
        let opts = SplitOptions {
            decode_threshold,
            ..SplitOptions::default()
        };
        self.split_decodes_and_prefills(&batch_of(query_start_loc), &opts)
            .map_err(|e| e.in_terms_of("split_query_start_loc"))
    }

    /// [`split_query_start_loc_with_extends`] in this library.
    pub fn split_query_start_loc_with_extends<T: IndexElement>(
        self,
        query_start_loc: &[T],
        seq_lens_upper_bound: &[T],
        decode_threshold: i64,
    ) -> Result<DecodeExtendPrefillSplit> {
        self.split_decodes_prefills_and_extends(
            &batch_of(query_start_loc),
            Some(&TensorRef::from_slice(seq_lens_upper_bound)),
            decode_threshold,
        )
        .map_err(|e| e.in_terms_of("split_query_start_loc_with_extends"))
    }

    /// [`split_decodes_and_prefills`] in this library.
    pub fn split_decodes_and_prefills(
        self,
        batch: &SplitBatch<'_>,
        opts: &SplitOptions<'_>,
    ) -> Result<DecodePrefillSplit> {
        let mut raw = sys::cattn_split_decodes_and_prefills_args_t {
            struct_size: size_of::<sys::cattn_split_decodes_and_prefills_args_t>(),
            query_start_loc_cpu: batch.query_start_loc_cpu.as_raw(),
            is_prefilling_cpu: opt_raw(opts.is_prefilling.as_ref()),
            num_reqs: batch.num_reqs,
            num_actual_tokens: batch.num_actual_tokens,
            max_query_len: batch.max_query_len,
            decode_threshold: opts.decode_threshold,
            require_uniform: i32::from(opts.require_uniform),
            treat_short_extends_as_decodes: i32::from(opts.treat_short_extends_as_decodes),
            num_decodes: 0,
            num_prefills: 0,
            num_decode_tokens: 0,
            num_prefill_tokens: 0,
        };
        let f = entry!(self, split_decodes_and_prefills)?;
        // SAFETY: the tensors in `raw` are live borrowed views; the call writes only `raw`.
        self.check_in(unsafe { f(&mut raw) }, "split_decodes_and_prefills")?;
        Ok(DecodePrefillSplit {
            num_decodes: raw.num_decodes,
            num_prefills: raw.num_prefills,
            num_decode_tokens: raw.num_decode_tokens,
            num_prefill_tokens: raw.num_prefill_tokens,
        })
    }

    /// [`split_decodes_prefills_and_extends`] in this library.
    pub fn split_decodes_prefills_and_extends(
        self,
        batch: &SplitBatch<'_>,
        seq_lens_cpu_upper_bound: Option<&TensorRef<'_>>,
        decode_threshold: i64,
    ) -> Result<DecodeExtendPrefillSplit> {
        let mut raw = sys::cattn_split_decodes_prefills_and_extends_args_t {
            struct_size: size_of::<sys::cattn_split_decodes_prefills_and_extends_args_t>(),
            query_start_loc_cpu: batch.query_start_loc_cpu.as_raw(),
            seq_lens_cpu_upper_bound: opt_raw(seq_lens_cpu_upper_bound),
            num_reqs: batch.num_reqs,
            num_actual_tokens: batch.num_actual_tokens,
            max_query_len: batch.max_query_len,
            decode_threshold,
            num_decodes: 0,
            num_extends: 0,
            num_prefills: 0,
            num_decode_tokens: 0,
            num_extend_tokens: 0,
            num_prefill_tokens: 0,
        };
        let f = entry!(self, split_decodes_prefills_and_extends)?;
        // SAFETY: the tensors in `raw` are live borrowed views; the call writes only `raw`.
        self.check_in(unsafe { f(&mut raw) }, "split_decodes_prefills_and_extends")?;
        Ok(DecodeExtendPrefillSplit {
            num_decodes: raw.num_decodes,
            num_extends: raw.num_extends,
            num_prefills: raw.num_prefills,
            num_decode_tokens: raw.num_decode_tokens,
            num_extend_tokens: raw.num_extend_tokens,
            num_prefill_tokens: raw.num_prefill_tokens,
        })
    }

    /// [`split_prefill_chunks`] in this library: the size query, then the fill.
    pub fn split_prefill_chunks<T: IndexElement>(
        self,
        seq_lens: &[T],
        workspace_size: i64,
        request_offset: i64,
    ) -> Result<Vec<(i64, i64)>> {
        let seq = TensorRef::from_slice(seq_lens);
        let mut raw = sys::cattn_split_prefill_chunks_args_t {
            struct_size: size_of::<sys::cattn_split_prefill_chunks_args_t>(),
            seq_lens_cpu: seq.as_raw(),
            workspace_size,
            request_offset,
            chunks: ptr::null_mut(),
            num_chunks: 0,
        };
        let f = entry!(self, split_prefill_chunks)?;
        // SAFETY: `seq` is a live view; with chunks NULL the call writes only `raw`.
        self.check_in(unsafe { f(&mut raw) }, "split_prefill_chunks")?;
        const FUNCTION: &str = "split_prefill_chunks";
        let n = reported_len(FUNCTION, "a chunk count", raw.num_chunks)?;
        let mut flat: Vec<i64> = zeroed(FUNCTION, area(FUNCTION, "the chunks", n, 2)?)?;
        let mut out = TensorMut::new(&mut flat, &[len_i64(n), 2])?;
        raw.chunks = out.as_raw();
        // SAFETY: as above; `out` is borrowed mutably for the call and holds n rows.
        self.check_in(unsafe { f(&mut raw) }, "split_prefill_chunks")?;
        drop(out);
        Ok(flat.chunks_exact(2).map(|r| (r[0], r[1])).collect())
    }

    /// [`reorder_batch_to_split_decodes_and_prefills`] in this library.
    pub fn reorder_batch_to_split_decodes_and_prefills<T: IndexElement>(
        self,
        num_scheduled_tokens: &[T],
        num_computed_tokens: &[T],
        num_prompt_tokens: &[T],
        decode_threshold: i64,
    ) -> Result<ReorderPlan> {
        let b = num_scheduled_tokens.len();
        let (s, c, p) = (
            TensorRef::from_slice(num_scheduled_tokens),
            TensorRef::from_slice(num_computed_tokens),
            TensorRef::from_slice(num_prompt_tokens),
        );
        const FUNCTION: &str = "reorder_batch_to_split_decodes_and_prefills";
        let mut map: Vec<i64> = zeroed(FUNCTION, b)?;
        let rows = b.saturating_sub(1);
        let mut flat: Vec<i64> = zeroed(FUNCTION, area(FUNCTION, "the swaps", rows, 2)?)?;
        let mut map_t = TensorMut::from_slice(&mut map);
        let mut swaps_t = TensorMut::new(&mut flat, &[len_i64(rows), 2])?;
        let mut raw = sys::cattn_reorder_batch_args_t {
            struct_size: size_of::<sys::cattn_reorder_batch_args_t>(),
            num_scheduled_tokens: s.as_raw(),
            num_computed_tokens: c.as_raw(),
            num_prompt_tokens: p.as_raw(),
            decode_threshold,
            index_map: map_t.as_raw(),
            swaps: swaps_t.as_raw(),
            changed: 0,
            reserved0: 0,
            num_swaps: 0,
            num_decodes: 0,
            num_short_extends: 0,
            num_long_extends: 0,
            num_prefills: 0,
        };
        let f = entry!(self, reorder_batch_to_split_decodes_and_prefills)?;
        // SAFETY: every tensor in `raw` is a live view; the outputs are borrowed mutably.
        self.check_in(
            unsafe { f(&mut raw) },
            "reorder_batch_to_split_decodes_and_prefills",
        )?;
        drop(map_t);
        drop(swaps_t);
        let n = reported_len(FUNCTION, "a swap count", raw.num_swaps)?;
        Ok(ReorderPlan {
            changed: raw.changed != 0,
            index_map: map,
            swaps: flat.chunks_exact(2).take(n).map(|r| (r[0], r[1])).collect(),
            counts: [
                raw.num_decodes,
                raw.num_short_extends,
                raw.num_long_extends,
                raw.num_prefills,
            ],
        })
    }

    /// [`split_decodes_and_prefills_capturable`] in this library.
    pub fn split_decodes_and_prefills_capturable(
        self,
        args: &SplitCapturableArgs<'_>,
        opts: &SplitOptions<'_>,
        result: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_split_decodes_and_prefills_capturable_args_t {
            struct_size: size_of::<sys::cattn_split_decodes_and_prefills_capturable_args_t>(),
            query_start_loc: args.query_start_loc.as_raw(),
            is_prefilling: opt_raw(opts.is_prefilling.as_ref()),
            num_actual_tokens: opt_raw(args.num_actual_tokens.as_ref()),
            max_query_len: opt_raw(args.max_query_len.as_ref()),
            decode_threshold: opts.decode_threshold,
            require_uniform: i32::from(opts.require_uniform),
            treat_short_extends_as_decodes: i32::from(opts.treat_short_extends_as_decodes),
            result: result.as_raw(),
            stream: args.stream.as_raw(),
        };
        let f = entry!(self, split_decodes_and_prefills_capturable)?;
        // SAFETY: the views in `raw` are live; `result` is borrowed mutably for the call.
        self.check_in(unsafe { f(&raw) }, "split_decodes_and_prefills_capturable")
    }

    /// [`split_decodes_prefills_and_extends_capturable`] in this library.
    pub fn split_decodes_prefills_and_extends_capturable(
        self,
        args: &SplitCapturableArgs<'_>,
        seq_lens_upper_bound: &TensorRef<'_>,
        decode_threshold: i64,
        result: &mut TensorMut<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_split_decodes_prefills_and_extends_capturable_args_t {
            struct_size: size_of::<sys::cattn_split_decodes_prefills_and_extends_capturable_args_t>(
            ),
            query_start_loc: args.query_start_loc.as_raw(),
            seq_lens_upper_bound: seq_lens_upper_bound.as_raw(),
            num_actual_tokens: opt_raw(args.num_actual_tokens.as_ref()),
            max_query_len: opt_raw(args.max_query_len.as_ref()),
            decode_threshold,
            result: result.as_raw(),
            stream: args.stream.as_raw(),
        };
        let f = entry!(self, split_decodes_prefills_and_extends_capturable)?;
        // SAFETY: the views in `raw` are live; `result` is borrowed mutably for the call.
        self.check_in(
            unsafe { f(&raw) },
            "split_decodes_prefills_and_extends_capturable",
        )
    }
}
