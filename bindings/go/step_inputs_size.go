// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// StepInputsSizeArgs are the arguments of StepInputsSize (cattn_step_inputs_size_args_t): host
// int32/int64 tensors of one batch of B rows, exactly one of NumScheduledTokens and
// QueryStartLoc given.
type StepInputsSizeArgs struct {
	// NumNewSampledTokens is the logits per row besides its drafts, 0 or 1, as
	// CombineSampledAndDraftTokens' is; nil means the header's default (1, vLLM's).
	NumNewSampledTokens *int64
	NumScheduledTokens  *Tensor // in: host [B], as PreparePosSeqLens reads it; or nil with QueryStartLoc
	QueryStartLoc       *Tensor // in: host [B + 1] from 0, as the combine call reads it; or nil
	NumReqs             *Tensor // in, may be nil: host [1] live rows in [0, B] (refused outside); nil = B
	NumDraftTokens      *Tensor // in, may be nil: host [B] drafts per row; nil = none
}

// StepInputsTotals is what StepInputsSize reports: the lengths a step's outputs need.
type StepInputsTotals struct {
	NumTokens int64 // the live rows' tokens: the entries of positions and slot mappings
	NumLogits int64 // their logits: the entries of logits indices and the expanded map
}

// The C names of StepInputsSizeArgs' tensors, in cattn_step_inputs_size_args_t order.
var stepInputsSizeFields = [4]string{"args->num_scheduled_tokens", "args->query_start_loc",
	"args->num_reqs", "args->num_draft_tokens"}

// StepInputsSize counts the live rows' tokens and logits as the step-input calls count them
// (cattn_step_inputs_size), from host tensors, so that outputs are sized by libcattn rather
// than by arithmetic of the caller's; the step-input Host helpers size their results with it.
// Errors: StatusInvalidArgument for a malformed argument, both or neither of
// NumScheduledTokens and QueryStartLoc, a device tensor, or a value the calls refuse (a
// negative count, NumReqs outside [0, B], a decreasing QueryStartLoc, a total past int64).
// Since 1.2.
//
// See docs/api/step_inputs.md.
func StepInputsSize(args StepInputsSizeArgs) (StepInputsTotals, error) {
	f := newFrame("cattn_step_inputs_size", "StepInputsSize")
	defer f.free()
	var cs [4]cTensor
	if err := f.tensorsInto(cs[:], stepInputsSizeFields[:], []*Tensor{args.NumScheduledTokens,
		args.QueryStartLoc, args.NumReqs, args.NumDraftTokens}); err != nil {
		return StepInputsTotals{}, err
	}
	return f.stepInputsSize(args.NumNewSampledTokens, cs)
}

// t holds the tensors in cattn_step_inputs_size_args_t order (stepInputsSizeFields); a nil
// numNewSampledTokens keeps the header's default.
func (f *frame) stepInputsSize(numNewSampledTokens *int64, t [4]cTensor) (StepInputsTotals, error) {
	a := cArgs[C.cattn_step_inputs_size_args_t](f)
	cStepInputsSizeArgsInit(a)
	if numNewSampledTokens != nil {
		a.num_new_sampled_tokens = C.int64_t(*numNewSampledTokens)
	}
	a.num_scheduled_tokens, a.query_start_loc, a.num_reqs, a.num_draft_tokens = t[0], t[1], t[2], t[3]
	if err := f.status(cStepInputsSize(a, f.msg)); err != nil {
		return StepInputsTotals{}, err
	}
	return StepInputsTotals{NumTokens: int64(a.num_tokens), NumLogits: int64(a.num_logits)}, nil
}
