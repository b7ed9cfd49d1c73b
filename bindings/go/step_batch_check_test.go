// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

func TestStepBatchCheck(t *testing.T) {
	good := Int64Tensor([]int64{10, 11, 12, 13, 1, 2, 3, 4, 0, 0, 0, 0}, 3, 4)
	bad := Int64Tensor([]int64{10, 11, 12, 13, 1, 2, 3, 4, 0, 5, 0, 0}, 3, 4)
	slots := Int64Tensor([]int64{47, 48, 49, 9, -1, -1})
	badSlots := Int64Tensor([]int64{47, 48, 49, 9, 3, -1})
	check := func(table1, slots0 *Tensor, numReqs int64) StepCheckReport {
		t.Helper()
		r, err := StepBatchCheckHost(StepBatchCheckArgs{QueryStartLoc: Int64Tensor(stepQSL),
			NumReqs: Int64Tensor([]int64{numReqs}), SeqLens: Int64Tensor(stepSeq),
			BlockTables: []*Tensor{good, table1}, SlotMappings: []*Tensor{slots0}})
		mustOK(t, err)
		return r
	}
	ok := check(good, slots, 2)
	wantEqual(t, "a batch that keeps the contract", ok, StepCheckReport{})
	wantEqual(t, "OK", ok.OK(), true)
	wantEqual(t, "padded table row of group 1", check(bad, slots, 2),
		StepCheckReport{Field: StepCheckBlockTable, Index: 2, Group: 1})
	wantEqual(t, "slot past the live total", check(good, badSlots, 2),
		StepCheckReport{Field: StepCheckSlotMapping, Index: 4, Group: 0})
	wantEqual(t, "num_reqs past B comes first", check(bad, badSlots, 4).Field, StepCheckNumReqs)

	// The tensor form, an int32 status: a padded query_start_loc entry that is not the total.
	status := []int32{poison, poison, poison}
	mustOK(t, StepBatchCheck(StepBatchCheckArgs{QueryStartLoc: Int32Tensor([]int32{0, 3, 4, 5}),
		NumReqs: Int64Tensor([]int64{2}), Status: Int32Tensor(status)}))
	wantEqual(t, "query_start_loc defect", StepCheckField(status[0]), StepCheckQueryStartLoc)
	wantEqual(t, "String", StepCheckQueryStartLoc.String(), "StepCheckQueryStartLoc")
}

func TestStepBatchCheckErrors(t *testing.T) {
	args := StepBatchCheckArgs{QueryStartLoc: Int64Tensor(stepQSL),
		SlotMappings: []*Tensor{nil, nil, Float32Tensor([]float32{1, 2, 3, 4})}}
	_, err := StepBatchCheckHost(args)
	wantError(t, err, StatusInvalidArgument, "cattn.StepBatchCheckHost: args.SlotMappings[2]")
	args.Status = Int64Tensor(make([]int64, 3))
	wantError(t, StepBatchCheck(args), StatusInvalidArgument,
		"cattn.StepBatchCheck: args.SlotMappings[2]")
	// More groups than CATTN_MAX_KV_GROUPS, refused in Go.
	args.SlotMappings = make([]*Tensor, MaxKVGroups+1)
	wantError(t, StepBatchCheck(args), StatusInvalidArgument,
		"cattn.StepBatchCheck: args.SlotMappings has too many groups")
}
