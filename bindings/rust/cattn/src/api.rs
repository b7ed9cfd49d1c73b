// SPDX-License-Identifier: Apache-2.0
//! The function table every call goes through.
//!
//! libcattn publishes its entry points as an append-only table (`cattn_api_t`, from
//! `cattn_get_api`). This crate calls the library only through such a table: the linked
//! library's by default ([`Api::linked`]), or one loaded at run time
//! ([`crate::dynamic::Library::api`]). So both ways of loading share one implementation, and a
//! table from an older library that lacks a newer entry gives [`Status::NotSupported`] instead
//! of a read past its end.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/api_table.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::ffi::{c_char, CStr};
use std::marker::PhantomData;
use std::mem::{offset_of, size_of};
use std::ptr::{self, NonNull};

use cattn_sys as sys;

use crate::error::{Error, Result, Status};

/// Reads one entry of the table, after checking that the library's table is long enough to
/// have it and that it is set.
macro_rules! entry {
    ($api:expr, $field:ident) => {
        $api.entry(
            ::std::mem::offset_of!(::cattn_sys::cattn_api_t, $field),
            stringify!($field),
            // SAFETY: `entry` calls this only after checking that the table's struct_size
            // covers the member, so the read stays inside the library's table.
            |table| unsafe { ::std::ptr::addr_of!((*table).$field).read() },
        )
    };
}
pub(crate) use entry;

/// A handle on one libcattn's function table: the library linked into this program
/// ([`Api::linked`]) or one loaded with [`crate::dynamic::Library`] (then `'l` borrows it, so no
/// call and no handle outlives the library).
///
/// Every free function of this crate is a method of `Api` called on [`Api::linked`]; handles
/// ([`crate::Context`], [`crate::LocalAttentionPlan`], [`crate::StepPlan`], [`crate::Comm`])
/// remember the `Api` that made them and are only accepted by that same library.
#[derive(Clone, Copy)]
pub struct Api<'l> {
    table: NonNull<sys::cattn_api_t>,
    _library: PhantomData<&'l ()>,
}

// SAFETY: the table is immutable static data of the library, valid while the library is loaded
// (which 'l guarantees), and every entry may be called from any thread (header: "every call may
// be made from any number of threads at once").
unsafe impl Send for Api<'_> {}
// SAFETY: as above; sharing an `Api` only shares read access to the immutable table.
unsafe impl Sync for Api<'_> {}

impl std::fmt::Debug for Api<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("table", &self.table)
            .field("struct_size", &self.struct_size())
            .finish()
    }
}

/// Every table this crate accepts has at least the entries up to infer_global_hyperparameters;
/// the later ones (the NCCL communicator's, and whatever is appended after them) are checked
/// when they are called.
const BASE_TABLE_SIZE: usize = offset_of!(sys::cattn_api_t, comm_get_unique_id);

impl Api<'static> {
    /// The table of the libcattn this program is linked with, for the ABI major version of the
    /// header these bindings were generated from.
    ///
    /// Fails with [`Status::NotSupported`] when the linked library does not implement that
    /// ABI version (a header/library mismatch), and always when the crate is built without
    /// its `link` feature (nothing is linked then: load the library with
    /// [`crate::dynamic::Library`] and call its [`Api`]).
    #[cfg(feature = "link")]
    pub fn linked() -> Result<Api<'static>> {
        // SAFETY: cattn_get_api takes any value and returns NULL or a pointer to a static table
        // that lives as long as the (linked, never unloaded) library.
        let table = unsafe { sys::cattn_get_api(sys::CATTN_VERSION_MAJOR) };
        // SAFETY: see above.
        unsafe { Api::from_raw(table) }
    }

    /// The table of the linked libcattn: none, in a build without the `link` feature.
    ///
    /// Always fails with [`Status::NotSupported`], naming the feature, so that the free
    /// functions (which call the linked library) say why they cannot run; the same calls are
    /// methods of the [`Api`] of a library loaded with [`crate::dynamic::Library`].
    #[cfg(not(feature = "link"))]
    pub fn linked() -> Result<Api<'static>> {
        Err(Error::new(
            Status::NotSupported,
            "cattn: built without the `link` feature, so no libcattn is linked; load one with \
             cattn::dynamic::Library and call its api()",
        ))
    }
}

impl<'l> Api<'l> {
    /// Wraps a raw function table.
    ///
    /// Checks that it is not NULL, that it is for this crate's ABI major version and that it
    /// has at least every utility's entry.
    ///
    /// # Safety
    /// `table` must be NULL or point to a `cattn_api_t` (of any size it declares in
    /// `struct_size`) whose entries behave as `cattn.h` documents, valid and unchanged for
    /// `'l`.
    pub unsafe fn from_raw(table: *const sys::cattn_api_t) -> Result<Api<'l>> {
        let Some(table) = NonNull::new(table.cast_mut()) else {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: the library has no function table for ABI major version {}",
                    sys::CATTN_VERSION_MAJOR
                ),
            ));
        };
        let api = Api {
            table,
            _library: PhantomData,
        };
        let size = api.struct_size();
        if size < offset_of!(sys::cattn_api_t, abi_major) + size_of::<u32>() {
            return Err(Error::new(
                Status::NotSupported,
                format!("cattn: the library's function table is too small ({size} bytes)"),
            ));
        }
        // SAFETY: the struct_size check above covers abi_major.
        let major = unsafe { ptr::addr_of!((*table.as_ptr()).abi_major).read() };
        if major != sys::CATTN_VERSION_MAJOR {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: the library's function table is for ABI major {major}, these \
                     bindings for {}",
                    sys::CATTN_VERSION_MAJOR
                ),
            ));
        }
        if size < BASE_TABLE_SIZE {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: the library's function table has {size} bytes, fewer than the \
                     {BASE_TABLE_SIZE} of the utilities' entries"
                ),
            ));
        }
        Ok(api)
    }

    /// The raw table.
    pub fn as_raw(self) -> *const sys::cattn_api_t {
        self.table.as_ptr()
    }

    /// The `struct_size` the library declares for its table.
    pub fn struct_size(self) -> usize {
        // SAFETY: struct_size is the first member of every table (checked by from_raw's
        // contract).
        unsafe { ptr::addr_of!((*self.table.as_ptr()).struct_size).read() }
    }

    /// Whether two handles are the same library's table.
    pub fn same_library(self, other: Api<'_>) -> bool {
        self.table == other.table
    }

    pub(crate) fn entry<F>(
        self,
        offset: usize,
        name: &str,
        read: impl FnOnce(*const sys::cattn_api_t) -> Option<F>,
    ) -> Result<F> {
        let size = self.struct_size();
        if offset + size_of::<usize>() > size {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: the library's function table ({size} bytes) predates its `{name}` \
                     entry"
                ),
            ));
        }
        read(self.table.as_ptr()).ok_or_else(|| {
            Error::new(
                Status::NotSupported,
                format!("cattn: the library's function table has no `{name}` entry (NULL)"),
            )
        })
    }

    /// Turns a status into a `Result`, reading the message of a failure right away, on this
    /// thread, before anything else can replace it.
    pub(crate) fn check(self, status: sys::cattn_status_t) -> Result<()> {
        // The ABI passes statuses as a C enum: reinterpreting the bits keeps every value.
        let code = status as i32;
        let Some(status) = Status::from_code(code) else {
            return Ok(());
        };
        Err(Error::new(status, self.last_error_message()))
    }

    /// [`Api::check`] for a call made on behalf of the Rust function `function`: the error's
    /// message names the argument in that function's terms (crate::names), and
    /// [`Error::c_message`] keeps the library's.
    pub(crate) fn check_in(self, status: sys::cattn_status_t, function: &str) -> Result<()> {
        let code = status as i32;
        let Some(status) = Status::from_code(code) else {
            return Ok(());
        };
        Err(Error::from_library(
            status,
            self.last_error_message(),
            function,
        ))
    }

    /// `cattn_last_error_message()`: the message of this thread's last failed call in this
    /// library ("" when none failed).
    ///
    /// Every method of this crate already puts it into its [`Error`]; this is for raw calls.
    pub fn last_error_message(self) -> String {
        let Ok(f) = entry!(self, last_error_message) else {
            return String::new();
        };
        // SAFETY: the entry takes no arguments and returns NULL or a NUL-terminated string
        // valid until the next call on this thread; it is copied at once.
        unsafe { string_from(f()) }.unwrap_or_default()
    }

    /// `cattn_version()`: the version the library was built as, MAJOR * 10000 + MINOR * 100 +
    /// PATCH.
    pub fn version(self) -> Result<u32> {
        let f = entry!(self, version_number)?;
        // SAFETY: no arguments, cannot fail.
        Ok(unsafe { f() })
    }

    /// `cattn_version_string()`: the library's version as "MAJOR.MINOR.PATCH".
    pub fn version_string(self) -> Result<String> {
        let f = entry!(self, version_string)?;
        // SAFETY: returns a static NUL-terminated string.
        Ok(unsafe { string_from(f()) }.unwrap_or_default())
    }

    /// `cattn_status_string()`: the library's name of a raw status code.
    pub fn status_string(self, code: i32) -> Result<String> {
        let f = entry!(self, status_string)?;
        // SAFETY: takes any value (unknown ones give "CATTN_UNKNOWN_STATUS") and returns a
        // static string. The C enum is passed as its unsigned bits.
        Ok(unsafe { string_from(f(code as sys::cattn_status_t)) }.unwrap_or_default())
    }

    /// `cattn_cuda_device_count()`: how many CUDA devices the library can use (0 in a
    /// CPU-only build or without a driver or device).
    pub fn cuda_device_count(self) -> Result<i32> {
        let f = entry!(self, cuda_device_count)?;
        let mut count = 0i32;
        // SAFETY: `count` is a valid host pointer for the duration of the call.
        self.check(unsafe { f(&mut count) })?;
        Ok(count)
    }
}

/// Copies a C string; `None` for NULL. Invalid UTF-8 is replaced, never rejected.
///
/// # Safety
/// `s` must be NULL or a valid NUL-terminated string.
pub(crate) unsafe fn string_from(s: *const c_char) -> Option<String> {
    if s.is_null() {
        None
    } else {
        // SAFETY: guaranteed by the caller.
        Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }
}

/// Refuses, in the name of `function`'s `argument`, a handle that another library made than
/// the one `api` calls.
pub(crate) fn require_same_library(
    function: &str,
    argument: &str,
    api: Api<'_>,
    handle_api: Api<'_>,
) -> Result<()> {
    if api.same_library(handle_api) {
        Ok(())
    } else {
        Err(Error::argument(
            function,
            argument,
            "was made by another libcattn than the one called",
            format_args!("a handle of the table at {:p}", handle_api.as_raw()),
            format_args!("one of the table at {:p}", api.as_raw()),
        ))
    }
}
