// SPDX-License-Identifier: Apache-2.0
//! The communicator of pcp_kv_allgather_and_restore (`cattn_comm_t`): one rank's handle of an NCCL communicator
//! over the PCP group.
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/pcp_kv_allgather_and_restore.md` of the libcattn repository; the items here document
//! the Rust side: types, errors, panics and safety.

use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::{Error, Result, Status};

/// The rendezvous token of a new communicator (an `ncclUniqueId` as plain bytes), made on one
/// rank by [`comm_get_unique_id`] and sent to the others by the engine's own means.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommUniqueId(pub [u8; sys::CATTN_COMM_UNIQUE_ID_BYTES as usize]);

impl fmt::Debug for CommUniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CommUniqueId(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str("...)")
    }
}

/// Creates the unique id of a new communicator (ncclGetUniqueId); needs no GPU, but NCCL.
///
/// Errors: [`Status::NotSupported`] in a CPU-only build or when NCCL cannot be loaded;
/// [`Status::NcclError`].
pub fn comm_get_unique_id() -> Result<CommUniqueId> {
    Api::linked()?.comm_get_unique_id()
}

/// A communicator handle, destroyed when dropped (with its NCCL communicator when libcattn
/// created it; a borrowed one is left to its owner).
///
/// NCCL communicators are used by one thread at a time: the collective
/// ([`crate::pcp_kv_allgather_and_restore()`]) takes `&mut Comm`, and a shared `&Comm` only
/// reads the rank and size, which the header allows from any thread at any time.
pub struct Comm<'l> {
    raw: NonNull<sys::cattn_comm_t>,
    api: Api<'l>,
}

// SAFETY: cattn.h: "a cattn_comm_t may be used by one thread at a time (any thread)": moving the
// handle to another thread is allowed; Drop destroys it with exclusive access.
unsafe impl Send for Comm<'_> {}
// SAFETY: through &Comm only cattn_comm_get_rank/get_size (and the workspace-size query, which
// reads only the size) can be called; the header allows them "any thread, also while another
// thread uses the communicator". The collective needs &mut Comm.
unsafe impl Sync for Comm<'_> {}

impl Comm<'static> {
    /// Creates a communicator of `nranks` ranks from a unique id and owns it
    /// (ncclCommInitRank on `cuda_device`). Blocks until every rank has called it with the same
    /// id: call it for all ranks concurrently, one thread or process per rank.
    pub fn new(
        id: &CommUniqueId,
        nranks: i32,
        rank: i32,
        cuda_device: i32,
    ) -> Result<Comm<'static>> {
        Api::linked()?.comm_create(id, nranks, rank, cuda_device)
    }

    /// Wraps an NCCL communicator (`ncclComm_t`) that the engine owns; dropping the handle
    /// leaves it alone.
    ///
    /// # Safety
    /// `nccl_comm` must be an `ncclComm_t` made by the NCCL library that libcattn loads, and
    /// must outlive the returned handle.
    pub unsafe fn borrowed(nccl_comm: *mut c_void) -> Result<Comm<'static>> {
        // SAFETY: forwarded to the caller.
        unsafe { Api::linked()?.comm_create_borrowed(nccl_comm) }
    }
}

impl<'l> Comm<'l> {
    /// This rank's index in its group, in `[0, size)`.
    pub fn rank(&self) -> Result<i32> {
        let f = entry!(self.api, comm_get_rank)?;
        let mut rank = 0i32;
        // SAFETY: the handle is alive and `rank` is a valid host pointer.
        self.api.check(unsafe { f(self.raw.as_ptr(), &mut rank) })?;
        Ok(rank)
    }

    /// The number of ranks in the group (the PCP world size W).
    pub fn size(&self) -> Result<i32> {
        let f = entry!(self.api, comm_get_size)?;
        let mut size = 0i32;
        // SAFETY: the handle is alive and `size` is a valid host pointer.
        self.api.check(unsafe { f(self.raw.as_ptr(), &mut size) })?;
        Ok(size)
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *mut sys::cattn_comm_t {
        self.raw.as_ptr()
    }

    /// The library the communicator belongs to.
    pub fn api(&self) -> Api<'l> {
        self.api
    }

    fn wrap(raw: *mut sys::cattn_comm_t, api: Api<'l>, what: &str) -> Result<Comm<'l>> {
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                format!("cattn: {what} returned CATTN_OK and no communicator"),
            )
        })?;
        Ok(Comm { raw, api })
    }
}

impl<'l> Api<'l> {
    /// [`comm_get_unique_id`] in this library.
    pub fn comm_get_unique_id(self) -> Result<CommUniqueId> {
        let f = entry!(self, comm_get_unique_id)?;
        let mut id = sys::cattn_comm_unique_id_t {
            bytes: [0; sys::CATTN_COMM_UNIQUE_ID_BYTES as usize],
        };
        // SAFETY: `id` is a valid host pointer for the call.
        self.check(unsafe { f(&mut id) })?;
        Ok(CommUniqueId(id.bytes))
    }

    /// [`Comm::new`] in this library.
    pub fn comm_create(
        self,
        id: &CommUniqueId,
        nranks: i32,
        rank: i32,
        cuda_device: i32,
    ) -> Result<Comm<'l>> {
        let f = entry!(self, comm_create)?;
        let raw_id = sys::cattn_comm_unique_id_t { bytes: id.0 };
        let mut out = std::ptr::null_mut();
        // SAFETY: the id and `out` are valid host pointers for the call.
        self.check_in(
            unsafe { f(&raw_id, nranks, rank, cuda_device, &mut out) },
            "Comm::new",
        )?;
        Comm::wrap(out, self, "cattn_comm_create")
    }

    /// [`Comm::borrowed`] in this library.
    ///
    /// # Safety
    /// As for [`Comm::borrowed`].
    pub unsafe fn comm_create_borrowed(self, nccl_comm: *mut c_void) -> Result<Comm<'l>> {
        let f = entry!(self, comm_create_borrowed)?;
        let mut out = std::ptr::null_mut();
        // SAFETY: `out` is a valid host pointer; nccl_comm is vouched for by the caller (NULL is
        // rejected by the library).
        self.check_in(unsafe { f(nccl_comm, &mut out) }, "Comm::borrowed")?;
        Comm::wrap(out, self, "cattn_comm_create_borrowed")
    }
}

impl Drop for Comm<'_> {
    fn drop(&mut self) {
        // A table without comm_destroy cannot have created the communicator.
        if let Ok(destroy) = entry!(self.api, comm_destroy) {
            // SAFETY: the handle came from this library and is destroyed once, with exclusive
            // access.
            unsafe { destroy(self.raw.as_ptr()) }
        }
    }
}

impl fmt::Debug for Comm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comm").field("raw", &self.raw).finish()
    }
}
