// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"testing"
)

type extendCase struct {
	Name            string  `json:"name"`
	N               int64   `json:"n"`
	QueryStartLoc   []int64 `json:"query_start_loc"`
	SeqLens         []int64 `json:"seq_lens"`
	NumReqs         int64   `json:"num_reqs"`
	NumActualTokens int64   `json:"num_actual_tokens"`
	MaxQueryLen     int64   `json:"max_query_len"`
	MaxSeqLen       int64   `json:"max_seq_len"`
	Expect          struct {
		QueryStartLoc    []int64 `json:"query_start_loc"`
		QueryStartLocCPU []int64 `json:"query_start_loc_cpu"`
		SeqLens          []int64 `json:"seq_lens"`
		NumActualTokens  int64   `json:"num_actual_tokens"`
		MaxQueryLen      int64   `json:"max_query_len"`
		MaxSeqLen        int64   `json:"max_seq_len"`
	} `json:"expect"`
}

// extendBatch is a batch's index tensors and the untouched extras that must be copied.
type extendBatch struct {
	qsl, qslCPU, seq, seqCPU *ibuf
	md                       CommonAttnMetadata
}

var (
	extraComputed = Int32Tensor([]int32{1, 2, 3})
	extraTable    = Int32Tensor([]int32{4, 5, 6, 7}, 2, 2)
	extraSlots    = Int64Tensor([]int64{9, 9})
)

func newExtendBatch(c *extendCase, dt DType, step int64, mirrors bool) *extendBatch {
	b := &extendBatch{
		qsl: ibufOf(dt, c.QueryStartLoc, step, 0),
		seq: ibufOf(dt, c.SeqLens, step, 1),
	}
	b.md = CommonAttnMetadata{
		QueryStartLoc: b.qsl.t, SeqLens: b.seq.t, NumComputedTokensCPU: extraComputed,
		BlockTableTensor: extraTable, SlotMapping: extraSlots,
		NumReqs: c.NumReqs, NumActualTokens: c.NumActualTokens, MaxQueryLen: c.MaxQueryLen,
		MaxSeqLen: c.MaxSeqLen}
	if mirrors {
		b.qslCPU = ibufOf(otherIndexType(dt), c.QueryStartLoc, 1, 2)
		b.seqCPU = ibufOf(otherIndexType(dt), c.SeqLens, 1, 0)
		b.md.QueryStartLocCPU, b.md.SeqLensCPU = b.qslCPU.t, b.seqCPU.t
	}
	return b
}

func extendOutputs(b int64, dt DType, step int64, mirrors bool) *extendBatch {
	o := &extendBatch{
		qsl: newIBuf(dt, []int64{b + 1}, step, 1),
		seq: newIBuf(dt, []int64{b}, step, 0),
	}
	o.md = CommonAttnMetadata{QueryStartLoc: o.qsl.t, SeqLens: o.seq.t}
	if mirrors {
		o.qslCPU = newIBuf(dt, []int64{b + 1}, 1, 0)
		o.seqCPU = newIBuf(dt, []int64{b}, 2, 0)
		o.md.QueryStartLocCPU, o.md.SeqLensCPU = o.qslCPU.t, o.seqCPU.t
	}
	return o
}

func TestExtendAllQueriesByNVectors(t *testing.T) {
	cases := loadCases[extendCase](t, "extend_all_queries_by_n")
	newSlots := Int64Tensor([]int64{7, 8, 9})
	for i := range cases {
		c := &cases[i]
		e := &c.Expect
		for _, inT := range indexTypes {
			for _, outT := range indexTypes {
				for _, step := range []int64{1, 3} {
					for _, mirrors := range []bool{true, false} {
						name := fmt.Sprintf("%s/%s-%s/step%d/mirrors=%v", c.Name,
							dtypeName(inT), dtypeName(outT), step, mirrors)
						in := newExtendBatch(c, inT, step, mirrors)
						out := extendOutputs(int64(len(c.SeqLens)), outT, step, mirrors)
						err := ExtendAllQueriesByN(ExtendAllQueriesByNArgs{
							Metadata: &in.md, N: &c.N, NewSlotMapping: newSlots, Out: &out.md})
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						wantEqual(t, name+" query_start_loc", out.qsl.values(), e.QueryStartLoc)
						wantEqual(t, name+" seq_lens", out.seq.values(), e.SeqLens)
						if mirrors {
							wantEqual(t, name+" query_start_loc_cpu", out.qslCPU.values(),
								e.QueryStartLocCPU)
							// Updated, unlike vLLM whose seq_lens_cpu keeps the old lengths.
							wantEqual(t, name+" seq_lens_cpu", out.seqCPU.values(), e.SeqLens)
						}
						md := out.md
						if md.QueryStartLoc != out.qsl.t || md.SeqLens != out.seq.t ||
							md.SlotMapping != newSlots || md.NumComputedTokensCPU != extraComputed ||
							md.BlockTableTensor != extraTable || md.LogitsIndicesPadded != nil {
							t.Fatalf("%s: tensor fields %+v", name, md)
						}
						if mirrors != (md.QueryStartLocCPU != nil) || mirrors != (md.SeqLensCPU != nil) {
							t.Fatalf("%s: mirrors %v %v", name, md.QueryStartLocCPU, md.SeqLensCPU)
						}
						wantEqual(t, name+" num_reqs", md.NumReqs, c.NumReqs)
						wantEqual(t, name+" num_actual_tokens", md.NumActualTokens, e.NumActualTokens)
						wantEqual(t, name+" max_query_len", md.MaxQueryLen, e.MaxQueryLen)
						wantEqual(t, name+" max_seq_len", md.MaxSeqLen, e.MaxSeqLen)
						wantEqual(t, name+" causal", md.NonCausal, false)
						wantEqual(t, name+" input untouched", in.qsl.values(), c.QueryStartLoc)
						wantEqual(t, name+" input untouched", in.seq.values(), c.SeqLens)
					}
				}
			}
		}
	}
}

func TestExtendAllQueriesByNInPlace(t *testing.T) {
	cases := loadCases[extendCase](t, "extend_all_queries_by_n")
	for i := range cases {
		c := &cases[i]
		for _, sameStruct := range []bool{true, false} {
			b := newExtendBatch(c, Int64, 2, true)
			out := &b.md
			if !sameStruct {
				separate := b.md // the same tensors, another struct
				out = &separate
			}
			mustOK(t, ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: &b.md, N: &c.N, Out: out}))
			wantEqual(t, c.Name+" query_start_loc", b.qsl.values(), c.Expect.QueryStartLoc)
			wantEqual(t, c.Name+" seq_lens", b.seq.values(), c.Expect.SeqLens)
			wantEqual(t, c.Name+" query_start_loc_cpu", b.qslCPU.values(), c.Expect.QueryStartLocCPU)
			wantEqual(t, c.Name+" seq_lens_cpu", b.seqCPU.values(), c.Expect.SeqLens)
			wantEqual(t, c.Name+" max_seq_len", out.MaxSeqLen, c.Expect.MaxSeqLen)
			if out.SlotMapping != nil {
				t.Fatalf("%s: slot mapping %v, want nil (no new one given)", c.Name, out.SlotMapping)
			}
		}
	}
}

func TestExtendAllQueriesByNErrors(t *testing.T) {
	const fn = "cattn_extend_all_queries_by_n"
	c := &extendCase{QueryStartLoc: []int64{0, 3, 5}, SeqLens: []int64{4, 9}, NumReqs: 2,
		NumActualTokens: 5, MaxQueryLen: 3, MaxSeqLen: 9}
	check := func(in, out *extendBatch, n int64, code Status, needles ...string) {
		t.Helper()
		before := [][]int64{out.qsl.raw(), out.seq.raw()}
		mdBefore := out.md
		err := ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: &in.md, N: &n, Out: &out.md})
		wantError(t, err, code, append([]string{fn}, needles...)...)
		wantEqual(t, "a failed call wrote nothing", [][]int64{out.qsl.raw(), out.seq.raw()}, before)
		wantMetadata(t, "a failed call left Out alone", &out.md, &mdBefore)
	}
	in, out := newExtendBatch(c, Int32, 1, false), extendOutputs(2, Int32, 1, false)
	check(in, out, -1, StatusInvalidArgument, "args->n")
	// A mirror on one side only.
	in, out = newExtendBatch(c, Int32, 1, true), extendOutputs(2, Int32, 1, false)
	check(in, out, 1, StatusInvalidArgument, "args->out->seq_lens_cpu is NULL")
	// An output shorter than its input.
	in, out = newExtendBatch(c, Int32, 1, false), extendOutputs(1, Int32, 1, false)
	check(in, out, 1, StatusInsufficientSize, "args->out->")
	// A result that does not fit int32.
	c.SeqLens = []int64{4, 1<<31 - 1}
	in, out = newExtendBatch(c, Int64, 1, false), extendOutputs(2, Int32, 1, false)
	check(in, out, 1, StatusInvalidArgument, "args->out->seq_lens")
	wantError(t, ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Out: &out.md}),
		StatusInvalidArgument, "args->metadata")
	wantError(t, ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: &in.md}),
		StatusInvalidArgument, "args->out")
}

type extendUpstreamCase struct {
	Name            string  `json:"name"`
	N               int64   `json:"n"`
	QueryStartLoc   []int64 `json:"query_start_loc"`
	SeqLens         []int64 `json:"seq_lens"`
	NumActualTokens int64   `json:"num_actual_tokens"`
	UpperBound      []int64 `json:"seq_lens_cpu_upper_bound"`
	DCPSize         int64   `json:"dcp_size"`
	DCPRank         int64   `json:"dcp_rank"`
	Interleave      int64   `json:"dcp_kv_cache_interleave_size"`
	PositionsLen    int64   `json:"positions_len"`
	Expect          struct {
		QueryStartLoc []int64 `json:"query_start_loc"`
		SeqLens       []int64 `json:"seq_lens"`
		UpperBound    []int64 `json:"seq_lens_cpu_upper_bound"`
		DCP           []int64 `json:"dcp_local_seq_lens"`
		Positions     []int64 `json:"positions"`
	} `json:"expect"`
}

// The 1.1 metadata fields against the upstream oracle: the upper bound + N as in vLLM, and the
// DCP lengths and positions that vLLM leaves stale, rewritten.
func TestExtendAllQueriesByNUpstreamVectors(t *testing.T) {
	cases := loadCases[extendUpstreamCase](t, "extend_all_queries_by_n_upstream")
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		b := int64(len(c.SeqLens))
		for _, dt := range indexTypes {
			name := c.Name + "/" + dtypeName(dt)
			md := &CommonAttnMetadata{QueryStartLoc: ibufOf(dt, c.QueryStartLoc, 1, 0).t,
				SeqLens: ibufOf(dt, c.SeqLens, 2, 1).t, SeqLensCPUUpperBound: ibufOf(dt, c.UpperBound, 1, 0).t,
				DCPLocalSeqLens: newIBuf(dt, []int64{b}, 1, 0).t, NumActualTokens: c.NumActualTokens}
			oq, os := newIBuf(dt, []int64{b + 1}, 1, 0), newIBuf(dt, []int64{b}, 1, 0)
			ou, od := newIBuf(dt, []int64{b}, 2, 0), newIBuf(dt, []int64{b}, 1, 0)
			pos := newIBuf(Int64, []int64{c.PositionsLen}, 1, 0)
			out := &CommonAttnMetadata{QueryStartLoc: oq.t, SeqLens: os.t,
				SeqLensCPUUpperBound: ou.t, DCPLocalSeqLens: od.t, Positions: pos.t}
			err := ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: md, N: &c.N, Out: out,
				DCPSize: c.DCPSize, DCPRank: c.DCPRank, DCPInterleaveSize: c.Interleave})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantEqual(t, name+" qsl", oq.values(), c.Expect.QueryStartLoc)
			wantEqual(t, name+" seq", os.values(), c.Expect.SeqLens)
			wantEqual(t, name+" upper", ou.values(), c.Expect.UpperBound)
			wantEqual(t, name+" dcp", od.values(), c.Expect.DCP)
			wantEqual(t, name+" positions", pos.values(), c.Expect.Positions)
			if out.Positions != pos.t || out.DCPLocalSeqLens != od.t {
				t.Fatalf("%s: out's tensors were not kept", name)
			}
		}
		// Without the DCP group the lengths cannot be extended: a status, nothing written.
		md := &CommonAttnMetadata{QueryStartLoc: ibufOf(Int64, c.QueryStartLoc, 1, 0).t,
			SeqLens: ibufOf(Int64, c.SeqLens, 1, 0).t, DCPLocalSeqLens: newIBuf(Int64, []int64{b}, 1, 0).t}
		od := newIBuf(Int64, []int64{b}, 1, 0)
		out := &CommonAttnMetadata{QueryStartLoc: newIBuf(Int64, []int64{b + 1}, 1, 0).t,
			SeqLens: newIBuf(Int64, []int64{b}, 1, 0).t, DCPLocalSeqLens: od.t}
		err := ExtendAllQueriesByN(ExtendAllQueriesByNArgs{Metadata: md, N: &c.N, Out: out})
		wantError(t, err, StatusInvalidArgument, "args->dcp_size is not given")
	}
}

func TestExtendAllQueriesByNOfVectors(t *testing.T) {
	for _, c := range loadCases[extendCase](t, "extend_all_queries_by_n") {
		qsl, seq, err := ExtendAllQueriesByNOf(c.QueryStartLoc, c.SeqLens, c.N)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		wantEqual(t, c.Name+" query_start_loc", qsl, c.Expect.QueryStartLoc)
		wantEqual(t, c.Name+" seq_lens", seq, c.Expect.SeqLens)
	}
	in := []int32{0, 2, 5}
	qsl, seq, err := ExtendAllQueriesByNOf(in, []int32{4, 6}, 2)
	mustOK(t, err)
	wantEqual(t, "int32", [3][]int32{in, qsl, seq}, [3][]int32{{0, 2, 5}, {0, 4, 9}, {6, 8}})
	_, _, err = ExtendAllQueriesByNOf(in, []int32{4, 6}, -1)
	wantError(t, err, StatusInvalidArgument, "cattn.ExtendAllQueriesByNOf: n is negative")
}
