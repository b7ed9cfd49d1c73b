// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// EaglePrepareInputsPaddedArgs are the arguments of EaglePrepareInputsPadded
// (cattn_eagle_prepare_inputs_padded_args_t). B is CuNumDraftTokens' length.
type EaglePrepareInputsPaddedArgs struct {
	CuNumDraftTokens        *Tensor // in: [B] the INCLUSIVE running sum of the drafts
	ValidSampledTokensCount *Tensor // in: [B] accepted drafts + 1 (0: discarded)
	QueryStartLoc           *Tensor // in: [>= B + 1] the verified batch's
	TokenIndicesToSample    *Tensor // out: [>= B]
	NumRejectedTokens       *Tensor // out: [>= B]
	Stream                  Stream
}

// EaglePrepareInputsPadded computes, per request of a verified batch, the token the drafter
// samples from and the drafts rejected (cattn_eagle_prepare_inputs_padded, vLLM's
// eagle_prepare_inputs_padded): d = the request's drafts (from the inclusive sum), rejected =
// d + 1 - valid when d > 0, else 0, and the token to sample QueryStartLoc[i + 1] - 1 -
// rejected. Entries from B on are left as they are. Errors: as
// EagleStepUpdateSlotMappingAndMetadata, and on the host StatusInvalidArgument for a result
// that does not fit its output's dtype. Since 1.2.
//
// See docs/api/spec_decode.md.
func EaglePrepareInputsPadded(args EaglePrepareInputsPaddedArgs) error {
	f := newFrame("cattn_eagle_prepare_inputs_padded", "EaglePrepareInputsPadded")
	defer f.free()
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eaglePrepareInputsFields[:], []*Tensor{args.CuNumDraftTokens,
		args.ValidSampledTokensCount, args.QueryStartLoc, args.TokenIndicesToSample,
		args.NumRejectedTokens}); err != nil {
		return err
	}
	return f.eaglePrepareInputsPadded(cs, args.Stream)
}

// The C names of EaglePrepareInputsPaddedArgs' tensors, in
// cattn_eagle_prepare_inputs_padded_args_t order.
var eaglePrepareInputsFields = [5]string{"args->cu_num_draft_tokens",
	"args->valid_sampled_tokens_count", "args->query_start_loc",
	"args->token_indices_to_sample", "args->num_rejected_tokens"}

// EagleSampleIndices is what EaglePrepareInputsPaddedHost returns: [B] each.
type EagleSampleIndices[T Index] struct {
	TokenIndicesToSample []T // the token of each request the drafter samples from
	NumRejectedTokens    []T // the request's rejected drafts
}

// EaglePrepareInputsPaddedHost is the one-call host form of EaglePrepareInputsPadded: the
// token to sample and the rejected drafts of each request of the verified batch
// queryStartLoc ([B + 1]), from the inclusive running sum of its drafts ([B]) and its valid
// sampled tokens ([B]). Since 1.2.
//
// See docs/api/spec_decode.md.
func EaglePrepareInputsPaddedHost[T Index](cuNumDraftTokens, validSampledTokensCount,
	queryStartLoc []T) (EagleSampleIndices[T], error) {
	f := newFrame("cattn_eagle_prepare_inputs_padded", "EaglePrepareInputsPaddedHost",
		"args->cu_num_draft_tokens", "cuNumDraftTokens", "args->valid_sampled_tokens_count",
		"validSampledTokensCount", "args->query_start_loc", "queryStartLoc",
		"args->token_indices_to_sample", "the result", "args->num_rejected_tokens",
		"the result")
	defer f.free()
	b := len(cuNumDraftTokens)
	r := EagleSampleIndices[T]{TokenIndicesToSample: make([]T, b), NumRejectedTokens: make([]T, b)}
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eaglePrepareInputsFields[:], []*Tensor{
		IndexTensor(cuNumDraftTokens), IndexTensor(validSampledTokensCount),
		IndexTensor(queryStartLoc), IndexTensor(r.TokenIndicesToSample),
		IndexTensor(r.NumRejectedTokens)}); err != nil {
		return EagleSampleIndices[T]{}, err
	}
	if err := f.eaglePrepareInputsPadded(cs, 0); err != nil {
		return EagleSampleIndices[T]{}, err
	}
	return r, nil
}

// t holds the tensors in cattn_eagle_prepare_inputs_padded_args_t order
// (eaglePrepareInputsFields).
func (f *frame) eaglePrepareInputsPadded(t [5]cTensor, stream Stream) error {
	a := cArgs[C.cattn_eagle_prepare_inputs_padded_args_t](f)
	cEaglePrepareInputsPaddedArgsInit(a)
	a.cu_num_draft_tokens, a.valid_sampled_tokens_count, a.query_start_loc = t[0], t[1], t[2]
	a.token_indices_to_sample, a.num_rejected_tokens = t[3], t[4]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cEaglePrepareInputsPadded(a, f.msg))
}
