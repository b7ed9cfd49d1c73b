// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// vLLM's example: drafts 2, 0, 3 (inclusive sum 2, 2, 5), valid 3, 1, 2, queries [0, 3), [3,
// 4), [4, 8). Request 0 accepted both drafts (rejected 2 + 1 - 3 = 0) and samples token 2;
// request 1 had none and samples token 3; request 2 rejected 3 + 1 - 2 = 2 and samples token
// 8 - 1 - 2 = 5.
func TestEaglePrepareInputsPadded(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			cu, valid := ibufOf(dt, []int64{2, 2, 5}, step, 1), ibufOf(otherIndexType(dt), []int64{3, 1, 2}, step, 0)
			qsl := ibufOf(dt, []int64{0, 3, 4, 8}, step, 1)
			sample, rejected := newIBuf(dt, []int64{4}, step, 1), newIBuf(otherIndexType(dt), []int64{3}, step, 0)
			mustOK(t, EaglePrepareInputsPadded(EaglePrepareInputsPaddedArgs{CuNumDraftTokens: cu.t,
				ValidSampledTokensCount: valid.t, QueryStartLoc: qsl.t,
				TokenIndicesToSample: sample.t, NumRejectedTokens: rejected.t}))
			what := dtypeName(dt)
			wantEqual(t, what+" to sample", sample.values(), []int64{2, 3, 5, poison})
			wantEqual(t, what+" rejected", rejected.values(), []int64{0, 0, 2})
		}
	}
	got, err := EaglePrepareInputsPaddedHost([]int32{2, 2, 5}, []int32{3, 1, 2}, []int32{0, 3, 4, 8})
	mustOK(t, err)
	wantEqual(t, "host", got, EagleSampleIndices[int32]{TokenIndicesToSample: []int32{2, 3, 5},
		NumRejectedTokens: []int32{0, 0, 2}})
	// A discarded request (valid 0) rejects all its drafts and the bonus token.
	got64, err := EaglePrepareInputsPaddedHost([]int64{3}, []int64{0}, []int64{0, 4})
	mustOK(t, err)
	wantEqual(t, "discarded", got64, EagleSampleIndices[int64]{TokenIndicesToSample: []int64{-1},
		NumRejectedTokens: []int64{4}})
}

func TestEaglePrepareInputsPaddedErrors(t *testing.T) {
	args := func() EaglePrepareInputsPaddedArgs {
		return EaglePrepareInputsPaddedArgs{CuNumDraftTokens: Int32Tensor([]int32{2, 2, 5}),
			ValidSampledTokensCount: Int32Tensor([]int32{3, 1, 2}),
			QueryStartLoc:           Int32Tensor([]int32{0, 3, 4, 8}),
			TokenIndicesToSample:    Int32Tensor(make([]int32, 3)),
			NumRejectedTokens:       Int32Tensor(make([]int32, 3))}
	}
	fn := "cattn.EaglePrepareInputsPadded: "
	a := args()
	a.ValidSampledTokensCount = nil
	wantError(t, EaglePrepareInputsPadded(a), StatusInvalidArgument, fn+"args.ValidSampledTokensCount is nil")
	a = args()
	a.NumRejectedTokens = nil
	wantError(t, EaglePrepareInputsPadded(a), StatusInvalidArgument, fn+"args.NumRejectedTokens is nil")
	// The two outputs in one buffer, and an output over an input.
	a = args()
	a.NumRejectedTokens = a.TokenIndicesToSample
	e := wantError(t, EaglePrepareInputsPadded(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.TokenIndicesToSample", "args.NumRejectedTokens")
	a = args()
	a.NumRejectedTokens = a.CuNumDraftTokens
	e = wantError(t, EaglePrepareInputsPadded(a), StatusInvalidArgument, fn, "overlaps an input")
	wantMentions(t, e, "args.NumRejectedTokens", "args.CuNumDraftTokens")
	a = args()
	a.QueryStartLoc = Int32Tensor([]int32{0, 3, 4})
	wantError(t, EaglePrepareInputsPadded(a), StatusInvalidArgument, fn+"args.QueryStartLoc is shorter")
	a = args()
	a.TokenIndicesToSample = Int32Tensor(make([]int32, 2))
	wantError(t, EaglePrepareInputsPadded(a), StatusInsufficientSize, fn+"args.TokenIndicesToSample ")
	// The one-call helper names its parameters.
	_, err := EaglePrepareInputsPaddedHost([]int64{2, 2, 5}, []int64{3, 1}, []int64{0, 3, 4, 8})
	wantError(t, err, StatusInvalidArgument, "cattn.EaglePrepareInputsPaddedHost: validSampledTokensCount ")
	_, err = EaglePrepareInputsPaddedHost([]int64{2}, []int64{3}, []int64{0})
	wantError(t, err, StatusInvalidArgument, "cattn.EaglePrepareInputsPaddedHost: queryStartLoc ")
}
