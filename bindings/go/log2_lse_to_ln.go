package cattn

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
func Log2LSEToLnHalf(bits []uint16, dtype DType, rounding LSERounding) error {
	t := sliceTensor(unsafe.Pointer(unsafe.SliceData(bits)), len(bits), dtype, nil)
	return Log2LSEToLn(t, t, rounding, 0)
}
