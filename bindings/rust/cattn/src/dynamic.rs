// SPDX-License-Identifier: Apache-2.0
//! Loading libcattn at run time with `dlopen`, through its one exported entry point
//! `cattn_get_api`.
//!
//! Everything the safe API offers is a method of [`Api`]; [`Library::api`] gives one for the
//! loaded library, with a lifetime that keeps every handle made through it from outliving the
//! library. The statically linked path ([`Api::linked`], the free functions) does not use
//! this module, and a program that only loads the library this way can build the crate
//! without its default `link` feature, so that nothing links libcattn (or needs it installed
//! to build).
//!
//! ```
//! # fn main() -> cattn::Result<()> {
//! # let path = cattn::dynamic::loaded_library_path().expect("libcattn is linked");
//! // e.g. Library::open("/opt/cattn/lib/libcattn.so.1"), or Library::open_default()
//! let lib = cattn::dynamic::Library::open(&path)?;
//! let api = lib.api();
//! assert_eq!(api.version()?, cattn_sys::CATTN_VERSION_NUMBER);
//! assert_eq!(api.is_valid_kv_cache_layout("NHD")?, true);
//! let ctx = api.context_create()?; // a Context<'_> that borrows `lib`
//! drop(ctx);
//! # Ok(())
//! # }
//! ```
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/api_table.md` of the libcattn repository; the items here document the Rust side:
//! types, errors, panics and safety.

use std::ffi::{c_char, c_int, c_void, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::ptr::NonNull;

use cattn_sys as sys;

use crate::api::Api;
use crate::error::{Error, Result, Status};

// The dynamic loader, declared here rather than taken from a crate: std already links the C
// library (and libdl where it is separate), which provide these.
extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlclose(handle: *mut c_void) -> c_int;
    fn dlerror() -> *mut c_char;
}

/// Resolve every symbol now, so that a broken library fails at open, not at a later call.
const RTLD_NOW: c_int = 2;

type GetApi = unsafe extern "C" fn(u32) -> *const sys::cattn_api_t;

/// A libcattn loaded with `dlopen`, unloaded (`dlclose`) when dropped.
pub struct Library {
    handle: NonNull<c_void>,
    table: *const sys::cattn_api_t,
    path: PathBuf,
}

// SAFETY: the handle is only used with dlsym (thread-safe) and dlclose (in Drop, exclusive);
// the table is immutable static data of the library, callable from any thread (cattn.h).
unsafe impl Send for Library {}
// SAFETY: as above; &Library only hands out `Api` values, which are Sync themselves.
unsafe impl Sync for Library {}

/// The last loader error of this thread, or `fallback`.
fn loader_error(fallback: &str) -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next loader
    // call on this thread; it is copied at once.
    unsafe { crate::api::string_from(dlerror()) }.unwrap_or_else(|| fallback.to_owned())
}

impl Library {
    /// Loads the library at `path` (a file name is searched as `dlopen` does) and takes its
    /// function table for this crate's ABI major version.
    ///
    /// Errors: [`Status::NotSupported`] when the library cannot be loaded, lacks
    /// `cattn_get_api`, or has no table for this ABI version; the message says which.
    pub fn open(path: impl AsRef<OsStr>) -> Result<Library> {
        let path = path.as_ref();
        let c_path = CString::new(path.as_bytes()).map_err(|_| {
            Error::argument(
                "dynamic::Library::open",
                "path",
                "contains a NUL byte",
                format_args!("{path:?}"),
                "a path without NUL bytes",
            )
        })?;
        // SAFETY: a valid C string; loading runs the library's initialisers, which is what
        // asking for the library means.
        let handle = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW) };
        let Some(handle) = NonNull::new(handle) else {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: cannot load {}: {}",
                    path.to_string_lossy(),
                    loader_error("dlopen failed")
                ),
            ));
        };
        // From here on, dropping `lib` unloads the library again on every error path.
        let mut lib = Library {
            handle,
            table: std::ptr::null(),
            path: PathBuf::from(path),
        };
        // SAFETY: a live handle and a valid C string.
        let symbol = unsafe { dlsym(lib.handle.as_ptr(), c"cattn_get_api".as_ptr()) };
        if symbol.is_null() {
            return Err(Error::new(
                Status::NotSupported,
                format!(
                    "cattn: {} has no cattn_get_api: {}",
                    path.to_string_lossy(),
                    loader_error("symbol not found")
                ),
            ));
        }
        // SAFETY: cattn_get_api has this signature in every libcattn (cattn.h).
        let get_api: GetApi = unsafe { std::mem::transmute::<*mut c_void, GetApi>(symbol) };
        // SAFETY: takes any value, returns NULL or a static table.
        lib.table = unsafe { get_api(sys::CATTN_VERSION_MAJOR) };
        // Validates the table now, so that api() cannot fail later.
        // SAFETY: the table is NULL or static data of the loaded library, valid while `lib`
        // is.
        unsafe { Api::from_raw(lib.table) }?;
        Ok(lib)
    }

    /// Loads `libcattn.so.<ABI major>` from the loader's search path.
    pub fn open_default() -> Result<Library> {
        Library::open(format!("libcattn.so.{}", sys::CATTN_VERSION_MAJOR))
    }

    /// The loaded library's function table, borrowed from `self`.
    pub fn api(&self) -> Api<'_> {
        // SAFETY: validated by `open`; the table lives as long as the library stays loaded,
        // which the borrow of `self` ensures.
        unsafe { Api::from_raw(self.table) }.expect("validated when the library was opened")
    }

    /// The path the library was opened with.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // Nothing made through api() is alive anymore (they borrow self). A failure to unload
        // leaves the library loaded, which is harmless.
        // SAFETY: a handle from dlopen, closed once.
        unsafe {
            dlclose(self.handle.as_ptr());
        }
    }
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("path", &self.path).finish()
    }
}

/// The path of the libcattn this process has mapped, from `/proc/self/maps`: the linked one,
/// or, in a build without the `link` feature, the first one loaded at run time; `None` when
/// none is mapped or it cannot be told.
pub fn loaded_library_path() -> Option<PathBuf> {
    // Makes sure the linked library is actually mapped (and not dropped by --as-needed).
    let _ = Api::linked();
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            std::path::Path::new(path)
                .file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|name| name.starts_with("libcattn.so"))
        })
        .map(PathBuf::from)
}
