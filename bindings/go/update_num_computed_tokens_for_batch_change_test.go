// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// vLLM's example: rows 0 to 2 were previous rows 2, new and 0. Previous row 2 had no drafts:
// row 0 takes the scheduler's 7; row 1 is new (8); previous row 0 had drafts and 3 valid
// tokens: row 2 gets 100 + 3 computed (row 0's count before the call) and 3 accepted. Entry 3
// is past the batch and kept.
func TestUpdateNumComputedTokensForBatchChange(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			computed := ibufOf(dt, []int64{100, 200, 300, 400}, step, 1)
			accepted := ibufOf(otherIndexType(dt), []int64{9, 9, 9}, step, 0)
			mustOK(t, UpdateNumComputedTokensForBatchChange(UpdateNumComputedTokensForBatchChangeArgs{
				NumComputedTokens: computed.t, NumAcceptedTokens: accepted.t,
				PrevPositions:          ibufOf(Int64, []int64{2, -1, 0}, step, 1).t,
				ValidSampledTokenCount: ibufOf(dt, []int64{3, 0, 2}, step, 0).t,
				PrevNumDraftTokens:     ibufOf(dt, []int64{4, 0, 0}, step, 1).t,
				CPUNumComputedTokens:   ibufOf(dt, []int64{7, 8, 9}, step, 0).t}))
			what := dtypeName(dt)
			wantEqual(t, what+" computed", computed.values(), []int64{7, 8, 103, 400})
			wantEqual(t, what+" accepted", accepted.values(), []int64{9, 9, 3})
		}
	}
	// A reordering reads the counts before the call: rows 0 and 1 swap.
	computed, accepted := []int32{10, 20}, []int32{0, 0}
	mustOK(t, UpdateNumComputedTokensForBatchChangeHost(computed, accepted, []int32{1, 0},
		[]int32{2, 3}, []int32{1, 1}, []int32{0, 0}))
	wantEqual(t, "swapped computed", computed, []int32{23, 12})
	wantEqual(t, "swapped accepted", accepted, []int32{3, 2})
}

func TestUpdateNumComputedTokensForBatchChangeErrors(t *testing.T) {
	args := func() UpdateNumComputedTokensForBatchChangeArgs {
		return UpdateNumComputedTokensForBatchChangeArgs{
			NumComputedTokens: Int32Tensor([]int32{100, 200, 300}), NumAcceptedTokens: Int32Tensor([]int32{9, 9, 9}),
			PrevPositions: Int64Tensor([]int64{2, -1, 0}), ValidSampledTokenCount: Int32Tensor([]int32{3, 0, 2}),
			PrevNumDraftTokens: Int32Tensor([]int32{4, 0, 0}), CPUNumComputedTokens: Int32Tensor([]int32{7, 8, 9})}
	}
	fn := "cattn.UpdateNumComputedTokensForBatchChange: "
	mustOK(t, UpdateNumComputedTokensForBatchChange(args()))
	a := args()
	a.CPUNumComputedTokens = nil
	wantError(t, UpdateNumComputedTokensForBatchChange(a), StatusInvalidArgument,
		fn+"args.CPUNumComputedTokens is nil")
	a = args()
	a.NumAcceptedTokens = nil
	wantError(t, UpdateNumComputedTokensForBatchChange(a), StatusInvalidArgument,
		fn+"args.NumAcceptedTokens is nil")
	// The two counts in one buffer, and a count over an input.
	a = args()
	a.NumAcceptedTokens = a.NumComputedTokens
	e := wantError(t, UpdateNumComputedTokensForBatchChange(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.NumComputedTokens", "args.NumAcceptedTokens")
	a = args()
	a.NumAcceptedTokens = a.ValidSampledTokenCount
	e = wantError(t, UpdateNumComputedTokensForBatchChange(a), StatusInvalidArgument, fn, "overlaps an input")
	wantMentions(t, e, "args.NumAcceptedTokens", "args.ValidSampledTokenCount")
	// A previous row past the previous batch, in the helper's terms.
	err := UpdateNumComputedTokensForBatchChangeHost([]int64{1, 2, 3}, []int64{0, 0, 0},
		[]int64{3, -1, 0}, []int64{3, 0, 2}, []int64{4, 0, 0}, []int64{7, 8, 9})
	wantError(t, err, StatusInvalidArgument,
		"cattn.UpdateNumComputedTokensForBatchChangeHost: prevPositions names no previous row (got [0] = 3,")
	err = UpdateNumComputedTokensForBatchChangeHost([]int64{1, 2}, []int64{0, 0, 0},
		[]int64{2, -1, 0}, []int64{3, 0, 2}, []int64{4, 0, 0}, []int64{7, 8, 9})
	wantError(t, err, StatusInvalidArgument,
		"cattn.UpdateNumComputedTokensForBatchChangeHost: numComputedTokens is shorter than the batch")
}
