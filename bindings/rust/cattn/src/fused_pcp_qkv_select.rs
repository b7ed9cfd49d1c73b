//! The fused PCP Q/K/V select (vLLM's fused_pcp_qkv_select).

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{Stream, TensorMut, TensorRef};

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

impl Api<'_> {
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
        self.check(unsafe { f(&raw) })
    }
}
