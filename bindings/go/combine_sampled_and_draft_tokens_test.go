// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

func TestCombineSampledAndDraftTokens(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			qsl := ibufOf(dt, stepQSL, step, 1)
			drafts := ibufOf(dt, []int64{2, 0, 5}, step, 0) // row 2's 5 never read
			idx := ibufOf(dt, stepIdx, step, 1)
			logits, cu := newIBuf(dt, []int64{6}, step, 1), newIBuf(dt, []int64{4}, step, 0)
			expanded, local := newIBuf(dt, []int64{6}, step, 1), newIBuf(dt, []int64{6}, step, 1)
			mustOK(t, CombineSampledAndDraftTokens(CombineSampledAndDraftTokensArgs{
				QueryStartLoc: qsl.t, NumReqs: Int64Tensor([]int64{2}), NumDraftTokens: drafts.t,
				IdxMapping: idx.t, LogitsIndices: logits.t, CuNumLogits: cu.t,
				ExpandedIdxMapping: expanded.t, ExpandedLocalPos: local.t}))
			// Row 0 owns 1 + 2 logits, the last 3 tokens of its query [0, 3); row 1 one, token
			// 3; row 2 none; 0 past the 4 logits.
			what := dtypeName(dt)
			wantEqual(t, what+" logits", logits.values(), []int64{0, 1, 2, 3, 0, 0})
			wantEqual(t, what+" cu", cu.values(), []int64{0, 3, 4, 4})
			wantEqual(t, what+" expanded", expanded.values(), []int64{2, 2, 2, 0, 0, 0})
			wantEqual(t, what+" local", local.values(), []int64{0, 1, 2, 0, 0, 0})
		}
	}
	// No new sampled token: row 0 owns its 2 drafts' logits, tokens 1 and 2; row 1 none.
	l, err := CombineSampledAndDraftTokensHost(Ptr[int64](0), stepQSL, Ptr[int64](2),
		[]int64{2, 0, 5}, nil)
	mustOK(t, err)
	wantEqual(t, "no new sampled token", l, StepLogits[int64]{LogitsIndices: []int64{1, 2},
		CuNumLogits: []int64{0, 2, 2, 2}, ExpandedLocalPos: []int64{0, 1}})
	// The default (nil): one new sampled token per live row.
	l32, err := CombineSampledAndDraftTokensHost(nil, []int32{0, 3, 4, 4}, Ptr[int64](2), nil,
		[]int32{2, 0, 9})
	mustOK(t, err)
	wantEqual(t, "default", l32, StepLogits[int32]{LogitsIndices: []int32{2, 3},
		CuNumLogits: []int32{0, 1, 2, 2}, ExpandedIdxMapping: []int32{2, 0},
		ExpandedLocalPos: []int32{0, 0}})
}

// Row 0 (persistent row 2) is past its prompt of 5 (seq_len 10), and so is its first logit
// (position 7): token 0 gets its last sampled token, tokens 1 and 2 its two drafts. Row 1
// (persistent row 0) ends its prompt (seq_len 6 = prefill 6): nothing is written for it.
func TestCombineSampledAndDraftTokensInputIDs(t *testing.T) {
	ids := []int64{100, 101, 102, 103}
	logits := make([]int64, 4)
	mustOK(t, CombineSampledAndDraftTokens(CombineSampledAndDraftTokensArgs{
		QueryStartLoc: Int64Tensor(stepQSL), NumReqs: Int64Tensor([]int64{2}),
		NumDraftTokens: Int64Tensor([]int64{2, 0, 0}), IdxMapping: Int64Tensor(stepIdx),
		SeqLens: Int64Tensor(stepSeq), PrefillLen: Int64Tensor([]int64{6, 1, 5}),
		LastSampledTokens: Int64Tensor([]int64{500, 501, 502}),
		DraftTokens:       Int64Tensor([]int64{600, 601, 610, 611, 620, 621}, 3, 2),
		LogitsIndices:     Int64Tensor(logits), InputIDs: Int64Tensor(ids)}))
	wantEqual(t, "logits", logits, []int64{0, 1, 2, 3})
	wantEqual(t, "input ids", ids, []int64{502, 620, 621, 103})
}

func TestCombineSampledAndDraftTokensErrors(t *testing.T) {
	_, err := CombineSampledAndDraftTokensHost(Ptr[int64](2), stepQSL, Ptr[int64](2), nil, nil)
	wantError(t, err, StatusInvalidArgument,
		"cattn.CombineSampledAndDraftTokensHost: numNewSampledTokens")
	err = CombineSampledAndDraftTokens(CombineSampledAndDraftTokensArgs{
		NumNewSampledTokens: Ptr[int64](-1), QueryStartLoc: Int32Tensor([]int32{0, 3}),
		LogitsIndices: Int32Tensor(make([]int32, 3))})
	wantError(t, err, StatusInvalidArgument,
		"cattn.CombineSampledAndDraftTokens: args.NumNewSampledTokens")
}
