// SPDX-License-Identifier: Apache-2.0
//! The context handle: state vLLM keeps in module globals (the KV-cache layout override).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/context.md`, `docs/api/get_kv_cache_layout.md` and
//! `docs/api/resolve_kv_cache_layout.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::ptr::NonNull;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result, Status};

/// A libcattn context (`cattn_context_t`), destroyed when dropped.
///
/// Two engines in one process use two contexts so that they do not share a layout override
/// (see [`Context::set_kv_cache_layout_override`] and [`crate::get_kv_cache_layout()`]).
///
/// ```
/// let ctx = cattn::Context::new()?;
/// ctx.set_kv_cache_layout_override(Some(cattn::KvCacheLayout::Hnd))?;
/// # Ok::<(), cattn::Error>(())
/// ```
pub struct Context<'l> {
    raw: NonNull<sys::cattn_context_t>,
    api: Api<'l>,
}

// SAFETY: the header allows every call from any thread, and a context is not tied to the thread
// that created it; destruction happens in Drop, which owns the context exclusively.
unsafe impl Send for Context<'_> {}
// SAFETY: the calls a shared &Context allows (resolving a layout, setting the override) may run
// on many threads at once: handles are "safe to share for reading" and the override "is
// published atomically" (cattn.h). Only cattn_context_destroy needs exclusive use, and it runs
// in Drop.
unsafe impl Sync for Context<'_> {}

impl Context<'static> {
    /// Creates a context with no layout override in the linked library.
    pub fn new() -> Result<Context<'static>> {
        Api::linked()?.context_create()
    }
}

impl<'l> Context<'l> {
    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::cattn_context_t {
        self.raw.as_ptr()
    }

    /// The library the context belongs to.
    pub fn api(&self) -> Api<'l> {
        self.api
    }
}

impl<'l> Api<'l> {
    /// `cattn_context_create`: a new context of this library.
    pub fn context_create(self) -> Result<Context<'l>> {
        let f = entry!(self, context_create)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: `raw` is a valid host pointer for the call.
        self.check(unsafe { f(&mut raw) })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "cattn: cattn_context_create returned CATTN_OK and no context",
            )
        })?;
        Ok(Context { raw, api: self })
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // The entry was checked when the Api was made; a table without it cannot have
        // created the context, so there is nothing to free through another way.
        if let Ok(destroy) = entry!(self.api, context_destroy) {
            // SAFETY: the context came from this library's context_create and is destroyed once;
            // Drop has exclusive access, so no call uses it concurrently.
            unsafe { destroy(self.raw.as_ptr()) }
        }
    }
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("raw", &self.raw).finish()
    }
}
