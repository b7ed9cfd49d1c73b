// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// VirtualBatchBound is the result of MaxLocalAttentionVirtualBatches.
type VirtualBatchBound struct {
	// Bound is vLLM's min(2*maxNumSeqs + ceil(tokens/chunk), tokens); it does not hold for
	// batches with zero-length rows (CUDA-graph padding).
	Bound int64
	// BoundWithEmptyRows is min(2*maxNumSeqs + ceil(tokens/chunk), tokens + maxNumSeqs), which
	// holds for every batch.
	BoundWithEmptyRows int64
}

// MaxLocalAttentionVirtualBatches bounds the virtual batches that local attention with chunk
// attnChunkSize makes of a step of at most maxNumSeqs requests and maxNumBatchedTokens tokens
// (vLLM's max_local_attention_virtual_batches, cattn_max_local_attention_virtual_batches).
//
// See docs/api/max_local_attention_virtual_batches.md.
func MaxLocalAttentionVirtualBatches(attnChunkSize, maxNumSeqs, maxNumBatchedTokens int64) (VirtualBatchBound, error) {
	f := newFrame("cattn_max_local_attention_virtual_batches", "MaxLocalAttentionVirtualBatches",
		"args->attn_chunk_size", "attnChunkSize", "args->max_num_seqs", "maxNumSeqs",
		"args->max_num_batched_tokens", "maxNumBatchedTokens")
	defer f.free()
	b, padded, err := f.maxLocalAttentionVirtualBatches(attnChunkSize, maxNumSeqs, maxNumBatchedTokens)
	if err != nil {
		return VirtualBatchBound{}, err
	}
	return VirtualBatchBound{Bound: b, BoundWithEmptyRows: padded}, nil
}

func (f *frame) maxLocalAttentionVirtualBatches(chunk, seqs, tokens int64) (int64, int64, error) {
	a := cArgs[C.cattn_max_local_attention_virtual_batches_args_t](f)
	a.attn_chunk_size = C.int64_t(chunk)
	a.max_num_seqs = C.int64_t(seqs)
	a.max_num_batched_tokens = C.int64_t(tokens)
	err := f.status(cMaxLocalAttentionVirtualBatches(a, f.msg))
	return int64(a.bound), int64(a.bound_with_empty_rows), err
}
