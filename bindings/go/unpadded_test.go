// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

type unpaddedCase struct {
	Name  string `json:"name"`
	Input struct {
		QueryStartLoc        []int64 `json:"query_start_loc"`
		SeqLens              []int64 `json:"seq_lens"`
		NumActualTokens      int64   `json:"num_actual_tokens"`
		MaxQueryLen          int64   `json:"max_query_len"`
		MaxSeqLen            int64   `json:"max_seq_len"`
		Positions            []int64 `json:"positions"`
		SlotMapping          []int64 `json:"slot_mapping"`
		SeqLensCPUUpperBound []int64 `json:"seq_lens_cpu_upper_bound"`
		BlockTable           []int64 `json:"block_table_tensor"`
		DCP                  []int64 `json:"dcp_local_seq_lens"`
	} `json:"input"`
	Cols            int64 `json:"block_table_cols"`
	NumActualTokens int64 `json:"num_actual_tokens"`
	NumActualReqs   int64 `json:"num_actual_reqs"`
	Expect          struct {
		QueryStartLoc        []int64 `json:"query_start_loc"`
		SeqLens              []int64 `json:"seq_lens"`
		SlotMapping          []int64 `json:"slot_mapping"`
		Positions            []int64 `json:"positions"`
		SeqLensCPUUpperBound []int64 `json:"seq_lens_cpu_upper_bound"`
		BlockTable           []int64 `json:"block_table_tensor"`
		DCP                  []int64 `json:"dcp_local_seq_lens"`
		MaxQueryLen          int64   `json:"max_query_len"`
	} `json:"expect"`
}

func TestUnpaddedVectors(t *testing.T) {
	cases := loadCases[unpaddedCase](t, "unpadded")
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		in := c.Input
		b := int64(len(in.SeqLens))
		qsl, seq := ibufOf(Int32, in.QueryStartLoc, 2, 1), ibufOf(Int64, in.SeqLens, 1, 0)
		pos, slots := ibufOf(Int64, in.Positions, 1, 0), ibufOf(Int64, in.SlotMapping, 3, 0)
		upper, dcp := ibufOf(Int64, in.SeqLensCPUUpperBound, 1, 0), ibufOf(Int32, in.DCP, 1, 0)
		table := Int64Tensor(in.BlockTable, b, c.Cols)
		md := &CommonAttnMetadata{QueryStartLoc: qsl.t, SeqLens: seq.t, Positions: pos.t,
			SlotMapping: slots.t, SeqLensCPUUpperBound: upper.t, DCPLocalSeqLens: dcp.t,
			BlockTableTensor: table, NumReqs: b, NumActualTokens: in.NumActualTokens,
			MaxQueryLen: in.MaxQueryLen, MaxSeqLen: in.MaxSeqLen}
		u, err := Unpadded(md, c.NumActualTokens, c.NumActualReqs)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if u.NumReqs != c.NumActualReqs || u.NumActualTokens != c.NumActualTokens ||
			u.MaxQueryLen != c.Expect.MaxQueryLen || u.SeqLensCPU != nil {
			t.Fatalf("%s: scalars %+v", c.Name, *u)
		}
		wantEqual(t, c.Name+" qsl", cutOf(u.QueryStartLoc, in.QueryStartLoc), c.Expect.QueryStartLoc)
		wantEqual(t, c.Name+" seq", cutOf(u.SeqLens, in.SeqLens), c.Expect.SeqLens)
		wantEqual(t, c.Name+" slots", cutOf(u.SlotMapping, in.SlotMapping), c.Expect.SlotMapping)
		wantEqual(t, c.Name+" positions", cutOf(u.Positions, in.Positions), c.Expect.Positions)
		wantEqual(t, c.Name+" upper", cutOf(u.SeqLensCPUUpperBound, in.SeqLensCPUUpperBound),
			c.Expect.SeqLensCPUUpperBound)
		wantEqual(t, c.Name+" dcp", cutOf(u.DCPLocalSeqLens, in.DCP), c.Expect.DCP)
		if u.BlockTableTensor.Shape[0] != c.NumActualReqs || u.BlockTableTensor.Shape[1] != c.Cols {
			t.Fatalf("%s: block table shape %v", c.Name, u.BlockTableTensor.Shape)
		}
		for _, pair := range [][2]*Tensor{{u.QueryStartLoc, md.QueryStartLoc},
			{u.SeqLens, md.SeqLens}, {u.SlotMapping, md.SlotMapping}, {u.Positions, md.Positions},
			{u.BlockTableTensor, md.BlockTableTensor}} {
			if pair[0] == pair[1] || pair[0].host != pair[1].host ||
				pair[0].ByteOffset != pair[1].ByteOffset || pair[0].DType != pair[1].DType {
				t.Fatalf("%s: a view is not a new view of its source's memory", c.Name)
			}
		}
		if md.QueryStartLoc.Shape[0] != b+1 {
			t.Fatalf("%s: the input view changed", c.Name)
		}
	}
	_, err := Unpadded(&CommonAttnMetadata{SeqLens: Int64Tensor([]int64{1, 2})}, 0, 3)
	wantError(t, err, StatusInvalidArgument, "args->metadata->seq_lens is shorter")
}

// cutOf is the values a cut 1-D view holds: it shares its source's memory (checked apart), so
// they are the source's first Shape[0] values.
func cutOf(v *Tensor, src []int64) []int64 {
	if v == nil {
		return nil
	}
	return append([]int64{}, src[:v.Shape[0]]...)
}
