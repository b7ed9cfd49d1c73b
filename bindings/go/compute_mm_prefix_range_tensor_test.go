// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type mmRangeCase struct {
	Name         string    `json:"name"`
	NoneInput    bool      `json:"none_input"`
	RangeOffsets []int64   `json:"range_offsets"`
	Ranges       [][]int64 `json:"ranges"`
	IsNone       bool      `json:"is_none"`
	MaxRanges    int64     `json:"max_ranges"`
	Shape        []int64   `json:"shape"`
	Out          []int64   `json:"out"`
	// fill_mm_prefix_query_ranges
	QueryStartLoc []int64 `json:"query_start_loc"`
	SeqLens       []int64 `json:"seq_lens"`
	Capacity      int64   `json:"capacity"`
	Rows          int64   `json:"rows"`
}

// csr builds the case's CSR tensors (nil for vLLM's None).
func (c *mmRangeCase) csr(dt DType, step int64) *MMPrefixRanges {
	if c.NoneInput {
		return nil
	}
	ranges := newIBuf(dt, []int64{int64(len(c.Ranges)), 2}, step, step-1)
	for i, v := range flatten(c.Ranges) {
		ranges.set(int64(i), v)
	}
	return &MMPrefixRanges{Offsets: ibufOf(dt, c.RangeOffsets, step, 0).t, Ranges: ranges.t}
}

func TestComputeMMPrefixRangeTensorVectors(t *testing.T) {
	for _, c := range loadCases[mmRangeCase](t, "compute_mm_prefix_range_tensor") {
		for _, dt := range indexTypes {
			name := fmt.Sprintf("%s/%s", c.Name, dtypeName(dt))
			r := c.csr(dt, 2)
			m, none, err := ComputeMMPrefixRangeTensorSize(r)
			mustOK(t, err)
			wantEqual(t, name+" none", none, c.IsNone)
			if none {
				continue
			}
			wantEqual(t, name+" max_ranges", m, c.MaxRanges)
			out := newIBuf(dt, c.Shape, 1, 0)
			_, _, err = ComputeMMPrefixRangeTensor(r, out.t)
			mustOK(t, err)
			wantEqual(t, name, out.values(), c.Out)
		}
		if !c.NoneInput {
			lists := make([][][2]int64, len(c.RangeOffsets)-1)
			for i := range lists {
				for k := c.RangeOffsets[i]; k < c.RangeOffsets[i+1]; k++ {
					lists[i] = append(lists[i], [2]int64{c.Ranges[k][0], c.Ranges[k][1]})
				}
			}
			data, _, none, err := MMPrefixRangeTensor(lists)
			mustOK(t, err)
			wantEqual(t, c.Name+" one call none", none, c.IsNone)
			if !none {
				want := make([]int32, len(c.Out))
				for i, v := range c.Out {
					want[i] = int32(v)
				}
				wantEqual(t, c.Name+" one call", data, want)
			}
		}
	}
}

func TestFillMMPrefixQueryRangesVectors(t *testing.T) {
	for _, c := range loadCases[mmRangeCase](t, "fill_mm_prefix_query_ranges") {
		for _, dt := range indexTypes {
			name := fmt.Sprintf("%s/%s", c.Name, dtypeName(dt))
			out := newIBuf(dt, []int64{c.Capacity, 2}, 1, 0)
			for i := int64(0); i < 2*c.Capacity; i++ {
				out.set(i, 7777)
			}
			rows, err := FillMMPrefixQueryRanges(c.csr(dt, 1), ibufOf(dt, c.QueryStartLoc, 2, 1).t,
				ibufOf(dt, c.SeqLens, 1, 0).t, out.t)
			mustOK(t, err)
			wantEqual(t, name+" rows", rows, c.Rows)
			wantEqual(t, name, out.values(), c.Out)
		}
	}
}

func TestMMPrefixErrors(t *testing.T) {
	r := &MMPrefixRanges{Offsets: Int32Tensor([]int32{0, 2, 1}), Ranges: Int32Tensor([]int32{1, 2, 3, 4}, 2, 2)}
	_, _, err := ComputeMMPrefixRangeTensorSize(r)
	wantError(t, err, StatusInvalidArgument, "cattn_compute_mm_prefix_range_tensor", "args->range_offsets", "decreases")
	ok := &MMPrefixRanges{Offsets: Int32Tensor([]int32{0, 1}), Ranges: Int32Tensor([]int32{0, 9}, 1, 2)}
	out := make([]int32, 6)
	_, err = FillMMPrefixQueryRanges(ok, Int32Tensor([]int32{0, 4}), Int32Tensor([]int32{4}), Int32Tensor(out, 3, 2))
	wantError(t, err, StatusInsufficientSize, "cattn_fill_mm_prefix_query_ranges", "args->out")
	wantEqual(t, "untouched", out, make([]int32, 6))
}

func TestMMPrefixQueryRangesHelperVectors(t *testing.T) {
	for _, c := range loadCases[mmRangeCase](t, "fill_mm_prefix_query_ranges") {
		var lists [][][2]int64
		if !c.NoneInput {
			lists = make([][][2]int64, len(c.RangeOffsets)-1)
			for i := range lists {
				for k := c.RangeOffsets[i]; k < c.RangeOffsets[i+1]; k++ {
					lists[i] = append(lists[i], [2]int64{c.Ranges[k][0], c.Ranges[k][1]})
				}
			}
		}
		got, err := MMPrefixQueryRanges(lists, c.QueryStartLoc, c.SeqLens)
		mustOK(t, err)
		wantEqual(t, c.Name+" rows", int64(len(got)), c.Rows)
		if c.Rows > 0 {
			var flat []int64
			for _, p := range got {
				flat = append(flat, p[0], p[1])
			}
			wantEqual(t, c.Name, flat, c.Out[:2*c.Rows])
		} else if got != nil {
			t.Fatalf("%s: no covered token, but %v", c.Name, got)
		}
	}
	_, err := MMPrefixQueryRanges([][][2]int64{{{0, 4}}, nil}, []int32{0, 4, 2}, []int32{4, 4})
	wantError(t, err, StatusInvalidArgument, "cattn.MMPrefixQueryRanges: queryStartLoc ")
	_, err = MMPrefixQueryRanges([][][2]int64{{{0, 4}}}, []int32{0, 4, 6}, []int32{4, 4})
	wantError(t, err, StatusInvalidArgument,
		"cattn.MMPrefixQueryRanges: perRequest does not hold one list per request (got 1 lists, expected 2)")
}
