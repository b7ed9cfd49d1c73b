// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// EagleExpandParams are the scalars of CopyAndExpandEagleInputs (those of
// cattn_copy_and_expand_eagle_inputs_args_t). The zero value is the header's initialiser:
// token ids 0, one padding slot, no limit, no shift.
type EagleExpandParams struct {
	PaddingTokenID          int64 // the token of each request's rejected tail
	ParallelDraftingTokenID int64 // the token of padding slots 2 to P
	// NumPaddingSlotsPerRequest is P >= 1, the bonus token plus the parallel drafts; 0 means
	// the header's default (1).
	NumPaddingSlotsPerRequest int64
	// MaxTokensPerRequest: a request's output tokens from this index on are not written
	// (vLLM's num_blocks * BLOCK_SIZE_TOKENS); 0 means no limit.
	MaxTokensPerRequest int64
	ShiftInputIDs       bool // drop each request's first token (s = 1)
}

// CopyAndExpandEagleInputsArgs are the arguments of CopyAndExpandEagleInputs
// (cattn_copy_and_expand_eagle_inputs_args_t). B is NextTokenIDs' length, P
// NumPaddingSlotsPerRequest, s 1 with ShiftInputIDs (else 0), and the output has n_out =
// QueryStartLoc[B] + B * (P - s) tokens.
type CopyAndExpandEagleInputsArgs struct {
	EagleExpandParams
	TargetTokenIDs         *Tensor // in: [T] the verified batch's tokens
	TargetPositions        *Tensor // in: [T'] their positions
	NextTokenIDs           *Tensor // in: [B] each request's bonus token
	QueryStartLoc          *Tensor // in: [B + 1]
	QueryEndLoc            *Tensor // in: [B] each request's last valid token
	OutInputIDs            *Tensor // out: [>= n_out]
	OutPositions           *Tensor // out: [>= n_out]
	OutIsRejectedTokenMask *Tensor // out, may be nil: [>= n_out] flags
	OutIsMaskedTokenMask   *Tensor // out, may be nil: [>= n_out] flags
	OutNewTokenIndices     *Tensor // out, may be nil: [>= B * P]
	// OutHiddenStateMapping: out, may be nil: [>= QueryStartLoc[B]]; written with
	// ShiftInputIDs only.
	OutHiddenStateMapping *Tensor
	Stream                Stream
}

// CopyAndExpandEagleInputs builds the drafter's inputs from a verified batch with parallel
// drafting (cattn_copy_and_expand_eagle_inputs, vLLM's copy_and_expand_eagle_inputs): request
// i owns the output tokens [QueryStartLoc[i] + i * (P - s), + q_i + P - s): its v valid tokens
// (from QueryStartLoc[i] + s), the bonus NextTokenIDs[i], P - 1 parallel-drafting tokens
// (masked), then its rejected tail (PaddingTokenID, position 0, rejected); positions count up
// from the request's first target position. OutNewTokenIndices[i * P + k] is the output index
// of new token k; with ShiftInputIDs, OutHiddenStateMapping maps each input token to its
// output index. The host refuses a QueryEndLoc outside its request, a request without tokens
// and a QueryStartLoc past the targets. Errors: as EagleStepUpdateSlotMappingAndMetadata.
// Since 1.2.
//
// See docs/api/spec_decode.md.
func CopyAndExpandEagleInputs(args CopyAndExpandEagleInputsArgs) error {
	f := newFrame("cattn_copy_and_expand_eagle_inputs", "CopyAndExpandEagleInputs")
	defer f.free()
	var cs [11]cTensor
	if err := f.tensorsInto(cs[:], eagleExpandFields[:], []*Tensor{args.TargetTokenIDs,
		args.TargetPositions, args.NextTokenIDs, args.QueryStartLoc, args.QueryEndLoc,
		args.OutInputIDs, args.OutPositions, args.OutIsRejectedTokenMask,
		args.OutIsMaskedTokenMask, args.OutNewTokenIndices,
		args.OutHiddenStateMapping}); err != nil {
		return err
	}
	return f.copyAndExpandEagleInputs(&args.EagleExpandParams, cs, args.Stream)
}

// The C names of CopyAndExpandEagleInputsArgs' tensors, in
// cattn_copy_and_expand_eagle_inputs_args_t order.
var eagleExpandFields = [11]string{"args->target_token_ids", "args->target_positions",
	"args->next_token_ids", "args->query_start_loc", "args->query_end_loc",
	"args->out_input_ids", "args->out_positions", "args->out_is_rejected_token_mask",
	"args->out_is_masked_token_mask", "args->out_new_token_indices",
	"args->out_hidden_state_mapping"}

// EagleExpandedInputs is what CopyAndExpandEagleInputsHost returns. Entries a request does not
// write (those past MaxTokensPerRequest) are 0 and false.
type EagleExpandedInputs[T Index] struct {
	InputIDs            []T    // [n_out] the drafter's tokens
	Positions           []T    // [n_out] their positions
	IsRejectedTokenMask []bool // [n_out] the rejected tails' tokens
	IsMaskedTokenMask   []bool // [n_out] the parallel-drafting tokens
	NewTokenIndices     []T    // [B * P] the output index of each request's new tokens
	// HiddenStateMapping: [QueryStartLoc[B]] the output index of each input token, with
	// ShiftInputIDs; nil without.
	HiddenStateMapping []T
}

// CopyAndExpandEagleInputsHost is the one-call host form of CopyAndExpandEagleInputs: the
// drafter's inputs from the verified batch queryStartLoc ([B + 1]) with its tokens
// (targetTokenIDs), their positions (targetPositions), each request's bonus token
// (nextTokenIDs, [B]) and last valid token (queryEndLoc, [B]). The outputs are sized from
// queryStartLoc and params (n_out tokens), every one computed. Since 1.2.
//
// See docs/api/spec_decode.md.
func CopyAndExpandEagleInputsHost[T Index](params EagleExpandParams, targetTokenIDs,
	targetPositions, nextTokenIDs, queryStartLoc, queryEndLoc []T) (EagleExpandedInputs[T], error) {
	f := newFrame("cattn_copy_and_expand_eagle_inputs", "CopyAndExpandEagleInputsHost",
		"args->padding_token_id", "params.PaddingTokenID", "args->parallel_drafting_token_id",
		"params.ParallelDraftingTokenID", "args->num_padding_slots_per_request",
		"params.NumPaddingSlotsPerRequest", "args->max_tokens_per_request",
		"params.MaxTokensPerRequest", "args->shift_input_ids", "params.ShiftInputIDs",
		"args->target_token_ids", "targetTokenIDs", "args->target_positions",
		"targetPositions", "args->next_token_ids", "nextTokenIDs", "args->query_start_loc",
		"queryStartLoc", "args->query_end_loc", "queryEndLoc", "args->out_input_ids",
		"the result", "args->out_positions", "the result", "args->out_is_rejected_token_mask",
		"the result", "args->out_is_masked_token_mask", "the result",
		"args->out_new_token_indices", "the result", "args->out_hidden_state_mapping",
		"the result")
	defer f.free()
	// n_out = QueryStartLoc[B] + B * (P - s), with the header's P when it is 0. Values libcattn
	// refuses get what room they imply (none where they are negative, or where the sizes pass
	// what memory can hold), and libcattn names them.
	b := numReqs(queryStartLoc)
	p := params.NumPaddingSlotsPerRequest
	if p == 0 {
		p = 1
	}
	var s int64
	if params.ShiftInputIDs {
		s = 1
	}
	total := max(lastOf(queryStartLoc), 0)
	nOut, okOut := sizeOf(total, b, p-s)
	nNew, okNew := sizeOf(0, b, p)
	if !okOut || !okNew {
		nOut, nNew = 0, 0
	}
	var r EagleExpandedInputs[T]
	r.InputIDs, r.Positions = make([]T, nOut), make([]T, nOut)
	rejected, masked := make([]byte, nOut), make([]byte, nOut)
	r.NewTokenIndices = make([]T, nNew)
	var hidden *Tensor
	if params.ShiftInputIDs {
		r.HiddenStateMapping = make([]T, total)
		hidden = IndexTensor(r.HiddenStateMapping)
	}
	var cs [11]cTensor
	if err := f.tensorsInto(cs[:], eagleExpandFields[:], []*Tensor{IndexTensor(targetTokenIDs),
		IndexTensor(targetPositions), IndexTensor(nextTokenIDs), IndexTensor(queryStartLoc),
		IndexTensor(queryEndLoc), IndexTensor(r.InputIDs), IndexTensor(r.Positions),
		BytesTensor(rejected, Bool, nOut), BytesTensor(masked, Bool, nOut),
		IndexTensor(r.NewTokenIndices), hidden}); err != nil {
		return EagleExpandedInputs[T]{}, err
	}
	if err := f.copyAndExpandEagleInputs(&params, cs, 0); err != nil {
		return EagleExpandedInputs[T]{}, err
	}
	r.IsRejectedTokenMask, r.IsMaskedTokenMask = boolsOf(rejected), boolsOf(masked)
	return r, nil
}

// sizeOf returns a + b * c, clamped at 0 from below; ok is false past 2^40 (no allocation of
// that many elements can succeed, so the helper leaves the outputs empty and libcattn reports
// the value at fault).
func sizeOf(a, b, c int64) (int64, bool) {
	const limit = int64(1) << 40
	a, b, c = max(a, 0), max(b, 0), max(c, 0)
	if a > limit || (b > 0 && c > (limit-a)/b) {
		return 0, false
	}
	return a + b*c, true
}

// t holds the tensors in cattn_copy_and_expand_eagle_inputs_args_t order (eagleExpandFields).
// A zero NumPaddingSlotsPerRequest keeps the header's default.
func (f *frame) copyAndExpandEagleInputs(p *EagleExpandParams, t [11]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_copy_and_expand_eagle_inputs_args_t](f)
	cCopyAndExpandEagleInputsArgsInit(a)
	a.padding_token_id = C.int64_t(p.PaddingTokenID)
	a.parallel_drafting_token_id = C.int64_t(p.ParallelDraftingTokenID)
	if p.NumPaddingSlotsPerRequest != 0 {
		a.num_padding_slots_per_request = C.int64_t(p.NumPaddingSlotsPerRequest)
	}
	a.max_tokens_per_request = C.int64_t(p.MaxTokensPerRequest)
	a.shift_input_ids = b2i(p.ShiftInputIDs)
	a.target_token_ids, a.target_positions, a.next_token_ids = t[0], t[1], t[2]
	a.query_start_loc, a.query_end_loc, a.out_input_ids, a.out_positions = t[3], t[4], t[5], t[6]
	a.out_is_rejected_token_mask, a.out_is_masked_token_mask = t[7], t[8]
	a.out_new_token_indices, a.out_hidden_state_mapping = t[9], t[10]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cCopyAndExpandEagleInputs(a, f.msg))
}
