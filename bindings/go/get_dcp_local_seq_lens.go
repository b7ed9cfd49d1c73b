// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// DCPAllRanks is CATTN_DCP_ALL_RANKS, the C dcp_rank that asks for every rank (vLLM's
// dcp_rank=None). In Go, select ranks with a DCPRanks value instead: AllDCPRanks (the zero
// value) or DCPRank(r).
const DCPAllRanks = -1

// DCPRanks selects the decode-context-parallel ranks whose lengths a call computes. The zero
// value, AllDCPRanks, is every rank (vLLM's dcp_rank=None, the C _INIT default); DCPRank(r) is
// rank r alone. It is a struct so that rank 0 can never be chosen by leaving a field out.
type DCPRanks struct {
	rank int64
	one  bool
}

// AllDCPRanks selects every rank; it is the zero DCPRanks.
var AllDCPRanks = DCPRanks{}

// DCPRank selects rank r alone, r in [0, DCPSize); DCPRank(DCPAllRanks) is AllDCPRanks.
//
// See docs/api/get_dcp_local_seq_lens.md.
func DCPRank(r int64) DCPRanks {
	if r == DCPAllRanks {
		return AllDCPRanks
	}
	return DCPRanks{rank: r, one: true}
}

// Rank returns the selected rank, and false for every rank.
func (r DCPRanks) Rank() (int64, bool) { return r.rank, r.one }

// String returns "all ranks" or "rank r".
func (r DCPRanks) String() string {
	if !r.one {
		return "all ranks"
	}
	return "rank " + strconv.FormatInt(r.rank, 10)
}

// c is the C dcp_rank: the rank, or CATTN_DCP_ALL_RANKS.
func (r DCPRanks) c() int64 {
	if !r.one {
		return DCPAllRanks
	}
	return r.rank
}

// The C fields of cattn_dcp_local_seq_lens_args_t that DCPLocalSeqLensArgs names otherwise.
var dcpArgsRenames = []string{"args->dcp_rank", "args.Ranks",
	"args->dcp_kv_cache_interleave_size", "args.InterleaveSize", "args->shape_mode",
	"args.PreserveShape"}

// DCPLocalSeqLensArgs are the arguments of GetDCPLocalSeqLens
// (cattn_dcp_local_seq_lens_args_t). The zero value of every field but the tensors is
// CATTN_DCP_LOCAL_SEQ_LENS_ARGS_INIT's: a group of 1, every rank, interleave 1, the 1.0 shapes.
type DCPLocalSeqLensArgs struct {
	SeqLens *Tensor // in: [B] int32/int64, values in [0, INT32_MAX]
	DCPSize int64   // in: >= 1; 0 means 1
	// Ranks: in, the zero value (AllDCPRanks) for every rank, DCPRank(r) for r in [0, DCPSize).
	Ranks DCPRanks
	// InterleaveSize: in, dcp_kv_cache_interleave_size, >= 1 with DCPSize * InterleaveSize <=
	// INT32_MAX; 0 means 1.
	InterleaveSize int64
	// Out: [B] for one rank, [B, DCPSize] for all ranks (or [B] when DCPSize is 1);
	// int32/int64, on SeqLens' device. It may be the very SeqLens view (in place).
	Out    *Tensor
	Stream Stream // CUDA tensors only
	// PreserveShape (since 1.1, CATTN_DCP_SHAPE_PRESERVE) takes SeqLens of any shape S (0 to 8
	// dimensions for one rank, 0 to 7 for all; vLLM's newest semantics): Out is S for one rank and S + [DCPSize] for all
	// ranks, the rank axis kept even when DCPSize is 1. False keeps the 1.0 contract above.
	PreserveShape bool
}

// GetDCPLocalSeqLens computes how many KV tokens of each request each decode-context-parallel
// rank stores, the cache being dealt out round-robin in runs of InterleaveSize tokens
// (get_dcp_local_seq_lens, cattn_get_dcp_local_seq_lens). Host tensors run synchronously;
// CUDA tensors are enqueued on args.Stream.
//
// See docs/api/get_dcp_local_seq_lens.md.
func GetDCPLocalSeqLens(args DCPLocalSeqLensArgs) error {
	f := newFrame("cattn_get_dcp_local_seq_lens", "GetDCPLocalSeqLens", dcpArgsRenames...)
	defer f.free()
	seq, err := f.tensor("args->seq_lens", args.SeqLens)
	if err != nil {
		return err
	}
	out, err := f.tensor("args->out", args.Out)
	if err != nil {
		return err
	}
	return f.getDCPLocalSeqLens(seq, nonZero(args.DCPSize, 1), args.Ranks.c(),
		nonZero(args.InterleaveSize, 1), out, args.PreserveShape, args.Stream)
}

// The C fields of the DCP call as the one-call helpers' parameters.
var dcpHelperRenames = []string{"args->seq_lens", "seqLens", "args->dcp_size", "dcpSize",
	"args->dcp_rank", "rank", "args->dcp_kv_cache_interleave_size", "interleaveSize",
	"args->out", "the result"}

// DCPLocalSeqLens returns, in one call, how many KV tokens of each request DCP rank `rank` of
// a group of dcpSize stores when the cache is dealt out in runs of interleaveSize tokens:
// result[b] for seqLens[b] (vLLM's get_dcp_local_seq_lens with dcp_rank given). The arguments
// are passed as given: dcpSize and interleaveSize >= 1 with dcpSize * interleaveSize <=
// INT32_MAX, rank in [0, dcpSize), seqLens in [0, INT32_MAX]. Since 1.1.
//
// See docs/api/get_dcp_local_seq_lens.md.
func DCPLocalSeqLens[T Index](seqLens []T, dcpSize, rank, interleaveSize int64) ([]T, error) {
	f := newFrame("cattn_get_dcp_local_seq_lens", "DCPLocalSeqLens", dcpHelperRenames...)
	defer f.free()
	if rank < 0 {
		return nil, f.argError("args->dcp_rank", "is not one rank", strconv.FormatInt(rank, 10),
			"[0, dcpSize) (DCPLocalSeqLensAllRanks gives every rank)")
	}
	out := make([]T, len(seqLens))
	if err := f.dcpCall(IndexTensor(seqLens), dcpSize, rank, interleaveSize,
		IndexTensor(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// DCPLocalSeqLensAllRanks returns, in one call, every rank's local lengths: result[b][r] is
// how many KV tokens of request b rank r stores (vLLM's get_dcp_local_seq_lens with
// dcp_rank=None; the rank axis is kept for a group of 1). The group's parameters are checked
// before the result is allocated. Since 1.1.
//
// See docs/api/get_dcp_local_seq_lens.md.
func DCPLocalSeqLensAllRanks[T Index](seqLens []T, dcpSize, interleaveSize int64) ([][]T, error) {
	f := newFrame("cattn_get_dcp_local_seq_lens", "DCPLocalSeqLensAllRanks", dcpHelperRenames...)
	defer f.free()
	// The empty batch checks dcpSize and interleaveSize without a result to allocate.
	if err := f.dcpCall(IndexTensor([]T{}), dcpSize, DCPAllRanks, interleaveSize,
		IndexTensor([]T{}, 0, dcpSize)); err != nil {
		return nil, err
	}
	flat := make([]T, int64(len(seqLens))*dcpSize)
	if err := f.dcpCall(IndexTensor(seqLens), dcpSize, DCPAllRanks, interleaveSize,
		IndexTensor(flat, int64(len(seqLens)), dcpSize)); err != nil {
		return nil, err
	}
	return splitRows(flat, int(dcpSize)), nil
}

func (f *frame) dcpCall(seqLens *Tensor, size, rank, interleave int64, out *Tensor) error {
	seq, err := f.tensor("args->seq_lens", seqLens)
	if err != nil {
		return err
	}
	o, err := f.tensor("args->out", out)
	if err != nil {
		return err
	}
	return f.getDCPLocalSeqLens(seq, size, rank, interleave, o, false, 0)
}

func (f *frame) getDCPLocalSeqLens(seqLens cTensor, size, rank, interleave int64, out cTensor,
	preserveShape bool, stream Stream) error {
	a := cArgs[C.cattn_dcp_local_seq_lens_args_t](f)
	a.seq_lens = seqLens
	a.dcp_size = C.int64_t(size)
	a.dcp_rank = C.int64_t(rank)
	a.dcp_kv_cache_interleave_size = C.int64_t(interleave)
	a.out = out
	a.shape_mode = C.CATTN_DCP_SHAPE_SQUEEZE
	if preserveShape {
		a.shape_mode = C.CATTN_DCP_SHAPE_PRESERVE
	}
	setAddr(&a.stream, uintptr(stream))
	return f.status(cGetDCPLocalSeqLens(a, f.msg))
}
