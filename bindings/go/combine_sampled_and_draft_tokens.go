// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// CombineSampledAndDraftTokensArgs are the arguments of CombineSampledAndDraftTokens
// (cattn_combine_sampled_and_draft_tokens_args_t). The token combination's four inputs
// (SeqLens, PrefillLen, LastSampledTokens, DraftTokens) go together, with InputIDs.
type CombineSampledAndDraftTokensArgs struct {
	// NumNewSampledTokens is the logits per row besides its drafts, 0 or 1; nil means the
	// header's default (1, vLLM's).
	NumNewSampledTokens *int64
	QueryStartLoc       *Tensor // in: [B + 1]
	NumReqs             *Tensor // in, may be nil: [1] live rows in [0, B] (host: refused outside; device: clamped); nil = B
	NumDraftTokens      *Tensor // in, may be nil: [B] drafts per row; nil = 0
	// IdxMapping: in, [B]; required by ExpandedIdxMapping and InputIDs, otherwise may be nil.
	IdxMapping        *Tensor
	SeqLens           *Tensor // in: [B] (the token combination)
	PrefillLen        *Tensor // in: [R] prompt length per persistent row (the token combination)
	LastSampledTokens *Tensor // in: [R] (the token combination)
	DraftTokens       *Tensor // in: [R, S], S at least every row's drafts (the token combination)
	LogitsIndices     *Tensor // out: [L_cap], at least the total logits
	CuNumLogits       *Tensor // out, may be nil: [B + 1]
	// ExpandedIdxMapping: out, may be nil: [L_cap], IdxMapping[b] of each logit.
	ExpandedIdxMapping *Tensor
	ExpandedLocalPos   *Tensor // out, may be nil: [L_cap], j of each logit
	// InputIDs: out, may be nil: [T] token ids; each decode row's sampled and draft tokens go
	// in, other entries are left as they are.
	InputIDs *Tensor
	Stream   Stream
}

// CombineSampledAndDraftTokens computes a step's logits (cattn_combine_sampled_and_draft_tokens),
// model runner v2's combine_sampled_and_draft_tokens and expand_idx_mapping: live row b owns
// n_b = NumNewSampledTokens + drafts[b] logits, the last n_b tokens of its query,
// LogitsIndices[cu[b] + j] = qsl[b + 1] - n_b + j, ExpandedIdxMapping IdxMapping[b],
// ExpandedLocalPos j; 0 past the total. With InputIDs, a row past its prompt (seq_len >
// prefill_len) gets its drafts in its last n_b - 1 tokens and, when its first logit is past
// the prompt too, its last sampled token before them. A row with n_b above its query is
// refused on the host, clamped to its query on the device. Errors: as PreparePosSeqLens.
// Since 1.2.
//
// See docs/api/step_inputs.md.
func CombineSampledAndDraftTokens(args CombineSampledAndDraftTokensArgs) error {
	f := newFrame("cattn_combine_sampled_and_draft_tokens", "CombineSampledAndDraftTokens")
	defer f.free()
	var cs [13]cTensor
	if err := f.tensorsInto(cs[:], combineFields[:], []*Tensor{args.QueryStartLoc, args.NumReqs,
		args.NumDraftTokens, args.IdxMapping, args.SeqLens, args.PrefillLen,
		args.LastSampledTokens, args.DraftTokens, args.LogitsIndices, args.CuNumLogits,
		args.ExpandedIdxMapping, args.ExpandedLocalPos, args.InputIDs}); err != nil {
		return err
	}
	return f.combineSampledAndDraftTokens(args.NumNewSampledTokens, cs, args.Stream)
}

// The C names of CombineSampledAndDraftTokensArgs' tensors, in
// cattn_combine_sampled_and_draft_tokens_args_t order.
var combineFields = [13]string{"args->query_start_loc", "args->num_reqs",
	"args->num_draft_tokens", "args->idx_mapping", "args->seq_lens", "args->prefill_len",
	"args->last_sampled_tokens", "args->draft_tokens", "args->logits_indices",
	"args->cu_num_logits", "args->expanded_idx_mapping", "args->expanded_local_pos",
	"args->input_ids"}

// StepLogits is what CombineSampledAndDraftTokensHost returns, of the element type of its
// slices: one entry per logit in LogitsIndices, ExpandedIdxMapping and ExpandedLocalPos.
type StepLogits[T Index] struct {
	LogitsIndices      []T // the token index of each logit
	CuNumLogits        []T // [B + 1]: the running sum of the rows' logits
	ExpandedIdxMapping []T // the persistent row of each logit's request (nil without idxMapping)
	ExpandedLocalPos   []T // the position of each logit within its request's logits
}

// CombineSampledAndDraftTokensHost is the one-call host form of CombineSampledAndDraftTokens:
// the logits of the batch queryStartLoc ([B + 1]) with numReqs live rows (nil means B),
// numDraftTokens drafts per row (nil means none) and numNewSampledTokens (nil means the
// header's default, 1); ExpandedIdxMapping is computed when idxMapping ([B]) is given. The
// logit slices are as long as the total logits StepInputsSize counts. Since 1.2.
//
// See docs/api/step_inputs.md.
func CombineSampledAndDraftTokensHost[T Index](numNewSampledTokens *int64, queryStartLoc []T,
	numReqs *int64, numDraftTokens, idxMapping []T) (StepLogits[T], error) {
	f := newFrame("cattn_combine_sampled_and_draft_tokens", "CombineSampledAndDraftTokensHost",
		"args->num_new_sampled_tokens", "numNewSampledTokens", "args->query_start_loc",
		"queryStartLoc", "args->num_reqs", "numReqs", "args->num_draft_tokens",
		"numDraftTokens", "args->idx_mapping", "idxMapping", "args->logits_indices", "the result",
		"args->cu_num_logits", "the result", "args->expanded_idx_mapping", "the result",
		"args->expanded_local_pos", "the result")
	defer f.free()
	qsl, live := IndexTensor(queryStartLoc), numReqsTensor(numReqs)
	var drafts, idx, expanded *Tensor
	if numDraftTokens != nil {
		drafts = IndexTensor(numDraftTokens)
	}
	// libcattn counts the live rows' logits (its size query): the outputs' length.
	var sizes [4]cTensor
	if err := f.tensorsInto(sizes[:], stepInputsSizeFields[:], []*Tensor{nil, qsl, live,
		drafts}); err != nil {
		return StepLogits[T]{}, err
	}
	n, err := f.stepInputsSize(numNewSampledTokens, sizes)
	if err != nil {
		return StepLogits[T]{}, err
	}
	var r StepLogits[T]
	r.LogitsIndices, r.ExpandedLocalPos = make([]T, n.NumLogits), make([]T, n.NumLogits)
	r.CuNumLogits = make([]T, len(queryStartLoc))
	if idxMapping != nil {
		idx = IndexTensor(idxMapping)
		r.ExpandedIdxMapping = make([]T, n.NumLogits)
		expanded = IndexTensor(r.ExpandedIdxMapping)
	}
	var cs [13]cTensor
	if err := f.tensorsInto(cs[:], combineFields[:], []*Tensor{qsl, live, drafts, idx, nil, nil,
		nil, nil, IndexTensor(r.LogitsIndices), IndexTensor(r.CuNumLogits), expanded,
		IndexTensor(r.ExpandedLocalPos), nil}); err != nil {
		return StepLogits[T]{}, err
	}
	if err := f.combineSampledAndDraftTokens(numNewSampledTokens, cs, 0); err != nil {
		return StepLogits[T]{}, err
	}
	return r, nil
}

// t holds the tensors in cattn_combine_sampled_and_draft_tokens_args_t order (combineFields);
// a nil numNewSampledTokens keeps the header's default.
func (f *frame) combineSampledAndDraftTokens(numNewSampledTokens *int64, t [13]cTensor,
	stream Stream) error {
	a := cArgs[C.cattn_combine_sampled_and_draft_tokens_args_t](f)
	cCombineSampledAndDraftTokensArgsInit(a)
	if numNewSampledTokens != nil {
		a.num_new_sampled_tokens = C.int64_t(*numNewSampledTokens)
	}
	a.query_start_loc, a.num_reqs, a.num_draft_tokens, a.idx_mapping = t[0], t[1], t[2], t[3]
	a.seq_lens, a.prefill_len, a.last_sampled_tokens, a.draft_tokens = t[4], t[5], t[6], t[7]
	a.logits_indices, a.cu_num_logits, a.expanded_idx_mapping = t[8], t[9], t[10]
	a.expanded_local_pos, a.input_ids = t[11], t[12]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cCombineSampledAndDraftTokens(a, f.msg))
}
