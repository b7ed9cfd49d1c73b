// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"fmt"
	"reflect"
	"testing"
)

type localAttentionCase struct {
	Name            string    `json:"name"`
	AttnChunkSize   int64     `json:"attn_chunk_size"`
	BlockSize       int64     `json:"block_size"`
	QueryStartLoc   []int64   `json:"query_start_loc"`
	SeqLens         []int64   `json:"seq_lens"`
	BlockTable      [][]int64 `json:"block_table"`
	NumActualTokens int64     `json:"num_actual_tokens"`
	Expect          struct {
		NumReqs           int64     `json:"num_reqs"`
		Pages             int64     `json:"pages"`
		QueryStartLoc     []int64   `json:"query_start_loc"`
		SeqLens           []int64   `json:"seq_lens"`
		NumComputedTokens []int64   `json:"num_computed_tokens"`
		BlockTable        [][]int64 `json:"block_table"`
		MaxQueryLen       int64     `json:"max_query_len"`
		MaxSeqLen         int64     `json:"max_seq_len"`
		NumActualTokens   int64     `json:"num_actual_tokens"`
	} `json:"expect"`
	SeedBlockTable      [][]int64 `json:"seed_block_table"`
	DiffersFromSeedRows []int64   `json:"differs_from_seed_rows"`
}

var laSlots = Int64Tensor([]int64{1, 2, 3})

func localAttentionBatch(c *localAttentionCase, qt, tt DType, step int64) (CommonAttnMetadata, *ibuf) {
	table := ibuf2D(tt, c.BlockTable, step)
	return CommonAttnMetadata{
		QueryStartLocCPU: ibufOf(qt, c.QueryStartLoc, step, 1).t,
		SeqLensCPU:       ibufOf(qt, c.SeqLens, step, 0).t,
		BlockTableTensor: table.t,
		SlotMapping:      laSlots,
		// Must not survive into the virtual batches.
		LogitsIndicesPadded: laSlots,
		NumLogitsIndices:    3,
		NumReqs:             int64(len(c.SeqLens)),
		NumActualTokens:     c.NumActualTokens,
	}, table
}

func TestMakeLocalAttentionVirtualBatchesVectors(t *testing.T) {
	cases := loadCases[localAttentionCase](t, "make_local_attention_virtual_batches")
	differing := 0
	for i := range cases {
		c := &cases[i]
		e := &c.Expect
		v, p := e.NumReqs, e.Pages
		if c.SeedBlockTable != nil {
			// The vectors themselves: libcattn differs from the seed exactly on the listed rows.
			differing++
			rows := []int64{}
			for r := range c.SeedBlockTable {
				if !reflect.DeepEqual(c.SeedBlockTable[r], e.BlockTable[r]) {
					rows = append(rows, int64(r))
				}
			}
			wantEqual(t, c.Name+" rows differing from the seed", rows, c.DiffersFromSeedRows)
		}
		for _, qt := range indexTypes {
			for _, tt := range indexTypes {
				for _, step := range []int64{1, 2} {
					name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(qt), dtypeName(tt), step)
					in, table := localAttentionBatch(c, qt, tt, step)
					plan, err := MakeLocalAttentionVirtualBatches(c.AttnChunkSize, c.BlockSize, &in)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					gotV, gotP, err := plan.Shape()
					mustOK(t, err)
					wantEqual(t, name+" shape", [2]int64{gotV, gotP}, [2]int64{v, p})

					ot := otherIndexType(qt)
					qslCPU := newIBuf(ot, []int64{v + 1}, step, 0)
					qsl := newIBuf(ot, []int64{v + 1}, 1, 1)
					seqCPU := newIBuf(ot, []int64{v}, step, 0)
					seq := newIBuf(ot, []int64{v}, step, 2)
					computed := newIBuf(ot, []int64{v}, step, 0)
					gathered := newIBuf(tt, []int64{v, p}, step, 1)
					out := CommonAttnMetadata{
						QueryStartLocCPU: qslCPU.t, QueryStartLoc: qsl.t, SeqLensCPU: seqCPU.t,
						SeqLens: seq.t, NumComputedTokensCPU: computed.t, BlockTableTensor: gathered.t,
					}
					if err := plan.Fill(&in, &out, 0); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					wantEqual(t, name+" query_start_loc_cpu", qslCPU.values(), e.QueryStartLoc)
					wantEqual(t, name+" query_start_loc", qsl.values(), e.QueryStartLoc)
					wantEqual(t, name+" seq_lens_cpu", seqCPU.values(), e.SeqLens)
					wantEqual(t, name+" seq_lens", seq.values(), e.SeqLens)
					wantEqual(t, name+" num_computed_tokens_cpu", computed.values(), e.NumComputedTokens)
					wantEqual(t, name+" block_table", gathered.values(), flatten(e.BlockTable))
					wantMetadata(t, name+" metadata", &out, &CommonAttnMetadata{
						QueryStartLocCPU: qslCPU.t, QueryStartLoc: qsl.t, SeqLensCPU: seqCPU.t,
						SeqLens: seq.t, NumComputedTokensCPU: computed.t,
						BlockTableTensor: gathered.t, SlotMapping: laSlots,
						NumReqs: v, NumActualTokens: e.NumActualTokens, MaxQueryLen: e.MaxQueryLen,
						MaxSeqLen: e.MaxSeqLen})

					// The closure on its own gives the same table.
					again := newIBuf(tt, []int64{v, p}, 3-step, 0)
					mustOK(t, plan.MakeBlockTable(table.t, again.t, 0))
					wantEqual(t, name+" make_block_table", again.values(), flatten(e.BlockTable))
					mustOK(t, plan.Close())
					mustOK(t, plan.Close())
				}
			}
		}
	}
	if differing < 2 {
		t.Fatalf("only %d cases differ from the seed", differing)
	}
}

func TestMakeLocalAttentionVirtualBatchesErrors(t *testing.T) {
	const fn = "cattn_make_local_attention_virtual_batches"
	c := &localAttentionCase{AttnChunkSize: 4, BlockSize: 2, QueryStartLoc: []int64{0, 4, 14},
		SeqLens: []int64{6, 17}, BlockTable: [][]int64{{0, 1, 2}, {3, 4, 5}}, NumActualTokens: 14}
	in, _ := localAttentionBatch(c, Int32, Int32, 1)
	_, err := MakeLocalAttentionVirtualBatches(0, 2, &in)
	wantError(t, err, StatusInvalidArgument, fn, "attn_chunk_size")
	_, err = MakeLocalAttentionVirtualBatches(4, 3, &in)
	wantError(t, err, StatusInvalidArgument, fn, "block_size")
	noMirror := in
	noMirror.SeqLensCPU = nil
	_, err = MakeLocalAttentionVirtualBatches(4, 2, &noMirror)
	wantError(t, err, StatusInvalidArgument, fn, "args->metadata->seq_lens_cpu")
	short := in
	short.SeqLensCPU = Int32Tensor([]int32{6, 3})
	_, err = MakeLocalAttentionVirtualBatches(4, 2, &short)
	wantError(t, err, StatusInvalidArgument, fn, "seq_len")
	empty := in
	empty.QueryStartLocCPU, empty.SeqLensCPU = Int32Tensor([]int32{0}), Int32Tensor(nil)
	empty.BlockTableTensor = Int32Tensor(nil, 0, 3)
	empty.NumReqs = 0
	_, err = MakeLocalAttentionVirtualBatches(4, 2, &empty)
	wantError(t, err, StatusInvalidArgument, fn)
	_, err = MakeLocalAttentionVirtualBatches(4, 2, nil)
	wantError(t, err, StatusInvalidArgument, fn, "args->metadata")

	plan, err := MakeLocalAttentionVirtualBatches(4, 2, &in)
	mustOK(t, err)
	v, p, err := plan.Shape()
	mustOK(t, err)
	small := newIBuf(Int32, []int64{v, p - 1}, 1, 0)
	before := small.raw()
	wantError(t, plan.MakeBlockTable(in.BlockTableTensor, small.t, 0), StatusInsufficientSize,
		"cattn_local_attention_plan_make_block_table", "out")
	wantEqual(t, "nothing written", small.raw(), before)
	out := CommonAttnMetadata{}
	wantError(t, plan.Fill(&in, &out, 0), StatusInvalidArgument, "cattn_local_attention_plan_fill")
	wantMetadata(t, "out untouched", &out, &CommonAttnMetadata{})

	mustOK(t, plan.Close())
	_, _, err = plan.Shape()
	wantError(t, err, StatusInvalidArgument, "cattn_local_attention_plan_get_shape", "plan is closed")
	wantError(t, plan.Fill(&in, &out, 0), StatusInvalidArgument, "plan is closed")
	wantError(t, plan.MakeBlockTable(in.BlockTableTensor, small.t, 0), StatusInvalidArgument,
		"plan is closed")
	var none *LocalAttentionPlan
	mustOK(t, none.Close())
	_, _, err = none.Shape()
	wantError(t, err, StatusInvalidArgument, "plan is NULL")
}

// The device call is for device tensors only; its host checks run without a GPU.
func TestMakeLocalAttentionVirtualBatchesCapturableErrors(t *testing.T) {
	const fn = "cattn_make_local_attention_virtual_batches_capturable"
	// Host tensors are refused (the host has MakeLocalAttentionVirtualBatches), writing nothing.
	outs := []*ibuf{newIBuf(Int32, []int64{9}, 1, 0), newIBuf(Int32, []int64{8}, 1, 0),
		newIBuf(Int64, []int64{8}, 2, 1), newIBuf(Int32, []int64{8, 2}, 1, 0),
		newIBuf(Int32, []int64{3}, 1, 0)}
	args := LocalAttentionCapturableArgs{AttnChunkSize: 4, BlockSize: 2,
		QueryStartLoc: Int32Tensor([]int32{0, 4, 14}), SeqLens: Int32Tensor([]int32{6, 17}),
		BlockTable:       Int32Tensor([]int32{0, 1, 2, 3, 4, 5}, 2, 3),
		QueryStartLocOut: outs[0].t, SeqLensOut: outs[1].t, NumComputedTokensOut: outs[2].t,
		BlockTableOut: outs[3].t, Counts: outs[4].t}
	var before [][]int64
	for _, b := range outs {
		before = append(before, b.raw())
	}
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(args), StatusInvalidArgument, fn,
		"args->query_start_loc is not device memory")
	for i, b := range outs {
		wantEqual(t, "a failed call wrote nothing", b.raw(), before[i])
	}
	bad := args
	bad.AttnChunkSize = 0
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->attn_chunk_size")
	bad = args
	bad.BlockSize = 3
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->block_size")
	bad = args
	bad.SeqLens = nil
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->seq_lens")
	bad = args
	bad.QueryStartLocOut = nil
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->query_start_loc_out")
	bad = args
	bad.BlockTableOut = Int32Tensor(make([]int32, 8*3), 8, 3) // C / block_size = 2 columns
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->block_table_out")
	bad = args
	bad.NumComputedTokensOut = Int32Tensor(make([]int32, 7)) // not the capacity
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(bad), StatusInvalidArgument, fn,
		"args->num_computed_tokens_out")
}

// Valid CUDA tensors reach the device path, which a CPU-only libcattn (or a machine without a
// usable GPU) refuses after every other check.
func TestMakeLocalAttentionVirtualBatchesCapturableNotSupported(t *testing.T) {
	skipWithGPU(t)
	const fn = "cattn_make_local_attention_virtual_batches_capturable"
	var dev fakeDevice
	args := LocalAttentionCapturableArgs{AttnChunkSize: 4, BlockSize: 2,
		QueryStartLoc: dev.tensor(Int32, 3), SeqLens: dev.tensor(Int32, 2),
		BlockTable: dev.tensor(Int64, 2, 3), QueryStartLocOut: dev.tensor(Int32, 9),
		SeqLensOut: dev.tensor(Int32, 8), NumComputedTokensOut: dev.tensor(Int64, 8),
		BlockTableOut: dev.tensor(Int64, 8, 2), Counts: dev.tensor(Int32, 3), Stream: Stream(0x1234)}
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(args), StatusNotSupported, fn)
	// The last three outputs are optional.
	required := args
	required.NumComputedTokensOut, required.BlockTableOut, required.Counts = nil, nil, nil
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(required), StatusNotSupported, fn)
	mixed := args
	mixed.Counts = Int32Tensor(make([]int32, 3))
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(mixed), StatusInvalidArgument, fn,
		"args->counts is on a different device")
	dtype := args
	dtype.BlockTableOut = dev.tensor(Int32, 8, 2) // must be the block table's dtype
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(dtype), StatusInvalidArgument, fn,
		"args->block_table_out")
	overlap := args
	overlap.SeqLensOut = UnsafeDeviceTensor(args.QueryStartLoc.addr, CUDA(0), Int32, 8)
	wantError(t, MakeLocalAttentionVirtualBatchesCapturable(overlap), StatusInvalidArgument, fn,
		"args->seq_lens_out overlaps an input", "args->query_start_loc")
}

type localAttentionUpstreamCase struct {
	Name          string  `json:"name"`
	AttnChunkSize int64   `json:"attn_chunk_size"`
	BlockSize     int64   `json:"block_size"`
	QueryStartLoc []int64 `json:"query_start_loc"`
	SeqLens       []int64 `json:"seq_lens"`
	Cols          int64   `json:"cols"`
	Expect        struct {
		UpperBound []int64 `json:"seq_lens_cpu_upper_bound"`
		NumReqs    int64   `json:"num_reqs"`
	} `json:"expect"`
	Upstream struct {
		UpperBound []int64 `json:"seq_lens_cpu_upper_bound"`
	} `json:"upstream"`
}

// The 1.1 metadata upper bound against the upstream oracle: Fill writes the virtual batches'
// key lengths into a caller's [V] SeqLensCPUUpperBound, where vLLM copies the [B] input.
func TestLocalAttentionPlanFillUpstreamVectors(t *testing.T) {
	cases := loadCases[localAttentionUpstreamCase](t, "make_local_attention_virtual_batches_upstream")
	if len(cases) < 6 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		b := int64(len(c.SeqLens))
		// Upstream's is the input's [B] tensor, mis-shaped for the virtual batches.
		wantEqual(t, c.Name+" upstream's length", int64(len(c.Upstream.UpperBound)), b)
		for _, qt := range indexTypes {
			in := CommonAttnMetadata{
				QueryStartLocCPU:     ibufOf(qt, c.QueryStartLoc, 1, 0).t,
				SeqLensCPU:           ibufOf(qt, c.SeqLens, 1, 0).t,
				BlockTableTensor:     newIBuf(Int32, []int64{b, c.Cols}, 1, 0).t,
				SeqLensCPUUpperBound: ibufOf(qt, c.Upstream.UpperBound, 1, 0).t,
				NumReqs:              b,
				NumActualTokens:      c.QueryStartLoc[len(c.QueryStartLoc)-1],
			}
			plan, err := MakeLocalAttentionVirtualBatches(c.AttnChunkSize, c.BlockSize, &in)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			v, p, err := plan.Shape()
			mustOK(t, err)
			wantEqual(t, c.Name+" virtual batches", v, c.Expect.NumReqs)
			wantEqual(t, c.Name+" upper bound length", v, int64(len(c.Expect.UpperBound)))
			for _, ut := range indexTypes {
				for _, step := range []int64{1, 3} {
					name := fmt.Sprintf("%s/%s-%s/step%d", c.Name, dtypeName(qt), dtypeName(ut), step)
					oq, os := newIBuf(Int64, []int64{v + 1}, 1, 0), newIBuf(Int64, []int64{v}, 1, 0)
					oc, ot := newIBuf(Int64, []int64{v}, 1, 0), newIBuf(Int32, []int64{v, p}, 1, 0)
					upper := newIBuf(ut, []int64{v}, step, 1)
					positions := newIBuf(Int64, []int64{3}, 1, 0)
					out := CommonAttnMetadata{QueryStartLocCPU: oq.t, SeqLensCPU: os.t,
						NumComputedTokensCPU: oc.t, BlockTableTensor: ot.t,
						SeqLensCPUUpperBound: upper.t, Positions: positions.t, MaxLogitsPerReq: 7}
					if err := plan.Fill(&in, &out, 0); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					wantEqual(t, name+" upper bound", upper.values(), c.Expect.UpperBound)
					wantEqual(t, name+" seq_lens_cpu", os.values(), c.Expect.UpperBound)
					if out.SeqLensCPUUpperBound != upper.t || out.Positions != positions.t ||
						out.MaxLogitsPerReq != 7 {
						t.Fatalf("%s: out's 1.1 fields were not kept", name)
					}

					// A wrongly sized upper bound is refused before anything is written.
					wrongLen := b
					if b == v {
						wrongLen = v + 1
					}
					wrong := newIBuf(ut, []int64{wrongLen}, step, 0)
					wrongBefore, seqBefore := wrong.raw(), os.raw()
					out.SeqLensCPUUpperBound = wrong.t
					outBefore := out
					code := StatusInvalidArgument // longer than V
					if wrongLen < v {
						code = StatusInsufficientSize
					}
					wantError(t, plan.Fill(&in, &out, 0), code, "cattn_local_attention_plan_fill",
						"args->out->seq_lens_cpu_upper_bound")
					wantEqual(t, name+" wrong upper bound untouched", wrong.raw(), wrongBefore)
					wantEqual(t, name+" seq_lens_cpu untouched", os.raw(), seqBefore)
					wantMetadata(t, name+" out untouched", &out, &outBefore)
				}
			}
			// Nil stays nil, whatever the input has (zero values: not given).
			out := CommonAttnMetadata{QueryStartLocCPU: newIBuf(Int64, []int64{v + 1}, 1, 0).t,
				SeqLensCPU:           newIBuf(Int64, []int64{v}, 1, 0).t,
				NumComputedTokensCPU: newIBuf(Int64, []int64{v}, 1, 0).t,
				BlockTableTensor:     newIBuf(Int32, []int64{v, p}, 1, 0).t}
			mustOK(t, plan.Fill(&in, &out, 0))
			if out.SeqLensCPUUpperBound != nil || out.MaxLogitsPerReq != 0 {
				t.Fatalf("%s: out's upper bound %p, max_logits_per_req %d", c.Name,
					out.SeqLensCPUUpperBound, out.MaxLogitsPerReq)
			}
			mustOK(t, plan.Close())
		}
	}
}

// The size query reports what the plan holds, for every vector; MaxVirtualBatches caps the
// plan, the size query refusing exactly what the create call refuses.
func TestMakeLocalAttentionVirtualBatchesSizeAndCap(t *testing.T) {
	cases := loadCases[localAttentionCase](t, "make_local_attention_virtual_batches")
	for i := range cases {
		c := &cases[i]
		md, _ := localAttentionBatch(c, Int64, Int32, 1)
		args := LocalAttentionArgs{AttnChunkSize: c.AttnChunkSize, BlockSize: c.BlockSize,
			Metadata: &md}
		size, err := MakeLocalAttentionVirtualBatchesSize(args)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		wantEqual(t, c.Name+" size", [2]int64{size.VirtualBatches, size.Pages},
			[2]int64{c.Expect.NumReqs, c.Expect.Pages})
		if size.PlanBytes < uint64(40*size.VirtualBatches) {
			t.Fatalf("%s: %d plan bytes for %d virtual batches", c.Name, size.PlanBytes,
				size.VirtualBatches)
		}

		args.MaxVirtualBatches = size.VirtualBatches // exactly enough
		plan, err := NewLocalAttentionPlan(args)
		mustOK(t, err)
		v, p, err := plan.Shape()
		mustOK(t, err)
		wantEqual(t, c.Name+" capped plan", [2]int64{v, p}, [2]int64{size.VirtualBatches, size.Pages})
		mustOK(t, plan.Close())

		if size.VirtualBatches < 2 {
			continue // one short would be 0, the default
		}
		args.MaxVirtualBatches = size.VirtualBatches - 1 // one short
		_, err = MakeLocalAttentionVirtualBatchesSize(args)
		wantError(t, err, StatusInvalidArgument, "cattn.MakeLocalAttentionVirtualBatchesSize: ",
			"args->max_virtual_batches")
		plan, err = NewLocalAttentionPlan(args)
		wantError(t, err, StatusInvalidArgument, "cattn.NewLocalAttentionPlan: args.MaxVirtualBatches")
		if plan != nil {
			t.Fatalf("%s: a refused plan was returned", c.Name)
		}
	}
	_, err := MakeLocalAttentionVirtualBatchesSize(LocalAttentionArgs{AttnChunkSize: 8,
		BlockSize: 3, Metadata: &CommonAttnMetadata{}})
	wantError(t, err, StatusInvalidArgument, "args.BlockSize")
}

func TestLocalAttentionVirtualBatchesHelperVectors(t *testing.T) {
	for _, c := range loadCases[localAttentionCase](t, "make_local_attention_virtual_batches") {
		got, err := LocalAttentionVirtualBatches(c.AttnChunkSize, c.BlockSize, c.QueryStartLoc,
			c.SeqLens, c.BlockTable)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		e := &c.Expect
		wantEqual(t, c.Name+" query_start_loc", got.QueryStartLoc, e.QueryStartLoc)
		wantEqual(t, c.Name+" seq_lens", got.SeqLens, e.SeqLens)
		wantEqual(t, c.Name+" num_computed_tokens", got.NumComputedTokens, e.NumComputedTokens)
		wantEqual(t, c.Name+" block_table", flatten(rowsInt64(got.BlockTable)), flatten(e.BlockTable))
		wantEqual(t, c.Name+" pages", int64(len(got.BlockTable[0])), e.Pages)
		wantEqual(t, c.Name+" scalars", [2]int64{got.MaxQueryLen, got.MaxSeqLen},
			[2]int64{e.MaxQueryLen, e.MaxSeqLen})
		got32, err := LocalAttentionVirtualBatches(c.AttnChunkSize, c.BlockSize,
			asIndex[int32](c.QueryStartLoc), asIndex[int32](c.SeqLens), asRows[int32](c.BlockTable))
		mustOK(t, err)
		wantEqual(t, c.Name+" int32 seq_lens", asInt64(got32.SeqLens), e.SeqLens)
	}
	_, err := LocalAttentionVirtualBatches(8, 2, []int64{0, 2, 4}, []int64{2, 4},
		[][]int64{{1, 2}, {3}})
	wantError(t, err, StatusInvalidArgument,
		"cattn.LocalAttentionVirtualBatches: blockTable has rows of different lengths (got row 1 of 1")
	_, err = LocalAttentionVirtualBatches(8, 3, []int64{0, 2}, []int64{2}, [][]int64{{1}})
	wantError(t, err, StatusInvalidArgument, "cattn.LocalAttentionVirtualBatches: blockSize ")
	_, err = LocalAttentionVirtualBatches(8, 2, []int64{0, 4}, []int64{2}, [][]int64{{1}})
	wantError(t, err, StatusInvalidArgument, "cattn.LocalAttentionVirtualBatches: ", "seqLens")
}
