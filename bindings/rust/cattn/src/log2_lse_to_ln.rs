// SPDX-License-Identifier: Apache-2.0
//! Base-2 to natural-log log-sum-exp (vLLM's log2_lse_to_ln, since 1.1).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/log2_lse_to_ln.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::ffi::c_void;
use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::one_call::zeroed;
use crate::tensor::{DataType, Device, Element, Stream, TensorMut, TensorRef};

/// How float16 and bfloat16 products are rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LseRounding {
    /// torch >= 2.0 (CPU and CUDA): `x` and `ln 2` in float32, one rounding to the type.
    #[default]
    Torch,
    /// torch 1.x on the CPU: `ln 2` first rounded to the tensor's type.
    Torch1Cpu,
}

impl LseRounding {
    fn as_raw(self) -> i64 {
        i64::from(match self {
            LseRounding::Torch => sys::CATTN_LSE_ROUNDING_TORCH,
            LseRounding::Torch1Cpu => sys::CATTN_LSE_ROUNDING_TORCH1_CPU,
        })
    }
}

/// The 16-bit float types, whose elements Rust holds as `u16` bit patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HalfType {
    /// IEEE float16 (`kDLFloat`, 16 bits).
    F16,
    /// bfloat16 (`kDLBfloat`, 16 bits).
    BF16,
}

/// Writes `out = lse * ln 2` for float16, bfloat16, float32 or float64 tensors of one shape and
/// dtype, any strides; `out` may not overlap `lse` (see [`log2_lse_to_ln_in_place`]). Host
/// tensors run on the host, CUDA tensors in one kernel on `stream`.
pub fn log2_lse_to_ln(
    lse: &TensorRef<'_>,
    out: &mut TensorMut<'_>,
    rounding: LseRounding,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.log2_lse_to_ln(lse, out, rounding, stream)
}

/// [`log2_lse_to_ln`] over `t` itself.
pub fn log2_lse_to_ln_in_place(
    t: &mut TensorMut<'_>,
    rounding: LseRounding,
    stream: Stream,
) -> Result<()> {
    Api::linked()?.log2_lse_to_ln_in_place(t, rounding, stream)
}

mod sealed {
    /// Seals [`super::LseElement`].
    pub trait Lse {}
    impl Lse for f32 {}
    impl Lse for f64 {}
}

/// A Rust float type of a log-sum-exp tensor: `f32` or `f64` (float16 and bfloat16 values,
/// which Rust holds as `u16` bit patterns, go through [`log2_lse_to_ln_half`]). Sealed.
pub trait LseElement: Element + sealed::Lse {}
impl LseElement for f32 {}
impl LseElement for f64 {}

/// One call for host float32 or float64 values: `lse * ln 2` (rounded as torch does) in a new
/// `Vec`.
///
/// ```
/// let ln = cattn::log2_lse_to_ln_vec(&[1.0f64, -2.0, f64::INFINITY])?;
/// assert_eq!(ln, [std::f64::consts::LN_2, -2.0 * std::f64::consts::LN_2, f64::INFINITY]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn log2_lse_to_ln_vec<F: LseElement>(lse: &[F]) -> Result<Vec<F>> {
    Api::linked()?.log2_lse_to_ln_vec(lse)
}

/// One call for host float32 values, in place.
///
/// ```
/// let mut lse = [1.0f32, -2.0, 0.0];
/// cattn::log2_lse_to_ln_f32(&mut lse)?;
/// assert_eq!(lse, [std::f32::consts::LN_2, -2.0 * std::f32::consts::LN_2, 0.0]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn log2_lse_to_ln_f32(values: &mut [f32]) -> Result<()> {
    log2_lse_to_ln_in_place(
        &mut TensorMut::from_slice(values),
        LseRounding::Torch,
        Stream::DEFAULT,
    )
    .map_err(|e| e.in_terms_of("log2_lse_to_ln_f32"))
}

/// One call for host float64 values, in place.
pub fn log2_lse_to_ln_f64(values: &mut [f64]) -> Result<()> {
    log2_lse_to_ln_in_place(
        &mut TensorMut::from_slice(values),
        LseRounding::Torch,
        Stream::DEFAULT,
    )
    .map_err(|e| e.in_terms_of("log2_lse_to_ln_f64"))
}

/// One call for host float16 or bfloat16 values held as bit patterns, in place.
///
/// ```
/// use cattn::{log2_lse_to_ln_half, HalfType, LseRounding};
/// let mut bits = [0x4500u16]; // float16 5.0
/// log2_lse_to_ln_half(&mut bits, HalfType::F16, LseRounding::Torch)?;
/// assert_eq!(bits, [0x42EE]); // 3.46484375
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn log2_lse_to_ln_half(bits: &mut [u16], dtype: HalfType, rounding: LseRounding) -> Result<()> {
    // A slice spans at most isize::MAX bytes, so its length fits i64.
    let len = bits.len() as i64;
    let dtype = match dtype {
        HalfType::F16 => DataType::F16,
        HalfType::BF16 => DataType::BF16,
    };
    // SAFETY: the view covers exactly `bits`, host memory borrowed mutably for its lifetime.
    let mut t = unsafe {
        TensorMut::from_raw_parts(
            bits.as_mut_ptr().cast::<c_void>(),
            Device::Cpu,
            dtype,
            &[len],
            None,
            0,
        )
    };
    log2_lse_to_ln_in_place(&mut t, rounding, Stream::DEFAULT)
        .map_err(|e| e.in_terms_of("log2_lse_to_ln_half"))
}

impl Api<'_> {
    /// [`log2_lse_to_ln_vec`] in this library.
    pub fn log2_lse_to_ln_vec<F: LseElement>(self, lse: &[F]) -> Result<Vec<F>> {
        let mut out = zeroed("log2_lse_to_ln_vec", lse.len())?;
        self.log2_lse_to_ln(
            &TensorRef::from_slice(lse),
            &mut TensorMut::from_slice(&mut out),
            LseRounding::Torch,
            Stream::DEFAULT,
        )
        .map_err(|e| e.in_terms_of("log2_lse_to_ln_vec"))?;
        Ok(out)
    }

    /// [`log2_lse_to_ln`] in this library.
    pub fn log2_lse_to_ln(
        self,
        lse: &TensorRef<'_>,
        out: &mut TensorMut<'_>,
        rounding: LseRounding,
        stream: Stream,
    ) -> Result<()> {
        self.lse_to_ln(
            lse.as_raw(),
            out.as_raw(),
            rounding,
            stream,
            "log2_lse_to_ln",
        )
    }

    /// [`log2_lse_to_ln_in_place`] in this library.
    pub fn log2_lse_to_ln_in_place(
        self,
        t: &mut TensorMut<'_>,
        rounding: LseRounding,
        stream: Stream,
    ) -> Result<()> {
        let raw = t.as_raw();
        self.lse_to_ln(
            raw.cast_const(),
            raw,
            rounding,
            stream,
            "log2_lse_to_ln_in_place",
        )
    }

    fn lse_to_ln(
        self,
        lse: *const sys::DLTensor,
        out: *mut sys::DLTensor,
        rounding: LseRounding,
        stream: Stream,
        function: &str,
    ) -> Result<()> {
        let raw = sys::cattn_log2_lse_to_ln_args_t {
            struct_size: size_of::<sys::cattn_log2_lse_to_ln_args_t>(),
            lse,
            out,
            half_rounding: rounding.as_raw(),
            stream: stream.as_raw(),
        };
        let f = entry!(self, log2_lse_to_ln)?;
        // SAFETY: both views are live for the call; when they are the same view the library
        // reads each element before writing it, which its header allows.
        self.check_in(unsafe { f(&raw) }, function)
    }
}
