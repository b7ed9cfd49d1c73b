// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// UpdateNumComputedTokensForBatchChangeArgs are the arguments of
// UpdateNumComputedTokensForBatchChange (cattn_update_num_computed_tokens_for_batch_change_args_t).
// n is PrevPositions' length, n_prev the previous batch's rows.
type UpdateNumComputedTokensForBatchChangeArgs struct {
	NumComputedTokens      *Tensor // in and out: [M >= n]; [0, n) rewritten
	NumAcceptedTokens      *Tensor // in and out: [n]
	PrevPositions          *Tensor // in: [n] each row's row in the previous batch, negative = new
	ValidSampledTokenCount *Tensor // in: [n_prev]
	PrevNumDraftTokens     *Tensor // in: [n_prev]
	CPUNumComputedTokens   *Tensor // in: [n] the scheduler's counts
	Stream                 Stream
}

// UpdateNumComputedTokensForBatchChange carries the async-scheduling counts across a batch
// change (cattn_update_num_computed_tokens_for_batch_change, vLLM's
// update_num_computed_tokens_for_batch_change): row k with g = PrevPositions[k] >= 0 and
// PrevNumDraftTokens[g] > 0 gets NumComputedTokens[g] + ValidSampledTokenCount[g] (the value
// before this call: a reordering reads the previous layout) and NumAcceptedTokens[k] =
// ValidSampledTokenCount[g]; any other row gets CPUNumComputedTokens[k] and keeps its accepted
// count. The host refuses a g past M or n_prev; the device treats such a row as new and takes
// at most 8192 rows (StatusNotSupported past them). Errors: as
// EagleStepUpdateSlotMappingAndMetadata. Since 1.2.
//
// See docs/api/spec_decode.md.
func UpdateNumComputedTokensForBatchChange(args UpdateNumComputedTokensForBatchChangeArgs) error {
	f := newFrame("cattn_update_num_computed_tokens_for_batch_change",
		"UpdateNumComputedTokensForBatchChange")
	defer f.free()
	var cs [6]cTensor
	if err := f.tensorsInto(cs[:], batchChangeFields[:], []*Tensor{args.NumComputedTokens,
		args.NumAcceptedTokens, args.PrevPositions, args.ValidSampledTokenCount,
		args.PrevNumDraftTokens, args.CPUNumComputedTokens}); err != nil {
		return err
	}
	return f.updateNumComputedTokensForBatchChange(cs, args.Stream)
}

// The C names of UpdateNumComputedTokensForBatchChangeArgs' tensors, in
// cattn_update_num_computed_tokens_for_batch_change_args_t order.
var batchChangeFields = [6]string{"args->num_computed_tokens", "args->num_accepted_tokens",
	"args->prev_positions", "args->valid_sampled_token_count", "args->prev_num_draft_tokens",
	"args->cpu_num_computed_tokens"}

// UpdateNumComputedTokensForBatchChangeHost is the one-call host form of
// UpdateNumComputedTokensForBatchChange: numComputedTokens ([M >= n]) and numAcceptedTokens
// ([n]) are updated in place for the batch of n rows whose previous rows are prevPositions
// ([n]), from the previous batch's valid sampled tokens and drafts ([n_prev] each) and the
// scheduler's counts (cpuNumComputedTokens, [n]). Since 1.2.
//
// See docs/api/spec_decode.md.
func UpdateNumComputedTokensForBatchChangeHost[T Index](numComputedTokens, numAcceptedTokens,
	prevPositions, validSampledTokenCount, prevNumDraftTokens, cpuNumComputedTokens []T) error {
	f := newFrame("cattn_update_num_computed_tokens_for_batch_change",
		"UpdateNumComputedTokensForBatchChangeHost",
		"args->num_computed_tokens", "numComputedTokens", "args->num_accepted_tokens",
		"numAcceptedTokens", "args->prev_positions", "prevPositions",
		"args->valid_sampled_token_count", "validSampledTokenCount",
		"args->prev_num_draft_tokens", "prevNumDraftTokens", "args->cpu_num_computed_tokens",
		"cpuNumComputedTokens")
	defer f.free()
	var cs [6]cTensor
	if err := f.tensorsInto(cs[:], batchChangeFields[:], []*Tensor{
		IndexTensor(numComputedTokens), IndexTensor(numAcceptedTokens),
		IndexTensor(prevPositions), IndexTensor(validSampledTokenCount),
		IndexTensor(prevNumDraftTokens), IndexTensor(cpuNumComputedTokens)}); err != nil {
		return err
	}
	return f.updateNumComputedTokensForBatchChange(cs, 0)
}

// t holds the tensors in cattn_update_num_computed_tokens_for_batch_change_args_t order
// (batchChangeFields).
func (f *frame) updateNumComputedTokensForBatchChange(t [6]cTensor, stream Stream) error {
	a := cArgs[C.cattn_update_num_computed_tokens_for_batch_change_args_t](f)
	cUpdateNumComputedTokensForBatchChangeArgsInit(a)
	a.num_computed_tokens, a.num_accepted_tokens, a.prev_positions = t[0], t[1], t[2]
	a.valid_sampled_token_count, a.prev_num_draft_tokens = t[3], t[4]
	a.cpu_num_computed_tokens = t[5]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cUpdateNumComputedTokensForBatchChange(a, f.msg))
}
