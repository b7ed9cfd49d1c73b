// SPDX-License-Identifier: Apache-2.0
//! The error of every fallible call: libcattn's status code and its message.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/context.md` of the libcattn repository; the items here document the Rust side: types,
//! errors, panics and safety.

use std::fmt;

/// A failure status of libcattn, mirroring `cattn_status_t`.
///
/// `CATTN_OK` has no variant: a call that returns it is `Ok(..)`. Codes this crate does not
/// know (from a newer library) are kept as [`Status::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// `CATTN_INVALID_ARGUMENT`: an argument is missing, malformed, inconsistent or out of range.
    InvalidArgument,
    /// `CATTN_CUDA_ERROR`: the CUDA runtime reported an error.
    CudaError,
    /// `CATTN_OUT_OF_MEMORY`: a host allocation failed.
    OutOfMemory,
    /// `CATTN_INSUFFICIENT_SIZE`: an output tensor or workspace is too small.
    InsufficientSize,
    /// `CATTN_NOT_SUPPORTED`: a valid request that this build or machine cannot serve.
    NotSupported,
    /// `CATTN_INTERNAL`: a bug in libcattn.
    Internal,
    /// `CATTN_NOT_IMPLEMENTED`: declared in the ABI but not implemented by this release.
    NotImplemented,
    /// `CATTN_NCCL_ERROR`: NCCL reported an error.
    NcclError,
    /// A code this crate does not know.
    Unknown(i32),
}

impl Status {
    /// The status of a raw code; `None` for `CATTN_OK` (0).
    pub fn from_code(code: i32) -> Option<Status> {
        Some(match code {
            0 => return None,
            1 => Status::InvalidArgument,
            2 => Status::CudaError,
            3 => Status::OutOfMemory,
            4 => Status::InsufficientSize,
            5 => Status::NotSupported,
            6 => Status::Internal,
            7 => Status::NotImplemented,
            8 => Status::NcclError,
            other => Status::Unknown(other),
        })
    }

    /// The raw `cattn_status_t` value.
    pub fn code(self) -> i32 {
        match self {
            Status::InvalidArgument => 1,
            Status::CudaError => 2,
            Status::OutOfMemory => 3,
            Status::InsufficientSize => 4,
            Status::NotSupported => 5,
            Status::Internal => 6,
            Status::NotImplemented => 7,
            Status::NcclError => 8,
            Status::Unknown(code) => code,
        }
    }

    /// The C name of the code, as `cattn_status_string` spells it
    /// (`"CATTN_UNKNOWN_STATUS"` for [`Status::Unknown`]).
    pub fn name(self) -> &'static str {
        match self {
            Status::InvalidArgument => "CATTN_INVALID_ARGUMENT",
            Status::CudaError => "CATTN_CUDA_ERROR",
            Status::OutOfMemory => "CATTN_OUT_OF_MEMORY",
            Status::InsufficientSize => "CATTN_INSUFFICIENT_SIZE",
            Status::NotSupported => "CATTN_NOT_SUPPORTED",
            Status::Internal => "CATTN_INTERNAL",
            Status::NotImplemented => "CATTN_NOT_IMPLEMENTED",
            Status::NcclError => "CATTN_NCCL_ERROR",
            Status::Unknown(_) => "CATTN_UNKNOWN_STATUS",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Unknown(code) => write!(f, "CATTN_UNKNOWN_STATUS({code})"),
            known => f.write_str(known.name()),
        }
    }
}

/// A failed call: the status and the message libcattn gave for it.
///
/// The message is `cattn_last_error_message()` read on the calling thread right after the
/// failing call (`"<function>: <argument> <problem> (got X, expected Y)"`), with the function
/// and the argument in Rust terms: the library's `"cattn_fused_pcp_qkv_select_size:
/// pcp_world_size is out of range (got 0, expected >= 1)"` comes out of [`crate::pcp_qkv_halves`]
/// as `"cattn::pcp_qkv_halves: pcp_world_size is out of range (got 0, expected >= 1)"`, and its
/// `args->k_tail` out of [`crate::fused_pcp_qkv_select()`] as `out.k_tail`. One table of the
/// crate maps each C argument path to the Rust parameter or field that carries it, per Rust
/// function; a message whose argument it does not name keeps the library's wording.
/// [`Error::c_message`] is the library's message as it was written.
///
/// Checks this crate makes itself before calling the library (a slice too short for a shape,
/// a negative DCP rank, ragged rows, ...) give [`Status::InvalidArgument`] with a message of
/// the same form: `"cattn::get_dcp_local_seq_lens: args.dcp_rank is negative (got -1,
/// expected ...)"`. Failures of the crate's own plumbing (an old function table, a library
/// that cannot be loaded) start with `cattn:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
    /// The library's message, for an error the library reported.
    c_message: Option<String>,
}

impl Error {
    /// An error with the given status and message.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
            c_message: None,
        }
    }

    /// The error of a failed library call made on behalf of the Rust function `function`:
    /// the library's message `c_message`, in that function's terms where the crate's table
    /// names its argument.
    pub(crate) fn from_library(status: Status, c_message: String, function: &str) -> Error {
        Error {
            status,
            message: crate::names::translate(function, &c_message)
                .unwrap_or_else(|| c_message.clone()),
            c_message: Some(c_message),
        }
    }

    /// This error as the Rust function `function` reports it: a library error is worded in
    /// `function`'s terms where the table names its argument for `function` (a one-call
    /// helper's parameters rather than the fields of the call it makes), and in the library's
    /// otherwise (never in the terms of an inner function the caller did not call); an error of
    /// the crate's own is returned unchanged.
    pub(crate) fn in_terms_of(mut self, function: &str) -> Error {
        if let Some(c) = self.c_message.as_deref() {
            self.message = crate::names::translate(function, c).unwrap_or_else(|| c.to_owned());
        }
        self
    }

    /// The failure status.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The raw `cattn_status_t` value of the failure.
    pub fn code(&self) -> i32 {
        self.status.code()
    }

    /// The detail of the failure, in Rust terms (see [`Error`]).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The library's message as `cattn_last_error_message()` gave it, C names and all; for an
    /// error this crate raised itself (it never reached the library), [`Error::message`].
    pub fn c_message(&self) -> &str {
        self.c_message.as_deref().unwrap_or(&self.message)
    }

    /// An argument this crate refuses before calling the library, worded as the library words
    /// its messages: `"cattn::<function>: <argument> <problem> (got <got>, expected
    /// <expected>)"`, with `function` the Rust path below the crate (`TensorRef::new`,
    /// `get_dcp_local_seq_lens`) and `argument` the Rust name (`args.dcp_rank`, `shape`).
    pub(crate) fn argument(
        function: &str,
        argument: &str,
        problem: &str,
        got: impl fmt::Display,
        expected: impl fmt::Display,
    ) -> Error {
        Error::new(
            Status::InvalidArgument,
            format!("cattn::{function}: {argument} {problem} (got {got}, expected {expected})"),
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{}: {}", self.status, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// The result of every fallible call.
pub type Result<T> = std::result::Result<T, Error>;
