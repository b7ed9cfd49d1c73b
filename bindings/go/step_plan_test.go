// SPDX-License-Identifier: Apache-2.0

package cattn

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// --- Fake device tensors ----------------------------------------------------------------------

// skipWithGPU skips a test that passes fake device addresses: with a usable GPU a call that
// passes its checks would enqueue work on them. Without one (the CPU-only test build) libcattn
// refuses them after its checks, never touching them.
func skipWithGPU(t *testing.T) {
	t.Helper()
	if n, err := CUDADeviceCount(); err != nil || n > 0 {
		t.Skipf("a GPU is visible (%d): fake device addresses would be dereferenced", n)
	}
}

// fakeDevice hands out CUDA-labelled views of fake addresses, each 16 MiB apart (aligned, and
// disjoint for every view these tests make, so overlap checks pass).
type fakeDevice struct{ next uintptr }

func (d *fakeDevice) tensor(dt DType, shape ...int64) *Tensor {
	if d.next == 0 {
		d.next = 1 << 32
	}
	t := UnsafeDeviceTensor(d.next, CUDA(0), dt, shape...)
	d.next += 1 << 24
	return t
}

// --- Descs and shapes -------------------------------------------------------------------------

// stepDesc is a desc of the given products with small capacities and valid parameters.
func stepDesc(products StepProduct) StepPlanDesc {
	d := DefaultStepPlanDesc()
	d.Products = products
	d.MaxNumReqs, d.MaxNumTokens, d.MaxNumBlocksPerReq, d.MaxNumLogits = 4, 64, 8, 16
	d.DCP = StepDCPParams{DCPSize: 2, InterleaveSize: 4}
	d.Mamba = StepMambaParams{BlockSize: 16, NumSpeculativeBlocks: 1, Mode: MambaCacheModeAlign}
	d.LocalAttention = StepLocalAttentionParams{AttnChunkSize: 8, BlockSize: 2}
	return d
}

func TestStepPlanDescDefaultsMatchTheHeader(t *testing.T) {
	wantEqual(t, "DefaultStepPlanDesc = CATTN_STEP_PLAN_DESC_INIT", DefaultStepPlanDesc(),
		stepPlanDescInit())
	wantEqual(t, "DefaultStepPlanDesc", DefaultStepPlanDesc(), StepPlanDesc{
		DCP:    StepDCPParams{DCPSize: 1, Ranks: AllDCPRanks, InterleaveSize: 1},
		Mamba:  StepMambaParams{BlockSize: 1, NumSpeculativeBlocks: 0, Mode: MambaCacheModeNone},
		Conv1d: StepConv1dParams{BlockM: 8},
		Extend: StepExtendParams{N: Ptr[int64](1)},
		Inputs: StepInputsParams{DCPSize: 1, InterleaveSize: 1,
			NumNewSampledTokens: Ptr[int64](1), DecodeThreshold: Ptr[int64](1)},
		Draft: StepDraftParams{NumPaddingSlotsPerRequest: 1},
	})
}

// The zero parameters are the header's defaults: a plan of every product from a desc that sets
// only the capacities and local attention (which has no default) has the default plan's shape,
// and the zero values reach C as CATTN_STEP_PLAN_DESC_INIT's.
func TestStepPlanDescZeroValueIsTheDefault(t *testing.T) {
	zero := StepPlanDesc{Products: StepAllProducts, MaxNumReqs: 4, MaxNumTokens: 64,
		MaxNumBlocksPerReq: 8, MaxNumLogits: 16,
		LocalAttention: StepLocalAttentionParams{AttnChunkSize: 8, BlockSize: 2}}
	def := DefaultStepPlanDesc()
	def.Products, def.LocalAttention = zero.Products, zero.LocalAttention
	def.MaxNumReqs, def.MaxNumTokens, def.MaxNumBlocksPerReq, def.MaxNumLogits = 4, 64, 8, 16
	shapes := make([]StepPlanShape, 2)
	for i, d := range []StepPlanDesc{zero, def} {
		plan, err := NewStepPlan(d)
		mustOK(t, err)
		shapes[i], err = plan.Shape()
		mustOK(t, err)
		mustOK(t, plan.Close())
	}
	wantEqual(t, "zero desc shape", shapes[0], shapes[1])
	wantEqual(t, "conv1d capacity uses BlockM 8", shapes[0].Conv1dCapacity, cdiv(64, 8)+4)
	wantEqual(t, "mamba columns (mode None)", shapes[0].MambaColumns, int64(0))
}

func TestStepConstantsMatchTheHeader(t *testing.T) {
	products, counts, checks := cStepConstants()
	wantEqual(t, "CATTN_STEP_* products", products, [22]uint32{
		uint32(StepDCPLocalSeqLens), uint32(StepPCPQueryRestoreIdx), uint32(StepMambaBlockTable),
		uint32(StepCausalConv1dMetadata), uint32(StepLocalAttention), uint32(StepFastPrefill),
		uint32(StepExtendQueries), uint32(StepInputs), uint32(StepBlockTables),
		uint32(StepSlotMappings), uint32(StepLogitsIndices), uint32(StepTokenToReq),
		uint32(StepSplit), uint32(StepAllProducts), uint32(StepInputProducts),
		uint32(StepDraftNextToken), uint32(StepDraftPrepareInputs), uint32(StepDraftExpand),
		uint32(StepDraftSlotMapping), uint32(StepDraftStep), uint32(StepBatchChange),
		uint32(StepDraftProducts)})
	wantEqual(t, "CATTN_STEP_COUNT_* indices", counts, [19]int32{StepCountTokens,
		StepCountRestoreSize, StepCountConv1dPrograms, StepCountLocalVirtualBatches,
		StepCountLocalMaxQueryLen, StepCountLocalMaxSeqLen, StepCountDecodeMaxQueryLen,
		StepCountDecodeTokens, StepCountNumReqs, StepCountNumLogits, StepCountMaxQueryLen,
		StepCountMaxSeqLen, StepCountSplitDecodes, StepCountSplitPrefills,
		StepCountSplitDecodeTokens, StepCountSplitPrefillTokens, StepNumCounts, StepNumCounts1_1,
		MaxKVGroups})
	wantEqual(t, "CATTN_STEP_CHECK_*, contracts and slot modes", checks, [10]int32{
		int32(StepCheckOK), int32(StepCheckNumReqs), int32(StepCheckQueryStartLoc),
		int32(StepCheckSeqLens), int32(StepCheckBlockTable), int32(StepCheckSlotMapping),
		int32(SlotMappingMRV2), int32(SlotMappingV1), int32(SlotModeTokenToKVSlot),
		int32(SlotModeNone)})
	var all, inputs, draft StepProduct
	for _, p := range products[:7] {
		all |= StepProduct(p)
	}
	for _, p := range products[7:13] {
		inputs |= StepProduct(p)
	}
	for _, p := range products[15:21] {
		draft |= StepProduct(p)
	}
	wantEqual(t, "StepAllProducts is the 1.1 bits", all, StepAllProducts)
	wantEqual(t, "StepInputProducts is the 1.2 bits", inputs, StepInputProducts)
	wantEqual(t, "StepDraftProducts is the drafter bits", draft, StepDraftProducts)
}

func TestStepPlanDescErrors(t *testing.T) {
	const fn = "cattn_step_plan_create"
	cases := []struct {
		name    string
		edit    func(d *StepPlanDesc)
		needles []string
	}{
		{"no product", func(d *StepPlanDesc) { d.Products = 0 }, []string{"desc->products"}},
		{"unknown bit", func(d *StepPlanDesc) { d.Products = StepAllProducts | 1<<19 },
			[]string{"desc->products", "got 0x8007f"}},
		{"max_num_reqs", func(d *StepPlanDesc) { d.MaxNumReqs = 0 },
			[]string{"desc->max_num_reqs", "got 0"}},
		{"max_num_tokens", func(d *StepPlanDesc) { d.MaxNumTokens = -1 },
			[]string{"desc->max_num_tokens", "got -1"}},
		{"max_num_blocks_per_req", func(d *StepPlanDesc) { d.MaxNumBlocksPerReq = 0 },
			[]string{"desc->max_num_blocks_per_req"}},
		{"max_num_logits", func(d *StepPlanDesc) { d.MaxNumLogits = -1 },
			[]string{"desc->max_num_logits"}},
		{"max_num_reqs overflows", func(d *StepPlanDesc) { d.MaxNumReqs = math.MaxInt64 },
			[]string{"desc->max_num_reqs"}},
		{"dcp_size", func(d *StepPlanDesc) { d.DCP.DCPSize = -1 },
			[]string{"desc->dcp.dcp_size", "got -1"}},
		{"dcp_rank", func(d *StepPlanDesc) { d.DCP.Ranks = DCPRank(2) },
			[]string{"desc->dcp.dcp_rank", "got 2"}},
		{"interleave", func(d *StepPlanDesc) { d.DCP.InterleaveSize = -1 },
			[]string{"desc->dcp.dcp_kv_cache_interleave_size"}},
		{"interleave times size", func(d *StepPlanDesc) { d.DCP.InterleaveSize = 1 << 30 },
			[]string{"desc->dcp.dcp_kv_cache_interleave_size", "INT32_MAX"}},
		{"mamba mode", func(d *StepPlanDesc) { d.Mamba.Mode = 3 },
			[]string{"desc->mamba.mamba_cache_mode", "got 3"}},
		{"mamba block_size", func(d *StepPlanDesc) { d.Mamba.BlockSize = -1 },
			[]string{"desc->mamba.block_size"}},
		{"mamba num_speculative_blocks", func(d *StepPlanDesc) { d.Mamba.NumSpeculativeBlocks = -1 },
			[]string{"desc->mamba.num_speculative_blocks"}},
		{"block_m", func(d *StepPlanDesc) { d.Conv1d.BlockM = -1 },
			[]string{"desc->conv1d.block_m", "got -1"}},
		{"attn_chunk_size", func(d *StepPlanDesc) { d.LocalAttention.AttnChunkSize = 0 },
			[]string{"desc->local_attention.attn_chunk_size"}},
		{"local block_size", func(d *StepPlanDesc) { d.LocalAttention.BlockSize = 0 },
			[]string{"desc->local_attention.block_size"}},
		{"local block_size divides", func(d *StepPlanDesc) { d.LocalAttention.BlockSize = 3 },
			[]string{"desc->local_attention.block_size", "does not divide"}},
		{"extend n", func(d *StepPlanDesc) { d.Extend.N = Ptr[int64](-1) },
			[]string{"desc->extend.n", "got -1"}},
	}
	for _, c := range cases {
		d := stepDesc(StepAllProducts)
		c.edit(&d)
		plan, err := NewStepPlan(d)
		if err == nil {
			t.Fatalf("%s: created a plan", c.name)
		}
		wantError(t, err, StatusInvalidArgument, append([]string{fn}, c.needles...)...)
		if plan != nil {
			t.Fatalf("%s: a failed create returned a plan", c.name)
		}
	}

	// The parameters of the products not selected are ignored, the zero desc's included.
	for _, products := range []StepProduct{StepPCPQueryRestoreIdx, StepFastPrefill,
		StepPCPQueryRestoreIdx | StepFastPrefill} {
		plan, err := NewStepPlan(StepPlanDesc{Products: products, MaxNumReqs: 1,
			MaxNumBlocksPerReq: 1})
		mustOK(t, err)
		mustOK(t, plan.Close())
	}
	d := stepDesc(StepCausalConv1dMetadata)
	d.DCP, d.Mamba, d.LocalAttention, d.Extend = StepDCPParams{}, StepMambaParams{Mode: 7},
		StepLocalAttentionParams{}, StepExtendParams{N: Ptr[int64](-1)}
	plan, err := NewStepPlan(d)
	mustOK(t, err)
	mustOK(t, plan.Close())
}

func cdiv(a, b int64) int64 { return (a + b - 1) / b }

func TestStepPlanShape(t *testing.T) {
	cases := []struct {
		reqs, tokens, blockM, chunk, blockSize, nspec int64
		mode                                          MambaCacheMode
	}{
		{4, 64, 8, 8, 2, 2, MambaCacheModeAlign},
		{3, 10, 3, 1, 1, 0, MambaCacheModeNone}, // local capacity: T + B is the smaller
		{1, 0, 8, 16, 4, 0, MambaCacheModeAll},  // no tokens
		{256, 8192, 8, 8192, 16, 0, MambaCacheModeAlign},
		{1024, 1 << 20, 1, 3, 3, 4, MambaCacheModeAlign},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%+v", c)
		want := StepPlanShape{
			RestoreCapacity: c.tokens,
			Conv1dCapacity:  cdiv(c.tokens, c.blockM) + c.reqs,
			LocalCapacity:   min(2*c.reqs+cdiv(c.tokens, c.chunk), c.tokens+c.reqs),
			LocalPages:      c.chunk / c.blockSize,
		}
		if c.mode == MambaCacheModeAlign {
			want.MambaColumns = 1 + c.nspec
		}
		d := DefaultStepPlanDesc()
		d.Products = StepAllProducts
		d.MaxNumReqs, d.MaxNumTokens, d.MaxNumBlocksPerReq, d.MaxNumLogits = c.reqs, c.tokens, 4, 0
		d.Conv1d.BlockM = c.blockM
		d.LocalAttention = StepLocalAttentionParams{AttnChunkSize: c.chunk, BlockSize: c.blockSize}
		d.Mamba = StepMambaParams{BlockSize: 16, NumSpeculativeBlocks: c.nspec, Mode: c.mode}
		plan, err := NewStepPlan(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shape, err := plan.Shape()
		mustOK(t, err)
		wantEqual(t, name+" shape", shape, want)
		mustOK(t, plan.Close())

		// A product on its own has its capacity.
		for _, p := range []struct {
			product StepProduct
			got     func(StepPlanShape) int64
			want    int64
		}{
			{StepPCPQueryRestoreIdx, func(s StepPlanShape) int64 { return s.RestoreCapacity }, want.RestoreCapacity},
			{StepCausalConv1dMetadata, func(s StepPlanShape) int64 { return s.Conv1dCapacity }, want.Conv1dCapacity},
			{StepLocalAttention, func(s StepPlanShape) int64 { return s.LocalCapacity }, want.LocalCapacity},
			{StepLocalAttention, func(s StepPlanShape) int64 { return s.LocalPages }, want.LocalPages},
			{StepMambaBlockTable, func(s StepPlanShape) int64 { return s.MambaColumns }, want.MambaColumns},
		} {
			d.Products = p.product
			plan, err := NewStepPlan(d)
			mustOK(t, err)
			shape, err := plan.Shape()
			mustOK(t, err)
			wantEqual(t, fmt.Sprintf("%s product %#x alone", name, p.product), p.got(shape), p.want)
			mustOK(t, plan.Close())
		}
	}
}

func TestStepPlanWorkspaceSize(t *testing.T) {
	for _, products := range []StepProduct{StepAllProducts, StepDCPLocalSeqLens,
		StepLocalAttention | StepFastPrefill} {
		plan, err := NewStepPlan(stepDesc(products))
		mustOK(t, err)
		size, err := plan.WorkspaceSize()
		mustOK(t, err)
		wantEqual(t, fmt.Sprintf("workspace of %#x", products), size, uint64(0))
		mustOK(t, plan.Close())
	}
}

func TestStepPlanClose(t *testing.T) {
	plan, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	mustOK(t, plan.Close())
	mustOK(t, plan.Close()) // idempotent
	_, err = plan.Shape()
	wantError(t, err, StatusInvalidArgument, "cattn_step_plan_get_shape", "plan is closed")
	_, err = plan.WorkspaceSize()
	wantError(t, err, StatusInvalidArgument, "cattn_step_plan_workspace_size", "plan is closed")
	wantError(t, plan.Run(StepBatch{}, StepOutputs{}, 0), StatusInvalidArgument,
		"cattn_step_plan_run", "plan is closed")

	var none *StepPlan
	mustOK(t, none.Close())
	_, err = none.Shape()
	wantError(t, err, StatusInvalidArgument, "cattn_step_plan_get_shape", "plan is NULL")
	_, err = none.WorkspaceSize()
	wantError(t, err, StatusInvalidArgument, "cattn_step_plan_workspace_size", "plan is NULL")
	wantError(t, none.Run(StepBatch{}, StepOutputs{}, 0), StatusInvalidArgument,
		"cattn_step_plan_run", "plan is NULL")
}

// --- Runs -------------------------------------------------------------------------------------

// stepRun is a valid run of stepDesc(StepAllProducts) for a batch of 3 requests, with every
// tensor made by mk (dtype, shape).
type stepRun struct {
	batch StepBatch
	out   StepOutputs
}

func newStepRun(t *testing.T, plan *StepPlan, mk func(DType, ...int64) *Tensor) stepRun {
	t.Helper()
	s, err := plan.Shape()
	mustOK(t, err)
	const b, cols = 3, 8
	return stepRun{
		batch: StepBatch{
			QueryStartLoc: mk(Int32, b+1), SeqLens: mk(Int32, b), BlockTable: mk(Int32, b, cols),
			LogitsIndices: mk(Int64, 5), NumLogitsIndices: mk(Int64, 1),
		},
		out: StepOutputs{
			DCPLocalSeqLens:    mk(Int32, b, 2),
			PCPQueryRestoreIdx: mk(Int64, s.RestoreCapacity),
			MambaBlockTable:    mk(Int32, b, s.MambaColumns),
			Conv1dNums:         mk(Int32, b), Conv1dMList: mk(Int32, s.Conv1dCapacity),
			Conv1dOffsetList: mk(Int32, s.Conv1dCapacity), Conv1dBatchPtr: mk(Int64, s.Conv1dCapacity),
			Conv1dTokenChunkOffsetPtr: mk(Int64, s.Conv1dCapacity),
			LocalQueryStartLoc:        mk(Int32, s.LocalCapacity+1), LocalSeqLens: mk(Int32, s.LocalCapacity),
			LocalNumComputedTokens: mk(Int32, s.LocalCapacity),
			LocalBlockTable:        mk(Int32, s.LocalCapacity, s.LocalPages),
			DecodeQueryStartLoc:    mk(Int32, b+1),
			ExtendQueryStartLoc:    mk(Int32, b+1), ExtendSeqLens: mk(Int32, b),
			Counts: mk(Int64, StepNumCounts),
		},
	}
}

// Host tensors are refused: the step plan is for the device (each utility has a host path).
func TestStepPlanRunHostTensors(t *testing.T) {
	const fn = "cattn_step_plan_run"
	plan, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	defer plan.Close()
	var bufs []*ibuf
	host := func(dt DType, shape ...int64) *Tensor {
		b := newIBuf(dt, shape, 1, 0)
		bufs = append(bufs, b)
		return b.t
	}
	r := newStepRun(t, plan, host)
	var before [][]int64
	for _, b := range bufs {
		before = append(before, b.raw())
	}
	wantError(t, plan.Run(r.batch, r.out, 0), StatusInvalidArgument, fn,
		"batch->query_start_loc is not device memory")

	// counts_host is written after the call returns: Go memory is refused before the call.
	withMirror := r.out
	withMirror.CountsHost = host(Int64, StepNumCounts)
	before = append(before, bufs[len(bufs)-1].raw())
	wantError(t, plan.Run(r.batch, withMirror, 0), StatusInvalidArgument, fn,
		"outputs->counts_host is Go memory")
	for i, b := range bufs {
		wantEqual(t, "a failed run wrote nothing", b.raw(), before[i])
	}
}

// A valid run with CUDA tensors reaches the device path, which a CPU-only libcattn (or a
// machine without a usable GPU) refuses after every other check.
func TestStepPlanRunNotSupported(t *testing.T) {
	skipWithGPU(t)
	const fn = "cattn_step_plan_run"
	plan, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	defer plan.Close()
	var dev fakeDevice
	r := newStepRun(t, plan, dev.tensor)
	wantError(t, plan.Run(r.batch, r.out, Stream(0x1234)), StatusNotSupported, fn)
	// With the mirror in pinned host memory (by address) and optional outputs left out.
	r.out.CountsHost = UnsafeDeviceTensor(dev.next, Device{Type: DeviceCUDAHost}, Int64, StepNumCounts)
	r.out.Conv1dNums, r.out.LocalBlockTable, r.out.Counts = nil, nil, nil
	wantError(t, plan.Run(r.batch, r.out, 0), StatusNotSupported, fn)

	// One product alone needs only its own tensors.
	conv1d, err := NewStepPlan(stepDesc(StepCausalConv1dMetadata))
	mustOK(t, err)
	defer conv1d.Close()
	s, err := conv1d.Shape()
	mustOK(t, err)
	wantError(t, conv1d.Run(StepBatch{QueryStartLoc: dev.tensor(Int64, 5)},
		StepOutputs{Conv1dBatchPtr: dev.tensor(Int32, s.Conv1dCapacity)}, 0), StatusNotSupported, fn)
}

func TestStepPlanRunErrors(t *testing.T) {
	skipWithGPU(t)
	const fn = "cattn_step_plan_run"
	plan, err := NewStepPlan(stepDesc(StepAllProducts))
	mustOK(t, err)
	defer plan.Close()
	shape, err := plan.Shape()
	mustOK(t, err)
	var dev fakeDevice
	run := func(edit func(r *stepRun), code Status, needles ...string) {
		t.Helper()
		r := newStepRun(t, plan, dev.tensor)
		edit(&r)
		wantError(t, plan.Run(r.batch, r.out, 0), code, append([]string{fn}, needles...)...)
	}
	run(func(r *stepRun) { r.batch.QueryStartLoc = nil }, StatusInvalidArgument,
		"batch->query_start_loc is NULL")
	run(func(r *stepRun) { r.batch.SeqLens = nil }, StatusInvalidArgument, "batch->seq_lens is NULL")
	run(func(r *stepRun) { r.out.LocalSeqLens = nil }, StatusInvalidArgument,
		"outputs->local_seq_lens is NULL")
	run(func(r *stepRun) { r.out.ExtendSeqLens = dev.tensor(Int32, 4) }, StatusInvalidArgument,
		"outputs->extend_seq_lens has the wrong size")
	run(func(r *stepRun) { r.batch.QueryStartLoc = dev.tensor(Int32, 6) }, StatusInvalidArgument,
		"batch->query_start_loc exceeds the plan's capacity")
	run(func(r *stepRun) { r.batch.BlockTable = dev.tensor(Int32, 3, 9) }, StatusInvalidArgument,
		"batch->block_table exceeds the plan's capacity")
	run(func(r *stepRun) { r.batch.LogitsIndices = dev.tensor(Int32, 17) }, StatusInvalidArgument,
		"batch->logits_indices exceeds the plan's capacity")
	run(func(r *stepRun) { r.batch.SeqLens = dev.tensor(Float32, 3) }, StatusInvalidArgument,
		"batch->seq_lens", "dtype")
	run(func(r *stepRun) { r.out.Conv1dMList = dev.tensor(Int32, shape.Conv1dCapacity-1) },
		StatusInsufficientSize, "outputs->conv1d_mlist")
	run(func(r *stepRun) { r.out.PCPQueryRestoreIdx = dev.tensor(Int32, shape.RestoreCapacity-1) },
		StatusInsufficientSize, "outputs->pcp_query_restore_idx")
	// No output may alias its input, unlike ExtendAllQueriesByN in place.
	run(func(r *stepRun) { r.out.ExtendSeqLens = r.batch.SeqLens }, StatusInvalidArgument,
		"outputs->extend_seq_lens overlaps an input", "batch->seq_lens")
	run(func(r *stepRun) {
		r.out.Counts = UnsafeDeviceTensor(r.out.LocalSeqLens.addr+8, CUDA(0), Int64, StepNumCounts)
	}, StatusInvalidArgument, "outputs->counts overlaps another output", "outputs->local_seq_lens")
	run(func(r *stepRun) { r.out.ExtendSeqLens = Int32Tensor(make([]int32, 3)) },
		StatusInvalidArgument, "outputs->extend_seq_lens is on a different device")
	run(func(r *stepRun) {
		r.out.CountsHost = UnsafeDeviceTensor(dev.next, CPU, Int64, StepNumCounts)
	}, StatusInvalidArgument, "outputs->counts_host is not pinned host memory")

	// Outputs of products the plan does not compute must be absent.
	conv1d, err := NewStepPlan(stepDesc(StepCausalConv1dMetadata))
	mustOK(t, err)
	defer conv1d.Close()
	wantError(t, conv1d.Run(StepBatch{QueryStartLoc: dev.tensor(Int64, 5)},
		StepOutputs{DCPLocalSeqLens: dev.tensor(Int32, 4)}, 0), StatusInvalidArgument, fn,
		"outputs->dcp_local_seq_lens is set for a product the plan does not compute")
}

// One plan is shared by many goroutines, each checking its own results and error messages,
// while Close waits for the calls in progress and later calls report the closed plan.
func TestStepPlanConcurrentUse(t *testing.T) {
	plan, err := NewStepPlan(stepDesc(StepCausalConv1dMetadata))
	mustOK(t, err)
	want, err := plan.Shape()
	mustOK(t, err)
	const goroutines, iterations = 16, 50
	failures := make(chan string, goroutines)
	done := make(chan struct{})
	for g := 0; g < goroutines; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < iterations; i++ {
				shape, err := plan.Shape()
				if err != nil || shape != want {
					failures <- fmt.Sprintf("goroutine %d: shape %+v, %v", g, shape, err)
					return
				}
				// Each goroutine's own batch, past the plan's 4 requests: refused with a
				// message naming its size.
				n := int64(100*g + i + 6)
				err = plan.Run(StepBatch{QueryStartLoc: Int64Tensor(make([]int64, n))},
					StepOutputs{}, 0)
				var e *Error
				if !errors.As(err, &e) || e.Code != StatusInvalidArgument ||
					!strings.Contains(e.Message, fmt.Sprintf("cattn.StepPlan.Run: "+
						"batch.QueryStartLoc exceeds the plan's capacity (got %d requests [%d]",
						n-1, n)) {
					failures <- fmt.Sprintf("goroutine %d: run with %d entries: %v", g, n, err)
					return
				}
			}
		}(g)
	}
	for g := 0; g < goroutines; g++ {
		<-done
	}
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	mustOK(t, plan.Close())
	_, err = plan.Shape()
	wantError(t, err, StatusInvalidArgument, "plan is closed")
}

// --- The step-input products (1.2) ---------------------------------------------------------------

// inputsDesc is a desc of the six step-input products: two KV-cache groups, the second a
// Mamba group without slot mappings.
func inputsDesc() StepPlanDesc {
	return StepPlanDesc{Products: StepInputProducts, MaxNumReqs: 4, MaxNumTokens: 64,
		MaxNumLogits: 16, MaxNumPersistentReqs: 8,
		KVGroups: []KVGroupParams{{BlockSize: 16, KernelBlockSize: 16, MaxNumBlocks: 8},
			{BlockSize: 32, KernelBlockSize: 32, MaxNumBlocks: 4, SlotMode: SlotModeNone}}}
}

func TestStepPlanInputsDesc(t *testing.T) {
	plan, err := NewStepPlan(inputsDesc())
	mustOK(t, err)
	mustOK(t, plan.Close())
	// With the 1.1 products too.
	both := inputsDesc()
	both.Products |= StepCausalConv1dMetadata
	plan, err = NewStepPlan(both)
	mustOK(t, err)
	mustOK(t, plan.Close())

	d := inputsDesc()
	d.MaxNumPersistentReqs = 0
	_, err = NewStepPlan(d)
	wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: desc.MaxNumPersistentReqs")
	d = inputsDesc()
	d.Inputs.NumNewSampledTokens = Ptr[int64](2)
	_, err = NewStepPlan(d)
	wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: desc.Inputs.NumNewSampledTokens")
	d = inputsDesc()
	d.KVGroups = nil
	_, err = NewStepPlan(d)
	wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: len(desc.KVGroups)")
	d = inputsDesc()
	d.KVGroups = make([]KVGroupParams, MaxKVGroups+1)
	_, err = NewStepPlan(d)
	wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: desc.KVGroups has too many groups")
}

// The zero StepInputsParams reaches C as CATTN_STEP_PLAN_DESC_INIT's inputs.
func TestStepInputsParamsZeroValueIsTheDefault(t *testing.T) {
	wantEqual(t, "the header's inputs", stepPlanDescInit().Inputs, StepInputsParams{DCPSize: 1,
		InterleaveSize: 1, NumNewSampledTokens: Ptr[int64](1), DecodeThreshold: Ptr[int64](1)})
	wantEqual(t, "no groups", stepPlanDescInit().KVGroups, []KVGroupParams(nil))
	d := inputsDesc()
	d.Inputs = DefaultStepPlanDesc().Inputs
	for _, desc := range []StepPlanDesc{inputsDesc(), d} {
		plan, err := NewStepPlan(desc)
		mustOK(t, err)
		mustOK(t, plan.Close())
	}
}

func TestStepPlanInputsRun(t *testing.T) {
	plan, err := NewStepPlan(inputsDesc())
	mustOK(t, err)
	defer plan.Close()
	// Host tensors are refused, naming the 1.2 fields in Go terms.
	batch := StepBatch{NumScheduledTokens: Int32Tensor([]int32{3, 1, 0, 0}),
		IdxMapping: Int32Tensor([]int32{2, 0, 0, 0}), NumComputedTokens: Int32Tensor(make([]int32, 8)),
		KVBlockTables: []*Tensor{Int32Tensor(make([]int32, 64), 8, 8),
			Int32Tensor(make([]int32, 32), 8, 4)}}
	err = plan.Run(batch, StepOutputs{}, 0)
	wantError(t, err, StatusInvalidArgument, "cattn.StepPlan.Run: ")
	batch.KVNumBlocks = make([]*Tensor, MaxKVGroups+1)
	wantError(t, plan.Run(batch, StepOutputs{}, 0), StatusInvalidArgument,
		"cattn.StepPlan.Run: batch.KVNumBlocks has too many groups")

	skipWithGPU(t)
	var dev fakeDevice
	inputs, err := NewStepPlan(StepPlanDesc{Products: StepInputs, MaxNumReqs: 4,
		MaxNumTokens: 64, MaxNumPersistentReqs: 8})
	mustOK(t, err)
	defer inputs.Close()
	wantError(t, inputs.Run(StepBatch{NumScheduledTokens: dev.tensor(Int32, 4),
		IdxMapping: dev.tensor(Int32, 4), NumComputedTokens: dev.tensor(Int32, 8)},
		StepOutputs{QueryStartLoc: dev.tensor(Int32, 5), SeqLens: dev.tensor(Int32, 4)}, 0),
		StatusNotSupported, "cattn.StepPlan.Run: ")
}

// --- The drafter products (1.2) ------------------------------------------------------------------

// draftChain is the drafter chain, StepDraftNextToken to StepDraftSlotMapping.
const draftChain = StepDraftNextToken | StepDraftPrepareInputs | StepDraftExpand |
	StepDraftSlotMapping

// draftDesc is a drafter plan's desc: 48 requests, 512 target tokens, 8 table columns, P = 3
// with the shift (the C tests' plan).
func draftDesc(products StepProduct) StepPlanDesc {
	return StepPlanDesc{Products: products, MaxNumReqs: 48, MaxNumTokens: 512,
		MaxNumBlocksPerReq: 8,
		Draft: StepDraftParams{VocabSize: 1000, NumPaddingSlotsPerRequest: 3, PaddingTokenID: 7,
			ParallelDraftingTokenID: 9, BlockSize: 16, MaxModelLen: 4096, ShiftInputIDs: true}}
}

// The zero StepDraftParams reaches C as CATTN_STEP_PLAN_DESC_INIT's draft: a desc that leaves
// NumPaddingSlotsPerRequest at 0 gets P = 1 (the header's), as its capacity shows.
func TestStepDraftParamsZeroValueIsTheDefault(t *testing.T) {
	wantEqual(t, "the header's draft", stepPlanDescInit().Draft,
		StepDraftParams{NumPaddingSlotsPerRequest: 1})
	d := draftDesc(draftChain)
	d.Draft.NumPaddingSlotsPerRequest, d.Draft.ShiftInputIDs = 0, false
	plan, err := NewStepPlan(d)
	mustOK(t, err)
	defer plan.Close()
	shape, err := plan.Shape()
	mustOK(t, err)
	wantEqual(t, "capacity with P = 1", shape.DraftTokenCapacity, int64(512+48*1))
}

func TestStepPlanDraftShape(t *testing.T) {
	for _, products := range []StepProduct{draftChain,
		StepDraftNextToken | StepDraftPrepareInputs | StepDraftExpand} {
		for _, p := range []int64{1, 3, 8, 65536} {
			for _, shift := range []bool{false, true} {
				d := draftDesc(products)
				d.Draft.NumPaddingSlotsPerRequest, d.Draft.ShiftInputIDs = p, shift
				plan, err := NewStepPlan(d)
				mustOK(t, err)
				shape, err := plan.Shape()
				mustOK(t, err)
				s := int64(0)
				if shift {
					s = 1
				}
				// max_num_tokens + max_num_reqs * (P - shift)
				wantEqual(t, fmt.Sprintf("%#x P %d shift %v", products, p, shift),
					shape.DraftTokenCapacity, 512+48*(p-s))
				size, err := plan.WorkspaceSize()
				mustOK(t, err)
				wantEqual(t, "workspace", size, uint64(0))
				mustOK(t, plan.Close())
			}
		}
	}
	// The products that expand nothing have no drafter capacity.
	for _, products := range []StepProduct{StepDraftNextToken,
		StepDraftNextToken | StepDraftPrepareInputs, StepDraftStep, StepBatchChange} {
		plan, err := NewStepPlan(draftDesc(products))
		mustOK(t, err)
		shape, err := plan.Shape()
		mustOK(t, err)
		wantEqual(t, fmt.Sprintf("%#x capacity", products), shape.DraftTokenCapacity, int64(0))
		mustOK(t, plan.Close())
	}
}

func TestStepPlanDraftDescErrors(t *testing.T) {
	cases := []struct {
		edit   func(d *StepPlanDesc)
		needle string
	}{
		{func(d *StepPlanDesc) { d.Products |= StepInputs },
			"desc.Products selects step-input and drafter products together"},
		{func(d *StepPlanDesc) { d.Products = StepDraftStep | StepDraftNextToken },
			"desc.Products selects CATTN_STEP_DRAFT_STEP with other products"},
		{func(d *StepPlanDesc) { d.Products = StepBatchChange | StepExtendQueries },
			"desc.Products selects CATTN_STEP_BATCH_CHANGE with other products"},
		{func(d *StepPlanDesc) { d.Products = StepDraftPrepareInputs },
			"desc.Products selects CATTN_STEP_DRAFT_PREPARE_INPUTS without CATTN_STEP_DRAFT_NEXT_TOKEN"},
		{func(d *StepPlanDesc) { d.Products = 1 << 19 }, "desc.Products is not a set of products"},
		{func(d *StepPlanDesc) { d.Draft.VocabSize = 0 },
			"desc.Draft.VocabSize is out of range (got 0, expected >= 1)"},
		{func(d *StepPlanDesc) { d.Draft.NumPaddingSlotsPerRequest = -1 },
			"desc.Draft.NumPaddingSlotsPerRequest is out of range (got -1"},
		{func(d *StepPlanDesc) { d.Draft.NumPaddingSlotsPerRequest = 65537 },
			"desc.Draft.NumPaddingSlotsPerRequest is out of range (got 65537"},
		{func(d *StepPlanDesc) { d.Draft.MaxTokensPerRequest = -1 },
			"desc.Draft.MaxTokensPerRequest"},
		{func(d *StepPlanDesc) { d.Draft.BlockSize = 0 }, "desc.Draft.BlockSize"},
		{func(d *StepPlanDesc) { d.Draft.MaxModelLen = 0 }, "desc.Draft.MaxModelLen"},
		{func(d *StepPlanDesc) { d.Products, d.MaxNumReqs = StepBatchChange, 8193 },
			"desc.MaxNumReqs is too large for CATTN_STEP_BATCH_CHANGE"},
	}
	for _, c := range cases {
		d := draftDesc(draftChain)
		c.edit(&d)
		plan, err := NewStepPlan(d)
		e := wantError(t, err, StatusInvalidArgument, "cattn.NewStepPlan: "+c.needle)
		if !strings.HasPrefix(e.CMessage, "cattn_step_plan_create: desc->") {
			t.Errorf("%s: C message %q", c.needle, e.CMessage)
		}
		if plan != nil {
			t.Fatalf("%s: a failed create returned a plan", c.needle)
		}
	}
	// A parameter of a product not selected is not read.
	d := draftDesc(StepDraftNextToken)
	d.Draft.BlockSize, d.Draft.NumPaddingSlotsPerRequest = 0, -1
	plan, err := NewStepPlan(d)
	mustOK(t, err)
	mustOK(t, plan.Close())
}

// draftChainRun is the chain's batch and outputs on fake device memory, every optional one
// given: B = 40 of 48 requests (the C tests' run).
func draftChainRun(t *testing.T, plan *StepPlan, dev *fakeDevice) stepRun {
	t.Helper()
	s, err := plan.Shape()
	mustOK(t, err)
	const b = 40
	capacity := s.DraftTokenCapacity
	return stepRun{
		batch: StepBatch{QueryStartLoc: dev.tensor(Int32, b+1), BlockTable: dev.tensor(Int32, b, 8),
			SampledTokenIDs: dev.tensor(Int32, b, 4), DiscardRequestMask: dev.tensor(Bool, b),
			BackupNextTokenIDs: dev.tensor(Int32, b), CuNumDraftTokens: dev.tensor(Int32, b),
			TargetTokenIDs: dev.tensor(Int32, 500), TargetPositions: dev.tensor(Int64, 500)},
		out: StepOutputs{NextTokenIDs: dev.tensor(Int32, b),
			ValidSampledTokensCount: dev.tensor(Int32, 48),
			TokenIndicesToSample:    dev.tensor(Int32, b), NumRejectedTokens: dev.tensor(Int32, b),
			DraftInputIDs: dev.tensor(Int32, capacity), DraftPositions: dev.tensor(Int64, capacity),
			IsRejectedTokenMask: dev.tensor(UInt8, capacity), IsMaskedTokenMask: dev.tensor(Int8, capacity),
			NewTokenIndices: dev.tensor(Int32, 48*3), HiddenStateMapping: dev.tensor(Int32, 512),
			DraftSlotMapping: dev.tensor(Int64, capacity), Counts: dev.tensor(Int64, StepNumCounts)},
	}
}

// draftStepRun is StepDraftStep over B = 32 rows, its outputs apart from its inputs.
func draftStepRun(dev *fakeDevice) stepRun {
	return stepRun{
		batch: StepBatch{Positions: dev.tensor(Int64, 32), BlockTable: dev.tensor(Int32, 32, 8),
			SeqLens: dev.tensor(Int32, 32)},
		out: StepOutputs{DraftPositions: dev.tensor(Int64, 32), DraftSeqLens: dev.tensor(Int32, 32),
			DraftSlotMapping: dev.tensor(Int64, 48)},
	}
}

// batchChangeRun is StepBatchChange of n = 24 rows of M = 64 counts and 30 previous rows, its
// outputs apart from its inputs.
func batchChangeRun(dev *fakeDevice) stepRun {
	return stepRun{
		batch: StepBatch{PrevPositions: dev.tensor(Int64, 24),
			NumComputedTokens: dev.tensor(Int32, 64), NumAcceptedTokens: dev.tensor(Int32, 24),
			ValidSampledTokenCount: dev.tensor(Int32, 30), PrevNumDraftTokens: dev.tensor(Int32, 30),
			CPUNumComputedTokens: dev.tensor(Int32, 24)},
		out: StepOutputs{CarriedNumComputedTokens: dev.tensor(Int32, 24),
			CarriedNumAcceptedTokens: dev.tensor(Int32, 24)},
	}
}

// The drafter's tensors are named in Go terms. Every failure is found before any device work,
// so the fake addresses are safe on any machine.
func TestStepPlanDraftRunErrors(t *testing.T) {
	const fn = "cattn.StepPlan.Run: "
	plan, err := NewStepPlan(draftDesc(draftChain))
	mustOK(t, err)
	defer plan.Close()
	var dev fakeDevice
	run := func(edit func(r *stepRun), code Status, needle string) {
		t.Helper()
		r := draftChainRun(t, plan, &dev)
		edit(&r)
		wantError(t, plan.Run(r.batch, r.out, 0), code, fn+needle)
	}
	run(func(r *stepRun) { r.batch.SampledTokenIDs = nil }, StatusInvalidArgument,
		"batch.SampledTokenIDs is nil")
	run(func(r *stepRun) { r.batch.CuNumDraftTokens = nil }, StatusInvalidArgument,
		"batch.CuNumDraftTokens is nil")
	run(func(r *stepRun) { r.batch.TargetTokenIDs = dev.tensor(Int32, 600) }, StatusInvalidArgument,
		"batch.TargetTokenIDs exceeds the plan's capacity")
	run(func(r *stepRun) { r.out.NextTokenIDs = nil }, StatusInvalidArgument,
		"out.NextTokenIDs is nil")
	run(func(r *stepRun) { r.out.DraftSlotMapping = r.out.DraftInputIDs }, StatusInvalidArgument,
		"out.DraftSlotMapping has the wrong dtype")
	run(func(r *stepRun) { r.out.DraftInputIDs = dev.tensor(Int32, 600) }, StatusInsufficientSize,
		"out.DraftInputIDs")
	run(func(r *stepRun) { r.out.DraftSeqLens = dev.tensor(Int32, 40) }, StatusInvalidArgument,
		"out.DraftSeqLens is set for a product the plan does not compute")
	// An output over an input that is not its very view.
	run(func(r *stepRun) { r.out.NextTokenIDs = r.batch.BackupNextTokenIDs }, StatusInvalidArgument,
		"out.NextTokenIDs")

	// Without the shift there is no hidden-state mapping.
	d := draftDesc(draftChain)
	d.Draft.ShiftInputIDs = false
	noShift, err := NewStepPlan(d)
	mustOK(t, err)
	defer noShift.Close()
	r := draftChainRun(t, noShift, &dev)
	wantError(t, noShift.Run(r.batch, r.out, 0), StatusInvalidArgument,
		fn+"out.HiddenStateMapping is set but desc.Draft.ShiftInputIDs is 0")

	// StepDraftStep writes no counts; seq_lens' memory as int64 is not its very view.
	step, err := NewStepPlan(draftDesc(StepDraftStep))
	mustOK(t, err)
	defer step.Close()
	r = draftStepRun(&dev)
	r.out.Counts = dev.tensor(Int64, StepNumCounts)
	wantError(t, step.Run(r.batch, r.out, 0), StatusInvalidArgument,
		fn+"out.Counts is set for a plan that writes no counts")
	r = draftStepRun(&dev)
	r.out.DraftSeqLens = UnsafeDeviceTensor(r.batch.SeqLens.addr, CUDA(0), Int64, 32)
	wantError(t, step.Run(r.batch, r.out, 0), StatusInvalidArgument,
		fn+"out.DraftSeqLens overlaps")

	// StepBatchChange names its batch fields.
	change, err := NewStepPlan(draftDesc(StepBatchChange))
	mustOK(t, err)
	defer change.Close()
	r = batchChangeRun(&dev)
	r.batch.PrevPositions = nil
	wantError(t, change.Run(r.batch, r.out, 0), StatusInvalidArgument,
		fn+"batch.PrevPositions is nil")
	r = batchChangeRun(&dev)
	r.batch.NumComputedTokens = dev.tensor(Int32, 10)
	wantError(t, change.Run(r.batch, r.out, 0), StatusInsufficientSize,
		fn+"batch.NumComputedTokens has fewer rows than the batch")
}

// A run that passed every check is refused at the launch: a CPU-only libcattn (or a machine
// without a usable GPU) says so.
func wantChecksPass(t *testing.T, err error) {
	t.Helper()
	e := wantError(t, err, StatusNotSupported, "cattn.StepPlan.Run: ")
	if !strings.Contains(e.Message, "CPU-only") && !strings.Contains(e.Message, "no usable CUDA device") {
		t.Errorf("not refused at the launch: %s", e.Message)
	}
}

// Valid drafter runs on CUDA-labelled fake addresses reach the device path; the drafting step
// and the batch change also in place (their outputs the very views of their inputs).
func TestStepPlanDraftRunNotSupported(t *testing.T) {
	skipWithGPU(t)
	var dev fakeDevice
	plan, err := NewStepPlan(draftDesc(draftChain))
	mustOK(t, err)
	defer plan.Close()
	r := draftChainRun(t, plan, &dev)
	wantChecksPass(t, plan.Run(r.batch, r.out, Stream(0x1234)))
	// The optional tensors may be left out.
	r.batch.DiscardRequestMask = nil
	r.out.ValidSampledTokensCount, r.out.NumRejectedTokens = nil, nil
	r.out.IsRejectedTokenMask, r.out.IsMaskedTokenMask = nil, nil
	r.out.NewTokenIndices, r.out.HiddenStateMapping, r.out.Counts = nil, nil, nil
	wantChecksPass(t, plan.Run(r.batch, r.out, 0))

	step, err := NewStepPlan(draftDesc(StepDraftStep))
	mustOK(t, err)
	defer step.Close()
	r = draftStepRun(&dev)
	wantChecksPass(t, step.Run(r.batch, r.out, 0))
	r.out.DraftPositions, r.out.DraftSeqLens = r.batch.Positions, r.batch.SeqLens
	wantChecksPass(t, step.Run(r.batch, r.out, 0))

	change, err := NewStepPlan(draftDesc(StepBatchChange))
	mustOK(t, err)
	defer change.Close()
	r = batchChangeRun(&dev)
	wantChecksPass(t, change.Run(r.batch, r.out, 0))
	r.out.CarriedNumComputedTokens = r.batch.NumComputedTokens
	r.out.CarriedNumAcceptedTokens = r.batch.NumAcceptedTokens
	wantChecksPass(t, change.Run(r.batch, r.out, 0))
	// A view of the same memory described anew is the very view too.
	r.out.CarriedNumAcceptedTokens = UnsafeDeviceTensor(r.batch.NumAcceptedTokens.addr, CUDA(0),
		Int32, 24)
	wantChecksPass(t, change.Run(r.batch, r.out, 0))
}

// Every field of the step plan's C structs (the desc with its parameter structs, the batch, the
// outputs) has a Go field of the same name, so that messages name it in Go terms, but for the
// reserved ones and those StepPlanDesc names otherwise (stepDescRenames).
func TestStepPlanFieldsHaveGoNames(t *testing.T) {
	renamed := map[string]bool{}
	for i := 0; i+1 < len(stepDescRenames); i += 2 {
		c := stepDescRenames[i]
		renamed[c[strings.LastIndexAny(c, ">.")+1:]] = true
	}
	for _, u := range unmatchedCFields {
		st, field, _ := strings.Cut(strings.TrimPrefix(u, "_Ctype_struct_"), ".")
		// Not the plan's: the batch check, and the size query (its two outputs are
		// StepInputsTotals').
		if !strings.HasPrefix(st, "cattn_step_") || st == "cattn_step_batch_check_args" ||
			st == "cattn_step_inputs_size_args" {
			continue
		}
		if field == "reserved0" || renamed[field] {
			continue
		}
		t.Errorf("%s.%s has no Go field", st, field)
	}
	for c, g := range map[string]string{"draft": "Draft", "vocab_size": "VocabSize",
		"shift_input_ids": "ShiftInputIDs", "cpu_num_computed_tokens": "CPUNumComputedTokens",
		"carried_num_accepted_tokens": "CarriedNumAcceptedTokens",
		"is_rejected_token_mask":      "IsRejectedTokenMask"} {
		wantEqual(t, c, goFieldNames[c], g)
	}
}
