// SPDX-License-Identifier: Apache-2.0
//! The fused PCP Q/K/V select (vLLM's fused_pcp_qkv_select).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/fused_pcp_qkv_select.md` of the libcattn repository; the items here document the Rust
//! side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result};
use crate::one_call::{area, len_i64, reported_len, zeroed};
use crate::tensor::{Element, IndexElement, Stream, TensorMut, TensorRef};

/// The inputs of [`fused_pcp_qkv_select`].
#[derive(Clone, Debug)]
pub struct FusedPcpQkvSelectArgs<'a> {
    /// `[Nq, H, Dq]`, this rank's queries; last-dimension stride 1.
    pub q: TensorRef<'a>,
    /// `[>= W * query_start_loc[B], H, Dk]`, the keys of all ranks.
    pub k: TensorRef<'a>,
    /// `[>= W * query_start_loc[B], H, Dv]`, the values of all ranks.
    pub v: TensorRef<'a>,
    /// `[B + 1]` int32/int64, even, non-decreasing, `query_start_loc[B] <= Nq`.
    pub query_start_loc: TensorRef<'a>,
    /// W >= 1.
    pub pcp_world_size: i64,
    /// r in `[0, W)`.
    pub pcp_rank: i64,
    /// For CUDA tensors.
    pub stream: Stream,
}

/// The outputs of [`fused_pcp_qkv_select`], compact, each of its input's dtype.
#[derive(Debug)]
pub struct FusedPcpQkvSelectOutputs<'a> {
    /// `[Nq / 2, H, Dq]`.
    pub q_head: TensorMut<'a>,
    /// `[Nq / 2 * (r + 1), H, Dk]`.
    pub k_head: TensorMut<'a>,
    /// `[Nq / 2 * (r + 1), H, Dv]`.
    pub v_head: TensorMut<'a>,
    /// `[Nq / 2, H, Dq]`.
    pub q_tail: TensorMut<'a>,
    /// `[Nq / 2 * (2W - r), H, Dk]`.
    pub k_tail: TensorMut<'a>,
    /// `[Nq / 2 * (2W - r), H, Dv]`.
    pub v_tail: TensorMut<'a>,
}

/// Selects, for every request, the head and tail halves of this rank's queries and the K/V
/// rows each half attends to, as vLLM's Triton kernel does (see `cattn.h` for the exact rows).
/// Elements of 1, 2, 4 or 8 bytes; rows past `query_start_loc[B] / 2` are not written.
///
/// ```
/// use cattn::{fused_pcp_qkv_select, FusedPcpQkvSelectArgs, FusedPcpQkvSelectOutputs, Stream,
///             TensorMut, TensorRef};
/// // One request of 4 tokens, world size 1: the head is rows 0-1, the tail rows 2-3.
/// let q = [10.0f32, 11.0, 12.0, 13.0];
/// let kv = [20.0f32, 21.0, 22.0, 23.0];
/// let qsl = [0i32, 4];
/// let args = FusedPcpQkvSelectArgs {
///     q: TensorRef::new(&q, &[4, 1, 1])?,
///     k: TensorRef::new(&kv, &[4, 1, 1])?,
///     v: TensorRef::new(&kv, &[4, 1, 1])?,
///     query_start_loc: TensorRef::from_slice(&qsl),
///     pcp_world_size: 1,
///     pcp_rank: 0,
///     stream: Stream::DEFAULT,
/// };
/// let (mut qh, mut kh, mut vh) = ([0f32; 2], [0f32; 2], [0f32; 2]);
/// let (mut qt, mut kt, mut vt) = ([0f32; 2], [0f32; 4], [0f32; 4]);
/// fused_pcp_qkv_select(&args, &mut FusedPcpQkvSelectOutputs {
///     q_head: TensorMut::new(&mut qh, &[2, 1, 1])?,
///     k_head: TensorMut::new(&mut kh, &[2, 1, 1])?,
///     v_head: TensorMut::new(&mut vh, &[2, 1, 1])?,
///     q_tail: TensorMut::new(&mut qt, &[2, 1, 1])?,
///     k_tail: TensorMut::new(&mut kt, &[4, 1, 1])?,
///     v_tail: TensorMut::new(&mut vt, &[4, 1, 1])?,
/// })?;
/// assert_eq!((qh, qt), ([10.0, 11.0], [12.0, 13.0]));
/// assert_eq!(kt, kv);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn fused_pcp_qkv_select(
    args: &FusedPcpQkvSelectArgs<'_>,
    out: &mut FusedPcpQkvSelectOutputs<'_>,
) -> Result<()> {
    Api::linked()?.fused_pcp_qkv_select(args, out)
}

/// The row counts of [`fused_pcp_qkv_select`]'s outputs (`cattn_fused_pcp_qkv_select_size`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FusedPcpQkvSelectRows {
    /// `q_head` and `q_tail`: `Nq / 2`.
    pub q: i64,
    /// `k_head` and `v_head`: `Nq / 2 * (r + 1)`.
    pub kv_head: i64,
    /// `k_tail` and `v_tail`: `Nq / 2 * (2W - r)`.
    pub kv_tail: i64,
}

/// The row counts of [`fused_pcp_qkv_select`]'s outputs for `num_q_rows` query rows (Nq >= 0)
/// at PCP world size W (>= 1) and rank r (in `[0, W)`), as the library computes them; the one
/// place these sizes are derived. Works with a library table that has the entry (libcattn 1.1
/// and later); an older one gives [`crate::Status::NotSupported`].
///
/// ```
/// let rows = cattn::fused_pcp_qkv_select_size(8, 2, 1)?;
/// assert_eq!((rows.q, rows.kv_head, rows.kv_tail), (4, 8, 12));
/// let err = cattn::fused_pcp_qkv_select_size(8, 2, 2).unwrap_err();
/// assert_eq!(
///     err.message(),
///     "cattn::fused_pcp_qkv_select_size: pcp_rank is out of range (got 2, expected [0, 2))"
/// );
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn fused_pcp_qkv_select_size(
    num_q_rows: i64,
    pcp_world_size: i64,
    pcp_rank: i64,
) -> Result<FusedPcpQkvSelectRows> {
    Api::linked()?.fused_pcp_qkv_select_size(num_q_rows, pcp_world_size, pcp_rank)
}

/// A compact host tensor `[rows, heads, head_dim]` of one element type, the input of
/// [`pcp_qkv_halves`]: `data` holds whole rows of `heads * head_dim` elements.
#[derive(Clone, Copy, Debug)]
pub struct HeadRows<'a, E> {
    /// The elements, row-major.
    pub data: &'a [E],
    /// H, `>= 1`.
    pub heads: usize,
    /// D, `>= 1`.
    pub head_dim: usize,
}

impl<E: Element> HeadRows<'_, E> {
    /// The rows, after checking that `data` holds whole rows (in the name of `function`'s
    /// argument `name`).
    fn rows(&self, function: &str, name: &str) -> Result<usize> {
        for (field, value) in [("heads", self.heads), ("head_dim", self.head_dim)] {
            if value == 0 {
                return Err(Error::argument(
                    function,
                    &format!("{name}.{field}"),
                    "is 0",
                    0,
                    "at least 1",
                ));
            }
        }
        let row = area(function, name, self.heads, self.head_dim)?;
        if self.data.len() % row != 0 {
            return Err(Error::argument(
                function,
                &format!("{name}.data"),
                "does not hold whole rows",
                format_args!("{} elements", self.data.len()),
                format_args!("a multiple of heads * head_dim = {row}"),
            ));
        }
        Ok(self.data.len() / row)
    }

    fn view(&self, rows: usize) -> Result<TensorRef<'_>> {
        TensorRef::new(
            self.data,
            &[len_i64(rows), len_i64(self.heads), len_i64(self.head_dim)],
        )
    }
}

/// The six selections of [`pcp_qkv_halves`], owned: compact `[rows, H, D]` buffers of the
/// input's element type and head sizes. Rows past `query_start_loc[B] / 2` (a padded batch)
/// are zero, the library leaving them unwritten.
#[derive(Clone, Debug, PartialEq)]
pub struct PcpQkvHalves<E> {
    /// `[Nq / 2, H, Dq]`.
    pub q_head: Vec<E>,
    /// `[Nq / 2 * (r + 1), H, Dk]`.
    pub k_head: Vec<E>,
    /// `[Nq / 2 * (r + 1), H, Dv]`.
    pub v_head: Vec<E>,
    /// `[Nq / 2, H, Dq]`.
    pub q_tail: Vec<E>,
    /// `[Nq / 2 * (2W - r), H, Dk]`.
    pub k_tail: Vec<E>,
    /// `[Nq / 2 * (2W - r), H, Dv]`.
    pub v_tail: Vec<E>,
}

/// [`fused_pcp_qkv_select`] of host tensors in one call: the six outputs allocated at the sizes
/// the rank's position fixes (with Nq the rows of `q`), the selection, the outputs returned.
/// `q`, `k` and `v` are of one element type; `query_start_loc` (`[B + 1]`, int32 or int64) is
/// even and non-decreasing.
///
/// ```
/// use cattn::{pcp_qkv_halves, HeadRows};
/// // One request of 4 tokens, world size 1: the head is rows 0-1, the tail rows 2-3.
/// let (q, kv) = ([10.0f32, 11.0, 12.0, 13.0], [20.0f32, 21.0, 22.0, 23.0]);
/// let rows = |data| HeadRows { data, heads: 1, head_dim: 1 };
/// let h = pcp_qkv_halves(rows(&q), rows(&kv), rows(&kv), &[0i32, 4], 1, 0)?;
/// assert_eq!((h.q_head, h.q_tail), (vec![10.0, 11.0], vec![12.0, 13.0]));
/// assert_eq!(h.k_tail, kv);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn pcp_qkv_halves<E: Element, T: IndexElement>(
    q: HeadRows<'_, E>,
    k: HeadRows<'_, E>,
    v: HeadRows<'_, E>,
    query_start_loc: &[T],
    pcp_world_size: i64,
    pcp_rank: i64,
) -> Result<PcpQkvHalves<E>> {
    Api::linked()?.pcp_qkv_halves(q, k, v, query_start_loc, pcp_world_size, pcp_rank)
}

impl Api<'_> {
    /// [`pcp_qkv_halves`] in this library.
    pub fn pcp_qkv_halves<E: Element, T: IndexElement>(
        self,
        q: HeadRows<'_, E>,
        k: HeadRows<'_, E>,
        v: HeadRows<'_, E>,
        query_start_loc: &[T],
        pcp_world_size: i64,
        pcp_rank: i64,
    ) -> Result<PcpQkvHalves<E>> {
        const FUNCTION: &str = "pcp_qkv_halves";
        let (nq, nk, nv) = (
            q.rows(FUNCTION, "q")?,
            k.rows(FUNCTION, "k")?,
            v.rows(FUNCTION, "v")?,
        );
        // The outputs' rows, from the library (which refuses a world size or rank out of
        // range, naming it).
        let rows = self
            .fused_pcp_qkv_select_size(len_i64(nq), pcp_world_size, pcp_rank)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let alloc = |rows: i64, t: &HeadRows<'_, E>, name: &str| -> Result<(Vec<E>, [i64; 3])> {
            let n = reported_len(FUNCTION, "a row count", rows)?;
            let data = zeroed(FUNCTION, area(FUNCTION, name, n, t.heads * t.head_dim)?)?;
            Ok((data, [rows, len_i64(t.heads), len_i64(t.head_dim)]))
        };
        let (mut qh, qh_shape) = alloc(rows.q, &q, "q")?;
        let (mut qt, qt_shape) = alloc(rows.q, &q, "q")?;
        let (mut kh, kh_shape) = alloc(rows.kv_head, &k, "k")?;
        let (mut kt, kt_shape) = alloc(rows.kv_tail, &k, "k")?;
        let (mut vh, vh_shape) = alloc(rows.kv_head, &v, "v")?;
        let (mut vt, vt_shape) = alloc(rows.kv_tail, &v, "v")?;
        let args = FusedPcpQkvSelectArgs {
            q: q.view(nq)?,
            k: k.view(nk)?,
            v: v.view(nv)?,
            query_start_loc: TensorRef::from_slice(query_start_loc),
            pcp_world_size,
            pcp_rank,
            stream: Stream::DEFAULT,
        };
        self.fused_pcp_qkv_select(
            &args,
            &mut FusedPcpQkvSelectOutputs {
                q_head: TensorMut::new(&mut qh, &qh_shape)?,
                k_head: TensorMut::new(&mut kh, &kh_shape)?,
                v_head: TensorMut::new(&mut vh, &vh_shape)?,
                q_tail: TensorMut::new(&mut qt, &qt_shape)?,
                k_tail: TensorMut::new(&mut kt, &kt_shape)?,
                v_tail: TensorMut::new(&mut vt, &vt_shape)?,
            },
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(PcpQkvHalves {
            q_head: qh,
            k_head: kh,
            v_head: vh,
            q_tail: qt,
            k_tail: kt,
            v_tail: vt,
        })
    }

    /// [`fused_pcp_qkv_select`] in this library.
    pub fn fused_pcp_qkv_select(
        self,
        args: &FusedPcpQkvSelectArgs<'_>,
        out: &mut FusedPcpQkvSelectOutputs<'_>,
    ) -> Result<()> {
        let raw = sys::cattn_fused_pcp_qkv_select_args_t {
            struct_size: size_of::<sys::cattn_fused_pcp_qkv_select_args_t>(),
            q: args.q.as_raw(),
            k: args.k.as_raw(),
            v: args.v.as_raw(),
            query_start_loc: args.query_start_loc.as_raw(),
            pcp_world_size: args.pcp_world_size,
            pcp_rank: args.pcp_rank,
            q_head: out.q_head.as_raw(),
            k_head: out.k_head.as_raw(),
            v_head: out.v_head.as_raw(),
            q_tail: out.q_tail.as_raw(),
            k_tail: out.k_tail.as_raw(),
            v_tail: out.v_tail.as_raw(),
            stream: args.stream.as_raw(),
        };
        let f = entry!(self, fused_pcp_qkv_select)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably (so they
        // are distinct from each other and from the shared inputs).
        self.check_in(unsafe { f(&raw) }, "fused_pcp_qkv_select")
    }

    /// [`fused_pcp_qkv_select_size`] in this library.
    pub fn fused_pcp_qkv_select_size(
        self,
        num_q_rows: i64,
        pcp_world_size: i64,
        pcp_rank: i64,
    ) -> Result<FusedPcpQkvSelectRows> {
        let f = entry!(self, fused_pcp_qkv_select_size)?;
        let mut rows = FusedPcpQkvSelectRows::default();
        // SAFETY: the three outputs are valid, distinct host pointers for the call.
        self.check_in(
            unsafe {
                f(
                    num_q_rows,
                    pcp_world_size,
                    pcp_rank,
                    &mut rows.q,
                    &mut rows.kv_head,
                    &mut rows.kv_tail,
                )
            },
            "fused_pcp_qkv_select_size",
        )?;
        Ok(rows)
    }
}
