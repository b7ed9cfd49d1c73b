// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// The step inputs (since 1.2): PreparePosSeqLens, GatherBlockTables, ComputeSlotMappings,
// CombineSampledAndDraftTokens and StepBatchCheck compute what an engine builds every step
// before attention from the scheduler's output. They share the header's padding contract: a
// batch has B rows, the first NumReqs live ([1] tensor; nil means B) and the rest padding, and
// a padded row is an empty request in every product - its query_start_loc entry repeats the
// total, its seq_len is 0, its gathered block-table row is 0, it owns no token and no logit;
// every token past the live total has position 0 and slot PadSlotID. Inputs of padded rows
// are never read. Each call takes int32/int64 tensors, all on the host or all on one GPU.

// PreparePosSeqLensArgs are the arguments of PreparePosSeqLens
// (cattn_prepare_pos_seq_lens_args_t). B is NumScheduledTokens' length.
type PreparePosSeqLensArgs struct {
	NumScheduledTokens *Tensor // in: [B] query length of each batch row
	IdxMapping         *Tensor // in: [B] persistent row of each batch row
	NumComputedTokens  *Tensor // in: [R] per persistent row
	NumReqs            *Tensor // in, may be nil: [1] live rows in [0, B] (host: refused outside; device: clamped); nil = B
	QueryStartLoc      *Tensor // out: [B + 1]
	SeqLens            *Tensor // out: [B]
	// Positions: out, may be nil: [T_cap], at least the live total; 0 past the total.
	Positions              *Tensor
	BatchNumComputedTokens *Tensor // out, may be nil: [B]
	Stream                 Stream
}

// PreparePosSeqLens computes a step's query_start_loc (the running sum of the live rows'
// scheduled tokens), seq_lens (NumComputedTokens[IdxMapping[b]] + NumScheduledTokens[b]),
// positions and the batch's num_computed_tokens (cattn_prepare_pos_seq_lens), padded rows per
// the padding contract: vLLM's host cumsum plus model runner v2's prepare_pos_seq_lens.
// Host tensors run synchronously; CUDA tensors enqueue one kernel on Stream (no sync,
// capturable). Errors: StatusInvalidArgument (a nil or malformed tensor, mixed devices, an
// overlap; on the host a value out of range, such as an IdxMapping entry outside the
// persistent rows), StatusInsufficientSize (an output shorter than its shape; on the host
// Positions shorter than the total), StatusNotSupported (CUDA tensors in a CPU-only build),
// StatusCUDAError. Since 1.2.
//
// See docs/api/step_inputs.md.
func PreparePosSeqLens(args PreparePosSeqLensArgs) error {
	f := newFrame("cattn_prepare_pos_seq_lens", "PreparePosSeqLens")
	defer f.free()
	var cs [8]cTensor
	if err := f.tensorsInto(cs[:], preparePosSeqLensFields[:], []*Tensor{args.NumScheduledTokens,
		args.IdxMapping, args.NumComputedTokens, args.NumReqs, args.QueryStartLoc, args.SeqLens,
		args.Positions, args.BatchNumComputedTokens}); err != nil {
		return err
	}
	return f.preparePosSeqLens(cs, args.Stream)
}

// The C names of PreparePosSeqLensArgs' tensors, in cattn_prepare_pos_seq_lens_args_t order.
var preparePosSeqLensFields = [8]string{"args->num_scheduled_tokens", "args->idx_mapping",
	"args->num_computed_tokens", "args->num_reqs", "args->query_start_loc", "args->seq_lens",
	"args->positions", "args->batch_num_computed_tokens"}

// PreparedStepInputs is what PreparePosSeqLensHost returns, of the element type of its slices.
type PreparedStepInputs[T Index] struct {
	QueryStartLoc     []T // [B + 1]
	SeqLens           []T // [B]
	Positions         []T // one per live token: QueryStartLoc[B] entries
	NumComputedTokens []T // [B]: the batch's num_computed_tokens
}

// PreparePosSeqLensHost is the one-call host form of PreparePosSeqLens: a step's
// query_start_loc, seq_lens, positions (one per live token) and num_computed_tokens from the
// scheduled counts ([B]), the persistent row of each batch row ([B]) and each persistent row's
// computed tokens ([R]). numReqs is the live rows (nil means B; in [0, B]: the host path refuses another value, the device clamps it).
// Positions is as long as the live tokens StepInputsSize counts. Since 1.2.
//
// See docs/api/step_inputs.md.
func PreparePosSeqLensHost[T Index](numScheduledTokens, idxMapping, numComputedTokens []T,
	numReqs *int64) (PreparedStepInputs[T], error) {
	f := newFrame("cattn_prepare_pos_seq_lens", "PreparePosSeqLensHost",
		"args->num_scheduled_tokens", "numScheduledTokens", "args->idx_mapping", "idxMapping",
		"args->num_computed_tokens", "numComputedTokens", "args->num_reqs", "numReqs",
		"args->query_start_loc", "the result", "args->seq_lens", "the result",
		"args->positions", "the result", "args->batch_num_computed_tokens", "the result")
	defer f.free()
	b := len(numScheduledTokens)
	r := PreparedStepInputs[T]{QueryStartLoc: make([]T, b+1), SeqLens: make([]T, b),
		NumComputedTokens: make([]T, b)}
	in := [4]*Tensor{IndexTensor(numScheduledTokens), IndexTensor(idxMapping),
		IndexTensor(numComputedTokens), numReqsTensor(numReqs)}
	// libcattn counts the live rows' tokens (its size query); Positions is sized from that,
	// and one call writes everything.
	var sizes [4]cTensor
	if err := f.tensorsInto(sizes[:], stepInputsSizeFields[:], []*Tensor{in[0], nil, in[3],
		nil}); err != nil {
		return PreparedStepInputs[T]{}, err
	}
	n, err := f.stepInputsSize(nil, sizes)
	if err != nil {
		return PreparedStepInputs[T]{}, err
	}
	r.Positions = make([]T, n.NumTokens)
	var cs [8]cTensor
	if err := f.tensorsInto(cs[:], preparePosSeqLensFields[:], []*Tensor{in[0], in[1], in[2],
		in[3], IndexTensor(r.QueryStartLoc), IndexTensor(r.SeqLens), IndexTensor(r.Positions),
		IndexTensor(r.NumComputedTokens)}); err != nil {
		return PreparedStepInputs[T]{}, err
	}
	if err := f.preparePosSeqLens(cs, 0); err != nil {
		return PreparedStepInputs[T]{}, err
	}
	return r, nil
}

// numReqsTensor is the [1] int64 host tensor of a one-call helper's numReqs (nil for nil).
func numReqsTensor(numReqs *int64) *Tensor {
	if numReqs == nil {
		return nil
	}
	return Int64Tensor([]int64{*numReqs})
}

// t holds the tensors in cattn_prepare_pos_seq_lens_args_t order (preparePosSeqLensFields).
func (f *frame) preparePosSeqLens(t [8]cTensor, stream Stream) error {
	a := cArgs[C.cattn_prepare_pos_seq_lens_args_t](f)
	cPreparePosSeqLensArgsInit(a)
	a.num_scheduled_tokens, a.idx_mapping, a.num_computed_tokens, a.num_reqs = t[0], t[1], t[2], t[3]
	a.query_start_loc, a.seq_lens, a.positions, a.batch_num_computed_tokens = t[4], t[5], t[6], t[7]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cPreparePosSeqLens(a, f.msg))
}
