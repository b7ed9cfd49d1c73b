// SPDX-License-Identifier: Apache-2.0
//! Causal-conv1d launch metadata (vLLM's compute_causal_conv1d_metadata), planned on the host
//! or (since 1.1) computed on the device.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/compute_causal_conv1d_metadata.md` of the libcattn repository; the items here document
//! the Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::{reported_len, zeroed};
use crate::tensor::{raw_out, IndexElement, Stream, TensorMut, TensorRef};

/// The sizes of causal-conv1d's metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CausalConv1dSize {
    /// The number of programs, vLLM's `nums.sum()`.
    pub tot: i64,
    /// The capacity to allocate for `batch_ptr` and `token_chunk_offset_ptr` (vLLM's).
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

/// The outputs of [`compute_causal_conv1d_metadata_capturable`]; each is optional, 1-D int32/int64
/// on `query_start_loc`'s device.
///
/// The per-program outputs hold a capacity of their own length each: `cdiv(max_num_tokens,
/// block_m) + max_num_reqs` holds every batch of at most that many tokens and requests.
#[derive(Debug, Default)]
pub struct CausalConv1dCapturableOutputs<'a> {
    /// `[B]`: programs per request, `ceil(len / block_m)`.
    pub nums: Option<TensorMut<'a>>,
    /// `[capacity]`: the request of each program, then `PAD_SLOT_ID` (-1) past `tot`.
    pub mlist: Option<TensorMut<'a>>,
    /// `[capacity]`: the chunk index of each program within its request, then `PAD_SLOT_ID`
    /// (-1) past `tot`.
    pub offsetlist: Option<TensorMut<'a>>,
    /// `[capacity]`: as `mlist`.
    pub batch_ptr: Option<TensorMut<'a>>,
    /// `[capacity]`: as `offsetlist`.
    pub token_chunk_offset_ptr: Option<TensorMut<'a>>,
    /// `[1]`: the number of programs, vLLM's `nums.sum()` (all of them, also when they do not
    /// fit the capacity).
    pub tot: Option<TensorMut<'a>>,
}

/// Causal-conv1d's launch metadata of one host batch, owned ([`causal_conv1d_metadata`]).
///
/// `mlist.len()` is the number of programs (vLLM's `nums.sum()`, `tot`); `batch_ptr` and
/// `token_chunk_offset_ptr` have the capacity vLLM allocates, `max(1024, tot) * 2`, their
/// entries past `tot` [`crate::PAD_SLOT_ID`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CausalConv1dMetadata<T> {
    /// `[B]`: programs per request, `ceil(len / block_m)`.
    pub nums: Vec<T>,
    /// `[tot]`: the request of each program.
    pub mlist: Vec<T>,
    /// `[tot]`: the chunk index of each program within its request.
    pub offsetlist: Vec<T>,
    /// `[capacity]`: `mlist`, then `PAD_SLOT_ID`.
    pub batch_ptr: Vec<T>,
    /// `[capacity]`: `offsetlist`, then `PAD_SLOT_ID`.
    pub token_chunk_offset_ptr: Vec<T>,
}

/// Causal-conv1d's launch metadata of a host `query_start_loc` (`[B + 1]`, int32 or int64,
/// non-decreasing) with `block_m >= 1` tokens per program, in one call: the size query, the
/// five outputs allocated at their sizes, the call. The outputs have the element type of
/// `query_start_loc`.
///
/// ```
/// let m = cattn::causal_conv1d_metadata(&[0i32, 10, 16, 17], 8)?;
/// assert_eq!(m.nums, [2, 1, 1]);
/// assert_eq!((m.mlist, m.offsetlist), (vec![0, 0, 1, 2], vec![0, 1, 0, 0]));
/// assert_eq!(m.batch_ptr.len(), 2048);
/// assert_eq!(m.batch_ptr[..5], [0, 0, 1, 2, -1]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn causal_conv1d_metadata<T: IndexElement>(
    query_start_loc: &[T],
    block_m: i64,
) -> Result<CausalConv1dMetadata<T>> {
    Api::linked()?.causal_conv1d_metadata(query_start_loc, block_m)
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

/// Computes causal_conv1d's launch metadata on the device from the device `query_start_loc`
/// (`[B + 1]` int32/int64), so that a captured CUDA graph computes it afresh from the batch
/// written into the same buffers before every replay. One kernel on `stream`: no host sync, no
/// allocation, capturable. The values, the padding past `tot` and what the device cannot check
/// are in `docs/api/compute_causal_conv1d_metadata.md`.
///
/// Errors: [`crate::Status::InvalidArgument`] for host tensors (the host has
/// [`compute_causal_conv1d_metadata`]), shapes, dtypes, tensors on different devices, overlaps,
/// `block_m < 1`; [`crate::Status::NotSupported`] in a CPU-only build or without a usable
/// device; [`crate::Status::CudaError`]. Since 1.1.
///
/// ```
/// use cattn::{compute_causal_conv1d_metadata_capturable, CausalConv1dCapturableOutputs, Status,
///             Stream, TensorMut};
/// // Host tensors are refused: this call is for the device.
/// let qsl = [0i32, 10, 16, 17];
/// let mut nums = [0i32; 3];
/// let err = compute_causal_conv1d_metadata_capturable(&(&qsl).into(), 8,
///     &mut CausalConv1dCapturableOutputs {
///         nums: Some(TensorMut::from_slice(&mut nums)),
///         ..Default::default()
///     }, Stream::DEFAULT).unwrap_err();
/// assert_eq!(err.status(), Status::InvalidArgument);
/// assert!(err.message().starts_with(
///     "cattn::compute_causal_conv1d_metadata_capturable: query_start_loc is not device memory"));
/// ```
///
/// On the device (the pointers are CUDA allocations of the caller's):
///
/// ```no_run
/// # use std::ffi::c_void;
/// use cattn::{compute_causal_conv1d_metadata_capturable, CausalConv1dCapturableOutputs, DataType,
///             Device, Stream, TensorMut, TensorRef};
/// # let (d_qsl, d_mlist, d_tot): (*const c_void, *mut c_void, *mut c_void) = unimplemented!();
/// # let stream = Stream::DEFAULT;
/// let (max_num_reqs, max_num_tokens, block_m) = (256i64, 8192i64, 8i64);
/// let capacity = (max_num_tokens + block_m - 1) / block_m + max_num_reqs;
/// // SAFETY: device memory of these shapes, alive until the stream's work has completed.
/// let (qsl, mlist, tot) = unsafe {(
///     TensorRef::from_raw_parts(d_qsl, Device::Cuda(0), DataType::I32, &[max_num_reqs + 1],
///                               None, 0),
///     TensorMut::from_raw_parts(d_mlist, Device::Cuda(0), DataType::I32, &[capacity], None, 0),
///     TensorMut::from_raw_parts(d_tot, Device::Cuda(0), DataType::I64, &[1], None, 0),
/// )};
/// compute_causal_conv1d_metadata_capturable(&qsl, block_m, &mut CausalConv1dCapturableOutputs {
///     mlist: Some(mlist),
///     tot: Some(tot),
///     ..Default::default()
/// }, stream)?;
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn compute_causal_conv1d_metadata_capturable(
    query_start_loc: &TensorRef<'_>,
    block_m: i64,
    out: &mut CausalConv1dCapturableOutputs<'_>,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.compute_causal_conv1d_metadata_capturable(query_start_loc, block_m, out, stream)
}

impl Api<'_> {
    /// [`causal_conv1d_metadata`] in this library.
    pub fn causal_conv1d_metadata<T: IndexElement>(
        self,
        query_start_loc: &[T],
        block_m: i64,
    ) -> Result<CausalConv1dMetadata<T>> {
        const FUNCTION: &str = "causal_conv1d_metadata";
        let qsl = TensorRef::from_slice(query_start_loc);
        let size = self
            .compute_causal_conv1d_metadata_size(&qsl, block_m)
            .map_err(|e| e.in_terms_of(FUNCTION))?;
        let tot = reported_len(FUNCTION, "a program count", size.tot)?;
        let capacity = reported_len(FUNCTION, "a capacity", size.capacity)?;
        let mut m = CausalConv1dMetadata {
            nums: zeroed(FUNCTION, query_start_loc.len().saturating_sub(1))?,
            mlist: zeroed(FUNCTION, tot)?,
            offsetlist: zeroed(FUNCTION, tot)?,
            batch_ptr: zeroed(FUNCTION, capacity)?,
            token_chunk_offset_ptr: zeroed(FUNCTION, capacity)?,
        };
        self.compute_causal_conv1d_metadata(
            &qsl,
            block_m,
            &mut CausalConv1dOutputs {
                nums: Some(TensorMut::from_slice(&mut m.nums)),
                mlist: Some(TensorMut::from_slice(&mut m.mlist)),
                offsetlist: Some(TensorMut::from_slice(&mut m.offsetlist)),
                batch_ptr: Some(TensorMut::from_slice(&mut m.batch_ptr)),
                token_chunk_offset_ptr: Some(TensorMut::from_slice(&mut m.token_chunk_offset_ptr)),
            },
            Stream::DEFAULT,
        )
        .map_err(|e| e.in_terms_of(FUNCTION))?;
        Ok(m)
    }

    /// [`compute_causal_conv1d_metadata_size`] in this library.
    pub fn compute_causal_conv1d_metadata_size(
        self,
        query_start_loc_cpu: &TensorRef<'_>,
        block_m: i64,
    ) -> Result<CausalConv1dSize> {
        let f = entry!(self, compute_causal_conv1d_metadata_size)?;
        let (mut tot, mut capacity) = (0i64, 0i64);
        // SAFETY: the tensor and both out-pointers are valid for the call.
        self.check_in(
            unsafe {
                f(
                    query_start_loc_cpu.as_raw(),
                    block_m,
                    &mut tot,
                    &mut capacity,
                )
            },
            "compute_causal_conv1d_metadata_size",
        )?;
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
        self.check_in(unsafe { f(&mut raw) }, "compute_causal_conv1d_metadata")?;
        Ok(raw.tot)
    }

    /// [`compute_causal_conv1d_metadata_capturable`] in this library.
    pub fn compute_causal_conv1d_metadata_capturable(
        self,
        query_start_loc: &TensorRef<'_>,
        block_m: i64,
        out: &mut CausalConv1dCapturableOutputs<'_>,
        stream: Stream,
    ) -> Result<()> {
        let raw = sys::cattn_causal_conv1d_metadata_capturable_args_t {
            struct_size: size_of::<sys::cattn_causal_conv1d_metadata_capturable_args_t>(),
            query_start_loc: query_start_loc.as_raw(),
            block_m,
            nums: raw_out(out.nums.as_mut()),
            mlist: raw_out(out.mlist.as_mut()),
            offsetlist: raw_out(out.offsetlist.as_mut()),
            batch_ptr: raw_out(out.batch_ptr.as_mut()),
            token_chunk_offset_ptr: raw_out(out.token_chunk_offset_ptr.as_mut()),
            tot: raw_out(out.tot.as_mut()),
            stream: stream.as_raw(),
        };
        let f = entry!(self, compute_causal_conv1d_metadata_capturable)?;
        // SAFETY: the views live through the call; the outputs are borrowed mutably, and their
        // device memory is vouched for by whoever made the views (from_raw_parts).
        self.check_in(
            unsafe { f(&raw) },
            "compute_causal_conv1d_metadata_capturable",
        )
    }
}
