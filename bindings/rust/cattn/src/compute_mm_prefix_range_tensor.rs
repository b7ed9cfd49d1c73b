// SPDX-License-Identifier: Apache-2.0
//! Multimodal prefix ranges (vLLM's compute_mm_prefix_range_tensor and
//! fill_mm_prefix_query_ranges, since 1.1).
//!
//! vLLM's `{request: [(start, end), ...]}` dict is passed in CSR form: request `r`'s ranges are
//! rows `offsets[r]..offsets[r + 1]` of `ranges` (`[n, 2]`); `None` is vLLM's `None`.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/compute_mm_prefix_range_tensor.md` of the libcattn repository; the items here document
//! the Rust side: types, errors, panics and safety.

use std::mem::size_of;
use std::ptr;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{area, len_i64, reported_len, zeroed};
use crate::tensor::{IndexElement, TensorMut, TensorRef};

/// The ranges of each request in CSR form (host tensors, int32/int64).
#[derive(Clone, Debug)]
pub struct MmPrefixRanges<'a> {
    /// `[num_seqs + 1]`, from 0, non-decreasing.
    pub offsets: TensorRef<'a>,
    /// `[n, 2]` (start, end) pairs.
    pub ranges: TensorRef<'a>,
}

/// The padded tensor of [`mm_prefix_range_tensor`]: `[num_seqs, max_ranges, 2]` row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmPrefixRangeTensor {
    /// The requests, the first dimension.
    pub num_seqs: i64,
    /// The ranges per request after padding, the second dimension (>= 1).
    pub max_ranges: i64,
    /// The `(start, end)` pairs row-major, each request's padded with `(0, 0)`.
    pub data: Vec<i32>,
}

fn csr_raw(r: Option<&MmPrefixRanges<'_>>) -> (*const sys::DLTensor, *const sys::DLTensor) {
    r.map_or((ptr::null(), ptr::null()), |r| {
        (r.offsets.as_raw(), r.ranges.as_raw())
    })
}

/// The padded ranges per request, or `None` where vLLM returns `None` (no ranges given, or every
/// request's list empty or exactly `[(0, 0)]`): the size query of
/// [`compute_mm_prefix_range_tensor`].
pub fn compute_mm_prefix_range_tensor_size(
    ranges: Option<&MmPrefixRanges<'_>>,
) -> Result<Option<i64>> {
    Api::linked()?
        .compute_mm_prefix_range_tensor(ranges, None)
        .map_err(|e| e.in_terms_of("compute_mm_prefix_range_tensor_size"))
}

/// Writes vLLM's padded `[num_seqs, max_ranges, 2]` range tensor into `out` (sized by
/// [`compute_mm_prefix_range_tensor_size`]); returns `max_ranges`, or `None` (out untouched).
pub fn compute_mm_prefix_range_tensor(
    ranges: Option<&MmPrefixRanges<'_>>,
    out: &mut TensorMut<'_>,
) -> Result<Option<i64>> {
    Api::linked()?.compute_mm_prefix_range_tensor(ranges, Some(out))
}

/// One call: the padded tensor of per-request range lists (`(start, end)` pairs, values in
/// int32), or `None` as vLLM.
///
/// ```
/// let t = cattn::mm_prefix_range_tensor(&[vec![(0, 4)], vec![], vec![(1, 2), (5, 8)]])?.unwrap();
/// assert_eq!((t.num_seqs, t.max_ranges), (3, 2));
/// assert_eq!(t.data, [0, 4, 0, 0, 0, 0, 0, 0, 1, 2, 5, 8]);
/// assert!(cattn::mm_prefix_range_tensor(&[vec![(0, 0)], vec![]])?.is_none());
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn mm_prefix_range_tensor<R: AsRef<[(i64, i64)]>>(
    per_request: &[R],
) -> Result<Option<MmPrefixRangeTensor>> {
    Api::linked()?.mm_prefix_range_tensor(per_request)
}

/// One call of [`fill_mm_prefix_query_ranges`] for a host batch: the `(start, end)` range
/// holding each of its `query_start_loc[B]` scheduled tokens, `(-1, -1)` for the tokens no
/// range holds, or `None` when no range holds any (skip the mask; vLLM's `rows == 0`).
/// `per_request` has B lists, or none at all for vLLM's `None`; `query_start_loc` (`[B + 1]`,
/// from 0) and `seq_lens` (`[B]`) are of one element type, int32 or int64.
///
/// ```
/// // One request of 6 tokens, all scheduled; its range covers positions 2 to 4 (inclusive).
/// let rows = cattn::mm_prefix_query_ranges(&[[(2, 4)]], &[0i32, 6], &[6])?.unwrap();
/// assert_eq!(rows, [(-1, -1), (-1, -1), (2, 4), (2, 4), (2, 4), (-1, -1)]);
/// let none: [[(i64, i64); 0]; 0] = [];
/// assert_eq!(cattn::mm_prefix_query_ranges(&none, &[0i32, 6], &[6])?, None);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn mm_prefix_query_ranges<T: IndexElement, R: AsRef<[(i64, i64)]>>(
    per_request: &[R],
    query_start_loc: &[T],
    seq_lens: &[T],
) -> Result<Option<Vec<(i64, i64)>>> {
    Api::linked()?.mm_prefix_query_ranges(per_request, query_start_loc, seq_lens)
}

/// Per-request range lists in CSR form: the offsets `[num_seqs + 1]` and the flat pairs.
fn csr_of<R: AsRef<[(i64, i64)]>>(per_request: &[R]) -> (Vec<i64>, Vec<i64>) {
    let mut offsets = vec![0i64];
    let mut flat = Vec::new();
    for list in per_request {
        for &(a, b) in list.as_ref() {
            flat.push(a);
            flat.push(b);
        }
        offsets.push(len_i64(flat.len() / 2));
    }
    (offsets, flat)
}

/// Maps each scheduled query token to the range holding it (the end inclusive, as vLLM):
/// `out` (`[capacity, 2]`, capacity >= the tokens) gets `(start, end)` or `(-1, -1)` per token.
/// Returns the rows written: 0 (out untouched: skip the mask) or the number of tokens.
///
/// ```
/// use cattn::{fill_mm_prefix_query_ranges, MmPrefixRanges, TensorMut, TensorRef};
/// let (offsets, ranges) = ([0i32, 1], [2i32, 4]);
/// let csr = MmPrefixRanges { offsets: TensorRef::from_slice(&offsets), ranges: TensorRef::new(&ranges, &[1, 2])? };
/// let mut out = [0i32; 12];
/// let rows = fill_mm_prefix_query_ranges(Some(&csr), &TensorRef::from_slice(&[0i32, 6]),
///     &TensorRef::from_slice(&[6i32]), &mut TensorMut::new(&mut out, &[6, 2])?)?;
/// assert_eq!(rows, 6);
/// assert_eq!(out, [-1, -1, -1, -1, 2, 4, 2, 4, 2, 4, -1, -1]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn fill_mm_prefix_query_ranges(
    ranges: Option<&MmPrefixRanges<'_>>,
    query_start_loc_cpu: &TensorRef<'_>,
    seq_lens_cpu: &TensorRef<'_>,
    out: &mut TensorMut<'_>,
) -> Result<i64> {
    Api::linked()?.fill_mm_prefix_query_ranges(ranges, query_start_loc_cpu, seq_lens_cpu, out)
}

impl Api<'_> {
    /// [`mm_prefix_range_tensor`] in this library.
    pub fn mm_prefix_range_tensor<R: AsRef<[(i64, i64)]>>(
        self,
        per_request: &[R],
    ) -> Result<Option<MmPrefixRangeTensor>> {
        const FUNCTION: &str = "mm_prefix_range_tensor";
        let (offsets, flat) = csr_of(per_request);
        let csr = MmPrefixRanges {
            offsets: TensorRef::from_slice(&offsets),
            ranges: TensorRef::new(&flat, &[len_i64(flat.len() / 2), 2])?,
        };
        let Some(max_ranges) = self
            .compute_mm_prefix_range_tensor(Some(&csr), None)
            .map_err(|e| e.in_terms_of(FUNCTION))?
        else {
            return Ok(None);
        };
        let per = reported_len(FUNCTION, "a range count", max_ranges)?;
        let entries = area(
            FUNCTION,
            "per_request",
            per_request.len(),
            area(FUNCTION, "per_request", per, 2)?,
        )?;
        let mut data = zeroed(FUNCTION, entries)?;
        let num_seqs = len_i64(per_request.len());
        self.compute_mm_prefix_range_tensor(
            Some(&csr),
            Some(&mut TensorMut::new(&mut data, &[num_seqs, max_ranges, 2])?),
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(Some(MmPrefixRangeTensor {
            num_seqs,
            max_ranges,
            data,
        }))
    }

    /// [`mm_prefix_query_ranges`] in this library.
    pub fn mm_prefix_query_ranges<T: IndexElement, R: AsRef<[(i64, i64)]>>(
        self,
        per_request: &[R],
        query_start_loc: &[T],
        seq_lens: &[T],
    ) -> Result<Option<Vec<(i64, i64)>>> {
        const FUNCTION: &str = "mm_prefix_query_ranges";
        let (offsets, flat) = csr_of(per_request);
        let csr = MmPrefixRanges {
            offsets: TensorRef::from_slice(&offsets),
            ranges: TensorRef::new(&flat, &[len_i64(flat.len() / 2), 2])?,
        };
        // Room for every scheduled token; a last entry the library refuses (negative, or past
        // a decreasing start) gets no room, and the library's check names it.
        let tokens = query_start_loc
            .last()
            .map_or(0, |&t| usize::try_from(t.to_i64()).unwrap_or(0));
        let mut out: Vec<i64> = zeroed(FUNCTION, area(FUNCTION, "query_start_loc", tokens, 2)?)?;
        let rows = self
            .fill_mm_prefix_query_ranges(
                (!per_request.is_empty()).then_some(&csr),
                &TensorRef::from_slice(query_start_loc),
                &TensorRef::from_slice(seq_lens),
                &mut TensorMut::new(&mut out, &[len_i64(tokens), 2])?,
            )
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        if rows == 0 {
            return Ok(None);
        }
        Ok(Some(out.chunks_exact(2).map(|r| (r[0], r[1])).collect()))
    }

    /// [`compute_mm_prefix_range_tensor`] (or, with `out` `None`, its size query) in this
    /// library.
    pub fn compute_mm_prefix_range_tensor(
        self,
        ranges: Option<&MmPrefixRanges<'_>>,
        out: Option<&mut TensorMut<'_>>,
    ) -> Result<Option<i64>> {
        let (range_offsets, ranges) = csr_raw(ranges);
        let mut raw = sys::cattn_mm_prefix_range_tensor_args_t {
            struct_size: size_of::<sys::cattn_mm_prefix_range_tensor_args_t>(),
            range_offsets,
            ranges,
            out: out.map_or(ptr::null_mut(), |o| o.as_raw()),
            max_ranges: 0,
            is_none: 0,
            reserved0: 0,
        };
        let f = entry!(self, compute_mm_prefix_range_tensor)?;
        // SAFETY: every pointer in `raw` is NULL or a view live for the call; `out` is borrowed
        // mutably.
        self.check_in(unsafe { f(&mut raw) }, "compute_mm_prefix_range_tensor")?;
        Ok((raw.is_none == 0).then_some(raw.max_ranges))
    }

    /// [`fill_mm_prefix_query_ranges`] in this library.
    pub fn fill_mm_prefix_query_ranges(
        self,
        ranges: Option<&MmPrefixRanges<'_>>,
        query_start_loc_cpu: &TensorRef<'_>,
        seq_lens_cpu: &TensorRef<'_>,
        out: &mut TensorMut<'_>,
    ) -> Result<i64> {
        let (range_offsets, ranges) = csr_raw(ranges);
        let mut raw = sys::cattn_fill_mm_prefix_query_ranges_args_t {
            struct_size: size_of::<sys::cattn_fill_mm_prefix_query_ranges_args_t>(),
            range_offsets,
            ranges,
            query_start_loc_cpu: query_start_loc_cpu.as_raw(),
            seq_lens_cpu: seq_lens_cpu.as_raw(),
            out: out.as_raw(),
            rows: 0,
        };
        let f = entry!(self, fill_mm_prefix_query_ranges)?;
        // SAFETY: as in compute_mm_prefix_range_tensor.
        self.check_in(unsafe { f(&mut raw) }, "fill_mm_prefix_query_ranges")?;
        Ok(raw.rows)
    }
}
