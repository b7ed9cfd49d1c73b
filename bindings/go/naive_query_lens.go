// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// NaiveQueryLens writes the query lengths QueryStartLoc[i+1] - QueryStartLoc[i] into out ([B],
// int32/int64), vLLM's CommonAttentionMetadata.naive_query_lens (cattn_naive_query_lens).
// Only md.QueryStartLoc is read. Host tensors run synchronously; CUDA tensors are enqueued on
// stream (one kernel, capturable).
//
// See docs/api/naive_query_lens.md.
func NaiveQueryLens(md *CommonAttnMetadata, out *Tensor, stream Stream) error {
	return queryLens("cattn_naive_query_lens", "NaiveQueryLens", md, out, false, stream)
}

// ComputeNumComputedTokens writes SeqLens[i] minus the query length of request i into out
// ([B]), vLLM's CommonAttentionMetadata.compute_num_computed_tokens
// (cattn_compute_num_computed_tokens). No cache is kept; out may be the very SeqLens view.
func ComputeNumComputedTokens(md *CommonAttnMetadata, out *Tensor, stream Stream) error {
	return queryLens("cattn_compute_num_computed_tokens", "ComputeNumComputedTokens", md, out,
		true, stream)
}

// NumComputedTokens is the one-call host form of ComputeNumComputedTokens: seqLens[i] minus
// the query length of request i, for queryStartLoc [B + 1] and seqLens [B].
//
// See docs/api/compute_num_computed_tokens.md.
func NumComputedTokens[T Index](queryStartLoc, seqLens []T) ([]T, error) {
	return queryLensOf("cattn_compute_num_computed_tokens", "NumComputedTokens", queryStartLoc,
		seqLens, int64(len(seqLens)), true)
}

// NaiveQueryLensOf is the one-call host form of NaiveQueryLens: queryStartLoc[i+1] -
// queryStartLoc[i] for each of the B requests of queryStartLoc ([B + 1]). Since 1.1.
func NaiveQueryLensOf[T Index](queryStartLoc []T) ([]T, error) {
	return queryLensOf("cattn_naive_query_lens", "NaiveQueryLensOf", queryStartLoc, nil,
		numReqs(queryStartLoc), false)
}

func queryLensOf[T Index](fn, goName string, queryStartLoc, seqLens []T, b int64,
	computed bool) ([]T, error) {
	f := newFrame(fn, goName, "args->metadata->query_start_loc", "queryStartLoc",
		"args->metadata->seq_lens", "seqLens", "args->metadata", "the batch", "args->out",
		"the result")
	defer f.free()
	out := make([]T, b)
	md := &CommonAttnMetadata{QueryStartLoc: IndexTensor(queryStartLoc)}
	if computed {
		md.SeqLens = IndexTensor(seqLens)
	}
	c, err := f.metadata("args->metadata", md)
	if err != nil {
		return nil, err
	}
	o, err := f.tensor("args->out", IndexTensor(out))
	if err != nil {
		return nil, err
	}
	if err := f.naiveQueryLens(c, o, computed, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func queryLens(fn, goName string, md *CommonAttnMetadata, out *Tensor, computed bool,
	stream Stream) error {
	f := newFrame(fn, goName, "args->metadata", "md", "args->out", "out")
	defer f.free()
	c, err := f.metadata("args->metadata", md)
	if err != nil {
		return err
	}
	o, err := f.tensor("args->out", out)
	if err != nil {
		return err
	}
	return f.naiveQueryLens(c, o, computed, stream)
}

func (f *frame) naiveQueryLens(md cMetadata, out cTensor, computed bool, stream Stream) error {
	a := cArgs[C.cattn_naive_query_lens_args_t](f)
	a.metadata = md
	a.out = out
	setAddr(&a.stream, uintptr(stream))
	if computed {
		return f.status(cComputeNumComputedTokens(a, f.msg))
	}
	return f.status(cNaiveQueryLens(a, f.msg))
}
