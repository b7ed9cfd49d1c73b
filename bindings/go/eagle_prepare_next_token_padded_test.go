// SPDX-License-Identifier: Apache-2.0

package cattn

import "testing"

// vLLM's example, vocabulary 50: row 0 samples 5, 7 and a rejection (next 7, 2 valid); row 1
// rejects everything (its backup 12, 0 valid); row 2's 100 is past the vocabulary (next 4, 2
// valid). The sampled tokens are the first 3 columns of a 4-column buffer.
var (
	eagleSampled = [][]int64{{5, 7, -1, 40}, {-1, -1, -1, 41}, {3, 100, 4, 42}}
	eagleBackup  = []int64{11, 12, 13}
)

func TestEaglePrepareNextTokenPadded(t *testing.T) {
	for i, dt := range indexTypes {
		for _, step := range []int64{1, 2} {
			full := ibuf2D(dt, eagleSampled, step)
			sampled := *full.t
			sampled.Shape = []int64{3, 3}
			sampled.Strides = full.strides
			backup := ibufOf(otherIndexType(dt), eagleBackup, step, 0)
			next, valid := newIBuf(dt, []int64{4}, step, 1), newIBuf(dt, []int64{3}, step, 0)
			for _, discard := range []*Tensor{nil, BytesTensor([]byte{0, 0, 0}, []DType{Bool, UInt8}[i], 3)} {
				mustOK(t, EaglePrepareNextTokenPadded(EaglePrepareNextTokenPaddedArgs{
					VocabSize: 50, SampledTokenIDs: &sampled, DiscardRequestMask: discard,
					BackupNextTokenIDs: backup.t, NextTokenIDs: next.t, ValidSampledTokensCount: valid.t}))
				what := dtypeName(dt)
				wantEqual(t, what+" next", next.values(), []int64{7, 12, 4, poison})
				wantEqual(t, what+" valid", valid.values(), []int64{2, 0, 2})
			}
		}
	}
	// Row 2 discarded: its backup, 0 valid. Negative tokens other than -1 count as valid
	// (vLLM's rule).
	got, err := EaglePrepareNextTokenPaddedHost(50, [][]int32{{5, 7, -1}, {-1, -1, -1},
		{3, 100, 4}}, []bool{false, false, true}, []int32{11, 12, 13})
	mustOK(t, err)
	wantEqual(t, "discarded", got, EagleNextTokens[int32]{NextTokenIDs: []int32{7, 12, 13},
		ValidSampledTokensCount: []int32{2, 0, 0}})
	got64, err := EaglePrepareNextTokenPaddedHost(50, [][]int64{{-5, -1}}, nil, []int64{9})
	mustOK(t, err)
	wantEqual(t, "negative token", got64, EagleNextTokens[int64]{NextTokenIDs: []int64{-5},
		ValidSampledTokensCount: []int64{1}})
}

func TestEaglePrepareNextTokenPaddedErrors(t *testing.T) {
	args := func() EaglePrepareNextTokenPaddedArgs {
		return EaglePrepareNextTokenPaddedArgs{VocabSize: 50,
			SampledTokenIDs:    Int64Tensor([]int64{5, 7, -1, -1}, 2, 2),
			BackupNextTokenIDs: Int64Tensor([]int64{11, 12}), NextTokenIDs: Int64Tensor(make([]int64, 2)),
			ValidSampledTokensCount: Int64Tensor(make([]int64, 2))}
	}
	fn := "cattn.EaglePrepareNextTokenPadded: "
	a := args()
	a.SampledTokenIDs = nil
	wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument, fn+"args.SampledTokenIDs is nil")
	a = args()
	a.BackupNextTokenIDs = nil
	wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument, fn+"args.BackupNextTokenIDs is nil")
	a = args()
	a.ValidSampledTokensCount = a.NextTokenIDs
	e := wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument, fn, "overlaps")
	wantMentions(t, e, "args.NextTokenIDs", "args.ValidSampledTokensCount")
	a = args()
	a.NextTokenIDs = a.BackupNextTokenIDs
	e = wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument, fn, "overlaps an input")
	wantMentions(t, e, "args.NextTokenIDs", "args.BackupNextTokenIDs")
	// A mask of another length, and one of two bytes per entry.
	a = args()
	a.DiscardRequestMask = BytesTensor([]byte{0, 0, 0}, Bool, 3)
	wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument, fn+"args.DiscardRequestMask ")
	a = args()
	a.DiscardRequestMask = Int32Tensor([]int32{0, 0})
	wantError(t, EaglePrepareNextTokenPadded(a), StatusInvalidArgument,
		fn+"args.DiscardRequestMask has an unsupported dtype")
	// The one-call helper names its parameters.
	_, err := EaglePrepareNextTokenPaddedHost(50, [][]int64{{1}, {2}}, []bool{true}, []int64{11, 12})
	wantError(t, err, StatusInvalidArgument, "cattn.EaglePrepareNextTokenPaddedHost: discardRequestMask ")
	_, err = EaglePrepareNextTokenPaddedHost(50, [][]int64{{1}, {2, 3}}, nil, []int64{11, 12})
	wantError(t, err, StatusInvalidArgument,
		"cattn.EaglePrepareNextTokenPaddedHost: sampledTokenIDs has rows of different lengths")
	_, err = EaglePrepareNextTokenPaddedHost(50, [][]int64{{1}, {2}}, nil, []int64{11})
	wantError(t, err, StatusInvalidArgument, "cattn.EaglePrepareNextTokenPaddedHost: backupNextTokenIDs ")
}
