// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// One drafting step, block size 4, max_model_len 10, a table of W = 3 columns. Row 0: p = 3 +
// 1 = 4, block 1 (table 2): slot 2*4 + 0. Row 1: p = 9, block 2 (table 6): slot 6*4 + 1. Row
// 2: p = 10 reaches max_model_len: position 0, slot -1, seq_len 1. Slots 3 and 4 are the
// CUDA-graph padding (-1); entry 5 is past InputBatchSize and left alone.
var (
	eagleParams = EagleStepParams{BlockSize: 4, MaxModelLen: 10, InputBatchSize: 5}
	eagleTable  = [][]int64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
)

func TestEagleStepUpdateSlotMappingAndMetadata(t *testing.T) {
	for _, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			pos, seq := ibufOf(dt, []int64{3, 8, 9}, step, 1), ibufOf(dt, []int64{4, 9, 10}, step, 0)
			table := ibuf2D(dt, eagleTable, step)
			clamped, slots := newIBuf(otherIndexType(dt), []int64{3}, step, 1),
				newIBuf(Int64, []int64{6}, step, 1)
			mustOK(t, EagleStepUpdateSlotMappingAndMetadata(EagleStepUpdateSlotMappingAndMetadataArgs{
				EagleStepParams: eagleParams, Positions: pos.t, BlockTable: table.t, SeqLens: seq.t,
				OutClampedPositions: clamped.t, OutSlotMapping: slots.t}))
			what := dtypeName(dt)
			wantEqual(t, what+" clamped", clamped.values(), []int64{4, 9, 0})
			wantEqual(t, what+" slots", slots.values(), []int64{8, 25, -1, -1, -1, poison})
			wantEqual(t, what+" seq_lens", seq.values(), []int64{5, 10, 1})
		}
	}
	// The clamped positions written over the positions (the same view); InputBatchSize 0 is B.
	pos := []int64{3, 8, 9}
	slots := make([]int64, 3)
	p := eagleParams
	p.InputBatchSize = 0
	mustOK(t, EagleStepUpdateSlotMappingAndMetadata(EagleStepUpdateSlotMappingAndMetadataArgs{
		EagleStepParams: p, Positions: Int64Tensor(pos), BlockTable: Int64Tensor(flatten(eagleTable), 3, 3),
		SeqLens: Int64Tensor([]int64{4, 9, 10}), OutSlotMapping: Int64Tensor(slots)}.inPlace()))
	wantEqual(t, "in place", pos, []int64{4, 9, 0})
	wantEqual(t, "in place slots", slots, []int64{8, 25, -1})
}

// inPlace writes the clamped positions over the positions.
func (a EagleStepUpdateSlotMappingAndMetadataArgs) inPlace() EagleStepUpdateSlotMappingAndMetadataArgs {
	a.OutClampedPositions = a.Positions
	return a
}

func TestEagleStepUpdateSlotMappingAndMetadataHost(t *testing.T) {
	seq := []int32{4, 9, 10}
	got, err := EagleStepUpdateSlotMappingAndMetadataHost(eagleParams, []int32{3, 8, 9},
		asRows[int32](eagleTable), seq)
	mustOK(t, err)
	wantEqual(t, "int32", got, EagleStepSlots[int32]{ClampedPositions: []int32{4, 9, 0},
		SlotMapping: []int64{8, 25, -1, -1, -1}})
	wantEqual(t, "seq_lens in place", seq, []int32{5, 10, 1})
	// A position past the table's width reads its last column (p = 21, block 5 of 1): 3*4 + 1;
	// slots are int64 past 2^31 (block 2^30 * 4).
	got64, err := EagleStepUpdateSlotMappingAndMetadataHost(EagleStepParams{BlockSize: 4,
		MaxModelLen: 100}, []int64{20, 1}, [][]int64{{3}, {1 << 30}}, []int64{21, 2})
	mustOK(t, err)
	wantEqual(t, "last column, int64 slots", got64, EagleStepSlots[int64]{
		ClampedPositions: []int64{21, 2}, SlotMapping: []int64{13, 1<<32 + 2}})
	// No request at all.
	none, err := EagleStepUpdateSlotMappingAndMetadataHost(eagleParams, []int64{}, nil, []int64{})
	mustOK(t, err)
	wantEqual(t, "empty batch", none, EagleStepSlots[int64]{ClampedPositions: []int64{},
		SlotMapping: []int64{-1, -1, -1, -1, -1}})
}

func TestEagleStepUpdateSlotMappingAndMetadataErrors(t *testing.T) {
	args := func() EagleStepUpdateSlotMappingAndMetadataArgs {
		return EagleStepUpdateSlotMappingAndMetadataArgs{EagleStepParams: eagleParams,
			Positions: Int64Tensor([]int64{3, 8, 9}), BlockTable: Int64Tensor(flatten(eagleTable), 3, 3),
			SeqLens: Int64Tensor([]int64{4, 9, 10}), OutClampedPositions: Int64Tensor(make([]int64, 3)),
			OutSlotMapping: Int64Tensor(make([]int64, 5))}
	}
	fn := "cattn.EagleStepUpdateSlotMappingAndMetadata: "
	a := args()
	a.Positions = nil
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument,
		fn+"args.Positions is nil")
	a = args()
	a.BlockTable = nil
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument,
		fn+"args.BlockTable is nil")
	a = args()
	a.SeqLens = nil
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument,
		fn+"args.SeqLens is nil")
	// Outputs that share memory: the slots over the clamped positions, and the clamped
	// positions over the sequence lengths (only the positions' very view may be shared).
	a = args()
	shared := make([]int64, 5)
	a.OutClampedPositions, a.OutSlotMapping = Int64Tensor(shared[:3]), Int64Tensor(shared)
	e := wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.OutClampedPositions", "args.OutSlotMapping")
	a = args()
	a.OutClampedPositions = a.SeqLens
	e = wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.OutClampedPositions", "args.SeqLens")
	// The scalars, and a slot mapping shorter than InputBatchSize.
	a = args()
	a.BlockSize = 0
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument,
		fn+"args.BlockSize is out of range (got 0, expected >= 1)")
	a = args()
	a.InputBatchSize = 2
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInvalidArgument,
		fn+"args.InputBatchSize is below the batch")
	a = args()
	a.OutSlotMapping = Int64Tensor(make([]int64, 4))
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(a), StatusInsufficientSize,
		fn+"args.OutSlotMapping ")
	// The one-call helper names its own parameters.
	_, err := EagleStepUpdateSlotMappingAndMetadataHost(EagleStepParams{BlockSize: 4},
		[]int64{3}, [][]int64{{1}}, []int64{4})
	wantError(t, err, StatusInvalidArgument,
		"cattn.EagleStepUpdateSlotMappingAndMetadataHost: params.MaxModelLen is out of range")
	_, err = EagleStepUpdateSlotMappingAndMetadataHost(eagleParams, []int64{3, 1},
		[][]int64{{1}}, []int64{4, 2})
	wantError(t, err, StatusInvalidArgument,
		"cattn.EagleStepUpdateSlotMappingAndMetadataHost: blockTable ")
	_, err = EagleStepUpdateSlotMappingAndMetadataHost(eagleParams, []int64{-2},
		[][]int64{{1}}, []int64{4})
	wantError(t, err, StatusInvalidArgument,
		"cattn.EagleStepUpdateSlotMappingAndMetadataHost: positions is below -1 (got [0] = -2,")
	_, err = EagleStepUpdateSlotMappingAndMetadataHost(eagleParams, []int64{3, 1},
		[][]int64{{1, 2}, {3}}, []int64{4, 2})
	wantError(t, err, StatusInvalidArgument,
		"cattn.EagleStepUpdateSlotMappingAndMetadataHost: blockTable has rows of different lengths")
}

// wantMentions checks that e's Go message names every one of names.
func wantMentions(t *testing.T, e *Error, names ...string) {
	t.Helper()
	for _, n := range names {
		if !containsWord(e.Message, n) {
			t.Fatalf("message %q does not name %s (C: %q)", e.Message, n, e.CMessage)
		}
	}
}

// containsWord reports whether s holds w followed by a character that cannot continue a Go
// name (so that args.SeqLens is not found in args.SeqLensCPU).
func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] != w {
			continue
		}
		if j := i + len(w); j == len(s) || !isPathByte(s[j]) || s[j] == '.' {
			return true
		}
	}
	return false
}

// CUDA tensors reach the device path, which a CPU-only libcattn refuses after its checks.
func TestSpecDecodeNotSupported(t *testing.T) {
	skipWithGPU(t)
	var dev fakeDevice
	wantError(t, EagleStepUpdateSlotMappingAndMetadata(EagleStepUpdateSlotMappingAndMetadataArgs{
		EagleStepParams: eagleParams, Positions: dev.tensor(Int64, 3),
		BlockTable: dev.tensor(Int32, 3, 3), SeqLens: dev.tensor(Int32, 3),
		OutClampedPositions: dev.tensor(Int64, 3), OutSlotMapping: dev.tensor(Int64, 5)}),
		StatusNotSupported, "cattn.EagleStepUpdateSlotMappingAndMetadata: ")
	wantError(t, EaglePrepareInputsPadded(EaglePrepareInputsPaddedArgs{
		CuNumDraftTokens: dev.tensor(Int32, 3), ValidSampledTokensCount: dev.tensor(Int32, 3),
		QueryStartLoc: dev.tensor(Int32, 4), TokenIndicesToSample: dev.tensor(Int32, 3),
		NumRejectedTokens: dev.tensor(Int32, 3)}),
		StatusNotSupported, "cattn.EaglePrepareInputsPadded: ")
	wantError(t, EaglePrepareNextTokenPadded(EaglePrepareNextTokenPaddedArgs{VocabSize: 50,
		SampledTokenIDs: dev.tensor(Int32, 3, 2), DiscardRequestMask: dev.tensor(Bool, 3),
		BackupNextTokenIDs: dev.tensor(Int32, 3), NextTokenIDs: dev.tensor(Int32, 3),
		ValidSampledTokensCount: dev.tensor(Int32, 3)}),
		StatusNotSupported, "cattn.EaglePrepareNextTokenPadded: ")
	wantError(t, ComputeNewSlotMapping(ComputeNewSlotMappingArgs{
		NewSlotMappingParams: NewSlotMappingParams{BlockSize: 4, NumNewTokens: 1, MaxModelLen: 10},
		QueryStartLoc:        dev.tensor(Int32, 3), BlockTable: dev.tensor(Int32, 2, 3),
		NewPositions: dev.tensor(Int64, 5), IsRejectedTokenMask: dev.tensor(UInt8, 5),
		NewSlotMapping: dev.tensor(Int64, 5)}),
		StatusNotSupported, "cattn.ComputeNewSlotMapping: ")
	wantError(t, CopyAndExpandEagleInputs(CopyAndExpandEagleInputsArgs{
		EagleExpandParams: EagleExpandParams{NumPaddingSlotsPerRequest: 2},
		TargetTokenIDs:    dev.tensor(Int32, 5), TargetPositions: dev.tensor(Int64, 5),
		NextTokenIDs: dev.tensor(Int32, 2), QueryStartLoc: dev.tensor(Int32, 3),
		QueryEndLoc: dev.tensor(Int32, 2), OutInputIDs: dev.tensor(Int32, 9),
		OutPositions: dev.tensor(Int64, 9)}),
		StatusNotSupported, "cattn.CopyAndExpandEagleInputs: ")
	wantError(t, UpdateNumComputedTokensForBatchChange(UpdateNumComputedTokensForBatchChangeArgs{
		NumComputedTokens: dev.tensor(Int32, 4), NumAcceptedTokens: dev.tensor(Int32, 3),
		PrevPositions: dev.tensor(Int64, 3), ValidSampledTokenCount: dev.tensor(Int32, 3),
		PrevNumDraftTokens: dev.tensor(Int32, 3), CPUNumComputedTokens: dev.tensor(Int32, 3)}),
		StatusNotSupported, "cattn.UpdateNumComputedTokensForBatchChange: ")
}
