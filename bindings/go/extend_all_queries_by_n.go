// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// ExtendAllQueriesByNArgs are the arguments of ExtendAllQueriesByN
// (cattn_extend_all_queries_by_n_args_t).
type ExtendAllQueriesByNArgs struct {
	// Metadata is read: QueryStartLoc(CPU), SeqLens(CPU) and the scalars.
	Metadata *CommonAttnMetadata
	// N is the number of tokens added to every request, >= 0; nil means 1 as
	// CATTN_EXTEND_ALL_QUERIES_BY_N_ARGS_INIT and vLLM's extend_all_queries_by_1
	// (cattn.Ptr[int64](n) for another).
	N *int64
	// NewSlotMapping becomes Out.SlotMapping (borrowed, not read); may be nil.
	NewSlotMapping *Tensor
	// Out: the caller sets QueryStartLoc and SeqLens (and QueryStartLocCPU, SeqLensCPU exactly
	// when Metadata has them) to tensors of the input's shapes; they may be the input tensors
	// (in place), and Out may be Metadata itself. The call writes their data, every scalar
	// and the remaining tensor fields (copied from Metadata).
	Out    *CommonAttnMetadata
	Stream Stream // CUDA tensors only

	// Since 1.1: the DCP group of Metadata's DCPLocalSeqLens(CPU), needed only when it has
	// them (Out's DCP tensors then receive the extended batch's lengths). DCPSize 0 = not
	// given; DCPInterleaveSize 0 means 1.
	DCPSize, DCPRank, DCPInterleaveSize int64
}

// ExtendAllQueriesByN extends every request's query and sequence by N tokens, vLLM's
// extend_all_queries_by_1 generalised (cattn_extend_all_queries_by_n): QueryStartLoc[i] +=
// i * N, SeqLens += N, NumActualTokens += N * B, MaxQueryLen and MaxSeqLen += N, SlotMapping =
// NewSlotMapping. Unlike vLLM it also updates the SeqLensCPU mirror. Since 1.1 it adds N to
// SeqLensCPUUpperBound, rewrites the DCP lengths from the extended ones and writes the
// extended batch's positions into Out.Positions when set (nil: dropped), where vLLM leaves
// them stale. On failure nothing is written, Out included.
//
// See docs/api/extend_all_queries_by_n.md.
func ExtendAllQueriesByN(args ExtendAllQueriesByNArgs) error {
	f := newFrame("cattn_extend_all_queries_by_n", "ExtendAllQueriesByN",
		"args->dcp_kv_cache_interleave_size", "args.DCPInterleaveSize")
	defer f.free()
	in, err := f.metadata("args->metadata", args.Metadata)
	if err != nil {
		return err
	}
	slots, err := f.tensor("args->new_slot_mapping", args.NewSlotMapping)
	if err != nil {
		return err
	}
	out, err := f.metadata("args->out", args.Out)
	if err != nil {
		return err
	}
	interleave := args.DCPInterleaveSize
	if interleave == 0 {
		interleave = 1
	}
	if err := f.extendAllQueriesByN(in, orDefault(args.N, 1), slots, out, args.DCPSize,
		args.DCPRank, interleave, args.Stream); err != nil {
		return err
	}
	return f.readMetadata(out, args.Out)
}

// ExtendAllQueriesByNOf extends, in one call, every request of the batch queryStartLoc
// ([B + 1]) and seqLens ([B]) describe by n tokens (n >= 0, passed as given), vLLM's
// extend_all_queries_by_1 for n = 1: it returns the new query_start_loc (entry i moved by
// i * n) and sequence lengths (each + n); the inputs are not changed. Since 1.1.
//
// See docs/api/extend_all_queries_by_n.md.
func ExtendAllQueriesByNOf[T Index](queryStartLoc, seqLens []T, n int64) (newQueryStartLoc,
	newSeqLens []T, err error) {
	f := newFrame("cattn_extend_all_queries_by_n", "ExtendAllQueriesByNOf",
		"args->metadata->query_start_loc", "queryStartLoc", "args->metadata->seq_lens",
		"seqLens", "args->metadata", "the batch", "args->out->query_start_loc",
		"the new query_start_loc", "args->out->seq_lens", "the new seq_lens", "args->out",
		"the result", "args->n", "n")
	defer f.free()
	newQueryStartLoc, newSeqLens = make([]T, len(queryStartLoc)), make([]T, len(seqLens))
	in := &CommonAttnMetadata{QueryStartLoc: IndexTensor(queryStartLoc),
		SeqLens: IndexTensor(seqLens), NumReqs: int64(len(seqLens)),
		NumActualTokens: lastOf(queryStartLoc), MaxQueryLen: longestQuery(queryStartLoc)}
	out := &CommonAttnMetadata{QueryStartLoc: IndexTensor(newQueryStartLoc),
		SeqLens: IndexTensor(newSeqLens)}
	cin, err := f.metadata("args->metadata", in)
	if err != nil {
		return nil, nil, err
	}
	cout, err := f.metadata("args->out", out)
	if err != nil {
		return nil, nil, err
	}
	if err := f.extendAllQueriesByN(cin, n, nil, cout, 0, 0, 1, 0); err != nil {
		return nil, nil, err
	}
	return newQueryStartLoc, newSeqLens, nil
}

func (f *frame) extendAllQueriesByN(in cMetadata, n int64, slots cTensor, out cMetadata,
	dcpSize, dcpRank, dcpInterleave int64, stream Stream) error {
	a := cArgs[C.cattn_extend_all_queries_by_n_args_t](f)
	a.metadata = in
	a.n = C.int64_t(n)
	a.new_slot_mapping = slots
	a.out = out
	a.dcp_size = C.int64_t(dcpSize)
	a.dcp_rank = C.int64_t(dcpRank)
	a.dcp_kv_cache_interleave_size = C.int64_t(dcpInterleave)
	setAddr(&a.stream, uintptr(stream))
	return f.status(cExtendAllQueriesByN(a, f.msg))
}
