// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// vLLM's example: two requests of 2 and 1 tokens, each grown by N = 1 (3 and 2 tokens), block
// size 4, max_model_len 10, a table of W = 3. Request 0 at positions 8, 9, 10: flat entry 0*3 +
// 2 (block 5): 5*4 + 0; token 1 rejected; position 10 reaches max_model_len. Request 1 at 3, 4:
// entries 3 (block 6) and 4 (block 7): 6*4 + 3, 7*4 + 0.
var (
	newSlotParams = NewSlotMappingParams{BlockSize: 4, NumNewTokens: 1, MaxModelLen: 10}
	newSlotQSL    = []int64{0, 2, 3}
	newSlotTable  = [][]int64{{3, 4, 5}, {6, 7, 8}}
	newSlotPos    = []int64{8, 9, 10, 3, 4}
)

func TestComputeNewSlotMapping(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			qsl, table := ibufOf(dt, newSlotQSL, step, 1), ibuf2D(dt, newSlotTable, step)
			pos := ibufOf(otherIndexType(dt), newSlotPos, step, 0)
			slots := newIBuf(Int64, []int64{6}, step, 1)
			mask := BytesTensor([]byte{9, 0, 9, 1, 9, 0, 9, 0, 9, 0}, Int8, 5).WithStrides(2).WithByteOffset(1)
			mustOK(t, ComputeNewSlotMapping(ComputeNewSlotMappingArgs{NewSlotMappingParams: newSlotParams,
				QueryStartLoc: qsl.t, BlockTable: table.t, NewPositions: pos.t,
				IsRejectedTokenMask: mask, NewSlotMapping: slots.t}))
			wantEqual(t, dtypeName(dt), slots.values(), []int64{20, -1, -1, 27, 28, poison})
		}
	}
	// No mask: token 1 (position 9) gets 5*4 + 1.
	got, err := ComputeNewSlotMappingHost(newSlotParams, asIndex[int32](newSlotQSL),
		asRows[int32](newSlotTable), asIndex[int32](newSlotPos), nil)
	mustOK(t, err)
	wantEqual(t, "no mask", got, []int64{20, 21, -1, 27, 28})
	// A narrow table reads the next row's blocks: request 0 at position 4 is flat entry 1, row
	// 1's block 7; slots pass 2^31 exactly.
	got, err = ComputeNewSlotMappingHost(NewSlotMappingParams{BlockSize: 4, MaxModelLen: 100},
		[]int64{0, 1, 2}, [][]int64{{1 << 30}, {7}}, []int64{4, 2}, []bool{false, false})
	mustOK(t, err)
	wantEqual(t, "narrow table", got, []int64{28, 7*4 + 2})
	got, err = ComputeNewSlotMappingHost(NewSlotMappingParams{BlockSize: 4, MaxModelLen: 100},
		[]int64{0, 1}, [][]int64{{1 << 30}}, []int64{1}, nil)
	mustOK(t, err)
	wantEqual(t, "int64 slot", got, []int64{1<<32 + 1})
}

func TestComputeNewSlotMappingErrors(t *testing.T) {
	args := func() ComputeNewSlotMappingArgs {
		return ComputeNewSlotMappingArgs{NewSlotMappingParams: newSlotParams,
			QueryStartLoc: Int64Tensor(newSlotQSL), BlockTable: Int64Tensor(flatten(newSlotTable), 2, 3),
			NewPositions: Int64Tensor(newSlotPos), NewSlotMapping: Int64Tensor(make([]int64, 5))}
	}
	fn := "cattn.ComputeNewSlotMapping: "
	a := args()
	a.NewPositions = nil
	wantError(t, ComputeNewSlotMapping(a), StatusInvalidArgument, fn+"args.NewPositions is nil")
	a = args()
	a.NewSlotMapping = nil
	wantError(t, ComputeNewSlotMapping(a), StatusInvalidArgument, fn+"args.NewSlotMapping is nil")
	// The output over the positions (both int64).
	a = args()
	a.NewSlotMapping = a.NewPositions
	e := wantError(t, ComputeNewSlotMapping(a), StatusInvalidArgument, fn, "overlaps an input")
	wantMentions(t, e, "args.NewSlotMapping", "args.NewPositions")
	a = args()
	a.NewSlotMapping = Int32Tensor(make([]int32, 5))
	wantError(t, ComputeNewSlotMapping(a), StatusInvalidArgument, fn+"args.NewSlotMapping has the wrong dtype")
	a = args()
	a.NumNewTokens = -1
	wantError(t, ComputeNewSlotMapping(a), StatusInvalidArgument, fn+"args.NumNewTokens is out of range")
	// The one-call helper names its parameters: one position short of the 5 tokens, a position
	// past the table, and a negative position.
	_, err := ComputeNewSlotMappingHost(newSlotParams, newSlotQSL, newSlotTable, newSlotPos[:4], nil)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeNewSlotMappingHost: newPositions ")
	_, err = ComputeNewSlotMappingHost(NewSlotMappingParams{BlockSize: 4, MaxModelLen: 100},
		[]int64{0, 1}, [][]int64{{1}}, []int64{4}, nil)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeNewSlotMappingHost: blockTable has no block")
	_, err = ComputeNewSlotMappingHost(newSlotParams, []int64{0, 0}, [][]int64{{1}}, []int64{-3}, nil)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeNewSlotMappingHost: newPositions is negative (got [0] = -3,")
	_, err = ComputeNewSlotMappingHost(NewSlotMappingParams{MaxModelLen: 10}, newSlotQSL,
		newSlotTable, newSlotPos, nil)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeNewSlotMappingHost: params.BlockSize is out of range")
}
