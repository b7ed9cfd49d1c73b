// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "unsafe"

// LSERounding says how Log2LSEToLn rounds float16 and bfloat16 products.
type LSERounding int64

const (
	// LSERoundingTorch is torch >= 2.0 (CPU and CUDA): x and ln 2 in float32, one rounding
	// to the tensor's type (CATTN_LSE_ROUNDING_TORCH).
	LSERoundingTorch LSERounding = 0
	// LSERoundingTorch1CPU is torch 1.x on the CPU: ln 2 first rounded to the tensor's type
	// (CATTN_LSE_ROUNDING_TORCH1_CPU).
	LSERoundingTorch1CPU LSERounding = 1
)

// Log2LSEToLn writes out = lse * ln 2 (vLLM's log2_lse_to_ln, cattn_log2_lse_to_ln) for
// float16, bfloat16, float32 or float64 tensors of one shape and dtype, any strides; out may be
// the very lse tensor (in place) but may not overlap it otherwise. Host tensors run
// synchronously; CUDA tensors are one kernel enqueued on stream.
//
// See docs/api/log2_lse_to_ln.md.
func Log2LSEToLn(lse, out *Tensor, rounding LSERounding, stream Stream) error {
	f := newFrame("cattn_log2_lse_to_ln", "Log2LSEToLn", "args->lse", "lse", "args->out", "out",
		"args->half_rounding", "rounding")
	defer f.free()
	in, err := f.tensor("args->lse", lse)
	if err != nil {
		return err
	}
	o, err := f.tensor("args->out", out)
	if err != nil {
		return err
	}
	return f.log2LSEToLn(in, o, int64(rounding), stream)
}

// Log2LSEToLnFloat32 converts host float32 values in place.
//
// See docs/api/log2_lse_to_ln.md.
func Log2LSEToLnFloat32(values []float32) error {
	t := Float32Tensor(values)
	return Log2LSEToLn(t, t, LSERoundingTorch, 0)
}

// Log2LSEToLnFloat64 converts host float64 values in place.
func Log2LSEToLnFloat64(values []float64) error {
	t := sliceTensor(unsafe.Pointer(unsafe.SliceData(values)), len(values), Float64, nil)
	return Log2LSEToLn(t, t, LSERoundingTorch, 0)
}

// Log2LSEToLnHalf converts host float16 or bfloat16 values (dtype Float16 or BFloat16), held
// as their bit patterns, in place.
//
// See docs/api/log2_lse_to_ln.md.
func Log2LSEToLnHalf(bits []uint16, dtype DType, rounding LSERounding) error {
	t := sliceTensor(unsafe.Pointer(unsafe.SliceData(bits)), len(bits), dtype, nil)
	return Log2LSEToLn(t, t, rounding, 0)
}

// Log2LSEToLnOf returns, in one call, lse * ln 2 for host float32 or float64 values in a new
// slice (Log2LSEToLnFloat32 and Log2LSEToLnFloat64 convert in place). Since 1.1.
func Log2LSEToLnOf[F float32 | float64](lse []F) ([]F, error) {
	f := newFrame("cattn_log2_lse_to_ln", "Log2LSEToLnOf", "args->lse", "lse", "args->out",
		"the result")
	defer f.free()
	dtype := Float64
	if unsafe.Sizeof(*new(F)) == 4 {
		dtype = Float32
	}
	out := make([]F, len(lse))
	var ts [2]cTensor
	if err := f.tensorsInto(ts[:], []string{"args->lse", "args->out"}, []*Tensor{
		sliceTensor(unsafe.Pointer(unsafe.SliceData(lse)), len(lse), dtype, nil),
		sliceTensor(unsafe.Pointer(unsafe.SliceData(out)), len(out), dtype, nil)}); err != nil {
		return nil, err
	}
	if err := f.log2LSEToLn(ts[0], ts[1], int64(LSERoundingTorch), 0); err != nil {
		return nil, err
	}
	return out, nil
}

func (f *frame) log2LSEToLn(lse, out cTensor, rounding int64, stream Stream) error {
	a := cArgs[C.cattn_log2_lse_to_ln_args_t](f)
	a.lse = lse
	a.out = out
	a.half_rounding = C.int64_t(rounding)
	setAddr(&a.stream, uintptr(stream))
	return f.status(cLog2LSEToLn(a, f.msg))
}
