// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type mambaCase struct {
	Name                 string    `json:"name"`
	BlockTable           [][]int64 `json:"block_table"`
	Cols                 int64     `json:"cols"`
	SeqLens              []int64   `json:"seq_lens"`
	BlockSize            int64     `json:"block_size"`
	NumSpeculativeBlocks int64     `json:"num_speculative_blocks"`
	Mode                 int32     `json:"mode"`
	Shape                []int64   `json:"shape"`
	Out                  [][]int64 `json:"out"`
	Error                bool      `json:"error"`
}

func TestMambaGetBlockTableTensorVectors(t *testing.T) {
	cases := loadCases[mambaCase](t, "mamba_get_block_table_tensor")
	errorsSeen := 0
	for i := range cases {
		c := &cases[i]
		for _, tt := range indexTypes {
			for _, ot := range indexTypes {
				for _, step := range []int64{1, 2} {
					name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(tt), dtypeName(ot), step)
					table := ibuf2D(tt, c.BlockTable, step)
					seq := ibufOf(otherIndexType(tt), c.SeqLens, step, 0)
					shape := c.Shape
					if c.Error {
						shape = []int64{int64(len(c.BlockTable)), 1 + c.NumSpeculativeBlocks}
					}
					out := newIBuf(ot, shape, step, 1)
					before := out.raw()
					err := MambaGetBlockTableTensor(MambaBlockTableArgs{
						BlockTable: table.t, SeqLens: seq.t, BlockSize: c.BlockSize,
						NumSpeculativeBlocks: c.NumSpeculativeBlocks, Mode: MambaCacheMode(c.Mode),
						Out: out.t,
					})
					if c.Error {
						errorsSeen++
						wantError(t, err, StatusInvalidArgument, "cattn_mamba_get_block_table_tensor")
						wantEqual(t, name+" nothing written", out.raw(), before)
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					wantEqual(t, name, out.values(), flatten(c.Out))
				}
			}
		}
	}
	if errorsSeen == 0 {
		t.Fatal("no error cases")
	}
}

func TestMambaGetBlockTableTensorErrors(t *testing.T) {
	const fn = "cattn_mamba_get_block_table_tensor"
	table := Int32Tensor([]int32{0, 1, 2, 3, 4, 5, 6, 7}, 2, 4)
	seq := Int32Tensor([]int32{5, 9})
	run := func(a MambaBlockTableArgs, code Status, needles ...string) {
		t.Helper()
		out := newIBuf(Int32, []int64{2, 2}, 1, 0)
		if a.Out == nil {
			a.Out = out.t
		}
		before := out.raw()
		wantError(t, MambaGetBlockTableTensor(a), code, append([]string{fn}, needles...)...)
		wantEqual(t, "nothing written", out.raw(), before)
	}
	align := MambaBlockTableArgs{BlockTable: table, SeqLens: seq, BlockSize: 4,
		NumSpeculativeBlocks: 1, Mode: MambaCacheModeAlign}
	a := align
	a.BlockSize = 0
	run(a, StatusInvalidArgument, "block_size")
	a = align
	a.NumSpeculativeBlocks = -1
	run(a, StatusInvalidArgument, "num_speculative_blocks")
	a = align
	a.Mode = 7
	run(a, StatusInvalidArgument, "mamba_cache_mode")
	a = align
	a.SeqLens = nil
	run(a, StatusInvalidArgument, "args->seq_lens")
	a = align
	a.Out = Int32Tensor(make([]int32, 2), 2, 1)
	run(a, StatusInsufficientSize, "args->out")
	a = align
	a.Out = table
	run(a, StatusInvalidArgument, "args->out")
	a = MambaBlockTableArgs{BlockTable: table, Mode: MambaCacheModeAll}
	run(a, StatusInsufficientSize, "args->out")

	// ALL with out being the very block_table view: valid, nothing to copy.
	mustOK(t, MambaGetBlockTableTensor(MambaBlockTableArgs{BlockTable: table, Mode: MambaCacheModeAll, Out: table}))
}

func TestMambaBlockTableHelperVectors(t *testing.T) {
	for _, c := range loadCases[mambaCase](t, "mamba_get_block_table_tensor") {
		got, err := MambaBlockTable(c.BlockTable, c.SeqLens, c.BlockSize, c.NumSpeculativeBlocks,
			MambaCacheMode(c.Mode))
		if c.Error {
			wantError(t, err, StatusInvalidArgument, "cattn.MambaBlockTable: ")
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		wantEqual(t, c.Name, flatten(got), flatten(c.Out))
		if len(c.Out) > 0 {
			wantEqual(t, c.Name+" columns", len(got[0]), len(c.Out[0]))
		}
	}
	_, err := MambaBlockTable([][]int32{{1, 2}}, []int32{5}, 4, 2, MambaCacheModeAlign)
	wantError(t, err, StatusInvalidArgument, "cattn.MambaBlockTable: numSpeculativeBlocks is out of range")
	_, err = MambaBlockTable([][]int32{{1, 2}}, []int32{5}, 4, -3, MambaCacheModeAlign)
	wantError(t, err, StatusInvalidArgument,
		"cattn.MambaBlockTable: numSpeculativeBlocks is negative (got -3, expected >= 0)")
	_, err = MambaBlockTable([][]int32{{1, 2}}, []int32{5}, 4, 0, MambaCacheMode(9))
	wantError(t, err, StatusInvalidArgument, "cattn.MambaBlockTable: mode ")
}
