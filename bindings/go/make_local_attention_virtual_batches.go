// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// LocalAttentionPlan is the result of splitting a batch into attention-chunk-local virtual
// batches (cattn_local_attention_plan_t): vLLM's returned metadata plus its make_block_table
// closure. It is immutable and may be used from many goroutines at once. Close it when done;
// a finalizer closes an unreachable one, but only as a safety net.
type LocalAttentionPlan struct {
	h *handle[cPlan]
}

// MakeLocalAttentionVirtualBatches plans the virtual batches of chunked local attention, as
// vLLM's make_local_attention_virtual_batches (cattn_make_local_attention_virtual_batches), on
// the host. It reads metadata's QueryStartLocCPU and SeqLensCPU (host, [B + 1] and [B]), the
// column count of BlockTableTensor (on any device) and NumActualTokens; nothing is retained.
// The 1.1 fields of metadata are not read here (Fill writes the per-virtual-batch upper bound).
// attnChunkSize >= 1; blockSize >= 1 divides it. Unlike vLLM a zero-length request's pages
// start at column 0 instead of wrapping to the end of its row. Errors: StatusInvalidArgument
// (sizes, missing mirrors, shapes, a decreasing QueryStartLocCPU, seq_len < query_len, an empty
// batch), StatusOutOfMemory.
// The cap on the virtual batches is the default, 2 * B + cdiv(NumActualTokens,
// attnChunkSize); NewLocalAttentionPlan takes another.
//
// See docs/api/make_local_attention_virtual_batches.md.
func MakeLocalAttentionVirtualBatches(attnChunkSize, blockSize int64, metadata *CommonAttnMetadata) (*LocalAttentionPlan, error) {
	f := newFrame("cattn_make_local_attention_virtual_batches", "MakeLocalAttentionVirtualBatches",
		"args->attn_chunk_size", "attnChunkSize", "args->block_size", "blockSize",
		"args->metadata", "metadata")
	defer f.free()
	return newLocalAttentionPlan(f, LocalAttentionArgs{AttnChunkSize: attnChunkSize,
		BlockSize: blockSize, Metadata: metadata})
}

// LocalAttentionArgs are the arguments of NewLocalAttentionPlan and
// MakeLocalAttentionVirtualBatchesSize (cattn_local_attention_args_t); the zero value of each
// field is CATTN_LOCAL_ATTENTION_ARGS_INIT's.
type LocalAttentionArgs struct {
	AttnChunkSize int64 // >= 1
	BlockSize     int64 // >= 1 and divides AttnChunkSize
	// Metadata is read as MakeLocalAttentionVirtualBatches reads it: QueryStartLocCPU,
	// SeqLensCPU, the columns of BlockTableTensor and NumActualTokens.
	Metadata *CommonAttnMetadata
	// MaxVirtualBatches caps the virtual batches the plan may hold (since 1.1), e.g.
	// MaxLocalAttentionVirtualBatches(...).BoundWithEmptyRows for an engine's largest step; a
	// batch that needs more is StatusInvalidArgument before anything is allocated. 0 means
	// the default, 2 * B + cdiv(Metadata.NumActualTokens, AttnChunkSize).
	MaxVirtualBatches int64
}

// LocalAttentionSize is what MakeLocalAttentionVirtualBatchesSize reports.
type LocalAttentionSize struct {
	VirtualBatches int64  // V, the plan's virtual batches
	Pages          int64  // P, block-table pages per virtual batch
	PlanBytes      uint64 // the most host memory creating the plan allocates
}

// NewLocalAttentionPlan plans the virtual batches of chunked local attention as
// MakeLocalAttentionVirtualBatches does, with the 1.1 cap MaxVirtualBatches
// (cattn_make_local_attention_virtual_batches). Since 1.1.
//
// See docs/api/make_local_attention_virtual_batches.md.
func NewLocalAttentionPlan(args LocalAttentionArgs) (*LocalAttentionPlan, error) {
	f := newFrame("cattn_make_local_attention_virtual_batches", "NewLocalAttentionPlan")
	defer f.free()
	return newLocalAttentionPlan(f, args)
}

func newLocalAttentionPlan(f *frame, args LocalAttentionArgs) (*LocalAttentionPlan, error) {
	md, err := f.metadata("args->metadata", args.Metadata)
	if err != nil {
		return nil, err
	}
	p, err := f.makeLocalAttentionVirtualBatches(args.AttnChunkSize, args.BlockSize, md,
		args.MaxVirtualBatches)
	if err != nil {
		return nil, err
	}
	return &LocalAttentionPlan{h: newHandle(p, cLocalAttentionPlanDestroy)}, nil
}

// MakeLocalAttentionVirtualBatchesSize reports, without allocating, what NewLocalAttentionPlan
// would plan for args: V, P and the host bytes the plan takes
// (cattn_make_local_attention_virtual_batches_size). It makes every check the create call
// makes, the cap included, and fails where it fails. Since 1.1.
//
// See docs/api/make_local_attention_virtual_batches.md.
func MakeLocalAttentionVirtualBatchesSize(args LocalAttentionArgs) (LocalAttentionSize, error) {
	f := newFrame("cattn_make_local_attention_virtual_batches_size",
		"MakeLocalAttentionVirtualBatchesSize")
	defer f.free()
	md, err := f.metadata("args->metadata", args.Metadata)
	if err != nil {
		return LocalAttentionSize{}, err
	}
	return f.makeLocalAttentionVirtualBatchesSize(args.AttnChunkSize, args.BlockSize, md,
		args.MaxVirtualBatches)
}

// Close destroys the plan (cattn_local_attention_plan_destroy). It waits for calls using the
// plan to return; later calls fail with StatusInvalidArgument. Closing again, or a nil plan,
// is a no-op. The error is always nil.
//
// See docs/api/make_local_attention_virtual_batches.md.
func (plan *LocalAttentionPlan) Close() error {
	if plan == nil {
		return nil
	}
	return plan.h.Close()
}

func (plan *LocalAttentionPlan) acquire(f *frame) (cPlan, error) {
	if plan == nil {
		return nil, f.argError("plan", "is NULL", "a nil *LocalAttentionPlan", "a plan")
	}
	return plan.h.acquire(f, "plan", "LocalAttentionPlan", false)
}

func (plan *LocalAttentionPlan) release() { plan.h.release(false) }

// Shape returns the number of virtual batches V and the block-table pages per virtual batch P
// (cattn_local_attention_plan_get_shape).
//
// See docs/api/make_local_attention_virtual_batches.md.
func (plan *LocalAttentionPlan) Shape() (virtualBatches, pages int64, err error) {
	f := newFrame("cattn_local_attention_plan_get_shape", "LocalAttentionPlan.Shape")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return 0, 0, err
	}
	defer plan.release()
	return f.localAttentionPlanGetShape(p)
}

// Fill writes the plan's virtual-batch metadata into out (cattn_local_attention_plan_fill).
// metadata is the batch the plan was made from; its BlockTableTensor is gathered. The caller
// sets out's QueryStartLocCPU [V + 1], SeqLensCPU [V], NumComputedTokensCPU [V] (host) and
// BlockTableTensor [V, P] (the block table's device and dtype), and optionally device copies
// QueryStartLoc and SeqLens. The call writes those tensors, NumReqs = V, NumActualTokens,
// MaxQueryLen, MaxSeqLen, NonCausal = false, SlotMapping = metadata.SlotMapping,
// LogitsIndicesPadded = nil and NumLogitsIndices = 0. Device outputs are enqueued on stream.
//
// Since 1.1 the caller may also set out.SeqLensCPUUpperBound to a host [V] int32/int64 tensor:
// it receives the virtual batches' key lengths (the same values as SeqLensCPU, exact and so
// their own upper bound), where vLLM copies the input's [B] upper bound, mis-shaped for the
// virtual batches; a wrongly sized one fails with nothing written. Nil leaves it nil, whatever
// metadata has. out's other 1.1 fields (Positions, IsPrefilling, CausalPerReq, the DCP and
// encoder lengths, MaxLogitsPerReq) are left as the caller set them.
//
// See docs/api/make_local_attention_virtual_batches.md.
func (plan *LocalAttentionPlan) Fill(metadata, out *CommonAttnMetadata, stream Stream) error {
	f := newFrame("cattn_local_attention_plan_fill", "LocalAttentionPlan.Fill",
		"args->metadata", "metadata", "args->out", "out")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return err
	}
	defer plan.release()
	in, err := f.metadata("args->metadata", metadata)
	if err != nil {
		return err
	}
	cout, err := f.metadata("args->out", out)
	if err != nil {
		return err
	}
	if err := f.localAttentionPlanFill(p, in, cout, stream); err != nil {
		return err
	}
	return f.readMetadata(cout, out)
}

// MakeBlockTable gathers a (new) block table into the virtual batches' table, vLLM's
// make_block_table closure (cattn_local_attention_plan_make_block_table): out[v, p] =
// blockTable[batch(v), min(start(v) + p, cols - 1)]. blockTable: [B, >= cols]; out: [V, P],
// the same device and dtype, not overlapping blockTable.
//
// See docs/api/make_local_attention_virtual_batches.md.
func (plan *LocalAttentionPlan) MakeBlockTable(blockTable, out *Tensor, stream Stream) error {
	f := newFrame("cattn_local_attention_plan_make_block_table", "LocalAttentionPlan.MakeBlockTable",
		"block_table", "blockTable")
	defer f.free()
	p, err := plan.acquire(f)
	if err != nil {
		return err
	}
	defer plan.release()
	bt, err := f.tensor("block_table", blockTable)
	if err != nil {
		return err
	}
	o, err := f.tensor("out", out)
	if err != nil {
		return err
	}
	return f.localAttentionPlanMakeBlockTable(p, bt, o, stream)
}

// LocalAttentionCapturableArgs are the arguments of MakeLocalAttentionVirtualBatchesCapturable
// (cattn_local_attention_capturable_args_t). Every tensor is int32/int64 in device memory on
// QueryStartLoc's device (UnsafeDeviceTensor). The capacity is SeqLensOut's length; every
// output holds it. Since 1.1.
type LocalAttentionCapturableArgs struct {
	AttnChunkSize int64 // C >= 1
	BlockSize     int64 // >= 1, divides AttnChunkSize
	// QueryStartLoc: in, [B + 1]; zero-length requests pad a batch to its capacity.
	QueryStartLoc *Tensor
	SeqLens       *Tensor // in: [B]
	BlockTable    *Tensor // in: [B, cols >= 1]
	// QueryStartLocOut: out, [capacity + 1], the virtual batches' cu_seqlens_q; past V it
	// repeats the total.
	QueryStartLocOut *Tensor
	SeqLensOut       *Tensor // out: [capacity], their key lengths; 0 past V
	// NumComputedTokensOut: out, may be nil, [capacity]; 0 past V.
	NumComputedTokensOut *Tensor
	// BlockTableOut: out, may be nil, [capacity, C / BlockSize], BlockTable's dtype; rows
	// past V are 0.
	BlockTableOut *Tensor
	// Counts: out, may be nil, [3]: {V, max_query_len, max_seq_len}.
	Counts *Tensor
	Stream Stream
}

// MakeLocalAttentionVirtualBatchesCapturable computes the local-attention virtual batches on the
// device from the device QueryStartLoc and SeqLens, as vLLM's
// make_local_attention_virtual_batches (cattn_make_local_attention_virtual_batches_capturable), in
// one kernel enqueued on args.Stream: no host sync, no allocation, so that a captured CUDA
// graph computes them afresh on every replay (a LocalAttentionPlan replays the values planned
// at capture). Values equal the plan's for every batch the host accepts. A capacity of
// min(2 * max_num_reqs + cdiv(max_num_tokens, C), max_num_tokens + max_num_reqs) holds every
// batch of at most max_num_reqs requests (padding rows included) and max_num_tokens tokens; a
// batch of more virtual batches writes the first ones and reports its V in Counts. The data is
// not checked on the device: a decreasing QueryStartLoc entry counts as an empty request, a
// seq_len shorter than its query is taken as the query's length, and an int32 output keeps
// the low 32 bits. Errors: StatusInvalidArgument (sizes, shapes, dtypes, devices, host
// tensors - the host has MakeLocalAttentionVirtualBatches -, outputs of different capacities,
// overlaps), StatusNotSupported (CPU-only build, no usable device, a tensor off its element
// alignment), StatusCUDAError. Since 1.1.
//
// See docs/api/make_local_attention_virtual_batches.md.
func MakeLocalAttentionVirtualBatchesCapturable(args LocalAttentionCapturableArgs) error {
	f := newFrame("cattn_make_local_attention_virtual_batches_capturable",
		"MakeLocalAttentionVirtualBatchesCapturable")
	defer f.free()
	var cs [8]cTensor
	names := [8]string{"args->query_start_loc", "args->seq_lens", "args->block_table",
		"args->query_start_loc_out", "args->seq_lens_out", "args->num_computed_tokens_out",
		"args->block_table_out", "args->counts"}
	ts := [8]*Tensor{args.QueryStartLoc, args.SeqLens, args.BlockTable, args.QueryStartLocOut,
		args.SeqLensOut, args.NumComputedTokensOut, args.BlockTableOut, args.Counts}
	if err := f.tensorsInto(cs[:], names[:], ts[:]); err != nil {
		return err
	}
	return f.makeLocalAttentionVirtualBatchesCapturable(args.AttnChunkSize, args.BlockSize, cs,
		args.Stream)
}

// VirtualBatches is the metadata of the virtual batches LocalAttentionVirtualBatches returns.
type VirtualBatches[T Index] struct {
	QueryStartLoc     []T   // [V + 1]: the virtual batches' cu_seqlens_q
	SeqLens           []T   // [V]: their key lengths
	NumComputedTokens []T   // [V]
	BlockTable        [][]T // [V][P]: the gathered block table
	MaxQueryLen       int64
	MaxSeqLen         int64
	NumActualTokens   int64 // the batch's, queryStartLoc[B]
}

// LocalAttentionVirtualBatches splits, in one call, the batch of queryStartLoc ([B + 1]),
// seqLens ([B]) and blockTable (B rows of equal length >= 1) into the virtual batches of
// chunked local attention, vLLM's make_local_attention_virtual_batches: it plans them, fills
// the metadata and gathers the block table, and frees the plan. attnChunkSize >= 1 and
// blockSize, which divides it, are passed as given. Since 1.1.
//
// See docs/api/make_local_attention_virtual_batches.md.
func LocalAttentionVirtualBatches[T Index](attnChunkSize, blockSize int64, queryStartLoc,
	seqLens []T, blockTable [][]T) (VirtualBatches[T], error) {
	f := newFrame("cattn_make_local_attention_virtual_batches", "LocalAttentionVirtualBatches",
		"args->attn_chunk_size", "attnChunkSize", "args->block_size", "blockSize",
		"args->metadata", "the batch", "args->metadata->query_start_loc_cpu", "queryStartLoc",
		"args->metadata->seq_lens_cpu", "seqLens", "args->metadata->block_table_tensor",
		"blockTable", "args->out", "result", "plan", "the plan")
	defer f.free()
	var r VirtualBatches[T]
	flat, cols, bad := flatRows(blockTable)
	if bad >= 0 {
		return r, f.argError("args->metadata->block_table_tensor", "has rows of different lengths",
			"row "+strconv.Itoa(bad)+" of "+strconv.Itoa(len(blockTable[bad])),
			strconv.Itoa(cols)+", row 0's")
	}
	in := &CommonAttnMetadata{QueryStartLocCPU: IndexTensor(queryStartLoc),
		SeqLensCPU: IndexTensor(seqLens), BlockTableTensor: IndexTensor(flat,
			int64(len(blockTable)), int64(cols)),
		NumReqs: int64(len(seqLens)), NumActualTokens: lastOf(queryStartLoc)}
	md, err := f.metadata("args->metadata", in)
	if err != nil {
		return r, err
	}
	p, err := f.makeLocalAttentionVirtualBatches(attnChunkSize, blockSize, md, 0)
	if err != nil {
		return r, err
	}
	defer cLocalAttentionPlanDestroy(p)
	v, pages, err := f.localAttentionPlanGetShape(p)
	if err != nil {
		return r, err
	}
	r.QueryStartLoc, r.SeqLens, r.NumComputedTokens = make([]T, v+1), make([]T, v), make([]T, v)
	table := make([]T, v*pages)
	out := &CommonAttnMetadata{QueryStartLocCPU: IndexTensor(r.QueryStartLoc),
		SeqLensCPU: IndexTensor(r.SeqLens), NumComputedTokensCPU: IndexTensor(r.NumComputedTokens),
		BlockTableTensor: IndexTensor(table, v, pages)}
	cout, err := f.metadata("args->out", out)
	if err != nil {
		return VirtualBatches[T]{}, err
	}
	if err := f.localAttentionPlanFill(p, md, cout, 0); err != nil {
		return VirtualBatches[T]{}, err
	}
	if err := f.readMetadata(cout, out); err != nil {
		return VirtualBatches[T]{}, err
	}
	r.BlockTable = splitRows(table, int(pages))
	r.MaxQueryLen, r.MaxSeqLen, r.NumActualTokens = out.MaxQueryLen, out.MaxSeqLen,
		out.NumActualTokens
	return r, nil
}

func (f *frame) localAttentionArgs(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) *C.cattn_local_attention_args_t {
	a := cArgs[C.cattn_local_attention_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.block_size = C.int64_t(block)
	a.metadata = md
	a.max_virtual_batches = C.int64_t(maxVirtualBatches)
	return a
}

func (f *frame) makeLocalAttentionVirtualBatches(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) (cPlan, error) {
	a := f.localAttentionArgs(chunk, block, md, maxVirtualBatches)
	if err := f.status(cMakeLocalAttentionVirtualBatches(a, f.msg)); err != nil {
		return nil, err
	}
	return a.plan, nil
}

func (f *frame) makeLocalAttentionVirtualBatchesSize(chunk, block int64, md cMetadata,
	maxVirtualBatches int64) (LocalAttentionSize, error) {
	a := f.localAttentionArgs(chunk, block, md, maxVirtualBatches)
	var vb, pages C.int64_t
	var bytes C.size_t
	err := f.status(cMakeLocalAttentionVirtualBatchesSize(a, &vb, &pages, &bytes,
		f.msg))
	if err != nil {
		return LocalAttentionSize{}, err
	}
	return LocalAttentionSize{VirtualBatches: int64(vb), Pages: int64(pages),
		PlanBytes: uint64(bytes)}, nil
}

func (f *frame) localAttentionPlanGetShape(p cPlan) (int64, int64, error) {
	var vb, pages C.int64_t
	err := f.status(cLocalAttentionPlanGetShape(p, &vb, &pages, f.msg))
	return int64(vb), int64(pages), err
}

func (f *frame) localAttentionPlanFill(p cPlan, in, out cMetadata, stream Stream) error {
	a := cArgs[C.cattn_local_attention_fill_args_t](f)
	a.metadata = in
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	return f.status(cLocalAttentionPlanFill(p, a, f.msg))
}

func (f *frame) localAttentionPlanMakeBlockTable(p cPlan, table, out cTensor, stream Stream) error {
	return f.status(cLocalAttentionPlanMakeBlockTable(p, table, out,
		C.uintptr_t(stream), f.msg))
}

// t holds query_start_loc, seq_lens, block_table, query_start_loc_out, seq_lens_out,
// num_computed_tokens_out, block_table_out, counts.
func (f *frame) makeLocalAttentionVirtualBatchesCapturable(chunk, block int64, t [8]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_local_attention_capturable_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.block_size = C.int64_t(block)
	a.query_start_loc, a.seq_lens, a.block_table = t[0], t[1], t[2]
	a.query_start_loc_out, a.seq_lens_out = t[3], t[4]
	a.num_computed_tokens_out, a.block_table_out, a.counts = t[5], t[6], t[7]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cMakeLocalAttentionVirtualBatchesCapturable(a, f.msg))
}
