// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"math"
	"strings"
	"testing"
)

func TestTensorConstructors(t *testing.T) {
	a := Int32Tensor(make([]int32, 6))
	wantEqual(t, "default shape", a.Shape, []int64{6})
	wantEqual(t, "dtype", a.DType, Int32)
	wantEqual(t, "device", a.Device, CPU)
	b := BytesTensor(make([]byte, 12), BFloat16)
	wantEqual(t, "bytes default shape", b.Shape, []int64{6})
	wantEqual(t, "elements", Int64Tensor(make([]int64, 24), 2, 3, 4).NumElements(), int64(24))
	wantEqual(t, "0-D", (&Tensor{}).NumElements(), int64(1))
	d := UnsafeDeviceTensor(0x1000, CUDA(1), Int64, 5)
	wantEqual(t, "device tensor", [2]any{d.Device, d.Shape}, [2]any{CUDA(1), []int64{5}})
	wantEqual(t, "sizes", [4]int{UInt8.Size(), BFloat16.Size(), Float32.Size(), Int64.Size()},
		[4]int{1, 2, 4, 8})
}

func TestTensorViewChecks(t *testing.T) {
	cases := []struct {
		name string
		t    *Tensor
		ok   bool
	}{
		{"exact", Int32Tensor(make([]int32, 6), 2, 3), true},
		{"smaller", Int32Tensor(make([]int32, 6), 2, 2), true},
		{"larger", Int32Tensor(make([]int32, 6), 7), false},
		{"strided fits", Int32Tensor(make([]int32, 6), 3).WithStrides(2).WithByteOffset(4), true},
		{"strided past", Int32Tensor(make([]int32, 6), 3).WithStrides(2).WithByteOffset(8), false},
		{"transposed", Int32Tensor(make([]int32, 6), 3, 2).WithStrides(1, 3), true},
		{"offset past", Int32Tensor(make([]int32, 6)).WithByteOffset(1), false},
		{"wider dtype", Int32Tensor(make([]int32, 6)).WithDType(Int64), false},
		{"empty view", Int32Tensor(nil, 0), true},
		{"empty view of 2-D", Int32Tensor(nil, 5, 0), true},
		{"nil slice, elements", Int32Tensor(nil, 1), false},
		{"stride count", Int32Tensor(make([]int32, 6), 2, 3).WithStrides(3), false},
		{"overflowing view", Int32Tensor(make([]int32, 6), 2).WithStrides(math.MaxInt64), false},
		{"overflowing offset", Int32Tensor(make([]int32, 6)).WithByteOffset(math.MaxUint64), false},
		{"negative stride: left to libcattn", Int32Tensor(make([]int32, 6), 2).WithStrides(-1), true},
		{"device tensors are not checked", UnsafeDeviceTensor(1, CUDA(0), Int32, 1<<40), true},
	}
	for _, c := range cases {
		err := c.t.checkView("fn", "arg")
		if (err == nil) != c.ok {
			t.Fatalf("%s: checkView = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && (err.Code != StatusInvalidArgument ||
			!strings.HasPrefix(err.Message, "fn: arg ")) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	// The library refuses what the Go check leaves to it.
	wantError(t, GetPCPQueryRestoreIdx(Int64Tensor([]int64{0, 2}),
		Int64Tensor(make([]int64, 4), 2).WithStrides(-1), 0), StatusInvalidArgument,
		"args->restore_idx has a negative stride")
}

// Empty Go slices become NULL data, which libcattn accepts for tensors without elements.
func TestEmptyTensors(t *testing.T) {
	size, err := GetPCPQueryRestoreIdxSize(Int32Tensor([]int32{0}))
	mustOK(t, err)
	wantEqual(t, "size", size, int64(0))
	mustOK(t, GetPCPQueryRestoreIdx(Int32Tensor([]int32{4}), Int32Tensor(nil), 0))
	mustOK(t, GetPCPQueryRestoreIdx(Int32Tensor([]int32{4}), Int64Tensor([]int64{}), 0))
}

// Device tensors are described by address; with no usable GPU libcattn refuses them after its
// device checks, without touching the (fake) addresses.
func TestDeviceTensors(t *testing.T) {
	if n, err := CUDADeviceCount(); err != nil || n > 0 {
		t.Skipf("a GPU is visible (%d): fake device addresses would be dereferenced", n)
	}
	cu := UnsafeDeviceTensor(0x10000, CUDA(0), Int64, 3)
	out := UnsafeDeviceTensor(0x20000, CUDA(0), Int64, 8)
	wantError(t, GetPCPQueryRestoreIdx(cu, out, Stream(0x1234)), StatusNotSupported,
		"cattn_get_pcp_query_restore_idx")
	// Mixing devices is an argument error, found before the device path.
	wantError(t, GetPCPQueryRestoreIdx(cu, Int64Tensor(make([]int64, 8)), 0),
		StatusInvalidArgument, "args->restore_idx is on a different device")
	// A host mirror must be host memory.
	_, err := GetPCPQueryRestoreIdxSize(cu)
	wantError(t, err, StatusInvalidArgument, "cu_num_tokens")
	// Pinned host memory counts as host memory: here a C-side view of nothing.
	empty := UnsafeDeviceTensor(0, Device{Type: DeviceCUDAHost}, Int64, 0)
	mustOK(t, GetPCPQueryRestoreIdx(Int64Tensor([]int64{0}), empty, 0))
}
