// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

var kbs4 = SlotMappingParams{BlockSize: 4, KernelBlockSize: 4}

func TestComputeSlotMappings(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			qsl, pos, idx := ibufOf(dt, stepQSL, step, 1), ibufOf(dt, stepPos, step, 0),
				ibufOf(dt, stepIdx, step, 1)
			table := ibuf2D(dt, stepTable, step)
			slots := newIBuf(Int64, []int64{6}, step, 1)
			mustOK(t, ComputeSlotMappings(ComputeSlotMappingsArgs{SlotMappingParams: kbs4,
				QueryStartLoc: qsl.t, NumReqs: Int32Tensor([]int32{2}), Positions: pos.t,
				IdxMapping: idx.t, BlockTable: table.t, SlotMapping: slots.t}))
			// Row 0 (persistent row 2 = [10 11 12 13]): positions 7, 8, 9 in kernel blocks 1,
			// 2, 2: 11*4+3, 12*4+0, 12*4+1. Row 1 (row 0 = [1 2 3 4]): position 5 in block 1:
			// 2*4+1. Then -1 from the live total on.
			wantEqual(t, dtypeName(dt), slots.values(), []int64{47, 48, 49, 9, -1, -1})
		}
	}
	qsl, pos := asIndex[int32](stepQSL), asIndex[int32](stepPos)
	table := asRows[int32](stepTable)
	// The helper returns the live tokens' slots only (the total StepInputsSize counts).
	got, err := ComputeSlotMappingsHost(kbs4, qsl, Ptr[int64](2), pos, []int32{2, 0, 9}, table)
	mustOK(t, err)
	wantEqual(t, "host helper", got, []int64{47, 48, 49, 9})
	// Two DCP ranks, interleave 1, rank 1: blocks of 4 * 2 tokens; offset off of a block is
	// rank off % 2's, at local offset off / 2. Position 7: block 0, offset 7, local 3: 10*4+3.
	// 8: block 1, offset 0: rank 0's, -1. 9: block 1, offset 1, local 0: 11*4. 5 (row 1):
	// block 0, offset 5, local 2: 1*4+2.
	dcp := kbs4
	dcp.DCPSize, dcp.DCPRank = 2, 1
	got, err = ComputeSlotMappingsHost(dcp, qsl, Ptr[int64](2), pos, []int32{2, 0, 9}, table)
	mustOK(t, err)
	wantEqual(t, "DCP rank 1 of 2", got, []int64{43, -1, 44, 6})
	// v1: the batch's rows (as gathered), no idx_mapping.
	v1 := kbs4
	v1.Contract = SlotMappingV1
	got, err = ComputeSlotMappingsHost(v1, qsl, Ptr[int64](2), pos, nil,
		[][]int32{{10, 11, 12, 13}, {1, 2, 3, 4}, {0, 0, 0, 0}})
	mustOK(t, err)
	wantEqual(t, "v1", got, []int64{47, 48, 49, 9})
}

func TestComputeSlotMappingsErrors(t *testing.T) {
	badRank := kbs4
	badRank.DCPSize, badRank.DCPRank = 2, 2
	_, err := ComputeSlotMappingsHost(badRank, stepQSL, Ptr[int64](2), stepPos, stepIdx, stepTable)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeSlotMappingsHost: params.DCPRank")
	badContract := kbs4
	badContract.Contract = 7
	_, err = ComputeSlotMappingsHost(badContract, stepQSL, nil, stepPos, stepIdx, stepTable)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeSlotMappingsHost: params.Contract")
	v1 := kbs4
	v1.Contract = SlotMappingV1
	_, err = ComputeSlotMappingsHost(v1, stepQSL, nil, stepPos, stepIdx, stepTable)
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeSlotMappingsHost: idxMapping")
	// The zero params have no block size: the tensor form names the (promoted) field.
	err = ComputeSlotMappings(ComputeSlotMappingsArgs{QueryStartLoc: Int64Tensor([]int64{0, 1}),
		Positions: Int64Tensor([]int64{0}), IdxMapping: Int64Tensor([]int64{0}),
		BlockTable: Int64Tensor([]int64{1, 2, 3, 4}, 1, 4), SlotMapping: Int64Tensor(make([]int64, 1))})
	wantError(t, err, StatusInvalidArgument, "cattn.ComputeSlotMappings: args.")
}

// The zero SlotMappingParams keeps the header's defaults (one DCP rank, interleave 1): the
// same slots as the defaults spelled out.
func TestSlotMappingZeroParamsAreTheDefaults(t *testing.T) {
	explicit := kbs4
	explicit.DCPSize, explicit.InterleaveSize, explicit.Contract = 1, 1, SlotMappingMRV2
	for _, p := range []SlotMappingParams{kbs4, explicit} {
		got, err := ComputeSlotMappingsHost(p, stepQSL, Ptr[int64](2), stepPos, stepIdx, stepTable)
		mustOK(t, err)
		wantEqual(t, "slots", got, []int64{47, 48, 49, 9})
	}
}
