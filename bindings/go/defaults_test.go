// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// The zero value of each argument struct is the C *_INIT value: a field left out gives the
// header's default, as the same call with the default spelled out does.

func TestZeroDCPArgsAreAllRanksOfOne(t *testing.T) {
	seq := []int64{5, 0, 9}
	// CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT: a group of 1, every rank, interleave 1. The 1.0
	// shapes take a [B] out for all ranks of a group of 1.
	out := make([]int64, 3)
	mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor(seq),
		Out: Int64Tensor(out)}))
	wantEqual(t, "group of 1", out, seq)

	// Ranks left out is every rank: [B, DCPSize], not rank 0's [B].
	all := make([]int64, 3*2)
	mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor(seq), DCPSize: 2,
		Out: Int64Tensor(all, 3, 2)}))
	wantEqual(t, "every rank, interleave 1", all, []int64{3, 2, 0, 0, 5, 4})
	err := GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor(seq), DCPSize: 2,
		Out: Int64Tensor(make([]int64, 3))})
	wantError(t, err, StatusInvalidArgument)

	// Rank 0 is chosen only by saying so.
	one := make([]int64, 3)
	mustOK(t, GetDCPLocalSeqLens(DCPLocalSeqLensArgs{SeqLens: Int64Tensor(seq), DCPSize: 2,
		Ranks: DCPRank(0), Out: Int64Tensor(one)}))
	wantEqual(t, "rank 0", one, []int64{3, 0, 5})
	wantEqual(t, "DCPRank(DCPAllRanks)", DCPRank(DCPAllRanks), AllDCPRanks)
	wantEqual(t, "zero DCPRanks", DCPRanks{}.String(), "all ranks")
	r, isOne := DCPRank(3).Rank()
	wantEqual(t, "DCPRank(3)", [2]any{r, isOne}, [2]any{int64(3), true})
}

func TestZeroMetadataIsCausal(t *testing.T) {
	md := &CommonAttnMetadata{QueryStartLoc: Int64Tensor([]int64{0, 2}),
		SeqLens: Int64Tensor([]int64{4}), NumReqs: 1, NumActualTokens: 2}
	// Unpadded copies causal through C: the zero value crosses as 1, NonCausal as 0.
	u, err := Unpadded(md, 2, 1)
	mustOK(t, err)
	wantEqual(t, "zero metadata stays causal", u.NonCausal, false)
	md.NonCausal = true
	u, err = Unpadded(md, 2, 1)
	mustOK(t, err)
	wantEqual(t, "NonCausal crosses", u.NonCausal, true)
}

func TestZeroExtendArgsAddOneToken(t *testing.T) {
	qsl, seq := []int64{0, 2, 5}, []int64{4, 6}
	md := &CommonAttnMetadata{QueryStartLoc: Int64Tensor(qsl), SeqLens: Int64Tensor(seq),
		NumReqs: 2, NumActualTokens: 5, MaxQueryLen: 3, MaxSeqLen: 6}
	mustOK(t, ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: md, Out: md}))
	wantEqual(t, "nil N is 1", [2][]int64{qsl, seq}, [2][]int64{{0, 3, 7}, {5, 7}})
	mustOK(t, ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: md, Out: md,
		N: Ptr[int64](0)}))
	wantEqual(t, "N 0 adds none", [2][]int64{qsl, seq}, [2][]int64{{0, 3, 7}, {5, 7}})
}

func TestZeroSplitOptionsAreThreshold1(t *testing.T) {
	b := SplitBatch{QueryStartLocCPU: Int64Tensor([]int64{0, 1, 2, 6}), NumReqs: 3,
		NumActualTokens: 6, MaxQueryLen: 4}
	zero, err := SplitDecodesAndPrefills(b, SplitOptions{})
	mustOK(t, err)
	one, err := SplitDecodesAndPrefills(b, SplitOptions{DecodeThreshold: Ptr[int64](1)})
	mustOK(t, err)
	wantEqual(t, "nil threshold is 1", zero, one)
	wantEqual(t, "threshold 1", zero, DecodePrefillSplit{2, 1, 2, 4})
	zeroThr, err := SplitDecodesAndPrefills(b, SplitOptions{DecodeThreshold: Ptr[int64](0)})
	mustOK(t, err)
	wantEqual(t, "threshold 0 stays expressible", zeroThr, DecodePrefillSplit{0, 3, 0, 6})
}

func TestZeroConv1dBlockMIs8(t *testing.T) {
	qsl := Int64Tensor([]int64{0, 9, 25})
	for _, blockM := range []int64{0, 8} {
		nums := make([]int64, 2)
		tot, err := ComputeCausalConv1dMetadata(CausalConv1dMetadataArgs{QueryStartLocCPU: qsl,
			BlockM: blockM, Nums: Int64Tensor(nums)})
		mustOK(t, err)
		wantEqual(t, "programs", [2]any{tot, nums}, [2]any{int64(4), []int64{2, 2}})
	}
}
