// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// One batch runs through the step-input tests: B = 3 rows, the first 2 live (numReqs 2), row 2
// padding; R = 3 persistent rows with num_computed_tokens [5, 0, 7]; idx_mapping [2, 0, 9]
// (row 2's 9 is outside the persistent rows and never read); num_scheduled [3, 1, 4] (row 2's
// 4 never read). By hand: query_start_loc [0, 3, 4, 4]; seq_lens [7 + 3, 5 + 1, 0]; positions
// 7, 8, 9 (row 0 from its 7 computed tokens) and 5 (row 1), then 0.
var (
	stepSched = []int64{3, 1, 4}
	stepIdx   = []int64{2, 0, 9}
	stepNCT   = []int64{5, 0, 7}
	stepQSL   = []int64{0, 3, 4, 4}
	stepSeq   = []int64{10, 6, 0}
	stepPos   = []int64{7, 8, 9, 5, 0, 0} // a 6-entry buffer
	// The persistent table: R = 3 rows of W = 4 kernel blocks.
	stepTable = [][]int64{{1, 2, 3, 4}, {5, 6, 7, 8}, {10, 11, 12, 13}}
)

func TestPreparePosSeqLens(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			sched, idx, nct := ibufOf(dt, stepSched, step, 1), ibufOf(dt, stepIdx, step, 0),
				ibufOf(dt, stepNCT, step, 1)
			live := ibufOf(otherIndexType(dt), []int64{2}, 1, 0)
			qsl, seq := newIBuf(dt, []int64{4}, step, 1), newIBuf(dt, []int64{3}, step, 0)
			pos, bnct := newIBuf(dt, []int64{6}, step, 1), newIBuf(dt, []int64{3}, step, 1)
			mustOK(t, PreparePosSeqLens(PreparePosSeqLensArgs{NumScheduledTokens: sched.t,
				IdxMapping: idx.t, NumComputedTokens: nct.t, NumReqs: live.t,
				QueryStartLoc: qsl.t, SeqLens: seq.t, Positions: pos.t,
				BatchNumComputedTokens: bnct.t}))
			what := dtypeName(dt)
			wantEqual(t, what+" query_start_loc", qsl.values(), stepQSL)
			wantEqual(t, what+" seq_lens", seq.values(), stepSeq)
			wantEqual(t, what+" positions", pos.values(), stepPos)
			wantEqual(t, what+" num_computed_tokens", bnct.values(), []int64{7, 5, 0})
			if raw := qsl.raw(); raw[0] != poison {
				t.Fatalf("%s: wrote before the byte offset: %v", what, raw)
			}
		}
	}
}

func TestPreparePosSeqLensHost(t *testing.T) {
	got, err := PreparePosSeqLensHost(stepSched, stepIdx, stepNCT, Ptr[int64](2))
	mustOK(t, err)
	wantEqual(t, "two live rows", got, PreparedStepInputs[int64]{QueryStartLoc: stepQSL,
		SeqLens: stepSeq, Positions: stepPos[:4], NumComputedTokens: []int64{7, 5, 0}})
	// Without numReqs every row is live: row 2 on persistent row 1 (0 computed) too.
	got32, err := PreparePosSeqLensHost([]int32{3, 1, 4}, []int32{2, 0, 1}, []int32{5, 0, 7}, nil)
	mustOK(t, err)
	wantEqual(t, "every row live", got32, PreparedStepInputs[int32]{
		QueryStartLoc: []int32{0, 3, 4, 8}, SeqLens: []int32{10, 6, 4},
		Positions: []int32{7, 8, 9, 5, 0, 1, 2, 3}, NumComputedTokens: []int32{7, 5, 0}})
	// numReqs 0: no live row.
	none, err := PreparePosSeqLensHost(stepSched, stepIdx, stepNCT, Ptr[int64](0))
	mustOK(t, err)
	wantEqual(t, "no live row", none.QueryStartLoc, []int64{0, 0, 0, 0})
	wantEqual(t, "no live token", len(none.Positions), 0)
}

func TestPreparePosSeqLensErrors(t *testing.T) {
	// A live row mapped to persistent row 3 of 3, in the helper's terms and in the C ones.
	_, err := PreparePosSeqLensHost(stepSched, []int64{3, 0, 9}, stepNCT, Ptr[int64](2))
	wantError(t, err, StatusInvalidArgument, "cattn.PreparePosSeqLensHost: idxMapping",
		"cattn_prepare_pos_seq_lens: args->idx_mapping")
	// The tensor form names the field; positions shorter than the total.
	err = PreparePosSeqLens(PreparePosSeqLensArgs{NumScheduledTokens: Int64Tensor(stepSched),
		IdxMapping: Int64Tensor(stepIdx), NumComputedTokens: Int64Tensor(stepNCT),
		NumReqs: Int64Tensor([]int64{2}), QueryStartLoc: Int64Tensor(make([]int64, 4)),
		SeqLens: Int64Tensor(make([]int64, 3)), Positions: Int64Tensor(make([]int64, 3))})
	wantError(t, err, StatusInsufficientSize, "cattn.PreparePosSeqLens: args.Positions")
	err = PreparePosSeqLens(PreparePosSeqLensArgs{NumScheduledTokens: Int64Tensor(stepSched),
		IdxMapping: Int64Tensor(stepIdx), NumComputedTokens: Int64Tensor(stepNCT),
		SeqLens: Int64Tensor(make([]int64, 3))})
	wantError(t, err, StatusInvalidArgument, "cattn.PreparePosSeqLens: args.QueryStartLoc is nil")
}

// CUDA tensors reach the device path, which a CPU-only libcattn refuses after its checks.
func TestStepInputsNotSupported(t *testing.T) {
	skipWithGPU(t)
	var dev fakeDevice
	wantError(t, PreparePosSeqLens(PreparePosSeqLensArgs{NumScheduledTokens: dev.tensor(Int32, 3),
		IdxMapping: dev.tensor(Int32, 3), NumComputedTokens: dev.tensor(Int32, 3),
		QueryStartLoc: dev.tensor(Int32, 4), SeqLens: dev.tensor(Int32, 3)}),
		StatusNotSupported, "cattn.PreparePosSeqLens: ")
	wantError(t, GatherBlockTables(GatherBlockTablesArgs{IdxMapping: dev.tensor(Int32, 3),
		BlockTable: dev.tensor(Int32, 3, 4), Out: dev.tensor(Int32, 3, 4)}),
		StatusNotSupported, "cattn.GatherBlockTables: ")
	wantError(t, ComputeSlotMappings(ComputeSlotMappingsArgs{
		SlotMappingParams: SlotMappingParams{BlockSize: 4, KernelBlockSize: 4},
		QueryStartLoc:     dev.tensor(Int32, 4), Positions: dev.tensor(Int32, 6),
		IdxMapping: dev.tensor(Int32, 3), BlockTable: dev.tensor(Int32, 3, 4),
		SlotMapping: dev.tensor(Int64, 6)}), StatusNotSupported, "cattn.ComputeSlotMappings: ")
	wantError(t, CombineSampledAndDraftTokens(CombineSampledAndDraftTokensArgs{
		QueryStartLoc: dev.tensor(Int32, 4), LogitsIndices: dev.tensor(Int32, 6)}),
		StatusNotSupported, "cattn.CombineSampledAndDraftTokens: ")
	wantError(t, StepBatchCheck(StepBatchCheckArgs{QueryStartLoc: dev.tensor(Int32, 4),
		Status: dev.tensor(Int32, 3)}), StatusNotSupported, "cattn.StepBatchCheck: ")
}
