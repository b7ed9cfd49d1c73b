// SPDX-License-Identifier: Apache-2.0

package cattn

/*
#include <stdint.h>
#include <cattn.h>
*/
import "C"

// FastPrefillMetadataArgs are the arguments of MakeKVSharingFastPrefillCommonAttnMetadata
// (cattn_fast_prefill_metadata_args_t).
type FastPrefillMetadataArgs struct {
	// Metadata is read: QueryStartLoc, LogitsIndicesPadded, NumLogitsIndices, NumReqs,
	// MaxQueryLen and (since 1.1) MaxLogitsPerReq; the rest is copied, except the newer fields
	// that vLLM's new metadata resets (see MakeKVSharingFastPrefillCommonAttnMetadata).
	Metadata *CommonAttnMetadata
	// Out: the caller sets QueryStartLoc ([NumReqs + 1], the input's device) and may set
	// QueryStartLocCPU (host path only). The call writes them, every scalar and the other
	// tensor fields, the 1.1 ones included (whatever the caller set there is replaced). On the
	// CUDA path NumActualTokens is set to -1, and MaxQueryLen too unless Metadata gives
	// MaxLogitsPerReq: their values are in DecodeMaxAndTotal.
	Out *CommonAttnMetadata
	// DecodeMaxAndTotal: out, [2] int32/int64 on the input's device: {max_query_len,
	// num_actual_tokens} of the decode batch. Required for CUDA tensors, optional on the host.
	DecodeMaxAndTotal *Tensor
	Stream            Stream
}

// MakeKVSharingFastPrefillCommonAttnMetadata builds the decode-only metadata of KV-sharing
// fast prefill, in which each request keeps only the tokens whose logits are needed, as vLLM's
// make_kv_sharing_fast_prefill_common_attn_metadata
// (cattn_make_kv_sharing_fast_prefill_common_attn_metadata). It reports passthrough: when
// Metadata.MaxQueryLen == 1 nothing is read or written but Out, which becomes a copy of
// Metadata (vLLM returns the metadata unchanged). Errors: StatusInvalidArgument (no logits
// indices when MaxQueryLen != 1, NumReqs < 1, an index at or past the last query_start_loc,
// overlapping outputs, ...), StatusInsufficientSize, StatusNotSupported, StatusCUDAError.
//
// Since 1.1, the v2 fields of CommonAttnMetadata: a given Metadata.MaxLogitsPerReq (> 0; 0 =
// not given) becomes Out.MaxQueryLen on both paths, trusted as vLLM trusts it (not compared
// with the counts; DecodeMaxAndTotal still receives the computed largest count); not given,
// the largest count is computed as in 1.0 (vLLM asserts it is given). Out keeps
// Metadata.SeqLensCPUUpperBound (the same *Tensor), as vLLM does; Out.Positions,
// IsPrefilling, CausalPerReq, DCPLocalSeqLens(CPU) and EncoderSeqLens(CPU) become nil and
// Out.MaxLogitsPerReq 0 (vLLM's defaults). The passthrough copies every field.
//
// See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md.
func MakeKVSharingFastPrefillCommonAttnMetadata(args FastPrefillMetadataArgs) (passthrough bool, err error) {
	f := newFrame("cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
		"MakeKVSharingFastPrefillCommonAttnMetadata")
	defer f.free()
	in, err := f.metadata("args->metadata", args.Metadata)
	if err != nil {
		return false, err
	}
	out, err := f.metadata("args->out", args.Out)
	if err != nil {
		return false, err
	}
	mt, err := f.tensor("args->decode_max_and_total", args.DecodeMaxAndTotal)
	if err != nil {
		return false, err
	}
	passthrough, err = f.makeKVSharingFastPrefill(in, out, mt, args.Stream)
	if err != nil {
		return false, err
	}
	return passthrough, f.readMetadata(out, args.Out)
}

// FastPrefillDecodeBatch is the decode batch KVSharingFastPrefillCommonAttnMetadata returns.
type FastPrefillDecodeBatch[T Index] struct {
	QueryStartLoc   []T   // [B + 1]: [0, cumsum of each request's logits indices]
	MaxQueryLen     int64 // the most logits indices of a request
	NumActualTokens int64 // len(logitsIndices)
	// Passthrough is true when every query is one token long: vLLM then returns the batch
	// unchanged, and QueryStartLoc is a copy of the input's.
	Passthrough bool
}

// KVSharingFastPrefillCommonAttnMetadata builds, in one call, the decode-only batch of
// KV-sharing fast prefill from the batch's queryStartLoc ([B + 1], B >= 1) and the token
// indices whose logits are needed (vLLM's make_kv_sharing_fast_prefill_common_attn_metadata
// with logits_indices_padded = logitsIndices, all of them used): each request keeps its
// tokens among logitsIndices. The batch's max_query_len is computed from queryStartLoc.
// Since 1.1.
//
// See docs/api/make_kv_sharing_fast_prefill_common_attn_metadata.md.
func KVSharingFastPrefillCommonAttnMetadata[T Index](queryStartLoc, logitsIndices []T) (
	FastPrefillDecodeBatch[T], error) {
	f := newFrame("cattn_make_kv_sharing_fast_prefill_common_attn_metadata",
		"KVSharingFastPrefillCommonAttnMetadata", "args->metadata->query_start_loc",
		"queryStartLoc", "args->metadata->logits_indices_padded", "logitsIndices",
		"args->metadata->num_logits_indices", "len(logitsIndices)",
		"args->metadata->num_reqs", "len(queryStartLoc) - 1", "args->metadata", "the batch",
		"args->out->query_start_loc", "result.QueryStartLoc", "args->out", "result")
	defer f.free()
	var r FastPrefillDecodeBatch[T]
	b := numReqs(queryStartLoc)
	var logits *Tensor
	if logitsIndices != nil {
		logits = IndexTensor(logitsIndices)
	}
	in := &CommonAttnMetadata{QueryStartLoc: IndexTensor(queryStartLoc),
		LogitsIndicesPadded: logits, NumLogitsIndices: int64(len(logitsIndices)), NumReqs: b,
		NumActualTokens: lastOf(queryStartLoc), MaxQueryLen: longestQuery(queryStartLoc)}
	r.QueryStartLoc = make([]T, len(queryStartLoc))
	out := &CommonAttnMetadata{QueryStartLoc: IndexTensor(r.QueryStartLoc)}
	cin, err := f.metadata("args->metadata", in)
	if err != nil {
		return r, err
	}
	cout, err := f.metadata("args->out", out)
	if err != nil {
		return r, err
	}
	if r.Passthrough, err = f.makeKVSharingFastPrefill(cin, cout, nil, 0); err != nil {
		return FastPrefillDecodeBatch[T]{}, err
	}
	if err := f.readMetadata(cout, out); err != nil {
		return FastPrefillDecodeBatch[T]{}, err
	}
	if r.Passthrough {
		copy(r.QueryStartLoc, queryStartLoc)
	}
	r.MaxQueryLen, r.NumActualTokens = out.MaxQueryLen, out.NumActualTokens
	return r, nil
}

func (f *frame) makeKVSharingFastPrefill(in, out cMetadata, maxAndTotal cTensor,
	stream Stream) (bool, error) {
	a := cArgs[C.cattn_fast_prefill_metadata_args_t](f)
	a.metadata = in
	a.out = out
	a.decode_max_and_total = maxAndTotal
	setAddr(&a.stream, uintptr(stream))
	err := f.status(cMakeKVSharingFastPrefillCommonAttnMetadata(a, f.msg))
	return a.passthrough != 0, err
}
