// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type fastPrefillCase struct {
	Name                string   `json:"name"`
	QueryStartLoc       []int64  `json:"query_start_loc"`
	LogitsIndicesPadded *[]int64 `json:"logits_indices_padded"`
	NumLogitsIndices    *int64   `json:"num_logits_indices"`
	NumReqs             int64    `json:"num_reqs"`
	MaxQueryLen         int64    `json:"max_query_len"`
	DTypes              []string `json:"dtypes"`
	Passthrough         bool     `json:"passthrough"`
	SeedError           *string  `json:"seed_error"`
	Expect              struct {
		QueryStartLoc    []int64 `json:"query_start_loc"`
		QueryStartLocCPU []int64 `json:"query_start_loc_cpu"`
		MaxQueryLen      int64   `json:"max_query_len"`
		NumActualTokens  int64   `json:"num_actual_tokens"`
		Causal           bool    `json:"causal"`
		HasLogitsIndices bool    `json:"has_logits_indices"`
	} `json:"expect"`
}

func dtypeNamed(t *testing.T, name string) DType {
	switch name {
	case "int32":
		return Int32
	case "int64":
		return Int64
	}
	t.Fatalf("unknown dtype %q", name)
	return DType{}
}

// Tensors the call only copies from the input into the output.
var (
	fpQslCPU   = Int64Tensor([]int64{0, 0})
	fpSeqLens  = Int32Tensor([]int32{1})
	fpSeqCPU   = Int32Tensor([]int32{1})
	fpComputed = Int32Tensor([]int32{0})
	fpTable    = Int32Tensor([]int32{0}, 1, 1)
	fpSlots    = Int64Tensor([]int64{0})
)

func TestMakeKVSharingFastPrefillCommonAttnMetadataVectors(t *testing.T) {
	cases := loadCases[fastPrefillCase](t, "make_kv_sharing_fast_prefill_common_attn_metadata")
	passthroughs, errorsSeen := 0, 0
	for _, c := range cases {
		qt0, lt0 := dtypeNamed(t, c.DTypes[0]), dtypeNamed(t, c.DTypes[1])
		count := int64(0)
		if c.NumLogitsIndices != nil {
			count = *c.NumLogitsIndices
		}
		for _, qt := range []DType{qt0, otherIndexType(qt0)} {
			for _, lt := range []DType{lt0, otherIndexType(lt0)} {
				for _, ot := range indexTypes {
					for _, step := range []int64{1, 3} {
						for _, full := range []bool{true, false} {
							name := fmt.Sprintf("%s/%s-%s-%s/step%d/full=%v", c.Name, dtypeName(qt),
								dtypeName(lt), dtypeName(ot), step, full)
							qsl := ibufOf(qt, c.QueryStartLoc, step, 1)
							in := CommonAttnMetadata{
								QueryStartLoc: qsl.t, QueryStartLocCPU: fpQslCPU, SeqLens: fpSeqLens,
								SeqLensCPU: fpSeqCPU, NumComputedTokensCPU: fpComputed,
								BlockTableTensor: fpTable, SlotMapping: fpSlots,
								NumReqs: c.NumReqs, NumActualTokens: 1234, MaxQueryLen: c.MaxQueryLen,
								MaxSeqLen: 4321, NumLogitsIndices: count,
							}
							if c.LogitsIndicesPadded != nil {
								in.LogitsIndicesPadded = ibufOf(lt, *c.LogitsIndicesPadded, step, 2).t
							}
							b := c.NumReqs
							if b < 0 {
								b = 0
							}
							outQsl := newIBuf(ot, []int64{b + 1}, step, 0)
							outQslCPU := newIBuf(otherIndexType(ot), []int64{b + 1}, step, 1)
							maxTotal := newIBuf(ot, []int64{2}, step, 0)
							out := CommonAttnMetadata{QueryStartLoc: outQsl.t}
							args := FastPrefillMetadataArgs{Metadata: &in, Out: &out}
							if full {
								out.QueryStartLocCPU = outQslCPU.t
								args.DecodeMaxAndTotal = maxTotal.t
							}
							outBefore := out
							raw := [][]int64{outQsl.raw(), outQslCPU.raw(), maxTotal.raw()}
							passthrough, err := MakeKVSharingFastPrefillCommonAttnMetadata(args)
							rawAfter := [][]int64{outQsl.raw(), outQslCPU.raw(), maxTotal.raw()}
							if c.SeedError != nil {
								errorsSeen++
								wantError(t, err, StatusInvalidArgument, "args->metadata->")
								wantEqual(t, name+" nothing written", rawAfter, raw)
								wantMetadata(t, name+" out untouched", &out, &outBefore)
								continue
							}
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							if c.Passthrough {
								passthroughs++
								wantEqual(t, name+" passthrough", passthrough, true)
								wantMetadata(t, name+" copy of the input", &out, &in)
								wantEqual(t, name+" nothing written", rawAfter, raw)
								continue
							}
							e := &c.Expect
							wantEqual(t, name+" passthrough", passthrough, false)
							wantEqual(t, name+" query_start_loc", outQsl.values(), e.QueryStartLoc)
							if full {
								wantEqual(t, name+" query_start_loc_cpu", outQslCPU.values(),
									e.QueryStartLocCPU)
								wantEqual(t, name+" decode_max_and_total", maxTotal.values(),
									[]int64{e.MaxQueryLen, e.NumActualTokens})
							}
							want := CommonAttnMetadata{
								QueryStartLoc: outQsl.t, SeqLens: fpSeqLens, SeqLensCPU: fpSeqCPU,
								NumComputedTokensCPU: fpComputed, BlockTableTensor: fpTable,
								SlotMapping: fpSlots, NumReqs: c.NumReqs,
								NumActualTokens: e.NumActualTokens, MaxQueryLen: e.MaxQueryLen,
								MaxSeqLen: 4321}
							if full {
								want.QueryStartLocCPU = outQslCPU.t
							}
							wantMetadata(t, name+" metadata", &out, &want)
							wantEqual(t, name+" has logits indices", e.HasLogitsIndices, false)
							wantEqual(t, name+" input untouched", qsl.values(), c.QueryStartLoc)
						}
					}
				}
			}
		}
	}
	if passthroughs == 0 || errorsSeen == 0 {
		t.Fatalf("passthroughs %d, error cases %d", passthroughs, errorsSeen)
	}
}

func TestMakeKVSharingFastPrefillCommonAttnMetadataErrors(t *testing.T) {
	const fn = "cattn_make_kv_sharing_fast_prefill_common_attn_metadata"
	qsl := Int32Tensor([]int32{0, 15, 20, 28})
	logits := Int32Tensor([]int32{14, 18, 19, 27})
	in := CommonAttnMetadata{QueryStartLoc: qsl, LogitsIndicesPadded: logits, NumReqs: 3,
		MaxQueryLen: 15, NumLogitsIndices: 4}
	out := CommonAttnMetadata{QueryStartLoc: Int32Tensor(make([]int32, 4))}
	_, err := MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{Metadata: &in, Out: &out})
	mustOK(t, err)

	bad := in
	bad.NumLogitsIndices = 5
	_, err = MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{Metadata: &bad, Out: &out})
	wantError(t, err, StatusInvalidArgument, fn, "num_logits_indices")
	short := CommonAttnMetadata{QueryStartLoc: Int32Tensor(make([]int32, 3))}
	_, err = MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{Metadata: &in, Out: &short})
	wantError(t, err, StatusInsufficientSize, fn, "args->out->query_start_loc")
	// The output doubles as counting space, so it may not be the input's tensor.
	alias := CommonAttnMetadata{QueryStartLoc: qsl}
	_, err = MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{Metadata: &in, Out: &alias})
	wantError(t, err, StatusInvalidArgument, fn, "args->out->query_start_loc")
	_, err = MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{Metadata: &in})
	wantError(t, err, StatusInvalidArgument, fn, "args->out")
}

type fastPrefillUpstreamCase struct {
	Name                string  `json:"name"`
	QueryStartLoc       []int64 `json:"query_start_loc"`
	LogitsIndicesPadded []int64 `json:"logits_indices_padded"`
	MaxLogitsPerReq     int64   `json:"max_logits_per_req"`
	MaxQueryLen         int64   `json:"max_query_len"`
	Expect              struct {
		QueryStartLoc     []int64 `json:"query_start_loc"`
		MaxQueryLen       int64   `json:"max_query_len"`
		NumActualTokens   int64   `json:"num_actual_tokens"`
		KeepsUpperBound   bool    `json:"keeps_upper_bound"`
		KeepsPositions    bool    `json:"keeps_positions"`
		KeepsIsPrefilling bool    `json:"keeps_is_prefilling"`
		MaxLogitsPerReq   *int64  `json:"max_logits_per_req"`
	} `json:"expect"`
}

// The 1.1 metadata fields against the upstream oracle: a given MaxLogitsPerReq is trusted as
// MaxQueryLen, the upper bound is kept and the other newer fields take vLLM's defaults.
func TestMakeKVSharingFastPrefillCommonAttnMetadataUpstreamVectors(t *testing.T) {
	cases := loadCases[fastPrefillUpstreamCase](t,
		"make_kv_sharing_fast_prefill_common_attn_metadata_upstream")
	if len(cases) < 6 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		b := int64(len(c.QueryStartLoc)) - 1
		e := &c.Expect
		if e.MaxLogitsPerReq != nil {
			t.Fatalf("%s: upstream's output gives max_logits_per_req %d", c.Name, *e.MaxLogitsPerReq)
		}
		for _, qt := range indexTypes {
			for _, given := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/given=%v", c.Name, dtypeName(qt), given)
				upper := newIBuf(Int64, []int64{b}, 1, 0)
				positions := newIBuf(Int64, []int64{4}, 1, 0)
				in := CommonAttnMetadata{
					QueryStartLoc:        ibufOf(qt, c.QueryStartLoc, 1, 0).t,
					LogitsIndicesPadded:  ibufOf(Int64, c.LogitsIndicesPadded, 2, 1).t,
					NumLogitsIndices:     int64(len(c.LogitsIndicesPadded)),
					NumReqs:              b,
					MaxQueryLen:          c.MaxQueryLen,
					MaxSeqLen:            99,
					SeqLensCPUUpperBound: upper.t,
					Positions:            positions.t,
					IsPrefilling:         newIBuf(Int32, []int64{b}, 1, 0).t,
					CausalPerReq:         newIBuf(Int32, []int64{b}, 1, 0).t,
					DCPLocalSeqLens:      newIBuf(Int64, []int64{b}, 1, 0).t,
					DCPLocalSeqLensCPU:   newIBuf(Int64, []int64{b}, 1, 0).t,
					EncoderSeqLens:       newIBuf(Int64, []int64{b}, 1, 0).t,
					EncoderSeqLensCPU:    newIBuf(Int64, []int64{b}, 1, 0).t,
				}
				if given {
					in.MaxLogitsPerReq = c.MaxLogitsPerReq
				}
				outQsl := newIBuf(Int64, []int64{b + 1}, 1, 0)
				maxTotal := newIBuf(Int64, []int64{2}, 1, 0)
				// Positions set by the caller is replaced with vLLM's default.
				out := CommonAttnMetadata{QueryStartLoc: outQsl.t, Positions: positions.t,
					MaxLogitsPerReq: 5}
				passthrough, err := MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{
					Metadata: &in, Out: &out, DecodeMaxAndTotal: maxTotal.t})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				wantEqual(t, name+" passthrough", passthrough, false)
				dq := outQsl.values()
				wantEqual(t, name+" query_start_loc", dq, e.QueryStartLoc)
				largest := int64(0)
				for i := 0; i+1 < len(dq); i++ {
					largest = max(largest, dq[i+1]-dq[i])
				}
				// decode_max_and_total has the computed largest count, given or not.
				wantEqual(t, name+" decode_max_and_total", maxTotal.values(),
					[]int64{largest, e.NumActualTokens})
				wantMax := largest // not given: computed, as in 1.0
				if given && c.MaxLogitsPerReq > 0 {
					wantMax = e.MaxQueryLen
					wantEqual(t, name+" trusted value", c.MaxLogitsPerReq, e.MaxQueryLen)
				}
				want := CommonAttnMetadata{QueryStartLoc: outQsl.t, NumReqs: b,
					NumActualTokens: e.NumActualTokens, MaxQueryLen: wantMax, MaxSeqLen: 99}
				if e.KeepsUpperBound {
					want.SeqLensCPUUpperBound = upper.t
				}
				if e.KeepsPositions {
					want.Positions = positions.t
				}
				if e.KeepsIsPrefilling {
					want.IsPrefilling = in.IsPrefilling
				}
				wantMetadata(t, name+" metadata", &out, &want)
				wantEqual(t, name+" upper bound untouched", upper.raw(), newIBuf(Int64, []int64{b}, 1, 0).raw())
			}
		}
		// The passthrough (MaxQueryLen 1) copies every field, the newer ones included.
		in := CommonAttnMetadata{QueryStartLoc: ibufOf(Int32, c.QueryStartLoc, 1, 0).t,
			NumReqs: b, MaxQueryLen: 1, SeqLensCPUUpperBound: newIBuf(Int64, []int64{b}, 1, 0).t,
			Positions: newIBuf(Int64, []int64{4}, 1, 0).t, MaxLogitsPerReq: c.MaxLogitsPerReq}
		out := CommonAttnMetadata{QueryStartLoc: newIBuf(Int64, []int64{b + 1}, 1, 0).t}
		passthrough, err := MakeKVSharingFastPrefillCommonAttnMetadata(FastPrefillMetadataArgs{
			Metadata: &in, Out: &out})
		mustOK(t, err)
		wantEqual(t, c.Name+" passthrough", passthrough, true)
		wantMetadata(t, c.Name+" passthrough copy", &out, &in)
	}
}

// The one-call helper reads every logits index and computes max_query_len from
// query_start_loc: the vectors of that form, and the passthrough.
func TestKVSharingFastPrefillHelperVectors(t *testing.T) {
	checked := 0
	for _, c := range loadCases[fastPrefillCase](t, "make_kv_sharing_fast_prefill_common_attn_metadata") {
		if c.SeedError != nil || c.LogitsIndicesPadded == nil || c.NumLogitsIndices == nil ||
			*c.NumLogitsIndices != int64(len(*c.LogitsIndicesPadded)) ||
			c.MaxQueryLen != longestQuery(c.QueryStartLoc) ||
			c.NumReqs != numReqs(c.QueryStartLoc) {
			continue
		}
		got, err := KVSharingFastPrefillCommonAttnMetadata(c.QueryStartLoc, *c.LogitsIndicesPadded)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		checked++
		wantEqual(t, c.Name+" passthrough", got.Passthrough, c.Passthrough)
		if c.Passthrough {
			wantEqual(t, c.Name+" copy", got.QueryStartLoc, c.QueryStartLoc)
			continue
		}
		wantEqual(t, c.Name+" query_start_loc", got.QueryStartLoc, c.Expect.QueryStartLoc)
		wantEqual(t, c.Name+" counts", [2]int64{got.MaxQueryLen, got.NumActualTokens},
			[2]int64{c.Expect.MaxQueryLen, c.Expect.NumActualTokens})
	}
	if checked < 5 {
		t.Fatalf("only %d vectors of the helper's form", checked)
	}
	got, err := KVSharingFastPrefillCommonAttnMetadata([]int32{0, 3, 5, 9}, []int32{2, 4, 7, 8})
	mustOK(t, err)
	wantEqual(t, "int32", got, FastPrefillDecodeBatch[int32]{QueryStartLoc: []int32{0, 1, 2, 4},
		MaxQueryLen: 2, NumActualTokens: 4})
	_, err = KVSharingFastPrefillCommonAttnMetadata([]int32{0, 3, 5}, []int32{2, 5})
	wantError(t, err, StatusInvalidArgument, "cattn.KVSharingFastPrefillCommonAttnMetadata: logitsIndices")
}
