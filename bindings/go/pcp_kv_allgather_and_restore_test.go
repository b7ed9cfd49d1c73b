// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"errors"
	"testing"
)

// With a CPU-only libcattn (the usual test build) every communicator call refuses plainly
// after its argument checks; with NCCL and a GPU a one-rank communicator is created for real.
func TestCommLifecycle(t *testing.T) {
	id, err := NewCommUniqueID()
	if err != nil {
		wantError(t, err, StatusNotSupported, "cattn_comm_get_unique_id")
		_, err = NewComm(id, 1, 0, 0)
		wantError(t, err, StatusNotSupported, "cattn_comm_create")
		t.Logf("no NCCL communicators in this build: %v", err)
	} else {
		comm, err := NewComm(id, 1, 0, 0)
		if errors.Is(err, StatusNotSupported) {
			t.Skipf("NCCL is loadable but no GPU can be used: %v", err)
		}
		mustOK(t, err)
		rank, err := comm.Rank()
		mustOK(t, err)
		size, err := comm.Size()
		mustOK(t, err)
		wantEqual(t, "rank and size", [2]int32{rank, size}, [2]int32{0, 1})
		mustOK(t, comm.Close())
		mustOK(t, comm.Close())
		_, err = comm.Rank()
		wantError(t, err, StatusInvalidArgument, "cattn_comm_get_rank", "comm is closed")
	}
}

func TestCommErrors(t *testing.T) {
	var id CommUniqueID
	_, err := NewComm(id, 0, 0, 0)
	wantError(t, err, StatusInvalidArgument, "cattn_comm_create", "nranks")
	_, err = NewComm(id, 2, 2, 0)
	wantError(t, err, StatusInvalidArgument, "cattn_comm_create", "rank")
	_, err = NewComm(id, 1, 0, -1)
	wantError(t, err, StatusInvalidArgument, "cattn_comm_create", "cuda_device")
	_, err = UnsafeBorrowComm(0)
	wantError(t, err, StatusInvalidArgument, "cattn_comm_create_borrowed", "nccl_comm")

	// Handles that are nil or closed are refused in Go, before any C call.
	var none *Comm
	mustOK(t, none.Close())
	_, err = none.Size()
	wantError(t, err, StatusInvalidArgument, "cattn_comm_get_size", "comm is NULL")
	closed := &Comm{}
	mustOK(t, closed.Close())
	_, err = closed.Rank()
	wantError(t, err, StatusInvalidArgument, "cattn_comm_get_rank", "comm is closed")
	err = PCPKVAllgatherAndRestore(PCPKVAllgatherAndRestoreArgs{Comm: closed})
	wantError(t, err, StatusInvalidArgument, "cattn_pcp_kv_allgather_and_restore", "comm is closed")
}

func TestPCPKVAllgatherAndRestoreErrors(t *testing.T) {
	const fn = "cattn_pcp_kv_allgather_and_restore"
	keyOut := newIBuf(Int32, []int64{4, 2}, 1, 0)
	args := PCPKVAllgatherAndRestoreArgs{
		Key: Int32Tensor(make([]int32, 8), 4, 2), Value: Int32Tensor(make([]int32, 8), 4, 2),
		NumActualTokens: 4, RestoreIdx: Int64Tensor([]int64{0, 1, 2, 3}),
		KeyOut: keyOut.t, ValueOut: Int32Tensor(make([]int32, 8), 4, 2),
	}
	before := keyOut.raw()
	// Host tensors: NCCL gathers device memory, there is no host path.
	wantError(t, PCPKVAllgatherAndRestore(args), StatusNotSupported, fn, "args->key is host memory")
	_, err := PCPKVAllgatherAndRestoreWorkspaceSize(args)
	wantError(t, err, StatusInvalidArgument, fn+"_workspace_size", "args->comm is NULL")
	noKey := args
	noKey.Key = nil
	wantError(t, PCPKVAllgatherAndRestore(noKey), StatusInvalidArgument, fn, "args->key")
	wantEqual(t, "nothing written", keyOut.raw(), before)
}
