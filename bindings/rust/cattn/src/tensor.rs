// SPDX-License-Identifier: Apache-2.0
//! Borrowed DLPack tensor views and CUDA streams.
//!
//! libcattn reads and writes caller-owned memory described by `DLTensor`s. [`TensorRef`] (an
//! input) and [`TensorMut`] (an output) are such descriptions that own their shape and stride
//! arrays and borrow the data: from a host slice, checked so that every element the view
//! reaches lies inside the slice, or (`unsafe`) from any pointer, such as device memory.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/conventions.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;

use cattn_sys as sys;

use crate::error::{Error, Result};

/// A DLPack element type: type code, bits and lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataType {
    /// `kDLInt`, `kDLUInt`, `kDLFloat`, `kDLBfloat`, ...
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes per element (1 for scalars).
    pub lanes: u16,
}

impl DataType {
    /// int8.
    pub const I8: DataType = DataType::scalar(sys::kDLInt, 8);
    /// int16.
    pub const I16: DataType = DataType::scalar(sys::kDLInt, 16);
    /// int32, one of libcattn's two index dtypes.
    pub const I32: DataType = DataType::scalar(sys::kDLInt, 32);
    /// int64, one of libcattn's two index dtypes.
    pub const I64: DataType = DataType::scalar(sys::kDLInt, 64);
    /// uint8 (also the one-byte bools of `is_prefilling`).
    pub const U8: DataType = DataType::scalar(sys::kDLUInt, 8);
    /// uint16.
    pub const U16: DataType = DataType::scalar(sys::kDLUInt, 16);
    /// uint32.
    pub const U32: DataType = DataType::scalar(sys::kDLUInt, 32);
    /// uint64.
    pub const U64: DataType = DataType::scalar(sys::kDLUInt, 64);
    /// IEEE float16.
    pub const F16: DataType = DataType::scalar(sys::kDLFloat, 16);
    /// bfloat16.
    pub const BF16: DataType = DataType::scalar(sys::kDLBfloat, 16);
    /// IEEE float32.
    pub const F32: DataType = DataType::scalar(sys::kDLFloat, 32);
    /// IEEE float64.
    pub const F64: DataType = DataType::scalar(sys::kDLFloat, 64);
    /// DLPack's bool (`kDLBool`, code 6, one byte per entry): the flag tensors of the
    /// speculative-decoding calls ([`TensorRef::from_bools`]). The DLPack header the bindings
    /// are generated from predates the code, so it is stated here.
    pub const BOOL: DataType = DataType {
        code: 6,
        bits: 8,
        lanes: 1,
    };

    const fn scalar(code: sys::DLDataTypeCode, bits: u8) -> DataType {
        // DLPack stores the code in a uint8_t; every code it defines fits.
        DataType {
            code: code as u8,
            bits,
            lanes: 1,
        }
    }

    fn to_raw(self) -> sys::DLDataType {
        sys::DLDataType {
            code: self.code,
            bits: self.bits,
            lanes: self.lanes,
        }
    }

    fn from_raw(raw: sys::DLDataType) -> DataType {
        DataType {
            code: raw.code,
            bits: raw.bits,
            lanes: raw.lanes,
        }
    }
}

/// Where a tensor's bytes live (`DLDevice`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Ordinary host memory (`kDLCPU`).
    Cpu,
    /// Pinned host memory (`kDLCUDAHost`); libcattn treats it as host memory.
    CudaHost,
    /// Memory of the CUDA device with this ordinal (`kDLCUDA`).
    Cuda(i32),
    /// Any other DLPack device.
    Other {
        /// The `DLDeviceType` value.
        device_type: u32,
        /// The device ordinal.
        device_id: i32,
    },
}

impl Device {
    fn to_raw(self) -> sys::DLDevice {
        let (device_type, device_id) = match self {
            Device::Cpu => (sys::kDLCPU, 0),
            Device::CudaHost => (sys::kDLCUDAHost, 0),
            Device::Cuda(id) => (sys::kDLCUDA, id),
            Device::Other {
                device_type,
                device_id,
            } => (device_type, device_id),
        };
        sys::DLDevice {
            device_type,
            device_id,
        }
    }

    fn from_raw(raw: sys::DLDevice) -> Device {
        match raw.device_type {
            sys::kDLCPU => Device::Cpu,
            sys::kDLCUDAHost => Device::CudaHost,
            sys::kDLCUDA => Device::Cuda(raw.device_id),
            device_type => Device::Other {
                device_type,
                device_id: raw.device_id,
            },
        }
    }
}

mod sealed {
    /// Seals [`super::Element`]: the DLPack type of each element is fixed in this crate.
    pub trait Sealed: Copy {
        /// The zero of the type, which the one-call helpers fill their outputs with.
        const ZERO: Self;
    }

    /// Seals [`super::IndexElement`]: libcattn's index and length tensors are int32 or int64.
    pub trait Index {}
}

/// A Rust type whose slices can be viewed as tensors: the fixed-width integers and floats.
///
/// Sealed: the DLPack type of each is fixed here. Other element types (bf16, fp8, ...) have
/// the same width as one of these and can be viewed as such where only the width matters
/// (fused_pcp_qkv_select and pcp_kv_allgather_and_restore), or through [`TensorRef::from_raw_parts`].
pub trait Element: Copy + sealed::Sealed {
    /// The DLPack type of the element.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dtype:ident, $zero:expr);* $(;)?) => {$(
        impl sealed::Sealed for $t {
            const ZERO: $t = $zero;
        }
        impl Element for $t {
            const DTYPE: DataType = DataType::$dtype;
        }
    )*};
}

element!(i8 => I8, 0; i16 => I16, 0; i32 => I32, 0; i64 => I64, 0; u8 => U8, 0; u16 => U16, 0;
         u32 => U32, 0; u64 => U64, 0; f32 => F32, 0.0; f64 => F64, 0.0);

/// An element type of libcattn's index and length tensors: `i32` or `i64`, nothing else.
///
/// The one-call helpers ([`crate::pcp_query_restore_idx`], [`crate::dcp_local_seq_lens`],
/// [`crate::causal_conv1d_metadata`], ...) take and return slices and `Vec`s of one
/// `IndexElement` type, so a batch of either index dtype is computed without a conversion, and
/// any other element type is refused when the program is compiled. Sealed: no other type can
/// implement it.
///
/// The tensor forms of the utilities take [`TensorRef`] / [`TensorMut`] views instead, whose
/// element type is a run-time [`DataType`] (a view may describe device memory of any DLPack
/// type); there the library refuses an index tensor that is not int32 or int64, with
/// [`crate::Status::InvalidArgument`].
///
/// ```
/// // int32 in, int32 out; int64 in, int64 out.
/// let idx32: Vec<i32> = cattn::pcp_query_restore_idx(&[0i32, 4])?;
/// let idx64: Vec<i64> = cattn::pcp_query_restore_idx(&[0i64, 4])?;
/// assert_eq!(idx32, [0, 1, 2, 3]);
/// assert_eq!(idx64, [0, 1, 2, 3]);
/// # Ok::<(), cattn::Error>(())
/// ```
///
/// A float "index" tensor does not compile (`f32` is not an `IndexElement`):
///
/// ```compile_fail,E0277
/// let idx = cattn::pcp_query_restore_idx(&[0.0f32, 8.0, 20.0]);
/// ```
///
/// Nor does an unsigned one, which libcattn's int32/int64 index tensors cannot hold:
///
/// ```compile_fail,E0277
/// let lens = cattn::num_computed_tokens(&[0u32, 3, 7], &[5, 9]);
/// ```
pub trait IndexElement: Element + Ord + Default + fmt::Debug + Send + Sync + sealed::Index {
    /// The value, widened exactly to `i64`.
    fn to_i64(self) -> i64;
}

impl sealed::Index for i32 {}
impl IndexElement for i32 {
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
}

impl sealed::Index for i64 {}
impl IndexElement for i64 {
    fn to_i64(self) -> i64 {
        self
    }
}

/// The shared part of both views: the `DLTensor` and the arrays it points into.
struct View {
    dl: sys::DLTensor,
    // The DLTensor points into these heap buffers, which stay put when the View moves. They
    // are Vecs rather than boxes so that moving them does not assert uniqueness over the
    // buffer the DLTensor also points into.
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

impl View {
    fn new(
        data: *mut c_void,
        device: Device,
        dtype: DataType,
        shape: &[i64],
        strides: Option<&[i64]>,
        byte_offset: u64,
    ) -> View {
        let mut shape = shape.to_vec();
        let mut strides = strides.map(<[i64]>::to_vec);
        let dl = sys::DLTensor {
            data,
            device: device.to_raw(),
            // More than i32::MAX dimensions: refused by the safe constructors, the caller's
            // responsibility in from_raw_parts.
            ndim: shape.len() as i32,
            dtype: dtype.to_raw(),
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset,
        };
        View { dl, shape, strides }
    }

    fn duplicate(&self) -> View {
        View::new(
            self.dl.data,
            Device::from_raw(self.dl.device),
            DataType::from_raw(self.dl.dtype),
            &self.shape,
            self.strides.as_deref(),
            self.dl.byte_offset,
        )
    }
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("data", &self.dl.data)
            .field("device", &Device::from_raw(self.dl.device))
            .field("dtype", &DataType::from_raw(self.dl.dtype))
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("byte_offset", &self.dl.byte_offset)
            .finish()
    }
}

/// Checks a host view against its slice: non-negative sizes and strides, and every element the
/// view reaches inside `len` elements. The error names `function`, the constructor.
fn check_host_view(
    function: &str,
    len: usize,
    shape: &[i64],
    strides: Option<&[i64]>,
) -> Result<()> {
    if shape.len() > i32::MAX as usize {
        return Err(Error::argument(
            function,
            "shape",
            "has too many dimensions",
            shape.len(),
            format_args!("at most {}", i32::MAX),
        ));
    }
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(Error::argument(
            function,
            "shape",
            "has a negative size",
            format_args!("{shape:?}, size {d}"),
            "sizes >= 0",
        ));
    }
    let numel = shape
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            Error::argument(
                function,
                "shape",
                "overflows i64",
                format_args!("{shape:?}"),
                format_args!("at most {} elements", i64::MAX),
            )
        })?;
    let Some(strides) = strides else {
        if numel as u64 != len as u64 {
            return Err(Error::argument(
                function,
                "shape",
                "does not cover the slice",
                format_args!("{shape:?}, {numel} elements"),
                format_args!("{len} elements, the slice's length"),
            ));
        }
        return Ok(());
    };
    if strides.len() != shape.len() {
        return Err(Error::argument(
            function,
            "strides",
            "has the wrong length",
            strides.len(),
            format_args!("{}, one per dimension of the shape", shape.len()),
        ));
    }
    if let Some(s) = strides.iter().find(|&&s| s < 0) {
        return Err(Error::argument(
            function,
            "strides",
            "has a negative stride",
            format_args!("{strides:?}, stride {s}"),
            "strides >= 0",
        ));
    }
    if numel == 0 {
        return Ok(());
    }
    // The farthest element is the sum of (size - 1) * stride; it must be below len.
    let last = shape
        .iter()
        .zip(strides)
        .try_fold(0i64, |acc, (&d, &s)| {
            (d - 1).checked_mul(s).and_then(|x| acc.checked_add(x))
        })
        .ok_or_else(|| {
            Error::argument(
                function,
                "strides",
                "overflow i64",
                format_args!("{strides:?} for shape {shape:?}"),
                format_args!("offsets of at most {}", i64::MAX),
            )
        })?;
    if last as u64 >= len as u64 {
        return Err(Error::argument(
            function,
            "strides",
            "reach past the slice",
            format_args!("{strides:?} for shape {shape:?}, reaching element {last}"),
            format_args!("elements below {len}, the slice's length"),
        ));
    }
    Ok(())
}

/// A borrowed input tensor: a `DLTensor` that owns its shape and strides and borrows the data
/// for `'a`.
///
/// ```
/// use cattn::TensorRef;
/// let data = [0i32, 1, 2, 3, 4, 5];
/// let t = TensorRef::new(&data, &[2, 3])?;
/// assert_eq!(t.shape(), &[2, 3]);
/// // Every other element of a row: shape [2, 2], strides [3, 2] reach element 5 at most.
/// let s = TensorRef::strided(&data, &[2, 2], &[3, 2])?;
/// assert_eq!(s.strides(), Some(&[3i64, 2][..]));
/// // A shape larger than the slice is refused.
/// assert!(TensorRef::new(&data, &[7]).is_err());
/// # Ok::<(), cattn::Error>(())
/// ```
pub struct TensorRef<'a> {
    view: View,
    _data: PhantomData<&'a [u8]>,
}

// SAFETY: a TensorRef is a shared borrow of its data (like &'a [T] with T: Sync, which every
// Element is) plus arrays it owns; the library only reads through it. A device view comes from
// `from_raw_parts`, whose caller vouches for the memory.
unsafe impl Send for TensorRef<'_> {}
// SAFETY: as above; nothing is ever written through a shared TensorRef.
unsafe impl Sync for TensorRef<'_> {}

impl<'a> TensorRef<'a> {
    /// A 1-D host view of the whole slice.
    pub fn from_slice<T: Element>(data: &'a [T]) -> TensorRef<'a> {
        // A slice has at most isize::MAX bytes, so its length fits i64.
        let shape = [data.len() as i64];
        TensorRef {
            view: View::new(
                data.as_ptr().cast_mut().cast(),
                Device::Cpu,
                T::DTYPE,
                &shape,
                None,
                0,
            ),
            _data: PhantomData,
        }
    }

    /// A 1-D host view of a slice of flags, [`DataType::BOOL`]: the masks of the
    /// speculative-decoding calls, which read one byte per entry (nonzero = set). (`bool` is
    /// no [`Element`]: an output view of it would let the library store a byte that is no
    /// `bool`; outputs of flags are `u8` slices.)
    ///
    /// ```
    /// let mask = [true, false, true];
    /// let t = cattn::TensorRef::from_bools(&mask);
    /// assert_eq!((t.shape(), t.dtype()), (&[3i64][..], cattn::DataType::BOOL));
    /// ```
    pub fn from_bools(data: &'a [bool]) -> TensorRef<'a> {
        let shape = [data.len() as i64];
        TensorRef {
            view: View::new(
                data.as_ptr().cast_mut().cast(),
                Device::Cpu,
                DataType::BOOL,
                &shape,
                None,
                0,
            ),
            _data: PhantomData,
        }
    }

    /// A compact row-major host view; the shape's element count must equal the slice length.
    pub fn new<T: Element>(data: &'a [T], shape: &[i64]) -> Result<TensorRef<'a>> {
        check_host_view("TensorRef::new", data.len(), shape, None)?;
        // SAFETY: checked above: the view covers exactly the slice, borrowed for 'a.
        Ok(unsafe {
            TensorRef::from_raw_parts(data.as_ptr().cast(), Device::Cpu, T::DTYPE, shape, None, 0)
        })
    }

    /// A strided host view (strides in elements, non-negative); every element it reaches must
    /// lie inside the slice.
    pub fn strided<T: Element>(
        data: &'a [T],
        shape: &[i64],
        strides: &[i64],
    ) -> Result<TensorRef<'a>> {
        check_host_view("TensorRef::strided", data.len(), shape, Some(strides))?;
        // SAFETY: checked above: every reachable element is inside the slice, borrowed for 'a.
        Ok(unsafe {
            TensorRef::from_raw_parts(
                data.as_ptr().cast(),
                Device::Cpu,
                T::DTYPE,
                shape,
                Some(strides),
                0,
            )
        })
    }

    /// A view of any memory, such as a CUDA allocation. `strides` are in elements (`None` =
    /// compact row-major) and `byte_offset` is added to `data`, as DLPack defines them.
    ///
    /// # Safety
    /// `shape` has at most `i32::MAX` dimensions. For `'a`, every element the view reaches
    /// must be memory of `device` that is readable
    /// (by the host for host devices, by the device's kernels otherwise), holds values of
    /// `dtype`, and is not written by anyone else while the library reads it.
    pub unsafe fn from_raw_parts(
        data: *const c_void,
        device: Device,
        dtype: DataType,
        shape: &[i64],
        strides: Option<&[i64]>,
        byte_offset: u64,
    ) -> TensorRef<'a> {
        TensorRef {
            view: View::new(data.cast_mut(), device, dtype, shape, strides, byte_offset),
            _data: PhantomData,
        }
    }

    /// The sizes of the dimensions.
    pub fn shape(&self) -> &[i64] {
        &self.view.shape
    }

    /// The strides in elements, or `None` for compact row-major.
    pub fn strides(&self) -> Option<&[i64]> {
        self.view.strides.as_deref()
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType::from_raw(self.view.dl.dtype)
    }

    /// Where the data lives.
    pub fn device(&self) -> Device {
        Device::from_raw(self.view.dl.device)
    }

    /// The `DLTensor`, for passing to the library as an input. It points into heap arrays that
    /// `self` owns, so it stays valid while `self` lives, even if `self` moves.
    pub fn as_raw(&self) -> *const sys::DLTensor {
        &self.view.dl
    }
}

impl Clone for TensorRef<'_> {
    fn clone(&self) -> Self {
        TensorRef {
            view: self.view.duplicate(),
            _data: PhantomData,
        }
    }
}

impl fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view.fmt(f)
    }
}

impl<'a, T: Element> From<&'a [T]> for TensorRef<'a> {
    fn from(data: &'a [T]) -> Self {
        TensorRef::from_slice(data)
    }
}

impl<'a, T: Element, const N: usize> From<&'a [T; N]> for TensorRef<'a> {
    fn from(data: &'a [T; N]) -> Self {
        TensorRef::from_slice(data)
    }
}

impl<'a, T: Element> From<&'a Vec<T>> for TensorRef<'a> {
    fn from(data: &'a Vec<T>) -> Self {
        TensorRef::from_slice(data)
    }
}

/// A borrowed output tensor: like [`TensorRef`], but it borrows its data mutably, so that the
/// library may write it and nothing else can see it meanwhile.
///
/// ```
/// use cattn::TensorMut;
/// let mut out = vec![0i64; 6];
/// let t = TensorMut::new(&mut out, &[3, 2])?;
/// assert_eq!(t.shape(), &[3, 2]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub struct TensorMut<'a> {
    view: View,
    _data: PhantomData<&'a mut [u8]>,
}

// SAFETY: a TensorMut is an exclusive borrow of its data (like &'a mut [T] with T: Send, which
// every Element is) plus arrays it owns; a device view comes from `from_raw_parts`, whose caller
// vouches for the memory.
unsafe impl Send for TensorMut<'_> {}
// SAFETY: a shared &TensorMut gives only read access to the description (shape, dtype, ...);
// the library is given the tensor for writing only through &mut.
unsafe impl Sync for TensorMut<'_> {}

impl<'a> TensorMut<'a> {
    /// A 1-D host view of the whole slice.
    pub fn from_slice<T: Element>(data: &'a mut [T]) -> TensorMut<'a> {
        let shape = [data.len() as i64];
        TensorMut {
            view: View::new(
                data.as_mut_ptr().cast(),
                Device::Cpu,
                T::DTYPE,
                &shape,
                None,
                0,
            ),
            _data: PhantomData,
        }
    }

    /// A compact row-major host view; the shape's element count must equal the slice length.
    pub fn new<T: Element>(data: &'a mut [T], shape: &[i64]) -> Result<TensorMut<'a>> {
        check_host_view("TensorMut::new", data.len(), shape, None)?;
        // SAFETY: checked above: the view covers exactly the slice, borrowed mutably for 'a.
        Ok(unsafe {
            TensorMut::from_raw_parts(
                data.as_mut_ptr().cast(),
                Device::Cpu,
                T::DTYPE,
                shape,
                None,
                0,
            )
        })
    }

    /// A strided host view (strides in elements, non-negative); every element it reaches must
    /// lie inside the slice. (libcattn rejects outputs with a zero stride.)
    pub fn strided<T: Element>(
        data: &'a mut [T],
        shape: &[i64],
        strides: &[i64],
    ) -> Result<TensorMut<'a>> {
        check_host_view("TensorMut::strided", data.len(), shape, Some(strides))?;
        // SAFETY: checked above: every reachable element is inside the slice, borrowed
        // mutably for 'a.
        Ok(unsafe {
            TensorMut::from_raw_parts(
                data.as_mut_ptr().cast(),
                Device::Cpu,
                T::DTYPE,
                shape,
                Some(strides),
                0,
            )
        })
    }

    /// A writable view of any memory, such as a CUDA allocation; see
    /// [`TensorRef::from_raw_parts`] for the layout arguments.
    ///
    /// # Safety
    /// `shape` has at most `i32::MAX` dimensions. For `'a`, every element the view reaches
    /// must be memory of `device` that is writable
    /// (by the host for host devices, by the device's kernels otherwise) and that nobody else
    /// reads or writes while the library may write it (for device memory: until the work
    /// enqueued on the call's stream has completed).
    pub unsafe fn from_raw_parts(
        data: *mut c_void,
        device: Device,
        dtype: DataType,
        shape: &[i64],
        strides: Option<&[i64]>,
        byte_offset: u64,
    ) -> TensorMut<'a> {
        TensorMut {
            view: View::new(data, device, dtype, shape, strides, byte_offset),
            _data: PhantomData,
        }
    }

    /// The sizes of the dimensions.
    pub fn shape(&self) -> &[i64] {
        &self.view.shape
    }

    /// The strides in elements, or `None` for compact row-major.
    pub fn strides(&self) -> Option<&[i64]> {
        self.view.strides.as_deref()
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType::from_raw(self.view.dl.dtype)
    }

    /// Where the data lives.
    pub fn device(&self) -> Device {
        Device::from_raw(self.view.dl.device)
    }

    /// The `DLTensor`, for passing to the library as an output.
    pub fn as_raw(&mut self) -> *mut sys::DLTensor {
        &mut self.view.dl
    }
}

impl fmt::Debug for TensorMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view.fmt(f)
    }
}

impl<'a, T: Element> From<&'a mut [T]> for TensorMut<'a> {
    fn from(data: &'a mut [T]) -> Self {
        TensorMut::from_slice(data)
    }
}

impl<'a, T: Element, const N: usize> From<&'a mut [T; N]> for TensorMut<'a> {
    fn from(data: &'a mut [T; N]) -> Self {
        TensorMut::from_slice(data)
    }
}

impl<'a, T: Element> From<&'a mut Vec<T>> for TensorMut<'a> {
    fn from(data: &'a mut Vec<T>) -> Self {
        TensorMut::from_slice(data)
    }
}

/// A CUDA stream (`cudaStream_t`), given to calls on CUDA tensors; host calls ignore it.
///
/// The default is the legacy default stream (NULL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream(sys::cattn_stream_t);

// SAFETY: a stream is an opaque handle that libcattn only passes to the CUDA runtime, which
// accepts a stream from any thread; whoever made the Stream vouched for it (`from_raw`).
unsafe impl Send for Stream {}
// SAFETY: as above; the handle is never dereferenced on the Rust side.
unsafe impl Sync for Stream {}

impl Stream {
    /// The legacy default stream (NULL).
    pub const DEFAULT: Stream = Stream(ptr::null_mut());

    /// Wraps a `cudaStream_t`.
    ///
    /// # Safety
    /// `stream` must be NULL or a stream of the device of the tensors it is used with, alive
    /// until the work enqueued on it by libcattn has completed.
    pub unsafe fn from_raw(stream: *mut c_void) -> Stream {
        Stream(stream.cast())
    }

    /// The raw handle.
    pub fn as_raw(self) -> sys::cattn_stream_t {
        self.0
    }
}

impl Default for Stream {
    fn default() -> Self {
        Stream::DEFAULT
    }
}

/// A raw `*const DLTensor` of an optional input (NULL for `None`), typed as the C field wants.
pub(crate) fn raw_in(t: Option<&TensorRef<'_>>) -> *const sys::DLTensor {
    t.map_or(ptr::null(), TensorRef::as_raw)
}

/// A raw `*mut DLTensor` of an optional output (NULL for `None`).
pub(crate) fn raw_out(t: Option<&mut TensorMut<'_>>) -> *mut sys::DLTensor {
    t.map_or(ptr::null_mut(), TensorMut::as_raw)
}
