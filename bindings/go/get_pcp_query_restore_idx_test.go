// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type restoreIdxCase struct {
	Name        string  `json:"name"`
	CuNumTokens []int64 `json:"cu_num_tokens"`
	RestoreIdx  []int64 `json:"restore_idx"`
}

func TestGetPCPQueryRestoreIdxVectors(t *testing.T) {
	cases := loadCases[restoreIdxCase](t, "get_pcp_query_restore_idx")
	for _, c := range cases {
		for _, inT := range indexTypes {
			for _, outT := range indexTypes {
				for _, step := range []int64{1, 3} {
					name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(inT), dtypeName(outT), step)
					cu := ibufOf(inT, c.CuNumTokens, step, step-1)
					size, err := GetPCPQueryRestoreIdxSize(cu.t)
					mustOK(t, err)
					wantEqual(t, name+" size", size, int64(len(c.RestoreIdx)))
					// Three spare entries show the -1 fill past the size.
					out := newIBuf(outT, []int64{size + 3}, step, 1)
					mustOK(t, GetPCPQueryRestoreIdx(cu.t, out.t, 0))
					want := append(append([]int64{}, c.RestoreIdx...), -1, -1, -1)
					wantEqual(t, name, out.values(), want)
					wantEqual(t, name+" input", cu.values(), c.CuNumTokens)
				}
			}
		}
	}
}

func TestGetPCPQueryRestoreIdxErrors(t *testing.T) {
	const fn = "cattn_get_pcp_query_restore_idx"
	good := Int64Tensor([]int64{0, 8, 20})

	t.Run("odd length", func(t *testing.T) {
		_, err := GetPCPQueryRestoreIdxSize(Int64Tensor([]int64{0, 3}))
		wantError(t, err, StatusInvalidArgument, "cattn_get_pcp_query_restore_idx_size", "cu_num_tokens")
		out := newIBuf(Int64, []int64{8}, 1, 0)
		before := out.raw()
		wantError(t, GetPCPQueryRestoreIdx(Int64Tensor([]int64{0, 8, 11}), out.t, 0),
			StatusInvalidArgument, fn, "args->cu_num_tokens")
		wantEqual(t, "untouched output", out.raw(), before)
	})
	t.Run("decreasing", func(t *testing.T) {
		out := newIBuf(Int32, []int64{8}, 1, 0)
		before := out.raw()
		wantError(t, GetPCPQueryRestoreIdx(Int32Tensor([]int32{0, 8, 4}), out.t, 0),
			StatusInvalidArgument, fn, "args->cu_num_tokens")
		wantEqual(t, "untouched output", out.raw(), before)
	})
	t.Run("too small", func(t *testing.T) {
		out := newIBuf(Int64, []int64{19}, 2, 0)
		before := out.raw()
		wantError(t, GetPCPQueryRestoreIdx(good, out.t, 0), StatusInsufficientSize, fn,
			"args->restore_idx")
		wantEqual(t, "untouched output", out.raw(), before)
	})
	t.Run("nil tensors", func(t *testing.T) {
		out := Int64Tensor(make([]int64, 20))
		wantError(t, GetPCPQueryRestoreIdx(nil, out, 0), StatusInvalidArgument, "args->cu_num_tokens")
		wantError(t, GetPCPQueryRestoreIdx(good, nil, 0), StatusInvalidArgument, "args->restore_idx")
		_, err := GetPCPQueryRestoreIdxSize(nil)
		wantError(t, err, StatusInvalidArgument, "cu_num_tokens")
	})
	t.Run("dtype and ndim", func(t *testing.T) {
		out := Int64Tensor(make([]int64, 20))
		wantError(t, GetPCPQueryRestoreIdx(Float32Tensor([]float32{0, 8, 20}), out, 0),
			StatusInvalidArgument, "args->cu_num_tokens")
		wantError(t, GetPCPQueryRestoreIdx(Int64Tensor([]int64{0, 8, 20, 20}, 2, 2), out, 0),
			StatusInvalidArgument, "args->cu_num_tokens")
		wantError(t, GetPCPQueryRestoreIdx(good, Float32Tensor(make([]float32, 20)), 0),
			StatusInvalidArgument, "args->restore_idx")
	})
	t.Run("view past the slice", func(t *testing.T) {
		backing := make([]int64, 20)
		out := Int64Tensor(backing, 21)
		wantError(t, GetPCPQueryRestoreIdx(good, out, 0), StatusInvalidArgument, fn,
			"args->restore_idx does not fit its Go slice", "168 bytes", "160 bytes")
		out = Int64Tensor(backing).WithStrides(2)
		wantError(t, GetPCPQueryRestoreIdx(good, out, 0), StatusInvalidArgument,
			"does not fit its Go slice")
		out = Int64Tensor(backing).WithByteOffset(8)
		wantError(t, GetPCPQueryRestoreIdx(good, out, 0), StatusInvalidArgument,
			"does not fit its Go slice")
		out = Int64Tensor(backing[:19]).WithStrides(1)
		wantError(t, GetPCPQueryRestoreIdx(good, out, 0), StatusInsufficientSize)
		out = Int64Tensor(backing).WithStrides(1, 1)
		wantError(t, GetPCPQueryRestoreIdx(good, out, 0), StatusInvalidArgument,
			"args->restore_idx has a stride count")
		for _, v := range backing {
			if v != 0 {
				t.Fatalf("a rejected call wrote %v", backing)
			}
		}
	})
}

// The binding's cost per call (frame, C structs, pinning, one cgo call) on a small batch.
func BenchmarkGetPCPQueryRestoreIdx(b *testing.B) {
	cu := Int64Tensor([]int64{0, 8, 20, 21, 33})
	out := Int64Tensor(make([]int64, 32))
	for i := 0; i < b.N; i++ {
		if err := GetPCPQueryRestoreIdx(cu, out, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPCPQueryRestoreIdxHelperVectors(t *testing.T) {
	for _, c := range loadCases[restoreIdxCase](t, "get_pcp_query_restore_idx") {
		got, err := PCPQueryRestoreIdx(c.CuNumTokens)
		mustOK(t, err)
		if c.RestoreIdx == nil {
			c.RestoreIdx = []int64{}
		}
		wantEqual(t, c.Name, got, c.RestoreIdx)
		if fitsInt32(c.CuNumTokens) {
			got32, err := PCPQueryRestoreIdx(asIndex[int32](c.CuNumTokens))
			mustOK(t, err)
			wantEqual(t, c.Name+" int32", asInt64(got32), c.RestoreIdx)
		}
	}
	_, err := PCPQueryRestoreIdx([]int32{0, 3})
	wantError(t, err, StatusInvalidArgument, "cattn.PCPQueryRestoreIdx: cuNumTokens ")
}
