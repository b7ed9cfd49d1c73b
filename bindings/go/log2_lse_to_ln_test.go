// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"math"
	"strconv"
	"testing"
)

type lseCase struct {
	Name     string  `json:"name"`
	DType    string  `json:"dtype"`
	Shape    []int64 `json:"shape"`
	In       string  `json:"in"`
	Out      string  `json:"out"`
	OutTorch string  `json:"out_torch"`
}

func hexBits(t *testing.T, s string, width int) []uint64 {
	out := make([]uint64, 0, len(s)/width)
	for i := 0; i+width <= len(s); i += width {
		v, err := strconv.ParseUint(s[i:i+width], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestLog2LSEToLnVectors(t *testing.T) {
	for _, c := range loadCases[lseCase](t, "log2_lse_to_ln") {
		for _, rounding := range []LSERounding{LSERoundingTorch, LSERoundingTorch1CPU} {
			want := c.OutTorch
			if rounding == LSERoundingTorch1CPU {
				want = c.Out
			}
			switch c.DType {
			case "float16", "bfloat16":
				dt, nanAbove := Float16, uint64(0x7C00)
				if c.DType == "bfloat16" {
					dt, nanAbove = BFloat16, 0x7F80
				}
				in := hexBits(t, c.In, 4)
				bits := make([]uint16, len(in))
				for i, v := range in {
					bits[i] = uint16(v)
				}
				mustOK(t, Log2LSEToLnHalf(bits, dt, rounding))
				for i, w := range hexBits(t, want, 4) {
					g := uint64(bits[i])
					if g != w && !(g&0x7FFF > nanAbove && w&0x7FFF > nanAbove) {
						t.Fatalf("%s [%d] rounding %d: got %#x, want %#x", c.Name, i, rounding, g, w)
					}
				}
			case "float32":
				in := hexBits(t, c.In, 8)
				v := make([]float32, len(in))
				for i, b := range in {
					v[i] = math.Float32frombits(uint32(b))
				}
				mustOK(t, Log2LSEToLnFloat32(v))
				for i, w := range hexBits(t, want, 8) {
					g := math.Float32bits(v[i])
					if uint64(g) != w && !(math.IsNaN(float64(v[i])) && math.IsNaN(float64(math.Float32frombits(uint32(w))))) {
						t.Fatalf("%s [%d]: got %#x, want %#x", c.Name, i, g, w)
					}
				}
			default:
				in := hexBits(t, c.In, 16)
				v := make([]float64, len(in))
				for i, b := range in {
					v[i] = math.Float64frombits(b)
				}
				mustOK(t, Log2LSEToLnFloat64(v))
				for i, w := range hexBits(t, want, 16) {
					if g := math.Float64bits(v[i]); g != w && !(math.IsNaN(v[i]) && math.IsNaN(math.Float64frombits(w))) {
						t.Fatalf("%s [%d]: got %#x, want %#x", c.Name, i, g, w)
					}
				}
			}
		}
	}
}

func TestLog2LSEToLnStridedAndErrors(t *testing.T) {
	in := []float32{1, 99, 2, 99, 3, 99}
	out := make([]float32, 3)
	mustOK(t, Log2LSEToLn(Float32Tensor(in, 3).WithStrides(2), Float32Tensor(out), LSERoundingTorch, 0))
	ln2 := float32(math.Ln2)
	wantEqual(t, "strided", out, []float32{ln2, 2 * ln2, 3 * ln2})
	err := Log2LSEToLn(Float32Tensor(in), Float32Tensor(out), LSERoundingTorch, 0)
	wantError(t, err, StatusInvalidArgument, "cattn_log2_lse_to_ln", "args->out has the wrong size")
	err = Log2LSEToLn(Float32Tensor(out), Float32Tensor(out), 7, 0)
	wantError(t, err, StatusInvalidArgument, "args->half_rounding")
	err = Log2LSEToLn(Int32Tensor([]int32{1}), Int32Tensor([]int32{1}), LSERoundingTorch, 0)
	wantError(t, err, StatusInvalidArgument, "args->lse has the wrong dtype")
}

func TestLog2LSEToLnOf(t *testing.T) {
	in := []float32{0, 1, -2.5, float32(math.Inf(1))}
	got, err := Log2LSEToLnOf(in)
	mustOK(t, err)
	want := append([]float32(nil), in...)
	mustOK(t, Log2LSEToLnFloat32(want))
	wantEqual(t, "float32 like in place", got, want)
	wantEqual(t, "input untouched", in[1], float32(1))
	got64, err := Log2LSEToLnOf([]float64{2})
	mustOK(t, err)
	wantEqual(t, "float64", got64, []float64{2 * math.Ln2})
	empty, err := Log2LSEToLnOf([]float64{})
	mustOK(t, err)
	wantEqual(t, "empty", len(empty), 0)
}
