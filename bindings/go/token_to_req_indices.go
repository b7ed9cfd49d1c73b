// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

import "strconv"

// TokenToReqIndices writes the request of every token into buffer ([>= max(M, T)],
// int32/int64), vLLM's CommonAttentionMetadata.token_to_req_indices
// (cattn_token_to_req_indices): buffer[0:M] repeats request r q[r] times and buffer[M:T] is 0,
// so padding tokens map to request 0; M is the mapped tokens (from md.QueryStartLocCPU when
// set) and T is md.NumActualTokens. Nothing is cached between calls. CUDA tensors are
// enqueued on stream (one kernel, capturable, correct on replay).
//
// See docs/api/token_to_req_indices.md.
func TokenToReqIndices(md *CommonAttnMetadata, buffer *Tensor, stream Stream) error {
	f := newFrame("cattn_token_to_req_indices", "TokenToReqIndices", "args->metadata", "md",
		"args->buffer", "buffer")
	defer f.free()
	c, err := f.metadata("args->metadata", md)
	if err != nil {
		return err
	}
	b, err := f.tensor("args->buffer", buffer)
	if err != nil {
		return err
	}
	return f.tokenToReqIndices(c, b, stream)
}

// TokenToReqIndicesInt32 is TokenToReqIndicesOf for int32 slices.
//
// See docs/api/token_to_req_indices.md.
func TokenToReqIndicesInt32(queryStartLoc []int32, numTokens int) ([]int32, error) {
	return TokenToReqIndicesOf(queryStartLoc, int64(numTokens))
}

// TokenToReqIndicesOf is the one-call host form of TokenToReqIndices: the request of each of
// numTokens tokens (padding included, mapped to request 0) of the batch queryStartLoc
// ([B + 1]) describes. Since 1.1.
func TokenToReqIndicesOf[T Index](queryStartLoc []T, numTokens int64) ([]T, error) {
	f := newFrame("cattn_token_to_req_indices", "TokenToReqIndicesOf",
		"args->metadata->query_start_loc", "queryStartLoc", "args->metadata->num_actual_tokens",
		"numTokens", "args->metadata", "the batch", "args->buffer", "the result")
	defer f.free()
	var mapped int64
	if n := len(queryStartLoc); n > 0 && queryStartLoc[n-1] > queryStartLoc[0] {
		mapped = int64(queryStartLoc[n-1]) - int64(queryStartLoc[0])
	}
	if numTokens < 0 {
		return nil, f.argError("args->metadata->num_actual_tokens", "is negative",
			strconv.FormatInt(numTokens, 10), ">= 0")
	}
	out := make([]T, max(mapped, numTokens))
	md, err := f.metadata("args->metadata", &CommonAttnMetadata{
		QueryStartLoc: IndexTensor(queryStartLoc), NumActualTokens: numTokens})
	if err != nil {
		return nil, err
	}
	b, err := f.tensor("args->buffer", IndexTensor(out))
	if err != nil {
		return nil, err
	}
	if err := f.tokenToReqIndices(md, b, 0); err != nil {
		return nil, err
	}
	return out[:numTokens], nil
}

func (f *frame) tokenToReqIndices(md cMetadata, buffer cTensor, stream Stream) error {
	a := cArgs[C.cattn_token_to_req_indices_args_t](f)
	a.metadata = md
	a.buffer = buffer
	setAddr(&a.stream, uintptr(stream))
	return f.status(cTokenToReqIndices(a, f.msg))
}
