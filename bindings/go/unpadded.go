// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// Unpadded returns the metadata of the first numActualReqs requests and numActualTokens
// tokens of a padded batch, vLLM's CommonAttentionMetadata.unpadded (cattn_unpadded). Every
// per-request and per-token tensor of md becomes a view of its first entries (a new *Tensor
// over the same memory; its first dimension cut), positions and SeqLensCPUUpperBound
// included (vLLM drops those two); LogitsIndicesPadded and the scalars other than NumReqs and
// NumActualTokens are kept. No tensor data is read or written. A cut past a tensor's length is
// an error (Python's slice would come out shorter).
//
// See docs/api/unpadded.md.
func Unpadded(md *CommonAttnMetadata, numActualTokens, numActualReqs int64) (*CommonAttnMetadata,
	error) {
	f := newFrame("cattn_unpadded", "Unpadded", "args->metadata", "md", "args->num_actual_tokens",
		"numActualTokens", "args->num_actual_reqs", "numActualReqs", "args->out", "the result", "args->storage", "the result's storage")
	defer f.free()
	in, err := f.metadata("args->metadata", md)
	if err != nil {
		return nil, err
	}
	out := f.newMetadataOut()
	if err := f.unpadded(in, out, numActualTokens, numActualReqs); err != nil {
		return nil, err
	}
	res := *md
	src, dst, views := md.tensorFields(), res.tensorFields(), metadataTensorFields(out)
	for i := range views {
		switch {
		case *views[i] == nil:
			*dst[i] = nil
		case src[i] == &md.LogitsIndicesPadded:
			// Kept whole, as in vLLM.
		default:
			t := **src[i]
			t.Shape = append([]int64(nil), t.Shape...)
			t.Shape[0] = firstDim(*views[i])
			if t.Strides != nil {
				t.Strides = append([]int64(nil), t.Strides...)
			}
			*dst[i] = &t
		}
	}
	res.NumReqs = int64(out.num_reqs)
	res.NumActualTokens = int64(out.num_actual_tokens)
	return &res, nil
}

// unpadded fills out with views in C storage owned by the frame; the caller reads their
// first dimensions (firstDim) before the frame is freed.
func (f *frame) unpadded(in, out cMetadata, tokens, reqs int64) error {
	st := cArgs[C.cattn_unpadded_storage_t](f)
	a := cArgs[C.cattn_unpadded_args_t](f)
	a.metadata = in
	a.out = out
	a.storage = st
	a.num_actual_tokens = C.int64_t(tokens)
	a.num_actual_reqs = C.int64_t(reqs)
	return f.status(cUnpadded(a, f.msg))
}
