// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// vLLM's example: two requests of 3 and 2 tokens ([0, 3), [3, 5)) whose last valid tokens are
// 2 and 3, P = 2 (the bonus and one parallel draft), padding token 77, parallel-drafting
// token 5. Without shift, n_out = 5 + 2 * 2 = 9: request 0 owns outputs [0, 5): its 3 tokens,
// its bonus 99, a masked 5; request 1 owns [5, 9): its valid token 20, its bonus 98, a masked
// 5, then its rejected token (77, position 0). Positions count up from each request's first.
var (
	expandParams = EagleExpandParams{PaddingTokenID: 77, ParallelDraftingTokenID: 5,
		NumPaddingSlotsPerRequest: 2, MaxTokensPerRequest: 8}
	expandIDs, expandPos  = []int64{10, 11, 12, 20, 21}, []int64{4, 5, 6, 8, 9}
	expandNext, expandQSL = []int64{99, 98}, []int64{0, 3, 5}
	expandQEL             = []int64{2, 3}
)

func TestCopyAndExpandEagleInputs(t *testing.T) {
	for i, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			ids, pos := ibufOf(dt, expandIDs, step, 1), ibufOf(Int64, expandPos, step, 0)
			next, qsl := ibufOf(otherIndexType(dt), expandNext, step, 1), ibufOf(dt, expandQSL, step, 0)
			qel := ibufOf(dt, expandQEL, step, 1)
			outIDs, outPos := newIBuf(dt, []int64{10}, step, 1), newIBuf(Int64, []int64{10}, step, 0)
			newIdx := newIBuf(dt, []int64{4}, step, 1)
			hidden := newIBuf(dt, []int64{5}, step, 1)
			flagType := []DType{Bool, UInt8}[i]
			rejected, masked := make([]byte, 2*10), make([]byte, 10)
			for k := range rejected {
				rejected[k] = 7
			}
			for k := range masked {
				masked[k] = 7
			}
			mustOK(t, CopyAndExpandEagleInputs(CopyAndExpandEagleInputsArgs{
				EagleExpandParams: expandParams, TargetTokenIDs: ids.t, TargetPositions: pos.t,
				NextTokenIDs: next.t, QueryStartLoc: qsl.t, QueryEndLoc: qel.t,
				OutInputIDs: outIDs.t, OutPositions: outPos.t,
				OutIsRejectedTokenMask: BytesTensor(rejected, flagType, 10).WithStrides(2),
				OutIsMaskedTokenMask:   BytesTensor(masked, flagType, 10),
				OutNewTokenIndices:     newIdx.t, OutHiddenStateMapping: hidden.t}))
			what := dtypeName(dt)
			p := int64(poison)
			wantEqual(t, what+" ids", outIDs.values(), []int64{10, 11, 12, 99, 5, 20, 98, 5, 77, p})
			wantEqual(t, what+" positions", outPos.values(), []int64{4, 5, 6, 7, 8, 8, 9, 10, 0, p})
			wantEqual(t, what+" new token indices", newIdx.values(), []int64{3, 4, 6, 7})
			var rej []byte
			for k := 0; k < 10; k++ {
				rej = append(rej, rejected[2*k])
			}
			wantEqual(t, what+" rejected", rej, []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 7})
			wantEqual(t, what+" masked", masked, []byte{0, 0, 0, 0, 1, 0, 0, 1, 0, 7})
			// Written with shift only.
			wantEqual(t, what+" hidden state mapping", hidden.values(), []int64{p, p, p, p, p})
		}
	}
	// With shift, each request drops its first token: n_out = 5 + 2 * 1 = 7, and the hidden
	// states map input token j to its output index.
	shift := expandParams
	shift.ShiftInputIDs = true
	got, err := CopyAndExpandEagleInputsHost(shift, asIndex[int32](expandIDs),
		asIndex[int32](expandPos), asIndex[int32](expandNext), asIndex[int32](expandQSL),
		asIndex[int32](expandQEL))
	mustOK(t, err)
	f, T := false, true
	wantEqual(t, "shift", got, EagleExpandedInputs[int32]{
		InputIDs:            []int32{11, 12, 99, 5, 98, 5, 77},
		Positions:           []int32{4, 5, 6, 7, 8, 9, 0},
		IsRejectedTokenMask: []bool{f, f, f, f, f, f, T},
		IsMaskedTokenMask:   []bool{f, f, f, T, f, T, f},
		NewTokenIndices:     []int32{2, 3, 4, 5},
		HiddenStateMapping:  []int32{0, 1, 2, 4, 5}})
	// The zero params: P = 1 (the bonus only), no limit, padding token 0.
	got64, err := CopyAndExpandEagleInputsHost(EagleExpandParams{}, expandIDs, expandPos,
		expandNext, expandQSL, expandQEL)
	mustOK(t, err)
	wantEqual(t, "defaults", got64, EagleExpandedInputs[int64]{
		InputIDs:            []int64{10, 11, 12, 99, 20, 98, 0},
		Positions:           []int64{4, 5, 6, 7, 8, 9, 0},
		IsRejectedTokenMask: []bool{f, f, f, f, f, f, T},
		IsMaskedTokenMask:   []bool{f, f, f, f, f, f, f},
		NewTokenIndices:     []int64{3, 5}})
}

func TestCopyAndExpandEagleInputsErrors(t *testing.T) {
	args := func() CopyAndExpandEagleInputsArgs {
		return CopyAndExpandEagleInputsArgs{EagleExpandParams: expandParams,
			TargetTokenIDs: Int64Tensor(expandIDs), TargetPositions: Int64Tensor(expandPos),
			NextTokenIDs: Int64Tensor(expandNext), QueryStartLoc: Int64Tensor(expandQSL),
			QueryEndLoc: Int64Tensor(expandQEL), OutInputIDs: Int64Tensor(make([]int64, 9)),
			OutPositions: Int64Tensor(make([]int64, 9))}
	}
	fn := "cattn.CopyAndExpandEagleInputs: "
	mustOK(t, CopyAndExpandEagleInputs(args()))
	a := args()
	a.QueryEndLoc = nil
	wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn+"args.QueryEndLoc is nil")
	a = args()
	a.OutPositions = nil
	wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn+"args.OutPositions is nil")
	// Two outputs in one buffer; an output over an input; the masks over each other.
	a = args()
	a.OutPositions = a.OutInputIDs
	e := wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.OutInputIDs", "args.OutPositions")
	a = args()
	a.OutInputIDs = a.TargetTokenIDs
	e = wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn, "overlaps an input")
	wantMentions(t, e, "args.OutInputIDs", "args.TargetTokenIDs")
	a = args()
	mask := BytesTensor(make([]byte, 9), Bool, 9)
	a.OutIsRejectedTokenMask, a.OutIsMaskedTokenMask = mask, mask
	e = wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.OutIsRejectedTokenMask", "args.OutIsMaskedTokenMask")
	// Outputs shorter than n_out (9), a last valid token outside its request.
	a = args()
	a.OutInputIDs = Int64Tensor(make([]int64, 8))
	wantError(t, CopyAndExpandEagleInputs(a), StatusInsufficientSize, fn+"args.OutInputIDs is shorter")
	a = args()
	a.QueryEndLoc = Int64Tensor([]int64{2, 5})
	wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn+"args.QueryEndLoc is outside its request")
	a = args()
	a.NumPaddingSlotsPerRequest = -1
	wantError(t, CopyAndExpandEagleInputs(a), StatusInvalidArgument, fn+"args.NumPaddingSlotsPerRequest is out of range")
	// The one-call helper names its parameters.
	_, err := CopyAndExpandEagleInputsHost(expandParams, expandIDs, expandPos, expandNext,
		[]int64{0, 3, 3}, expandQEL)
	wantError(t, err, StatusInvalidArgument,
		"cattn.CopyAndExpandEagleInputsHost: queryStartLoc leaves a request without tokens")
	_, err = CopyAndExpandEagleInputsHost(expandParams, expandIDs[:4], expandPos, expandNext,
		expandQSL, expandQEL)
	wantError(t, err, StatusInvalidArgument, "cattn.CopyAndExpandEagleInputsHost: queryStartLoc passes the targets")
	bad := expandParams
	bad.MaxTokensPerRequest = -1
	_, err = CopyAndExpandEagleInputsHost(bad, expandIDs, expandPos, expandNext, expandQSL, expandQEL)
	wantError(t, err, StatusInvalidArgument, "cattn.CopyAndExpandEagleInputsHost: params.MaxTokensPerRequest ")
}

// A padding-slot count far too large for any output is named by libcattn, not allocated.
func TestCopyAndExpandEagleInputsHostHugeP(t *testing.T) {
	huge := expandParams
	huge.NumPaddingSlotsPerRequest = 1 << 62
	_, err := CopyAndExpandEagleInputsHost(huge, expandIDs, expandPos, expandNext, expandQSL,
		expandQEL)
	wantError(t, err, StatusInvalidArgument,
		"cattn.CopyAndExpandEagleInputsHost: params.NumPaddingSlotsPerRequest is out of range")
}
