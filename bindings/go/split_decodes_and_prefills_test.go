// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"errors"
	"strings"
	"testing"
)

type splitCase struct {
	Name            string  `json:"name"`
	QueryStartLoc   []int64 `json:"query_start_loc"`
	DType           string  `json:"dtype"`
	NumReqs         int64   `json:"num_reqs"`
	NumActualTokens int64   `json:"num_actual_tokens"`
	MaxQueryLen     int64   `json:"max_query_len"`
	Threshold       int64   `json:"decode_threshold"`
	RequireUniform  int     `json:"require_uniform"`
	Treat           int     `json:"treat_short_extends_as_decodes"`
	IsPrefilling    []int64 `json:"is_prefilling"`
	UpperBound      []int64 `json:"upper_bound"`
	UpperBoundDType string  `json:"upper_bound_dtype"`
	Result          []int64 `json:"result"`
	Error           string  `json:"error"`
}

func qslTensor(c splitCase) *Tensor {
	if c.DType == "int32" {
		v := make([]int32, len(c.QueryStartLoc))
		for i, x := range c.QueryStartLoc {
			v[i] = int32(x)
		}
		return Int32Tensor(v)
	}
	return Int64Tensor(append([]int64(nil), c.QueryStartLoc...))
}

func wantInvalid(t *testing.T, name string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != StatusInvalidArgument {
		t.Fatalf("%s: got %v, want CATTN_INVALID_ARGUMENT", name, err)
	}
}

func TestSplitDecodesAndPrefillsVectors(t *testing.T) {
	cases := loadCases[splitCase](t, "split_decodes_and_prefills")
	for _, c := range cases {
		b := SplitBatch{QueryStartLocCPU: qslTensor(c), NumReqs: c.NumReqs,
			NumActualTokens: c.NumActualTokens, MaxQueryLen: c.MaxQueryLen}
		o := SplitOptions{DecodeThreshold: &c.Threshold, RequireUniform: c.RequireUniform != 0,
			CountShortExtendsAsPrefills: c.Treat == 0}
		if c.IsPrefilling != nil {
			flags := make([]byte, len(c.IsPrefilling))
			for i, v := range c.IsPrefilling {
				flags[i] = byte(v)
			}
			o.IsPrefilling = BytesTensor(flags, UInt8, int64(len(flags)))
		}
		got, err := SplitDecodesAndPrefills(b, o)
		if c.Error != "" {
			wantInvalid(t, c.Name, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		wantEqual(t, c.Name, []int64{got.NumDecodes, got.NumPrefills, got.NumDecodeTokens,
			got.NumPrefillTokens}, c.Result)
	}
}

func TestSplitDecodesPrefillsAndExtendsVectors(t *testing.T) {
	cases := loadCases[splitCase](t, "split_decodes_prefills_and_extends")
	for _, c := range cases {
		b := SplitBatch{QueryStartLocCPU: qslTensor(c), NumReqs: c.NumReqs,
			NumActualTokens: c.NumActualTokens, MaxQueryLen: c.MaxQueryLen}
		var ub *Tensor
		if c.UpperBound != nil {
			ub = Int64Tensor(c.UpperBound)
		}
		got, err := SplitDecodesPrefillsAndExtends(b, ub, c.Threshold)
		if c.Error != "" {
			wantInvalid(t, c.Name, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		wantEqual(t, c.Name, []int64{got.NumDecodes, got.NumExtends, got.NumPrefills,
			got.NumDecodeTokens, got.NumExtendTokens, got.NumPrefillTokens}, c.Result)
	}
}

type chunksCase struct {
	Name          string     `json:"name"`
	SeqLens       []int64    `json:"seq_lens"`
	WorkspaceSize int64      `json:"workspace_size"`
	RequestOffset int64      `json:"request_offset"`
	Chunks        [][2]int64 `json:"chunks"`
	Error         string     `json:"error"`
}

func TestSplitPrefillChunksVectors(t *testing.T) {
	for _, c := range loadCases[chunksCase](t, "split_prefill_chunks") {
		got, err := SplitPrefillChunks(c.SeqLens, c.WorkspaceSize, c.RequestOffset)
		if c.Error != "" {
			wantInvalid(t, c.Name, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Chunks == nil {
			c.Chunks = [][2]int64{}
		}
		wantEqual(t, c.Name, got, c.Chunks)
	}
}

type reorderCase struct {
	Name      string     `json:"name"`
	Scheduled []int64    `json:"num_scheduled_tokens"`
	Computed  []int64    `json:"num_computed_tokens"`
	Prompt    []int64    `json:"num_prompt_tokens"`
	Threshold int64      `json:"decode_threshold"`
	Changed   int        `json:"changed"`
	IndexMap  []int64    `json:"index_map"`
	Swaps     [][2]int64 `json:"swaps"`
	Counts    [4]int64   `json:"counts"`
}

func TestReorderBatchToSplitDecodesAndPrefillsVectors(t *testing.T) {
	for _, c := range loadCases[reorderCase](t, "reorder_batch_to_split_decodes_and_prefills") {
		got, err := ReorderBatchToSplitDecodesAndPrefills(c.Scheduled, c.Computed, c.Prompt,
			c.Threshold)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.Swaps == nil {
			c.Swaps = [][2]int64{}
		}
		if c.IndexMap == nil {
			c.IndexMap = []int64{}
		}
		wantEqual(t, c.Name+" changed", got.Changed, c.Changed != 0)
		wantEqual(t, c.Name+" index map", got.IndexMap, c.IndexMap)
		wantEqual(t, c.Name+" swaps", got.Swaps, c.Swaps)
		wantEqual(t, c.Name+" counts", got.Counts, c.Counts)
	}
}

func TestSplitHelpersAndErrors(t *testing.T) {
	s, err := SplitQueryStartLoc([]int64{0, 1, 2, 7, 12}, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "one call", s, DecodePrefillSplit{2, 2, 2, 10})
	_, err = SplitPrefillChunks([]int64{9}, 8, 0)
	wantInvalid(t, "too long", err)
	if !strings.Contains(err.Error(), "seqLens") {
		t.Fatalf("message does not name the argument: %v", err)
	}
	_, err = ReorderBatchToSplitDecodesAndPrefills([]int64{1, 2}, []int64{1}, []int64{1, 2}, 1)
	wantInvalid(t, "lengths", err)
	if !strings.Contains(err.Error(), ": computed has the wrong size") {
		t.Fatalf("message does not name the argument: %v", err)
	}
	err = SplitDecodesAndPrefillsCapturable(SplitCapturableBatch{QueryStartLoc: Int64Tensor([]int64{0, 1})},
		SplitOptions{}, Int64Tensor(make([]int64, 4)))
	wantInvalid(t, "host tensors to the device call", err)
}

// The one-call splits take the batch from query_start_loc and vLLM's defaults: the vectors of
// that form.
func TestSplitQueryStartLocHelpersVectors(t *testing.T) {
	form := func(c splitCase) bool {
		return c.NumReqs == numReqs(c.QueryStartLoc) && c.NumActualTokens == lastOf(c.QueryStartLoc) &&
			c.MaxQueryLen == longestQuery(c.QueryStartLoc)
	}
	checked := 0
	for _, c := range loadCases[splitCase](t, "split_decodes_and_prefills") {
		if !form(c) || c.RequireUniform != 0 || c.Treat != 1 {
			continue
		}
		got, err := SplitQueryStartLoc(asIndex[int32](c.QueryStartLoc), c.Threshold)
		if c.Error != "" {
			wantInvalid(t, c.Name, err)
			continue
		}
		mustOK(t, err)
		checked++
		wantEqual(t, c.Name, []int64{got.NumDecodes, got.NumPrefills, got.NumDecodeTokens,
			got.NumPrefillTokens}, c.Result)
	}
	for _, c := range loadCases[splitCase](t, "split_decodes_prefills_and_extends") {
		if !form(c) || c.UpperBound == nil {
			continue
		}
		got, err := SplitQueryStartLocWithExtends(c.QueryStartLoc, c.UpperBound, c.Threshold)
		if c.Error != "" {
			wantInvalid(t, c.Name, err)
			continue
		}
		mustOK(t, err)
		checked++
		wantEqual(t, c.Name, []int64{got.NumDecodes, got.NumExtends, got.NumPrefills,
			got.NumDecodeTokens, got.NumExtendTokens, got.NumPrefillTokens}, c.Result)
	}
	if checked < 10 {
		t.Fatalf("only %d vectors of the helpers' form", checked)
	}
	_, err := SplitQueryStartLocWithExtends([]int64{0, 1, 5}, []int64{1}, 1)
	wantError(t, err, StatusInvalidArgument, "cattn.SplitQueryStartLocWithExtends: seqLensUpperBound")
	_, err = SplitQueryStartLoc([]int64{0, 1}, -1)
	wantError(t, err, StatusInvalidArgument, "cattn.SplitQueryStartLoc: decodeThreshold")
}

// SplitBatch's zero counts are CATTN_FROM_QUERY_START_LOC: libcattn derives T and
// max_query_len, and gives what the explicit counts give.
func TestSplitBatchZeroCountsAreDerived(t *testing.T) {
	qsl := []int32{0, 1, 2, 7, 12}
	explicit, err := SplitDecodesAndPrefills(SplitBatch{QueryStartLocCPU: Int32Tensor(qsl),
		NumReqs: 4, NumActualTokens: 12, MaxQueryLen: 5}, SplitOptions{})
	mustOK(t, err)
	derived, err := SplitDecodesAndPrefills(SplitBatch{QueryStartLocCPU: Int32Tensor(qsl),
		NumReqs: 4}, SplitOptions{})
	mustOK(t, err)
	wantEqual(t, "derived counts", derived, explicit)
	wantEqual(t, "split", derived, DecodePrefillSplit{2, 2, 2, 10})
	helper, err := SplitQueryStartLoc(qsl, 1)
	mustOK(t, err)
	wantEqual(t, "SplitQueryStartLoc", helper, explicit)
	_, err = SplitDecodesAndPrefills(SplitBatch{QueryStartLocCPU: Int32Tensor(qsl), NumReqs: 4,
		NumActualTokens: -2}, SplitOptions{})
	wantError(t, err, StatusInvalidArgument, "cattn.SplitDecodesAndPrefills: b.NumActualTokens ")
}
