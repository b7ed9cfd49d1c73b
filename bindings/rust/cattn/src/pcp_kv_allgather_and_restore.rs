// SPDX-License-Identifier: Apache-2.0
//! The PCP all-gather + restore (vLLM's pcp_kv_allgather_and_restore), over a
//! [`Comm`].
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/pcp_kv_allgather_and_restore.md` of the libcattn repository; the items here document
//! the Rust side: types, errors, panics and safety.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, require_same_library, Api};
use crate::comm::Comm;
use crate::error::Result;
use crate::tensor::{Stream, TensorMut, TensorRef};

/// The inputs of [`pcp_kv_allgather_and_restore`] (all on the communicator's CUDA device).
#[derive(Clone, Debug)]
pub struct PcpKvAllgatherArgs<'a> {
    /// `[>= num_actual_tokens, ...]` this rank's keys; elements of 1, 2, 4 or 8 bytes.
    pub key: TensorRef<'a>,
    /// `[key's dim 0, ...]` this rank's values (other dims and dtype may differ from key's).
    pub value: TensorRef<'a>,
    /// n, the rows to gather, in `[0, key's dim 0]`; the same on every rank.
    pub num_actual_tokens: i64,
    /// `[M]` int32/int64 rows of the gathered `[W * n, ...]` tensors.
    pub restore_idx: TensorRef<'a>,
    /// A stream of the communicator's device.
    pub stream: Stream,
}

/// Device scratch memory for a call that takes a workspace: [`pcp_kv_allgather_and_restore`]
/// and [`crate::StepPlan::run`]. The default is no workspace ([`Workspace::none`]).
#[derive(Debug)]
pub struct Workspace<'a> {
    ptr: *mut c_void,
    size: usize,
    _memory: PhantomData<&'a mut [u8]>,
}

// SAFETY: a Workspace is an exclusive borrow of device memory, vouched for by `from_raw`'s
// caller; the Rust side never dereferences it.
unsafe impl Send for Workspace<'_> {}

impl Workspace<'_> {
    /// No workspace, for when the call's size query
    /// ([`pcp_kv_allgather_and_restore_workspace_size`], [`crate::StepPlan::workspace_size`])
    /// reports 0.
    pub fn none() -> Workspace<'static> {
        Workspace {
            ptr: std::ptr::null_mut(),
            size: 0,
            _memory: PhantomData,
        }
    }

    /// `size` bytes of device memory at `ptr`.
    ///
    /// # Safety
    /// For `'a`, `ptr` must be `size` bytes of device memory on the device the call runs on
    /// (for [`pcp_kv_allgather_and_restore`] the communicator's, 256-byte aligned), used by
    /// nothing else until the work enqueued with it has completed.
    pub unsafe fn from_raw<'a>(ptr: *mut c_void, size: usize) -> Workspace<'a> {
        Workspace {
            ptr,
            size,
            _memory: PhantomData,
        }
    }
}

impl Default for Workspace<'_> {
    fn default() -> Self {
        Workspace::none()
    }
}

impl Workspace<'_> {
    pub(crate) fn as_raw(&self) -> (*mut c_void, usize) {
        (self.ptr, self.size)
    }
}

/// The outputs of [`pcp_kv_allgather_and_restore`].
#[derive(Debug)]
pub struct PcpKvAllgatherOutputs<'a> {
    /// `[M, key's other dims]`, key's dtype, compact.
    pub key_out: TensorMut<'a>,
    /// `[M, value's other dims]`, value's dtype, compact.
    pub value_out: TensorMut<'a>,
    /// At least [`pcp_kv_allgather_and_restore_workspace_size`] bytes.
    pub workspace: Workspace<'a>,
}

/// The device workspace [`pcp_kv_allgather_and_restore`] needs: it reads the communicator's
/// size, key's and value's shapes and dtypes, and `num_actual_tokens`.
pub fn pcp_kv_allgather_and_restore_workspace_size(
    comm: &Comm<'_>,
    args: &PcpKvAllgatherArgs<'_>,
) -> Result<usize> {
    comm.api()
        .pcp_kv_allgather_and_restore_workspace_size(comm, args)
}

/// All-gathers this rank's first `num_actual_tokens` rows of key and value across the PCP
/// group and restores the original token order: `key_out[i] = K_all[restore_idx[i]]`, the same
/// for value. Every rank must make the same call. Enqueued on `args.stream`; see `cattn.h`
/// for the details (NCCL loading, what cannot be checked on the device).
///
/// Errors: [`crate::Status::NotSupported`] for host tensors, in a CPU-only build, or without
/// NCCL; [`crate::Status::NcclError`]; [`crate::Status::CudaError`].
pub fn pcp_kv_allgather_and_restore(
    comm: &mut Comm<'_>,
    args: &PcpKvAllgatherArgs<'_>,
    out: &mut PcpKvAllgatherOutputs<'_>,
) -> Result<()> {
    comm.api().pcp_kv_allgather_and_restore(comm, args, out)
}

fn raw_args(
    comm: *mut sys::cattn_comm_t,
    args: &PcpKvAllgatherArgs<'_>,
) -> sys::cattn_pcp_kv_allgather_and_restore_args_t {
    sys::cattn_pcp_kv_allgather_and_restore_args_t {
        struct_size: size_of::<sys::cattn_pcp_kv_allgather_and_restore_args_t>(),
        comm,
        key: args.key.as_raw(),
        value: args.value.as_raw(),
        num_actual_tokens: args.num_actual_tokens,
        restore_idx: args.restore_idx.as_raw(),
        key_out: std::ptr::null_mut(),
        value_out: std::ptr::null_mut(),
        workspace: std::ptr::null_mut(),
        workspace_size: 0,
        stream: args.stream.as_raw(),
    }
}

impl Api<'_> {
    /// [`pcp_kv_allgather_and_restore_workspace_size`] in this library.
    pub fn pcp_kv_allgather_and_restore_workspace_size(
        self,
        comm: &Comm<'_>,
        args: &PcpKvAllgatherArgs<'_>,
    ) -> Result<usize> {
        require_same_library(
            "pcp_kv_allgather_and_restore_workspace_size",
            "comm",
            self,
            comm.api(),
        )?;
        let raw = raw_args(comm.as_raw(), args);
        let f = entry!(self, pcp_kv_allgather_and_restore_workspace_size)?;
        let mut size = 0usize;
        // SAFETY: the views and the handle live through the call; the query reads only the
        // communicator's size, which any thread may do at any time.
        self.check_in(
            unsafe { f(&raw, &mut size) },
            "pcp_kv_allgather_and_restore_workspace_size",
        )?;
        Ok(size)
    }

    /// [`pcp_kv_allgather_and_restore`] in this library.
    pub fn pcp_kv_allgather_and_restore(
        self,
        comm: &mut Comm<'_>,
        args: &PcpKvAllgatherArgs<'_>,
        out: &mut PcpKvAllgatherOutputs<'_>,
    ) -> Result<()> {
        require_same_library("pcp_kv_allgather_and_restore", "comm", self, comm.api())?;
        let mut raw = raw_args(comm.as_raw(), args);
        raw.key_out = out.key_out.as_raw();
        raw.value_out = out.value_out.as_raw();
        raw.workspace = out.workspace.ptr;
        raw.workspace_size = out.workspace.size;
        let f = entry!(self, pcp_kv_allgather_and_restore)?;
        // SAFETY: the views, the workspace and the handle live through the call; the
        // communicator is borrowed mutably, so no other thread uses it meanwhile.
        self.check_in(unsafe { f(&raw) }, "pcp_kv_allgather_and_restore")
    }
}
