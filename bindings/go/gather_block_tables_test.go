// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

func TestGatherBlockTables(t *testing.T) {
	used := []int64{4, 1, 2} // per persistent row
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			idx, blocks := ibufOf(dt, stepIdx, step, 1), ibufOf(dt, used, step, 0)
			table := ibuf2D(dt, stepTable, step)
			out := newIBuf(dt, []int64{3, 4}, step, 1)
			mustOK(t, GatherBlockTables(GatherBlockTablesArgs{IdxMapping: idx.t,
				NumReqs: Int64Tensor([]int64{2}), BlockTable: table.t, NumBlocks: blocks.t,
				Out: out.t}))
			// Row 0: persistent row 2, 2 blocks in use (the rest left alone); row 1: row 0, all
			// 4; row 2: padding, 0 across the width.
			p := int64(poison)
			wantEqual(t, dtypeName(dt), out.values(),
				[]int64{10, 11, p, p, 1, 2, 3, 4, 0, 0, 0, 0})
		}
	}
	rows, err := GatherBlockTablesHost([]int32{2, 0, 9}, Ptr[int64](2), asRows[int32](stepTable),
		nil)
	mustOK(t, err)
	wantEqual(t, "every block", rows, [][]int32{{10, 11, 12, 13}, {1, 2, 3, 4}, {0, 0, 0, 0}})
	rows64, err := GatherBlockTablesHost(stepIdx, Ptr[int64](2), stepTable, used)
	mustOK(t, err)
	wantEqual(t, "blocks in use", rows64, [][]int64{{10, 11, 0, 0}, {1, 2, 3, 4}, {0, 0, 0, 0}})
}

func TestGatherBlockTablesErrors(t *testing.T) {
	_, err := GatherBlockTablesHost([]int64{2, 3, 0}, nil, stepTable, nil)
	wantError(t, err, StatusInvalidArgument, "cattn.GatherBlockTablesHost: idxMapping")
	_, err = GatherBlockTablesHost([]int64{0}, nil, [][]int64{{1, 2}, {3}}, nil)
	wantError(t, err, StatusInvalidArgument,
		"cattn.GatherBlockTablesHost: blockTable has rows of different lengths")
	// An output of another width than the table.
	err = GatherBlockTables(GatherBlockTablesArgs{IdxMapping: Int32Tensor([]int32{0}),
		BlockTable: Int32Tensor([]int32{1, 2, 3, 4}, 1, 4), Out: Int32Tensor(make([]int32, 3), 1, 3)})
	wantError(t, err, StatusInsufficientSize, "cattn.GatherBlockTables: args.Out has the wrong size")
}
