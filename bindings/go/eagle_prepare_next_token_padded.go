// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// EaglePrepareNextTokenPaddedArgs are the arguments of EaglePrepareNextTokenPadded
// (cattn_eagle_prepare_next_token_padded_args_t). B is SampledTokenIDs' rows.
type EaglePrepareNextTokenPaddedArgs struct {
	VocabSize int64 // a token at or past it is not valid
	// SampledTokenIDs: in, [B, S] the rejection sampler's tokens, -1 where rejected; a view
	// of the first S columns of a wider buffer is strided.
	SampledTokenIDs         *Tensor
	DiscardRequestMask      *Tensor // in, may be nil: [B] flags; nil = no request discarded
	BackupNextTokenIDs      *Tensor // in: [B]
	NextTokenIDs            *Tensor // out: [>= B]
	ValidSampledTokensCount *Tensor // out: [>= B]
	Stream                  Stream
}

// EaglePrepareNextTokenPadded picks each request's next token for the drafter
// (cattn_eagle_prepare_next_token_padded, vLLM's eagle_prepare_next_token_padded): a discarded
// request gets its backup token and 0 valid; otherwise ValidSampledTokensCount counts the
// sampled tokens other than -1 and below VocabSize (vLLM counts other negatives as valid), and
// the next token is the valid one at the highest column, or the backup when none is. Entries
// from B on are left as they are. Errors: as EaglePrepareInputsPadded. Since 1.2.
//
// See docs/api/spec_decode.md.
func EaglePrepareNextTokenPadded(args EaglePrepareNextTokenPaddedArgs) error {
	f := newFrame("cattn_eagle_prepare_next_token_padded", "EaglePrepareNextTokenPadded")
	defer f.free()
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eagleNextTokenFields[:], []*Tensor{args.SampledTokenIDs,
		args.DiscardRequestMask, args.BackupNextTokenIDs, args.NextTokenIDs,
		args.ValidSampledTokensCount}); err != nil {
		return err
	}
	return f.eaglePrepareNextTokenPadded(args.VocabSize, cs, args.Stream)
}

// The C names of EaglePrepareNextTokenPaddedArgs' tensors, in
// cattn_eagle_prepare_next_token_padded_args_t order.
var eagleNextTokenFields = [5]string{"args->sampled_token_ids", "args->discard_request_mask",
	"args->backup_next_token_ids", "args->next_token_ids", "args->valid_sampled_tokens_count"}

// EagleNextTokens is what EaglePrepareNextTokenPaddedHost returns: [B] each.
type EagleNextTokens[T Index] struct {
	NextTokenIDs            []T // each request's next token
	ValidSampledTokensCount []T // its valid sampled tokens (0 for a discarded request)
}

// EaglePrepareNextTokenPaddedHost is the one-call host form of EaglePrepareNextTokenPadded:
// the next token and valid count of each request from its sampled tokens (sampledTokenIDs, B
// rows of one length S), whether it is discarded (discardRequestMask, [B]; nil means none is)
// and its backup token (backupNextTokenIDs, [B]). Since 1.2.
//
// See docs/api/spec_decode.md.
func EaglePrepareNextTokenPaddedHost[T Index](vocabSize int64, sampledTokenIDs [][]T,
	discardRequestMask []bool, backupNextTokenIDs []T) (EagleNextTokens[T], error) {
	f := newFrame("cattn_eagle_prepare_next_token_padded", "EaglePrepareNextTokenPaddedHost",
		"args->vocab_size", "vocabSize", "args->sampled_token_ids", "sampledTokenIDs",
		"args->discard_request_mask", "discardRequestMask", "args->backup_next_token_ids",
		"backupNextTokenIDs", "args->next_token_ids", "the result",
		"args->valid_sampled_tokens_count", "the result")
	defer f.free()
	flat, cols, bad := flatRows(sampledTokenIDs)
	if bad >= 0 {
		return EagleNextTokens[T]{}, f.argError("args->sampled_token_ids",
			"has rows of different lengths", "row "+strconv.Itoa(bad)+" of "+
				strconv.Itoa(len(sampledTokenIDs[bad])), strconv.Itoa(cols)+", row 0's")
	}
	b := len(sampledTokenIDs)
	r := EagleNextTokens[T]{NextTokenIDs: make([]T, b), ValidSampledTokensCount: make([]T, b)}
	var cs [5]cTensor
	if err := f.tensorsInto(cs[:], eagleNextTokenFields[:], []*Tensor{
		IndexTensor(flat, int64(b), int64(cols)), flagsTensor(discardRequestMask),
		IndexTensor(backupNextTokenIDs), IndexTensor(r.NextTokenIDs),
		IndexTensor(r.ValidSampledTokensCount)}); err != nil {
		return EagleNextTokens[T]{}, err
	}
	if err := f.eaglePrepareNextTokenPadded(vocabSize, cs, 0); err != nil {
		return EagleNextTokens[T]{}, err
	}
	return r, nil
}

// t holds the tensors in cattn_eagle_prepare_next_token_padded_args_t order
// (eagleNextTokenFields).
func (f *frame) eaglePrepareNextTokenPadded(vocabSize int64, t [5]cTensor, stream Stream) error {
	a := cArgs[C.cattn_eagle_prepare_next_token_padded_args_t](f)
	cEaglePrepareNextTokenPaddedArgsInit(a)
	a.vocab_size = C.int64_t(vocabSize)
	a.sampled_token_ids, a.discard_request_mask, a.backup_next_token_ids = t[0], t[1], t[2]
	a.next_token_ids, a.valid_sampled_tokens_count = t[3], t[4]
	setAddr(&a.stream, uintptr(stream))
	return f.status(cEaglePrepareNextTokenPadded(a, f.msg))
}
