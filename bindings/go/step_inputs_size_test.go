// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// The size query counts what the calls write: from the scheduled counts or a query_start_loc,
// in either index type, with the calls' refusals named in Go terms (its own, or a Host
// helper's that sized with it).
func TestStepInputsSize(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			sched := ibufOf(dt, []int64{3, 1, 4, 9}, step, 1)
			drafts := ibufOf(dt, []int64{2, 0, 3, 7}, step, 1)
			live := ibufOf(otherIndexType(dt), []int64{3}, 1, 0)
			n, err := StepInputsSize(StepInputsSizeArgs{NumScheduledTokens: sched.t,
				NumReqs: live.t, NumDraftTokens: drafts.t})
			mustOK(t, err)
			// Rows 0 to 2 live: 3 + 1 + 4 tokens; one sampled token a row and 2 + 0 + 3 drafts.
			wantEqual(t, dtypeName(dt), n, StepInputsTotals{NumTokens: 8, NumLogits: 8})
			qsl := ibufOf(dt, []int64{0, 3, 4, 8, 17}, step, 1)
			n, err = StepInputsSize(StepInputsSizeArgs{NumNewSampledTokens: Ptr[int64](0),
				QueryStartLoc: qsl.t, NumDraftTokens: drafts.t})
			mustOK(t, err)
			wantEqual(t, dtypeName(dt), n, StepInputsTotals{NumTokens: 17, NumLogits: 12})
		}
	}
	_, err := StepInputsSize(StepInputsSizeArgs{})
	wantError(t, err, StatusInvalidArgument,
		"cattn.StepInputsSize: args.NumScheduledTokens is nil and so is args.QueryStartLoc")
	_, err = StepInputsSize(StepInputsSizeArgs{QueryStartLoc: Int64Tensor(stepQSL),
		NumReqs: Int64Tensor([]int64{4})})
	wantError(t, err, StatusInvalidArgument, "cattn.StepInputsSize: args.NumReqs is out of range")
	// A Host helper reports the size query's refusal in its own name and terms.
	_, err = CombineSampledAndDraftTokensHost(nil, stepQSL, nil, []int64{0, -1, 0}, nil)
	wantError(t, err, StatusInvalidArgument,
		"cattn.CombineSampledAndDraftTokensHost: numDraftTokens is negative")
	_, err = PreparePosSeqLensHost(stepSched, stepIdx, stepNCT, Ptr[int64](4))
	wantError(t, err, StatusInvalidArgument, "cattn.PreparePosSeqLensHost: numReqs is out of range")
}
