//! Causal-conv1d launch metadata (vLLM's compute_causal_conv1d_metadata).

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{raw_out, Stream, TensorMut, TensorRef};

/// The sizes of causal-conv1d's metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CausalConv1dSize {
    /// The number of programs, vLLM's `nums.sum()`.
    pub tot: i64,
    /// The capacity vLLM allocates for `batch_ptr` and `token_chunk_offset_ptr`,
    /// `max(1024, tot) * 2` (any capacity `>= tot` is accepted).
    pub capacity: i64,
}

/// The outputs of [`compute_causal_conv1d_metadata`]; each is optional, 1-D int32/int64.
#[derive(Debug, Default)]
pub struct CausalConv1dOutputs<'a> {
    /// Exactly `[B]`: programs per request, `ceil(len / block_m)`.
    pub nums: Option<TensorMut<'a>>,
    /// `[>= tot]`: the request of each program.
    pub mlist: Option<TensorMut<'a>>,
    /// `[>= tot]`: the chunk index of each program within its request.
    pub offsetlist: Option<TensorMut<'a>>,
    /// `[capacity >= tot]`: mlist, then `PAD_SLOT_ID` (-1) up to the capacity.
    pub batch_ptr: Option<TensorMut<'a>>,
    /// `[capacity >= tot]`: offsetlist, then `PAD_SLOT_ID` (-1) up to the capacity.
    pub token_chunk_offset_ptr: Option<TensorMut<'a>>,
}

/// The sizes of the metadata for a host `query_start_loc_cpu` (`[B + 1]`, int32/int64,
/// non-decreasing) and `block_m >= 1` tokens per program.
///
/// ```
/// let qsl = [0i32, 10, 16, 17];
/// let size = cattn::compute_causal_conv1d_metadata_size(&(&qsl).into(), 8)?;
/// assert_eq!((size.tot, size.capacity), (4, 2048));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_causal_conv1d_metadata_size(
    query_start_loc_cpu: &TensorRef<'_>,
    block_m: i64,
) -> Result<CausalConv1dSize> {
    Api::linked()?.compute_causal_conv1d_metadata_size(query_start_loc_cpu, block_m)
}

/// Computes causal_conv1d's launch metadata into the outputs that are present and returns
/// `tot`, the number of programs.
///
/// ```
/// use cattn::{compute_causal_conv1d_metadata, CausalConv1dOutputs, Stream, TensorMut};
/// let qsl = [0i64, 10, 16, 17];
/// let mut nums = [0i32; 3];
/// let mut mlist = [0i32; 4];
/// let tot = compute_causal_conv1d_metadata(&(&qsl).into(), 8, &mut CausalConv1dOutputs {
///     nums: Some(TensorMut::from_slice(&mut nums)),
///     mlist: Some(TensorMut::from_slice(&mut mlist)),
///     ..Default::default()
/// }, Stream::DEFAULT)?;
/// assert_eq!(tot, 4);
/// assert_eq!((nums, mlist), ([2, 1, 1], [0, 0, 1, 2]));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_causal_conv1d_metadata(
    query_start_loc_cpu: &TensorRef<'_>,
    block_m: i64,
    out: &mut CausalConv1dOutputs<'_>,
    stream: Stream,
) -> Result<i64> {
    Api::linked()?.compute_causal_conv1d_metadata(query_start_loc_cpu, block_m, out, stream)
}

impl Api<'_> {
    /// [`compute_causal_conv1d_metadata_size`] in this library.
    pub fn compute_causal_conv1d_metadata_size(
        self,
        query_start_loc_cpu: &TensorRef<'_>,
        block_m: i64,
    ) -> Result<CausalConv1dSize> {
        let f = entry!(self, compute_causal_conv1d_metadata_size)?;
        let (mut tot, mut capacity) = (0i64, 0i64);
        // SAFETY: the tensor and both out-pointers are valid for the call.
        self.check(unsafe {
            f(
                query_start_loc_cpu.as_raw(),
                block_m,
                &mut tot,
                &mut capacity,
            )
        })?;
        Ok(CausalConv1dSize { tot, capacity })
    }

    /// [`compute_causal_conv1d_metadata`] in this library.
    pub fn compute_causal_conv1d_metadata(
        self,
        query_start_loc_cpu: &TensorRef<'_>,
        block_m: i64,
        out: &mut CausalConv1dOutputs<'_>,
        stream: Stream,
    ) -> Result<i64> {
        let mut raw = sys::cattn_causal_conv1d_metadata_args_t {
            struct_size: size_of::<sys::cattn_causal_conv1d_metadata_args_t>(),
            query_start_loc_cpu: query_start_loc_cpu.as_raw(),
            block_m,
            nums: raw_out(out.nums.as_mut()),
            mlist: raw_out(out.mlist.as_mut()),
            offsetlist: raw_out(out.offsetlist.as_mut()),
            batch_ptr: raw_out(out.batch_ptr.as_mut()),
            token_chunk_offset_ptr: raw_out(out.token_chunk_offset_ptr.as_mut()),
            tot: 0,
            stream: stream.as_raw(),
        };
        let f = entry!(self, compute_causal_conv1d_metadata)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably.
        self.check(unsafe { f(&mut raw) })?;
        Ok(raw.tot)
    }
}
