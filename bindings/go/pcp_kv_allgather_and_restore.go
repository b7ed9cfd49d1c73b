// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// CommUniqueIDBytes is the size of a communicator's unique id (CATTN_COMM_UNIQUE_ID_BYTES).
const CommUniqueIDBytes = 128

// CommUniqueID is the rendezvous token of a new communicator, an ncclUniqueId as plain bytes
// (cattn_comm_unique_id_t), to be sent to every rank over the engine's own transport.
type CommUniqueID [CommUniqueIDBytes]byte

// NCCLLibraryEnv names the environment variable that replaces "libnccl.so.2" as the library
// libcattn loads (CATTN_NCCL_LIBRARY_ENV); it is read once per process.
const NCCLLibraryEnv = "CATTN_NCCL_LIBRARY"

// NewCommUniqueID creates the unique id of a new communicator (cattn_comm_get_unique_id).
// Call it on one rank and send the bytes to the others before they call NewComm. Errors:
// StatusNotSupported (CPU-only build, NCCL cannot be loaded), StatusNCCLError.
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func NewCommUniqueID() (CommUniqueID, error) {
	f := newFrame("cattn_comm_get_unique_id", "NewCommUniqueID")
	defer f.free()
	return f.commGetUniqueID()
}

// Comm is one rank's handle of an NCCL communicator over the PCP group (cattn_comm_t), either
// owned (NewComm) or borrowed from the engine (UnsafeBorrowComm). It is bound to one CUDA
// device.
//
// NCCL communicators are not thread-safe: PCPKVAllgatherAndRestore calls on one Comm are
// serialised by the Comm (a second goroutine waits), and all ranks must make the same
// collective calls in the same order. Rank and Size may be called at any time. Close the
// Comm when done; a finalizer closes an unreachable one, but only as a safety net.
type Comm struct {
	h *handle[cComm] // acquired shared by Rank and Size, exclusive by collectives
}

func newComm(c cComm) *Comm { return &Comm{h: newHandle(c, cCommDestroy)} }

// NewComm creates and owns a communicator of nranks ranks from a unique id
// (cattn_comm_create, ncclCommInitRank on cudaDevice). It blocks until all nranks ranks have
// called it with the same id, so call it for every rank concurrently (one goroutine or process
// per rank). Errors: StatusInvalidArgument (nranks < 1, rank outside [0, nranks), cudaDevice
// out of range), StatusNotSupported (CPU-only build, NCCL or a GPU missing),
// StatusNCCLError, StatusCUDAError, StatusOutOfMemory.
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func NewComm(id CommUniqueID, nranks, rank, cudaDevice int32) (*Comm, error) {
	f := newFrame("cattn_comm_create", "NewComm", "cuda_device", "cudaDevice")
	defer f.free()
	c, err := f.commCreate(&id, nranks, rank, cudaDevice)
	if err != nil {
		return nil, err
	}
	return newComm(c), nil
}

// UnsafeBorrowComm wraps an NCCL communicator the engine owns (cattn_comm_create_borrowed):
// ncclComm is an ncclComm_t made by the NCCL library libcattn loads. It must outlive the Comm;
// Close frees only the handle. Errors: StatusInvalidArgument (ncclComm 0),
// StatusNotSupported, StatusNCCLError, StatusOutOfMemory.
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func UnsafeBorrowComm(ncclComm uintptr) (*Comm, error) {
	f := newFrame("cattn_comm_create_borrowed", "UnsafeBorrowComm", "nccl_comm", "ncclComm")
	defer f.free()
	c, err := f.commCreateBorrowed(ncclComm)
	if err != nil {
		return nil, err
	}
	return newComm(c), nil
}

// Close destroys the handle (cattn_comm_destroy), and with it an owned NCCL communicator. It
// waits for a collective in progress on this Comm; later calls fail with
// StatusInvalidArgument. Closing again, or a nil Comm, is a no-op. The error is always nil.
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func (comm *Comm) Close() error {
	if comm == nil {
		return nil
	}
	return comm.h.Close()
}

// lock takes the Comm, the frame's argument arg, for its call (shared or exclusive); release
// with the matching unlock.
func (comm *Comm) lock(f *frame, arg string, exclusive bool) (cComm, error) {
	if comm == nil {
		return nil, f.argError(arg, "is NULL", "a nil *Comm", "a Comm")
	}
	return comm.h.acquire(f, arg, "Comm", exclusive)
}

func (comm *Comm) unlock(exclusive bool) { comm.h.release(exclusive) }

// Rank returns this rank's index in its group, in [0, Size) (cattn_comm_get_rank).
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func (comm *Comm) Rank() (int32, error) {
	f := newFrame("cattn_comm_get_rank", "Comm.Rank")
	defer f.free()
	c, err := comm.lock(f, "comm", false)
	if err != nil {
		return 0, err
	}
	defer comm.unlock(false)
	return f.commGetRank(c)
}

// Size returns the number of ranks in the group, the PCP world size W (cattn_comm_get_size).
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func (comm *Comm) Size() (int32, error) {
	f := newFrame("cattn_comm_get_size", "Comm.Size")
	defer f.free()
	c, err := comm.lock(f, "comm", false)
	if err != nil {
		return 0, err
	}
	defer comm.unlock(false)
	return f.commGetSize(c)
}

// PCPKVAllgatherAndRestoreArgs are the arguments of PCPKVAllgatherAndRestore and its workspace
// query (cattn_pcp_kv_allgather_and_restore_args_t). Every tensor is device memory on the
// Comm's device (UnsafeDeviceTensor).
type PCPKVAllgatherAndRestoreArgs struct {
	Comm  *Comm
	Key   *Tensor // in: [>= NumActualTokens, ...], elements of 1, 2, 4 or 8 bytes, any strides
	Value *Tensor // in: [Key's dim 0, ...], its own trailing dims and dtype (MLA)
	// NumActualTokens is n, the rows to gather, the same on every rank.
	NumActualTokens int64
	RestoreIdx      *Tensor // in: [M] int32/int64, rows of the gathered [W * n, ...] tensors
	KeyOut          *Tensor // out: [M, Key's other dims], compact
	ValueOut        *Tensor // out: [M, Value's other dims], compact
	// Workspace is device memory on the Comm's device, 256-byte aligned, of WorkspaceSize
	// bytes (at least PCPKVAllgatherAndRestoreWorkspaceSize's result); 0 when that is 0.
	Workspace     uintptr
	WorkspaceSize uint64
	Stream        Stream
}

func (args *PCPKVAllgatherAndRestoreArgs) tensors(f *frame) ([5]cTensor, error) {
	var cs [5]cTensor
	names := [5]string{"args->key", "args->value", "args->restore_idx", "args->key_out",
		"args->value_out"}
	ts := [5]*Tensor{args.Key, args.Value, args.RestoreIdx, args.KeyOut, args.ValueOut}
	err := f.tensorsInto(cs[:], names[:], ts[:])
	return cs, err
}

// PCPKVAllgatherAndRestoreWorkspaceSize returns the device workspace in bytes that
// PCPKVAllgatherAndRestore needs for these arguments
// (cattn_pcp_kv_allgather_and_restore_workspace_size). It reads the Comm's size, Key's and
// Value's shapes and dtypes and NumActualTokens. A nil Comm is passed as NULL and reported by
// libcattn. Errors: StatusInvalidArgument (a dtype with Lanes != 1 among others),
// StatusNotSupported (CPU-only build, an element width other than 8-64 bits).
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func PCPKVAllgatherAndRestoreWorkspaceSize(args PCPKVAllgatherAndRestoreArgs) (uint64, error) {
	f := newFrame("cattn_pcp_kv_allgather_and_restore_workspace_size",
		"PCPKVAllgatherAndRestoreWorkspaceSize")
	defer f.free()
	var c cComm
	if args.Comm != nil {
		var err error
		if c, err = args.Comm.lock(f, "args->comm", false); err != nil {
			return 0, err
		}
		defer args.Comm.unlock(false)
	}
	cs, err := args.tensors(f)
	if err != nil {
		return 0, err
	}
	return f.pcpKVAllgatherAndRestoreWorkspaceSize(c, cs, args.NumActualTokens, args.Workspace,
		args.WorkspaceSize, args.Stream)
}

// PCPKVAllgatherAndRestore all-gathers this rank's first NumActualTokens rows of Key and
// Value across the PCP group and restores the original token order, as vLLM's
// pcp_kv_allgather_and_restore (cattn_pcp_kv_allgather_and_restore): KeyOut[i] =
// K_all[RestoreIdx[i]] with K_all the ranks' rows concatenated, the same for Value. Work is
// enqueued on args.Stream; NCCL may block until every rank reaches its first collective.
// Host tensors are StatusNotSupported (NCCL needs device memory), as is a CPU-only build.
// A nil Comm is passed as NULL and reported by libcattn.
//
// See docs/api/pcp_kv_allgather_and_restore.md.
func PCPKVAllgatherAndRestore(args PCPKVAllgatherAndRestoreArgs) error {
	f := newFrame("cattn_pcp_kv_allgather_and_restore", "PCPKVAllgatherAndRestore")
	defer f.free()
	var c cComm
	if args.Comm != nil {
		var err error
		if c, err = args.Comm.lock(f, "args->comm", true); err != nil {
			return err
		}
		defer args.Comm.unlock(true)
	}
	cs, err := args.tensors(f)
	if err != nil {
		return err
	}
	return f.pcpKVAllgatherAndRestore(c, cs, args.NumActualTokens, args.Workspace,
		args.WorkspaceSize, args.Stream)
}

func (f *frame) commGetUniqueID() (CommUniqueID, error) {
	var id CommUniqueID
	cid := (*C.cattn_comm_unique_id_t)(f.alloc(C.sizeof_cattn_comm_unique_id_t))
	if err := f.status(cCommGetUniqueID(cid, f.msg)); err != nil {
		return id, err
	}
	copy(id[:], unsafe.Slice((*byte)(unsafe.Pointer(&cid.bytes[0])), len(id)))
	return id, nil
}

func (f *frame) commCreate(id *CommUniqueID, nranks, rank, device int32) (cComm, error) {
	var cid *C.cattn_comm_unique_id_t
	if id != nil {
		cid = (*C.cattn_comm_unique_id_t)(f.alloc(C.sizeof_cattn_comm_unique_id_t))
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&cid.bytes[0])), len(id)), id[:])
	}
	out := (*cComm)(f.alloc(unsafe.Sizeof(cComm(nil))))
	err := f.status(cCommCreate(cid, C.int32_t(nranks), C.int32_t(rank),
		C.int32_t(device), out, f.msg))
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (f *frame) commCreateBorrowed(ncclComm uintptr) (cComm, error) {
	out := (*cComm)(f.alloc(unsafe.Sizeof(cComm(nil))))
	err := f.status(cCommCreateBorrowed(C.uintptr_t(ncclComm), out, f.msg))
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (f *frame) commGetRank(c cComm) (int32, error) {
	var v C.int32_t
	err := f.status(cCommGetRank(c, &v, f.msg))
	return int32(v), err
}

func (f *frame) commGetSize(c cComm) (int32, error) {
	var v C.int32_t
	err := f.status(cCommGetSize(c, &v, f.msg))
	return int32(v), err
}

// t holds key, value, restore_idx, key_out, value_out.
func (f *frame) allgatherArgs(comm cComm, t [5]cTensor, n int64, workspace uintptr,
	workspaceSize uint64, stream Stream) *C.cattn_pcp_kv_allgather_and_restore_args_t {
	a := cArgs[C.cattn_pcp_kv_allgather_and_restore_args_t](f)
	a.comm = comm
	a.key, a.value = t[0], t[1]
	a.num_actual_tokens = C.int64_t(n)
	a.restore_idx, a.key_out, a.value_out = t[2], t[3], t[4]
	setAddr(&a.workspace, workspace)
	a.workspace_size = C.size_t(workspaceSize)
	setAddr(&a.stream, uintptr(stream))
	return a
}

func (f *frame) pcpKVAllgatherAndRestoreWorkspaceSize(comm cComm, t [5]cTensor, n int64,
	workspace uintptr, workspaceSize uint64, stream Stream) (uint64, error) {
	a := f.allgatherArgs(comm, t, n, workspace, workspaceSize, stream)
	var size C.size_t
	err := f.status(cPCPKVAllgatherAndRestoreWorkspaceSize(a, &size, f.msg))
	return uint64(size), err
}

func (f *frame) pcpKVAllgatherAndRestore(comm cComm, t [5]cTensor, n int64, workspace uintptr,
	workspaceSize uint64, stream Stream) error {
	a := f.allgatherArgs(comm, t, n, workspace, workspaceSize, stream)
	return f.status(cPCPKVAllgatherAndRestore(a, f.msg))
}
