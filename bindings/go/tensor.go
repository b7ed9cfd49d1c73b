// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// DeviceType is DLPack's DLDeviceType.
type DeviceType int32

// The device types libcattn dispatches on (DLPack values).
const (
	DeviceCPU      DeviceType = 1 // kDLCPU: host memory
	DeviceCUDA     DeviceType = 2 // kDLCUDA: CUDA device memory
	DeviceCUDAHost DeviceType = 3 // kDLCUDAHost: pinned host memory, treated as host memory
)

// Device is DLPack's DLDevice: where a tensor's memory lives.
type Device struct {
	Type DeviceType
	ID   int32
}

// CPU is host memory, the device of every tensor made from a Go slice.
var CPU = Device{Type: DeviceCPU}

// CUDA returns the device of CUDA ordinal id.
func CUDA(id int32) Device { return Device{Type: DeviceCUDA, ID: id} }

// DTypeCode is DLPack's DLDataTypeCode.
type DTypeCode uint8

// DLPack type codes.
const (
	CodeInt    DTypeCode = 0 // kDLInt
	CodeUInt   DTypeCode = 1 // kDLUInt
	CodeFloat  DTypeCode = 2 // kDLFloat
	CodeBFloat DTypeCode = 4 // kDLBfloat
	CodeBool   DTypeCode = 6 // kDLBool
)

// DType is DLPack's DLDataType: a type code, the bits of one lane and the lane count.
type DType struct {
	Code  DTypeCode
	Bits  uint8
	Lanes uint16
}

// Common element types. Index and length tensors are Int32 or Int64; fused_pcp_qkv_select
// and the all-gather move elements of 1, 2, 4 or 8 bytes of any type as opaque bytes; flag
// tensors (masks) hold one byte per entry, Bool, UInt8 or Int8, nonzero meaning set.
var (
	Bool     = DType{CodeBool, 8, 1}
	Int8     = DType{CodeInt, 8, 1}
	Int16    = DType{CodeInt, 16, 1}
	Int32    = DType{CodeInt, 32, 1}
	Int64    = DType{CodeInt, 64, 1}
	UInt8    = DType{CodeUInt, 8, 1}
	UInt16   = DType{CodeUInt, 16, 1}
	UInt32   = DType{CodeUInt, 32, 1}
	UInt64   = DType{CodeUInt, 64, 1}
	Float16  = DType{CodeFloat, 16, 1}
	BFloat16 = DType{CodeBFloat, 16, 1}
	Float32  = DType{CodeFloat, 32, 1}
	Float64  = DType{CodeFloat, 64, 1}
)

// Size returns the bytes of one element, rounded up to whole bytes.
func (d DType) Size() int { return (int(d.Bits)*int(d.Lanes) + 7) / 8 }

// Stream is a CUDA stream (cudaStream_t) as an integer; 0 is the legacy default stream. Host
// tensors ignore it.
type Stream uintptr

// Tensor describes a borrowed DLPack view that a call reads or writes. Tensors made from Go
// slices (Int32Tensor, Int64Tensor, Float32Tensor, BytesTensor) are host tensors: the slice is
// pinned for the duration of each call that uses it and never retained afterwards, and every
// call first checks that the view (shape, strides, byte offset, element size) lies inside the
// slice. UnsafeDeviceTensor describes memory the caller manages by address.
//
// The exported fields may be changed between calls; they are read afresh by each call.
// A Tensor holds no C resources and needs no Close.
type Tensor struct {
	// Shape has one entry per dimension; a 0-D tensor has none.
	Shape []int64
	// Strides are in elements, one per dimension; nil means compact row-major.
	Strides []int64
	// ByteOffset is added to the data address before the first element.
	ByteOffset uint64
	DType      DType
	Device     Device

	// Exactly one of these describes the memory: a Go slice's first element (slice == true,
	// host may be nil for an empty slice) or an address the caller manages.
	host      unsafe.Pointer
	hostBytes uint64
	slice     bool
	addr      uintptr
}

func sliceTensor(p unsafe.Pointer, n int, dtype DType, shape []int64) *Tensor {
	t := &Tensor{DType: dtype, Device: CPU, host: p, slice: true}
	t.hostBytes = uint64(n) * uint64(dtype.Size())
	if len(shape) == 0 {
		shape = []int64{int64(n)}
	}
	t.Shape = append([]int64(nil), shape...)
	return t
}

// Int32Tensor views data as a host int32 tensor of the given shape; with no shape it is 1-D
// with len(data) elements. The view is compact until WithStrides says otherwise.
func Int32Tensor(data []int32, shape ...int64) *Tensor {
	return sliceTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data), Int32, shape)
}

// Int64Tensor views data as a host int64 tensor of the given shape (default: 1-D, len(data)).
func Int64Tensor(data []int64, shape ...int64) *Tensor {
	return sliceTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data), Int64, shape)
}

// Float32Tensor views data as a host float32 tensor of the given shape (default: 1-D).
func Float32Tensor(data []float32, shape ...int64) *Tensor {
	return sliceTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data), Float32, shape)
}

// BytesTensor views raw bytes as a host tensor of elements of type dtype, for element types Go
// has no slice type for (bfloat16, fp8) or that a call treats as opaque bytes, as
// FusedPCPQKVSelect does. With no shape it is 1-D with len(data) / dtype.Size() elements.
// The element size is dtype.Size(); no alignment is assumed by libcattn.
func BytesTensor(data []byte, dtype DType, shape ...int64) *Tensor {
	t := sliceTensor(unsafe.Pointer(unsafe.SliceData(data)), 0, dtype, shape)
	t.hostBytes = uint64(len(data))
	if len(shape) == 0 && dtype.Size() > 0 {
		t.Shape = []int64{int64(len(data) / dtype.Size())}
	}
	return t
}

// UnsafeDeviceTensor describes memory that Go does not manage, by address: CUDA device memory
// (Device CUDA(id)), pinned host memory (DeviceCUDAHost), or host memory from C. Nothing is
// checked on the Go side: the caller guarantees that the view lies inside a live allocation
// on that device for the duration of every call that uses it, and that it is not Go memory
// (Go memory must be passed as a slice, so that it is pinned). Calls given CUDA tensors are
// enqueued on the Stream passed to them.
func UnsafeDeviceTensor(ptr uintptr, device Device, dtype DType, shape ...int64) *Tensor {
	return &Tensor{
		Shape:  append([]int64(nil), shape...),
		DType:  dtype,
		Device: device,
		addr:   ptr,
	}
}

// WithStrides sets the strides (in elements, one per dimension) and returns t.
func (t *Tensor) WithStrides(strides ...int64) *Tensor {
	t.Strides = append([]int64(nil), strides...)
	return t
}

// WithByteOffset sets the byte offset of the first element and returns t.
func (t *Tensor) WithByteOffset(offset uint64) *Tensor {
	t.ByteOffset = offset
	return t
}

// WithDType sets the element type and returns t (for a slice view, the view is rechecked
// against the slice's bytes at each call).
func (t *Tensor) WithDType(dtype DType) *Tensor {
	t.DType = dtype
	return t
}

// NumElements returns the product of the shape (1 for a 0-D tensor).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// checkView verifies what C cannot: that the DLTensor made from t is well formed (a stride
// per dimension) and that a slice view stays inside its slice. Negative sizes and strides
// are left to libcattn, which rejects them without touching memory.
func (t *Tensor) checkView(fn, arg string) *Error {
	if len(t.Shape) > math.MaxInt32 {
		return argError(fn, arg, "has too many dimensions", strconv.Itoa(len(t.Shape)), "at most 2^31 - 1")
	}
	if t.Strides != nil && len(t.Strides) != len(t.Shape) {
		return argError(fn, arg, "has a stride count that differs from its dimension count",
			strconv.Itoa(len(t.Strides))+" strides", strconv.Itoa(len(t.Shape)))
	}
	if !t.slice {
		return nil
	}
	need, ok := t.spanBytes()
	if ok && need <= t.hostBytes {
		return nil
	}
	got := "more than 2^64 bytes"
	if ok {
		got = strconv.FormatUint(need, 10) + " bytes"
	}
	return argError(fn, arg, "does not fit its Go slice", "a view of "+got,
		"at most the slice's "+strconv.FormatUint(t.hostBytes, 10)+" bytes")
}

// spanBytes returns the bytes from the slice start to one past the view's last element; ok is
// false when that does not fit 64 bits. Views libcattn rejects anyway (negative sizes or
// strides) and empty views need no memory.
func (t *Tensor) spanBytes() (uint64, bool) {
	var last uint64 // element offset of the last element
	for i, d := range t.Shape {
		if d < 0 {
			return 0, true
		}
		if d == 0 {
			return 0, true
		}
		stride := t.compactStride(i)
		if stride < 0 {
			return 0, true
		}
		hi, lo := bits.Mul64(uint64(d-1), uint64(stride))
		if hi != 0 {
			return 0, false
		}
		var carry uint64
		last, carry = bits.Add64(last, lo, 0)
		if carry != 0 {
			return 0, false
		}
	}
	if last == math.MaxUint64 {
		return 0, false
	}
	hi, span := bits.Mul64(last+1, uint64(t.DType.Size()))
	if hi != 0 {
		return 0, false
	}
	total, carry := bits.Add64(span, t.ByteOffset, 0)
	if carry != 0 {
		return 0, false
	}
	return total, true
}

// compactStride returns dimension i's stride: the given one, or the row-major one. A
// row-major stride that overflows is reported as -1, which makes the view go unchecked here
// and rejected by libcattn (its span overflows int64 too).
func (t *Tensor) compactStride(i int) int64 {
	if t.Strides != nil {
		return t.Strides[i]
	}
	s := int64(1)
	for _, d := range t.Shape[i+1:] {
		if d <= 0 {
			return 0
		}
		if s > math.MaxInt64/d {
			return -1
		}
		s *= d
	}
	return s
}

// Index is the element type of the one-call helpers' index and length slices: int32 or int64,
// or a type defined on one, the two dtypes of libcattn's index tensors. A helper returns
// slices of the type it was given.
type Index interface{ ~int32 | ~int64 }

// IndexTensor views data as a host int32 or int64 tensor, as T's size says, of the given shape
// (default: 1-D, len(data)).
func IndexTensor[T Index](data []T, shape ...int64) *Tensor {
	dtype := Int64
	if unsafe.Sizeof(*new(T)) == 4 {
		dtype = Int32
	}
	return sliceTensor(unsafe.Pointer(unsafe.SliceData(data)), len(data), dtype, shape)
}

// flatRows copies rows of equal length into one row-major slice and returns it with that
// length (0 for no rows); bad is the first row of another length, or -1.
func flatRows[T any](rows [][]T) (flat []T, cols int, bad int) {
	if len(rows) == 0 {
		return nil, 0, -1
	}
	cols = len(rows[0])
	flat = make([]T, 0, len(rows)*cols)
	for i, r := range rows {
		if len(r) != cols {
			return nil, cols, i
		}
		flat = append(flat, r...)
	}
	return flat, cols, -1
}

// splitRows cuts flat into len(flat) / cols rows of cols, views of flat.
func splitRows[T any](flat []T, cols int) [][]T {
	if cols == 0 {
		return make([][]T, 0)
	}
	rows := make([][]T, len(flat)/cols)
	for i := range rows {
		rows[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return rows
}

// lastOf returns the last element of v as an int64, 0 for an empty slice.
func lastOf[T Index](v []T) int64 {
	if len(v) == 0 {
		return 0
	}
	return int64(v[len(v)-1])
}

// longestQuery returns the largest qsl[i+1] - qsl[i], 0 for fewer than two entries.
func longestQuery[T Index](qsl []T) int64 {
	var m int64
	for i := 1; i < len(qsl); i++ {
		if q := int64(qsl[i]) - int64(qsl[i-1]); q > m {
			m = q
		}
	}
	return m
}

// numReqs returns B for a [B + 1] query_start_loc, 0 for an empty one.
func numReqs[T Index](qsl []T) int64 { return max(int64(len(qsl))-1, 0) }

// flagsTensor views v as a host Bool tensor of one byte per entry (0 or 1), a copy; nil for
// nil.
func flagsTensor(v []bool) *Tensor {
	if v == nil {
		return nil
	}
	b := make([]byte, len(v))
	for i, x := range v {
		if x {
			b[i] = 1
		}
	}
	return BytesTensor(b, Bool, int64(len(b)))
}

// boolsOf reads flag bytes back (nonzero is true).
func boolsOf(b []byte) []bool {
	out := make([]bool, len(b))
	for i, x := range b {
		out[i] = x != 0
	}
	return out
}
