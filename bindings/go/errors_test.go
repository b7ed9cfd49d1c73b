// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"errors"
	"fmt"
	"testing"
)

func TestStatusStringsMatchTheLibrary(t *testing.T) {
	for s := Status(-1); s <= 12; s++ {
		wantEqual(t, fmt.Sprint(int32(s)), s.String(), cStatusString(int32(s)))
	}
	wantEqual(t, "unknown", Status(100).String(), "CATTN_UNKNOWN_STATUS")
}

func TestErrorForms(t *testing.T) {
	_, err := GetPCPQueryRestoreIdxSize(Int64Tensor([]int64{0, 3}))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not *Error", err)
	}
	wantEqual(t, "Error()", err.Error(), "CATTN_INVALID_ARGUMENT: "+e.Message)
	if !errors.Is(err, StatusInvalidArgument) || errors.Is(err, StatusNotSupported) {
		t.Fatal("errors.Is does not follow the code")
	}
	// Wrapped errors still unwrap to the *Error.
	wrapped := fmt.Errorf("planning batch 7: %w", err)
	var e2 *Error
	if !errors.As(wrapped, &e2) || e2 != e || !errors.Is(wrapped, StatusInvalidArgument) {
		t.Fatal("wrapped error lost its *Error")
	}
	wantEqual(t, "bare code", (&Error{Code: StatusInternal}).Error(), "CATTN_INTERNAL")
	wantEqual(t, "status as error", error(StatusNCCLError).Error(), "CATTN_NCCL_ERROR")
}

// The message of a failed call is the one for that call, even after later calls on the same
// goroutine (or thread) succeed or fail differently.
func TestErrorMessageBelongsToItsCall(t *testing.T) {
	_, err1 := GetPCPQueryRestoreIdxSize(Int64Tensor([]int64{0, 3}))
	_, _, err2 := ComputeCausalConv1dMetadataSize(Int64Tensor([]int64{0, 4}), 0)
	_, err3 := GetPCPQueryRestoreIdxSize(Int64Tensor([]int64{0, 4}))
	mustOK(t, err3)
	wantError(t, err1, StatusInvalidArgument, "cattn_get_pcp_query_restore_idx_size")
	wantError(t, err2, StatusInvalidArgument, "cattn_compute_causal_conv1d_metadata_size", "block_m")
}

func TestVersion(t *testing.T) {
	wantEqual(t, "library version = header version", Version(), HeaderVersion)
	v := Version()
	wantEqual(t, "version string", VersionString(), fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100))
	wantEqual(t, "header string", HeaderVersionString, VersionString())
	n, err := CUDADeviceCount()
	mustOK(t, err)
	if n < 0 {
		t.Fatalf("device count %d", n)
	}
}
